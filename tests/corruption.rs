//! Every truncation and every single-bit flip of a few blocks: `open` rejects it (its structure or its CRC32), or
//! the block still answers "may contain" for all of its keys. Nothing panics, whatever the bytes, even opened
//! without the checksum (`open_unverified`).

mod spec;

use std::ops::Bound::{Excluded, Included};

use sstfilter::{
    BlockedBloomPolicy, FilterBlock, FilterBlockBuilder, FilterKind, FilterPolicy, KindParams,
    RangeFilterBuilder, RangePolicy, RibbonPolicy, StandardBloomParams, StandardBloomPolicy,
    key_hash,
};

#[derive(Clone)]
struct Case {
    name: &'static str,
    keys: Vec<Vec<u8>>,
    block: Vec<u8>,
}

fn case(name: &'static str, n: usize, bits_per_key: f64) -> Case {
    case_with(name, n, BlockedBloomPolicy::new(bits_per_key).unwrap())
}

fn case_keys(n: usize) -> Vec<Vec<u8>> {
    (0..n).map(|i| format!("key-{i:06}").into_bytes()).collect()
}

fn case_with(name: &'static str, n: usize, policy: impl FilterPolicy) -> Case {
    case_built(name, n, FilterBlockBuilder::new(policy))
}

/// A version-2 block with a prefix section (and whole keys): every byte of the section and the flags is covered.
fn prefix_case(name: &'static str, n: usize, policy: impl FilterPolicy) -> Case {
    let extractor = std::sync::Arc::new(sstfilter::FixedPrefix::new(6));
    case_built(
        name,
        n,
        FilterBlockBuilder::new(policy)
            .with_prefixes(extractor, true)
            .unwrap(),
    )
}

fn case_built<P: FilterPolicy>(
    name: &'static str,
    n: usize,
    mut builder: FilterBlockBuilder<P>,
) -> Case {
    let keys = case_keys(n);
    for k in &keys {
        builder.add_key(k);
    }
    Case {
        name,
        keys,
        block: builder.finish(),
    }
}

/// A StandardBloom block framed from bits kept in memory, as the `sstfilter-memory` crate's `BloomFilter` writes it
/// (`StandardBloomParams::write_block`): an odd bit count, and a key count other than the keys added.
fn framed_case(name: &'static str, n: usize) -> Case {
    let keys = case_keys(n);
    let params = StandardBloomParams::new(1001, 5).unwrap();
    let mut words = vec![0u64; params.num_words()];
    for key in &keys {
        for pos in params.probes(key_hash(key)) {
            words[(pos / 64) as usize] |= 1 << (pos % 64);
        }
    }
    let mut block = Vec::new();
    params
        .write_block(&words, n as u64 + 3, &mut block)
        .unwrap();
    Case { name, keys, block }
}

#[derive(Default, Debug)]
struct Tally {
    rejected_by_open: usize,
    rejected_by_checksum: usize,
    harmless: usize,
}

/// Opens a damaged block and classifies the outcome; panics (fails the test) only on a false negative in a
/// block that `open` accepted.
fn check(damaged: &[u8], keys: &[Vec<u8>], tally: &mut Tally, what: &str) {
    let opened = FilterBlock::open(damaged);
    let Ok(filter) = FilterBlock::open_unverified(damaged) else {
        assert!(opened.is_err(), "{what}");
        tally.rejected_by_open += 1;
        return;
    };
    // `open` is `open_unverified` and `verify`.
    assert_eq!(opened.is_ok(), filter.verify().is_ok(), "{what}");
    // Query even a block that fails its checksum: a caller that skips the CRC must not crash either.
    let probes: Vec<bool> = keys.iter().map(|k| filter.may_contain(k)).collect();
    let mut batch = vec![false; keys.len()];
    filter.may_contain_batch(keys, &mut batch);
    assert_eq!(probes, batch, "{what}: batch and single answers differ");
    let _ = filter.may_contain_hash(key_hash(b"not a key"));
    // Range questions of every block (a Range block's own; a point block's single-key ranges).
    let ranges: Vec<bool> = keys
        .iter()
        .map(|k| {
            filter
                .may_contain_range(Included(k), Included(k))
                .must_read()
        })
        .collect();
    for pair in keys.windows(2) {
        let _ = filter.may_contain_range(Excluded(&pair[0]), Excluded(&pair[1]));
    }
    if filter.verify().is_err() {
        tally.rejected_by_checksum += 1;
        return;
    }
    assert!(
        probes.iter().all(|&p| p),
        "{what}: a block that passed open lost a key"
    );
    assert!(
        ranges.iter().all(|&p| p),
        "{what}: a block that passed open lost a key's range"
    );
    tally.harmless += 1;
}

