//! Arbitrary bytes as a LevelDB filter block and as one LevelDB (or Bloom64) Bloom filter: every query runs without
//! panicking, and any filter the block yields is at most the block's size. The first two bytes also configure a
//! policy of each kind through its checked constructor (`LevelDbBloomPolicy::try_new` with 0 to 255 bits/key,
//! `Bloom64Policy::try_new` with 0 to 127.5): an accepted one finds every key of a filter it wrote from the bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sstfilter::leveldb::{
    Bloom64Policy, LevelDbBloomPolicy, LevelDbFilterBlockReader, LevelDbFilterPolicy,
};

/// Writes a filter of `keys` with `policy` and checks that it finds every one of them.
fn finds_its_keys(policy: &impl LevelDbFilterPolicy, keys: &[&[u8]]) {
    let mut filter = Vec::new();
    policy.append_filter(keys, &mut filter);
    for key in keys {
        assert!(policy.key_may_match(key, &filter), "lost {key:?}");
    }
}

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
        let _ = reader.key_may_match(offset, data.get(..8).unwrap_or(data));
    }
    let _ = policy.key_may_match(b"key", data);
    let _ = Bloom64Policy::new(10.0).key_may_match(b"key", data);
    let _ = LevelDbFilterBlockReader::new(data, Bloom64Policy::new(10.0)).key_may_match(0, b"key");

    let keys: Vec<&[u8]> = data.chunks(3).take(200).collect();
    let (leveldb_bits, bloom64_halves) = match data {
        [a, b, ..] => (*a, *b),
        _ => return,
    };
    match LevelDbBloomPolicy::try_new(usize::from(leveldb_bits)) {
        Ok(policy) => finds_its_keys(&policy, &keys),
        Err(_) => assert!(leveldb_bits > 100),
    }
    let bits = f64::from(bloom64_halves) / 2.0;
    match Bloom64Policy::try_new(bits) {
        Ok(policy) => finds_its_keys(&policy, &keys),
        Err(_) => assert!(!(1.0..=100.0).contains(&bits)),
    }
});
