//! [`RibbonPolicy`]: Ribbon filters at a target false-positive rate, with FastBloom where Ribbon does not pay.

use super::config::RibbonPlan;
use crate::kind::fast_bloom::{BLOCK_BITS, FastBloomParams, probes_for_bits_per_key};
use crate::math::blocked_bloom_fpr;
use crate::policy::{FilterPlan, FilterPolicy, configured};

/// The most bits per key a FastBloom fallback is given when the policy was configured by false-positive rate:
/// far beyond any useful setting, and it keeps the inversion of FastBloom's rate bounded.
const MAX_FALLBACK_BITS_PER_KEY: f64 = 128.0;

/// Builds Ribbon filters ([`FilterKind::Ribbon`](crate::FilterKind::Ribbon)): the same false-positive rate as a
/// Bloom filter in about 30 % less space, for more construction time (BENCHMARKS.md, "Ribbon").
///
/// ```
/// use sstfilter::{FilterBlock, FilterBlockBuilder, FilterKind, RibbonPolicy};
///
/// // "Bloom-equivalent" 10 bits/key: FastBloom's false-positive rate at 10 bits/key, in about 6.9 bits/key.
/// let mut builder = FilterBlockBuilder::new(RibbonPolicy::new(10.0));
/// for i in 0..10_000u32 {
///     builder.add_key(format!("usr:{i:012}").as_bytes());
/// }
/// let filter = FilterBlock::open(builder.finish())?;
/// assert_eq!(filter.kind(), FilterKind::Ribbon);
/// assert!(filter.may_contain(b"usr:000000000042"));
/// assert!(filter.bits_per_key() < 7.0);
///
/// // Or target a false-positive rate directly.
/// let policy = RibbonPolicy::with_fpr(0.001);
/// # let _ = policy;
/// # Ok::<(), sstfilter::Error>(())
/// ```
///
/// The policy writes a FastBloom filter of the same false-positive rate instead when Ribbon would not be
/// smaller (a few hundred keys or fewer), when construction would need more memory than
/// [`with_max_build_memory`](Self::with_max_build_memory) allows, or, with a probability far below one in a
/// billion, when a shard cannot be solved with any of its 16 seeds. Readers need no configuration: the block
/// says which kind it is.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RibbonPolicy {
    fpr: f64,
    fallback_bits_per_key: f64,
    max_build_memory: usize,
    slot_overhead: Option<f64>,
}

impl RibbonPolicy {
    /// A policy with the false-positive rate FastBloom has at `bloom_equivalent_bits_per_key` (about 0.96 % at
    /// 10), built as Ribbon in less space; the FastBloom fallback uses exactly that many bits per key.
    ///
    /// # Panics
    /// If `bloom_equivalent_bits_per_key` is below 1.0 or not finite, as
    /// [`FastBloomPolicy::new`](crate::FastBloomPolicy::new). Use [`try_new`](Self::try_new) for untrusted
    /// configuration.
    #[must_use]
    #[track_caller]
    pub fn new(bloom_equivalent_bits_per_key: f64) -> Self {
        let bits = bloom_equivalent_bits_per_key;
        configured(Self::try_new(bits), || {
            format!(
                "RibbonPolicy: bloom_equivalent_bits_per_key must be finite and >= 1.0, got {bits}"
            )
        })
    }

    /// Like [`new`](Self::new), but `None` instead of a panic for a value below 1.0 or not finite.
    #[must_use]
    pub fn try_new(bloom_equivalent_bits_per_key: f64) -> Option<Self> {
        let bits = bloom_equivalent_bits_per_key;
        (bits.is_finite() && bits >= 1.0).then(|| Self::with_rate(fast_bloom_fpr(bits), bits))
    }

