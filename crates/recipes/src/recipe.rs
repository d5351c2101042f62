//! [`Recipe`]: every constructor, and what its documentation says it refuses.

use std::fmt::Display;
use std::sync::Arc;

use arbitrary::Arbitrary;
use sstfilter::sizing::FilterModel;
use sstfilter::{
    BlockedBloomParams, BlockedBloomPolicy, FilterPlan, FilterPolicy, MAX_BITS_PER_KEY,
    RangePolicy, RibbonPolicy, StandardBloomParams, StandardBloomPolicy,
};
use sstfilter_leveldb::{Bloom64Policy, LevelDbBloomPolicy};
use sstfilter_memory::{BloomFilter, CountingBloomFilter, ScalableBloomFilter};
use sstfilter_rocksdb::{RocksDbBloomBuilder, RocksDbRibbonBuilder};

use crate::values::{BitsPerKey, Length, Overhead, Rate};

/// How to build a filter: **every** constructor of every policy and every filter the public API offers, with
/// its parameters, through its checked (`try_`) form, with values past the documented ranges too (see
/// [`values`](crate::values)). (The panicking forms are their `try_` form unwrapped; `BloomFilter::with_params` and
/// `CountingBloomFilter::try_with_params` are reached through the `try_with_size` forms, which call them.) This is the one list: the core's property test and enumerating tests
/// (`tests/no_false_negatives.rs`) and the fuzzers (`fuzz/`) all build through it, so a new
/// policy, constructor or parameter added here is reached by all of them.
///
/// [`construct`](Self::construct) checks that a checked constructor refuses exactly what its documentation
/// excludes; [`check`](Self::check) builds keys and checks that none is lost.
#[derive(Arbitrary, Debug, Clone, Copy, PartialEq)]
pub enum Recipe {
    /// `BlockedBloomPolicy::new(bits)`.
    BlockedBloomPolicy(BitsPerKey),
    /// `StandardBloomPolicy::new(bits)`.
    StandardBloomPolicy(BitsPerKey),
    /// `RibbonPolicy::new(bits)` (Bloom-equivalent bits per key).
    RibbonNew(BitsPerKey),
    /// `RibbonPolicy::with_fpr(rate)`, then optionally `try_with_slot_overhead` and `with_max_build_memory`
    /// (bytes, saturated to `usize`).
    RibbonWithFpr {
        rate: Rate,
        slot_overhead: Option<Overhead>,
        max_build_memory: Option<Length>,
    },
    /// A user's policy planning `BlockedBloomParams::new(blocks, probes % 26)` whatever the key count (any size,
    /// even none for some keys or some for none: the builder fits it; 0 and 25 probes are refused).
    BlockedBloomParams { blocks: u8, probes: u8 },
    /// A user's policy planning `StandardBloomParams::new(bits, hashes % 257)` (0 bits, 0 and 256 hashes are
    /// refused).
    StandardBloomParams { bits: u16, hashes: u16 },
    /// `BloomFilter::try_with_rate(expected, rate)`, then `to_block`.
    BloomFilterWithRate { expected: u16, rate: Rate },
    /// `BloomFilter::try_with_size(bits, hashes % 257)`, then `to_block`.
    BloomFilterWithSize { bits: u16, hashes: u16 },
    /// `CountingBloomFilter::try_with_rate(expected, rate)`, then `to_bloom_filter().to_block()`.
    CountingBloomFilterWithRate { expected: u16, rate: Rate },
    /// `CountingBloomFilter::try_with_size(counters, hashes % 257)`, then `to_bloom_filter().to_block()`.
    CountingBloomFilterWithSize { counters: u16, hashes: u16 },
    /// `ScalableBloomFilter::try_new(initial, rate)`, then each stage's `to_block`.
    ScalableBloomFilterNew { initial: u16, rate: Rate },
    /// `ScalableBloomFilter::try_with_growth(initial, rate, 0.5 + 3.5 · growth / 255, 1.05 · tightening / 255)`,
    /// then each stage's `to_block`.
    ScalableBloomFilterWithGrowth {
        initial: u16,
        rate: Rate,
        growth: u8,
        tightening: u8,
    },
    /// `LevelDbBloomPolicy::try_new(bits % 128)` through a `LevelDbFilterBlockBuilder` (LevelDB's layout, not a
    /// block; past 100 refused).
    LevelDbBloomPolicy(u8),
    /// `Bloom64Policy::try_new(bits)` through a `LevelDbFilterBlockBuilder`.
    Bloom64Policy(BitsPerKey),
    /// A `RangePolicy` through a `RangeFilterBuilder` (keys sorted first).
    Range(RangeRecipe),
    /// `RocksDbBloomBuilder::try_new(bits)`: RocksDB's own FastLocalBloom bytes, not a block (past `1.0..100.0`
    /// refused).
    RocksDbBloom(BitsPerKey),
    /// `RocksDbRibbonBuilder::try_new(bits)`: RocksDB's own Standard128Ribbon bytes, or the FastLocalBloom bytes
    /// RocksDB falls back to, not a block (past `1.0..100.0` refused).
    RocksDbRibbon(BitsPerKey),
}

