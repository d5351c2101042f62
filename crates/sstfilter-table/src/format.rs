//! The table's fixed byte layout: block handles, the CRC after every block, and the footer. FORMAT.md section 7
//! is the specification; this module mirrors it.
//!
//! ```text
//!  0                 16                32             40        44        48                 56
//!  +-----------------+-----------------+--------------+---------+---------+------------------+
//!  |  filter handle  |  index handle   | entry count  |  CRC32  | version |      magic       |
//!  | offset u64,     | offset u64,     |     u64      | of 0..40|   u32   |    "SSTFTABL"    |
//!  | size u64        | size u64        |              |   u32   |   = 1   |                  |
//!  +-----------------+-----------------+--------------+---------+---------+------------------+
//! ```
//!
//! The version and magic sit after the CRC, at fixed positions from the end of the file, so that any future
//! footer layout keeps them where an old reader looks and that reader reports the version, not a checksum error.
//! Version 2 is such a layout: the 16 bytes before the footer hold the range filter block's handle, and the CRC
//! covers them too (FORMAT.md 7.1). A table without a range filter is still written as version 1.

use core::ops::Range;

use super::error::{BlockType, TableError, TableResult};
use crate::le::take;

/// Magic bytes that end every table file.
pub const TABLE_MAGIC: [u8; 8] = *b"SSTFTABL";

/// The newest table format version this crate reads, and writes for a table with a range filter (version 1
/// otherwise). Version 0 is reserved.
pub const TABLE_FORMAT_VERSION: u32 = 2;

/// Bytes before a version-2 footer: the range filter block's handle.
pub const FOOTER_EXTENSION_LEN: usize = HANDLE_LEN;

/// Bytes of the CRC32 stored after every block.
pub const BLOCK_TRAILER_LEN: u64 = 4;

/// Bytes of an encoded [`BlockHandle`]: offset u64 and size u64.
pub(crate) const HANDLE_LEN: usize = 16;

/// Bytes of the fixed footer at the end of every table file.
pub const FOOTER_LEN: usize = footer_len();

/// Sums the footer fields, one line per field, so the layout and the constant cannot drift apart.
const fn footer_len() -> usize {
    HANDLE_LEN // filter block handle (offset 0, size 0: no filter block)
        + HANDLE_LEN // index block handle
        + 8 // entry count, u64
        + 4 // CRC32 of the bytes above
        + 4 // format version, u32
        + TABLE_MAGIC.len() // magic
}

/// Where a block lies in the file: its offset and the size of its contents. The block's 4-byte CRC follows the
/// contents, so the block occupies `offset .. offset + size + 4`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct BlockHandle {
    offset: u64,
    size: u64,
}

impl BlockHandle {
    /// A handle for the block whose contents start at `offset` and are `size` bytes long.
    #[must_use]
    pub const fn new(offset: u64, size: u64) -> Self {
        BlockHandle { offset, size }
    }

    /// File offset of the block's first byte.
    #[must_use]
    pub const fn offset(&self) -> u64 {
        self.offset
    }

    /// Length of the block's contents, without the CRC that follows them.
    #[must_use]
    pub const fn size(&self) -> u64 {
        self.size
    }

    /// End of the block including its CRC; `None` if that overflows (a corrupt handle).
    pub(crate) fn end(&self) -> Option<u64> {
        self.offset
            .checked_add(self.size)?
            .checked_add(BLOCK_TRAILER_LEN)
    }

    /// Checks that the block and its CRC lie within `allowed` (and, if `ends_at_limit`, end exactly at its end).
    pub(crate) fn check_within(
        &self,
        block: BlockType,
        allowed: Range<u64>,
        ends_at_limit: bool,
    ) -> TableResult<()> {
        let fits = self.offset >= allowed.start
            && self.end().is_some_and(|end| {
                if ends_at_limit {
                    end == allowed.end
                } else {
                    end <= allowed.end
                }
            });
        if fits {
            Ok(())
        } else {
            Err(TableError::BadHandle {
                block,
                offset: self.offset,
                size: self.size,
                allowed,
            })
        }
    }