#[test]
fn every_truncation_and_bit_flip_is_caught_or_harmless() {
    let cases = [
        case("empty", 0, 10.0),
        case("one key", 1, 10.0),
        case("100 keys at 10 bits/key", 100, 10.0),
        case("1000 keys at 3.3 bits/key", 1000, 3.3),
        case("300 keys at 32 bits/key", 300, 32.0),
        case_with(
            "standard bloom, empty",
            0,
            StandardBloomPolicy::new(10.0).unwrap(),
        ),
        case_with(
            "standard bloom, 100 keys at 10 bits/key",
            100,
            StandardBloomPolicy::new(10.0).unwrap(),
        ),
        case_with(
            "standard bloom, 500 keys at 3.3 bits/key",
            500,
            StandardBloomPolicy::new(3.3).unwrap(),
        ),
        framed_case("framed in-memory bits, 120 keys in 1001 bits", 120),
        prefix_case(
            "prefixes, BlockedBloom, 100 keys",
            100,
            BlockedBloomPolicy::new(10.0).unwrap(),
        ),
        prefix_case(
            "prefixes, StandardBloom, 100 keys",
            100,
            StandardBloomPolicy::new(10.0).unwrap(),
        ),
    ];
    cases.iter().for_each(truncate_and_flip_every_bit);
}

/// Every truncation and every single-bit flip of one block: each is rejected or harmless, never a panic.
fn truncate_and_flip_every_bit(Case { name, keys, block }: &Case) {
    let mut truncations = Tally::default();
    for len in 0..block.len() {
        check(
            &block[..len],
            keys,
            &mut truncations,
            &format!("{name}, truncated to {len}"),
        );
    }
    // A truncated block can never pass both checks: its trailer is gone or shifted.
    assert_eq!(truncations.harmless, 0, "{name}: {truncations:?}");

    let mut flips = Tally::default();
    let mut damaged = block.clone();
    for bit in 0..block.len() * 8 {
        damaged[bit / 8] ^= 1 << (bit % 8);
        check(
            &damaged,
            keys,
            &mut flips,
            &format!("{name}, bit {bit} flipped"),
        );
        damaged[bit / 8] ^= 1 << (bit % 8);
    }
    // CRC32 detects every single-bit error, so no flipped block passes both checks.
    assert_eq!(flips.harmless, 0, "{name}: {flips:?}");
    println!(
        "{name} ({} bytes): truncations {truncations:?}; bit flips {flips:?}",
        block.len()
    );
}

#[test]
fn arbitrary_trailers_never_panic() {
    for case in [
        case("100 keys", 100, 10.0),
        case_with(
            "standard bloom, 100 keys",
            100,
            StandardBloomPolicy::new(10.0).unwrap(),
        ),
    ] {
        every_value_of_every_trailer_byte(&case);
    }
}

/// Every value of each single trailer byte, on top of a valid block.
fn every_value_of_every_trailer_byte(Case { name, keys, block }: &Case) {
    let trailer_start = block.len() - sstfilter::TRAILER_LEN;
    let mut tally = Tally::default();
    for at in trailer_start..block.len() {
        for value in 0..=255u8 {
            let mut damaged = block.clone();
            damaged[at] = value;
            check(
                &damaged,
                keys,
                &mut tally,
                &format!("{name}: byte {at} = {value}"),
            );
        }
    }
    // Only the original value of each byte yields a block that passes both checks.
    assert_eq!(tally.harmless, sstfilter::TRAILER_LEN, "{name}: {tally:?}");
}

