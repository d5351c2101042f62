//! Reading a table's filter: [`TableFilter`] answers point, prefix and range questions through one [`Answer`],
//! loads partitions through the store's loader, and keeps the fail-open rule and the counting in one place.

use core::fmt;
use core::ops::Bound;

use crate::answer::{Answer, Unfiltered};
use crate::error::Error;
use crate::format::is_partition_index;
use crate::hash::{KeyHash, key_hash};
use crate::kind::range::{self, KeyRange};
use crate::partitioned::{
    Loaded, Partition, PartitionLoader, PartitionQuestion, PartitionedFilter, VerifiedPartition,
};
use crate::prefix::{PrefixExtractor, PrefixProbe};
use crate::reader::FilterBlock;
use crate::stats::FilterStats;
use crate::tag::FilterKind;

/// Most partitions one prefix question loads: a scan whose keys span more is read without the filter
/// ([`Unfiltered::TooManyPartitions`]).
pub const MAX_PARTITIONS_PER_QUESTION: usize = 8;

/// A point lookup's key with its hash, computed once and asked of every table; with an extractor, its prefix's
/// too, for the filters that hold prefixes only.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyProbe<'k> {
    key: &'k [u8],
    hash: KeyHash,
    prefix: Option<PrefixProbe<'k>>,
}

impl<'k> KeyProbe<'k> {
    /// The probe for `key`: hashes it once.
    #[must_use]
    #[inline]
    pub fn new(key: &'k [u8]) -> Self {
        KeyProbe {
            key,
            hash: key_hash(key),
            prefix: None,
        }
    }

    /// The probe for `key` whose hash the caller already computed.
    ///
    /// REQUIRES: `hash == key_hash(key)`; another hash can make a filter hide the key.
    #[must_use]
    #[inline]
    pub fn with_hash(key: &'k [u8], hash: KeyHash) -> Self {
        debug_assert!(
            hash == crate::hash::key_hash(key),
            "KeyProbe::with_hash: {hash:?} is not the key's hash"
        );
        KeyProbe {
            key,
            hash,
            prefix: None,
        }
    }

    /// The probe for `key` in tables whose filters may hold `extractor`'s prefixes only: a filter of prefixes
    /// only is asked about the key's prefix (the key and its prefix are each hashed once).
    #[must_use]
    pub fn with_prefix(key: &'k [u8], extractor: &'k dyn PrefixExtractor) -> Self {
        KeyProbe {
            prefix: PrefixProbe::for_key(extractor, key),
            ..KeyProbe::new(key)
        }
    }

    /// The key.
    #[must_use]
    pub fn key(&self) -> &'k [u8] {
        self.key
    }

    /// Its hash.
    #[must_use]
    pub fn hash(&self) -> KeyHash {
        self.hash
    }
}

/// A [`PartitionLoader`] for tables without partitioned filters: every load fails, so a partition could only
/// answer "may contain".
#[derive(Debug, Clone, Copy, Default)]
pub struct NoPartitions;

impl PartitionLoader for NoPartitions {
    type Block<'a> = &'a [u8];
    type Error = NoPartitions;

    fn load(&self, _partition: &Partition) -> Result<Loaded<&[u8]>, NoPartitions> {
        Err(NoPartitions)
    }
}

impl fmt::Display for NoPartitions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("no partition loader")
    }
}

