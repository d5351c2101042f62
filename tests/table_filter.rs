//! The table filter in every combination (point policy of each kind or none; prefixes with or without whole keys,
//! or none; a range filter or none; one block or partitions cut anywhere or at data blocks): no stored key, no scan
//! over a stored key's prefix and no range holding a stored key is ever answered "absent", through any loader,
//! with the blocks intact or damaged; and absent keys, prefixes and ranges are mostly answered "absent".

use std::ops::Bound::{self, Excluded, Included, Unbounded};
use std::sync::Arc;

use sstfilter::{
    Answer, BlockedBloomPolicy, DelimitedPrefix, FilterBlock, FixedPrefix, KeyProbe, NoPartitions,
    Partition, PartitionCuts, PartitionLoader, PartitionQuestion, PrefixExtractor, RangePolicy,
    Reason, RibbonPolicy, StandardBloomPolicy, TableFilter, TableFilterBlocks, TableFilterBuilder,
    TableFilterOptions, TableFilterPart, UsageError, VerifiedPartition,
};

/// Keys `tNN/` + 6 digits, sorted: 40 tenants (prefixes of 4 bytes), the ids of each a multiple of 10.
fn keys(n: usize) -> Vec<Vec<u8>> {
    let mut keys: Vec<Vec<u8>> = (0..n)
        .map(|i| format!("t{:02}/{:06}", i % 40, (i / 40) * 10).into_bytes())
        .collect();
    keys.sort();
    keys
}

/// The blocks of a table filter as a store keeps them: position = index in `blocks`.
#[derive(Default)]
struct Store {
    blocks: Vec<Vec<u8>>,
}

/// Hands partitions out as bytes (the reader verifies them on every load), possibly damaged.
struct Bytes<'a>(&'a Store);

impl PartitionLoader for Bytes<'_> {
    type Block<'b>
        = &'b [u8]
    where
        Self: 'b;
    type Error = ();
    fn load(&self, p: &Partition) -> Result<&[u8], ()> {
        let block = self
            .0
            .blocks
            .get(usize::try_from(p.offset).map_err(|_| ())?)
            .ok_or(())?;
        Ok(block)
    }
}

/// A cache of partitions verified as they entered (the damaged ones never enter), asked in place.
struct Cache(Vec<Option<VerifiedPartition<Vec<u8>>>>);

impl PartitionLoader for Cache {
    type Block<'b>
        = &'b [u8]
    where
        Self: 'b;
    type Error = ();
    fn load(&self, _: &Partition) -> Result<&[u8], ()> {
        Err(())
    }
    fn ask_in_place<Q: PartitionQuestion>(&self, question: &Q) -> Option<Q::Answer> {
        let cached = self.0.get(question.position()).and_then(Option::as_ref)?;
        Some(question.ask(cached))
    }
}

#[derive(Debug, Clone, Copy)]
enum Point {
    None,
    Blocked,
    Ribbon,
    Standard,
}

#[derive(Debug, Clone, Copy)]
enum Prefixes {
    None,
    WithWholeKeys,
    Only,
}

#[derive(Debug, Clone, Copy)]
enum Layout {
    OneBlock,
    Anywhere,
    AtDataBlocks,
}

/// The options of a combination, or the error of the setting that refuses it (prefixes or partitions without a
/// point policy).
fn options(
    point: Point,
    prefixes: Prefixes,
    range: bool,
    layout: Layout,
) -> Result<TableFilterOptions, UsageError> {
    let options = match point {
        Point::None => TableFilterOptions::new(),
        Point::Blocked => TableFilterOptions::new().point(BlockedBloomPolicy::new(10.0).unwrap()),
        Point::Ribbon => TableFilterOptions::new().point(RibbonPolicy::new(10.0).unwrap()),
        Point::Standard => TableFilterOptions::new().point(StandardBloomPolicy::new(10.0).unwrap()),
    };
    let extractor: Arc<dyn PrefixExtractor> = Arc::new(FixedPrefix::new(4));
    let options = match prefixes {
        Prefixes::None => options,
        Prefixes::WithWholeKeys => options.prefixes(extractor, true)?,
        Prefixes::Only => options.prefixes(extractor, false)?,
    };
    let options = if range {
        options.range(RangePolicy::new(1 << 10, 0.01).unwrap())?
    } else {
        options
    };
    match layout {
        Layout::OneBlock => Ok(options),
        Layout::Anywhere => options.partitioned(256, PartitionCuts::Anywhere),
        Layout::AtDataBlocks => options.partitioned(256, PartitionCuts::AtDataBlocks),
    }
}

