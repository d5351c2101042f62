//! Shared by the fuzz targets: how to build blocks (every constructor of every policy and filter the public API
//! offers), and a routine that exercises every read path of an opened block.

use arbitrary::Arbitrary;
use std::sync::Arc;

use sstfilter::{
    BlockedBloomParams, BlockedBloomPolicy, BloomFilter, CappedPrefix, CountingBloomFilter,
    DelimitedPrefix, FilterBlock, FilterBlockBuilder, FilterPlan, FilterPolicy, FixedPrefix,
    KeyHash, Loaded, Partition, PartitionCuts, PartitionLoader, PartitionedFilter,
    PartitionedFilterBuilder, Partitions, PrefixExtractor, PrefixProbe, RangeFilterBuilder,
    RangePolicy, RibbonPolicy, ScalableBloomFilter, StandardBloomParams, StandardBloomPolicy,
    UsageError, key_hash,
};
use std::ops::Bound;

/// A false-positive rate: log-uniform from 2^-1 to 2^-40 over a 16-bit input, or any `f64` at all (NaN, negative,
/// above 1, subnormal), which the checked constructors must refuse or honour.
#[derive(Arbitrary, Debug, Clone, Copy)]
pub enum Rate {
    /// `2^-(1 + 39 · x / 65535)`.
    LogUniform(u16),
    /// The `f64` with these bits.
    Any(u64),
}

impl Rate {
    /// The rate this value stands for.
    pub fn get(self) -> f64 {
        match self {
            Rate::LogUniform(x) => (-(1.0 + 39.0 * f64::from(x) / f64::from(u16::MAX))).exp2(),
            Rate::Any(bits) => f64::from_bits(bits),
        }
    }
}

/// Bits per key: in 1/16ths from 1.0 to 4096 (past the documented 100, which the constructors refuse), or any
/// `f64` at all.
#[derive(Arbitrary, Debug, Clone, Copy)]
pub enum BitsPerKey {
    /// `1 + x / 16`.
    Sixteenths(u16),
    /// The `f64` with these bits.
    Any(u64),
}

impl BitsPerKey {
    /// The bits per key this value stands for.
    pub fn get(self) -> f64 {
        match self {
            BitsPerKey::Sixteenths(x) => 1.0 + f64::from(x) / 16.0,
            BitsPerKey::Any(bits) => f64::from_bits(bits),
        }
    }
}

/// How to build blocks: **every** constructor of every policy and every in-memory filter the public API offers,
/// with its parameters, through its checked (`try_`) form with values past the documented ranges too. A new
/// policy, constructor or parameter must be added here (and to the enumerating and property tests of
/// `tests/no_false_negatives.rs`), so that the fuzzers reach it. (LevelDB's policies are in the
/// `leveldb_filter_block` target.)
#[derive(Arbitrary, Debug, Clone, Copy)]
pub enum Recipe {
    /// `BlockedBloomPolicy::try_new`.
    BlockedBloomPolicy(BitsPerKey),
    /// `StandardBloomPolicy::try_new`.
    StandardBloomPolicy(BitsPerKey),
    /// `RibbonPolicy::try_new` (Bloom-equivalent bits per key).
    RibbonNew(BitsPerKey),
    /// `RibbonPolicy::try_with_fpr`, optionally `try_with_slot_overhead` (in 1/10,000ths, up to 6.5: past 1 it is
    /// refused) and `with_max_build_memory` (bytes).
    RibbonWithFpr {
        rate: Rate,
        slot_overhead: Option<u16>,
        max_build_memory: Option<u32>,
    },
    /// A user's policy planning `BlockedBloomParams::new(blocks, probes)` whatever the key count (probes taken
    /// modulo 24, plus one).
    BlockedBloomParams { blocks: u8, probes: u8 },
    /// A user's policy planning `StandardBloomParams::new(bits + 1, max(hashes, 1))`.
    StandardBloomParams { bits: u16, hashes: u8 },
    /// `BloomFilter::try_with_rate`, then `to_block`.
    BloomFilterWithRate { expected: u16, rate: Rate },
    /// `BloomFilter::try_with_size(bits, hashes)` (0 and past 255 are refused), then `to_block`.
    BloomFilterWithSize { bits: u16, hashes: u16 },
    /// `CountingBloomFilter::try_with_rate`, then `to_bloom_filter().to_block()`.
    CountingBloomFilter { expected: u16, rate: Rate },
    /// `ScalableBloomFilter::try_with_growth` (growth 0.5 to 4.0, tightening 0 to 1.05: the ends are refused),
    /// then each stage's `to_block`.
    ScalableBloomFilter {
        initial: u16,
        rate: Rate,
        growth: u8,
        tightening: u8,
    },
    /// `RangePolicy::try_new(max_range_len, rate)` through a `RangeFilterBuilder` (keys sorted first).
    RangeNew(RangeRecipe),
    /// `RangePolicy::try_with_bits_per_key(bits, max_range_len)` through a `RangeFilterBuilder` (keys sorted first).
    RangeWithBitsPerKey {
        bits: BitsPerKey,
        max_range_len: u64,
    },
}

