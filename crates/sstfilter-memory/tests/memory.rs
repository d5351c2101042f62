//! The in-memory filters: no false negatives (proptest), false-positive rates against the textbook formula,
//! cardinality estimates, unions, counting removals and the scalable filter's total rate across growth.

use proptest::prelude::*;
use sstfilter::{FilterBlock, FilterBlockBuilder, FilterPlan, key_hash};
use sstfilter_memory::{BloomFilter, CountingBloomFilter, ScalableBloomFilter};
use sstfilter_recipes::Explicit;

fn key(i: u64) -> Vec<u8> {
    format!("key-{i}").into_bytes()
}

fn absent(i: u64) -> Vec<u8> {
    format!("absent-{i}").into_bytes()
}

/// `(1 - e^(-kn/m))^k`, the rate every test here compares against.
fn textbook_fpr(m: u64, k: u32, n: u64) -> f64 {
    let k = f64::from(k);
    (1.0 - (-k * n as f64 / m as f64).exp()).powf(k)
}

fn measured_fpr(contains: impl Fn(&[u8]) -> bool, queries: u64) -> f64 {
    let hits = (0..queries).filter(|&i| contains(&absent(i))).count();
    hits as f64 / queries as f64
}

fn keys_strategy(max: usize) -> impl Strategy<Value = Vec<Vec<u8>>> {
    let key = prop_oneof![
        proptest::collection::vec(any::<u8>(), 0..64),
        proptest::collection::vec(0u8..3, 0..4),
    ];
    proptest::collection::vec(key, 0..max)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn bloom_filter_never_loses_a_key(
        keys in keys_strategy(300),
        bits in 1u64..5000,
        hashes in 1u32..20,
    ) {
        let mut filter = BloomFilter::with_size(bits, hashes);
        for k in &keys {
            filter.insert(k);
        }
        for k in &keys {
            prop_assert!(filter.contains(k), "lost {:?}", k);
            prop_assert!(filter.contains_hash(key_hash(k)));
        }
        // Through bytes and back: the block reader and the reloaded filter answer for every key too.
        let bytes = filter.to_block();
        let block = FilterBlock::open(&bytes[..]).unwrap();
        let reloaded = BloomFilter::from_block(&bytes).unwrap();
        prop_assert_eq!(&reloaded, &filter);
        let mut batch = vec![false; keys.len()];
        block.may_contain_batch(&keys, &mut batch);
        for (k, in_batch) in keys.iter().zip(batch) {
            prop_assert!(block.may_contain(k) && in_batch && reloaded.contains(k));
        }
    }

    #[test]
    fn union_equals_the_filter_of_the_union(
        a in keys_strategy(200),
        b in keys_strategy(200),
        bits in 64u64..4000,
        hashes in 1u32..12,
    ) {
        let empty = BloomFilter::with_size(bits, hashes);
        let (mut fa, mut fb, mut both) = (empty.clone(), empty.clone(), empty);
        fa.extend(a.iter().map(Vec::as_slice));
        fb.extend(b.iter().map(Vec::as_slice));
        both.extend(a.iter().chain(&b).map(Vec::as_slice));
        let union = fa.union(&fb).unwrap();
        prop_assert_eq!(&union, &both);
        fa.union_in_place(&fb).unwrap();
        prop_assert_eq!(&fa, &both);
        prop_assert!(a.iter().chain(&b).all(|k| union.contains(k)));
    }

    /// A random sequence of inserts and removals (only of keys inserted and not yet removed, as the contract
    /// requires) on filters small enough that counters collide and saturate: every key still present is found.
    #[test]
    fn counting_remove_never_hides_a_key_still_present(
        ops in proptest::collection::vec((0u64..60, any::<bool>()), 0..600),
        counters in 8u64..400,
        hashes in 1u32..9,
    ) {
        let mut filter = CountingBloomFilter::with_size(counters, hashes);
        let mut model = std::collections::HashMap::<u64, u32>::new();
        for (i, insert) in ops {
            let count = model.entry(i).or_default();
            if insert {
                filter.insert(&key(i));
                *count += 1;
            } else if *count > 0 {
                prop_assert!(filter.remove(&key(i)), "refused to remove key {} held {} times", i, count);
                *count -= 1;
            }
            for (&j, &held) in &model {
                prop_assert!(held == 0 || filter.contains(&key(j)), "key {} (held {} times) lost", j, held);
            }
        }
        let projected = filter.to_bloom_filter();
        for (&j, &held) in &model {
            prop_assert!(held == 0 || projected.contains(&key(j)));
        }
    }

    #[test]
    fn scalable_filter_never_loses_a_key(
        keys in keys_strategy(2000),
        initial in 1usize..64,
        growth in prop_oneof![Just(1.0), Just(2.0), Just(4.0)],
        tightening in prop_oneof![Just(0.5), Just(0.9)],
    ) {
        let mut filter = ScalableBloomFilter::with_growth(initial, 0.01, growth, tightening);
        for k in &keys {
            filter.insert(k);
        }
        for k in &keys {
            prop_assert!(filter.contains(k), "lost {:?}", k);
        }
    }
}

