//! LevelDB's filter *block* (`table/filter_block.cc`, `doc/table_format.md`): one filter per 2 KiB of data-block
//! offsets, so a reader finds the filter for a data block from the block's file offset alone.
//!
//! ```text
//! +----------+----------+-----+--------------+-----+----------------+--------------+---------+
//! | filter 0 | filter 1 | ... | offset of f0 | ... | offset of fN-1 | array offset | base lg |
//! |          |          |     |  u32 LE      |     |  u32 LE        |  u32 LE      |   u8    |
//! +----------+----------+-----+--------------+-----+----------------+--------------+---------+
//! 0                       array offset                               len - 5        len - 1
//! ```
//!
//! * Filter `i` covers the keys of every data block whose offset `o` has `o >> base_lg == i`; LevelDB writes
//!   `base_lg = 11` (2 KiB). A 2 KiB range in which no data block starts gets an empty filter.
//! * Filter `i` spans `[offset[i], offset[i + 1])`, where the "offset" after the last filter is the array offset
//!   itself, so the offsets array plus the array-offset word read as `N + 1` boundaries.
//!
//! The reader follows LevelDB's `FilterBlockReader` and answers "may match" on everything it cannot use: a block
//! shorter than 5 bytes, an array offset past the end, a base lg of 64 or more, an offset past the filter
//! index, boundaries out of order or past the filters. One deliberate difference: an **empty** filter answers
//! "may match", where LevelDB answers "no". A table reader only ever asks about an offset where a data block
//! starts, whose filter holds that block's keys, so in a sound table the difference never costs a read; in a
//! damaged one (a zeroed offsets array makes every filter empty) it turns lost keys into wasted reads.

use crate::LevelDbFilterPolicy;
use crate::error::LevelDbUsageError;

/// The base lg LevelDB writes: one filter per `2^11 = 2048` bytes of data-block offsets.
const FILTER_BASE_LG: u8 = 11;

/// Bytes after the offsets array: the array offset (u32) and the base lg (u8).
const FOOTER_LEN: usize = 5;

/// Builds a LevelDB filter block while a table is written: the bytes LevelDB's `FilterBlockBuilder` writes for
/// the same calls.
///
/// Call order, as in LevelDB: `(start_block add_key*)* finish`, with each data block's file offset passed to
/// [`start_block`](Self::start_block) before its keys. LevelDB's table builder also starts a block at the offset
/// after the last data block before finishing (its `Flush` does after every block); do the same to get its bytes
/// exactly (the filters are the same either way; the block then ends with empty filters up to that offset).
///
/// ```
/// use sstfilter_leveldb::{LevelDbBloomPolicy, LevelDbFilterBlockBuilder, LevelDbFilterBlockReader};
///
/// let mut builder = LevelDbFilterBlockBuilder::new(LevelDbBloomPolicy::new(10));
/// builder.start_block(0)?;
/// builder.add_key(b"apple");
/// builder.start_block(4096)?; // the next data block starts at offset 4096
/// builder.add_key(b"banana");
/// let block = builder.finish()?;
///
/// let reader = LevelDbFilterBlockReader::new(&block[..], LevelDbBloomPolicy::new(10));
/// assert!(reader.may_contain(0, b"apple"));
/// assert!(reader.may_contain(4096, b"banana"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct LevelDbFilterBlockBuilder<P> {
    policy: P,
    /// The filters so far, back to back; the offsets array and footer are appended by `finish`.
    filters: Vec<u8>,
    filter_offsets: Vec<u32>,
    /// Keys of the filter being collected, back to back, and where each ends.
    keys: Vec<u8>,
    key_ends: Vec<usize>,
    last_block_offset: Option<u64>,
}

impl<P: LevelDbFilterPolicy> LevelDbFilterBlockBuilder<P> {
    /// An empty builder writing filters with `policy`.
    #[must_use]
    pub fn new(policy: P) -> Self {
        LevelDbFilterBlockBuilder {
            policy,
            filters: Vec::new(),
            filter_offsets: Vec::new(),
            keys: Vec::new(),
            key_ends: Vec::new(),
            last_block_offset: None,
        }
    }

    /// Starts the data block at file offset `block_offset`: the keys added next belong to it.
    ///
    /// Offsets must not go back to an earlier 2 KiB range than a block already started
    /// ([`LevelDbUsageError::BlockOffsetOutOfOrder`]): the keys would land in a later filter than the one a reader
    /// consults.
    /// LevelDB asserts this; here nothing is changed and the call can be corrected.
    pub fn start_block(&mut self, block_offset: u64) -> Result<(), LevelDbUsageError> {
        let index = block_offset >> FILTER_BASE_LG;
        if index < self.filter_offsets.len() as u64 {
            return Err(LevelDbUsageError::BlockOffsetOutOfOrder {
                expected: self.last_block_offset.unwrap_or(0),
                found: block_offset,
            });
        }
        while index > self.filter_offsets.len() as u64 {
            self.generate_filter()?;
        }
        self.last_block_offset = Some(block_offset);
        Ok(())
    }

