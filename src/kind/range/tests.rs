//! The Range kind against the key set it was built from: exhaustively on small universes of strings, and its
//! false-positive rate against the bound `n · ℓ / r` on large sets of integers.

#![expect(
    clippy::big_endian_bytes,
    reason = "integer keys are written big-endian, so that they sort as integers"
)]

use core::ops::Bound::{self, Excluded, Included, Unbounded};

use super::*;
use crate::format::TRAILER_LEN;
use crate::math::splitmix64;
use crate::{Answer, FilterBlock, KindParams, RangeFilterBuilder, RangePolicy};

fn block(policy: RangePolicy, keys: &[Vec<u8>]) -> Vec<u8> {
    let mut b = RangeFilterBuilder::new(policy);
    for k in keys {
        b.add_key(k).unwrap();
    }
    b.finish()
}

fn in_range(key: &[u8], lower: Bound<&[u8]>, upper: Bound<&[u8]>) -> bool {
    (match lower {
        Included(a) => key >= a,
        Excluded(a) => key > a,
        Unbounded => true,
    }) && (match upper {
        Included(b) => key <= b,
        Excluded(b) => key < b,
        Unbounded => true,
    })
}

/// Every string of up to `max_len` bytes over `alphabet`, sorted.
fn universe(alphabet: &[u8], max_len: usize) -> Vec<Vec<u8>> {
    let mut all = vec![Vec::new()];
    let mut last = vec![Vec::new()];
    for _ in 0..max_len {
        last = last
            .iter()
            .flat_map(|s: &Vec<u8>| {
                alphabet.iter().map(move |&c| {
                    let mut t = s.clone();
                    t.push(c);
                    t
                })
            })
            .collect();
        all.extend(last.iter().cloned());
    }
    all.sort();
    all
}

/// Every range between two strings of a small universe (each bound included, excluded or unbounded) answers
/// "may contain" whenever a key lies in it, and every key answers a point question, for key sets of every
/// density, with and without a common prefix, at range lengths from 1 to 2^56; the batch question answers each
/// range as the single question does.
#[test]
fn no_range_holding_a_key_is_ever_absent() {
    let mut state = 1u64;
    let mut questions = 0u64;
    for (alphabet, max_len) in [(&b"\x00ab"[..], 3), (&b"a\xff"[..], 4)] {
        let strings = universe(alphabet, max_len);
        for shared in [&b""[..], b"p", b"pre/"] {
            let strings: Vec<Vec<u8>> = strings.iter().map(|s| [shared, s].concat()).collect();
            let mut bounds: Vec<Bound<&[u8]>> = vec![Unbounded];
            for s in &strings {
                bounds.push(Included(s));
                bounds.push(Excluded(s));
            }
            for density in [1u64, 3, 10, 40] {
                for range_log2 in [0u32, 3, 16, 56] {
                    let keys: Vec<Vec<u8>> = strings
                        .iter()
                        .filter(|_| {
                            state = splitmix64(state, 1);
                            state.is_multiple_of(density)
                        })
                        .cloned()
                        .collect();
                    let bytes = block(RangePolicy::new(1 << range_log2, 0.5).unwrap(), &keys);
                    let f = FilterBlock::open(&bytes[..]).unwrap();
                    for k in &keys {
                        assert!(f.may_contain(k), "{k:?}");
                    }
                    let mut batch = vec![Answer::Absent; bounds.len()];
                    for &lower in &bounds {
                        let ranges: Vec<_> = bounds.iter().map(|&upper| (lower, upper)).collect();
                        f.may_contain_range_batch(&ranges, &mut batch);
                        for (&upper, &batched) in bounds.iter().zip(&batch) {
                            let answer = f.may_contain_range(lower, upper);
                            assert_eq!(batched, answer, "batch {lower:?}..{upper:?}");
                            questions += 1;
                            if keys.iter().any(|k| in_range(k, lower, upper)) {
                                assert!(
                                    answer.must_read(),
                                    "lost {lower:?}..{upper:?} keys {keys:?} L=2^{range_log2}"
                                );
                            }
                        }
                    }
                }
            }
        }
    }
    assert!(questions > 500_000, "{questions}");
}

