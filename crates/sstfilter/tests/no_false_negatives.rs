//! No false negatives, over the whole configuration space of the public API: every policy constructor and every
//! parameter a user can set, enumerated where the dimension is finite (probe counts, column counts, whole
//! bits/key, key counts at the boundaries) and drawn by proptest where it is continuous (rates, fractional
//! bits/key, key lengths). A configuration that loses a key fails with its name.
//!
//! The list of constructors lives in three places that must agree: [`Config`] here (the property test), the
//! enumerating tests below, and `Recipe` in `fuzz/src/lib.rs`. A new policy, constructor or parameter is added to
//! all three. Ribbon's internal layouts (every column count in every layout shape, at every block and shard
//! boundary) are enumerated inside the crate, in `src/kind/ribbon/tests.rs`, where layouts can be set directly.

mod spec;

use std::ops::Bound::{self, Excluded, Included, Unbounded};

use proptest::prelude::*;
use sstfilter::leveldb::{
    Bloom64Policy, LevelDbBloomPolicy, LevelDbFilterBlockBuilder, LevelDbFilterBlockReader,
};
use sstfilter::sizing::FilterModel;
use sstfilter::{
    BlockedBloomParams, BlockedBloomPolicy, BloomFilter, CountingBloomFilter, FilterBlock,
    FilterBlockBuilder, FilterKind, FilterPlan, FilterPolicy, KeyHash, RangeFilterBuilder,
    RangePolicy, RibbonPolicy, ScalableBloomFilter, StandardBloomParams, StandardBloomPolicy,
    UsageError, key_hash,
};

/// A policy that always plans the same, explicit parameters: how a user's own `FilterPolicy` reaches
/// `BlockedBloomParams::new` and `StandardBloomParams::new`.
#[derive(Debug, Clone, Copy)]
struct Explicit(FilterPlan);

impl FilterPolicy for Explicit {
    fn plan(&self, _num_keys: usize) -> FilterPlan {
        self.0
    }
}

fn keys(n: usize, salt: &str) -> Vec<Vec<u8>> {
    (0..n)
        .map(|i| format!("{salt}:{i:08}").into_bytes())
        .collect()
}

fn build(policy: impl FilterPolicy, keys: &[Vec<u8>]) -> Vec<u8> {
    let mut builder = FilterBlockBuilder::new(policy);
    for key in keys {
        builder.add_key(key);
    }
    builder.finish()
}

/// Opens and verifies `block` and checks that every key of `keys` is found by every query path of the reader,
/// and by the reader written from FORMAT.md (on every key for the Bloom kinds, on a sample for Ribbon, whose spec
/// reader is slow). Returns the block's kind.
fn assert_finds_all(what: &str, block: &[u8], keys: &[Vec<u8>]) -> FilterKind {
    let filter = FilterBlock::open(block).unwrap_or_else(|e| panic!("{what}: {e}"));
    let hashes: Vec<KeyHash> = keys.iter().map(|k| key_hash(k)).collect();
    let mut batch = vec![false; keys.len()];
    filter.may_contain_batch(keys, &mut batch);
    let mut hash_batch = vec![false; keys.len()];
    filter.may_contain_hash_batch(&hashes, &mut hash_batch);
    for (i, key) in keys.iter().enumerate() {
        let shown = String::from_utf8_lossy(key);
        assert!(filter.may_contain(key), "{what}: lost {shown:?}");
        assert!(
            filter.may_contain_hash(hashes[i]),
            "{what}: lost {shown:?} by hash"
        );
        assert!(batch[i], "{what}: the batch lost {shown:?}");
        assert!(hash_batch[i], "{what}: the hash batch lost {shown:?}");
    }
    let reference =
        spec::open(block).unwrap_or_else(|e| panic!("{what}: the spec reader refuses: {e:?}"));
    assert!(
        reference.checksum_ok,
        "{what}: the spec reader's CRC differs"
    );
    let stride = if filter.kind() == FilterKind::Ribbon {
        (keys.len() / 64).max(1)
    } else {
        1
    };
    for (key, h) in keys.iter().zip(&hashes).step_by(stride) {
        assert!(
            reference.may_contain_key_hash(h.get()),
            "{what}: the spec reader does not find {:?}",
            String::from_utf8_lossy(key)
        );
    }
    filter.kind()
}

// --- BlockedBloom ---

