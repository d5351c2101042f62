//! Sizing: result columns for a target false-positive rate, shards and slots for a key count, and the memory
//! construction needs. Writer-side only: a reader takes every size from the block.

use super::directory;
use super::row::COEFF_BITS;
use super::solution::{BLOCK_SLOTS, Layout, MAX_COLUMNS};
use crate::kind::fast_bloom::FastBloomParams;

/// Keys per shard the writer aims for. Shards are independent Ribbon systems: small ones need little slot
/// overhead (the overhead a system needs grows with its length) and their band stays in the L2 cache while it
/// is built, while each one costs a 5-byte directory record. BENCHMARKS.md ("Ribbon") has the measurements.
pub(crate) const SHARD_TARGET_KEYS: u64 = 8192;

/// Seeds tried per shard before construction gives up (and the builder falls back to FastBloom). At the
/// default overheads a shard fails a seed at most one time in twelve, so 16 failures in a row (below
/// `10^-17`) are not expected in the lifetime of any store; a seed is one byte in the block, so up to 256
/// would be readable.
pub(crate) const MAX_SEEDS: u8 = 16;

/// Slot overhead (slots / keys − 1) by keys per shard, chosen from the measured success rate per seed
/// (`cargo test --release --lib -- --ignored ribbon_overhead_table --nocapture`; the table is in BENCHMARKS.md,
/// "Ribbon"): about 92 % at the 4–8 Ki keys of a sharded filter, where a failed seed costs one shard, and at
/// least 96 % for the single shard of a small filter, where it costs the whole construction. Lower overheads
/// cost elimination steps much faster than they save space (8 Ki keys: 1.5 % → 19 steps per key, 1 % → 25,
/// 0.5 % → 38). Between rows the overhead is interpolated in log2(keys); below 128 keys a shard has its minimum
/// of 128 slots anyway.
const OVERHEAD_TABLE: [(f64, f64); 7] = [
    (128.0, 0.05),
    (256.0, 0.02),
    (512.0, 0.01),
    (1024.0, 0.005),
    (2048.0, 0.005),
    (4096.0, 0.01),
    (8192.0, 0.015),
];

/// A shard may hold this many times the mean keys per shard before construction gives up on the key set (it
/// would mean a broken hash: a shard's key count is binomial, and at 8 Ki keys 1.5× the mean is 45 standard
/// deviations out). It bounds the per-shard scratch memory.
const MAX_SHARD_LOAD: f64 = 1.5;

/// Bytes of construction scratch per slot of the largest shard: a 16-byte pivot row and 4 bytes of result.
const BAND_BYTES_PER_SLOT: u64 = 20;

/// The slot overhead the writer uses for shards of `keys_per_shard` keys.
pub(crate) fn default_slot_overhead(keys_per_shard: f64) -> f64 {
    let x = keys_per_shard.max(1.0).log2();
    let mut previous = (f64::NEG_INFINITY, OVERHEAD_TABLE[0].1);
    for &(keys, overhead) in &OVERHEAD_TABLE {
        let at = keys.log2();
        if x <= at {
            if previous.0.is_infinite() {
                return overhead;
            }
            let t = (x - previous.0) / (at - previous.0);
            return previous.1 + t * (overhead - previous.1);
        }
        previous = (at, overhead);
    }
    previous.1
}

/// Bits per key of a large Ribbon filter (full shards of [`SHARD_TARGET_KEYS`] keys) that stores `columns` result
/// bits per slot on average: the slots with their overhead, plus each shard's directory record. The model behind
/// `sstfilter calc`; a real filter's size is its plan's [`payload_len`](RibbonPlan::payload_len).
pub(crate) fn large_filter_bits_per_key(columns: f64) -> f64 {
    let directory_bits = 8.0 * directory::len(1) as f64 / SHARD_TARGET_KEYS as f64;
    columns * (1.0 + default_slot_overhead(SHARD_TARGET_KEYS as f64)) + directory_bits
}

