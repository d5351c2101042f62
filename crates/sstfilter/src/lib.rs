//! # sstfilter
//!
//! The filter-block component of an LSM storage engine. A table builder feeds it every key of an SSTable; it
//! writes one checksummed, self-describing filter block; at read time the store asks "may this key be in this
//! table?" and skips the disk or object-store read when the answer is no.
//!
//! ```text
//! key ─ key_hash (xxh3-64, pinned) ─▶ FilterBlockBuilder (collects u64 hashes, drops adjacent duplicates)
//!     ─ finish: the policy picks kind + parameters from the real key count ─▶ payload ‖ trailer (CRC32)
//! block bytes (&[u8], Vec, Bytes, mmap) ─ FilterBlock::open (validates, CRC32) ─▶ may_contain / batch ─▶ bool
//! ```
//!
//! The one promise that outranks everything: **no false negatives**. A key that was added is reported as
//! possibly present on every input, platform and version. [`FilterBlock::open`] checks a block's structure and its
//! CRC32 before it may answer "absent"; a block that is corrupt, unknown or from a newer version makes it return a
//! typed [`Error`], and the storage engine should then treat the table as "may contain" (and count it). Settings a
//! filter could not honour are refused where they are made: every constructor that takes a number has a `try_`
//! form returning a [`UsageError`].
//!
//! ```
//! use sstfilter::{BlockedBloomPolicy, FilterBlock, FilterBlockBuilder};
//!
//! let mut builder = FilterBlockBuilder::new(BlockedBloomPolicy::new(10.0));
//! for key in [&b"apple"[..], b"banana", b"cherry"] {
//!     builder.add_key(key);
//! }
//! let bytes: Vec<u8> = builder.finish();
//!
//! let filter = FilterBlock::open(&bytes[..])?; // once, where the block enters the cache
//! assert!(filter.may_contain(b"banana"));
//! if !filter.may_contain(b"durian") {
//!     // skip the disk read
//! }
//! # Ok::<(), sstfilter::Error>(())
//! ```
//!
//! Three point-filter kinds, chosen by policy at write time and read from the block at read time:
//! [`BlockedBloomPolicy`] builds cache-local blocked Bloom filters (one cache line per query, fastest to build and
//! query); [`RibbonPolicy`] builds Ribbon filters, about 30 % smaller at the same false-positive rate, for more
//! build and query time; [`StandardBloomPolicy`] builds the textbook Bloom filter. A reader opens any of them
//! without configuration. [`FilterStats`] keeps the counts an operator reads the filters' value from.
//!
//! A **range filter** answers a range scan's question, "may any key lie between these bounds?", which no point
//! filter can: [`RangeFilterBuilder`] takes a table's sorted keys and a [`RangePolicy`] (the longest range and
//! the rate it keeps) and writes a [`FilterKind::Range`] block, which [`FilterBlock::may_contain_range`] asks
//! (and [`FilterBlock::may_contain`], for point lookups). A table may carry it beside a point filter.
//!
//! A big table can carry a **partitioned filter** instead: [`PartitionedFilterBuilder`] cuts its keys into
//! partitions of a few KiB, each an ordinary filter block, and a small index; [`PartitionedFilter`] keeps the
//! index and loads the one partition a lookup needs through the store's cache (a [`PartitionLoader`]).
//!
//! The byte layout is specified in FORMAT.md; ARCHITECTURE.md describes the layers (hash, kinds, policies,
//! container, builder, reader) and where new ones go. [`sizing`] sizes filters from the formulas, for capacity
//! planning.
//!
//! The crate also has the classic in-memory filters — [`BloomFilter`], [`CountingBloomFilter`] and
//! [`ScalableBloomFilter`] — for sets that are inserted into and queried while a program runs, such as a
//! crawler's seen-URL set; a `BloomFilter` serialises into a StandardBloom block.
//!
//! [`leveldb`] reads and writes LevelDB's own filter bytes (its Bloom filter and filter block) for LevelDB-format
//! tables.
//!
//! Beside this crate (two dependencies, no features): `sstfilter-table`, the worked example of a table file that
//! embeds a filter block and skips data-block reads with it; `sstfilter-slatedb` and `sstfilter-rusty-leveldb`,
//! which plug these policies into those stores; and `sstfilter-cli`, the `sstfilter` command-line tool (`demo`,
//! `inspect`, `calc`).

#![deny(missing_docs)]
// `unsafe` is denied everywhere but in `prefetch`, whose prefetch instructions have no safe form on stable Rust.
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
mod error;
mod format;
mod hash;
mod kind;
mod le;
pub mod leveldb;
mod math;
mod memory;
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
pub use answer::{Answer, Unfiltered};
pub use builder::FilterBlockBuilder;
pub use error::{Error, Result, UsageError};
pub use format::{FORMAT_VERSION, MAX_PREFIX_NAME_LEN, STORE_POLICY_NAME, TRAILER_LEN};
pub use hash::{KeyHash, key_hash};
pub use kind::KindParams;
pub use kind::blocked_bloom::BlockedBloomParams;
pub use kind::blocked_bloom::policy::BlockedBloomPolicy;
pub use kind::range::RangeParams;
pub use kind::range::builder::RangeFilterBuilder;
pub use kind::range::policy::RangePolicy;
pub use kind::ribbon::policy::RibbonPolicy;
pub use kind::ribbon::{RibbonParams, RibbonPlan};
pub use kind::standard_bloom::StandardBloomParams;
pub use kind::standard_bloom::policy::StandardBloomPolicy;
pub use memory::{BloomFilter, CountingBloomFilter, ScalableBloomFilter};
pub use partitioned::{
    DEFAULT_PARTITION_BYTES, Loaded, MAX_PARTITION_BYTES, Partition, PartitionAnswer,
    PartitionCuts, PartitionError, PartitionLoader, PartitionedFilter, PartitionedFilterBuilder,
    Partitions, VerifiedPartition,
};
pub use policy::{FilterPlan, FilterPolicy, MAX_BITS_PER_KEY};
pub use prefix::{
    CappedPrefix, DelimitedPrefix, FixedPrefix, PrefixExtractor, PrefixProbe,
    check_prefix_extractor,
};
pub use reader::FilterBlock;
pub use stats::{FilterCounts, FilterStats};
pub use table_filter::{
    BlockLocation, KeyProbe, MAX_PARTITIONS_PER_QUESTION, NoPartitions, PointFilter, SharedPolicy,
    TableFilter, TableFilterBlocks, TableFilterBuilder, TableFilterLocations, TableFilterOptions,
    TableFilterPart,
};
pub use tag::FilterKind;
