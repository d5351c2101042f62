//! Any table filter (`TableRecipe`: a point filter of any recipe or none, prefixes, a range filter, partitions,
//! keys in any order, in every combination) over any keys: `TableRecipe::check` builds it through
//! `TableFilterBuilder`, checks that the builder refuses exactly the documented combinations and keys, stores the
//! blocks, and checks through `TableFilter` that no key, no scan over a key's prefix and no range holding a key is
//! answered "absent", with the blocks intact and with each damaged.
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use sstfilter_recipes::TableRecipe;

#[derive(Arbitrary, Debug)]
struct Input {
    recipe: TableRecipe,
    keys: Vec<Vec<u8>>,
}

fuzz_target!(|input: Input| {
    // `None`: the builder refused the options or a key, where its documentation says it does.
    let _ = input.recipe.check(&input.keys);
});
