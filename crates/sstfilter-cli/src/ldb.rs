//! LevelDB-format tables (written by LevelDB or rusty-leveldb), read for `sstfilter inspect`: the footer, each
//! block's trailer (compression type and masked CRC32C), the metaindex that names the filter policy, the index
//! that lists the data blocks, and the entry count of every uncompressed data block (which gives each per-2 KiB
//! filter its key count).
//!
//! Layout (LevelDB's `table_format.md`): blocks are `contents ‖ type (1 byte) ‖ masked CRC32C (u32 LE)` of
//! contents and type; the footer is the last 48 bytes: the metaindex and index handles (varint64 offset and size
//! each), zero padding to 40 bytes, and the magic `0xdb4775248b80fb57` (u64 LE). A block's contents are entries
//! `shared (varint32) ‖ unshared (varint32) ‖ value length (varint32) ‖ key suffix ‖ value`, then the restart
//! offsets (u32 each) and their count (u32). Every read here is bounds-checked: any bytes give a typed message,
//! never a panic.

use std::borrow::Cow;

use sstfilter_rocksdb::RocksDbChecksum;

/// The footer's magic number, as stored.
pub(crate) const MAGIC: [u8; 8] = 0xdb47_7524_8b80_fb57u64.to_le_bytes();

/// Bytes of the footer.
const FOOTER_LEN: usize = 48;

/// Bytes after a block's contents: the type byte and the masked CRC32C.
const BLOCK_TRAILER_LEN: usize = 5;

/// Where a block lies: its contents' offset and size (the 5-byte trailer follows).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Handle {
    pub(crate) offset: u64,
    pub(crate) size: u64,
}

/// A LevelDB table held in memory, its footer decoded.
pub(crate) struct LdbTable {
    bytes: Vec<u8>,
    pub(crate) metaindex: Handle,
    pub(crate) index: Handle,
}

/// A block whose CRC matched: its compression type (0 none, 1 Snappy, 2 zstd) and stored contents.
pub(crate) struct Block<'a> {
    pub(crate) compression: u8,
    pub(crate) contents: &'a [u8],
}

impl<'a> Block<'a> {
    /// The block's contents, decompressed if it was stored with Snappy (LevelDB's default, type 1); other
    /// compressions (zstd, type 2) are an error.
    pub(crate) fn decompressed(self, what: &str) -> Result<Cow<'a, [u8]>, String> {
        match self.compression {
            0 => Ok(Cow::Borrowed(self.contents)),
            1 => snappy(self.contents)
                .map(Cow::Owned)
                .ok_or_else(|| format!("{what}: malformed Snappy data")),
            other => Err(format!(
                "the {what} is compressed with type {other}, which inspect does not decompress"
            )),
        }
    }
}

/// Decompresses Snappy's raw format: the uncompressed length (varint), then literals and back-references
/// (copies of earlier output). `None` for anything malformed. The output is never allocated beyond what the
/// input can produce (a 3-byte copy element yields at most 64 bytes).
fn snappy(input: &[u8]) -> Option<Vec<u8>> {
    let (declared, mut at) = varint(input)?;
    let declared = usize::try_from(declared).ok()?;
    let mut out: Vec<u8> = Vec::with_capacity(declared.min(input.len().saturating_mul(22)));
    while at < input.len() {
        let tag = *input.get(at)?;
        at += 1;
        let (len, offset) = match tag & 3 {
            0 => {
                let mut len = usize::from(tag >> 2);
                if len >= 60 {
                    let width = len - 59;
                    let bytes = input.get(at..at + width)?;
                    len = bytes
                        .iter()
                        .rev()
                        .fold(0usize, |acc, &b| (acc << 8) | usize::from(b));
                    at += width;
                }
                let literal = input.get(at..at.checked_add(len + 1)?)?;
                out.extend_from_slice(literal);
                at += len + 1;
                if out.len() > declared {
                    return None;
                }
                continue;
            }
            1 => {
                let low = usize::from(*input.get(at)?);
                at += 1;
                (
                    4 + usize::from((tag >> 2) & 7),
                    (usize::from(tag >> 5) << 8) | low,
                )
            }
            2 => {
                let bytes: [u8; 2] = input.get(at..at + 2)?.try_into().ok()?;
                at += 2;
                (
                    usize::from(tag >> 2) + 1,
                    usize::from(u16::from_le_bytes(bytes)),
                )
            }
            _ => {
                let bytes: [u8; 4] = input.get(at..at + 4)?.try_into().ok()?;
                at += 4;
                (
                    usize::from(tag >> 2) + 1,
                    usize::try_from(u32::from_le_bytes(bytes)).ok()?,
                )
            }
        };
        if offset == 0 || offset > out.len() || out.len() + len > declared {
            return None;
        }
        let start = out.len() - offset;
        for i in 0..len {
            // Byte by byte: a copy may overlap the bytes it is producing (a run).
            let byte = *out.get(start + i)?;
            out.push(byte);
        }
    }
    (out.len() == declared).then_some(out)
}