/// The filters of one table, opened over the blocks a store kept: the point filter (one block, or a partition
/// index whose partitions the store's [`PartitionLoader`] brings) and the range filter beside it. Every question
/// (a key, a prefix scan, a range scan) gets one [`Answer`]: "absent" only from verified bytes that say so, and
/// otherwise "may contain" or why the filter cannot tell ([`Unfiltered`]). Both filters answer what they can: a
/// point lookup is asked of the point filter and, by key, of the range filter; a prefix scan of the point filter's
/// prefixes and of the range filter as the range of the keys it covers.
///
/// A part that does not open, verify or load answers [`Unfiltered::Unusable`]; with
/// [`with_stats`](Self::with_stats) every answer is counted ([`FilterStats::record`]): this type is where a
/// store's filter answers become counts, and where an unusable filter becomes "may contain".
///
/// ```
/// use std::ops::Bound::{Excluded, Included};
/// use sstfilter::{BlockedBloomPolicy, NoPartitions, RangePolicy, TableFilter, TableFilterBuilder, TableFilterOptions};
///
/// let key = |id: u64| [&b"order/"[..], &id.to_be_bytes()].concat();
/// let options = TableFilterOptions::new().point(BlockedBloomPolicy::new(10.0)).range(RangePolicy::new(1024, 0.01));
/// let mut builder = TableFilterBuilder::new(&options)?;
/// for id in (0..1000).map(|i| i * 100) {
///     builder.add_key(&key(id))?;
/// }
/// let blocks = builder.finish()?;
/// let filter = TableFilter::open(blocks.point_block(), blocks.range_block());
/// assert!(filter.may_contain(&key(4200), &NoPartitions).may_contain());
/// assert!(filter.may_contain_range(Included(&key(4200)), Excluded(&key(4201)), &NoPartitions).may_contain());
/// let empty = filter.may_contain_range(Included(&key(4201)), Excluded(&key(4299)), &NoPartitions);
/// assert!(!empty.may_contain() || empty == sstfilter::Answer::MayContain); // absent but for ~1 % false positives
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct TableFilter<B> {
    point: PointFilter<B>,
    range: Option<Result<FilterBlock<B>, Error>>,
    stats: Option<FilterStats>,
}

/// A table's point filter, as [`TableFilter::from_parts`] takes it from a store that opened and checked it itself.
#[derive(Debug)]
pub enum PointFilter<B> {
    /// The table has none.
    None,
    /// One filter block.
    Block(FilterBlock<B>),
    /// A partition index; the store's loader brings the partitions.
    Partitioned(PartitionedFilter<B>),
    /// The table has one that cannot be used (did not read, open or verify, or failed the store's own checks):
    /// its questions answer [`Unfiltered::Unusable`].
    Unusable(Error),
}

impl<B: AsRef<[u8]>> fmt::Debug for TableFilter<B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let point = match &self.point {
            PointFilter::None => "none".to_owned(),
            PointFilter::Block(block) => format!("{} block", block.kind()),
            PointFilter::Partitioned(index) => format!("{} partitions", index.num_partitions()),
            PointFilter::Unusable(e) => format!("unusable: {e}"),
        };
        let range = match &self.range {
            None => "none".to_owned(),
            Some(Ok(_)) => "Range block".to_owned(),
            Some(Err(e)) => format!("unusable: {e}"),
        };
        f.debug_struct("TableFilter")
            .field("point", &point)
            .field("range", &range)
            .finish_non_exhaustive()
    }
}

impl<B: AsRef<[u8]>> TableFilter<B> {
    /// Opens a table's filter over its point block (a filter block, or a partition index) and its range block,
    /// each verified (CRC32 included). Never fails: a block that does not open is kept as the reason its
    /// questions answer [`Unfiltered::Unusable`] ([`point_error`](Self::point_error),
    /// [`range_error`](Self::range_error)).
    #[inline]
    pub fn open(point: Option<B>, range: Option<B>) -> Self {
        // The trailer's tag says which of the two the point block is (a cheap look, before the one full open).
        let point = match point {
            None => PointFilter::None,
            Some(bytes) if is_partition_index(bytes.as_ref()) => PartitionedFilter::open(bytes)
                .map_or_else(PointFilter::Unusable, PointFilter::Partitioned),
            Some(bytes) => {
                FilterBlock::open(bytes).map_or_else(PointFilter::Unusable, PointFilter::Block)
            }
        };
        Self::from_parts(point, range.map(FilterBlock::open))
    }

    /// A table's filter from parts a store opened and checked itself: the point filter, and the range filter
    /// (`None` without one, an error for one that cannot be used). A range part that is not a Range block is
    /// unusable.
    #[inline]
    pub fn from_parts(point: PointFilter<B>, range: Option<Result<FilterBlock<B>, Error>>) -> Self {
        let range = range.map(|opened| {
            opened.and_then(|block| {
                if block.kind() == FilterKind::Range {
                    Ok(block)
                } else {
                    Err(Error::WrongKind {
                        expected: FilterKind::Range,
                        found: block.kind(),
                    })
                }
            })
        });
        TableFilter {
            point,
            range,
            stats: None,
        }
    }

