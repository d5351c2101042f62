//! The false-positive-rate formulas of every filter design, and their inverses: the one home of the arithmetic
//! that sizes filters. The kinds use it for their expected rates, the policies to choose parameters, and
//! [`FilterModel`](super::FilterModel) for capacity planning; tests compare measurements against it. (The
//! `sstfilter-memory` crate keeps the formulas only its filters use: Guava's bits for a rate, and the estimates
//! from a filter's fill; it takes the optimal probe count from [`FilterModel::probes`](super::FilterModel::probes).)

/// False-positive rate of a standard (unblocked) Bloom filter of `bits` bits holding `keys` keys with `probes`
/// independent probes: `(1 - e^(-k·n/m))^k`.
#[must_use]
pub(crate) fn standard_bloom_fpr(bits: f64, keys: f64, probes: u32) -> f64 {
    if keys <= 0.0 {
        return 0.0;
    }
    if bits <= 0.0 {
        return 1.0;
    }
    let k = f64::from(probes);
    (1.0 - (-k * keys / bits).exp()).powf(k)
}

/// False-positive rate of a blocked Bloom filter whose blocks have `block_bits` bits, at `bits_per_key` bits per
/// key overall and `probes` independent probes per key, all inside the key's block.
///
/// The number of keys in a block is Poisson-distributed with mean `λ = block_bits / bits_per_key`; a block
/// holding `i` keys answers a foreign query falsely with the standard Bloom rate for `block_bits` bits and `i`
/// keys (with replacement: `(1 - (1 - 1/B)^(k·i))^k`). The result is the Poisson-weighted sum, which is the
/// figure RocksDB calls the cache-local rate (0.957 % for 512-bit blocks at 10 bits/key and 6 probes).
#[must_use]
pub(crate) fn blocked_bloom_fpr(bits_per_key: f64, probes: u32, block_bits: u32) -> f64 {
    if bits_per_key.is_nan() || bits_per_key <= 0.0 || block_bits == 0 {
        return 1.0;
    }
    // Below 0.01 bits/key every block is saturated: the fill misses 1 by e^-100, so the rate is 1.0 exactly in
    // f64. (A hostile block can claim 2^64 keys; this answers it at once.)
    if bits_per_key < 0.01 {
        return 1.0;
    }
    let block = f64::from(block_bits);
    let lambda = block / bits_per_key;
    let k = f64::from(probes);
    // Survival of one bit after one probe; raised to k·i for i keys.
    let keep = 1.0 - 1.0 / block;
    // Only the Poisson terms within 12 standard deviations of the mean matter, so the sum runs over
    // O(sqrt(λ)) terms, in log space (ln p_i = −λ + i·ln λ − ln i!) so that large means do not underflow.
    let spread = 12.0 * lambda.sqrt() + 30.0;
    let first = (lambda - spread).max(0.0).floor() as u64;
    let last = (lambda + spread).ceil() as u64;
    let ln_lambda = lambda.ln();
    let mut ln_p = -lambda + first as f64 * ln_lambda - ln_factorial(first);
    let mut total = 0.0;
    for i in first..=last {
        if i > first {
            ln_p += ln_lambda - (i as f64).ln();
        }
        if ln_p > -745.0 {
            let fill = 1.0 - keep.powf(k * i as f64);
            total += ln_p.exp() * fill.powf(k);
        }
    }
    total.min(1.0)
}

/// `ln(n!)`: exact for small `n`, Stirling's series beyond (relative error below 1e-12 from n = 20).
fn ln_factorial(n: u64) -> f64 {
    if n < 20 {
        return (2..=n).map(|i| (i as f64).ln()).sum();
    }
    let n = n as f64;
    let n3 = n * n * n;
    n * n.ln() - n + 0.5 * (2.0 * core::f64::consts::PI * n).ln() + 1.0 / (12.0 * n)
        - 1.0 / (360.0 * n3)
        + 1.0 / (1260.0 * n3 * n * n)
}

/// The information-theoretic lower bound on bits per key for a filter with false-positive rate `fpr`:
/// `log2(1/ε)`.
#[must_use]
pub fn bits_per_key_bound(fpr: f64) -> f64 {
    -fpr.log2()
}

/// The probe count that minimises a standard Bloom filter's false-positive rate at `bits_per_key` bits per key:
/// `k = (m/n)·ln 2`, rounded to the nearest integer and at least 1 (the textbook optimum, as in Guava).
#[must_use]
pub(crate) fn optimal_bloom_probes(bits_per_key: f64) -> u32 {
    let k = (bits_per_key * core::f64::consts::LN_2).round();
    if k >= 1.0 { k as u32 } else { 1 }
}

/// False-positive rate of a Ribbon filter whose queries compare `r` result bits for a fraction `lower_fraction` of
/// the slots and `r + 1` for the rest: `f·2^-r + (1 − f)·2^-(r+1)`.
pub(crate) fn ribbon_fpr(lower_columns: u32, lower_fraction: f64) -> f64 {
    let lower = (-f64::from(lower_columns)).exp2();
    lower_fraction * lower + (1.0 - lower_fraction) * lower / 2.0
}

