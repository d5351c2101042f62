//! Workspace-internal: **the one list of constructors**, shared by the core's property test
//! (`tests/no_false_negatives.rs`, which draws recipes from proptest's bytes through
//! `arbitrary::Unstructured`) and the fuzzers (`fuzz/`, which draw them from libFuzzer's).
//!
//! * [`Recipe`]: every constructor of every policy and filter the public API offers, with its parameters
//!   ([`values`]: mostly inside the documented ranges, sometimes past them), and [`Recipe::construct`], which
//!   checks that a checked (`try_`) constructor refuses exactly what its documentation excludes.
//! * [`Prefixes`] and [`Partitioning`]: the builders' other options.
//! * [`TableRecipe`]: a table filter in any combination of its options, and [`TableRecipe::check`].
//! * [`Recipe::check`]: builds keys and checks that none is lost through any path the filter has; the
//!   `assert_*` functions it is made of, for tests that build in other ways.
//!
//! A new policy, constructor or parameter goes into [`Recipe`]; a new prefix extractor into [`Extractor`].

mod check;
mod options;
mod recipe;
mod table;
pub mod values;

pub use check::{
    adjacent_distinct_hashes, assert_finds_all, assert_leveldb_finds_all,
    assert_range_questions_find_all, assert_scans_find_all, range_block,
};
pub use options::{ByOffset, Extractor, NamedCapped, Partitioning, Prefixes};
pub use recipe::{
    Constructed, Documented, Explicit, LevelDbPolicy, RangeRecipe, Recipe, SharedPolicy, checked,
    documented_bits, documented_bloom_rate, documented_range, documented_range_bits,
    documented_rate, documented_ribbon_rate, documented_scalable, documented_size,
};
pub use table::TableRecipe;
pub use values::{BitsPerKey, Length, Overhead, Rate};
