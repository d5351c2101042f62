//! [`BlockedBloomPolicy`]: blocked Bloom filters at a fixed number of bits per key, with the probe count from a
//! measured table.

use super::{BLOCK_BITS, BlockedBloomParams};
use crate::error::UsageError;
use crate::policy::{FilterPlan, FilterPolicy, check_bits_per_key};
use crate::sizing::rates::blocked_bloom_fpr;

/// Builds cache-local blocked Bloom filters ([`FilterKind::BlockedBloom`](crate::FilterKind::BlockedBloom)) at a
/// fixed number of bits per key.
///
/// Fractional settings are honoured (the block count is `ceil(n · bits_per_key / 512)`); the probe count comes
/// from a table measured by `crates/bench/examples/tune_probes.rs` (6 at 10 bits/key; BENCHMARKS.md). At 10
/// bits/key the false-positive rate is about 0.96 %.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BlockedBloomPolicy {
    bits_per_key: f64,
}

impl BlockedBloomPolicy {
    /// A policy spending `bits_per_key` bits per distinct key: a number from 1 to
    /// [`MAX_BITS_PER_KEY`](crate::MAX_BITS_PER_KEY), else [`UsageError::InvalidSetting`] (below, a filter is
    /// useless; above, it only wastes memory).
    pub fn new(bits_per_key: f64) -> Result<Self, UsageError> {
        let bits_per_key = check_bits_per_key("BlockedBloomPolicy bits_per_key", bits_per_key)?;
        Ok(BlockedBloomPolicy { bits_per_key })
    }

    /// The configured bits per key.
    #[must_use]
    pub const fn bits_per_key(&self) -> f64 {
        self.bits_per_key
    }
}

/// 10 bits per key, about 0.96 % false positives: RocksDB's default, and the reference table's.
impl Default for BlockedBloomPolicy {
    fn default() -> Self {
        BlockedBloomPolicy { bits_per_key: 10.0 }
    }
}

impl FilterPolicy for BlockedBloomPolicy {
    fn plan(&self, num_keys: usize) -> FilterPlan {
        FilterPlan::BlockedBloom(params_for(num_keys, self.bits_per_key))
    }
}

/// The parameters for `num_keys` keys at `bits_per_key` bits each, with the probe count from [`PROBE_TABLE`]. The
/// block count is `ceil(num_keys · bits_per_key / 512)`, at least one block when there are keys, zero for none,
/// and saturates at `u32::MAX` blocks (256 GiB).
pub(crate) fn params_for(num_keys: usize, bits_per_key: f64) -> BlockedBloomParams {
    let bits = num_keys as f64 * bits_per_key;
    let blocks = (bits / f64::from(BLOCK_BITS)).ceil();
    let num_blocks = if num_keys == 0 {
        0
    } else if blocks >= f64::from(u32::MAX) {
        u32::MAX
    } else {
        (blocks as u32).max(1)
    };
    BlockedBloomParams::clamped(num_blocks, probes_for_bits_per_key(bits_per_key))
}

/// Probe counts by bits/key, measured by `crates/bench/examples/tune_probes.rs` on filters of 10^6 keys (the full
/// table and the rates are in BENCHMARKS.md): each entry is (bits/key from which it applies, probes). At each
/// setting the rule picked the `k` with the lowest false-positive rate, made non-decreasing in bits/key; at no
/// measured setting is the rate above the rate with the probe count RocksDB's FastLocalBloom chooses, whose
/// probes are drawn the same way.
const PROBE_TABLE: [(f64, u8); 24] = [
    (0.0, 1),
    (2.125, 2),
    (3.625, 3),
    (5.125, 4),
    (6.625, 5),
    (8.375, 6),
    (10.125, 7),
    (11.875, 8),
    (13.875, 9),
    (16.125, 10),
    (18.375, 11),
    (21.125, 12),
    (24.125, 13),
    (27.375, 14),
    (31.125, 15),
    (35.125, 16),
    (40.5, 17),
    (44.5, 18),
    (51.5, 19),
    (57.5, 20),
    (63.5, 21),
    (69.5, 22),
    (76.5, 23),
    (89.5, 24),
];

