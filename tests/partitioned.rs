//! Partitioned filters (FORMAT.md, section 8): no key lost at any partition boundary, for every kind and both
//! ways of cutting; unusable partitions answer "may contain"; every corruption of the index fails `open` or
//! loses nothing; the index agrees with a reader written from FORMAT.md; a golden index pins the bytes.

mod spec;

use std::cell::Cell;
use std::path::Path;
use std::sync::Arc;

use sstfilter::{
    Answer, BlockedBloomPolicy, Error, FilterBlock, FilterPolicy, FilterStats, KeyProbe, Partition,
    PartitionCuts, PartitionLoader, PartitionQuestion, PartitionedFilter, PartitionedFilterBuilder,
    Partitions, Reason, RibbonPolicy, StandardBloomPolicy, TableFilter, TableFilterOptions,
    UsageError, VerifiedPartition, key_hash,
};

/// Any policy, so that one loop covers every kind.
type SharedPolicy = Arc<dyn FilterPolicy + Send + Sync>;

/// Partitions kept in memory; a partition's offset is its position times 1000 (so that offsets are checked to
/// be passed through, not confused with positions). Counts its loads and keeps the last partition loaded.
struct InMemory {
    blocks: Vec<Vec<u8>>,
    loads: Cell<usize>,
    last: Cell<Option<usize>>,
}

impl InMemory {
    fn new(partitions: &Partitions) -> Self {
        Self::of(partitions.blocks().to_vec())
    }

    fn of(blocks: Vec<Vec<u8>>) -> Self {
        InMemory {
            blocks,
            loads: Cell::new(0),
            last: Cell::new(None),
        }
    }
}

impl PartitionLoader for InMemory {
    type Block<'a> = &'a [u8];
    type Error = &'static str;

    fn load(&self, partition: &Partition) -> Result<&[u8], &'static str> {
        self.loads.set(self.loads.get() + 1);
        // By offset, as a store would: a wrong offset in the index gives another partition or none.
        let position = usize::try_from(partition.offset / 1000).map_err(|_| "no such offset")?;
        self.last.set(Some(position));
        self.blocks
            .get(position)
            .filter(|_| partition.offset.is_multiple_of(1000))
            .map(Vec::as_slice)
            .ok_or("no such offset")
    }
}

/// The table filter of a partition index alone: the reader that answers with reasons.
fn table(index: &[u8]) -> TableFilter<&[u8]> {
    TableFilter::open(&TableFilterOptions::new(), Some(index), None).unwrap()
}

fn offsets(partitions: &Partitions) -> Vec<u64> {
    (0..partitions.blocks().len() as u64)
        .map(|i| i * 1000)
        .collect()
}

fn keys(n: usize, salt: &str) -> Vec<Vec<u8>> {
    let mut keys: Vec<Vec<u8>> = (0..n)
        .map(|i| format!("{salt}{:08}", i.wrapping_mul(2_654_435_761) % 100_000_007).into_bytes())
        .collect();
    keys.sort();
    keys.dedup();
    keys
}

/// Builds a partitioned filter over sorted `keys`, ending a data block every `keys_per_data_block` keys.
fn build<P: FilterPolicy + Clone>(
    policy: P,
    partition_bytes: usize,
    cuts: PartitionCuts,
    keys_per_data_block: usize,
    keys: &[Vec<u8>],
) -> (Partitions, Vec<u8>) {
    let mut builder = PartitionedFilterBuilder::new(policy)
        .with_partition_bytes(partition_bytes)
        .unwrap()
        .with_cuts(cuts);
    for (i, key) in keys.iter().enumerate() {
        builder.add_key(key).unwrap();
        if (i + 1) % keys_per_data_block == 0 {
            builder.end_data_block();
        }
    }
    builder.end_data_block(); // the last key ends the last data block
    let partitions = builder.finish();
    let index = partitions.index(&offsets(&partitions)).unwrap();
    (partitions, index)
}

/// [`build`] with BlockedBloom at 10 bits/key, cut anywhere.
fn blocked(partition_bytes: usize, keys: &[Vec<u8>]) -> (Partitions, Vec<u8>) {
    build(
        BlockedBloomPolicy::new(10.0).unwrap(),
        partition_bytes,
        PartitionCuts::Anywhere,
        1,
        keys,
    )
}