    /// Adds a key of the current data block.
    pub fn add_key(&mut self, key: &[u8]) {
        self.keys.extend_from_slice(key);
        self.key_ends.push(self.keys.len());
    }

    /// Writes the last filter, the offsets array and the footer, and returns the block.
    ///
    /// Fails with [`LevelDbUsageError::TooLarge`] when the filters outgrow the 4 GiB that the format's 32-bit
    /// offsets address (as does [`start_block`](Self::start_block)).
    pub fn finish(mut self) -> Result<Vec<u8>, LevelDbUsageError> {
        if !self.key_ends.is_empty() {
            self.generate_filter()?;
        }
        let array_offset = offset_u32(self.filters.len())?;
        let mut block = self.filters;
        block.reserve(self.filter_offsets.len() * 4 + FOOTER_LEN);
        for offset in &self.filter_offsets {
            block.extend_from_slice(&offset.to_le_bytes());
        }
        block.extend_from_slice(&array_offset.to_le_bytes()); // NOTE: also the end of the last filter.
        block.push(FILTER_BASE_LG);
        Ok(block)
    }

    /// Closes the current filter (empty if no key was added since the last one) and records where it starts.
    fn generate_filter(&mut self) -> Result<(), LevelDbUsageError> {
        self.filter_offsets.push(offset_u32(self.filters.len())?);
        if self.key_ends.is_empty() {
            return Ok(());
        }
        let starts = core::iter::once(0).chain(self.key_ends.iter().copied());
        let keys: Vec<&[u8]> = starts
            .zip(&self.key_ends)
            .map(|(start, &end)| self.keys.get(start..end).unwrap_or_default())
            .collect();
        self.policy.append_filter(&keys, &mut self.filters);
        self.keys.clear();
        self.key_ends.clear();
        Ok(())
    }
}

/// A position in the block as the format's u32.
fn offset_u32(len: usize) -> Result<u32, LevelDbUsageError> {
    u32::try_from(len).map_err(|_| LevelDbUsageError::TooLarge {
        expected: u64::from(u32::MAX),
        found: len as u64,
    })
}

/// Reads a LevelDB filter block in place, never panicking and answering "may match" whenever the block does
/// not say otherwise consistently (see the module docs).
///
/// ```
/// use sstfilter_leveldb::{LevelDbBloomPolicy, LevelDbFilterBlockReader};
///
/// // LevelDB's filter block for a table with no keys.
/// let reader = LevelDbFilterBlockReader::new(&b"\x00\x00\x00\x00\x0b"[..], LevelDbBloomPolicy::new(10));
/// assert_eq!(reader.num_filters(), 0);
/// assert!(reader.may_contain(0, b"anything")); // no filter: may match
/// ```
#[derive(Debug, Clone)]
pub struct LevelDbFilterBlockReader<B, P> {
    bytes: B,
    policy: P,
    offsets: Option<Offsets>,
}

/// Where the parts of a well-formed block are.
#[derive(Debug, Clone, Copy)]
struct Offsets {
    array_offset: usize,
    num_filters: usize,
    base_lg: u8,
}

impl<B: AsRef<[u8]>, P: LevelDbFilterPolicy> LevelDbFilterBlockReader<B, P> {
    /// Opens `bytes` (borrowed or owned, never copied) as a filter block whose filters `policy` reads. O(1).
    pub fn new(bytes: B, policy: P) -> Self {
        let offsets = Offsets::decode(bytes.as_ref());
        LevelDbFilterBlockReader {
            bytes,
            policy,
            offsets,
        }
    }

    /// Whether the footer is consistent (length ≥ 5, array offset inside the block). A block that is not answers
    /// "may match" for every key.
    #[must_use]
    pub fn is_well_formed(&self) -> bool {
        self.offsets.is_some()
    }

    /// Number of filters in the offsets array (0 for a block that is not well formed).
    #[must_use]
    pub fn num_filters(&self) -> usize {
        self.offsets.map_or(0, |l| l.num_filters)
    }

    /// The base lg stored in the block (11 in every block LevelDB writes), if the block is well formed.
    #[must_use]
    pub fn base_lg(&self) -> Option<u8> {
        self.offsets.map(|l| l.base_lg)
    }

    /// The bytes of filter `index`, or `None` if the index or its boundaries are out of range.
    #[must_use]
    pub fn filter(&self, index: usize) -> Option<&[u8]> {
        let offsets = self.offsets?;
        if index >= offsets.num_filters {
            return None;
        }
        let block = self.bytes.as_ref();
        let at = offsets.array_offset.checked_add(index.checked_mul(4)?)?;
        let start = usize::try_from(u32_at(block, at)?).ok()?;
        let limit = usize::try_from(u32_at(block, at.checked_add(4)?)?).ok()?;
        if start > limit || limit > offsets.array_offset {
            return None;
        }
        block.get(start..limit)
    }