#[test]
fn blocked_bloom_every_probe_count_at_every_whole_bits_per_key() {
    let keys = keys(300, "fb");
    for probes in 1..=24u8 {
        for bits_per_key in 1..=100u32 {
            let blocks = (300 * bits_per_key).div_ceil(512);
            let params = BlockedBloomParams::new(blocks, probes).unwrap();
            let block = build(Explicit(FilterPlan::BlockedBloom(params)), &keys);
            assert_finds_all(
                &format!("BlockedBloom k = {probes}, {blocks} blocks ({bits_per_key} bits/key)"),
                &block,
                &keys,
            );
        }
    }
}

#[test]
fn blocked_bloom_policy_every_eighth_bits_per_key_and_boundary_key_counts() {
    for n in [0usize, 1, 2, 7, 8, 9, 63, 64, 65, 1000] {
        let keys = keys(n, "fbp");
        for eighths in 8..=800u32 {
            let bits_per_key = f64::from(eighths) / 8.0;
            let block = build(BlockedBloomPolicy::new(bits_per_key), &keys);
            assert_finds_all(
                &format!("BlockedBloomPolicy::new({bits_per_key}), {n} keys"),
                &block,
                &keys,
            );
        }
    }
}

// --- StandardBloom ---

#[test]
fn standard_bloom_every_probe_count() {
    let explicit_keys = keys(200, "sb");
    for hashes in 1..=255u32 {
        for num_bits in [1u64, 63, 64, 65, 200, 2000, 20_000] {
            let params = StandardBloomParams::new(num_bits, hashes).unwrap();
            let block = build(Explicit(FilterPlan::StandardBloom(params)), &explicit_keys);
            let what = format!("StandardBloom k = {hashes}, m = {num_bits}");
            assert_finds_all(&what, &block, &explicit_keys);
        }
    }
    for n in [0usize, 1, 64, 1000] {
        let keys = keys(n, "sbp");
        for bits_per_key in 1..=100u32 {
            let block = build(StandardBloomPolicy::new(f64::from(bits_per_key)), &keys);
            assert_finds_all(
                &format!("StandardBloomPolicy::new({bits_per_key}), {n} keys"),
                &block,
                &keys,
            );
        }
    }
}

// --- Ribbon ---

/// The key counts of the issue that found Ribbon losing keys, and the boundaries around them.
const RIBBON_KEY_COUNTS: [usize; 5] = [1, 65, 100, 1000, 20_000];

/// `RibbonPolicy::with_fpr(2^-e)` for `e` from 1 to 40 in steps of 1/4, at `counts`: refused past 2^-32 (the
/// smallest rate it keeps), else built. Returns how many of the blocks were Ribbon (the rest are the BlockedBloom
/// fallback for tiny key sets).
fn ribbon_every_quarter_exponent(counts: &[usize]) -> usize {
    let mut ribbon = 0;
    for &n in counts {
        let keys = keys(n, "rb");
        for quarter in 4..=160u32 {
            let exponent = f64::from(quarter) / 4.0;
            let Ok(policy) = RibbonPolicy::try_with_fpr((-exponent).exp2()) else {
                assert!(exponent > 32.0, "with_fpr(2^-{exponent}) refused");
                continue;
            };
            let block = build(policy, &keys);
            let kind = assert_finds_all(
                &format!("RibbonPolicy::with_fpr(2^-{exponent}), {n} keys"),
                &block,
                &keys,
            );
            ribbon += usize::from(kind == FilterKind::Ribbon);
        }
    }
    ribbon
}

#[test]
fn ribbon_with_fpr_every_quarter_exponent_from_1_to_40() {
    let ribbon = ribbon_every_quarter_exponent(&RIBBON_KEY_COUNTS);
    // Most of these are real Ribbon blocks, including every rate from 2^-24.5 to 2^-32 at 1000 keys and more.
    assert!(ribbon > 3 * 125, "only {ribbon} Ribbon blocks");
}

/// The same sweep at 10^5 and 10^6 keys (about a minute in release: `cargo test --release --test
/// no_false_negatives -- --ignored`).
#[test]
#[ignore = "minutes in the test profile; run with --ignored --release"]
fn ribbon_with_fpr_every_quarter_exponent_at_large_key_counts() {
    let ribbon = ribbon_every_quarter_exponent(&[100_000, 1_000_000]);
    assert_eq!(ribbon, 2 * 125);
}

