//! The paths a user takes by following the documents, where a key used to be lost or a promise silently broken
//! (issue 26). Each test reproduces one reported problem and fails on the code before the fix; the partition
//! loader's is in `tests/partitioned.rs` (`no_loader_can_hand_the_reader_unverified_bytes`) and the rusty-leveldb
//! adapter's in that crate (`bad_offsets_give_filters_that_match_everything`).

use std::ops::Bound::Included;
use std::sync::Arc;

use sstfilter::{
    Answer, BlockedBloomPolicy, Error, FilterBlock, FilterBlockBuilder, MAX_PARTITION_BYTES,
    PartitionedFilterBuilder, PrefixExtractor, RangeFilterBuilder, RangePolicy, RibbonPolicy,
    StandardBloomPolicy, UsageError,
};
use sstfilter_recipes::NamedCapped;

fn keys(n: u64) -> Vec<Vec<u8>> {
    (0..n)
        .map(|i| format!("user:{i:010}").into_bytes())
        .collect()
}

/// Problem 2: `open` without `verify` answered "absent" from damaged bytes. A BlockedBloom block read through a
/// block handle 64·k bytes off (bytes cut from the front, so the trailer still decodes) opened and lost most of its
/// keys; now `open` checks the CRC32 and refuses it.
#[test]
fn a_block_read_at_a_shifted_handle_does_not_open() {
    let keys = keys(2000);
    let mut builder = FilterBlockBuilder::new(BlockedBloomPolicy::new(10.0).unwrap());
    for key in &keys {
        builder.add_key(key);
    }
    let block = builder.finish();
    let mut lost_unverified = 0;
    for k in 1..=4 {
        let shifted = &block[64 * k..];
        assert!(
            matches!(
                FilterBlock::open(shifted),
                Err(Error::ChecksumMismatch { .. } | Error::LengthMismatch { .. })
            ),
            "a block cut by {k} lines opened"
        );
        // What `open` used to do: the structure alone accepts some of these, and they lose keys.
        if let Ok(unverified) = FilterBlock::open_unverified(shifted) {
            lost_unverified += keys.iter().filter(|k| !unverified.may_contain(k)).count();
        }
    }
    assert!(
        lost_unverified > 0,
        "the scenario no longer reproduces without the CRC"
    );
}

/// Problem 2, Range blocks: damaged payloads that the structure accepts lost keys; `open` refuses every one.
#[test]
fn a_damaged_range_block_does_not_open() {
    let keys = keys(500);
    let mut builder = RangeFilterBuilder::new(RangePolicy::new(1 << 10, 0.01).unwrap());
    for key in &keys {
        builder.add_key(key).unwrap();
    }
    let block = builder.finish();
    let (mut refused, mut lossy_unverified) = (0, 0);
    for at in (0..block.len() - 4).step_by(7) {
        let mut damaged = block.clone();
        damaged[at] ^= 0x24;
        assert!(FilterBlock::open(&damaged[..]).is_err(), "byte {at}");
        refused += 1;
        if let Ok(unverified) = FilterBlock::open_unverified(&damaged[..]) {
            let lost = keys.iter().any(|k| {
                !unverified.may_contain(k)
                    || !unverified
                        .may_contain_range(Included(k), Included(k))
                        .must_read()
            });
            lossy_unverified += usize::from(lost);
        }
    }
    assert!(refused > 100);
    assert!(
        lossy_unverified > 0,
        "the scenario no longer reproduces without the CRC"
    );
}

/// Problem 3: a name over 255 bytes was cut, and an extractor whose name equalled the cut part was taken for the
/// block's own: it answered `Absent` for a stored key's prefix. Now the builder refuses the name it could not
/// record whole, and a name of exactly 255 bytes is recorded whole.
#[test]
fn an_extractor_name_a_block_cannot_record_whole_is_refused() {
    let long = Arc::new(NamedCapped("e".repeat(300)));
    let refused =
        FilterBlockBuilder::new(BlockedBloomPolicy::new(10.0).unwrap()).with_prefixes(long, true);
    assert!(matches!(
        refused,
        Err(UsageError::InvalidSetting {
            setting: "prefix extractor name",
            ..
        })
    ));
    assert!(sstfilter::check_prefix_extractor(&NamedCapped("e".repeat(256))).is_err());

    let longest = Arc::new(NamedCapped("e".repeat(255)));
    let mut builder = FilterBlockBuilder::new(BlockedBloomPolicy::new(10.0).unwrap())
        .with_prefixes(longest.clone(), true)
        .unwrap();
    builder.add_key(b"ab-key");
    let filter = FilterBlock::open(builder.finish()).unwrap();
    assert_eq!(filter.prefix_extractor_name(), Some(longest.name()));
    assert!(
        filter
            .may_contain_prefix(longest.as_ref(), b"ab")
            .must_read()
    );
    // A different extractor never answers for it: not one whose name is a prefix of it.
    let shorter = NamedCapped("e".repeat(254));
    assert!(matches!(
        filter.may_contain_prefix(&shorter, b"zz"),
        Answer::MayContain(_)
    ));
}