/// False-positive rate of a large Ribbon filter of `bits_per_key` (the inverse of
/// [`large_filter_bits_per_key`]): `c` columns per slot on average mix `r = floor(c)` and `r + 1` columns, so
/// the rate is `f·2^-r + (1 − f)·2^-(r+1)` with `f = r + 1 − c`. 1.0 below one column (no filter); at least
/// `2^-32`.
pub(crate) fn large_filter_fpr(bits_per_key: f64) -> f64 {
    let zero = large_filter_bits_per_key(0.0);
    let per_column = large_filter_bits_per_key(1.0) - zero;
    let columns = (bits_per_key - zero) / per_column;
    if columns.is_nan() || columns < 1.0 {
        return 1.0;
    }
    let columns = columns.min(f64::from(MAX_COLUMNS));
    let r = columns.floor();
    let lower = r + 1.0 - columns;
    let rate = (-r).exp2();
    lower * rate + (1.0 - lower) * rate / 2.0
}

/// Result columns for a target false-positive rate: `(r, f)` such that a fraction `f` of the slots with `r`
/// columns and the rest with `r + 1` give `f·2^-r + (1 − f)·2^-(r+1) = fpr`. The rate is clamped to
/// `[2^-32, 1/2]`: at least one result bit, at most 32.
pub(crate) fn columns_for_fpr(fpr: f64) -> (u32, f64) {
    let fpr = if fpr.is_nan() {
        0.5
    } else {
        fpr.clamp((-f64::from(MAX_COLUMNS)).exp2(), 0.5)
    };
    let r = (-fpr.log2()).floor().clamp(1.0, f64::from(MAX_COLUMNS));
    let lower = (fpr * (r + 1.0).exp2() - 1.0).clamp(0.0, 1.0);
    (
        r as u32,
        if r >= f64::from(MAX_COLUMNS) {
            1.0
        } else {
            lower
        },
    )
}

/// The shape of a Ribbon filter for a known number of keys: what [`RibbonPolicy`](crate::RibbonPolicy) plans
/// at `finish`, and what the block's parameters will be if construction succeeds.
///
/// Keys are split by hash into shards of about 8 Ki keys (`num_shards`); each shard is an independent Ribbon
/// system with `slot_overhead` more slots than keys, and all shards share one solution of `num_blocks` blocks of
/// 64 slots with `r` or `r + 1` result bits per slot. If a shard cannot be solved with any of 16 seeds,
/// the builder writes the FastBloom filter of [`fallback`](Self::fallback) instead.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RibbonPlan {
    num_keys: u64,
    layout: Layout,
    num_shards: u32,
    total_slots: u32,
    fallback: FastBloomParams,
}

impl RibbonPlan {
    /// The plan for `num_keys` keys at false-positive rate `fpr` (see [`columns_for_fpr`]) with the given slot
    /// overhead, or `None` when Ribbon cannot hold the keys (none, or more than 2^32 slots).
    pub(crate) fn for_keys(
        num_keys: usize,
        fpr: f64,
        slot_overhead: Option<f64>,
        fallback: FastBloomParams,
    ) -> Option<Self> {
        let n = u64::try_from(num_keys).ok().filter(|&n| n > 0)?;
        let num_shards = n.div_ceil(SHARD_TARGET_KEYS);
        let keys_per_shard = n as f64 / num_shards as f64;
        let overhead = slot_overhead.unwrap_or_else(|| default_slot_overhead(keys_per_shard));
        // Every shard needs room for at least one row (128 slots).
        let slots = ((n as f64 * (1.0 + overhead)).ceil() as u64).max(num_shards * COEFF_BITS);
        let total_slots = u32::try_from(slots).ok()?;
        let num_blocks = u32::try_from(slots.div_ceil(BLOCK_SLOTS)).ok()?;
        let (lower_columns, lower_fraction) = columns_for_fpr(fpr);
        let upper_start_block = (lower_fraction * f64::from(num_blocks)).round() as u32;
        Some(RibbonPlan {
            num_keys: n,
            layout: Layout {
                lower_columns,
                upper_start_block: upper_start_block.min(num_blocks),
                num_blocks,
            },
            num_shards: u32::try_from(num_shards).ok()?,
            total_slots,
            fallback,
        })
    }