    /// Appends the 16-byte encoding: offset, then size, both little-endian u64.
    pub(crate) fn encode_into(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.offset.to_le_bytes());
        out.extend_from_slice(&self.size.to_le_bytes());
    }

    /// Decodes a handle from exactly [`HANDLE_LEN`] bytes.
    pub(crate) fn decode(bytes: &[u8]) -> Option<Self> {
        if bytes.len() != HANDLE_LEN {
            return None;
        }
        let mut rest = bytes;
        let offset = u64::from_le_bytes(take(&mut rest)?);
        Some(BlockHandle::new(
            offset,
            u64::from_le_bytes(take(&mut rest)?),
        ))
    }
}

/// Stores a block: its contents followed by the CRC32 of the contents.
pub(crate) fn append_crc(out: &mut Vec<u8>, contents_start: usize) {
    let crc = crc32fast::hash(out.get(contents_start..).unwrap_or_default());
    out.extend_from_slice(&crc.to_le_bytes()); // NOTE: every block ends with the CRC32 of its contents.
}

/// Splits a stored block (contents ‖ CRC32) into its contents, checking the CRC.
pub(crate) fn check_crc(stored: &[u8], block: BlockType) -> TableResult<&[u8]> {
    let Some((contents, crc)) = stored.split_last_chunk::<4>() else {
        // Unreachable for handles validated by `check_within` (they include the CRC), kept total anyway.
        return Err(TableError::ChecksumMismatch {
            block,
            expected: 0,
            found: crc32fast::hash(stored),
        });
    };
    let expected = u32::from_le_bytes(*crc);
    let found = crc32fast::hash(contents);
    if expected == found {
        Ok(contents)
    } else {
        Err(TableError::ChecksumMismatch {
            block,
            expected,
            found,
        })
    }
}

/// The decoded footer of a table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Footer {
    pub(crate) filter: Option<BlockHandle>,
    /// The range filter block (version 2 only).
    pub(crate) range: Option<BlockHandle>,
    pub(crate) index: BlockHandle,
    pub(crate) num_entries: u64,
}

