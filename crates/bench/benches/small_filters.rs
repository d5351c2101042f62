//! Small filters: LevelDB's per-2 KiB layout gives each filter the keys of the data blocks starting in 2 KiB of
//! table, about 47 keys of rusty-leveldb's tests. Space, false-positive rate and the cost of one `key_may_match`
//! (what rusty-leveldb calls per lookup, on the filter's bytes) for our blocks through `RustyLevelDbFilterPolicy`,
//! LevelDB's own Bloom filter (rusty-leveldb's `BloomPolicy`) at the same bits per key and at the same bytes, and
//! `LevelDbFormat(Bloom64Policy)`, in one run. Not criterion: prints a Markdown table for BENCHMARKS.md ("Small
//! filters").
//!
//! `cargo bench -p sstfilter-bench --bench small_filters` (`SSTFILTER_KEYS_PER_FILTER`, default 47;
//! `SSTFILTER_RUNS`, default 5: timings are the median of the runs, interleaved)

use std::hint::black_box;
use std::time::Instant;

use rusty_leveldb::FilterPolicy as RustyFilterPolicy;
use sstfilter::{BlockedBloomPolicy, RibbonPolicy, StandardBloomPolicy};
use sstfilter_bench::{env_u64, median};
use sstfilter_leveldb::{Bloom64Policy, LevelDbBloomPolicy};
use sstfilter_rusty_leveldb::{LevelDbFormat, RustyLevelDbFilterPolicy};

const FILTERS: u64 = 4000;
/// Absent keys asked of each filter.
const ABSENT_PER_FILTER: u64 = 500;

/// The keys of filter `f` in rusty-leveldb's layout (concatenated, with offsets).
fn layout(f: u64, per_filter: u64) -> (Vec<u8>, Vec<usize>) {
    let mut keys = Vec::new();
    let mut offsets = Vec::new();
    for j in 0..per_filter {
        offsets.push(keys.len());
        keys.extend_from_slice(format!("usr:{:012}", 2 * (f * per_filter + j)).as_bytes());
    }
    (keys, offsets)
}

/// An absent key near filter `f`'s keys (between two of them: a lookup of an LSM's gap).
fn absent(f: u64, per_filter: u64, i: u64) -> Vec<u8> {
    format!("usr:{:012}", 2 * (f * per_filter + i % per_filter) + 1).into_bytes()
}

/// An absent key of the same shape far from every filter's keys.
fn far(f: u64, i: u64) -> Vec<u8> {
    format!("usr:{:012}", 500_000_000_000 + f * ABSENT_PER_FILTER + i).into_bytes()
}

struct Row {
    name: String,
    bytes_per_filter: f64,
    bits_per_key: f64,
    fpr: f64,
    far_fpr: f64,
    probe_ns: Vec<f64>,
}

