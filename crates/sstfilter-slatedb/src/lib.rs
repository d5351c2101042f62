//! Our filter policies inside [SlateDB](https://slatedb.io) (`slatedb` 0.18): one filter block per SST.
//!
//! ```no_run
//! # async fn open() -> Result<(), slatedb::Error> {
//! use std::sync::Arc;
//! use slatedb::object_store::local::LocalFileSystem;
//! use sstfilter::BlockedBloomPolicy;
//! use sstfilter_slatedb::SlateDbFilterPolicy;
//!
//! let policy = Arc::new(SlateDbFilterPolicy::new(BlockedBloomPolicy::new(10.0)));
//! let store = Arc::new(LocalFileSystem::new_with_prefix("/tmp/db").expect("directory"));
//! let db = slatedb::Db::builder("db", store)
//!     .with_filter_policies(vec![policy.clone()])
//!     .build()
//!     .await?;
//! // ... later: policy.stats().counts().decode_errors filters were unreadable and answered "may match".
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

mod range;

pub use range::SlateDbRangeFilterPolicy;

use std::fmt;
use std::sync::Arc;

use ::slatedb::bytes::{BufMut, Bytes};
use ::slatedb::prefix_extractor::{PrefixExtractor, PrefixTarget};
use ::slatedb::{Filter, FilterBuilder, FilterQuery, FilterTarget, RowEntry};

use sstfilter::{
    AlignedBlock, FilterBlock, FilterBlockBuilder, FilterPolicy, FilterStats, PrefixProbe,
    STORE_POLICY_NAME, UsageError,
};