/// A batch of any length, its answers fewer or more than its ranges, answers each range it has room for as the
/// single question does and leaves the answers past its ranges as they were: the ranges it reads ahead of the one
/// it answers (two) and those at the end of the batch included, and an empty filter's.
#[test]
fn a_batch_answers_the_ranges_it_has_room_for_as_single_questions_do() {
    let keys = integer_keys(2_000, 7);
    let bytes = integer_block(RangePolicy::new(1 << 8, 0.01).unwrap(), &keys);
    let empty = block(RangePolicy::new(1 << 8, 0.01).unwrap(), &[]);
    let filters: Vec<FilterBlock<&[u8]>> = [&bytes[..], &empty]
        .into_iter()
        .map(|b| FilterBlock::open(b).unwrap())
        .collect();
    // Ranges around stored keys (answered "may contain") and between them, and one with its bounds swapped.
    let bounds: Vec<([u8; 8], [u8; 8])> = keys
        .iter()
        .take(6)
        .flat_map(|&k| {
            [
                (k.saturating_sub(3), k.saturating_add(3)),
                (k.saturating_add(1), k.saturating_add(200)),
                (k.saturating_add(5), k.saturating_sub(5)),
            ]
        })
        .map(|(lo, hi)| (lo.to_be_bytes(), hi.to_be_bytes()))
        .collect();
    let all: Vec<KeyRange<'_>> = bounds
        .iter()
        .map(|(lo, hi)| (Included(&lo[..]), Included(&hi[..])))
        .collect();
    // What no answer of a range filter is: left by the batch in the answers past its ranges.
    let untouched = Answer::MayContain(crate::Reason::NoFilter);
    for f in &filters {
        for len in 0..=all.len() {
            let ranges = &all[..len];
            for room in [0, len.saturating_sub(1), len, len + 3] {
                let mut answers = vec![untouched; room];
                f.may_contain_range_batch(ranges, &mut answers);
                for (i, answer) in answers.iter().enumerate() {
                    match ranges.get(i) {
                        Some(&(lower, upper)) => {
                            assert_eq!(
                                *answer,
                                f.may_contain_range(lower, upper),
                                "{len} ranges, range {i}"
                            );
                        }
                        None => assert_eq!(*answer, untouched),
                    }
                }
            }
        }
    }
    assert!(
        all.iter()
            .any(|&(lower, upper)| filters[0].may_contain_range(lower, upper).must_read())
    );
    assert!(
        all.iter()
            .any(|&(lower, upper)| !filters[0].may_contain_range(lower, upper).must_read())
    );
}

/// 8-byte big-endian keys (no common prefix beyond what the values share): the projected space is the integers.
fn integer_keys(n: usize, seed: u64) -> Vec<u64> {
    let mut keys: Vec<u64> = (0..n as u64).map(|i| splitmix64(seed, i)).collect();
    keys.sort_unstable();
    keys.dedup();
    keys
}

fn integer_block(policy: RangePolicy, keys: &[u64]) -> Vec<u8> {
    let keys: Vec<Vec<u8>> = keys.iter().map(|k| k.to_be_bytes().to_vec()).collect();
    block(policy, &keys)
}

/// Empty ranges of length 1 to 64·L answer "may contain" at no more than the bound `min(1, n · ℓ / r)` (within
/// sampling error), and well above half of it (the bound is tight: most empty ranges are far from every key).
#[test]
fn empty_range_rate_follows_the_bound() {
    let keys = integer_keys(20_000, 11);
    for (range_log2, fpr) in [(0u32, 0.01), (4, 0.01), (8, 0.02), (16, 0.05)] {
        let policy = RangePolicy::new(1 << range_log2, fpr).unwrap();
        let bytes = integer_block(policy, &keys);
        let f = FilterBlock::open(&bytes[..]).unwrap();
        let KindParams::Range(p) = *f.params() else {
            panic!("a Range block");
        };
        for len_log2 in [
            0u32,
            range_log2 / 2,
            range_log2,
            range_log2 + 4,
            range_log2 + 6,
        ] {
            let len = 1u64 << len_log2;
            let bound = p.range_fpr(f.num_keys(), len);
            let (mut tried, mut positives, mut state) = (0u64, 0u64, 99u64);
            while tried < 200_000 {
                state = splitmix64(state, 1);
                let lo = state;
                let Some(hi) = lo.checked_add(len - 1) else {
                    continue;
                };
                let i = keys.partition_point(|&k| k < lo);
                if keys.get(i).is_some_and(|&k| k <= hi) {
                    continue; // not empty
                }
                tried += 1;
                let answer = f.may_contain_range(
                    Included(&lo.to_be_bytes()[..]),
                    Included(&hi.to_be_bytes()[..]),
                );
                positives += u64::from(answer.must_read());
            }
            let rate = positives as f64 / tried as f64;
            let sigma = (bound / tried as f64).sqrt();
            assert!(
                rate <= bound + 4.0 * sigma,
                "L=2^{range_log2} len={len}: {rate} > bound {bound}"
            );
            assert!(
                rate >= 0.5 * bound - 4.0 * sigma,
                "L=2^{range_log2} len={len}: {rate} far below bound {bound}"
            );
        }
    }
}

/// "The keys after `k`", for `k` a stored key of one length: the excluded bound leaves `k` out, so the range up to
/// just before the next key answers "absent" at the bound's rate, where an included one always holds `k`.
#[test]
fn an_excluded_lower_bound_at_a_key_leaves_it_out() {
    let keys = integer_keys(20_000, 17);
    let policy = RangePolicy::new(1 << 8, 0.01).unwrap();
    let f = FilterBlock::open(integer_block(policy, &keys)).unwrap();
    let KindParams::Range(p) = *f.params() else {
        panic!("a Range block");
    };
    assert_eq!(p.longest_key(), Some(8));
    let (mut tried, mut positives) = (0u64, 0u64);
    for pair in keys.windows(2) {
        let k = pair[0].to_be_bytes();
        // The gaps are about 2^50: ranges of the full length L after each key.
        let hi = (pair[0] + 256).min(pair[1] - 1).to_be_bytes();
        assert!(f.may_contain_range(Included(&k), Included(&hi)).must_read());
        positives += u64::from(f.may_contain_range(Excluded(&k), Included(&hi)).must_read());
        tried += 1;
    }
    let rate = positives as f64 / tried as f64;
    let bound = p.range_fpr(f.num_keys(), 256);
    assert!(
        rate <= bound + 4.0 * (bound / tried as f64).sqrt(),
        "{rate} > {bound}"
    );
}

