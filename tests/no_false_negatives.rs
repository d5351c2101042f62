//! No false negatives, over the whole configuration space of the public API: every policy constructor and every
//! parameter a user can set, enumerated where the dimension is finite (probe counts, column counts, whole
//! bits/key, key counts at the boundaries) and drawn by proptest where it is continuous (rates, fractional
//! bits/key, key lengths). A configuration that loses a key fails with its name.
//!
//! The list of constructors is `Recipe` (`crates/recipes`), which the fuzzers (`fuzz/`) share: the enumerating
//! tests below build through it with exact values, and the property test draws recipes, prefixes and partitionings
//! from bytes, as the fuzzers do. `Recipe::check` checks every path of the reader (and that a checked constructor
//! refuses exactly what its documentation excludes); here, the reader written from FORMAT.md (`tests/spec/`) must
//! also agree on every block. A new policy, constructor or parameter goes into `Recipe`, and into an enumerating
//! test here when it has a finite dimension worth sweeping. Ribbon's internal layouts (every column count in every
//! layout shape, at every block and shard boundary) are enumerated inside the crate, in `src/kind/ribbon/tests.rs`,
//! where layouts can be set directly.

mod spec;

use arbitrary::{Arbitrary, Unstructured};
use proptest::prelude::*;
use sstfilter::{FilterBlock, FilterKind, key_hash};
use sstfilter_recipes::{
    BitsPerKey, Extractor, Length, Overhead, Partitioning, Prefixes, RangeRecipe, Rate, Recipe,
    TableRecipe,
};

fn keys(n: usize, salt: &str) -> Vec<Vec<u8>> {
    (0..n)
        .map(|i| format!("{salt}:{i:08}").into_bytes())
        .collect()
}

/// Checks `recipe` on `keys` ([`Recipe::check`]) and that the spec reader agrees with ours on every block it
/// built. Returns the blocks, or `None` when the constructor refused (as its documentation says it does).
fn check(
    recipe: &Recipe,
    keys: &[Vec<u8>],
    prefixes: Option<Prefixes>,
    partitioning: Option<Partitioning>,
) -> Option<Vec<Vec<u8>>> {
    let blocks = recipe.check(keys, prefixes, partitioning)?;
    let what = format!("{recipe:?} with {prefixes:?}, {} keys", keys.len());
    for block in &blocks {
        assert_spec_agrees(&what, block, keys);
    }
    Some(blocks)
}

/// [`check`] without prefixes or partitions, for a recipe its documentation accepts: the kind of its (first)
/// block.
fn check_accepted(recipe: &Recipe, keys: &[Vec<u8>]) -> FilterKind {
    let blocks = check(recipe, keys, None, None).unwrap_or_else(|| panic!("{recipe:?} refused"));
    FilterBlock::open(&blocks[0][..]).unwrap().kind()
}

/// The reader written from FORMAT.md opens `block`, finds its CRC right, and answers as ours does for the keys and
/// as many absent ones (each key with a byte appended): every key for the Bloom kinds, a sample for Ribbon and
/// Range, whose spec readers are slow.
fn assert_spec_agrees(what: &str, block: &[u8], keys: &[Vec<u8>]) {
    let ours = FilterBlock::open(block).unwrap_or_else(|e| panic!("{what}: {e}"));
    let reference =
        spec::open(block).unwrap_or_else(|e| panic!("{what}: the spec reader refuses: {e:?}"));
    assert!(
        reference.checksum_ok,
        "{what}: the spec reader's CRC differs"
    );
    let range = reference.range();
    let stride = match ours.kind() {
        FilterKind::Ribbon => (keys.len() / 64).max(1),
        FilterKind::Range => 7,
        _ => 1,
    };
    let sample: Vec<&Vec<u8>> = keys.iter().step_by(stride).collect();
    let absent = sample.iter().map(|k| [&k[..], b"\xff"].concat());
    for key in sample.iter().map(|k| k.to_vec()).chain(absent) {
        let theirs = match &range {
            Some(range) => range.may_contain(&key),
            None => reference.may_contain_key_hash(key_hash(&key).get()),
        };
        assert_eq!(
            theirs,
            ours.may_contain(&key),
            "{what}: the spec reader differs on {:?}",
            String::from_utf8_lossy(&key)
        );
    }
}

// --- BlockedBloom ---

#[test]
fn blocked_bloom_every_probe_count_at_every_whole_bits_per_key() {
    let keys = keys(300, "fb");
    for probes in 1..=24u8 {
        for bits_per_key in 1..=100u32 {
            let blocks = u8::try_from((300 * bits_per_key).div_ceil(512)).unwrap();
            check_accepted(&Recipe::BlockedBloomParams { blocks, probes }, &keys);
        }
    }
    // Probe counts the format does not have are refused.
    for probes in [0, 25] {
        let recipe = Recipe::BlockedBloomParams { blocks: 1, probes };
        assert_eq!(check(&recipe, &keys, None, None), None);
    }
}

