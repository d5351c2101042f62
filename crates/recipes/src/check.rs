//! Building a recipe's filter from keys, and the checks that no key is lost through any path the filter has.

use std::ops::Bound::{self, Excluded, Included, Unbounded};

use sstfilter::{
    Answer, FilterBlock, FilterBlockBuilder, FilterKind, KeyHash, MAX_PREFIX_NAME_LEN,
    PrefixExtractor, RangeFilterBuilder, RangePolicy, UsageError, key_hash,
};
use sstfilter_leveldb::{LevelDbFilterBlockBuilder, LevelDbFilterBlockReader, LevelDbFilterPolicy};
use sstfilter_memory::{BloomFilter, CountingBloomFilter, ScalableBloomFilter};
use sstfilter_rocksdb::{RocksDbFilter, RocksDbFilterFormat};

use crate::options::{Partitioning, Prefixes};
use crate::recipe::{Constructed, LevelDbPolicy, Recipe, checked};

/// A recipe's filter with the keys added.
enum Filled {
    /// A block built by `FilterBlockBuilder`.
    Block(Vec<u8>),
    /// A Range block, or none when the policy cannot keep its rate for that many keys.
    Range(Option<Vec<u8>>),
    Bloom(BloomFilter),
    Counting(CountingBloomFilter),
    Scalable(ScalableBloomFilter),
    /// Keys go into LevelDB's layout when the check builds it.
    LevelDb(LevelDbPolicy),
    /// A RocksDB filter block: FastLocalBloom, or Standard128Ribbon (or RocksDB's FastLocalBloom fallback).
    RocksDb(Vec<u8>),
}

impl Constructed {
    /// Adds `keys` (with `prefixes`, for a policy). `None` when `with_prefixes` refused the extractor (checked
    /// against its documentation).
    fn fill(self, what: &str, keys: &[Vec<u8>], prefixes: Option<Prefixes>) -> Option<Filled> {
        Some(match self {
            Constructed::Policy(policy) => {
                let mut builder = FilterBlockBuilder::new(policy);
                if let Some(p) = prefixes {
                    let extractor = p.extractor.get();
                    let documented = extractor.name().len() <= MAX_PREFIX_NAME_LEN;
                    builder = checked(
                        &what,
                        builder.with_prefixes(extractor, p.whole_keys),
                        documented,
                    )?;
                }
                for key in keys {
                    builder.add_key(key);
                }
                if prefixes.is_none() {
                    // A run of equal keys (equal hashes) counts once.
                    let distinct = adjacent_distinct_hashes(keys);
                    assert_eq!(
                        builder.len() as u64,
                        distinct,
                        "{what}: the builder's count"
                    );
                }
                Filled::Block(builder.finish())
            }
            Constructed::Range(policy) => Filled::Range(range_block(what, policy, keys)),
            Constructed::Bloom(mut filter) => {
                for key in keys {
                    filter.insert(key);
                }
                Filled::Bloom(filter)
            }
            Constructed::Counting(mut filter) => {
                for key in keys {
                    filter.insert(key);
                }
                Filled::Counting(filter)
            }
            Constructed::Scalable(mut filter) => {
                for key in keys {
                    filter.insert(key);
                }
                Filled::Scalable(filter)
            }
            Constructed::LevelDb(policy) => Filled::LevelDb(policy),
            Constructed::RocksDb(mut builder) => {
                keys.iter().for_each(|key| builder.add_key(key));
                Filled::RocksDb(builder.finish())
            }
            Constructed::RocksDbRibbon(mut builder) => {
                keys.iter().for_each(|key| builder.add_key(key));
                Filled::RocksDb(builder.finish())
            }
        })
    }
}

impl Filled {
    /// The filter's blocks in this crate's format: one, but one per stage for a scalable filter and none for a
    /// Range policy past its key limit or LevelDB's layout.
    fn blocks(&self) -> Vec<Vec<u8>> {
        match self {
            Filled::Block(block) => vec![block.clone()],
            Filled::Range(block) => block.iter().cloned().collect(),
            Filled::Bloom(filter) => vec![filter.to_block()],
            Filled::Counting(filter) => vec![filter.to_bloom_filter().to_block()],
            Filled::Scalable(filter) => filter.stages().map(BloomFilter::to_block).collect(),
            Filled::LevelDb(_) | Filled::RocksDb(_) => Vec::new(),
        }
    }
}

