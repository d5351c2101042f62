//! Range filters on small key universes, where every range can be enumerated: all strings of up to 3 bytes over an
//! alphabet of 2 or 3 fuzzed bytes, behind a fuzzed shared prefix; a fuzzed subset of them are the keys. Built with
//! any Range policy (`RangeRecipe`: `RangePolicy::try_new` with any length and rate, `try_with_bits_per_key`; a
//! refusal must be one the documentation states), the block is reopened from its bytes and verified, and **every** range between two strings of the universe (and strings around the
//! prefix), with every kind of bound, that holds a key answers "may contain"; so does every key as a point.
#![no_main]

use std::ops::Bound;

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use sstfilter::{FilterBlock, FilterKind};
use sstfilter_recipes::{RangeRecipe, range_block};

#[derive(Arbitrary, Debug)]
struct Input {
    policy: RangeRecipe,
    /// The shared prefix (at most 6 bytes are used).
    prefix: Vec<u8>,
    /// The alphabet: 2 or 3 of these bytes (duplicates collapse).
    alphabet: [u8; 3],
    three_letters: bool,
    /// Which strings of the universe are keys: bit `i % 64` of word `i / 64`.
    chosen: [u64; 1],
}

fuzz_target!(|input: Input| {
    // A configuration the checked constructors refuse (as documented) builds nothing.
    let Some(policy) = input.policy.policy() else {
        return;
    };
    let prefix = &input.prefix[..input.prefix.len().min(6)];
    let mut alphabet = input.alphabet[..if input.three_letters { 3 } else { 2 }].to_vec();
    alphabet.sort();
    alphabet.dedup();
    // Every string of up to 3 letters (at most 40), behind the prefix.
    let mut strings: Vec<Vec<u8>> = vec![prefix.to_vec()];
    let mut last = vec![prefix.to_vec()];
    for _ in 0..3 {
        last = last
            .iter()
            .flat_map(|s| {
                alphabet.iter().map(move |&c| {
                    let mut t = s.clone();
                    t.push(c);
                    t
                })
            })
            .collect();
        strings.extend(last.iter().cloned());
    }
    strings.sort();
    let keys: Vec<Vec<u8>> = strings
        .iter()
        .enumerate()
        .filter(|(i, _)| input.chosen[0] >> (i % 64) & 1 == 1)
        .map(|(_, s)| s.clone())
        .collect();
    // A policy that cannot keep its rate for this many keys builds no block.
    let Some(block) = range_block(&format!("{policy:?}"), policy, &keys) else {
        return;
    };
    let filter = FilterBlock::open(&block[..]).expect("a fresh block opens and verifies");
    assert_eq!(filter.kind(), FilterKind::Range);
    for key in &keys {
        assert!(filter.may_contain(key), "lost {key:?} with {policy:?}");
    }
    // Bounds: every string of the universe, and strings around the prefix (a proper prefix of it, and the
    // prefix with its last byte moved up and down), included or excluded, and unbounded.
    let mut points = strings.clone();
    if let Some((&last, head)) = prefix.split_last() {
        points.push(head.to_vec());
        points.push([head, &[last.wrapping_add(1)]].concat());
        points.push([head, &[last.wrapping_sub(1)]].concat());
    }
    let mut bounds: Vec<Bound<&[u8]>> = vec![Bound::Unbounded];
    for p in &points {
        bounds.push(Bound::Included(p));
        bounds.push(Bound::Excluded(p));
    }
    let inside = |k: &[u8], lower: Bound<&[u8]>, upper: Bound<&[u8]>| {
        (match lower {
            Bound::Included(a) => k >= a,
            Bound::Excluded(a) => k > a,
            Bound::Unbounded => true,
        }) && (match upper {
            Bound::Included(b) => k <= b,
            Bound::Excluded(b) => k < b,
            Bound::Unbounded => true,
        })
    };
    let mut batch = vec![sstfilter::Answer::Absent; bounds.len()];
    for &lower in &bounds {
        let ranges: Vec<_> = bounds.iter().map(|&upper| (lower, upper)).collect();
        filter.may_contain_range_batch(&ranges, &mut batch);
        for (&upper, &batched) in bounds.iter().zip(&batch) {
            let answer = filter.may_contain_range(lower, upper);
            assert_eq!(
                batched, answer,
                "the batch answers {lower:?}..{upper:?} otherwise"
            );
            if keys.iter().any(|k| inside(k, lower, upper)) {
                assert!(
                    answer.must_read(),
                    "lost {lower:?}..{upper:?} holding a key of {keys:?} with {policy:?}"
                );
            }
        }
    }
});