    /// Whether `key` may be in the data block that starts at file offset `block_offset`. `false` means it
    /// certainly is not.
    #[must_use]
    #[doc(alias("KeyMayMatch", "key_may_match"))]
    pub fn may_contain(&self, block_offset: u64, key: &[u8]) -> bool {
        let Some(offsets) = self.offsets else {
            return true;
        };
        let Some(index) = block_offset.checked_shr(u32::from(offsets.base_lg)) else {
            return true; // base lg >= 64: not a block LevelDB could have written
        };
        match usize::try_from(index).ok().and_then(|i| self.filter(i)) {
            Some(filter) if !filter.is_empty() => self.policy.may_contain(key, filter),
            _ => true,
        }
    }

    /// The block's bytes.
    #[must_use]
    pub fn as_bytes(&self) -> &[u8] {
        self.bytes.as_ref()
    }
}

impl Offsets {
    /// LevelDB's `FilterBlockReader` constructor: `None` where it would leave the reader with no filters.
    fn decode(block: &[u8]) -> Option<Offsets> {
        let footer_at = block.len().checked_sub(FOOTER_LEN)?;
        let array_offset = usize::try_from(u32_at(block, footer_at)?).ok()?;
        let base_lg = *block.last()?;
        let array_len = footer_at.checked_sub(array_offset)?;
        Some(Offsets {
            array_offset,
            num_filters: array_len / 4,
            base_lg,
        })
    }
}

