//! Ribbon construction's memory, measured: the peak resident memory while `finish` runs, above what the builder
//! already held and the output block, stays within `RibbonPlan::build_memory` (about 8 bytes per key, on top of
//! the builder's own 8 bytes per key of hashes, the bound for hashes in any order) and, as a builder hands its
//! hashes over in the order of the shards, under a byte per key.
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
fn construction_stays_within_its_estimate_and_under_a_byte_per_key() {
    for n in [1_000_000u64, 4_000_000] {
        let policy = RibbonPolicy::new(10.0).unwrap();
        let FilterPlan::Ribbon { plan, .. } = policy.plan(n as usize) else {
            panic!("{n} keys should plan Ribbon");
        };
        let mut builder = FilterBlockBuilder::new(policy);
        for i in 0..n {
            builder.add_hash(KeyHash::from_raw(
                i.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (i >> 7),
            ));
        }
        let held = builder.memory_bytes();
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
        // The builder's hashes come bucket by bucket, in the order of the shards, so construction groups only a
        // window of them at a time (measured 0.4 to 0.6 bytes per key; grouping all of them took 8).
        assert!(
            extra <= n as usize + 512 * 1024,
            "{extra} bytes above the builder's for {n} keys"
        );
        println!(
            "  with the builder's hashes: {:.2} bytes/key in all",
            (held + extra) as f64 / n as f64
        );
        assert_eq!(
            FilterBlock::open(&block[..]).map(|f| f.kind()),
            Ok(FilterKind::Ribbon)
        );
    }
}
