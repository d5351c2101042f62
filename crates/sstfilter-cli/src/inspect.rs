//! `sstfilter inspect FILE`: explains a filter block file, a reference table (with its filter block, range filter
//! or partitioned filter), a LevelDB table or a RocksDB table (block-based, the SST files RocksDB writes).
//!
//! Every byte goes through the libraries' decoders (`Table::from_reader`, `FilterBlock::open`, `RocksDbTable`, all
//! fuzzed; Snappy's `snap`), which return typed errors on any input; this module only prints what they found.
//! LevelDB's tables are RocksDB's of `format_version` 0, so one reader serves both.

use std::borrow::Cow;
use std::fmt::Display;
use std::fs::File;
use std::io::{self, Write};
use std::path::Path;

use sstfilter::sizing::FilterModel;
use sstfilter::sizing::bits_per_key_bound;
use sstfilter::{AlignedBlock, Error, FilterBlock, KindParams, STORE_POLICY_NAME, TRAILER_LEN};
use sstfilter_leveldb::{LevelDbBloomPolicy, LevelDbFilterBlockReader};
use sstfilter_rocksdb::{
    RocksDbBlock, RocksDbBlockEntries, RocksDbBlockHandle, RocksDbChecksum, RocksDbFilterFormat,
    RocksDbStoredBlock, RocksDbTable, RocksDbTableError, RocksDbTableFilter,
};
use sstfilter_table::{
    BLOCK_TRAILER_LEN, BlockHandle, BlockType, ReadAt, TABLE_MAGIC, Table, TableError, TableOptions,
};

use crate::error::{CliResult, Context};
use crate::text::{percent, thousands};

pub(crate) fn run(out: &mut dyn Write, path: &Path) -> CliResult<()> {
    let name = path.display();
    let file = File::open(path).context(|| format!("cannot open {name}"))?;
    let metadata = file.metadata().context(|| format!("cannot read {name}"))?;
    if metadata.is_dir() {
        return Err(format!(
            "cannot inspect {name}: it is a directory (inspect reads one file: a filter block, a reference \
             table, a LevelDB table or a RocksDB table)"
        )
        .into());
    }
    let len = metadata.len();
    let magic = tail(path, &file, len, TABLE_MAGIC.len())?;
    let block_based = [RocksDbTable::MAGIC, RocksDbTable::LEGACY_MAGIC].map(u64::to_le_bytes);
    if magic == TABLE_MAGIC {
        inspect_table(out, path, file, len)
    } else if block_based.iter().any(|m| *m == magic[..]) {
        let name = path.display().to_string();
        let size = usize::try_from(len).map_err(|_| format!("{name}: too large to load"))?;
        let mut bytes = vec![0u8; size];
        read_at(path, &file, &mut bytes, 0)?;
        inspect_block_based(out, &name, &bytes)
    } else {
        inspect_block(out, path, &file, len)
    }
}

/// The last `n` bytes of the file at `path`, or all of it if it is shorter.
fn tail(path: &Path, file: &File, len: u64, n: usize) -> CliResult<Vec<u8>> {
    let n = len.min(n as u64);
    let mut bytes = vec![0u8; n as usize];
    read_at(path, file, &mut bytes, len - n)?;
    Ok(bytes)
}

/// Fills `bytes` from `offset` of the file at `path`, naming the file if that fails.
fn read_at(path: &Path, file: &File, bytes: &mut [u8], offset: u64) -> CliResult<()> {
    file.read_exact_at(bytes, offset)
        .context(|| format!("cannot read {}", path.display()))
}

