//! The Range filter: false-positive rate of empty ranges against the bound `n · ℓ / r`, bits per key, build and
//! query time, beside our BlockedBloom answering point questions in the same process (not a criterion benchmark:
//! it prints Markdown tables for BENCHMARKS.md).
//!
//! `cargo bench -p sstfilter-bench --bench range` measures 10^6 keys; `SSTFILTER_RANGE_KEYS` sets the key count,
//! `SSTFILTER_RANGE_QUERIES` the number of empty ranges per row (default 10^6).
//!
//! Two key shapes. *Integers*: `"t/"` followed by a random u64 in big-endian, where projected values are the
//! integers themselves and a range of `ℓ` ids is a projected range of length `ℓ`. *Decimal*: `"user:"` followed by
//! a random id below 10^8 as 10 zero-padded digits (10^5 keys), a real short string range being `k` consecutive
//! ids: the projection's alphabets make it a projected range of length `k`.

#![expect(
    clippy::big_endian_bytes,
    reason = "integer keys are written big-endian, so that they sort as integers"
)]

use std::hint::black_box;
use std::ops::Bound::{Excluded, Included};
use std::time::Instant;

use sstfilter::{
    Answer, BlockedBloomPolicy, FilterBlock, FilterBlockBuilder, KindParams, RangeFilterBuilder,
    RangePolicy,
};

