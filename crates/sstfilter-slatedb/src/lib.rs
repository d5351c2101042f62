//! Our filter policies inside [SlateDB](https://slatedb.io) (`slatedb` 0.18): one filter block per SST.
//!
//! ```no_run
//! # async fn open() -> Result<(), Box<dyn std::error::Error>> {
//! use std::sync::Arc;
//! use slatedb::object_store::local::LocalFileSystem;
//! use sstfilter::BlockedBloomPolicy;
//! use sstfilter_slatedb::SlateDbFilterPolicy;
//!
//! let policy = Arc::new(SlateDbFilterPolicy::new(BlockedBloomPolicy::new(10.0)?));
//! let store = Arc::new(LocalFileSystem::new_with_prefix("/tmp/db").expect("directory"));
//! let db = slatedb::Db::builder("db", store)
//!     .with_filter_policies(vec![policy.clone()])
//!     .build()
//!     .await?;
//! // ... later: policy.stats().counts().decode_errors lookups met an unusable filter and read the SST.
//! # Ok(()) }
//! ```
//!
//! What the filter holds and answers, as SlateDB's own `BloomFilterPolicy` does:
//!
//! * every key of the SST (tombstones included: a lookup must find them), unless whole-key filtering is off;
//! * with a prefix extractor, the extracted prefix of every key (once per run of equal prefixes), through
//!   sstfilter's own prefix support: the block records the extractor's name (FORMAT.md, section 2.1), so a
//!   block is only ever asked about prefixes of the extractor that built it;
//! * a point query probes the key, or its extracted prefix when whole-key filtering is off; a prefix query probes
//!   the extracted prefix when the extractor can safely give one; anything else (range queries, a prefix query
//!   without an extractor, a block of another extractor) answers "may match".
//!
//! Range scans are answered by [`SlateDbRangeFilterPolicy`], a Range filter per SST registered beside (or instead
//! of) the point policy.

#![deny(missing_docs)]
#![warn(unreachable_pub)]

mod filter;
mod range;

pub use range::SlateDbRangeFilterPolicy;

use std::fmt;
use std::sync::Arc;

use ::slatedb::bytes::Bytes;
use ::slatedb::prefix_extractor::{PrefixExtractor, PrefixTarget};
use ::slatedb::{Filter, FilterBuilder};

use sstfilter::{FilterPolicy, FilterStats, STORE_POLICY_NAME, TableFilterOptions, UsageError};

use crate::filter::{Layout, Part};

/// Any of our [`FilterPolicy`]s (BlockedBloom, or any other kind, including your own policies) as a
/// `slatedb::FilterPolicy`: the point filter (with prefixes, if configured) of an sstfilter
/// [`TableFilter`](sstfilter::TableFilter), one per SST.
///
/// Its name, which SlateDB stores with every filter to match it to a policy when reading, is
/// `"sstfilter"`, plus `":p=<extractor name>"` with a prefix extractor and `":wh=0"` without whole-key filtering:
/// exactly what changes which hashes a filter holds. The kind and bits per key are not in it because each block
/// describes itself, so changing them (or the kind) leaves every existing SST readable.
pub struct SlateDbFilterPolicy<P> {
    policy: P,
    whole_key_filtering: bool,
    prefix_extractor: Option<Arc<dyn sstfilter::PrefixExtractor>>,
    name: String,
    stats: FilterStats,
}

impl<P> SlateDbFilterPolicy<P> {
    /// Filters built by `policy`, holding whole keys, without prefix extractor.
    #[must_use]
    pub fn new(policy: P) -> Self {
        let mut adapter = SlateDbFilterPolicy {
            policy,
            whole_key_filtering: true,
            prefix_extractor: None,
            name: String::new(),
            stats: FilterStats::new(),
        };
        adapter.name = adapter.compose_name();
        adapter
    }

    /// Also stores the prefix SlateDB's `extractor` gives for each key, so that prefix scans can skip SSTs.
    /// (SlateDB's extractors take `Bytes`, so each key added or asked about is copied once; an sstfilter
    /// extractor, through [`with_sstfilter_prefix_extractor`](Self::with_sstfilter_prefix_extractor), is not.)
    ///
    /// Fails if the extractor's name is too long for a block to record (see
    /// [`with_sstfilter_prefix_extractor`](Self::with_sstfilter_prefix_extractor)).
    pub fn with_prefix_extractor(
        self,
        extractor: Arc<dyn PrefixExtractor>,
    ) -> Result<Self, UsageError> {
        self.with_sstfilter_prefix_extractor(Arc::new(FromSlateDb(extractor)))
    }

