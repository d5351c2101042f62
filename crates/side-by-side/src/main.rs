//! Our filters through the same motions as RocksDB's and LevelDB's in this crate's `filter_bench.cc`: the
//! same 16-byte keys in the same order, the same timed phases, and the same output line, so that
//! `crates/side-by-side/run.sh` can run the two interleaved and compare them run by run.
//!
//! ```text
//! side_by_side <impl> <n_total> <bits_per_key> <keys_per_filter> [absent]
//!   impl: blocked | blocked_aligned | ribbon | ribbon_aligned | standard | standard_aligned
//!         | rocks_bloom_reader | rocks_ribbon_reader
//! ```
//!
//! The `rocks_*_reader` impls are our `sstfilter_rocksdb` reader asked about RocksDB's own filter bytes, against
//! RocksDB's reader of the same bytes, built by our writers of RocksDB's bytes (`RocksDbBloomBuilder`,
//! `RocksDbRibbonBuilder`; timed as the build), and checked equal to the filters `filter_bench` wrote when
//! `FILTER_DUMP` names its file.
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
use sstfilter_rocksdb::{RocksDbBloomBuilder, RocksDbFilter, RocksDbRibbonBuilder};
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
    let run = Run::new(imp, n, bpk, kpf, absent);
    if let Some(theirs) = imp.strip_suffix("_reader") {
        rocksdb_reader(&run, theirs);
        return;
    }
    let (kind, aligned) = match imp.strip_suffix("_aligned") {
        Some(kind) => (kind, true),
        None => (imp, false),
    };
    let Some(policy) = policy(kind, bpk) else {
        eprintln!("unknown impl {kind}");
        std::process::exit(1);
    };

    let present = &run.present;
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

    let phases = match &blocks {
        Blocks::Plain(filters) => queries(filters, &run),
        Blocks::Aligned(filters) => queries(filters, &run),
    };
    run.report(build_ns, total_bytes, phases);
}

/// One run's settings and keys: the same keys, in the same order, as the C++ bench.
struct Run<'a> {
    imp: &'a str,
    n: usize,
    bpk: f64,
    kpf: usize,
    present: Vec<u8>,
    missing: Vec<u8>,
    /// The filter each absent key is asked of.
    filter_of_absent: Vec<usize>,
}

impl<'a> Run<'a> {
    fn new(imp: &'a str, n: usize, bpk: f64, kpf: usize, absent: usize) -> Self {
        let num_filters = n.div_ceil(kpf);
        Run {
            imp,
            n,
            bpk,
            kpf,
            present: keys(0, n),
            missing: keys(n as u64, absent),
            filter_of_absent: (0..absent as u64)
                .map(|i| (splitmix64(i * 7 + 3) % num_filters as u64) as usize)
                .collect(),
        }
    }

    /// Prints the run's line, as the C++ bench prints its own.
    fn report(
        &self,
        build_ns: f64,
        total_bytes: usize,
        (hit_ns, miss_ns, false_positives, batch_ns): Phases,
    ) {
        let Run {
            imp, n, bpk, kpf, ..
        } = *self;
        println!(
            "{imp} n={n} bpk={bpk} kpf={kpf} build_ns={build_ns:.2} hit_ns={hit_ns:.2} miss_ns={miss_ns:.2} \
             batch32_miss_ns={batch_ns:.2} fp={:.6} bytes_per_key={:.4} bits_per_key={:.3}",
            false_positives as f64 / self.filter_of_absent.len() as f64,
            total_bytes as f64 / n as f64,
            8.0 * total_bytes as f64 / n as f64,
        );
    }
}

/// The query phases' results: hit ns, miss ns, false positives, batched miss ns (or -1).
type Phases = (f64, f64, usize, f64);

/// A filter the query phases ask: one of our blocks, or our reader of a RocksDB filter.
trait Asked {
    fn may_contain(&self, key: &[u8]) -> bool;
    /// Answers `keys` into `out`; `false` if the filter has no batched query (the phase is then skipped).
    fn may_contain_batch(&self, keys: &[&[u8]], out: &mut [bool]) -> bool;
}

impl<B: AsRef<[u8]>> Asked for FilterBlock<B> {
    fn may_contain(&self, key: &[u8]) -> bool {
        FilterBlock::may_contain(self, key)
    }
    fn may_contain_batch(&self, keys: &[&[u8]], out: &mut [bool]) -> bool {
        FilterBlock::may_contain_batch(self, keys, out);
        true
    }
}

impl Asked for RocksDbFilter<'_> {
    fn may_contain(&self, key: &[u8]) -> bool {
        RocksDbFilter::may_contain(self, key)
    }
    fn may_contain_batch(&self, _keys: &[&[u8]], _out: &mut [bool]) -> bool {
        false
    }
}

