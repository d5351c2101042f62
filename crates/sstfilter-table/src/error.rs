//! Typed errors of the reference table: I/O, and corruption with the evidence needed to tell a truncated file
//! from a flipped bit from a file written by a newer version.

use core::fmt;
use core::ops::Range;
use std::io;

/// Which part of a table file an error is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum BlockType {
    /// The fixed-size footer at the end of the file.
    Footer,
    /// The index block (one entry per data block).
    Index,
    /// The filter block (the meta block holding the sstfilter block).
    Filter,
    /// The range filter block (a Range sstfilter block beside the filter block, table format version 2).
    RangeFilter,
    /// The partition of a partitioned filter stored at this file offset.
    FilterPartition {
        /// File offset of the partition.
        offset: u64,
    },
    /// The data block stored at this file offset.
    Data {
        /// File offset of the block.
        offset: u64,
    },
}

impl fmt::Display for BlockType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BlockType::Footer => f.write_str("footer"),
            BlockType::Index => f.write_str("index block"),
            BlockType::Filter => f.write_str("filter block"),
            BlockType::RangeFilter => f.write_str("range filter block"),
            BlockType::FilterPartition { offset } => {
                write!(f, "filter partition at offset {offset}")
            }
            BlockType::Data { offset } => write!(f, "data block at offset {offset}"),
        }
    }
}

/// What is wrong inside a data or index block whose checksum matched (a writer bug or a forged file).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum BlockDefect {
    /// The block is shorter than its 4-byte entry count.
    TooShort {
        /// Length of the block's contents.
        len: u64,
    },
    /// The entry count needs more offset-array bytes than the block has.
    CountTooLarge {
        /// The entry count stored in the block.
        count: u64,
        /// Length of the block's contents.
        len: u64,
    },
    /// An entry's offset, header or lengths run past the block's entry area.
    EntryOutOfBounds {
        /// Zero-based position of the entry in the block.
        entry: u64,
    },
    /// A key is not greater than the key before it (within the block, or across data blocks).
    KeysNotSorted {
        /// Zero-based position of the entry in its block.
        entry: u64,
    },
    /// An index entry's value is not a 16-byte block handle.
    BadHandleValue {
        /// Zero-based position of the entry in the index block.
        entry: u64,
        /// Length of the value found.
        len: u64,
    },
    /// The last key of a data block differs from the key its index entry records.
    IndexKeyMismatch {
        /// Zero-based position of the data block in the index.
        entry: u64,
    },
}

impl fmt::Display for BlockDefect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BlockDefect::TooShort { len } => {
                write!(f, "{len} bytes is too short for the entry count")
            }
            BlockDefect::CountTooLarge { count, len } => {
                write!(f, "entry count {count} does not fit in {len} bytes")
            }
            BlockDefect::EntryOutOfBounds { entry } => {
                write!(f, "entry {entry} runs past the entry area")
            }
            BlockDefect::KeysNotSorted { entry } => {
                write!(
                    f,
                    "key of entry {entry} is not greater than the key before it"
                )
            }
            BlockDefect::BadHandleValue { entry, len } => write!(
                f,
                "entry {entry} holds a {len}-byte value where a 16-byte block handle belongs"
            ),
            BlockDefect::IndexKeyMismatch { entry } => write!(
                f,
                "the last key of data block {entry} differs from its index entry"
            ),
        }
    }
}

