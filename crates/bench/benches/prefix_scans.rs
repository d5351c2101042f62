//! Prefix scans in SlateDB: storage reads and latency per scan, for a prefix that is in no SST, in one, or in
//! all, with no filter, SlateDB's own prefix Bloom filter and ours, given the same extractor, in one run. Not a
//! criterion benchmark (a store takes seconds to build): it prints a Markdown table for BENCHMARKS.md.
//!
//! `nice -n 10 cargo bench -p sstfilter-bench --bench prefix_scans`
//!
//! SlateDB 0.18 on `LocalFileSystem`, 10 flushed L0 SSTs (no compaction), a cache holding SST indexes and
//! filters but no data blocks; reads counted by an `ObjectStore` wrapper (`sstfilter_stores`). Keys are
//! `"t{tenant:05}/{sst:03}-{j:05}"` with 100-byte values; the extractor takes everything up to and including the
//! first `/` (`sstfilter::DelimitedPrefix`, handed to SlateDB as `SlateDbPrefix`). Of `SSTFILTER_TENANTS`
//! (default 4000) tenants, a quarter have `SSTFILTER_KEYS_PER_TENANT` (default 5) keys in every SST, a quarter
//! that many in one SST, and half none, their prefixes falling between the others (`sstfilter_stores::Tenant`).
//! A warm-up scan of every tenant loads each SST's index and filter; then `SSTFILTER_STORE_RUNS` (default 3)
//! passes scan every tenant of each group. Medians over the passes.

use std::sync::Arc;

use sstfilter_bench::{env_u64, median_per};

use slatedb::{BloomFilterPolicy, FilterPolicy};
use sstfilter::{BlockedBloomPolicy, DelimitedPrefix, RibbonPolicy, StandardBloomPolicy};
use sstfilter_slatedb::{SlateDbFilterPolicy, SlateDbPrefix};
use sstfilter_stores::slatedb::{Measured, load_tenants, scan_tenants};
use sstfilter_stores::{Scans, Tenant};

const SSTS: u64 = 10;
const BITS_PER_KEY: u32 = 10;

/// The medians, per scan, of one group of tenants.
struct Group {
    reads: f64,
    micros: f64,
}

impl Group {
    fn of(passes: &[Scans], scans: usize) -> Group {
        let scans = scans as u64;
        Group {
            reads: median_per(passes.iter().map(|p| p.reads as f64), scans),
            micros: median_per(passes.iter().map(|p| p.elapsed.as_secs_f64() * 1e6), scans),
        }
    }
}

/// Our `policy` with prefixes of `tenants`.
fn ours<P>(
    policy: SlateDbFilterPolicy<P>,
    tenants: &DelimitedPrefix,
) -> Option<Arc<dyn FilterPolicy>>
where
    P: sstfilter::FilterPolicy + Clone + Send + Sync + 'static,
{
    Some(Arc::new(
        policy
            .with_sstfilter_prefix_extractor(Arc::new(tenants.clone()))
            .unwrap(),
    ))
}