#[test]
fn fpr_is_within_ten_percent_of_the_textbook_formula_at_several_sizes() {
    // (filter, keys inserted, absent keys queried): at least 10^4 expected false positives per row, so the
    // sampling error (1 %) is far inside the 10 % bound.
    let cases = [
        (BloomFilter::with_rate(10_000, 0.01), 10_000, 2_000_000),
        (BloomFilter::with_rate(100_000, 0.01), 100_000, 2_000_000),
        (
            BloomFilter::with_rate(1_000_000, 0.01),
            1_000_000,
            2_000_000,
        ),
        (BloomFilter::with_rate(100_000, 0.001), 100_000, 10_000_000),
        // Explicit sizes, probe counts away from the optimum, bit counts that are not whole words.
        (BloomFilter::with_size(10_000, 4), 1_000, 2_000_000),
        (BloomFilter::with_size(1 << 20, 3), 100_000, 2_000_000),
        (BloomFilter::with_size(1_000_003, 10), 80_000, 4_000_000),
    ];
    for (mut filter, n, queries) in cases {
        for i in 0..n {
            filter.insert(&key(i));
        }
        let (m, k) = (filter.num_bits(), filter.num_probes());
        let theory = textbook_fpr(m, k, n);
        let measured = measured_fpr(|q| filter.contains(q), queries);
        let from_fill = filter.expected_fpr();
        println!(
            "m = {m}, k = {k}, n = {n}: measured {:.4} %, theory {:.4} %, from fill {:.4} %",
            measured * 100.0,
            theory * 100.0,
            from_fill * 100.0
        );
        assert!(
            (measured / theory - 1.0).abs() < 0.10,
            "m {m} k {k} n {n}: {measured} vs {theory}"
        );
        assert!(
            (from_fill / theory - 1.0).abs() < 0.05,
            "m {m} k {k} n {n}: {from_fill} vs {theory}"
        );
    }
}

#[test]
fn with_rate_delivers_the_planned_rate_at_capacity() {
    for (n, fpr) in [(50_000u64, 0.05), (50_000, 0.01), (20_000, 0.001)] {
        let mut filter = BloomFilter::with_rate(n as usize, fpr);
        for i in 0..n {
            filter.insert(&key(i));
        }
        // 10^4 expected false positives: 1 % sampling error.
        let measured = measured_fpr(|q| filter.contains(q), (10_000.0 / fpr) as u64);
        // Rounding m up to whole words and k to an integer changes the rate by under 1 %.
        assert!(
            (measured / fpr - 1.0).abs() < 0.08,
            "{n} at {fpr}: measured {measured}"
        );
    }
}

/// The two filters whose false-positive rates the core's `tests/fpr.rs` measures as StandardBloom blocks of their
/// sizes (against the textbook formula and their own fill, over 4·10^6 absent keys, to within 2 and 3.5 %) hold
/// exactly the bits of such a block of the same keys, so those measurements are theirs.
#[test]
fn filters_hold_the_bits_of_a_block_of_their_size() {
    const KEYS: u64 = 1_000_000;
    for (mut filter, size) in [
        (BloomFilter::with_rate(KEYS as usize, 0.01), (9_585_088, 7)),
        (BloomFilter::with_size(6_000_000, 3), (6_000_000, 3)),
    ] {
        assert_eq!((filter.num_bits(), filter.num_probes()), size);
        let mut builder =
            FilterBlockBuilder::new(Explicit(FilterPlan::StandardBloom(*filter.params())));
        for i in 0..KEYS {
            filter.insert(&key(i));
            builder.add_key(&key(i));
        }
        assert_eq!(BloomFilter::from_block(&builder.finish()).unwrap(), filter);
    }
}