    /// Also stores the prefix sstfilter's `extractor` ([`sstfilter::FixedPrefix`],
    /// [`sstfilter::DelimitedPrefix`], [`sstfilter::CappedPrefix`] or your own) gives for each key, so that prefix
    /// scans can skip SSTs. Wrap the same extractor in [`SlateDbPrefix`] to hand it to SlateDB itself.
    ///
    /// Fails with [`UsageError::InvalidSetting`] if the extractor's name is longer than a block records
    /// ([`sstfilter::MAX_PREFIX_NAME_LEN`] bytes): it is refused here, where the store is configured, not when
    /// SlateDB first builds a filter.
    pub fn with_sstfilter_prefix_extractor(
        mut self,
        extractor: Arc<dyn sstfilter::PrefixExtractor>,
    ) -> Result<Self, UsageError> {
        sstfilter::check_prefix_extractor(extractor.as_ref())?;
        self.prefix_extractor = Some(extractor);
        self.name = self.compose_name();
        Ok(self)
    }

    /// Whether whole keys are stored (the default). Without them, point lookups probe the key's prefix, which
    /// needs a prefix extractor to filter anything.
    #[must_use]
    pub fn with_whole_key_filtering(mut self, enabled: bool) -> Self {
        self.whole_key_filtering = enabled;
        self.name = self.compose_name();
        self
    }

    /// The statistics this policy keeps: every answer of its filters ("absent" is an object-store read avoided),
    /// questions they cannot answer by design ([`FilterCounts::unfiltered`](sstfilter::FilterCounts::unfiltered):
    /// range scans, prefix scans without extractor), and questions answered "may match" because the filter was
    /// unusable ([`FilterCounts::decode_errors`](sstfilter::FilterCounts::decode_errors): bytes that did not
    /// verify, or an SST whose keys came out of order). SlateDB does not tell a filter whether the read it allowed
    /// found the key, so true positives (and the observed rate) are not counted here. Take the handle before
    /// handing the policy to SlateDB to read it later; clones share the counts.
    #[must_use]
    pub fn stats(&self) -> FilterStats {
        self.stats.clone()
    }

    /// The policy that sizes and builds the filters.
    #[must_use]
    pub fn policy(&self) -> &P {
        &self.policy
    }

    fn compose_name(&self) -> String {
        let mut name = STORE_POLICY_NAME.to_owned();
        if let Some(extractor) = &self.prefix_extractor {
            name.push_str(":p=");
            name.push_str(extractor.name());
        }
        if !self.whole_key_filtering {
            name.push_str(":wh=0");
        }
        name
    }
}

impl<P> SlateDbFilterPolicy<P>
where
    P: FilterPolicy + Clone + Send + Sync + 'static,
{
    /// The table filter's options: this policy's point filter.
    fn layout(&self) -> Layout {
        let point = TableFilterOptions::new().point(self.policy.clone());
        // The extractor's name was checked when it was set, the one thing `prefixes` refuses here. Were it
        // refused, the filter would hold whole keys without prefixes: scans unfiltered, no key lost.
        let options = match &self.prefix_extractor {
            Some(extractor) => point
                .clone()
                .prefixes(extractor.clone(), self.whole_key_filtering)
                .unwrap_or(point),
            None => point,
        };
        Layout {
            options,
            part: Part::Point,
            stats: self.stats.clone(),
        }
    }
}

impl<P> fmt::Debug for SlateDbFilterPolicy<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SlateDbFilterPolicy")
            .field("name", &self.name)
            .field("decode_errors", &self.stats.counts().decode_errors)
            .finish_non_exhaustive()
    }
}

