//! A Range filter (sstfilter's [`FilterKind::Range`](sstfilter::FilterKind::Range)) as a SlateDB filter policy:
//! SlateDB asks it about the range of every scan, clipped to each SST, and skips the SSTs it rules out.

use std::fmt;
use std::ops::Bound;
use std::sync::Arc;

use ::slatedb::bytes::BufMut;
use ::slatedb::{Filter, FilterBuilder, FilterQuery, FilterTarget, RowEntry};

use sstfilter::{
    AlignedBlock, FilterBlock, FilterKind, FilterStats, RangeFilterBuilder, RangePolicy,
};

/// Range filters in SlateDB, sized by a [`RangePolicy`]: one per SST, answering range scans
/// (`FilterTarget::Range`, which SlateDB sends only to policies that say they can), prefix scans (a prefix is the
/// range of its extensions) and point lookups (at the kind's point rate; register a point policy beside it, such
/// as [`SlateDbFilterPolicy`](crate::SlateDbFilterPolicy), to answer those with a Bloom filter).
///
/// ```no_run
/// # async fn open() -> Result<(), slatedb::Error> {
/// use std::sync::Arc;
/// use slatedb::object_store::local::LocalFileSystem;
/// use sstfilter::{BlockedBloomPolicy, RangePolicy};
/// use sstfilter_slatedb::{SlateDbFilterPolicy, SlateDbRangeFilterPolicy};
///
/// let points = Arc::new(SlateDbFilterPolicy::new(BlockedBloomPolicy::new(10.0)));
/// // Scans of up to 2^10 projected values (1024 consecutive decimal ids), at most 1 % false positives.
/// let ranges = Arc::new(SlateDbRangeFilterPolicy::new(RangePolicy::new(1 << 10, 0.01)));
/// let store = Arc::new(LocalFileSystem::new_with_prefix("/tmp/db").expect("directory"));
/// let db = slatedb::Db::builder("db", store)
///     .with_filter_policies(vec![points, ranges.clone()])
///     .build()
///     .await?;
/// // ... later: ranges.stats().counts() says how many scans skipped an SST.
/// # Ok(()) }
/// ```
///
/// Its name is `"sstfilter.range"`: the blocks describe themselves (range length, rate), so changing the policy
/// leaves every SST readable. No false negative on any path: a block that fails to decode, or one built from keys
/// SlateDB gave out of order, answers "may match" (decode failures are counted).
pub struct SlateDbRangeFilterPolicy {
    policy: RangePolicy,
    stats: FilterStats,
}

/// The name SlateDB stores with every filter of this policy.
const NAME: &str = "sstfilter.range";

impl SlateDbRangeFilterPolicy {
    /// Range filters sized by `policy`.
    #[must_use]
    pub fn new(policy: RangePolicy) -> Self {
        SlateDbRangeFilterPolicy {
            policy,
            stats: FilterStats::new(),
        }
    }

    /// The statistics this policy keeps: every answer of its filters ("absent" is an SST a scan or lookup did not
    /// read) and the filters that failed to decode. Clones share the counts.
    #[must_use]
    pub fn stats(&self) -> FilterStats {
        self.stats.clone()
    }

    /// The policy that sizes the filters.
    #[must_use]
    pub fn policy(&self) -> &RangePolicy {
        &self.policy
    }
}

impl fmt::Debug for SlateDbRangeFilterPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SlateDbRangeFilterPolicy")
            .field("policy", &self.policy)
            .field("decode_errors", &self.stats.counts().decode_errors)
            .finish()
    }
}

impl ::slatedb::FilterPolicy for SlateDbRangeFilterPolicy {
    fn name(&self) -> &str {
        NAME
    }

    fn builder(&self) -> Box<dyn FilterBuilder> {
        Box::new(RangeBuilder {
            builder: Some(RangeFilterBuilder::new(self.policy)),
            policy: self.policy,
            stats: self.stats.clone(),
        })
    }

