//! [`RibbonPolicy`]: Ribbon filters at a target false-positive rate, with BlockedBloom where Ribbon does not pay;
//! and how a Ribbon filter is planned for a key count (shards, slots, columns), which `sstfilter calc` models.

use super::{BLOCK_SLOTS, COEFF_BITS, MAX_COLUMNS, RibbonPlan, Shape, directory_len};
use crate::error::{UsageError, check_fpr};
use crate::kind::blocked_bloom::policy::params_for;
use crate::kind::blocked_bloom::policy::rate_at as blocked_bloom_rate;
use crate::policy::{FilterPlan, FilterPolicy, check_bits_per_key};
use crate::sizing::rates::{bits_for_rate, ribbon_columns_for_fpr, ribbon_fpr};

/// The most bits per key a BlockedBloom fallback is given when the policy was configured by false-positive rate:
/// far beyond any useful setting, and it keeps the inversion of BlockedBloom's rate bounded.
const MAX_FALLBACK_BITS_PER_KEY: f64 = 128.0;

/// Builds Ribbon filters ([`FilterKind::Ribbon`](crate::FilterKind::Ribbon)): the same false-positive rate as a
/// Bloom filter in about 30 % less space, for more construction time (BENCHMARKS.md, "Ribbon").
///
/// ```
/// use sstfilter::{FilterBlock, FilterBlockBuilder, FilterKind, RibbonPolicy};
///
/// // "Bloom-equivalent" 10 bits/key: BlockedBloom's false-positive rate at 10 bits/key, in about 6.9 bits/key.
/// let mut builder = FilterBlockBuilder::new(RibbonPolicy::new(10.0)?);
/// for i in 0..10_000u32 {
///     builder.add_key(format!("usr:{i:012}").as_bytes());
/// }
/// let filter = FilterBlock::open(builder.finish())?;
/// assert_eq!(filter.kind(), FilterKind::Ribbon);
/// assert!(filter.may_contain(b"usr:000000000042"));
/// assert!(filter.bits_per_key() < 7.0);
///
/// // Or target a false-positive rate directly.
/// let policy = RibbonPolicy::with_fpr(0.001)?;
/// # let _ = policy;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// The policy writes a BlockedBloom filter of the same false-positive rate instead when Ribbon would not be
/// smaller (a few hundred keys or fewer), when construction would need more memory than
/// [`with_max_build_memory`](Self::with_max_build_memory) allows, or, with a probability far below one in a
/// billion, when a shard cannot be solved with any of its 16 seeds. Readers need no configuration: the block
/// says which kind it is.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RibbonPolicy {
    fpr: f64,
    fallback_bits_per_key: f64,
    max_build_memory: usize,
    slot_overhead: Option<f64>,
}

impl RibbonPolicy {
    /// The smallest false-positive rate a policy accepts: `2^-32`, Ribbon's rate at its most columns.
    pub const MIN_FPR: f64 = 1.0 / (1u64 << MAX_COLUMNS) as f64;

    /// A policy with the false-positive rate BlockedBloom has at `bloom_equivalent_bits_per_key` (about 0.96 % at
    /// 10), built as Ribbon in less space; the BlockedBloom fallback uses exactly that many bits per key. Refused
    /// ([`UsageError::InvalidSetting`]) unless it is a number from 1 to
    /// [`MAX_BITS_PER_KEY`](crate::MAX_BITS_PER_KEY), as for [`BlockedBloomPolicy::new`](crate::BlockedBloomPolicy::new),
    /// at which BlockedBloom's rate is at least [`MIN_FPR`](Self::MIN_FPR).
    pub fn new(bloom_equivalent_bits_per_key: f64) -> Result<Self, UsageError> {
        const SETTING: &str = "RibbonPolicy bloom_equivalent_bits_per_key";
        let bits = check_bits_per_key(SETTING, bloom_equivalent_bits_per_key)?;
        let fpr = blocked_bloom_rate(bits);
        if fpr < Self::MIN_FPR {
            return Err(UsageError::setting(
                SETTING,
                "a setting at which BlockedBloom's rate is at least 2^-32, Ribbon's smallest",
                bits,
            ));
        }
        Ok(Self::with_rate(fpr, bits))
    }