    /// Counts every answer in `stats` ([`FilterStats::record`]; clones share the counts).
    #[must_use]
    #[inline]
    pub fn with_stats(mut self, stats: FilterStats) -> Self {
        self.stats = Some(stats);
        self
    }

    /// Whether `key` may be in the table: the point filter's answer (through the key's partition), sharpened by the
    /// range filter's (asked by key). Past a partitioned filter's last key, "absent" without a load.
    #[inline]
    pub fn may_contain<L: PartitionLoader + ?Sized>(&self, key: &[u8], loader: &L) -> Answer {
        self.may_contain_key(&KeyProbe::new(key), loader)
    }

    /// [`may_contain`](Self::may_contain) with the key hashed once for every table ([`KeyProbe`]).
    #[inline]
    pub fn may_contain_key<L: PartitionLoader + ?Sized>(
        &self,
        probe: &KeyProbe<'_>,
        loader: &L,
    ) -> Answer {
        // The common cases first, as cheap as asking the block itself (this function is inlined, the general
        // path is not): one block of whole keys, or partitions, and no range filter.
        let answer = match (&self.point, &self.range) {
            (PointFilter::Block(block), None) if block.holds_whole_keys() => {
                Answer::from_may_contain(block.may_contain_key_hashed(probe.key, probe.hash))
            }
            (PointFilter::Partitioned(index), None) => key_in_partitions(index, probe, loader),
            _ => self.key_answer(probe, loader),
        };
        self.count(answer)
    }

    /// Whether any key starting with `scan` may be in the table: the point filter's prefixes of `extractor` (in
    /// each partition the scan's keys can be in, at most [`MAX_PARTITIONS_PER_QUESTION`]), and the range filter
    /// asked about the range of keys that start with `scan`. Without an extractor only the range filter answers
    /// (the point filter's part is [`Unfiltered::NoPrefixes`]).
    pub fn may_contain_scan<L: PartitionLoader + ?Sized>(
        &self,
        extractor: Option<&dyn PrefixExtractor>,
        scan: &[u8],
        loader: &L,
    ) -> Answer {
        let point = match extractor {
            Some(extractor) => self.scan_in_point(extractor, scan, loader),
            None => Answer::Unfiltered(Unfiltered::NoPrefixes),
        };
        // The scan's upper bound is computed (and allocated) only for a range filter to ask.
        let range = match &self.range {
            None => Answer::Unfiltered(Unfiltered::NoRangeFilter),
            Some(_) => {
                let upper = successor(scan);
                self.range_answer(
                    Bound::Included(scan),
                    upper.as_deref().map_or(Bound::Unbounded, Bound::Excluded),
                )
            }
        };
        self.count(combine(point, range))
    }

    /// Whether any key between `lower` and `upper` may be in the table: the range filter's answer; a range of one
    /// key (`Included(k)` to `Included(k)`) is also a point lookup; a range past a partitioned filter's last key
    /// is absent without a load.
    pub fn may_contain_range<L: PartitionLoader + ?Sized>(
        &self,
        lower: Bound<&[u8]>,
        upper: Bound<&[u8]>,
        loader: &L,
    ) -> Answer {
        self.range_question(lower, upper, loader, || self.range_answer(lower, upper))
    }

