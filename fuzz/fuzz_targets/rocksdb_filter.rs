//! Arbitrary bytes as a RocksDB filter block (seeds: the blocks RocksDB wrote in
//! `crates/sstfilter-rocksdb/tests/golden-rocksdb/`): `RocksDbFilter` reads some format from any bytes, whose
//! lengths lie inside the block, and answers every key without panicking. The first byte also configures the `Recipe`s
//! `RocksDbBloom` and `RocksDbRibbon` (0 to 127.5 bits/key; a refusal must be one the documentation states): an
//! accepted one writes a block RocksDB reads as FastLocalBloom (or Standard128Ribbon) that may match every key cut
//! from the bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sstfilter_recipes::{BitsPerKey, Recipe};
use sstfilter_rocksdb::{RocksDbFilter, RocksDbFilterFormat};

fuzz_target!(|data: &[u8]| {
    let filter = RocksDbFilter::from_verified(data);
    let len = match filter.format() {
        RocksDbFilterFormat::FastLocalBloom { num_probes, len } => {
            assert!((1..=30).contains(&num_probes));
            Some(len)
        }
        RocksDbFilterFormat::Ribbon {
            num_blocks, len, ..
        } => {
            assert!(num_blocks >= 2);
            Some(len)
        }
        RocksDbFilterFormat::LegacyBloom {
            num_lines,
            line_bytes,
            ..
        } => {
            assert!(line_bytes.is_power_of_two());
            Some(num_lines * line_bytes)
        }
        _ => None,
    };
    if let Some(len) = len {
        assert_eq!(len as usize + 5, data.len());
    }
    for key in data.chunks(7).take(64) {
        let _ = filter.may_contain(key);
    }
    let _ = filter.may_contain(b"");

    let keys: Vec<Vec<u8>> = data.chunks(3).take(200).map(<[u8]>::to_vec).collect();
    if let Some(&halves) = data.first() {
        let bits = BitsPerKey::Exactly(f64::from(halves) / 2.0);
        let _ = Recipe::RocksDbBloom(bits).check(&keys, None, None);
        let _ = Recipe::RocksDbRibbon(bits).check(&keys, None, None);
    }
});
