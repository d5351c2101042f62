//! What a table's filter holds: [`TableFilterOptions`].

use core::fmt;
use std::sync::Arc;

use crate::kind::range::policy::RangePolicy;
use crate::partitioned::{DEFAULT_PARTITION_BYTES, PartitionCuts};
use crate::policy::FilterPolicy;
use crate::prefix::PrefixExtractor;

/// A filter policy shared by the builders of many tables (and by the partitions of one).
pub type SharedPolicy = Arc<dyn FilterPolicy + Send + Sync>;

/// Everything a table's filter holds, in one value: a point filter (by its policy), optionally with prefixes,
/// optionally cut into partitions; and optionally a range filter beside it. Every combination works; a
/// [`TableFilterBuilder`](crate::TableFilterBuilder) checks the options when it is made.
///
/// ```
/// use std::sync::Arc;
/// use sstfilter::{BlockedBloomPolicy, DelimitedPrefix, PartitionCuts, RangePolicy, TableFilterOptions};
///
/// let options = TableFilterOptions::new()
///     .point(BlockedBloomPolicy::new(10.0)) // point lookups
///     .prefixes(Arc::new(DelimitedPrefix::new(b'/')), true) // and prefix scans, whole keys kept
///     .range(RangePolicy::new(1 << 16, 0.01)) // and short range scans
///     .partitioned(4096, PartitionCuts::AtDataBlocks); // in 4 KiB partitions cut where data blocks end
/// # let _ = options;
/// ```
#[derive(Clone, Default)]
pub struct TableFilterOptions {
    pub(crate) point: Option<SharedPolicy>,
    pub(crate) prefixes: Option<(Arc<dyn PrefixExtractor>, bool)>,
    pub(crate) range: Option<RangePolicy>,
    pub(crate) partitions: Option<(usize, PartitionCuts)>,
    pub(crate) any_key_order: bool,
}

impl fmt::Debug for TableFilterOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TableFilterOptions")
            .field("point", &self.point.is_some())
            .field(
                "prefixes",
                &self.prefixes.as_ref().map(|(e, whole)| (e.name(), whole)),
            )
            .field("range", &self.range)
            .field("partitions", &self.partitions)
            .field("any_key_order", &self.any_key_order)
            .finish()
    }
}

impl TableFilterOptions {
    /// No filter at all: add what the table needs.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// A point filter built by `policy` (any kind: BlockedBloom, Ribbon, StandardBloom, or your own), which answers
    /// point lookups by key or by a key's hash.
    #[must_use]
    pub fn point(self, policy: impl FilterPolicy + Send + Sync + 'static) -> Self {
        self.shared_point(Arc::new(policy))
    }

    /// [`point`](Self::point) with a policy already shared (by several tables' options).
    #[must_use]
    pub fn shared_point(mut self, policy: SharedPolicy) -> Self {
        self.point = Some(policy);
        self
    }

    /// The point filter also holds the prefix `extractor` gives each key, so prefix scans can skip the table;
    /// without `whole_keys` it holds prefixes only (smaller; point lookups then ask the key's prefix). Needs a
    /// [`point`](Self::point) policy, which sizes the filter that holds them.
    #[must_use]
    pub fn prefixes(mut self, extractor: Arc<dyn PrefixExtractor>, whole_keys: bool) -> Self {
        self.prefixes = Some((extractor, whole_keys));
        self
    }

    /// A range filter of `policy` beside the point filter: it answers range scans (and, by key, point lookups,
    /// sharpening the point filter's answer).
    #[must_use]
    pub fn range(mut self, policy: RangePolicy) -> Self {
        self.range = Some(policy);
        self
    }

    /// The point filter in partitions of about `partition_bytes` (prefixes included), ending anywhere or only
    /// where a data block ends (`cuts`), with a small index: a reader keeps the index and loads the partitions a
    /// question needs. The range filter stays one block per table. `partition_bytes` is 1 to
    /// [`MAX_PARTITION_BYTES`](crate::MAX_PARTITION_BYTES); [`TableFilterBuilder::new`](crate::TableFilterBuilder::new)
    /// refuses any other.
    #[must_use]
    pub fn partitioned(mut self, partition_bytes: usize, cuts: PartitionCuts) -> Self {
        self.partitions = Some((partition_bytes, cuts));
        self
    }

    /// [`partitioned`](Self::partitioned) with the default size, 4 KiB, cut anywhere.
    #[must_use]
    pub fn partitioned_by_default(self) -> Self {
        self.partitioned(DEFAULT_PARTITION_BYTES, PartitionCuts::Anywhere)
    }

    /// Keys may come in any order, for a table sorted by a comparator that is not bytewise (LevelDB's and
    /// RocksDB's custom comparators): the builder then takes every key without the order check, a key equal to
    /// the one before still counted once. Only a point filter (with or without prefixes, one block) can be built
    /// so: a range filter and partitions need keys in bytewise order, and
    /// [`TableFilterBuilder::new`](crate::TableFilterBuilder::new) refuses them together with this.
    #[must_use]
    pub fn any_key_order(mut self) -> Self {
        self.any_key_order = true;
        self
    }

    /// Whether the options build no filter at all.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.point.is_none() && self.range.is_none()
    }

    /// Whether the point filter holds whole keys: unless it holds [`prefixes`](Self::prefixes) only.
    #[must_use]
    pub fn holds_whole_keys(&self) -> bool {
        self.prefixes
            .as_ref()
            .is_none_or(|(_, whole_keys)| *whole_keys)
    }

    /// The prefix extractor, if the point filter holds prefixes.
    #[must_use]
    pub fn prefix_extractor(&self) -> Option<&Arc<dyn PrefixExtractor>> {
        self.prefixes.as_ref().map(|(extractor, _)| extractor)
    }
}