/// splitmix64: a deterministic stream, so runs are comparable.
fn mix(i: u64) -> u64 {
    let mut z = i.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn env(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn integer_key(id: u64) -> Vec<u8> {
    [&b"t/"[..], &id.to_be_bytes()].concat()
}

fn decimal_key(id: u64) -> Vec<u8> {
    format!("user:{id:010}").into_bytes()
}

/// Median of `runs` timings of `f`, in nanoseconds per item of `items`.
fn median_ns(runs: usize, items: usize, mut f: impl FnMut()) -> f64 {
    let mut times: Vec<f64> = (0..runs)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed().as_nanos() as f64 / items as f64
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times[runs / 2]
}

fn range_block(policy: RangePolicy, keys: &[Vec<u8>]) -> Vec<u8> {
    let mut builder = RangeFilterBuilder::new(policy);
    for k in keys {
        builder.add_key(k).unwrap();
    }
    builder.finish()
}

/// Empty ranges `[id, id + len)` of the ids (sorted, distinct), from random starts: `queries` of them.
fn empty_ranges(ids: &[u64], len: u64, queries: usize, seed: u64, max_id: u64) -> Vec<(u64, u64)> {
    let mut out = Vec::with_capacity(queries);
    let mut i = 0;
    while out.len() < queries {
        i += 1;
        let lo = mix(seed ^ i) % (max_id - len);
        let hi = lo + len; // exclusive
        let at = ids.partition_point(|&x| x < lo);
        if ids.get(at).is_none_or(|&x| x >= hi) {
            out.push((lo, hi));
        }
    }
    out
}

fn main() {
    let n = env("SSTFILTER_RANGE_KEYS", 1_000_000);
    let queries = env("SSTFILTER_RANGE_QUERIES", 1_000_000);
    let mut ids: Vec<u64> = (0..n as u64).map(mix).collect();
    ids.sort_unstable();
    ids.dedup();
    let keys: Vec<Vec<u8>> = ids.iter().map(|&id| integer_key(id)).collect();
    let absent: Vec<Vec<u8>> = (0..queries as u64)
        .map(|i| integer_key(mix(i ^ 0x5555_5555)))
        .collect();

    // The point-filter peer of this run: BlockedBloom at 10 bits/key over the same keys.
    let mut bloom = FilterBlockBuilder::new(BlockedBloomPolicy::new(10.0));
    for k in &keys {
        bloom.add_key(k);
    }
    let bloom = FilterBlock::open(bloom.finish()).unwrap();
    let bloom_point = median_ns(5, absent.len(), || {
        for k in &absent {
            black_box(bloom.may_contain(black_box(k)));
        }
    });

    println!(
        "Integer keys (`t/` + big-endian u64), {} keys, {queries} empty ranges per length.",
        keys.len()
    );
    println!();
    println!(
        "| L | ε | bits/key | build ns/key | point ns (absent) | range ns (ℓ = 16) | ℓ = 1: FPR / bound | ℓ = 2^4 | ℓ = 2^8 | ℓ = 2^16 |"
    );
    println!("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for (range_log2, fpr) in [(4u32, 0.01), (8, 0.01), (16, 0.01), (16, 0.001)] {
        let policy = RangePolicy::new(1 << range_log2, fpr);
        let build = median_ns(3, keys.len(), || {
            black_box(range_block(policy, &keys));
        });
        let block = range_block(policy, &keys);
        let filter = FilterBlock::open(&block[..]).unwrap();
        let KindParams::Range(params) = *filter.params() else {
            unreachable!("a Range block")
        };
        let point = median_ns(5, absent.len(), || {
            for k in &absent {
                black_box(filter.may_contain(black_box(k)));
            }
        });
        let mut cells = Vec::new();
        let mut range16 = 0.0;
        for len_log2 in [0u32, 4, 8, 16] {
            let len = 1u64 << len_log2;
            let ranges: Vec<(Vec<u8>, Vec<u8>)> =
                empty_ranges(&ids, len, queries, u64::from(len_log2), u64::MAX)
                    .into_iter()
                    .map(|(lo, hi)| (integer_key(lo), integer_key(hi)))
                    .collect();
            let ask = |(lo, hi): &(Vec<u8>, Vec<u8>)| {
                filter.may_contain_range(Included(lo), Excluded(hi))
            };
            let positives = ranges.iter().filter(|r| ask(r) != Answer::Absent).count();
            if len_log2 == 4 {
                range16 = median_ns(5, ranges.len(), || {
                    for r in &ranges {
                        black_box(ask(black_box(r)));
                    }
                });
            }
            let measured = positives as f64 / ranges.len() as f64;
            let bound = params.range_fpr(filter.num_keys(), len);
            cells.push(format!(
                "{:.3} % / {:.3} %",
                measured * 100.0,
                bound * 100.0
            ));
        }
        println!(
            "| 2^{range_log2} | {fpr} | {:.2} | {build:.0} | {point:.1} | {range16:.1} | {} |",
            filter.bits_per_key(),
            cells.join(" | ")
        );
    }
    println!();
    println!(
        "Same run: BlockedBloom at 10 bits/key, point query of an absent key: {bloom_point:.1} ns."
    );

    // Real short string ranges: k consecutive decimal ids.
    let max_id = 100_000_000u64;
    // 10^5 keys (at most): a density of 10^-3, so that empty scans of 1000 ids are common.
    let mut dec_ids: Vec<u64> = (0..n.min(100_000) as u64)
        .map(|i| mix(i ^ 0xdec) % max_id)
        .collect();
    dec_ids.sort_unstable();
    dec_ids.dedup();
    let dec_keys: Vec<Vec<u8>> = dec_ids.iter().map(|&id| decimal_key(id)).collect();
    println!();
    println!(
        "Decimal keys (`user:` + 10 digits, ids below 10^8), {} keys: empty scans of `k` consecutive ids, `[user:X, user:X+k)`.",
        dec_keys.len()
    );
    println!();
    println!("| L | ε | bits/key | k = 1 | k = 10 | k = 100 | k = 1000 |");
    println!("|---:|---:|---:|---:|---:|---:|---:|");
    for (range_log2, fpr) in [(4u32, 0.01), (8, 0.01), (10, 0.01), (16, 0.01)] {
        let policy = RangePolicy::new(1 << range_log2, fpr);
        let block = range_block(policy, &dec_keys);
        let filter = FilterBlock::open(&block[..]).unwrap();
        let mut cells = Vec::new();
        for k in [1u64, 10, 100, 1000] {
            let ranges = empty_ranges(&dec_ids, k, queries / 4, k, max_id);
            let (mut positives, mut too_wide) = (0usize, 0usize);
            for &(lo, hi) in &ranges {
                match filter
                    .may_contain_range(Included(&decimal_key(lo)), Excluded(&decimal_key(hi)))
                {
                    Answer::Absent => {}
                    Answer::MayContain => positives += 1,
                    Answer::Unfiltered(_) => {
                        positives += 1;
                        too_wide += 1;
                    }
                }
            }
            let rate = positives as f64 / ranges.len() as f64;
            let wide = too_wide as f64 / ranges.len() as f64;
            cells.push(format!(
                "{:.2} % ({:.0} % unchecked)",
                rate * 100.0,
                wide * 100.0
            ));
        }
        println!(
            "| 2^{range_log2} | {fpr} | {:.2} | {} |",
            filter.bits_per_key(),
            cells.join(" | ")
        );
    }
}