#[test]
fn ribbon_policy_every_bloom_equivalent_bits_per_key_overhead_and_memory_cap() {
    for n in [0usize, 1, 129, 300, 5000, 9000] {
        let keys = keys(n, "rbn");
        for bits_per_key in 1..=100u32 {
            // Past 91 bits/key BlockedBloom's rate is below 2^-32, which Ribbon cannot keep: refused.
            let Ok(policy) = RibbonPolicy::try_new(f64::from(bits_per_key)) else {
                assert!(
                    bits_per_key > 91,
                    "RibbonPolicy::new({bits_per_key}) refused"
                );
                continue;
            };
            assert_finds_all(
                &format!("RibbonPolicy::new({bits_per_key}), {n} keys"),
                &build(policy, &keys),
                &keys,
            );
        }
        for exponent in [1, 7, 24, 25, 31, 32] {
            let base = RibbonPolicy::with_fpr((-f64::from(exponent)).exp2());
            for overhead in [0.0, 0.001, 0.005, 0.05, 0.5, 1.0] {
                let policy = base.with_slot_overhead(overhead);
                let what =
                    format!("with_fpr(2^-{exponent}).with_slot_overhead({overhead}), {n} keys");
                assert_finds_all(&what, &build(policy, &keys), &keys);
            }
            for cap in [0usize, 1 << 10, 1 << 20, usize::MAX] {
                let policy = base.with_max_build_memory(cap);
                let what =
                    format!("with_fpr(2^-{exponent}).with_max_build_memory({cap}), {n} keys");
                let kind = assert_finds_all(&what, &build(policy, &keys), &keys);
                if cap == 0 {
                    assert_eq!(
                        kind,
                        FilterKind::BlockedBloom,
                        "{what}: a zero cap leaves no room for Ribbon"
                    );
                }
            }
        }
    }
}

// --- In-memory filters ---

#[test]
fn bloom_filter_every_rate_and_probe_count() {
    let keys = keys(500, "mem");
    let check = |what: &str, mut filter: BloomFilter| {
        for key in &keys {
            filter.insert(key);
        }
        for key in &keys {
            assert!(
                filter.contains(key),
                "{what}: lost {:?}",
                String::from_utf8_lossy(key)
            );
        }
        let block = filter.to_block();
        assert_finds_all(what, &block, &keys);
        assert_eq!(
            BloomFilter::from_block(&block).as_ref(),
            Ok(&filter),
            "{what}"
        );
    };
    for quarter in 4..=160u32 {
        let rate = (-f64::from(quarter) / 4.0).exp2();
        for expected in [1usize, 100, 500, 5000] {
            check(
                &format!("BloomFilter::with_rate({expected}, {rate})"),
                BloomFilter::with_rate(expected, rate),
            );
        }
    }
    for hashes in 1..=255u32 {
        for bits in [1u64, 64, 1001, 10_000] {
            check(
                &format!("BloomFilter::with_size({bits}, {hashes})"),
                BloomFilter::with_size(bits, hashes),
            );
        }
    }
}

#[test]
fn counting_bloom_filter_keeps_every_key_not_removed() {
    let kept = keys(400, "kept");
    let gone = keys(400, "gone");
    for (what, mut filter) in [
        (
            "with_rate(800, 0.01)".to_owned(),
            CountingBloomFilter::with_rate(800, 0.01),
        ),
        (
            "with_rate(10, 0.5) (overloaded)".to_owned(),
            CountingBloomFilter::with_rate(10, 0.5),
        ),
        (
            "with_rate(800, 2^-40)".to_owned(),
            CountingBloomFilter::with_rate(800, 2f64.powi(-40)),
        ),
        (
            "with_size(64, 1) (saturating)".to_owned(),
            CountingBloomFilter::with_size(64, 1),
        ),
        (
            "with_size(5000, 255)".to_owned(),
            CountingBloomFilter::with_size(5000, 255),
        ),
    ] {
        for key in kept.iter().chain(&gone) {
            filter.insert(key);
        }
        // Interleave removals with insertions: every third removed key was inserted twice and is removed twice,
        // and every third kept key is inserted again (removing only what was inserted, as the filter requires).
        for (i, key) in gone.iter().enumerate() {
            if i % 3 == 0 {
                filter.insert(key);
                filter.insert(&kept[i]);
                filter.remove(key);
            }
            filter.remove(key);
        }
        for key in &kept {
            assert!(
                filter.contains(key),
                "{what}: lost {:?}",
                String::from_utf8_lossy(key)
            );
        }
        let as_bloom = filter.to_bloom_filter();
        assert!(
            kept.iter().all(|k| as_bloom.contains(k)),
            "{what}: to_bloom_filter lost a key"
        );
    }
}