    /// A policy targeting false-positive rate `fpr`. Ribbon reaches any rate in `[2^-32, 1/2]` (a value outside
    /// is clamped to it); the FastBloom fallback gets the bits per key at which its own rate is `fpr`.
    ///
    /// # Panics
    /// If `fpr` is not strictly between 0 and 1. Use [`try_with_fpr`](Self::try_with_fpr) for untrusted
    /// configuration.
    #[must_use]
    #[track_caller]
    pub fn with_fpr(fpr: f64) -> Self {
        configured(Self::try_with_fpr(fpr), || {
            format!("RibbonPolicy: fpr must be strictly between 0 and 1, got {fpr}")
        })
    }

    /// Like [`with_fpr`](Self::with_fpr), but `None` instead of a panic for a rate not strictly between 0 and 1.
    #[must_use]
    pub fn try_with_fpr(fpr: f64) -> Option<Self> {
        (fpr > 0.0 && fpr < 1.0).then(|| Self::with_rate(fpr, fast_bloom_bits_for(fpr)))
    }

    fn with_rate(fpr: f64, fallback_bits_per_key: f64) -> Self {
        RibbonPolicy {
            fpr,
            fallback_bits_per_key,
            max_build_memory: usize::MAX,
            slot_overhead: None,
        }
    }

    /// Caps the memory construction may allocate besides the output and the 8 bytes per key the builder already
    /// holds ([`RibbonPlan::build_memory`]: about 8 bytes per key plus 250 KiB). Tables whose Ribbon
    /// construction would need more get a FastBloom filter, which needs none. Unlimited by default.
    #[must_use]
    pub fn with_max_build_memory(mut self, bytes: usize) -> Self {
        self.max_build_memory = bytes;
        self
    }

    /// Sets the slot overhead (spare slots per key) instead of the measured default (about 1.5 % for large
    /// tables). More overhead builds faster (fewer elimination steps and seed retries) in more space; less
    /// saves space but retries seeds more often, and below the default the FastBloom fallback becomes
    /// likely. Values outside `0.0..=1.0` (or NaN) are clamped to that range.
    #[must_use]
    pub fn with_slot_overhead(mut self, overhead: f64) -> Self {
        self.slot_overhead = Some(if overhead.is_nan() {
            0.0
        } else {
            overhead.clamp(0.0, 1.0)
        });
        self
    }

    /// The target false-positive rate.
    #[must_use]
    pub const fn fpr(&self) -> f64 {
        self.fpr
    }

    /// Bits per key of the FastBloom fallback.
    #[must_use]
    pub const fn fallback_bits_per_key(&self) -> f64 {
        self.fallback_bits_per_key
    }
}

impl FilterPolicy for RibbonPolicy {
    fn plan(&self, num_keys: usize) -> FilterPlan {
        let fallback = FastBloomParams::for_keys(num_keys, self.fallback_bits_per_key);
        match RibbonPlan::for_keys(num_keys, self.fpr, self.slot_overhead, fallback) {
            Some(plan)
                if plan.payload_len() < fallback.payload_len()
                    && plan.build_memory() <= self.max_build_memory =>
            {
                FilterPlan::Ribbon(plan)
            }
            _ => FilterPlan::FastBloom(fallback),
        }
    }
}

/// FastBloom's false-positive rate at `bits_per_key` with the probe count its policy uses.
fn fast_bloom_fpr(bits_per_key: f64) -> f64 {
    blocked_bloom_fpr(
        bits_per_key,
        u32::from(probes_for_bits_per_key(bits_per_key)),
        BLOCK_BITS,
    )
}

