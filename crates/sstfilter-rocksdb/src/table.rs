//! A RocksDB block-based table file (an SST file), read as far as its filter: the footer, the meta-index block,
//! the table properties the filter's reading depends on, and the filter block or the partitioned filter, every
//! block's checksum verified before its bytes are read.
//!
//! The layout is RocksDB's (`table/format.cc`, `table/block_based/`): the file ends in a footer naming the
//! checksum type, the format version and where the meta-index block is; the meta-index maps names to blocks
//! (`fullfilter.<policy>`, `partitionedfilter.<policy>`, `rocksdb.properties`, ...); every block is followed by a
//! 5-byte trailer, its compression type and a 32-bit checksum of the block and that byte. Format version 6 (RocksDB
//! 8.6 and later, and 9.x's default) adds a checksum of the footer and mixes each block's offset into its checksum,
//! so that a block copied to another place fails its check; the side-by-side tests read it in files RocksDB 9.8.4
//! wrote. Version 7 (RocksDB 10.4) changes nothing read here and is read as 6.
//!
//! The filter answers keys, and prefixes of keys where the table was written with a prefix extractor: the
//! properties name it ([`RocksDbPrefixExtractor`]), and a prefix question is routed to its partition by the key
//! asked, as RocksDB routes a prefix seek.
//!
//! Blocks are prefix-compressed key/value entries followed by a restart array and its length (`num_restarts`,
//! whose top bit marks a data block's hash index in blocks of up to 64 KiB, as RocksDB reads it). Reading never
//! panics and allocates in proportion to the bytes read at most; damaged bytes give a [`RocksDbTableError`], and a
//! lookup that cannot be answered answers "may match".
//!
//! LevelDB's table file is this format's version 0, LevelDB's magic number included: the footer, the blocks and
//! their CRC32C trailers, the block entries. A table of it holds no RocksDB properties block
//! ([`RocksDbTable::properties_handle`]), and its filter is LevelDB's filter block (`filter.<policy>`), which
//! [`RocksDbTable::read_block`] reads verified for `sstfilter_leveldb::LevelDbFilterBlockReader`. The index and
//! data blocks are read with the same calls ([`RocksDbTable::index_handle`], [`RocksDbBlockEntries`]).

use std::borrow::Cow;
use std::fmt;

use crate::{RocksDbFilter, crc32c};

/// The block-based table's magic number, the file's last 8 bytes (format version 1 and later).
const MAGIC: u64 = 0x88e2_41b7_85f4_cff7;
/// The magic number of format version 0, whose footer has no version or checksum type.
const LEGACY_MAGIC: u64 = 0xdb47_7524_8b80_fb57;
/// Footer bytes from format version 1: checksum type, 40 bytes of handles (or version 6's fields), version, magic.
const FOOTER_LEN: usize = 53;
/// Footer bytes of format version 0: the 40 bytes of handles and the magic number.
const LEGACY_FOOTER_LEN: usize = 48;
/// The handles' part of a footer, padded: two block handles of at most 10 + 10 varint bytes.
const HANDLES_LEN: usize = 40;
/// Every block's trailer: its compression type, then the checksum of the block and that byte.
const TRAILER_LEN: usize = 5;
/// The newest format version read.
const LATEST_FORMAT_VERSION: u32 = 7;
/// The first format version with a footer checksum and block checksums that depend on the block's offset.
const CONTEXT_CHECKSUM_VERSION: u32 = 6;
/// Version 6's footer starts its 40 bytes with these, where older footers have a handle (of an impossible size).
const EXTENDED_MAGIC: [u8; 4] = [0x3e, 0x00, 0x7a, 0x00];
/// The top bit of a block's `num_restarts`: a hash index follows the restart array (data blocks only).
const HASH_INDEX_BIT: u32 = 1 << 31;
/// Blocks longer than this never have a hash index: RocksDB reads their `num_restarts` whole.
const MAX_HASH_INDEX_BLOCK: usize = 1 << 16;
/// The bytes of sequence number and type that end an internal key.
const SEQUENCE_LEN: usize = 8;
/// The meta-index names of a table's filter, before the policy's name.
const FULL_FILTER: &[u8] = b"fullfilter.";
const PARTITIONED_FILTER: &[u8] = b"partitionedfilter.";
/// The names of the properties block: RocksDB looks for the old one where the new one is missing.
const PROPERTIES: &[u8] = b"rocksdb.properties";
const OLD_PROPERTIES: &[u8] = b"rocksdb.stats";
/// The comparator whose order the partition search assumes (byte-wise, as `<` on slices).
const BYTEWISE: &[u8] = b"leveldb.BytewiseComparator";
/// The property naming the table's prefix extractor (`nullptr` for none).
const PREFIX_EXTRACTOR: &[u8] = b"rocksdb.prefix.extractor.name";
/// Policy names RocksDB 7.8.3 reads with its built-in filter readers (`kBuiltinNameAndAliases`): the filters
/// [`RocksDbFilter`] reads. A filter of any other policy is a custom format, which it cannot read.
const BUILTIN_POLICIES: [&str; 7] = [
    "rocksdb.BuiltinBloomFilter",
    "rocksdb.internal.LegacyBloomFilter",
    "rocksdb.internal.FastLocalBloomFilter",
    "rocksdb.internal.Standard128RibbonFilter",
    "rocksdb.internal.DeprecatedBlockBasedBloomFilter",
    "bloomfilter",
    "ribbonfilter",
];

/// The checksum a RocksDB table computes for each block (and, from format version 6, for its footer), named by
/// the footer's checksum-type byte.
///
/// ```
/// use sstfilter_rocksdb::RocksDbChecksum;
///
/// // CRC32C is stored masked: 0xE3069283, the CRC32C of "123456789", rotated right by 15 bits plus 0xa282ead8.
/// assert_eq!(RocksDbChecksum::Crc32c.of(b"123456789"), 0xE3069283_u32.rotate_right(15).wrapping_add(0xa282ead8));
/// assert_eq!(RocksDbChecksum::from_byte(4), Some(RocksDbChecksum::Xxh3));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RocksDbChecksum {
    /// No checksum (`kNoChecksum`, 0): every block's stored value must be 0 (plus the offset's part from format
    /// version 6), and nothing protects the bytes.
    None,
    /// CRC32C, masked (`kCRC32c`, 1): RocksDB's default before 9.x, and format version 0's only checksum.
    Crc32c,
    /// xxHash32 with seed 0 (`kxxHash`, 2).
    XxHash32,
    /// The lower 32 bits of xxHash64 with seed 0 (`kxxHash64`, 3).
    XxHash64,
    /// The lower 32 bits of XXH3-64 of all bytes but the last, the last mixed in by a multiply (`kXXH3`, 4).
    Xxh3,
}

impl RocksDbChecksum {
    /// The checksum type of a footer's byte, `None` for a byte RocksDB does not define.
    #[must_use]
    pub const fn from_byte(byte: u8) -> Option<Self> {
        match byte {
            0 => Some(Self::None),
            1 => Some(Self::Crc32c),
            2 => Some(Self::XxHash32),
            3 => Some(Self::XxHash64),
            4 => Some(Self::Xxh3),
            _ => None,
        }
    }

    /// The 32-bit value RocksDB computes of `data` (`ComputeBuiltinChecksum`): for a block, `data` is the block
    /// followed by its compression-type byte. Before format version 6 it is the stored value; from version 6 the
    /// stored value adds a part derived from the block's offset.
    #[must_use]
    pub fn of(self, data: &[u8]) -> u32 {
        match self {
            Self::None => 0,
            Self::Crc32c => crc32c::mask(crc32c::crc32c(data)),
            Self::XxHash32 => xxhash_rust::xxh32::xxh32(data, 0),
            Self::XxHash64 => xxhash_rust::xxh64::xxh64(data, 0) as u32,
            // XXH3 has no cheap streaming form, so RocksDB hashes the block without its last byte (the compression
            // type) and mixes that byte in with a multiply; it defines the empty input's value as 0.
            Self::Xxh3 => data.split_last().map_or(0, |(&last, head)| {
                (xxhash_rust::xxh3::xxh3_64(head) as u32)
                    ^ u32::from(last).wrapping_mul(0x6b90_83d9)
            }),
        }
    }
}

/// Which part of a table an error is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum RocksDbBlock {
    /// The footer, the file's last 48 or 53 bytes.
    Footer,
    /// The meta-index block, which the footer points to.
    MetaIndex,
    /// The table properties block (`rocksdb.properties`).
    Properties,
    /// A full filter block (`fullfilter.<policy>`).
    Filter,
    /// The top-level index of a partitioned filter (`partitionedfilter.<policy>`).
    FilterPartitionIndex,
    /// One partition of a partitioned filter.
    FilterPartition,
    /// The index block, which lists the data blocks.
    Index,
    /// A data block.
    Data,
    /// A filter block of one filter per 2 KiB of data-block offsets (`filter.<policy>`): LevelDB's, and RocksDB's
    /// before full filters.
    BlockBasedFilter,
}

impl fmt::Display for RocksDbBlock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Footer => "footer",
            Self::MetaIndex => "meta-index block",
            Self::Properties => "properties block",
            Self::Filter => "filter block",
            Self::FilterPartitionIndex => "filter partition index",
            Self::FilterPartition => "filter partition",
            Self::Index => "index block",
            Self::Data => "data block",
            Self::BlockBasedFilter => "filter block",
        })
    }
}

/// Why a table, or its filter, could not be read.
///
/// ```
/// use sstfilter_rocksdb::{RocksDbTable, RocksDbTableError};
///
/// let not_a_table = [0u8; 64];
/// assert_eq!(RocksDbTable::open(&not_a_table).unwrap_err(), RocksDbTableError::NotATable { magic: 0 });
/// assert!(matches!(RocksDbTable::open(b"short"), Err(RocksDbTableError::TooShort { len: 5 })));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum RocksDbTableError {
    /// Shorter than a footer.
    TooShort {
        /// The file's length.
        len: usize,
    },
    /// The last 8 bytes are not the block-based table's magic number (another table format, or not a table).
    NotATable {
        /// The number found.
        magic: u64,
    },
    /// A format version this reader does not know (newer than 7).
    UnsupportedFormatVersion {
        /// The footer's version.
        version: u32,
    },
    /// A checksum-type byte RocksDB does not define.
    UnsupportedChecksum {
        /// The footer's byte.
        byte: u8,
    },
    /// A footer of format version 6 or later whose fixed fields are wrong, or which uses a reserved feature.
    BadFooter {
        /// Which field, in a few words.
        reason: &'static str,
    },
    /// A block handle that does not fit in the file (with the block's trailer).
    OutOfRange {
        /// The block.
        block: RocksDbBlock,
        /// Its offset in the file.
        offset: u64,
        /// Its size, without the trailer.
        size: u64,
    },
    /// A block (or the footer) whose checksum does not match its bytes.
    ChecksumMismatch {
        /// The block.
        block: RocksDbBlock,
        /// Its offset in the file.
        offset: u64,
        /// The stored value (the offset's part removed, from format version 6).
        stored: u32,
        /// The value computed from the bytes.
        computed: u32,
    },
    /// A block that is compressed: RocksDB never compresses the meta blocks read here, and they are not
    /// decompressed ([`RocksDbTable::read_block`] hands a block over as stored, compressed or not).
    Compressed {
        /// The block.
        block: RocksDbBlock,
        /// Its offset in the file.
        offset: u64,
        /// The compression type byte of its trailer.
        compression: u8,
    },
    /// A block whose checksum matches but whose contents are not in RocksDB's block format.
    Malformed {
        /// The block.
        block: RocksDbBlock,
        /// Its offset in the file.
        offset: u64,
        /// What is wrong, in a few words.
        reason: &'static str,
    },
    /// A table with a filter but no properties block, which says whether the filter holds whole keys and how its
    /// partition index is encoded (RocksDB writes one in every table).
    NoProperties,
    /// A filter of a policy other than RocksDB's built-in ones: a custom filter, whose bytes only its own policy
    /// can read.
    UnsupportedFilterPolicy {
        /// The policy's name, from the meta-index.
        policy: String,
    },
}

