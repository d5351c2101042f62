//! Writer-side policies: the [`FilterPolicy`] trait, which decides the filter kind and parameters to build for a
//! given number of keys, and the [`FilterPlan`] it returns.
//!
//! A policy is consulted once, at [`FilterBlockBuilder::finish`](crate::FilterBlockBuilder::finish), with the real
//! number of distinct key hashes, so filters are sized from what the table holds, never from an estimate. The
//! reader never sees the policy: the kind and parameters are stored in the block. The built-in policies live with
//! their kinds (`kind/<kind>/policy.rs`: probe tables, Ribbon's shards, slots and columns, when Ribbon falls back
//! to BlockedBloom); this module holds what they share.

#[cfg(test)]
mod choices;

use std::rc::Rc;
use std::sync::Arc;

use crate::error::UsageError;
use crate::format::TRAILER_LEN;
use crate::kind::blocked_bloom::BlockedBloomParams;
use crate::kind::ribbon::RibbonPlan;
use crate::kind::standard_bloom::StandardBloomParams;
use crate::kind::{self, KindParams};

/// What a policy decided to build: a kind and its parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum FilterPlan {
    /// Build a BlockedBloom filter with these parameters.
    BlockedBloom(BlockedBloomParams),
    /// Build a Ribbon filter as planned, or, if construction fails (a shard no seed solves), the BlockedBloom
    /// `fallback`. The block then has the fallback's size and rate, not the plan's (which
    /// [`FilterPolicy::estimated_block_len`] and [`FilterPolicy::estimated_fpr`] report).
    Ribbon {
        /// What to build.
        plan: RibbonPlan,
        /// What to build instead if `plan` cannot be built.
        fallback: BlockedBloomParams,
    },
    /// Build a StandardBloom filter (the classic Bloom filter) with these parameters.
    StandardBloom(StandardBloomParams),
}

impl FilterPlan {
    /// Payload bytes the plan will produce.
    #[must_use]
    pub(crate) const fn payload_len(&self) -> usize {
        match self {
            FilterPlan::BlockedBloom(p) => p.payload_len(),
            FilterPlan::Ribbon { plan, .. } => plan.payload_len(),
            FilterPlan::StandardBloom(p) => p.payload_len(),
        }
    }

    /// The theoretical false-positive rate of the planned filter holding `num_keys` keys.
    #[must_use]
    pub(crate) fn expected_fpr(&self, num_keys: usize) -> f64 {
        match self {
            FilterPlan::BlockedBloom(p) => p.expected_fpr(num_keys as u64),
            FilterPlan::Ribbon { plan, .. } => plan.expected_fpr(),
            FilterPlan::StandardBloom(p) => p.expected_fpr(num_keys as u64),
        }
    }

    /// The plan with every BlockedBloom size agreeing with `num_keys`. FORMAT.md 4.2 gives a BlockedBloom block
    /// blocks exactly when it holds keys; a user's policy may plan blocks for no keys (for instance when every
    /// key fell outside a prefix extractor's domain) or no blocks for some keys. Built as planned, either would
    /// be a block `open` rejects; fitted, it is an empty filter, or one block.
    pub(crate) fn fitted(self, num_keys: usize) -> Self {
        let fit = |p: BlockedBloomParams| {
            let blocks = if num_keys == 0 {
                0
            } else {
                p.num_blocks().max(1)
            };
            BlockedBloomParams::clamped(blocks, p.num_probes())
        };
        match self {
            FilterPlan::BlockedBloom(p) => FilterPlan::BlockedBloom(fit(p)),
            FilterPlan::Ribbon { plan, fallback } => FilterPlan::Ribbon {
                plan,
                fallback: fit(fallback),
            },
            FilterPlan::StandardBloom(p) => FilterPlan::StandardBloom(p),
        }
    }

