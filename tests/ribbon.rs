//! Ribbon through the public API: no false negatives on any key set (duplicates and forced seed retries
//! included), false-positive rates against the mixed-column theory computed here, space against the bound, and
//! the BlockedBloom fallbacks.

mod spec;

use proptest::prelude::*;
use sstfilter::{
    FilterBlock, FilterBlockBuilder, FilterKind, FilterPolicy, RibbonPolicy, key_hash,
};

fn build(policy: RibbonPolicy, keys: impl IntoIterator<Item = Vec<u8>>) -> FilterBlock<Vec<u8>> {
    let mut builder = FilterBlockBuilder::new(policy);
    for k in keys {
        builder.add_key(&k);
    }
    let block = FilterBlock::open(builder.finish()).expect("a fresh block opens");
    block.verify().expect("and verifies");
    block
}

fn present(n: u64) -> impl Iterator<Item = Vec<u8>> {
    (0..n).map(|i| format!("usr:{i:012}").into_bytes())
}

/// The shape as FORMAT.md's reader reads it (section 4.3): `r`, blocks, first upper block.
fn spec_shape(block: &FilterBlock<Vec<u8>>) -> (u32, u64, u64) {
    match spec::open(block.as_bytes()).unwrap().kind {
        spec::Kind::Ribbon {
            r,
            blocks,
            upper_start,
            ..
        } => (r, blocks, upper_start),
        other => panic!("expected a Ribbon block, got {other:?}"),
    }
}

/// The false-positive rate of a Ribbon filter from its parameters alone: a query for an absent key starts in a
/// block with `r` columns (matching with probability `2^-r`) or `r + 1`; its start is uniform over the slots,
/// so the blocks before `upper_start_block` take their share of the blocks.
fn mixed_column_theory((r, blocks, upper_start_block): (u32, u64, u64)) -> f64 {
    let r = f64::from(r);
    let lower_share = upper_start_block as f64 / blocks as f64;
    lower_share * 0.5f64.powf(r) + (1.0 - lower_share) * 0.5f64.powf(r + 1.0)
}

#[test]
fn fpr_is_within_ten_percent_of_the_mixed_column_theory() {
    const KEYS: u64 = 300_000;
    const ABSENT: u64 = 2_000_000;
    let settings = [
        (
            "Bloom-equivalent 10 bits/key (r = 6, 7)",
            RibbonPolicy::new(10.0).unwrap(),
        ),
        (
            "2^-8 (r = 8 everywhere)",
            RibbonPolicy::with_fpr(2f64.powi(-8)).unwrap(),
        ),
        ("0.1 % (r = 9, 10)", RibbonPolicy::with_fpr(0.001).unwrap()),
        ("5 % (r = 4, 5)", RibbonPolicy::with_fpr(0.05).unwrap()),
    ];
    for (name, policy) in settings {
        let filter = build(policy, present(KEYS));
        let theory = mixed_column_theory(spec_shape(&filter));
        let false_positives = (0..ABSENT)
            .filter(|i| filter.may_contain(format!("abs:{i:012}").as_bytes()))
            .count();
        let measured = false_positives as f64 / ABSENT as f64;
        println!(
            "{name}: {:.3} bits/key, measured {:.4} %, theory {:.4} %, target {:.4} %",
            filter.bits_per_key(),
            measured * 100.0,
            theory * 100.0,
            policy.fpr() * 100.0
        );
        assert!(
            (measured / theory - 1.0).abs() < 0.10,
            "{name}: {measured} vs {theory}"
        );
        // The library's own estimate is the same theory, and the layout hits the policy's target.
        assert!(
            (filter.expected_fpr() / theory - 1.0).abs() < 1e-12,
            "{name}"
        );
        assert!(
            (theory / policy.fpr() - 1.0).abs() < 0.01,
            "{name}: {theory} vs {}",
            policy.fpr()
        );
    }
}