fn inspect_table(out: &mut dyn Write, path: &Path, file: File, len: u64) -> CliResult<()> {
    let name = path.display();
    let table = Table::from_reader(file, len, &TableOptions::default()).map_err(|e| match e {
        TableError::Io(e) => format!("cannot read {name}: {e}"),
        e => format!("{name}: corrupt table: {}", table_error(&e)),
    })?;
    let version = if table.range_filter_handle().is_some() {
        2
    } else {
        1
    };
    writeln!(out, "{name}: reference table (format version {version})")?;
    writeln!(out, "  file size        {} bytes", thousands(len))?;
    writeln!(out, "  entries          {}", thousands(table.num_entries()))?;
    let index = table.index_handle();
    writeln!(
        out,
        "  data blocks      {} in bytes 0..{}",
        thousands(table.num_data_blocks()),
        thousands(
            table
                .range_filter_handle()
                .or(table.filter_handle())
                .unwrap_or(index)
                .offset()
        )
    )?;
    writeln!(
        out,
        "  index block      offset {}, {} bytes",
        thousands(index.offset()),
        thousands(index.size())
    )?;
    let mut problems = Vec::new();
    match table.verify() {
        Ok(()) => writeln!(
            out,
            "  checks           every block CRC ok, keys sorted, entry count matches"
        )?,
        Err(e) => {
            writeln!(out, "  checks           FAILED: {e}")?;
            problems.push(e.to_string());
        }
    }
    match (
        table.filter_handle(),
        table.table_filter().point_filter(),
        table.filter_error(),
    ) {
        (Some(handle), None, None) if table.table_filter().partitioned_filter().is_some() => {
            if let Some(problem) = explain_partitions(out, &table, handle)? {
                problems.push(problem);
            }
        }
        (Some(handle), Some(filter), _) => {
            writeln!(
                out,
                "filter block at offset {} (CRC ok, keys match the table):",
                thousands(handle.offset())
            )?;
            explain(out, filter)?;
        }
        (Some(handle), None, error) => {
            let error = error.map_or_else(|| "unknown".to_owned(), ToString::to_string);
            writeln!(
                out,
                "filter block at offset {}, {} bytes: UNUSABLE ({error}); lookups treat this table as \"may contain\"",
                thousands(handle.offset()),
                thousands(handle.size())
            )?;
            problems.push(error);
        }
        (None, ..) => writeln!(
            out,
            "no filter block: the table was built without a filter policy, so every lookup reads a data block"
        )?,
    }
    match (
        table.range_filter_handle(),
        table.table_filter().range_filter(),
        table.range_filter_error(),
    ) {
        (Some(handle), Some(range), _) => {
            writeln!(
                out,
                "range filter block at offset {} (CRC ok, keys fit the table):",
                thousands(handle.offset())
            )?;
            explain(out, range)?;
        }
        (Some(handle), None, error) => {
            let error = error.map_or_else(|| "unknown".to_owned(), ToString::to_string);
            writeln!(
                out,
                "range filter block at offset {}, {} bytes: UNUSABLE ({error}); range scans read this table",
                thousands(handle.offset()),
                thousands(handle.size())
            )?;
            problems.push(error);
        }
        (None, ..) => {}
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!("{name}: {}", problems.join("; ")).into())
    }
}

/// The decoder's error in words. The index, filter and range filter blocks must each end where the next part
/// begins; one that lies where it may but ends before or after that point is the mark of a file longer or
/// shorter than its footer says (the footer's offsets are absolute, so bytes prepended to a table shift every
/// block after them): the rule and the gap are spelled out.
fn table_error(error: &TableError) -> String {
    if let TableError::BadHandle {
        block,
        offset,
        size,
        allowed,
    } = error
    {
        let next = match block {
            BlockType::Index => Some("the footer begins"),
            BlockType::Filter => Some("the index block begins"),
            BlockType::RangeFilter => Some("the next block begins"),
            _ => None,
        };
        let end = offset
            .checked_add(*size)
            .and_then(|end| end.checked_add(BLOCK_TRAILER_LEN));
        if let (Some(next), Some(end)) = (next, end.filter(|_| *offset >= allowed.start)) {
            let gap = |n: u64, more: &str| {
                let bytes = if n == 1 { "byte" } else { "bytes" };
                format!("{n} {bytes} {more}")
            };
            let why = if end < allowed.end {
                gap(
                    allowed.end - end,
                    "that its footer does not account for (added before the table, or between its blocks)",
                )
            } else {
                gap(
                    end - allowed.end,
                    "fewer than its footer counts (cut out of it)",
                )
            };
            return format!(
                "the {block} (offset {offset}, {size} bytes and a {BLOCK_TRAILER_LEN}-byte CRC) must end where \
                 {next}, at byte {}, but ends at byte {end}: the file holds {why}",
                allowed.end
            );
        }
    }
    error.to_string()
}

