//! What a table's filter holds: [`TableFilterOptions`].

use core::fmt;
use std::sync::Arc;

use crate::error::UsageError;
use crate::format::PrefixName;
use crate::kind::range::policy::RangePolicy;
use crate::partitioned::{PartitionCuts, check_partition_bytes};
use crate::policy::FilterPolicy;
use crate::prefix::PrefixExtractor;

/// A filter policy shared by the builders of many tables (and by the partitions of one).
pub(crate) type SharedPolicy = Arc<dyn FilterPolicy + Send + Sync>;

/// Everything a table's filter holds, in one value: a point filter (by its policy), optionally with prefixes,
/// optionally cut into partitions; and optionally a range filter beside it. Every combination works, and each
/// setting is checked where it is made: a setting that cannot work (prefixes or partitions without a point
/// policy, a partition size out of range, a filter that needs sorted keys in options for keys in any order, an
/// extractor name a block cannot record) is refused with [`UsageError::InvalidSetting`] by the method that sets
/// it.
///
/// A store keeps one value for its tables: [`TableFilterBuilder::new`](crate::TableFilterBuilder::new) builds
/// with it, and [`TableFilter::open`](crate::TableFilter::open) reads with it (the reader needs the prefix
/// extractor: the bytes name it, but only the store has its code).
///
/// ```
/// use std::sync::Arc;
/// use sstfilter::{BlockedBloomPolicy, DelimitedPrefix, PartitionCuts, RangePolicy, TableFilterOptions};
///
/// let options = TableFilterOptions::new()
///     .point(BlockedBloomPolicy::new(10.0)?) // point lookups
///     .prefixes(Arc::new(DelimitedPrefix::new(b'/')), true)? // and prefix scans, whole keys kept
///     .range(RangePolicy::new(1 << 16, 0.01)?)? // and short range scans
///     .partitioned(4096, PartitionCuts::AtDataBlocks)?; // in 4 KiB partitions cut where data blocks end
/// // Settings that cannot work are refused where they are made:
/// assert!(TableFilterOptions::new().partitioned(4096, PartitionCuts::Anywhere).is_err()); // no point policy
/// # Ok::<(), sstfilter::UsageError>(())
/// ```
#[derive(Clone, Default)]
pub struct TableFilterOptions {
    pub(crate) point: Option<SharedPolicy>,
    pub(crate) prefixes: Option<Prefixes>,
    pub(crate) range: Option<RangePolicy>,
    pub(crate) partitions: Option<(usize, PartitionCuts)>,
    pub(crate) any_key_order: bool,
}

/// The prefixes a point filter holds besides (or instead of) whole keys, with the extractor's name checked.
#[derive(Clone)]
pub(crate) struct Prefixes {
    pub(crate) extractor: Arc<dyn PrefixExtractor>,
    pub(crate) name: PrefixName,
    pub(crate) whole_keys: bool,
}

impl fmt::Debug for TableFilterOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TableFilterOptions")
            .field("point", &self.point.is_some())
            .field(
                "prefixes",
                &self
                    .prefixes
                    .as_ref()
                    .map(|p| (p.name.as_str(), p.whole_keys)),
            )
            .field("range", &self.range)
            .field("partitions", &self.partitions)
            .field("any_key_order", &self.any_key_order)
            .finish()
    }
}

/// The error for `setting`, which needs a point policy set before it.
fn needs_point(setting: &'static str) -> UsageError {
    UsageError::setting(
        setting,
        "set after a point policy (TableFilterOptions::point), which sizes the filter that holds it",
        "no point policy",
    )
}

/// The error for `setting`, which needs keys in bytewise order.
fn needs_order(setting: &'static str) -> UsageError {
    UsageError::setting(
        setting,
        "keys in bytewise order (not with TableFilterOptions::any_key_order)",
        "keys in any order",
    )
}

