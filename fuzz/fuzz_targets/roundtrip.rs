//! Any key set, any constructor of any policy or filter with any parameters (`Recipe`, the list the core's property
//! test shares), with or without prefixes, partitioned or not: `Recipe::check` builds it, checks that a checked
//! constructor refuses exactly what its documentation excludes, and that no key is lost: every block reopened from
//! its bytes and verified finds every key by single and batched queries, by key and by hash; no scan over a prefix
//! of a key is answered "absent"; partitioned (the keys sorted, any partition size and cuts), every key is found
//! through the index and its partition; a Range block answers "may contain" for every range that holds a key; the
//! in-memory filters keep their keys (a counting filter after removing others); LevelDB's layout finds its keys.
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use sstfilter_recipes::{Partitioning, Prefixes, Recipe};

#[derive(Arbitrary, Debug)]
struct Input {
    recipe: Recipe,
    prefixes: Option<Prefixes>,
    partitioning: Option<Partitioning>,
    keys: Vec<Vec<u8>>,
}

fuzz_target!(|input: Input| {
    // `None`: the constructor refused, as its documentation says it does; there is nothing to lose.
    let _ = input
        .recipe
        .check(&input.keys, input.prefixes, input.partitioning);
});