/// The false-positive rate of a large filter of this policy at `bits_per_key` (at least 1): the blocked rate with
/// the probe count of [`PROBE_TABLE`].
pub(crate) fn rate_at(bits_per_key: f64) -> f64 {
    blocked_bloom_fpr(
        bits_per_key,
        u32::from(probes_for_bits_per_key(bits_per_key)),
        BLOCK_BITS,
    )
}

/// The bits per key at which the probe count steps up, in increasing order.
pub(crate) fn probe_steps() -> impl Iterator<Item = f64> {
    PROBE_TABLE.iter().skip(1).map(|&(from, _)| from)
}

/// The probe count the policy uses at a bits/key setting, from [`PROBE_TABLE`]: for example 6 at 10 bits/key.
/// Settings from 89.5 bits/key use 24.
pub(crate) fn probes_for_bits_per_key(bits_per_key: f64) -> u8 {
    PROBE_TABLE
        .iter()
        .rev()
        .find(|&&(from, _)| bits_per_key >= from)
        .map_or(1, |&(_, probes)| probes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probe_table_is_sorted_non_decreasing_and_in_range() {
        for pair in PROBE_TABLE.windows(2) {
            assert!(pair[0].0 < pair[1].0 && pair[0].1 <= pair[1].1, "{pair:?}");
        }
        assert!(
            PROBE_TABLE
                .iter()
                .all(|&(_, k)| (1..=BlockedBloomParams::MAX_PROBES).contains(&k))
        );
        assert_eq!(probes_for_bits_per_key(10.0), 6);
        assert_eq!(probes_for_bits_per_key(1.0), 1);
        assert_eq!(probes_for_bits_per_key(16.0), 9);
        assert_eq!(probes_for_bits_per_key(1e9), 24);
        assert_eq!(probes_for_bits_per_key(f64::NAN), 1);
    }

    #[test]
    fn sizes_from_the_key_count() {
        assert_eq!(params_for(0, 10.0).num_blocks(), 0);
        assert_eq!(params_for(1, 10.0).num_blocks(), 1);
        assert_eq!(params_for(1_000_000, 10.0).num_blocks(), 19_532);
        assert_eq!(params_for(usize::MAX, 32.0).num_blocks(), u32::MAX);
        assert_eq!(params_for(1000, 10.0).num_probes(), 6);
    }

    #[test]
    fn rejects_useless_bits_per_key() {
        for bad in [0.0, 0.99, -1.0, 100.01, 1e9, f64::NAN, f64::INFINITY] {
            assert!(
                matches!(
                    BlockedBloomPolicy::new(bad),
                    Err(UsageError::InvalidSetting { .. })
                ),
                "{bad}"
            );
        }
        assert!(BlockedBloomPolicy::new(1.0).is_ok());
        assert!(BlockedBloomPolicy::new(crate::MAX_BITS_PER_KEY).is_ok());
    }

    #[test]
    #[should_panic(expected = "bits_per_key")]
    fn new_panics_on_bad_configuration() {
        let _ = BlockedBloomPolicy::new(0.5).unwrap();
    }

    #[test]
    fn sizes_from_the_real_key_count_with_fractional_bits() {
        let policy = BlockedBloomPolicy::new(7.5).unwrap();
        // 1000 keys × 7.5 bits = 7500 bits → 15 blocks of 512 (7680 bits).
        assert_eq!(
            policy.estimated_block_len(1000),
            15 * 64 + crate::TRAILER_LEN
        );
        assert_eq!(policy.estimated_block_len(0), crate::TRAILER_LEN);
        assert_eq!(policy.estimated_block_len(1), 64 + crate::TRAILER_LEN);
        assert_eq!(policy.estimated_fpr(0), 0.0);
    }
}