/// Every key is found by the low-level reader and by the table filter; each key's partition (the one loaded) is
/// the one the spec reader names, holds the key in its range, and the key is past no separator it should not be;
/// all of it with the plain search of the separators and with the search heads.
fn assert_finds_all(what: &str, partitions: &Partitions, index: &[u8], keys: &[Vec<u8>]) {
    let filter = PartitionedFilter::open(index).unwrap_or_else(|e| panic!("{what}: {e}"));
    assert_finds_all_in(what, partitions, index, keys, &filter);
    let what = format!("{what}, search heads");
    assert_finds_all_in(&what, partitions, index, keys, &filter.with_search_heads());
}

fn assert_finds_all_in(
    what: &str,
    partitions: &Partitions,
    index: &[u8],
    keys: &[Vec<u8>],
    filter: &PartitionedFilter<&[u8]>,
) {
    let loader = InMemory::new(partitions);
    let table = table(index);
    let reference = spec::open_index(index)
        .unwrap_or_else(|e| panic!("{what}: spec {e:?}"))
        .partitions;
    assert_eq!(reference.len(), filter.num_partitions(), "{what}");
    assert_eq!(filter.num_keys(), keys.len() as u64, "{what}");
    for key in keys {
        let shown = String::from_utf8_lossy(key);
        loader.last.set(None);
        assert!(filter.may_contain(key, &loader), "{what}: lost {shown}");
        assert_eq!(
            loader.last.get(),
            spec::partition_for(&reference, key),
            "{what}: {shown} looked up in another partition than the spec's"
        );
        assert_eq!(
            table.may_contain(&KeyProbe::new(key), &loader),
            Answer::MayContain(Reason::Matched),
            "{what}: lost {shown} through the table filter"
        );
    }
    // The last separator is the last key: one byte more is past every partition.
    if let Some(last) = keys.last() {
        let mut past = last.clone();
        past.push(0);
        let before = loader.loads.get();
        assert!(!filter.may_contain(&past, &loader), "{what}");
        assert_eq!(
            table.may_contain(&KeyProbe::new(&past), &loader),
            Answer::Absent
        );
        assert_eq!(
            loader.loads.get(),
            before,
            "{what}: a key past the end loads nothing"
        );
    }
}

#[test]
fn every_kind_both_cuts_and_boundary_key_counts_lose_nothing() {
    let policies: [(&str, SharedPolicy); 3] = [
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
        for partition_bytes in [1usize, 64, 100, 4096] {
            for cuts in [PartitionCuts::Anywhere, PartitionCuts::AtDataBlocks] {
                for n in [0usize, 1, 2, 3, 50, 51, 52, 53, 2000] {
                    for per_block in [1usize, 7] {
                        let keys = keys(n, "k");
                        let what = format!(
                            "{name}, {partition_bytes} B partitions, {cuts:?}, {n} keys, \
                             a data block per {per_block} keys"
                        );
                        let (partitions, index) =
                            build(policy.clone(), partition_bytes, cuts, per_block, &keys);
                        assert_finds_all(&what, &partitions, &index, &keys);
                    }
                }
            }
        }
    }
}

#[test]
fn partitions_come_out_near_the_target_size_and_cut_at_data_blocks_when_told() {
    let keys = keys(20_000, "usr:");
    let (anywhere, _) = blocked(4096, &keys);
    // 4096 bytes at 10 bits/key: about 3,200 keys a partition, 7 partitions.
    assert!(
        (6..=8).contains(&anywhere.blocks().len()),
        "{}",
        anywhere.blocks().len()
    );
    for block in &anywhere.blocks()[..anywhere.blocks().len() - 1] {
        assert!(block.len() <= 4096 + 64 + 36, "{}", block.len());
        assert!(block.len() >= 3500, "{}", block.len());
    }
    // Coupled: cut only after a multiple of 1000 keys.
    let (coupled, index) = build(
        BlockedBloomPolicy::new(10.0).unwrap(),
        4096,
        PartitionCuts::AtDataBlocks,
        1000,
        &keys,
    );
    let filter = PartitionedFilter::open(&index[..]).unwrap();
    let mut seen = 0u64;
    for p in filter.partitions().take(coupled.blocks().len() - 1) {
        seen += p.num_keys;
        assert_eq!(
            seen % 1000,
            0,
            "partition {} ends inside a data block",
            p.position
        );
    }
}