/// `RangePolicy::try_new`'s parameters: any range length (the policy rounds it up to a power of two and refuses
/// 0 and lengths past 2^56), any [`Rate`].
#[derive(Arbitrary, Debug, Clone, Copy)]
pub struct RangeRecipe {
    /// The range length, as given.
    pub max_range_len: u64,
    /// The rate at that length.
    pub rate: Rate,
}

impl RangeRecipe {
    /// The policy, or why it is refused.
    pub fn get(self) -> Result<RangePolicy, UsageError> {
        RangePolicy::try_new(self.max_range_len, self.rate.get())
    }
}

/// A Range block of `keys`, which it sorts (a table's keys come sorted), or `None` when the policy cannot keep
/// its rate for that many keys (the builder refuses the key past its `max_keys`, and only that one).
pub fn range_block(policy: RangePolicy, keys: &[Vec<u8>]) -> Option<Vec<u8>> {
    let mut sorted = keys.to_vec();
    sorted.sort();
    let mut builder = RangeFilterBuilder::new(policy);
    for key in &sorted {
        match builder.add_key(key) {
            Ok(()) => {}
            Err(UsageError::TooManyKeys { expected, .. }) => {
                assert_eq!(expected, policy.max_keys());
                assert_eq!(builder.len() as u64, expected, "refused before the limit");
                return None;
            }
            Err(e) => panic!("sorted keys refused: {e}"),
        }
    }
    Some(builder.finish())
}

/// How a partitioned filter is cut: every parameter of `PartitionedFilterBuilder`.
#[derive(Arbitrary, Debug, Clone, Copy)]
pub struct Partitioning {
    /// `with_partition_bytes` (0 is clamped to 1).
    pub partition_bytes: u16,
    /// `with_cuts(PartitionCuts::AtDataBlocks)` instead of `Anywhere`.
    pub at_data_blocks: bool,
    /// `end_data_block` after every this many keys (plus one).
    pub keys_per_data_block: u8,
}

impl Partitioning {
    /// Builds sorted `keys` into partitions with `policy` and returns them with their index, partition `i`
    /// recorded at offset `i`.
    pub fn build(&self, policy: SharedPolicy, keys: &[Vec<u8>]) -> (Partitions, Vec<u8>) {
        let cuts = if self.at_data_blocks {
            PartitionCuts::AtDataBlocks
        } else {
            PartitionCuts::Anywhere
        };
        let mut builder = PartitionedFilterBuilder::new(policy)
            .with_partition_bytes(usize::from(self.partition_bytes))
            .with_cuts(cuts);
        let per_block = usize::from(self.keys_per_data_block) + 1;
        for (i, key) in keys.iter().enumerate() {
            builder.add_key(key).expect("sorted keys");
            if (i + 1) % per_block == 0 {
                builder.end_data_block();
            }
        }
        // The table's last key ends its last data block.
        builder.end_data_block();
        let partitions = builder.finish().expect("data blocks ended");
        let offsets: Vec<u64> = (0..partitions.len() as u64).collect();
        let index = partitions
            .index(&offsets)
            .expect("one offset per partition");
        (partitions, index)
    }
}