/// Explains a partitioned filter: its index, and every partition read and checked. Returns the first problem.
fn explain_partitions<R: ReadAt>(
    out: &mut dyn Write,
    table: &Table<R>,
    handle: BlockHandle,
) -> io::Result<Option<String>> {
    let Some(index) = table.table_filter().partitioned_filter() else {
        return Ok(None);
    };
    let keys = index.num_keys();
    writeln!(
        out,
        "partitioned filter: index at offset {}, {} bytes (CRC ok, {} keys match the table)",
        thousands(handle.offset()),
        thousands(handle.size()),
        thousands(keys)
    )?;
    let partitions: Vec<_> = index.partitions().collect();
    let mut lens: Vec<u64> = partitions.iter().map(|p| p.len).collect();
    let mut counts: Vec<u64> = partitions.iter().map(|p| p.num_keys).collect();
    let total: u64 = lens.iter().sum();
    writeln!(
        out,
        "  partitions       {}",
        thousands(partitions.len() as u64)
    )?;
    let (low, middle, high) = spread(&mut lens);
    writeln!(
        out,
        "  partition bytes  {} in all; each min {low} / median {middle} / max {high}",
        thousands(total)
    )?;
    let (low, middle, high) = spread(&mut counts);
    writeln!(
        out,
        "  keys/partition   min {low} / median {middle} / max {high}"
    )?;
    if keys > 0 {
        let per_key = |bytes: u64| bytes as f64 * 8.0 / keys as f64;
        writeln!(
            out,
            "  bits/key         {:.2} in partitions + {:.2} for the index (kept in memory)",
            per_key(total),
            per_key(handle.size())
        )?;
    }
    let mut kinds = std::collections::BTreeMap::new();
    for position in 0..partitions.len() {
        match table.read_filter_partition(position) {
            Some(Ok(filter)) => {
                *kinds
                    .entry(filter.filter().kind().to_string())
                    .or_insert(0u64) += 1
            }
            Some(Err(e)) => {
                let problem = format!("filter partition {position}: {e}");
                writeln!(
                    out,
                    "  partitions       UNUSABLE: {problem}; its lookups read a data block"
                )?;
                return Ok(Some(problem));
            }
            None => {}
        }
    }
    let kinds: Vec<String> = kinds.iter().map(|(k, n)| format!("{k} × {n}")).collect();
    writeln!(out, "  kinds            {}", kinds.join(", "))?;
    writeln!(
        out,
        "  checks           every partition's CRC ok and as its index entry says"
    )?;
    if let Some(first) = table.read_filter_partition(0).and_then(Result::ok) {
        writeln!(out, "partition 0:")?;
        explain(out, first.filter())?;
    }
    Ok(None)
}

/// Minimum, median and maximum, as text.
fn spread(values: &mut [u64]) -> (String, String, String) {
    values.sort_unstable();
    let at = |i: usize| {
        values
            .get(i)
            .map_or_else(|| "-".to_owned(), |v| thousands(*v))
    };
    (
        at(0),
        at(values.len() / 2),
        at(values.len().saturating_sub(1)),
    )
}