impl fmt::Display for RocksDbTableError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::TooShort { len } => {
                write!(f, "{len} bytes: too short for a RocksDB table footer")
            }
            Self::NotATable { magic } => write!(
                f,
                "not a RocksDB block-based table (magic number {magic:#018x})"
            ),
            Self::UnsupportedFormatVersion { version } => {
                write!(
                    f,
                    "RocksDB table format_version {version} is not supported (0 to 7 are)"
                )
            }
            Self::UnsupportedChecksum { byte } => write!(f, "unknown RocksDB checksum type {byte}"),
            Self::BadFooter { reason } => write!(f, "bad RocksDB table footer: {reason}"),
            Self::OutOfRange {
                block,
                offset,
                size,
            } => {
                write!(
                    f,
                    "{block} at offset {offset} of {size} bytes lies outside the file"
                )
            }
            Self::ChecksumMismatch {
                block,
                offset,
                stored,
                computed,
            } => write!(
                f,
                "{block} at offset {offset}: checksum mismatch \
                 (stored {stored:#010x}, computed {computed:#010x})"
            ),
            Self::Compressed {
                block,
                offset,
                compression,
            } => {
                write!(
                    f,
                    "{block} at offset {offset} is compressed (type {compression}); not read"
                )
            }
            Self::Malformed {
                block,
                offset,
                reason,
            } => {
                write!(f, "{block} at offset {offset} is malformed: {reason}")
            }
            Self::NoProperties => f.write_str("RocksDB table has a filter but no properties block"),
            Self::UnsupportedFilterPolicy { policy } => {
                write!(
                    f,
                    "RocksDB filter of policy {policy:?} is not one of RocksDB's built-in filters"
                )
            }
        }
    }
}

impl std::error::Error for RocksDbTableError {}

/// Where a block is: its offset in the file and its size without the 5-byte trailer (RocksDB's `BlockHandle`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RocksDbBlockHandle {
    /// The block's first byte in the file.
    pub offset: u64,
    /// The block's bytes, not counting its trailer.
    pub size: u64,
}

impl RocksDbBlockHandle {
    /// The handle at the start of `value` (two varints: offset, size), as an index block's entries and the
    /// meta-index's hold them; `None` where they do not decode.
    #[must_use]
    pub fn decode(value: &[u8]) -> Option<Self> {
        read_handle(&mut &value[..])
    }
}

/// A block as the table stores it, its checksum verified: its contents and its compression type (0 for none; 1 is
/// Snappy in LevelDB's and RocksDB's numbering alike).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RocksDbStoredBlock<'a> {
    /// The contents as stored: compressed unless `compression` is 0.
    pub contents: &'a [u8],
    /// The compression type byte of the block's trailer.
    pub compression: u8,
}

/// One entry of a table's meta-index: a meta block's name and where it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RocksDbMetaBlock<'a> {
    /// The name (`rocksdb.properties`, `fullfilter.rocksdb.BuiltinBloomFilter`, ...), borrowed from the file
    /// unless the meta-index shares a prefix between names (RocksDB's does not).
    pub name: Cow<'a, [u8]>,
    /// The block.
    pub handle: RocksDbBlockHandle,
}

/// A RocksDB block-based table file (its bytes), opened from its footer: the format version, the checksum type,
/// and the meta-index block, its checksum verified.
///
/// ```no_run
/// use sstfilter_rocksdb::{RocksDbTable, RocksDbTableFilter};
///
/// let file = std::fs::read("000042.sst")?;
/// let table = RocksDbTable::open(&file)?;
/// println!("format_version {}, {:?} checksums", table.format_version(), table.checksum());
/// for meta in table.meta_blocks() {
///     let meta = meta?;
///     println!("{} at {}", String::from_utf8_lossy(&meta.name), meta.handle.offset);
/// }
/// if let Some(filter) = table.filter()? {
///     // "false" only where RocksDB's filter says so: the table cannot hold the key.
///     println!("policy {}: {}", filter.policy(), filter.may_contain(b"user key"));
///     if let RocksDbTableFilter::Partitioned(partitioned) = &filter {
///         println!("{} partitions", partitioned.partitions().count());
///     }
/// }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Copy)]
pub struct RocksDbTable<'a> {
    blocks: Blocks<'a>,
    format_version: u32,
    meta_index: &'a [u8],
    meta_index_offset: u64,
    /// The index block's handle, from a footer that holds it (versions 0 to 5).
    index: Option<RocksDbBlockHandle>,
}

impl RocksDbTable<'_> {
    /// The last 8 bytes of a table of format version 1 and later (`kBlockBasedTableMagicNumber`).
    pub const MAGIC: u64 = MAGIC;
    /// The last 8 bytes of a table of format version 0 (`kLegacyBlockBasedTableMagicNumber`): LevelDB's table
    /// magic number, so LevelDB's tables end in it too.
    pub const LEGACY_MAGIC: u64 = LEGACY_MAGIC;
}

impl<'a> RocksDbTable<'a> {
    /// Reads the footer of `file` (a whole table file) and the meta-index block it points to, verifying the
    /// footer's checksum (format version 6 and later) and the meta-index block's.
    pub fn open(file: &'a [u8]) -> Result<Self, RocksDbTableError> {
        let too_short = || RocksDbTableError::TooShort { len: file.len() };
        let magic = file
            .last_chunk::<8>()
            .map(|m| u64::from_le_bytes(*m))
            .ok_or_else(too_short)?;
        if magic == LEGACY_MAGIC {
            // Format version 0: the handles and the magic number, CRC32C implied.
            let footer = file
                .last_chunk::<LEGACY_FOOTER_LEN>()
                .ok_or_else(too_short)?;
            let handles = footer.first_chunk::<HANDLES_LEN>().ok_or_else(too_short)?;
            let (meta_index, index) = footer_handles(handles)?;
            return Self::with_meta_index(
                file,
                0,
                RocksDbChecksum::Crc32c,
                0,
                meta_index,
                Some(index),
            );
        }
        if magic != MAGIC {
            return Err(RocksDbTableError::NotATable { magic });
        }
        let footer = file.last_chunk::<FOOTER_LEN>().ok_or_else(too_short)?;
        let mut fields = footer.as_slice();
        let (checksum_byte, part2, version) = (|| {
            let [checksum_byte] = take(&mut fields)?;
            let part2 = take::<HANDLES_LEN>(&mut fields)?;
            Some((checksum_byte, part2, u32::from_le_bytes(take(&mut fields)?)))
        })()
        .ok_or_else(too_short)?;
        if version > LATEST_FORMAT_VERSION {
            return Err(RocksDbTableError::UnsupportedFormatVersion { version });
        }
        let checksum = RocksDbChecksum::from_byte(checksum_byte).ok_or(
            RocksDbTableError::UnsupportedChecksum {
                byte: checksum_byte,
            },
        )?;
        if version < CONTEXT_CHECKSUM_VERSION {
            let (meta_index, index) = footer_handles(&part2)?;
            return Self::with_meta_index(file, version, checksum, 0, meta_index, Some(index));
        }
        let footer_offset = file
            .len()
            .checked_sub(FOOTER_LEN)
            .and_then(|o| u64::try_from(o).ok())
            .ok_or_else(too_short)?;
        let (context, meta_index) = context_footer(footer, footer_offset, checksum)?;
        Self::with_meta_index(file, version, checksum, context, meta_index, None)
    }

    /// The table of `file` whose meta-index block is at `handle`, once that block is read and verified.
    fn with_meta_index(
        file: &'a [u8],
        format_version: u32,
        checksum: RocksDbChecksum,
        context: u32,
        handle: RocksDbBlockHandle,
        index: Option<RocksDbBlockHandle>,
    ) -> Result<Self, RocksDbTableError> {
        let blocks = Blocks {
            file,
            checksum,
            context,
        };
        let meta_index = blocks.read(handle, RocksDbBlock::MetaIndex)?;
        Ok(RocksDbTable {
            blocks,
            format_version,
            meta_index,
            meta_index_offset: handle.offset,
            index,
        })
    }

    /// The table's format version (`BlockBasedTableOptions::format_version`), 0 to 7.
    #[must_use]
    pub const fn format_version(&self) -> u32 {
        self.format_version
    }

    /// The checksum type of the table's blocks.
    #[must_use]
    pub const fn checksum(&self) -> RocksDbChecksum {
        self.blocks.checksum
    }

    /// The index block's handle, as the footer names it; `None` from format version 6, whose footer does not
    /// (RocksDB names it in the meta-index there).
    #[must_use]
    pub const fn index_handle(&self) -> Option<RocksDbBlockHandle> {
        self.index
    }

    /// The block at `handle` as the table stores it (compressed or not), once its trailer's checksum matches;
    /// `block` names it in errors.
    pub fn read_block(
        &self,
        handle: RocksDbBlockHandle,
        block: RocksDbBlock,
    ) -> Result<RocksDbStoredBlock<'a>, RocksDbTableError> {
        self.blocks.read_stored(handle, block)
    }

    /// Every meta-index entry, in the block's order (by name); an error ends the entries.
    pub fn meta_blocks(
        &self,
    ) -> impl Iterator<Item = Result<RocksDbMetaBlock<'a>, RocksDbTableError>> + use<'a> {
        let (block, offset) = (RocksDbBlock::MetaIndex, self.meta_index_offset);
        RocksDbBlockEntries::new(self.meta_index, block, offset).map(move |entry| {
            let (name, mut value) = entry?;
            let handle =
                read_handle(&mut value).ok_or(malformed(block, offset, "a meta block handle"))?;
            Ok(RocksDbMetaBlock { name, handle })
        })
    }

    /// The first meta-index entry (in name order) whose name `matches`, as RocksDB's seek in the block finds it.
    fn find_meta(
        &self,
        matches: impl Fn(&[u8]) -> bool,
    ) -> Result<Option<RocksDbMetaBlock<'a>>, RocksDbTableError> {
        for meta in self.meta_blocks() {
            let meta = meta?;
            if matches(&meta.name) {
                return Ok(Some(meta));
            }
        }
        Ok(None)
    }

    /// The table's filter, if it has one: the `fullfilter.<policy>` meta block (RocksDB looks for it first) or
    /// the `partitionedfilter.<policy>` one, its block checksum verified (and each partition's when it is read).
    ///
    /// `Ok(None)` for a table without a filter, or with only the obsolete per-data-block filter (`filter.<policy>`)
    /// of old tables, which RocksDB 7.8.3 no longer reads either.
    pub fn filter(&self) -> Result<Option<RocksDbTableFilter<'a>>, RocksDbTableError> {
        let (meta, partitioned) = match self.find_meta(|name| name.starts_with(FULL_FILTER))? {
            Some(meta) => (meta, false),
            None => match self.find_meta(|name| name.starts_with(PARTITIONED_FILTER))? {
                Some(meta) => (meta, true),
                None => return Ok(None),
            },
        };
        let prefix = if partitioned {
            PARTITIONED_FILTER
        } else {
            FULL_FILTER
        };
        let policy =
            String::from_utf8_lossy(meta.name.get(prefix.len()..).unwrap_or_default()).into_owned();
        if !BUILTIN_POLICIES.contains(&policy.as_str()) {
            return Err(RocksDbTableError::UnsupportedFilterPolicy { policy });
        }
        let properties = self.properties()?;
        if partitioned {
            let index = self
                .blocks
                .read(meta.handle, RocksDbBlock::FilterPartitionIndex)?;
            let filter = RocksDbPartitionedFilter::new(
                policy,
                self.blocks,
                index,
                meta.handle.offset,
                properties,
            )?;
            return Ok(Some(RocksDbTableFilter::Partitioned(filter)));
        }
        let filter =
            RocksDbFilter::from_verified(self.blocks.read(meta.handle, RocksDbBlock::Filter)?);
        Ok(Some(RocksDbTableFilter::Full {
            policy,
            filter,
            whole_keys: properties.whole_keys,
            prefix_extractor: properties.prefix_extractor,
        }))
    }

    /// The table properties block's handle (`rocksdb.properties`, or the older `rocksdb.stats` where that is
    /// missing, as RocksDB looks for it). Every table RocksDB writes has one; LevelDB's tables, which share format
    /// version 0's footer and magic number, never do.
    pub fn properties_handle(&self) -> Result<Option<RocksDbBlockHandle>, RocksDbTableError> {
        let meta = match self.find_meta(|name| name == PROPERTIES)? {
            Some(meta) => Some(meta),
            None => self.find_meta(|name| name == OLD_PROPERTIES)?,
        };
        Ok(meta.map(|meta| meta.handle))
    }

    /// The properties the filter's reading depends on, from the properties block (RocksDB's
    /// `ReadTablePropertiesHelper`, defaults where a property is missing).
    fn properties(&self) -> Result<Properties, RocksDbTableError> {
        let handle = self
            .properties_handle()?
            .ok_or(RocksDbTableError::NoProperties)?;
        let (block, offset) = (RocksDbBlock::Properties, handle.offset);
        let contents = self.blocks.read(handle, block)?;
        let mut properties = Properties {
            whole_keys: true,
            keys_include_seq: true,
            delta_values: false,
            bytewise: false,
            prefix_extractor: None,
        };
        for entry in RocksDbBlockEntries::new(contents, block, offset) {
            let (name, value) = entry?;
            let flag = || {
                let mut value = value;
                varint64(&mut value).map(|v| v != 0).ok_or(malformed(
                    block,
                    offset,
                    "an integer property",
                ))
            };
            match name.as_ref() {
                // A user-collected property, "0" or "1": RocksDB reads anything but "0" as set.
                b"rocksdb.block.based.table.whole.key.filtering" => {
                    properties.whole_keys = value != b"0"
                }
                b"rocksdb.index.key.is.user.key" => properties.keys_include_seq = !flag()?,
                b"rocksdb.index.value.is.delta.encoded" => properties.delta_values = flag()?,
                b"rocksdb.comparator" => properties.bytewise = value == BYTEWISE,
                PREFIX_EXTRACTOR => {
                    properties.prefix_extractor = RocksDbPrefixExtractor::from_name(value)
                }
                _ => {}
            }
        }
        Ok(properties)
    }
}