impl Recipe {
    /// Builds `keys` into blocks of this crate's format: one, but one per stage for a scalable filter, and none
    /// for a Range policy that cannot hold that many keys or a LevelDB-layout policy. Every key is found by at
    /// least one of the blocks. `prefixes` applies to the recipes that build through a `FilterPolicy`. `None` when
    /// a checked constructor refused (checked against its documentation).
    #[must_use]
    pub fn build(&self, keys: &[Vec<u8>], prefixes: Option<Prefixes>) -> Option<Vec<Vec<u8>>> {
        let what = format!("{self:?} with {prefixes:?}");
        Some(self.construct()?.fill(&what, keys, prefixes)?.blocks())
    }

    /// Builds `keys` as the recipe says and checks that none is lost: through every query of every block
    /// (single, batched, by key and by hash, reopened from a copy of its bytes and verified), every scan over a
    /// prefix of a key (with `prefixes`), the index and partitions of a partitioned filter (with `partitioning`,
    /// for the recipes that build through a `FilterPolicy`), every range question that holds a key (Range), the
    /// in-memory filter itself (and, for a counting filter, after removing other keys), and LevelDB's filter block
    /// layout. A refusal must be one the documentation states ([`construct`](Self::construct)).
    ///
    /// Returns the blocks checked (as [`build`](Self::build)), for a caller's own checks; `None` when refused.
    #[must_use]
    pub fn check(
        &self,
        keys: &[Vec<u8>],
        prefixes: Option<Prefixes>,
        partitioning: Option<Partitioning>,
    ) -> Option<Vec<Vec<u8>>> {
        let what = format!(
            "{self:?} with {prefixes:?} and {partitioning:?}, {} keys",
            keys.len()
        );
        let constructed = self.construct()?;
        if let (Constructed::Policy(policy), Some(partitioning)) = (&constructed, partitioning) {
            partitioning.check(&what, policy.clone(), keys);
        }
        let filled = constructed.fill(&what, keys, prefixes)?;
        let blocks = filled.blocks();
        assert_finds_all(&what, &blocks, keys);
        match filled {
            Filled::Block(block) => {
                let filter =
                    FilterBlock::open(&block[..]).unwrap_or_else(|e| panic!("{what}: {e}"));
                match prefixes {
                    Some(p) => {
                        assert_scans_find_all(&what, &filter, p.extractor.get().as_ref(), keys)
                    }
                    None => assert_eq!(
                        filter.num_keys(),
                        adjacent_distinct_hashes(keys),
                        "{what}: the block's key count"
                    ),
                }
            }
            Filled::Range(block) => {
                if let Some(block) = block {
                    assert_range_questions_find_all(&what, &block, keys);
                }
            }
            Filled::Bloom(filter) => {
                assert!(
                    keys.iter().all(|k| filter.contains(k)),
                    "{what}: lost a key"
                );
                assert_eq!(
                    BloomFilter::from_block(&blocks[0]).as_ref(),
                    Ok(&filter),
                    "{what}: not the same filter through its block"
                );
            }
            Filled::Counting(mut filter) => {
                assert!(
                    keys.iter().all(|k| filter.contains(k)),
                    "{what}: lost a key"
                );
                // Remove the second half of the keys, but not the keys also in the first half (remove only what
                // was inserted): the first half stays.
                let (kept, removed) = keys.split_at(keys.len() / 2);
                for key in removed.iter().filter(|k| !kept.contains(k)) {
                    filter.remove(key);
                }
                assert!(
                    kept.iter().all(|k| filter.contains(k)),
                    "{what}: lost a kept key"
                );
            }
            Filled::Scalable(filter) => {
                assert!(
                    keys.iter().all(|k| filter.contains(k)),
                    "{what}: lost a key"
                );
            }
            Filled::LevelDb(LevelDbPolicy::LevelDb(policy)) => {
                assert_leveldb_finds_all(&what, policy, keys);
            }
            Filled::LevelDb(LevelDbPolicy::Bloom64(policy)) => {
                assert_leveldb_finds_all(&what, policy, keys);
            }
            Filled::RocksDb(block) => assert_rocksdb_finds_all(&what, &block, keys),
        }
        Some(blocks)
    }
}

