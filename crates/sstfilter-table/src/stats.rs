//! Lookup counters: what the filter decided and which reads it saved.

use core::ops::{AddAssign, Sub};
use core::sync::atomic::{AtomicU64, Ordering};

/// Declares the counters once: the public snapshot type, its lock-free live counterpart and the arithmetic.
///
/// A lookup adds to one live counter, the one of its outcome; the snapshot derives the totals (`derived`, each an
/// expression over the live counters' values, named as the fields) rather than a lookup adding to them too. Each
/// add is an atomic read-modify-write of a line every thread asking the table writes (on x86 also a full fence),
/// and a snapshot of sums is consistent by construction (its lookups are always the sum of their outcomes).
macro_rules! table_counters {
    (
        derived { $($(#[doc = $ddoc:literal])+ $derived:ident = $value:expr,)+ }
        counted { $($(#[doc = $doc:literal])+ $field:ident,)+ }
        live { $($(#[doc = $ldoc:literal])+ $live:ident,)+ }
    ) => {
        /// A snapshot of a table's lookup counters ([`Table::stats`](super::Table::stats)).
        ///
        /// Snapshots of several tables add up (`+=`), and the difference of two snapshots of one table (`-`)
        /// counts what happened in between.
        #[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
        #[non_exhaustive]
        pub struct TableStats {
            $($(#[doc = $ddoc])+ pub $derived: u64,)+
            $($(#[doc = $doc])+ pub $field: u64,)+
        }

        /// The live counters a table bumps during lookups (relaxed atomics: each is an independent tally).
        #[derive(Debug, Default)]
        pub(crate) struct Counters {
            $(pub(crate) $field: AtomicU64,)+
            $($(#[doc = $ldoc])+ pub(crate) $live: AtomicU64,)+
        }

        impl Counters {
            pub(crate) fn snapshot(&self) -> TableStats {
                $(let $field = self.$field.load(Ordering::Relaxed);)+
                $(let $live = self.$live.load(Ordering::Relaxed);)+
                TableStats { $($derived: $value,)+ $($field,)+ }
            }
        }

        impl AddAssign for TableStats {
            fn add_assign(&mut self, other: TableStats) {
                $(self.$derived += other.$derived;)+
                $(self.$field += other.$field;)+
            }
        }

        impl Sub for TableStats {
            type Output = TableStats;

            /// Counts per field, saturating at zero.
            fn sub(self, earlier: TableStats) -> TableStats {
                TableStats {
                    $($derived: self.$derived.saturating_sub(earlier.$derived),)+
                    $($field: self.$field.saturating_sub(earlier.$field),)+
                }
            }
        }
    };
}

table_counters! {
    derived {
        /// Calls to `get`.
        lookups =
            negatives + cached_negatives + filter_positives + filter_unavailable + unfiltered_lookups,
        /// Lookups the filter block answered.
        filter_checks = negatives + cached_negatives + filter_positives,
        /// Lookups the filter answered "absent": each is a data-block read avoided.
        filter_negatives = negatives + cached_negatives,
        /// Filter partitions found in the partition cache.
        partition_cache_hits = partition_hits + cached_negatives,
    }
    counted {
        /// Lookups on a table whose filter block is corrupt or unreadable, answered "may contain" instead.
        filter_unavailable,
        /// Data blocks read from the file (one positioned read each).
        data_block_reads,
        /// Lookups the filter answered "may contain" for a key the table does not hold.
        false_positives,
        /// Calls to `scan_prefix`.
        prefix_scans,
        /// Prefix scans the filter answered "absent": each is a table skipped without a read.
        prefix_scans_skipped,
        /// Filter partitions read from the file (a partitioned filter's cache misses).
        partition_loads,
        /// Prefix scans the filter could not answer (no prefixes, another extractor, a scan shorter than the
        /// extracted prefix, an unusable filter block): the table was read.
        prefix_scans_unfiltered,
        /// Calls to `scan_range`.
        range_scans,
        /// Range scans the filter answered "absent": each is a table skipped without a read.
        range_scans_skipped,
        /// Range scans the filter could not answer (a point filter only, an unusable filter
        /// block): the table was read.
        range_scans_unfiltered,
    }
    live {
        /// Lookups the filter answered "absent" other than from a partition found in the cache.
        negatives,
        /// Lookups a partition found in the cache answered "absent": the negative and the cache hit, in one add.
        cached_negatives,
        /// Filter partitions found in the cache by all but those lookups.
        partition_hits,
        /// Lookups the filter answered "may contain".
        filter_positives,
        /// Lookups no filter could answer (none at all, or prefixes only, and none for this key): a plain read.
        unfiltered_lookups,
    }
}

impl TableStats {
    /// Data-block reads the filter avoided: its negative answers.
    #[must_use]
    pub fn reads_avoided(&self) -> u64 {
        self.filter_negatives
    }

    /// The false-positive rate the filter showed: "may contain" answers for keys the table does not hold, over
    /// all lookups of keys it does not hold (those the filter answered "absent" and its false positives), the
    /// formula of [`FilterCounts::observed_fpr`](sstfilter::FilterCounts::observed_fpr). `None` before any such
    /// lookup.
    #[must_use]
    pub fn observed_fpr(&self) -> Option<f64> {
        let negatives = self.filter_negatives + self.false_positives;
        (negatives > 0).then(|| self.false_positives as f64 / negatives as f64)
    }
}

/// Adds one to a counter.
pub(crate) fn bump(counter: &AtomicU64) {
    add(counter, 1);
}

/// Adds `n` to a counter.
pub(crate) fn add(counter: &AtomicU64, n: u64) {
    counter.fetch_add(n, Ordering::Relaxed);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snapshots_add_and_subtract() {
        let counters = Counters::default();
        bump(&counters.filter_positives);
        let before = counters.snapshot();
        bump(&counters.filter_positives);
        bump(&counters.false_positives);
        let after = counters.snapshot();

        let delta = after - before;
        assert_eq!(delta.lookups, 1);
        assert_eq!(delta.observed_fpr(), Some(1.0));
        assert_eq!((before - after).lookups, 0, "saturates");

        let mut total = TableStats::default();
        total += after;
        total += after;
        assert_eq!(total.filter_checks, 4);
        assert_eq!(total.reads_avoided(), 0);
        assert_eq!(TableStats::default().observed_fpr(), None);
        let half = TableStats {
            filter_checks: 10,
            filter_negatives: 3,
            false_positives: 1,
            ..TableStats::default()
        };
        // Present keys (the other 6 checks) do not count: 1 false positive among 4 absent keys.
        assert_eq!(half.observed_fpr(), Some(0.25));
    }
}