    /// A policy targeting false-positive rate `fpr`, from [`MIN_FPR`](Self::MIN_FPR) up to (not including) 1, else
    /// [`UsageError::InvalidSetting`]. Ribbon reaches any rate up to 1/2 (a rate above 1/2 is built at 1/2, better
    /// than asked); the BlockedBloom fallback gets the bits per key at which its own rate is `fpr` (at least 1).
    pub fn with_fpr(fpr: f64) -> Result<Self, UsageError> {
        const SETTING: &str = "RibbonPolicy fpr";
        let fpr = check_fpr(SETTING, fpr)?;
        if fpr < Self::MIN_FPR {
            return Err(UsageError::setting(
                SETTING,
                "at least 2^-32, Ribbon's smallest rate",
                fpr,
            ));
        }
        Ok(Self::with_rate(fpr, blocked_bloom_bits_for(fpr)))
    }

    fn with_rate(fpr: f64, fallback_bits_per_key: f64) -> Self {
        RibbonPolicy {
            fpr,
            fallback_bits_per_key,
            max_build_memory: usize::MAX,
            slot_overhead: None,
        }
    }

    /// Caps the memory construction may allocate besides the output and the 8 bytes per key the builder already
    /// holds, as [`RibbonPlan::build_memory`] bounds it for hashes in any order (about 8 bytes per key plus 250
    /// KiB; from a builder the peak is under a byte per key). Tables whose Ribbon
    /// construction would need more get a BlockedBloom filter, which needs none. Unlimited by default.
    #[must_use]
    pub fn with_max_build_memory(mut self, bytes: usize) -> Self {
        self.max_build_memory = bytes;
        self
    }

    /// Sets the slot overhead (spare slots per key) instead of the measured default (about 1.5 % for large
    /// tables): a number from 0 to 1, else [`UsageError::InvalidSetting`]. More overhead builds faster (fewer
    /// elimination steps and seed retries) in more space; less saves space but retries seeds more often, and below
    /// the default the BlockedBloom fallback becomes likely. The overhead changes only space and build time, never
    /// the rate.
    pub fn with_slot_overhead(mut self, overhead: f64) -> Result<Self, UsageError> {
        if !(0.0..=1.0).contains(&overhead) {
            return Err(UsageError::setting(
                "RibbonPolicy slot_overhead",
                "a number from 0 to 1",
                overhead,
            ));
        }
        self.slot_overhead = Some(overhead);
        Ok(self)
    }

    /// The target false-positive rate.
    #[must_use]
    pub const fn fpr(&self) -> f64 {
        self.fpr
    }
}

impl FilterPolicy for RibbonPolicy {
    fn plan(&self, num_keys: usize) -> FilterPlan {
        let fallback = params_for(num_keys, self.fallback_bits_per_key);
        match plan_for(num_keys, self.fpr, self.slot_overhead) {
            Some(plan)
                if plan.payload_len() < fallback.payload_len()
                    && plan.build_memory() <= self.max_build_memory =>
            {
                FilterPlan::Ribbon { plan, fallback }
            }
            _ => FilterPlan::BlockedBloom(fallback),
        }
    }
}

/// The bits per key at which BlockedBloom's rate is `fpr`, within `1.0..=MAX_FALLBACK_BITS_PER_KEY`.
fn blocked_bloom_bits_for(fpr: f64) -> f64 {
    bits_for_rate(blocked_bloom_rate, 1.0, MAX_FALLBACK_BITS_PER_KEY, fpr)
        .unwrap_or(MAX_FALLBACK_BITS_PER_KEY)
}

/// Keys per shard the writer aims for. Shards are independent Ribbon systems: small ones need little slot
/// overhead (the overhead a system needs grows with its length) and their band stays in the L2 cache while it
/// is built, while each one costs a 5-byte directory record. BENCHMARKS.md ("Ribbon") has the measurements.
pub(crate) const SHARD_TARGET_KEYS: u64 = 8192;

/// Slot overhead (slots / keys − 1) by keys per shard, chosen from the measured success rate per seed
/// (`cargo test --release -p sstfilter --lib -- --ignored ribbon_overhead_table --nocapture`; the table is in BENCHMARKS.md,
/// "Ribbon"): a high success rate per seed for the shards of a sharded filter, where a failed seed costs one
/// shard, and a higher one for the single shard of a small filter, where it costs the whole construction. Lower
/// overheads cost elimination steps much faster than they save space. Between rows the overhead is interpolated
/// in log2(keys); below 128 keys a shard has its minimum of 128 slots anyway. The last row is the shard size the
/// writer aims for.
const OVERHEAD_TABLE: [(f64, f64); 7] = [
    (128.0, 0.05),
    (256.0, 0.02),
    (512.0, 0.01),
    (1024.0, 0.005),
    (2048.0, 0.005),
    (4096.0, 0.01),
    (SHARD_TARGET_KEYS as f64, 0.015),
];

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

