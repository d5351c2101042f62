#![doc = include_str!("../README.md")]
#![deny(missing_docs)]
// `unsafe` is denied everywhere but in `prefetch`, whose prefetch instructions have no safe form on stable Rust, in
// `cpu`, whose calls of code compiled for `popcnt` (after asking the CPU) have none either, and in BlockedBloom's
// `avx2`, whose calls of its queries compiled for AVX2 (after asking the CPU) have none.
#![deny(unsafe_code)]
#![warn(unreachable_pub)]
// The decoding paths must not be able to panic on untrusted bytes. Each exception is one
// `#[expect(lint, reason = "...")]` at the item it covers (an `allow` only where the lint fires in some builds and
// not others, with its reason too).
#![cfg_attr(
    not(test),
    deny(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::indexing_slicing,
        clippy::panic
    )
)]

mod aligned;
mod answer;
mod builder;
mod cpu;
mod error;
mod format;
mod hash;
mod kind;
mod le;
mod math;
mod order;
mod partitioned;
mod policy;
mod prefetch;
mod prefix;
mod reader;
pub mod sizing;
mod stats;
mod table_filter;
mod tag;

pub use aligned::AlignedBlock;
pub use answer::{Answer, Reason};
pub use builder::FilterBlockBuilder;
pub use error::{Error, Result, UsageError};
pub use format::{FORMAT_VERSION, MAX_PREFIX_NAME_LEN, STORE_POLICY_NAME, TRAILER_LEN};
pub use hash::{KeyHash, key_hash};
pub use kind::KindParams;
pub use kind::blocked_bloom::BlockedBloomParams;
pub use kind::blocked_bloom::policy::BlockedBloomPolicy;
pub use kind::range::builder::RangeFilterBuilder;
pub use kind::range::policy::RangePolicy;
pub use kind::range::{KeyRange, RangeParams};
pub use kind::ribbon::policy::RibbonPolicy;
pub use kind::ribbon::{RibbonParams, RibbonPlan};
pub use kind::standard_bloom::StandardBloomParams;
pub use kind::standard_bloom::policy::StandardBloomPolicy;
pub use partitioned::{
    DEFAULT_PARTITION_BYTES, MAX_PARTITION_BYTES, Partition, PartitionCuts, PartitionLoader,
    PartitionQuestion, PartitionedFilter, PartitionedFilterBuilder, Partitions, VerifiedPartition,
};
pub use policy::{FilterPlan, FilterPolicy, MAX_BITS_PER_KEY};
pub use prefix::{
    CappedPrefix, DelimitedPrefix, FixedPrefix, PrefixExtractor, check_prefix_extractor,
};
pub use reader::FilterBlock;
pub use stats::{FilterCounts, FilterStats};
pub use table_filter::{
    BlockLocation, KeyProbe, NoPartitions, PointFilter, TableFilter, TableFilterBlocks,
    TableFilterBuilder, TableFilterLocations, TableFilterOptions, TableFilterPart,
};
pub use tag::FilterKind;