/// Why a table could not be built, opened, read or verified.
///
/// A table whose filter block alone is unusable still opens (lookups then treat it as "may contain"); the reason
/// is kept in [`Table::filter_error`](crate::Table::filter_error).
#[derive(Debug)]
#[non_exhaustive]
pub enum TableError {
    /// Reading or writing the file failed.
    Io(io::Error),
    /// The file is shorter than the fixed footer, so it cannot be a table.
    TooShort {
        /// Minimum length of a table file.
        expected: u64,
        /// Length of the file.
        found: u64,
    },
    /// The file does not end with the table magic: not a table, or truncated.
    BadMagic {
        /// The eight bytes found where the magic belongs.
        found: [u8; 8],
    },
    /// The footer names a format version this reader does not know (newer, or the reserved 0).
    UnsupportedVersion {
        /// The newest version this reader understands (it reads `1..=expected`).
        expected: u32,
        /// The version stored in the footer.
        found: u32,
    },
    /// A block's CRC32 does not match its bytes.
    ChecksumMismatch {
        /// The block whose checksum failed.
        block: BlockType,
        /// The checksum stored after the block.
        expected: u32,
        /// The checksum computed over the block.
        found: u32,
    },
    /// A block handle points outside the place the layout gives that block.
    BadHandle {
        /// The block the handle points to.
        block: BlockType,
        /// The handle's offset, as stored.
        offset: u64,
        /// The handle's size, as stored.
        size: u64,
        /// The byte range the block and its CRC must lie in (the filter and index blocks must also end at its
        /// end).
        allowed: Range<u64>,
    },
    /// A block's checksum matched but its structure is invalid.
    CorruptBlock {
        /// The block that is malformed.
        block: BlockType,
        /// What is wrong with it.
        defect: BlockDefect,
    },
    /// The filter block could not be opened or verified.
    Filter(sstfilter::Error),
    /// The filter block was built from a different number of keys than the table holds, so it may belong to
    /// another table.
    FilterKeyCount {
        /// Entries in the table.
        table: u64,
        /// Keys the filter block was built from.
        filter: u64,
    },
    /// The data blocks hold a different number of entries than the footer records.
    EntryCountMismatch {
        /// The count stored in the footer.
        footer: u64,
        /// The number of entries found in the data blocks.
        found: u64,
    },
    /// A key was added that is not greater than the previous key (tables hold strictly increasing keys).
    KeyOutOfOrder {
        /// The previous key.
        previous: Vec<u8>,
        /// The key that was added after it.
        key: Vec<u8>,
    },
    /// The index block would exceed the 4 GiB its u32 offsets can address (too many data blocks for one table).
    IndexTooLarge {
        /// Data blocks written when the limit was reached.
        data_blocks: u64,
    },
    /// A key or value is larger than the format allows.
    EntryTooLarge {
        /// Length of the key.
        key_len: usize,
        /// Length of the value.
        value_len: usize,
        /// Largest allowed key length plus value length.
        max: usize,
    },
    /// The options or the calls were refused by the filter library (a setting out of range, an extractor name too
    /// long to record, keys out of order for a filter builder).
    Usage(sstfilter::UsageError),
}

impl fmt::Display for TableError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TableError::Io(e) => write!(f, "table I/O error: {e}"),
            TableError::TooShort { expected, found } => write!(
                f,
                "not a table: {found} bytes is shorter than the {expected}-byte footer"
            ),
            TableError::BadMagic { found } => {
                write!(f, "not a table: bad footer magic {found:02x?}")
            }
            TableError::UnsupportedVersion { found, expected } => write!(
                f,
                "unsupported table format version {found} (this reader supports 1..={expected})"
            ),
            TableError::ChecksumMismatch {
                block,
                expected,
                found,
            } => write!(
                f,
                "{block} checksum mismatch: stored {expected:#010x}, computed {found:#010x}"
            ),
            TableError::BadHandle {
                block,
                offset,
                size,
                allowed,
            } => write!(
                f,
                "{block} handle (offset {offset}, size {size}) breaks the layout: the block and its 4-byte CRC must \
                 lie within bytes {}..{} of the file (and an index, filter or range filter block must end at {1})",
                allowed.start, allowed.end
            ),
            TableError::CorruptBlock { block, defect } => write!(f, "corrupt {block}: {defect}"),
            TableError::Filter(e) => write!(f, "unusable filter block: {e}"),
            TableError::Usage(e) => write!(f, "refused: {e}"),
            TableError::FilterKeyCount { table, filter } => write!(
                f,
                "filter block was built from {filter} keys but the table holds {table} entries"
            ),
            TableError::EntryCountMismatch { footer, found } => write!(
                f,
                "footer records {footer} entries but the data blocks hold {found}"
            ),
            TableError::KeyOutOfOrder { previous, key } => write!(
                f,
                "key {:?} added after {:?}: table keys must be strictly increasing",
                String::from_utf8_lossy(key),
                String::from_utf8_lossy(previous)
            ),
            TableError::IndexTooLarge { data_blocks } => write!(
                f,
                "index block too large after {data_blocks} data blocks: split the table or raise the block size"
            ),
            TableError::EntryTooLarge {
                key_len,
                value_len,
                max,
            } => write!(
                f,
                "entry too large: key {key_len} + value {value_len} bytes exceeds {max}"
            ),
        }
    }
}

impl std::error::Error for TableError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            TableError::Io(e) => Some(e),
            TableError::Filter(e) => Some(e),
            TableError::Usage(e) => Some(e),
            _ => None,
        }
    }
}

impl From<io::Error> for TableError {
    fn from(e: io::Error) -> Self {
        TableError::Io(e)
    }
}

impl From<sstfilter::UsageError> for TableError {
    fn from(e: sstfilter::UsageError) -> Self {
        TableError::Usage(e)
    }
}

impl From<sstfilter::Error> for TableError {
    fn from(e: sstfilter::Error) -> Self {
        TableError::Filter(e)
    }
}

/// Result type of the table module.
pub type TableResult<T> = core::result::Result<T, TableError>;
