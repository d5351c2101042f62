//! Data and index blocks: sorted key/value entries with an offset array for binary search.
//!
//! ```text
//!  +---------+---------+-----+-----------+-----------+-----+---------+
//!  | entry 0 | entry 1 | ... | offset 0  | offset 1  | ... |  count  |
//!  +---------+---------+-----+-----------+-----------+-----+---------+
//!  entry = key length u32 | value length u32 | key | value
//!  offset i = u32 position of entry i from the start of the block;  count = u32 number of entries
//! ```
//!
//! This is LevelDB's block with a restart point at every entry and no key-prefix compression: the simplest
//! layout that still lets a reader binary-search a block in place, without decoding it or allocating.

use super::error::BlockDefect;
use crate::le::{take, take_slice};

/// A key and its value, borrowed from a block.
pub(crate) type Entry<'a> = (&'a [u8], &'a [u8]);

/// Bytes of one offset-array slot and of the trailing count.
const U32_LEN: usize = 4;

/// Accumulates the entries of one block.
#[derive(Debug, Clone, Default)]
pub(crate) struct BlockBuilder {
    entries: Vec<u8>,
    offsets: Vec<u32>,
}

impl BlockBuilder {
    /// Appends an entry. REQUIRES: `key` is greater than the previous key, and the block stays below 4 GiB (the
    /// table builder bounds entry and block sizes so that it does).
    pub(crate) fn add(&mut self, key: &[u8], value: &[u8]) -> Option<()> {
        let offset = u32::try_from(self.entries.len()).ok()?;
        let key_len = u32::try_from(key.len()).ok()?;
        let value_len = u32::try_from(value.len()).ok()?;
        self.offsets.push(offset);
        self.entries.extend_from_slice(&key_len.to_le_bytes());
        self.entries.extend_from_slice(&value_len.to_le_bytes());
        self.entries.extend_from_slice(key);
        self.entries.extend_from_slice(value);
        Some(())
    }

    /// Whether no entry has been added since the last [`finish_into`](Self::finish_into).
    pub(crate) fn is_empty(&self) -> bool {
        self.offsets.is_empty()
    }

    /// Size of the encoded block if it were finished now.
    pub(crate) fn encoded_len(&self) -> usize {
        self.entries.len() + U32_LEN * (self.offsets.len() + 1)
    }

    /// Appends the encoded block to `out` and empties the builder for the next block.
    pub(crate) fn finish_into(&mut self, out: &mut Vec<u8>) {
        // NOTE: `add` accepted every entry only while its offset fit in a u32, and every entry takes at least
        // 8 bytes, so the count is below 2^29 and the cast is exact.
        let count = self.offsets.len() as u32;
        out.extend_from_slice(&self.entries);
        for offset in &self.offsets {
            out.extend_from_slice(&offset.to_le_bytes());
        }
        out.extend_from_slice(&count.to_le_bytes());
        self.entries.clear();
        self.offsets.clear();
    }
}

/// A block opened in place over its contents (checksum already checked).
///
/// [`parse`](Self::parse) checks only that the offset array fits; every entry is bounds-checked when it is read,
/// so a malformed block yields a [`BlockDefect`], never a panic or an out-of-bounds read.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Block<'a> {
    entries: &'a [u8],
    offsets: &'a [u8],
}

impl<'a> Block<'a> {
    /// Opens a block over its contents.
    pub(crate) fn parse(contents: &'a [u8]) -> Result<Self, BlockDefect> {
        let len = contents.len() as u64;
        let (rest, count) = contents
            .split_last_chunk::<U32_LEN>()
            .ok_or(BlockDefect::TooShort { len })?;
        let count = u32::from_le_bytes(*count);
        let offsets_len = (count as usize)
            .checked_mul(U32_LEN)
            .filter(|&n| n <= rest.len())
            .ok_or(BlockDefect::CountTooLarge {
                count: u64::from(count),
                len,
            })?;
        let (entries, offsets) = rest.split_at(rest.len() - offsets_len);
        Ok(Block { entries, offsets })
    }

    /// Number of entries.
    pub(crate) fn len(&self) -> usize {
        self.offsets.len() / U32_LEN
    }

