//! Our filter policies inside [rusty-leveldb](https://crates.io/crates/rusty-leveldb) 4.0, which keeps LevelDB's
//! table format: one filter per 2 KiB of data-block offsets, each built from the keys of the data blocks that
//! start there.
//!
//! ```no_run
//! use std::rc::Rc;
//! use sstfilter::BlockedBloomPolicy;
//! use sstfilter_leveldb::LevelDbBloomPolicy;
//! use sstfilter_rusty_leveldb::{LevelDbFormat, RustyLevelDbFilterPolicy};
//!
//! // Our blocks (self-describing, checksummed):
//! let options = rusty_leveldb::Options {
//!     filter_policy: Rc::new(Box::new(RustyLevelDbFilterPolicy::new(BlockedBloomPolicy::new(10.0)?))),
//!     ..Default::default()
//! };
//! // Or LevelDB's own Bloom filter, byte for byte: tables stay readable by LevelDB and rusty-leveldb.
//! let compatible = rusty_leveldb::Options {
//!     filter_policy: Rc::new(Box::new(LevelDbFormat(LevelDbBloomPolicy::new(10)))),
//!     ..Default::default()
//! };
//! let db = rusty_leveldb::DB::open("/tmp/db", options)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! **No prefix filters here.** sstfilter's prefix filters (`TableFilterOptions::prefixes`, used by the
//! reference table and the SlateDB adapter) cannot help a LevelDB-style store through this interface: the
//! table reader consults the filter only from `Get` (one key, one data block; rusty-leveldb's
//! `table_reader.rs`), never from an iterator, and `rusty_leveldb::FilterPolicy` has no prefix query to answer.
//! A prefix scan (`seek` plus `next`) reads every table whose key range covers the prefix. An engine that owns
//! its table reader can ask `TableFilter::may_contain_prefix` before seeking, as
//! `sstfilter_table::Table::scan_prefix` does.

#![deny(missing_docs)]
#![warn(unreachable_pub)]

use std::cell::RefCell;
use std::fmt;

use ::rusty_leveldb::FilterPolicy as RustyFilterPolicy;
use sstfilter::{
    Answer, FilterPolicy, FilterStats, KeyProbe, NoPartitions, Reason, STORE_POLICY_NAME,
    TableFilter, TableFilterBuilder, TableFilterOptions,
};
use sstfilter_leveldb::{LevelDbFilterPolicy, MATCH_ALL_FILTER};

/// Any of our [`FilterPolicy`]s as a `rusty_leveldb::FilterPolicy`: every LevelDB filter is the point filter of
/// an sstfilter [`TableFilter`], registered under the name [`STORE_POLICY_NAME`] (the blocks describe their own
/// kind and version).
///
/// The filters are built in [any key order](TableFilterOptions::any_key_order): LevelDB hands each filter the keys
/// of its data blocks in the order of the table's comparator, which need not be bytewise. One builder is kept
/// and reused from filter to filter (and table to table), so its memory is allocated once.
///
/// Each block carries a 36-byte trailer and its kind's size granularity (64 bytes for BlockedBloom), which matter
/// next to LevelDB's small per-2 KiB filters: about 47 keys each with rusty-leveldb's default 4 KiB blocks, where
/// "10 bits/key" becomes 17 (BENCHMARKS.md, "Small filters", measures the space, rates and probe times). Choose
/// this policy when a damaged filter must be detected rather than trusted (every probe verifies the block's
/// CRC32; rusty-leveldb checks no filter checksum); for the fewest bytes, [`LevelDbFormat`] with
/// [`Bloom64Policy`](sstfilter_leveldb::Bloom64Policy) keeps LevelDB's format with a better rate than LevelDB's
/// own Bloom filter at the same bytes.
pub struct RustyLevelDbFilterPolicy<P> {
    policy: P,
    options: TableFilterOptions,
    builder: RefCell<TableFilterBuilder>,
    stats: FilterStats,
}

impl<P: FilterPolicy + Clone + Send + Sync + 'static> RustyLevelDbFilterPolicy<P> {
    /// Filters built by `policy`.
    #[must_use]
    pub fn new(policy: P) -> Self {
        let options = TableFilterOptions::any_key_order().point(policy.clone());
        RustyLevelDbFilterPolicy {
            builder: RefCell::new(TableFilterBuilder::new(&options)),
            policy,
            options,
            stats: FilterStats::new(),
        }
    }
}

impl<P> RustyLevelDbFilterPolicy<P> {
    /// The statistics this policy keeps: every answer of its filters ("absent" is a data-block read avoided), and
    /// lookups that met a filter that failed to open or verify (and answered "may match" instead) as
    /// [`FilterCounts::decode_errors`](sstfilter::FilterCounts::decode_errors). rusty-leveldb does not tell a
    /// filter whether the read it allowed found the key, so true positives (and the observed rate) are not counted
    /// here. Clones of the handle share the counts.
    #[must_use]
    pub fn stats(&self) -> FilterStats {
        self.stats.clone()
    }

