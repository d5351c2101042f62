//! No false negatives for the LevelDB-layout policies at every bits-per-key setting worth sweeping, built through
//! the one list of constructors (`Recipe`, `crates/recipes`), which the core's property test and the fuzzers draw
//! from too: `Recipe::check` builds one filter of every key and a LevelDB filter block over them, and checks that
//! every key is found and that a checked constructor refuses exactly what its documentation excludes.

use sstfilter_recipes::{BitsPerKey, Recipe};

fn keys(n: usize, salt: &str) -> Vec<Vec<u8>> {
    (0..n)
        .map(|i| format!("{salt}:{i:08}").into_bytes())
        .collect()
}

#[test]
fn leveldb_layout_policies_at_their_extreme_bits_per_key() {
    let keys = keys(700, "ldb");
    for bits_per_key in [0u8, 1, 2, 3, 10, 43, 44, 45, 99, 100] {
        let recipe = Recipe::LevelDbBloomPolicy(bits_per_key);
        assert!(recipe.check(&keys, None, None).is_some(), "{recipe:?}");
    }
    assert_eq!(
        Recipe::LevelDbBloomPolicy(101).check(&keys, None, None),
        None
    );
    for tenths in (10..=1000u32).step_by(7) {
        let recipe = Recipe::Bloom64Policy(BitsPerKey::Exactly(f64::from(tenths) / 10.0));
        assert!(recipe.check(&keys, None, None).is_some(), "{recipe:?}");
    }
}