#[test]
fn bits_per_key_follow_the_policy() {
    let keys = integer_keys(100_000, 5);
    for (len, fpr) in [(1u64, 0.01), (1 << 8, 0.01), (1 << 16, 0.001)] {
        let policy = RangePolicy::new(len, fpr).unwrap();
        let bytes = integer_block(policy, &keys);
        let f = FilterBlock::open(&bytes[..]).unwrap();
        let ideal = (len as f64 / fpr).log2();
        assert!(
            f.bits_per_key() >= ideal + 2.0,
            "{} vs {ideal}",
            f.bits_per_key()
        );
        assert!(
            f.bits_per_key() <= ideal + 3.6,
            "{} vs {ideal}",
            f.bits_per_key()
        );
        // Codes may collide (at L = 1 they are plain hashes), so the stored count can be below the key count. The
        // policy's figure leaves out the prefix and the projection's tables (44 bytes per position).
        let KindParams::Range(p) = *f.params() else {
            panic!("a Range block");
        };
        let tables = (44 * p.positions() + p.prefix_len()) as f64 * 8.0 / f.num_keys() as f64;
        let planned = policy.bits_per_key(keys.len() as u64) + tables;
        assert!(
            (f.bits_per_key() - planned).abs() < 0.05,
            "{} vs {planned}",
            f.bits_per_key()
        );
    }
}

#[test]
fn empty_and_single_key_filters() {
    let empty = block(RangePolicy::new(16, 0.01).unwrap(), &[]);
    assert_eq!(empty.len(), TRAILER_LEN);
    let f = FilterBlock::open(&empty[..]).unwrap();
    assert_eq!(f.kind(), FilterKind::Range);
    assert!(!f.may_contain(b""));
    assert!(!f.may_contain_range(Unbounded, Unbounded).must_read());
    for key in [&b""[..], b"x", b"long key with bytes past the eighth"] {
        let bytes = block(RangePolicy::new(16, 0.01).unwrap(), &[key.to_vec()]);
        let f = FilterBlock::open(&bytes[..]).unwrap();
        assert!(f.may_contain(key));
        assert!(f.may_contain_range(Unbounded, Unbounded).must_read());
        assert!(
            f.may_contain_range(Included(key), Included(key))
                .must_read()
        );
        let mut above = key.to_vec();
        match above.last_mut() {
            Some(last) => *last += 1,
            None => above.push(1),
        }
        assert!(!f.may_contain_range(Included(&above), Unbounded).must_read());
        if let Some((_, shorter)) = key.split_last() {
            assert!(
                !f.may_contain_range(Unbounded, Included(shorter))
                    .must_read()
            );
        }
        // No key is longer than the only one: an excluded bound at the key leaves it out, below and above.
        assert!(!f.may_contain_range(Excluded(key), Unbounded).must_read());
        assert!(!f.may_contain_range(Unbounded, Excluded(key)).must_read());
    }
}