    /// [`may_contain_range`](Self::may_contain_range) for each of `ranges`, into `results` (as many as fit): the
    /// range filter answers them with the next ranges' cache lines on their way (see
    /// [`FilterBlock::may_contain_range_batch`]); each answer, and what the statistics count, equals the single
    /// question's.
    pub fn may_contain_range_batch<L: PartitionLoader + ?Sized>(
        &self,
        ranges: &[KeyRange<'_>],
        loader: &L,
        results: &mut [Answer],
    ) {
        // The range filter's answers first (all of them, so that its reads overlap), then each question's.
        match &self.range {
            Some(Ok(block)) => block.may_contain_range_batch(ranges, results),
            _ => {
                for (result, &(lower, upper)) in results.iter_mut().zip(ranges) {
                    *result = self.range_answer(lower, upper);
                }
            }
        }
        for (result, &(lower, upper)) in results.iter_mut().zip(ranges) {
            let from_block = *result;
            *result = self.range_question(lower, upper, loader, || from_block);
        }
    }

    /// A range question, the range filter's answer given by `range_answer` (asked only if needed).
    fn range_question<L: PartitionLoader + ?Sized>(
        &self,
        lower: Bound<&[u8]>,
        upper: Bound<&[u8]>,
        loader: &L,
        range_answer: impl FnOnce() -> Answer,
    ) -> Answer {
        if range::is_empty(lower, upper) {
            return self.count(Answer::Absent);
        }
        if let (PointFilter::Partitioned(index), Bound::Included(k) | Bound::Excluded(k)) =
            (&self.point, lower)
            && index.find(k).is_none()
        {
            return self.count(Answer::Absent);
        }
        let point = match range::single_key(lower, upper) {
            Some(key) => self.key_answer(&KeyProbe::new(key), loader),
            None => Answer::Unfiltered(Unfiltered::NoRangeFilter),
        };
        self.count(combine(range_answer(), point))
    }

    /// The point filter.
    #[must_use]
    pub fn point(&self) -> &PointFilter<B> {
        &self.point
    }

    /// The point filter, when it is one block.
    #[must_use]
    pub fn point_filter(&self) -> Option<&FilterBlock<B>> {
        match &self.point {
            PointFilter::Block(block) => Some(block),
            _ => None,
        }
    }

    /// The point filter's partition index, when it is partitioned.
    #[must_use]
    pub fn partitioned_filter(&self) -> Option<&PartitionedFilter<B>> {
        match &self.point {
            PointFilter::Partitioned(index) => Some(index),
            _ => None,
        }
    }

    /// The range filter, when it is usable.
    #[must_use]
    pub fn range_filter(&self) -> Option<&FilterBlock<B>> {
        self.range.as_ref().and_then(|r| r.as_ref().ok())
    }

    /// Why the point filter is unusable, if it is.
    #[must_use]
    pub fn point_error(&self) -> Option<&Error> {
        match &self.point {
            PointFilter::Unusable(e) => Some(e),
            _ => None,
        }
    }

    /// Why the range filter is unusable, if it is.
    #[must_use]
    pub fn range_error(&self) -> Option<&Error> {
        self.range.as_ref().and_then(|r| r.as_ref().err())
    }

    /// `answer`, counted in the attached statistics.
    #[inline]
    fn count(&self, answer: Answer) -> Answer {
        if let Some(stats) = &self.stats {
            stats.record(answer);
        }
        answer
    }

    /// The answer for a key, not counted.
    fn key_answer<L: PartitionLoader + ?Sized>(&self, probe: &KeyProbe<'_>, loader: &L) -> Answer {
        let point = match &self.point {
            PointFilter::None => Answer::Unfiltered(Unfiltered::NoFilter),
            PointFilter::Unusable(_) => Answer::Unfiltered(Unfiltered::Unusable),
            PointFilter::Block(block) => key_in_block(block, probe),
            PointFilter::Partitioned(index) => key_in_partitions(index, probe, loader),
        };
        let range = match &self.range {
            None => Answer::Unfiltered(Unfiltered::NoFilter),
            Some(Ok(block)) => Answer::from_may_contain(block.may_contain(probe.key)),
            Some(Err(_)) => Answer::Unfiltered(Unfiltered::Unusable),
        };
        combine(point, range)
    }

    /// The point filter's answer for a scan: its prefixes, in every partition the scan's keys can be in.
    fn scan_in_point<L: PartitionLoader + ?Sized>(
        &self,
        extractor: &dyn PrefixExtractor,
        scan: &[u8],
        loader: &L,
    ) -> Answer {
        match &self.point {
            PointFilter::None => Answer::Unfiltered(Unfiltered::NoFilter),
            PointFilter::Unusable(_) => Answer::Unfiltered(Unfiltered::Unusable),
            PointFilter::Block(block) => block.may_contain_scan(extractor, scan),
            PointFilter::Partitioned(index) => {
                // The index names the extractor of its partitions' prefixes: no load for another one.
                match index.prefix_extractor_name() {
                    None => return Answer::Unfiltered(Unfiltered::NoPrefixes),
                    Some(name) if name != extractor.name() => {
                        return Answer::Unfiltered(Unfiltered::OtherExtractor);
                    }
                    Some(_) => {}
                }
                let Some(probe) = PrefixProbe::for_scan(extractor, scan) else {
                    return Answer::Unfiltered(Unfiltered::ScanNotDetermined);
                };
                // The keys starting with `scan` lie in [scan, successor): partitions from the first whose
                // separator is >= scan to the first whose separator is >= the successor (which may hold keys below
                // it), or the last.
                let n = index.num_partitions();
                let first = index.position_of(scan);
                if first >= n {
                    return Answer::Absent;
                }
                let last =
                    successor(scan).map_or(n - 1, |upper| index.position_of(&upper).min(n - 1));
                if last + 1 - first > MAX_PARTITIONS_PER_QUESTION {
                    return Answer::Unfiltered(Unfiltered::TooManyPartitions);
                }
                let mut answer = Answer::Absent;
                for position in first..=last {
                    answer = with_partition(index, position, loader, &probe);
                    if answer != Answer::Absent {
                        break;
                    }
                }
                answer
            }
        }
    }

    /// The range filter's answer for a range.
    fn range_answer(&self, lower: Bound<&[u8]>, upper: Bound<&[u8]>) -> Answer {
        match &self.range {
            None => Answer::Unfiltered(Unfiltered::NoRangeFilter),
            Some(Ok(block)) => block.may_contain_range(lower, upper),
            Some(Err(_)) => Answer::Unfiltered(Unfiltered::Unusable),
        }
    }
}

/// A point block's answer for a key: by the key's hash (or by the key, for a block that stores keys); for a block
/// of prefixes only, by the key's prefix when the probe carries one of the block's extractor.
#[inline]
fn key_in_block<T: AsRef<[u8]>>(block: &FilterBlock<T>, probe: &KeyProbe<'_>) -> Answer {
    if block.holds_whole_keys() {
        return Answer::from_may_contain(block.may_contain_key_hashed(probe.key, probe.hash));
    }
    match &probe.prefix {
        Some(prefix) => block.may_contain_prefix(prefix),
        None => Answer::Unfiltered(Unfiltered::NoWholeKeys),
    }
}

/// A partitioned point filter's answer for a key: its partition's, or "absent" past the last separator.
#[inline]
fn key_in_partitions<B: AsRef<[u8]>, L: PartitionLoader + ?Sized>(
    index: &PartitionedFilter<B>,
    probe: &KeyProbe<'_>,
    loader: &L,
) -> Answer {
    let position = index.position_of(probe.key);
    if position < index.num_partitions() {
        with_partition(index, position, loader, probe)
    } else {
        Answer::Absent
    }
}

/// `question`'s answer from partition `position` (one the index has): asked in place if `loader` holds the
/// partition, else loaded.
#[inline]
fn with_partition<B: AsRef<[u8]>, L: PartitionLoader + ?Sized, Q: BlockQuestion>(
    index: &PartitionedFilter<B>,
    position: usize,
    loader: &L,
    question: Q,
) -> Answer {
    let question = InPartition {
        index,
        position,
        question,
    };
    match loader.ask_in_place(&question) {
        Some(answer) => answer,
        None => load_partition(loader, &question),
    }
}

/// `question`'s answer from its partition loaded through `loader` and verified (unless the loader hands a
/// verified one); [`Unfiltered::Unusable`] if the load or the checks fail.
#[inline(never)]
fn load_partition<B: AsRef<[u8]>, L: PartitionLoader + ?Sized, Q: BlockQuestion>(
    loader: &L,
    question: &InPartition<'_, B, Q>,
) -> Answer {
    let Some(partition) = question.partition() else {
        return Answer::Unfiltered(Unfiltered::Unusable);
    };
    match loader.load(&partition) {
        Ok(Loaded::Bytes(bytes)) => {
            match question.index.verify_partition(&partition, bytes.as_ref()) {
                Ok(verified) => question.ask(&verified),
                Err(_) => Answer::Unfiltered(Unfiltered::Unusable),
            }
        }
        Ok(Loaded::Verified(verified)) => question.ask(&verified),
        Err(_) => Answer::Unfiltered(Unfiltered::Unusable),
    }
}

/// A question for a filter block of any bytes.
trait BlockQuestion {
    fn ask<T: AsRef<[u8]>>(&self, block: &FilterBlock<T>) -> Answer;
}

impl BlockQuestion for &KeyProbe<'_> {
    #[inline]
    fn ask<T: AsRef<[u8]>>(&self, block: &FilterBlock<T>) -> Answer {
        key_in_block(block, self)
    }
}