/// The table properties a filter's reading depends on.
#[derive(Debug, Clone, Copy)]
struct Properties {
    /// The filter holds whole keys (`whole_key_filtering`), not only prefixes.
    whole_keys: bool,
    /// Index keys are internal keys, the user key then 8 bytes (`index_key_is_user_key` is 0).
    keys_include_seq: bool,
    /// Index values after a restart point are size deltas (`index_value_is_delta_encoded`).
    delta_values: bool,
    /// The table's keys are ordered byte-wise, the order the partition search compares in.
    bytewise: bool,
    /// The prefix extractor the filter's prefixes were cut with, if any.
    prefix_extractor: Option<RocksDbPrefixExtractor>,
}

/// A table's prefix extractor, as its properties name it (`rocksdb.prefix.extractor.name`): how RocksDB cut the
/// prefixes its filter holds (beside whole keys, or instead of them where `whole_key_filtering` is off), and how it
/// cuts the prefix of a key it asks the filter about.
///
/// ```
/// use sstfilter_rocksdb::RocksDbPrefixExtractor;
///
/// let fixed = RocksDbPrefixExtractor::from_name(b"rocksdb.FixedPrefix.4");
/// assert_eq!(fixed, Some(RocksDbPrefixExtractor::Fixed(4)));
/// assert_eq!(fixed.unwrap().prefix(b"user42"), Some(&b"user"[..]));
/// assert_eq!(fixed.unwrap().prefix(b"usr"), None);
/// let capped = RocksDbPrefixExtractor::Capped(4);
/// assert_eq!(capped.prefix(b"usr"), Some(&b"usr"[..]));
/// assert_eq!(RocksDbPrefixExtractor::from_name(b"nullptr"), None);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum RocksDbPrefixExtractor {
    /// `rocksdb.FixedPrefix.N` (`NewFixedPrefixTransform(N)`): a key's first `N` bytes; a shorter key has no
    /// prefix (it is outside the extractor's domain).
    Fixed(usize),
    /// `rocksdb.CappedPrefix.N` (`NewCappedPrefixTransform(N)`): a key's first `N` bytes, or the whole of a shorter
    /// key.
    Capped(usize),
    /// `rocksdb.Noop` (`NewNoopTransform()`): the whole key.
    Noop,
    /// Another extractor (an application's own): its prefixes cannot be cut here, so every prefix question
    /// answers "may contain".
    Other,
}

impl RocksDbPrefixExtractor {
    /// The extractor a table's property names, as RocksDB's registry reads the name (`rocksdb.FixedPrefix.N` or
    /// `fixed:N`, `rocksdb.CappedPrefix.N` or `capped:N`, `rocksdb.Noop`); [`Other`](Self::Other) for any other
    /// name; `None` for none (`nullptr`, or no name).
    #[must_use]
    pub fn from_name(name: &[u8]) -> Option<Self> {
        if name.is_empty() || name == b"nullptr" {
            return None;
        }
        let length = |digits: &[u8]| {
            // Digits only, as RocksDB's registry matches them; a length past `usize` cuts nothing here.
            (!digits.is_empty() && digits.iter().all(u8::is_ascii_digit))
                .then(|| core::str::from_utf8(digits).ok()?.parse().ok())
                .flatten()
        };
        let after = |prefixes: [&[u8]; 2]| prefixes.iter().find_map(|p| name.strip_prefix(*p));
        Some(if name == b"rocksdb.Noop" {
            Self::Noop
        } else if let Some(n) = after([b"rocksdb.FixedPrefix.", b"fixed:"]).and_then(length) {
            Self::Fixed(n)
        } else if let Some(n) = after([b"rocksdb.CappedPrefix.", b"capped:"]).and_then(length) {
            Self::Capped(n)
        } else {
            Self::Other
        })
    }

    /// The prefix of `key` (RocksDB's `Transform`), `None` where `key` is outside the extractor's domain
    /// (`InDomain`) or the extractor is not one of RocksDB's own.
    #[must_use]
    pub fn prefix<'k>(&self, key: &'k [u8]) -> Option<&'k [u8]> {
        match *self {
            Self::Fixed(n) => key.get(..n),
            Self::Capped(n) => key.get(..n.min(key.len())),
            Self::Noop => Some(key),
            Self::Other => None,
        }
    }
}

/// A table's filter, as RocksDB finds it in the meta-index.
#[derive(Debug, Clone)]
pub enum RocksDbTableFilter<'a> {
    /// One filter block for the whole table (`fullfilter.<policy>`).
    Full {
        /// The filter policy's name (`rocksdb.BuiltinBloomFilter`).
        policy: String,
        /// The filter block, checksum verified. It holds whole keys only where `whole_keys` says so: use
        /// [`RocksDbTableFilter::may_contain`], which checks.
        filter: RocksDbFilter<'a>,
        /// Whether the filter holds every key (`whole_key_filtering`), not only prefixes of keys.
        whole_keys: bool,
        /// The extractor of the prefixes the filter holds, if the table was written with one: use
        /// [`RocksDbTableFilter::may_contain_prefix`], which cuts a key's prefix with it.
        prefix_extractor: Option<RocksDbPrefixExtractor>,
    },
    /// A filter in partitions, found through a top-level index (`partitionedfilter.<policy>`).
    Partitioned(RocksDbPartitionedFilter<'a>),
}

impl RocksDbTableFilter<'_> {
    /// The filter policy's name.
    #[must_use]
    pub fn policy(&self) -> &str {
        match self {
            Self::Full { policy, .. } => policy,
            Self::Partitioned(filter) => filter.policy(),
        }
    }

    /// Whether the table may hold `user_key` (the key as RocksDB's filter sees it: without a user-defined
    /// timestamp): RocksDB's answer for the same table. Always "may match" where the filter holds prefixes only;
    /// there RocksDB's `Get` asks the key's prefix, [`may_contain_prefix`](Self::may_contain_prefix).
    #[doc(alias("KeyMayMatch", "may_match"))]
    #[must_use]
    pub fn may_contain(&self, user_key: &[u8]) -> bool {
        match self {
            Self::Full {
                filter, whole_keys, ..
            } => !whole_keys || filter.may_contain(user_key),
            Self::Partitioned(filter) => filter.may_contain(user_key),
        }
    }

    /// The extractor of the prefixes the filter holds (the table's `rocksdb.prefix.extractor.name`), if the table
    /// was written with one.
    #[must_use]
    pub fn prefix_extractor(&self) -> Option<RocksDbPrefixExtractor> {
        match self {
            Self::Full {
                prefix_extractor, ..
            } => *prefix_extractor,
            Self::Partitioned(filter) => filter.prefix_extractor(),
        }
    }

    /// Whether the table may hold a key with the prefix of `user_key` (without a user-defined timestamp), the
    /// prefix cut by the table's own extractor: RocksDB's answer for the same table, for a prefix seek to
    /// `user_key` and for a `Get` of it where the filter holds prefixes only (RocksDB's `PrefixMayMatch`, with the
    /// table's extractor the database's). To ask about every key of a prefix, pass the prefix itself: the smallest
    /// key that has it.
    ///
    /// "May contain" where the table has no prefix extractor, one other than RocksDB's own
    /// ([`RocksDbPrefixExtractor::Other`]), or `user_key` lies outside the extractor's domain (shorter than a fixed
    /// prefix); a partitioned filter is asked as [`RocksDbPartitionedFilter::may_contain_prefix`] says.
    #[doc(alias("PrefixMayMatch", "prefix_may_match"))]
    #[must_use]
    pub fn may_contain_prefix(&self, user_key: &[u8]) -> bool {
        match self {
            Self::Full {
                filter,
                prefix_extractor,
                ..
            } => prefix_extractor
                .and_then(|extractor| extractor.prefix(user_key))
                .is_none_or(|prefix| filter.may_contain(prefix)),
            Self::Partitioned(filter) => filter.may_contain_prefix(user_key),
        }
    }
}

/// A partitioned filter: its top-level index decoded (the partitions' separator keys and block handles), and the
/// table's bytes, from which a partition is read (and its checksum verified) when it is asked for.
///
/// A partition holds the keys after the previous partition's separator up to its own; RocksDB finds a key's
/// partition by searching the separators, which [`may_contain`](Self::may_contain) does the same way.
#[derive(Debug, Clone)]
pub struct RocksDbPartitionedFilter<'a> {
    policy: String,
    blocks: Blocks<'a>,
    /// The index block's entries, read in place where they are asked for: nothing of the index is copied (a
    /// decoded entry takes more room than its bytes, and a key rebuilt for every entry would take room quadratic
    /// in the block's size for a block of long shared prefixes).
    entries: &'a [u8],
    /// The restart array: where entries that share nothing start, each a u32.
    restarts: &'a [[u8; 4]],
    /// The number of entries, every one decoded once when the index was read.
    len: usize,
    properties: Properties,
}

/// One entry of a partition index: its key as stored (the bytes it shares with the previous key, and the rest)
/// and the partition's handle.
#[derive(Debug, Clone, Copy)]
struct IndexEntry<'a> {
    shared: usize,
    suffix: &'a [u8],
    handle: RocksDbBlockHandle,
}

