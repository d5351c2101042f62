//! The filter configurations the demo compares. This is the one list to extend when a kind lands.

use std::sync::Arc;

/// A filter policy the demo's configurations share.
pub(crate) type SharedFilterPolicy = std::sync::Arc<dyn sstfilter::FilterPolicy + Send + Sync>;
use sstfilter::{BlockedBloomPolicy, RibbonPolicy, UsageError};

/// A configuration the demo builds its tables with: a name and the policy for a bits/key setting.
pub(crate) struct FilterConfig {
    /// Name printed in the report and the chart.
    pub(crate) name: &'static str,
    /// The policy at `bits_per_key` (1 to `sstfilter::MAX_BITS_PER_KEY`, which the policies check), or `None` for
    /// tables without a filter block.
    pub(crate) policy: fn(f64) -> Result<Option<SharedFilterPolicy>, UsageError>,
}

/// Every configuration the demo compares, in report order. The first has no filter: it is the baseline the
/// others are measured against in the same run. A new kind is one more line here, for example
/// `FilterConfig { name: "Ribbon", policy: |b| Ok(Some(Arc::new(RibbonPolicy::new(b)?))) }`.
pub(crate) const CONFIGS: &[FilterConfig] = &[
    FilterConfig {
        name: "no filter",
        policy: |_| Ok(None),
    },
    FilterConfig {
        name: "BlockedBloom",
        policy: |b| Ok(Some(Arc::new(BlockedBloomPolicy::new(b)?))),
    },
    // Bloom-equivalent: BlockedBloom's false-positive rate at `b` bits/key, in about 0.69·b.
    FilterConfig {
        name: "Ribbon",
        policy: |b| Ok(Some(Arc::new(RibbonPolicy::new(b)?))),
    },
];
