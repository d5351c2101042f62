//! What a cached partition costs a table lookup, by the kind of slot that holds it: a table opened with
//! `PartitionCache::unbounded()` keeps its partitions in slots filled once and read without a lock, one opened
//! with a budget in slots behind a read-write lock (so a partition can be evicted). Both caches here hold every
//! partition (the budget is larger than the filter), so the two rows differ only by the slot a hit reads.
//!
//! `cargo bench -p sstfilter-bench --bench partition_cache`
//!
//! One table of 2·10^6 keys (`user:` and 12 digits, 16-byte values), BlockedBloom at 10 bits/key in 4 KiB
//! partitions cut at data blocks; 1024 absent keys (every one beside a stored key, spread over the table),
//! asked through `Table::get` after a pass that caches every partition they need. An absent key the filter rules
//! out reads no data block, so the rows time the filter's path: the index search, the cache hit and the probe.

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use sstfilter::{BlockedBloomPolicy, PartitionCuts, TableFilterOptions};
use sstfilter_table::{PartitionCache, Table, TableBuilder, TableOptions};

const KEYS: u64 = 2_000_000;

fn key(i: u64) -> Vec<u8> {
    format!("user:{i:012}").into_bytes()
}

fn partition_cache(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join("table.sst");
    let filters = TableFilterOptions::new()
        .point(BlockedBloomPolicy::new(10.0).expect("a valid policy"))
        .partitioned(4096, PartitionCuts::AtDataBlocks)
        .expect("a valid partition size");
    let options = TableOptions::default().filters(filters);
    let mut builder = TableBuilder::create(&path, &options).expect("create");
    for i in 0..KEYS {
        builder.add(&key(i), &[0u8; 16]).expect("add");
    }
    builder.finish().expect("finish");

    let absent: Vec<Vec<u8>> = (0..1024u64)
        .map(|i| {
            let mut k = key(i.wrapping_mul(2_654_435_761) % KEYS);
            k.push(b'x');
            k
        })
        .collect();
    let lookups = |table: &Table| {
        absent
            .iter()
            .filter(|k| table.get(black_box(k)).expect("a readable table").is_some())
            .count()
    };
    let mut group = c.benchmark_group("partition_cache/2M keys, 1024 absent lookups");
    group.warm_up_time(Duration::from_millis(500));
    group.measurement_time(Duration::from_secs(3));
    for (name, cache) in [
        (
            "unbounded: slots filled once, read without a lock",
            PartitionCache::unbounded(),
        ),
        (
            "budgeted: slots behind a read-write lock",
            PartitionCache::new(1 << 30),
        ),
    ] {
        let table = Table::open_with_cache(&path, &options, cache).expect("open");
        assert_eq!(lookups(&table), 0, "every key asked is absent");
        group.bench_function(name, |b| b.iter(|| lookups(&table)));
    }
    group.finish();
}

criterion_group!(benches, partition_cache);
criterion_main!(benches);
