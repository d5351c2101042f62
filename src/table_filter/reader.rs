//! Reading a table's filter: [`TableFilter`] answers point, prefix and range questions through one [`Answer`],
//! loads partitions through the store's loader, and keeps the fail-open rule and the counting in one place.

use core::fmt;
use core::ops::Bound;
use std::sync::Arc;

use super::options::TableFilterOptions;
use crate::answer::{Answer, Reason};
use crate::error::{Error, UsageError};
use crate::format::is_partition_index;
use crate::hash::{KeyHash, key_hash};
use crate::kind::range::{self, KeyRange};
use crate::partitioned::{
    Partition, PartitionLoader, PartitionQuestion, PartitionedFilter, VerifiedPartition,
};
use crate::prefix::{PrefixExtractor, PrefixProbe};
use crate::reader::FilterBlock;
use crate::stats::FilterStats;
use crate::tag::FilterKind;

/// Most partitions one prefix question loads: a scan whose keys span more is read without the filter
/// ([`Reason::TooManyPartitions`]).
const MAX_PARTITIONS_PER_QUESTION: usize = 8;

/// A point lookup's key with its hash, computed once and asked of every table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyProbe<'k> {
    key: &'k [u8],
    hash: KeyHash,
}

impl<'k> KeyProbe<'k> {
    /// The probe for `key`: hashes it once.
    #[must_use]
    #[inline]
    pub fn new(key: &'k [u8]) -> Self {
        KeyProbe {
            key,
            hash: key_hash(key),
        }
    }

    /// The probe for `key` whose hash the caller already computed.
    ///
    /// REQUIRES: `hash == key_hash(key)`; another hash can make a filter hide the key (a debug build checks).
    #[must_use]
    #[inline]
    pub fn with_hash(key: &'k [u8], hash: KeyHash) -> Self {
        debug_assert!(
            hash == key_hash(key),
            "KeyProbe::with_hash: {hash:?} is not the key's hash"
        );
        KeyProbe { key, hash }
    }

    /// The key.
    #[must_use]
    pub fn key(&self) -> &'k [u8] {
        self.key
    }
}

/// A [`PartitionLoader`] for tables without partitioned filters: every load fails, so a partition could only
/// answer "may contain".
#[derive(Debug, Clone, Copy, Default)]
pub struct NoPartitions;

impl PartitionLoader for NoPartitions {
    type Block<'a> = &'a [u8];
    type Error = NoPartitions;

    fn load(&self, _partition: &Partition) -> Result<&[u8], NoPartitions> {
        Err(NoPartitions)
    }
}

/// The filters of one table, opened over the blocks a store kept: the point filter (one block, or a partition
/// index whose partitions the store's [`PartitionLoader`] brings) and the range filter beside it. Every question
/// (a key, a prefix scan, a range scan) gets one [`Answer`]: "absent" only from verified bytes that say so, and
/// otherwise "may contain" with the reason ([`Reason`]). Both filters answer what they can: a point lookup is
/// asked of the point filter and, by key, of the range filter; a prefix scan of the point filter's prefixes and of
/// the range filter as the range of the keys it covers.
///
/// A part that does not open, verify or load answers [`Reason::Unusable`]; with
/// [`with_stats`](Self::with_stats) every answer is counted: this type is where a store's filter answers become
/// counts, and where an unusable filter becomes "may contain".
///
/// ```
/// use std::ops::Bound::{Excluded, Included};
/// use sstfilter::{
///     Answer, BlockedBloomPolicy, KeyProbe, NoPartitions, RangePolicy, TableFilter, TableFilterBuilder,
///     TableFilterOptions,
/// };
///
/// let key = |id: u64| [&b"order/"[..], &id.to_be_bytes()].concat();
/// let options = TableFilterOptions::new().point(BlockedBloomPolicy::new(10.0)?).range(RangePolicy::new(1024, 0.01)?)?;
/// let mut builder = TableFilterBuilder::new(&options);
/// for id in (0..1000).map(|i| i * 100) {
///     builder.add_key(&key(id))?;
/// }
/// let blocks = builder.finish()?;
/// let filter = TableFilter::open(&options, blocks.point_block(), blocks.range_block())?;
/// assert!(filter.may_contain(&KeyProbe::new(&key(4200)), &NoPartitions).must_read());
/// assert!(filter.may_contain_range(Included(&key(4200)), Excluded(&key(4201)), &NoPartitions).must_read());
/// // No key from 4201 to 4298: absent but for the range filter's false positives (at most 1 % · 98 / 1024).
/// let empty = filter.may_contain_range(Included(&key(4201)), Excluded(&key(4299)), &NoPartitions);
/// # let _ = empty;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct TableFilter<B> {
    point: PointFilter<B>,
    range: Option<Result<FilterBlock<B>, Error>>,
    /// The store's prefix extractor: asked for a scan's prefix, and for a key's in a filter of prefixes only.
    extractor: Option<Arc<dyn PrefixExtractor>>,
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
    /// its questions answer [`Reason::Unusable`].
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
            .field(
                "prefix_extractor",
                &self.extractor.as_ref().map(|e| e.name()),
            )
            .finish_non_exhaustive()
    }
}

