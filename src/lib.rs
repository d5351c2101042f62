//! # sstfilter
//!
//! The filter component of an LSM storage engine. A table builder feeds it every key of an SSTable; it writes
//! checksummed, self-describing filter blocks; at read time the store asks "may this table hold this key, a key
//! with this prefix, a key in this range?" and skips the disk or object-store read when the answer is no.
//!
//! The one promise that outranks everything: **no false negatives**. A key that was added is never answered
//! "absent", on any input, platform, version, configuration or error path. Bytes are verified (structure and CRC32)
//! before they may answer "absent"; bytes that do not verify, a partition that does not load, a question a filter
//! cannot answer all answer "may contain", with the reason. Settings a filter could not honour are refused where
//! they are made, with a [`UsageError`].
//!
//! ## A table's filter
//!
//! One options value says what a table's filter holds; one builder takes the table's keys in order; one reader
//! answers every question:
//!
//! ```
//! use std::ops::Bound::{Excluded, Included};
//! use std::sync::Arc;
//! use sstfilter::{
//!     Answer, BlockedBloomPolicy, DelimitedPrefix, NoPartitions, RangePolicy, TableFilter, TableFilterBuilder,
//!     TableFilterOptions,
//! };
//!
//! let tenants = Arc::new(DelimitedPrefix::new(b'/')); // "t7/", "t42/", ...
//! let options = TableFilterOptions::new()
//!     .point(BlockedBloomPolicy::new(10.0)) // point lookups, at 10 bits per key
//!     .prefixes(tenants.clone(), true) // prefix scans of a tenant, whole keys kept
//!     .range(RangePolicy::new(1 << 10, 0.01)); // range scans of up to 1024 ids, at most 1 % false positives
//!
//! // Writing a table: every key once, in table order.
//! let mut builder = TableFilterBuilder::new(&options)?;
//! for tenant in 0..7 {
//!     for id in 0..1000 {
//!         builder.add_key(format!("t{tenant}/{:08}", id * 10).as_bytes())?; // "t0/00000000", "t0/00000010", ...
//!     }
//! }
//! let blocks = builder.finish()?;
//! // Store the blocks where the table keeps blocks, and record where the point and range blocks went.
//! let mut file: Vec<Vec<u8>> = Vec::new();
//! let at = blocks.write(|_part, bytes| -> Result<u64, std::io::Error> {
//!     file.push(bytes.to_vec());
//!     Ok(file.len() as u64 - 1)
//! })?;
//! let block = |location: Option<sstfilter::BlockLocation>| location.map(|l| &file[l.position as usize][..]);
//!
//! // Reading: open once, where the blocks enter the cache (verified), then ask.
//! let filter = TableFilter::open(block(at.point), block(at.range));
//! assert!(filter.may_contain(b"t3/00000030", &NoPartitions).may_contain()); // a key of the table
//! assert_eq!(filter.may_contain_scan(Some(tenants.as_ref()), b"t9/", &NoPartitions), Answer::Absent);
//! let empty = filter.may_contain_range(Included(&b"t3/00000031"[..]), Excluded(&b"t3/00000040"[..]), &NoPartitions);
//! assert!(empty == Answer::Absent || empty == Answer::MayContain); // absent, but for 1 % false positives
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Every combination works, and every one answers through the same [`TableFilter`] (a question a combination
//! cannot answer is [`Answer::Unfiltered`], with the reason, never "absent"):
//!
//! ```
//! use std::ops::Bound::{Excluded, Included};
//! use std::sync::Arc;
//! use sstfilter::{
//!     Answer, BlockedBloomPolicy, FixedPrefix, Loaded, Partition, PartitionCuts, PartitionLoader, RangePolicy,
//!     RibbonPolicy, TableFilter, TableFilterBuilder, TableFilterOptions,
//! };
//!
//! /// The blocks a store wrote, by position; partitions are loaded from here.
//! struct File(Vec<Vec<u8>>);
//! impl PartitionLoader for File {
//!     type Block<'a> = &'a [u8];
//!     type Error = std::io::Error;
//!     fn load(&self, p: &Partition) -> std::io::Result<Loaded<&[u8]>> {
//!         Ok(Loaded::Bytes(&self.0[p.offset as usize])) // verified by the filter on every load
//!     }
//! }
//!
//! let keys: Vec<Vec<u8>> = (0..5000u32).map(|i| format!("user{:02}:{:06}", i / 100, i * 3).into_bytes()).collect();
//! let users = Arc::new(FixedPrefix::new(6)); // "user07"
//! let bloom = || TableFilterOptions::new().point(BlockedBloomPolicy::new(10.0));
//! let range = RangePolicy::new(1 << 8, 0.01);
//! let combinations = [
//!     ("point", bloom()),
//!     ("point + prefixes", bloom().prefixes(users.clone(), true)),
//!     ("prefixes only", bloom().prefixes(users.clone(), false)),
//!     ("point + range", TableFilterOptions::new().point(RibbonPolicy::with_fpr(0.01)).range(range)),
//!     ("range alone", TableFilterOptions::new().range(range)),
//!     ("prefixes + range", bloom().prefixes(users.clone(), false).range(range)),
//!     ("partitioned", bloom().partitioned(1024, PartitionCuts::Anywhere)),
//!     ("partitioned + prefixes", bloom().prefixes(users.clone(), true).partitioned_by_default()),
//!     ("partitioned + range", bloom().range(range).partitioned(1024, PartitionCuts::Anywhere)),
//!     ("partitioned + prefixes + range", bloom().prefixes(users.clone(), true).range(range).partitioned_by_default()),
//! ];
//! for (name, options) in combinations {
//!     let mut builder = TableFilterBuilder::new(&options)?;
//!     for key in &keys {
//!         builder.add_key(key)?;
//!     }
//!     let mut file = File(Vec::new());
//!     let at = builder.finish()?.write(|_, bytes| -> std::io::Result<u64> {
//!         file.0.push(bytes.to_vec());
//!         Ok(file.0.len() as u64 - 1)
//!     })?;
//!     let block = |l: Option<sstfilter::BlockLocation>| l.map(|l| file.0[l.position as usize].clone());
//!     let filter = TableFilter::open(block(at.point), block(at.range));
//!     for key in &keys {
//!         assert!(filter.may_contain(key, &file).may_contain(), "{name}"); // never a lost key
//!         assert!(filter.may_contain_scan(Some(users.as_ref()), &key[..6], &file).may_contain(), "{name}");
//!         assert!(filter.may_contain_range(Included(&key[..]), Included(&key[..]), &file).may_contain(), "{name}");
//!     }
//!     // No such user; no id between 301 and 303 (the ids are multiples of 3).
//!     let scan = filter.may_contain_scan(Some(users.as_ref()), b"user99", &file);
//!     let ids = filter.may_contain_range(Included(&b"user03:000301"[..]), Excluded(&b"user03:000303"[..]), &file);
//!     let (prefixes, ranges) = (options.prefix_extractor().is_some(), name.contains("range"));
//!     assert_eq!(scan == Answer::Absent, prefixes || ranges, "{name}: {scan:?}");
//!     assert_eq!(ids == Answer::Absent, ranges, "{name}: {ids:?}"); // 1 % of such ranges may answer MayContain
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! A reader that serves many tables hashes a key once ([`KeyProbe`]) and asks every table with it; [`FilterStats`]
//! ([`TableFilter::with_stats`]) counts every answer, the reads avoided and the filters that could not be used.
//! Keys sorted by a comparator that is not bytewise take [`TableFilterOptions::any_key_order`] (point filters
//! only). FORMAT.md section 9 says how the blocks relate; `sstfilter-table` is a complete table built on this.
//!
//! ## Point filters
//!
//! Three kinds, chosen by policy at write time and read from the block at read time: [`BlockedBloomPolicy`] builds
//! cache-local blocked Bloom filters (one cache line per query, fastest to build and query); [`RibbonPolicy`]
//! builds Ribbon filters, about 30 % smaller at the same false-positive rate, for more build and query time;
//! [`StandardBloomPolicy`] builds the textbook Bloom filter. A reader opens any of them without configuration.
//!
//! ## Prefix filters
//!
//! A prefix scan (every key of a tenant, a user, a directory) reads every table whose key range covers the prefix,
//! unless the filter also holds prefixes, as RocksDB's `prefix_extractor` and SlateDB's prefix filters do. A
//! [`PrefixExtractor`] says which prefix of a key is stored ([`FixedPrefix`], [`DelimitedPrefix`],
//! [`CappedPrefix`], or your own); the builder adds it once per run of equal prefixes, beside the whole key or
//! instead of it. The extractor's name is recorded in the block (FORMAT.md, section 2.1), so a reader that asks with
//! another extractor gets [`Unfiltered::OtherExtractor`], never "absent": the bytes say what they hold. A scan
//! prefix shorter than the extracted prefix cannot be answered and reads the table; a longer one probes its
//! extracted part.
//!
//! ## Range filters and projected values
//!
//! A range filter ([`RangePolicy`], a [`FilterKind::Range`] block) answers "may any key lie between these
//! bounds?", which no point filter can. Its design is Grafite (Costa, Ferragina & Vinciguerra, SIGMOD 2024): its
//! rate bound holds for every query, whatever the keys and queries. It works on integers, so it **projects** each
//! key: it takes the keys' common prefix, then reads the (up to 16) bytes after it as the digits of a number whose
//! digit at each position is the rank of the byte among the byte values the keys have there. The projection keeps
//! order, and only byte values that occur take room: consecutive decimal ids (`"000417"`, `"000418"`) project to
//! consecutive integers, so a range of 1000 ids is 1000 **projected values** long. A policy's `L` (the longest range
//! that keeps its rate) and the rate `ε · ℓ / L` of an empty range of `ℓ` values are in projected values. Where a
//! position's byte values miss only a few of the 256 (the leading bytes of binary keys), the writer gives it all 256
//! when that lets queries read the bytes from there on as one word and adds at most a 32nd of `ε` to the rate of
//! ranges of up to `L` starting at random (a range that crosses a missing value there is longer in projected
//! values, so more often "may contain").
//!
//! Keys it serves poorly: keys that differ only past the projected positions (16 bytes after the common prefix,
//! fewer when many byte values occur: 8 for random binary keys) project to one value, so the filter cannot tell
//! them, or ranges between them, apart; a range whose ends differ in an early position is long in projected space,
//! at a higher rate (every length is checked: `ε · ℓ / L` holds for `ℓ` above `L` too, up to certain "may contain"
//! when `ℓ` nears `L / ε`). An excluded lower bound is used as excluded when no key is longer after the common prefix
//! than the projected positions (keys of one length, such as big-endian integers, fixed-width ids): then
//! "the keys after `k`" does not answer "may contain" for `k` itself.
//!
//! ## Partitioned filters
//!
//! A big table's filter need not be resident all at once: [`TableFilterOptions::partitioned`] (or, low-level,
//! [`PartitionedFilterBuilder`]) cuts the point filter into partitions of a few KiB, each an ordinary filter
//! block, plus a small **partition index** naming each partition's last key and location (FORMAT.md, section 8).
//! The store pins the index (tens of bytes per partition; [`PartitionedFilter::with_search_heads`] adds 12 to 20 a
//! partition for a faster search) and loads the partition a question needs through its own cache, a
//! [`PartitionLoader`]: plain bytes, which the filter verifies on every load, or a [`VerifiedPartition`], which
//! only [`PartitionedFilter::verify_partition`] makes, so a cache verifies each partition once, as it enters; a
//! cache that holds it can instead have the question asked in place ([`PartitionLoader::ask_in_place`]), with
//! nothing copied. A key past the last separator is absent without a load; a partition that fails to load, verify
//! or match its entry answers "may contain". The range filter stays one block per table.
//!
//! ## Low-level blocks
//!
//! Underneath the table filter, each block has its own builder and reader, public for engines that assemble their
//! own: [`FilterBlockBuilder`] and [`FilterBlock`] (one point block, optionally with prefixes),
//! [`RangeFilterBuilder`], [`PartitionedFilterBuilder`] and [`PartitionedFilter`].
//!
//! ```
//! use sstfilter::{BlockedBloomPolicy, FilterBlock, FilterBlockBuilder};
//!
//! let mut builder = FilterBlockBuilder::new(BlockedBloomPolicy::new(10.0));
//! for key in [&b"apple"[..], b"banana", b"cherry"] {
//!     builder.add_key(key); // any order
//! }
//! let bytes: Vec<u8> = builder.finish();
//! let filter = FilterBlock::open(&bytes[..])?; // verifies the structure and the CRC32
//! assert!(filter.may_contain(b"banana"));
//! # Ok::<(), sstfilter::Error>(())
//! ```
//!
//! The byte layout is specified in FORMAT.md; ARCHITECTURE.md describes the layers and where new ones go.
//! [`sizing`] sizes filters from the formulas, for capacity planning.
//!
//! [`leveldb`] reads and writes LevelDB's own filter bytes (its Bloom filter and filter block) for LevelDB-format
//! tables, and [`rocksdb`] RocksDB's (all its filters read, FastLocalBloom and Standard128Ribbon written, an SST
//! file's filter found) for tables RocksDB writes or reads.
//!
//! Beside this crate (two dependencies, no features): `sstfilter-table`, the worked example of a table file built
//! on the table filter; `sstfilter-slatedb` and `sstfilter-rusty-leveldb`, which plug it into those stores;
//! `sstfilter-memory`, the classic in-memory filters (`BloomFilter`, `CountingBloomFilter`,
//! `ScalableBloomFilter`) for sets inserted into while a program runs, whose `BloomFilter` serialises into a
//! StandardBloom block; and `sstfilter-cli`, the `sstfilter` command-line tool (`demo`, `inspect`, `calc`).

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
pub mod leveldb;
mod math;
mod order;
mod partitioned;
mod policy;
mod prefetch;
mod prefix;
mod reader;
pub mod rocksdb;
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
pub use kind::range::builder::RangeFilterBuilder;
pub use kind::range::policy::RangePolicy;
pub use kind::range::{KeyRange, RangeParams};
pub use kind::ribbon::policy::RibbonPolicy;
pub use kind::ribbon::{RibbonParams, RibbonPlan};
pub use kind::standard_bloom::StandardBloomParams;
pub use kind::standard_bloom::policy::StandardBloomPolicy;
pub use partitioned::{
    DEFAULT_PARTITION_BYTES, Loaded, MAX_PARTITION_BYTES, Partition, PartitionAnswer,
    PartitionCuts, PartitionError, PartitionLoader, PartitionQuestion, PartitionedFilter,
    PartitionedFilterBuilder, Partitions, VerifiedPartition,
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
