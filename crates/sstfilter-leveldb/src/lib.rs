//! LevelDB's own filter bytes, beside the `sstfilter` core: what a LevelDB-format table stores, not a kind of
//! sstfilter's container.
//!
//! LevelDB tables name their filter policy in the meta-index and store raw filter bytes, so interoperating with
//! LevelDB (and rusty-leveldb, and the many stores that kept LevelDB's table format) means writing and reading
//! *exactly* its bytes:
//!
//! * [`LevelDbBloomPolicy`]: LevelDB's built-in Bloom filter (`leveldb.BuiltinBloomFilter2`), bit for bit.
//! * [`LevelDbFilterBlockBuilder`] / [`LevelDbFilterBlockReader`]: LevelDB's filter block, one filter per 2 KiB
//!   of data-block offsets.
//! * [`leveldb_hash`]: LevelDB's 32-bit hash, which the Bloom filter is built on, and
//!   [`leveldb_hash_sign_extended`], the same hash as older LevelDB releases and RocksDB compute it.
//! * [`Bloom64Policy`]: not LevelDB's bits but its filter format, for LevelDB-format stores that can register a
//!   filter policy of their own (rusty-leveldb): the same filter bytes, a lower false-positive rate, on the core's
//!   64-bit key hash ([`sstfilter::key_hash`]).
//!
//! These bytes carry no checksum or version of their own (LevelDB's block trailer checksums them), so the
//! readers here validate structure and answer "may match" wherever the bytes are inconsistent: a filter may
//! cost a wasted read, never a lost key. Their two deliberate departures from LevelDB, both on inputs LevelDB
//! never writes or never queries, are documented on [`LevelDbBloomPolicy`] and [`LevelDbFilterBlockReader`].
//! Settings and calls they refuse are [`LevelDbUsageError`]s.
//!
//! LevelDB's table file itself (footer, blocks, block checksums) is RocksDB's table of `format_version` 0 with
//! the same magic number: `sstfilter-rocksdb` reads both.

#![deny(missing_docs)]
#![warn(unreachable_pub)]
// The decoding paths must not be able to panic on untrusted bytes. Each exception is one
// `#[expect(lint, reason = "...")]` at the item it covers.
#![cfg_attr(
    not(test),
    deny(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::indexing_slicing,
        clippy::panic
    )
)]

mod bloom;
mod bloom64;
mod bloom_bits;
mod error;
mod filter_block;
mod hash;

pub use bloom::LevelDbBloomPolicy;
pub use bloom64::Bloom64Policy;
pub use error::LevelDbUsageError;
pub use filter_block::{LevelDbFilterBlockBuilder, LevelDbFilterBlockReader};
pub use hash::{leveldb_hash, leveldb_hash_sign_extended};

/// A LevelDB-format filter that every reader of the format answers "may match" for, whatever the key: LevelDB,
/// rusty-leveldb and this crate's [`LevelDbFilterPolicy`] readers read a probe-count byte above 30 as a reserved
/// encoding and a match. For a writer that cannot build a filter of the keys it was given (an inconsistent key
/// layout): a filter of fewer keys would hide the others.
pub const MATCH_ALL_FILTER: [u8; 2] = [0, 0xFF];

/// A filter policy in LevelDB's sense (`include/leveldb/filter_policy.h`): it turns the keys of a range of data
/// blocks into one filter, and answers from that filter alone. [`LevelDbFilterBlockBuilder`] and
/// [`LevelDbFilterBlockReader`] are generic over it, as LevelDB's filter block is.
pub trait LevelDbFilterPolicy {
    /// The name a table records in its meta-index (`"filter." + name`); tables are matched to policies by it,
    /// so it must change whenever the filter bytes would be read differently.
    fn name(&self) -> &'static str;

    /// Appends the filter for `keys` to `out` (which may already hold other filters).
    fn append_filter(&self, keys: &[&[u8]], out: &mut Vec<u8>);

    /// Whether `key` may be one of the keys `filter` was built from. Must answer `true` for any key that was, and
    /// must not panic on any bytes.
    #[doc(alias("KeyMayMatch", "key_may_match"))]
    fn may_contain(&self, key: &[u8], filter: &[u8]) -> bool;
}

impl<P: LevelDbFilterPolicy + ?Sized> LevelDbFilterPolicy for &P {
    fn name(&self) -> &'static str {
        (**self).name()
    }
    fn append_filter(&self, keys: &[&[u8]], out: &mut Vec<u8>) {
        (**self).append_filter(keys, out);
    }
    fn may_contain(&self, key: &[u8], filter: &[u8]) -> bool {
        (**self).may_contain(key, filter)
    }
}