/// The plan for `num_keys` keys at false-positive rate `fpr` with the given slot overhead (the default for the
/// shard size if `None`), or `None` when Ribbon cannot hold the keys (none, or more than 2^32 slots).
pub(crate) fn plan_for(
    num_keys: usize,
    fpr: f64,
    slot_overhead: Option<f64>,
) -> Option<RibbonPlan> {
    let n = u64::try_from(num_keys).ok().filter(|&n| n > 0)?;
    let num_shards = n.div_ceil(SHARD_TARGET_KEYS);
    let keys_per_shard = n as f64 / num_shards as f64;
    let overhead = slot_overhead.unwrap_or_else(|| default_slot_overhead(keys_per_shard));
    // Every shard needs room for at least one row (128 slots).
    let slots = ((n as f64 * (1.0 + overhead)).ceil() as u64).max(num_shards * COEFF_BITS);
    let total_slots = u32::try_from(slots).ok()?;
    let num_blocks = u32::try_from(slots.div_ceil(BLOCK_SLOTS)).ok()?;
    let (lower_columns, lower_fraction) = ribbon_columns_for_fpr(fpr, MAX_COLUMNS);
    let upper_start_block = (lower_fraction * f64::from(num_blocks)).round() as u32;
    let shape = Shape {
        lower_columns,
        upper_start_block: upper_start_block.min(num_blocks),
        num_blocks,
    };
    Some(RibbonPlan::new(
        n,
        shape,
        u32::try_from(num_shards).ok()?,
        total_slots,
    ))
}

