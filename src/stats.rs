//! Filter statistics a storage engine keeps: how often its filters answered "absent" (a read avoided) and "may
//! contain", how often a "may contain" was right, and how many filters could not be used at all.
//!
//! RocksDB keeps the same tallies (`BLOOM_FILTER_USEFUL`, `BLOOM_FILTER_FULL_POSITIVE`,
//! `BLOOM_FILTER_FULL_TRUE_POSITIVE`); from them an operator reads the false-positive rate the filters really
//! have, to compare with the rate they were built for.

use std::cell::Cell;

use crate::answer::{Answer, Reason};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// Lock-free counters of filter answers, updated by whoever consults filters (a table reader, a store adapter)
/// and read by whoever operates the store. Cloning is cheap and clones share the counts, so a handle can be kept
/// before the policy that updates it is handed to a store.
///
/// ```
/// use sstfilter::{Answer, FilterStats, Reason};
///
/// let stats = FilterStats::new();
/// let seen_by_the_store = stats.clone(); // e.g. given to a TableFilter with `with_stats`
/// seen_by_the_store.record(Answer::Absent); // the filter said "absent": no read
/// seen_by_the_store.record(Answer::MayContain(Reason::Matched)); // "may contain": the read ...
/// seen_by_the_store.record_true_positive(); // ... found the key
/// seen_by_the_store.record(Answer::MayContain(Reason::Matched)); // "may contain", and the read found nothing
/// let counts = stats.counts();
/// assert_eq!(counts.reads_avoided(), 1);
/// assert_eq!(counts.observed_fpr(), Some(0.5)); // 1 false positive among 2 absent keys
/// ```
///
/// The counters are striped: each thread adds to one of 8 cache-line-aligned copies, and
/// [`counts`](Self::counts) sums them. Threads sharing one set of counters would move its cache line between
/// cores on every lookup (BENCHMARKS.md, "Filter statistics").
#[derive(Debug, Clone, Default)]
pub struct FilterStats(Arc<[Stripe; STRIPES]>);

/// Copies of the counters, one per group of threads.
const STRIPES: usize = 8;

/// One copy of the counters, alone in its cache lines (128 bytes: the adjacent-line prefetcher pairs lines),
/// indexed by [`Counter`].
#[derive(Debug, Default)]
#[repr(align(128))]
struct Stripe([AtomicU64; Counter::COUNT]);

/// What each counter of a [`Stripe`] counts.
#[derive(Clone, Copy)]
enum Counter {
    Absent,
    MayContain,
    TruePositives,
    DecodeErrors,
    Unfiltered,
}

impl Counter {
    /// The number of counters: one past the last.
    const COUNT: usize = Counter::Unfiltered as usize + 1;

    /// The counter an answer adds to.
    #[inline]
    const fn of(answer: Answer) -> Self {
        match answer {
            Answer::Absent => Counter::Absent,
            Answer::MayContain(Reason::Matched) => Counter::MayContain,
            Answer::MayContain(Reason::Unusable) => Counter::DecodeErrors,
            Answer::MayContain(_) => Counter::Unfiltered,
        }
    }
}

/// The stripe of the calling thread: threads take stripes in turn as they first count. (A `const` thread-local,
/// which needs no lazy-initialisation check on every access.)
#[inline]
fn stripe_index() -> usize {
    thread_local! {
        static STRIPE: Cell<usize> = const { Cell::new(STRIPES) };
    }
    STRIPE.with(|stripe| match stripe.get() {
        STRIPES => first_stripe(stripe),
        index => index,
    })
}

/// The stripe of a thread counting for the first time, which it keeps.
#[cold]
#[inline(never)]
fn first_stripe(stripe: &Cell<usize>) -> usize {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let index = NEXT.fetch_add(1, Ordering::Relaxed) % STRIPES;
    stripe.set(index);
    index
}

