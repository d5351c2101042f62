//! Tables with partitioned filters: every key found through any partition, partitions loaded through a bounded
//! cache and counted, and damage anywhere costs reads, never a key.

use std::sync::Arc;

use sstfilter::{
    BlockedBloomPolicy, FilterPolicy, PartitionCuts, RibbonPolicy, StandardBloomPolicy, key_hash,
};
use sstfilter_table::{PartitionCache, Table, TableBuilder, TableOptions, TableSummary};

type Entries = Vec<(Vec<u8>, Vec<u8>)>;

fn entries(n: usize, salt: &str) -> Entries {
    (0..n)
        .map(|i| {
            (
                format!("{salt}{i:07}").into_bytes(),
                (i as u64).to_le_bytes().to_vec(),
            )
        })
        .collect()
}

fn build(entries: &Entries, options: &TableOptions) -> (TableSummary, Vec<u8>) {
    let mut builder = TableBuilder::new(Vec::new(), options).unwrap();
    for (k, v) in entries {
        builder.add(k, v).unwrap();
    }
    builder.finish().unwrap()
}

fn partitioned(
    policy: impl FilterPolicy + Send + Sync + 'static,
    bytes: usize,
    cuts: PartitionCuts,
) -> TableOptions {
    TableOptions::default().block_size(256).filters(
        sstfilter::TableFilterOptions::new()
            .point(policy)
            .partitioned(bytes, cuts)
            .unwrap(),
    )
}

/// The table in `bytes`, its partitions kept in `cache` (which other tables share).
fn open_cached(bytes: Vec<u8>, len: u64, cache: &PartitionCache) -> Table<Vec<u8>> {
    Table::from_reader_with_cache(bytes, len, &TableOptions::default(), cache.clone()).unwrap()
}

#[test]
fn every_key_is_found_through_its_partition_for_every_kind_and_cut() {
    let policies: [(&str, Arc<dyn FilterPolicy + Send + Sync>); 3] = [
        (
            "BlockedBloom",
            Arc::new(BlockedBloomPolicy::new(10.0).unwrap()),
        ),
        ("Ribbon", Arc::new(RibbonPolicy::new(10.0).unwrap())),
        (
            "StandardBloom",
            Arc::new(StandardBloomPolicy::new(10.0).unwrap()),
        ),
    ];
    for (name, policy) in &policies {
        for cuts in [PartitionCuts::Anywhere, PartitionCuts::AtDataBlocks] {
            for n in [0usize, 1, 2, 500, 3000] {
                let entries = entries(n, "key");
                let options = TableOptions::default().block_size(256).filters(
                    sstfilter::TableFilterOptions::new()
                        .point(policy.clone())
                        .partitioned(256, cuts)
                        .unwrap(),
                );
                let (summary, bytes) = build(&entries, &options);
                let what = format!("{name} {cuts:?} {n} keys");
                let table = Table::from_reader(&bytes[..], bytes.len() as u64, &options).unwrap();
                assert!(
                    table.filter_error().is_none(),
                    "{what}: {:?}",
                    table.filter_error()
                );
                let index = table
                    .table_filter()
                    .partitioned_filter()
                    .expect("a partitioned filter");
                assert_eq!(
                    index.num_partitions() as u64,
                    summary.filter_partitions,
                    "{what}"
                );
                assert_eq!(index.num_keys(), n as u64, "{what}");
                if n >= 500 {
                    assert!(
                        summary.filter_partitions > 2,
                        "{what}: {}",
                        summary.filter_partitions
                    );
                }
                for (k, v) in &entries {
                    assert_eq!(
                        table.get(k).unwrap().as_ref(),
                        Some(v),
                        "{what}: lost {k:?}"
                    );
                    assert_eq!(
                        table.get_with_hash(k, key_hash(k)).unwrap().as_ref(),
                        Some(v)
                    );
                }
                table.verify().unwrap();
                let stats = table.stats();
                assert_eq!(stats.filter_unavailable, 0, "{what}");
                // Unbounded cache: each partition read once, then hit.
                assert_eq!(stats.partition_loads, summary.filter_partitions, "{what}");
                assert_eq!(
                    stats.partition_loads + stats.partition_cache_hits,
                    stats.filter_checks,
                    "{what}"
                );
            }
        }
    }
}

