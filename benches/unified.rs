//! What the table filter's one reader costs over the low-level readers it calls (target: within 3 %):
//! the same 1024 questions (half about stored keys, half not) asked of `TableFilter` and of the block it wraps
//! directly, in the same process, for a point block (by key and by a hash computed once), a prefix scan, a range
//! block, and a partitioned filter whose loader hands out verified partitions.
//!
//! `cargo bench -p sstfilter --bench unified`

use std::hint::black_box;
use std::ops::Bound;
use std::sync::Arc;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use sstfilter::{
    BlockedBloomPolicy, DEFAULT_PARTITION_BYTES, DelimitedPrefix, FilterBlock, KeyProbe,
    NoPartitions, Partition, PartitionCuts, PartitionLoader, PartitionQuestion, PartitionedFilter,
    RangePolicy, TableFilter, TableFilterBuilder, TableFilterOptions, TableFilterPart,
    VerifiedPartition, key_hash,
};

const KEYS: u64 = 1_000_000;
const QUESTIONS: u64 = 1024;

/// Key `i`: 1000 tenants, ids in steps of 2 (odd ids are absent).
fn key(i: u64) -> Vec<u8> {
    format!("t{:04}/{:010}", i % 1000, 2 * (i / 1000)).into_bytes()
}

/// Half stored keys, half absent ones (an odd id), spread over the table.
fn questions() -> Vec<Vec<u8>> {
    (0..QUESTIONS)
        .map(|q| {
            let i = q.wrapping_mul(2_654_435_761) % KEYS;
            let mut k = key(i);
            if q % 2 == 1 {
                *k.last_mut().unwrap() += 1;
            }
            k
        })
        .collect()
}

/// The blocks of a table filter of `options` over the keys: position `i` is `blocks[i]`.
fn build(options: &TableFilterOptions) -> (Vec<Vec<u8>>, Option<usize>, Option<usize>) {
    let mut keys: Vec<Vec<u8>> = (0..KEYS).map(key).collect();
    keys.sort();
    let mut builder = TableFilterBuilder::new(options);
    for k in &keys {
        builder.add_key(k).unwrap();
    }
    let mut blocks = Vec::new();
    let at = builder
        .finish()
        .unwrap()
        .write(|_: TableFilterPart, bytes| {
            blocks.push(bytes.to_vec());
            Ok(blocks.len() as u64 - 1)
        })
        .unwrap();
    let position = |l: Option<sstfilter::BlockLocation>| l.map(|l| l.offset as usize);
    (blocks, position(at.point), position(at.range))
}

/// A cache of verified partitions, by position, asked in place.
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

