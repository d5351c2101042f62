//! Reading a table: open loads the footer, index and filter block; `get` asks the filter first and then reads at
//! most one data block.

use core::cell::Cell;
use core::fmt;
use std::fs::File;

use super::block::Block;
use super::builder::TableOptions;
use super::cache::{PartitionCache, TablePartitions};
use super::error::{BlockDefect, BlockType, TableError, TableResult};
use super::format::{BlockHandle, FOOTER_EXTENSION_LEN, FOOTER_LEN, Footer, check_crc};
use super::read_at::ReadAt;
use super::stats::{Counters, TableStats, add, bump};
use core::ops::{Bound, RangeBounds};
use sstfilter::{
    AlignedBlock, Answer, Error, FilterBlock, FilterKind, FilterStats, KeyHash, KeyProbe,
    Partition, PartitionLoader, PartitionQuestion, PartitionedFilter, PointFilter, Reason,
    TableFilter, VerifiedPartition, key_hash,
};

/// What the table's filter block turned out to be.
enum LoadedFilter {
    Whole(FilterBlock<AlignedBlock>),
    Partitioned(PartitionedFilter<AlignedBlock>),
}

/// An open table: the footer, the index block and the filter block are in memory; data blocks are read on
/// demand, one positioned read per lookup at most.
///
/// [`open`](Self::open) validates the footer, the index (checksum, sorted keys, handles inside the data region)
/// and the filter block. A table whose filter block is corrupt or unreadable still opens: its lookups answer
/// from the data blocks, as if it had no filter, and are counted as
/// [`filter_unavailable`](TableStats::filter_unavailable); [`filter_error`](Self::filter_error) says why. A
/// filter can cost a wasted read, never a lost key.
///
/// Lookups take `&self` and the counters are atomic, so a `Table<File>` can serve many threads.
pub struct Table<R = File> {
    source: R,
    file_len: u64,
    footer: Footer,
    /// Contents of the index block (checksum verified, structure validated at open).
    index: Vec<u8>,
    /// The table's filters (the filter block or partitioned filter, and the range filter block beside it), which
    /// answer every question; a part that cannot be used answers "may contain".
    filter: TableFilter<AlignedBlock>,
    /// Why the filter block cannot be used, as the table found it (its reads and checks included).
    filter_error: Option<TableError>,
    /// Why the range filter block cannot be used.
    range_error: Option<TableError>,
    /// Where a partitioned filter's partitions are kept.
    partitions: TablePartitions,
    counters: Counters,
    /// The filter's answers, in the type every integration reports through (shareable across tables).
    filter_stats: FilterStats,
}

impl<R> fmt::Debug for Table<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Table")
            .field("file_len", &self.file_len)
            .field("num_entries", &self.footer.num_entries)
            .field("filter", &self.filter)
            .field("stats", &self.stats())
            .finish_non_exhaustive()
    }
}

#[cfg(any(unix, windows))]
impl Table<File> {
    /// Opens the table file at `path`, written with `options` (the reader takes the filters' prefix extractor
    /// from them: the file names it, but only the store has its code). A partitioned filter keeps its partitions
    /// in a cache of its own without a budget (see [`open_with_cache`](Self::open_with_cache)).
    pub fn open(path: impl AsRef<std::path::Path>, options: &TableOptions) -> TableResult<Self> {
        Table::open_with_cache(path, options, PartitionCache::unbounded())
    }

    /// [`open`](Self::open), keeping the partitions of a partitioned filter in `cache` (which other tables may
    /// share).
    pub fn open_with_cache(
        path: impl AsRef<std::path::Path>,
        options: &TableOptions,
        cache: PartitionCache,
    ) -> TableResult<Self> {
        let file = File::open(path)?;
        let len = file.metadata()?.len();
        Table::from_reader_with_cache(file, len, options, cache)
    }
}

impl<R: ReadAt> Table<R> {
    /// Opens a table stored in `source`, which holds `file_len` bytes (a file, a buffer, an object), written with
    /// `options` (as [`open`](Table::open) takes them).
    ///
    /// Reads the footer, the index block and the filter block (a partitioned filter's index); never allocates
    /// more than the file's length and never panics, whatever the bytes.
    pub fn from_reader(source: R, file_len: u64, options: &TableOptions) -> TableResult<Self> {
        Table::from_reader_with_cache(source, file_len, options, PartitionCache::unbounded())
    }

