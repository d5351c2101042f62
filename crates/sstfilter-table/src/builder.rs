//! Writing a table: sorted entries into ~4 KB data blocks, every key into the filter block builder, then the
//! filter, index and footer.

use core::fmt;
use std::fs::File;
use std::io::Write;
use std::path::Path;

use super::block::BlockBuilder;
use super::error::{TableError, TableResult};
use super::format::{BlockHandle, Footer, append_crc};
use sstfilter::{
    BlockedBloomPolicy, TableFilterBuilder, TableFilterOptions, TableFilterPart, UsageError,
};

/// Default target size of a data block: 4 KiB, LevelDB's default and one page of most file systems.
pub const DEFAULT_BLOCK_SIZE: usize = 4096;

/// Largest block size [`TableOptions::block_size`] accepts; a builder refuses larger settings.
pub const MAX_BLOCK_SIZE: usize = 1 << 30;

/// Largest key length plus value length of one entry. With [`MAX_BLOCK_SIZE`] this keeps every block below the
/// 4 GiB its u32 offsets can address.
pub const MAX_ENTRY_LEN: usize = 1 << 30;

/// How tables are built: the data block size, and the table's filters as one [`TableFilterOptions`] (a point
/// filter, prefixes, a range filter, partitions, in any combination).
///
/// The default is 4 KiB data blocks and a BlockedBloom point filter at 10 bits per key (about 0.96 % false
/// positives).
///
/// ```
/// use std::sync::Arc;
/// use sstfilter::{BlockedBloomPolicy, DelimitedPrefix, PartitionCuts, RangePolicy, TableFilterOptions};
/// use sstfilter_table::TableOptions;
///
/// let options = TableOptions::default()
///     .block_size(16 * 1024)
///     .filters(TableFilterOptions::new().point(BlockedBloomPolicy::new(14.0)?));
/// let no_filter = TableOptions::default().filters(TableFilterOptions::new());
/// // A big table: its filter in 4 KiB partitions cut at data-block boundaries, loaded on demand; prefix scans of a
/// // tenant and range scans of up to 2^10 projected values skip the table when they hold no key.
/// let everything = TableOptions::default().filters(
///     TableFilterOptions::new()
///         .point(BlockedBloomPolicy::new(10.0)?)
///         .prefixes(Arc::new(DelimitedPrefix::new(b'/')), true)?
///         .range(RangePolicy::new(1 << 10, 0.01)?)?
///         .partitioned(4096, PartitionCuts::AtDataBlocks)?,
/// );
/// # let _ = (options, no_filter, everything);
/// # Ok::<(), sstfilter::UsageError>(())
/// ```
#[derive(Clone, Debug)]
pub struct TableOptions {
    block_size: usize,
    filters: TableFilterOptions,
}

impl Default for TableOptions {
    fn default() -> Self {
        TableOptions {
            block_size: DEFAULT_BLOCK_SIZE,
            filters: TableFilterOptions::new().point(BlockedBloomPolicy::default()),
        }
    }
}

impl TableOptions {
    /// Target size of a data block in bytes: a block is closed once its encoded size reaches it. 1 to
    /// [`MAX_BLOCK_SIZE`]; [`TableBuilder::new`] refuses any other.
    #[must_use]
    pub fn block_size(mut self, bytes: usize) -> Self {
        self.block_size = bytes;
        self
    }

    /// The table's filters (replacing the default BlockedBloom point filter; `TableFilterOptions::new()` for
    /// none). The builder tells the filters where each data block ends, for partitions cut at data blocks; with
    /// prefixes, [`Table::scan_prefix`](crate::Table::scan_prefix) skips tables that hold no key of a prefix; with
    /// a range filter, [`Table::scan_range`](crate::Table::scan_range) skips tables for empty ranges (table format
    /// version 2, FORMAT.md 7.1); with partitions, a reader keeps the partition index and loads partitions through
    /// a [`PartitionCache`](crate::PartitionCache). A builder refuses options the filters refuse
    /// ([`TableError::Usage`](crate::TableError)).
    #[must_use]
    pub fn filters(mut self, filters: TableFilterOptions) -> Self {
        self.filters = filters;
        self
    }

    /// The table's filters.
    #[must_use]
    pub fn filter_options(&self) -> &TableFilterOptions {
        &self.filters
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
    /// Where the range filter block lies (`None` without a range filter in [`TableOptions::filters`]).
    pub range_filter: Option<BlockHandle>,
    /// Where the index block lies.
    pub index: BlockHandle,
    /// Length of the whole file.
    pub file_len: u64,
}

/// Writes one table: add entries in strictly increasing key order, then [`finish`](Self::finish).
///
/// Every key goes both into the current data block and into a [`TableFilterBuilder`]
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
/// let table = Table::open(&path, &TableOptions::default())?;
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
    /// A builder that writes the table to `out`, or [`TableError::Usage`] for a block size outside
    /// `1..=MAX_BLOCK_SIZE` or filter options the filter library refuses (prefixes or partitions without a filter
    /// policy, an extractor name too long to record, ...: `TableFilterBuilder::new`).
    pub fn new(out: W, options: &TableOptions) -> TableResult<Self> {
        if !(1..=MAX_BLOCK_SIZE).contains(&options.block_size) {
            return Err(TableError::Usage(UsageError::InvalidSetting {
                setting: "TableOptions::block_size",
                expected: format!("1 to {MAX_BLOCK_SIZE} bytes"),
                found: options.block_size.to_string(),
            }));
        }
        let filter = TableFilterBuilder::new(&options.filters);
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
            self.write_scratch()
                .map(|handle| handle.offset())
                .map_err(std::io::Error::other)
        })?;
        let handle = |location: Option<sstfilter::BlockLocation>| {
            location.map(|l| BlockHandle::new(l.offset, l.len))
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
