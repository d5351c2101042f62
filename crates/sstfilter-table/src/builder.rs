//! Writing a table: sorted entries into ~4 KB data blocks, every key into the filter block builder, then the
//! filter, index and footer.

use core::fmt;
use std::fs::File;
use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use super::block::BlockBuilder;
use super::error::{TableError, TableResult};
use super::format::{BlockHandle, Footer, append_crc};
use sstfilter::{
    BlockedBloomPolicy, FilterPolicy, PartitionCuts, PrefixExtractor, RangePolicy,
    TableFilterBuilder, TableFilterOptions, TableFilterPart,
};

/// Default target size of a data block: 4 KiB, LevelDB's default and one page of most file systems.
pub const DEFAULT_BLOCK_SIZE: usize = 4096;

/// Largest block size [`TableOptions::block_size`] accepts; larger settings are clamped to it.
pub const MAX_BLOCK_SIZE: usize = 1 << 30;

/// Largest key length plus value length of one entry. With [`MAX_BLOCK_SIZE`] this keeps every block below the
/// 4 GiB its u32 offsets can address.
pub const MAX_ENTRY_LEN: usize = 1 << 30;

/// A filter policy shared between the options and every table built with them.
pub type SharedFilterPolicy = sstfilter::SharedPolicy;

/// How tables are built: data block size and filter policy.
///
/// The default is 4 KiB data blocks and a BlockedBloom filter at 10 bits per key (about 0.96 % false positives).
///
/// ```
/// use sstfilter::{BlockedBloomPolicy, PartitionCuts};
/// use sstfilter_table::TableOptions;
///
/// let options = TableOptions::default().block_size(16 * 1024).filter_policy(BlockedBloomPolicy::new(14.0));
/// let no_filter = TableOptions::default().without_filter();
/// // A big table: its filter in 4 KiB partitions cut at data-block boundaries, loaded on demand.
/// let partitioned = TableOptions::default().partitioned_filter(4096, PartitionCuts::AtDataBlocks);
/// // A range filter: scans of up to 2^10 projected values skip the table at most 1 % of the time when empty.
/// let ranges = TableOptions::default().range_filter(sstfilter::RangePolicy::new(1 << 10, 0.01));
/// # let _ = (options, no_filter, partitioned, ranges);
/// ```
#[derive(Clone)]
pub struct TableOptions {
    block_size: usize,
    filter: Option<SharedFilterPolicy>,
    prefixes: Option<(Arc<dyn PrefixExtractor>, bool)>,
    partitions: Option<(usize, PartitionCuts)>,
    range: Option<RangePolicy>,
}

impl Default for TableOptions {
    fn default() -> Self {
        TableOptions {
            block_size: DEFAULT_BLOCK_SIZE,
            filter: Some(Arc::new(BlockedBloomPolicy::new(10.0))),
            prefixes: None,
            partitions: None,
            range: None,
        }
    }
}

impl fmt::Debug for TableOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TableOptions")
            .field("block_size", &self.block_size)
            .field("has_filter", &self.filter.is_some())
            .field(
                "prefix_extractor",
                &self.prefixes.as_ref().map(|(e, _)| e.name()),
            )
            .field("partitions", &self.partitions)
            .finish()
    }
}

impl TableOptions {
    /// Target size of a data block in bytes: a block is closed once its encoded size reaches it. Clamped to
    /// `1..=MAX_BLOCK_SIZE`.
    #[must_use]
    pub fn block_size(mut self, bytes: usize) -> Self {
        self.block_size = bytes.clamp(1, MAX_BLOCK_SIZE);
        self
    }

    /// Builds a filter block with `policy` (replacing the default BlockedBloom policy).
    #[must_use]
    pub fn filter_policy(self, policy: impl FilterPolicy + Send + Sync + 'static) -> Self {
        self.shared_filter_policy(Arc::new(policy))
    }

    /// Like [`filter_policy`](Self::filter_policy), with a policy already behind an `Arc`.
    #[must_use]
    pub fn shared_filter_policy(mut self, policy: SharedFilterPolicy) -> Self {
        self.filter = Some(policy);
        self
    }

    /// Builds tables without a filter block: every lookup reads a data block.
    #[must_use]
    pub fn without_filter(mut self) -> Self {
        self.filter = None;
        self
    }

    /// Also stores the prefix `extractor` gives each key in the filter block (in each partition, with
    /// [`partitioned_filter`](Self::partitioned_filter)), so that [`Table::scan_prefix`](crate::Table::scan_prefix)
    /// skips tables that hold no key of a prefix. With `whole_keys` false, only prefixes are stored: smaller, and
    /// point lookups ask the key's prefix ([`Table::get_with_extractor`](crate::Table::get_with_extractor)). A
    /// builder refuses an extractor whose name is too long to record ([`TableError::Usage`](crate::TableError)).
    #[must_use]
    pub fn prefix_extractor(
        mut self,
        extractor: Arc<dyn PrefixExtractor>,
        whole_keys: bool,
    ) -> Self {
        self.prefixes = Some((extractor, whole_keys));
        self
    }

