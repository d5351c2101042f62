//! Our filter policies inside [rusty-leveldb](https://crates.io/crates/rusty-leveldb) 4.0, which keeps LevelDB's
//! table format: one filter per 2 KiB of data-block offsets, each built from the keys of the data blocks that
//! start there.
//!
//! ```no_run
//! use std::rc::Rc;
//! use sstfilter::FastBloomPolicy;
//! use sstfilter::adapters::rusty_leveldb::RustyLevelDbFilterPolicy;
//! use sstfilter::leveldb::LevelDbBloomPolicy;
//!
//! // Our blocks (self-describing, checksummed):
//! let options = rusty_leveldb::Options {
//!     filter_policy: Rc::new(Box::new(RustyLevelDbFilterPolicy::new(FastBloomPolicy::new(10.0)))),
//!     ..Default::default()
//! };
//! // Or LevelDB's own Bloom filter, byte for byte: tables stay readable by LevelDB and rusty-leveldb.
//! let compatible = rusty_leveldb::Options {
//!     filter_policy: Rc::new(Box::new(LevelDbBloomPolicy::new(10))),
//!     ..Default::default()
//! };
//! let db = rusty_leveldb::DB::open("/tmp/db", options).expect("open");
//! ```

use ::rusty_leveldb::FilterPolicy as RustyFilterPolicy;

use super::{BLOCK_POLICY_NAME, DecodeErrors};
use crate::leveldb::layout;
use crate::leveldb::{Bloom64Policy, LevelDbBloomPolicy};
use crate::{FilterBlock, FilterBlockBuilder, FilterPolicy};

/// Any of our [`FilterPolicy`]s as a `rusty_leveldb::FilterPolicy`: every LevelDB filter is one of this crate's
/// blocks, registered under the name [`BLOCK_POLICY_NAME`] (the blocks describe their own kind and version).
///
/// Each block carries a 36-byte trailer and its kind's size granularity (64 bytes for FastBloom), which matter
/// next to LevelDB's small per-2 KiB filters: see BENCHMARKS.md for the space and reads this costs, and
/// [`LevelDbBloomPolicy`] for LevelDB's own format.
#[derive(Debug, Clone)]
pub struct RustyLevelDbFilterPolicy<P> {
    policy: P,
    decode_errors: DecodeErrors,
}

impl<P: FilterPolicy> RustyLevelDbFilterPolicy<P> {
    /// Filters built by `policy`.
    #[must_use]
    pub fn new(policy: P) -> Self {
        RustyLevelDbFilterPolicy {
            policy,
            decode_errors: DecodeErrors::default(),
        }
    }

    /// The counter of filters that failed to open or verify (and answered "may match" instead).
    #[must_use]
    pub fn decode_errors(&self) -> DecodeErrors {
        self.decode_errors.clone()
    }

    /// The policy that sizes and builds the filters.
    #[must_use]
    pub fn policy(&self) -> &P {
        &self.policy
    }
}

impl<P: FilterPolicy> RustyFilterPolicy for RustyLevelDbFilterPolicy<P> {
    fn name(&self) -> &'static str {
        BLOCK_POLICY_NAME
    }

    fn create_filter(&self, keys: &[u8], key_offsets: &[usize]) -> Vec<u8> {
        let mut builder = FilterBlockBuilder::new(&self.policy);
        for key in offset_keys(keys, key_offsets) {
            builder.add_key(key);
        }
        builder.finish()
    }

    fn key_may_match(&self, key: &[u8], filter: &[u8]) -> bool {
        // LevelDB does not verify a filter block's checksum unless asked to (paranoid checks), so verify ours:
        // a flipped bit must cost a read, not hide a key. It is one pass over a filter of a few hundred bytes.
        match FilterBlock::open_verified(filter) {
            Ok(block) => block.may_contain(key),
            Err(_) => {
                self.decode_errors.record();
                true
            }
        }
    }
}

