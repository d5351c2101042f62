//! The Range filter's policy: the range length and false-positive rate a writer sizes for.

use super::MAX_RANGE_LOG2;
use super::elias_fano::{self, Layout};
use crate::error::UsageError;

/// Sizes [`FilterKind::Range`](crate::FilterKind::Range) filters, built by
/// [`RangeFilterBuilder`](crate::RangeFilterBuilder): the longest range that keeps the stated rate, `L` (in
/// [projected values](crate#range-filters-and-projected-values), rounded up to a power of two), and the rate `ε`
/// for an empty range of that length.
///
/// A filter of `n` keys gets the universe `r = ⌈n · L / ε⌉`; an empty range of `ℓ ≤ L` projected values then
/// answers "may contain" with probability at most `ε · ℓ / L`, a point question with at most `ε / L`, for
/// `log2(L / ε) + 2` to `+ 3` bits per key (Elias–Fano's rounding of `log2(r / n)`), an eighth to a quarter bit
/// of samples and 1/32 to 3/64 bit of counts of zeros. Longer ranges are checked too, at the rate `ε · ℓ / L`.
///
/// ```
/// use sstfilter::RangePolicy;
/// let policy = RangePolicy::new(1000, 0.01)?; // ranges up to 1000 values, rounded up to 1024
/// assert_eq!(policy.max_range_len(), 1024);
/// assert!(policy.bits_per_key(1_000_000) < 20.0); // log2(1024 / 0.01) = 16.6, + 2.x
/// # Ok::<(), sstfilter::UsageError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RangePolicy {
    range_log2: u32,
    fpr: f64,
}

impl RangePolicy {
    /// The longest range a filter can be sized for: `2^56` projected values.
    pub const MAX_RANGE_LEN: u64 = 1 << MAX_RANGE_LOG2;

    /// The smallest rate a policy targets: `2^-40`.
    pub const MIN_FPR: f64 = 1.0 / (1u64 << 40) as f64;

    /// A policy for ranges of up to `max_range_len` projected values (rounded up to a power of two, which only
    /// lowers the rate of every shorter range) with false-positive rate `fpr` for an empty range that long. Refused
    /// ([`UsageError::InvalidSetting`]) unless `max_range_len` is from 1 to [`MAX_RANGE_LEN`](Self::MAX_RANGE_LEN),
    /// `fpr` from [`MIN_FPR`](Self::MIN_FPR) up to (not including) 1, and one key fits the universe (`L / ε` below
    /// `2^64`).
    pub fn new(max_range_len: u64, fpr: f64) -> Result<Self, UsageError> {
        if !(1..=Self::MAX_RANGE_LEN).contains(&max_range_len) {
            return Err(UsageError::setting(
                "RangePolicy max_range_len",
                "from 1 to 2^56",
                max_range_len,
            ));
        }
        let range_log2 = max_range_len.next_power_of_two().trailing_zeros();
        if !(Self::MIN_FPR..1.0).contains(&fpr) {
            return Err(UsageError::setting(
                "RangePolicy fpr",
                "from 2^-40 up to (not including) 1",
                fpr,
            ));
        }
        let policy = RangePolicy { range_log2, fpr };
        if policy.max_keys() == 0 {
            return Err(UsageError::setting(
                "RangePolicy (max_range_len, fpr)",
                "a pair whose universe for one key, L / fpr, is below 2^64",
                format!("({}, {fpr})", policy.max_range_len()),
            ));
        }
        Ok(policy)
    }

    /// A policy spending about `bits_per_key` bits per key on ranges of up to `max_range_len`: the rate of
    /// Grafite's bound at that space, `ε = L / 2^(bits − 2)` (then as [`new`](Self::new)). `bits_per_key` must give
    /// a rate [`new`](Self::new) accepts, that is more than `log2(L) + 2`, at most `log2(L) + 42`, and below 66 (the
    /// universe of one key, `L / ε = 2^(bits − 2)`, must stay below 2^64), else [`UsageError::InvalidSetting`].
    pub fn with_bits_per_key(bits_per_key: f64, max_range_len: u64) -> Result<Self, UsageError> {
        let range = Self::new(max_range_len, 0.5)?;
        let log2_fpr = f64::from(range.range_log2) - (bits_per_key - 2.0);
        Self::new(range.max_range_len(), log2_fpr.exp2()).map_err(|_| {
            UsageError::setting(
                "RangePolicy bits_per_key",
                format!(
                    "more than log2(L) + 2, at most log2(L) + 42 and below 66, with L = {}",
                    range.max_range_len()
                ),
                bits_per_key,
            )
        })
    }

    /// The most distinct keys a filter of this policy can hold while keeping its rate: the universe
    /// `⌈n · L / ε⌉` of its codes must fit in 64 bits, and a block holds at most `2^32 − 1` codes (FORMAT.md 4.5).
    /// [`RangeFilterBuilder`](crate::RangeFilterBuilder) refuses keys beyond it.
    #[must_use]
    pub fn max_keys(&self) -> u64 {
        // One part in 2^52 below the exact quotient, so that the universe rounded up in floating point still fits.
        let max = u64::MAX as f64 * self.fpr / self.max_range_len() as f64 * (1.0 - f64::EPSILON);
        (max as u64).min(elias_fano::MAX_LEN)
    }

    /// The range length `L` the rate holds for, in projected values.
    #[must_use]
    pub const fn max_range_len(&self) -> u64 {
        1 << self.range_log2
    }

    /// `log2` of [`max_range_len`](Self::max_range_len).
    #[must_use]
    pub const fn range_log2(&self) -> u32 {
        self.range_log2
    }

    /// The target rate `ε` for an empty range of [`max_range_len`](Self::max_range_len).
    #[must_use]
    pub const fn fpr(&self) -> f64 {
        self.fpr
    }

    /// The universe of codes for `num_values` distinct projected keys: `⌈n · L / ε⌉`, at least `L` and `n`; 0 for no
    /// keys. Exact up to [`max_keys`](Self::max_keys) keys; beyond, saturated at `u64::MAX` (a builder never gets
    /// there).
    #[must_use]
    pub fn universe(&self, num_values: u64) -> u64 {
        if num_values == 0 {
            return 0;
        }
        let r = (num_values as f64 * self.max_range_len() as f64 / self.fpr).ceil();
        // `as` saturates at u64::MAX (r ≥ 2^64 is possible for long ranges at small rates).
        (r as u64).max(self.max_range_len()).max(num_values)
    }

    /// Payload bytes of a filter of `num_values` distinct projected keys whose codes are distinct, without the
    /// common prefix (which adds its length) and the projection's tables (44 bytes per projected position, at most
    /// 16).
    #[must_use]
    pub fn payload_len(&self, num_values: u64) -> usize {
        Layout::new(num_values, self.universe(num_values))
            .map_or(0, |layout| layout.bytes() as usize + 16)
    }

    /// Payload bits per key of a filter of `num_values` keys (as [`payload_len`](Self::payload_len)).
    #[must_use]
    pub fn bits_per_key(&self, num_values: u64) -> f64 {
        if num_values == 0 {
            return 0.0;
        }
        self.payload_len(num_values) as f64 * 8.0 / num_values as f64
    }
}