/// Builds the table filter of `keys` (a data block ending every 7 keys) into a store; returns the store and the
/// positions of the point and range blocks.
fn build(
    options: &TableFilterOptions,
    keys: &[Vec<u8>],
) -> Result<(Store, Option<usize>, Option<usize>), UsageError> {
    let mut builder = TableFilterBuilder::new(options);
    for (i, key) in keys.iter().enumerate() {
        builder.add_key(key)?;
        builder.add_key(key)?; // a second version of the key counts once
        if i % 7 == 6 || i + 1 == keys.len() {
            builder.end_data_block();
        }
    }
    let blocks = builder.finish()?;
    let mut store = Store::default();
    let locations = blocks
        .write(|part, bytes| {
            if let TableFilterPart::Partition(i) = part {
                assert_eq!(Some(bytes), blocks.partitions().map(|p| &p.blocks()[i][..]));
            }
            store.blocks.push(bytes.to_vec());
            Ok(store.blocks.len() as u64 - 1)
        })
        .unwrap();
    let position = |l: Option<sstfilter::BlockLocation>| l.map(|l| l.offset as usize);
    Ok((store, position(locations.point), position(locations.range)))
}

/// A range question's two bounds.
type KeyRange<'k> = (Bound<&'k [u8]>, Bound<&'k [u8]>);

/// The table filter over the store's blocks, read with `options` (whose extractor the prefix questions use).
fn open<'a>(
    options: &TableFilterOptions,
    store: &'a Store,
    point: Option<usize>,
    range: Option<usize>,
) -> TableFilter<&'a [u8]> {
    let get = |at: Option<usize>| at.map(|at| store.blocks[at].as_slice());
    TableFilter::open(options, get(point), get(range)).unwrap()
}

/// Every stored key, every scan over a stored key's prefix (read with the table's extractor, `filter`, and
/// without, `plain`) and every range that holds a stored key answers "may contain" (or cannot tell), never
/// "absent".
fn assert_finds_all<L: PartitionLoader>(
    what: &str,
    (filter, plain): (&TableFilter<&[u8]>, &TableFilter<&[u8]>),
    loader: &L,
    keys: &[Vec<u8>],
) {
    for (i, key) in keys.iter().enumerate() {
        assert!(
            filter.may_contain(&KeyProbe::new(key), loader).must_read(),
            "{what}: lost {key:?}"
        );
        assert!(
            plain.may_contain(&KeyProbe::new(key), loader).must_read(),
            "{what}: lost {key:?} without extractor"
        );
        for end in [0, 1, 2, 3, 4, 5, key.len()] {
            let scan = &key[..end];
            assert!(
                filter.may_contain_prefix(scan, loader).must_read(),
                "{what}: lost {key:?} in a scan of {scan:?}"
            );
            assert!(
                plain.may_contain_prefix(scan, loader).must_read(),
                "{what}: lost {key:?} in a scan of {scan:?} without extractor"
            );
        }
        let next = keys.get(i + 1).cloned();
        let bounds: [KeyRange<'_>; 4] = [
            (Included(key), Included(key)),
            (Included(key), next.as_deref().map_or(Unbounded, Excluded)),
            (Unbounded, Included(key)),
            (Excluded(&key[..key.len() - 1]), Unbounded),
        ];
        for (lower, upper) in bounds {
            assert!(
                filter.may_contain_range(lower, upper, loader).must_read(),
                "{what}: lost {key:?} in {lower:?}..{upper:?}"
            );
        }
    }
}

