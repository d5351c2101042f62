//! Reads avoided in real stores: storage reads per absent Get, observed false-positive rate, filter size and
//! lookup latency, for no filter, the store's own filter and ours, at 10 bits/key, in one run. Not a criterion
//! benchmark (a store takes seconds to build): it prints a Markdown table for BENCHMARKS.md.
//!
//! `nice -n 10 cargo bench -p sstfilter-bench --bench reads_avoided`
//!
//! * SlateDB 0.18 on `LocalFileSystem`: 100k keys in 8 flushed L0 SSTs (no compaction), a cache holding SST
//!   indexes and filters but no data blocks; reads counted by an `ObjectStore` wrapper.
//! * rusty-leveldb 4.0 on disk: 100k keys (memtable flushes and compactions decide the tables), a one-block
//!   block cache; reads counted by an `Env` wrapper.
//!
//! Keys are `"usr:" + 12 digits` plus a 0–8 byte suffix with 100-byte values, written in pseudo-random order;
//! absent keys have the same shape. Each configuration is built once; a warm-up pass loads every table's index
//! and filter, then `SSTFILTER_STORE_RUNS` (default 3) passes of `SSTFILTER_STORE_LOOKUPS` (default 100k; a
//! tenth of that without a filter) absent keys are timed and counted. The absent keys are the gaps between the
//! present ones, in a pseudo-random order; with the defaults each pass looks up all 100k of them, in a different
//! order. Medians over the passes.
//!
//! "observed FPR" is reads per absent Get divided by the tables an absent Get consults (the reads per Get
//! without a filter); "filter bits/key" is measured over every filter the store built (encoded bytes, including
//! any header or trailer, per key added).

use std::sync::Arc;

use sstfilter_bench::{env_u64, median_per};

use sstfilter::{BlockedBloomPolicy, RibbonPolicy, StandardBloomPolicy};
use sstfilter_leveldb::{Bloom64Policy, LevelDbBloomPolicy};
use sstfilter_rusty_leveldb::{LevelDbFormat, RustyLevelDbFilterPolicy};
use sstfilter_slatedb::SlateDbFilterPolicy;
use sstfilter_stores as stores;
use stores::Lookups;

const BITS_PER_KEY: u32 = 10;

struct Settings {
    keys: u64,
    lookups: u64,
    runs: u64,
}

/// The medians of several passes of absent lookups.
struct Row {
    reads_per_get: f64,
    nanos_per_get: f64,
    /// Measured filter size; `None` without a filter.
    bits_per_key: Option<f64>,
}

impl Row {
    fn of(passes: &[Lookups], lookups: u64, bits_per_key: Option<f64>) -> Row {
        assert!(passes.iter().all(|p| p.found == 0), "absent keys found");
        Row {
            reads_per_get: median_per(passes.iter().map(|p| p.reads as f64), lookups),
            nanos_per_get: median_per(passes.iter().map(|p| p.elapsed.as_nanos() as f64), lookups),
            bits_per_key,
        }
    }
}

/// The ids of the absent keys of pass `run` of a store of `keys` keys (pass 0 is the warm-up of 1000 lookups).
fn absent_ids(run: u64, lookups: u64, keys: u64) -> impl Iterator<Item = u64> {
    let range = if run == 0 {
        0..1000
    } else {
        (run - 1) * lookups..run * lookups
    };
    range.map(move |i| stores::absent_id(i, keys))
}

fn print_rows(store: &str, rows: &[(String, Row)], own: &str) {
    let tables = rows.first().map_or(f64::NAN, |(_, r)| r.reads_per_get);
    let own_reads = rows
        .iter()
        .find(|(name, _)| name == own)
        .map_or(f64::NAN, |(_, r)| r.reads_per_get);
    for (name, row) in rows {
        let bits = row
            .bits_per_key
            .map_or("—".to_owned(), |b| format!("{b:.2}"));
        let vs_own = match row.bits_per_key {
            Some(_) => format!("{:.2}×", row.reads_per_get / own_reads),
            None => "—".to_owned(),
        };
        println!(
            "| {store} | {name} | {bits} | {:.4} | {:.3} % | {vs_own} | {:.1} |",
            row.reads_per_get,
            100.0 * row.reads_per_get / tables,
            row.nanos_per_get / 1000.0,
        );
    }
}