/// Partitions looked up by offset in a list of blocks (any bytes: a fuzzed index may name anything).
pub struct ByOffset<'a>(pub &'a [&'a [u8]]);

impl PartitionLoader for ByOffset<'_> {
    type Block<'b>
        = &'b [u8]
    where
        Self: 'b;
    type Error = ();

    fn load(&self, partition: &Partition) -> Result<Loaded<&[u8]>, ()> {
        let at = usize::try_from(partition.offset).map_err(|_| ())?;
        self.0.get(at).copied().map(Loaded::Bytes).ok_or(())
    }
}

/// Calls every query and accessor of an opened partition index, with keys from `probe_bytes` and partitions
/// from `blocks`. Must never panic.
pub fn exercise_index<B: AsRef<[u8]>>(
    filter: &PartitionedFilter<B>,
    blocks: &[&[u8]],
    probe_bytes: &[u8],
) {
    let _ = (
        filter.num_partitions(),
        filter.num_keys(),
        filter.as_bytes().len(),
    );
    for partition in filter.partitions() {
        let _ = filter.separator(partition.position);
        if let Some(block) = blocks.get(partition.position) {
            let _ = filter.verify_partition(&partition, *block);
        }
    }
    let loader = ByOffset(blocks);
    for key in probe_bytes.chunks(5).take(32) {
        let _ = filter.find(key);
        let _ = filter.may_contain(key, &loader);
    }
}

/// A prefix extractor with its parameter: a built-in one (lengths up to 15, any delimiter byte), or a user's with
/// a name of any length (a block records at most 255 bytes: `with_prefixes` refuses longer names).
#[derive(Arbitrary, Debug, Clone, Copy)]
pub enum Extractor {
    /// `FixedPrefix::new(len % 16)`.
    Fixed(u8),
    /// `DelimitedPrefix::new(delimiter)`.
    Delimited(u8),
    /// `CappedPrefix::new(len % 16)`.
    Capped(u8),
    /// A user's extractor, `CappedPrefix::new(2)`'s prefixes under a name of `name_len % 512` bytes.
    Named(u16),
}

/// A user's extractor: capped prefixes of 2 bytes, under a name of any length.
struct NamedCapped(String);

impl PrefixExtractor for NamedCapped {
    fn name(&self) -> &str {
        &self.0
    }
    fn prefix_len(&self, key: &[u8]) -> Option<usize> {
        Some(key.len().min(2))
    }
    fn scan_prefix_len(&self, scan: &[u8]) -> Option<usize> {
        (scan.len() >= 2).then_some(2)
    }
}

impl Extractor {
    /// The extractor this value stands for.
    pub fn get(self) -> Arc<dyn PrefixExtractor> {
        match self {
            Extractor::Fixed(len) => Arc::new(FixedPrefix::new(usize::from(len % 16))),
            Extractor::Delimited(delimiter) => Arc::new(DelimitedPrefix::new(delimiter)),
            Extractor::Capped(len) => Arc::new(CappedPrefix::new(usize::from(len % 16))),
            Extractor::Named(len) => Arc::new(NamedCapped("n".repeat(usize::from(len % 512)))),
        }
    }
}

/// `FilterBlockBuilder::with_prefixes`: the extractor, and whether whole keys are kept beside the prefixes.
#[derive(Arbitrary, Debug, Clone, Copy)]
pub struct Prefixes {
    /// The extractor.
    pub extractor: Extractor,
    /// Whether whole keys are added too.
    pub whole_keys: bool,
}

/// Any policy, shared: what a partitioned builder clones for each partition.
pub type SharedPolicy = Arc<dyn FilterPolicy + Send + Sync>;

/// A policy that plans exactly the given parameters, as a user's own `FilterPolicy` may.
struct Explicit(FilterPlan);

impl FilterPolicy for Explicit {
    fn plan(&self, _num_keys: usize) -> FilterPlan {
        self.0
    }
}