/// A Range policy: either of `RangePolicy`'s constructors.
#[derive(Arbitrary, Debug, Clone, Copy, PartialEq)]
pub enum RangeRecipe {
    /// `RangePolicy::new(max_range_len, rate)`.
    New { max_range_len: Length, rate: Rate },
    /// `RangePolicy::with_bits_per_key(bits, max_range_len)`.
    WithBitsPerKey {
        bits: BitsPerKey,
        max_range_len: Length,
    },
}

/// Any policy, shared: what a partitioned builder clones for each partition.
pub type SharedPolicy = Arc<dyn FilterPolicy + Send + Sync>;

/// What a recipe's constructor made.
pub enum Constructed {
    /// A policy for `FilterBlockBuilder` and `PartitionedFilterBuilder`.
    Policy(SharedPolicy),
    /// A policy for `RangeFilterBuilder`.
    Range(RangePolicy),
    /// An empty in-memory Bloom filter.
    Bloom(BloomFilter),
    /// An empty counting Bloom filter.
    Counting(CountingBloomFilter),
    /// An empty scalable Bloom filter.
    Scalable(ScalableBloomFilter),
    /// A policy for LevelDB's filter block layout.
    LevelDb(LevelDbPolicy),
    /// An empty builder of RocksDB's FastLocalBloom filter.
    RocksDb(RocksDbBloomBuilder),
    /// An empty builder of RocksDB's Standard128Ribbon filter.
    RocksDbRibbon(RocksDbRibbonBuilder),
}

/// The two policies of LevelDB's filter block layout.
#[derive(Debug, Clone, Copy)]
pub enum LevelDbPolicy {
    /// LevelDB's own Bloom filter.
    LevelDb(LevelDbBloomPolicy),
    /// Our 64-bit-hash Bloom filter in LevelDB's layout.
    Bloom64(Bloom64Policy),
}

/// A policy that plans exactly the given parameters, as a user's own `FilterPolicy` may: how a user reaches
/// `BlockedBloomParams::new` and `StandardBloomParams::new`.
#[derive(Debug, Clone, Copy)]
pub struct Explicit(pub FilterPlan);

impl FilterPolicy for Explicit {
    fn plan(&self, _num_keys: usize) -> FilterPlan {
        self.0
    }
}

/// What a constructor's documentation says of its arguments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Documented {
    /// Inside the documented range: must be accepted.
    Accepted,
    /// Outside it: must be refused.
    Refused,
    /// Within rounding of a documented limit (or past a limit documented for whole numbers only): either
    /// answer keeps the documentation's promise.
    Either,
}

impl From<bool> for Documented {
    fn from(accepted: bool) -> Self {
        if accepted {
            Documented::Accepted
        } else {
            Documented::Refused
        }
    }
}

impl Documented {
    /// Accepted only if both are; refused if either is.
    #[must_use]
    pub fn and(self, other: Documented) -> Documented {
        match (self, other) {
            (Documented::Refused, _) | (_, Documented::Refused) => Documented::Refused,
            (Documented::Accepted, Documented::Accepted) => Documented::Accepted,
            _ => Documented::Either,
        }
    }
}