    /// Builds the filter in partitions of about `partition_bytes` each (FORMAT.md, sections 7.3 and 8), cut
    /// `cuts`, instead of one block: a reader keeps only the small partition index in memory and loads the
    /// partitions lookups need through a [`PartitionCache`](crate::PartitionCache).
    #[must_use]
    pub fn partitioned_filter(mut self, partition_bytes: usize, cuts: PartitionCuts) -> Self {
        self.partitions = Some((partition_bytes, cuts));
        self
    }

    /// Also builds a Range filter with `policy`, stored beside the filter block (FORMAT.md 4.5 and 7.1, table
    /// format version 2): [`Table::may_contain_range`](crate::Table::may_contain_range) and
    /// [`Table::scan_range`](crate::Table::scan_range) skip the table for empty ranges. With
    /// [`without_filter`](Self::without_filter) it is the table's only filter, and lookups ask it by key (at its
    /// point rate, `ε / L`).
    #[must_use]
    pub fn range_filter(mut self, policy: RangePolicy) -> Self {
        self.range = Some(policy);
        self
    }

    /// The table filter these options describe.
    fn table_filter(&self) -> TableFilterOptions {
        let mut options = TableFilterOptions::new();
        if let Some(policy) = &self.filter {
            options = options.shared_point(policy.clone());
        }
        if let Some((extractor, whole_keys)) = &self.prefixes {
            options = options.prefixes(extractor.clone(), *whole_keys);
        }
        if let Some((bytes, cuts)) = self.partitions {
            options = options.partitioned(bytes, cuts);
        }
        if let Some(range) = self.range {
            options = options.range(range);
        }
        options
    }
}

/// What [`TableBuilder::finish`] wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct TableSummary {
    /// Entries in the table.
    pub num_entries: u64,
    /// Data blocks written.
    pub data_blocks: u64,
    /// Bytes of the data region (data blocks and their CRCs).
    pub data_bytes: u64,
    /// Where the filter block lies (`None` without a filter policy): the partition index for a partitioned
    /// filter.
    pub filter: Option<BlockHandle>,
    /// Filter partitions written before the partition index (0 for a filter in one block).
    pub filter_partitions: u64,
    /// Where the range filter block lies (`None` without [`TableOptions::range_filter`]).
    pub range_filter: Option<BlockHandle>,
    /// Where the index block lies.
    pub index: BlockHandle,
    /// Length of the whole file.
    pub file_len: u64,
}

/// Writes one table: add entries in strictly increasing key order, then [`finish`](Self::finish).
///
/// Every key goes both into the current data block and into a [`TableFilterBuilder`](sstfilter::TableFilterBuilder)
/// (told where each data block ends); at `finish` the filter blocks are sized from the real number of keys and
/// written as meta blocks between the data and the index.
/// Each block is written with one `write_all`, so an unbuffered `File` is a fine destination.
///
/// ```
/// use sstfilter_table::{Table, TableBuilder, TableOptions};
///
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("000001.sst");
/// let mut builder = TableBuilder::create(&path, &TableOptions::default())?;
/// for i in 0..1000u32 {
///     builder.add(format!("usr:{i:012}").as_bytes(), b"value")?;
/// }
/// let (summary, file) = builder.finish()?;
/// file.sync_all()?; // make the table durable before publishing it
/// assert_eq!(summary.num_entries, 1000);
///
/// let table = Table::open(&path)?;
/// assert_eq!(table.get(b"usr:000000000042")?.as_deref(), Some(&b"value"[..]));
/// assert_eq!(table.get(b"usr:999")?, None); // almost always answered by the filter, without a read
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct TableBuilder<W: Write> {
    out: W,
    /// Bytes written so far: the offset of the next block.
    offset: u64,
    block_size: usize,
    data: BlockBuilder,
    index: BlockBuilder,
    filter: TableFilterBuilder,
    last_key: Vec<u8>,
    num_entries: u64,
    data_blocks: u64,
    /// The block being written, reused across blocks.
    scratch: Vec<u8>,
}

impl<W: Write> fmt::Debug for TableBuilder<W> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TableBuilder")
            .field("offset", &self.offset)
            .field("num_entries", &self.num_entries)
            .field("data_blocks", &self.data_blocks)
            .field("filter", &self.filter)
            .finish_non_exhaustive()
    }
}

impl TableBuilder<File> {
    /// Creates (or truncates) the file at `path` and builds a table into it.
    pub fn create(path: impl AsRef<Path>, options: &TableOptions) -> TableResult<Self> {
        TableBuilder::new(File::create(path)?, options)
    }
}