#[test]
fn every_combination_finds_every_key_through_every_loader() {
    let keys = keys(1500);
    let mut combinations = 0;
    for point in [Point::None, Point::Blocked, Point::Ribbon, Point::Standard] {
        for prefixes in [Prefixes::None, Prefixes::WithWholeKeys, Prefixes::Only] {
            for range in [false, true] {
                for layout in [Layout::OneBlock, Layout::Anywhere, Layout::AtDataBlocks] {
                    let what = format!("{point:?} {prefixes:?} range={range} {layout:?}");
                    let options = options(point, prefixes, range, layout);
                    let needs_point =
                        !matches!((prefixes, layout), (Prefixes::None, Layout::OneBlock));
                    if matches!(point, Point::None) && needs_point {
                        assert!(
                            matches!(options, Err(UsageError::InvalidSetting { .. })),
                            "{what}: refused where it is set"
                        );
                        continue;
                    }
                    let options = options.unwrap();
                    let (store, point_at, range_at) = build(&options, &keys).unwrap();
                    let filter = open(&options, &store, point_at, range_at);
                    let plain = open(&TableFilterOptions::new(), &store, point_at, range_at);
                    assert!(
                        filter.point_error().is_none() && filter.range_error().is_none(),
                        "{what}"
                    );
                    assert_eq!(
                        filter.partitioned_filter().is_some(),
                        !matches!(layout, Layout::OneBlock),
                        "{what}"
                    );
                    assert_finds_all(&what, (&filter, &plain), &Bytes(&store), &keys);
                    if let Some(index) = filter.partitioned_filter() {
                        let cache = Cache(
                            index
                                .partitions()
                                .map(|p| {
                                    index
                                        .verify_partition(
                                            &p,
                                            store.blocks[p.offset as usize].clone(),
                                        )
                                        .ok()
                                })
                                .collect(),
                        );
                        assert_finds_all(&what, (&filter, &plain), &cache, &keys);
                        // Without a loader, a partitioned filter cannot tell, and says so.
                        assert_eq!(
                            filter.may_contain(&KeyProbe::new(&keys[10]), &NoPartitions),
                            if range {
                                Answer::MayContain(Reason::Matched)
                            } else {
                                Answer::MayContain(Reason::Unusable)
                            },
                            "{what}"
                        );
                    }
                    combinations += 1;
                }
            }
        }
    }
    // 4 · 3 · 2 · 3 = 72, of which 2 · 8 have no point policy for prefixes or partitions to live in (none: 6).
    assert_eq!(combinations, 72 - 16);
}

/// Absent keys, scans of prefixes no key has, and short empty ranges are answered "absent" by the filters that
/// can: the combination is not only safe, it filters.
#[test]
fn every_combination_filters_what_it_holds_filters_for() {
    let keys = keys(4000);
    for prefixes in [Prefixes::None, Prefixes::WithWholeKeys, Prefixes::Only] {
        for range in [false, true] {
            for layout in [Layout::OneBlock, Layout::Anywhere, Layout::AtDataBlocks] {
                let what = format!("{prefixes:?} range={range} {layout:?}");
                let options = options(Point::Blocked, prefixes, range, layout).unwrap();
                let (store, point_at, range_at) = build(&options, &keys).unwrap();
                let filter = open(&options, &store, point_at, range_at);
                let loader = Bytes(&store);
                // Ids ending in 5 are between stored ids (multiples of 10).
                let absent: Vec<Vec<u8>> = (0..2000)
                    .map(|i| format!("t{:02}/{:06}", i % 40, (i / 40) * 10 + 5).into_bytes())
                    .collect();
                let skipped = |answer: fn(&TableFilter<&[u8]>, &[u8], &Bytes<'_>) -> Answer| {
                    absent
                        .iter()
                        .filter(|k| answer(&filter, k, &loader) == Answer::Absent)
                        .count()
                };
                let by_key = skipped(|f, k, l| f.may_contain(&KeyProbe::new(k), l));
                let whole_keys = !matches!(prefixes, Prefixes::Only);
                if whole_keys || range {
                    assert!(
                        by_key > 1900,
                        "{what}: {by_key} of 2000 absent keys skipped"
                    );
                }
                // Tenants 40..79 hold nothing.
                let scans = (40..80)
                    .filter(|t| {
                        filter.may_contain_prefix(format!("t{t:02}/").as_bytes(), &loader)
                            == Answer::Absent
                    })
                    .count();
                if !matches!(prefixes, Prefixes::None) || range {
                    assert!(scans >= 38, "{what}: {scans} of 40 empty tenants skipped");
                }
                let ranges = skipped(|f, k, l| {
                    let mut end = k.to_vec();
                    *end.last_mut().unwrap() += 3; // id+5 ..= id+8: no stored id
                    f.may_contain_range(Included(k), Included(&end), l)
                });
                if range {
                    assert!(
                        ranges > 1900,
                        "{what}: {ranges} of 2000 empty ranges skipped"
                    );
                } else {
                    assert_eq!(ranges, 0, "{what}: a point filter cannot answer a range");
                }
            }
        }
    }
}