/// The value of a checked constructor, or `None` when it refused; panics unless it refuses exactly what its
/// documentation excludes (`documented`: what the documentation says of the arguments).
pub fn checked<T, E: Display>(
    what: &dyn Display,
    result: Result<T, E>,
    documented: impl Into<Documented>,
) -> Option<T> {
    match (result, documented.into()) {
        (Ok(_), Documented::Refused) => {
            panic!("{what}: accepted a value outside the documented range")
        }
        (Err(e), Documented::Accepted) => panic!("{what}: refused a documented value: {e}"),
        (result, _) => result.ok(),
    }
}

/// Whether `bits` is a bits/key setting the Bloom policies document as accepted: 1 to `MAX_BITS_PER_KEY`.
#[must_use]
pub fn documented_bits(bits: f64) -> bool {
    (1.0..=MAX_BITS_PER_KEY).contains(&bits)
}

/// Whether `bits` is a bits/key setting RocksDB's builders document as accepted: `1.0..100.0` (RocksDB's policies
/// would change any other without a word).
#[must_use]
pub fn documented_rocksdb_bits(bits: f64) -> bool {
    (1.0..100.0).contains(&bits)
}

/// Whether `fpr` is strictly between 0 and 1, the rates every rate-taking constructor documents.
#[must_use]
pub fn documented_rate(fpr: f64) -> bool {
    fpr > 0.0 && fpr < 1.0
}

/// The rates Ribbon documents: from `RibbonPolicy::MIN_FPR` (2^-32) up to (not including) 1.
#[must_use]
pub fn documented_ribbon_rate(fpr: f64) -> bool {
    (RibbonPolicy::MIN_FPR..1.0).contains(&fpr)
}

/// What `StandardBloomParams::new(bits, hashes)` documents, and so `BloomFilter::try_with_size` and
/// `CountingBloomFilter::try_with_size`: a non-zero number of bits the format and the platform hold (any `u16`
/// number does) and 1 to 255 probes.
#[must_use]
pub fn documented_size(bits: u16, hashes: u32) -> bool {
    bits > 0 && (1..=StandardBloomParams::MAX_PROBES).contains(&hashes)
}

/// What `BloomFilter::try_with_rate(expected, fpr)` documents (and `CountingBloomFilter::try_with_rate`): a rate
/// strictly between 0 and 1 that 255 probes reach. Sized as Guava sizes it, the filter takes
/// `round(log2(1/fpr) + δ)` probes with `0 ≤ δ < ln 2 / expected` (the bits rounded up), so a rate needing between
/// 254.75 and 255.51 probes may go either way.
#[must_use]
pub fn documented_bloom_rate(fpr: f64) -> Documented {
    if !documented_rate(fpr) {
        return Documented::Refused;
    }
    let probes = -fpr.log2();
    if probes < 254.75 {
        Documented::Accepted
    } else if probes > 255.51 {
        Documented::Refused
    } else {
        Documented::Either
    }
}

/// What `ScalableBloomFilter::try_with_growth` documents: rate and tightening strictly between 0 and 1, a finite
/// growth of at least 1, and a first stage that fits, that is one `BloomFilter::try_with_rate` accepts at the
/// first stage's budget `fpr · (1 − tightening)`.
#[must_use]
pub fn documented_scalable(fpr: f64, growth: f64, tightening: f64) -> Documented {
    let arguments =
        documented_rate(fpr) && documented_rate(tightening) && growth.is_finite() && growth >= 1.0;
    Documented::from(arguments).and(documented_bloom_rate(fpr * (1.0 - tightening)))
}

/// What `RangePolicy::new(max_range_len, fpr)` documents: a length from 1 to `MAX_RANGE_LEN`, a rate from
/// `MIN_FPR` up to 1, and a universe for one key, `L / fpr` (`L` rounded up to a power of two), below 2^64
/// (either answer within rounding of it).
#[must_use]
pub fn documented_range(max_range_len: u64, fpr: f64) -> Documented {
    if !(1..=RangePolicy::MAX_RANGE_LEN).contains(&max_range_len)
        || !(RangePolicy::MIN_FPR..1.0).contains(&fpr)
    {
        return Documented::Refused;
    }
    let length = max_range_len.next_power_of_two() as f64;
    let universe = length / fpr / 2f64.powi(64);
    if (0.99..1.01).contains(&universe) {
        Documented::Either
    } else {
        Documented::from(universe < 1.0)
    }
}