#[test]
fn blocked_bloom_policy_every_eighth_bits_per_key_and_boundary_key_counts() {
    for n in [0usize, 1, 2, 7, 8, 9, 63, 64, 65, 1000] {
        let keys = keys(n, "fbp");
        for eighths in 8..=800u32 {
            let bits = BitsPerKey::Exactly(f64::from(eighths) / 8.0);
            check_accepted(&Recipe::BlockedBloomPolicy(bits), &keys);
        }
    }
}

// --- StandardBloom ---

#[test]
fn standard_bloom_every_probe_count() {
    let explicit_keys = keys(200, "sb");
    for hashes in 1..=255u16 {
        for bits in [1u16, 63, 64, 65, 200, 2000, 20_000] {
            let recipe = Recipe::StandardBloomParams { bits, hashes };
            check_accepted(&recipe, &explicit_keys);
        }
    }
    for n in [0usize, 1, 64, 1000] {
        let keys = keys(n, "sbp");
        for bits_per_key in 1..=100u32 {
            let bits = BitsPerKey::Exactly(f64::from(bits_per_key));
            check_accepted(&Recipe::StandardBloomPolicy(bits), &keys);
        }
    }
}

// --- Ribbon ---

/// The key counts of the issue that found Ribbon losing keys, and the boundaries around them.
const RIBBON_KEY_COUNTS: [usize; 5] = [1, 65, 100, 1000, 20_000];

/// `RibbonPolicy::with_fpr(2^-e).unwrap()`.
fn ribbon_with_fpr(exponent: f64) -> Recipe {
    Recipe::RibbonWithFpr {
        rate: Rate::Exactly((-exponent).exp2()),
        slot_overhead: None,
        max_build_memory: None,
    }
}

/// `RibbonPolicy::with_fpr(2^-e).unwrap()` for `e` from 1 to 40 in steps of 1/4, at `counts`: refused past 2^-32 (the
/// smallest rate it keeps), else built. Returns how many of the blocks were Ribbon (the rest are the BlockedBloom
/// fallback for tiny key sets).
fn ribbon_every_quarter_exponent(counts: &[usize]) -> usize {
    let mut ribbon = 0;
    for &n in counts {
        let keys = keys(n, "rb");
        for quarter in 4..=160u32 {
            let exponent = f64::from(quarter) / 4.0;
            let Some(blocks) = check(&ribbon_with_fpr(exponent), &keys, None, None) else {
                assert!(exponent > 32.0, "with_fpr(2^-{exponent}) refused");
                continue;
            };
            let kind = FilterBlock::open(&blocks[0][..]).unwrap().kind();
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
            let recipe = Recipe::RibbonNew(BitsPerKey::Exactly(f64::from(bits_per_key)));
            // Past 91 bits/key BlockedBloom's rate is below 2^-32, which Ribbon cannot keep: refused.
            if check(&recipe, &keys, None, None).is_none() {
                assert!(bits_per_key > 91, "{recipe:?} refused");
            }
        }
        for exponent in [1, 7, 24, 25, 31, 32] {
            let rate = Rate::Exactly((-f64::from(exponent)).exp2());
            for overhead in [0.0, 0.001, 0.005, 0.05, 0.5, 1.0] {
                let recipe = Recipe::RibbonWithFpr {
                    rate,
                    slot_overhead: Some(Overhead::Exactly(overhead)),
                    max_build_memory: None,
                };
                check_accepted(&recipe, &keys);
            }
            for cap in [0, 1 << 10, 1 << 20, u64::MAX] {
                let recipe = Recipe::RibbonWithFpr {
                    rate,
                    slot_overhead: None,
                    max_build_memory: Some(Length::Exactly(cap)),
                };
                let kind = check_accepted(&recipe, &keys);
                if cap == 0 {
                    assert_eq!(
                        kind,
                        FilterKind::BlockedBloom,
                        "{recipe:?}: a zero cap leaves no room for Ribbon"
                    );
                }
            }
        }
    }
}

// --- Range ---