/// The inverse of [`ribbon_fpr`]: result columns `(r, f)` such that a fraction `f` of the slots with `r` columns
/// and the rest with `r + 1` give `fpr`. The rate is clamped to `[2^-max_columns, 1/2]`: at least one result bit,
/// at most `max_columns`.
pub(crate) fn ribbon_columns_for_fpr(fpr: f64, max_columns: u32) -> (u32, f64) {
    let max = f64::from(max_columns);
    let fpr = if fpr.is_nan() {
        0.5
    } else {
        fpr.clamp((-max).exp2(), 0.5)
    };
    let r = (-fpr.log2()).floor().clamp(1.0, max);
    let lower = (fpr * (r + 1.0).exp2() - 1.0).clamp(0.0, 1.0);
    (r as u32, if r >= max { 1.0 } else { lower })
}

/// The fewest bits per key in `min..=max` at which `rate` is at most `target`; `None` unless `0 < target < 1` and
/// `rate(max)` reaches it. The one inversion of the rate formulas: a bisection that keeps `rate(high) <= target`,
/// so the answer always meets the target even where a rate is not strictly monotonic (BlockedBloom's probe count
/// changes in steps).
pub(crate) fn bits_for_rate(
    rate: impl Fn(f64) -> f64,
    min: f64,
    max: f64,
    target: f64,
) -> Option<f64> {
    if !(target > 0.0 && target < 1.0) || rate(max) > target {
        return None;
    }
    if rate(min) <= target {
        return Some(min);
    }
    let (mut low, mut high) = (min, max);
    // 64 halvings take the bracket below f64 resolution at these magnitudes.
    for _ in 0..64 {
        let mid = 0.5 * (low + high);
        if rate(mid) <= target {
            high = mid;
        } else {
            low = mid;
        }
    }
    Some(high)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocked_rate_matches_rocksdb_published_figure() {
        // RocksDB's util/bloom_impl.h documents 0.957 % for its 512-bit cache-local Bloom at 10 bits/key, k = 6.
        let r = blocked_bloom_fpr(10.0, 6, 512);
        assert!((r - 0.00957).abs() < 0.00001, "{r}");
    }

    #[test]
    fn blocked_rate_approaches_standard_rate_for_large_blocks() {
        // With blocks far larger than a key's share, block-load variance vanishes and the blocked formula
        // converges to the standard one.
        for (bpk, k) in [(6.0, 4), (10.0, 7), (16.0, 11)] {
            let blocked = blocked_bloom_fpr(bpk, k, 1 << 20);
            let standard = standard_bloom_fpr(bpk * 1000.0, 1000.0, k);
            assert!(
                (blocked / standard - 1.0).abs() < 0.01,
                "{bpk} {blocked} {standard}"
            );
        }
    }

    #[test]
    fn blocked_rate_is_worse_than_standard_for_cache_lines() {
        let blocked = blocked_bloom_fpr(10.0, 6, 512);
        let standard = standard_bloom_fpr(10.0, 1.0, 6);
        assert!(blocked > standard);
    }

    #[test]
    fn degenerate_inputs() {
        assert_eq!(standard_bloom_fpr(100.0, 0.0, 3), 0.0);
        assert_eq!(standard_bloom_fpr(0.0, 10.0, 3), 1.0);
        assert_eq!(blocked_bloom_fpr(0.0, 3, 512), 1.0);
        assert_eq!(blocked_bloom_fpr(f64::NAN, 3, 512), 1.0);
        assert_eq!(
            blocked_bloom_fpr(512.0 / 1.8e19, 6, 512),
            1.0,
            "must return at once"
        );
        assert!(blocked_bloom_fpr(0.06, 1, 512) > 0.9999);
    }

    #[test]
    fn stirling_matches_the_exact_factorial() {
        for n in [20u64, 25, 50, 170] {
            let exact: f64 = (2..=n).map(|i| (i as f64).ln()).sum();
            assert!((ln_factorial(n) / exact - 1.0).abs() < 1e-12, "{n}");
        }
        assert!((bits_per_key_bound(0.01) - 6.643_856).abs() < 1e-6);
    }

    #[test]
    fn bloom_probes_match_the_textbook() {
        // The usual worked example: one million keys at 1 % need 9,585,059 bits and 7 probes.
        assert_eq!(optimal_bloom_probes(9.585_059), 7);
        assert_eq!(optimal_bloom_probes(10.0), 7);
        assert_eq!(optimal_bloom_probes(0.1), 1);
        assert_eq!(optimal_bloom_probes(f64::NAN), 1);
    }

    #[test]
    fn ribbon_columns_reach_the_target_rate() {
        for fpr in [
            0.5,
            0.3,
            0.01,
            0.00955,
            2f64.powi(-8),
            0.001,
            1e-6,
            2f64.powi(-31) * 1.5,
        ] {
            let (r, f) = ribbon_columns_for_fpr(fpr, 32);
            let got = ribbon_fpr(r, f);
            assert!(
                (got / fpr - 1.0).abs() < 1e-9,
                "{fpr}: r {r} f {f} gives {got}"
            );
        }
        assert_eq!(ribbon_columns_for_fpr(2f64.powi(-8), 32), (8, 1.0));
        assert_eq!(ribbon_columns_for_fpr(0.9, 32), (1, 1.0));
        assert_eq!(ribbon_columns_for_fpr(1e-20, 32), (32, 1.0));
        assert_eq!(ribbon_columns_for_fpr(f64::NAN, 32), (1, 1.0));
        assert_eq!(ribbon_columns_for_fpr(0.0, 32), (32, 1.0));
    }
}