impl<P> ::slatedb::FilterPolicy for SlateDbFilterPolicy<P>
where
    P: FilterPolicy + Clone + Send + Sync + 'static,
{
    fn name(&self) -> &str {
        &self.name
    }

    fn builder(&self) -> Box<dyn FilterBuilder> {
        Box::new(self.layout().builder())
    }

    fn decode(&self, data: &[u8]) -> Arc<dyn Filter> {
        Arc::new(self.layout().decode(data))
    }

    fn estimate_size(&self, num_keys: usize) -> usize {
        self.policy.estimated_block_len(num_keys)
    }

    fn supports_prefix_queries(&self) -> bool {
        self.prefix_extractor.is_some()
    }
}

/// A SlateDB prefix extractor as sstfilter's: the same name, the same lengths. SlateDB's extractors take `Bytes`,
/// so each question copies the key or the scan once.
struct FromSlateDb(Arc<dyn PrefixExtractor>);

impl sstfilter::PrefixExtractor for FromSlateDb {
    fn name(&self) -> &str {
        self.0.name()
    }

    fn prefix_len(&self, key: &[u8]) -> Option<usize> {
        self.0
            .prefix_len(&PrefixTarget::Point(Bytes::copy_from_slice(key)))
    }

    fn scan_prefix_len(&self, scan: &[u8]) -> Option<usize> {
        // SlateDB's contract for `Prefix` targets is sstfilter's for scans: every extension has that prefix.
        self.0
            .prefix_len(&PrefixTarget::Prefix(Bytes::copy_from_slice(scan)))
    }
}

/// An sstfilter prefix extractor as SlateDB's (the same name, the same lengths), for SlateDB's own
/// `BloomFilterPolicy` or anything else in SlateDB that takes an extractor:
///
/// ```
/// use std::sync::Arc;
/// use sstfilter::DelimitedPrefix;
/// use sstfilter_slatedb::SlateDbPrefix;
///
/// let tenants = SlateDbPrefix(DelimitedPrefix::new(b'/'));
/// let theirs = slatedb::BloomFilterPolicy::new(10).with_prefix_extractor(Arc::new(tenants));
/// ```
#[derive(Debug, Clone)]
pub struct SlateDbPrefix<E>(pub E);

impl<E: sstfilter::PrefixExtractor> PrefixExtractor for SlateDbPrefix<E> {
    fn name(&self) -> &str {
        self.0.name()
    }