impl Recipe {
    /// The policy of a recipe that builds through one (`None` for the in-memory filters), or why the checked
    /// constructor refused it.
    pub fn policy(&self) -> Result<Option<SharedPolicy>, UsageError> {
        let policy: SharedPolicy = match *self {
            Recipe::BlockedBloomPolicy(b) => Arc::new(BlockedBloomPolicy::try_new(b.get())?),
            Recipe::StandardBloomPolicy(b) => Arc::new(StandardBloomPolicy::try_new(b.get())?),
            Recipe::RibbonNew(b) => Arc::new(RibbonPolicy::try_new(b.get())?),
            Recipe::RibbonWithFpr {
                rate,
                slot_overhead,
                max_build_memory,
            } => {
                let mut policy = RibbonPolicy::try_with_fpr(rate.get())?;
                if let Some(overhead) = slot_overhead {
                    policy = policy.try_with_slot_overhead(f64::from(overhead) / 10_000.0)?;
                }
                if let Some(cap) = max_build_memory {
                    policy = policy.with_max_build_memory(cap as usize);
                }
                Arc::new(policy)
            }
            Recipe::BlockedBloomParams { blocks, probes } => {
                // Any size, even none for some keys or some for none: the builder fits it to the key count.
                let blocks = u32::from(blocks);
                let params = BlockedBloomParams::new(blocks, probes % 24 + 1).expect("valid");
                Arc::new(Explicit(FilterPlan::BlockedBloom(params)))
            }
            Recipe::StandardBloomParams { bits, hashes } => {
                let params =
                    StandardBloomParams::new(u64::from(bits) + 1, u32::from(hashes.max(1)))
                        .expect("valid");
                Arc::new(Explicit(FilterPlan::StandardBloom(params)))
            }
            _ => return Ok(None),
        };
        Ok(Some(policy))
    }

    /// Builds `keys` into blocks: one block for every recipe but `ScalableBloomFilter`, which gives one per stage.
    /// Every key is found by at least one of the blocks. `prefixes` applies to the recipes that build through a
    /// policy (the in-memory filters hold whole keys only). `Err` when a checked constructor or the builder
    /// refused the configuration; a Range policy that cannot hold this many keys gives no block.
    pub fn build(
        &self,
        keys: &[Vec<u8>],
        prefixes: Option<Prefixes>,
    ) -> Result<Vec<Vec<u8>>, UsageError> {
        // Range blocks hold projected keys, never prefixes.
        if let Some(policy) = self.policy()? {
            let mut builder = FilterBlockBuilder::new(policy);
            if let Some(p) = prefixes {
                builder = builder.with_prefixes(p.extractor.get(), p.whole_keys)?;
            }
            for key in keys {
                builder.add_key(key);
            }
            return Ok(vec![builder.finish()]);
        }
        Ok(match *self {
            Recipe::BloomFilterWithRate { expected, rate } => filled(
                BloomFilter::try_with_rate(usize::from(expected), rate.get())?,
                keys,
            ),
            Recipe::BloomFilterWithSize { bits, hashes } => filled(
                BloomFilter::try_with_size(u64::from(bits), u32::from(hashes))?,
                keys,
            ),
            Recipe::CountingBloomFilter { expected, rate } => {
                let mut filter =
                    CountingBloomFilter::try_with_rate(usize::from(expected), rate.get())?;
                for key in keys {
                    filter.insert(key);
                }
                vec![filter.to_bloom_filter().to_block()]
            }
            Recipe::ScalableBloomFilter {
                initial,
                rate,
                growth,
                tightening,
            } => {
                let growth = 0.5 + 3.5 * f64::from(growth) / 255.0;
                let tightening = 1.05 * f64::from(tightening) / 255.0;
                let mut filter = ScalableBloomFilter::try_with_growth(
                    usize::from(initial),
                    rate.get(),
                    growth,
                    tightening,
                )?;
                for key in keys {
                    filter.insert(key);
                }
                filter.stages().map(BloomFilter::to_block).collect()
            }
            Recipe::RangeNew(range) => range_block(range.get()?, keys).into_iter().collect(),
            Recipe::RangeWithBitsPerKey {
                bits,
                max_range_len,
            } => range_block(
                RangePolicy::try_with_bits_per_key(bits.get(), max_range_len)?,
                keys,
            )
            .into_iter()
            .collect(),
            Recipe::BlockedBloomPolicy(_)
            | Recipe::StandardBloomPolicy(_)
            | Recipe::RibbonNew(_)
            | Recipe::RibbonWithFpr { .. }
            | Recipe::BlockedBloomParams { .. }
            | Recipe::StandardBloomParams { .. } => unreachable!("built through its policy above"),
        })
    }
}