#[test]
fn equal_keys_stay_in_one_partition_and_separators_are_found() {
    let mut keys = Vec::new();
    for i in 0..300u32 {
        for _ in 0..(1 + i % 4) {
            keys.push(format!("dup{i:05}").into_bytes());
        }
    }
    let mut builder = PartitionedFilterBuilder::new(BlockedBloomPolicy::new(10.0).unwrap())
        .with_partition_bytes(1)
        .unwrap();
    for key in &keys {
        builder.add_key(key).unwrap();
    }
    let partitions = builder.finish();
    assert_eq!(
        partitions.blocks().len(),
        300,
        "one partition per distinct key at 1-byte partitions"
    );
    let index = partitions.index(&offsets(&partitions)).unwrap();
    keys.dedup();
    assert_finds_all("duplicates", &partitions, &index, &keys);
    // A separator itself is in the partition it ends (the first separator >= it).
    let filter = PartitionedFilter::open(&index[..]).unwrap();
    let loader = InMemory::new(&partitions);
    let reference = spec::open_index(&index).unwrap().partitions;
    for (position, entry) in reference.iter().enumerate() {
        loader.last.set(None);
        let _ = filter.may_contain(&entry.separator, &loader);
        assert_eq!(loader.last.get(), Some(position));
    }
}

#[test]
fn keys_out_of_order_are_refused_and_the_builder_goes_on() {
    let mut builder = PartitionedFilterBuilder::new(BlockedBloomPolicy::new(10.0).unwrap());
    builder.add_key(b"b").unwrap();
    assert_eq!(builder.add_key(b"a"), Err(UsageError::KeysOutOfOrder));
    builder.add_key(b"b").unwrap();
    builder.add_key(b"c").unwrap();
    let partitions = builder.finish();
    assert_eq!(partitions.num_keys(), 2);
    assert_eq!(
        partitions.index(&[]),
        Err(UsageError::PartitionCount {
            expected: 1,
            found: 0
        })
    );
}

#[test]
fn no_keys_no_partitions_every_lookup_absent() {
    let (partitions, index) = build(
        BlockedBloomPolicy::new(10.0).unwrap(),
        4096,
        PartitionCuts::Anywhere,
        1,
        &[],
    );
    assert!(partitions.blocks().is_empty());
    let filter = PartitionedFilter::open(&index[..]).unwrap();
    assert_eq!(filter.num_partitions(), 0);
    assert!(!filter.may_contain(b"", &InMemory::new(&partitions)));
    assert_eq!(spec::open_index(&index).unwrap().partitions, Vec::new());
}

/// A loader that fails, or answers with another partition's bytes, or with a truncated block.
struct Faulty<'a> {
    blocks: &'a [Vec<u8>],
    fault: Fault,
}

#[derive(Clone, Copy, Debug)]
enum Fault {
    Fails,
    Swapped,
    Truncated,
    /// Payload bits flipped: only the CRC32 can tell.
    Flipped,
}

impl PartitionLoader for Faulty<'_> {
    type Block<'b>
        = Vec<u8>
    where
        Self: 'b;
    type Error = &'static str;

    fn load(&self, partition: &Partition) -> Result<Vec<u8>, &'static str> {
        let n = self.blocks.len();
        let own = self.blocks[partition.position].clone();
        let bytes = match self.fault {
            Fault::Fails => return Err("disk on fire"),
            Fault::Swapped => self.blocks[(partition.position + 1) % n].clone(),
            Fault::Truncated => own[..own.len() - 1].to_vec(),
            Fault::Flipped => {
                let mut bytes = own;
                for b in &mut bytes[..64] {
                    *b ^= 0x5a;
                }
                bytes
            }
        };
        Ok(bytes)
    }
}