// --- Ribbon (kind 2) ---

/// A Ribbon block of `n` keys; the case checks every `stride`-th of them after each damage (a block that
/// passes both checks is the original, so a sample of keys is as good a witness as all of them).
fn ribbon_case(name: &'static str, n: usize, stride: usize, policy: RibbonPolicy) -> Case {
    let Case { keys, block, .. } = case_with(name, n, policy);
    let kind = FilterBlock::open(&block[..]).map(|f| f.kind());
    assert_eq!(
        kind,
        Ok(FilterKind::Ribbon),
        "{name} must be a Ribbon block to test Ribbon"
    );
    let keys = keys.into_iter().step_by(stride).collect();
    Case { name, keys, block }
}

#[test]
fn ribbon_blocks_every_truncation_and_bit_flip_is_caught_or_harmless() {
    [
        // One shard, fractional columns (6 and 7).
        ribbon_case(
            "Ribbon, 300 keys at Bloom-equivalent 10",
            300,
            1,
            RibbonPolicy::new(10.0).unwrap(),
        ),
        // Two shards (and so a directory with an interior boundary), one column count (8).
        ribbon_case(
            "Ribbon, 9000 keys at 2^-8",
            9000,
            30,
            RibbonPolicy::with_fpr(2f64.powi(-8)).unwrap(),
        ),
        // Wide results: 16 and 17 columns.
        ribbon_case(
            "Ribbon, 500 keys at 1e-5",
            500,
            1,
            RibbonPolicy::with_fpr(1e-5).unwrap(),
        ),
    ]
    .iter()
    .for_each(truncate_and_flip_every_bit);
}

#[test]
fn ribbon_arbitrary_trailers_never_panic() {
    every_value_of_every_trailer_byte(&ribbon_case(
        "Ribbon, 2000 keys",
        2000,
        1,
        RibbonPolicy::new(10.0).unwrap(),
    ));
}

#[test]
fn ribbon_arbitrary_directories_never_panic() {
    // Directory bytes are payload: the structural checks do not read them, so every value of each must leave
    // queries in bounds. (A wrong value inside the valid ranges can lose keys; only the CRC32 catches that, as it
    // does any payload corruption.)
    let Case { name, keys, block } = ribbon_case(
        "Ribbon, 9000 keys",
        9000,
        1,
        RibbonPolicy::new(10.0).unwrap(),
    );
    let spec::Kind::Ribbon { shards, .. } = spec::open(&block).unwrap().kind else {
        unreachable!("9000 keys at 10 bits/key are written as Ribbon")
    };
    let directory = 5 * shards as usize + 4;
    let directory_start = block.len() - sstfilter::TRAILER_LEN - directory;
    let mut tally = Tally::default();
    for at in directory_start..directory_start + directory {
        for value in [0u8, 1, 0x7F, 0x80, 0xFF] {
            let mut damaged = block.clone();
            damaged[at] ^= value;
            check(
                &damaged,
                &keys,
                &mut tally,
                &format!("{name}: directory byte {at} ^ {value}"),
            );
        }
    }
    assert_eq!(tally.rejected_by_open, 0, "{tally:?}");
    assert_eq!(
        tally.harmless, directory,
        "only the unchanged bytes pass the checksum: {tally:?}"
    );
}