#[test]
fn scalable_bloom_filter_across_many_stages() {
    let keys = keys(60_000, "scal");
    for (initial, rate, growth, tightening) in [
        (1usize, 0.5, 2.0, 0.9),
        (10, 0.01, 2.0, 0.9),
        (10, 2f64.powi(-30), 1.5, 0.5),
        (100, 0.001, 3.0, 0.8),
    ] {
        let what =
            format!("ScalableBloomFilter::with_growth({initial}, {rate}, {growth}, {tightening})");
        let mut filter = ScalableBloomFilter::with_growth(initial, rate, growth, tightening);
        for key in &keys {
            filter.insert(key);
        }
        assert!(
            filter.num_stages() >= 6,
            "{what}: only {} stages",
            filter.num_stages()
        );
        for key in &keys {
            assert!(
                filter.contains(key),
                "{what}: lost {:?}",
                String::from_utf8_lossy(key)
            );
        }
        // Each key is in one stage; serialised, the stages still find every key between them.
        let blocks: Vec<Vec<u8>> = filter.stages().map(BloomFilter::to_block).collect();
        let stages: Vec<FilterBlock<&[u8]>> = blocks
            .iter()
            .map(|b| FilterBlock::open(&b[..]).unwrap())
            .collect();
        for key in &keys {
            assert!(
                stages.iter().any(|s| s.may_contain(key)),
                "{what}: no stage block has {key:?}"
            );
        }
    }
    let mut default = ScalableBloomFilter::new(1, 0.01);
    for key in &keys {
        default.insert(key);
    }
    assert!(
        keys.iter().all(|k| default.contains(k)),
        "ScalableBloomFilter::new(1, 0.01) lost a key"
    );
}

// --- LevelDB-layout policies ---

#[test]
fn leveldb_layout_policies_at_their_extreme_bits_per_key() {
    let keys = keys(700, "ldb");
    let key_refs: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
    assert!(LevelDbBloomPolicy::try_new(101).is_err());
    for bits_per_key in [0usize, 1, 2, 3, 10, 43, 44, 45, 99, 100] {
        let policy = LevelDbBloomPolicy::new(bits_per_key);
        let filter = policy.create_filter(&key_refs);
        for key in &key_refs {
            assert!(
                policy.key_may_match(key, &filter),
                "LevelDbBloomPolicy::new({bits_per_key}) lost a key"
            );
        }
        check_leveldb_filter_block(
            &format!("LevelDbBloomPolicy::new({bits_per_key})"),
            policy,
            &keys,
        );
    }
    for tenths in (10..=1000u32).step_by(7) {
        let bits_per_key = f64::from(tenths) / 10.0;
        let policy = Bloom64Policy::new(bits_per_key);
        let filter = policy.create_filter(&key_refs);
        for key in &key_refs {
            assert!(
                policy.key_may_match(key, &filter),
                "Bloom64Policy::new({bits_per_key}) lost a key"
            );
        }
        check_leveldb_filter_block(
            &format!("Bloom64Policy::new({bits_per_key})"),
            policy,
            &keys,
        );
    }
}

/// A LevelDB filter block over data blocks of 50 keys at growing offsets (several per 2 KiB range, and ranges
/// with none): every key is found through the block reader.
fn check_leveldb_filter_block<P>(what: &str, policy: P, keys: &[Vec<u8>])
where
    P: sstfilter::leveldb::LevelDbFilterPolicy + Copy,
{
    let mut builder = LevelDbFilterBlockBuilder::new(policy);
    let offsets: Vec<u64> = (0..keys.len().div_ceil(50))
        .map(|i| i as u64 * 1500 + (i as u64 % 3) * 4000)
        .collect();
    let mut sorted = offsets.clone();
    sorted.sort_unstable();
    for (chunk, &offset) in keys.chunks(50).zip(&sorted) {
        builder.start_block(offset).unwrap();
        for key in chunk {
            builder.add_key(key);
        }
    }
    let bytes = builder.finish().unwrap();
    let reader = LevelDbFilterBlockReader::new(&bytes[..], policy);
    for (chunk, &offset) in keys.chunks(50).zip(&sorted) {
        for key in chunk {
            assert!(
                reader.key_may_match(offset, key),
                "{what}: the filter block lost a key"
            );
        }
    }
}

// --- Property test over the continuous dimensions ---

/// Every constructor of every policy and filter the public API offers, with its parameters. Parameters are drawn
/// past their documented ranges too: the checked (`try_`) constructors must refuse exactly what lies outside.
#[derive(Debug, Clone)]
enum Config {
    BlockedBloomPolicy(f64),
    StandardBloomPolicy(f64),
    RibbonNew(f64),
    RibbonWithFpr {
        fpr: f64,
        overhead: Option<f64>,
        max_build_memory: Option<usize>,
    },
    BlockedBloomParams {
        blocks: u32,
        probes: u8,
    },
    StandardBloomParams {
        bits: u64,
        hashes: u32,
    },
    BloomFilterWithRate {
        expected: usize,
        fpr: f64,
    },
    BloomFilterWithSize {
        bits: u64,
        hashes: u32,
    },
    CountingBloomFilter {
        expected: usize,
        fpr: f64,
    },
    ScalableBloomFilter {
        initial: usize,
        fpr: f64,
        growth: f64,
        tightening: f64,
    },
    LevelDbBloomPolicy(usize),
    Bloom64Policy(f64),
    RangeNew {
        max_range_len: u64,
        fpr: f64,
    },
    RangeWithBitsPerKey {
        bits: f64,
        max_range_len: u64,
    },
}

