//! Range filters inside a real SlateDB on the local file system (400 tenants `t{t:05}/…` over 10 flushed L0 SSTs,
//! see `sstfilter_stores::Tenant`): with a range filter, every range scan returns exactly the rows written in its
//! range, short ones included (those the filter answers itself, skipping the SSTs they miss); empty range scans skip
//! SSTs, with their object-store reads counted; and, at equal filter memory, a point filter beside a range filter
//! against a bigger point filter alone.
//!
//! `cargo test --release -p sstfilter-slatedb --test slatedb_range -- --nocapture` prints the counts.

use std::collections::BTreeSet;
use std::ops::Bound;
use std::sync::Arc;

use slatedb::{Db, FilterPolicy};
use sstfilter::{BlockedBloomPolicy, RangePolicy};
use sstfilter_slatedb::{SlateDbFilterPolicy, SlateDbRangeFilterPolicy};
use sstfilter_stores::slatedb::{CountingStore, Measured, load_tenants};
use sstfilter_stores::{Tenant, tenant_key, tenant_prefix};

const TENANTS: u64 = 400;
const KEYS_PER_TENANT: u64 = 20;
const SSTS: u64 = 10;
/// Random range scans checked against what was written, per store with a range filter.
const RANDOM_RANGES: usize = 300;

/// A scan's bounds, owned.
type KeyRange = (Bound<Vec<u8>>, Bound<Vec<u8>>);

/// Every key the store holds, in order.
fn written() -> BTreeSet<Vec<u8>> {
    let mut keys = BTreeSet::new();
    for t in 0..TENANTS {
        for sst in (0..SSTS).filter(|&s| Tenant::of(t, SSTS).in_table(s)) {
            for j in 0..KEYS_PER_TENANT {
                keys.insert(tenant_key(t, sst, j));
            }
        }
    }
    keys
}

/// Scans `lower..upper`, returning the keys and the SST reads it cost.
async fn scan(
    db: &Db,
    store: &CountingStore,
    lower: Bound<Vec<u8>>,
    upper: Bound<Vec<u8>>,
) -> (Vec<Vec<u8>>, u64) {
    store.reset();
    let mut iter = db.scan((lower, upper)).await.expect("scan");
    let mut rows = Vec::new();
    while let Some(row) = iter.next().await.expect("next row") {
        rows.push(row.key.to_vec());
    }
    (rows, store.sst_reads())
}

/// The empty scans: each absent tenant's whole key range, which lies inside every SST's key range, so only a filter
/// can keep a scan from reading an SST.
fn empty_tenant_ranges() -> Vec<(u64, KeyRange)> {
    (0..TENANTS)
        .filter(|&t| Tenant::of(t, SSTS) == Tenant::Absent)
        .map(|t| {
            (
                t,
                (
                    Bound::Included(tenant_prefix(t)),
                    Bound::Excluded(tenant_prefix(t + 1)),
                ),
            )
        })
        .collect()
}

/// A deterministic stream of numbers (splitmix64).
fn numbers(seed: u64) -> impl Iterator<Item = u64> {
    let mut state = seed;
    std::iter::repeat_with(move || {
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    })
}

/// One end of a random range near `key`: the key itself, just after it, or one of its prefixes (its tenant's, or
/// its tenant's and table's), so that bounds fall on keys, between keys and between tenants.
fn near(key: &[u8], r: u64) -> Vec<u8> {
    match r % 4 {
        0 | 1 => key.to_vec(),
        2 => [key, &[0]].concat(),
        _ => key[..if (r / 4).is_multiple_of(2) { 7 } else { 11 }].to_vec(), // `t00012/` or `t00012/003-`
    }
}

/// Random ranges over the store's keys, never inverted, each bound included, excluded or (rarely) unbounded.
/// Three in four are short, a few dozen keys at most, starting anywhere: the ranges a Range filter answers itself,
/// holding keys in some SSTs and none in others (so some SSTs are skipped while the scan still returns rows). The
/// rest have ends anywhere, as long scans.
fn random_ranges(keys: &BTreeSet<Vec<u8>>, count: usize) -> Vec<KeyRange> {
    let keys: Vec<&Vec<u8>> = keys.iter().collect();
    let mut n = numbers(7);
    let pick = |n: &mut dyn Iterator<Item = u64>, short: bool| {
        let r = n.next().unwrap();
        let i = (r % keys.len() as u64) as usize;
        let j = if short {
            (i + (r >> 32) as usize % 48).min(keys.len() - 1)
        } else {
            ((r >> 32) % keys.len() as u64) as usize
        };
        let (a, b) = (
            near(keys[i], n.next().unwrap()),
            near(keys[j], n.next().unwrap()),
        );
        if a <= b { (a, b) } else { (b, a) }
    };
    (0..count)
        .map(|c| {
            let short = c % 4 != 3;
            let (a, b) = pick(&mut n, short);
            let bound = |r: u64, k: Vec<u8>| match r % 10 {
                0 => Bound::Unbounded,
                1..=5 => Bound::Included(k),
                _ => Bound::Excluded(k),
            };
            let lower = bound(n.next().unwrap(), a);
            let upper = bound(n.next().unwrap(), b);
            (lower, upper)
        })
        // SlateDB refuses (panics on) a range it can tell is empty: equal ends unless both are included.
        .filter(|(lower, upper)| match (lower, upper) {
            (Bound::Included(a), Bound::Included(b)) => a <= b,
            (Bound::Included(a) | Bound::Excluded(a), Bound::Included(b) | Bound::Excluded(b)) => {
                a < b
            }
            _ => true,
        })
        .collect()
}

