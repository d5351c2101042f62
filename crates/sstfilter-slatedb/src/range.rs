//! A Range filter (sstfilter's [`FilterKind::Range`](sstfilter::FilterKind::Range)) as a SlateDB filter policy:
//! SlateDB asks it about the range of every scan, clipped to each SST, and skips the SSTs it rules out.

use std::fmt;
use std::sync::Arc;

use ::slatedb::{Filter, FilterBuilder};

use sstfilter::{FilterStats, RangePolicy, TableFilterOptions};

use crate::filter::{Layout, Part};

/// Range filters in SlateDB, sized by a [`RangePolicy`]: the range filter of an sstfilter
/// [`TableFilter`](sstfilter::TableFilter), one per SST, answering range scans (`FilterTarget::Range`, which
/// SlateDB sends only to policies that say they can), prefix scans (a prefix is the range of its extensions) and
/// point lookups (at the kind's point rate; register a point policy beside it, such as
/// [`SlateDbFilterPolicy`](crate::SlateDbFilterPolicy), to answer those with a Bloom filter).
///
/// ```no_run
/// # async fn open() -> Result<(), Box<dyn std::error::Error>> {
/// use std::sync::Arc;
/// use slatedb::object_store::local::LocalFileSystem;
/// use sstfilter::{BlockedBloomPolicy, RangePolicy};
/// use sstfilter_slatedb::{SlateDbFilterPolicy, SlateDbRangeFilterPolicy};
///
/// let points = Arc::new(SlateDbFilterPolicy::new(BlockedBloomPolicy::new(10.0)?));
/// // Scans of up to 2^10 projected values (1024 consecutive decimal ids), at most 1 % false positives.
/// let ranges = Arc::new(SlateDbRangeFilterPolicy::new(RangePolicy::new(1 << 10, 0.01)?));
/// let store = Arc::new(LocalFileSystem::new_with_prefix("/tmp/db").expect("directory"));
/// let db = slatedb::Db::builder("db", store)
///     .with_filter_policies(vec![points, ranges.clone()])
///     .build()
///     .await?;
/// // ... later: ranges.stats().counts() says how many scans skipped an SST.
/// # Ok(()) }
/// ```
///
/// Its name says its size, `"sstfilter.range:L=2^10:fpr=0.01"` here: SlateDB keeps the statistics and finds the
/// filters of a policy by its name, so two range policies of different sizes on one store keep theirs apart. An
/// SST written under another name (before the policy changed) has no filter of this name and is read, as SlateDB
/// reads any SST without a filter. No false negative on any path: a block that fails to open or verify, one built from
/// keys SlateDB gave out of order, or one of an SST with more keys than the policy's
/// [`max_keys`](RangePolicy::max_keys) answers "may match" (counted as
/// [`decode_errors`](sstfilter::FilterCounts::decode_errors)).
pub struct SlateDbRangeFilterPolicy {
    policy: RangePolicy,
    /// The name SlateDB stores with every filter of this policy.
    name: String,
    stats: FilterStats,
}

impl SlateDbRangeFilterPolicy {
    /// Range filters sized by `policy`.
    #[must_use]
    pub fn new(policy: RangePolicy) -> Self {
        SlateDbRangeFilterPolicy {
            policy,
            name: format!(
                "sstfilter.range:L=2^{}:fpr={}",
                policy.range_log2(),
                policy.fpr()
            ),
            stats: FilterStats::new(),
        }
    }

    /// The statistics this policy keeps: every answer of its filters ("absent" is an SST a scan or lookup did not
    /// read), and the questions unusable filters answered "may match". Clones share the counts.
    #[must_use]
    pub fn stats(&self) -> FilterStats {
        self.stats.clone()
    }

    /// The policy that sizes the filters.
    #[must_use]
    pub fn policy(&self) -> &RangePolicy {
        &self.policy
    }

    fn layout(&self) -> Layout {
        Layout {
            // Keys in bytewise order: a range filter alone is never refused.
            options: TableFilterOptions::new()
                .range(self.policy)
                .unwrap_or_default(),
            part: Part::Range,
            stats: self.stats.clone(),
        }
    }
}

impl fmt::Debug for SlateDbRangeFilterPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SlateDbRangeFilterPolicy")
            .field("name", &self.name)
            .field("policy", &self.policy)
            .field("decode_errors", &self.stats.counts().decode_errors)
            .finish()
    }
}