#[test]
fn absent_keys_are_filtered_and_past_the_last_key_load_nothing() {
    let entries = entries(5000, "k");
    let (_, bytes) = build(
        &entries,
        &partitioned(
            BlockedBloomPolicy::new(10.0).unwrap(),
            512,
            PartitionCuts::AtDataBlocks,
        ),
    );
    let table =
        Table::from_reader(&bytes[..], bytes.len() as u64, &TableOptions::default()).unwrap();
    for i in 0..5000 {
        assert_eq!(table.get(format!("k{i:07}x").as_bytes()).unwrap(), None);
    }
    let stats = table.stats();
    assert_eq!(stats.lookups, 5000);
    // About 1 % false positives at 10 bits/key.
    assert!(stats.filter_negatives > 4850, "{stats:?}");
    let before = table.stats();
    assert_eq!(table.get(b"z").unwrap(), None);
    let after = table.stats() - before;
    assert_eq!(
        (
            after.filter_negatives,
            after.partition_loads,
            after.partition_cache_hits
        ),
        (1, 0, 0)
    );
}

#[test]
fn a_shared_cache_keeps_its_budget_across_tables() {
    let cache = PartitionCache::new(8 * 1024);
    let mut tables = Vec::new();
    for t in 0..4 {
        let entries = entries(20_000, &format!("t{t}-"));
        let (summary, bytes) = build(
            &entries,
            &partitioned(
                BlockedBloomPolicy::new(10.0).unwrap(),
                1024,
                PartitionCuts::Anywhere,
            ),
        );
        assert!(summary.filter_partitions >= 20);
        tables.push((open_cached(bytes, summary.file_len, &cache), entries));
    }
    for (table, entries) in &tables {
        for (k, v) in entries.iter().step_by(7) {
            assert_eq!(table.get(k).unwrap().as_ref(), Some(v));
        }
        assert!(
            cache.resident_bytes() <= 8 * 1024,
            "{}",
            cache.resident_bytes()
        );
    }
    assert!(
        cache.resident_bytes() > 4 * 1024,
        "{}",
        cache.resident_bytes()
    );
    let loads: u64 = tables.iter().map(|(t, _)| t.stats().partition_loads).sum();
    let partitions: u64 = tables
        .iter()
        .map(|(t, _)| {
            t.table_filter()
                .partitioned_filter()
                .unwrap()
                .num_partitions() as u64
        })
        .sum();
    // Sorted lookups touch each partition in one run: loads equal partitions even with a small cache.
    assert_eq!(loads, partitions);
    // Reading one table's keys again in reverse, with only ~7 partitions of 1 KiB resident, reloads.
    let (table, entries) = &tables[0];
    let before = table.stats();
    for (k, _) in entries.iter().rev().step_by(7) {
        table.get(k).unwrap();
    }
    assert!((table.stats() - before).partition_loads > 10);
    // Lookups that hit count as hits, and load nothing.
    let (hot, _) = entries.last().unwrap();
    table.get(hot).unwrap();
    let before = table.stats();
    table.get(hot).unwrap();
    let after = table.stats() - before;
    assert_eq!((after.partition_cache_hits, after.partition_loads), (1, 0));
    // A table dropped gives its partitions' bytes back to the shared budget.
    assert!(cache.resident_bytes() > 0 && !cache.is_empty());
    drop(tables);
    assert_eq!((cache.resident_bytes(), cache.len()), (0, 0));
}

/// Three tables of `n` keys each (salted `salt`, then the table's number), in BlockedBloom partitions of about
/// `partition_bytes`, sharing `cache`.
fn sharing(
    cache: &PartitionCache,
    n: usize,
    partition_bytes: usize,
    salt: &str,
) -> Vec<(Table<Vec<u8>>, Entries)> {
    let options = partitioned(
        BlockedBloomPolicy::new(10.0).unwrap(),
        partition_bytes,
        PartitionCuts::Anywhere,
    );
    (0..3)
        .map(|t| {
            let entries = entries(n, &format!("{salt}{t}-"));
            let (summary, bytes) = build(&entries, &options);
            (open_cached(bytes, summary.file_len, cache), entries)
        })
        .collect()
}

