//! Writer-side policies: which filter kind and parameters to build for a given number of keys.
//!
//! A policy is consulted once, at [`FilterBlockBuilder::finish`](crate::FilterBlockBuilder::finish), with the real
//! number of distinct key hashes, so filters are sized from what the table holds, never from an estimate. The
//! reader never sees the policy: the kind and parameters are stored in the block.

use std::rc::Rc;
use std::sync::Arc;

use crate::format::TRAILER_LEN;
use crate::kind::KindParams;
use crate::kind::fast_bloom::{self, FastBloomParams};
use crate::kind::ribbon::{self, RibbonPlan};
use crate::kind::standard_bloom::{self, StandardBloomParams};

/// What a policy decided to build: a kind and its parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum FilterPlan {
    /// Build a FastBloom filter with these parameters.
    FastBloom(FastBloomParams),
    /// Build a Ribbon filter as planned, or the plan's FastBloom fallback if construction fails (in which case
    /// the block has the fallback's size and rate, not the ones [`payload_len`](Self::payload_len) and
    /// [`expected_fpr`](Self::expected_fpr) give for the plan).
    Ribbon(RibbonPlan),
    /// Build a StandardBloom filter (the classic Bloom filter) with these parameters.
    StandardBloom(StandardBloomParams),
}

impl FilterPlan {
    /// Payload bytes the plan will produce.
    #[must_use]
    pub const fn payload_len(&self) -> usize {
        match self {
            FilterPlan::FastBloom(p) => p.payload_len(),
            FilterPlan::Ribbon(p) => p.payload_len(),
            FilterPlan::StandardBloom(p) => p.payload_len(),
        }
    }

    /// The theoretical false-positive rate of the planned filter holding `num_keys` keys.
    #[must_use]
    pub fn expected_fpr(&self, num_keys: usize) -> f64 {
        match self {
            FilterPlan::FastBloom(p) => p.expected_fpr(num_keys as u64),
            FilterPlan::Ribbon(p) => p.expected_fpr(),
            FilterPlan::StandardBloom(p) => p.expected_fpr(num_keys as u64),
        }
    }

    /// Builds the payload for `hashes` (distinct after adjacent deduplication) into `out` and returns the
    /// parameters to store in the trailer.
    pub(crate) fn build(
        &self,
        hashes: impl Iterator<Item = u64> + Clone,
        out: &mut Vec<u8>,
    ) -> KindParams {
        match self {
            FilterPlan::FastBloom(p) => {
                fast_bloom::build(p, hashes, out);
                KindParams::FastBloom(*p)
            }
            FilterPlan::Ribbon(p) => ribbon::build_or_fallback(p, hashes, out),
            FilterPlan::StandardBloom(p) => {
                standard_bloom::build(p, hashes, out);
                KindParams::StandardBloom(*p)
            }
        }
    }
}

/// Decides the filter kind and its parameters from the number of keys. Implement it to choose per table (for
/// example more bits per key on the last LSM level); the built-in policies are [`FastBloomPolicy`] and
/// [`RibbonPolicy`](crate::RibbonPolicy).
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

/// Builds cache-local blocked Bloom filters ([`FilterKind::FastBloom`](crate::FilterKind::FastBloom)) at a fixed
/// number of bits per key.
///
/// Fractional settings are honoured (the block count is `ceil(n · bits_per_key / 512)`); the probe count comes
/// from a measured table ([`probes_for_bits_per_key`](crate::kind::fast_bloom::probes_for_bits_per_key)).
/// At 10 bits/key the false-positive rate is about 0.96 %.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FastBloomPolicy {
    bits_per_key: f64,
}

impl FastBloomPolicy {
    /// A policy spending `bits_per_key` bits per distinct key.
    ///
    /// # Panics
    /// If `bits_per_key` is below 1.0 or not finite: such a filter would be useless, and a configuration error
    /// is better caught when the store starts than at the first flush. Use [`try_new`](Self::try_new) to
    /// validate untrusted configuration.
    #[must_use]
    #[track_caller]
    pub fn new(bits_per_key: f64) -> Self {
        configured(Self::try_new(bits_per_key), || {
            format!("FastBloomPolicy: bits_per_key must be finite and >= 1.0, got {bits_per_key}")
        })
    }

    /// Like [`new`](Self::new), but `None` instead of a panic for a value below 1.0 or not finite.
    #[must_use]
    pub fn try_new(bits_per_key: f64) -> Option<Self> {
        (bits_per_key.is_finite() && bits_per_key >= 1.0)
            .then_some(FastBloomPolicy { bits_per_key })
    }

    /// The configured bits per key.
    #[must_use]
    pub const fn bits_per_key(&self) -> f64 {
        self.bits_per_key
    }
}

impl FilterPolicy for FastBloomPolicy {
    fn plan(&self, num_keys: usize) -> FilterPlan {
        FilterPlan::FastBloom(FastBloomParams::for_keys(num_keys, self.bits_per_key))
    }
}