/// Damaged partitions, point and range blocks lose no key: a block that does not verify answers "may contain",
/// through either loader.
#[test]
fn damaged_blocks_lose_nothing() {
    let keys = keys(2000);
    for layout in [Layout::OneBlock, Layout::Anywhere] {
        let options = options(Point::Blocked, Prefixes::WithWholeKeys, true, layout).unwrap();
        let (mut store, point_at, range_at) = build(&options, &keys).unwrap();
        let n = store.blocks.len();
        for (b, block) in store.blocks.iter_mut().enumerate() {
            // Every block: a few payload bytes zeroed (what a torn write leaves).
            let at = block.len() / 3;
            let end = (at + 16).min(block.len());
            block[at..end].fill(0);
            let _ = b;
        }
        let filter = open(&options, &store, point_at, range_at);
        let plain = open(&TableFilterOptions::new(), &store, point_at, range_at);
        let what = format!("{layout:?}, {n} blocks all damaged");
        assert_finds_all(&what, (&filter, &plain), &Bytes(&store), &keys);
        assert!(filter.range_error().is_some(), "{what}");
    }
}

/// Counting happens in one place: every answer of a table filter with statistics is counted once, by kind.
#[test]
fn answers_are_counted_once_by_kind() {
    let keys = keys(500);
    let options = options(Point::Blocked, Prefixes::None, false, Layout::OneBlock).unwrap();
    let (store, point_at, range_at) = build(&options, &keys).unwrap();
    let stats = sstfilter::FilterStats::new();
    let filter = open(&options, &store, point_at, range_at).with_stats(stats.clone());
    for key in &keys {
        assert_eq!(
            filter.may_contain(&KeyProbe::new(key), &NoPartitions),
            Answer::MayContain(Reason::Matched)
        );
    }
    assert_eq!(
        filter.may_contain_prefix(b"t00/", &NoPartitions),
        Answer::MayContain(Reason::NoPrefixes)
    );
    let counts = stats.counts();
    assert_eq!(counts.may_contain + counts.absent, 500);
    assert_eq!((counts.unfiltered, counts.decode_errors), (1, 0));
    // An unusable filter is a decode error, answered "may contain".
    let broken = TableFilter::open(
        &options,
        Some(&b"not a filter block, just bytes that are long enough"[..]),
        None,
    )
    .unwrap()
    .with_stats(stats.clone());
    assert_eq!(
        broken.may_contain(&KeyProbe::new(b"k"), &NoPartitions),
        Answer::MayContain(Reason::Unusable)
    );
    assert_eq!(stats.counts().decode_errors, 1);
}

/// Every string of up to 4 letters over `abc`, in order.
fn universe() -> Vec<Vec<u8>> {
    let mut all: Vec<Vec<u8>> = vec![Vec::new()];
    let mut last = vec![Vec::new()];
    for _ in 0..4 {
        last = last
            .iter()
            .flat_map(|s: &Vec<u8>| b"abc".iter().map(move |&c| [&s[..], &[c]].concat()))
            .collect();
        all.extend(last.iter().cloned());
    }
    all.sort();
    all
}