/// Threads looking up keys of tables that share a cache too small for their partitions: hits, loads and evictions
/// interleave (a partition in use is never evicted under a lookup), every stored key is found, the budget holds,
/// and tables dropped while the others go on give their bytes back.
#[test]
fn threads_sharing_a_small_cache_find_every_key_and_keep_the_budget() {
    const BUDGET: usize = 6 * 1024;
    let cache = PartitionCache::new(BUDGET);
    let tables = sharing(&cache, 8_000, 1024, "t");
    std::thread::scope(|scope| {
        for worker in 0..4usize {
            let (tables, cache) = (&tables, &cache);
            scope.spawn(move || {
                for round in 0..3 {
                    for (t, (table, entries)) in tables.iter().enumerate() {
                        // Each worker walks the keys from its own place, so that they want different partitions.
                        let start = (worker * 2_003 + round * 977 + t * 31) % entries.len();
                        for (k, v) in entries.iter().cycle().skip(start).step_by(5).take(800) {
                            assert_eq!(table.get(k).unwrap().as_ref(), Some(v));
                            let absent = [k.as_slice(), b"~"].concat();
                            assert_eq!(table.get(&absent).unwrap(), None);
                        }
                        assert!(cache.resident_bytes() <= BUDGET);
                    }
                }
            });
        }
    });
    let stats: Vec<_> = tables.iter().map(|(table, _)| table.stats()).collect();
    assert!(
        stats
            .iter()
            .all(|s| s.partition_loads > 0 && s.partition_cache_hits > 0),
        "{stats:?}"
    );
    drop(tables);
    assert_eq!((cache.resident_bytes(), cache.len()), (0, 0));
}

/// Threads looking up keys of tables that share a cache without a budget, whose partitions, once kept, are read
/// without a lock: every stored key is found, every partition is kept once (two threads may load it at once) and
/// stays, so that lookups after the first pass load nothing, and tables dropped give their bytes back.
#[test]
fn threads_sharing_a_cache_without_a_budget_keep_every_partition_once() {
    let cache = PartitionCache::unbounded();
    let tables = sharing(&cache, 4_000, 512, "u");
    let pass = || {
        std::thread::scope(|scope| {
            for worker in 0..4usize {
                let tables = &tables;
                scope.spawn(move || {
                    for (table, entries) in tables {
                        let start = worker * 997 % entries.len();
                        for (k, v) in entries.iter().cycle().skip(start).step_by(3).take(1_500) {
                            assert_eq!(table.get(k).unwrap().as_ref(), Some(v));
                            // Just below the key, never past the table's last key: every lookup asks a partition.
                            let absent = [&k[..k.len() - 1], b"/"].concat();
                            assert_eq!(table.get(&absent).unwrap(), None);
                        }
                    }
                });
            }
        });
    };
    let each_partition = tables
        .iter()
        .filter_map(|(table, _)| table.table_filter().partitioned_filter())
        .flat_map(|index| index.partitions().map(|p| p.len as usize));
    let (partitions, bytes) = each_partition.fold((0, 0), |(n, b), len| (n + 1, b + len));
    pass();
    let first: Vec<_> = tables.iter().map(|(table, _)| table.stats()).collect();
    // 3,000 keys asked of each table from four places cover all of its partitions.
    assert_eq!((cache.len(), cache.resident_bytes()), (partitions, bytes));
    assert!(
        first
            .iter()
            .all(|s| s.partition_loads > 0 && s.partition_cache_hits > 0)
    );
    pass();
    for ((table, _), first) in tables.iter().zip(&first) {
        let second = table.stats() - *first;
        assert_eq!(second.partition_loads, 0, "{second:?}");
        assert_eq!(second.partition_cache_hits, second.lookups);
    }
    assert_eq!((cache.len(), cache.resident_bytes()), (partitions, bytes));
    drop(tables);
    assert_eq!((cache.resident_bytes(), cache.len()), (0, 0));
}