/// Checks that RocksDB's filter `block` (built from `keys` by `RocksDbBloomBuilder` or `RocksDbRibbonBuilder`) may
/// match every key, read as RocksDB reads it: a FastLocalBloom or Standard128Ribbon filter, or the filter of no keys
/// when there are none.
fn assert_rocksdb_finds_all(what: &str, block: &[u8], keys: &[Vec<u8>]) {
    let filter = RocksDbFilter::from_verified(block);
    match filter.format() {
        RocksDbFilterFormat::FastLocalBloom { .. } | RocksDbFilterFormat::Ribbon { .. } => {}
        RocksDbFilterFormat::Empty if keys.is_empty() => {}
        other => panic!("{what}: RocksDB would read {other:?}"),
    }
    for key in keys {
        assert!(filter.may_contain(key), "{what}: lost {key:?}");
    }
}

/// The number of keys a `FilterBlockBuilder` counts: runs of equal hashes count once.
#[must_use]
pub fn adjacent_distinct_hashes(keys: &[Vec<u8>]) -> u64 {
    let mut count = 0;
    let mut last = None;
    for key in keys {
        let h = key_hash(key);
        if last != Some(h) {
            count += 1;
            last = Some(h);
        }
    }
    count
}

/// Opens and verifies each block from a copy of its bytes (as a reader in another process would) and checks that
/// every key is found by at least one of them through every query: single and batched, by key and by hash. Batched
/// answers equal single ones, and by hash equal by key but for Range blocks (which answer a hash with "may
/// contain"). No blocks, nothing to find.
///
/// # Panics
/// With `what` and the key, if a key is lost or a block does not open and verify.
pub fn assert_finds_all(what: &str, blocks: &[Vec<u8>], keys: &[Vec<u8>]) {
    let hashes: Vec<KeyHash> = keys.iter().map(|k| key_hash(k)).collect();
    let mut found = vec![false; keys.len()];
    let mut batch = vec![false; keys.len()];
    for block in blocks {
        let filter = FilterBlock::open(block.clone()).unwrap_or_else(|e| panic!("{what}: {e}"));
        filter
            .verify()
            .unwrap_or_else(|e| panic!("{what}: does not verify: {e}"));
        let range = filter.kind() == FilterKind::Range;
        filter.may_contain_batch(keys, &mut batch);
        for (i, key) in keys.iter().enumerate() {
            let single = filter.may_contain(key);
            let by_hash = filter.may_contain_hash(hashes[i]);
            assert_eq!(
                single, batch[i],
                "{what}: batch and single differ on {key:?}"
            );
            assert_eq!(
                by_hash,
                single || range,
                "{what}: by hash and by key differ on {key:?}"
            );
            found[i] |= single;
        }
    }
    if !blocks.is_empty() {
        for (key, found) in keys.iter().zip(found) {
            assert!(found, "{what}: lost {key:?}");
        }
    }
}

/// Checks that no scan over a prefix of a key (of up to 24 bytes) is answered "absent", the key's own extracted
/// prefix among them.
pub fn assert_scans_find_all<B: AsRef<[u8]>>(
    what: &str,
    filter: &FilterBlock<B>,
    extractor: &dyn PrefixExtractor,
    keys: &[Vec<u8>],
) {
    for key in keys {
        for end in 0..=key.len().min(24) {
            assert_ne!(
                filter.may_contain_prefix(extractor, &key[..end]),
                Answer::Absent,
                "{what}: scan {:?} lost {key:?}",
                &key[..end]
            );
        }
        if let Some(prefix) = extractor.prefix(key) {
            assert!(
                filter.may_contain_prefix(extractor, prefix).must_read(),
                "{what}: the key's prefix lost {key:?}"
            );
        }
    }
}

/// A Range block of `keys`, which it sorts (a table's keys come sorted), or `None` when the policy cannot keep its
/// rate for that many keys: the builder refuses the key past its `max_keys`, and only that one.
#[must_use]
pub fn range_block(what: &str, policy: RangePolicy, keys: &[Vec<u8>]) -> Option<Vec<u8>> {
    let mut sorted = keys.to_vec();
    sorted.sort();
    let mut builder = RangeFilterBuilder::new(policy);
    for key in &sorted {
        if let Err(e) = builder.add_key(key) {
            let limit = policy.max_keys();
            let past = UsageError::TooManyKeys {
                expected: limit,
                found: limit + 1,
            };
            assert_eq!(e, past, "{what}: only a key past the limit is refused");
            assert_eq!(
                builder.len() as u64,
                limit,
                "{what}: refused before the limit"
            );
            return None;
        }
    }
    Some(builder.finish())
}