/// The `rocks_*_reader` impls: RocksDB's filter bytes for `theirs`, built by our writer of them (and checked
/// equal to RocksDB's, in the file `FILTER_DUMP` names, when it names one), asked through `RocksDbFilter`.
fn rocksdb_reader(run: &Run<'_>, theirs: &str) {
    let (imp, n, bpk, kpf) = (run.imp, run.n, run.bpk, run.kpf);
    let present = &run.present;
    let dumped = std::env::var_os("FILTER_DUMP").map(|path| {
        let bytes = std::fs::read(&path).expect("FILTER_DUMP is readable");
        let mut at = 4;
        let mut take = |len: usize| {
            let part = bytes[at..at + len].to_vec();
            at += len;
            part
        };
        (0..u32::from_le_bytes(bytes[..4].try_into().unwrap()))
            .map(|_| {
                let len = u32::from_le_bytes(take(4).try_into().unwrap()) as usize;
                take(len)
            })
            .collect::<Vec<Vec<u8>>>()
    });
    let (build_ns, built) = match theirs {
        "rocks_bloom" => built_as_rocksdb(present, kpf, n, dumped.as_deref(), || {
            // RocksDB 7.8.3's default, as filter_bench builds them.
            let mut builder = RocksDbBloomBuilder::new(bpk).with_optimize_filters_for_memory(false);
            move |keys: &[u8]| {
                keys.chunks_exact(KEY_LEN).for_each(|k| builder.add_key(k));
                builder.finish()
            }
        }),
        "rocks_ribbon" => built_as_rocksdb(present, kpf, n, dumped.as_deref(), || {
            let mut builder =
                RocksDbRibbonBuilder::new(bpk).with_optimize_filters_for_memory(false);
            move |keys: &[u8]| {
                keys.chunks_exact(KEY_LEN).for_each(|k| builder.add_key(k));
                builder.finish()
            }
        }),
        _ => {
            eprintln!("unknown impl {imp}");
            std::process::exit(1);
        }
    };
    let total_bytes: usize = built.iter().map(Vec::len).sum();
    let filters: Vec<RocksDbFilter<'_>> = built
        .iter()
        .map(|b| RocksDbFilter::from_verified(b))
        .collect();
    run.report(build_ns, total_bytes, queries(&filters, run));
}

/// Our writer's filters of `present`, `kpf` keys each (`filter` makes a closure building one filter from its keys),
/// and the build's ns per key of `n`; the process ends (code 3) if they are not the bytes RocksDB's builder wrote to
/// the dump, when there is one.
fn built_as_rocksdb<F: FnMut(&[u8]) -> Vec<u8>>(
    present: &[u8],
    kpf: usize,
    n: usize,
    dumped: Option<&[Vec<u8>]>,
    mut filter: impl FnMut() -> F,
) -> (f64, Vec<Vec<u8>>) {
    let start = Instant::now();
    let built: Vec<Vec<u8>> = present
        .chunks(kpf * KEY_LEN)
        .map(|chunk| filter()(chunk))
        .collect();
    let build_ns = start.elapsed().as_nanos() as f64 / n as f64;
    if dumped.is_some_and(|d| d != built) {
        eprintln!("our builder wrote other bytes than RocksDB's builder");
        std::process::exit(3);
    }
    (build_ns, built)
}

/// The three query phases: (hit ns, miss ns, false positives, batched miss ns or -1).
///
/// Never inlined, so that each buffer type's timed loops sit at the start of a function of their own rather than
/// wherever they fall inside `main`: with this function inlined, `FilterBlock<AlignedBlock>`'s miss loop took twice
/// the plain `Vec`'s time in every run on one machine, and the same aligned bytes queried through another wrapper
/// type, or through this function not inlined, took the plain block's time (BENCHMARKS.md 4b). The placement of a
/// latency-bound loop's code, not the block's, made the difference.
#[inline(never)]
fn queries<F: Asked>(filters: &[F], run: &Run<'_>) -> Phases {
    let (present, missing, filter_of_absent, kpf) = (
        &run.present[..],
        &run.missing[..],
        &run.filter_of_absent[..],
        run.kpf,
    );
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
        let mut batched = true;
        for group in missing[..whole * KEY_LEN].chunks_exact(BATCH * KEY_LEN) {
            for (slot, key) in keys.iter_mut().zip(group.chunks_exact(KEY_LEN)) {
                *slot = key;
            }
            batched = filters[0].may_contain_batch(&keys, &mut answers);
            if !batched {
                break;
            }
            passed += answers.iter().filter(|&&a| a).count();
        }
        if batched {
            batch_ns = start.elapsed().as_nanos() as f64 / whole as f64;
        }
        black_box(passed);
    }
    (hit_ns, miss_ns, false_positives, batch_ns)
}
