//! `sstfilter demo --partitioned`: the same LSM with full filters and with partitioned filters, looked up under
//! filter memory budgets of 1 %, 10 % and 100 % of the full filters, with uniform and skewed (Zipf-like)
//! absent keys: the filter memory kept resident, partition loads per lookup, data-block reads and lookup time.
//! The pinned full filters and the fully cached partitions are timed in turn, a chunk of lookups each, over
//! several passes: timed one after the other, their ratio moved with whatever else the machine was doing.

use std::io::Write;
use std::path::Path;
use std::time::{Duration, Instant};

use sstfilter::{BlockedBloomPolicy, PartitionCuts, TableFilterOptions, key_hash};
use sstfilter_table::{PartitionCache, Table, TableOptions, TableStats};

use crate::error::{CliResult, Context};
use crate::keys::{self, SplitMix64};
use crate::lsm::{self, DemoArgs, total_stats};
use crate::text::{TextTable, bytes, thousands};

/// Filter bytes per partition: RocksDB's `metadata_block_size` default.
const PARTITION_BYTES: usize = 4096;

/// Budgets of the partition cache, in percent of the full filters' bytes.
const BUDGETS: [u64; 3] = [1, 10, 100];

/// Seeds of the two lookup streams.
const UNIFORM_SEED: u64 = 11;
const SKEWED_SEED: u64 = 12;

/// Opens of a table with a full filter timed to measure what loading a full filter costs.
const RELOADS: u32 = 5;

/// Passes over a stream when the pinned full filters and the cached partitions are timed in turn; each row shows
/// the median pass.
const PASSES: usize = 5;

/// Lookups one side makes before the other's turn.
const TURN: usize = 10_000;