    /// [`from_reader`](Self::from_reader), keeping the partitions of a partitioned filter in `cache`.
    pub fn from_reader_with_cache(
        source: R,
        file_len: u64,
        options: &TableOptions,
        cache: PartitionCache,
    ) -> TableResult<Self> {
        // The fixed footer, and the extension a version-2 footer has before it.
        let tail_len = file_len.min((FOOTER_EXTENSION_LEN + FOOTER_LEN) as u64);
        if tail_len < FOOTER_LEN as u64 {
            return Err(TableError::TooShort {
                expected: FOOTER_LEN as u64,
                found: file_len,
            });
        }
        let mut tail = [0u8; FOOTER_EXTENSION_LEN + FOOTER_LEN];
        let tail = tail.get_mut(..tail_len as usize).unwrap_or_default();
        source.read_exact_at(tail, file_len - tail_len)?;
        let footer = Footer::decode(tail, file_len)?;
        let index = read_block(&source, footer.index, BlockType::Index)?;
        let data_blocks_end = validate_index(&index, footer.data_end())?;
        let (point, filter_error) = match footer.filter {
            None => (PointFilter::None, None),
            Some(handle) => {
                match load_filter(&source, handle, footer.num_entries, data_blocks_end) {
                    Ok(LoadedFilter::Whole(block)) => (PointFilter::Block(block), None),
                    Ok(LoadedFilter::Partitioned(index)) => (PointFilter::Partitioned(index), None),
                    Err(e) => (PointFilter::Unusable(filter_error_of(&e)), Some(e)),
                }
            }
        };
        let (range, range_error) = match footer.range {
            None => (None, None),
            Some(handle) => match load_range_filter(&source, handle, footer.num_entries) {
                Ok(block) => (Some(Ok(block)), None),
                Err(e) => (Some(Err(filter_error_of(&e))), Some(e)),
            },
        };
        let filter_stats = FilterStats::new();
        let filter = TableFilter::from_parts(options.filter_options(), point, range)?
            .with_stats(filter_stats.clone());
        let num_partitions = filter
            .partitioned_filter()
            .map_or(0, PartitionedFilter::num_partitions);
        let partitions = TablePartitions::new(cache, num_partitions);
        Ok(Table {
            source,
            file_len,
            footer,
            index,
            filter,
            filter_error,
            range_error,
            partitions,
            counters: Counters::default(),
            filter_stats,
        })
    }

    /// The value stored under `key`, or `None` if the table does not hold it.
    ///
    /// Consults the filter first: a negative answer costs no read. Otherwise the index names the one data block
    /// that can hold the key, and that block is read with one positioned read and checked against its CRC.
    pub fn get(&self, key: &[u8]) -> TableResult<Option<Vec<u8>>> {
        self.get_with_hash(key, key_hash(key))
    }

    /// [`get`](Self::get) with the key's hash already computed, so that an LSM lookup hashes the key once and
    /// asks every table with it.
    ///
    /// REQUIRES: `hash == key_hash(key)`; another hash can make the filter hide the key.
    pub fn get_with_hash(&self, key: &[u8], hash: KeyHash) -> TableResult<Option<Vec<u8>>> {
        self.lookup(&KeyProbe::with_hash(key, hash))
    }

    /// The filter's answer for `probe` (counted), then the read it allows.
    fn lookup(&self, probe: &KeyProbe<'_>) -> TableResult<Option<Vec<u8>>> {
        let loader = self.loader();
        let answer = self.filter.may_contain(probe, &loader);
        // One counter a lookup, its outcome's: the totals are their sums (`TableStats`). A partitioned filter's
        // common lookup, a negative from a partition found in the cache, counts its cache hit in the same add.
        match answer {
            Answer::Absent => {
                bump(if loader.take_the_hit() {
                    &self.counters.cached_negatives
                } else {
                    &self.counters.negatives
                });
                return Ok(None);
            }
            Answer::MayContain(Reason::Matched) => bump(&self.counters.filter_positives),
            Answer::MayContain(Reason::Unusable) => bump(&self.counters.filter_unavailable),
            // No filter that answers a key (none at all, or prefixes only read without their extractor): a plain
            // read.
            Answer::MayContain(_) => bump(&self.counters.unfiltered_lookups),
        }
        let found = self.read_value(probe.key())?;
        if answer == Answer::MayContain(Reason::Matched) {
            match found {
                None => bump(&self.counters.false_positives),
                Some(_) => self.filter_stats.record_true_positive(),
            }
        }
        Ok(found)
    }

