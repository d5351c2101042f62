//! Arbitrary bytes as a LevelDB filter block and as one LevelDB (or Bloom64) Bloom filter: every query runs without
//! panicking, and any filter the block yields is at most the block's size. The first two bytes also configure a
//! policy of each kind through the shared `Recipe` (`LevelDbBloomPolicy::try_new` with 0 to 127 bits/key,
//! `Bloom64Policy::try_new` with 0 to 127.5; a refusal must be one the documentation states): an accepted one
//! finds every key of a filter, and of a LevelDB filter block, it wrote from the bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sstfilter_leveldb::{Bloom64Policy, LevelDbBloomPolicy, LevelDbFilterBlockReader};
use sstfilter_recipes::{BitsPerKey, Recipe};

fuzz_target!(|data: &[u8]| {
    let policy = LevelDbBloomPolicy::new(10);
    let reader = LevelDbFilterBlockReader::new(data, policy);
    let _ = (reader.is_well_formed(), reader.base_lg());
    for index in 0..reader.num_filters().min(64) {
        if let Some(filter) = reader.filter(index) {
            assert!(filter.len() <= data.len());
        }
    }
    // Offsets at every scale, including past any filter and past any shift.
    for offset in [0u64, 1, 2047, 2048, 4096, 1 << 20, 1 << 40, u64::MAX] {
        let _ = reader.may_contain(offset, data.get(..8).unwrap_or(data));
    }
    let _ = policy.may_contain(b"key", data);
    let _ = Bloom64Policy::new(10.0).may_contain(b"key", data);
    let _ = LevelDbFilterBlockReader::new(data, Bloom64Policy::new(10.0)).may_contain(0, b"key");

    let keys: Vec<Vec<u8>> = data.chunks(3).take(200).map(<[u8]>::to_vec).collect();
    let (leveldb_bits, bloom64_halves) = match data {
        [a, b, ..] => (*a, *b),
        _ => return,
    };
    let bloom64_bits = BitsPerKey::Exactly(f64::from(bloom64_halves) / 2.0);
    for recipe in [
        Recipe::LevelDbBloomPolicy(leveldb_bits),
        Recipe::Bloom64Policy(bloom64_bits),
    ] {
        let _ = recipe.check(&keys, None, None);
    }
});
