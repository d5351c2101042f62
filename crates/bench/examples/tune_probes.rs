//! Measures the BlockedBloom false-positive rate for every probe count at a grid of bits/key settings, and derives
//! the probe-count table used by `probes_for_bits_per_key` (printed as Rust ranges and as a Markdown table).
//!
//! The rate is measured on real filters built from real keys, without query sampling noise: a BlockedBloom query
//! tests `k` distinct, uniformly drawn bits of one uniformly chosen block, so a block with `X` set bits answers
//! a foreign key falsely with probability `C(X, k) / C(512, k)`, and the filter's rate is the mean over its
//! blocks. (Random absent-key queries agree with this within their sampling error; see `tests/fpr.rs`.)
//!
//! Rule: at each setting, the smallest `k` whose rate is within 1 % of the best `k` (fewer probes are faster),
//! then made non-decreasing in bits/key (near-ties at high settings otherwise flip back and forth).
//!
//! Run: `cargo run --release -p sstfilter-bench --example tune_probes [num_keys]` (default 1,000,000 keys; about ten minutes).

use sstfilter::{
    BlockedBloomParams, FilterBlock, FilterBlockBuilder, FilterPlan, FilterPolicy, KeyHash,
    key_hash,
};

struct Fixed(BlockedBloomParams);

impl FilterPolicy for Fixed {
    fn plan(&self, _num_keys: usize) -> FilterPlan {
        FilterPlan::BlockedBloom(self.0)
    }
}

/// Exact false-positive rate of a built BlockedBloom block against uniformly random queries.
fn exact_fpr(block: &[u8], probes: u32) -> f64 {
    let filter = FilterBlock::open(block).expect("a block we just built opens");
    let payload = &filter.as_bytes()[..filter.as_bytes().len() - sstfilter::TRAILER_LEN];
    let mut total = 0.0;
    let mut blocks = 0usize;
    for line in payload.chunks_exact(64) {
        let set: u32 = line.iter().map(|b| b.count_ones()).sum();
        let mut p = 1.0;
        for i in 0..probes {
            p *= f64::from(set.saturating_sub(i)) / f64::from(512 - i);
        }
        total += p;
        blocks += 1;
    }
    total / blocks as f64
}

fn main() {
    let num_keys: usize = std::env::args()
        .nth(1)
        .map(|s| s.parse().expect("number of keys"))
        .unwrap_or(1_000_000);
    let hashes: Vec<KeyHash> = (0..num_keys)
        .map(|i| key_hash(format!("usr:{i:012}").as_bytes()))
        .collect();

    let mut chosen: Vec<(f64, u8, f64)> = Vec::new();
    // Quarter steps where the choice changes quickly, whole steps beyond 40 bits/key.
    let grid = (4..=160)
        .map(|q| f64::from(q) / 4.0)
        .chain((41..=100).map(f64::from));
    let mut floor = 1;
    for bpk in grid {
        let num_blocks = (num_keys as f64 * bpk / 512.0).ceil() as u32;
        let rates: Vec<(u8, f64)> = (1..=BlockedBloomParams::MAX_PROBES)
            .map(|k| {
                let params = BlockedBloomParams::new(num_blocks, k).expect("valid probe count");
                let mut builder = FilterBlockBuilder::new(Fixed(params));
                for &h in &hashes {
                    builder.add_hash(h);
                }
                (k, exact_fpr(&builder.finish(), u32::from(k)))
            })
            .collect();
        let best = rates.iter().map(|&(_, r)| r).fold(f64::INFINITY, f64::min);
        let first_close = rates
            .iter()
            .find(|&&(_, r)| r <= best * 1.01)
            .expect("the best k qualifies")
            .0;
        let k = first_close.max(floor);
        floor = k;
        let rate = rates[usize::from(k) - 1].1;
        eprintln!(
            "{bpk:5.2} bits/key: k = {k:2}, rate {:.6} % (best {:.6} %)",
            rate * 100.0,
            best * 100.0
        );
        chosen.push((bpk, k, rate));
    }

    println!("// Rust table: (bits/key from which this probe count applies, probes)");
    for (i, &(bpk, k, _)) in chosen.iter().enumerate() {
        let changed = i == 0 || chosen[i - 1].1 != k;
        if changed {
            // Switch halfway between the last setting with the old count and the first with the new one.
            let start = if i == 0 {
                0.0
            } else {
                (chosen[i - 1].0 + bpk) / 2.0
            };
            println!("({start:.3}, {k}),");
        }
    }
    println!();
    println!("| bits/key | probes | measured FPR |");
    println!("|---:|---:|---:|");
    for &(bpk, k, rate) in chosen.iter().filter(|(b, _, _)| b.fract() == 0.0) {
        println!("| {bpk:.0} | {k} | {:.4} % |", rate * 100.0);
    }
}