/// Builds classic Bloom filters ([`FilterKind::StandardBloom`](crate::FilterKind::StandardBloom)) at a fixed
/// number of bits per key, with the optimal probe count `round(bits_per_key · ln 2)`.
///
/// Each query touches `k` cache lines instead of FastBloom's one, so it is slower on large filters; in exchange
/// the false-positive rate is the textbook `(1 - e^(-kn/m))^k`: 0.82 % at 10 bits/key against FastBloom's
/// 0.96 %. The blocks it writes are the same kind that [`BloomFilter::to_block`](crate::BloomFilter::to_block)
/// writes, so an in-memory filter and a table's filter can be read by the same code.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StandardBloomPolicy {
    bits_per_key: f64,
}

impl StandardBloomPolicy {
    /// A policy spending `bits_per_key` bits per distinct key.
    ///
    /// # Panics
    /// If `bits_per_key` is below 1.0 or not finite, as [`FastBloomPolicy::new`] does; use
    /// [`try_new`](Self::try_new) to validate untrusted configuration.
    #[must_use]
    #[track_caller]
    pub fn new(bits_per_key: f64) -> Self {
        configured(Self::try_new(bits_per_key), || {
            format!(
                "StandardBloomPolicy: bits_per_key must be finite and >= 1.0, got {bits_per_key}"
            )
        })
    }

    /// Like [`new`](Self::new), but `None` instead of a panic for a value below 1.0 or not finite.
    #[must_use]
    pub fn try_new(bits_per_key: f64) -> Option<Self> {
        FastBloomPolicy::try_new(bits_per_key).map(|valid| StandardBloomPolicy {
            bits_per_key: valid.bits_per_key(),
        })
    }

    /// The configured bits per key.
    #[must_use]
    pub const fn bits_per_key(&self) -> f64 {
        self.bits_per_key
    }
}

impl FilterPolicy for StandardBloomPolicy {
    fn plan(&self, num_keys: usize) -> FilterPlan {
        FilterPlan::StandardBloom(StandardBloomParams::for_keys(num_keys, self.bits_per_key))
    }
}

/// The value of a panicking constructor whose `try_` twin returned `value`: a configuration that yields `None`
/// is a programming error (as documented on every such constructor), reported with `message` at the caller.
#[track_caller]
pub(crate) fn configured<T>(value: Option<T>, message: impl FnOnce() -> String) -> T {
    #[expect(
        clippy::panic,
        reason = "documented: a bad configuration constant is a programming error"
    )]
    match value {
        Some(value) => value,
        None => panic!("{}", message()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_useless_bits_per_key() {
        for bad in [0.0, 0.99, -1.0, f64::NAN, f64::INFINITY] {
            assert!(FastBloomPolicy::try_new(bad).is_none(), "{bad}");
        }
        assert!(FastBloomPolicy::try_new(1.0).is_some());
    }

    #[test]
    #[should_panic(expected = "bits_per_key")]
    fn new_panics_on_bad_configuration() {
        let _ = FastBloomPolicy::new(0.5);
    }

    #[test]
    fn sizes_from_the_real_key_count_with_fractional_bits() {
        let policy = FastBloomPolicy::new(7.5);
        // 1000 keys × 7.5 bits = 7500 bits → 15 blocks of 512 (7680 bits).
        assert_eq!(policy.estimated_block_len(1000), 15 * 64 + TRAILER_LEN);
        assert_eq!(policy.estimated_block_len(0), TRAILER_LEN);
        assert_eq!(policy.estimated_block_len(1), 64 + TRAILER_LEN);
        assert_eq!(policy.estimated_fpr(0), 0.0);
    }

    #[test]
    fn policies_work_through_smart_pointers() {
        let policy = FastBloomPolicy::new(10.0);
        let boxed: Box<dyn FilterPolicy> = Box::new(policy);
        let shared: Arc<dyn FilterPolicy> = Arc::new(policy);
        assert_eq!(boxed.plan(100), policy.plan(100));
        let by_ref: &dyn FilterPolicy = &policy;
        assert_eq!(shared.plan(100), by_ref.plan(100));
    }

    #[test]
    fn standard_bloom_policy_sizes_whole_words_with_the_optimal_probe_count() {
        assert!(StandardBloomPolicy::try_new(0.5).is_none());
        let policy = StandardBloomPolicy::new(10.0);
        // 1000 keys × 10 bits = 10,000 bits → 157 words of 64 (10,048 bits); k = round(10 · ln 2) = 7.
        assert_eq!(policy.estimated_block_len(1000), 157 * 8 + TRAILER_LEN);
        assert_eq!(policy.estimated_block_len(0), 8 + TRAILER_LEN);
        let FilterPlan::StandardBloom(params) = policy.plan(1000) else {
            panic!("StandardBloomPolicy plans StandardBloom");
        };
        assert_eq!(params.num_hashes(), 7);
        // (1 - e^(-7·1000/10048))^7 = 0.800 %: a hair under 0.82 % because of the rounding to whole words.
        assert!((0.0079..0.0081).contains(&policy.estimated_fpr(1000)));
    }
}