/// The builder projects its windows in place by shortcuts (the verbatim run read as one word, positions of one
/// byte value skipped, tables for the rest): for key sets of every shape the values are the definition's, the sum
/// over positions of each byte's rank in its alphabet times the position's weight, and the distinct ones counted.
#[test]
fn values_projected_in_place_are_the_definitions() {
    let rank = |alphabet: &[u64; 4], b: u8| -> u64 {
        (0..b)
            .filter(|&x| alphabet[usize::from(x / 64)] >> (x % 64) & 1 == 1)
            .count() as u64
    };
    let random = |seed: u64, len: usize, n: u64| -> Vec<Vec<u8>> {
        (0..n)
            .map(|i| {
                (0..len)
                    .map(|j| splitmix64(seed, i * 64 + j as u64) as u8)
                    .collect()
            })
            .collect()
    };
    let shapes: Vec<(&str, Vec<Vec<u8>>)> = vec![
        (
            "integers",
            integer_keys(3000, 1)
                .iter()
                .map(|k| k.to_be_bytes().to_vec())
                .collect(),
        ),
        (
            "clustered integers",
            (0..3000u64)
                .map(|i| (((i % 7) << 56) | (i * 13)).to_be_bytes().to_vec())
                .collect(),
        ),
        ("binary of 12 bytes", random(3, 12, 2000)),
        ("binary of 5 bytes", random(4, 5, 2000)),
        (
            "a constant byte in the middle",
            random(5, 10, 2000)
                .into_iter()
                .map(|mut k| {
                    k[3] = b'/';
                    k
                })
                .collect(),
        ),
        (
            "decimal of every length",
            (0..3000u64)
                .map(|i| format!("k{}", i * 7919 % 100_003).into_bytes())
                .collect(),
        ),
        (
            "text and binary",
            random(6, 9, 500)
                .into_iter()
                .chain((0..500u64).map(|i| format!("x{i}").into_bytes()))
                .collect(),
        ),
    ];
    for (shape, mut keys) in shapes {
        keys.sort();
        let words: Vec<u64> = keys
            .iter()
            .flat_map(|k| {
                let mut w = [0u8; MAX_POSITIONS];
                for (d, s) in w.iter_mut().zip(k) {
                    *d = *s;
                }
                let w = u128::from_be_bytes(w);
                [(w >> 64) as u64, w as u64]
            })
            .collect();
        let longest = keys.iter().map(Vec::len).max().unwrap();
        let (alphabets, weights) = projection::choose(&words, longest, 1 << 10, 0.01);
        let expected: Vec<u64> = keys
            .iter()
            .map(|k| {
                (0..alphabets.len())
                    .map(|j| rank(&alphabets[j], k.get(j).copied().unwrap_or(0)) * weights[j])
                    .sum()
            })
            .collect();
        let mut projected = words.clone();
        let distinct = projection::project_in_place(&mut projected, &alphabets, &weights);
        assert_eq!(&projected[..keys.len()], &expected[..], "{shape}");
        let mut unique = expected.clone();
        unique.dedup();
        assert_eq!(distinct, unique.len(), "{shape}");
    }
}

#[test]
fn out_of_order_keys_are_refused_and_duplicates_counted_once() {
    let mut b = RangeFilterBuilder::new(RangePolicy::new(16, 0.01).unwrap());
    b.add_key(b"b").unwrap();
    b.add_key(b"b").unwrap();
    assert_eq!(b.add_key(b"a"), Err(crate::UsageError::KeysOutOfOrder));
    b.add_key(b"c").unwrap();
    assert_eq!(b.len(), 2);
    let f = FilterBlock::open(b.finish()).unwrap();
    assert_eq!(f.num_keys(), 2);
}

/// The order check compares windows when the prefix holds: for every pair of strings of a small universe (with
/// zero bytes, proper prefixes, strings longer than a window and shared prefixes that shrink), the builder refuses
/// exactly the smaller second key, counts an equal one once, and takes a larger one.
#[test]
fn the_order_check_agrees_with_byte_order_on_every_pair() {
    let mut strings: Vec<Vec<u8>> = universe(b"\x00a", 3)
        .into_iter()
        .flat_map(|s| {
            let long = [&b"p/"[..], &s, &[b'z'; 17]].concat();
            [[&b"p/"[..], &s].concat(), s, long]
        })
        .collect();
    strings.sort();
    strings.dedup();
    // With the empty key first, the prefix is empty; without it, the prefix is the first key, and a second key
    // that does not extend it shortens it.
    for lead in [true, false] {
        for first in &strings {
            for second in &strings {
                let mut b = RangeFilterBuilder::new(RangePolicy::new(16, 0.01).unwrap());
                if lead {
                    b.add_key(b"").unwrap();
                }
                b.add_key(first).unwrap();
                let before = b.len();
                let added = b.add_key(second);
                match second.cmp(first) {
                    core::cmp::Ordering::Less => {
                        assert_eq!(
                            added,
                            Err(crate::UsageError::KeysOutOfOrder),
                            "{first:?} {second:?}"
                        );
                    }
                    core::cmp::Ordering::Equal => assert_eq!((added, b.len()), (Ok(()), before)),
                    core::cmp::Ordering::Greater => {
                        assert_eq!(
                            (added, b.len()),
                            (Ok(()), before + 1),
                            "{first:?} {second:?}"
                        );
                        let f = FilterBlock::open(b.finish()).unwrap();
                        assert!(f.may_contain(first) && f.may_contain(second));
                    }
                }
            }
        }
    }
}

/// The prefix shrinks as keys arrive; values projected under a longer prefix are re-projected at the end and agree
/// with projecting every key under the final prefix.
#[test]
fn reprojection_after_the_prefix_shrinks_matches_projecting_at_the_end() {
    let keys: Vec<Vec<u8>> = [
        &b"tenant-0001/user/aaaa"[..],
        b"tenant-0001/user/aaab",
        b"tenant-0001/usez",
        b"tenant-0002",
        b"tenant-0002/x",
        b"tenant-1",
    ]
    .iter()
    .map(|k| k.to_vec())
    .collect();
    let bytes = block(RangePolicy::new(1, 0.5).unwrap(), &keys);
    let f = FilterBlock::open(&bytes[..]).unwrap();
    let KindParams::Range(p) = *f.params() else {
        panic!("a Range block");
    };
    assert_eq!(p.prefix_len(), b"tenant-".len());
    let payload = &bytes[..bytes.len() - TRAILER_LEN];
    let view = View::new(&p, payload).unwrap();
    assert_eq!(view.projection.prefix, b"tenant-");
    let values: Vec<u64> = keys
        .iter()
        .map(|k| view.projection.point(k).unwrap())
        .collect();
    assert!(values.windows(2).all(|w| w[0] < w[1]), "{values:?}");
    assert_eq!((view.min, view.max), (values[0], values[values.len() - 1]));
    for k in &keys {
        assert!(f.may_contain(k));
    }
}