#[test]
fn estimated_len_is_within_five_percent_up_to_the_planned_capacity() {
    for capacity in [1_000u64, 10_000, 100_000, 1_000_000] {
        let mut filter = BloomFilter::with_rate(capacity as usize, 0.01);
        let mut counting = CountingBloomFilter::with_rate(capacity as usize, 0.01);
        let checkpoints: Vec<u64> = [1, 10, 100, 1_000, 10_000, 100_000, 1_000_000]
            .into_iter()
            .filter(|&n| n < capacity)
            .chain([capacity / 3, capacity / 2, capacity])
            .collect();
        let mut inserted = 0;
        for n in checkpoints {
            while inserted < n {
                filter.insert(&key(inserted));
                counting.insert(&key(inserted));
                inserted += 1;
            }
            for (what, estimate) in [
                ("bloom", filter.estimated_len()),
                ("counting", counting.estimated_len()),
            ] {
                assert!(
                    (estimate / n as f64 - 1.0).abs() < 0.05,
                    "{what}, capacity {capacity}: {estimate} estimated for {n}"
                );
            }
        }
        // Duplicates do not count: the estimate is of distinct keys.
        let before = filter.clone();
        for i in 0..capacity / 10 {
            filter.insert(&key(i));
        }
        assert_eq!(filter, before);
    }
}

#[test]
fn counting_filter_removes_what_it_was_given() {
    let n = 20_000;
    let mut filter = CountingBloomFilter::with_rate(n as usize, 0.01);
    for i in 0..n {
        filter.insert(&key(i));
    }
    for i in (0..n).step_by(2) {
        assert!(filter.remove(&key(i)));
    }
    assert!(
        (1..n).step_by(2).all(|i| filter.contains(&key(i))),
        "a kept key was lost"
    );
    // The removed half is gone except for the usual false positives: the filter holds n/2 keys at its
    // planned size, so far fewer than 1 % remain.
    let lingering = (0..n)
        .step_by(2)
        .filter(|&i| filter.contains(&key(i)))
        .count();
    assert!(
        lingering < (n / 2 / 100) as usize,
        "{lingering} removed keys still reported"
    );
    assert!((filter.estimated_len() / (n / 2) as f64 - 1.0).abs() < 0.05);
    assert_eq!(filter.saturated_counters(), 0);
}

#[test]
fn scalable_filter_keeps_its_total_rate_under_the_target_across_growth() {
    const QUERIES: u64 = 1_000_000;
    for (growth, tightening) in [(2.0, 0.9), (4.0, 0.5), (2.0, 0.8)] {
        let target = 0.01;
        let mut filter = ScalableBloomFilter::with_growth(1_000, target, growth, tightening);
        let mut inserted = 0;
        for checkpoint in [500u64, 2_000, 8_000, 32_000, 128_000, 256_000] {
            while inserted < checkpoint {
                filter.insert(&key(inserted));
                inserted += 1;
            }
            let measured = measured_fpr(|q| filter.contains(q), QUERIES);
            let expected = filter.expected_fpr();
            println!(
                "s = {growth}, r = {tightening}, {inserted} keys, {} stages, {:.1} bits/key: measured {:.4} %, \
                 expected {:.4} %",
                filter.num_stages(),
                filter.memory_bytes() as f64 * 8.0 / inserted as f64,
                measured * 100.0,
                expected * 100.0
            );
            assert!(expected < target, "{inserted} keys: expected {expected}");
            assert!(measured < target, "{inserted} keys: measured {measured}");
            // The measurement agrees with the stages' fills (5 standard deviations of sampling error).
            let tolerance = 5.0 * (expected / QUERIES as f64).sqrt();
            assert!(
                (measured - expected).abs() < tolerance,
                "{measured} vs {expected}"
            );
            assert!((filter.estimated_len() / inserted as f64 - 1.0).abs() < 0.05);
        }
        assert!(filter.num_stages() >= 4, "{} stages", filter.num_stages());
        assert!((0..inserted).all(|i| filter.contains(&key(i))));
    }
}

#[test]
fn filters_can_be_shared_across_threads() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<BloomFilter>();
    assert_send_sync::<CountingBloomFilter>();
    assert_send_sync::<ScalableBloomFilter>();
}

#[test]
fn loading_a_filter_rejects_every_damaged_block() {
    // `BloomFilter::from_block` verifies the checksum: no truncation or bit flip yields a filter. An odd bit count
    // and an estimated key count.
    let mut filter = BloomFilter::with_size(1001, 5);
    for i in 0..120 {
        filter.insert(&key(i));
    }
    let block = filter.to_block();
    assert_eq!(BloomFilter::from_block(&block), Ok(filter));
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
