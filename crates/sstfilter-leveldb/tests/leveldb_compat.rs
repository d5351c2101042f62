//! LevelDB compatibility: our LevelDB Bloom filter against rusty-leveldb's `BloomPolicy` (a port of LevelDB's
//! `util/bloom.cc`), byte for byte and answer for answer, on every key set proptest tries. (The filter block
//! against real tables' is checked in `sstfilter-rocksdb`, whose table reader reads LevelDB's tables.)

use proptest::prelude::*;
use rusty_leveldb::FilterPolicy as _;
use sstfilter_leveldb::LevelDbBloomPolicy;

/// Keys in rusty-leveldb's `create_filter` layout: one buffer and the offset where each key starts.
fn leveldb_layout(keys: &[Vec<u8>]) -> (Vec<u8>, Vec<usize>) {
    let mut buf = Vec::new();
    let mut offsets = Vec::new();
    for k in keys {
        offsets.push(buf.len());
        buf.extend_from_slice(k);
    }
    (buf, offsets)
}

fn keys_strategy() -> impl Strategy<Value = Vec<Vec<u8>>> {
    // Every length class of the hash (0–3 tail bytes, several words), bytes >= 0x80, duplicates.
    let key = prop_oneof![
        proptest::collection::vec(any::<u8>(), 0..40),
        proptest::collection::vec(0u8..2, 0..5),
    ];
    proptest::collection::vec(key, 0..300)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn filters_are_byte_identical_to_rusty_leveldb(keys in keys_strategy(), bits_per_key in 0usize..=60) {
        let ours = LevelDbBloomPolicy::new(bits_per_key);
        let theirs = rusty_leveldb::BloomPolicy::new(bits_per_key as u32);
        let refs: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
        let (buf, offsets) = leveldb_layout(&keys);
        let our_filter = ours.create_filter(&refs);
        prop_assert_eq!(&our_filter, &theirs.create_filter(&buf, &offsets));
        prop_assert_eq!(our_filter.len(), ours.filter_len(keys.len()));
        for k in &keys {
            prop_assert!(ours.may_contain(k, &our_filter), "lost {:?}", k);
        }
    }

    #[test]
    fn answers_are_identical_to_rusty_leveldb(
        keys in keys_strategy(),
        probes in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..24), 0..200),
        bits_per_key in 1usize..=30,
    ) {
        let ours = LevelDbBloomPolicy::new(bits_per_key);
        let theirs = rusty_leveldb::BloomPolicy::new(bits_per_key as u32);
        let refs: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
        let filter = ours.create_filter(&refs);
        for probe in probes.iter().chain(&keys) {
            prop_assert_eq!(ours.may_contain(probe, &filter), theirs.key_may_match(probe, &filter));
        }
    }

    #[test]
    fn answers_on_arbitrary_bytes_are_identical_to_rusty_leveldb(
        filter in proptest::collection::vec(any::<u8>(), 2..200),
        probes in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..24), 1..50),
    ) {
        // Any filter of 2 bytes or more: both read it the same way (reserved k > 30 included). Shorter ones are
        // where we deliberately differ (rusty-leveldb divides by zero on some of them).
        let ours = LevelDbBloomPolicy::new(10);
        let theirs = rusty_leveldb::BloomPolicy::new(10);
        for probe in &probes {
            prop_assert_eq!(ours.may_contain(probe, &filter), theirs.key_may_match(probe, &filter));
        }
    }
}

#[test]
fn names_match() {
    assert_eq!(
        LevelDbBloomPolicy::NAME,
        rusty_leveldb::BloomPolicy::new(10).name()
    );
}
