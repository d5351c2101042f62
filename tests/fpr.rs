//! Measured false-positive rates against the theory for FastBloom's design, computed here from first principles.

use sstfilter::{FastBloomPolicy, FilterBlock, FilterBlockBuilder, KindParams};

const BLOCK_BITS: usize = 512;

/// Exact false-positive rate of a 512-bit-blocked Bloom filter whose keys each set `k` *distinct* uniformly
/// random bits of one uniformly chosen block, at `bits_per_key`, queried by keys that test `k` distinct bits.
///
/// Block loads are Poisson with mean 512/bits_per_key. For a block holding `i` keys, the distribution of its
/// number of set bits `X` is computed exactly by dynamic programming (a key turning `j` new bits on among its
/// `k` is hypergeometric), and a foreign query succeeds with probability `C(X, k) / C(512, k)`.
fn distinct_probe_theory(bits_per_key: f64, k: usize) -> f64 {
    let ln_choose = |n: usize, r: usize| -> f64 {
        (0..r)
            .map(|i| ((n - i) as f64).ln() - ((i + 1) as f64).ln())
            .sum()
    };
    let choose = |n: usize, r: usize| if r > n { 0.0 } else { ln_choose(n, r).exp() };
    let all = choose(BLOCK_BITS, k);
    let lambda = BLOCK_BITS as f64 / bits_per_key;
    let last = (lambda + 12.0 * lambda.sqrt() + 30.0) as usize;
    let mut set_bits = vec![0.0f64; BLOCK_BITS + 1];
    set_bits[0] = 1.0;
    let mut ln_poisson = -lambda;
    let mut rate = 0.0;
    for i in 0..=last {
        if i > 0 {
            ln_poisson += lambda.ln() - (i as f64).ln();
            let mut next = vec![0.0f64; BLOCK_BITS + 1];
            for (x, &p) in set_bits.iter().enumerate().filter(|(_, p)| **p > 0.0) {
                for new in 0..=k.min(BLOCK_BITS - x) {
                    let ways = choose(BLOCK_BITS - x, new) * choose(x, k - new);
                    next[x + new] += p * ways / all;
                }
            }
            set_bits = next;
        }
        let query_hits: f64 = set_bits
            .iter()
            .enumerate()
            .map(|(x, p)| p * choose(x, k) / all)
            .sum();
        rate += ln_poisson.exp() * query_hits;
    }
    rate
}

#[test]
fn theory_reproduces_the_textbook_limit() {
    // One probe per key: a block with i keys has the standard fill, and distinctness plays no role; the rate
    // is then E[1 - (1 - 1/512)^i] over Poisson i = 1 - e^{-λ/512} = 1 - e^{-1/bpk}.
    let bpk: f64 = 4.0;
    let want = 1.0 - (-1.0 / bpk).exp();
    assert!((distinct_probe_theory(bpk, 1) / want - 1.0).abs() < 1e-6);
}

fn measured_fpr(bits_per_key: f64) -> (f64, f64, f64) {
    const KEYS: u64 = 1_000_000;
    const ABSENT: u64 = 3_000_000;
    let mut builder = FilterBlockBuilder::new(FastBloomPolicy::new(bits_per_key));
    for i in 0..KEYS {
        builder.add_key(format!("usr:{i:012}").as_bytes());
    }
    let filter = FilterBlock::open(builder.finish()).unwrap();
    let KindParams::FastBloom(params) = *filter.params() else {
        panic!("FastBloomPolicy builds FastBloom");
    };
    let false_positives = (0..ABSENT)
        .filter(|i| filter.may_contain(format!("abs:{i:012}").as_bytes()))
        .count();
    let measured = false_positives as f64 / ABSENT as f64;
    let theory = distinct_probe_theory(filter.bits_per_key(), usize::from(params.num_probes()));
    (measured, theory, filter.expected_fpr())
}

#[test]
fn fpr_is_within_ten_percent_of_theory_at_6_10_16_bits_per_key() {
    for bits_per_key in [6.0, 10.0, 16.0] {
        let (measured, theory, estimate) = measured_fpr(bits_per_key);
        println!(
            "{bits_per_key} bits/key: measured {:.4} %, theory {:.4} %, library estimate {:.4} %",
            measured * 100.0,
            theory * 100.0,
            estimate * 100.0
        );
        assert!(
            (measured / theory - 1.0).abs() < 0.10,
            "{bits_per_key}: {measured} vs {theory}"
        );
        // The library's estimate (the with-replacement blocked formula) is close to the exact theory.
        assert!(
            (estimate / theory - 1.0).abs() < 0.05,
            "{bits_per_key}: {estimate} vs {theory}"
        );
    }
}