/// A rate drawn log-uniformly from 2^-40 to 1/2.
fn rate() -> impl Strategy<Value = f64> {
    (1.0f64..40.0).prop_map(|e| (-e).exp2())
}

/// A rate as a user may write one: mostly valid, sometimes 0, 1, negative, above 1, NaN or far too small.
fn any_rate() -> impl Strategy<Value = f64> {
    prop_oneof![
        8 => rate(),
        1 => prop_oneof![
            Just(0.0),
            Just(1.0),
            Just(-0.01),
            Just(1.5),
            Just(f64::NAN),
            Just(1e-300),
            (40.0f64..80.0).prop_map(|e| (-e).exp2()),
        ],
    ]
}

/// Bits per key as a user may write them: mostly 1 to 100, sometimes below, above (a unit mistake), or not finite.
fn bits_per_key() -> impl Strategy<Value = f64> {
    prop_oneof![
        8 => 1.0f64..100.0,
        1 => prop_oneof![
            Just(0.0),
            Just(-3.0),
            Just(100.5),
            Just(1e9),
            Just(f64::NAN),
            Just(f64::INFINITY),
            0.0f64..1.0,
        ],
    ]
}

fn config() -> impl Strategy<Value = Config> {
    prop_oneof![
        1 => bits_per_key().prop_map(Config::BlockedBloomPolicy),
        1 => bits_per_key().prop_map(Config::StandardBloomPolicy),
        1 => bits_per_key().prop_map(Config::RibbonNew),
        // Weighted up: rates are the widest continuous dimension, and Ribbon the most intricate kind.
        4 => (any_rate(), proptest::option::of(-0.1f64..1.2), proptest::option::of(0usize..4_000_000)).prop_map(
            |(fpr, overhead, max_build_memory)| Config::RibbonWithFpr {
                fpr,
                overhead,
                max_build_memory
            }
        ),
        1 => (0u32..200, 1u8..=24).prop_map(|(blocks, probes)| Config::BlockedBloomParams { blocks, probes }),
        1 => (1u64..100_000, 1u32..=255).prop_map(|(bits, hashes)| Config::StandardBloomParams { bits, hashes }),
        1 => (1usize..5000, any_rate()).prop_map(|(expected, fpr)| Config::BloomFilterWithRate { expected, fpr }),
        1 => (0u64..100_000, 0u32..=300).prop_map(|(bits, hashes)| Config::BloomFilterWithSize { bits, hashes }),
        1 => (1usize..5000, any_rate()).prop_map(|(expected, fpr)| Config::CountingBloomFilter { expected, fpr }),
        1 => (1usize..500, any_rate(), 0.5f64..4.0, 0.0f64..1.05).prop_map(|(initial, fpr, growth, tightening)| {
            Config::ScalableBloomFilter {
                initial,
                fpr,
                growth,
                tightening,
            }
        }),
        1 => prop_oneof![9 => 0usize..=100, 1 => 101usize..10_000].prop_map(Config::LevelDbBloomPolicy),
        1 => bits_per_key().prop_map(Config::Bloom64Policy),
        // Range lengths over the whole u64 (rounded up to a power of two; refused past 2^56), any rate.
        2 => ((0u32..64).prop_flat_map(|e| 0..=(u64::MAX >> (63 - e))), any_rate())
            .prop_map(|(max_range_len, fpr)| Config::RangeNew { max_range_len, fpr }),
        1 => (-5.0f64..100.0, any::<u64>())
            .prop_map(|(bits, max_range_len)| Config::RangeWithBitsPerKey { bits, max_range_len }),
    ]
}

/// Keys of 0 to 64 bytes, the empty key among them, with duplicates (adjacent and not).
fn key_set() -> impl Strategy<Value = Vec<Vec<u8>>> {
    (
        proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..=64), 0..1500),
        any::<bool>(),
        1usize..5,
    )
        .prop_map(|(mut keys, with_empty, repeat_every)| {
            if with_empty {
                keys.push(Vec::new());
            }
            let copies: Vec<Vec<u8>> = keys.iter().step_by(repeat_every).cloned().collect();
            keys.extend(copies);
            if let Some(first) = keys.first().cloned() {
                keys.push(first.clone());
                keys.push(first);
            }
            keys
        })
}