/// On a small universe, exhaustively: tiny partitions (one key each, so separators fall at every length and scans
/// span several partitions, or just the one after the partition a separator equal to the scan ends), prefixes of 2
/// bytes fixed or capped, keys pseudo-random subsets from dense to sparse: every scan of every string that some
/// key starts with answers "may contain".
#[test]
fn scans_across_tiny_partitions_lose_nothing_exhaustively() {
    let all = universe();
    for seed in 0..24u64 {
        let sparseness = 2 + seed % 12;
        let keys: Vec<Vec<u8>> = all
            .iter()
            .enumerate()
            .filter(|(i, _)| {
                let mut h = (*i as u64 + 1)
                    .wrapping_add(seed << 32)
                    .wrapping_mul(0x9E37_79B9_7F4A_7C15);
                h ^= h >> 29;
                (h >> 20).is_multiple_of(sparseness)
            })
            .map(|(_, k)| k.clone())
            .collect();
        let extractors: [Arc<dyn PrefixExtractor>; 2] = [
            Arc::new(FixedPrefix::new(2)),
            Arc::new(sstfilter::CappedPrefix::new(2)),
        ];
        for extractor in extractors {
            for whole_keys in [true, false] {
                let options = TableFilterOptions::new()
                    .point(BlockedBloomPolicy::new(10.0).unwrap())
                    .prefixes(extractor.clone(), whole_keys)
                    .and_then(|o| o.partitioned(1, PartitionCuts::Anywhere))
                    .unwrap();
                let (store, point_at, range_at) = build(&options, &keys).unwrap();
                let filter = open(&options, &store, point_at, range_at);
                let what = format!("seed {seed}, {} whole_keys={whole_keys}", extractor.name());
                // A partition of one byte holds one key (with whole keys; of prefixes only, keys that add no hash
                // share one).
                let partitions = filter.partitioned_filter().unwrap().num_partitions();
                if whole_keys {
                    assert_eq!(partitions, keys.len(), "{what}");
                }
                assert!(partitions >= 3, "{what}");
                for scan in &all {
                    if keys.iter().any(|k| k.starts_with(scan)) {
                        assert!(
                            filter.may_contain_prefix(scan, &Bytes(&store)).must_read(),
                            "{what}: scan {:?} lost",
                            String::from_utf8_lossy(scan)
                        );
                    }
                }
                for key in &keys {
                    assert!(
                        filter
                            .may_contain(&KeyProbe::new(key), &Bytes(&store))
                            .must_read(),
                        "{what}: {key:?}"
                    );
                }
            }
        }
    }
}

/// A table sorted by a comparator that is not bytewise: a point filter (with prefixes) takes its keys in any
/// order; a range filter or partitions, which need bytewise order, are refused with it.
#[test]
fn keys_in_any_order_build_point_filters_only() {
    let extractor = Arc::new(FixedPrefix::new(3));
    let options = TableFilterOptions::any_key_order()
        .point(BlockedBloomPolicy::new(10.0).unwrap())
        .prefixes(extractor.clone(), true)
        .unwrap();
    let mut keys = keys(2000);
    keys.reverse();
    let mut builder = TableFilterBuilder::new(&options);
    for key in &keys {
        builder.add_key(key).unwrap();
        builder.add_key(key).unwrap(); // a repeat counts once
    }
    assert_eq!(builder.len(), keys.len() as u64);
    let blocks = builder.finish().unwrap();
    let filter = TableFilter::open(&options, blocks.point_block(), None).unwrap();
    for key in &keys {
        assert!(
            filter
                .may_contain(&KeyProbe::new(key), &NoPartitions)
                .must_read()
        );
        assert!(
            filter
                .may_contain_prefix(&key[..3], &NoPartitions)
                .must_read()
        );
    }
    // A range filter or partitions are refused with it, where they are set.
    let policy = RangePolicy::new(16, 0.01).unwrap();
    let sorted_only = [
        options.clone().range(policy).err(),
        options
            .clone()
            .partitioned(4096, PartitionCuts::Anywhere)
            .err(),
    ];
    for refused in sorted_only {
        assert!(
            matches!(refused, Some(UsageError::InvalidSetting { .. })),
            "{refused:?}"
        );
    }
    // Without it, the same keys are refused at the first one out of order.
    let bytewise = TableFilterOptions::new().point(BlockedBloomPolicy::new(10.0).unwrap());
    let mut builder = TableFilterBuilder::new(&bytewise);
    builder.add_key(&keys[0]).unwrap();
    assert!(matches!(
        builder.add_key(&keys[1]),
        Err(UsageError::KeysOutOfOrder)
    ));
    assert_eq!(builder.len(), 1);
}

