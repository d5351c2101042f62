//! Our filters inside a real SlateDB on the local file system: 100k keys in 8 flushed L0 SSTs, every key read
//! back (no false negatives through the store), and 100k absent lookups whose SST reads are counted; and prefix
//! scans of 400 tenants over 10 SSTs, every row returned and the SST reads of empty scans counted.
//!
//! `cargo test -p sstfilter-slatedb --test slatedb_store -- --nocapture` prints the counts.

use std::sync::Arc;

use slatedb::{BloomFilterPolicy, FilterPolicy};
use sstfilter::{BlockedBloomPolicy, DelimitedPrefix};
use sstfilter_slatedb::{SlateDbFilterPolicy, SlateDbPrefix};
use sstfilter_stores::slatedb::{
    Measured, load, load_tenants, lookup, ribbon_at_slatedb_bloom_bytes, scan_tenants,
};
use sstfilter_stores::{Tenant, absent_id, present_id};

const KEYS: u64 = 100_000;
const SSTS: u64 = 8;

/// Loads a store with `policies`, reads every key back (if `read_back`), looks up `absent` absent keys; returns
/// the SST reads per absent lookup.
async fn reads_per_absent_get(
    policies: Vec<Arc<dyn FilterPolicy>>,
    label: &str,
    read_back: bool,
    absent: u64,
) -> f64 {
    let dir = tempfile::tempdir().expect("temporary directory");
    let (db, store) = load(dir.path(), policies, KEYS, SSTS).await;

    if read_back {
        let present = lookup(&db, &store, (0..KEYS).map(|i| present_id(i, KEYS))).await;
        assert_eq!(present.found, KEYS, "{label}: keys lost through the store");
        println!(
            "{label}: {} present keys found with {} SST reads",
            present.found, present.reads
        );
    }
    let missing = lookup(&db, &store, (0..absent).map(|i| absent_id(i, KEYS))).await;
    assert_eq!(missing.found, 0, "{label}: absent keys found");
    db.close().await.expect("close");
    let per_get = missing.reads as f64 / absent as f64;
    println!(
        "{label}: {absent} absent keys cost {} SST reads ({per_get:.4} per Get)",
        missing.reads
    );
    per_get
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn blocked_bloom_in_slatedb_loses_no_key_and_avoids_reads() {
    let ours = Arc::new(SlateDbFilterPolicy::new(
        BlockedBloomPolicy::new(10.0).unwrap(),
    ));
    let stats = ours.stats();
    let with_ours = reads_per_absent_get(vec![ours], "sstfilter BlockedBloom", true, KEYS).await;
    assert_eq!(
        stats.counts().decode_errors,
        0,
        "no filter failed to decode"
    );
    // Every answer is counted: "absent" ones are the SST reads avoided, about 99 % of the answers for absent keys.
    let counts = stats.counts();
    assert!(counts.absent > 0 && counts.may_contain > 0, "{counts:?}");
    assert!(
        counts.true_positives == 0,
        "the store does not report what its reads found"
    );

    // Without a filter, every absent lookup reads one data block of each of the SSTs (which also checks that
    // the reads are counted): the filter must avoid almost all of them (a 1 % false-positive rate over 8 SSTs
    // is about 0.08 reads per lookup). 10k lookups suffice here, at 8 reads each.
    let without = reads_per_absent_get(Vec::new(), "no filter", false, 10_000).await;
    assert!(without >= SSTS as f64 * 0.99, "{without}");
    assert!(with_ours < 0.15, "{with_ours} reads per absent Get");
}

/// Ribbon at SlateDB's own filter bytes (10 bits/key): the target is at least 5 times fewer wasted SST
/// reads than SlateDB's Bloom filter, with no more filter bytes (which the test checks too).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ribbon_in_slatedb_wastes_five_times_fewer_reads_than_slatedbs_bloom_at_equal_bytes() {
    let (bloom, bloom_stats) = Measured::wrap(Arc::new(BloomFilterPolicy::new(10)));
    let with_theirs = reads_per_absent_get(vec![bloom], "SlateDB Bloom", true, KEYS).await;

    let ribbon = Arc::new(SlateDbFilterPolicy::new(ribbon_at_slatedb_bloom_bytes()));
    let stats = ribbon.stats();
    let (ribbon, ribbon_stats) = Measured::wrap(ribbon);
    let with_ours = reads_per_absent_get(vec![ribbon], "sstfilter Ribbon", true, KEYS).await;
    assert_eq!(
        stats.counts().decode_errors,
        0,
        "no filter failed to decode"
    );

    println!(
        "filter bits/key: SlateDB Bloom {:.3}, Ribbon {:.3}; wasted reads per absent Get {with_theirs:.4} vs {with_ours:.4} ({:.1}x fewer)",
        bloom_stats.bits_per_key(),
        ribbon_stats.bits_per_key(),
        with_theirs / with_ours
    );
    assert!(ribbon_stats.bytes() <= bloom_stats.bytes());
    assert!(
        with_ours * 5.0 <= with_theirs,
        "{with_ours} vs {with_theirs} reads per absent Get"
    );
}