pub(crate) fn run(out: &mut dyn Write, root: &Path, args: &DemoArgs) -> CliResult<()> {
    writeln!(
        out,
        "sstfilter demo --partitioned: an LSM of {} tables x {} keys, BlockedBloom at {} bits/key, full filters vs \
         {} KiB partitions cut at data blocks",
        args.tables,
        thousands(args.keys),
        args.bits_per_key,
        PARTITION_BYTES / 1024
    )?;
    writeln!(
        out,
        "{} absent lookups per stream: uniform, and skewed (rank floor(P^u) of {} keys, u uniform: a few keys \
         asked very often)\n",
        thousands(args.lookups),
        thousands(args.lookups)
    )?;
    let point = TableFilterOptions::new().point(BlockedBloomPolicy::new(args.bits_per_key)?);
    let full_options = TableOptions::default().filters(point.clone());
    let partitioned_options = TableOptions::default()
        .filters(point.partitioned(PARTITION_BYTES, PartitionCuts::AtDataBlocks)?);
    let build = |dir: &str, options| {
        let label = format!("{dir} filters: building tables");
        lsm::build_tables(&root.join(dir), options, args, label).map(|(paths, _)| paths)
    };
    let full_paths = build("full", &full_options)?;
    let partitioned_paths = build("partitioned", &partitioned_options)?;

    let full: Vec<Table> = full_paths
        .iter()
        .map(|p| lsm::open_table(p, &full_options))
        .collect::<CliResult<_>>()?;
    let full_bytes: u64 = full
        .iter()
        .filter_map(Table::filter_handle)
        .map(|h| h.size())
        .sum();
    let probe = open_all(&partitioned_paths, &PartitionCache::new(0))?;
    let index_bytes: u64 = probe
        .iter()
        .filter_map(Table::filter_handle)
        .map(|h| h.size())
        .sum();
    let (partitions, partition_bytes) = probe
        .iter()
        .filter_map(|table| table.table_filter().partitioned_filter())
        .flat_map(|index| index.partitions())
        .fold((0u64, 0u64), |(n, b), p| (n + 1, b + p.len));
    let keys = args.keys * args.tables;
    let per_key = |b: u64| b as f64 * 8.0 / keys as f64;
    writeln!(
        out,
        "full filters      {} ({:.3} bits/key), all resident",
        bytes(full_bytes),
        per_key(full_bytes)
    )?;
    writeln!(
        out,
        "partitioned       {} partitions, {} ({:.3} bits/key) + indexes {} ({:.3} bits/key, resident)\n",
        thousands(partitions),
        bytes(partition_bytes),
        per_key(partition_bytes),
        bytes(index_bytes),
        per_key(index_bytes)
    )?;

    let uniform: Vec<Vec<u8>> =
        keys::absent_ids(args.lookups, args.tables, args.keys, UNIFORM_SEED)
            .into_iter()
            .map(keys::key)
            .collect();
    let skewed = skewed(args);
    let streams = [("uniform", &uniform), ("skewed", &skewed)];

    let mut report = TextTable::new(&[
        &[
            "",
            "",
            "resident",
            "partition",
            "cache hits",
            "data blocks",
            "",
        ],
        &[
            "filter",
            "lookups",
            "filter bytes",
            "loads/lookup",
            "/lookup",
            "read/lookup",
            "ns/lookup",
        ],
    ]);
    let mut ratios = Vec::new();
    for (stream, lookups) in streams {
        let mut budget_rows = Vec::new();
        for budget in BUDGETS {
            let cache = PartitionCache::new(usize::try_from(full_bytes * budget / 100)?);
            let tables = open_all(&partitioned_paths, &cache)?;
            let (stats, time) = run_stream(&root.join("partitioned"), &tables, lookups)?;
            let resident = index_bytes + cache.resident_bytes() as u64;
            let name = format!("partitioned, {budget} % budget");
            let ns = time.as_secs_f64() * 1e9 / lookups.len().max(1) as f64;
            budget_rows.push(row(&name, stream, resident, &stats, lookups.len(), ns));
        }
        // No budget, and the stream run once before it is timed: every lookup a cache hit, the cost of one.
        let cache = PartitionCache::unbounded();
        let cached = open_all(&partitioned_paths, &cache)?;
        run_stream(&root.join("partitioned"), &cached, lookups)?;
        let sides = [
            (root.join("full"), &full[..]),
            (root.join("partitioned"), &cached[..]),
        ];
        let [(full_stats, full_ns), (cached_stats, cached_ns)] = in_turn(&sides, lookups)?;
        let asked = lookups.len() * PASSES;
        report.row(row(
            "full, pinned",
            stream,
            full_bytes,
            &full_stats,
            asked,
            full_ns,
        ));
        for budget_row in budget_rows {
            report.row(budget_row);
        }
        let resident = index_bytes + cache.resident_bytes() as u64;
        let name = "partitioned, all cached";
        report.row(row(name, stream, resident, &cached_stats, asked, cached_ns));
        ratios.push(format!("{:.2}x ({stream})", cached_ns / full_ns));
    }
    write!(out, "{}", report.render())?;
    writeln!(
        out,
        "\nA cached partitioned lookup took {} a pinned full filter's (both timed in turn, {} lookups each, the \
         median of {PASSES} passes).",
        ratios.join(", "),
        thousands(TURN.min(uniform.len()) as u64)
    )?;

    let started = Instant::now();
    for _ in 0..RELOADS {
        for path in &full_paths {
            lsm::open_table(path, &full_options)?;
        }
    }
    let per_load = started.elapsed() / (RELOADS * full_paths.len() as u32);
    writeln!(
        out,
        "\nA full filter cannot be cached in part: under a budget smaller than it, each lookup either loads it whole \
         ({} per table, measured: {:.2} ms to open a table and verify its filter)\nor goes without it (a data-block \
         read per table). A partitioned filter keeps its index resident and loads {} KiB partitions.",
        bytes(full_bytes / args.tables.max(1)),
        per_load.as_secs_f64() * 1e3,
        PARTITION_BYTES / 1024
    )?;
    Ok(())
}