fn main() {
    let per_filter = env_u64("SSTFILTER_KEYS_PER_FILTER", 47);
    let runs = env_u64("SSTFILTER_RUNS", 5);
    // Ours first, to learn its bytes per key; LevelDB's Bloom filter then gets those bits per key too.
    let ours = RustyLevelDbFilterPolicy::new(BlockedBloomPolicy::new(10.0).unwrap());
    let (k, o) = layout(0, per_filter);
    let equal_bits = (ours.create_filter(&k, &o).len() - 1) as f64 * 8.0 / per_filter as f64;
    let equal = equal_bits.round() as u32;
    let policies: Vec<(String, Box<dyn RustyFilterPolicy>)> = vec![
        (
            "ours: BlockedBloom 10 bits/key (RustyLevelDbFilterPolicy)".into(),
            Box::new(RustyLevelDbFilterPolicy::new(
                BlockedBloomPolicy::new(10.0).unwrap(),
            )),
        ),
        (
            "ours: StandardBloom 10 bits/key".into(),
            Box::new(RustyLevelDbFilterPolicy::new(
                StandardBloomPolicy::new(10.0).unwrap(),
            )),
        ),
        (
            "ours: Ribbon, BlockedBloom's rate".into(),
            Box::new(RustyLevelDbFilterPolicy::new(
                RibbonPolicy::new(10.0).unwrap(),
            )),
        ),
        (
            "LevelDB Bloom 10 bits/key (rusty-leveldb BloomPolicy)".into(),
            Box::new(rusty_leveldb::BloomPolicy::new(10)),
        ),
        (
            format!("LevelDB Bloom {equal} bits/key (ours' bytes)"),
            Box::new(rusty_leveldb::BloomPolicy::new(equal)),
        ),
        (
            "LevelDbFormat(LevelDbBloomPolicy 10)".into(),
            Box::new(LevelDbFormat(LevelDbBloomPolicy::new(10))),
        ),
        (
            "LevelDbFormat(Bloom64Policy 10)".into(),
            Box::new(LevelDbFormat(Bloom64Policy::new(10.0))),
        ),
        (
            format!("LevelDbFormat(Bloom64Policy {equal}) (ours' bytes)"),
            Box::new(LevelDbFormat(Bloom64Policy::new(f64::from(equal)))),
        ),
    ];
    let filters: Vec<Vec<Vec<u8>>> = policies
        .iter()
        .map(|(_, p)| {
            (0..FILTERS)
                .map(|f| {
                    let (keys, offsets) = layout(f, per_filter);
                    p.create_filter(&keys, &offsets)
                })
                .collect()
        })
        .collect();
    let mut rows: Vec<Row> = policies
        .iter()
        .zip(&filters)
        .map(|((name, policy), filters)| {
            let (mut false_positives, mut far_positives) = (0u64, 0u64);
            for (f, filter) in (0..).zip(filters) {
                let (keys, offsets) = layout(f, per_filter);
                for (i, &start) in offsets.iter().enumerate() {
                    let end = offsets.get(i + 1).copied().unwrap_or(keys.len());
                    assert!(
                        policy.key_may_match(&keys[start..end], filter),
                        "{name} lost a key"
                    );
                }
                false_positives += (0..ABSENT_PER_FILTER)
                    .filter(|&i| policy.key_may_match(&absent(f, per_filter, i), filter))
                    .count() as u64;
                far_positives += (0..ABSENT_PER_FILTER)
                    .filter(|&i| policy.key_may_match(&far(f, i), filter))
                    .count() as u64;
            }
            let bytes: usize = filters.iter().map(Vec::len).sum();
            Row {
                name: name.clone(),
                bytes_per_filter: bytes as f64 / FILTERS as f64,
                bits_per_key: bytes as f64 * 8.0 / (FILTERS * per_filter) as f64,
                fpr: false_positives as f64 / (FILTERS * ABSENT_PER_FILTER) as f64,
                far_fpr: far_positives as f64 / (FILTERS * ABSENT_PER_FILTER) as f64,
                probe_ns: Vec::new(),
            }
        })
        .collect();
    // Probe cost: every policy in turn, `runs` times, each run one absent and one present key per filter.
    let probes: Vec<(Vec<u8>, Vec<u8>)> = (0..FILTERS)
        .map(|f| {
            let (keys, offsets) = layout(f, per_filter);
            let end = offsets.get(1).copied().unwrap_or(keys.len());
            (absent(f, per_filter, f), keys[..end].to_vec())
        })
        .collect();
    for _ in 0..runs {
        for ((_, policy), (filters, row)) in policies.iter().zip(filters.iter().zip(&mut rows)) {
            let start = Instant::now();
            let mut hits = 0u32;
            for _ in 0..20 {
                for (filter, (miss, hit)) in filters.iter().zip(&probes) {
                    hits += u32::from(policy.key_may_match(black_box(miss), black_box(filter)));
                    hits += u32::from(policy.key_may_match(black_box(hit), black_box(filter)));
                }
            }
            black_box(hits);
            row.probe_ns
                .push(start.elapsed().as_secs_f64() * 1e9 / (40 * FILTERS) as f64);
        }
    }
    println!(
        "\n{per_filter} keys a filter, {FILTERS} filters, {} absent keys each; probe: median of {runs} runs\n",
        ABSENT_PER_FILTER
    );
    println!(
        "| filter | bytes a filter | bits/key | FPR, absent keys between stored ones | FPR, absent keys far from them | ns per key_may_match |"
    );
    println!("|---|---:|---:|---:|---:|---:|");
    for row in rows {
        println!(
            "| {} | {:.1} | {:.2} | {:.3} % | {:.3} % | {:.1} |",
            row.name,
            row.bytes_per_filter,
            row.bits_per_key,
            row.fpr * 100.0,
            row.far_fpr * 100.0,
            median(row.probe_ns)
        );
    }
}
