//! What `FilterStats` costs per query: a BlockedBloom query on a 10^6-key filter (10 bits/key, 1.2 MiB, L2/L3
//! resident) alone, with `record` on a `FilterStats` of its own, and on 2 threads recording into one shared
//! `FilterStats` (the counters' cache line moves between the cores) against 2 threads with one each.
//!
//! `cargo bench -p sstfilter --bench filter_stats`. Each iteration is 1,000 queries of absent keys (hashes
//! precomputed, so the query and the counting are what is timed); with 2 threads, each runs the iteration's
//! 1,000 queries and the time is the wall time of both.

use std::hint::black_box;
use std::thread;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use sstfilter::{
    Answer, BlockedBloomPolicy, FilterBlock, FilterBlockBuilder, FilterStats, KeyHash, Reason,
    key_hash,
};

const KEYS: u32 = 1_000_000;
const QUERIES: usize = 1000;

fn filter() -> FilterBlock<Vec<u8>> {
    let mut builder = FilterBlockBuilder::new(BlockedBloomPolicy::new(10.0).unwrap());
    for i in 0..KEYS {
        builder.add_key(format!("key{i:012}").as_bytes());
    }
    FilterBlock::open(builder.finish()).expect("a fresh block opens")
}

fn absent(thread: u32) -> Vec<KeyHash> {
    (0..QUERIES as u32)
        .map(|i| key_hash(format!("absent{thread}-{i:012}").as_bytes()))
        .collect()
}

/// The queries of one iteration, counted into `stats` if given; returns the "absent" answers.
fn run(filter: &FilterBlock<Vec<u8>>, hashes: &[KeyHash], stats: Option<&FilterStats>) -> usize {
    let mut absent = 0;
    for &h in hashes {
        let answer = filter.may_contain_hash(h);
        if let Some(stats) = stats {
            stats.record(if answer {
                Answer::MayContain(Reason::Matched)
            } else {
                Answer::Absent
            });
        }
        absent += usize::from(!answer);
    }
    absent
}

/// Wall time of `iters` iterations on 2 threads, each with its hashes and its stats (shared or not).
fn two_threads(
    filter: &FilterBlock<Vec<u8>>,
    hashes: &[Vec<KeyHash>; 2],
    stats: [&FilterStats; 2],
    iters: u64,
) -> Duration {
    let started = Instant::now();
    thread::scope(|scope| {
        for (hashes, stats) in hashes.iter().zip(stats) {
            scope.spawn(move || {
                for _ in 0..iters {
                    black_box(run(filter, hashes, Some(stats)));
                }
            });
        }
    });
    started.elapsed()
}

fn bench(c: &mut Criterion) {
    let filter = filter();
    let hashes = absent(0);
    let both = [absent(0), absent(1)];
    let mut group = c.benchmark_group("filter_stats");
    group.throughput(Throughput::Elements(QUERIES as u64));
    group.bench_function("query only", |b| b.iter(|| run(&filter, &hashes, None)));
    let own = FilterStats::new();
    group.bench_function("query + record_answer", |b| {
        b.iter(|| run(&filter, &hashes, Some(&own)));
    });
    let (a, b_stats) = (FilterStats::new(), FilterStats::new());
    group.bench_function("2 threads, one FilterStats each", |b| {
        b.iter_custom(|iters| two_threads(&filter, &both, [&a, &b_stats], iters));
    });
    let shared = FilterStats::new();
    group.bench_function("2 threads, one shared FilterStats", |b| {
        b.iter_custom(|iters| two_threads(&filter, &both, [&shared, &shared], iters));
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