/// Explains a block-based table, LevelDB's or RocksDB's. The footer cannot tell them apart: LevelDB's table is
/// RocksDB's `format_version` 0, magic number included. The meta-index can: RocksDB writes a properties block into
/// every table, LevelDB never does.
fn inspect_block_based(out: &mut dyn Write, name: &str, bytes: &[u8]) -> CliResult<()> {
    let legacy = bytes.ends_with(&RocksDbTable::LEGACY_MAGIC.to_le_bytes());
    let unreadable = |e: RocksDbTableError| {
        if legacy {
            format!("{name}: corrupt LevelDB table (or RocksDB table of format_version 0): {e}")
        } else {
            format!("{name}: RocksDB table: {e}")
        }
    };
    let table = RocksDbTable::open(bytes).map_err(unreadable)?;
    let properties = table.properties_handle().map_err(unreadable)?;
    if table.format_version() == 0 && properties.is_none() {
        inspect_leveldb(out, name, &table, bytes.len())
    } else {
        inspect_rocksdb(out, name, &table, bytes.len())
    }
}

/// Explains a LevelDB table (LevelDB, rusty-leveldb): its blocks' CRCs, its filter policy, and its per-2 KiB
/// filters with their keys, bits/key, probes and expected false-positive rate.
fn inspect_leveldb(
    out: &mut dyn Write,
    name: &str,
    table: &RocksDbTable<'_>,
    len: usize,
) -> CliResult<()> {
    let corrupt = |e: &dyn Display| leveldb_corrupt(name, e);
    // The index and filter blocks must be read: a compression inspect does not decompress is an error there.
    let required = |handle: RocksDbBlockHandle, block: RocksDbBlock| {
        leveldb_block(table, handle, block, name)?.ok_or_else(|| {
            format!("{name}: the {block} is compressed with a type inspect does not decompress")
        })
    };
    let meta: Vec<_> = table
        .meta_blocks()
        .collect::<Result<_, _>>()
        .map_err(|e| corrupt(&e))?;
    let index_handle = table
        .index_handle()
        .ok_or_else(|| corrupt(&"no index block in its footer"))?;
    let index = required(index_handle, RocksDbBlock::Index)?;
    // Every data block's CRC, and its entry count.
    let mut blocks: Vec<(u64, Option<u64>)> = Vec::new();
    for entry in RocksDbBlockEntries::new(&index, RocksDbBlock::Index, index_handle.offset) {
        let (_, value) = entry.map_err(|e| corrupt(&e))?;
        let handle = RocksDbBlockHandle::decode(value)
            .ok_or_else(|| corrupt(&"index block: a bad data block handle"))?;
        // A block of a compression this reader does not know is checked (its CRC) but not counted.
        let entries = match leveldb_block(table, handle, RocksDbBlock::Data, name)? {
            Some(contents) => Some(
                RocksDbBlockEntries::new(&contents, RocksDbBlock::Data, handle.offset)
                    .map(|entry| entry.map(|_| 1))
                    .sum::<Result<u64, _>>()
                    .map_err(|e| corrupt(&e))?,
            ),
            None => None,
        };
        blocks.push((handle.offset, entries));
    }
    let entries: Option<u64> = blocks.iter().map(|(_, n)| *n).sum();
    writeln!(out, "{name}: LevelDB table")?;
    writeln!(out, "  file size        {} bytes", thousands(len as u64))?;
    writeln!(out, "  data blocks      {}", thousands(blocks.len() as u64))?;
    writeln!(
        out,
        "  entries          {}",
        entries.map_or_else(
            || "not counted (compressed data blocks)".to_owned(),
            thousands
        )
    )?;
    writeln!(
        out,
        "  checks           every block's CRC32C ok (data, index, metaindex, filter)"
    )?;
    let Some(filter_meta) = meta.iter().find(|m| m.name.starts_with(b"filter.")) else {
        writeln!(
            out,
            "no filter block: the table was written without a filter policy"
        )?;
        return Ok(());
    };
    let policy =
        String::from_utf8_lossy(filter_meta.name.get(b"filter.".len()..).unwrap_or_default());
    let handle = filter_meta.handle;
    let filter_block = required(handle, RocksDbBlock::BlockBasedFilter)?;
    let reader = LevelDbFilterBlockReader::new(&filter_block[..], LevelDbBloomPolicy::new(10));
    let base_lg = reader
        .base_lg()
        .ok_or_else(|| corrupt(&"filter block: malformed footer"))?;
    writeln!(
        out,
        "filter block at offset {}, {} bytes, policy {policy} (metaindex key filter.{policy})",
        thousands(handle.offset),
        thousands(handle.size)
    )?;
    // Keys per filter: the entries of the data blocks whose offset falls in its 2^base_lg-byte range.
    let mut keys = vec![0u64; reader.num_filters()];
    for &(offset, entries) in &blocks {
        let slot = usize::try_from(offset >> base_lg.min(63)).ok();
        if let (Some(slot), Some(n)) = (slot.and_then(|s| keys.get_mut(s)), entries) {
            *slot += n;
        }
    }
    let mut lens: Vec<u64> = Vec::new();
    let (mut probes, mut kinds) = (Vec::new(), std::collections::BTreeMap::new());
    let (mut bits, mut counted_keys, mut weighted_fpr) = (0u64, 0u64, 0.0);
    for (i, &n) in keys.iter().enumerate() {
        let Some(filter) = reader.filter(i) else {
            continue;
        };
        lens.push(filter.len() as u64);
        if filter.is_empty() {
            continue;
        }
        if policy == STORE_POLICY_NAME {
            // Each filter is an sstfilter block.
            if let Ok(block) = FilterBlock::open(filter) {
                *kinds.entry(block.kind().to_string()).or_insert(0u64) += 1;
                weighted_fpr += block.expected_fpr() * n as f64;
                bits += (filter.len() as u64) * 8;
                counted_keys += n;
            }
            continue;
        }
        // LevelDB's Bloom layout (leveldb.BuiltinBloomFilter2, sstfilter.Bloom64.v1): the bits, then k.
        let k = u32::from(filter.last().copied().unwrap_or(0));
        probes.push(u64::from(k));
        let filter_bits = (filter.len() as u64 - 1) * 8;
        if n > 0 {
            let per_key = filter_bits as f64 / n as f64;
            weighted_fpr += FilterModel::StandardBloom
                .fpr_with_probes(per_key, k)
                .unwrap_or(1.0)
                * n as f64;
            bits += filter_bits;
            counted_keys += n;
        }
    }
    let (low, middle, high) = spread(&mut lens);
    writeln!(
        out,
        "  filters          {} per-{} B filters (base_lg {base_lg}); bytes each min {low} / median {middle} / max {high}",
        thousands(reader.num_filters() as u64),
        1u64 << base_lg.min(63)
    )?;
    if !probes.is_empty() {
        let (low, _, high) = spread(&mut probes);
        writeln!(
            out,
            "  probes           {low}..={high} (each filter's last byte)"
        )?;
    }
    if !kinds.is_empty() {
        let kinds: Vec<String> = kinds.iter().map(|(k, n)| format!("{k} × {n}")).collect();
        writeln!(out, "  kinds            {}", kinds.join(", "))?;
    }
    if counted_keys > 0 {
        writeln!(
            out,
            "  bits/key         {:.2} over {} keys",
            bits as f64 / counted_keys as f64,
            thousands(counted_keys)
        )?;
        let model = if policy == STORE_POLICY_NAME {
            "each block's own"
        } else {
            "standard Bloom formula with each filter's probes"
        };
        writeln!(
            out,
            "  expected FPR     {} ({model}, weighted by keys)",
            percent(weighted_fpr / counted_keys as f64)
        )?;
    } else {
        writeln!(
            out,
            "  bits/key         not known: no key counted (compressed data blocks, or an empty table)"
        )?;
    }
    Ok(())
}

