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
//! * with a prefix extractor, the extracted prefix of every key (once per run of equal prefixes);
//! * a point query probes the key, or its extracted prefix when whole-key filtering is off; a prefix query probes
//!   the extracted prefix when the extractor can safely give one; anything else (range queries, a prefix query
//!   without an extractor) answers "may match".

#![deny(missing_docs)]
#![warn(unreachable_pub)]

use std::fmt;
use std::sync::Arc;

use ::slatedb::bytes::BufMut;
use ::slatedb::prefix_extractor::{PrefixExtractor, PrefixTarget};
use ::slatedb::{Filter, FilterBuilder, FilterQuery, FilterTarget, RowEntry};

use sstfilter::{
    AlignedBlock, FilterBlock, FilterBlockBuilder, FilterPolicy, FilterStats, STORE_POLICY_NAME,
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
    prefix_extractor: Option<Arc<dyn PrefixExtractor>>,
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

    /// Also stores the prefix `extractor` gives for each key, so that prefix scans can skip SSTs.
    #[must_use]
    pub fn with_prefix_extractor(mut self, extractor: Arc<dyn PrefixExtractor>) -> Self {
        self.prefix_extractor = Some(extractor);
        self.name = self.compose_name();
        self
    }

    /// Whether whole keys are stored (the default). Without them, point lookups probe the key's prefix, which
    /// needs a prefix extractor to filter anything.
    #[must_use]
    pub fn with_whole_key_filtering(mut self, enabled: bool) -> Self {
        self.whole_key_filtering = enabled;
        self.name = self.compose_name();
        self
    }

    /// The statistics this policy keeps: filters that failed to decode (and answered "may match" instead) are
    /// counted as [`FilterCounts::decode_errors`](sstfilter::FilterCounts::decode_errors). Take the handle before
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

    fn probes(&self) -> Probes {
        Probes {
            whole_key_filtering: self.whole_key_filtering,
            prefix_extractor: self.prefix_extractor.clone(),
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
        Box::new(SlateDbFilterBuilder {
            builder: FilterBlockBuilder::new(self.policy.clone()),
            policy: self.policy.clone(),
            probes: self.probes(),
            last_prefix: None,
        })
    }

    fn decode(&self, data: &[u8]) -> Arc<dyn Filter> {
        // One copy, into a buffer whose BlockedBloom blocks are each one cache line (SlateDB's bytes come at any
        // alignment); the decoded filter then lives in SlateDB's filter cache.
        let bytes = AlignedBlock::copy_from(data);
        let block = match FilterBlock::open_verified(bytes) {
            Ok(block) => Decoded::Block(block),
            Err(_) => {
                self.stats.record_decode_error();
                Decoded::Unusable(data.to_vec())
            }
        };
        Arc::new(SlateDbFilter {
            block,
            probes: self.probes(),
        })
    }

    fn estimate_size(&self, num_keys: usize) -> usize {
        self.policy.estimated_block_len(num_keys)
    }

    fn supports_prefix_queries(&self) -> bool {
        self.prefix_extractor.is_some()
    }
}

/// Which hashes a filter holds, and so how a query is turned into a probe.
#[derive(Clone)]
struct Probes {
    whole_key_filtering: bool,
    prefix_extractor: Option<Arc<dyn PrefixExtractor>>,
}

impl Probes {
    /// The bytes to probe for `target`, or `None` when the filter cannot rule the target out.
    fn probe_for<'q>(&self, target: &'q FilterTarget) -> Option<&'q [u8]> {
        if let (FilterTarget::Point(key), true) = (target, self.whole_key_filtering) {
            return Some(key);
        }
        let extractor = self.prefix_extractor.as_ref()?;
        let (bytes, prefix_target) = match target {
            FilterTarget::Point(key) => (key, PrefixTarget::Point(key.clone())),
            FilterTarget::Prefix(prefix) => (prefix, PrefixTarget::Prefix(prefix.clone())),
            FilterTarget::Range { .. } => return None, // no range filter yet: conservatively "may match"
        };
        let len = extractor.prefix_len(&prefix_target)?;
        bytes.get(..len)
    }

    /// The prefix stored for `key`. An extractor returning a length past the key (which breaks its contract) is
    /// clamped to the whole key, so that the same key probes the same bytes; SlateDB's own policy panics there.
    fn stored_prefix<'k>(&self, key: &'k ::slatedb::bytes::Bytes) -> Option<&'k [u8]> {
        let extractor = self.prefix_extractor.as_ref()?;
        let len = extractor.prefix_len(&PrefixTarget::Point(key.clone()))?;
        Some(key.get(..len).unwrap_or(key))
    }
}

struct SlateDbFilterBuilder<P: FilterPolicy> {
    builder: FilterBlockBuilder<P>,
    policy: P,
    probes: Probes,
    /// The prefix added last: sorted keys give runs of equal prefixes, stored once.
    last_prefix: Option<Vec<u8>>,
}

impl<P: FilterPolicy + Clone + Send> FilterBuilder for SlateDbFilterBuilder<P> {
    fn add_entry(&mut self, entry: &RowEntry) {
        if let Some(prefix) = self.probes.stored_prefix(&entry.key)
            && self.last_prefix.as_deref() != Some(prefix)
        {
            self.builder.add_key(prefix);
            self.last_prefix = Some(prefix.to_vec());
        }
        if self.probes.whole_key_filtering {
            self.builder.add_key(&entry.key);
        }
    }

    fn build(&mut self) -> Arc<dyn Filter> {
        let builder = std::mem::replace(
            &mut self.builder,
            FilterBlockBuilder::new(self.policy.clone()),
        );
        self.last_prefix = None;
        let bytes = AlignedBlock::copy_from(&builder.finish());
        let block = match FilterBlock::open(bytes) {
            Ok(block) => Decoded::Block(block),
            // A block this crate just wrote always opens; if it ever did not, it must still never hide a key.
            Err(_) => Decoded::Unusable(Vec::new()),
        };
        Arc::new(SlateDbFilter {
            block,
            probes: self.probes.clone(),
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
            return true;
        };
        self.probes
            .probe_for(&query.target)
            .is_none_or(|probe| block.may_contain(probe))
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

    fn entry(key: &[u8]) -> RowEntry {
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
        let policy = policy.with_prefix_extractor(Arc::new(Fixed(3)));
        assert_eq!(policy.name(), "sstfilter:p=fixed");
        let policy = policy.with_whole_key_filtering(false);
        assert_eq!(policy.name(), "sstfilter:p=fixed:wh=0");
        // Bits per key do not change how a block is read.
        assert_eq!(
            SlateDbFilterPolicy::new(BlockedBloomPolicy::new(3.0)).name(),
            "sstfilter"
        );
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
