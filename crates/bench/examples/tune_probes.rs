//! Measures the BlockedBloom false-positive rate for every probe count at a grid of bits/key settings, and derives
//! the probe-count table used by `probes_for_bits_per_key` (printed as Rust ranges and as a Markdown table).
//!
//! The rate is measured on real filters built from real keys, without query sampling noise: a BlockedBloom query
//! tests `k` uniformly drawn bits of one uniformly chosen block, with replacement, so a block with `X` set bits
//! answers a foreign key falsely with probability `(X / 512)^k`, and the filter's rate is the mean over its
//! blocks. (Random absent-key queries agree with this within their sampling error; see `tests/fpr.rs`.)
//!
//! Rule: at each setting, the `k` with the lowest rate, then made non-decreasing in bits/key (near-ties at high
//! settings otherwise flip back and forth). The lowest, not merely a close one: RocksDB's FastLocalBloom draws
//! its probes the same way, with the probe count it measured best (`ChooseNumProbes` in its `util/bloom_impl.h`),
//! and our rate must not exceed its rate at any setting. Each line also prints the rate, on the same filter, of
//! the probe count RocksDB would choose, and the run ends with the settings where ours is higher (none, when the
//! table was made).
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
        total += (f64::from(set) / 512.0).powi(probes as i32);
        blocks += 1;
    }
    total / blocks as f64
}

/// The probe count RocksDB's FastLocalBloom chooses for a setting (`FastLocalBloomImpl::ChooseNumProbes`,
/// RocksDB 7.8.3, from its thresholds in thousandths of a bit per key).
fn rocksdb_probes(bits_per_key: f64) -> u8 {
    let millibits = (bits_per_key * 1000.0).round() as i64;
    let thresholds = [
        2080, 3580, 5100, 6640, 8300, 10070, 11720, 14001, 16050, 18300, 22001, 25501,
    ];
    if let Some(i) = thresholds.iter().position(|&t| millibits <= t) {
        return i as u8 + 1;
    }
    if millibits > 50_000 {
        return 24;
    }
    ((millibits - 1) / 2000 - 1) as u8
}

fn main() {
    let num_keys: usize = std::env::args()
        .nth(1)
        .map(|s| s.parse().expect("number of keys"))
        .unwrap_or(1_000_000);
    let hashes: Vec<KeyHash> = (0..num_keys)
        .map(|i| key_hash(format!("usr:{i:012}").as_bytes()))
        .collect();

    let mut chosen: Vec<(f64, u8, f64, u8, f64)> = Vec::new();
    let mut above: Vec<f64> = Vec::new();
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
        let (best_k, best) = rates
            .iter()
            .copied()
            .fold((0, f64::INFINITY), |a, b| if b.1 < a.1 { b } else { a });
        let k = best_k.max(floor);
        floor = k;
        let rate = rates[usize::from(k) - 1].1;
        let theirs_k = rocksdb_probes(bpk);
        let theirs = rates[usize::from(theirs_k) - 1].1;
        eprintln!(
            "{bpk:5.2} bits/key: k = {k:2}, rate {:.6} % (best {:.6} %; RocksDB's k = {theirs_k:2}: {:.6} %)",
            rate * 100.0,
            best * 100.0,
            theirs * 100.0
        );
        if rate > theirs {
            above.push(bpk);
        }
        chosen.push((bpk, k, rate, theirs_k, theirs));
    }

    println!("// Rust table: (bits/key from which this probe count applies, probes)");
    for (i, &(bpk, k, ..)) in chosen.iter().enumerate() {
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
    println!("| bits/key | probes | FPR | RocksDB's probes | FPR with RocksDB's probes |");
    println!("|---:|---:|---:|---:|---:|");
    for &(bpk, k, rate, theirs_k, theirs) in chosen.iter().filter(|c| c.0.fract() == 0.0) {
        println!(
            "| {bpk:.0} | {k} | {:.4} % | {theirs_k} | {:.4} % |",
            rate * 100.0,
            theirs * 100.0
        );
    }
    println!();
    println!("settings where our rate is above the rate with RocksDB's probe count: {above:?}");
}