#[test]
fn unusable_partitions_answer_may_contain_and_are_counted() {
    let keys = keys(5000, "u");
    let (partitions, index) = blocked(512, &keys);
    assert!(partitions.blocks().len() > 2);
    let filter = PartitionedFilter::open(&index[..]).unwrap();
    for fault in [
        Fault::Fails,
        Fault::Swapped,
        Fault::Truncated,
        Fault::Flipped,
    ] {
        let stats = FilterStats::new();
        let table = table(&index).with_stats(stats.clone());
        let loader = Faulty {
            blocks: partitions.blocks(),
            fault,
        };
        for key in keys.iter().take(300) {
            assert!(filter.may_contain(key, &loader), "{fault:?}");
            assert_eq!(
                table.may_contain(&KeyProbe::new(key), &loader),
                Answer::MayContain(Reason::Unusable),
                "{fault:?}"
            );
        }
        // Why each fault's bytes are refused: the verification a loader's bytes go through.
        let first = filter.partitions().next().unwrap();
        match (fault, loader.load(&first)) {
            (Fault::Fails, Err(_)) => {}
            (Fault::Swapped, Ok(bytes)) => assert!(matches!(
                filter.verify_partition(&first, bytes),
                Err(Error::PartitionMismatch { .. })
            )),
            (Fault::Truncated, Ok(bytes)) => {
                assert!(filter.verify_partition(&first, bytes).is_err())
            }
            (Fault::Flipped, Ok(bytes)) => assert!(matches!(
                filter.verify_partition(&first, bytes),
                Err(Error::ChecksumMismatch { .. })
            )),
            (f, _) => panic!("{f:?}"),
        }
        let counts = stats.counts();
        assert_eq!(counts.decode_errors, 300, "{fault:?}");
        assert_eq!(counts.absent + counts.may_contain, 0, "{fault:?}");
    }
}

/// The same cache asked in place ([`PartitionLoader::ask_in_place`]): it never hands a partition out.
struct InPlaceCache(Vec<VerifiedPartition<Vec<u8>>>);

impl PartitionLoader for InPlaceCache {
    type Block<'a> = &'a [u8];
    type Error = &'static str;

    fn load(&self, _partition: &Partition) -> Result<&[u8], &'static str> {
        Err("asked in place only")
    }

    fn ask_in_place<Q: PartitionQuestion>(&self, question: &Q) -> Option<Q::Answer> {
        Some(question.ask(self.0.get(question.position())?))
    }
}

/// A loader handing cached bytes to the reader without verifying them once let damaged payload bytes answer
/// "absent" for stored keys. A loader hands out bytes, which the reader verifies, or has questions asked of
/// partitions only `verify_partition` can make: whichever it does, damaged bytes lose no key.
#[test]
fn no_loader_can_hand_the_reader_unverified_bytes() {
    let keys = keys(20_000, "v");
    let (partitions, index) = blocked(4096, &keys);
    let filter = PartitionedFilter::open(&index[..]).unwrap();
    assert!(partitions.blocks().len() > 3);
    // Damage one partition's payload as the issue did (64 bytes zeroed), and flip bits in another.
    let mut damaged: Vec<Vec<u8>> = partitions.blocks().to_vec();
    damaged[1][100..164].fill(0);
    damaged[2][10] ^= 0x10;
    let raw = InMemory::of(damaged.clone());
    for key in &keys {
        assert!(filter.may_contain(key, &raw), "raw bytes lost {key:?}");
    }
    // A cache can only hold what verified: the damaged partitions never enter it.
    let verified: Vec<_> = filter
        .partitions()
        .zip(&damaged)
        .map(|(p, bytes)| filter.verify_partition(&p, bytes.clone()))
        .collect();
    assert!(matches!(verified[1], Err(Error::ChecksumMismatch { .. })));
    assert!(matches!(verified[2], Err(Error::ChecksumMismatch { .. })));
    // A cache of good partitions answers; one handing out another position's verified partition is refused.
    let good: Vec<_> = filter
        .partitions()
        .zip(partitions.blocks())
        .map(|(p, bytes)| filter.verify_partition(&p, bytes.clone()).unwrap())
        .collect();
    let mut swapped = good.clone();
    swapped.swap(0, 1);
    let (in_place, in_place_swapped) = (InPlaceCache(good), InPlaceCache(swapped));
    let table = table(&index);
    for key in &keys {
        assert!(filter.may_contain(key, &in_place));
        assert!(filter.may_contain(key, &in_place_swapped));
    }
    // The partition handed out in another's place is refused for the first one's keys.
    assert_eq!(
        table.may_contain(&KeyProbe::new(&keys[0]), &in_place_swapped),
        Answer::MayContain(Reason::Unusable)
    );
    // Asked in place, the cache gives the answers the bytes give when loaded, "absent" included (keys between the
    // stored ones, in their partitions).
    let others: Vec<Vec<u8>> = keys.iter().map(|k| [k, &b"~"[..]].concat()).collect();
    let good_bytes = InMemory::new(&partitions);
    let answers = |loader: &dyn Fn(&[u8]) -> bool| others.iter().filter(|k| loader(k)).count();
    let loaded = answers(&|k| filter.may_contain(k, &good_bytes));
    assert_eq!(answers(&|k| filter.may_contain(k, &in_place)), loaded);
    assert!(
        loaded < others.len() / 10,
        "{loaded} of {} may contain",
        others.len()
    );
}