impl<W: Write> TableBuilder<W> {
    /// A builder that writes the table to `out`, or an error if the filter library refuses the options (prefixes
    /// or partitions without a filter policy, an extractor name too long to record).
    pub fn new(out: W, options: &TableOptions) -> TableResult<Self> {
        let filter = TableFilterBuilder::new(&options.table_filter())?;
        Ok(TableBuilder {
            out,
            offset: 0,
            block_size: options.block_size,
            data: BlockBuilder::default(),
            index: BlockBuilder::default(),
            filter,
            last_key: Vec::new(),
            num_entries: 0,
            data_blocks: 0,
            scratch: Vec::new(),
        })
    }

    /// Adds an entry. Keys must be strictly increasing (byte-wise); the first key may be anything, even empty.
    ///
    /// After an error the table is incomplete: drop the builder and the file.
    pub fn add(&mut self, key: &[u8], value: &[u8]) -> TableResult<()> {
        let too_large = || TableError::EntryTooLarge {
            key_len: key.len(),
            value_len: value.len(),
            max: MAX_ENTRY_LEN,
        };
        if key.len().saturating_add(value.len()) > MAX_ENTRY_LEN {
            return Err(too_large());
        }
        if self.num_entries > 0 && key <= self.last_key.as_slice() {
            return Err(TableError::KeyOutOfOrder {
                previous: self.last_key.clone(),
                key: key.to_vec(),
            });
        }
        // Keys strictly increase (checked above), which is all the filter builder asks; a range policy that
        // cannot keep its rate for one more key refuses it, before the data block takes it.
        self.filter.add_key(key)?;
        self.data.add(key, value).ok_or_else(too_large)?;
        self.last_key.clear();
        self.last_key.extend_from_slice(key);
        self.num_entries += 1;
        if self.data.encoded_len() >= self.block_size {
            self.flush_data_block()?;
        }
        Ok(())
    }

    /// Entries added so far.
    #[must_use]
    pub fn num_entries(&self) -> u64 {
        self.num_entries
    }

    /// Writes the pending data block and the filter block, index block and footer, flushes the writer and
    /// returns it, so that the caller can make the file durable (`File::sync_all`) before publishing it.
    pub fn finish(mut self) -> TableResult<(TableSummary, W)> {
        if !self.data.is_empty() {
            self.flush_data_block()?;
        }
        let data_bytes = self.offset;
        let mut filter_partitions = 0;
        // Data blocks, filter partitions, the range filter block, the filter block (or partition index): the order
        // the footer's handles describe (FORMAT.md 7), the order the table filter hands its blocks over in.
        let blocks = self.filter.finish_and_reset()?;
        let locations = blocks.write(|part, block| {
            if let TableFilterPart::Partition(_) = part {
                filter_partitions += 1;
            }
            self.scratch.clear();
            self.scratch.extend_from_slice(block);
            self.write_scratch().map(|handle| handle.offset())
        })?;
        let handle = |location: Option<sstfilter::BlockLocation>| {
            location.map(|l| BlockHandle::new(l.position, l.len))
        };
        let (filter, range) = (handle(locations.point), handle(locations.range));
        self.scratch.clear();
        self.index.finish_into(&mut self.scratch);
        let index = self.write_scratch()?;
        let footer = Footer {
            filter,
            range,
            index,
            num_entries: self.num_entries,
        };
        self.out.write_all(&footer.encode())?;
        self.out.flush()?;
        let summary = TableSummary {
            num_entries: self.num_entries,
            data_blocks: self.data_blocks,
            data_bytes,
            filter,
            filter_partitions,
            index,
            range_filter: range,
            file_len: self.offset + footer.len(),
        };
        Ok((summary, self.out))
    }

    /// Closes the current data block: writes it and records its last key and handle in the index.
    fn flush_data_block(&mut self) -> TableResult<()> {
        self.scratch.clear();
        self.data.finish_into(&mut self.scratch);
        let handle = self.write_scratch()?;
        self.data_blocks += 1;
        self.filter.end_data_block();
        // NOTE: the index key is the block's last key, so "first index key >= lookup key" finds the only block
        // that can hold the key. (LevelDB shortens it to a separator; a reference table keeps it exact.)
        let mut encoded = Vec::with_capacity(super::format::HANDLE_LEN);
        handle.encode_into(&mut encoded);
        self.index
            .add(&self.last_key, &encoded)
            .ok_or(TableError::IndexTooLarge {
                data_blocks: self.data_blocks,
            })
    }

    /// Writes the block in `scratch` followed by its CRC and returns its handle.
    fn write_scratch(&mut self) -> TableResult<BlockHandle> {
        let handle = BlockHandle::new(self.offset, self.scratch.len() as u64);
        append_crc(&mut self.scratch, 0);
        self.out.write_all(&self.scratch)?;
        self.offset += self.scratch.len() as u64;
        Ok(handle)
    }
}
