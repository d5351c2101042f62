//! Build and query speed of BlockedBloom and Ribbon against their Rust peers, in one criterion run.
//!
//! Every figure is nanoseconds per key *including hashing*, at 10 bits/key, for n = 10^6 (the filter fits in
//! L2/L3) and n = 10^7 (it does not fit in L2 and mostly not in the TLB). Queries run over 10^6 keys per
//! iteration, hits (keys that were added) and misses (keys of the same shape that were not) separately. And
//! 10,000 small filters of 47 keys from one reused builder (`build/47 keys x 10000, one builder`).
//!
//! `cargo bench -p sstfilter --bench filter` (all), or e.g. `cargo bench -p sstfilter --bench filter -- query/1M` for a subset. Set
//! `SSTFILTER_BENCH_SIZES=1M` to skip the 10^7 runs.

use sstfilter_bench as common;

use std::hint::black_box;
use std::time::Duration;

use common::{BinaryFuse8, BinaryFuse16, Fastbloom, Filter, Keys, LevelDb, Ours, OursRibbon, Sbbf};
use criterion::{
    BenchmarkGroup, Criterion, Throughput, criterion_group, criterion_main, measurement::WallTime,
};
use sstfilter::{BlockedBloomPolicy, FilterBlock, FilterBlockBuilder};

/// Keys queried per iteration.
const QUERIES: usize = 1_000_000;

fn sizes() -> Vec<(usize, &'static str)> {
    let wanted = std::env::var("SSTFILTER_BENCH_SIZES").unwrap_or_else(|_| "1M,10M".into());
    [(1_000_000, "1M"), (10_000_000, "10M")]
        .into_iter()
        .filter(|(_, label)| wanted.split(',').any(|w| w.trim() == *label))
        .collect()
}

fn bench_build<F: Filter>(group: &mut BenchmarkGroup<'_, WallTime>, keys: &Keys) {
    group.bench_function(F::NAME, |b| b.iter(|| black_box(F::build(black_box(keys)))));
}

fn bench_query<F: Filter>(group: &mut BenchmarkGroup<'_, WallTime>, filter: &F, queries: &Keys) {
    group.bench_function(F::NAME, |b| {
        b.iter(|| {
            queries
                .iter()
                .filter(|k| filter.contains(black_box(k)))
                .count()
        })
    });
}

fn bench_batch(
    group: &mut BenchmarkGroup<'_, WallTime>,
    name: &str,
    block: &FilterBlock<Vec<u8>>,
    keys: &[&[u8]],
) {
    let mut results = vec![false; keys.len()];
    group.bench_function(name, |b| {
        b.iter(|| {
            block.may_contain_batch(black_box(keys), &mut results);
            results.iter().filter(|&&r| r).count()
        })
    });
}

fn build(c: &mut Criterion) {
    for (n, label) in sizes() {
        let keys = Keys::present(n);
        let mut group = c.benchmark_group(format!("build/{label}"));
        group.throughput(Throughput::Elements(n as u64));
        group.sample_size(10);
        group.warm_up_time(Duration::from_millis(500));
        group.measurement_time(Duration::from_secs(if n > 1_000_000 { 20 } else { 4 }));
        bench_build::<Ours>(&mut group, &keys);
        bench_build::<Fastbloom>(&mut group, &keys);
        bench_build::<Sbbf>(&mut group, &keys);
        bench_build::<BinaryFuse8>(&mut group, &keys);
        bench_build::<LevelDb>(&mut group, &keys);
        bench_build::<OursRibbon>(&mut group, &keys);
        bench_build::<BinaryFuse16>(&mut group, &keys);
        group.finish();
    }
}

fn query(c: &mut Criterion) {
    for (n, label) in sizes() {
        let keys = Keys::present(n);
        let hits = Keys::new(QUERIES, 0, 2 * (n / QUERIES) as u64); // a spread-out sample of the added keys
        let misses = Keys::absent(QUERIES);
        let ours = Ours::build(&keys);
        let fast = Fastbloom::build(&keys);
        let sbbf = Sbbf::build(&keys);
        let fuse = BinaryFuse8::build(&keys);
        let leveldb = LevelDb::build(&keys);
        let ribbon = OursRibbon::build(&keys);
        let fuse16 = BinaryFuse16::build(&keys);
        drop(keys);
        for (kind, queries) in [("hit", &hits), ("miss", &misses)] {
            let mut group = c.benchmark_group(format!("query/{label}/{kind}"));
            group.throughput(Throughput::Elements(queries.len() as u64));
            group.sample_size(20);
            group.warm_up_time(Duration::from_millis(500));
            group.measurement_time(Duration::from_secs(3));
            bench_query(&mut group, &ours, queries);
            let slices = queries.slices(queries.len());
            bench_batch(
                &mut group,
                "sstfilter BlockedBloom (batch)",
                ours.block(),
                &slices,
            );
            bench_query(&mut group, &fast, queries);
            bench_query(&mut group, &sbbf, queries);
            bench_query(&mut group, &fuse, queries);
            bench_query(&mut group, &leveldb, queries);
            bench_query(&mut group, &ribbon, queries);
            bench_batch(
                &mut group,
                "sstfilter Ribbon (batch)",
                ribbon.block(),
                &slices,
            );
            bench_query(&mut group, &fuse16, queries);
            group.finish();
        }
    }
}

/// Many small filters from one reused builder, as a table builder that writes a filter per 2 KiB of data (LevelDB's
/// layout) or per partition does: 10,000 filters of 47 keys, each taken with `finish_and_reset`, so the builder's
/// memory is kept from one filter to the next.
fn build_small(c: &mut Criterion) {
    let keys = Keys::present(470_000);
    let slices = keys.slices(keys.len());
    let mut group = c.benchmark_group("build/47 keys x 10000, one builder");
    group.throughput(Throughput::Elements(slices.len() as u64));
    group.sample_size(20);
    group.warm_up_time(Duration::from_millis(500));
    group.measurement_time(Duration::from_secs(4));
    let mut builder = FilterBlockBuilder::new(BlockedBloomPolicy::new(10.0).unwrap());
    group.bench_function("sstfilter BlockedBloom", |b| {
        b.iter(|| {
            let mut bytes = 0;
            for filter in slices.chunks(47) {
                for key in filter {
                    builder.add_key(black_box(key));
                }
                bytes += builder.finish_and_reset().len();
            }
            bytes
        })
    });
    group.finish();
}

criterion_group!(benches, build, build_small, query);
criterion_main!(benches);
