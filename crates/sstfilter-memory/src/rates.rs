//! The Bloom-filter formulas only the in-memory filters use: Guava's size for a rate, and the rate and the number
//! of keys read from a filter's fill. The formulas the core's kinds and policies share (the textbook rate, the
//! optimal probe count) stay in the core, in `sstfilter::sizing`, and are taken from there.

/// Bits a standard Bloom filter needs to hold `keys` keys at false-positive rate `fpr` with the optimal probe
/// count: `m = -n·ln(p) / ln(2)²` (about 9.59 bits per key at 1 %), rounded up.
#[must_use]
pub(crate) fn optimal_bloom_bits(keys: f64, fpr: f64) -> f64 {
    let ln2 = core::f64::consts::LN_2;
    (-keys * fpr.ln() / (ln2 * ln2)).ceil()
}

/// The false-positive rate of a Bloom filter as it is: `set_bits` of its `bits` bits are 1, and a query tests
/// `probes` independent positions, so it passes with probability `(X/m)^k`. This is the rate a filter actually
/// delivers after an unknown number of insertions (or after unions).
#[must_use]
pub(crate) fn bloom_fill_fpr(bits: u64, set_bits: u64, probes: u32) -> f64 {
    if bits == 0 {
        return 0.0;
    }
    let fill = set_bits.min(bits) as f64 / bits as f64;
    fill.powi(i32::try_from(probes).unwrap_or(i32::MAX))
}

/// The number of distinct keys a Bloom filter of `bits` bits and `probes` probes per key holds, estimated from
/// its number of set bits (Swamidass & Baldi, 2007): `n ≈ -(m/k)·ln(1 - X/m)`. Infinite when every bit is set:
/// a full filter carries no information about its count.
#[must_use]
pub(crate) fn bloom_cardinality(bits: u64, set_bits: u64, probes: u32) -> f64 {
    if bits == 0 || probes == 0 {
        return 0.0;
    }
    let m = bits as f64;
    let zero_fraction = 1.0 - set_bits.min(bits) as f64 / m;
    -(m / f64::from(probes)) * zero_fraction.ln()
}

#[cfg(test)]
mod tests {
    use super::*;
    use sstfilter::sizing::FilterModel;

    #[test]
    fn bloom_sizing_matches_the_textbook() {
        // The usual worked example: one million keys at 1 % need 9,585,059 bits (and 7 probes).
        assert_eq!(optimal_bloom_bits(1e6, 0.01), 9_585_059.0);
    }

    #[test]
    fn fill_based_rate_and_cardinality_agree_with_the_standard_formula() {
        // A filter of m bits after n insertions with k probes has, in expectation, m(1 - e^{-kn/m}) set bits;
        // feeding that fill back must give n and the standard rate.
        let (m, k, n) = (1_000_000u64, 7u32, 100_000.0f64);
        let set = (m as f64 * (1.0 - (-f64::from(k) * n / m as f64).exp())).round() as u64;
        assert!((bloom_cardinality(m, set, k) / n - 1.0).abs() < 1e-4);
        let standard = FilterModel::StandardBloom
            .fpr_with_probes(m as f64 / n, k)
            .unwrap();
        assert!((bloom_fill_fpr(m, set, k) / standard - 1.0).abs() < 1e-4);
        assert_eq!(bloom_cardinality(m, 0, k), 0.0);
        assert_eq!(bloom_cardinality(m, m, k), f64::INFINITY);
        assert_eq!(bloom_fill_fpr(m, m, k), 1.0);
        assert_eq!(bloom_fill_fpr(0, 0, k), 0.0);
    }
}