/// Whether `bits` is a bits/key setting the Bloom policies document as accepted: 1 to `MAX_BITS_PER_KEY`.
fn documented_bits(bits: f64) -> bool {
    (1.0..=sstfilter::MAX_BITS_PER_KEY).contains(&bits)
}

/// Whether `fpr` is strictly between 0 and 1, the rates every rate-taking constructor documents.
fn documented_rate(fpr: f64) -> bool {
    fpr > 0.0 && fpr < 1.0
}

/// The value of a checked constructor, or `None` when it refused; asserts that it refuses exactly what its
/// documentation says it refuses (`documented` is whether the arguments lie inside the documented range).
fn checked<T, E: std::fmt::Display>(
    what: &str,
    result: Result<T, E>,
    documented: bool,
) -> Option<T> {
    match result {
        Ok(value) => {
            assert!(
                documented,
                "{what}: accepted a value outside the documented range"
            );
            Some(value)
        }
        Err(e) => {
            assert!(!documented, "{what}: refused a documented value: {e}");
            None
        }
    }
}

/// Builds `keys` as `config` says and checks every key is found through every path the filter has; a
/// configuration the checked constructor refuses must be one its documentation excludes.
fn check_config(config: &Config, keys: &[Vec<u8>]) {
    let what = format!("{config:?}, {} keys", keys.len());
    let block = |policy: &dyn FilterPolicy| {
        let mut builder = FilterBlockBuilder::new(policy);
        for key in keys {
            builder.add_key(key);
        }
        assert_finds_all(&what, &builder.finish(), keys);
    };
    let ribbon_rate = |fpr: f64| (RibbonPolicy::MIN_FPR..1.0).contains(&fpr);
    match *config {
        Config::BlockedBloomPolicy(b) => {
            if let Some(p) = checked(&what, BlockedBloomPolicy::try_new(b), documented_bits(b)) {
                block(&p);
            }
        }
        Config::StandardBloomPolicy(b) => {
            if let Some(p) = checked(&what, StandardBloomPolicy::try_new(b), documented_bits(b)) {
                block(&p);
            }
        }
        Config::RibbonNew(b) => {
            let keeps = documented_bits(b) && ribbon_rate(FilterModel::BlockedBloom.fpr(b));
            if let Some(p) = checked(&what, RibbonPolicy::try_new(b), keeps) {
                block(&p);
            }
        }
        Config::RibbonWithFpr {
            fpr,
            overhead,
            max_build_memory,
        } => {
            let Some(mut policy) =
                checked(&what, RibbonPolicy::try_with_fpr(fpr), ribbon_rate(fpr))
            else {
                return;
            };
            if let Some(overhead) = overhead {
                let documented = (0.0..=1.0).contains(&overhead);
                let Some(p) = checked(&what, policy.try_with_slot_overhead(overhead), documented)
                else {
                    return;
                };
                policy = p;
            }
            if let Some(cap) = max_build_memory {
                policy = policy.with_max_build_memory(cap);
            }
            block(&policy);
        }
        Config::BlockedBloomParams { blocks, probes } => {
            // Any size, even none for some keys or some for none: the builder fits it (FORMAT.md 4.2).
            block(&Explicit(FilterPlan::BlockedBloom(
                BlockedBloomParams::new(blocks, probes).unwrap(),
            )));
        }
        Config::StandardBloomParams { bits, hashes } => {
            block(&Explicit(FilterPlan::StandardBloom(
                StandardBloomParams::new(bits, hashes).unwrap(),
            )));
        }
        Config::BloomFilterWithRate { expected, fpr } => {
            // Rates needing more than 255 probes (below about 2^-255) are refused too.
            let documented = documented_rate(fpr) && fpr > 1e-70;
            if let Some(f) = checked(&what, BloomFilter::try_with_rate(expected, fpr), documented) {
                check_bloom_filter(&what, f, keys);
            }
        }
        Config::BloomFilterWithSize { bits, hashes } => {
            let documented = bits > 0 && (1..=255).contains(&hashes);
            if let Some(f) = checked(&what, BloomFilter::try_with_size(bits, hashes), documented) {
                check_bloom_filter(&what, f, keys);
            }
        }
        Config::CountingBloomFilter { expected, fpr } => {
            let documented = documented_rate(fpr) && fpr > 1e-70;
            let Some(mut filter) = checked(
                &what,
                CountingBloomFilter::try_with_rate(expected, fpr),
                documented,
            ) else {
                return;
            };
            let (kept, removed) = keys.split_at(keys.len() / 2);
            // Remove only keys that were inserted and are not also among the kept ones.
            for key in keys {
                filter.insert(key);
            }
            for key in removed.iter().filter(|k| !kept.contains(k)) {
                filter.remove(key);
            }
            assert!(
                kept.iter().all(|k| filter.contains(k)),
                "{what}: lost a kept key"
            );
        }
        Config::ScalableBloomFilter {
            initial,
            fpr,
            growth,
            tightening,
        } => {
            let documented =
                documented_rate(fpr) && fpr > 1e-70 && documented_rate(tightening) && growth >= 1.0;
            let Some(mut filter) = checked(
                &what,
                ScalableBloomFilter::try_with_growth(initial, fpr, growth, tightening),
                documented,
            ) else {
                return;
            };
            for key in keys {
                filter.insert(key);
            }
            assert!(
                keys.iter().all(|k| filter.contains(k)),
                "{what}: lost a key"
            );
        }
        Config::LevelDbBloomPolicy(b) => {
            if let Some(p) = checked(&what, LevelDbBloomPolicy::try_new(b), b <= 100) {
                check_leveldb_filter_block(&what, p, keys);
            }
        }
        Config::Bloom64Policy(b) => {
            if let Some(p) = checked(&what, Bloom64Policy::try_new(b), documented_bits(b)) {
                check_leveldb_filter_block(&what, p, keys);
            }
        }
        Config::RangeNew { max_range_len, fpr } => {
            let in_range = (1..=RangePolicy::MAX_RANGE_LEN).contains(&max_range_len)
                && (RangePolicy::MIN_FPR..1.0).contains(&fpr);
            // One key's universe, L / fpr (L rounded up to a power of two), must be below 2^64.
            let length = max_range_len
                .checked_next_power_of_two()
                .map_or(f64::INFINITY, |l| l as f64);
            let universe = length / fpr / 2f64.powi(64);
            let result = RangePolicy::try_new(max_range_len, fpr);
            if in_range && (0.99..1.01).contains(&universe) {
                // Within rounding of the limit, either answer is honest.
                if let Ok(p) = result {
                    check_range(&what, p, keys);
                }
            } else if let Some(p) = checked(&what, result, in_range && universe < 1.0) {
                check_range(&what, p, keys);
            }
        }
        Config::RangeWithBitsPerKey {
            bits,
            max_range_len,
        } => {
            // Refused where the rate it gives is one `RangePolicy::try_new` refuses.
            if let Ok(p) = RangePolicy::try_with_bits_per_key(bits, max_range_len) {
                assert!(
                    RangePolicy::try_new(p.max_range_len(), p.fpr()).is_ok(),
                    "{what}"
                );
                check_range(&what, p, keys);
            }
        }
    }
}

