//! The Range filter's policy: the range length and false-positive rate a writer sizes for.

use crate::kind::range::MAX_RANGE_LOG2;
use crate::kind::range::elias_fano::Layout;

/// Sizes [`FilterKind::Range`](crate::FilterKind::Range) filters, built by
/// [`RangeFilterBuilder`](crate::RangeFilterBuilder): the longest range that keeps the stated rate, `L` (in
/// projected values, rounded up to a power of two), and the rate `ε` for an empty range of that length.
///
/// A filter of `n` keys gets the universe `r = ⌈n · L / ε⌉`; an empty range of `ℓ ≤ L` projected values then
/// answers "may contain" with probability at most `ε · ℓ / L`, a point question with at most `ε / L`, for
/// `log2(L / ε) + 2` to `+ 3` bits per key (Elias–Fano's rounding of `log2(r / n)`) and a quarter bit of samples.
///
/// ```
/// use sstfilter::RangePolicy;
/// let policy = RangePolicy::new(1000, 0.01); // ranges up to 1000 values, rounded up to 1024
/// assert_eq!(policy.max_range_len(), 1024);
/// assert!(policy.bits_per_key(1_000_000) < 20.0); // log2(1024 / 0.01) = 16.6, + 2.x
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RangePolicy {
    range_log2: u32,
    fpr: f64,
}

impl RangePolicy {
    /// The longest range a filter can be sized for: `2^56` projected values.
    pub const MAX_RANGE_LEN: u64 = 1 << MAX_RANGE_LOG2;

    /// The smallest rate a policy targets, `2^-40`; smaller ones are raised to it.
    pub const MIN_FPR: f64 = 1.0 / (1u64 << 40) as f64;

    /// A policy for ranges of up to `max_range_len` projected values (rounded up to a power of two, 0 counts as 1,
    /// at most [`MAX_RANGE_LEN`](Self::MAX_RANGE_LEN)) with false-positive rate `fpr` for an empty range that long
    /// (clamped into `MIN_FPR..=1`; NaN counts as 1, the smallest filter).
    #[must_use]
    pub fn new(max_range_len: u64, fpr: f64) -> Self {
        let range_log2 = max_range_len
            .max(1)
            .checked_next_power_of_two()
            .map_or(MAX_RANGE_LOG2, u64::trailing_zeros)
            .min(MAX_RANGE_LOG2);
        let fpr = if fpr.is_nan() {
            1.0
        } else {
            fpr.clamp(Self::MIN_FPR, 1.0)
        };
        RangePolicy { range_log2, fpr }
    }

    /// A policy spending about `bits_per_key` bits per key on ranges of up to `max_range_len`: the rate of
    /// Grafite's bound at that space, `ε = L / 2^(bits − 2)` (then as [`new`](Self::new)).
    #[must_use]
    pub fn with_bits_per_key(bits_per_key: f64, max_range_len: u64) -> Self {
        let range = Self::new(max_range_len, 1.0);
        let log2_fpr = f64::from(range.range_log2) - (bits_per_key - 2.0);
        Self::new(range.max_range_len(), log2_fpr.exp2())
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

    /// The universe of codes for `num_values` distinct projected keys: `⌈n · L / ε⌉`, at least `L` and `n`, at most
    /// `u64::MAX`; 0 for no keys.
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
            .and_then(|layout| layout.bytes())
            .map_or(0, |b| b as usize + 16)
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