    /// Loads the table's filter partitions through its cache.
    fn loader(&self) -> Loader<'_, R> {
        Loader {
            table: self,
            hits: Cell::new(0),
        }
    }

    /// Every entry whose key starts with `prefix`, in key order, asking the filter first: a table whose filter
    /// holds prefixes of the options' extractor and not this one is skipped without a read (see
    /// [`may_contain_prefix`](Self::may_contain_prefix)). Otherwise the index names the first data block that can
    /// hold such a key, and blocks are read from there until the keys pass the prefix.
    pub fn scan_prefix(&self, prefix: &[u8]) -> TableResult<Vec<(Vec<u8>, Vec<u8>)>> {
        bump(&self.counters.prefix_scans);
        let answer = self.may_contain_prefix(prefix);
        match answer {
            Answer::Absent => {
                bump(&self.counters.prefix_scans_skipped);
                return Ok(Vec::new());
            }
            Answer::MayContain(Reason::Matched) => {}
            Answer::MayContain(_) => bump(&self.counters.prefix_scans_unfiltered),
        }
        let found = self.read_prefix(prefix)?;
        if answer == Answer::MayContain(Reason::Matched) && !found.is_empty() {
            self.filter_stats.record_true_positive();
        }
        Ok(found)
    }

    /// What the filters say about the keys that start with `prefix` (counted in the filter statistics, not in the
    /// table's scan counters; a partitioned filter may load the partitions the scan's keys can be in):
    /// [`Answer::Absent`] if the filter holds the options' extractor's prefixes and not the one every such key
    /// has, or the range filter rules out the range those keys lie in; [`Answer::MayContain`], with the reason,
    /// otherwise.
    pub fn may_contain_prefix(&self, prefix: &[u8]) -> Answer {
        self.filter.may_contain_prefix(prefix, &self.loader())
    }

    /// Every entry whose key lies between `lower` and `upper`, in key order, asking the filter first: a table
    /// whose Range filter says no key lies there is skipped without a read (see
    /// [`may_contain_range`](Self::may_contain_range)). Otherwise the index names the first data block that can
    /// hold such a key, and blocks are read from there until the keys pass `upper`.
    pub fn scan_range(
        &self,
        lower: Bound<&[u8]>,
        upper: Bound<&[u8]>,
    ) -> TableResult<Vec<(Vec<u8>, Vec<u8>)>> {
        bump(&self.counters.range_scans);
        let answer = self.may_contain_range(lower, upper);
        match answer {
            Answer::Absent => {
                bump(&self.counters.range_scans_skipped);
                return Ok(Vec::new());
            }
            Answer::MayContain(Reason::Matched) => {}
            Answer::MayContain(_) => bump(&self.counters.range_scans_unfiltered),
        }
        let start: &[u8] = match lower {
            Bound::Included(a) | Bound::Excluded(a) => a,
            Bound::Unbounded => &[],
        };
        let mut found = Vec::new();
        self.read_from(start, |key, value| {
            if !(lower, upper).contains(&key) {
                // Before `lower` (an excluded bound's own key) keep going; past `upper`, stop.
                return !matches!(upper, Bound::Included(b) if key > b)
                    && !matches!(upper, Bound::Excluded(b) if key >= b);
            }
            found.push((key.to_vec(), value.to_vec()));
            true
        })?;
        if answer == Answer::MayContain(Reason::Matched) && !found.is_empty() {
            self.filter_stats.record_true_positive();
        }
        Ok(found)
    }

    /// What the filters say about the keys between `lower` and `upper` (counted in the filter statistics, not in
    /// the table's scan counters): [`Answer::Absent`] if the table's range filter rules the range out (or no byte
    /// string lies in it, or it lies past a partitioned filter's last key); a range of one key is a point lookup;
    /// [`Answer::MayContain`], with the reason, without a usable range filter.
    pub fn may_contain_range(&self, lower: Bound<&[u8]>, upper: Bound<&[u8]>) -> Answer {
        self.filter.may_contain_range(lower, upper, &self.loader())
    }

    /// Why the table's range filter block cannot be used, if it has one that cannot: range questions then read
    /// the table.
    #[must_use]
    pub fn range_filter_error(&self) -> Option<&TableError> {
        self.range_error.as_ref()
    }

    /// Where the range filter block lies, if the table has one.
    #[must_use]
    pub fn range_filter_handle(&self) -> Option<BlockHandle> {
        self.footer.range
    }

    /// Calls `visit` with every entry from the first key `≥ start` on, in order, while it returns `true`.
    fn read_from(
        &self,
        start: &[u8],
        mut visit: impl FnMut(&[u8], &[u8]) -> bool,
    ) -> TableResult<()> {
        let index = Block::parse(&self.index).map_err(corrupt(BlockType::Index))?;
        let Some((first, _)) = index.seek(start).map_err(corrupt(BlockType::Index))? else {
            return Ok(()); // every key is smaller than `start`
        };
        for i in first..index.len() {
            let (_, encoded) = index.entry(i).map_err(corrupt(BlockType::Index))?;
            let handle = decode_handle(i, encoded)?;
            let kind = BlockType::Data {
                offset: handle.offset(),
            };
            bump(&self.counters.data_block_reads);
            let contents = read_block(&self.source, handle, kind)?;
            let block = Block::parse(&contents).map_err(corrupt(kind))?;
            let from = block
                .seek(start)
                .map_err(corrupt(kind))?
                .map_or(block.len(), |(at, _)| at);
            for j in from..block.len() {
                let (key, value) = block.entry(j).map_err(corrupt(kind))?;
                if !visit(key, value) {
                    return Ok(());
                }
            }
        }
        Ok(())
    }

    /// The entries starting with `prefix`, read from the data blocks.
    fn read_prefix(&self, prefix: &[u8]) -> TableResult<Vec<(Vec<u8>, Vec<u8>)>> {
        let mut found = Vec::new();
        self.read_from(prefix, |key, value| {
            if !key.starts_with(prefix) {
                return false; // keys are sorted: none further starts with the prefix
            }
            found.push((key.to_vec(), value.to_vec()));
            true
        })?;
        Ok(found)
    }

    /// Index lookup, then at most one data-block read.
    fn read_value(&self, key: &[u8]) -> TableResult<Option<Vec<u8>>> {
        let Some(handle) = self.data_block_for(key)? else {
            return Ok(None); // past the table's last key: no block can hold it
        };
        bump(&self.counters.data_block_reads);
        let kind = BlockType::Data {
            offset: handle.offset(),
        };
        let contents = read_block(&self.source, handle, kind)?;
        let block = Block::parse(&contents).map_err(corrupt(kind))?;
        Ok(block.get(key).map_err(corrupt(kind))?.map(<[u8]>::to_vec))
    }

    /// The handle of the first data block whose last key is `>= key`.
    fn data_block_for(&self, key: &[u8]) -> TableResult<Option<BlockHandle>> {
        let index = Block::parse(&self.index).map_err(corrupt(BlockType::Index))?;
        let Some((entry, (_, encoded))) = index.seek(key).map_err(corrupt(BlockType::Index))?
        else {
            return Ok(None);
        };
        decode_handle(entry, encoded).map(Some)
    }

    /// Reads every data block and checks its CRC, its structure, the key order across blocks, the index keys and
    /// the entry count; and every partition of a partitioned filter
    /// ([`read_filter_partition`](Self::read_filter_partition)). Costs a pass over the file; does not touch the
    /// lookup counters.
    pub fn verify(&self) -> TableResult<()> {
        let index = Block::parse(&self.index).map_err(corrupt(BlockType::Index))?;
        let mut previous: Option<Vec<u8>> = None;
        let mut entries = 0u64;
        for i in 0..index.len() {
            let (index_key, encoded) = index.entry(i).map_err(corrupt(BlockType::Index))?;
            let handle = decode_handle(i, encoded)?;
            let kind = BlockType::Data {
                offset: handle.offset(),
            };
            let contents = read_block(&self.source, handle, kind)?;
            let block = Block::parse(&contents).map_err(corrupt(kind))?;
            let last = block
                .check_sorted(previous.as_deref())
                .map_err(corrupt(kind))?;
            if last != Some(index_key) {
                return Err(TableError::CorruptBlock {
                    block: BlockType::Index,
                    defect: BlockDefect::IndexKeyMismatch { entry: i as u64 },
                });
            }
            entries += block.len() as u64;
            previous = last.map(<[u8]>::to_vec);
        }
        if entries != self.footer.num_entries {
            return Err(TableError::EntryCountMismatch {
                footer: self.footer.num_entries,
                found: entries,
            });
        }
        if let Some(index) = self.filter.partitioned_filter() {
            for position in 0..index.num_partitions() {
                if let Some(partition) = self.read_filter_partition(position) {
                    partition?;
                }
            }
        }
        Ok(())
    }

    /// Partition `position` of the table's partitioned filter, read from the file (not from the cache, not
    /// counted) and checked: the table's CRC32 after it, its own CRC32, and that it is the partition the index
    /// names. `None` without a partitioned filter or past its last partition.
    pub fn read_filter_partition(
        &self,
        position: usize,
    ) -> Option<TableResult<VerifiedPartition<AlignedBlock>>> {
        let index = self.filter.partitioned_filter()?;
        let partition = index.partition(position)?;
        Some(read_partition(&self.source, index, &partition, |bytes| {
            bytes
        }))
    }
}