/// What `RangePolicy::with_bits_per_key(bits, max_range_len)` documents: a length `try_new` accepts, and
/// more than `log2(L) + 2`, at most `log2(L) + 42` and below 66 bits (either answer within rounding of a limit).
#[must_use]
pub fn documented_range_bits(bits: f64, max_range_len: u64) -> Documented {
    if !(1..=RangePolicy::MAX_RANGE_LEN).contains(&max_range_len) || bits.is_nan() {
        return Documented::Refused;
    }
    let s = f64::from(max_range_len.next_power_of_two().trailing_zeros());
    let near = |limit: f64| (bits - limit).abs() < 1e-9;
    if near(s + 2.0) || near(s + 42.0) || near(66.0) {
        Documented::Either
    } else {
        Documented::from(bits > s + 2.0 && bits <= s + 42.0 && bits < 66.0)
    }
}

impl RangeRecipe {
    /// The policy, or `None` when the constructor refused it (checked against its documentation).
    #[must_use]
    pub fn policy(self) -> Option<RangePolicy> {
        let what = format!("{self:?}");
        match self {
            RangeRecipe::New {
                max_range_len,
                rate,
            } => {
                let (len, fpr) = (max_range_len.get(), rate.get());
                checked(
                    &what,
                    RangePolicy::new(len, fpr),
                    documented_range(len, fpr),
                )
            }
            RangeRecipe::WithBitsPerKey {
                bits,
                max_range_len,
            } => {
                let (bits, len) = (bits.get(), max_range_len.get());
                let policy = checked(
                    &what,
                    RangePolicy::with_bits_per_key(bits, len),
                    documented_range_bits(bits, len),
                )?;
                // Its rate is one `try_new` keeps.
                assert!(
                    RangePolicy::new(policy.max_range_len(), policy.fpr()).is_ok(),
                    "{what}: {policy:?} is not a policy try_new accepts"
                );
                Some(policy)
            }
        }
    }
}

