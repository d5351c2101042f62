//! Space and false-positive rate of BlockedBloom, Ribbon and their peers (not a timing benchmark: it prints a
//! Markdown table for BENCHMARKS.md). BlockedBloom and the Bloom peers get 10 bits/key; Ribbon runs at BlockedBloom's
//! rate at 10 bits/key and at the xor filters' rates, 2^-8 and 2^-16.
//!
//! `cargo bench -p sstfilter --bench fpr` measures n = 10^6 and 10^7 keys against 10^7 absent keys of the same shape.
//! `SSTFILTER_BENCH_SIZES=1M` limits the key counts; `SSTFILTER_FPR_QUERIES` sets the number of absent keys.

use sstfilter_bench as common;

use common::{
    BinaryFuse8, BinaryFuse16, Fastbloom, Filter, Keys, LevelDb, Ours, OursRibbonAt, OursStandard,
    Sbbf,
};

fn row<F: Filter>(keys: &Keys, absent: &Keys, extra: &str) {
    let filter = F::build(keys);
    let lost = keys.iter().filter(|k| !filter.contains(k)).count();
    assert_eq!(lost, 0, "{} lost keys", F::NAME);
    let false_positives = absent.iter().filter(|k| filter.contains(k)).count();
    let fpr = false_positives as f64 / absent.len() as f64;
    let bits_per_key = filter.size_bytes() as f64 * 8.0 / keys.len() as f64;
    let overhead = bits_per_key / -fpr.log2() - 1.0;
    println!(
        "| {} | {} | {bits_per_key:.3} | {:.4} % | {:+.1} % | {extra} |",
        F::NAME,
        keys.len(),
        fpr * 100.0,
        overhead * 100.0
    );
}

/// A Ribbon row, with the theory from the block's parameters.
fn ribbon_row<const LOG2_INV_FPR: i32>(keys: &Keys, absent: &Keys) {
    let filter = OursRibbonAt::<LOG2_INV_FPR>::build(keys);
    let block = filter.block();
    let theory = match block.params() {
        p @ sstfilter::KindParams::Ribbon(_) => {
            format!("{:.4} % ({p})", block.expected_fpr() * 100.0)
        }
        _ => format!("{} (fallback)", block.kind()),
    };
    drop(filter);
    row::<OursRibbonAt<LOG2_INV_FPR>>(keys, absent, &theory);
}

fn main() {
    let wanted = std::env::var("SSTFILTER_BENCH_SIZES").unwrap_or_else(|_| "1M,10M".into());
    let queries: usize = std::env::var("SSTFILTER_FPR_QUERIES")
        .ok()
        .and_then(|q| q.parse().ok())
        .unwrap_or(10_000_000);
    let absent = Keys::absent(queries);
    println!(
        "| filter | keys | bits/key | FPR ({queries} absent keys) | space over log2(1/FPR) | theory |"
    );
    println!("|---|---:|---:|---:|---:|---|");
    for (n, label) in [(1_000_000, "1M"), (10_000_000, "10M")] {
        if !wanted.split(',').any(|w| w.trim() == label) {
            continue;
        }
        let keys = Keys::present(n);
        let ours = Ours::build(&keys);
        let theory = format!(
            "{:.4} % (blocked Bloom, k = {})",
            ours.block().expected_fpr() * 100.0,
            match ours.block().params() {
                sstfilter::KindParams::BlockedBloom(p) => p.num_probes(),
                _ => 0,
            }
        );
        drop(ours);
        row::<Ours>(&keys, &absent, &theory);
        let standard = OursStandard::build(&keys);
        let standard_theory = format!(
            "{:.4} % ((1 - e^(-kn/m))^k, k = {})",
            standard.block().expected_fpr() * 100.0,
            match standard.block().params() {
                sstfilter::KindParams::StandardBloom(p) => p.num_probes(),
                _ => 0,
            }
        );
        drop(standard);
        row::<OursStandard>(&keys, &absent, &standard_theory);
        row::<Fastbloom>(&keys, &absent, "");
        row::<Sbbf>(&keys, &absent, "");
        row::<BinaryFuse8>(&keys, &absent, "2^-8 = 0.3906 %");
        row::<LevelDb>(&keys, &absent, "");
        ribbon_row::<0>(&keys, &absent);
        ribbon_row::<8>(&keys, &absent);
        ribbon_row::<16>(&keys, &absent);
        row::<BinaryFuse16>(&keys, &absent, "2^-16 = 0.0015 %");
    }
}