impl BlockQuestion for &PrefixProbe<'_> {
    fn ask<T: AsRef<[u8]>>(&self, block: &FilterBlock<T>) -> Answer {
        block.may_contain_prefix(self)
    }
}

/// A block question for partition `position` of `index`, asked only once the partition given is checked to be it.
struct InPartition<'a, B, Q> {
    index: &'a PartitionedFilter<B>,
    position: usize,
    question: Q,
}

impl<B, Q> crate::partitioned::sealed::Sealed for InPartition<'_, B, Q> {}

impl<B: AsRef<[u8]>, Q: BlockQuestion> PartitionQuestion for InPartition<'_, B, Q> {
    type Answer = Answer;

    fn position(&self) -> usize {
        self.position
    }

    fn partition(&self) -> Option<Partition> {
        self.index.partition(self.position)
    }

    #[inline]
    fn ask<T: AsRef<[u8]>>(&self, partition: &VerifiedPartition<T>) -> Answer {
        match self.index.holds(self.position, partition) {
            Ok(()) => self.question.ask(partition.filter()),
            Err(_) => Answer::Unfiltered(Unfiltered::Unusable),
        }
    }
}

/// Two filters' answers to one question, as one: "absent" if either is certain of it, else "may contain" if
/// either answered, else the first one's reason (an unusable filter's before any other, so it is counted).
#[inline]
fn combine(first: Answer, second: Answer) -> Answer {
    match (first, second) {
        (Answer::Absent, _) | (_, Answer::Absent) => Answer::Absent,
        (Answer::MayContain, _) | (_, Answer::MayContain) => Answer::MayContain,
        (_, Answer::Unfiltered(Unfiltered::Unusable)) => Answer::Unfiltered(Unfiltered::Unusable),
        (first, _) => first,
    }
}