fn slatedb_rows(settings: &Settings) -> Vec<(String, Row)> {
    use slatedb::{BloomFilterPolicy, FilterPolicy};
    use stores::slatedb::{Measured, load, lookup, ribbon_at_slatedb_bloom_bytes};

    const SSTS: u64 = 8;
    let configs: Vec<(&str, Option<Arc<dyn FilterPolicy>>)> = vec![
        ("no filter", None),
        (
            "SlateDB BloomFilterPolicy",
            Some(Arc::new(BloomFilterPolicy::new(BITS_PER_KEY))),
        ),
        (
            "sstfilter BlockedBloom",
            Some(Arc::new(SlateDbFilterPolicy::new(
                BlockedBloomPolicy::new(f64::from(BITS_PER_KEY)).unwrap(),
            ))),
        ),
        (
            "sstfilter StandardBloom",
            Some(Arc::new(SlateDbFilterPolicy::new(
                StandardBloomPolicy::new(f64::from(BITS_PER_KEY)).unwrap(),
            ))),
        ),
        (
            "sstfilter Ribbon, rate 2^-9.75",
            Some(Arc::new(SlateDbFilterPolicy::new(
                ribbon_at_slatedb_bloom_bytes(),
            ))),
        ),
        // At BlockedBloom's false-positive rate, in less space.
        (
            "sstfilter Ribbon, Bloom-equivalent 10",
            Some(Arc::new(SlateDbFilterPolicy::new(
                RibbonPolicy::new(f64::from(BITS_PER_KEY)).unwrap(),
            ))),
        ),
    ];
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio runtime");
    let mut rows = Vec::new();
    for (name, policy) in configs {
        let dir = tempfile::tempdir().expect("temporary directory");
        let measured = policy.map(Measured::wrap);
        let policies = measured.iter().map(|(p, _)| p.clone()).collect();
        let lookups = if measured.is_some() {
            settings.lookups
        } else {
            settings.lookups / 10
        };
        let passes = runtime.block_on(async {
            let (db, store) = load(dir.path(), policies, settings.keys, SSTS).await;
            let mut passes = Vec::new();
            for run in 0..=settings.runs {
                passes.push(lookup(&db, &store, absent_ids(run, lookups, settings.keys)).await);
            }
            db.close().await.expect("close");
            passes
        });
        let bits_per_key = measured.map(|(_, stats)| stats.bits_per_key());
        eprintln!("SlateDB / {name}: done");
        rows.push((
            name.to_owned(),
            Row::of(passes.get(1..).unwrap_or_default(), lookups, bits_per_key),
        ));
    }
    rows
}

fn leveldb_rows(settings: &Settings) -> Vec<(String, Row)> {
    use rusty_leveldb::{BloomPolicy, FilterPolicy};
    use stores::leveldb::{Measured, load, lookup};

    let configs: Vec<(&str, Option<Box<dyn FilterPolicy>>)> = vec![
        ("no filter", None),
        (
            "rusty-leveldb BloomPolicy",
            Some(Box::new(BloomPolicy::new(BITS_PER_KEY))),
        ),
        (
            "sstfilter LevelDbBloomPolicy",
            Some(Box::new(LevelDbFormat(LevelDbBloomPolicy::new(
                BITS_PER_KEY as usize,
            )))),
        ),
        (
            "sstfilter Bloom64Policy",
            Some(Box::new(LevelDbFormat(Bloom64Policy::new(f64::from(
                BITS_PER_KEY,
            ))))),
        ),
        (
            "sstfilter BlockedBloom",
            Some(Box::new(RustyLevelDbFilterPolicy::new(
                BlockedBloomPolicy::new(f64::from(BITS_PER_KEY)).unwrap(),
            ))),
        ),
    ];
    let mut rows = Vec::new();
    for (name, policy) in configs {
        let dir = tempfile::tempdir().expect("temporary directory");
        let (filter, stats) = match policy.map(Measured::new) {
            Some((m, stats)) => (Some(Box::new(m) as Box<dyn FilterPolicy>), Some(stats)),
            None => (None, None),
        };
        let lookups = if stats.is_some() {
            settings.lookups
        } else {
            settings.lookups / 10
        };
        let (mut db, reads) = load(dir.path(), filter, settings.keys);
        let passes: Vec<Lookups> = (0..=settings.runs)
            .map(|run| lookup(&mut db, &reads, absent_ids(run, lookups, settings.keys)))
            .collect();
        drop(db);
        eprintln!("rusty-leveldb / {name}: done");
        rows.push((
            name.to_owned(),
            Row::of(
                passes.get(1..).unwrap_or_default(),
                lookups,
                stats.map(|s| s.bits_per_key()),
            ),
        ));
    }
    rows
}

fn main() {
    // `cargo bench` passes `--bench`; this binary takes no arguments of its own.
    let settings = Settings {
        keys: env_u64("SSTFILTER_STORE_KEYS", 100_000),
        lookups: env_u64("SSTFILTER_STORE_LOOKUPS", 100_000),
        runs: env_u64("SSTFILTER_STORE_RUNS", 3).max(1),
    };
    let slate = slatedb_rows(&settings);
    let leveldb = leveldb_rows(&settings);
    println!(
        "| store | filter | filter bits/key | storage reads per absent Get | observed FPR | reads vs the store's own filter | µs per absent Get |"
    );
    println!("|---|---|---:|---:|---:|---:|---:|");
    print_rows("SlateDB 0.18", &slate, "SlateDB BloomFilterPolicy");
    print_rows("rusty-leveldb 4.0", &leveldb, "rusty-leveldb BloomPolicy");
    println!(
        "\n{} keys, {} passes of {} absent lookups (a tenth without a filter), medians.",
        settings.keys, settings.runs, settings.lookups
    );
}