fn open_all(paths: &[std::path::PathBuf], cache: &PartitionCache) -> CliResult<Vec<Table>> {
    let tables = paths
        .iter()
        .map(|p| {
            Table::open_with_cache(p, &TableOptions::default(), cache.clone())
                .context(|| format!("cannot open table {}", p.display()))
        })
        .collect::<CliResult<Vec<_>>>()?;
    if let Some(e) = tables.iter().find_map(Table::filter_error) {
        return Err(format!("a freshly built filter does not open: {e}").into());
    }
    Ok(tables)
}

/// Absent keys where the key of rank `r` is asked about `1/r` as often: rank `floor(P^u)` for `u` uniform in
/// [0, 1) over a pool of `P` absent keys, mapped to the pool by a multiplicative hash so that hot keys are
/// spread over the key range.
fn skewed(args: &DemoArgs) -> Vec<Vec<u8>> {
    let pool = keys::absent_ids(args.lookups, args.tables, args.keys, SKEWED_SEED);
    let p = pool.len() as u64;
    let mut rng = SplitMix64::new(SKEWED_SEED);
    (0..args.lookups)
        .map(|_| {
            let u = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
            let rank = (p as f64).powf(u) as u64 - 1;
            let at = rank.wrapping_mul(0x9E37_79B9_7F4A_7C15) % p.max(1);
            keys::key(pool.get(at as usize).copied().unwrap_or(1))
        })
        .collect()
}

/// Each side's tables (those in its directory, oldest first) asked for every key of `lookups` in turn, [`TURN`]
/// lookups each, over [`PASSES`] passes: each side's counters over all passes and the median pass's ns a lookup.
fn in_turn(
    sides: &[(std::path::PathBuf, &[Table]); 2],
    lookups: &[Vec<u8>],
) -> CliResult<[(TableStats, f64); 2]> {
    let before = sides.each_ref().map(|(_, tables)| total_stats(tables));
    let mut passes: [Vec<f64>; 2] = Default::default();
    for _ in 0..PASSES {
        let mut spent = [Duration::ZERO; 2];
        for turn in lookups.chunks(TURN) {
            for ((dir, tables), spent) in sides.iter().zip(&mut spent) {
                *spent += run_stream(dir, tables, turn)?.1;
            }
        }
        for (pass, spent) in passes.iter_mut().zip(spent) {
            pass.push(spent.as_secs_f64() * 1e9 / lookups.len().max(1) as f64);
        }
    }
    let mut sides_out = [(TableStats::default(), 0.0); 2];
    for (((out, (_, tables)), before), pass) in
        sides_out.iter_mut().zip(sides).zip(before).zip(&mut passes)
    {
        pass.sort_by(f64::total_cmp);
        *out = (
            total_stats(tables) - before,
            pass.get(PASSES / 2).copied().unwrap_or(0.0),
        );
    }
    Ok(sides_out)
}

/// Asks every table (those in `dir`, oldest first), newest first, for every key (all absent) and returns the
/// counters and the time.
fn run_stream(
    dir: &Path,
    tables: &[Table],
    lookups: &[Vec<u8>],
) -> CliResult<(TableStats, Duration)> {
    let before = total_stats(tables);
    let started = Instant::now();
    for key in lookups {
        let hash = key_hash(key);
        for (t, table) in tables.iter().enumerate().rev() {
            if table
                .get_with_hash(key, hash)
                .context(lsm::reading(dir, t))?
                .is_some()
            {
                return Err(
                    format!("absent key {:?} was found", String::from_utf8_lossy(key)).into(),
                );
            }
        }
    }
    Ok((total_stats(tables) - before, started.elapsed()))
}

/// A row of the report: counters over `lookups` lookups, and `ns` a lookup.
fn row(
    name: &str,
    stream: &str,
    resident: u64,
    stats: &TableStats,
    lookups: usize,
    ns: f64,
) -> Vec<String> {
    let per = |n: u64| format!("{:.4}", n as f64 / lookups.max(1) as f64);
    vec![
        name.to_owned(),
        stream.to_owned(),
        thousands(resident),
        per(stats.partition_loads),
        per(stats.partition_cache_hits),
        per(stats.data_block_reads),
        format!("{ns:.0}"),
    ]
}