impl Recipe {
    /// Calls the recipe's constructor. `None` when it refused; panics unless it refuses exactly what its
    /// documentation excludes.
    #[must_use]
    pub fn construct(&self) -> Option<Constructed> {
        let what = format!("{self:?}");
        let what = &what;
        let policy = |p: SharedPolicy| Constructed::Policy(p);
        Some(match *self {
            Recipe::BlockedBloomPolicy(b) => {
                let b = b.get();
                let p = checked(what, BlockedBloomPolicy::new(b), documented_bits(b))?;
                policy(Arc::new(p))
            }
            Recipe::StandardBloomPolicy(b) => {
                let b = b.get();
                let p = checked(what, StandardBloomPolicy::new(b), documented_bits(b))?;
                policy(Arc::new(p))
            }
            Recipe::RibbonNew(b) => {
                let b = b.get();
                // Refused where BlockedBloom's rate at `b` is one Ribbon cannot keep (past 91 bits/key).
                let keeps =
                    documented_bits(b) && documented_ribbon_rate(FilterModel::BlockedBloom.fpr(b));
                policy(Arc::new(checked(what, RibbonPolicy::new(b), keeps)?))
            }
            Recipe::RibbonWithFpr {
                rate,
                slot_overhead,
                max_build_memory,
            } => {
                let fpr = rate.get();
                let mut p = checked(
                    what,
                    RibbonPolicy::with_fpr(fpr),
                    documented_ribbon_rate(fpr),
                )?;
                if let Some(overhead) = slot_overhead {
                    let overhead = overhead.get();
                    let documented = (0.0..=1.0).contains(&overhead);
                    p = checked(what, p.with_slot_overhead(overhead), documented)?;
                }
                if let Some(cap) = max_build_memory {
                    p = p.with_max_build_memory(usize::try_from(cap.get()).unwrap_or(usize::MAX));
                }
                policy(Arc::new(p))
            }
            Recipe::BlockedBloomParams { blocks, probes } => {
                let probes = probes % 26;
                let documented = (1..=BlockedBloomParams::MAX_PROBES).contains(&probes);
                let params = checked(
                    what,
                    BlockedBloomParams::new(u32::from(blocks), probes),
                    documented,
                )?;
                policy(Arc::new(Explicit(FilterPlan::BlockedBloom(params))))
            }
            Recipe::StandardBloomParams { bits, hashes } => {
                let hashes = u32::from(hashes % 257);
                let result = StandardBloomParams::new(u64::from(bits), hashes);
                let params = checked(what, result, documented_size(bits, hashes))?;
                policy(Arc::new(Explicit(FilterPlan::StandardBloom(params))))
            }
            Recipe::BloomFilterWithRate { expected, rate } => {
                let (n, fpr) = (usize::from(expected), rate.get());
                let result = BloomFilter::try_with_rate(n, fpr);
                Constructed::Bloom(checked(what, result, documented_bloom_rate(fpr))?)
            }
            Recipe::BloomFilterWithSize { bits, hashes } => {
                let hashes = u32::from(hashes % 257);
                let result = BloomFilter::try_with_size(u64::from(bits), hashes);
                Constructed::Bloom(checked(what, result, documented_size(bits, hashes))?)
            }
            Recipe::CountingBloomFilterWithRate { expected, rate } => {
                let (n, fpr) = (usize::from(expected), rate.get());
                let result = CountingBloomFilter::try_with_rate(n, fpr);
                Constructed::Counting(checked(what, result, documented_bloom_rate(fpr))?)
            }
            Recipe::CountingBloomFilterWithSize { counters, hashes } => {
                let hashes = u32::from(hashes % 257);
                let result = CountingBloomFilter::try_with_size(u64::from(counters), hashes);
                Constructed::Counting(checked(what, result, documented_size(counters, hashes))?)
            }
            Recipe::ScalableBloomFilterNew { initial, rate } => {
                let fpr = rate.get();
                let documented = documented_scalable(
                    fpr,
                    ScalableBloomFilter::DEFAULT_GROWTH,
                    ScalableBloomFilter::DEFAULT_TIGHTENING,
                );
                let result = ScalableBloomFilter::try_new(usize::from(initial), fpr);
                Constructed::Scalable(checked(what, result, documented)?)
            }
            Recipe::ScalableBloomFilterWithGrowth {
                initial,
                rate,
                growth,
                tightening,
            } => {
                let fpr = rate.get();
                let growth = 0.5 + 3.5 * f64::from(growth) / 255.0;
                let tightening = 1.05 * f64::from(tightening) / 255.0;
                let documented = documented_scalable(fpr, growth, tightening);
                let result = ScalableBloomFilter::try_with_growth(
                    usize::from(initial),
                    fpr,
                    growth,
                    tightening,
                );
                Constructed::Scalable(checked(what, result, documented)?)
            }
            Recipe::LevelDbBloomPolicy(b) => {
                let b = b % 128;
                let documented = f64::from(b) <= MAX_BITS_PER_KEY;
                let result = LevelDbBloomPolicy::try_new(usize::from(b));
                Constructed::LevelDb(LevelDbPolicy::LevelDb(checked(what, result, documented)?))
            }
            Recipe::Bloom64Policy(b) => {
                let b = b.get();
                let p = checked(what, Bloom64Policy::try_new(b), documented_bits(b))?;
                Constructed::LevelDb(LevelDbPolicy::Bloom64(p))
            }
            Recipe::Range(range) => Constructed::Range(range.policy()?),
            Recipe::RocksDbBloom(b) => {
                let b = b.get();
                let result = RocksDbBloomBuilder::try_new(b);
                Constructed::RocksDb(checked(what, result, documented_rocksdb_bits(b))?)
            }
            Recipe::RocksDbRibbon(b) => {
                let b = b.get();
                let result = RocksDbRibbonBuilder::try_new(b);
                Constructed::RocksDbRibbon(checked(what, result, documented_rocksdb_bits(b))?)
            }
        })
    }

    /// The policy of a recipe that builds through a `FilterPolicy`: `None` for the others, and when the
    /// constructor refused (checked against its documentation).
    #[must_use]
    pub fn policy(&self) -> Option<SharedPolicy> {
        match self.construct()? {
            Constructed::Policy(policy) => Some(policy),
            _ => None,
        }
    }
}