    /// The policy that sizes and builds the filters.
    #[must_use]
    pub fn policy(&self) -> &P {
        &self.policy
    }
}

impl<P: Clone> Clone for RustyLevelDbFilterPolicy<P> {
    /// The same policy and statistics, with a builder of its own.
    fn clone(&self) -> Self {
        RustyLevelDbFilterPolicy {
            policy: self.policy.clone(),
            options: self.options.clone(),
            builder: RefCell::new(TableFilterBuilder::new(&self.options)),
            stats: self.stats.clone(),
        }
    }
}

impl<P: fmt::Debug> fmt::Debug for RustyLevelDbFilterPolicy<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RustyLevelDbFilterPolicy")
            .field("policy", &self.policy)
            .field("stats", &self.stats)
            .finish_non_exhaustive()
    }
}

impl<P> RustyFilterPolicy for RustyLevelDbFilterPolicy<P> {
    fn name(&self) -> &'static str {
        STORE_POLICY_NAME
    }

    /// The block of the keys; no block (empty bytes, which every read answers "may match" for and counts as a
    /// decode error) when the offsets do not lay the keys out consistently.
    fn create_filter(&self, keys: &[u8], key_offsets: &[usize]) -> Vec<u8> {
        let Some(keys) = offset_keys(keys, key_offsets) else {
            return Vec::new();
        };
        let mut builder = self.builder.borrow_mut();
        let added = keys.into_iter().try_for_each(|key| builder.add_key(key));
        // Finished (and so reset for the next filter) whatever happened. A point filter in any key order refuses no
        // key; were one refused, the filter would not hold every key, so there would be none.
        match (added, builder.finish_and_reset()) {
            (Ok(()), Ok(blocks)) => blocks.point_block().map(<[u8]>::to_vec).unwrap_or_default(),
            _ => Vec::new(),
        }
    }

    fn key_may_match(&self, key: &[u8], filter: &[u8]) -> bool {
        // rusty-leveldb never checks the checksum of a filter block (LevelDB only under paranoid checks), so
        // opening verifies ours: a flipped bit must cost a read, not hide a key. It is one pass over a filter of a
        // few hundred bytes; rusty-leveldb keeps no opened filters to do it once.
        // Counted here rather than through `with_stats`, which would clone the shared counts on every probe.
        let answer = match TableFilter::open(&self.options, Some(filter), None) {
            Ok(table) => table.may_contain(&KeyProbe::new(key), &NoPartitions),
            // A valid block that is no point filter (a Range block): not one this policy wrote.
            Err(_) => Answer::MayContain(Reason::Unusable),
        };
        self.stats.record(answer);
        answer.must_read()
    }
}

/// A LevelDB-format filter policy of sstfilter ([`LevelDbBloomPolicy`](sstfilter_leveldb::LevelDbBloomPolicy),
/// [`Bloom64Policy`](sstfilter_leveldb::Bloom64Policy)) as a `rusty_leveldb::FilterPolicy`: it writes LevelDB's
/// own filter bytes and reads them back by its own name.
///
/// `LevelDbFormat(LevelDbBloomPolicy::new(10))` replaces rusty-leveldb's `BloomPolicy`: the same name and the same
/// bytes, so a table written by either is read by the other (and by LevelDB). `LevelDbFormat(Bloom64Policy::new(10.0))`
/// spends LevelDB's filter bytes per key on sstfilter's 64-bit hash with fewer false positives; tables written with
/// it need it (or another reader of [`Bloom64Policy::NAME`](sstfilter_leveldb::Bloom64Policy::NAME)) to use their
/// filters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LevelDbFormat<P>(pub P);

impl<P: LevelDbFilterPolicy> RustyFilterPolicy for LevelDbFormat<P> {
    fn name(&self) -> &'static str {
        self.0.name()
    }

    /// LevelDB's filter of the keys; [`MATCH_ALL_FILTER`] when the offsets do not lay the keys out
    /// consistently.
    fn create_filter(&self, keys: &[u8], key_offsets: &[usize]) -> Vec<u8> {
        let Some(keys) = offset_keys(keys, key_offsets) else {
            return MATCH_ALL_FILTER.to_vec();
        };
        let mut filter = Vec::new();
        self.0.append_filter(&keys, &mut filter);
        filter
    }

    fn key_may_match(&self, key: &[u8], filter: &[u8]) -> bool {
        self.0.may_contain(key, filter)
    }
}