/// Loads the store with `policies`; checks that each of `ranges` random ranges returns exactly its rows (the
/// configurations with a range filter, the ones that can lose a row); returns the SST reads per empty scan.
async fn run(label: &str, policies: Vec<Arc<dyn FilterPolicy>>, ranges: usize) -> f64 {
    let dir = tempfile::tempdir().expect("temporary directory");
    let (db, store) = load_tenants(dir.path(), policies, TENANTS, KEYS_PER_TENANT, SSTS).await;
    let keys = written();
    for (lower, upper) in random_ranges(&keys, ranges) {
        let expected: Vec<Vec<u8>> = keys
            .range::<Vec<u8>, _>((lower.as_ref(), upper.as_ref()))
            .cloned()
            .collect();
        let (rows, _) = scan(&db, &store, lower.clone(), upper.clone()).await;
        assert_eq!(rows, expected, "{label}: scan {lower:?}..{upper:?}");
    }
    let empty = empty_tenant_ranges();
    let mut reads = 0;
    for (t, (lower, upper)) in &empty {
        let (rows, r) = scan(&db, &store, lower.clone(), upper.clone()).await;
        assert!(rows.is_empty(), "{label}: rows for absent tenant {t}");
        reads += r;
    }
    db.close().await.expect("close");
    let per_scan = reads as f64 / empty.len() as f64;
    println!(
        "{label}: {per_scan:.3} SST reads per empty tenant scan ({} scans)",
        empty.len()
    );
    per_scan
}

/// Range filters skip SSTs for empty range scans and lose no row; the same scans read (almost) every SST without
/// a filter, and with a point filter alone (SlateDB does not ask a point filter about ranges).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn range_filters_skip_ssts_for_empty_ranges_and_lose_no_row() {
    // A tenant's range spans 10 tables × 10^5 values of `{table:03}-{j:05}` in the projection: 2^20 covers it.
    let ranges = SlateDbRangeFilterPolicy::new(RangePolicy::new(1 << 20, 0.01).unwrap());
    let stats = ranges.stats();
    let with_range = run("range filter", vec![Arc::new(ranges)], RANDOM_RANGES).await;
    let without = run("no filter", Vec::new(), 0).await;
    let points = Arc::new(SlateDbFilterPolicy::new(
        BlockedBloomPolicy::new(10.0).unwrap(),
    ));
    let with_points = run("point filter only", vec![points], 0).await;
    assert!(without >= SSTS as f64 * 0.9, "{without}");
    assert!(with_points >= SSTS as f64 * 0.9, "{with_points}");
    assert!(
        with_range < 0.5,
        "{with_range} SST reads per empty scan with the range filter"
    );
    let counts = stats.counts();
    assert_eq!(counts.decode_errors, 0);
    assert!(counts.absent > 0);
}

/// At equal total filter bytes: a BlockedBloom point filter beside a range filter, against a bigger BlockedBloom
/// alone. Prints SST reads per empty tenant scan and the filter bytes of each; the range filter's side is the one
/// that skips SSTs for scans.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn point_and_range_filter_against_a_bigger_point_filter_at_equal_bytes() {
    let (point, point_size) = Measured::wrap(Arc::new(SlateDbFilterPolicy::new(
        BlockedBloomPolicy::new(10.0).unwrap(),
    )));
    let (range, range_size) = Measured::wrap(Arc::new(SlateDbRangeFilterPolicy::new(
        RangePolicy::new(1 << 20, 0.01).unwrap(),
    )));
    let both = run(
        "point 10 bits/key + range filter",
        vec![point, range],
        RANDOM_RANGES,
    )
    .await;
    let total = point_size.bytes() + range_size.bytes();
    // Both filters count the same keys, so their bits per key add up.
    let equal_bits = point_size.bits_per_key() + range_size.bits_per_key();
    let (big, big_size) = Measured::wrap(Arc::new(SlateDbFilterPolicy::new(
        BlockedBloomPolicy::new(equal_bits).unwrap(),
    )));
    let bigger = run(
        &format!("point {equal_bits:.1} bits/key alone"),
        vec![big],
        0,
    )
    .await;
    println!(
        "filter bytes: point + range {total} ({:.1} + {:.1} bits/key), bigger point {} ({:.1} bits/key)",
        point_size.bits_per_key(),
        range_size.bits_per_key(),
        big_size.bytes(),
        big_size.bits_per_key()
    );
    assert!(
        both < 0.5 && bigger >= SSTS as f64 * 0.9,
        "{both} vs {bigger}"
    );
}