#[test]
fn decode_rejects_every_inconsistent_field() {
    let keys = integer_keys(1000, 3);
    let bytes = integer_block(RangePolicy::new(256, 0.01).unwrap(), &keys);
    let f = FilterBlock::open(&bytes[..]).unwrap();
    let KindParams::Range(p) = *f.params() else {
        panic!("a Range block");
    };
    let encoded = p.encode();
    let len = p.payload_len();
    let n = f.num_keys();
    // What a query reads beyond the trailer (the verbatim run) comes from the payload when the block is opened.
    let payload = &bytes[..len];
    assert_eq!(
        RangeParams::decode(&encoded, len, n).map(|d| d.reading(payload)),
        Ok(p)
    );
    let with = |at: usize, value: u8| {
        let mut e = encoded;
        e[at] = value;
        RangeParams::decode(&e, len, n)
    };
    assert!(matches!(
        with(0, 57),
        Err(Error::BadParams {
            field: "range_log2",
            ..
        })
    ));
    assert!(matches!(
        with(1, encoded[1] + 1),
        Err(Error::BadParams {
            field: "lower_bits",
            ..
        })
    ));
    assert!(matches!(
        with(6, 1),
        Err(Error::BadParams {
            field: "reserved parameter byte",
            found: 6,
            ..
        })
    ));
    // The longest key: at most the positions, or 255.
    assert_eq!(p.longest_key(), Some(usize::from(encoded[5])));
    assert!(matches!(
        with(5, encoded[4] + 1),
        Err(Error::BadParams {
            field: "longest_key",
            ..
        })
    ));
    assert!(with(5, encoded[4]).is_ok());
    assert_eq!(with(5, 255).map(|p| p.longest_key()), Ok(None));
    // A sample counts values in a u32: 2^32 codes are refused.
    let mut huge = encoded;
    huge[8..].copy_from_slice(&u64::MAX.to_le_bytes());
    assert!(matches!(
        RangeParams::decode(&huge, len, 1 << 32),
        Err(Error::BadParams {
            field: "num_keys",
            ..
        })
    ));
    assert!(matches!(
        with(2, encoded[2] + 1),
        Err(Error::LengthMismatch { .. })
    ));
    assert!(matches!(
        RangeParams::decode(&encoded, len + 8, n),
        Err(Error::LengthMismatch { .. })
    ));
    assert!(matches!(
        RangeParams::decode(&encoded, len, n + 64),
        Err(Error::LengthMismatch { .. } | Error::BadParams { .. })
    ));
    assert!(matches!(
        RangeParams::decode(&encoded, len, 0),
        Err(Error::BadParams {
            field: "universe",
            ..
        })
    ));
    let mut small = encoded;
    small[8..].copy_from_slice(&100u64.to_le_bytes());
    assert!(matches!(
        RangeParams::decode(&small, len, n),
        Err(Error::BadParams {
            field: "num_keys",
            ..
        })
    ));
    small[8..].copy_from_slice(&100u64.to_le_bytes()); // holds 10 codes, but not a run of 256
    assert!(matches!(
        RangeParams::decode(&small, len, 10),
        Err(Error::BadParams {
            field: "universe",
            ..
        })
    ));
}

/// The golden Range blocks (`tests/golden/v1-range-*`) rebuilt byte for byte from the parameters in their own
/// trailer (range length and universe), not through the policy: this pins the format, not the policy's sizing.
#[test]
fn golden_blocks_rebuild_from_their_own_parameters() {
    let mut rebuilt = 0;
    for (name, bytes) in crate::kind::golden_blocks(|name| name.starts_with("v1-range-")) {
        let f = FilterBlock::open(&bytes[..]).unwrap();
        let KindParams::Range(p) = *f.params() else {
            panic!("{name}: a Range block");
        };
        let n: usize = name.split('-').nth(2).unwrap()[1..].parse().unwrap();
        let mut keys: Vec<Vec<u8>> = (0..n).map(|i| format!("golden-{i}").into_bytes()).collect();
        keys.sort();
        // The policy's rate is not stored; any rate gives the stored range length, and the universe is the block's.
        let mut builder =
            RangeFilterBuilder::new(RangePolicy::new(p.max_range_len(), 0.5).unwrap())
                .without_key_limit();
        for k in &keys {
            builder.add_key(k).unwrap();
        }
        let mut again = Vec::new();
        let universe = p.universe();
        builder.finish_in_universe(&mut again, |_| universe);
        assert!(
            again == bytes,
            "{name}: different bytes from the same parameters"
        );
        rebuilt += 1;
    }
    assert_eq!(rebuilt, 6);
}