/// The keys of rusty-leveldb's `create_filter` layout: key `i` runs from `offsets[i]` to the next offset (or the
/// end of `keys`). `None` if an offset goes back or past the end: the keys are then unknown, and a filter of
/// whatever they would be cut to could hide the real ones.
fn offset_keys<'a>(keys: &'a [u8], offsets: &[usize]) -> Option<Vec<&'a [u8]>> {
    let ends = offsets.iter().skip(1).copied().chain([keys.len()]);
    offsets
        .iter()
        .zip(ends)
        .map(|(&start, end)| keys.get(start..end))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use sstfilter::{BlockedBloomPolicy, FilterBlock};
    use sstfilter_leveldb::LevelDbBloomPolicy;

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
        let policy = RustyLevelDbFilterPolicy::new(BlockedBloomPolicy::new(10.0).unwrap());
        assert_eq!(policy.name(), "sstfilter");
        let keys: Vec<Vec<u8>> = (0..300u32)
            .map(|i| format!("key{i}").into_bytes())
            .collect();
        let refs: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
        let (buf, offsets) = layout(&refs);
        let filter = policy.create_filter(&buf, &offsets);
        assert!(FilterBlock::open(&filter[..]).is_ok());
        for k in &keys {
            assert!(policy.key_may_match(k, &filter));
        }
        let mut damaged = filter.clone();
        damaged[0] ^= 0x80;
        assert!(policy.key_may_match(b"absent", &damaged));
        assert!(policy.key_may_match(b"absent", &[]));
        assert_eq!(policy.stats().counts().decode_errors, 2);
    }

    /// One builder serves every filter: each holds its own keys, in whatever order the table's comparator gave
    /// them, and none of the filter before.
    #[test]
    fn the_reused_builder_starts_each_filter_afresh() {
        let policy = RustyLevelDbFilterPolicy::new(BlockedBloomPolicy::new(10.0).unwrap());
        let batch = |b: u32| -> Vec<Vec<u8>> {
            // Descending: a reverse comparator's order.
            (0..400u32)
                .rev()
                .map(|i| format!("b{b}:{i}").into_bytes())
                .collect()
        };
        let mut filters = Vec::new();
        for b in 0..3 {
            let keys = batch(b);
            let refs: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
            let (buf, offsets) = layout(&refs);
            filters.push(policy.create_filter(&buf, &offsets));
        }
        for (b, filter) in (0..3).zip(&filters) {
            assert_eq!(FilterBlock::open(&filter[..]).unwrap().num_keys(), 400);
            assert!(batch(b).iter().all(|k| policy.key_may_match(k, filter)));
            let others = (0..3).filter(|&o| o != b).flat_map(batch);
            let leaked = others.filter(|k| policy.key_may_match(k, filter)).count();
            assert!(
                leaked < 40,
                "{leaked} of 800 keys of other filters match filter {b}"
            );
        }
    }

    #[test]
    fn leveldb_policy_is_a_drop_in_for_rusty_leveldbs() {
        let ours = LevelDbFormat(LevelDbBloomPolicy::new(10));
        let theirs = ::rusty_leveldb::BloomPolicy::new(10);
        let (buf, offsets) = layout(&[b"a", b"", b"abc", b"abcd", b"hello world"]);
        let filter = RustyFilterPolicy::create_filter(&ours, &buf, &offsets);
        assert_eq!(filter, theirs.create_filter(&buf, &offsets));
        assert_eq!(RustyFilterPolicy::name(&ours), theirs.name());
    }

    /// Issue 26, problem 6: offsets out of order or out of range used to become empty keys, and the filter was
    /// built without the real ones. Now such a layout gives a filter that matches every key, in both formats and
    /// for every reader of each.
    #[test]
    fn bad_offsets_give_filters_that_match_everything() {
        assert_eq!(offset_keys(b"abcdef", &[0, 4, 2, 100]), None);
        assert_eq!(offset_keys(b"abcdef", &[0, 4, 2]), None);
        assert_eq!(offset_keys(b"abcdef", &[0, 7]), None);
        assert_eq!(
            offset_keys(b"abcdef", &[0, 4, 4]),
            Some(vec![&b"abcd"[..], b"", b"ef"])
        );
        assert_eq!(offset_keys(b"", &[]), Some(vec![]));
        let keys: Vec<Vec<u8>> = (0..50u32).map(|i| format!("k{i}").into_bytes()).collect();
        let refs: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
        let (buf, mut offsets) = layout(&refs);
        offsets.swap(3, 4);
        let ours = RustyLevelDbFilterPolicy::new(BlockedBloomPolicy::new(10.0).unwrap());
        let filter = ours.create_filter(&buf, &offsets);
        let leveldb = LevelDbFormat(LevelDbBloomPolicy::new(10));
        let leveldb_filter = leveldb.create_filter(&buf, &offsets);
        let rusty = ::rusty_leveldb::BloomPolicy::new(10);
        let bloom64 = LevelDbFormat(sstfilter_leveldb::Bloom64Policy::new(10.0));
        let bloom64_filter = bloom64.create_filter(&buf, &offsets);
        for key in keys.iter().map(Vec::as_slice).chain([&b"absent"[..]]) {
            assert!(ours.key_may_match(key, &filter));
            assert!(leveldb.key_may_match(key, &leveldb_filter));
            assert!(rusty.key_may_match(key, &leveldb_filter));
            assert!(bloom64.key_may_match(key, &bloom64_filter));
        }
    }
}