impl ::slatedb::FilterPolicy for SlateDbRangeFilterPolicy {
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
        self.policy.payload_len(num_keys as u64) + sstfilter::TRAILER_LEN
    }

    fn supports_range_queries(&self) -> bool {
        true
    }

    fn supports_prefix_queries(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests::entry;
    use ::slatedb::FilterPolicy as _;
    use ::slatedb::FilterQuery;
    use ::slatedb::bytes::Bytes;
    use std::ops::Bound;
    use std::ops::RangeBounds;

    fn build(policy: &SlateDbRangeFilterPolicy, keys: &[Vec<u8>]) -> Arc<dyn Filter> {
        let mut builder = policy.builder();
        for k in keys {
            builder.add_entry(&entry(k));
        }
        let built = builder.build();
        let mut bytes = Vec::new();
        built.encode(&mut bytes);
        policy.decode(&bytes)
    }

    fn range(lower: Bound<&[u8]>, upper: Bound<&[u8]>) -> FilterQuery {
        let own = |b: Bound<&[u8]>| b.map(Bytes::copy_from_slice);
        FilterQuery::range(own(lower), own(upper))
    }

    /// Two sizes, two names: a store with both keeps their filters and statistics apart.
    #[test]
    fn names_say_the_size() {
        let name = |len, fpr| {
            SlateDbRangeFilterPolicy::new(RangePolicy::new(len, fpr).unwrap())
                .name()
                .to_owned()
        };
        assert_eq!(name(1 << 10, 0.01), "sstfilter.range:L=2^10:fpr=0.01");
        assert_eq!(name(1000, 0.01), name(1024, 0.01)); // one size: L is rounded up to a power of two
        assert_ne!(name(1 << 10, 0.01), name(1 << 16, 0.01));
        assert_ne!(name(1 << 10, 0.01), name(1 << 10, 0.001));
    }

    /// Every string of up to 3 bytes over `a`, `b`, behind `k/`: every range between two of them, with every kind
    /// of bound, that holds a key answers "may match"; every key and every prefix of a key too.
    #[test]
    fn every_range_holding_a_key_may_match() {
        let mut strings: Vec<Vec<u8>> = vec![b"k/".to_vec()];
        let mut last = strings.clone();
        for _ in 0..3 {
            last = last
                .iter()
                .flat_map(|s| {
                    [b'a', b'b'].map(|c| {
                        let mut t = s.clone();
                        t.push(c);
                        t
                    })
                })
                .collect();
            strings.extend(last.iter().cloned());
        }
        strings.sort();
        let policy = SlateDbRangeFilterPolicy::new(RangePolicy::new(4, 0.5).unwrap());
        for pick in [1usize, 2, 3, 5] {
            let keys: Vec<Vec<u8>> = strings.iter().step_by(pick).cloned().collect();
            let filter = build(&policy, &keys);
            let mut bounds: Vec<Bound<&[u8]>> = vec![Bound::Unbounded];
            for s in &strings {
                bounds.push(Bound::Included(s));
                bounds.push(Bound::Excluded(s));
            }
            for &lower in &bounds {
                for &upper in &bounds {
                    let holds = keys
                        .iter()
                        .any(|k| RangeBounds::<&[u8]>::contains(&(lower, upper), &k.as_slice()));
                    if holds {
                        assert!(
                            filter.might_match(&range(lower, upper)),
                            "{lower:?}..{upper:?}"
                        );
                    }
                }
            }
            for k in &keys {
                assert!(filter.might_match(&FilterQuery::point(Bytes::copy_from_slice(k))));
                for end in 0..=k.len() {
                    assert!(
                        filter.might_match(&FilterQuery::prefix(Bytes::copy_from_slice(&k[..end])))
                    );
                }
            }
        }
        assert_eq!(policy.stats().counts().decode_errors, 0);
    }

    #[test]
    fn empty_ranges_and_absent_prefixes_skip_the_sst() {
        let policy = SlateDbRangeFilterPolicy::new(RangePolicy::new(1 << 10, 0.001).unwrap());
        let keys: Vec<Vec<u8>> = (0..1000u32)
            .map(|i| format!("id:{:06}", i * 100).into_bytes())
            .collect();
        let filter = build(&policy, &keys);
        let mut skipped = 0;
        for i in 0..999u32 {
            let (lo, hi) = (
                format!("id:{:06}", i * 100 + 1),
                format!("id:{:06}", i * 100 + 100),
            );
            skipped += usize::from(!filter.might_match(&range(
                Bound::Included(lo.as_bytes()),
                Bound::Excluded(hi.as_bytes()),
            )));
        }
        assert!(skipped > 990, "{skipped} of 999 empty ranges skipped");
        assert!(!filter.might_match(&FilterQuery::prefix(Bytes::from_static(b"id:1"))));
        assert!(filter.might_match(&FilterQuery::prefix(Bytes::from_static(b"id:0999"))));
        let counts = policy.stats().counts();
        assert!(counts.absent > 990 && counts.absent + counts.may_contain > 1000);
    }

    #[test]
    fn keys_out_of_order_and_unusable_bytes_match_everything() {
        let policy = SlateDbRangeFilterPolicy::new(RangePolicy::new(16, 0.01).unwrap());
        let filter = build(&policy, &[b"b".to_vec(), b"a".to_vec()]);
        assert!(filter.might_match(&FilterQuery::point(Bytes::from_static(b"a"))));
        assert!(filter.might_match(&range(Bound::Included(b"zz"), Bound::Unbounded)));
        let unusable = policy.decode(b"not a filter block");
        assert!(unusable.might_match(&FilterQuery::point(Bytes::from_static(b"x"))));
        let mut bytes = Vec::new();
        unusable.encode(&mut bytes);
        assert_eq!(bytes, b"not a filter block", "re-encoded unchanged");
        assert!(policy.stats().counts().decode_errors >= 1);
    }
}