/// A Range block holds no prefix hashes: one dressed up with a prefix section (version 2, flag bit 0) is refused.
#[test]
fn a_range_block_with_a_prefix_section_is_refused() {
    let bytes = integer_block(RangePolicy::new(16, 0.01).unwrap(), &integer_keys(100, 1));
    let f = FilterBlock::open(&bytes[..]).unwrap();
    let mut dressed = bytes[..bytes.len() - TRAILER_LEN].to_vec();
    let name = crate::format::PrefixName::new("sstfilter.fixed:4").unwrap();
    let prefixes = crate::format::Prefixes {
        name: &name,
        whole_keys: true,
    };
    crate::format::Trailer::append(
        &mut dressed,
        0,
        FilterKind::Range,
        f.params().encode(),
        f.num_keys(),
        Some(prefixes),
    );
    assert!(matches!(
        FilterBlock::open(&dressed[..]),
        Err(Error::BadParams {
            kind: Some(FilterKind::Range),
            field: "flags",
            ..
        })
    ));
}

/// `code` is FORMAT.md's `(q(v >> s) + v mod 2^s) mod r` (computed here with a 128-bit remainder), and keeps the
/// distances of the values inside a run, at universes from `2^s` to `2^64 − 1`.
#[test]
fn codes_follow_the_formula_and_keep_distances_inside_a_run() {
    for range_log2 in [0u32, 4, 16, 56] {
        for universe in [1u64 << range_log2, (1 << range_log2) + 1, 1 << 40, u64::MAX] {
            if universe < 1 << range_log2 {
                continue;
            }
            for v in [0u64, 17, 1 << 20, u64::MAX - 5, u64::MAX] {
                let base = projection::run_base(v >> range_log2, universe);
                let offset = v & projection::low_mask(range_log2);
                let expected =
                    ((u128::from(base) + u128::from(offset)) % u128::from(universe)) as u64;
                let c = code(v, range_log2, universe);
                assert_eq!(c, expected, "v={v} s={range_log2} r={universe}");
                let run_start = v & !projection::low_mask(range_log2);
                assert_eq!(
                    c,
                    projection::wrap(code(run_start, range_log2, universe), offset, universe)
                );
            }
        }
    }
}

#[test]
fn empty_ranges_are_the_ones_no_string_can_be_in() {
    let (a, b): (&[u8], &[u8]) = (b"a", b"b");
    assert!(is_empty(Included(b), Included(a)));
    assert!(!is_empty(Included(a), Included(a)));
    assert!(is_empty(Included(a), Excluded(a)));
    assert!(is_empty(Excluded(a), Included(a)));
    assert!(is_empty(Excluded(b), Excluded(a)));
    assert!(!is_empty(Excluded(a), Excluded(b)));
    assert!(!is_empty(Unbounded, Excluded(a)));
    assert!(!is_empty(Included(b), Unbounded));
    assert_eq!(single_key(Included(a), Included(a)), Some(a));
    assert_eq!(single_key(Included(a), Excluded(a)), None);
}

/// Binary keys hold every byte value at their last positions: a block reads those positions as one big-endian word
/// (its verbatim run, found when it is opened). Every bound (every length, included, excluded or unbounded, bytes
/// inside and outside the alphabets) projects exactly as reading the positions one by one does, with and without
/// the padding position after the run, and with the run cut short by the 64-bit product.
#[test]
fn verbatim_runs_project_as_reading_one_position_at_a_time() {
    for tail in [1usize, 2, 3, 7, 8] {
        let mut keys: Vec<Vec<u8>> = Vec::new();
        for (i, first) in [3u8, 7, 200].into_iter().enumerate() {
            keys.extend(binary_tails(&[first], tail, i as u64));
        }
        let heads: Vec<Vec<u8>> = [0u8, 3, 5, 7, 200, 255].iter().map(|&b| vec![b]).collect();
        assert_verbatim_run_reads_exactly(keys, &heads, tail, None);
    }
}

/// Keys that are all verbatim run after their prefix (hashes, big-endian integers, with or without a prefix): a
/// bound as long as the keys is read as one word, the rest in the general way; both project as reading one
/// position at a time does.
#[test]
fn keys_all_verbatim_project_as_reading_one_position_at_a_time() {
    for prefix in [&b""[..], b"t/"] {
        for tail in [1usize, 3, 8] {
            let keys = binary_tails(prefix, tail, 5);
            let heads: Vec<Vec<u8>> = [&b""[..], b"t/", b"t.", b"t0", b"s", b"u", b"t"]
                .iter()
                .map(|h| h.to_vec())
                .collect();
            assert_verbatim_run_reads_exactly(keys, &heads, tail, Some(true));
        }
    }
}

/// `keys` sorted and deduplicated, and a block over them for ranges of 2^10 at 1 %, with its parameters as opened.
fn sorted_block(keys: &mut Vec<Vec<u8>>) -> (Vec<u8>, RangeParams) {
    keys.sort();
    keys.dedup();
    let bytes = block(RangePolicy::new(1 << 10, 0.01).unwrap(), keys);
    let KindParams::Range(p) = *FilterBlock::open(&bytes[..]).unwrap().params() else {
        panic!("a Range block");
    };
    (bytes, p)
}