impl LdbTable {
    /// Decodes the footer; the caller has checked the magic.
    pub(crate) fn new(bytes: Vec<u8>) -> Result<Self, String> {
        let start = bytes
            .len()
            .checked_sub(FOOTER_LEN)
            .ok_or("shorter than a LevelDB footer")?;
        let footer = bytes.get(start..).unwrap_or_default();
        let (metaindex, used) = handle(footer).ok_or("footer: bad metaindex handle")?;
        let (index, _) =
            handle(footer.get(used..).unwrap_or_default()).ok_or("footer: bad index handle")?;
        Ok(LdbTable {
            bytes,
            metaindex,
            index,
        })
    }

    /// The block at `handle`, its CRC32C checked.
    pub(crate) fn block(&self, handle: Handle, what: &str) -> Result<Block<'_>, String> {
        let bad = || format!("{what} at offset {}: outside the file", handle.offset);
        let start = usize::try_from(handle.offset).map_err(|_| bad())?;
        let size = usize::try_from(handle.size).map_err(|_| bad())?;
        let end = start
            .checked_add(size)
            .and_then(|e| e.checked_add(BLOCK_TRAILER_LEN))
            .ok_or_else(bad)?;
        let stored = self.bytes.get(start..end).ok_or_else(bad)?;
        let (covered, crc) = stored.split_at(size + 1);
        let crc = u32::from_le_bytes(crc.try_into().map_err(|_| bad())?);
        // LevelDB's block checksum is RocksDB's CRC32c type: the masked CRC-32C of the contents and type byte.
        if RocksDbChecksum::Crc32c.of(covered) != crc {
            return Err(format!(
                "{what} at offset {}: CRC32C mismatch",
                handle.offset
            ));
        }
        let (contents, compression) = covered.split_at(size);
        Ok(Block {
            compression: compression.first().copied().unwrap_or(0),
            contents,
        })
    }

    /// The bytes of the file.
    pub(crate) fn len(&self) -> u64 {
        self.bytes.len() as u64
    }
}

/// A block entry: its whole key and its value.
pub(crate) type Entry<'a> = (Vec<u8>, &'a [u8]);

/// The entries of an uncompressed block, keys rebuilt from their shared prefixes.
pub(crate) fn entries<'a>(contents: &'a [u8], what: &str) -> Result<Vec<Entry<'a>>, String> {
    let bad = || format!("{what}: malformed block");
    let count_at = contents.len().checked_sub(4).ok_or_else(bad)?;
    let restarts = u32::from_le_bytes(
        contents
            .get(count_at..)
            .ok_or_else(bad)?
            .try_into()
            .map_err(|_| bad())?,
    );
    let data_end = (restarts as usize)
        .checked_mul(4)
        .and_then(|r| count_at.checked_sub(r))
        .ok_or_else(bad)?;
    let mut rest = contents.get(..data_end).ok_or_else(bad)?;
    let mut key: Vec<u8> = Vec::new();
    let mut out = Vec::new();
    while !rest.is_empty() {
        let (shared, a) = varint(rest).ok_or_else(bad)?;
        let (unshared, b) = varint(rest.get(a..).unwrap_or_default()).ok_or_else(bad)?;
        let (value_len, c) = varint(rest.get(a + b..).unwrap_or_default()).ok_or_else(bad)?;
        let at = a + b + c;
        let suffix_end = usize::try_from(unshared)
            .ok()
            .and_then(|u| at.checked_add(u))
            .ok_or_else(bad)?;
        let value_end = usize::try_from(value_len)
            .ok()
            .and_then(|v| suffix_end.checked_add(v))
            .ok_or_else(bad)?;
        let suffix = rest.get(at..suffix_end).ok_or_else(bad)?;
        let value = rest.get(suffix_end..value_end).ok_or_else(bad)?;
        key.truncate(usize::try_from(shared).map_err(|_| bad())?);
        if key.len() as u64 != shared {
            return Err(bad());
        }
        key.extend_from_slice(suffix);
        out.push((key.clone(), value));
        rest = rest.get(value_end..).unwrap_or_default();
    }
    Ok(out)
}

