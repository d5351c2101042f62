//! Every truncation and every single-bit flip of a few blocks: `open`/`verify` reject it, or the block still
//! answers "may contain" for all of its keys. Nothing panics, whatever the bytes.

use sstfilter::{BloomFilter, FilterPolicy, StandardBloomPolicy};
use sstfilter::{FastBloomPolicy, FilterBlock, FilterBlockBuilder, key_hash};

struct Case {
    name: &'static str,
    keys: Vec<Vec<u8>>,
    block: Vec<u8>,
}

fn case(name: &'static str, n: usize, bits_per_key: f64) -> Case {
    case_with(name, n, FastBloomPolicy::new(bits_per_key))
}

fn case_keys(n: usize) -> Vec<Vec<u8>> {
    (0..n).map(|i| format!("key-{i:06}").into_bytes()).collect()
}

fn case_with(name: &'static str, n: usize, policy: impl FilterPolicy) -> Case {
    let keys = case_keys(n);
    let mut builder = FilterBlockBuilder::new(policy);
    for k in &keys {
        builder.add_key(k);
    }
    Case {
        name,
        keys,
        block: builder.finish(),
    }
}

/// A StandardBloom block written by the in-memory filter (odd bit count, estimated key count).
fn in_memory_case(name: &'static str, n: usize) -> Case {
    let keys = case_keys(n);
    let mut filter = BloomFilter::with_size(1001, 5);
    filter.extend(keys.iter().map(Vec::as_slice));
    Case {
        name,
        keys,
        block: filter.to_block(),
    }
}

#[derive(Default, Debug)]
struct Tally {
    rejected_by_open: usize,
    rejected_by_checksum: usize,
    harmless: usize,
}

/// Opens a damaged block and classifies the outcome; panics (fails the test) only on a false negative in a
/// block that passed both checks.
fn check(damaged: &[u8], keys: &[Vec<u8>], tally: &mut Tally, what: &str) {
    let Ok(filter) = FilterBlock::open(damaged) else {
        tally.rejected_by_open += 1;
        return;
    };
    // Query even a block that fails its checksum: a caller that skips verify must not crash either.
    let probes: Vec<bool> = keys.iter().map(|k| filter.may_contain(k)).collect();
    let mut batch = vec![false; keys.len()];
    filter.may_contain_batch(keys, &mut batch);
    assert_eq!(probes, batch, "{what}: batch and single answers differ");
    let _ = filter.may_contain_hash(key_hash(b"not a key"));
    if filter.verify().is_err() {
        tally.rejected_by_checksum += 1;
        return;
    }
    assert!(
        probes.iter().all(|&p| p),
        "{what}: a block that passed open and verify lost a key"
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
        case_with("standard bloom, empty", 0, StandardBloomPolicy::new(10.0)),
        case_with(
            "standard bloom, 100 keys at 10 bits/key",
            100,
            StandardBloomPolicy::new(10.0),
        ),
        case_with(
            "standard bloom, 500 keys at 3.3 bits/key",
            500,
            StandardBloomPolicy::new(3.3),
        ),
        in_memory_case("in-memory bloom, 120 keys in 1001 bits", 120),
    ];
    for Case { name, keys, block } in &cases {
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
}

#[test]
fn arbitrary_trailers_never_panic() {
    for case in [
        case("100 keys", 100, 10.0),
        case_with(
            "standard bloom, 100 keys",
            100,
            StandardBloomPolicy::new(10.0),
        ),
    ] {
        every_trailer_byte_value(case);
    }
}

fn every_trailer_byte_value(Case { keys, block, .. }: Case) {
    // Every value of each single trailer byte, on top of a valid block.
    let trailer_start = block.len() - sstfilter::TRAILER_LEN;
    let mut tally = Tally::default();
    for at in trailer_start..block.len() {
        for value in 0..=255u8 {
            let mut damaged = block.clone();
            damaged[at] = value;
            check(&damaged, &keys, &mut tally, &format!("byte {at} = {value}"));
        }
    }
    // Only the original value of each byte yields a block that passes both checks.
    assert_eq!(tally.harmless, sstfilter::TRAILER_LEN, "{tally:?}");
}

#[test]
fn loading_an_in_memory_filter_rejects_every_damaged_block() {
    // `BloomFilter::from_block` verifies the checksum: no truncation or bit flip yields a filter.
    let Case { block, .. } = in_memory_case("in-memory bloom", 120);
    assert!(BloomFilter::from_block(&block).is_ok());
    for len in 0..block.len() {
        assert!(
            BloomFilter::from_block(&block[..len]).is_err(),
            "truncated to {len}"
        );
    }
    let mut damaged = block.clone();
    for bit in 0..block.len() * 8 {
        damaged[bit / 8] ^= 1 << (bit % 8);
        assert!(
            BloomFilter::from_block(&damaged).is_err(),
            "bit {bit} flipped"
        );
        damaged[bit / 8] ^= 1 << (bit % 8);
    }
}
