//! A reference SST table: the worked example of how a table builder embeds the filter block.
//!
//! This is a minimal LevelDB-style sorted string table, complete enough to measure what the filter saves on
//! real files: sorted key/value entries in ~4 KB data blocks, an index block with one entry per data block, the
//! sstfilter block as a meta block, and a fixed footer with the block handles. Every block is followed by a
//! CRC32 of its contents. The byte layout is specified in the repository's FORMAT.md (section 7).
//!
//! ```text
//!  +--------------+-----+----------------+--------------+-------------+----------+
//!  | data block 0 | ... | data block n-1 | filter block | index block |  footer  |
//!  |   ‖ CRC32    |     |    ‖ CRC32     |   ‖ CRC32    |   ‖ CRC32   | 56 bytes |
//!  +--------------+-----+----------------+--------------+-------------+----------+
//! ```
//!
//! How the filters are embedded, step by step (one [`TableFilterOptions`](sstfilter::TableFilterOptions) in
//! [`TableOptions::filters`] says which: a point filter, prefixes, a range filter, partitions):
//!
//! 1. **Build.** [`TableBuilder::add`] appends each entry to the current data block and passes the key to a
//!    [`TableFilterBuilder`](sstfilter::TableFilterBuilder) (8 bytes per key until `finish`). When a data block
//!    reaches the block size it is written, its last key and handle go into the index, and the filter builder is
//!    told (partitions may end there).
//! 2. **Finish.** [`TableBuilder::finish`] asks the filter builder for its blocks — sized from the real key
//!    count by the configured policies — and writes them after the data blocks, then the index and the footer
//!    that points at the point block (or partition index) and the range block.
//! 3. **Open.** [`Table::open`] reads the footer, the index and the filter blocks, checks their CRCs and opens
//!    them as one [`TableFilter`](sstfilter::TableFilter). A filter block that fails any check is not fatal: the
//!    table opens and treats every key as "may contain".
//! 4. **Lookup.** [`Table::get`] asks the filter first. "Absent" ends the lookup with no I/O; otherwise the
//!    index names the one data block that can hold the key, which is read with one positioned read.
//!    [`Table::stats`] counts filter checks, reads avoided, data-block reads and false positives.
//!
//! **Partitioned filters.** With [`TableFilterOptions::partitioned`](sstfilter::TableFilterOptions::partitioned) the
//! filter is written as partitions of a
//! few KiB (after the data blocks) and a partition index where the filter block goes (FORMAT.md, section 7.3).
//! [`Table::open`] then keeps only the index; a lookup loads the one partition it needs into a
//! [`PartitionCache`] (shareable by every table, bounded in bytes), verified as it enters, and
//! [`TableStats`] counts partition loads and cache hits. A damaged partition costs its lookups a data-block
//! read, never a key.
//!
//! An LSM lookup asks tables from newest to oldest until one holds the key; with a filter on every table, an
//! absent key costs about `FPR × tables` data-block reads instead of one per table. `sstfilter demo` measures
//! exactly that.
//!
//! ```
//! use sstfilter::key_hash;
//! use sstfilter_table::{Table, TableBuilder, TableOptions, TableStats};
//!
//! let dir = tempfile::tempdir()?;
//! let mut tables = Vec::new();
//! for t in 0..3u32 {
//!     let path = dir.path().join(format!("{t:06}.sst"));
//!     let mut builder = TableBuilder::create(&path, &TableOptions::default())?;
//!     for i in 0..1000u32 {
//!         let key = format!("usr:{:012}", i * 3 + t);
//!         builder.add(key.as_bytes(), b"v")?;
//!     }
//!     builder.finish()?;
//!     tables.push(Table::open(&path, &TableOptions::default())?);
//! }
//! // Newest table first; hash the key once for all of them.
//! let key = b"usr:000000000999";
//! let hash = key_hash(key);
//! let mut value = None;
//! for table in tables.iter().rev() {
//!     if let Some(v) = table.get_with_hash(key, hash)? {
//!         value = Some(v);
//!         break;
//!     }
//! }
//! assert_eq!(value.as_deref(), Some(&b"v"[..]));
//! let mut total = TableStats::default();
//! for table in &tables {
//!     total += table.stats();
//! }
//! assert!(total.data_block_reads >= 1);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

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

mod block;
mod builder;
mod cache;
mod error;
mod format;
mod le;
mod read_at;
mod reader;
mod stats;

pub use builder::{
    DEFAULT_BLOCK_SIZE, MAX_BLOCK_SIZE, MAX_ENTRY_LEN, TableBuilder, TableOptions, TableSummary,
};
pub use cache::PartitionCache;
pub use error::{BlockDefect, BlockType, TableError, TableResult};
pub use format::{
    BLOCK_TRAILER_LEN, BlockHandle, FOOTER_EXTENSION_LEN, FOOTER_LEN, TABLE_FORMAT_VERSION,
    TABLE_MAGIC,
};
pub use read_at::ReadAt;
pub use reader::Table;
pub use stats::TableStats;