impl<R> Table<R> {
    /// Reports this table's filter answers into `stats` (shared with other tables, a store's counters) instead
    /// of counters of its own: answers, true positives (a "may contain" whose read found the key) and filters or
    /// partitions that could not be used.
    #[must_use]
    pub fn with_filter_stats(mut self, stats: FilterStats) -> Self {
        self.filter = self.filter.with_stats(stats.clone());
        self.filter_stats = stats;
        self
    }

    /// The [`FilterStats`] this table reports into: `observed_fpr()` and `reads_avoided()` as any integration
    /// reports them.
    #[must_use]
    pub fn filter_stats(&self) -> &FilterStats {
        &self.filter_stats
    }

    /// A snapshot of the lookup counters.
    #[must_use]
    pub fn stats(&self) -> TableStats {
        self.counters.snapshot()
    }

    /// The table's filters, as one [`TableFilter`]: the point filter (one block, or a partition index,
    /// [`TableFilter::point_filter`], [`TableFilter::partitioned_filter`]) and the range filter
    /// ([`TableFilter::range_filter`]). Why a part that exists cannot be used: [`filter_error`](Self::filter_error)
    /// and [`range_filter_error`](Self::range_filter_error), with the table's own context (a read that failed).
    #[must_use]
    pub fn table_filter(&self) -> &TableFilter<AlignedBlock> {
        &self.filter
    }