impl Footer {
    /// The footer's bytes: version 1, or with a range filter its handle and a version-2 footer.
    pub(crate) fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(FOOTER_EXTENSION_LEN + FOOTER_LEN);
        if let Some(range) = self.range {
            range.encode_into(&mut out);
        }
        // NOTE: a table without a filter block stores the handle (0, 0); a filter block is never empty (its own
        // trailer is 36 bytes), so size 0 is unambiguous.
        self.filter
            .unwrap_or(BlockHandle::new(0, 0))
            .encode_into(&mut out);
        self.index.encode_into(&mut out);
        out.extend_from_slice(&self.num_entries.to_le_bytes());
        append_crc(&mut out, 0); // NOTE: the CRC covers the handles (the range filter's too) and the entry count.
        let version: u32 = if self.range.is_some() { 2 } else { 1 };
        out.extend_from_slice(&version.to_le_bytes());
        out.extend_from_slice(&TABLE_MAGIC); // NOTE: magic last, so a truncated file fails fast.
        out
    }

    /// Bytes of the footer and its extension: what precedes them is blocks.
    pub(crate) fn len(&self) -> u64 {
        (FOOTER_LEN
            + if self.range.is_some() {
                FOOTER_EXTENSION_LEN
            } else {
                0
            }) as u64
    }

    /// Decodes the footer at the end of a file of `file_len` bytes, given the file's last `tail.len()` bytes (at
    /// most `FOOTER_EXTENSION_LEN + FOOTER_LEN`, all of them if the file is shorter), and checks that the handles
    /// describe the layout `data blocks ‖ [range filter block] ‖ [filter block] ‖ index block ‖ footer`.
    ///
    /// Checks run in the order that gives the most useful error: magic (is this a table at all?), version (can
    /// this reader read it?), checksum (is the footer intact?), then the handles.
    pub(crate) fn decode(tail: &[u8], file_len: u64) -> TableResult<Footer> {
        let too_short = |need: usize| TableError::TooShort {
            expected: need as u64,
            found: file_len,
        };
        let footer_at = tail
            .len()
            .checked_sub(FOOTER_LEN)
            .ok_or(too_short(FOOTER_LEN))?;
        let (before, footer) = tail.split_at(footer_at);
        let (fields, mut rest) = footer.split_at(HANDLE_LEN * 2 + 8);
        let crc = u32::from_le_bytes(take(&mut rest).ok_or(too_short(FOOTER_LEN))?);
        let version = u32::from_le_bytes(take(&mut rest).ok_or(too_short(FOOTER_LEN))?);
        let magic: [u8; 8] = take(&mut rest).ok_or(too_short(FOOTER_LEN))?;
        if magic != TABLE_MAGIC {
            return Err(TableError::BadMagic { found: magic });
        }
        if version == 0 || version > TABLE_FORMAT_VERSION {
            return Err(TableError::UnsupportedVersion {
                found: version,
                expected: TABLE_FORMAT_VERSION,
            });
        }
        let extension = if version == 2 {
            let at = before
                .len()
                .checked_sub(FOOTER_EXTENSION_LEN)
                .ok_or(too_short(FOOTER_EXTENSION_LEN + FOOTER_LEN))?;
            before.get(at..).unwrap_or_default()
        } else {
            &[]
        };
        let mut hasher = crc32fast::Hasher::new();
        hasher.update(extension);
        hasher.update(fields);
        let found = hasher.finalize();
        if found != crc {
            return Err(TableError::ChecksumMismatch {
                block: BlockType::Footer,
                expected: crc,
                found,
            });
        }

        let mut rest = fields;
        let mut field = || {
            take(&mut rest)
                .map(u64::from_le_bytes)
                .ok_or(too_short(FOOTER_LEN))
        };
        let filter = BlockHandle::new(field()?, field()?);
        let index = BlockHandle::new(field()?, field()?);
        let num_entries = field()?;
        let mut rest = extension;
        let range = match (take(&mut rest), take(&mut rest)) {
            (Some(offset), Some(size)) => Some(BlockHandle::new(
                u64::from_le_bytes(offset),
                u64::from_le_bytes(size),
            )),
            _ => None,
        };

        let footer_start = file_len
            .checked_sub((extension.len() + FOOTER_LEN) as u64)
            .ok_or(too_short(extension.len() + FOOTER_LEN))?;
        index.check_within(BlockType::Index, 0..footer_start, true)?;
        let filter = if filter == BlockHandle::new(0, 0) {
            None
        } else {
            filter.check_within(BlockType::Filter, 0..index.offset(), true)?;
            Some(filter)
        };
        if let Some(range) = range {
            let next = filter.unwrap_or(index).offset();
            range.check_within(BlockType::RangeFilter, 0..next, true)?;
        }
        Ok(Footer {
            filter,
            range,
            index,
            num_entries,
        })
    }

    /// End of the data region: data blocks lie in `0..data_end`.
    pub(crate) fn data_end(&self) -> u64 {
        self.range.or(self.filter).unwrap_or(self.index).offset()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn footer_bytes(footer: &Footer) -> [u8; FOOTER_LEN] {
        footer.encode().try_into().unwrap()
    }

    const SAMPLE: Footer = Footer {
        range: None,
        filter: Some(BlockHandle::new(1000, 200)),
        index: BlockHandle::new(1204, 96),
        num_entries: 77,
    };
    const FILE_LEN: u64 = 1204 + 96 + 4 + FOOTER_LEN as u64;

    #[test]
    fn footer_is_56_bytes_and_round_trips() {
        assert_eq!(FOOTER_LEN, 56);
        let bytes = footer_bytes(&SAMPLE);
        assert_eq!(&bytes[48..], b"SSTFTABL");
        assert_eq!(Footer::decode(&bytes, FILE_LEN).unwrap(), SAMPLE);
        assert_eq!(SAMPLE.data_end(), 1000);

        let no_filter = Footer {
            filter: None,
            ..SAMPLE
        };
        let decoded = Footer::decode(&footer_bytes(&no_filter), FILE_LEN).unwrap();
        assert_eq!(decoded, no_filter);
        assert_eq!(decoded.data_end(), 1204);
    }

    #[test]
    fn a_range_filter_makes_a_version_2_footer_whose_crc_covers_its_handle() {
        let with_range = Footer {
            range: Some(BlockHandle::new(900, 96)),
            ..SAMPLE
        };
        let bytes = with_range.encode();
        assert_eq!(bytes.len() as u64, with_range.len());
        assert_eq!(bytes.len(), FOOTER_EXTENSION_LEN + FOOTER_LEN);
        assert_eq!(
            &bytes[bytes.len() - 12..bytes.len() - 8],
            &2u32.to_le_bytes()
        );
        let file_len = FILE_LEN + FOOTER_EXTENSION_LEN as u64;
        assert_eq!(Footer::decode(&bytes, file_len).unwrap(), with_range);
        assert_eq!(with_range.data_end(), 900);
        let mut flipped = bytes.clone();
        flipped[3] ^= 1; // the range handle, before the fixed footer
        assert!(matches!(
            Footer::decode(&flipped, file_len),
            Err(TableError::ChecksumMismatch {
                block: BlockType::Footer,
                ..
            })
        ));
        // A version-2 footer at the very start of a file has no room for its extension.
        assert!(matches!(
            Footer::decode(&bytes[FOOTER_EXTENSION_LEN..], FOOTER_LEN as u64),
            Err(TableError::TooShort { .. })
        ));
        // The range block must end where the filter block starts.
        let gap = Footer {
            range: Some(BlockHandle::new(800, 96)),
            ..SAMPLE
        };
        assert!(matches!(
            Footer::decode(&gap.encode(), file_len),
            Err(TableError::BadHandle { .. })
        ));
    }

    #[test]
    fn footer_errors_carry_evidence() {
        let good = footer_bytes(&SAMPLE);

        let mut b = good;
        b[55] = b'X';
        assert!(matches!(
            Footer::decode(&b, FILE_LEN),
            Err(TableError::BadMagic { found }) if &found == b"SSTFTABX"
        ));

        for version in [0u32, 3, u32::MAX] {
            let mut b = good;
            b[44..48].copy_from_slice(&version.to_le_bytes());
            assert!(matches!(
                Footer::decode(&b, FILE_LEN),
                Err(TableError::UnsupportedVersion { found, expected: 2 }) if found == version
            ));
        }

        let mut b = good;
        b[32] ^= 1;
        assert!(matches!(
            Footer::decode(&b, FILE_LEN),
            Err(TableError::ChecksumMismatch {
                block: BlockType::Footer,
                ..
            })
        ));

        // A footer that is intact but belongs to a longer file: the index no longer ends at the footer.
        assert!(matches!(
            Footer::decode(&good, FILE_LEN + 1),
            Err(TableError::BadHandle { block: BlockType::Index, offset: 1204, size: 96, allowed })
                if allowed == (0..FILE_LEN + 1 - FOOTER_LEN as u64)
        ));
    }

    #[test]
    fn handles_must_tile_the_meta_region() {
        let gap = Footer {
            filter: Some(BlockHandle::new(1000, 199)),
            ..SAMPLE
        };
        assert!(matches!(
            Footer::decode(&footer_bytes(&gap), FILE_LEN),
            Err(TableError::BadHandle {
                block: BlockType::Filter,
                ..
            })
        ));
        let overflowing = Footer {
            index: BlockHandle::new(u64::MAX - 2, 96),
            ..SAMPLE
        };
        assert!(matches!(
            Footer::decode(&footer_bytes(&overflowing), FILE_LEN),
            Err(TableError::BadHandle {
                block: BlockType::Index,
                ..
            })
        ));
    }

    #[test]
    fn crc_trailer_round_trips_and_catches_flips() {
        let mut stored = b"contents".to_vec();
        append_crc(&mut stored, 0);
        assert_eq!(check_crc(&stored, BlockType::Index).unwrap(), b"contents");
        stored[2] ^= 4;
        assert!(matches!(
            check_crc(&stored, BlockType::Index),
            Err(TableError::ChecksumMismatch { .. })
        ));
        assert!(check_crc(&[1, 2, 3], BlockType::Filter).is_err());
    }

    #[test]
    fn handle_codec() {
        let mut out = Vec::new();
        BlockHandle::new(5, 7).encode_into(&mut out);
        assert_eq!(out.len(), HANDLE_LEN);
        assert_eq!(BlockHandle::decode(&out), Some(BlockHandle::new(5, 7)));
        assert_eq!(BlockHandle::decode(&out[1..]), None);
        assert_eq!(BlockHandle::new(5, 7).end(), Some(16));
        assert_eq!(BlockHandle::new(u64::MAX, 0).end(), None);
    }
}