/// Builds a Range block of `keys` (sorted; duplicates added twice) and checks every key through every question
/// that holds it: points (single, batched, the spec reader's on a sample), the one-key range, and ranges reaching
/// it from its neighbours with every kind of bound.
fn check_range(what: &str, policy: RangePolicy, keys: &[Vec<u8>]) {
    let mut sorted = keys.to_vec();
    sorted.sort();
    let mut builder = RangeFilterBuilder::new(policy);
    for key in &sorted {
        if let Err(e) = builder.add_key(key) {
            // Only a key past the policy's limit is refused: the universe could not keep the rate.
            assert_eq!(
                e,
                UsageError::TooManyKeys {
                    expected: policy.max_keys(),
                    found: policy.max_keys() + 1
                },
                "{what}"
            );
            assert_eq!(builder.len() as u64, policy.max_keys(), "{what}");
            return;
        }
    }
    sorted.dedup();
    let block = builder.finish();
    let filter = FilterBlock::open(&block[..]).unwrap_or_else(|e| panic!("{what}: {e}"));
    assert_eq!(filter.kind(), FilterKind::Range, "{what}");
    let reference = spec::open(&block).unwrap().range().unwrap();
    let mut batch = vec![false; sorted.len()];
    filter.may_contain_batch(&sorted, &mut batch);
    let bounds = |k: &[u8]| -> [Bound<Vec<u8>>; 2] { [Included(k.to_vec()), Excluded(k.to_vec())] };
    for (i, key) in sorted.iter().enumerate() {
        let shown = String::from_utf8_lossy(key);
        assert!(filter.may_contain(key), "{what}: lost {shown:?}");
        assert!(batch[i], "{what}: batch lost {shown:?}");
        if i % 7 == 0 {
            assert!(
                reference.may_contain(key),
                "{what}: the spec reader lost {shown:?}"
            );
        }
        let mut lowers: Vec<Bound<Vec<u8>>> = vec![Unbounded, Included(key.clone())];
        let mut uppers: Vec<Bound<Vec<u8>>> = vec![Unbounded, Included(key.clone())];
        if let Some(before) = i.checked_sub(1).and_then(|j| sorted.get(j)) {
            lowers.extend(bounds(before).into_iter().skip(1)); // (before, …
            lowers.push(Included(before.clone()));
        }
        if let Some(after) = sorted.get(i + 1) {
            uppers.extend(bounds(after));
        }
        for lower in &lowers {
            for upper in &uppers {
                let answer = filter.may_contain_range(
                    lower.as_ref().map(Vec::as_slice),
                    upper.as_ref().map(Vec::as_slice),
                );
                assert!(
                    answer.may_contain(),
                    "{what}: lost {shown:?} in {lower:?}..{upper:?}"
                );
            }
        }
    }
}