/// Every single-bit flip with the CRC recomputed, so that only the structure checks and the probes stand between
/// the damage and the answers (as an attacker, or a bug that rewrites a block and its checksum, would have it).
/// Such a block is a different filter, which may legitimately lack some keys; what must hold is that the crate's
/// reader reads it exactly as FORMAT.md says (the same blocks refused, the same answer for every key as the
/// reader written from the spec), and that setting a bit of a Bloom payload never hides a key.
#[test]
fn flips_with_a_recomputed_checksum_read_as_the_spec_says() {
    // (case, flip every `stride`-th bit): the spec reader's Ribbon query is slow, so Ribbon flips are sampled.
    let cases = [
        (case("BlockedBloom, 100 keys at 10 bits/key", 100, 10.0), 1),
        (
            case_with(
                "StandardBloom, 100 keys",
                100,
                StandardBloomPolicy::new(10.0).unwrap(),
            ),
            1,
        ),
        (
            ribbon_case(
                "Ribbon, 300 keys at 2^-25",
                300,
                1,
                RibbonPolicy::with_fpr(2f64.powi(-25)).unwrap(),
            ),
            7,
        ),
    ];
    let absent: Vec<Vec<u8>> = (0..300)
        .map(|i| format!("absent-{i}").into_bytes())
        .collect();
    for (Case { name, keys, block }, stride) in &cases {
        let (mut accepted, mut set_bits_kept_every_key) = (0, 0);
        let payload_len = block.len() - sstfilter::TRAILER_LEN;
        for bit in (0..(block.len() - 4) * 8).step_by(*stride) {
            let mut damaged = block.clone();
            damaged[bit / 8] ^= 1 << (bit % 8);
            spec::reseal(&mut damaged);
            let ours = FilterBlock::open(&damaged[..]);
            let reference = spec::open(&damaged);
            assert_eq!(
                ours.is_ok(),
                reference.is_ok(),
                "{name}, bit {bit}: {ours:?} vs {reference:?}"
            );
            let (Ok(ours), Ok(reference)) = (ours, reference) else {
                continue;
            };
            accepted += 1;
            for key in keys.iter().chain(&absent) {
                assert_eq!(
                    ours.may_contain(key),
                    reference.may_contain_key_hash(key_hash(key).get()),
                    "{name}, bit {bit}: the readers differ on {key:?}"
                );
            }
            let was_set = block[bit / 8] >> (bit % 8) & 1 == 1;
            if bit / 8 < payload_len && !was_set && ours.kind() != FilterKind::Ribbon {
                assert!(
                    keys.iter().all(|k| ours.may_contain(k)),
                    "{name}: setting bit {bit} hid a key"
                );
                set_bits_kept_every_key += 1;
            }
        }
        // Every payload flip passes `open` (it reads only the trailer) and is a valid filter.
        assert!(
            accepted >= payload_len * 8 / stride,
            "{name}: {accepted} accepted"
        );
        if !name.starts_with("Ribbon") {
            assert!(
                set_bits_kept_every_key > payload_len,
                "{name}: {set_bits_kept_every_key}"
            );
        }
    }
}

// --- Range (kind 3) ---

/// A Range block of `n` keys (in sorted order, as its builder requires).
fn range_case(name: &'static str, n: usize, policy: RangePolicy) -> Case {
    range_case_of(name, case_keys(n), policy)
}

fn range_case_of(name: &'static str, keys: Vec<Vec<u8>>, policy: RangePolicy) -> Case {
    let mut builder = RangeFilterBuilder::new(policy);
    for k in &keys {
        builder.add_key(k).unwrap();
    }
    Case {
        name,
        keys,
        block: builder.finish(),
    }
}

fn range_cases() -> [Case; 4] {
    [
        range_case("Range, empty", 0, RangePolicy::new(16, 0.01).unwrap()),
        range_case("Range, one key", 1, RangePolicy::new(16, 0.01).unwrap()),
        range_case(
            "Range, 200 keys, L = 2^8",
            200,
            RangePolicy::new(256, 0.01).unwrap(),
        ),
        range_case(
            "Range, 100 keys, L = 1 at 1/2",
            100,
            RangePolicy::new(1, 0.5).unwrap(),
        ),
    ]
}

#[test]
fn range_blocks_every_truncation_and_bit_flip_is_caught_or_harmless() {
    range_cases().iter().for_each(truncate_and_flip_every_bit);
}