/// A verified partition answers the index that verified it as that partition without its entry being read (its
/// stamp); any other index, even over the same bytes, matches it by its entry: a partition verified by another
/// index, or verified as another index's partition, never answers for this one's keys.
#[test]
fn a_partition_verified_by_another_index_is_matched_by_its_entry() {
    let (a_keys, b_keys) = (keys(20_000, "v"), keys(20_000, "w"));
    let ((a_parts, a_index), (b_parts, b_index)) = (blocked(4096, &a_keys), blocked(4096, &b_keys));
    let (a, reopened, b) = (
        PartitionedFilter::open(&a_index[..]).unwrap(),
        PartitionedFilter::open(&a_index[..])
            .unwrap()
            .with_search_heads(),
        PartitionedFilter::open(&b_index[..]).unwrap(),
    );
    let a_table = table(&a_index);
    assert!(a.num_partitions() > 3 && b.num_partitions() >= a.num_partitions());
    // `blocks` verified by `filter` as the partitions `entries` names.
    let verified_by = |filter: &PartitionedFilter<&[u8]>,
                       blocks: &[Vec<u8>],
                       entries: Vec<Partition>| {
        let verify = |(p, bytes): (&Partition, &Vec<u8>)| filter.verify_partition(p, bytes.clone());
        entries
            .iter()
            .zip(blocks)
            .map(verify)
            .collect::<Result<Vec<_>, _>>()
            .unwrap()
    };
    let entries = |filter: &PartitionedFilter<&[u8]>| filter.partitions().collect::<Vec<_>>();
    // Verified by the same index over the same bytes, opened again: matched by its entry, the same answers.
    let own = InPlaceCache(verified_by(&a, a_parts.blocks(), entries(&a)));
    let other_open = InPlaceCache(verified_by(&reopened, a_parts.blocks(), entries(&reopened)));
    let others: Vec<Vec<u8>> = a_keys.iter().map(|k| [k, &b"~"[..]].concat()).collect();
    for key in a_keys.iter().chain(&others) {
        let probe = KeyProbe::new(key);
        let answer = a_table.may_contain(&probe, &other_open);
        assert_eq!(answer, a_table.may_contain(&probe, &own), "{key:?}");
        assert_ne!(answer, Answer::MayContain(Reason::Unusable), "{key:?}");
    }
    // B's partitions, verified by B, or by A as B's partitions (their bytes are what B's entries say): A refuses
    // them at every position and loses none of its keys.
    let by_b = InPlaceCache(verified_by(&b, b_parts.blocks(), entries(&b)));
    let by_a_as_b = InPlaceCache(verified_by(&a, b_parts.blocks(), entries(&b)));
    for key in &a_keys {
        for loader in [&by_b, &by_a_as_b] {
            assert_eq!(
                a_table.may_contain(&KeyProbe::new(key), loader),
                Answer::MayContain(Reason::Unusable),
                "{key:?}"
            );
        }
    }
}

#[test]
fn index_and_filter_blocks_are_not_mistaken_for_each_other() {
    let keys = keys(100, "x");
    let (partitions, index) = blocked(64, &keys);
    assert_eq!(
        FilterBlock::open(&index[..]).unwrap_err(),
        Error::PartitionIndex
    );
    assert_eq!(
        PartitionedFilter::open(&partitions.blocks()[0][..]).unwrap_err(),
        Error::NotPartitionIndex(sstfilter::FilterKind::BlockedBloom)
    );
}

/// A block that holds no key hashes (a Range block) is no partition: asked by hash it would only ever say "may
/// contain", silently turning the filter off. It is refused, and so counted as unusable. (A block of prefixes only
/// is a partition of a filter built with prefixes only: the table filter asks it about a key's prefix.)
#[test]
fn a_range_block_is_no_partition() {
    let keys = keys(100, "x");
    let (_, index) = blocked(64, &keys);
    let filter = PartitionedFilter::open(&index[..]).unwrap();
    let p = filter.partitions().next().unwrap();
    let mut range =
        sstfilter::RangeFilterBuilder::new(sstfilter::RangePolicy::new(16, 0.01).unwrap());
    for key in &keys {
        range.add_key(key).unwrap();
    }
    assert!(matches!(
        filter.verify_partition(&p, &range.finish()[..]),
        Err(Error::BadParams {
            field: "partition without key hashes",
            ..
        })
    ));
}