    fn prefix_len(&self, target: &PrefixTarget) -> Option<usize> {
        match target {
            PrefixTarget::Point(key) => self.0.prefix_len(key),
            PrefixTarget::Prefix(scan) => self.0.scan_prefix_len(scan),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ::slatedb::FilterPolicy as _;
    use ::slatedb::ValueDeletable;
    use ::slatedb::bytes::Bytes;
    use ::slatedb::{FilterQuery, RowEntry};
    use sstfilter::BlockedBloomPolicy;
    use std::ops::Bound;

    struct Fixed(usize);

    impl PrefixExtractor for Fixed {
        fn name(&self) -> &str {
            "fixed"
        }
        fn prefix_len(&self, target: &PrefixTarget) -> Option<usize> {
            let (PrefixTarget::Point(b) | PrefixTarget::Prefix(b)) = target;
            (b.len() >= self.0).then_some(self.0)
        }
    }

    /// A row of `key` (a tombstone: a lookup must find those too), for the adapters' tests.
    pub(crate) fn entry(key: &[u8]) -> RowEntry {
        RowEntry {
            key: Bytes::copy_from_slice(key),
            value: ValueDeletable::Tombstone,
            seq: 0,
            create_ts: None,
            expire_ts: None,
        }
    }

    fn build(
        policy: &SlateDbFilterPolicy<BlockedBloomPolicy>,
        keys: &[Vec<u8>],
    ) -> Arc<dyn Filter> {
        let mut builder = policy.builder();
        for k in keys {
            builder.add_entry(&entry(k));
        }
        let built = builder.build();
        let mut bytes = Vec::new();
        built.encode(&mut bytes);
        assert_eq!(bytes.len(), built.size());
        policy.decode(&bytes)
    }

    /// An SST's keys, in the order SlateDB adds them: sorted.
    fn keys() -> Vec<Vec<u8>> {
        let mut keys: Vec<Vec<u8>> = (0..2000u32)
            .map(|i| format!("t{:02}:{i:06}", i % 50).into_bytes())
            .collect();
        keys.sort();
        keys
    }

    fn point(k: &[u8]) -> FilterQuery {
        FilterQuery::point(Bytes::copy_from_slice(k))
    }

    fn prefix(p: &[u8]) -> FilterQuery {
        FilterQuery::prefix(Bytes::copy_from_slice(p))
    }

    #[test]
    fn names_encode_what_changes_the_stored_hashes() {
        let policy = SlateDbFilterPolicy::new(BlockedBloomPolicy::new(10.0).unwrap());
        assert_eq!(policy.name(), "sstfilter");
        let policy = policy.with_prefix_extractor(Arc::new(Fixed(3))).unwrap();
        assert_eq!(policy.name(), "sstfilter:p=fixed");
        let policy = policy.with_whole_key_filtering(false);
        assert_eq!(policy.name(), "sstfilter:p=fixed:wh=0");
        // Bits per key do not change how a block is read.
        assert_eq!(
            SlateDbFilterPolicy::new(BlockedBloomPolicy::new(3.0).unwrap()).name(),
            "sstfilter"
        );
    }

    /// Issue 26, problem 3: a name a block cannot record whole is refused where the store is configured.
    #[test]
    fn an_extractor_name_too_long_to_record_is_refused() {
        struct Long;
        impl sstfilter::PrefixExtractor for Long {
            fn name(&self) -> &str {
                "x-long-extractor-name-that-goes-on-and-on-past-the-limit-of-a-block-to-record-it-whole-and-\
                 would-be-cut-if-anything-cut-it-but-nothing-does-any-more-because-a-cut-name-can-be-shared-by-\
                 another-extractor-whose-block-then-answers-absent-for-keys-it-holds-which-is-a-lost-key"
            }
            fn prefix_len(&self, key: &[u8]) -> Option<usize> {
                Some(key.len().min(2))
            }
            fn scan_prefix_len(&self, scan: &[u8]) -> Option<usize> {
                (scan.len() >= 2).then_some(2)
            }
        }
        assert!(sstfilter::PrefixExtractor::name(&Long).len() > sstfilter::MAX_PREFIX_NAME_LEN);
        let refused = SlateDbFilterPolicy::new(BlockedBloomPolicy::new(10.0).unwrap())
            .with_sstfilter_prefix_extractor(Arc::new(Long));
        assert!(matches!(refused, Err(UsageError::InvalidSetting { .. })));
    }

    #[test]
    fn whole_keys_answer_points_and_nothing_else() {
        let policy = SlateDbFilterPolicy::new(BlockedBloomPolicy::new(10.0).unwrap());
        assert!(!policy.supports_prefix_queries());
        let filter = build(&policy, &keys());
        for k in keys() {
            assert!(filter.might_match(&point(&k)));
        }
        let fp = (0..10_000u32)
            .filter(|i| filter.might_match(&point(format!("absent:{i}").as_bytes())))
            .count();
        assert!(fp < 300, "{fp} false positives in 10k");
        assert!(
            filter.might_match(&prefix(b"zz")),
            "no extractor: prefix queries may match"
        );
        let range = FilterQuery::range(Bound::Unbounded, Bound::Unbounded);
        assert!(filter.might_match(&range));
    }

    #[test]
    fn prefix_extractor_answers_prefix_scans() {
        for whole in [true, false] {
            let policy = SlateDbFilterPolicy::new(BlockedBloomPolicy::new(10.0).unwrap())
                .with_prefix_extractor(Arc::new(Fixed(3)))
                .unwrap()
                .with_whole_key_filtering(whole);
            assert!(policy.supports_prefix_queries());
            let filter = build(&policy, &keys());
            for k in keys() {
                assert!(filter.might_match(&point(&k)), "whole = {whole}");
                assert!(filter.might_match(&prefix(&k[..3])));
                assert!(
                    filter.might_match(&prefix(&k[..5])),
                    "longer scan prefix probes its first 3 bytes"
                );
            }
            assert!(
                filter.might_match(&prefix(b"t9")),
                "too short to extract: may match"
            );
            let absent = (0..1000u32)
                .filter(|i| filter.might_match(&prefix(format!("{:03}", i + 100).as_bytes())))
                .count();
            assert!(absent < 50, "{absent}");
        }
    }

    #[test]
    fn sstfilter_extractors_work_directly_and_through_slatedb() {
        let core = sstfilter::CappedPrefix::new(3);
        let direct = SlateDbFilterPolicy::new(BlockedBloomPolicy::new(10.0).unwrap())
            .with_sstfilter_prefix_extractor(Arc::new(core.clone()))
            .unwrap();
        let through = SlateDbFilterPolicy::new(BlockedBloomPolicy::new(10.0).unwrap())
            .with_prefix_extractor(Arc::new(SlateDbPrefix(core)))
            .unwrap();
        assert_eq!(direct.name(), "sstfilter:p=sstfilter.capped:3");
        assert_eq!(direct.name(), through.name());
        let (mut a, mut b) = (Vec::new(), Vec::new());
        build(&direct, &keys()).encode(&mut a);
        build(&through, &keys()).encode(&mut b);
        assert_eq!(a, b, "the same extractor gives the same block either way");

        // SlateDB's two questions are sstfilter's two: a key's prefix, and a scan's.
        let capped = SlateDbPrefix(sstfilter::CappedPrefix::new(3));
        let ask = |target| capped.prefix_len(&target);
        assert_eq!(ask(PrefixTarget::Point(Bytes::from_static(b"ab"))), Some(2));
        assert_eq!(ask(PrefixTarget::Prefix(Bytes::from_static(b"ab"))), None);
        assert_eq!(
            ask(PrefixTarget::Prefix(Bytes::from_static(b"abcd"))),
            Some(3)
        );
    }

    #[test]
    fn questions_a_point_filter_cannot_answer_are_counted_as_unfiltered() {
        let policy = SlateDbFilterPolicy::new(BlockedBloomPolicy::new(10.0).unwrap());
        let stats = policy.stats();
        let filter = build(&policy, &keys());
        let range = FilterQuery::range(Bound::Unbounded, Bound::Excluded(Bytes::from_static(b"t")));
        assert!(filter.might_match(&range));
        assert!(filter.might_match(&prefix(b"t0")));
        let counts = stats.counts();
        assert_eq!(counts.absent + counts.may_contain, 0, "{counts:?}");
        assert_eq!(counts.unfiltered, 2, "{counts:?}");
        assert!(filter.might_match(&point(&keys()[0])));
        assert_eq!(stats.counts().may_contain, 1);
    }

    #[test]
    fn undecodable_filters_match_everything_and_are_counted() {
        let policy = SlateDbFilterPolicy::new(BlockedBloomPolicy::new(10.0).unwrap());
        let stats = policy.stats();
        let filter = build(&policy, &keys());
        let mut bytes = Vec::new();
        filter.encode(&mut bytes);
        bytes[0] ^= 1; // the CRC catches it
        for damaged in [&bytes[..], &bytes[..10], &[][..]] {
            let decoded = policy.decode(damaged);
            assert!(decoded.might_match(&point(b"anything")));
            let mut again = Vec::new();
            decoded.encode(&mut again);
            assert_eq!(again, damaged, "re-encoding keeps the bytes");
        }
        assert_eq!(stats.counts().decode_errors, 3);
    }

    /// SlateDB gives an SST's keys in order; were one out of order, the filter could not hold every key, so the SST
    /// gets one that answers "may match" (counted as unusable) rather than one that hides a key.
    #[test]
    fn keys_out_of_order_give_a_filter_that_matches_everything() {
        let policy = SlateDbFilterPolicy::new(BlockedBloomPolicy::new(10.0).unwrap());
        let stats = policy.stats();
        let mut builder = policy.builder();
        for k in [&b"b"[..], b"a", b"c"] {
            builder.add_entry(&entry(k));
        }
        let filter = builder.build();
        assert_eq!(filter.size(), 0);
        for k in [&b"a"[..], b"b", b"c", b"absent"] {
            assert!(filter.might_match(&point(k)));
        }
        assert_eq!(stats.counts().decode_errors, 4);
        // The builder starts the next SST afresh.
        for k in [&b"a"[..], b"b"] {
            builder.add_entry(&entry(k));
        }
        let next = builder.build();
        assert!(next.size() > 0);
        assert!(next.might_match(&point(b"a")) && next.might_match(&point(b"b")));
    }
}