    /// Builds the payload for the key hashes in `runs` (distinct after adjacent deduplication) into `out` and
    /// returns the parameters to store in the trailer. `runs` are slices of consecutive hashes, the builder's
    /// storage chunks: each kind walks them as two nested loops, the inner one over a slice, into which the
    /// per-key work is inlined (a closure handed to an iterator of the chunks' hashes was left as a call per key).
    pub(crate) fn build<'a>(
        &self,
        runs: impl Iterator<Item = &'a [u64]> + Clone,
        out: &mut Vec<u8>,
    ) -> KindParams {
        match self {
            FilterPlan::BlockedBloom(p) => {
                kind::blocked_bloom::build(p, runs, out);
                KindParams::BlockedBloom(*p)
            }
            FilterPlan::Ribbon { plan, fallback } => {
                match kind::ribbon::build(plan, runs.clone(), out) {
                    Ok(params) => KindParams::Ribbon(params),
                    // Construction failed and left `out` as it was: the fallback needs no luck to build.
                    Err(_) => {
                        kind::blocked_bloom::build(fallback, runs, out);
                        KindParams::BlockedBloom(*fallback)
                    }
                }
            }
            FilterPlan::StandardBloom(p) => {
                kind::standard_bloom::build(p, runs, out);
                KindParams::StandardBloom(*p)
            }
        }
    }
}

/// Decides the filter kind and its parameters from the number of keys. Implement it to choose per table (for
/// example more bits per key on the last LSM level); the built-in policies are [`BlockedBloomPolicy`](crate::BlockedBloomPolicy),
/// [`RibbonPolicy`](crate::RibbonPolicy) and [`StandardBloomPolicy`](crate::StandardBloomPolicy).
pub trait FilterPolicy {
    /// The kind and parameters to build for `num_keys` distinct key hashes.
    fn plan(&self, num_keys: usize) -> FilterPlan;

    /// Size in bytes of the block that [`plan`](Self::plan) yields for `num_keys` keys, trailer included.
    fn estimated_block_len(&self, num_keys: usize) -> usize {
        self.plan(num_keys).payload_len() + TRAILER_LEN
    }

    /// Theoretical false-positive rate of the filter built for `num_keys` keys.
    fn estimated_fpr(&self, num_keys: usize) -> f64 {
        self.plan(num_keys).expected_fpr(num_keys)
    }
}

impl<P: FilterPolicy + ?Sized> FilterPolicy for &P {
    fn plan(&self, num_keys: usize) -> FilterPlan {
        (**self).plan(num_keys)
    }
}

impl<P: FilterPolicy + ?Sized> FilterPolicy for Box<P> {
    fn plan(&self, num_keys: usize) -> FilterPlan {
        (**self).plan(num_keys)
    }
}

impl<P: FilterPolicy + ?Sized> FilterPolicy for Arc<P> {
    fn plan(&self, num_keys: usize) -> FilterPlan {
        (**self).plan(num_keys)
    }
}

impl<P: FilterPolicy + ?Sized> FilterPolicy for Rc<P> {
    fn plan(&self, num_keys: usize) -> FilterPlan {
        (**self).plan(num_keys)
    }
}

/// The most bits per key a Bloom policy accepts (every kind, LevelDB's included), as RocksDB caps it: at 100 bits
/// per key a BlockedBloom filter's rate is about `10^-10`, far past what skipping a read needs, so a larger setting
/// is much more likely a unit mistake (bytes for bits, a total for a per-key figure) whose filter would allocate
/// gigabytes at the first flush.
pub const MAX_BITS_PER_KEY: f64 = 100.0;

/// `bits_per_key` if a Bloom policy can honour it: finite, at least 1.0 (below, a filter is useless) and at most
/// [`MAX_BITS_PER_KEY`]. The rule every Bloom policy applies to its configuration.
pub(crate) fn check_bits_per_key(
    setting: &'static str,
    bits_per_key: f64,
) -> Result<f64, UsageError> {
    if bits_per_key.is_finite() && (1.0..=MAX_BITS_PER_KEY).contains(&bits_per_key) {
        Ok(bits_per_key)
    } else {
        Err(UsageError::setting(
            setting,
            format!("a number from 1 to {MAX_BITS_PER_KEY}"),
            bits_per_key,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::BlockedBloomPolicy;

    #[test]
    fn policies_work_through_smart_pointers() {
        let policy = BlockedBloomPolicy::new(10.0).unwrap();
        let boxed: Box<dyn FilterPolicy> = Box::new(policy);
        let shared: Arc<dyn FilterPolicy> = Arc::new(policy);
        assert_eq!(boxed.plan(100), policy.plan(100));
        let by_ref: &dyn FilterPolicy = &policy;
        assert_eq!(shared.plan(100), by_ref.plan(100));
        let counted: Rc<dyn FilterPolicy> = Rc::new(policy);
        assert_eq!(counted.plan(7), policy.plan(7));
    }
}