/// `head` followed by every byte value at every one of `tail` positions, and by random tails.
fn binary_tails(head: &[u8], tail: usize, seed: u64) -> Vec<Vec<u8>> {
    let mut keys: Vec<Vec<u8>> = (0..=255u8)
        .map(|v| [head, &vec![v; tail]].concat())
        .collect();
    keys.extend((0..300u64).map(|j| {
        let r = splitmix64(seed, j).to_be_bytes();
        [head, &r[..tail.min(8)]].concat()
    }));
    keys
}

/// A block over `keys` has a verbatim run (from the first position after the prefix, or not, as `whole` says if it
/// says), and projects every point and bound as reading the positions one by one does: for keys and for probes of
/// `heads` followed by random bytes of every length up to `tail + 2`.
fn assert_verbatim_run_reads_exactly(
    mut keys: Vec<Vec<u8>>,
    heads: &[Vec<u8>],
    tail: usize,
    whole: Option<bool>,
) {
    let (bytes, p) = sorted_block(&mut keys);
    let f = FilterBlock::open(&bytes[..]).unwrap();
    assert_ne!(p.verbatim, Verbatim::NONE, "tail {tail}");
    if let Some(whole) = whole {
        assert_eq!(
            p.verbatim.start == 0,
            whole,
            "tail {tail}: {:?}",
            p.verbatim
        );
    }
    let view = View::new(&p, &bytes[..p.payload_len()]).unwrap();
    let mut one_by_one = view.projection;
    one_by_one.verbatim = Verbatim::NONE;
    let mut probes: Vec<Vec<u8>> = keys.iter().step_by(7).cloned().collect();
    for j in 0..3000u64 {
        let r = splitmix64(99, j).to_be_bytes();
        let head = &heads[(j % heads.len() as u64) as usize];
        let len = (j as usize / heads.len()) % (tail + 3);
        probes.push(
            [
                &head[..],
                &r[..len.min(8)],
                &vec![r[0]; len.saturating_sub(8)],
            ]
            .concat(),
        );
    }
    for (j, a) in probes.iter().enumerate() {
        let b = &probes[(j * 31 + 5) % probes.len()];
        assert_eq!(view.projection.point(a), one_by_one.point(a), "{a:?}");
        for (lower, upper) in [
            (Included(&a[..]), Included(&b[..])),
            (Excluded(&a[..]), Excluded(&b[..])),
            (Included(&a[..]), Excluded(&b[..])),
            (Excluded(&a[..]), Included(&b[..])),
            (Included(&a[..]), Unbounded),
            (Unbounded, Excluded(&a[..])),
        ] {
            assert_eq!(
                view.projection.bounds(lower, upper),
                one_by_one.bounds(lower, upper),
                "tail {tail}: {lower:?} {upper:?}"
            );
        }
    }
    for k in &keys {
        assert!(f.may_contain(k));
    }
}

/// A range's bounds are read in the build with `popcnt` where the CPU has it
/// ([`with_popcnt`](crate::cpu::with_popcnt)), and that build and the one the target compiles agree: on every
/// other pair of bounds over a small universe of strings, and on up to 200 upper bounds after each lower bound of
/// decimal and text keys, whose positions have alphabets of a few values (a count of bits each).
#[test]
fn both_builds_of_the_projection_read_bounds_alike() {
    let strings = universe(b"\x00ab", 3);
    let decimal: Vec<Vec<u8>> = (0..3000u64)
        .map(|i| format!("user:{:010}", splitmix64(3, i) % 10_000_000_000).into_bytes())
        .collect();
    let text: Vec<Vec<u8>> = (0..3000u64)
        .map(|i| {
            let r = splitmix64(4, i).to_le_bytes();
            r.iter()
                .take(3 + (r[7] % 6) as usize)
                .map(|b| b"etaoinshrdlu"[usize::from(b % 12)])
                .collect()
        })
        .collect();
    let mut pairs = 0;
    for (mut keys, probes) in [
        (
            strings.iter().step_by(3).cloned().collect(),
            strings.clone(),
        ),
        (decimal.clone(), decimal),
        (text.clone(), text),
    ] {
        let (bytes, p) = sorted_block(&mut keys);
        let view = View::new(&p, &bytes[..p.payload_len()]).unwrap();
        // Each probe, and each with a byte changed, cut short or extended.
        let mut probes: Vec<Vec<u8>> = probes
            .iter()
            .enumerate()
            .flat_map(|(j, k)| {
                let mut changed = k.clone();
                if let Some(b) = changed.get_mut(j % k.len().max(1)) {
                    *b = b.wrapping_add(1 + (j % 3) as u8);
                }
                [
                    k.clone(),
                    changed,
                    k[..k.len() / 2].to_vec(),
                    [&k[..], b"0"].concat(),
                ]
            })
            .collect();
        probes.sort();
        let bounds: Vec<Bound<&[u8]>> = probes
            .iter()
            .flat_map(|p| [Included(&p[..]), Excluded(&p[..])])
            .chain([Unbounded])
            .collect();
        for (j, &lower) in bounds.iter().enumerate() {
            for &upper in bounds.iter().skip(j).step_by(1 + bounds.len() / 200) {
                assert_eq!(
                    view.projection.bounds(lower, upper),
                    view.projection.bounds_read(lower, upper),
                    "{lower:?} {upper:?}"
                );
                pairs += 1;
            }
        }
    }
    assert!(pairs > 1_000_000, "{pairs}");
}

