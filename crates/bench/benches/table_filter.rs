//! Table filters on the reference table, every combination in one run: filter bytes per key, and the table reads
//! per absent point lookup, per empty prefix scan and per empty short range scan, against a point filter alone and
//! no filter. Not a criterion benchmark (the counts are deterministic; building the tables takes seconds): it
//! prints Markdown tables for BENCHMARKS.md ("Table filters").
//!
//! `cargo bench -p sstfilter-bench --bench table_filter` (`SSTFILTER_BIG_KEYS=0` skips the one big table)
//!
//! **An LSM of 10 tables** of about 10^5 keys each (`sstfilter_stores::Tenant`: of 4000 tenants `t{t:05}/`, a
//! quarter have 90 keys in every table, a quarter 90 keys in one table, half none; a tenant's ids are spread over
//! the tables in turn, every digit taking every value, with a gap of 10 ids after each), 16-byte values, 4 KiB data
//! blocks. Questions, each asked of every table: 10,000 absent keys of present tenants (inside a gap), the 2000
//! absent tenants' prefixes, and 10,000 ranges of 10 ids inside present tenants (a gap: empty in every table). "Reads" counts the tables a question
//! was not ruled out for: a data-block read for a lookup, the table's scan for a scan; the sum over the 10
//! tables, per question.
//!
//! **One table** of `SSTFILTER_BIG_KEYS` keys (default 10^7; 1 table, the same key scheme with 500 keys per present
//! tenant), partitioned at 4 KiB cut at data blocks, with a partition cache of 10 % of the filter bytes: the same
//! questions, plus the partition loads each needed.
//!
//! **A range filter per table or per partition**: one table of 10^6 keys, its Range filter whole or one per run of
//! 3277 keys (what a 4 KiB point partition holds at 10 bits/key), asked 100,000 empty ranges of 10 ids.

use std::ops::Bound;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use sstfilter::{
    BlockedBloomPolicy, DelimitedPrefix, FilterBlock, PartitionCuts, PrefixExtractor,
    RangeFilterBuilder, RangePolicy, TableFilterOptions,
};
use sstfilter_bench::env_u64;
use sstfilter_stores::{Tenant, tenant_prefix};
use sstfilter_table::{PartitionCache, Table, TableBuilder, TableOptions, TableStats};

const BITS_PER_KEY: f64 = 10.0;
/// Range scans of up to 2^10 projected values, at most 1 % of empty ones read.
const RANGE_LOG2: u32 = 10;
const RANGE_FPR: f64 = 0.01;

/// The key of tenant `t` with id `id`.
fn key(t: u64, id: u64) -> Vec<u8> {
    let mut key = tenant_prefix(t);
    key.extend_from_slice(format!("{id:08}").as_bytes());
    key
}

/// The id stored for slot `b`: `20 b + b mod 10`, so every digit takes every value, and `20 b + 10 ..= 20 b + 19`
/// holds no key of any table.
fn stored_id(b: u64) -> u64 {
    b * 20 + b % 10
}

/// The keys of table `table` of `tables`, sorted: `per_tenant` keys of every tenant present there, in slots
/// `j · tables + table`.
fn table_keys(
    table: u64,
    tables: u64,
    tenants: u64,
    per_tenant: u64,
) -> impl Iterator<Item = Vec<u8>> {
    (0..tenants)
        .filter(move |&t| Tenant::of(t, tables).in_table(table))
        .flat_map(move |t| (0..per_tenant).map(move |j| key(t, stored_id(j * tables + table))))
}

/// An LSM's shape and the questions asked of it.
struct Shape {
    tables: u64,
    tenants: u64,
    per_tenant: u64,
    questions: u64,
}

impl Shape {
    /// A tenant present in every table (of `tables` > 1) or in the only one.
    fn present_tenant(&self, i: u64) -> u64 {
        4 * (i % (self.tenants / 4))
    }

    /// The start of an empty gap among a present tenant's keys: `20 b + 10` for a slot `b` that every table's
    /// keys surround (so `+ 5` and `+ 0 ..= + 9` hold no key).
    fn gap(&self, i: u64) -> u64 {
        (i.wrapping_mul(7919) % (self.per_tenant * self.tables - 1)) * 20 + 10
    }
}

/// One configuration's figures.
struct Row {
    name: &'static str,
    bits_per_key: f64,
    point_reads: f64,
    scan_reads: f64,
    range_reads: f64,
    /// Partition loads and cache hits per absent lookup and per empty prefix scan (partitioned filters).
    loads: Option<(f64, f64)>,
    build_secs: f64,
}

