//! [`StandardBloomPolicy`]: classic Bloom filters at a fixed number of bits per key, with the optimal probe count.

use super::{MAX_WORDS, StandardBloomParams};
use crate::error::UsageError;
use crate::policy::{FilterPlan, FilterPolicy, check_bits_per_key};
use crate::sizing::rates::optimal_bloom_probes;

/// Builds classic Bloom filters ([`FilterKind::StandardBloom`](crate::FilterKind::StandardBloom)) at a fixed
/// number of bits per key, with the optimal probe count `round(bits_per_key · ln 2)`.
///
/// Each query touches `k` cache lines instead of BlockedBloom's one, so it is slower on large filters; in exchange
/// the false-positive rate is the textbook `(1 - e^(-kn/m))^k`: 0.82 % at 10 bits/key against BlockedBloom's
/// 0.96 %. The blocks it writes are the same kind that the `sstfilter-memory` crate's `BloomFilter::to_block`
/// writes, so an in-memory filter and a table's filter can be read by the same code.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StandardBloomPolicy {
    bits_per_key: f64,
}

impl StandardBloomPolicy {
    /// A policy spending `bits_per_key` bits per distinct key: a number from 1 to
    /// [`MAX_BITS_PER_KEY`](crate::MAX_BITS_PER_KEY), else [`UsageError::InvalidSetting`], as
    /// [`BlockedBloomPolicy::new`](crate::BlockedBloomPolicy::new).
    pub fn new(bits_per_key: f64) -> Result<Self, UsageError> {
        let bits_per_key = check_bits_per_key("StandardBloomPolicy bits_per_key", bits_per_key)?;
        Ok(StandardBloomPolicy { bits_per_key })
    }

    /// The configured bits per key.
    #[must_use]
    pub const fn bits_per_key(&self) -> f64 {
        self.bits_per_key
    }
}

impl FilterPolicy for StandardBloomPolicy {
    fn plan(&self, num_keys: usize) -> FilterPlan {
        FilterPlan::StandardBloom(params_for(num_keys, self.bits_per_key))
    }
}

/// The parameters for `num_keys` keys at `bits_per_key` bits each: `ceil(num_keys · bits_per_key)` bits rounded up
/// to whole 64-bit words (at least one word, so an empty key set gives an 8-byte payload), and the optimal probe
/// count `round(bits_per_key · ln 2)` clamped to `1..=MAX_PROBES`. A size beyond what the platform can address is
/// clamped to the largest one.
fn params_for(num_keys: usize, bits_per_key: f64) -> StandardBloomParams {
    let bits = (num_keys as f64 * bits_per_key).ceil();
    let words = (bits / 64.0).ceil();
    let words = if words >= MAX_WORDS as f64 {
        MAX_WORDS
    } else {
        (words as u64).max(1)
    };
    let probes = optimal_bloom_probes(bits_per_key).min(StandardBloomParams::MAX_PROBES);
    StandardBloomParams::clamped(words * 64, probes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounds_to_whole_words_with_the_optimal_probe_count() {
        assert!(StandardBloomPolicy::new(0.5).is_err());
        assert!(StandardBloomPolicy::new(1e9).is_err());
        let p = params_for(1000, 10.0);
        // 1000 keys × 10 bits = 10,000 bits → 157 words of 64 (10,048 bits); k = round(10 · ln 2) = 7.
        assert_eq!((p.num_bits(), p.num_probes()), (10_048, 7));
        assert_eq!(params_for(0, 10.0).num_bits(), 64);
        assert_eq!(params_for(200, 1.0).num_probes(), 1);
        assert_eq!(params_for(50, 32.0).num_probes(), 22);
        assert_eq!(
            params_for(1, 1e6).num_probes(),
            StandardBloomParams::MAX_PROBES
        );
        assert_eq!(params_for(usize::MAX, 64.0).num_words() as u64, MAX_WORDS);
        let policy = StandardBloomPolicy::new(10.0).unwrap();
        assert_eq!(
            policy.estimated_block_len(1000),
            157 * 8 + crate::TRAILER_LEN
        );
        assert_eq!(policy.estimated_block_len(0), 8 + crate::TRAILER_LEN);
        // (1 - e^(-7·1000/10048))^7 = 0.800 %: a hair under 0.82 % because of the rounding to whole words.
        assert!((0.0079..0.0081).contains(&policy.estimated_fpr(1000)));
    }
}