/// One partition of a partitioned filter.
#[derive(Debug, Clone)]
pub struct RocksDbPartition<'a> {
    /// The separator: every key of the partition is at most it, and every key of the next partition greater.
    /// An internal key (the user key, then 8 bytes of sequence number and type) where
    /// [`RocksDbPartitionedFilter::separators_are_internal_keys`] says so.
    pub separator: Vec<u8>,
    /// The partition's block.
    pub handle: RocksDbBlockHandle,
    /// The partition's filter, read and its checksum verified.
    pub filter: Result<RocksDbFilter<'a>, RocksDbTableError>,
}

impl<'a> RocksDbPartitionedFilter<'a> {
    /// The partition index `index` (the verified contents of the block at `offset`), every entry decoded once
    /// to check it.
    fn new(
        policy: String,
        blocks: Blocks<'a>,
        index: &'a [u8],
        offset: u64,
        properties: Properties,
    ) -> Result<Self, RocksDbTableError> {
        let bad = |reason| malformed(RocksDbBlock::FilterPartitionIndex, offset, reason);
        let (entries, restarts) =
            RawEntries::regions(index).ok_or(bad("a block too short for its restart array"))?;
        let mut len = 0;
        for entry in IndexEntries::new(entries, properties.delta_values) {
            entry.map_err(bad)?;
            len += 1;
        }
        Ok(RocksDbPartitionedFilter {
            policy,
            blocks,
            entries,
            restarts,
            len,
            properties,
        })
    }

    /// The filter policy's name.
    #[must_use]
    pub fn policy(&self) -> &str {
        &self.policy
    }

    /// Whether the separators are internal keys (the user key, then 8 bytes of sequence number and type), as
    /// in tables of format version 2 and in those where a user key spans data blocks; else user keys.
    #[must_use]
    pub const fn separators_are_internal_keys(&self) -> bool {
        self.properties.keys_include_seq
    }

    /// Whether the partitions hold every key (`whole_key_filtering`), not only prefixes of keys.
    #[must_use]
    pub const fn whole_keys(&self) -> bool {
        self.properties.whole_keys
    }

    /// The number of partitions.
    #[must_use]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the index lists no partition (RocksDB never writes such an index).
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Every partition in order: its separator, handle and filter (each read and verified as it is reached).
    pub fn partitions(&self) -> impl Iterator<Item = RocksDbPartition<'a>> + '_ {
        let mut key = Vec::new();
        // Every entry was decoded without error when the index was read.
        let entries =
            IndexEntries::new(self.entries, self.properties.delta_values).map_while(Result::ok);
        entries.map(move |entry| {
            key.truncate(entry.shared);
            key.extend_from_slice(entry.suffix);
            RocksDbPartition {
                separator: key.clone(),
                handle: entry.handle,
                filter: self
                    .blocks
                    .read(entry.handle, RocksDbBlock::FilterPartition)
                    .map(RocksDbFilter::from_verified),
            }
        })
    }

    /// Whether the table may hold `user_key` (without a user-defined timestamp): the answer of the partition
    /// RocksDB reads for it, the first whose separator is not less than the key (else the last), read and its
    /// checksum verified on every call. "May match" on any error, for a filter of prefixes only, and for a table
    /// not ordered byte-wise (whose separators this search cannot compare), so never "no" for a key the table
    /// holds.
    #[doc(alias("KeyMayMatch", "may_match"))]
    #[must_use]
    pub fn may_contain(&self, user_key: &[u8]) -> bool {
        !self.properties.whole_keys || self.partition_may_contain(user_key, user_key)
    }

    /// The extractor of the prefixes the partitions hold, if the table was written with one.
    #[must_use]
    pub const fn prefix_extractor(&self) -> Option<RocksDbPrefixExtractor> {
        self.properties.prefix_extractor
    }

    /// Whether the table may hold a key with the prefix of `user_key` (without a user-defined timestamp) under
    /// the table's prefix extractor ([`RocksDbTableFilter::may_contain_prefix`]): the answer of the partition
    /// RocksDB reads for it, found by `user_key` itself as [`may_contain`](Self::may_contain) finds a key's, not by the
    /// prefix. RocksDB's builder makes that partition enough: it adds to each partition the prefix of the next
    /// partition's first key (for a seek to a key between two partitions) and of the previous partition's last key.
    /// "May contain" where the table has no prefix extractor or one other than RocksDB's own, where `user_key` is
    /// outside its domain, on any error, and for a table not ordered byte-wise.
    #[doc(alias("PrefixMayMatch", "prefix_may_match"))]
    #[must_use]
    pub fn may_contain_prefix(&self, user_key: &[u8]) -> bool {
        self.properties
            .prefix_extractor
            .and_then(|extractor| extractor.prefix(user_key))
            .is_none_or(|prefix| self.partition_may_contain(user_key, prefix))
    }

    /// Whether the partition RocksDB reads for the key `route` may match `entry` (the key itself, or its prefix),
    /// the partition read and its checksum verified; "may match" where it cannot be found or read, and for a table
    /// not ordered byte-wise.
    fn partition_may_contain(&self, route: &[u8], entry: &[u8]) -> bool {
        if !self.properties.bytewise {
            return true;
        }
        let Some(handle) = self.partition_of(route) else {
            return true;
        };
        self.blocks
            .read(handle, RocksDbBlock::FilterPartition)
            .map_or(true, |block| {
                RocksDbFilter::from_verified(block).may_contain(entry)
            })
    }

    /// The partition RocksDB reads for `user_key` (`GetFilterPartitionHandle`): the first entry whose
    /// separator's user key is not less than it, or the last partition. As RocksDB's block search, a binary search
    /// of the restart points (entries that share nothing with the key before them) finds the last one whose
    /// separator is less than the key, and the entries from there are read in turn. Comparing user keys alone finds
    /// the partition holding the key's first version, whose filter has the key: internal keys of one user key
    /// order by sequence number, and RocksDB's search key sorts before them all at the latest sequence number.
    /// `None` where the index cannot be read as that (a restart point past the entries, or one that shares).
    fn partition_of(&self, user_key: &[u8]) -> Option<RocksDbBlockHandle> {
        let delta = self.properties.delta_values;
        let from = |restart: usize| {
            let at = u32::from_le_bytes(*self.restarts.get(restart)?);
            self.entries.get(usize::try_from(at).ok()?..)
        };
        let (mut low, mut high) = (0, self.restarts.len());
        while low < high {
            let mid = low + (high - low) / 2;
            let first = IndexEntries::new(from(mid)?, delta).next()?.ok()?;
            if first.shared != 0 {
                return None;
            }
            if self.user_key(first.suffix)? < user_key {
                low = mid + 1;
            } else {
                high = mid;
            }
        }
        let (mut key, mut last) = (Vec::new(), None);
        for entry in IndexEntries::new(from(low.saturating_sub(1))?, delta) {
            let entry = entry.ok()?;
            key.truncate(entry.shared);
            key.extend_from_slice(entry.suffix);
            if self.user_key(&key)? >= user_key {
                return Some(entry.handle);
            }
            last = Some(entry.handle);
        }
        last
    }

    /// The user key of a separator: without its last 8 bytes where separators are internal keys; `None` for an
    /// internal key too short to hold them.
    fn user_key<'k>(&self, separator: &'k [u8]) -> Option<&'k [u8]> {
        if self.properties.keys_include_seq {
            separator.get(..separator.len().checked_sub(SEQUENCE_LEN)?)
        } else {
            Some(separator)
        }
    }
}

/// A table's bytes and how its blocks are checked: what reading any block needs.
#[derive(Debug, Clone, Copy)]
struct Blocks<'a> {
    file: &'a [u8],
    checksum: RocksDbChecksum,
    /// The footer's base context checksum (format version 6 and later), 0 before: no offset part in checksums.
    context: u32,
}

impl<'a> Blocks<'a> {
    /// The contents of the block at `handle`, once its trailer's checksum matches and says "not compressed".
    fn read(
        &self,
        handle: RocksDbBlockHandle,
        block: RocksDbBlock,
    ) -> Result<&'a [u8], RocksDbTableError> {
        match self.read_stored(handle, block)? {
            RocksDbStoredBlock {
                contents,
                compression: 0,
            } => Ok(contents),
            RocksDbStoredBlock { compression, .. } => Err(RocksDbTableError::Compressed {
                block,
                offset: handle.offset,
                compression,
            }),
        }
    }

    /// The block at `handle` as stored, once its trailer's checksum matches.
    fn read_stored(
        &self,
        handle: RocksDbBlockHandle,
        block: RocksDbBlock,
    ) -> Result<RocksDbStoredBlock<'a>, RocksDbTableError> {
        let RocksDbBlockHandle { offset, size } = handle;
        let range = usize::try_from(offset)
            .ok()
            .zip(usize::try_from(size).ok())
            .and_then(|(start, len)| {
                let end = start.checked_add(len)?.checked_add(TRAILER_LEN)?;
                self.file.get(start..end)
            });
        let with_trailer = range.ok_or(RocksDbTableError::OutOfRange {
            block,
            offset,
            size,
        })?;
        let (checked, stored) =
            with_trailer
                .split_last_chunk::<4>()
                .ok_or(RocksDbTableError::OutOfRange {
                    block,
                    offset,
                    size,
                })?;
        let stored =
            u32::from_le_bytes(*stored).wrapping_sub(context_modifier(self.context, offset));
        let computed = self.checksum.of(checked);
        if stored != computed {
            return Err(RocksDbTableError::ChecksumMismatch {
                block,
                offset,
                stored,
                computed,
            });
        }
        match checked.split_last() {
            Some((&compression, contents)) => Ok(RocksDbStoredBlock {
                contents,
                compression,
            }),
            None => Err(RocksDbTableError::OutOfRange {
                block,
                offset,
                size,
            }),
        }
    }
}

/// What format version 6 adds to the checksum of the block at `offset` (RocksDB's `ChecksumModifierForContext`):
/// the base from the footer mixed with the offset, so that a block read from another place fails its check; 0
/// where there is no base (older versions).
fn context_modifier(base: u32, offset: u64) -> u32 {
    if base == 0 {
        return 0;
    }
    base ^ (offset as u32).wrapping_add((offset >> 32) as u32)
}

/// The base context checksum and the meta-index handle of a footer of format version 6 or later at
/// `footer_offset`, once its fields and its checksum (computed with the checksum field zero) are checked, in
/// RocksDB's order. Only the meta-index's size is stored: it ends where the footer's block trailer would start.
fn context_footer(
    footer: &[u8; FOOTER_LEN],
    footer_offset: u64,
    checksum: RocksDbChecksum,
) -> Result<(u32, RocksDbBlockHandle), RocksDbTableError> {
    let bad = |reason| RocksDbTableError::BadFooter { reason };
    let mut fields = footer.as_slice();
    // After the checksum type: the extended magic, the footer checksum, the base context checksum, the meta-index
    // size, 16 bytes RocksDB leaves unchecked, and 8 reserved for an incompatible future feature.
    let parsed = (|| {
        let [_checksum_type] = take(&mut fields)?;
        Some((
            take::<4>(&mut fields)?,
            u32::from_le_bytes(take(&mut fields)?),
            u32::from_le_bytes(take(&mut fields)?),
            u32::from_le_bytes(take(&mut fields)?),
            take::<16>(&mut fields)?,
            u64::from_le_bytes(take(&mut fields)?),
        ))
    })();
    let (magic, stored, context, meta_index_size, _, reserved) = parsed.ok_or(bad("truncated"))?;
    if magic != EXTENDED_MAGIC {
        return Err(bad("no extended magic number"));
    }
    if context == 0 {
        return Err(bad("a base context checksum of 0"));
    }
    let mut zeroed = *footer;
    if let Some(checksum_field) = zeroed.get_mut(5..9) {
        checksum_field.fill(0);
    }
    let computed = checksum.of(&zeroed);
    let stored = stored.wrapping_sub(context_modifier(context, footer_offset));
    if stored != computed {
        let block = RocksDbBlock::Footer;
        return Err(RocksDbTableError::ChecksumMismatch {
            block,
            offset: footer_offset,
            stored,
            computed,
        });
    }
    if reserved != 0 {
        return Err(bad("reserved bytes set: a feature newer than this reader"));
    }
    let size = u64::from(meta_index_size);
    let offset = (footer_offset.checked_sub(TRAILER_LEN as u64))
        .and_then(|end| end.checked_sub(size))
        .ok_or(RocksDbTableError::OutOfRange {
            block: RocksDbBlock::MetaIndex,
            offset: 0,
            size,
        })?;
    Ok((context, RocksDbBlockHandle { offset, size }))
}

