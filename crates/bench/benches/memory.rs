//! Insert and query speed of the in-memory filters against fastbloom, in one criterion run.
//!
//! Every figure is nanoseconds per key *including hashing* (xxh3-64 for every filter), at n = 10^6 keys sized
//! for 1 %: `BloomFilter::with_rate(10^6, 0.01)` (9,585,088 bits, 7 probes), and fastbloom 0.17 given the same
//! number of bits and probes. Inserts build a fresh filter per iteration (allocation included), once ignoring
//! `insert`'s answer and once counting the keys it reports new; queries run over 10^6 keys that were added (hit)
//! and 10^6 of the same shape that were not (miss). Last, the cost of `estimated_len` (a pass over the bit
//! array) on the filled filter.
//!
//! `cargo bench -p sstfilter-bench --bench memory`, or e.g. `cargo bench -p sstfilter-bench --bench memory -- contains` for a subset.

use sstfilter_bench as common;

use std::hint::black_box;
use std::time::Duration;

use common::Keys;
use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, Criterion, Throughput, criterion_group, criterion_main};
use sstfilter_memory::{BloomFilter, CountingBloomFilter, ScalableBloomFilter};
use xxhash_rust::xxh3::xxh3_64;

const KEYS: usize = 1_000_000;
const FPP: f64 = 0.01;

/// A filter that can be filled and asked, so that every contender runs the same loops.
trait Contender {
    const NAME: &'static str;
    fn new() -> Self;
    /// Inserts a key; the answer is ignored, so a filter may skip computing it.
    fn insert(&mut self, key: &[u8]);
    /// Inserts a key and answers whether it was certainly new (as a deduplicating caller needs).
    fn insert_new(&mut self, key: &[u8]) -> bool;
    fn contains(&self, key: &[u8]) -> bool;
}

/// Our filters share their method names, so one macro implements [`Contender`] for each.
macro_rules! ours {
    ($filter:ty, $name:literal, $new:expr) => {
        impl Contender for $filter {
            const NAME: &'static str = $name;
            fn new() -> Self {
                $new
            }
            #[inline]
            fn insert(&mut self, key: &[u8]) {
                <$filter>::insert(self, key);
            }
            #[inline]
            fn insert_new(&mut self, key: &[u8]) -> bool {
                <$filter>::insert(self, key)
            }
            #[inline]
            fn contains(&self, key: &[u8]) -> bool {
                <$filter>::contains(self, key)
            }
        }
    };
}

ours!(
    BloomFilter,
    "sstfilter BloomFilter",
    BloomFilter::with_rate(KEYS, FPP)
);
ours!(
    CountingBloomFilter,
    "sstfilter CountingBloomFilter",
    CountingBloomFilter::with_rate(KEYS, FPP)
);
// Grows from 1/16 of the keys: 5 stages at 10^6 keys.
ours!(
    ScalableBloomFilter,
    "sstfilter ScalableBloomFilter (from n/16)",
    ScalableBloomFilter::new(KEYS / 16, FPP)
);

/// fastbloom 0.17 fed xxh3, with exactly the bits and probes of our filter.
struct Fastbloom(fastbloom::BloomFilter);

impl Contender for Fastbloom {
    const NAME: &'static str = "fastbloom (xxh3)";
    fn new() -> Self {
        let ours = BloomFilter::with_rate(KEYS, FPP);
        let bits = usize::try_from(ours.num_bits()).expect("fits");
        Fastbloom(fastbloom::BloomFilter::with_num_bits(bits).hashes(ours.num_probes()))
    }
    #[inline]
    fn insert(&mut self, key: &[u8]) {
        self.0.insert_hash(xxh3_64(key));
    }
    #[inline]
    fn insert_new(&mut self, key: &[u8]) -> bool {
        // fastbloom answers whether the key was possibly present before.
        !self.0.insert_hash(xxh3_64(key))
    }
    #[inline]
    fn contains(&self, key: &[u8]) -> bool {
        self.0.contains_hash(xxh3_64(key))
    }
}

fn filled<F: Contender>(keys: &Keys) -> F {
    let mut filter = F::new();
    for key in keys.iter() {
        filter.insert(key);
    }
    filter
}

type Group<'a> = BenchmarkGroup<'a, WallTime>;

/// A group measured per key over 10^6 keys, for `seconds` after a short warm-up.
fn timed_group<'a>(c: &'a mut Criterion, name: &str, seconds: u64) -> Group<'a> {
    let mut group = c.benchmark_group(name);
    group.throughput(Throughput::Elements(KEYS as u64));
    group.sample_size(20);
    group.warm_up_time(Duration::from_millis(500));
    group.measurement_time(Duration::from_secs(seconds));
    group
}

fn insert(c: &mut Criterion) {
    let keys = Keys::present(KEYS);
    let mut group = timed_group(c, "memory/insert/1M", 4);
    fn run<F: Contender>(group: &mut Group<'_>, keys: &Keys) {
        group.bench_function(F::NAME, |b| b.iter(|| filled::<F>(black_box(keys))));
    }
    run::<BloomFilter>(&mut group, &keys);
    run::<Fastbloom>(&mut group, &keys);
    run::<CountingBloomFilter>(&mut group, &keys);
    run::<ScalableBloomFilter>(&mut group, &keys);
    group.finish();
}

/// Inserts whose answer is used (counted), as a deduplicating caller uses it: every probe must then wait for its
/// word to arrive, in every filter.
fn insert_new(c: &mut Criterion) {
    let keys = Keys::present(KEYS);
    let mut group = timed_group(c, "memory/insert_new/1M", 4);
    fn run<F: Contender>(group: &mut Group<'_>, keys: &Keys) {
        group.bench_function(F::NAME, |b| {
            b.iter(|| {
                let mut filter = F::new();
                black_box(keys)
                    .iter()
                    .filter(|k| filter.insert_new(k))
                    .count()
            })
        });
    }
    run::<BloomFilter>(&mut group, &keys);
    run::<Fastbloom>(&mut group, &keys);
    group.finish();
}

fn contains(c: &mut Criterion) {
    let keys = Keys::present(KEYS);
    let absent = Keys::absent(KEYS);
    let ours: BloomFilter = filled(&keys);
    let fast: Fastbloom = filled(&keys);
    let counting: CountingBloomFilter = filled(&keys);
    let scalable: ScalableBloomFilter = filled(&keys);
    for (kind, queries) in [("hit", &keys), ("miss", &absent)] {
        let mut group = timed_group(c, &format!("memory/contains/1M/{kind}"), 3);
        fn run<F: Contender>(group: &mut Group<'_>, filter: &F, queries: &Keys) {
            group.bench_function(F::NAME, |b| {
                b.iter(|| {
                    queries
                        .iter()
                        .filter(|k| filter.contains(black_box(k)))
                        .count()
                })
            });
        }
        run(&mut group, &ours, queries);
        run(&mut group, &fast, queries);
        run(&mut group, &counting, queries);
        run(&mut group, &scalable, queries);
        group.finish();
    }
}

/// The fill-based estimates count the set bits: one pass over the 1.2 MB bit array.
fn estimate(c: &mut Criterion) {
    let ours: BloomFilter = filled(&Keys::present(KEYS));
    let mut group = c.benchmark_group("memory/estimated_len/1M");
    group.sample_size(50);
    group.bench_function("sstfilter BloomFilter", |b| {
        b.iter(|| black_box(&ours).estimated_len())
    });
    group.finish();
}

criterion_group!(benches, insert, insert_new, contains, estimate);
criterion_main!(benches);