/// The contents of a LevelDB table's block, its CRC32C verified: as stored, or decompressed from Snappy (type 1,
/// LevelDB's default); `None` for another compression, which inspect does not decompress.
fn leveldb_block<'a>(
    table: &RocksDbTable<'a>,
    handle: RocksDbBlockHandle,
    block: RocksDbBlock,
    name: &str,
) -> Result<Option<Cow<'a, [u8]>>, String> {
    let stored = table
        .read_block(handle, block)
        .map_err(|e| leveldb_corrupt(name, &e))?;
    match stored {
        RocksDbStoredBlock {
            contents,
            compression: 0,
        } => Ok(Some(Cow::Borrowed(contents))),
        RocksDbStoredBlock {
            contents,
            compression: 1,
        } => {
            let contents = snappy(contents).map_err(|e| {
                leveldb_corrupt(name, &format!("{block} at offset {}: {e}", handle.offset))
            })?;
            Ok(Some(Cow::Owned(contents)))
        }
        _ => Ok(None),
    }
}

/// The message of an error in the LevelDB table `name`.
fn leveldb_corrupt(name: &str, error: &dyn Display) -> String {
    format!("{name}: corrupt LevelDB table: {error}")
}

/// Snappy's densest element, a copy with a 2-byte offset, takes 3 bytes and yields at most 64: no valid input
/// expands further than this factor (its length varint included).
const MAX_SNAPPY_EXPANSION: usize = 22;