/// Our filters in LevelDB's Bloom layout as rusty-leveldb policies: each writes the filter of the keys its own
/// way and reads it back by its own name.
macro_rules! leveldb_layout_policy {
    ($policy:ty) => {
        impl RustyFilterPolicy for $policy {
            fn name(&self) -> &'static str {
                <$policy>::NAME
            }

            fn create_filter(&self, keys: &[u8], key_offsets: &[usize]) -> Vec<u8> {
                layout::filter_of(self, offset_keys(keys, key_offsets))
            }

            fn key_may_match(&self, key: &[u8], filter: &[u8]) -> bool {
                <$policy>::key_may_match(self, key, filter)
            }
        }
    };
}

// rusty-leveldb's `BloomPolicy` replaced by ours: the same name and the same bytes, so a table written by either
// is read by the other (and by LevelDB).
leveldb_layout_policy!(LevelDbBloomPolicy);
// LevelDB's filter bytes per key on our 64-bit hash, fewer false positives. Tables written with it need it (or
// another reader of `Bloom64Policy::NAME`) to use their filters.
leveldb_layout_policy!(Bloom64Policy);

/// The keys of rusty-leveldb's `create_filter` layout: key `i` runs from `offsets[i]` to the next offset (or the
/// end of `keys`). Offsets out of order or past the end give empty keys rather than a panic.
fn offset_keys<'a>(
    keys: &'a [u8],
    offsets: &'a [usize],
) -> impl ExactSizeIterator<Item = &'a [u8]> {
    offsets.iter().enumerate().map(move |(i, &start)| {
        let end = offsets.get(i + 1).copied().unwrap_or(keys.len());
        keys.get(start..end).unwrap_or_default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::FastBloomPolicy;

    fn layout(keys: &[&[u8]]) -> (Vec<u8>, Vec<usize>) {
        let mut buf = Vec::new();
        let mut offsets = Vec::new();
        for k in keys {
            offsets.push(buf.len());
            buf.extend_from_slice(k);
        }
        (buf, offsets)
    }

    #[test]
    fn our_blocks_through_the_leveldb_interface() {
        let policy = RustyLevelDbFilterPolicy::new(FastBloomPolicy::new(10.0));
        assert_eq!(policy.name(), "sstfilter");
        let keys: Vec<Vec<u8>> = (0..300u32)
            .map(|i| format!("key{i}").into_bytes())
            .collect();
        let refs: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
        let (buf, offsets) = layout(&refs);
        let filter = policy.create_filter(&buf, &offsets);
        assert!(FilterBlock::open_verified(&filter[..]).is_ok());
        for k in &keys {
            assert!(policy.key_may_match(k, &filter));
        }
        let mut damaged = filter.clone();
        damaged[0] ^= 0x80;
        assert!(policy.key_may_match(b"absent", &damaged));
        assert!(policy.key_may_match(b"absent", &[]));
        assert_eq!(policy.decode_errors().count(), 2);
    }

    #[test]
    fn leveldb_policy_is_a_drop_in_for_rusty_leveldbs() {
        let ours = LevelDbBloomPolicy::new(10);
        let theirs = ::rusty_leveldb::BloomPolicy::new(10);
        let (buf, offsets) = layout(&[b"a", b"", b"abc", b"abcd", b"hello world"]);
        let filter = RustyFilterPolicy::create_filter(&ours, &buf, &offsets);
        assert_eq!(filter, theirs.create_filter(&buf, &offsets));
        assert_eq!(RustyFilterPolicy::name(&ours), theirs.name());
    }

    #[test]
    fn bad_offsets_give_empty_keys_not_panics() {
        let keys: Vec<&[u8]> = offset_keys(b"abcdef", &[0, 4, 2, 100]).collect();
        assert_eq!(keys, [&b"abcd"[..], b"", b"", b""]);
        let keys: Vec<&[u8]> = offset_keys(b"abcdef", &[0, 4, 2]).collect();
        assert_eq!(keys, [&b"abcd"[..], b"", b"cdef"]);
    }
}