/// Every range length the format allows (2^0..=2^56) at rates from 1/2 to 2^-40, and every whole bits/key from 0
/// to 100 at five range lengths, at key counts around the Elias–Fano word and sample boundaries, over keys of three
/// shapes (decimal after a shared prefix, fixed-width binary, variable length).
#[test]
fn range_policy_every_range_length_rate_and_bits_per_key() {
    let shapes = |n: usize| -> [Vec<Vec<u8>>; 3] {
        [
            keys(n, "range"),
            (0..n as u64)
                .map(|i| [&b"t/"[..], &(i * 0x9E37_79B9).to_le_bytes()].concat())
                .collect(),
            (0..n)
                .map(|i| format!("{}", i * 7919).into_bytes())
                .collect(),
        ]
    };
    let mut checked = 0;
    for n in [0usize, 1, 2, 63, 64, 65, 300] {
        for keys in shapes(n) {
            for s in 0..=56u32 {
                for e in [1, 7, 20, 40] {
                    // One key's universe, 2^(s + e), must stay below 2^64.
                    let Ok(policy) = RangePolicy::try_new(1 << s, (-f64::from(e)).exp2()) else {
                        assert!(s + e >= 64, "2^{s} at 2^-{e} refused");
                        continue;
                    };
                    check_range(&format!("range 2^{s} at 2^-{e}, {n} keys"), policy, &keys);
                    checked += 1;
                }
            }
            for bits in 0..=100 {
                for s in [0u32, 8, 16, 32, 56] {
                    // The rate 2^(s + 2 - bits) must be below 1, at least 2^-40, and 2^(bits - 2) below 2^64.
                    let Ok(policy) = RangePolicy::try_with_bits_per_key(f64::from(bits), 1 << s)
                    else {
                        assert!(bits <= s + 2 || bits > (s + 42).min(65), "{bits} at 2^{s}");
                        continue;
                    };
                    check_range(
                        &format!("range 2^{s} at {bits} bits/key, {n} keys"),
                        policy,
                        &keys,
                    );
                    checked += 1;
                }
            }
        }
    }
    // Accepted per key set: 57 + 57 + 44 + 24 (length, rate) pairs (s + e < 64), and 40 + 40 + 40 + 31 + 7
    // (bits, length) pairs (s + 2 < bits <= min(s + 42, 65)).
    assert_eq!(checked, 7 * 3 * (182 + 158));
}

fn check_bloom_filter(what: &str, mut filter: BloomFilter, keys: &[Vec<u8>]) {
    for key in keys {
        filter.insert(key);
    }
    assert!(
        keys.iter().all(|k| filter.contains(k)),
        "{what}: lost a key"
    );
    assert_finds_all(what, &filter.to_block(), keys);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(192))]

    #[test]
    fn any_constructor_any_parameters_any_keys_loses_nothing(config in config(), keys in key_set()) {
        check_config(&config, &keys);
    }
}

/// The reproductions of the issue that found Ribbon losing keys, as a user wrote them.
#[test]
fn the_reported_reproductions_find_every_key() {
    let keys: Vec<Vec<u8>> = (0..100).map(|i| format!("k{i}").into_bytes()).collect();
    let block = build(RibbonPolicy::with_fpr(2f64.powi(-25)), &keys);
    assert_eq!(
        assert_finds_all("with_fpr(2^-25), 100 keys k{i}", &block, &keys),
        FilterKind::Ribbon
    );
    let keys: Vec<Vec<u8>> = (0..20_000)
        .map(|j| format!("k{j:08}").into_bytes())
        .collect();
    let block = build(RibbonPolicy::with_fpr(1e-9), &keys);
    assert_eq!(
        assert_finds_all("with_fpr(1e-9), 20,000 keys k{j:08}", &block, &keys),
        FilterKind::Ribbon
    );
}