/// Decompresses Snappy's raw format (LevelDB's and RocksDB's compression type 1) with the `snap` crate, once the
/// length it declares is one its input can expand to: a damaged length cannot make it allocate more than
/// [`MAX_SNAPPY_EXPANSION`] times the input.
fn snappy(input: &[u8]) -> Result<Vec<u8>, String> {
    let malformed = |e: snap::Error| format!("malformed Snappy data ({e})");
    let declared = snap::raw::decompress_len(input).map_err(malformed)?;
    if declared > input.len().saturating_mul(MAX_SNAPPY_EXPANSION) {
        return Err(format!(
            "malformed Snappy data (it declares {declared} bytes, more than its {} bytes expand to)",
            input.len()
        ));
    }
    snap::raw::Decoder::new()
        .decompress_vec(input)
        .map_err(malformed)
}

/// Explains a RocksDB table: its footer and meta blocks, and its filter (full or partitioned) as RocksDB reads it,
/// every block read here checksum-verified where the table has checksums. Data blocks are not read (nor
/// decompressed).
fn inspect_rocksdb(
    out: &mut dyn Write,
    name: &str,
    table: &RocksDbTable<'_>,
    len: usize,
) -> CliResult<()> {
    let corrupt = |e: RocksDbTableError| format!("{name}: RocksDB table: {e}");
    let version = table.format_version();
    let legacy = if version == 0 {
        ": LevelDB's footer and magic number, RocksDB's properties"
    } else {
        ""
    };
    writeln!(
        out,
        "{name}: RocksDB table (block-based, format_version {version}{legacy})"
    )?;
    writeln!(out, "  file size        {} bytes", thousands(len as u64))?;
    match table.checksum() {
        RocksDbChecksum::None => writeln!(
            out,
            "  checksums        no checksums: nothing could be verified (kNoChecksum)"
        )?,
        checksum => writeln!(
            out,
            "  checksums        {checksum:?}; verified for every block read here (meta-index, properties, filter)"
        )?,
    }
    for meta in table.meta_blocks() {
        let meta = meta.map_err(corrupt)?;
        writeln!(
            out,
            "  meta block       {} at offset {}, {} bytes",
            String::from_utf8_lossy(&meta.name),
            thousands(meta.handle.offset),
            thousands(meta.handle.size)
        )?;
    }
    match table.filter().map_err(corrupt)? {
        None => writeln!(
            out,
            "no filter: the table was written without a filter policy (or only with the per-block filter \
             RocksDB no longer reads)"
        )?,
        Some(RocksDbTableFilter::Full {
            policy,
            filter,
            whole_keys,
            ..
        }) => {
            writeln!(
                out,
                "full filter, policy {policy}, {}",
                keys_held(whole_keys)
            )?;
            writeln!(
                out,
                "  filter           {}",
                rocksdb_format(filter.format())
            )?;
        }
        Some(RocksDbTableFilter::Partitioned(partitioned)) => {
            writeln!(
                out,
                "partitioned filter, policy {}, {}, {} partitions (separators are {})",
                partitioned.policy(),
                keys_held(partitioned.whole_keys()),
                thousands(partitioned.len() as u64),
                if partitioned.separators_are_internal_keys() {
                    "internal keys"
                } else {
                    "user keys"
                }
            )?;
            let mut formats = std::collections::BTreeMap::new();
            let mut sizes = Vec::new();
            for partition in partitioned.partitions() {
                let filter = partition.filter.map_err(corrupt)?;
                let kind = match filter.format() {
                    RocksDbFilterFormat::FastLocalBloom { num_probes, .. } => {
                        format!("FastLocalBloom, {num_probes} probes")
                    }
                    RocksDbFilterFormat::Ribbon { .. } => "Standard128Ribbon".to_owned(),
                    other => rocksdb_format(other),
                };
                *formats.entry(kind).or_insert(0u64) += 1;
                sizes.push(partition.handle.size);
            }
            let formats: Vec<String> = formats.iter().map(|(k, n)| format!("{k} × {n}")).collect();
            writeln!(out, "  partitions       {}", formats.join(", "))?;
            let (low, middle, high) = spread(&mut sizes);
            writeln!(
                out,
                "  partition bytes  min {low} / median {middle} / max {high}"
            )?;
        }
    }
    Ok(())
}