/// Any of our [`FilterPolicy`]s (BlockedBloom, or any other kind, including your own policies) as a
/// `slatedb::FilterPolicy`.
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
    /// and filters that failed to decode (and answered "may match" instead) as
    /// [`FilterCounts::decode_errors`](sstfilter::FilterCounts::decode_errors). SlateDB does not tell a filter
    /// whether the read it allowed found the key, so true positives (and the observed rate) are not counted
    /// here. Take the handle before handing the policy to SlateDB to read it later; clones share the counts.
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

    fn probes(&self) -> Probes {
        Probes {
            whole_key_filtering: self.whole_key_filtering,
            prefixes: self.prefix_extractor.clone(),
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
        let probes = self.probes();
        Box::new(SlateDbFilterBuilder {
            builder: probes.builder(self.policy.clone()),
            policy: self.policy.clone(),
            probes,
            stats: self.stats.clone(),
        })
    }

    fn decode(&self, data: &[u8]) -> Arc<dyn Filter> {
        // One copy, into a buffer whose BlockedBloom blocks are each one cache line (SlateDB's bytes come at any
        // alignment); the decoded filter then lives in SlateDB's filter cache.
        let bytes = AlignedBlock::copy_from(data);
        let block = match FilterBlock::open(bytes) {
            Ok(block) => Decoded::Block(block),
            Err(_) => {
                self.stats.record_decode_error();
                Decoded::Unusable(data.to_vec())
            }
        };
        Arc::new(SlateDbFilter {
            block,
            probes: self.probes(),
            stats: self.stats.clone(),
        })
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

/// Which hashes a filter holds, and so how a query is answered.
#[derive(Clone)]
struct Probes {
    whole_key_filtering: bool,
    prefixes: Option<Arc<dyn sstfilter::PrefixExtractor>>,
}

impl Probes {
    /// Whether `block` may hold a key of `target`, or `None` when the block cannot tell (the caller reads the SST):
    /// a range, a prefix without extractor, or an extractor whose lengths pass the bytes it was given (which breaks
    /// its contract, and where SlateDB's own policy panics). SlateDB asks every filter of an SST, so a point filter
    /// beside a range filter is asked about every range scan; those questions are not answers to count.
    fn may_match(&self, block: &FilterBlock<AlignedBlock>, target: &FilterTarget) -> Option<bool> {
        if let (FilterTarget::Point(key), true) = (target, self.whole_key_filtering) {
            return Some(block.may_contain(key));
        }
        let extractor = self.prefixes.as_deref()?;
        let probe = match target {
            FilterTarget::Point(key) => PrefixProbe::for_key(extractor, key),
            FilterTarget::Prefix(prefix) => PrefixProbe::for_scan(extractor, prefix),
            FilterTarget::Range { .. } => None, // a point filter (SlateDbRangeFilterPolicy answers ranges)
        }?;
        match block.may_contain_prefix(&probe) {
            sstfilter::Answer::Unfiltered(_) => None,
            answer => Some(answer.may_contain()),
        }
    }

    /// A builder of blocks holding what this policy's filters hold, or why there is none: an extractor whose
    /// name grew past what a block records after the policy checked it (the filters built then answer "may match").
    fn builder<P: FilterPolicy>(&self, policy: P) -> Result<FilterBlockBuilder<P>, UsageError> {
        let builder = FilterBlockBuilder::new(policy);
        match &self.prefixes {
            Some(extractor) => builder.with_prefixes(extractor.clone(), self.whole_key_filtering),
            None => Ok(builder),
        }
    }
}

struct SlateDbFilterBuilder<P: FilterPolicy> {
    builder: Result<FilterBlockBuilder<P>, UsageError>,
    policy: P,
    probes: Probes,
    /// Handed to the filters it builds (SlateDB may query them without decoding them again).
    stats: FilterStats,
}

impl<P: FilterPolicy + Clone + Send> FilterBuilder for SlateDbFilterBuilder<P> {
    fn add_entry(&mut self, entry: &RowEntry) {
        // Whole keys and prefixes as configured; a run of equal prefixes is added once.
        if let Ok(builder) = &mut self.builder {
            builder.add_key(&entry.key);
        }
    }

    fn build(&mut self) -> Arc<dyn Filter> {
        let builder =
            std::mem::replace(&mut self.builder, self.probes.builder(self.policy.clone()));
        let block = match builder.map(|b| FilterBlock::open(AlignedBlock::copy_from(&b.finish()))) {
            Ok(Ok(block)) => Decoded::Block(block),
            // No builder (see `Probes::builder`), or a block that did not open (one this crate just wrote always
            // does): an empty filter, which answers "may match" and never hides a key.
            Ok(Err(_)) | Err(_) => Decoded::Unusable(Vec::new()),
        };
        Arc::new(SlateDbFilter {
            block,
            probes: self.probes.clone(),
            stats: self.stats.clone(),
        })
    }
}

/// A decoded filter, or the bytes of one that could not be used.
#[derive(Clone)]
enum Decoded {
    Block(FilterBlock<AlignedBlock>),
    /// Answers "may match" for everything; keeps its bytes so that re-encoding loses nothing.
    Unusable(Vec<u8>),
}

#[derive(Clone)]
struct SlateDbFilter {
    block: Decoded,
    probes: Probes,
    /// The policy's counters: every answer of a usable filter is recorded.
    stats: FilterStats,
}

impl SlateDbFilter {
    fn bytes(&self) -> &[u8] {
        match &self.block {
            Decoded::Block(block) => block.as_bytes(),
            Decoded::Unusable(bytes) => bytes,
        }
    }
}

impl Filter for SlateDbFilter {
    fn might_match(&self, query: &FilterQuery) -> bool {
        let Decoded::Block(block) = &self.block else {
            return true; // counted once, as a decode error, when SlateDB decoded it
        };
        let Some(answer) = self.probes.may_match(block, &query.target) else {
            return true; // not a question this filter answers: nothing to count
        };
        self.stats.record_answer(answer);
        answer
    }

    fn encode(&self, writer: &mut dyn BufMut) {
        writer.put_slice(self.bytes());
    }

    fn size(&self) -> usize {
        self.bytes().len()
    }

    fn clamp_allocated_size(&self) -> Arc<dyn Filter> {
        // Clones of a Vec allocate exactly its length.
        Arc::new(self.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ::slatedb::FilterPolicy as _;
    use ::slatedb::ValueDeletable;
    use ::slatedb::bytes::Bytes;
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

    fn keys() -> Vec<Vec<u8>> {
        (0..2000u32)
            .map(|i| format!("t{:02}:{i:06}", i % 50).into_bytes())
            .collect()
    }

    fn point(k: &[u8]) -> FilterQuery {
        FilterQuery::point(Bytes::copy_from_slice(k))
    }

    fn prefix(p: &[u8]) -> FilterQuery {
        FilterQuery::prefix(Bytes::copy_from_slice(p))
    }

    #[test]
    fn names_encode_what_changes_the_stored_hashes() {
        let policy = SlateDbFilterPolicy::new(BlockedBloomPolicy::new(10.0));
        assert_eq!(policy.name(), "sstfilter");
        let policy = policy.with_prefix_extractor(Arc::new(Fixed(3))).unwrap();
        assert_eq!(policy.name(), "sstfilter:p=fixed");
        let policy = policy.with_whole_key_filtering(false);
        assert_eq!(policy.name(), "sstfilter:p=fixed:wh=0");
        // Bits per key do not change how a block is read.
        assert_eq!(
            SlateDbFilterPolicy::new(BlockedBloomPolicy::new(3.0)).name(),
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
        let refused = SlateDbFilterPolicy::new(BlockedBloomPolicy::new(10.0))
            .with_sstfilter_prefix_extractor(Arc::new(Long));
        assert!(matches!(refused, Err(UsageError::InvalidSetting { .. })));
    }

    #[test]
    fn whole_keys_answer_points_and_nothing_else() {
        let policy = SlateDbFilterPolicy::new(BlockedBloomPolicy::new(10.0));
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
            let policy = SlateDbFilterPolicy::new(BlockedBloomPolicy::new(10.0))
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
        let direct = SlateDbFilterPolicy::new(BlockedBloomPolicy::new(10.0))
            .with_sstfilter_prefix_extractor(Arc::new(core.clone()))
            .unwrap();
        let through = SlateDbFilterPolicy::new(BlockedBloomPolicy::new(10.0))
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
    fn questions_a_point_filter_cannot_answer_are_not_counted() {
        let policy = SlateDbFilterPolicy::new(BlockedBloomPolicy::new(10.0));
        let stats = policy.stats();
        let filter = build(&policy, &keys());
        let range = FilterQuery::range(Bound::Unbounded, Bound::Excluded(Bytes::from_static(b"t")));
        assert!(filter.might_match(&range));
        assert!(filter.might_match(&prefix(b"t0")));
        let counts = stats.counts();
        assert_eq!(counts.absent + counts.may_contain, 0, "{counts:?}");
        assert!(filter.might_match(&point(&keys()[0])));
        assert_eq!(stats.counts().may_contain, 1);
    }

    #[test]
    fn undecodable_filters_match_everything_and_are_counted() {
        let policy = SlateDbFilterPolicy::new(BlockedBloomPolicy::new(10.0));
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
}