/// Every range length the format allows (2^0..=2^56) at rates from 1/2 to 2^-40, and every whole bits/key from 0
/// to 100 at five range lengths, at key counts around the Elias–Fano word and sample boundaries, over keys of four
/// shapes (decimal after a shared prefix, fixed-width binary, variable length, and big-endian integers whose last
/// byte takes every value and whose others take a few: the writer widens those to all 256 values where the rate
/// allows, FORMAT.md 4.5, and the blocks where it did are counted).
#[test]
fn range_policy_every_range_length_rate_and_bits_per_key() {
    let shapes = |n: usize| -> [Vec<Vec<u8>>; 4] {
        [
            keys(n, "range"),
            (0..n as u64)
                .map(|i| [&b"t/"[..], &(i * 0x9E37_79B9).to_le_bytes()].concat())
                .collect(),
            (0..n)
                .map(|i| format!("{}", i * 7919).into_bytes())
                .collect(),
            (0..n as u64)
                .map(|i| ordered((i % 3) << 56 | (i % 5) << 24 | i & 0xff).to_vec())
                .collect(),
        ]
    };
    let mut accepted = 0;
    let mut widened = 0;
    for n in [0usize, 1, 2, 63, 64, 65, 300] {
        for keys in shapes(n) {
            for s in 0..=56u32 {
                for e in [1, 7, 20, 40] {
                    let recipe = Recipe::Range(RangeRecipe::New {
                        max_range_len: Length::Exactly(1 << s),
                        rate: Rate::Exactly((-f64::from(e)).exp2()),
                    });
                    // One key's universe, 2^(s + e), must stay below 2^64.
                    let Some(blocks) = check(&recipe, &keys, None, None) else {
                        assert!(s + e >= 64, "2^{s} at 2^-{e} refused");
                        continue;
                    };
                    accepted += 1;
                    widened += blocks
                        .iter()
                        .filter(|b| has_widened_alphabet(b, &keys))
                        .count();
                }
            }
            for bits in 0..=100 {
                for s in [0u32, 8, 16, 32, 56] {
                    let recipe = Recipe::Range(RangeRecipe::WithBitsPerKey {
                        bits: BitsPerKey::Exactly(f64::from(bits)),
                        max_range_len: Length::Exactly(1 << s),
                    });
                    // The rate 2^(s + 2 - bits) must be below 1, at least 2^-40, and 2^(bits - 2) below 2^64.
                    if check(&recipe, &keys, None, None).is_none() {
                        assert!(bits <= s + 2 || bits > (s + 42).min(65), "{bits} at 2^{s}");
                        continue;
                    }
                    accepted += 1;
                }
            }
        }
    }
    // Accepted per key set: 57 + 57 + 44 + 24 (length, rate) pairs (s + e < 64), and 40 + 40 + 40 + 31 + 7
    // (bits, length) pairs (s + 2 < bits <= min(s + 42, 65)).
    assert_eq!(accepted, 7 * 4 * (182 + 158));
    assert!(widened > 0, "no block of the fourth shape was widened");
}

/// `v` as a key whose byte order is its numeric order: big-endian, which the workspace lint keeps out of the
/// format's code, and which here is no format.
#[expect(
    clippy::big_endian_bytes,
    reason = "keys whose byte order is their numeric order, not a format"
)]
fn ordered(v: u64) -> [u8; 8] {
    v.to_be_bytes()
}

/// Whether a Range block's projection has a position whose alphabet holds all 256 byte values where `keys` have
/// fewer there (the writer widened it).
fn has_widened_alphabet(block: &[u8], keys: &[Vec<u8>]) -> bool {
    let Some(range) = spec::open(block).ok().and_then(|b| b.range()) else {
        return false;
    };
    range.alphabets.iter().enumerate().any(|(j, alphabet)| {
        let at = range.prefix.len() + j;
        let values: std::collections::BTreeSet<u8> = keys
            .iter()
            .map(|k| k.get(at).copied().unwrap_or(0))
            .collect();
        alphabet.len() == 256 && values.len() < 256
    })
}