fn configurations() -> Vec<(&'static str, Option<TableFilterOptions>)> {
    let tenants: Arc<dyn PrefixExtractor> = Arc::new(DelimitedPrefix::new(b'/'));
    let point = || TableFilterOptions::new().point(BlockedBloomPolicy::new(BITS_PER_KEY).unwrap());
    let range = RangePolicy::new(1 << RANGE_LOG2, RANGE_FPR).unwrap();
    let parts = |o: TableFilterOptions| o.partitioned(4096, PartitionCuts::AtDataBlocks);
    let prefixes = |whole_keys| point().prefixes(tenants.clone(), whole_keys);
    let all = || -> Result<_, sstfilter::UsageError> {
        Ok(vec![
            ("no filter", None),
            ("point (the baseline)", Some(point())),
            ("point + prefixes", Some(prefixes(true)?)),
            ("prefixes only", Some(prefixes(false)?)),
            ("point + range", Some(point().range(range)?)),
            ("range only", Some(TableFilterOptions::new().range(range)?)),
            (
                "prefixes only + range",
                Some(prefixes(false)?.range(range)?),
            ),
            (
                "point + prefixes + range",
                Some(prefixes(true)?.range(range)?),
            ),
            ("partitioned", Some(parts(point())?)),
            ("partitioned + prefixes", Some(parts(prefixes(true)?)?)),
            ("partitioned + range", Some(parts(point().range(range)?)?)),
            (
                "partitioned + prefixes + range",
                Some(parts(prefixes(true)?.range(range)?)?),
            ),
        ])
    };
    all().expect("every configuration is valid")
}

/// The filter bytes of a table: its point block or index, its partitions and its range block.
fn filter_bytes(table: &Table) -> u64 {
    let handles = table.filter_handle().map_or(0, |h| h.size())
        + table.range_filter_handle().map_or(0, |h| h.size());
    let partitions: u64 = table
        .table_filter()
        .partitioned_filter()
        .map_or(0, |index| index.partitions().map(|p| p.len).sum());
    handles + partitions
}

fn run(shape: &Shape, name: &'static str, filters: Option<TableFilterOptions>, dir: &Path) -> Row {
    let options = TableOptions::default().filters(filters.unwrap_or_default());
    let started = Instant::now();
    let mut paths = Vec::new();
    let mut keys = 0u64;
    for t in 0..shape.tables {
        let path = dir.join(format!("{t:03}.sst"));
        let mut builder = TableBuilder::create(&path, &options).expect("create");
        for k in table_keys(t, shape.tables, shape.tenants, shape.per_tenant) {
            builder.add(&k, &k[..16.min(k.len())]).expect("add");
            keys += 1;
        }
        builder.finish().expect("finish");
        paths.push(path);
    }
    let build_secs = started.elapsed().as_secs_f64();
    let mut opened: Vec<Table> = paths
        .iter()
        .map(|p| Table::open_with_cache(p, &options, PartitionCache::new(0)).expect("open"))
        .collect();
    let bytes: u64 = opened.iter().map(filter_bytes).sum();
    // A cache of a tenth of the filter bytes (partitioned filters only; the others keep their filter whole).
    let cache = PartitionCache::new((bytes / 10) as usize);
    opened = paths
        .iter()
        .map(|p| Table::open_with_cache(p, &options, cache.clone()).expect("open"))
        .collect();
    let total = |tables: &[Table]| {
        tables.iter().fold(TableStats::default(), |mut s, t| {
            s += t.stats();
            s
        })
    };

    let q = shape.questions;
    for i in 0..q {
        let absent = key(shape.present_tenant(i), shape.gap(i) + 5);
        for table in &opened {
            assert!(table.get(&absent).expect("get").is_none());
        }
    }
    let after_points = total(&opened);
    let point_loads = after_points.partition_loads + after_points.partition_cache_hits;
    let absent_tenants: Vec<u64> = (0..shape.tenants)
        .filter(|&t| Tenant::of(t, shape.tables) == Tenant::Absent)
        .collect();
    for &t in &absent_tenants {
        for table in &opened {
            assert!(
                table
                    .scan_prefix(&tenant_prefix(t))
                    .expect("scan")
                    .is_empty()
            );
        }
    }
    let after_scans = total(&opened);
    let scan_loads = after_scans.partition_loads + after_scans.partition_cache_hits - point_loads;
    for i in 0..q {
        let (t, gap) = (shape.present_tenant(i), shape.gap(i));
        let (lower, upper) = (key(t, gap), key(t, gap + 9));
        for table in &opened {
            let found = table
                .scan_range(Bound::Included(&lower), Bound::Included(&upper))
                .expect("scan");
            assert!(found.is_empty());
        }
    }
    let all = total(&opened);
    let scans = all.prefix_scans as f64;
    let ranges = all.range_scans as f64;
    Row {
        name,
        bits_per_key: bytes as f64 * 8.0 / keys as f64,
        point_reads: after_points.data_block_reads as f64 / q as f64,
        scan_reads: (scans - all.prefix_scans_skipped as f64) / absent_tenants.len() as f64,
        range_reads: (ranges - all.range_scans_skipped as f64) / q as f64,
        loads: opened
            .iter()
            .any(|t| t.table_filter().partitioned_filter().is_some())
            .then(|| {
                (
                    point_loads as f64 / q as f64,
                    scan_loads as f64 / absent_tenants.len() as f64,
                )
            }),
        build_secs,
    }
}