impl<B: AsRef<[u8]>> TableFilter<B> {
    /// Opens a table's filter over its point block (a filter block, or a partition index) and its range block,
    /// each verified (CRC32 included), for a store whose tables are built with `options` (of which the reader
    /// needs the prefix extractor: the bytes name it, but only the store has its code).
    ///
    /// A block that does not open is kept as the reason its questions answer [`Reason::Unusable`]
    /// ([`point_error`](Self::point_error), [`range_error`](Self::range_error)). A block that opens in the other's
    /// place (a Range block given as the point block, or a point filter as the range block) is the store's
    /// mistake, refused with [`UsageError::WrongBlock`].
    #[inline]
    pub fn open(
        options: &TableFilterOptions,
        point: Option<B>,
        range: Option<B>,
    ) -> Result<Self, UsageError> {
        // The trailer's tag says which of the two the point block is (a cheap look, before the one full open).
        let point = match point {
            None => PointFilter::None,
            Some(bytes) if is_partition_index(bytes.as_ref()) => PartitionedFilter::open(bytes)
                .map_or_else(PointFilter::Unusable, PointFilter::Partitioned),
            Some(bytes) => {
                FilterBlock::open(bytes).map_or_else(PointFilter::Unusable, PointFilter::Block)
            }
        };
        Self::from_parts(options, point, range.map(FilterBlock::open))
    }

    /// A table's filter from parts a store opened and checked itself: the point filter, and the range filter
    /// (`None` without one, an error for one that cannot be used). Refuses blocks in each other's place as
    /// [`open`](Self::open) does.
    #[inline]
    pub fn from_parts(
        options: &TableFilterOptions,
        point: PointFilter<B>,
        range: Option<Result<FilterBlock<B>, Error>>,
    ) -> Result<Self, UsageError> {
        if let PointFilter::Block(block) = &point
            && block.kind() == FilterKind::Range
        {
            return Err(UsageError::WrongBlock {
                expected: "the point filter (a hash kind or a partition index)",
                found: FilterKind::Range,
            });
        }
        if let Some(Ok(block)) = &range
            && block.kind() != FilterKind::Range
        {
            return Err(UsageError::WrongBlock {
                expected: "the range filter (a Range block)",
                found: block.kind(),
            });
        }
        Ok(TableFilter {
            point,
            range,
            extractor: options.prefix_extractor().cloned(),
            stats: None,
        })
    }

    /// Counts every answer in `stats` (clones share the counts).
    #[must_use]
    #[inline]
    pub fn with_stats(mut self, stats: FilterStats) -> Self {
        self.stats = Some(stats);
        self
    }

    /// Whether the probe's key may be in the table: the point filter's answer (through the key's partition; for a
    /// filter of prefixes only, through the key's prefix), sharpened by the range filter's (asked by key). Past a
    /// partitioned filter's last key, "absent" without a load.
    #[inline]
    pub fn may_contain<L: PartitionLoader>(&self, probe: &KeyProbe<'_>, loader: &L) -> Answer {
        // The common cases first, as cheap as asking the block itself (this function is inlined, the general
        // path is not): one block of whole keys, or partitions, and no range filter.
        let answer = match (&self.point, &self.range) {
            (PointFilter::Block(block), None) if block.holds_whole_keys() => {
                Answer::from_may_contain(block.may_contain_key_hashed(probe.key, probe.hash))
            }
            (PointFilter::Partitioned(index), None) if index.holds_whole_keys() => {
                key_in_partitions(index, &self.by_key(probe), loader)
            }
            _ => self.key_answer(probe, loader),
        };
        self.count(answer)
    }