#[test]
fn space_is_within_three_percent_of_the_bound_from_100k_keys() {
    for n in [100_000usize, 1_000_000, 10_000_000] {
        for policy in [
            RibbonPolicy::new(10.0).unwrap(),
            RibbonPolicy::with_fpr(2f64.powi(-8)).unwrap(),
            RibbonPolicy::with_fpr(1e-4).unwrap(),
        ] {
            // The block's size is a pure function of the key count, so the policy's estimate is exact.
            let bits_per_key = policy.estimated_block_len(n) as f64 * 8.0 / n as f64;
            let bound = -policy.estimated_fpr(n).log2();
            let overhead = bits_per_key / bound - 1.0;
            assert!(
                overhead <= 0.03,
                "{n} keys at {}: {bits_per_key} bits/key, {overhead}",
                policy.fpr()
            );
        }
    }
    // At the Bloom-equivalent 10 bits/key, under 6.9 bits/key.
    let policy = RibbonPolicy::new(10.0).unwrap();
    let bits_per_key = policy.estimated_block_len(1_000_000) as f64 * 8.0 / 1e6;
    assert!(bits_per_key <= 6.90, "{bits_per_key}");
    let filter = build(policy, present(100_000));
    assert_eq!(filter.as_bytes().len(), policy.estimated_block_len(100_000));
}

#[test]
fn small_key_sets_get_blocked_bloom_where_ribbon_would_not_be_smaller() {
    let policy = RibbonPolicy::new(10.0).unwrap();
    for n in [0u64, 1, 20] {
        let filter = build(policy, present(n));
        assert_eq!(filter.kind(), FilterKind::BlockedBloom, "{n} keys");
        assert!(present(n).all(|k| filter.may_contain(&k)));
    }
    let filter = build(policy, present(300));
    assert_eq!(filter.kind(), FilterKind::Ribbon);
    assert!(filter.bits_per_key() < 8.0, "{}", filter.bits_per_key());
}

#[test]
fn a_memory_cap_below_the_ribbon_estimate_gives_blocked_bloom() {
    let n = 50_000;
    let plan = match RibbonPolicy::new(10.0).unwrap().plan(n as usize) {
        sstfilter::FilterPlan::Ribbon { plan, .. } => plan,
        other => panic!("{other:?}"),
    };
    // About 8 bytes per key plus one shard's band.
    assert!(
        plan.build_memory() < 8 * n as usize + 400 * 1024,
        "{}",
        plan.build_memory()
    );
    let capped = build(
        RibbonPolicy::new(10.0)
            .unwrap()
            .with_max_build_memory(plan.build_memory() - 1),
        present(n),
    );
    assert_eq!(capped.kind(), FilterKind::BlockedBloom);
    assert!(present(n).all(|k| capped.may_contain(&k)));
    let allowed = build(
        RibbonPolicy::new(10.0)
            .unwrap()
            .with_max_build_memory(plan.build_memory()),
        present(n),
    );
    assert_eq!(allowed.kind(), FilterKind::Ribbon);
}

fn keys_strategy() -> impl Strategy<Value = Vec<Vec<u8>>> {
    // Enough keys for Ribbon to pay (a few hundred or more), with short binary keys so that repeats, adjacent
    // and not, are common.
    let key = prop_oneof![
        proptest::collection::vec(any::<u8>(), 0..40),
        proptest::collection::vec(0u8..4, 0..6),
    ];
    (
        proptest::collection::vec(key, 200..3000),
        proptest::collection::vec(any::<usize>(), 0..200),
    )
        .prop_map(|(mut keys, repeats)| {
            // Repeat some keys elsewhere in the sequence, as unsorted input would.
            for r in repeats {
                let k = keys[r % keys.len()].clone();
                let at = r.rotate_left(17) % keys.len();
                keys.insert(at, k);
            }
            keys
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn every_added_key_is_found_after_a_round_trip(keys in keys_strategy(), bits in 2.0f64..24.0) {
        let filter = build(RibbonPolicy::new(bits).unwrap(), keys.iter().cloned());
        for k in &keys {
            prop_assert!(filter.may_contain(k), "lost key {:?} ({})", k, filter.kind());
            prop_assert!(filter.may_contain_hash(key_hash(k)));
        }
        let mut batch = vec![false; keys.len()];
        filter.may_contain_batch(&keys, &mut batch);
        prop_assert!(batch.iter().all(|&b| b));
    }

    /// At no spare slots, shards fail most seeds: construction retries (and falls back when 16 seeds fail),
    /// and either way loses no key.
    #[test]
    fn forced_seed_retries_lose_no_key(keys in keys_strategy(), overhead in 0.0f64..0.004) {
        let filter = build(RibbonPolicy::new(10.0).unwrap().with_slot_overhead(overhead).unwrap(), keys.iter().cloned());
        for k in &keys {
            prop_assert!(filter.may_contain(k), "lost key {:?} ({})", k, filter.kind());
        }
    }
}