/// The table filter in every combination of its options: a point filter of each kind or none; prefixes (two
/// extractors, with and without whole keys) or none; a range filter or none; one block or partitions (tiny, cut
/// anywhere or at data blocks); keys sorted or in any order. Combinations the builder refuses must be the
/// documented ones; every other finds every key, scan and range through its blocks intact and damaged.
#[test]
fn table_filter_every_combination() {
    let points = [
        None,
        Some(Recipe::BlockedBloomPolicy(BitsPerKey::Exactly(10.0))),
        Some(Recipe::RibbonWithFpr {
            rate: Rate::Exactly(0.01),
            slot_overhead: None,
            max_build_memory: None,
        }),
        Some(Recipe::StandardBloomPolicy(BitsPerKey::Exactly(6.0))),
    ];
    let prefixes = [
        None,
        Some(Prefixes {
            extractor: Extractor::Fixed(3),
            whole_keys: true,
        }),
        Some(Prefixes {
            extractor: Extractor::Delimited(b':'),
            whole_keys: false,
        }),
    ];
    let ranges = [
        None,
        Some(RangeRecipe::New {
            max_range_len: Length::Exactly(1 << 12),
            rate: Rate::Exactly(0.01),
        }),
    ];
    let partitionings = [
        None,
        Some(Partitioning {
            partition_bytes: 64,
            at_data_blocks: false,
            keys_per_data_block: 0,
        }),
        Some(Partitioning {
            partition_bytes: 200,
            at_data_blocks: true,
            keys_per_data_block: 6,
        }),
        Some(Partitioning {
            partition_bytes: 0,
            at_data_blocks: false,
            keys_per_data_block: 0,
        }),
    ];
    let mut keys: Vec<Vec<u8>> = (0..300u32)
        .map(|i| format!("t{}:{:05}", i % 7, i * 13).into_bytes())
        .collect();
    keys.extend([Vec::new(), b"t".to_vec(), b"t1".to_vec(), b"t1:".to_vec()]);
    let (mut built, mut refused) = (0, 0);
    for point in points {
        for prefixes in prefixes {
            for range in ranges {
                for partitioning in partitionings {
                    for any_key_order in [false, true] {
                        let recipe = TableRecipe {
                            point,
                            prefixes,
                            range,
                            partitioning,
                            any_key_order,
                        };
                        match recipe.check(&keys) {
                            Some(()) => built += 1,
                            None => refused += 1,
                        }
                    }
                }
            }
        }
    }
    // Refused: prefixes or partitions without a point filter, keys in any order with a range filter or
    // partitions, and partitions of 0 bytes (48 combinations); everything else builds.
    assert_eq!((built, refused), (66, 126));
}

// --- Property test over the continuous dimensions ---

/// What the fuzzers' `roundtrip` target draws: any recipe, with or without prefixes, partitioned or not.
#[derive(Arbitrary, Debug)]
struct Input {
    recipe: Recipe,
    prefixes: Option<Prefixes>,
    partitioning: Option<Partitioning>,
}

/// An [`Input`] drawn from proptest's bytes, as libFuzzer's would be (64 bytes are more than any input reads;
/// shrinking the bytes toward zeros shrinks toward the first recipes and the smallest values).
fn input() -> impl Strategy<Value = Input> {
    proptest::collection::vec(any::<u8>(), 64).prop_map(|bytes| {
        Input::arbitrary(&mut Unstructured::new(&bytes)).expect("any 64 bytes are an input")
    })
}

/// Keys of 0 to 200 bytes (the empty key among them), and keys of up to 3 bytes over a 3-letter alphabet, so that
/// duplicates are common: some repeated in place (as a table with several versions of a key has them), some
/// elsewhere.
fn key_set() -> impl Strategy<Value = Vec<Vec<u8>>> {
    let key = prop_oneof![
        6 => proptest::collection::vec(any::<u8>(), 0..=64),
        1 => proptest::collection::vec(any::<u8>(), 65..200),
        2 => proptest::collection::vec(0u8..3, 0..4),
    ];
    (
        proptest::collection::vec((key, proptest::bool::weighted(0.25)), 0..1500),
        any::<bool>(),
        1usize..5,
    )
        .prop_map(|(drawn, with_empty, repeat_every)| {
            let mut keys = Vec::new();
            for (key, repeated) in drawn {
                if repeated {
                    keys.push(key.clone());
                }
                keys.push(key);
            }
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

/// A [`TableRecipe`] drawn from proptest's bytes, as the fuzzers' `table_filter` target draws it.
fn table_recipe() -> impl Strategy<Value = TableRecipe> {
    proptest::collection::vec(any::<u8>(), 96).prop_map(|bytes| {
        TableRecipe::arbitrary(&mut Unstructured::new(&bytes)).expect("any 96 bytes are a recipe")
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn any_constructor_any_parameters_any_keys_loses_nothing(input in input(), keys in key_set()) {
        let _ = check(&input.recipe, &keys, input.prefixes, input.partitioning);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn any_table_filter_any_keys_loses_nothing(recipe in table_recipe(), keys in key_set()) {
        let _ = recipe.check(&keys);
    }
}

/// The reproductions of the issue that found Ribbon losing keys, as a user wrote them.
#[test]
fn the_reported_reproductions_find_every_key() {
    let keys: Vec<Vec<u8>> = (0..100).map(|i| format!("k{i}").into_bytes()).collect();
    assert_eq!(
        check_accepted(&ribbon_with_fpr(25.0), &keys),
        FilterKind::Ribbon
    );
    let keys: Vec<Vec<u8>> = (0..20_000)
        .map(|j| format!("k{j:08}").into_bytes())
        .collect();
    let recipe = Recipe::RibbonWithFpr {
        rate: Rate::Exactly(1e-9),
        slot_overhead: None,
        max_build_memory: None,
    };
    assert_eq!(check_accepted(&recipe, &keys), FilterKind::Ribbon);
}
