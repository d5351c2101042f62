//! What verifying on open costs (issue 26): `FilterBlock::open` (structure and CRC32) against
//! `open_unverified` (structure only, what `open` did before), each followed by one probe, and a probe of an
//! opened block, for BlockedBloom blocks of 4 KiB, 64 KiB and 1.25 MB (10 bits/key); and a partitioned lookup
//! whose loader hands out verified partitions from its cache against one handing out bytes (which the reader
//! then verifies on every load).
//!
//! `cargo bench -p sstfilter --bench open`

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use sstfilter::{
    BlockedBloomPolicy, FilterBlock, FilterBlockBuilder, Partition, PartitionLoader,
    PartitionQuestion, PartitionedFilter, PartitionedFilterBuilder, VerifiedPartition,
};

fn key(i: u64) -> Vec<u8> {
    format!("user:{i:012}").into_bytes()
}

fn block_of(n: u64) -> Vec<u8> {
    let mut builder = FilterBlockBuilder::new(BlockedBloomPolicy::new(10.0).unwrap());
    for i in 0..n {
        builder.add_key(&key(i));
    }
    builder.finish()
}

fn open(c: &mut Criterion) {
    // 10 bits/key: 4 KiB, 64 KiB and 1.25 MB of filter.
    for (label, n) in [("4KiB", 3_277u64), ("64KiB", 52_429), ("1.25MB", 1_000_000)] {
        let block = block_of(n);
        let probe = key(n / 2);
        let mut group = c.benchmark_group(format!("open/{label}"));
        group.warm_up_time(Duration::from_millis(300));
        group.measurement_time(Duration::from_secs(2));
        group.bench_function("open_unverified + probe", |b| {
            b.iter(|| {
                let filter = FilterBlock::open_unverified(black_box(&block[..])).unwrap();
                filter.may_contain(black_box(&probe))
            })
        });
        group.bench_function("open + probe", |b| {
            b.iter(|| {
                let filter = FilterBlock::open(black_box(&block[..])).unwrap();
                filter.may_contain(black_box(&probe))
            })
        });
        let opened = FilterBlock::open(&block[..]).unwrap();
        group.bench_function("probe", |b| {
            b.iter(|| opened.may_contain(black_box(&probe)))
        });
        group.finish();
    }
}

/// A cache of verified partitions (what a store's cache holds), asked in place.
struct Verified(Vec<VerifiedPartition<Vec<u8>>>);

impl PartitionLoader for Verified {
    type Block<'a> = &'a [u8];
    type Error = ();
    fn load(&self, _: &Partition) -> Result<&[u8], ()> {
        Err(())
    }
    fn ask_in_place<Q: PartitionQuestion>(&self, question: &Q) -> Option<Q::Answer> {
        Some(question.ask(self.0.get(question.position())?))
    }
}

/// Bytes handed out as they are, which the reader verifies on every load.
struct Bytes(Vec<Vec<u8>>);

impl PartitionLoader for Bytes {
    type Block<'a> = &'a [u8];
    type Error = ();
    fn load(&self, p: &Partition) -> Result<&[u8], ()> {
        self.0.get(p.position).map(|b| &b[..]).ok_or(())
    }
}

fn partitioned(c: &mut Criterion) {
    for (label, n) in [("1M", 1_000_000u64), ("10M", 10_000_000)] {
        let mut builder = PartitionedFilterBuilder::new(BlockedBloomPolicy::new(10.0).unwrap());
        for i in 0..n {
            builder.add_key(&key(i)).unwrap();
        }
        let partitions = builder.finish();
        let offsets: Vec<u64> = (0..partitions.blocks().len() as u64).collect();
        let index = PartitionedFilter::open(partitions.index(&offsets).unwrap()).unwrap();
        let verified = Verified(
            index
                .partitions()
                .zip(partitions.blocks())
                .map(|(p, b)| index.verify_partition(&p, b.clone()).unwrap())
                .collect(),
        );
        let bytes = Bytes(partitions.blocks().to_vec());
        let with_heads = index.clone().with_search_heads();
        // Half stored keys, half absent ones beside them, spread over the key space.
        let probes: Vec<Vec<u8>> = (0..1024u64)
            .map(|i| {
                let mut k = key(i.wrapping_mul(2_654_435_761) % n);
                if i % 2 == 1 {
                    k.push(b'x');
                }
                k
            })
            .collect();
        let mut group = c.benchmark_group(format!(
            "partitioned/{label} keys, 4KiB partitions, 1024 lookups"
        ));
        group.warm_up_time(Duration::from_millis(300));
        group.measurement_time(Duration::from_secs(3));
        group.bench_function("verified in the cache", |b| {
            b.iter(|| {
                probes
                    .iter()
                    .filter(|k| index.may_contain(k, &verified))
                    .count()
            })
        });
        // The separator search's own machinery: the same cached lookups, the partition found through the
        // heads (`with_search_heads`) rather than by a binary search comparing whole separators.
        group.bench_function("verified in the cache, search heads", |b| {
            b.iter(|| {
                probes
                    .iter()
                    .filter(|k| with_heads.may_contain(k, &verified))
                    .count()
            })
        });
        group.bench_function("bytes, verified on each load", |b| {
            b.iter(|| {
                probes
                    .iter()
                    .filter(|k| index.may_contain(k, &bytes))
                    .count()
            })
        });
        group.finish();
    }
}

criterion_group!(benches, open, partitioned);
criterion_main!(benches);