/// Every bit of every partition and of the index flipped in turn: lookups still find every key (the damaged
/// partition or index is refused and counted), and absent keys still get correct answers.
#[test]
fn damage_to_partitions_or_their_index_costs_reads_never_keys() {
    let entries = entries(300, "d");
    let (summary, good) = build(
        &entries,
        &partitioned(
            BlockedBloomPolicy::new(10.0).unwrap(),
            128,
            PartitionCuts::Anywhere,
        ),
    );
    assert!(summary.filter_partitions >= 4);
    let filter = summary.filter.unwrap();
    let region = summary.data_bytes as usize..(filter.offset() + filter.size() + 4) as usize;
    let mut damaged = good.clone();
    let (mut unusable_at_open, mut unusable_partitions) = (0, 0);
    for bit in region.start * 8..region.end * 8 {
        damaged[bit / 8] ^= 1 << (bit % 8);
        let table =
            Table::from_reader(&damaged[..], damaged.len() as u64, &TableOptions::default())
                .expect("only the filter is damaged");
        if table.filter_error().is_some() {
            unusable_at_open += 1;
        }
        for (k, v) in entries.iter().step_by(3) {
            assert_eq!(
                table.get(k).unwrap().as_ref(),
                Some(v),
                "bit {bit}: lost {k:?}"
            );
        }
        assert_eq!(table.get(b"d0000150x").unwrap(), None);
        if table.stats().filter_unavailable > 0 && table.filter_error().is_none() {
            unusable_partitions += 1;
        }
        damaged[bit / 8] ^= 1 << (bit % 8);
    }
    let index_bits = (filter.size() + 4) * 8;
    assert_eq!(
        unusable_at_open, index_bits,
        "every index flip makes the filter unusable at open"
    );
    assert_eq!(
        unusable_partitions,
        (region.len() as u64) * 8 - index_bits,
        "every partition flip makes that partition unusable when loaded"
    );
}

#[test]
fn prefix_extractor_and_partitions_work_together() {
    // Keys `p` + 7 digits, multiples of 100: each has its own 7-byte prefix, and `p` + 6 digits ending in 5 is the
    // prefix of no key, between keys.
    let extractor = Arc::new(sstfilter::FixedPrefix::new(7));
    let entries: Entries = (0..2000u64)
        .map(|i| {
            (
                format!("p{:07}", i * 100).into_bytes(),
                i.to_le_bytes().to_vec(),
            )
        })
        .collect();
    // In either order: neither option cancels the other.
    for options in [
        TableOptions::default().filters(
            sstfilter::TableFilterOptions::new()
                .point(sstfilter::BlockedBloomPolicy::new(10.0).unwrap())
                .prefixes(extractor.clone(), true)
                .and_then(|o| o.partitioned(256, PartitionCuts::Anywhere))
                .unwrap(),
        ),
        TableOptions::default().filters(
            sstfilter::TableFilterOptions::new()
                .point(sstfilter::BlockedBloomPolicy::new(10.0).unwrap())
                .partitioned(256, PartitionCuts::Anywhere)
                .and_then(|o| o.prefixes(extractor.clone(), true))
                .unwrap(),
        ),
    ] {
        let (summary, bytes) = build(&entries, &options);
        assert!(summary.filter_partitions > 3, "{summary:?}");
        let table = Table::from_reader(&bytes[..], bytes.len() as u64, &options).unwrap();
        assert!(table.table_filter().partitioned_filter().is_some());
        for (key, value) in &entries {
            assert_eq!(table.get(key).unwrap().as_deref(), Some(&value[..]));
            let prefix = &key[..7];
            assert!(table.may_contain_prefix(prefix).must_read());
            assert_eq!(table.scan_prefix(prefix).unwrap().len(), 1);
        }
        // Each key's three questions asked its partition: loaded by the first, found in the cache after (prefix
        // questions count their hits as lookups do).
        let stats = table.stats();
        assert_eq!(
            (stats.partition_loads, stats.partition_cache_hits),
            (
                summary.filter_partitions,
                3 * entries.len() as u64 - summary.filter_partitions
            ),
            "{stats:?}"
        );
        // Prefixes no key has, inside the key range: the partitions they would lie in say so.
        let skipped = (0..2000u64)
            .map(|i| format!("p{:06}", i * 10 + 5))
            .filter(|prefix| !table.may_contain_prefix(prefix.as_bytes()).must_read())
            .count();
        assert!(skipped > 1900, "{skipped} of 2000 absent prefixes skipped");
    }
}

/// Writes the fuzz seed of `open_table` for partitioned tables when `SSTFILTER_FUZZ_SEED` names a path.
#[test]
fn a_small_partitioned_table_seeds_the_fuzzer() {
    let (summary, bytes) = build(
        &entries(40, "s"),
        &partitioned(
            BlockedBloomPolicy::new(10.0).unwrap(),
            64,
            PartitionCuts::AtDataBlocks,
        ),
    );
    assert!(summary.filter_partitions >= 3);
    let table =
        Table::from_reader(&bytes[..], bytes.len() as u64, &TableOptions::default()).unwrap();
    table.verify().unwrap();
    if let Some(path) = std::env::var_os("SSTFILTER_FUZZ_SEED") {
        std::fs::write(path, &bytes).unwrap();
    }
}