const TENANTS: u64 = 400;
const KEYS_PER_TENANT: u64 = 20;
const TENANT_SSTS: u64 = 10;

/// Scans every tenant of a store loaded with `policies`: the rows of every scan (the same whatever the filter),
/// and the SST reads per scan of the absent tenants.
async fn tenant_scans(policies: Vec<Arc<dyn FilterPolicy>>) -> (u64, f64) {
    let dir = tempfile::tempdir().expect("temporary directory");
    let (db, store) =
        load_tenants(dir.path(), policies, TENANTS, KEYS_PER_TENANT, TENANT_SSTS).await;
    let all = scan_tenants(&db, &store, 0..TENANTS).await;
    let absent: Vec<u64> = (0..TENANTS)
        .filter(|&t| Tenant::of(t, TENANT_SSTS) == Tenant::Absent)
        .collect();
    let empty = scan_tenants(&db, &store, absent.iter().copied()).await;
    assert_eq!(empty.rows, 0, "rows of absent tenants");
    db.close().await.expect("close");
    (all.rows, empty.reads as f64 / absent.len() as f64)
}

/// Prefix scans through SlateDB with our prefix filter, built from a core extractor: every row is returned (the
/// same rows as without a filter), and a scan of an absent tenant skips almost every SST, as with SlateDB's own
/// prefix Bloom filter given the same extractor.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prefix_filters_skip_ssts_for_absent_prefixes_and_lose_no_row() {
    let tenants = DelimitedPrefix::new(b'/');
    let ours = SlateDbFilterPolicy::new(BlockedBloomPolicy::new(10.0).unwrap())
        .with_sstfilter_prefix_extractor(Arc::new(tenants.clone()))
        .unwrap();
    let stats = ours.stats();
    let (rows, with_ours) = tenant_scans(vec![Arc::new(ours)]).await;
    let (rows_without, without) = tenant_scans(Vec::new()).await;
    let theirs = BloomFilterPolicy::new(10).with_prefix_extractor(Arc::new(SlateDbPrefix(tenants)));
    let (rows_theirs, with_theirs) = tenant_scans(vec![Arc::new(theirs)]).await;
    println!(
        "SST reads per scan of an absent tenant: {without:.3} without a filter, {with_theirs:.3} with SlateDB's \
         prefix Bloom filter, {with_ours:.3} with ours"
    );
    let expected =
        KEYS_PER_TENANT * TENANT_SSTS * TENANTS.div_ceil(4) + KEYS_PER_TENANT * (TENANTS / 4);
    assert_eq!(
        rows_without, expected,
        "every row is there without a filter"
    );
    assert_eq!(rows, expected, "our prefix filter lost rows");
    assert_eq!(rows_theirs, expected);
    assert_eq!(stats.counts().decode_errors, 0);
    assert!(without >= TENANT_SSTS as f64 * 0.99, "{without}");
    assert!(with_ours < 0.5, "{with_ours} SST reads per empty scan");
}