fn filled(mut filter: BloomFilter, keys: &[Vec<u8>]) -> Vec<Vec<u8>> {
    for key in keys {
        filter.insert(key);
    }
    vec![filter.to_block()]
}

/// The built-in extractor a block names, if it names one: so that fuzzed blocks reach the prefix probes, not only
/// the "other extractor" answer.
fn named(name: &str) -> Option<Arc<dyn PrefixExtractor>> {
    let (kind, parameter) = name.strip_prefix("sstfilter.")?.split_once(':')?;
    match kind {
        "fixed" => Some(Arc::new(FixedPrefix::new(parameter.parse().ok()?))),
        "capped" => Some(Arc::new(CappedPrefix::new(parameter.parse().ok()?))),
        "delimited" => Some(Arc::new(DelimitedPrefix::new(
            u8::from_str_radix(parameter, 16).ok()?,
        ))),
        _ => None,
    }
}

/// Calls every query and accessor of an opened block, with keys taken from `probe_bytes`. Must never panic.
pub fn exercise<B: AsRef<[u8]>>(filter: &FilterBlock<B>, probe_bytes: &[u8]) {
    let _ = filter.verify();
    let _ = (
        filter.kind(),
        filter.params(),
        filter.num_keys(),
        filter.format_version(),
        filter.holds_whole_keys(),
    );
    let extractors: Vec<Arc<dyn PrefixExtractor>> = filter
        .prefix_extractor_name()
        .and_then(named)
        .into_iter()
        .chain([Extractor::Fixed(3).get(), Extractor::Delimited(b':').get()])
        .collect();
    for extractor in &extractors {
        for scan in probe_bytes.chunks(5).take(16) {
            let _ = filter.may_contain_scan(extractor.as_ref(), scan);
            if let Some(probe) = PrefixProbe::for_key(extractor.as_ref(), scan) {
                let _ = filter.may_contain_prefix(&probe);
            }
        }
    }
    let _ = (
        filter.bits_per_key(),
        filter.expected_fpr(),
        filter.stored_checksum(),
    );
    let keys: Vec<&[u8]> = probe_bytes.chunks(7).take(64).collect();
    for pair in keys.chunks(2) {
        let (a, b) = (pair[0], pair.get(1).copied().unwrap_or_default());
        for (lower, upper) in [
            (Bound::Included(a), Bound::Included(b)),
            (Bound::Excluded(a), Bound::Excluded(b)),
            (Bound::Included(a), Bound::Unbounded),
            (Bound::Unbounded, Bound::Excluded(b)),
        ] {
            let _ = filter.may_contain_range(lower, upper);
        }
    }
    let mut answers = vec![false; keys.len()];
    filter.may_contain_batch(&keys, &mut answers);
    for (key, batch) in keys.iter().zip(&answers) {
        assert_eq!(
            filter.may_contain(key),
            *batch,
            "batch and single answers differ"
        );
    }
    let hashes: Vec<KeyHash> = probe_bytes
        .chunks(8)
        .take(64)
        .map(|c| {
            let mut word = [0u8; 8];
            word[..c.len()].copy_from_slice(c);
            KeyHash::from_raw(u64::from_le_bytes(word))
        })
        .chain([
            KeyHash::from_raw(0),
            KeyHash::from_raw(u64::MAX),
            key_hash(b""),
        ])
        .collect();
    let mut by_hash = vec![false; hashes.len()];
    filter.may_contain_hash_batch(&hashes, &mut by_hash);
    for (h, batch) in hashes.iter().zip(&by_hash) {
        assert_eq!(
            filter.may_contain_hash(*h),
            *batch,
            "batch and single answers differ"
        );
    }
}