/// Problem 4: `RangePolicy::new(1 << 56, 0.01).unwrap()` saturated its universe at 2^64 and, over 10^6 keys, answered "may
/// contain" for 7 % of empty ranges it promised at 1.5·10^-7. Now the builder refuses the keys past the most the
/// universe holds, and rates that are NaN, negative or at least 1 are refused where the policy is made.
#[test]
fn a_range_policy_refuses_what_it_cannot_keep() {
    let policy = RangePolicy::new(1 << 56, 0.01).unwrap();
    assert_eq!(policy.max_keys(), 2); // 2^64 · 0.01 / 2^56 = 2.56
    let mut builder = RangeFilterBuilder::new(policy);
    let keys = keys(10);
    builder.add_key(&keys[0]).unwrap();
    builder.add_key(&keys[1]).unwrap();
    assert_eq!(
        builder.add_key(&keys[2]),
        Err(UsageError::TooManyKeys {
            expected: 2,
            found: 3
        })
    );
    for fpr in [f64::NAN, -0.5, 0.0, 1.0, 2.0, 1e-13] {
        assert!(RangePolicy::new(1024, fpr).is_err(), "{fpr}");
    }
    for len in [0, (1 << 56) + 1, u64::MAX] {
        assert!(RangePolicy::new(len, 0.01).is_err(), "{len}");
    }
    // One key's universe, L / ε, is already past 2^64.
    assert!(RangePolicy::new(1 << 56, 1.0 / 1024.0).is_err());
    assert!(RangePolicy::with_bits_per_key(f64::NAN, 1024).is_err());
    assert!(RangePolicy::with_bits_per_key(3.0, 1024).is_err());
    // The limit is the universe's (2^64 / (L / ε)) or a block's, 2^32 − 1 codes, whichever is lower.
    let kept = RangePolicy::new(1 << 20, 0.01).unwrap();
    assert_eq!(kept.max_keys(), u64::from(u32::MAX));
    let wide = RangePolicy::new(1 << 40, 0.01).unwrap();
    assert!(wide.max_keys() > 100_000 && wide.max_keys() < u64::from(u32::MAX));
}

/// Problem 5: `BlockedBloomPolicy::new(1e9).unwrap()` was accepted (the README said "any f64 >= 1.0") and `finish`
/// allocated 12.5 GB for 100 keys. Bits per key are refused past 100, with a typed error from every Bloom policy.
#[test]
fn absurd_bits_per_key_are_refused_where_the_policy_is_made() {
    for bits in [1e9, 100.5, f64::INFINITY, f64::NAN, 0.5, -1.0] {
        assert!(BlockedBloomPolicy::new(bits).is_err(), "{bits}");
        assert!(StandardBloomPolicy::new(bits).is_err(), "{bits}");
        assert!(RibbonPolicy::new(bits).is_err(), "{bits}");
    }
    assert!(BlockedBloomPolicy::new(sstfilter::MAX_BITS_PER_KEY).is_ok());
    let refused = BlockedBloomPolicy::new(1e9).unwrap_err();
    assert_eq!(
        refused.to_string(),
        "BlockedBloomPolicy bits_per_key must be a number from 1 to 100, got 1000000000"
    );
}

/// A partition size of 0 used to be clamped to 1, and one past `MAX_PARTITION_BYTES` to it: both are refused with
/// the setting named, by the builder and by the table filter's options.
#[test]
fn partition_sizes_out_of_range_are_refused() {
    let builder = || PartitionedFilterBuilder::new(BlockedBloomPolicy::new(10.0).unwrap());
    let options =
        || sstfilter::TableFilterOptions::new().point(BlockedBloomPolicy::new(10.0).unwrap());
    for bytes in [0, MAX_PARTITION_BYTES + 1] {
        let refused = [
            builder().with_partition_bytes(bytes).err(),
            options()
                .partitioned(bytes, sstfilter::PartitionCuts::Anywhere)
                .err(),
        ];
        for refused in refused {
            assert!(
                matches!(&refused, Some(UsageError::InvalidSetting { setting, .. })
                    if *setting == "partition_bytes"),
                "{refused:?}"
            );
        }
    }
    for bytes in [1, MAX_PARTITION_BYTES] {
        assert!(builder().with_partition_bytes(bytes).is_ok());
    }
}