/// Recomputes the index's CRC32 after a change, so that the layout checks are what is tested.
fn reseal(block: &mut [u8]) {
    let n = block.len();
    let crc = spec::crc32(&block[..n - 4]);
    block[n - 4..].copy_from_slice(&crc.to_le_bytes());
}

#[test]
fn every_corruption_of_the_index_fails_open_or_loses_nothing() {
    let keys = keys(400, "c");
    let (partitions, index) = blocked(64, &keys);
    assert!(partitions.blocks().len() >= 4);
    let loader = InMemory::new(&partitions);
    // Every truncation.
    for len in 0..index.len() {
        assert!(
            PartitionedFilter::open(&index[..len]).is_err(),
            "truncated to {len}"
        );
    }
    let separator_bytes = index.len() - 36 - 32 * partitions.blocks().len();
    let in_sep_end = |at: usize| at >= separator_bytes && (at - separator_bytes) % 32 >= 28;
    let (mut flips, mut opened) = (0, 0);
    for at in 0..index.len() {
        for bit in 0..8 {
            let mut bad = index.clone();
            bad[at] ^= 1 << bit;
            // As stored: the CRC catches every single flip.
            assert!(
                PartitionedFilter::open(&bad[..]).is_err(),
                "flip {at}.{bit}"
            );
            // Resealed (deliberate tampering rather than damage): our checks and the spec's agree, and a flip of
            // any field but the separators and their ends (which decide the key ranges) loses no key: a changed
            // offset, length or checksum names a partition the loader cannot give or that fails its identity
            // check ("may contain"); a changed count or parameter fails open.
            reseal(&mut bad);
            flips += 1;
            let ours = PartitionedFilter::open(&bad[..]);
            assert_eq!(
                ours.is_ok(),
                spec::open_index(&bad).is_ok(),
                "flip {at}.{bit}: spec"
            );
            let Ok(filter) = ours else { continue };
            opened += 1;
            if at < separator_bytes || in_sep_end(at) {
                continue;
            }
            for key in &keys {
                assert!(
                    filter.may_contain(key, &loader),
                    "flip {at}.{bit}: lost {key:?}"
                );
            }
        }
    }
    assert_eq!(flips, index.len() * 8);
    assert!(
        opened > 0 && opened < flips,
        "{opened} of {flips} resealed flips opened"
    );
}

/// The golden index: 300 keys, BlockedBloom at 10 bits/key, 128-byte partitions, partition `i` at offset
/// `1000 · i`. Its partitions are ordinary version-1 blocks, pinned by `tests/golden.rs`; this pins section 8.
const GOLDEN_INDEX: &str = "tests/golden-partitioned/v2-index-blockedbloom-n300-p128.bin";

#[test]
fn the_golden_partition_index_is_frozen() {
    let keys = keys(300, "g");
    let (partitions, index) = blocked(128, &keys);
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(GOLDEN_INDEX);
    if std::env::var_os("SSTFILTER_BLESS").is_some() && !path.exists() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &index).unwrap();
    }
    let golden = std::fs::read(&path)
        .unwrap_or_else(|e| panic!("{GOLDEN_INDEX}: {e} (SSTFILTER_BLESS=1 creates it)"));
    assert!(
        golden == index,
        "this crate now writes another partition index for the same keys"
    );
    // Read back by the spec reader alone: every key's partition, named by the spec, holds it.
    let reference = spec::open_index(&golden).unwrap().partitions;
    assert_eq!(reference.len(), partitions.blocks().len());
    for key in &keys {
        let position = spec::partition_for(&reference, key).unwrap();
        let entry = &reference[position];
        assert_eq!(entry.offset, position as u64 * 1000);
        let block = &partitions.blocks()[position];
        assert_eq!(block.len() as u64, entry.len);
        let opened = spec::open(block).unwrap();
        assert_eq!(opened.num_keys, entry.num_keys);
        assert!(opened.may_contain_key_hash(key_hash(key).get()), "{key:?}");
    }
    assert_finds_all(GOLDEN_INDEX, &partitions, &golden, &keys);
}