/// The windows [`projection::choose`] takes for `keys` (sorted): each key's first 16 bytes, zero-padded, as two
/// big-endian words.
fn windows_of(keys: &[Vec<u8>]) -> Vec<u64> {
    keys.iter()
        .flat_map(|k| {
            let mut w = [0u8; MAX_POSITIONS];
            for (d, s) in w.iter_mut().zip(k) {
                *d = *s;
            }
            let w = u128::from_be_bytes(w);
            [(w >> 64) as u64, w as u64]
        })
        .collect()
}

/// Alphabets just before the run of full ones that ends the projection are widened to all 256 values while the rate
/// they add stays within a 32nd of the filter's (FORMAT.md 4.5): the leading bytes of big-endian integers in a
/// thousand clusters (each misses a few values) join the run, which a query reads as one word; a tiny rate stops
/// the widening early; a last position missing more values than the budget allows, and decimal digits, stay exact;
/// every key is found in every block.
#[test]
fn nearly_full_alphabets_join_the_verbatim_run_within_the_rate() {
    let full = |alphabets: &[[u64; 4]]| -> Vec<bool> {
        alphabets.iter().map(|a| *a == [u64::MAX; 4]).collect()
    };
    let starts: Vec<u64> = (0..1000).map(|c| splitmix64(17, c)).collect();
    let mut clustered: Vec<Vec<u8>> = (0..100_000u64)
        .map(|i| {
            let start = starts[(i % 1000) as usize];
            start.wrapping_add((i / 1000) * 997).to_be_bytes().to_vec()
        })
        .collect();
    clustered.sort();
    clustered.dedup();
    let words = windows_of(&clustered);
    let sizes: Vec<usize> = (0..8)
        .map(|j| {
            let values: std::collections::BTreeSet<u8> = clustered.iter().map(|k| k[j]).collect();
            values.len()
        })
        .collect();
    assert!(sizes[..5].iter().all(|&s| s < 256), "{sizes:?}");
    assert!(sizes[5..].iter().all(|&s| s == 256), "{sizes:?}");
    let (alphabets, weights) = projection::choose(&words, 8, 1 << 10, 0.01);
    // Eight full positions, then the padding alphabet `{0}` that tells a key from the strings extending it.
    assert_eq!(full(&alphabets)[..8], [true; 8]);
    assert_eq!(alphabets[8..], [[1, 0, 0, 0]]);
    assert_eq!(weights[0], 1 << 56);
    // At a rate of 2^-40 the budget, a 32nd of it, pays for about one position missing 5 values: widening stops.
    let (tiny, _) = projection::choose(&words, 8, 1 << 10, RangePolicy::MIN_FPR);
    let tiny = full(&tiny);
    assert!(tiny[4] && !tiny[0], "{tiny:?} {sizes:?}");

    let bytes = block(RangePolicy::new(1 << 10, 0.01).unwrap(), &clustered);
    let f = FilterBlock::open(&bytes[..]).unwrap();
    let KindParams::Range(p) = *f.params() else {
        panic!("a Range block");
    };
    let run = Verbatim {
        start: 0,
        end: 8,
        padded: true,
    };
    assert_eq!(p.verbatim, run);
    assert!(clustered.iter().all(|k| f.may_contain(k)));

    // The last position (weight 1) costs a share `missing / 256` of the rate: 6 missing values fit in a 32nd,
    // 10 do not.
    for (missing, widened) in [(6u8, true), (10, false)] {
        let keys: Vec<Vec<u8>> = (0..20u64)
            .flat_map(|high| {
                (missing..=255).map(move |b| ((high << 8) | u64::from(b)).to_be_bytes().to_vec())
            })
            .collect();
        let (alphabets, _) = projection::choose(&windows_of(&keys), 8, 1 << 10, 0.01);
        assert_eq!(full(&alphabets)[7], widened, "{missing} missing");
        let bytes = block(RangePolicy::new(1 << 10, 0.01).unwrap(), &keys);
        let f = FilterBlock::open(&bytes[..]).unwrap();
        assert!(keys.iter().all(|k| f.may_contain(k)));
    }

    let decimal: Vec<Vec<u8>> = (0..5000u64)
        .map(|i| format!("{i:08}").into_bytes())
        .collect();
    let (alphabets, _) = projection::choose(&windows_of(&decimal), 8, 1 << 10, 0.01);
    assert!(full(&alphabets).iter().all(|&f| !f));
}