    /// This plan with another solution layout and slot count (same keys, shards and fallback), so that tests can
    /// reach every layout the format allows rather than only those a rate and the overhead table give.
    #[cfg(test)]
    pub(crate) fn with_layout(self, layout: Layout, total_slots: u32) -> Self {
        RibbonPlan {
            layout,
            total_slots,
            ..self
        }
    }

    /// This plan with another shard count.
    #[cfg(test)]
    pub(crate) fn with_shards(self, num_shards: u32) -> Self {
        RibbonPlan { num_shards, ..self }
    }

    /// Number of keys the plan is for.
    #[must_use]
    pub fn num_keys(&self) -> u64 {
        self.num_keys
    }

    /// Result bits per slot in the lower blocks, `r`; upper blocks have `r + 1`.
    #[must_use]
    pub fn lower_columns(&self) -> u32 {
        self.layout.lower_columns
    }

    /// The first block with `r + 1` result bits per slot.
    #[must_use]
    pub fn upper_start_block(&self) -> u32 {
        self.layout.upper_start_block
    }

    /// Number of 64-slot blocks of the solution.
    #[must_use]
    pub fn num_blocks(&self) -> u32 {
        self.layout.num_blocks
    }

    /// Number of independent shards.
    #[must_use]
    pub fn num_shards(&self) -> u32 {
        self.num_shards
    }

    /// Slots over all shards (the last block may be partly unused).
    #[must_use]
    pub fn total_slots(&self) -> u32 {
        self.total_slots
    }

    /// Slots per key minus one.
    #[must_use]
    pub fn slot_overhead(&self) -> f64 {
        f64::from(self.total_slots) / self.num_keys as f64 - 1.0
    }

    /// The FastBloom filter written instead if construction fails.
    #[must_use]
    pub fn fallback(&self) -> FastBloomParams {
        self.fallback
    }

    /// Length of the payload a successful construction writes, in bytes.
    #[must_use]
    pub const fn payload_len(&self) -> usize {
        let len = self.layout.len_bytes() + directory::len(self.num_shards as u64);
        if len > usize::MAX as u64 {
            usize::MAX
        } else {
            len as usize
        }
    }

    /// The theoretical false-positive rate: `2^-r` for a query starting in a lower block, `2^-(r+1)` in an
    /// upper one, weighted by their share of the slots.
    #[must_use]
    pub fn expected_fpr(&self) -> f64 {
        self.layout.false_positive_rate()
    }

    /// Peak memory construction allocates besides the output and the hashes the builder already holds (8 bytes
    /// per key): a copy of the hashes grouped by shard (8 bytes per key), the per-shard bookkeeping, and the band
    /// of the largest shard allowed (20 bytes per slot): 8 bytes per key, 25 bytes per shard and about 250 KiB
    /// (8.25 bytes per key at 10^6 keys, 8.03 at 10^7; `tests/ribbon_memory.rs` measures the real peak).
    #[must_use]
    pub fn build_memory(&self) -> usize {
        let shards = u64::from(self.num_shards);
        let bookkeeping = shards * (4 + 4 + 8 + 8 + 1); // key counts, first slots, two key offsets, seeds
        let band = self.max_shard_slots() * BAND_BYTES_PER_SLOT;
        usize::try_from(8 * self.num_keys + bookkeeping + band).unwrap_or(usize::MAX)
    }

    /// The most keys one shard may hold before construction gives up.
    pub(crate) fn max_shard_keys(&self) -> u64 {
        let mean = self.num_keys as f64 / f64::from(self.num_shards);
        (mean * MAX_SHARD_LOAD).ceil() as u64 + 64
    }