    /// The cache the partitions of the table's partitioned filter are kept in, if it has one.
    #[must_use]
    pub fn partition_cache(&self) -> Option<&PartitionCache> {
        self.filter
            .partitioned_filter()
            .map(|_| self.partitions.cache())
    }

    /// Why the table's filter block cannot be used (lookups then treat the table as "may contain"); `None` if it
    /// is fine or the table has none.
    #[must_use]
    pub fn filter_error(&self) -> Option<&TableError> {
        self.filter_error.as_ref()
    }

    /// Where the filter block lies, if the table has one (usable or not).
    #[must_use]
    pub fn filter_handle(&self) -> Option<BlockHandle> {
        self.footer.filter
    }

    /// Where the index block lies.
    #[must_use]
    pub fn index_handle(&self) -> BlockHandle {
        self.footer.index
    }

    /// Number of entries, as recorded in the footer.
    #[must_use]
    pub fn num_entries(&self) -> u64 {
        self.footer.num_entries
    }

    /// Number of data blocks.
    #[must_use]
    pub fn num_data_blocks(&self) -> u64 {
        Block::parse(&self.index).map_or(0, |index| index.len() as u64)
    }

    /// Length of the table file in bytes.
    #[must_use]
    pub fn file_len(&self) -> u64 {
        self.file_len
    }
}

/// Reads the block `handle` points to (validated to lie inside the file) and checks its CRC; returns the
/// contents without the CRC.
fn read_block<R: ReadAt>(source: &R, handle: BlockHandle, kind: BlockType) -> TableResult<Vec<u8>> {
    read_block_into(source, handle, kind, |len| vec![0u8; len], Vec::truncate)
}