    /// Whether any key that starts with `prefix` may be in the table (the question of a prefix scan): the point
    /// filter's prefixes (of the options' extractor; in each partition the scan's keys can be in, at most 8), and
    /// the range filter asked about the range of keys that start with `prefix`. Without an extractor in the
    /// options only the range filter answers.
    pub fn may_contain_prefix<L: PartitionLoader>(&self, prefix: &[u8], loader: &L) -> Answer {
        let point = match &self.extractor {
            Some(extractor) => self.scan_in_point(extractor.as_ref(), prefix, loader),
            None => Answer::MayContain(Reason::NoPrefixes),
        };
        // The scan's upper bound is computed (and allocated) only for a range filter to ask.
        let range = match &self.range {
            None => Answer::MayContain(Reason::NoRangeFilter),
            Some(_) => {
                let upper = successor(prefix);
                self.range_answer(
                    Bound::Included(prefix),
                    upper.as_deref().map_or(Bound::Unbounded, Bound::Excluded),
                )
            }
        };
        self.count(combine(point, range))
    }

    /// Whether any key between `lower` and `upper` may be in the table: the range filter's answer; a range of one
    /// key (`Included(k)` to `Included(k)`) is also a point lookup; a range past a partitioned filter's last key
    /// is absent without a load.
    pub fn may_contain_range<L: PartitionLoader>(
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
    pub fn may_contain_range_batch<L: PartitionLoader>(
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
    fn range_question<L: PartitionLoader>(
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
            None => Answer::MayContain(Reason::NoRangeFilter),
        };
        self.count(combine(range_answer(), point))
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

    /// The question a point filter block is asked for `probe`: by the key's hash, and by its prefix (of the
    /// options' extractor) for a block of prefixes only.
    #[inline]
    fn by_key<'a>(&'a self, probe: &KeyProbe<'a>) -> ByKey<'a> {
        ByKey {
            key: probe.key,
            hash: probe.hash,
            extractor: self.extractor.as_deref(),
        }
    }

    /// The answer for a key, not counted.
    fn key_answer<L: PartitionLoader>(&self, probe: &KeyProbe<'_>, loader: &L) -> Answer {
        let point = match &self.point {
            PointFilter::None => Answer::MayContain(Reason::NoFilter),
            PointFilter::Unusable(_) => Answer::MayContain(Reason::Unusable),
            PointFilter::Block(block) => key_in_block(block, &self.by_key(probe)),
            PointFilter::Partitioned(index) => {
                key_in_partitions(index, &self.by_key(probe), loader)
            }
        };
        let range = match &self.range {
            None => Answer::MayContain(Reason::NoFilter),
            Some(Ok(block)) => Answer::from_may_contain(block.may_contain(probe.key)),
            Some(Err(_)) => Answer::MayContain(Reason::Unusable),
        };
        combine(point, range)
    }

    /// The point filter's answer for a scan: its prefixes, in every partition the scan's keys can be in.
    fn scan_in_point<L: PartitionLoader>(
        &self,
        extractor: &dyn PrefixExtractor,
        scan: &[u8],
        loader: &L,
    ) -> Answer {
        match &self.point {
            PointFilter::None => Answer::MayContain(Reason::NoFilter),
            PointFilter::Unusable(_) => Answer::MayContain(Reason::Unusable),
            PointFilter::Block(block) => block.may_contain_prefix(extractor, scan),
            PointFilter::Partitioned(index) => {
                // The index names the extractor of its partitions' prefixes: no load for another one.
                match index.prefix_extractor_name() {
                    None => return Answer::MayContain(Reason::NoPrefixes),
                    Some(name) if name != extractor.name() => {
                        return Answer::MayContain(Reason::OtherExtractor);
                    }
                    Some(_) => {}
                }
                let Some(probe) = PrefixProbe::for_scan(extractor, scan) else {
                    return Answer::MayContain(Reason::ScanNotDetermined);
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
                    return Answer::MayContain(Reason::TooManyPartitions);
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
            None => Answer::MayContain(Reason::NoRangeFilter),
            Some(Ok(block)) => block.may_contain_range(lower, upper),
            Some(Err(_)) => Answer::MayContain(Reason::Unusable),
        }
    }
}

/// A point question for a filter block: the key and its hash, and the store's extractor for a block of prefixes
/// only.
struct ByKey<'a> {
    key: &'a [u8],
    hash: KeyHash,
    extractor: Option<&'a dyn PrefixExtractor>,
}

/// A point block's answer for a key: by the key's hash (or by the key, for a block that stores keys); for a block
/// of prefixes only, by the key's prefix when the store's extractor is the block's.
#[inline]
fn key_in_block<T: AsRef<[u8]>>(block: &FilterBlock<T>, question: &ByKey<'_>) -> Answer {
    if block.holds_whole_keys() {
        return Answer::from_may_contain(block.may_contain_key_hashed(question.key, question.hash));
    }
    match question
        .extractor
        .and_then(|extractor| PrefixProbe::for_key(extractor, question.key))
    {
        Some(prefix) => block.may_contain_probe(&prefix),
        None => Answer::MayContain(Reason::NoWholeKeys),
    }
}

/// A partitioned point filter's answer for a key: its partition's, or "absent" past the last separator.
#[inline]
fn key_in_partitions<B: AsRef<[u8]>, L: PartitionLoader>(
    index: &PartitionedFilter<B>,
    question: &ByKey<'_>,
    loader: &L,
) -> Answer {
    let position = index.position_of(question.key);
    if position < index.num_partitions() {
        with_partition(index, position, loader, question)
    } else {
        Answer::Absent
    }
}

/// `question`'s answer from partition `position` (one the index has): asked in place if `loader` holds the
/// partition, else loaded.
#[inline]
fn with_partition<B: AsRef<[u8]>, L: PartitionLoader, Q: BlockQuestion>(
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

/// `question`'s answer from its partition loaded through `loader` and verified; [`Reason::Unusable`] if the load
/// or the checks fail.
#[inline(never)]
fn load_partition<B: AsRef<[u8]>, L: PartitionLoader, Q: BlockQuestion>(
    loader: &L,
    question: &InPartition<'_, B, Q>,
) -> Answer {
    let Some(partition) = question.partition() else {
        return Answer::MayContain(Reason::Unusable);
    };
    match loader.load(&partition) {
        Ok(bytes) => match question.index.verify_partition(&partition, bytes.as_ref()) {
            Ok(verified) => question.ask(&verified),
            Err(_) => Answer::MayContain(Reason::Unusable),
        },
        Err(_) => Answer::MayContain(Reason::Unusable),
    }
}

/// A question for a filter block of any bytes.
trait BlockQuestion {
    fn ask<T: AsRef<[u8]>>(&self, block: &FilterBlock<T>) -> Answer;
}

impl BlockQuestion for &ByKey<'_> {
    #[inline]
    fn ask<T: AsRef<[u8]>>(&self, block: &FilterBlock<T>) -> Answer {
        key_in_block(block, self)
    }
}

impl BlockQuestion for &PrefixProbe<'_> {
    fn ask<T: AsRef<[u8]>>(&self, block: &FilterBlock<T>) -> Answer {
        block.may_contain_probe(self)
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
            Err(_) => Answer::MayContain(Reason::Unusable),
        }
    }
}

/// Two filters' answers to one question, as one: "absent" if either is certain of it, else "may contain" if
/// either answered, else the first one's reason (an unusable filter's before any other, so it is counted).
#[inline]
fn combine(first: Answer, second: Answer) -> Answer {
    match (first, second) {
        (Answer::Absent, _) | (_, Answer::Absent) => Answer::Absent,
        (Answer::MayContain(Reason::Matched), _) | (_, Answer::MayContain(Reason::Matched)) => {
            Answer::MayContain(Reason::Matched)
        }
        (_, Answer::MayContain(Reason::Unusable)) => Answer::MayContain(Reason::Unusable),
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
        use Answer::{Absent, MayContain as U};
        let matched = U(Reason::Matched);
        assert_eq!(combine(matched, Absent), Absent);
        assert_eq!(combine(U(Reason::Unusable), Absent), Absent);
        assert_eq!(combine(U(Reason::NoFilter), matched), matched);
        assert_eq!(
            combine(U(Reason::NoPrefixes), U(Reason::Unusable)),
            U(Reason::Unusable)
        );
        assert_eq!(
            combine(U(Reason::NoPrefixes), U(Reason::NoRangeFilter)),
            U(Reason::NoPrefixes)
        );
    }
}