impl TableFilterOptions {
    /// No filter at all: add what the table needs. Keys come in bytewise order.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// No filter at all, for keys in any order: a table sorted by a comparator that is not bytewise (LevelDB's and
    /// RocksDB's custom comparators). The builder then takes every key without the order check, each distinct key
    /// counted once. Only a point filter (with or without prefixes, one block) can be built so: a range filter
    /// and partitions need keys in bytewise order, and [`range`](Self::range) and
    /// [`partitioned`](Self::partitioned) refuse them here.
    #[must_use]
    pub fn any_key_order() -> Self {
        TableFilterOptions {
            any_key_order: true,
            ..Self::default()
        }
    }

    /// A point filter built by `policy` (BlockedBloom, Ribbon or StandardBloom), which answers point lookups by
    /// key or by a key's hash.
    #[must_use]
    pub fn point(mut self, policy: impl FilterPolicy + Send + Sync + 'static) -> Self {
        self.point = Some(Arc::new(policy));
        self
    }

    /// The point filter also holds the prefix `extractor` gives each key, so prefix scans can skip the table;
    /// without `whole_keys` it holds prefixes only (smaller; point lookups then ask the key's prefix). Refused
    /// before a [`point`](Self::point) policy (which sizes the filter that holds them), and for an extractor whose
    /// name is longer than [`MAX_PREFIX_NAME_LEN`](crate::MAX_PREFIX_NAME_LEN) bytes (a block records it whole).
    pub fn prefixes(
        mut self,
        extractor: Arc<dyn PrefixExtractor>,
        whole_keys: bool,
    ) -> Result<Self, UsageError> {
        if self.point.is_none() {
            return Err(needs_point("TableFilterOptions::prefixes"));
        }
        let name = PrefixName::new(extractor.name())?;
        self.prefixes = Some(Prefixes {
            extractor,
            name,
            whole_keys,
        });
        Ok(self)
    }

    /// A range filter of `policy` beside the point filter: it answers range scans (and, by key, point lookups,
    /// sharpening the point filter's answer). Refused for options in [`any_key_order`](Self::any_key_order): it
    /// needs keys in bytewise order.
    pub fn range(mut self, policy: RangePolicy) -> Result<Self, UsageError> {
        if self.any_key_order {
            return Err(needs_order("TableFilterOptions::range"));
        }
        self.range = Some(policy);
        Ok(self)
    }

    /// The point filter in partitions of about `partition_bytes` (prefixes included, `1..=`
    /// [`MAX_PARTITION_BYTES`](crate::MAX_PARTITION_BYTES); [`DEFAULT_PARTITION_BYTES`](crate::DEFAULT_PARTITION_BYTES)
    /// suits most stores), ending anywhere or only where a data block ends (`cuts`), with a small index: a reader
    /// keeps the index and loads the partitions a question needs. The range filter stays one block per table.
    /// Refused before a [`point`](Self::point) policy, for options in [`any_key_order`](Self::any_key_order), and
    /// for a size out of range.
    pub fn partitioned(
        mut self,
        partition_bytes: usize,
        cuts: PartitionCuts,
    ) -> Result<Self, UsageError> {
        if self.point.is_none() {
            return Err(needs_point("TableFilterOptions::partitioned"));
        }
        if self.any_key_order {
            return Err(needs_order("TableFilterOptions::partitioned"));
        }
        self.partitions = Some((check_partition_bytes(partition_bytes)?, cuts));
        Ok(self)
    }

    /// Whether the point filter holds whole keys: unless it holds [`prefixes`](Self::prefixes) only.
    #[must_use]
    pub fn holds_whole_keys(&self) -> bool {
        self.prefixes.as_ref().is_none_or(|p| p.whole_keys)
    }

    /// The prefix extractor, if the point filter holds prefixes.
    #[must_use]
    pub fn prefix_extractor(&self) -> Option<&Arc<dyn PrefixExtractor>> {
        self.prefixes.as_ref().map(|p| &p.extractor)
    }
}