/// What a RocksDB filter holds, as its `whole_key_filtering` says.
fn keys_held(whole_keys: bool) -> &'static str {
    if whole_keys {
        "whole keys"
    } else {
        "key prefixes only (every whole-key question may match)"
    }
}

/// One line on a RocksDB filter block's format.
fn rocksdb_format(format: RocksDbFilterFormat) -> String {
    match format {
        RocksDbFilterFormat::Empty => "empty: the filter of no keys (no key matches)".to_owned(),
        RocksDbFilterFormat::FastLocalBloom { num_probes, len } => format!(
            "FastLocalBloom, {num_probes} probes, {} bytes: {} lines of 64 bytes",
            thousands(u64::from(len)),
            thousands(u64::from(len / 64))
        ),
        RocksDbFilterFormat::Ribbon {
            seed,
            num_blocks,
            len,
        } => format!(
            "Standard128Ribbon, {} bytes, {} blocks of 128 slots, seed {seed}",
            thousands(u64::from(len)),
            thousands(u64::from(num_blocks))
        ),
        RocksDbFilterFormat::LegacyBloom {
            num_probes,
            num_lines,
            line_bytes,
        } => format!(
            "legacy Bloom, {num_probes} probes, {} lines of {line_bytes} bytes",
            thousands(u64::from(num_lines))
        ),
        RocksDbFilterFormat::MatchAll { reason } => format!("every key may match: {reason}"),
        other => format!("{other:?}"),
    }
}

fn inspect_block(out: &mut dyn Write, path: &Path, file: &File, len: u64) -> CliResult<()> {
    let name = path.display();
    // Check the trailer's magic before loading the file, so that a large file of another kind is rejected
    // without reading it; the decoder itself produces the error.
    let trailer = tail(path, file, len, TRAILER_LEN)?;
    if let Err(error @ (Error::TooShort { .. } | Error::BadMagic { .. })) =
        FilterBlock::open(&trailer[..])
    {
        return Err(format!(
            "{name}: neither a reference table (no table magic at its end) nor a filter block ({error})"
        )
        .into());
    }
    let size = usize::try_from(len).map_err(|_| format!("{name}: too large to load"))?;
    let mut bytes = AlignedBlock::zeroed(size);
    read_at(path, file, bytes.as_mut(), 0)?;
    let filter =
        FilterBlock::open(bytes).map_err(|e| format!("{name}: corrupt filter block: {e}"))?;
    writeln!(out, "{name}: filter block")?;
    explain(out, &filter)?;
    filter
        .verify()
        .map_err(|e| format!("{name}: corrupt filter block: {e}"))?;
    writeln!(out, "  CRC32            ok")?;
    Ok(())
}