/// Checks a Range block of `keys` through every question that holds a key: points (single and batched), the
/// one-key range, and ranges reaching it from its neighbours with every kind of bound (single and batched).
pub fn assert_range_questions_find_all(what: &str, block: &[u8], keys: &[Vec<u8>]) {
    let mut sorted = keys.to_vec();
    sorted.sort();
    sorted.dedup();
    let filter = FilterBlock::open(block).unwrap_or_else(|e| panic!("{what}: {e}"));
    assert_eq!(filter.kind(), FilterKind::Range, "{what}");
    let mut batch = vec![false; sorted.len()];
    filter.may_contain_batch(&sorted, &mut batch);
    for (i, key) in sorted.iter().enumerate() {
        assert!(filter.may_contain(key), "{what}: lost {key:?}");
        assert!(batch[i], "{what}: the batch lost {key:?}");
        let (lowers, uppers) = bounds_around(&sorted, i);
        let ranges: Vec<_> = lowers
            .iter()
            .flat_map(|&lower| uppers.iter().map(move |&upper| (lower, upper)))
            .collect();
        let mut answers = vec![sstfilter::Answer::Absent; ranges.len()];
        filter.may_contain_range_batch(&ranges, &mut answers);
        for (&(lower, upper), batched) in ranges.iter().zip(answers) {
            assert!(
                filter.may_contain_range(lower, upper).must_read(),
                "{what}: lost {key:?} in {lower:?}..{upper:?}"
            );
            assert!(
                batched.must_read(),
                "{what}: the batch lost {key:?} in {lower:?}..{upper:?}"
            );
        }
    }
}

/// Checks a LevelDB-layout policy: one filter of every key finds each, and so does a LevelDB filter block over
/// data blocks of 50 keys at growing offsets (several per 2 KiB range, and ranges with none).
pub fn assert_leveldb_finds_all<P: LevelDbFilterPolicy + Copy>(
    what: &str,
    policy: P,
    keys: &[Vec<u8>],
) {
    let key_refs: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
    let mut filter = Vec::new();
    policy.append_filter(&key_refs, &mut filter);
    for key in &key_refs {
        assert!(policy.may_contain(key, &filter), "{what}: lost {key:?}");
    }
    let mut builder = LevelDbFilterBlockBuilder::new(policy);
    let mut offsets: Vec<u64> = (0..keys.len().div_ceil(50) as u64)
        .map(|i| i * 1500 + (i % 3) * 4000)
        .collect();
    offsets.sort_unstable();
    for (chunk, &offset) in keys.chunks(50).zip(&offsets) {
        builder
            .start_block(offset)
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        for key in chunk {
            builder.add_key(key);
        }
    }
    let bytes = builder.finish().unwrap_or_else(|e| panic!("{what}: {e}"));
    let reader = LevelDbFilterBlockReader::new(&bytes[..], policy);
    for (chunk, &offset) in keys.chunks(50).zip(&offsets) {
        for key in chunk {
            assert!(
                reader.may_contain(offset, key),
                "{what}: the filter block lost {key:?}"
            );
        }
    }
}

/// Bounds of ranges of keys.
pub(crate) type Bounds<'a> = Vec<Bound<&'a [u8]>>;

/// Every kind of bound around `sorted[i]` from its neighbours: lower bounds (none, the key, and the key before it
/// included or excluded) and upper bounds (none, the key, the key after it included or excluded). Each pair
/// bounds a range that holds the key.
pub(crate) fn bounds_around(sorted: &[Vec<u8>], i: usize) -> (Bounds<'_>, Bounds<'_>) {
    let key = sorted.get(i).map_or(&[][..], Vec::as_slice);
    let mut lowers: Bounds<'_> = vec![Unbounded, Included(key)];
    let mut uppers: Bounds<'_> = vec![Unbounded, Included(key)];
    if let Some(before) = i.checked_sub(1).and_then(|j| sorted.get(j)) {
        lowers.extend([Included(&before[..]), Excluded(&before[..])]);
    }
    if let Some(after) = sorted.get(i + 1) {
        uppers.extend([Included(&after[..]), Excluded(&after[..])]);
    }
    (lowers, uppers)
}