/// The meta-index and index handles of a footer's handles (both must decode, as RocksDB requires).
fn footer_handles(
    handles: &[u8; HANDLES_LEN],
) -> Result<(RocksDbBlockHandle, RocksDbBlockHandle), RocksDbTableError> {
    let mut rest = handles.as_slice();
    let meta_index = read_handle(&mut rest);
    let index = read_handle(&mut rest);
    meta_index.zip(index).ok_or(RocksDbTableError::BadFooter {
        reason: "undecodable block handles",
    })
}

fn malformed(block: RocksDbBlock, offset: u64, reason: &'static str) -> RocksDbTableError {
    RocksDbTableError::Malformed {
        block,
        offset,
        reason,
    }
}

/// The next `N` bytes of `input`, consumed: a fixed-size field (little-endian where it is a number); `None` if
/// fewer remain.
fn take<const N: usize>(input: &mut &[u8]) -> Option<[u8; N]> {
    let (field, rest) = input.split_first_chunk::<N>()?;
    *input = rest;
    Some(*field)
}

/// A block handle (two varints: offset, size), consumed from `input`.
fn read_handle(input: &mut &[u8]) -> Option<RocksDbBlockHandle> {
    Some(RocksDbBlockHandle {
        offset: varint64(input)?,
        size: varint64(input)?,
    })
}

/// A little-endian base-128 varint of up to 10 bytes, consumed from `input`; bits past 64 are dropped, as RocksDB
/// drops them (`GetVarint64`).
fn varint64(input: &mut &[u8]) -> Option<u64> {
    varint(input, 64)
}

/// A varint of up to 5 bytes (`GetVarint32`), bits past 32 dropped.
fn varint32(input: &mut &[u8]) -> Option<u32> {
    varint(input, 32).map(|v| v as u32)
}

/// A varint of at most `bits` bits' worth of 7-bit groups, consumed from `input`.
fn varint(input: &mut &[u8], bits: u32) -> Option<u64> {
    let mut value = 0u64;
    let mut shift = 0;
    while shift < bits {
        let (&byte, rest) = input.split_first()?;
        *input = rest;
        value |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Some(value);
        }
        shift += 7;
    }
    None
}

/// A zigzag-encoded signed integer (RocksDB's `zigzagToI64`).
const fn zigzag(n: u64) -> i64 {
    (n >> 1) as i64 ^ -((n & 1) as i64)
}

/// One entry of a block as stored: the bytes its key shares with the previous key, the rest of the key, and its
/// value.
struct RawEntry<'a> {
    shared: usize,
    suffix: &'a [u8],
    value: &'a [u8],
}

/// The entries of a block in RocksDB's format, in order (RocksDB's block iterator stepping with `Next`). Ends
/// after the first error.
#[derive(Debug, Clone)]
struct RawEntries<'a> {
    rest: &'a [u8],
    /// An index block whose values are block handles without a length, a size delta after a restart point.
    delta_values: bool,
    /// An error to give before anything else: the block has no room for its restart array.
    error: Option<&'static str>,
}

impl<'a> RawEntries<'a> {
    fn new(block: &'a [u8], delta_values: bool) -> Self {
        let (rest, error) = match Self::regions(block) {
            Some((entries, _)) => (entries, None),
            None => (&[][..], Some("a block too short for its restart array")),
        };
        RawEntries {
            rest,
            delta_values,
            error,
        }
    }

    /// The entries from the start of `entries`, a part of a block's entries that starts at an entry.
    fn from_entries(entries: &'a [u8], delta_values: bool) -> Self {
        RawEntries {
            rest: entries,
            delta_values,
            error: None,
        }
    }

    /// The bytes of `block` before its restart array (and a data block's hash index), and the restart array;
    /// `None` where the block is too short for the array its `num_restarts` says it has. A block without restart
    /// points has no entries, as RocksDB reads it.
    fn regions(block: &'a [u8]) -> Option<(&'a [u8], &'a [[u8; 4]])> {
        let (mut body, &num_restarts) = block.split_last_chunk::<4>()?;
        let mut num_restarts = u32::from_le_bytes(num_restarts);
        if num_restarts & HASH_INDEX_BIT != 0 && block.len() <= MAX_HASH_INDEX_BLOCK {
            // The hash index: one byte per bucket, then the bucket count (u16).
            num_restarts &= !HASH_INDEX_BIT;
            let (buckets, &count) = body.split_last_chunk::<2>()?;
            let count = usize::from(u16::from_le_bytes(count));
            body = buckets
                .split_at_checked(buckets.len().checked_sub(count)?)?
                .0;
        }
        let restarts_len = usize::try_from(num_restarts).ok()?.checked_mul(4)?;
        let (entries, restarts) = body.split_at_checked(body.len().checked_sub(restarts_len)?)?;
        let (restarts, _) = restarts.as_chunks::<4>();
        Some(if num_restarts == 0 {
            (&[], &[])
        } else {
            (entries, restarts)
        })
    }

    /// The next entry, consumed.
    fn parse(&mut self) -> Option<RawEntry<'a>> {
        let rest = &mut self.rest;
        let shared = usize::try_from(varint32(rest)?).ok()?;
        let non_shared = usize::try_from(varint32(rest)?).ok()?;
        let value_len = if self.delta_values {
            None
        } else {
            Some(usize::try_from(varint32(rest)?).ok()?)
        };
        let (suffix, after) = rest.split_at_checked(non_shared)?;
        let value_len = match value_len {
            Some(len) => len,
            // A full handle where nothing is shared (a restart point), a size delta elsewhere: as many bytes as
            // the varints take.
            None => {
                let mut value = after;
                varint64(&mut value)?;
                if shared == 0 {
                    varint64(&mut value)?;
                }
                after.len().checked_sub(value.len())?
            }
        };
        let (value, after) = after.split_at_checked(value_len)?;
        *rest = after;
        Some(RawEntry {
            shared,
            suffix,
            value,
        })
    }
}

impl<'a> Iterator for RawEntries<'a> {
    type Item = Result<RawEntry<'a>, &'static str>;

    fn next(&mut self) -> Option<Self::Item> {
        if let Some(error) = self.error.take() {
            return Some(Err(error));
        }
        if self.rest.is_empty() {
            return None;
        }
        let entry = self.parse();
        if entry.is_none() {
            self.rest = &[];
        }
        Some(entry.ok_or("an entry running past the block's entries"))
    }
}

/// The entries of a partition index from an entry that shares nothing (the index's first, or a restart point's),
/// each key as stored and its partition's handle: a handle where the key shares nothing, else, in an index whose
/// values are delta-encoded, the previous partition's end (after its trailer) and its size plus a zigzag delta.
/// Ends after the first error.
struct IndexEntries<'a> {
    raw: RawEntries<'a>,
    key_len: usize,
    previous: Option<RocksDbBlockHandle>,
}

impl<'a> IndexEntries<'a> {
    fn new(entries: &'a [u8], delta_values: bool) -> Self {
        IndexEntries {
            raw: RawEntries::from_entries(entries, delta_values),
            key_len: 0,
            previous: None,
        }
    }

    fn decode(&mut self, raw: RawEntry<'a>) -> Result<IndexEntry<'a>, &'static str> {
        let RawEntry {
            shared,
            suffix,
            mut value,
        } = raw;
        if shared > self.key_len {
            return Err("a key sharing more bytes than the previous key has");
        }
        self.key_len = shared.checked_add(suffix.len()).ok_or("a key too long")?;
        let handle = match self.previous {
            Some(previous) if self.raw.delta_values && shared != 0 => {
                let delta = varint64(&mut value)
                    .map(zigzag)
                    .ok_or("a partition size delta")?;
                previous
                    .offset
                    .checked_add(previous.size)
                    .and_then(|end| end.checked_add(TRAILER_LEN as u64))
                    .zip(previous.size.checked_add_signed(delta))
                    .map(|(offset, size)| RocksDbBlockHandle { offset, size })
                    .ok_or("a partition size delta out of range")?
            }
            _ => read_handle(&mut value).ok_or("a partition handle")?,
        };
        self.previous = Some(handle);
        Ok(IndexEntry {
            shared,
            suffix,
            handle,
        })
    }
}

impl<'a> Iterator for IndexEntries<'a> {
    type Item = Result<IndexEntry<'a>, &'static str>;

    fn next(&mut self) -> Option<Self::Item> {
        let entry = self.raw.next()?.and_then(|raw| self.decode(raw));
        if entry.is_err() {
            self.raw.rest = &[];
        }
        Some(entry)
    }
}

/// The entries of a block's contents (uncompressed) in the format of RocksDB's blocks and LevelDB's alike, each
/// key rebuilt from the previous one (borrowed where it shares nothing) and each value as stored: the meta-index's
/// names and handles, an index block's separators and data-block handles ([`RocksDbBlockHandle::decode`]), a data
/// block's internal keys and values. Ends after the first error, a [`RocksDbTableError::Malformed`].
///
/// ```
/// use sstfilter_rocksdb::{RocksDbBlock, RocksDbBlockEntries};
///
/// // Two entries, "apple" then "apricot" sharing "ap", and the restart array: one restart at 0.
/// let block = [&[0, 5, 1][..], b"apple1", &[2, 5, 1], b"ricot2", &[0, 0, 0, 0, 1, 0, 0, 0]].concat();
/// let entries: Vec<_> = RocksDbBlockEntries::new(&block, RocksDbBlock::Data, 0).collect::<Result<_, _>>()?;
/// assert_eq!(entries[1], (b"apricot".as_slice().into(), &b"2"[..]));
/// # Ok::<(), sstfilter_rocksdb::RocksDbTableError>(())
/// ```
#[derive(Debug, Clone)]
pub struct RocksDbBlockEntries<'a> {
    raw: RawEntries<'a>,
    key: Cow<'a, [u8]>,
    block: RocksDbBlock,
    offset: u64,
}

impl<'a> RocksDbBlockEntries<'a> {
    /// The entries of `contents`, the contents of the `block` at `offset` (both for errors).
    #[must_use]
    pub fn new(contents: &'a [u8], block: RocksDbBlock, offset: u64) -> Self {
        RocksDbBlockEntries {
            raw: RawEntries::new(contents, false),
            key: Cow::Borrowed(&[]),
            block,
            offset,
        }
    }
}

impl<'a> Iterator for RocksDbBlockEntries<'a> {
    type Item = Result<(Cow<'a, [u8]>, &'a [u8]), RocksDbTableError>;

