//! Our filters inside a real SlateDB on the local file system: 100k keys in 8 flushed L0 SSTs, every key read
//! back (no false negatives through the store), and 100k absent lookups whose SST reads are counted.
//!
//! `cargo test -p sstfilter-slatedb --test slatedb_store -- --nocapture` prints the counts.

use std::sync::Arc;

use slatedb::{BloomFilterPolicy, FilterPolicy};
use sstfilter::BlockedBloomPolicy;
use sstfilter_slatedb::SlateDbFilterPolicy;
use sstfilter_stores::slatedb::{Measured, load, lookup, ribbon_at_slatedb_bloom_bytes};
use sstfilter_stores::{absent_id, present_id};

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
    let ours = Arc::new(SlateDbFilterPolicy::new(BlockedBloomPolicy::new(10.0)));
    let stats = ours.stats();
    let with_ours = reads_per_absent_get(vec![ours], "sstfilter BlockedBloom", true, KEYS).await;
    assert_eq!(
        stats.counts().decode_errors,
        0,
        "no filter failed to decode"
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
