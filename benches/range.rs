//! The Range filter: first beside the `grafite` crate (the Grafite authors' design over u64 keys) on the same keys
//! and queries, interleaved (build, space, query times, rates at equal space and for long ranges, the batch
//! question, and a BlockedBloom point question as the yardstick); then the false-positive rate of empty ranges
//! against the bound `n · ℓ / r`, bits per key, build and query time, beside our BlockedBloom answering point
//! questions in the same process (not a criterion benchmark: it prints Markdown tables for BENCHMARKS.md).
//!
//! `cargo bench -p sstfilter --bench range` measures 10^6 keys; `SSTFILTER_RANGE_KEYS` sets the key count,
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

use grafite::{PairwiseIndependentHasher, RangeFilter};
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

fn range_block(policy: RangePolicy, keys: &[impl AsRef<[u8]>]) -> Vec<u8> {
    let mut builder = RangeFilterBuilder::new(policy);
    for k in keys {
        builder.add_key(k.as_ref()).unwrap();
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
    beside_grafite(n, queries);
    consecutive_beside_grafite(n, queries.min(100_000));
    let mut ids: Vec<u64> = (0..n as u64).map(mix).collect();
    ids.sort_unstable();
    ids.dedup();
    let keys: Vec<Vec<u8>> = ids.iter().map(|&id| integer_key(id)).collect();
    let absent: Vec<Vec<u8>> = (0..queries as u64)
        .map(|i| integer_key(mix(i ^ 0x5555_5555)))
        .collect();

    // The point-filter peer of this run: BlockedBloom at 10 bits/key over the same keys.
    let mut bloom = FilterBlockBuilder::new(BlockedBloomPolicy::new(10.0).unwrap());
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
        let policy = RangePolicy::new(1 << range_log2, fpr).unwrap();
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
                        let _ = black_box(ask(black_box(r)));
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
        let policy = RangePolicy::new(1 << range_log2, fpr).unwrap();
        let block = range_block(policy, &dec_keys);
        let filter = FilterBlock::open(&block[..]).unwrap();
        let mut cells = Vec::new();
        for k in [1u64, 10, 100, 1000] {
            let ranges = empty_ranges(&dec_ids, k, queries / 4, k, max_id);
            let positives = ranges
                .iter()
                .filter(|&&(lo, hi)| {
                    filter
                        .may_contain_range(Included(&decimal_key(lo)), Excluded(&decimal_key(hi)))
                        .must_read()
                })
                .count();
            let rate = positives as f64 / ranges.len() as f64;
            cells.push(format!("{:.2} %", rate * 100.0));
        }
        println!(
            "| 2^{range_log2} | {fpr} | {:.2} | {} |",
            filter.bits_per_key(),
            cells.join(" | ")
        );
    }
}

/// The peer's filter over `ids` (sorted, distinct), sized as it sizes itself for `(L, ε)`.
fn grafite_filter(ids: &[u64], max_range_len: u64, fpr: f64) -> RangeFilter {
    let hasher = PairwiseIndependentHasher::new(ids.len(), fpr, max_range_len)
        .unwrap_or_else(|e| panic!("grafite refuses (L = {max_range_len}, ε = {fpr}): {e:?}"));
    RangeFilter::new(ids.iter().copied(), hasher)
}

/// Bits per key of the peer's filter: its Elias–Fano arrays with their rank/select support, and its hasher.
fn grafite_bits_per_key(filter: &RangeFilter, n: usize) -> f64 {
    (filter.ef.heap_size() + size_of::<RangeFilter>()) as f64 * 8.0 / n as f64
}