    /// The key and value of entry `i`.
    pub(crate) fn entry(&self, i: usize) -> Result<Entry<'a>, BlockDefect> {
        let out_of_bounds = BlockDefect::EntryOutOfBounds { entry: i as u64 };
        let slot = i
            .checked_mul(U32_LEN)
            .and_then(|at| self.offsets.get(at..)?.first_chunk::<U32_LEN>())
            .ok_or(out_of_bounds)?;
        let offset = u32::from_le_bytes(*slot) as usize;
        let mut rest = self.entries.get(offset..).ok_or(out_of_bounds)?;
        let key_len = u32::from_le_bytes(take(&mut rest).ok_or(out_of_bounds)?) as usize;
        let value_len = u32::from_le_bytes(take(&mut rest).ok_or(out_of_bounds)?) as usize;
        let key = take_slice(&mut rest, key_len).ok_or(out_of_bounds)?;
        let value = take_slice(&mut rest, value_len).ok_or(out_of_bounds)?;
        Ok((key, value))
    }

    /// The first entry whose key is `>= key`, with its position; `None` if every key is smaller.
    ///
    /// Binary search over the offset array: O(log n) entry reads, no allocation.
    pub(crate) fn seek(&self, key: &[u8]) -> Result<Option<(usize, Entry<'a>)>, BlockDefect> {
        let (mut lo, mut hi) = (0, self.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if self.entry(mid)?.0 < key {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        if lo == self.len() {
            return Ok(None);
        }
        Ok(Some((lo, self.entry(lo)?)))
    }

    /// The value stored under exactly `key`.
    pub(crate) fn get(&self, key: &[u8]) -> Result<Option<&'a [u8]>, BlockDefect> {
        Ok(self
            .seek(key)?
            .and_then(|(_, (k, v))| (k == key).then_some(v)))
    }

    /// Reads every entry in order, checking that keys strictly increase, starting after `previous` (the last key
    /// of the block before, for checks across blocks). Returns the last key of this block.
    pub(crate) fn check_sorted(
        &self,
        previous: Option<&[u8]>,
    ) -> Result<Option<&'a [u8]>, BlockDefect> {
        let mut last: Option<&'a [u8]> = None;
        for i in 0..self.len() {
            let (key, _) = self.entry(i)?;
            if last.or(previous).is_some_and(|p| p >= key) {
                return Err(BlockDefect::KeysNotSorted { entry: i as u64 });
            }
            last = Some(key);
        }
        Ok(last)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block_of(entries: &[(&[u8], &[u8])]) -> Vec<u8> {
        let mut b = BlockBuilder::default();
        for (k, v) in entries {
            b.add(k, v).unwrap();
        }
        let expected_len = b.encoded_len();
        let mut out = Vec::new();
        b.finish_into(&mut out);
        assert_eq!(out.len(), expected_len);
        assert!(b.is_empty(), "finish resets the builder");
        out
    }

    #[test]
    fn layout_is_entries_then_offsets_then_count() {
        let bytes = block_of(&[(b"a", b"xy"), (b"bc", b"")]);
        #[rustfmt::skip]
        let expected: &[u8] = &[
            1, 0, 0, 0, 2, 0, 0, 0, b'a', b'x', b'y', // entry 0 at offset 0
            2, 0, 0, 0, 0, 0, 0, 0, b'b', b'c',       // entry 1 at offset 11
            0, 0, 0, 0, 11, 0, 0, 0,                  // offsets
            2, 0, 0, 0,                               // count
        ];
        assert_eq!(bytes, expected);
    }

    #[test]
    fn seek_and_get_find_exact_keys_and_successors() {
        let keys: Vec<Vec<u8>> = (0..100u32)
            .map(|i| format!("k{:03}", i * 2).into_bytes())
            .collect();
        let entries: Vec<(&[u8], &[u8])> = keys.iter().map(|k| (&k[..], &k[1..])).collect();
        let bytes = block_of(&entries);
        let block = Block::parse(&bytes).unwrap();
        assert_eq!(block.len(), 100);
        for (i, k) in keys.iter().enumerate() {
            assert_eq!(block.get(k).unwrap(), Some(&k[1..]));
            let absent = format!("k{:03}", i * 2 + 1);
            assert_eq!(block.get(absent.as_bytes()).unwrap(), None);
            let next = block.seek(absent.as_bytes()).unwrap().map(|(pos, _)| pos);
            assert_eq!(next, (i + 1 < 100).then_some(i + 1));
        }
        assert_eq!(block.seek(b"").unwrap().unwrap().0, 0);
        assert_eq!(block.check_sorted(None).unwrap(), Some(&b"k198"[..]));
        assert!(matches!(
            block.check_sorted(Some(b"k500")),
            Err(BlockDefect::KeysNotSorted { entry: 0 })
        ));
    }

    #[test]
    fn empty_block_is_four_zero_bytes() {
        let bytes = block_of(&[]);
        assert_eq!(bytes, [0, 0, 0, 0]);
        let block = Block::parse(&bytes).unwrap();
        assert_eq!(block.len(), 0);
        assert_eq!(block.get(b"x").unwrap(), None);
    }

    #[test]
    fn malformed_blocks_are_defects_not_panics() {
        assert_eq!(
            Block::parse(&[1, 0]).unwrap_err(),
            BlockDefect::TooShort { len: 2 }
        );
        assert_eq!(
            Block::parse(&[0, 0, 0, 0, 2, 0, 0, 0]).unwrap_err(),
            BlockDefect::CountTooLarge { count: 2, len: 8 }
        );
        // Every truncation and every value of every byte of a small block: parse and lookups return a
        // result or a defect.
        let good = block_of(&[(b"a", b"1"), (b"b", b"22"), (b"c", b"333")]);
        let exercise = |bytes: &[u8]| {
            if let Ok(block) = Block::parse(bytes) {
                for key in [&b"a"[..], b"b", b"c", b"d", b""] {
                    let _ = block.get(key);
                }
                let _ = block.check_sorted(None);
            }
        };
        for len in 0..good.len() {
            exercise(&good[..len]);
        }
        for at in 0..good.len() {
            for value in 0..=255u8 {
                let mut bytes = good.clone();
                bytes[at] = value;
                exercise(&bytes);
            }
        }
    }
}
