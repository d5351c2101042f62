//! Builds one filter of the C++ bench's keys several times in one process and prints, for each build, its ns per
//! key and the part spent adding the keys (hashing them and storing their hashes); the rest is `finish`. The first
//! build writes memory fresh from the kernel, so it pays a page fault per 4 KiB it touches; later builds reuse
//! what the allocator kept, as a store that builds table after table does. A profile of one phase (`perf record`)
//! is clearer here than in `side_by_side`, which also queries.
//!
//! ```text
//! build_loop <blocked|ribbon|standard> <n> [builds=5] [bits_per_key=10]
//! ```

use std::time::Instant;

use sstfilter::FilterBlockBuilder;
use sstfilter_side_by_side::{KEY_LEN, keys, policy};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let kind = args.get(1).map_or("", String::as_str);
    let parsed = (
        args.get(2).and_then(|n| n.parse::<usize>().ok()),
        args.get(3).map_or(Some(5), |b| b.parse::<usize>().ok()),
        args.get(4).map_or(Some(10.0), |b| b.parse::<f64>().ok()),
    );
    let (Some(n), Some(builds), Some(bits_per_key)) = parsed else {
        eprintln!("usage: build_loop <blocked|ribbon|standard> <n> [builds=5] [bits_per_key=10]");
        std::process::exit(1);
    };
    let Some(policy) = policy(kind, bits_per_key) else {
        eprintln!("unknown kind {kind:?}: blocked, ribbon or standard");
        std::process::exit(1);
    };
    let present = keys(0, n);
    for build in 1..=builds {
        let start = Instant::now();
        let mut builder = FilterBlockBuilder::new(&policy);
        for key in present.chunks_exact(KEY_LEN) {
            builder.add_key(key);
        }
        let added = start.elapsed();
        let block = builder.finish();
        let total = start.elapsed();
        let per_key = |d: std::time::Duration| d.as_nanos() as f64 / n as f64;
        println!(
            "{kind} n={n} build={build} build_ns={:.2} add_ns={:.2} finish_ns={:.2} bytes={}",
            per_key(total),
            per_key(added),
            per_key(total - added),
            block.len()
        );
    }
}