fn configs() -> Vec<(&'static str, Option<Arc<dyn FilterPolicy>>)> {
    let tenants = DelimitedPrefix::new(b'/');
    let bits = f64::from(BITS_PER_KEY);
    vec![
        ("no filter", None),
        (
            "SlateDB BloomFilterPolicy, keys + prefixes",
            Some(Arc::new(
                BloomFilterPolicy::new(BITS_PER_KEY)
                    .with_prefix_extractor(Arc::new(SlateDbPrefix(tenants.clone()))),
            )),
        ),
        (
            "SlateDB BloomFilterPolicy, prefixes only",
            Some(Arc::new(
                BloomFilterPolicy::new(BITS_PER_KEY)
                    .with_prefix_extractor(Arc::new(SlateDbPrefix(tenants.clone())))
                    .with_whole_key_filtering(false),
            )),
        ),
        (
            "sstfilter BlockedBloom, keys + prefixes",
            ours(
                SlateDbFilterPolicy::new(BlockedBloomPolicy::new(bits).unwrap()),
                &tenants,
            ),
        ),
        (
            "sstfilter BlockedBloom, prefixes only",
            ours(
                SlateDbFilterPolicy::new(BlockedBloomPolicy::new(bits).unwrap())
                    .with_whole_key_filtering(false),
                &tenants,
            ),
        ),
        (
            "sstfilter StandardBloom, prefixes only",
            ours(
                SlateDbFilterPolicy::new(StandardBloomPolicy::new(bits).unwrap())
                    .with_whole_key_filtering(false),
                &tenants,
            ),
        ),
        (
            "sstfilter Ribbon (Bloom-equivalent 10), keys + prefixes",
            ours(
                SlateDbFilterPolicy::new(RibbonPolicy::new(bits).unwrap()),
                &tenants,
            ),
        ),
        (
            "sstfilter Ribbon (Bloom-equivalent 10), prefixes only",
            ours(
                SlateDbFilterPolicy::new(RibbonPolicy::new(bits).unwrap())
                    .with_whole_key_filtering(false),
                &tenants,
            ),
        ),
    ]
}

fn main() {
    // `cargo bench` passes `--bench`; this binary takes no arguments of its own.
    let tenants = env_u64("SSTFILTER_TENANTS", 4000);
    let keys_per_tenant = env_u64("SSTFILTER_KEYS_PER_TENANT", 5);
    let runs = env_u64("SSTFILTER_STORE_RUNS", 3).max(1);
    let groups: [(&str, Vec<u64>); 3] = [
        ("in no SST", Tenant::Absent),
        ("in one SST", Tenant::InOne(0)),
        ("in every SST", Tenant::InAll),
    ]
    .map(|(name, like)| {
        let members = (0..tenants)
            .filter(|&t| {
                std::mem::discriminant(&Tenant::of(t, SSTS)) == std::mem::discriminant(&like)
            })
            .collect();
        (name, members)
    });
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio runtime");
    println!(
        "| filter | filter KiB | reads per scan, prefix in no SST | in one SST | in every SST | µs per scan, in no SST | in one SST | in every SST |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|");
    let mut expected_rows = None;
    for (name, policy) in configs() {
        let dir = tempfile::tempdir().expect("temporary directory");
        let measured = policy.map(Measured::wrap);
        let policies = measured.iter().map(|(p, _)| p.clone()).collect();
        let (rows, results) = runtime.block_on(async {
            let (db, store) =
                load_tenants(dir.path(), policies, tenants, keys_per_tenant, SSTS).await;
            let warm = scan_tenants(&db, &store, 0..tenants).await;
            let mut passes: Vec<Vec<Scans>> = vec![Vec::new(); groups.len()];
            for _ in 0..runs {
                for ((_, members), passes) in groups.iter().zip(&mut passes) {
                    passes.push(scan_tenants(&db, &store, members.iter().copied()).await);
                }
            }
            db.close().await.expect("close");
            (warm.rows, passes)
        });
        // Every configuration returns every row: a filter may only skip SSTs that hold none.
        assert_eq!(
            *expected_rows.get_or_insert(rows),
            rows,
            "{name}: rows differ"
        );
        let [absent, one, all] = [0, 1, 2].map(|g| Group::of(&results[g], groups[g].1.len()));
        let kib = measured.map_or("—".to_owned(), |(_, size)| {
            format!("{:.1}", size.bytes() as f64 / 1024.0)
        });
        eprintln!("{name}: done");
        println!(
            "| {name} | {kib} | {:.3} | {:.3} | {:.3} | {:.1} | {:.1} | {:.1} |",
            absent.reads, one.reads, all.reads, absent.micros, one.micros, all.micros
        );
    }
    println!(
        "\n{tenants} tenants, {keys_per_tenant} keys per tenant and SST, {SSTS} SSTs, {runs} passes, medians."
    );
}