/// The bits per key at which FastBloom's rate is `fpr` (bisection: the rate falls as bits per key grow), within
/// `1.0..=MAX_FALLBACK_BITS_PER_KEY`.
fn fast_bloom_bits_for(fpr: f64) -> f64 {
    let (mut low, mut high) = (1.0, MAX_FALLBACK_BITS_PER_KEY);
    if fast_bloom_fpr(low) <= fpr {
        return low;
    }
    for _ in 0..60 {
        let mid = (low + high) / 2.0;
        if fast_bloom_fpr(mid) <= fpr {
            high = mid;
        } else {
            low = mid;
        }
    }
    high
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::TRAILER_LEN;

    #[test]
    fn rejects_useless_configuration() {
        for bad in [0.0, 0.99, -1.0, f64::NAN, f64::INFINITY] {
            assert!(RibbonPolicy::try_new(bad).is_none(), "{bad}");
        }
        for bad in [0.0, 1.0, -0.1, 1.5, f64::NAN] {
            assert!(RibbonPolicy::try_with_fpr(bad).is_none(), "{bad}");
        }
        assert!(RibbonPolicy::try_with_fpr(0.7).is_some());
    }

    #[test]
    #[should_panic(expected = "bloom_equivalent_bits_per_key")]
    fn new_panics_on_bad_configuration() {
        let _ = RibbonPolicy::new(0.5);
    }

    #[test]
    #[should_panic(expected = "fpr")]
    fn with_fpr_panics_on_bad_configuration() {
        let _ = RibbonPolicy::with_fpr(0.0);
    }

    #[test]
    fn bloom_equivalent_rate_is_fast_bloom_rate() {
        let p = RibbonPolicy::new(10.0);
        let bloom = FastBloomParams::for_keys(1_000_000, 10.0).expected_fpr(1_000_000);
        assert!(
            (p.fpr() / bloom - 1.0).abs() < 0.01,
            "{} vs {bloom}",
            p.fpr()
        );
        assert_eq!(p.fallback_bits_per_key(), 10.0);
        // And the other way round: with_fpr finds the Bloom bits per key of a rate.
        let q = RibbonPolicy::with_fpr(p.fpr());
        assert!(
            (q.fallback_bits_per_key() - 10.0).abs() < 0.01,
            "{}",
            q.fallback_bits_per_key()
        );
        assert_eq!(RibbonPolicy::with_fpr(0.9).fallback_bits_per_key(), 1.0);
        let tiny = RibbonPolicy::with_fpr(1e-300).fallback_bits_per_key();
        assert!((tiny - MAX_FALLBACK_BITS_PER_KEY).abs() < 1e-6);
    }

    #[test]
    fn plans_ribbon_where_it_is_smaller_and_fast_bloom_elsewhere() {
        let p = RibbonPolicy::new(10.0);
        assert!(matches!(p.plan(0), FilterPlan::FastBloom(_)));
        assert!(matches!(p.plan(10), FilterPlan::FastBloom(_)));
        let FilterPlan::Ribbon(plan) = p.plan(100_000) else {
            panic!("100 000 keys should be Ribbon");
        };
        assert!(
            plan.payload_len() * 10 < FastBloomParams::for_keys(100_000, 10.0).payload_len() * 7
        );
        // Estimates are exact for Ribbon plans too.
        assert_eq!(
            p.estimated_block_len(100_000),
            plan.payload_len() + TRAILER_LEN
        );
        assert_eq!(p.estimated_fpr(100_000), plan.expected_fpr());
    }

    #[test]
    fn memory_cap_selects_fast_bloom() {
        let n = 100_000;
        let FilterPlan::Ribbon(plan) = RibbonPolicy::new(10.0).plan(n) else {
            panic!("Ribbon expected");
        };
        let capped = RibbonPolicy::new(10.0).with_max_build_memory(plan.build_memory() - 1);
        assert_eq!(
            capped.plan(n),
            FilterPlan::FastBloom(FastBloomParams::for_keys(n, 10.0))
        );
        let exact = RibbonPolicy::new(10.0).with_max_build_memory(plan.build_memory());
        assert_eq!(exact.plan(n), FilterPlan::Ribbon(plan));
    }

    #[test]
    fn slot_overhead_is_configurable_and_clamped() {
        let n = 100_000;
        let plan_with =
            |overhead: f64| match RibbonPolicy::new(10.0).with_slot_overhead(overhead).plan(n) {
                FilterPlan::Ribbon(plan) => plan,
                other => panic!("{other:?}"),
            };
        assert!((plan_with(0.05).slot_overhead() - 0.05).abs() < 1e-4);
        assert!(plan_with(-1.0).slot_overhead().abs() < 1e-4);
        assert!(plan_with(f64::NAN).slot_overhead().abs() < 1e-4);
    }
}
