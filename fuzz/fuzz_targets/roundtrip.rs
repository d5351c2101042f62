//! Any key set, any kind, any bits/key: built, reopened from its bytes and verified, every key is found.
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use sstfilter::FilterBlock;
use sstfilter_fuzz::Recipe;

#[derive(Arbitrary, Debug)]
struct Input {
    recipe: Recipe,
    keys: Vec<Vec<u8>>,
}

fuzz_target!(|input: Input| {
    let block = input.recipe.build(&input.keys);
    let filter =
        FilterBlock::open_verified(&block[..]).expect("a freshly built block opens and verifies");
    for key in &input.keys {
        assert!(
            filter.may_contain(key),
            "lost key {key:?} with {:?}",
            input.recipe
        );
    }
    let mut answers = vec![false; input.keys.len()];
    filter.may_contain_batch(&input.keys, &mut answers);
    assert!(
        answers.iter().all(|&a| a),
        "batch lost a key with {:?}",
        input.recipe
    );
});
