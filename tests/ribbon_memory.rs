//! Ribbon construction's memory, measured: the peak resident memory while `finish` runs, above what the builder
//! already held and the output block, stays within `RibbonPlan::build_memory` (about 8 bytes per key), so
//! building a table's filter needs about 16 bytes per key in all, hashes included.
//!
//! Measured with Linux's per-process high-water mark (`VmHWM`, reset through `/proc/self/clear_refs`), since the
//! crate forbids the `unsafe` a counting allocator would need. One test in its own binary, so that no other test
//! allocates beside it.

#![cfg(target_os = "linux")]

use sstfilter::{
    FilterBlock, FilterBlockBuilder, FilterKind, FilterPlan, FilterPolicy, KeyHash, RibbonPolicy,
};

/// A `kB` field of `/proc/self/status`, in bytes.
fn status_bytes(field: &str) -> usize {
    let status =
        std::fs::read_to_string("/proc/self/status").expect("/proc/self/status is readable");
    let line = status
        .lines()
        .find(|l| l.starts_with(field))
        .unwrap_or_else(|| panic!("no {field} in /proc/self/status"));
    let kb: usize = line
        .split_whitespace()
        .nth(1)
        .and_then(|v| v.parse().ok())
        .expect("a number of kB");
    kb * 1024
}

#[test]
fn construction_needs_about_eight_bytes_per_key_beyond_hashes_and_output() {
    for n in [1_000_000u64, 4_000_000] {
        let policy = RibbonPolicy::new(10.0);
        let FilterPlan::Ribbon(plan) = policy.plan(n as usize) else {
            panic!("{n} keys should plan Ribbon");
        };
        let mut builder = FilterBlockBuilder::new(policy);
        for i in 0..n {
            builder.add_hash(KeyHash(i.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (i >> 7)));
        }
        let held = builder.memory_usage();
        let before = status_bytes("VmRSS:");
        // "5" resets the peak resident set size to the current one (proc(5), /proc/pid/clear_refs).
        std::fs::write("/proc/self/clear_refs", "5").expect("/proc/self/clear_refs is writable");
        let block = builder.finish();
        let peak = status_bytes("VmHWM:");
        let extra = peak.saturating_sub(before + block.len());
        let per_key = extra as f64 / n as f64;
        println!(
            "{n} keys: the builder held {held} bytes of hashes; finish peaked {extra} bytes ({per_key:.2} bytes/key) \
             above them and the {}-byte block; the plan's estimate is {}",
            block.len(),
            plan.build_memory()
        );
        // Resident memory moves in 4 KiB pages and the allocator keeps some slack (runs vary by about 250 KiB
        // at a million keys): allow 512 KiB over the estimate.
        assert!(
            extra <= plan.build_memory() + 512 * 1024,
            "{extra} > {}",
            plan.build_memory()
        );
        assert!(per_key < 8.5, "{per_key}");
        // Hashes included, about 16 bytes per key (one shard's band adds a constant).
        let total = (held + extra) as f64 / n as f64;
        assert!(total < 16.5, "{total} bytes/key in all");
        assert_eq!(
            FilterBlock::open(&block[..]).map(|f| f.kind()),
            Ok(FilterKind::Ribbon)
        );
    }
}