/// Our policy for `L` whose block over `keys` is the largest not above `bits` bits per key (bisection on the
/// rate: the payload grows continuously and monotonically with the universe).
fn policy_at_space(max_range_len: u64, bits: f64, keys: &[[u8; 8]]) -> RangePolicy {
    let bits_of =
        |policy: RangePolicy| range_block(policy, keys).len() as f64 * 8.0 / keys.len() as f64;
    let (mut lo, mut hi) = (RangePolicy::MIN_FPR.log2(), -1e-9f64); // log2 of the rate
    for _ in 0..30 {
        let mid = (lo + hi) / 2.0;
        if bits_of(RangePolicy::new(max_range_len, mid.exp2()).unwrap()) > bits {
            lo = mid; // too big: a higher rate
        } else {
            hi = mid;
        }
    }
    RangePolicy::new(max_range_len, hi.exp2()).unwrap()
}

/// Two key sets of `n` u64s, sorted and distinct: uniform, and `n / 1000` clusters of 1000 (each in a window of
/// 2^20 values from a random start), with the windows queries of the clustered set start in.
fn key_sets(n: usize) -> [(&'static str, Vec<u64>, Vec<u64>); 2] {
    let mut uniform: Vec<u64> = (0..n as u64).map(|i| mix(i ^ 0xa11)).collect();
    uniform.sort_unstable();
    uniform.dedup();
    let clusters = (n / 1000).max(1) as u64;
    let starts: Vec<u64> = (0..clusters)
        .map(|c| (1 << 22) + mix(c ^ 0xc1) % (u64::MAX - (1 << 23)))
        .collect();
    let mut clustered: Vec<u64> = (0..n as u64)
        .map(|i| starts[(i % clusters) as usize] + mix(i ^ 0xc2) % (1 << 20))
        .collect();
    clustered.sort_unstable();
    clustered.dedup();
    [
        ("uniform", uniform, Vec::new()),
        ("1000 clusters of 1000", clustered, starts),
    ]
}

/// Ours beside the peer on consecutive ids, in blocks of `block` with gaps of `9 · block` between them (one block:
/// every id from 0): ranges of `L = 2^10` starting anywhere from the first id to the last, in the blocks and in the
/// gaps. Consecutive keys fill Elias–Fano buckets with thousands of values, where a search by zero-bits only would
/// walk thousands of words.
fn consecutive_beside_grafite(n: usize, queries: usize) {
    let len = 1u64 << 10;
    println!();
    println!(
        "Consecutive ids beside the `grafite` crate: {n} keys in blocks of consecutive ids, gaps 9 times a block \
         between them; {queries} ranges of L = 2^10 starting anywhere from the first id to the last; ε = 1 %; \
         ns a question, medians of 5 interleaved repetitions."
    );
    println!();
    println!("| block | ours | grafite | ours / grafite | may contain, ours / grafite |");
    println!("|---:|---:|---:|---:|---:|");
    for block in [1_000u64, 100_000, n as u64] {
        let ids: Vec<u64> = (0..n as u64)
            .map(|i| (i / block) * 10 * block + i % block)
            .collect();
        let keys: Vec<[u8; 8]> = ids.iter().map(|id| id.to_be_bytes()).collect();
        let ours =
            FilterBlock::open(range_block(RangePolicy::new(len, 0.01).unwrap(), &keys)).unwrap();
        let peer = grafite_filter(&ids, len, 0.01);
        let top = ids[ids.len() - 1];
        let ranges: Vec<(u64, u64)> = (0..queries as u64)
            .map(|i| {
                let lo = mix(i ^ 0xb10c) % (top - len);
                (lo, lo + len - 1)
            })
            .collect();
        let bounds: Vec<([u8; 8], [u8; 8])> = ranges
            .iter()
            .map(|&(lo, hi)| (lo.to_be_bytes(), hi.to_be_bytes()))
            .collect();
        let (mut ours_ns, mut peer_ns) = (Vec::new(), Vec::new());
        let (mut ours_may, mut peer_may) = (0, 0);
        for _ in 0..5 {
            ours_ns.push(median_ns(1, bounds.len(), || {
                ours_may = bounds
                    .iter()
                    .filter(|(lo, hi)| {
                        black_box(&ours)
                            .may_contain_range(Included(&lo[..]), Included(&hi[..]))
                            .must_read()
                    })
                    .count();
            }));
            peer_ns.push(median_ns(1, ranges.len(), || {
                peer_may = ranges
                    .iter()
                    .filter(|&&(lo, hi)| black_box(&peer).query(lo..=hi))
                    .count();
            }));
        }
        println!(
            "| {block} | {:.1} | {:.1} | {:.2} | {ours_may} / {peer_may} |",
            median(&ours_ns),
            median(&peer_ns),
            median_ratio(&ours_ns, &peer_ns)
        );
    }
}

/// `count` ranges `[lo, lo + len − 1]` (inclusive) holding no id (`empty`) or at least one: starts drawn over all
/// of u64, or in and around the cluster windows when `windows` is not empty.
fn inclusive_ranges(
    ids: &[u64],
    windows: &[u64],
    len: u64,
    count: usize,
    empty: bool,
    seed: u64,
) -> Vec<(u64, u64)> {
    let mut out = Vec::with_capacity(count);
    let mut i = 0u64;
    while out.len() < count {
        i += 1;
        let r = mix(seed ^ i.wrapping_mul(0x2545_F491_4F6C_DD1D));
        let lo = if windows.is_empty() {
            if empty {
                r % (u64::MAX - len)
            } else {
                // A stored id, and a start up to `len − 1` before it.
                let id = ids[(r % ids.len() as u64) as usize];
                id.saturating_sub(mix(r) % len).min(u64::MAX - len)
            }
        } else {
            // Around a window: inside it, or up to 2^21 values before or after.
            windows[(r % windows.len() as u64) as usize] + mix(r) % (1 << 22) - (1 << 21)
        };
        let hi = lo + (len - 1);
        let at = ids.partition_point(|&x| x < lo);
        let holds = ids.get(at).is_some_and(|&x| x <= hi);
        if holds != empty {
            out.push((lo, hi));
        }
    }
    out
}

/// The median of the ratios of paired measurements.
fn median_ratio(ours: &[f64], peer: &[f64]) -> f64 {
    let mut ratios: Vec<f64> = ours.iter().zip(peer).map(|(a, b)| a / b).collect();
    ratios.sort_by(f64::total_cmp);
    ratios[ratios.len() / 2]
}

fn median(values: &[f64]) -> f64 {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// The rate at which `ask` says "may contain" for `ranges`.
fn rate(ranges: &[(u64, u64)], ask: impl Fn(u64, u64) -> bool) -> f64 {
    ranges.iter().filter(|&&(lo, hi)| ask(lo, hi)).count() as f64 / ranges.len() as f64
}

/// Ours beside the `grafite` crate (the Grafite authors' design over u64 keys) on the same keys (ours as 8
/// big-endian bytes, where the projection is the integer itself), same queries, interleaved: 5 repetitions, medians
/// of each and of the per-repetition ratios.
fn beside_grafite(n: usize, queries: usize) {
    const REPS: usize = 5;
    let queries = queries.min(200_000);
    println!(
        "Beside the `grafite` crate: {n} keys, {queries} queries a row, {REPS} interleaved repetitions."
    );
    println!();
    println!(
        "| keys | L | ε | | ours | grafite | ours / grafite (median of per-repetition ratios) |"
    );
    println!("|---|---:|---:|---|---:|---:|---:|");
    for (shape, ids, windows) in key_sets(n) {
        let keys: Vec<[u8; 8]> = ids.iter().map(|id| id.to_be_bytes()).collect();
        // A point filter's question on the same keys, the yardstick of a range question's cost.
        let mut bloom = FilterBlockBuilder::new(BlockedBloomPolicy::new(10.0).unwrap());
        for k in &keys {
            bloom.add_key(k);
        }
        let bloom = FilterBlock::open(bloom.finish()).unwrap();
        for range_log2 in [10u32, 16] {
            let (len, fpr) = (1u64 << range_log2, 0.01);
            let policy = RangePolicy::new(len, fpr).unwrap();
            let row = |what: &str, ours: f64, peer: f64, ratio: f64| {
                println!(
                    "| {shape} | 2^{range_log2} | {fpr} | {what} | {ours:.3} | {peer:.3} | {ratio:.2} |"
                );
            };
            let ours_block = range_block(policy, &keys);
            let ours = FilterBlock::open(&ours_block[..]).unwrap();
            let peer = grafite_filter(&ids, len, fpr);
            let ask_ours = |lo: u64, hi: u64| {
                ours.may_contain_range(Included(&lo.to_be_bytes()), Included(&hi.to_be_bytes()))
                    != Answer::Absent
            };
            let ask_peer = |lo: u64, hi: u64| peer.query(lo..=hi);

            let empty = inclusive_ranges(&ids, &windows, len, queries, true, 1);
            let full = inclusive_ranges(&ids, &windows, len, queries, false, 2);
            let present: Vec<u64> = (0..queries as u64)
                .map(|i| ids[(mix(i ^ 3) % ids.len() as u64) as usize])
                .collect();
            let absent: Vec<(u64, u64)> = inclusive_ranges(&ids, &windows, 1, queries, true, 4);
            let (present_be, absent_be): (Vec<[u8; 8]>, Vec<[u8; 8]>) = (
                present.iter().map(|v| v.to_be_bytes()).collect(),
                absent.iter().map(|&(v, _)| v.to_be_bytes()).collect(),
            );

            let empty_bounds: Vec<([u8; 8], [u8; 8])> = empty
                .iter()
                .map(|&(lo, hi)| (lo.to_be_bytes(), hi.to_be_bytes()))
                .collect();
            let empty_ranges: Vec<_> = empty_bounds
                .iter()
                .map(|(lo, hi)| (Included(&lo[..]), Included(&hi[..])))
                .collect();
            let mut batch_answers = vec![Answer::Absent; empty_ranges.len()];

            // [build, empty range, non-empty range, point present, point absent, batched empty range, single empty
            // range over byte bounds] × [ours, peer] × repetition, and BlockedBloom's absent point beside each
            // repetition's empty range.
            let mut times = vec![[Vec::new(), Vec::new()]; 7];
            let mut bloom_times = Vec::new();
            for _ in 0..REPS {
                // A build is one pass of tens of milliseconds, at the mercy of the moment: the median of three.
                let ours_build = median_ns(3, keys.len(), || {
                    black_box(range_block(policy, black_box(&keys)));
                });
                let peer_build = median_ns(3, ids.len(), || {
                    black_box(grafite_filter(black_box(&ids), len, fpr));
                });
                let time = |f: &dyn Fn(u64, u64) -> bool, ranges: &[(u64, u64)]| {
                    median_ns(1, ranges.len(), || {
                        for &(lo, hi) in ranges {
                            black_box(f(black_box(lo), black_box(hi)));
                        }
                    })
                };
                let pairs = [
                    (ours_build, peer_build),
                    (time(&ask_ours, &empty), time(&ask_peer, &empty)),
                    (time(&ask_ours, &full), time(&ask_peer, &full)),
                    (
                        median_ns(1, queries, || {
                            for k in &present_be {
                                black_box(ours.may_contain(black_box(k)));
                            }
                        }),
                        median_ns(1, queries, || {
                            for &v in &present {
                                black_box(peer.query(black_box(v)..=v));
                            }
                        }),
                    ),
                    (
                        median_ns(1, queries, || {
                            for k in &absent_be {
                                black_box(ours.may_contain(black_box(k)));
                            }
                        }),
                        median_ns(1, queries, || {
                            for &(v, _) in &absent {
                                black_box(peer.query(black_box(v)..=v));
                            }
                        }),
                    ),
                ];
                let batched = median_ns(1, empty_ranges.len(), || {
                    ours.may_contain_range_batch(black_box(&empty_ranges), &mut batch_answers);
                    black_box(&batch_answers);
                });
                // The single question as BlockedBloom's point and the batch are asked: over bounds already bytes,
                // without the call through `&dyn Fn` and the conversion from integers that the peer's pairs share.
                let single = median_ns(1, empty_ranges.len(), || {
                    for &(lower, upper) in &empty_ranges {
                        let _ = black_box(black_box(&ours).may_contain_range(lower, upper));
                    }
                });
                let pairs = pairs
                    .into_iter()
                    .chain([(batched, pairs[1].1), (single, pairs[1].1)]);
                for (slot, (a, b)) in times.iter_mut().zip(pairs) {
                    slot[0].push(a);
                    slot[1].push(b);
                }
                bloom_times.push(median_ns(1, absent_be.len(), || {
                    for k in &absent_be {
                        black_box(bloom.may_contain(black_box(k)));
                    }
                }));
            }
            let names = [
                "build, ns/key",
                "empty range ℓ = L, ns",
                "non-empty range ℓ = L, ns",
                "point present, ns",
                "point absent, ns",
                "empty range ℓ = L, ours batched, ns",
                "empty range ℓ = L, ours over byte bounds, ns",
            ];
            for (name, [a, b]) in names.iter().zip(&times) {
                row(name, median(a), median(b), median_ratio(a, b));
            }
            println!(
                "| {shape} | 2^{range_log2} | {fpr} | empty range ℓ = L against BlockedBloom's absent point \
                 ({:.1} ns), both asked over byte keys: ours single / batched | {:.1}× / {:.1}× | | |",
                median(&bloom_times),
                median_ratio(&times[6][0], &bloom_times),
                median_ratio(&times[5][0], &bloom_times),
            );

            let (ours_bits, peer_bits) =
                (ours.bits_per_key(), grafite_bits_per_key(&peer, ids.len()));
            row("bits/key", ours_bits, peer_bits, ours_bits / peer_bits);
            let (ours_fpr, peer_fpr) = (rate(&empty, ask_ours), rate(&empty, ask_peer));
            row(
                "FPR ℓ = L, %",
                ours_fpr * 100.0,
                peer_fpr * 100.0,
                ours_fpr / peer_fpr,
            );

            // The same space as the peer's, and the rates then.
            let equal =
                FilterBlock::open(range_block(policy_at_space(len, peer_bits, &keys), &keys))
                    .unwrap();
            let equal_fpr = rate(&empty, |lo, hi| {
                equal.may_contain_range(Included(&lo.to_be_bytes()), Included(&hi.to_be_bytes()))
                    != Answer::Absent
            });
            row(
                &format!(
                    "FPR ℓ = L at the peer's space ({:.2} bits/key), %",
                    equal.bits_per_key()
                ),
                equal_fpr * 100.0,
                peer_fpr * 100.0,
                equal_fpr / peer_fpr,
            );

            // Longer scans, against the analysis bound n · ℓ / r of each.
            let KindParams::Range(params) = *ours.params() else {
                unreachable!("a Range block")
            };
            for times_l in [16u64, 64] {
                let long = inclusive_ranges(
                    &ids,
                    &windows,
                    times_l * len,
                    queries / 4,
                    true,
                    5 + times_l,
                );
                let bound_ours = params.range_fpr(ours.num_keys(), times_l * len);
                let bound_peer = peer
                    .hasher
                    .false_positive_rate(peer.ef.len(), times_l * len)
                    .min(1.0);
                let (o, p) = (rate(&long, ask_ours), rate(&long, ask_peer));
                row(
                    &format!(
                        "FPR ℓ = {times_l}·L, % (bound: ours {:.2} %, peer {:.2} %)",
                        bound_ours * 100.0,
                        bound_peer * 100.0
                    ),
                    o * 100.0,
                    p * 100.0,
                    o / p,
                );
            }
        }
    }
    println!();
}