/// Prints what a filter block's trailer says.
fn explain<B: AsRef<[u8]>>(out: &mut dyn Write, filter: &FilterBlock<B>) -> io::Result<()> {
    let block_len = filter.as_bytes().len();
    let fpr = filter.expected_fpr();
    writeln!(out, "  format version   {}", filter.format_version())?;
    writeln!(
        out,
        "  kind             {} (tag {})",
        filter.kind(),
        filter.kind().tag()
    )?;
    writeln!(out, "  parameters       {}", filter.params())?;
    writeln!(out, "  keys             {}", thousands(filter.num_keys()))?;
    match (filter.prefix_extractor_name(), filter.holds_whole_keys()) {
        (None, _) => writeln!(out, "  prefixes         none (whole keys only)")?,
        (Some(name), true) => writeln!(
            out,
            "  prefixes         {name}, beside whole keys (counted among the keys)"
        )?,
        (Some(name), false) => {
            writeln!(
                out,
                "  prefixes         {name}, without whole keys (point lookups go through the prefix)"
            )?;
        }
    }
    writeln!(
        out,
        "  size             {} bytes: payload {} + {TRAILER_LEN}-byte trailer",
        thousands(block_len as u64),
        thousands(block_len.saturating_sub(TRAILER_LEN) as u64)
    )?;
    writeln!(
        out,
        "  bits/key         {:.2} (payload)",
        filter.bits_per_key()
    )?;
    if filter.num_keys() == 0 {
        writeln!(
            out,
            "  expected FPR     0 (an empty filter rejects every key)"
        )?;
    } else if let KindParams::Range(p) = filter.params() {
        writeln!(
            out,
            "  expected FPR     {} for a point, {} for an empty range of 2^{} projected values (bounds n·ℓ/r)",
            percent(fpr),
            percent(p.range_fpr(filter.num_keys(), p.max_range_len())),
            p.range_log2()
        )?;
    } else {
        writeln!(
            out,
            "  expected FPR     {} (the information-theoretic bound needs {:.2} bits/key for it: {:+.1} %)",
            percent(fpr),
            bits_per_key_bound(fpr),
            (filter.bits_per_key() / bits_per_key_bound(fpr) - 1.0) * 100.0
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snappy_decompresses_and_refuses_lengths_its_input_cannot_hold() {
        let data: Vec<u8> = b"user:00000042".repeat(100);
        let compressed = snap::raw::Encoder::new().compress_vec(&data).unwrap();
        assert!(compressed.len() < data.len() / 4);
        assert_eq!(snappy(&compressed).unwrap(), data);
        // A run of one byte, compressed as densely as Snappy can: within the bound.
        let run = vec![7u8; 1 << 16];
        assert_eq!(
            snappy(&snap::raw::Encoder::new().compress_vec(&run).unwrap()).unwrap(),
            run
        );
        // A length varint of 2^32 - 1 before 6 bytes: refused before anything is allocated.
        let err = snappy(&[0xff, 0xff, 0xff, 0xff, 0x0f, 0]).unwrap_err();
        assert!(err.contains("declares 4294967295 bytes"), "{err}");
        for len in 0..compressed.len() {
            assert!(
                snappy(&compressed[..len]).is_err(),
                "a truncation at {len} decoded"
            );
        }
    }

    /// Arbitrary bytes ending in either magic number: every step answers with text or a message, never a panic.
    #[test]
    fn arbitrary_block_based_files_never_panic() {
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
            let magic = if round % 2 == 0 {
                RocksDbTable::LEGACY_MAGIC
            } else {
                RocksDbTable::MAGIC
            };
            bytes.extend_from_slice(&magic.to_le_bytes());
            let _ = inspect_block_based(&mut Vec::new(), "arbitrary", &bytes);
        }
    }
}
