//! No false negatives: any key set, any bits/key, through bytes and back.

use proptest::prelude::*;
use sstfilter::{BlockedBloomPolicy, FilterBlock, FilterBlockBuilder, FilterKind, key_hash};

fn keys_strategy() -> impl Strategy<Value = Vec<Vec<u8>>> {
    // Binary keys of length 0..200; small alphabets and repeats make duplicates (adjacent and not) common.
    let key = prop_oneof![
        proptest::collection::vec(any::<u8>(), 0..200),
        proptest::collection::vec(0u8..3, 0..4),
    ];
    proptest::collection::vec(key, 0..400)
        .prop_flat_map(|keys| {
            let n = keys.len();
            (Just(keys), proptest::collection::vec(any::<bool>(), n))
        })
        .prop_map(|(keys, repeat)| {
            // Repeat some keys in place, as a table with several versions of a key would.
            let mut out = Vec::new();
            for (k, r) in keys.into_iter().zip(repeat) {
                if r {
                    out.push(k.clone());
                }
                out.push(k);
            }
            out
        })
}

fn adjacent_distinct_hashes(keys: &[Vec<u8>]) -> u64 {
    let mut count = 0;
    let mut last = None;
    for k in keys {
        let h = key_hash(k);
        if last != Some(h) {
            count += 1;
            last = Some(h);
        }
    }
    count
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn every_added_key_is_found_after_a_round_trip(keys in keys_strategy(), bits_per_key in 1.0f64..=32.0) {
        let mut builder = FilterBlockBuilder::new(BlockedBloomPolicy::new(bits_per_key));
        for k in &keys {
            builder.add_key(k);
        }
        let expected_keys = adjacent_distinct_hashes(&keys);
        prop_assert_eq!(builder.len() as u64, expected_keys);
        let bytes = builder.finish();

        // Reopen from a fresh copy, as a reader in another process would.
        let filter = FilterBlock::open(bytes.clone()).unwrap();
        filter.verify().unwrap();
        prop_assert_eq!(filter.kind(), FilterKind::BlockedBloom);
        prop_assert_eq!(filter.num_keys(), expected_keys);
        for k in &keys {
            prop_assert!(filter.may_contain(k), "lost key {:?}", k);
            prop_assert!(filter.may_contain_hash(key_hash(k)));
        }
        let mut batch = vec![false; keys.len()];
        filter.may_contain_batch(&keys, &mut batch);
        prop_assert!(batch.iter().all(|&b| b));
    }
}
