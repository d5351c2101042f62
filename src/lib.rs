//! # sstfilter
//!
//! The filter-block component of an LSM storage engine. A table builder feeds it every key of an SSTable; it
//! writes one checksummed, self-describing filter block; at read time the store asks "may this key be in this
//! table?" and skips the disk or object-store read when the answer is no.
//!
//! ```text
//! key ─ key_hash (xxh3-64, pinned) ─▶ FilterBlockBuilder (collects u64 hashes, drops adjacent duplicates)
//!     ─ finish: the policy picks kind + parameters from the real key count ─▶ payload ‖ trailer (CRC32)
//! block bytes (&[u8], Vec, Bytes, mmap) ─ FilterBlock::open (O(1), validates) ─▶ may_contain / batch ─▶ bool
//! ```
//!
//! The one promise that outranks everything: **no false negatives**. A key that was added is reported as
//! possibly present on every input, platform and version. A block that is corrupt, unknown or from a newer
//! version makes [`FilterBlock::open`] or [`FilterBlock::verify`] return a typed [`Error`]; the storage engine
//! should then treat the table as "may contain" (and count it).
//!
//! ```
//! use sstfilter::{FastBloomPolicy, FilterBlock, FilterBlockBuilder};
//!
//! let mut builder = FilterBlockBuilder::new(FastBloomPolicy::new(10.0));
//! for key in [&b"apple"[..], b"banana", b"cherry"] {
//!     builder.add_key(key);
//! }
//! let bytes: Vec<u8> = builder.finish();
//!
//! let filter = FilterBlock::open(&bytes[..])?;
//! filter.verify()?;
//! assert!(filter.may_contain(b"banana"));
//! if !filter.may_contain(b"durian") {
//!     // skip the disk read
//! }
//! # Ok::<(), sstfilter::Error>(())
//! ```
//!
//! Two kinds: [`FastBloomPolicy`] builds cache-local blocked Bloom filters (fast to build and query);
//! [`RibbonPolicy`] builds Ribbon filters, about 30 % smaller at the same false-positive rate, for more build and
//! query time. A reader opens either without configuration.
//!
//! The byte layout is specified in FORMAT.md; every layer (hash, kinds, policy, container, builder, reader) has
//! its own module.
//!
//! [`table`] is a reference SST table built on top: the worked example of embedding the filter block in a table
//! file and skipping data-block reads with it. The `sstfilter` binary (cargo feature `cli`, on by default)
//! demonstrates it (`sstfilter demo`), explains block files (`sstfilter inspect`) and sizes filters
//! (`sstfilter calc`).
//!
//! The crate also has the classic in-memory filters — [`BloomFilter`], [`CountingBloomFilter`] and
//! [`ScalableBloomFilter`] (module [`memory`]) — for sets that are inserted into and queried while a program
//! runs, such as a crawler's seen-URL set; a `BloomFilter` serialises into a StandardBloom block.
//!
//! [`leveldb`] reads and writes LevelDB's own filter bytes (its Bloom filter and filter block) for LevelDB-format
//! tables; `adapters` (cargo features `slatedb`, `rusty-leveldb`) plugs our policies into those stores.

#![deny(missing_docs)]
#![warn(unreachable_pub)]
// The decoding paths must not be able to panic on untrusted bytes; exceptions carry a reason.
#![cfg_attr(
    not(test),
    deny(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::indexing_slicing,
        clippy::panic
    )
)]

#[cfg(any(feature = "slatedb", feature = "rusty-leveldb"))]
pub mod adapters;
mod builder;
mod error;
mod format;
mod hash;
pub mod kind;
mod le;
pub mod leveldb;
pub mod math;
pub mod memory;
mod policy;
mod reader;
pub mod sizing;
pub mod table;

pub use builder::FilterBlockBuilder;
pub use error::{Error, Result};
pub use format::{FORMAT_VERSION, FilterKind, MAGIC, PARAMS_LEN, TRAILER_LEN};
pub use hash::{KeyHash, key_hash};
pub use kind::KindParams;
pub use kind::fast_bloom::FastBloomParams;
pub use kind::ribbon::{RibbonParams, RibbonPlan, RibbonPolicy};
pub use kind::standard_bloom::StandardBloomParams;
pub use memory::{BloomFilter, CountingBloomFilter, ScalableBloomFilter};
pub use policy::StandardBloomPolicy;
pub use policy::{FastBloomPolicy, FilterPlan, FilterPolicy};
pub use reader::FilterBlock;

// The README's examples are compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