/// Bits per key of a large Ribbon filter (full shards of [`SHARD_TARGET_KEYS`] keys) that stores `columns` result
/// bits per slot on average: the slots with their overhead, plus each shard's directory record. The model behind
/// `sstfilter calc`; a real filter's size is its plan's [`payload_len`](RibbonPlan::payload_len).
pub(crate) fn large_filter_bits_per_key(columns: f64) -> f64 {
    let directory_bits = 8.0 * directory_len(1) as f64 / SHARD_TARGET_KEYS as f64;
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
    ribbon_fpr(r as u32, r + 1.0 - columns)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::TRAILER_LEN;

    #[test]
    fn rejects_useless_configuration() {
        for bad in [0.0, 0.99, -1.0, 100.5, 1e9, f64::NAN, f64::INFINITY] {
            assert!(RibbonPolicy::new(bad).is_err(), "{bad}");
        }
        for bad in [
            0.0,
            1.0,
            -0.1,
            1.5,
            f64::NAN,
            1e-10,
            RibbonPolicy::MIN_FPR / 2.0,
        ] {
            assert!(RibbonPolicy::with_fpr(bad).is_err(), "{bad}");
        }
        assert!(RibbonPolicy::with_fpr(0.7).is_ok());
        assert!(RibbonPolicy::with_fpr(RibbonPolicy::MIN_FPR).is_ok());
        for bad in [-0.01, 1.01, f64::NAN, f64::INFINITY] {
            assert!(
                RibbonPolicy::new(10.0)
                    .unwrap()
                    .with_slot_overhead(bad)
                    .is_err(),
                "{bad}"
            );
        }
        assert!(
            RibbonPolicy::new(10.0)
                .unwrap()
                .with_slot_overhead(0.0)
                .is_ok()
        );
    }

    #[test]
    #[should_panic(expected = "bloom_equivalent_bits_per_key")]
    fn new_panics_on_bad_configuration() {
        let _ = RibbonPolicy::new(0.5).unwrap();
    }

    #[test]
    #[should_panic(expected = "fpr")]
    fn with_fpr_panics_on_bad_configuration() {
        let _ = RibbonPolicy::with_fpr(0.0).unwrap();
    }

    #[test]
    fn bloom_equivalent_rate_is_blocked_bloom_rate() {
        let p = RibbonPolicy::new(10.0).unwrap();
        let bloom = params_for(1_000_000, 10.0).expected_fpr(1_000_000);
        assert!(
            (p.fpr() / bloom - 1.0).abs() < 0.01,
            "{} vs {bloom}",
            p.fpr()
        );
        assert_eq!(p.fallback_bits_per_key, 10.0);
        // And the other way round: with_fpr finds the Bloom bits per key of a rate.
        let q = RibbonPolicy::with_fpr(p.fpr()).unwrap();
        assert!(
            (q.fallback_bits_per_key - 10.0).abs() < 0.01,
            "{}",
            q.fallback_bits_per_key
        );
        assert_eq!(
            RibbonPolicy::with_fpr(0.9).unwrap().fallback_bits_per_key,
            1.0
        );
        // The smallest rate Ribbon reaches is one the fallback reaches too (within its cap); smaller ones are
        // refused rather than built at a rate above the promise.
        let tiny = RibbonPolicy::with_fpr(RibbonPolicy::MIN_FPR)
            .unwrap()
            .fallback_bits_per_key;
        assert!(tiny < MAX_FALLBACK_BITS_PER_KEY, "{tiny}");
        assert!(blocked_bloom_rate(tiny) <= RibbonPolicy::MIN_FPR * 1.001);
        assert!(RibbonPolicy::with_fpr(1e-300).is_err());
    }

    #[test]
    fn plans_ribbon_where_it_is_smaller_and_blocked_bloom_elsewhere() {
        let p = RibbonPolicy::new(10.0).unwrap();
        assert!(matches!(p.plan(0), FilterPlan::BlockedBloom(_)));
        assert!(matches!(p.plan(10), FilterPlan::BlockedBloom(_)));
        let FilterPlan::Ribbon { plan, .. } = p.plan(100_000) else {
            panic!("100 000 keys should be Ribbon");
        };
        assert!(plan.payload_len() * 10 < params_for(100_000, 10.0).payload_len() * 7);
        // Estimates are exact for Ribbon plans too.
        assert_eq!(
            p.estimated_block_len(100_000),
            plan.payload_len() + TRAILER_LEN
        );
        assert_eq!(p.estimated_fpr(100_000), plan.expected_fpr());
    }

    #[test]
    fn memory_cap_selects_blocked_bloom() {
        let n = 100_000;
        let FilterPlan::Ribbon { plan, fallback } = RibbonPolicy::new(10.0).unwrap().plan(n) else {
            panic!("Ribbon expected");
        };
        let capped = RibbonPolicy::new(10.0)
            .unwrap()
            .with_max_build_memory(plan.build_memory() - 1);
        assert_eq!(
            capped.plan(n),
            FilterPlan::BlockedBloom(params_for(n, 10.0))
        );
        let exact = RibbonPolicy::new(10.0)
            .unwrap()
            .with_max_build_memory(plan.build_memory());
        assert_eq!(exact.plan(n), FilterPlan::Ribbon { plan, fallback });
    }

    #[test]
    fn slot_overhead_is_configurable() {
        let n = 100_000;
        let plan_with = |overhead: f64| match RibbonPolicy::new(10.0)
            .unwrap()
            .with_slot_overhead(overhead)
            .unwrap()
            .plan(n)
        {
            FilterPlan::Ribbon { plan, .. } => plan,
            other => panic!("{other:?}"),
        };
        assert!((plan_with(0.05).slot_overhead() - 0.05).abs() < 1e-4);
        assert!(plan_with(0.0).slot_overhead().abs() < 1e-4);
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
        let p = plan_for(1_000_000, 0.00955, None).unwrap();
        assert_eq!(p.num_shards(), 123);
        assert!((p.slot_overhead() - default_slot_overhead(1e6 / 123.0)).abs() < 1e-5);
        assert_eq!(p.num_blocks(), p.total_slots().div_ceil(64));
        assert_eq!(p.lower_columns(), 6);
        assert!((p.expected_fpr() / 0.00955 - 1.0).abs() < 0.001);
        let bits_per_key = p.payload_len() as f64 * 8.0 / 1e6;
        assert!(bits_per_key < 6.90, "{bits_per_key}");

        let tiny = plan_for(3, 0.01, None).unwrap();
        assert_eq!(
            (tiny.num_shards(), tiny.total_slots(), tiny.num_blocks()),
            (1, 128, 2)
        );
        assert!(plan_for(0, 0.01, None).is_none());
        assert!(plan_for(5_000_000_000, 0.01, None).is_none());
    }

    #[test]
    fn the_large_filter_model_inverts_and_matches_real_plans() {
        for columns in [1.0, 6.5, 7.0, 16.25, 31.9] {
            let bits = large_filter_bits_per_key(columns);
            let (r, f) = (columns.floor(), columns.floor() + 1.0 - columns);
            assert!((large_filter_fpr(bits) / ribbon_fpr(r as u32, f) - 1.0).abs() < 1e-9);
        }
        assert_eq!(large_filter_fpr(0.5), 1.0);
        // A real plan of many full shards is within 1 % of the model's bits per key.
        let plan = plan_for(8192 * 100, 0.01, None).unwrap();
        let real = plan.payload_len() as f64 * 8.0 / plan.num_keys() as f64;
        let lower_share = f64::from(plan.upper_start_block()) / f64::from(plan.num_blocks());
        let model = large_filter_bits_per_key(f64::from(plan.lower_columns()) + 1.0 - lower_share);
        assert!((real / model - 1.0).abs() < 0.01, "{real} vs {model}");
    }
}
