//! Our filters through the same motions as RocksDB's and LevelDB's in this crate's `filter_bench.cc`: the
//! same 16-byte keys in the same order, the same timed phases, and the same output line, so that
//! `crates/side-by-side/run.sh` can run the two interleaved and compare them run by run.
//!
//! ```text
//! side_by_side <impl> <n_total> <bits_per_key> <keys_per_filter> [absent]
//!   impl: blocked | blocked_aligned | ribbon | ribbon_aligned | standard | standard_aligned
//! ```
//!
//! The kinds' policies: [`sstfilter_side_by_side::policy`]. Plain impls read each block from a
//! `Vec<u8>` of its own, as a store that reads a block from a file into a buffer has it (wherever the allocator
//! puts it); `_aligned` impls from an [`AlignedBlock`], as a store that loads blocks into 64-byte-aligned
//! buffers has them.
//!
//! Phases, as in the C++ bench: `build_ns` (per key: hashing, `add_key`, `finish`), `hit_ns` (every present key,
//! in index order, against its filter), `miss_ns` (every absent key against a pseudo-random filter), and
//! `batch32_miss_ns` (absent keys 32 at a time through `may_contain_batch`, single filter only).

use std::hint::black_box;
use std::time::Instant;

use sstfilter::{AlignedBlock, FilterBlock, FilterBlockBuilder};
use sstfilter_side_by_side::{KEY_LEN, keys, policy, splitmix64};

/// Keys per batched query, as RocksDB's MultiGet batch in the C++ bench.
const BATCH: usize = 32;

/// The blocks, held the way the impl says.
enum Blocks {
    Plain(Vec<FilterBlock<Vec<u8>>>),
    Aligned(Vec<FilterBlock<AlignedBlock>>),
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 5 {
        eprintln!("usage: {} impl n bpk kpf [absent]", args[0]);
        std::process::exit(1);
    }
    let imp = args[1].as_str();
    let n: usize = args[2].parse().expect("n");
    let bpk: f64 = args[3].parse().expect("bits per key");
    let mut kpf: usize = args[4].parse().expect("keys per filter");
    let absent: usize = args
        .get(5)
        .map_or(n.max(1_000_000), |a| a.parse().expect("absent"));
    if kpf == 0 || kpf > n {
        kpf = n;
    }
    let num_filters = n.div_ceil(kpf);
    let (kind, aligned) = match imp.strip_suffix("_aligned") {
        Some(kind) => (kind, true),
        None => (imp, false),
    };
    let Some(policy) = policy(kind, bpk) else {
        eprintln!("unknown impl {kind}");
        std::process::exit(1);
    };

    let present = keys(0, n);
    let missing = keys(n as u64, absent);
    let filter_of_absent: Vec<usize> = (0..absent as u64)
        .map(|i| (splitmix64(i * 7 + 3) % num_filters as u64) as usize)
        .collect();

    let start = Instant::now();
    let built: Vec<Vec<u8>> = present
        .chunks(kpf * KEY_LEN)
        .map(|chunk| {
            let mut builder = FilterBlockBuilder::new(&policy);
            for key in chunk.chunks_exact(KEY_LEN) {
                builder.add_key(key);
            }
            builder.finish()
        })
        .collect();
    let build_ns = start.elapsed().as_nanos() as f64 / n as f64;
    let total_bytes: usize = built.iter().map(Vec::len).sum();
    // Each block in a buffer of its own, as if read from a file: a fresh `Vec` (placed by the allocator) or an
    // aligned buffer filled once.
    let blocks = if aligned {
        Blocks::Aligned(
            built
                .iter()
                .map(|b| FilterBlock::open(AlignedBlock::copy_from(b)).expect("opens"))
                .collect(),
        )
    } else {
        Blocks::Plain(
            built
                .iter()
                .map(|b| FilterBlock::open(b.clone()).expect("opens"))
                .collect(),
        )
    };
    drop(built);

    let (hit_ns, miss_ns, false_positives, batch_ns) = match &blocks {
        Blocks::Plain(filters) => queries(filters, &present, &missing, &filter_of_absent, kpf),
        Blocks::Aligned(filters) => queries(filters, &present, &missing, &filter_of_absent, kpf),
    };
    println!(
        "{imp} n={n} bpk={bpk} kpf={kpf} build_ns={build_ns:.2} hit_ns={hit_ns:.2} miss_ns={miss_ns:.2} \
         batch32_miss_ns={batch_ns:.2} fp={:.6} bytes_per_key={:.4} bits_per_key={:.3}",
        false_positives as f64 / absent as f64,
        total_bytes as f64 / n as f64,
        8.0 * total_bytes as f64 / n as f64,
    );
}

/// The three query phases: (hit ns, miss ns, false positives, batched miss ns or -1).
///
/// Never inlined, so that each buffer type's timed loops sit at the start of a function of their own rather than
/// wherever they fall inside `main`: with this function inlined, `FilterBlock<AlignedBlock>`'s miss loop took twice
/// the plain `Vec`'s time in every run on one machine, and the same aligned bytes queried through another wrapper
/// type, or through this function not inlined, took the plain block's time (BENCHMARKS.md 4b). The placement of a
/// latency-bound loop's code, not the block's, made the difference.
#[inline(never)]
fn queries<B: AsRef<[u8]>>(
    filters: &[FilterBlock<B>],
    present: &[u8],
    missing: &[u8],
    filter_of_absent: &[usize],
    kpf: usize,
) -> (f64, f64, usize, f64) {
    let n = present.len() / KEY_LEN;
    let start = Instant::now();
    let mut hits = 0usize;
    for (i, key) in present.chunks_exact(KEY_LEN).enumerate() {
        hits += usize::from(filters[i / kpf].may_contain(key));
    }
    let hit_ns = start.elapsed().as_nanos() as f64 / n as f64;
    if hits != n {
        eprintln!("FALSE NEGATIVES: {} of {n}", n - hits);
        std::process::exit(2);
    }

    let absent = missing.len() / KEY_LEN;
    let start = Instant::now();
    let mut false_positives = 0usize;
    for (key, &f) in missing.chunks_exact(KEY_LEN).zip(filter_of_absent) {
        false_positives += usize::from(filters[f].may_contain(key));
    }
    let miss_ns = start.elapsed().as_nanos() as f64 / absent as f64;

    let mut batch_ns = -1.0;
    if filters.len() == 1 {
        let mut keys: [&[u8]; BATCH] = [&[]; BATCH];
        let mut answers = [false; BATCH];
        let mut passed = 0usize;
        let whole = absent / BATCH * BATCH;
        let start = Instant::now();
        for group in missing[..whole * KEY_LEN].chunks_exact(BATCH * KEY_LEN) {
            for (slot, key) in keys.iter_mut().zip(group.chunks_exact(KEY_LEN)) {
                *slot = key;
            }
            filters[0].may_contain_batch(&keys, &mut answers);
            passed += answers.iter().filter(|&&a| a).count();
        }
        batch_ns = start.elapsed().as_nanos() as f64 / whole as f64;
        black_box(passed);
    }
    (hit_ns, miss_ns, false_positives, batch_ns)
}