/// A block handle: varint64 offset, varint64 size; returns it and the bytes it took.
pub(crate) fn handle(bytes: &[u8]) -> Option<(Handle, usize)> {
    let (offset, a) = varint(bytes)?;
    let (size, b) = varint(bytes.get(a..)?)?;
    Some((Handle { offset, size }, a + b))
}

/// A little-endian base-128 varint of at most 10 bytes; returns it and the bytes it took.
fn varint(bytes: &[u8]) -> Option<(u64, usize)> {
    let mut value = 0u64;
    for (i, &byte) in bytes.iter().enumerate().take(10) {
        value |= u64::from(byte & 0x7f) << (7 * i);
        if byte & 0x80 == 0 {
            return Some((value, i + 1));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_and_blocks_decode_and_bad_bytes_are_errors() {
        assert_eq!(varint(&[0x96, 0x01]), Some((150, 2)));
        assert_eq!(varint(&[0x80; 11]), None);
        // Two entries, "apple" then "apricot" sharing "ap", one restart at 0.
        let mut block = vec![0, 5, 1];
        block.extend_from_slice(b"apple1");
        block.extend_from_slice(&[2, 5, 1]);
        block.extend_from_slice(b"ricot2");
        block.extend_from_slice(&0u32.to_le_bytes());
        block.extend_from_slice(&1u32.to_le_bytes());
        let found = entries(&block, "test").unwrap();
        assert_eq!(
            found,
            vec![
                (b"apple".to_vec(), &b"1"[..]),
                (b"apricot".to_vec(), &b"2"[..])
            ]
        );
        for len in 0..block.len() - 1 {
            let _ = entries(&block[..len], "test"); // never panics
        }
        assert!(entries(&[0xff; 8], "test").is_err());
    }

    #[test]
    fn snappy_literals_and_overlapping_copies_decode_and_malformed_input_is_refused() {
        // "abcabcabcabcX": a 3-byte literal, a 2-byte-offset copy of 9 bytes at offset 3 (overlapping), a literal.
        let input = [
            13,
            0b0000_1000,
            b'a',
            b'b',
            b'c',
            0b0010_0010,
            3,
            0,
            0,
            b'X',
        ];
        assert_eq!(snappy(&input).as_deref(), Some(&b"abcabcabcabcX"[..]));
        // A 1-byte-offset copy: length 4 + 1, offset 1, after one literal byte: "zzzzzz".
        assert_eq!(
            snappy(&[6, 0, b'z', 0b0000_0101, 1]).as_deref(),
            Some(&b"zzzzzz"[..])
        );
        assert_eq!(snappy(&[5, 0, b'a']), None, "shorter than declared");
        assert_eq!(
            snappy(&[1, 0b0000_0101, 1]),
            None,
            "a copy before any output"
        );
        assert_eq!(
            snappy(&[0xff, 0xff, 0xff, 0xff, 0x0f, 0b1111_1100]),
            None,
            "a literal past the input"
        );
        for input in [&input[..], &[6, 0, b'z', 0b0000_0101, 1][..]] {
            for len in 0..input.len() {
                let _ = snappy(&input[..len]);
            }
        }
    }

    /// Arbitrary bytes ending in the magic: every step answers with a value or a message, never a panic.
    #[test]
    fn arbitrary_files_never_panic() {
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = || {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (state >> 33) as u8
        };
        for round in 0..5000 {
            let len = round % 200;
            let mut bytes: Vec<u8> = (0..len)
                .map(|_| next() % if round % 3 == 0 { 4 } else { 255 })
                .collect();
            bytes.extend_from_slice(&MAGIC);
            let Ok(table) = LdbTable::new(bytes) else {
                continue;
            };
            for handle in [table.metaindex, table.index] {
                if let Ok(block) = table.block(handle, "block") {
                    let _ = entries(block.contents, "block");
                    let _ = block.decompressed("block");
                }
            }
        }
    }
}