    fn next(&mut self) -> Option<Self::Item> {
        let entry = self
            .raw
            .next()?
            .map_err(|reason| malformed(self.block, self.offset, reason));
        let rebuilt = entry.and_then(
            |RawEntry {
                 shared,
                 suffix,
                 value,
             }| {
                if shared == 0 {
                    return Ok((Cow::Borrowed(suffix), value));
                }
                let prefix = self.key.get(..shared).ok_or(malformed(
                    self.block,
                    self.offset,
                    "a key sharing more bytes than the previous key has",
                ))?;
                Ok((Cow::Owned([prefix, suffix].concat()), value))
            },
        );
        match &rebuilt {
            Ok((key, _)) => self.key = key.clone(),
            Err(_) => self.raw.rest = &[],
        }
        Some(rebuilt)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{RocksDbBloomBuilder, RocksDbFilterFormat};

    fn put_varint(out: &mut Vec<u8>, mut v: u64) {
        while v >= 0x80 {
            out.push(v as u8 | 0x80);
            v >>= 7;
        }
        out.push(v as u8);
    }

    fn encode_handle(offset: u64, size: u64) -> Vec<u8> {
        let mut out = Vec::new();
        put_varint(&mut out, offset);
        put_varint(&mut out, size);
        out
    }

    /// A block in RocksDB's format: keys prefix-compressed against the previous one except at every
    /// `restart_interval`th entry, each value with its length.
    fn block(entries: &[(&[u8], Vec<u8>)], restart_interval: usize) -> Vec<u8> {
        let (mut out, mut restarts, mut previous): (Vec<u8>, Vec<u32>, &[u8]) =
            (Vec::new(), Vec::new(), &[]);
        for (i, (key, value)) in entries.iter().enumerate() {
            let shared = if i % restart_interval == 0 {
                restarts.push(out.len() as u32);
                0
            } else {
                key.iter().zip(previous).take_while(|(a, b)| a == b).count()
            };
            put_varint(&mut out, shared as u64);
            put_varint(&mut out, (key.len() - shared) as u64);
            put_varint(&mut out, value.len() as u64);
            out.extend_from_slice(&key[shared..]);
            out.extend_from_slice(value);
            previous = key;
        }
        // An empty block has its one restart point too, as RocksDB writes it.
        if restarts.is_empty() {
            restarts.push(0);
        }
        restarts.iter().for_each(|r| out.extend(r.to_le_bytes()));
        out.extend((restarts.len() as u32).to_le_bytes());
        out
    }

    /// A table file under construction: blocks with trailers, then a footer.
    struct File {
        bytes: Vec<u8>,
        checksum: RocksDbChecksum,
        context: u32,
    }

    impl File {
        fn new(checksum: RocksDbChecksum, context: u32) -> Self {
            File {
                bytes: b"data blocks would be here".to_vec(),
                checksum,
                context,
            }
        }

        /// Appends `contents` with a trailer of `compression`, checksummed; returns its handle.
        fn add(&mut self, contents: &[u8], compression: u8) -> RocksDbBlockHandle {
            let offset = self.bytes.len() as u64;
            self.bytes.extend_from_slice(contents);
            self.bytes.push(compression);
            let sum = self
                .checksum
                .of(&self.bytes[offset as usize..])
                .wrapping_add(context_modifier(self.context, offset));
            self.bytes.extend(sum.to_le_bytes());
            RocksDbBlockHandle {
                offset,
                size: contents.len() as u64,
            }
        }

        /// The file with its footer of `version`, the meta-index at `meta`.
        fn finish(self, version: u32, meta: RocksDbBlockHandle) -> Vec<u8> {
            self.finish_with_index(version, meta, RocksDbBlockHandle { offset: 0, size: 0 })
        }

        /// [`finish`](Self::finish), the footer naming `index` as the index block (before version 6).
        fn finish_with_index(
            mut self,
            version: u32,
            meta: RocksDbBlockHandle,
            index: RocksDbBlockHandle,
        ) -> Vec<u8> {
            let mut handles = encode_handle(meta.offset, meta.size);
            handles.extend(encode_handle(index.offset, index.size));
            handles.resize(HANDLES_LEN, 0);
            if version == 0 {
                self.bytes.extend(handles);
                self.bytes.extend(LEGACY_MAGIC.to_le_bytes());
                return self.bytes;
            }
            let footer_offset = self.bytes.len() as u64;
            let mut footer = vec![self.checksum as u8];
            if version >= CONTEXT_CHECKSUM_VERSION {
                footer.extend(EXTENDED_MAGIC);
                footer.extend([0; 4]);
                footer.extend(self.context.to_le_bytes());
                footer.extend((meta.size as u32).to_le_bytes());
                footer.extend([0; 24]);
            } else {
                footer.extend(handles);
            }
            footer.extend(version.to_le_bytes());
            footer.extend(MAGIC.to_le_bytes());
            if version >= CONTEXT_CHECKSUM_VERSION {
                let sum = self
                    .checksum
                    .of(&footer)
                    .wrapping_add(context_modifier(self.context, footer_offset));
                footer[5..9].copy_from_slice(&sum.to_le_bytes());
            }
            self.bytes.extend(footer);
            self.bytes
        }
    }

    /// Properties: whole keys or not, internal-key index keys or not, delta-encoded values or not, a comparator.
    fn properties(whole_keys: bool, user_keys: bool, delta: bool, comparator: &[u8]) -> Vec<u8> {
        properties_with(whole_keys, user_keys, delta, comparator, b"nullptr")
    }

    /// [`properties`] with the prefix extractor of the name `extractor`.
    fn properties_with(
        whole_keys: bool,
        user_keys: bool,
        delta: bool,
        comparator: &[u8],
        extractor: &[u8],
    ) -> Vec<u8> {
        let flag = |b: bool| vec![u8::from(b)];
        block(
            &[
                (
                    b"rocksdb.block.based.table.whole.key.filtering",
                    if whole_keys {
                        b"1".to_vec()
                    } else {
                        b"0".to_vec()
                    },
                ),
                (b"rocksdb.comparator", comparator.to_vec()),
                (b"rocksdb.index.key.is.user.key", flag(user_keys)),
                (b"rocksdb.index.value.is.delta.encoded", flag(delta)),
                (b"rocksdb.num.entries", vec![0x80, 0x01]),
                (PREFIX_EXTRACTOR, extractor.to_vec()),
            ],
            16,
        )
    }

    fn bloom(keys: &[&[u8]]) -> Vec<u8> {
        let mut builder = RocksDbBloomBuilder::new(10.0);
        keys.iter().for_each(|k| builder.add_key(k));
        builder.finish()
    }

    const KEYS: [&[u8]; 4] = [b"apple", b"banana", b"cherry", b"damson"];

    /// A table with a full filter of [`KEYS`] under `name`.
    fn full_table(version: u32, checksum: RocksDbChecksum, name: &[u8]) -> Vec<u8> {
        let props = properties(true, true, true, BYTEWISE);
        full_table_of(version, checksum, name, &bloom(&KEYS), &props)
    }

    /// A table of the full filter block `filter` under `name`, with the properties block `props`.
    fn full_table_of(
        version: u32,
        checksum: RocksDbChecksum,
        name: &[u8],
        filter: &[u8],
        props: &[u8],
    ) -> Vec<u8> {
        let mut file = File::new(checksum, if version >= 6 { 0x5eed_0001 } else { 0 });
        let filter = file.add(filter, 0);
        let props = file.add(props, 0);
        let filter_name = [FULL_FILTER, name].concat();
        let meta = block(
            &[
                (&filter_name, encode_handle(filter.offset, filter.size)),
                (PROPERTIES, encode_handle(props.offset, props.size)),
            ],
            1,
        );
        let meta = file.add(&meta, 0);
        file.finish(version, meta)
    }

    fn assert_full_filter(bytes: &[u8], version: u32) {
        let table = RocksDbTable::open(bytes).unwrap_or_else(|e| panic!("version {version}: {e}"));
        assert_eq!(table.format_version(), version);
        let filter = table.filter().unwrap().unwrap();
        assert_eq!(filter.policy(), "rocksdb.BuiltinBloomFilter");
        assert!(KEYS.iter().all(|k| filter.may_contain(k)));
        assert!((0..100).any(|i| !filter.may_contain(format!("absent{i}").as_bytes())));
        let names: Vec<_> = table
            .meta_blocks()
            .map(|m| m.unwrap().name.into_owned())
            .collect();
        assert_eq!(
            names,
            [
                b"fullfilter.rocksdb.BuiltinBloomFilter".to_vec(),
                PROPERTIES.to_vec()
            ]
        );
    }

    #[test]
    fn every_footer_version_and_checksum_reads_the_filter() {
        let all = [
            RocksDbChecksum::None,
            RocksDbChecksum::Crc32c,
            RocksDbChecksum::XxHash32,
            RocksDbChecksum::XxHash64,
            RocksDbChecksum::Xxh3,
        ];
        assert_full_filter(
            &full_table(0, RocksDbChecksum::Crc32c, b"rocksdb.BuiltinBloomFilter"),
            0,
        );
        for version in 1..=7 {
            for checksum in all {
                let bytes = full_table(version, checksum, b"rocksdb.BuiltinBloomFilter");
                assert_full_filter(&bytes, version);
                assert_eq!(RocksDbTable::open(&bytes).unwrap().checksum(), checksum);
            }
        }
    }

    #[test]
    fn checksums_are_rocksdbs_definitions() {
        assert_eq!(RocksDbChecksum::Crc32c.of(b"123456789"), 0xc78a_b0e5);
        assert_eq!(RocksDbChecksum::None.of(b"123456789"), 0);
        assert_eq!(
            RocksDbChecksum::XxHash32.of(b"123456789"),
            xxhash_rust::xxh32::xxh32(b"123456789", 0)
        );
        assert_eq!(RocksDbChecksum::XxHash64.of(b"abc"), 0xad77_0999); // XXH64("abc") = 0x44bc2cf5ad770999
        // XXH3: the hash of all but the last byte, which is mixed in by a multiply; the empty input is 0.
        let xxh3 = |data: &[u8]| xxhash_rust::xxh3::xxh3_64(data) as u32;
        assert_eq!(
            RocksDbChecksum::Xxh3.of(b"ab"),
            xxh3(b"a") ^ u32::from(b'b').wrapping_mul(0x6b90_83d9)
        );
        assert_eq!(RocksDbChecksum::Xxh3.of(b"\0"), xxh3(b""));
        assert_eq!(RocksDbChecksum::Xxh3.of(b""), 0);
        assert_eq!(context_modifier(0, 12345), 0);
        assert_eq!(context_modifier(0x1000, (7 << 32) | 5), 0x1000 ^ 12);
        assert_eq!((0..=255).filter_map(RocksDbChecksum::from_byte).count(), 5);
    }

    #[test]
    fn footers_and_blocks_that_do_not_read_give_typed_errors() {
        let good = full_table(5, RocksDbChecksum::Crc32c, b"rocksdb.BuiltinBloomFilter");
        let open = |bytes: &[u8]| RocksDbTable::open(bytes).map(|_| ());
        assert_eq!(
            open(&good[good.len() - 20..]),
            Err(RocksDbTableError::TooShort { len: 20 })
        );
        assert_eq!(
            open(&good[..good.len() - 1]),
            Err(RocksDbTableError::NotATable {
                magic: u64::from_le_bytes(good[good.len() - 9..good.len() - 1].try_into().unwrap())
            })
        );
        let footer = good.len() - FOOTER_LEN;
        let with = |at: usize, byte: u8| {
            let mut bytes = good.clone();
            bytes[at] = byte;
            bytes
        };
        assert_eq!(
            open(&with(good.len() - 12, 8)),
            Err(RocksDbTableError::UnsupportedFormatVersion { version: 8 })
        );
        assert_eq!(
            open(&with(footer, 5)),
            Err(RocksDbTableError::UnsupportedChecksum { byte: 5 })
        );
        assert!(matches!(
            open(&with(footer, 2)),
            Err(RocksDbTableError::ChecksumMismatch {
                block: RocksDbBlock::MetaIndex,
                ..
            })
        ));
        // A meta-index handle past the end, and one whose varints do not end within the footer's 40 bytes.
        let file = File::new(RocksDbChecksum::Crc32c, 0);
        let far = RocksDbBlockHandle {
            offset: 1 << 40,
            size: 10,
        };
        assert_eq!(
            open(&file.finish(5, far)),
            Err(RocksDbTableError::OutOfRange {
                block: RocksDbBlock::MetaIndex,
                offset: 1 << 40,
                size: 10
            })
        );
        let mut endless = good.clone();
        endless[footer + 1..footer + 41].fill(0x80);
        assert_eq!(
            open(&endless),
            Err(RocksDbTableError::BadFooter {
                reason: "undecodable block handles"
            })
        );

        // A compressed block, correctly checksummed.
        let mut file = File::new(RocksDbChecksum::Xxh3, 0);
        let meta = file.add(&block(&[], 1), 1);
        assert_eq!(
            open(&file.finish(5, meta)),
            Err(RocksDbTableError::Compressed {
                block: RocksDbBlock::MetaIndex,
                offset: meta.offset,
                compression: 1
            })
        );
        // Malformed blocks: more restarts than bytes, an entry running past the entries, a key sharing too much.
        for contents in [
            vec![0, 0, 0, 0, 9, 0, 0, 0],
            vec![0, 5, 0, 1, 0, 0, 0],
            vec![3, 1, 0, b'x', 0, 0, 0, 0, 1, 0, 0, 0],
        ] {
            let mut file = File::new(RocksDbChecksum::Crc32c, 0);
            let meta = file.add(&contents, 0);
            let bytes = file.finish(5, meta);
            let table = RocksDbTable::open(&bytes);
            let outcome =
                table.and_then(|t| t.meta_blocks().collect::<Result<Vec<_>, _>>().map(|_| ()));
            assert!(
                matches!(
                    outcome,
                    Err(RocksDbTableError::Malformed {
                        block: RocksDbBlock::MetaIndex,
                        ..
                    })
                ),
                "{contents:?}: {outcome:?}"
            );
        }
        // A custom policy's filter, and a filter without properties.
        let custom = full_table(5, RocksDbChecksum::Crc32c, b"my.Filter");
        assert_eq!(
            RocksDbTable::open(&custom).unwrap().filter().err(),
            Some(RocksDbTableError::UnsupportedFilterPolicy {
                policy: "my.Filter".into()
            })
        );
        let mut file = File::new(RocksDbChecksum::Crc32c, 0);
        let filter = file.add(&bloom(&KEYS), 0);
        let meta = file.add(
            &block(
                &[(
                    b"fullfilter.bloomfilter",
                    encode_handle(filter.offset, filter.size),
                )],
                1,
            ),
            0,
        );
        let bytes = file.finish(5, meta);
        assert_eq!(
            RocksDbTable::open(&bytes).unwrap().filter().err(),
            Some(RocksDbTableError::NoProperties)
        );
        // No filter at all.
        let mut file = File::new(RocksDbChecksum::Crc32c, 0);
        let meta = file.add(&block(&[], 1), 0);
        assert!(
            RocksDbTable::open(&file.finish(5, meta))
                .unwrap()
                .filter()
                .unwrap()
                .is_none()
        );
    }

    #[test]
    fn version_6_footers_are_checked() {
        let good = full_table(6, RocksDbChecksum::Crc32c, b"rocksdb.BuiltinBloomFilter");
        let footer = good.len() - FOOTER_LEN;
        let open = |bytes: &[u8]| RocksDbTable::open(bytes).map(|_| ());
        // Rewrites footer byte `at` and the footer checksum to match.
        let with = |at: usize, byte: u8| {
            let mut bytes = good.clone();
            bytes[footer + at] = byte;
            bytes[footer + 5..footer + 9].fill(0);
            let context = u32::from_le_bytes(bytes[footer + 9..footer + 13].try_into().unwrap());
            let sum = RocksDbChecksum::Crc32c
                .of(&bytes[footer..])
                .wrapping_add(context_modifier(context, footer as u64));
            bytes[footer + 5..footer + 9].copy_from_slice(&sum.to_le_bytes());
            bytes
        };
        assert!(open(&with(0, 1)).is_ok());
        assert_eq!(
            open(&with(1, 0x3f)),
            Err(RocksDbTableError::BadFooter {
                reason: "no extended magic number"
            })
        );
        let no_context = (9..13).fold(good.clone(), |mut b, i| {
            b[footer + i] = 0;
            b
        });
        assert_eq!(
            open(&no_context),
            Err(RocksDbTableError::BadFooter {
                reason: "a base context checksum of 0"
            })
        );
        assert!(matches!(
            open(&with(36, 1)),
            Err(RocksDbTableError::BadFooter { .. })
        ));
        assert!(open(&with(30, 1)).is_ok(), "unchecked padding");
        let mut flipped = good.clone();
        flipped[footer + 30] ^= 1;
        assert!(matches!(
            open(&flipped),
            Err(RocksDbTableError::ChecksumMismatch {
                block: RocksDbBlock::Footer,
                ..
            })
        ));
        // A meta-index larger than the bytes before the footer.
        assert!(matches!(
            open(&with(15, 0x10)),
            Err(RocksDbTableError::OutOfRange { .. })
        ));
    }

    /// A partitioned filter: two partitions, the first matching every key and the second none, so that which one
    /// a key is routed to shows in its answer. Separators "d" and "h", as internal keys or user keys, and a third
    /// entry sharing a prefix with the second and delta-encoded.
    fn partitioned_table(
        user_keys: bool,
        delta: bool,
        whole_keys: bool,
        comparator: &[u8],
    ) -> Vec<u8> {
        let props = properties(whole_keys, user_keys, delta, comparator);
        partitioned_table_with(user_keys, delta, &props)
    }

    /// [`partitioned_table`] with the properties block `props`.
    fn partitioned_table_with(user_keys: bool, delta: bool, props: &[u8]) -> Vec<u8> {
        let mut file = File::new(RocksDbChecksum::Crc32c, 0);
        let match_all = file.add(&[0xaa, 0, 0, 0, 0, 0], 0);
        let empty = file.add(&[], 0);
        let last = file.add(&[], 0);
        let suffix: &[u8] = if user_keys {
            b""
        } else {
            &[1, 0, 0, 0, 0, 0, 0, 0]
        };
        let keys = [
            [b"d", suffix].concat(),
            [b"h", suffix].concat(),
            [b"hz", suffix].concat(),
        ];
        let mut index = Vec::new();
        let mut restarts = Vec::new();
        for (i, (key, handle)) in keys.iter().zip([match_all, empty, last]).enumerate() {
            // Restarts at entries 0 and 1 (shared 0); entry 2 shares "h" with entry 1.
            let shared = if i == 2 { 1 } else { 0 };
            if shared == 0 {
                restarts.push(index.len() as u32);
            }
            put_varint(&mut index, shared as u64);
            put_varint(&mut index, (key.len() - shared) as u64);
            let value = if delta && shared != 0 {
                let mut v = Vec::new();
                put_varint(&mut v, 0); // the same size as the previous partition: zigzag 0
                v
            } else {
                encode_handle(handle.offset, handle.size)
            };
            if !delta {
                put_varint(&mut index, value.len() as u64);
            }
            index.extend_from_slice(&key[shared..]);
            index.extend(value);
        }
        restarts.iter().for_each(|r| index.extend(r.to_le_bytes()));
        index.extend((restarts.len() as u32).to_le_bytes());
        let index = file.add(&index, 0);
        let props = file.add(props, 0);
        let meta = block(
            &[
                (
                    b"partitionedfilter.rocksdb.BuiltinBloomFilter",
                    encode_handle(index.offset, index.size),
                ),
                (PROPERTIES, encode_handle(props.offset, props.size)),
            ],
            1,
        );
        let meta = file.add(&meta, 0);
        file.finish(5, meta)
    }

    #[test]
    fn partitioned_filters_route_keys_as_rocksdb_does() {
        for (user_keys, delta) in [(true, true), (true, false), (false, true), (false, false)] {
            let bytes = partitioned_table(user_keys, delta, true, BYTEWISE);
            let Some(RocksDbTableFilter::Partitioned(filter)) =
                RocksDbTable::open(&bytes).unwrap().filter().unwrap()
            else {
                panic!("not partitioned");
            };
            assert_eq!(filter.len(), 3);
            assert_eq!(filter.separators_are_internal_keys(), !user_keys);
            let partitions: Vec<_> = filter.partitions().collect();
            let user = |p: &RocksDbPartition<'_>| {
                p.separator[..p.separator.len() - if user_keys { 0 } else { 8 }].to_vec()
            };
            assert_eq!(
                partitions.iter().map(user).collect::<Vec<_>>(),
                [b"d".to_vec(), b"h".to_vec(), b"hz".to_vec()]
            );
            assert!(matches!(
                partitions[0].filter.as_ref().unwrap().format(),
                RocksDbFilterFormat::MatchAll { .. }
            ));
            assert_eq!(
                partitions[2].handle.offset,
                partitions[1].handle.offset + 5,
                "the delta-decoded handle"
            );
            // Up to "d" inclusive: the first partition (may match); after it, the second and third (no match);
            // past the last separator, the last partition.
            for (key, want) in [
                (&b""[..], true),
                (b"a", true),
                (b"d", true),
                (b"d\0", false),
                (b"h", false),
                (b"zz", false),
            ] {
                assert_eq!(
                    filter.may_contain(key),
                    want,
                    "{key:?}, user keys {user_keys}, delta {delta}"
                );
            }
        }
        // Prefix-only filters, and keys in an order the search cannot compare: every key may match.
        for bytes in [
            partitioned_table(true, true, false, BYTEWISE),
            partitioned_table(true, true, true, b"rocksdb.ReverseBytewiseComparator"),
        ] {
            let filter = RocksDbTable::open(&bytes)
                .unwrap()
                .filter()
                .unwrap()
                .unwrap();
            assert!(filter.may_contain(b"zz"));
        }
        // A full filter of prefixes only answers "may match" too.
        let mut file = File::new(RocksDbChecksum::Crc32c, 0);
        let filter = file.add(&bloom(&[b"app"]), 0);
        let props = file.add(&properties(false, true, true, BYTEWISE), 0);
        let meta = block(
            &[
                (
                    b"fullfilter.ribbonfilter",
                    encode_handle(filter.offset, filter.size),
                ),
                (PROPERTIES, encode_handle(props.offset, props.size)),
            ],
            1,
        );
        let meta = file.add(&meta, 0);
        let bytes = file.finish(5, meta);
        let filter = RocksDbTable::open(&bytes)
            .unwrap()
            .filter()
            .unwrap()
            .unwrap();
        assert!(matches!(
            filter,
            RocksDbTableFilter::Full {
                whole_keys: false,
                ..
            }
        ));
        assert!(filter.may_contain(b"apple") && filter.may_contain(b"zebra"));
    }

