//! Every truncation and every single-bit flip of a few blocks: `open`/`verify` reject it, or the block still
//! answers "may contain" for all of its keys. Nothing panics, whatever the bytes.

use sstfilter::{FastBloomPolicy, FilterBlock, FilterBlockBuilder, key_hash};

struct Case {
    name: &'static str,
    keys: Vec<Vec<u8>>,
    block: Vec<u8>,
}

fn case(name: &'static str, n: usize, bits_per_key: f64) -> Case {
    let keys: Vec<Vec<u8>> = (0..n).map(|i| format!("key-{i:06}").into_bytes()).collect();
    let mut builder = FilterBlockBuilder::new(FastBloomPolicy::new(bits_per_key));
    for k in &keys {
        builder.add_key(k);
    }
    Case {
        name,
        keys,
        block: builder.finish(),
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
    // Every value of each single trailer byte, on top of a valid block.
    let Case { keys, block, .. } = case("100 keys", 100, 10.0);
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