fn print(title: &str, rows: &[Row]) {
    println!("\n{title}\n");
    println!(
        "| configuration | filter bits/key | reads per absent lookup | reads per empty prefix scan | reads per empty range scan | partitions asked per lookup / per scan | build (s) |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|");
    for r in rows {
        println!(
            "| {} | {:.2} | {:.4} | {:.4} | {:.4} | {} | {:.1} |",
            r.name,
            r.bits_per_key,
            r.point_reads,
            r.scan_reads,
            r.range_reads,
            r.loads
                .map_or("-".to_owned(), |(l, s)| format!("{l:.2} / {s:.2}")),
            r.build_secs
        );
    }
}

/// A range filter per table against one per partition (the keys of each ~4 KiB point partition, ~3277 keys at
/// 10 bits/key): filter bits per key, and the rate on the empty ranges of `shape`, each asked of the one range
/// filter (per table) or of the partition whose key range holds it (per partition).
fn range_per_partition(shape: &Shape) {
    const PARTITION_KEYS: usize = 3277;
    let policy = RangePolicy::new(1 << RANGE_LOG2, RANGE_FPR).unwrap();
    let keys: Vec<Vec<u8>> = table_keys(0, 1, shape.tenants, shape.per_tenant).collect();
    let build = |keys: &[Vec<u8>]| {
        let mut builder = RangeFilterBuilder::new(policy);
        for k in keys {
            builder.add_key(k).expect("sorted");
        }
        builder.finish()
    };
    let whole = build(&keys);
    let chunks: Vec<(&Vec<u8>, Vec<u8>)> = keys
        .chunks(PARTITION_KEYS)
        .map(|chunk| (chunk.last().expect("a chunk"), build(chunk)))
        .collect();
    let whole_filter = FilterBlock::open(&whole[..]).expect("opens");
    let parts: Vec<(&Vec<u8>, FilterBlock<&[u8]>)> = chunks
        .iter()
        .map(|(last, block)| (*last, FilterBlock::open(&block[..]).expect("opens")))
        .collect();
    let (mut whole_fp, mut part_fp, mut crossing) = (0u64, 0u64, 0u64);
    for i in 0..shape.questions {
        let (t, gap) = (shape.present_tenant(i), shape.gap(i));
        let (lower, upper) = (key(t, gap), key(t, gap + 9));
        let (lo, hi) = (Bound::Included(&lower[..]), Bound::Included(&upper[..]));
        whole_fp += u64::from(whole_filter.may_contain_range(lo, hi).must_read());
        // The partitions whose key ranges the range meets: from the first whose last key is >= lower.
        let first = parts.partition_point(|(last, _)| last.as_slice() < lower.as_slice());
        let last = parts.partition_point(|(last, _)| last.as_slice() < upper.as_slice());
        crossing += u64::from(last > first);
        part_fp += u64::from(
            parts[first..=last.min(parts.len() - 1)]
                .iter()
                .any(|(_, f)| f.may_contain_range(lo, hi).must_read()),
        );
    }
    let bits = |bytes: usize| bytes as f64 * 8.0 / keys.len() as f64;
    let q = shape.questions as f64;
    println!(
        "\nA range filter per table or per partition ({} keys, partitions of {PARTITION_KEYS} keys, L = 2^{RANGE_LOG2}, 1 %)\n",
        keys.len()
    );
    println!(
        "| range filter | bits/key | empty ranges of 10 ids read | ranges meeting two partitions |"
    );
    println!("|---|---:|---:|---:|");
    println!(
        "| one per table | {:.2} | {:.3} % | - |",
        bits(whole.len()),
        100.0 * whole_fp as f64 / q
    );
    println!(
        "| one per partition ({} blocks) | {:.2} | {:.3} % | {:.2} % |",
        chunks.len(),
        bits(chunks.iter().map(|(_, b)| b.len()).sum()),
        100.0 * part_fp as f64 / q,
        100.0 * crossing as f64 / q
    );
}

fn main() {
    range_per_partition(&Shape {
        tables: 1,
        tenants: 4000,
        per_tenant: 500,
        questions: 100_000,
    });
    let lsm = Shape {
        tables: 10,
        tenants: 4000,
        per_tenant: 90,
        questions: 10_000,
    };
    let mut rows = Vec::new();
    for (name, filters) in configurations() {
        let dir = tempfile::tempdir().expect("temporary directory");
        rows.push(run(&lsm, name, filters, dir.path()));
    }
    print(
        "An LSM of 10 tables x 99,000 keys; reads summed over the tables, per question",
        &rows,
    );

    let big_keys = env_u64("SSTFILTER_BIG_KEYS", 10_000_000);
    if big_keys == 0 {
        return;
    }
    let per_tenant = 500;
    let big = Shape {
        tables: 1,
        tenants: 2 * big_keys / per_tenant,
        per_tenant,
        questions: 10_000,
    };
    let mut rows = Vec::new();
    for (name, filters) in configurations() {
        if !(name.starts_with("partitioned") || name.starts_with("point (")) {
            continue;
        }
        let dir = tempfile::tempdir().expect("temporary directory");
        rows.push(run(&big, name, filters, dir.path()));
    }
    print(
        &format!(
            "One table of {big_keys} keys; partitions at 4 KiB, cut at data blocks, a cache of 10 % of the filter bytes"
        ),
        &rows,
    );
}