    /// A table of version 6 with a full filter of `entries` (prefixes, or keys and prefixes) and the properties
    /// `props`.
    fn full_table_with(entries: &[&[u8]], props: &[u8]) -> Vec<u8> {
        let name = b"rocksdb.BuiltinBloomFilter";
        full_table_of(6, RocksDbChecksum::Xxh3, name, &bloom(entries), props)
    }

    fn filter_of(bytes: &[u8]) -> RocksDbTableFilter<'_> {
        RocksDbTable::open(bytes)
            .unwrap()
            .filter()
            .unwrap()
            .unwrap()
    }

    /// Prefix questions on a full filter: the key's prefix cut by the extractor the properties name and asked of
    /// the filter, "may contain" outside the extractor's domain and for an extractor that is not RocksDB's own or
    /// no extractor. Point questions on the prefix-only filter may match.
    #[test]
    fn full_filters_answer_prefixes_with_the_tables_extractor() {
        let absent: Vec<String> = (0..200).map(|i| format!("q{i:02}-absent")).collect();
        for (name, extractor, prefixes) in [
            (
                &b"rocksdb.FixedPrefix.3"[..],
                RocksDbPrefixExtractor::Fixed(3),
                [&b"app"[..], b"ban", b"ch"],
            ),
            (
                b"capped:3",
                RocksDbPrefixExtractor::Capped(3),
                [b"app", b"ban", b"ch"],
            ),
        ] {
            // A table of "apple", "banana" and "ch": Fixed(3) has no prefix of "ch", Capped(3) "ch" itself.
            let entries: Vec<&[u8]> = match extractor {
                RocksDbPrefixExtractor::Fixed(_) => prefixes[..2].to_vec(),
                _ => prefixes.to_vec(),
            };
            let bytes = full_table_with(
                &entries,
                &properties_with(false, true, true, BYTEWISE, name),
            );
            let filter = filter_of(&bytes);
            assert_eq!(filter.prefix_extractor(), Some(extractor));
            for key in [&b"apple"[..], b"applesauce", b"app", b"banana", b"ch"] {
                assert!(filter.may_contain_prefix(key), "{extractor:?} {key:?}");
            }
            // Short keys: outside Fixed(3)'s domain (may contain), their own prefix under Capped(3).
            let fixed = matches!(extractor, RocksDbPrefixExtractor::Fixed(_));
            assert_eq!(filter.may_contain_prefix(b"c"), fixed, "{extractor:?}");
            assert_eq!(filter.may_contain_prefix(b"b"), fixed, "{extractor:?}");
            let ruled_out = absent
                .iter()
                .filter(|k| !filter.may_contain_prefix(k.as_bytes()));
            assert!(ruled_out.count() > 150, "{extractor:?}");
            assert!(filter.may_contain(b"zebra"), "a prefix-only filter");
        }
        for name in [
            &b"nullptr"[..],
            b"",
            b"rocksdb.FixedPrefix.x",
            b"my.Extractor",
        ] {
            let bytes = full_table_with(
                &[b"app"],
                &properties_with(false, true, true, BYTEWISE, name),
            );
            let filter = filter_of(&bytes);
            let other =
                (!name.is_empty() && name != b"nullptr").then_some(RocksDbPrefixExtractor::Other);
            assert_eq!(filter.prefix_extractor(), other, "{name:?}");
            assert!(
                absent
                    .iter()
                    .all(|k| filter.may_contain_prefix(k.as_bytes())),
                "{name:?}"
            );
        }
    }

    /// A partitioned filter routes a prefix question by the key asked, as a point question: a key up to "d"
    /// inclusive asks the first partition (which matches everything), one after it the empty second, even where
    /// its prefix is the first partition's ("dz"). Without a prefix extractor, every prefix may be there.
    #[test]
    fn partitioned_filters_route_prefix_questions_by_the_key() {
        let props = properties_with(false, true, true, BYTEWISE, b"rocksdb.FixedPrefix.1");
        let bytes = partitioned_table_with(true, true, &props);
        let RocksDbTableFilter::Partitioned(filter) = filter_of(&bytes) else {
            panic!("not partitioned");
        };
        assert_eq!(
            filter.prefix_extractor(),
            Some(RocksDbPrefixExtractor::Fixed(1))
        );
        for (key, want) in [
            (&b"a"[..], true),
            (b"d", true),
            (b"dz", false),
            (b"h", false),
            (b"zz", false),
            (b"", true),
        ] {
            assert_eq!(filter.may_contain_prefix(key), want, "{key:?}");
            assert!(filter.may_contain(key), "prefixes only: {key:?}");
        }
        let plain = partitioned_table(true, true, true, BYTEWISE);
        let plain = filter_of(&plain);
        assert_eq!(plain.prefix_extractor(), None);
        assert!(plain.may_contain_prefix(b"zz") && !plain.may_contain(b"zz"));
    }

    #[test]
    fn extractor_names_read_as_rocksdbs_registry_reads_them() {
        use RocksDbPrefixExtractor::{Capped, Fixed, Noop, Other};
        for (name, want) in [
            (&b"rocksdb.FixedPrefix.3"[..], Some(Fixed(3))),
            (b"fixed:0", Some(Fixed(0))),
            (b"rocksdb.CappedPrefix.12", Some(Capped(12))),
            (b"capped:7", Some(Capped(7))),
            (b"rocksdb.Noop", Some(Noop)),
            (b"rocksdb.FixedPrefix.", Some(Other)),
            (b"rocksdb.FixedPrefix.-1", Some(Other)),
            (b"rocksdb.FixedPrefix.99999999999999999999999", Some(Other)),
            (b"rocksdb.CappedPrefix", Some(Other)),
            (b"nullptr", None),
            (b"", None),
        ] {
            assert_eq!(RocksDbPrefixExtractor::from_name(name), want, "{name:?}");
        }
        assert_eq!(Fixed(3).prefix(b"abcd"), Some(&b"abc"[..]));
        assert_eq!(Fixed(3).prefix(b"ab"), None);
        assert_eq!(Capped(3).prefix(b"ab"), Some(&b"ab"[..]));
        assert_eq!(Noop.prefix(b"ab"), Some(&b"ab"[..]));
        assert_eq!(Other.prefix(b"ab"), None);
    }

    /// LevelDB's table layout (format version 0 without a properties block): the index and data blocks, a
    /// compressed block handed over as stored, and a `filter.<policy>` block, each checksum-verified.
    #[test]
    fn leveldb_layout_tables_read_their_index_data_and_filter_blocks() {
        let mut file = File::new(RocksDbChecksum::Crc32c, 0);
        let data = [
            file.add(
                &block(&[(b"a", b"1".to_vec()), (b"b", b"2".to_vec())], 16),
                0,
            ),
            file.add(b"snappy bytes, not read", 1),
        ];
        let filter = file.add(b"a per-2 KiB filter block", 0);
        let index = block(
            &[
                (b"b", encode_handle(data[0].offset, data[0].size)),
                (b"c", encode_handle(data[1].offset, data[1].size)),
            ],
            1,
        );
        let index = file.add(&index, 0);
        let meta = block(
            &[(
                b"filter.leveldb.BuiltinBloomFilter2",
                encode_handle(filter.offset, filter.size),
            )],
            1,
        );
        let meta = file.add(&meta, 0);
        let bytes = file.finish_with_index(0, meta, index);
        let table = RocksDbTable::open(&bytes).unwrap();
        assert_eq!(table.format_version(), 0);
        assert_eq!(table.properties_handle(), Ok(None));
        assert!(table.filter().unwrap().is_none(), "no full filter");
        assert_eq!(table.index_handle(), Some(index));

        let stored = table.read_block(index, RocksDbBlock::Index).unwrap();
        assert_eq!(stored.compression, 0);
        let handles: Vec<RocksDbBlockHandle> =
            RocksDbBlockEntries::new(stored.contents, RocksDbBlock::Index, index.offset)
                .map(|e| RocksDbBlockHandle::decode(e.unwrap().1).unwrap())
                .collect();
        assert_eq!(handles, data);
        let first = table.read_block(data[0], RocksDbBlock::Data).unwrap();
        let keys: Vec<Vec<u8>> =
            RocksDbBlockEntries::new(first.contents, RocksDbBlock::Data, data[0].offset)
                .map(|e| e.unwrap().0.into_owned())
                .collect();
        assert_eq!(keys, [b"a".to_vec(), b"b".to_vec()]);
        assert_eq!(
            table.read_block(data[1], RocksDbBlock::Data),
            Ok(RocksDbStoredBlock {
                contents: b"snappy bytes, not read",
                compression: 1
            })
        );
        let meta = table.meta_blocks().next().unwrap().unwrap();
        let filter_block = table
            .read_block(meta.handle, RocksDbBlock::BlockBasedFilter)
            .unwrap();
        assert_eq!(filter_block.contents, b"a per-2 KiB filter block");

        // A flipped byte in a data block is found by its checksum, and named.
        let mut damaged = bytes.clone();
        damaged[data[0].offset as usize] ^= 1;
        let table = RocksDbTable::open(&damaged).unwrap();
        assert!(matches!(
            table.read_block(data[0], RocksDbBlock::Data),
            Err(RocksDbTableError::ChecksumMismatch {
                block: RocksDbBlock::Data,
                ..
            })
        ));
        assert_eq!(RocksDbBlockHandle::decode(&[0x80]), None);

        // Format version 6 names no index block in its footer; RocksDB's tables have a properties block.
        let v6 = full_table(6, RocksDbChecksum::Crc32c, b"rocksdb.BuiltinBloomFilter");
        let v6 = RocksDbTable::open(&v6).unwrap();
        assert_eq!(v6.index_handle(), None);
        assert!(v6.properties_handle().unwrap().is_some());
    }

    #[test]
    fn block_entries_share_prefixes_and_skip_a_hash_index() {
        let entries: Vec<(&[u8], Vec<u8>)> = vec![
            (b"rocksdb.a", vec![1]),
            (b"rocksdb.ab", vec![2]),
            (b"rocksdb.b", vec![3]),
        ];
        let plain = block(&entries, 16);
        let read = |contents: &[u8]| -> Vec<(Vec<u8>, Vec<u8>)> {
            RocksDbBlockEntries::new(contents, RocksDbBlock::Properties, 0)
                .map(|e| e.map(|(k, v)| (k.into_owned(), v.to_vec())).unwrap())
                .collect()
        };
        let want: Vec<_> = entries
            .iter()
            .map(|(k, v)| (k.to_vec(), v.clone()))
            .collect();
        assert_eq!(read(&plain), want);
        assert!(matches!(
            RocksDbBlockEntries::new(&plain, RocksDbBlock::Properties, 0).nth(1),
            Some(Ok((Cow::Owned(_), _)))
        ));
        // The same entries with a hash index of 3 buckets between the restart array and num_restarts (top bit set).
        let (body, _) = plain.split_at(plain.len() - 4);
        let mut hashed = body.to_vec();
        hashed.extend([7, 7, 7]);
        hashed.extend(3u16.to_le_bytes());
        hashed.extend((1u32 | HASH_INDEX_BIT).to_le_bytes());
        assert_eq!(read(&hashed), want);
        // Over 64 KiB the top bit is part of the count: too many restarts for the block.
        let mut big = vec![0u8; MAX_HASH_INDEX_BLOCK];
        big.extend((1u32 | HASH_INDEX_BIT).to_le_bytes());
        assert!(matches!(
            RocksDbBlockEntries::new(&big, RocksDbBlock::Properties, 0).next(),
            Some(Err(_))
        ));
        // No restart points: no entries, whatever precedes.
        assert!(read(&[1, 2, 3, 0, 0, 0, 0]).is_empty());
    }

    #[test]
    fn varints_read_as_rocksdb_reads_them() {
        let read = |bytes: &[u8]| varint64(&mut &bytes[..]);
        assert_eq!(read(&[0x7f]), Some(127));
        assert_eq!(read(&[0x80, 0x01]), Some(128));
        assert_eq!(
            read(&[0xff; 9].iter().copied().chain([0x7f]).collect::<Vec<_>>()),
            Some(u64::MAX)
        );
        assert_eq!(read(&[0x80; 10]), None, "no end within 10 bytes");
        assert_eq!(read(&[0x80]), None, "truncated");
        assert_eq!(
            varint32(&mut &[0xff, 0xff, 0xff, 0xff, 0x1f][..]),
            Some(u32::MAX)
        );
        assert_eq!(
            varint32(&mut &[0x80, 0x80, 0x80, 0x80, 0x80, 0x01][..]),
            None
        );
        assert_eq!(
            (zigzag(0), zigzag(1), zigzag(2), zigzag(u64::MAX)),
            (0, -1, 1, i64::MIN)
        );
    }
}