/// [`read_block`] into a buffer made by `zeroed` and cut to the contents by `truncate`: the filter block goes into
/// an [`AlignedBlock`], so that each of its 64-byte BlockedBloom blocks is one cache line, with no further copy.
fn read_block_into<R: ReadAt, B: AsRef<[u8]> + AsMut<[u8]>>(
    source: &R,
    handle: BlockHandle,
    kind: BlockType,
    zeroed: impl FnOnce(usize) -> B,
    truncate: impl FnOnce(&mut B, usize),
) -> TableResult<B> {
    let stored_len = handle
        .end()
        .and_then(|end| usize::try_from(end - handle.offset()).ok())
        .ok_or(TableError::BadHandle {
            block: kind,
            offset: handle.offset(),
            size: handle.size(),
            allowed: 0..usize::MAX as u64,
        })?;
    let mut stored = zeroed(stored_len);
    source.read_exact_at(stored.as_mut(), handle.offset())?;
    let contents_len = check_crc(stored.as_ref(), kind)?.len();
    truncate(&mut stored, contents_len);
    Ok(stored)
}

/// Checks the index: a well-formed block whose keys strictly increase and whose values are handles of data
/// blocks that follow each other without overlap inside `0..data_end`. Returns where the last data block ends.
fn validate_index(index: &[u8], data_end: u64) -> TableResult<u64> {
    let block = Block::parse(index).map_err(corrupt(BlockType::Index))?;
    block
        .check_sorted(None)
        .map_err(corrupt(BlockType::Index))?;
    let mut next_offset = 0;
    for i in 0..block.len() {
        let (_, encoded) = block.entry(i).map_err(corrupt(BlockType::Index))?;
        let handle = decode_handle(i, encoded)?;
        let kind = BlockType::Data {
            offset: handle.offset(),
        };
        handle.check_within(kind, next_offset..data_end, false)?;
        next_offset = handle.end().unwrap_or(data_end);
    }
    Ok(next_offset)
}

/// Decodes index entry `entry`'s value as a block handle.
fn decode_handle(entry: usize, encoded: &[u8]) -> TableResult<BlockHandle> {
    BlockHandle::decode(encoded).ok_or(TableError::CorruptBlock {
        block: BlockType::Index,
        defect: BlockDefect::BadHandleValue {
            entry: entry as u64,
            len: encoded.len() as u64,
        },
    })
}

/// Reads, checks and opens the filter block, or the partition index of a partitioned filter, whose partitions
/// must lie between the last data block and the index; any failure makes the filter unusable (not the table).
/// Reads and opens the range filter block: a verified Range block whose code count fits the table's entries
/// (codes of distinct keys may coincide, so at most the entries, and none only for none).
fn load_range_filter<R: ReadAt>(
    source: &R,
    handle: BlockHandle,
    num_entries: u64,
) -> TableResult<FilterBlock<AlignedBlock>> {
    let bytes = read_block_into(
        source,
        handle,
        BlockType::RangeFilter,
        AlignedBlock::zeroed,
        AlignedBlock::truncate,
    )?;
    let range = FilterBlock::open(bytes)?;
    if range.kind() != FilterKind::Range {
        return Err(TableError::Filter(Error::BadParams {
            kind: Some(range.kind()),
            field: "kind (a range filter block holds a Range filter)",
            found: u64::from(range.kind().tag()),
        }));
    }
    if range.num_keys() > num_entries || (range.num_keys() == 0) != (num_entries == 0) {
        return Err(TableError::FilterKeyCount {
            table: num_entries,
            filter: range.num_keys(),
        });
    }
    Ok(range)
}

fn load_filter<R: ReadAt>(
    source: &R,
    handle: BlockHandle,
    num_entries: u64,
    data_blocks_end: u64,
) -> TableResult<LoadedFilter> {
    let bytes = read_block_into(
        source,
        handle,
        BlockType::Filter,
        AlignedBlock::zeroed,
        AlignedBlock::truncate,
    )?;
    if let Err(Error::PartitionIndex) = FilterBlock::open(bytes.as_ref()) {
        // The index stays open beside the table for every lookup: worth its search heads.
        let index = PartitionedFilter::open(bytes)?.with_search_heads();
        // As for a filter block: partitions with prefixes count them too, so only a count without is checked.
        if index.prefix_extractor_name().is_none() && index.num_keys() != num_entries {
            return Err(TableError::FilterKeyCount {
                table: num_entries,
                filter: index.num_keys(),
            });
        }
        for partition in index.partitions() {
            let kind = BlockType::FilterPartition {
                offset: partition.offset,
            };
            BlockHandle::new(partition.offset, partition.len).check_within(
                kind,
                data_blocks_end..handle.offset(),
                false,
            )?;
        }
        return Ok(LoadedFilter::Partitioned(index));
    }
    let filter = FilterBlock::open(bytes)?;
    // The filter block holds the point filter; a Range block goes in the range filter block (FORMAT.md 7.3).
    if filter.kind() == FilterKind::Range {
        return Err(TableError::Filter(Error::BadParams {
            kind: Some(filter.kind()),
            field: "kind (the filter block holds a point filter)",
            found: u64::from(filter.kind().tag()),
        }));
    }
    // Keys are strictly increasing, so every entry is one distinct hash in the filter (barring a 64-bit hash
    // collision between neighbours, which only costs this filter). A different count means the filter was built
    // for other keys and could hide some of these. (A filter with prefixes counts them too, and one of prefixes
    // only counts no whole key: their count proves nothing about the entries.)
    if filter.prefix_extractor_name().is_none() && filter.num_keys() != num_entries {
        return Err(TableError::FilterKeyCount {
            table: num_entries,
            filter: filter.num_keys(),
        });
    }
    Ok(LoadedFilter::Whole(filter))
}