impl FilterStats {
    /// Counters at zero.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds one to `counter` in this thread's stripe. Inlined into every lookup that counts, so kept to a few
    /// instructions: a lookup's length decides how far the next one can start while it waits for memory.
    #[inline]
    fn add(&self, counter: Counter) {
        // `stripe_index` is below STRIPES and the counter below COUNT, so the branch is never taken.
        if let Some(counter) = self
            .0
            .get(stripe_index())
            .and_then(|stripe| stripe.0.get(counter as usize))
        {
            counter.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Records that the read after a "may contain" answer found the key.
    pub fn record_true_positive(&self) {
        self.add(Counter::TruePositives);
    }

    /// Records `answer` as the store took it: an answer, an unusable filter, or a question no filter could answer.
    /// What [`TableFilter::with_stats`](crate::TableFilter::with_stats) does for every answer; a store that asks
    /// without attaching the counts records here.
    #[inline]
    pub fn record(&self, answer: Answer) {
        self.add(Counter::of(answer));
    }

    /// The counts so far. Each counter is read on its own (relaxed), so counts taken while lookups run may be a
    /// few lookups apart from each other.
    #[must_use]
    pub fn counts(&self) -> FilterCounts {
        let sum = |counter: Counter| -> u64 {
            self.0
                .iter()
                .filter_map(|stripe| stripe.0.get(counter as usize))
                .map(|count| count.load(Ordering::Relaxed))
                .sum()
        };
        FilterCounts {
            absent: sum(Counter::Absent),
            may_contain: sum(Counter::MayContain),
            true_positives: sum(Counter::TruePositives),
            decode_errors: sum(Counter::DecodeErrors),
            unfiltered: sum(Counter::Unfiltered),
        }
    }
}

/// A snapshot of [`FilterStats`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct FilterCounts {
    /// Answers "absent": reads avoided.
    pub absent: u64,
    /// Answers "may contain".
    pub may_contain: u64,
    /// "May contain" answers whose read found the key (recorded by callers that read).
    pub true_positives: u64,
    /// Filters that could not be used and were answered "may contain" without being consulted.
    pub decode_errors: u64,
    /// Questions no filter could answer (every [`Reason`] but a match or an unusable filter), read without one.
    pub unfiltered: u64,
}

impl FilterCounts {
    /// Reads the filters avoided: the "absent" answers.
    #[must_use]
    pub const fn reads_avoided(&self) -> u64 {
        self.absent
    }

    /// The false-positive rate the filters showed: "may contain" answers for keys that were not there, over all
    /// queries for keys that were not there. `None` before any such query. Meaningful only where the caller
    /// records true positives.
    #[must_use]
    pub fn observed_fpr(&self) -> Option<f64> {
        let false_positives = self.may_contain.saturating_sub(self.true_positives);
        let negatives = self.absent + false_positives;
        (negatives > 0).then(|| false_positives as f64 / negatives as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clones_share_counts_and_the_rate_counts_only_false_positives() {
        let stats = FilterStats::new();
        assert_eq!(stats.counts().observed_fpr(), None);
        let other = stats.clone();
        for _ in 0..90 {
            other.record(Answer::Absent);
        }
        for _ in 0..15 {
            other.record(Answer::MayContain(Reason::Matched));
        }
        for _ in 0..5 {
            other.record_true_positive();
        }
        other.record(Answer::MayContain(Reason::Unusable));
        let counts = stats.counts();
        assert_eq!(
            (
                counts.absent,
                counts.may_contain,
                counts.true_positives,
                counts.decode_errors
            ),
            (90, 15, 5, 1)
        );
        assert_eq!(counts.reads_avoided(), 90);
        assert_eq!(counts.observed_fpr(), Some(0.1)); // 10 false positives among 100 absent keys
    }

    #[test]
    fn each_answer_counts_in_its_own_counter() {
        let stats = FilterStats::new();
        let unfiltered = [
            Reason::NoPrefixes,
            Reason::OtherExtractor,
            Reason::ScanNotDetermined,
            Reason::NoWholeKeys,
            Reason::NoRangeFilter,
            Reason::NoFilter,
            Reason::TooManyPartitions,
        ];
        // 1 absent, 2 "may contain", 3 unusable, and each other reason once.
        let answers = [Answer::Absent]
            .into_iter()
            .chain([Answer::MayContain(Reason::Matched); 2])
            .chain([Answer::MayContain(Reason::Unusable); 3])
            .chain(unfiltered.map(Answer::MayContain));
        for answer in answers {
            stats.record(answer);
        }
        for _ in 0..4 {
            stats.record_true_positive();
        }
        let counts = stats.counts();
        assert_eq!(
            (
                counts.absent,
                counts.may_contain,
                counts.decode_errors,
                counts.unfiltered,
                counts.true_positives
            ),
            (1, 2, 3, unfiltered.len() as u64, 4)
        );
    }

    #[test]
    fn counts_from_many_threads_add_up() {
        let stats = FilterStats::new();
        std::thread::scope(|scope| {
            for t in 0..(2 * STRIPES as u64) {
                let stats = stats.clone();
                scope.spawn(move || {
                    for i in 0..1000 {
                        stats.record(Answer::from_may_contain(i % 4 == 0));
                    }
                    for _ in 0..t {
                        stats.record_true_positive();
                    }
                    stats.record(Answer::MayContain(Reason::Unusable));
                });
            }
        });
        let counts = stats.counts();
        let threads = 2 * STRIPES as u64;
        assert_eq!(counts.may_contain, 250 * threads);
        assert_eq!(counts.absent, 750 * threads);
        assert_eq!(counts.true_positives, threads * (threads - 1) / 2);
        assert_eq!(counts.decode_errors, threads);
    }
}