/// Partitions cut at data blocks, from a store that never says where a data block ends (or closes the filter
/// before its last block): the table builds, with partitions at most four times their size, and the builder then
/// builds the next table exactly as a fresh one would.
#[test]
fn partitions_at_data_blocks_without_data_block_ends_stay_bounded() {
    let options = TableFilterOptions::new()
        .point(BlockedBloomPolicy::new(10.0).unwrap())
        .partitioned(256, PartitionCuts::AtDataBlocks)
        .and_then(|o| o.range(RangePolicy::new(1 << 10, 0.01).unwrap()))
        .unwrap();
    let first: Vec<Vec<u8>> = (0..5000).map(|i| format!("m{i:05}").into_bytes()).collect();
    let next: Vec<Vec<u8>> = (0..100).map(|i| format!("a{i:04}").into_bytes()).collect();
    let mut builder = TableFilterBuilder::new(&options);
    for key in &first {
        builder.add_key(key).unwrap();
    }
    let blocks = builder.finish_and_reset().unwrap();
    assert_eq!(builder.len(), 0);
    let partitions = blocks.partitions().unwrap();
    assert!(
        partitions.blocks().len() > 1,
        "one partition of the whole table"
    );
    for block in partitions.blocks() {
        assert!(
            block.len() <= 4 * 256 + 64,
            "a partition of {} bytes",
            block.len()
        );
    }
    let mut fresh = TableFilterBuilder::new(&options);
    for key in &next {
        builder.add_key(key).unwrap();
        fresh.add_key(key).unwrap();
    }
    let (reused, fresh) = (builder.finish_and_reset().unwrap(), fresh.finish().unwrap());
    assert_eq!(reused.num_keys(), 100);
    assert_eq!(reused.range_block(), fresh.range_block());
    let blocks = |b: &TableFilterBlocks| b.partitions().unwrap().blocks().to_vec();
    assert_eq!(blocks(&reused), blocks(&fresh));
    let range = TableFilter::open(&options, None, reused.range_block()).unwrap();
    assert_eq!(
        range.may_contain_range(
            Included(&b"m00000"[..]),
            Included(&b"m04999"[..]),
            &NoPartitions
        ),
        Answer::Absent,
        "the first table's keys are not in the next table's range filter"
    );
}

