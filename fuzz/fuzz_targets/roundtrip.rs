//! Any key set, any constructor of any policy or in-memory filter with any parameters (`Recipe`): built,
//! reopened from its bytes and verified, every key is found, by single and batched queries alike.
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
    let blocks = input.recipe.build(&input.keys);
    let filters: Vec<FilterBlock<&[u8]>> = blocks
        .iter()
        .map(|b| {
            FilterBlock::open_verified(&b[..]).expect("a freshly built block opens and verifies")
        })
        .collect();
    let mut found = vec![false; input.keys.len()];
    let mut answers = vec![false; input.keys.len()];
    for filter in &filters {
        filter.may_contain_batch(&input.keys, &mut answers);
        for ((key, found), &batch) in input.keys.iter().zip(&mut found).zip(&answers) {
            let single = filter.may_contain(key);
            assert_eq!(
                single, batch,
                "batch and single answers differ with {:?}",
                input.recipe
            );
            *found |= single;
        }
    }
    for (key, found) in input.keys.iter().zip(&found) {
        assert!(found, "lost key {key:?} with {:?}", input.recipe);
    }
});