/// The smallest byte string greater than every string that starts with `prefix`, or `None` if there is none (the
/// prefix is empty or all `0xFF`): the prefix with its last byte below `0xFF` incremented and the rest dropped.
fn successor(prefix: &[u8]) -> Option<Vec<u8>> {
    let keep = prefix.iter().rposition(|&b| b != 0xFF)?;
    let mut upper = prefix.get(..=keep)?.to_vec();
    if let Some(last) = upper.last_mut() {
        *last += 1;
    }
    Some(upper)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_successor_bounds_every_extension() {
        assert_eq!(successor(b"ab"), Some(b"ac".to_vec()));
        assert_eq!(successor(b"a\xff\xff"), Some(b"b".to_vec()));
        assert_eq!(successor(b"\xff"), None);
        assert_eq!(successor(b""), None);
        for prefix in [&b"a"[..], b"a\xfe", b"\x00\xff"] {
            let upper = successor(prefix).unwrap();
            for tail in [&b""[..], b"\x00", b"\xff\xff\xff"] {
                let extended = [prefix, tail].concat();
                assert!(extended < upper, "{extended:?} < {upper:?}");
            }
            assert!(upper.as_slice() > prefix);
        }
    }

    #[test]
    fn answers_combine_toward_the_certain_one() {
        use Answer::{Absent, MayContain, Unfiltered as U};
        assert_eq!(combine(MayContain, Absent), Absent);
        assert_eq!(combine(U(Unfiltered::Unusable), Absent), Absent);
        assert_eq!(combine(U(Unfiltered::NoFilter), MayContain), MayContain);
        assert_eq!(
            combine(U(Unfiltered::NoPrefixes), U(Unfiltered::Unusable)),
            U(Unfiltered::Unusable)
        );
        assert_eq!(
            combine(U(Unfiltered::NoPrefixes), U(Unfiltered::NoRangeFilter)),
            U(Unfiltered::NoPrefixes)
        );
    }
}