fn unified(c: &mut Criterion) {
    let questions = questions();
    let hashes: Vec<_> = questions.iter().map(|q| key_hash(q)).collect();
    let tenants = Arc::new(DelimitedPrefix::new(b'/'));
    let scans: Vec<Vec<u8>> = questions.iter().map(|q| q[..6].to_vec()).collect();
    let ranges: Vec<(Vec<u8>, Vec<u8>)> = questions
        .iter()
        .map(|q| {
            let mut upper = q.clone();
            *upper.last_mut().unwrap() = b'9';
            (q.clone(), upper)
        })
        .collect();

    let options = TableFilterOptions::new()
        .point(BlockedBloomPolicy::new(10.0).unwrap())
        .prefixes(tenants.clone(), true)
        .and_then(|o| o.range(RangePolicy::new(1 << 10, 0.01).unwrap()))
        .unwrap();
    let (blocks, point, range) = build(&options);
    let (point, range) = (&blocks[point.unwrap()][..], &blocks[range.unwrap()][..]);
    let block = FilterBlock::open(point).unwrap();
    let range_block = FilterBlock::open(range).unwrap();
    let table = TableFilter::open(&options, Some(point), None).unwrap();
    let range_table = TableFilter::open(&options, None, Some(range)).unwrap();

    let mut group = c.benchmark_group("unified/point 1M keys x1024");
    group.warm_up_time(Duration::from_millis(500));
    group.measurement_time(Duration::from_secs(3));
    group.bench_function("FilterBlock::may_contain", |b| {
        b.iter(|| {
            questions
                .iter()
                .filter(|q| block.may_contain(black_box(q)))
                .count()
        })
    });
    group.bench_function("TableFilter::may_contain", |b| {
        b.iter(|| {
            questions
                .iter()
                .filter(|q| {
                    table
                        .may_contain(&KeyProbe::new(black_box(q)), &NoPartitions)
                        .must_read()
                })
                .count()
        })
    });
    group.bench_function("FilterBlock::may_contain_hash", |b| {
        b.iter(|| {
            hashes
                .iter()
                .filter(|&&h| block.may_contain_hash(black_box(h)))
                .count()
        })
    });
    group.bench_function("TableFilter::may_contain (hash)", |b| {
        b.iter(|| {
            questions
                .iter()
                .zip(&hashes)
                .filter(|&(q, &h)| {
                    table
                        .may_contain(&KeyProbe::with_hash(black_box(q), h), &NoPartitions)
                        .must_read()
                })
                .count()
        })
    });
    group.bench_function("FilterBlock::may_contain_prefix", |b| {
        b.iter(|| {
            scans
                .iter()
                .filter(|s| {
                    block
                        .may_contain_prefix(tenants.as_ref(), black_box(s))
                        .must_read()
                })
                .count()
        })
    });
    group.bench_function("TableFilter::may_contain_prefix", |b| {
        b.iter(|| {
            scans
                .iter()
                .filter(|s| {
                    table
                        .may_contain_prefix(black_box(s), &NoPartitions)
                        .must_read()
                })
                .count()
        })
    });
    group.finish();

    let mut group = c.benchmark_group("unified/range 1M keys x1024");
    group.warm_up_time(Duration::from_millis(500));
    group.measurement_time(Duration::from_secs(3));
    group.bench_function("FilterBlock::may_contain_range", |b| {
        b.iter(|| {
            ranges
                .iter()
                .filter(|(l, u)| {
                    range_block
                        .may_contain_range(Bound::Included(black_box(l)), Bound::Included(u))
                        .must_read()
                })
                .count()
        })
    });
    group.bench_function("TableFilter::may_contain_range", |b| {
        b.iter(|| {
            ranges
                .iter()
                .filter(|(l, u)| {
                    range_table
                        .may_contain_range(
                            Bound::Included(black_box(l)),
                            Bound::Included(u),
                            &NoPartitions,
                        )
                        .must_read()
                })
                .count()
        })
    });
    group.finish();

    let partitioned = TableFilterOptions::new()
        .point(BlockedBloomPolicy::new(10.0).unwrap())
        .partitioned(DEFAULT_PARTITION_BYTES, PartitionCuts::Anywhere)
        .unwrap();
    let (blocks, index, _) = build(&partitioned);
    let index_bytes = &blocks[index.unwrap()][..];
    let filter = PartitionedFilter::open(index_bytes).unwrap();
    let cache = Verified(
        filter
            .partitions()
            .map(|p| {
                filter
                    .verify_partition(&p, blocks[p.offset as usize].clone())
                    .unwrap()
            })
            .collect(),
    );
    let table = TableFilter::open(&partitioned, Some(index_bytes), None).unwrap();
    let mut group = c.benchmark_group("unified/partitioned 1M keys x1024");
    group.warm_up_time(Duration::from_millis(500));
    group.measurement_time(Duration::from_secs(3));
    group.bench_function("PartitionedFilter::may_contain", |b| {
        b.iter(|| {
            questions
                .iter()
                .filter(|q| filter.may_contain(black_box(q), &cache))
                .count()
        })
    });
    group.bench_function("TableFilter::may_contain", |b| {
        b.iter(|| {
            questions
                .iter()
                .filter(|q| {
                    table
                        .may_contain(&KeyProbe::new(black_box(q)), &cache)
                        .must_read()
                })
                .count()
        })
    });
    group.finish();
}

criterion_group!(benches, unified);
criterion_main!(benches);