    /// The most slots one shard can be given (its share of the slots at [`max_shard_keys`](Self::max_shard_keys)).
    fn max_shard_slots(&self) -> u64 {
        let per_key = f64::from(self.total_slots) / self.num_keys as f64;
        ((self.max_shard_keys() as f64 * per_key).ceil() as u64).min(u64::from(self.total_slots))
    }

    /// The solution's layout.
    pub(crate) fn layout(&self) -> Layout {
        self.layout
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(n: usize, fpr: f64) -> RibbonPlan {
        RibbonPlan::for_keys(n, fpr, None, FastBloomParams::for_keys(n, 10.0)).unwrap()
    }

    #[test]
    fn columns_reach_the_target_rate() {
        for fpr in [
            0.5,
            0.3,
            0.01,
            0.00955,
            2f64.powi(-8),
            0.001,
            1e-6,
            2f64.powi(-31) * 1.5,
        ] {
            let (r, f) = columns_for_fpr(fpr);
            let got = f * (-f64::from(r)).exp2() + (1.0 - f) * (-f64::from(r + 1)).exp2();
            assert!(
                (got / fpr - 1.0).abs() < 1e-9,
                "{fpr}: r {r} f {f} gives {got}"
            );
        }
        assert_eq!(columns_for_fpr(2f64.powi(-8)), (8, 1.0));
        assert_eq!(columns_for_fpr(0.9), (1, 1.0));
        assert_eq!(columns_for_fpr(1e-20), (32, 1.0));
        assert_eq!(columns_for_fpr(f64::NAN), (1, 1.0));
        assert_eq!(columns_for_fpr(0.0), (32, 1.0));
    }

    #[test]
    fn overhead_table_interpolates_and_clamps() {
        assert_eq!(default_slot_overhead(1.0), OVERHEAD_TABLE[0].1);
        assert_eq!(
            default_slot_overhead(1e9),
            OVERHEAD_TABLE[OVERHEAD_TABLE.len() - 1].1
        );
        for &(keys, overhead) in &OVERHEAD_TABLE {
            assert!((default_slot_overhead(keys) - overhead).abs() < 1e-12);
        }
        let mid = default_slot_overhead(5792.6); // halfway between 4096 and 8192 in log2
        assert!((mid - (0.01 + 0.015) / 2.0).abs() < 1e-4, "{mid}");
    }

    #[test]
    fn plans_shards_slots_and_columns_from_the_key_count() {
        let p = plan(1_000_000, 0.00955);
        assert_eq!(p.num_shards(), 123);
        assert!((p.slot_overhead() - default_slot_overhead(1e6 / 123.0)).abs() < 1e-5);
        assert_eq!(p.num_blocks(), p.total_slots().div_ceil(64));
        assert_eq!(p.lower_columns(), 6);
        assert!((p.expected_fpr() / 0.00955 - 1.0).abs() < 0.001);
        let bits_per_key = p.payload_len() as f64 * 8.0 / 1e6;
        assert!(bits_per_key < 6.90, "{bits_per_key}");

        let tiny = plan(3, 0.01);
        assert_eq!(
            (tiny.num_shards(), tiny.total_slots(), tiny.num_blocks()),
            (1, 128, 2)
        );
        assert!(RibbonPlan::for_keys(0, 0.01, None, FastBloomParams::for_keys(0, 10.0)).is_none());
        assert!(
            RibbonPlan::for_keys(
                5_000_000_000,
                0.01,
                None,
                FastBloomParams::for_keys(1, 10.0)
            )
            .is_none()
        );
    }

    #[test]
    fn build_memory_is_about_eight_bytes_per_key_plus_one_band() {
        let p = plan(10_000_000, 0.01);
        let per_key = p.build_memory() as f64 / 1e7;
        assert!((8.0..8.1).contains(&per_key), "{per_key}");
        assert!(p.build_memory() < 8 * 10_000_000 + 400 * 1024);
    }
}
