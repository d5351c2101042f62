//! No false negatives over the filters' configuration space: every rate and probe count of `BloomFilter`'s
//! constructors through the shared list of constructors (`Recipe`, `crates/recipes`, whose check also reopens each
//! filter's block and loads it back), counting filters with removals interleaved, and scalable filters across many
//! stages. A configuration that loses a key fails with its name. (The core's property test draws these recipes
//! too, and reads their blocks with the reader written from FORMAT.md.)

use sstfilter::FilterBlock;
use sstfilter_memory::{BloomFilter, CountingBloomFilter, ScalableBloomFilter};
use sstfilter_recipes::{Rate, Recipe};

fn keys(n: usize, salt: &str) -> Vec<Vec<u8>> {
    (0..n)
        .map(|i| format!("{salt}:{i:08}").into_bytes())
        .collect()
}

/// Checks `recipe` on `keys` ([`Recipe::check`]), for a recipe its documentation accepts.
fn check_accepted(recipe: &Recipe, keys: &[Vec<u8>]) {
    assert!(
        recipe.check(keys, None, None).is_some(),
        "{recipe:?} refused"
    );
}

#[test]
fn bloom_filter_every_rate_and_probe_count() {
    let keys = keys(500, "mem");
    for quarter in 4..=160u32 {
        let rate = Rate::Exactly((-f64::from(quarter) / 4.0).exp2());
        for expected in [1u16, 100, 500, 5000] {
            check_accepted(&Recipe::BloomFilterWithRate { expected, rate }, &keys);
        }
    }
    for hashes in 1..=255u16 {
        for bits in [1u16, 64, 1001, 10_000] {
            check_accepted(&Recipe::BloomFilterWithSize { bits, hashes }, &keys);
        }
    }
}

#[test]
fn counting_bloom_filter_keeps_every_key_not_removed() {
    let kept = keys(400, "kept");
    let gone = keys(400, "gone");
    for (what, mut filter) in [
        (
            "with_rate(800, 0.01)".to_owned(),
            CountingBloomFilter::with_rate(800, 0.01),
        ),
        (
            "with_rate(10, 0.5) (overloaded)".to_owned(),
            CountingBloomFilter::with_rate(10, 0.5),
        ),
        (
            "with_rate(800, 2^-40)".to_owned(),
            CountingBloomFilter::with_rate(800, 2f64.powi(-40)),
        ),
        (
            "with_size(64, 1) (saturating)".to_owned(),
            CountingBloomFilter::with_size(64, 1),
        ),
        (
            "with_size(5000, 255)".to_owned(),
            CountingBloomFilter::with_size(5000, 255),
        ),
    ] {
        for key in kept.iter().chain(&gone) {
            filter.insert(key);
        }
        // Interleave removals with insertions: every third removed key was inserted twice and is removed twice,
        // and every third kept key is inserted again (removing only what was inserted, as the filter requires).
        for (i, key) in gone.iter().enumerate() {
            if i % 3 == 0 {
                filter.insert(key);
                filter.insert(&kept[i]);
                filter.remove(key);
            }
            filter.remove(key);
        }
        for key in &kept {
            assert!(
                filter.contains(key),
                "{what}: lost {:?}",
                String::from_utf8_lossy(key)
            );
        }
        let as_bloom = filter.to_bloom_filter();
        assert!(
            kept.iter().all(|k| as_bloom.contains(k)),
            "{what}: to_bloom_filter lost a key"
        );
    }
}

#[test]
fn scalable_bloom_filter_across_many_stages() {
    let keys = keys(60_000, "scal");
    for (initial, rate, growth, tightening) in [
        (1usize, 0.5, 2.0, 0.9),
        (10, 0.01, 2.0, 0.9),
        (10, 2f64.powi(-30), 1.5, 0.5),
        (100, 0.001, 3.0, 0.8),
    ] {
        let what =
            format!("ScalableBloomFilter::with_growth({initial}, {rate}, {growth}, {tightening})");
        let mut filter = ScalableBloomFilter::with_growth(initial, rate, growth, tightening);
        for key in &keys {
            filter.insert(key);
        }
        assert!(
            filter.num_stages() >= 6,
            "{what}: only {} stages",
            filter.num_stages()
        );
        for key in &keys {
            assert!(
                filter.contains(key),
                "{what}: lost {:?}",
                String::from_utf8_lossy(key)
            );
        }
        // Each key is in one stage; serialised, the stages still find every key between them.
        let blocks: Vec<Vec<u8>> = filter.stages().map(BloomFilter::to_block).collect();
        let stages: Vec<FilterBlock<&[u8]>> = blocks
            .iter()
            .map(|b| FilterBlock::open(&b[..]).unwrap())
            .collect();
        for key in &keys {
            assert!(
                stages.iter().any(|s| s.may_contain(key)),
                "{what}: no stage block has {key:?}"
            );
        }
    }
    let mut default = ScalableBloomFilter::new(1, 0.01);
    for key in &keys {
        default.insert(key);
    }
    assert!(
        keys.iter().all(|k| default.contains(k)),
        "ScalableBloomFilter::new(1, 0.01) lost a key"
    );
}