/// Reads `partition` from the file and checks the table's CRC32 after it, then verifies it as the partition the
/// index names (its own CRC32 and index entry).
fn read_partition<R: ReadAt, T: AsRef<[u8]>>(
    source: &R,
    index: &PartitionedFilter<AlignedBlock>,
    partition: &Partition,
    hold: impl FnOnce(AlignedBlock) -> T,
) -> TableResult<VerifiedPartition<T>> {
    let handle = BlockHandle::new(partition.offset, partition.len);
    let kind = BlockType::FilterPartition {
        offset: partition.offset,
    };
    let bytes = read_block_into(
        source,
        handle,
        kind,
        AlignedBlock::zeroed,
        AlignedBlock::truncate,
    )?;
    Ok(index.verify_partition(partition, hold(bytes))?)
}

/// The decode error a table filter part is unusable for: the filter library's own, or "unreadable" for what the
/// table could not read or check.
fn filter_error_of(error: &TableError) -> Error {
    match error {
        TableError::Filter(e) => e.clone(),
        _ => Error::Unreadable,
    }
}

/// Loads a table's filter partitions through its cache, verifying each one read from the file, for one question
/// of the table's filters; counts the partitions it found in the cache when dropped.
struct Loader<'a, R> {
    /// Its source, partition index, cache slots and counters.
    table: &'a Table<R>,
    /// Partitions found in the cache, not counted yet: counted at once when the question is answered, in an add
    /// of its own or with the lookup's outcome ([`take_the_hit`](Self::take_the_hit)). Each add is an atomic
    /// read-modify-write, on x86 a full fence.
    hits: Cell<u64>,
}

impl<R> Loader<'_, R> {
    /// Whether the question found exactly one partition in the cache, which the caller then counts (its count is
    /// taken).
    fn take_the_hit(&self) -> bool {
        let one = self.hits.get() == 1;
        if one {
            self.hits.set(0);
        }
        one
    }
}

impl<R> Drop for Loader<'_, R> {
    fn drop(&mut self) {
        let hits = self.hits.get();
        if hits > 0 {
            add(&self.table.counters.partition_hits, hits);
        }
    }
}

impl<R: ReadAt> PartitionLoader for Loader<'_, R> {
    type Block<'b>
        = AlignedBlock
    where
        Self: 'b;
    type Error = TableError;

    /// A partition the cache does not hold: read, verified once, and kept if the budget allows.
    fn load(&self, partition: &Partition) -> TableResult<AlignedBlock> {
        // The table filter asks for partitions of its partition index only.
        let table = self.table;
        let Some(index) = table.filter.partitioned_filter() else {
            return Err(TableError::Filter(Error::Unreadable));
        };
        bump(&table.counters.partition_loads);
        let loaded = read_partition(&table.source, index, partition, |bytes| bytes)?;
        table.partitions.keep(partition.position, &loaded);
        // The filter verifies what a loader hands it (one more pass over a partition just read from storage).
        Ok(loaded.into_inner())
    }

    #[inline]
    fn ask_in_place<Q: PartitionQuestion>(&self, question: &Q) -> Option<Q::Answer> {
        let answer = self.table.partitions.ask(question.position(), question)?;
        self.hits.set(self.hits.get() + 1);
        Some(answer)
    }
}

/// Maps a block defect to a table error naming the block.
fn corrupt(block: BlockType) -> impl Fn(BlockDefect) -> TableError {
    move |defect| TableError::CorruptBlock { block, defect }
}