/// The little-endian u32 at `at` in `block`, `None` past its end.
fn u32_at(block: &[u8], at: usize) -> Option<u32> {
    let word = block.get(at..)?.first_chunk::<4>()?;
    Some(u32::from_le_bytes(*word))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{LevelDbBloomPolicy, leveldb_hash};

    /// LevelDB's `TestHashFilter` from `filter_block_test.cc`: a "filter" is the list of the keys' 32-bit hashes
    /// (seed 1), so the block offsets can be checked apart from the Bloom filter.
    #[derive(Debug, Clone, Copy)]
    struct TestHashFilter;

    impl LevelDbFilterPolicy for TestHashFilter {
        fn name(&self) -> &'static str {
            "TestHashFilter"
        }
        fn append_filter(&self, keys: &[&[u8]], out: &mut Vec<u8>) {
            for key in keys {
                out.extend_from_slice(&leveldb_hash(key, 1).to_le_bytes());
            }
        }
        fn may_contain(&self, key: &[u8], filter: &[u8]) -> bool {
            let h = leveldb_hash(key, 1).to_le_bytes();
            filter.chunks_exact(4).any(|w| w == h)
        }
    }

    #[test]
    fn empty_builder_writes_leveldbs_bytes() {
        // filter_block_test.cc EmptyBuilder.
        let block = LevelDbFilterBlockBuilder::new(TestHashFilter)
            .finish()
            .unwrap();
        assert_eq!(block, b"\x00\x00\x00\x00\x0b");
        let reader = LevelDbFilterBlockReader::new(&block[..], TestHashFilter);
        assert!(reader.may_contain(0, b"foo"));
        assert!(reader.may_contain(100_000, b"foo"));
    }

    #[test]
    fn single_chunk() {
        // filter_block_test.cc SingleChunk: three blocks in the first 2 KiB share one filter.
        let mut builder = LevelDbFilterBlockBuilder::new(TestHashFilter);
        builder.start_block(100).unwrap();
        builder.add_key(b"foo");
        builder.add_key(b"bar");
        builder.add_key(b"box");
        builder.start_block(200).unwrap();
        builder.add_key(b"box");
        builder.start_block(300).unwrap();
        builder.add_key(b"hello");
        let block = builder.finish().unwrap();
        let reader = LevelDbFilterBlockReader::new(&block[..], TestHashFilter);
        for key in [&b"foo"[..], b"bar", b"box", b"hello"] {
            assert!(reader.may_contain(100, key));
        }
        assert!(!reader.may_contain(100, b"missing"));
        assert!(!reader.may_contain(100, b"other"));
    }

    #[test]
    fn multi_chunk() {
        // filter_block_test.cc MultiChunk, except the empty third filter (see the module docs).
        let mut builder = LevelDbFilterBlockBuilder::new(TestHashFilter);
        builder.start_block(0).unwrap();
        builder.add_key(b"foo");
        builder.start_block(2000).unwrap();
        builder.add_key(b"bar");
        builder.start_block(3100).unwrap();
        builder.add_key(b"box");
        builder.start_block(9000).unwrap();
        builder.add_key(b"box");
        builder.add_key(b"hello");
        let block = builder.finish().unwrap();
        let reader = LevelDbFilterBlockReader::new(&block[..], TestHashFilter);
        assert_eq!(reader.num_filters(), 5);

        assert!(reader.may_contain(0, b"foo"));
        assert!(reader.may_contain(2000, b"bar"));
        assert!(!reader.may_contain(0, b"box"));
        assert!(!reader.may_contain(0, b"hello"));

        assert!(reader.may_contain(3100, b"box"));
        assert!(!reader.may_contain(3100, b"foo"));
        assert!(!reader.may_contain(3100, b"bar"));
        assert!(!reader.may_contain(3100, b"hello"));

        // Third filter (4096..6144) is empty: LevelDB says "no"; no data block starts there, and we say "may".
        assert_eq!(reader.filter(2), Some(&[][..]));
        assert!(reader.may_contain(4100, b"foo"));

        assert!(reader.may_contain(9000, b"box"));
        assert!(reader.may_contain(9000, b"hello"));
        assert!(!reader.may_contain(9000, b"foo"));
        assert!(!reader.may_contain(9000, b"bar"));
    }

    #[test]
    fn layout_bytes_are_leveldbs() {
        // Two filters of one 4-byte hash each, an empty one between them: offsets 0, 4, 4, then array offset 8.
        let mut builder = LevelDbFilterBlockBuilder::new(TestHashFilter);
        builder.start_block(0).unwrap();
        builder.add_key(b"a");
        builder.start_block(4096).unwrap();
        builder.add_key(b"b");
        let block = builder.finish().unwrap();
        let mut want = Vec::new();
        want.extend_from_slice(&leveldb_hash(b"a", 1).to_le_bytes());
        want.extend_from_slice(&leveldb_hash(b"b", 1).to_le_bytes());
        for word in [0u32, 4, 4, 8] {
            want.extend_from_slice(&word.to_le_bytes());
        }
        want.push(11);
        assert_eq!(block, want);
    }

    #[test]
    fn offsets_going_back_are_rejected_and_change_nothing() {
        let mut builder = LevelDbFilterBlockBuilder::new(TestHashFilter);
        builder.start_block(5000).unwrap();
        builder.add_key(b"k");
        assert_eq!(
            builder.start_block(1000),
            Err(LevelDbUsageError::BlockOffsetOutOfOrder {
                expected: 5000,
                found: 1000
            })
        );
        // The same 2 KiB range is fine, as in LevelDB.
        builder.start_block(4500).unwrap();
        let block = builder.finish().unwrap();
        let reader = LevelDbFilterBlockReader::new(&block[..], TestHashFilter);
        assert!(reader.may_contain(5000, b"k"));
    }

    #[test]
    fn inconsistent_blocks_may_match() {
        let policy = LevelDbBloomPolicy::new(10);
        let mut builder = LevelDbFilterBlockBuilder::new(policy);
        builder.start_block(0).unwrap();
        builder.add_key(b"present");
        let good = builder.finish().unwrap();
        let good_reader = LevelDbFilterBlockReader::new(&good[..], policy);
        assert!(
            !good_reader.may_contain(0, b"absent"),
            "test needs a key the filter rejects"
        );
        assert!(
            good_reader.may_contain(2048, b"absent"),
            "past the last filter"
        );

        let footer_at = good.len() - 5;
        let mut damaged = Vec::new();
        // Array offset past the end.
        let mut b = good.clone();
        b[footer_at..footer_at + 4].copy_from_slice(&u32::MAX.to_le_bytes());
        damaged.push(b);
        // Base lg of 64 and more.
        for lg in [64u8, 200, 255] {
            let mut b = good.clone();
            *b.last_mut().unwrap() = lg;
            damaged.push(b);
        }
        // Filter 0 spans [offset 0, array offset): make it start past its end, or empty.
        let array_at = footer_at - 4;
        for start in [array_at as u32 + 1, array_at as u32, u32::MAX] {
            let mut b = good.clone();
            b[array_at..footer_at].copy_from_slice(&start.to_le_bytes());
            damaged.push(b);
        }
        // A filter ending past the start of the offsets array: offsets [0, 100], array offset 0.
        let mut b = Vec::new();
        for word in [0u32, 100, 0] {
            b.extend_from_slice(&word.to_le_bytes());
        }
        b.push(11);
        damaged.push(b);
        // Zeroed block: every filter would be empty.
        damaged.push(vec![0; good.len()]);
        for short in 0..5 {
            damaged.push(good[good.len() - short..].to_vec());
        }
        for (i, block) in damaged.iter().enumerate() {
            let reader = LevelDbFilterBlockReader::new(&block[..], policy);
            assert!(
                reader.may_contain(0, b"absent"),
                "damaged block {i}: {block:02x?}"
            );
        }
    }
}