    fn decode(&self, data: &[u8]) -> Arc<dyn Filter> {
        let block = match FilterBlock::open(AlignedBlock::copy_from(data)) {
            Ok(block) if block.kind() == FilterKind::Range => Some(block),
            _ => {
                self.stats.record_decode_error();
                None
            }
        };
        Arc::new(RangeFilter {
            block,
            bytes: data.to_vec(),
            stats: self.stats.clone(),
        })
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

struct RangeBuilder {
    /// `None` once SlateDB gave a key below the one before: the filter would not hold every key, so the SST gets a
    /// filter that answers "may match" instead.
    builder: Option<RangeFilterBuilder>,
    policy: RangePolicy,
    stats: FilterStats,
}

impl FilterBuilder for RangeBuilder {
    fn add_entry(&mut self, entry: &RowEntry) {
        if let Some(builder) = &mut self.builder
            && builder.add_key(&entry.key).is_err()
        {
            self.builder = None;
        }
    }

    fn build(&mut self) -> Arc<dyn Filter> {
        let built = self.builder.replace(RangeFilterBuilder::new(self.policy));
        let bytes = built.map(RangeFilterBuilder::finish).unwrap_or_default();
        // A block this crate just wrote always opens; if it did not, or keys came out of order (empty bytes), the
        // filter must still never hide a key: it answers "may match".
        let block = FilterBlock::open(AlignedBlock::copy_from(&bytes)).ok();
        Arc::new(RangeFilter {
            block,
            bytes,
            stats: self.stats.clone(),
        })
    }
}

#[derive(Clone)]
struct RangeFilter {
    /// `None`: answers "may match" to everything.
    block: Option<FilterBlock<AlignedBlock>>,
    /// The bytes as written or read (empty for a builder that saw keys out of order), re-encoded unchanged.
    bytes: Vec<u8>,
    stats: FilterStats,
}

/// The range of the keys that start with `prefix`: from `prefix` (included) to the first string after all of its
/// extensions (excluded), or unbounded when `prefix` is empty or all `0xff`.
fn prefix_range(prefix: &[u8]) -> (Bound<&[u8]>, Bound<Vec<u8>>) {
    let mut end = prefix.to_vec();
    while end.last() == Some(&0xff) {
        end.pop();
    }
    let upper = match end.last_mut() {
        Some(last) => {
            *last += 1;
            Bound::Excluded(end)
        }
        None => Bound::Unbounded,
    };
    (Bound::Included(prefix), upper)
}

impl Filter for RangeFilter {
    fn might_match(&self, query: &FilterQuery) -> bool {
        let Some(block) = &self.block else {
            return true;
        };
        let answer = match &query.target {
            FilterTarget::Point(key) => block.may_contain(key),
            FilterTarget::Prefix(prefix) => {
                let (lower, upper) = prefix_range(prefix);
                block
                    .may_contain_range(lower, upper.as_ref().map(Vec::as_slice))
                    .may_contain()
            }
            FilterTarget::Range { lower, upper } => block
                .may_contain_range(
                    lower.as_ref().map(|b| &b[..]),
                    upper.as_ref().map(|b| &b[..]),
                )
                .may_contain(),
        };
        self.stats.record_answer(answer);
        answer
    }

    fn encode(&self, writer: &mut dyn BufMut) {
        writer.put_slice(&self.bytes);
    }

    fn size(&self) -> usize {
        self.bytes.len()
    }

    fn clamp_allocated_size(&self) -> Arc<dyn Filter> {
        Arc::new(self.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests::entry;
    use ::slatedb::FilterPolicy as _;
    use ::slatedb::bytes::Bytes;
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
        let policy = SlateDbRangeFilterPolicy::new(RangePolicy::new(4, 0.5));
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
        let policy = SlateDbRangeFilterPolicy::new(RangePolicy::new(1 << 10, 0.001));
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
        let policy = SlateDbRangeFilterPolicy::new(RangePolicy::new(16, 0.01));
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

    #[test]
    fn prefix_ranges_end_after_every_extension() {
        assert_eq!(
            prefix_range(b"ab"),
            (Bound::Included(&b"ab"[..]), Bound::Excluded(b"ac".to_vec()))
        );
        assert_eq!(
            prefix_range(b"a\xff\xff"),
            (
                Bound::Included(&b"a\xff\xff"[..]),
                Bound::Excluded(b"b".to_vec())
            )
        );
        assert_eq!(
            prefix_range(b"\xff"),
            (Bound::Included(&b"\xff"[..]), Bound::Unbounded)
        );
        assert_eq!(
            prefix_range(b""),
            (Bound::Included(&b""[..]), Bound::Unbounded)
        );
    }
}