/// In any key order a repeated key counts once, and a prefix is in the filter once, wherever its keys come:
/// the block is the one the same keys build in order.
#[test]
fn keys_in_any_order_are_counted_once_each() {
    let point = TableFilterOptions::any_key_order().point(BlockedBloomPolicy::new(10.0).unwrap());
    let mut builder = TableFilterBuilder::new(&point);
    for key in ["b", "a", "b", "c", "a", "a"] {
        builder.add_key(key.as_bytes()).unwrap();
    }
    assert_eq!(builder.finish_and_reset().unwrap().num_keys(), 3);

    // 100 tenants' keys, 60 tenants, in an order that interleaves the tenants.
    let keys: Vec<Vec<u8>> = (0..100u32)
        .map(|i| format!("t{:02}:{i:03}", (i * 37) % 60).into_bytes())
        .collect();
    let mut sorted = keys.clone();
    sorted.sort();
    let extractor = Arc::new(DelimitedPrefix::new(b':'));
    for whole_keys in [true, false] {
        let with_prefixes = |options: TableFilterOptions| {
            options
                .point(BlockedBloomPolicy::new(10.0).unwrap())
                .prefixes(extractor.clone(), whole_keys)
                .unwrap()
        };
        let build = |options: &TableFilterOptions, keys: &[Vec<u8>]| {
            let mut builder = TableFilterBuilder::new(options);
            for key in keys {
                builder.add_key(key).unwrap();
            }
            builder.finish().unwrap()
        };
        let any = build(&with_prefixes(TableFilterOptions::any_key_order()), &keys);
        let ordered = build(&with_prefixes(TableFilterOptions::new()), &sorted);
        assert_eq!(any.num_keys(), 100, "whole keys {whole_keys}");
        assert_eq!(
            any.point_block(),
            ordered.point_block(),
            "whole keys {whole_keys}"
        );
        let block = FilterBlock::open(any.point_block().unwrap()).unwrap();
        assert_eq!(block.num_keys(), if whole_keys { 160 } else { 60 });
    }
}

/// A hash that is not its key's is a mistake a debug build catches where it is made.
#[test]
#[cfg(debug_assertions)]
#[should_panic(expected = "not the key's hash")]
fn a_probe_with_another_keys_hash_is_caught_in_debug_builds() {
    let _ = KeyProbe::with_hash(b"key", sstfilter::key_hash(b"other"));
}

/// A store that records its two blocks' places the wrong way round is told when it opens the filter, instead of
/// every question quietly answering "may contain".
#[test]
fn swapped_blocks_are_refused_at_open() {
    let keys = keys(300);
    let options = options(Point::Blocked, Prefixes::None, true, Layout::OneBlock).unwrap();
    let (store, point_at, range_at) = build(&options, &keys).unwrap();
    let get = |at: Option<usize>| at.map(|at| store.blocks[at].as_slice());
    // The mistake, as a store would write it: the range block's place where the point block's goes.
    let swapped = TableFilter::open(&options, get(range_at), get(point_at));
    assert!(matches!(
        swapped,
        Err(UsageError::WrongBlock {
            found: sstfilter::FilterKind::Range,
            ..
        })
    ));
    let point_as_range = TableFilter::open(&options, None, get(point_at));
    assert!(matches!(
        point_as_range,
        Err(UsageError::WrongBlock {
            found: sstfilter::FilterKind::BlockedBloom,
            ..
        })
    ));
}

/// A filter of prefixes only filters point lookups through the key's prefix: the reader takes the extractor from
/// the store's options, so a store cannot forget to give it.
#[test]
fn a_prefix_only_filter_filters_point_lookups() {
    let keys = keys(2000);
    let options = options(Point::Blocked, Prefixes::Only, false, Layout::OneBlock).unwrap();
    let (store, point_at, _) = build(&options, &keys).unwrap();
    let filter = open(&options, &store, point_at, None);
    // Tenants 40..79 hold nothing: their keys' prefixes are not in the filter.
    let absent: Vec<Vec<u8>> = (40..80)
        .map(|t| format!("t{t:02}/000010").into_bytes())
        .collect();
    let skipped = absent
        .iter()
        .filter(|k| filter.may_contain(&KeyProbe::new(k), &NoPartitions) == Answer::Absent)
        .count();
    assert!(
        skipped >= 38,
        "{skipped} of 40 absent tenants' keys skipped"
    );
    for key in &keys {
        assert!(
            filter
                .may_contain(&KeyProbe::new(key), &NoPartitions)
                .must_read()
        );
    }
    // Read without the store's extractor, the same filter cannot tell, and says why.
    let plain = open(&TableFilterOptions::new(), &store, point_at, None);
    assert_eq!(
        plain.may_contain(&KeyProbe::new(&absent[0]), &NoPartitions),
        Answer::MayContain(Reason::NoWholeKeys)
    );
}