#[test]
fn range_arbitrary_trailers_never_panic() {
    range_cases()
        .iter()
        .for_each(every_value_of_every_trailer_byte);
}

/// Every single-bit flip of Range blocks with the CRC recomputed: both readers refuse the same blocks; where the
/// payload is still one FORMAT.md 4.5 lets a writer produce (flipped codes that stay increasing, the bounds, the
/// prefix), they give the same answer to every point and range question. A flip that breaks those rules (a sample,
/// a padding bit, an extra one-bit) makes a block no writer produces: readers may then differ, and must not panic.
#[test]
fn range_flips_with_a_recomputed_checksum_read_as_the_spec_says() {
    let absent: Vec<Vec<u8>> = (0..200)
        .map(|i| format!("key-{:06}", 2 * i + 1).into_bytes())
        .collect();
    // Consecutive keys have adjacent codes (Grafite keeps a run's distances), where most low-bit flips reorder
    // codes: a set of spread keys keeps more flipped blocks comparable.
    let mut spread: Vec<Vec<u8>> = (0..150u64)
        .map(|i| format!("key-{:06}", i.wrapping_mul(0x9E37_79B9) % 1_000_000).into_bytes())
        .collect();
    spread.sort();
    spread.dedup();
    let mut cases = range_cases().to_vec();
    cases.push(range_case_of(
        "Range, 150 spread keys",
        spread,
        RangePolicy::new(256, 0.01).unwrap(),
    ));
    for Case { name, keys, block } in cases {
        let (mut compared, mut accepted) = (0, 0);
        for bit in 0..(block.len() - 4) * 8 {
            let mut damaged = block.clone();
            damaged[bit / 8] ^= 1 << (bit % 8);
            spec::reseal(&mut damaged);
            let ours = FilterBlock::open(&damaged[..]);
            let reference = spec::open(&damaged);
            assert_eq!(
                ours.is_ok(),
                reference.is_ok(),
                "{name}, bit {bit}: {ours:?} vs {reference:?}"
            );
            let (Ok(ours), Ok(reference)) = (ours, reference) else {
                continue;
            };
            accepted += 1;
            let Some(range) = reference.range() else {
                continue;
            };
            let questions = keys.iter().chain(&absent);
            if !range.writer_invariants {
                for key in questions {
                    let _ = ours.may_contain(key);
                    let _ = ours.may_contain_range(Included(key), Excluded(&absent[0]));
                }
                continue;
            }
            compared += 1;
            for key in questions {
                assert_eq!(
                    ours.may_contain(key),
                    range.may_contain(key),
                    "{name}, bit {bit}: {key:?}"
                );
            }
            for pair in absent.windows(2) {
                let answer = ours.may_contain_range(Included(&pair[0]), Excluded(&pair[1]));
                let expected = range.may_contain_range(
                    spec::SpecBound::Included(&pair[0]),
                    spec::SpecBound::Excluded(&pair[1]),
                );
                assert_eq!(
                    answer.must_read(),
                    expected != spec::SpecRangeAnswer::Absent,
                    "{name}, bit {bit}: {pair:?}"
                );
            }
        }
        let payload_bits = (block.len() - sstfilter::TRAILER_LEN) * 8;
        assert!(accepted >= payload_bits, "{name}: {accepted} accepted");
        // Flips of the projection's tables (alphabets, ranks, weights: 44 bytes per position) make a block no
        // writer produces; the rest (codes, bounds, prefix) mostly stays comparable.
        let KindParams::Range(params) = *FilterBlock::open(&block[..]).unwrap().params() else {
            panic!("{name}: a Range block");
        };
        let other_bits = payload_bits - 44 * 8 * params.positions();
        // Consecutive keys have adjacent codes, which most flips of their low bits reorder: fewer stay comparable.
        let expected = if name.contains("spread") {
            other_bits / 4
        } else {
            (other_bits / 12).min(100)
        };
        assert!(
            compared >= expected,
            "{name}: {compared} compared of {payload_bits}"
        );
    }
}
