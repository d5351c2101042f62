//! Workspace-internal, shared by the benchmarks: realistic keys and the peer filters, each built and queried the
//! way a storage engine would use it (hashing included in every timed operation).

use sstfilter::{BlockedBloomPolicy, FilterBlock, FilterBlockBuilder, FilterPolicy, RibbonPolicy};
use xxhash_rust::xxh3::xxh3_64;

/// Bits per key every filter is given.
pub const BITS_PER_KEY: usize = 10;

/// Keys stored back to back in one buffer, as they sit in a table's data blocks: `"usr:" + 12 digits` plus a
/// 0–8 byte suffix, 16–24 bytes.
pub struct Keys {
    buf: Vec<u8>,
    ends: Vec<usize>,
}

impl Keys {
    /// `n` keys numbered `first, first + stride, …` (present and absent sets use disjoint numbers).
    pub fn new(n: usize, first: u64, stride: u64) -> Keys {
        let mut buf = Vec::with_capacity(n * 20);
        let mut ends = Vec::with_capacity(n);
        for i in 0..n as u64 {
            let id = first + i * stride;
            buf.extend_from_slice(format!("usr:{id:012}").as_bytes());
            for s in 0..(id % 9) {
                buf.push(b'a' + (id.wrapping_mul(31).wrapping_add(s) % 26) as u8);
            }
            ends.push(buf.len());
        }
        Keys { buf, ends }
    }

    /// The `n` keys a filter is built from.
    pub fn present(n: usize) -> Keys {
        Keys::new(n, 0, 2)
    }

    /// `n` keys of the same shape that were never added.
    pub fn absent(n: usize) -> Keys {
        Keys::new(n, 1, 2)
    }

    /// Number of keys (a benchmark set is never empty, so there is no `is_empty`).
    #[expect(
        clippy::len_without_is_empty,
        reason = "benchmark key sets are never empty"
    )]
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn iter(&self) -> impl Iterator<Item = &[u8]> + '_ {
        let starts = core::iter::once(0).chain(self.ends.iter().copied());
        starts.zip(self.ends.iter()).map(|(s, &e)| &self.buf[s..e])
    }

    /// The first `n` keys as slices (for the batch API).
    pub fn slices(&self, n: usize) -> Vec<&[u8]> {
        self.iter().take(n).collect()
    }

    /// Keys and offsets in rusty-leveldb's `create_filter` layout.
    pub fn leveldb_layout(&self) -> (&[u8], Vec<usize>) {
        let offsets = core::iter::once(0)
            .chain(self.ends.iter().copied())
            .take(self.len())
            .collect();
        (&self.buf, offsets)
    }
}

/// A filter under test: built from keys, queried by key, with its size in bytes.
pub trait Filter: Sized {
    const NAME: &'static str;
    fn build(keys: &Keys) -> Self;
    fn contains(&self, key: &[u8]) -> bool;
    fn size_bytes(&self) -> usize;
}

/// Ours: a BlockedBloom block opened over its bytes.
pub struct Ours(FilterBlock<Vec<u8>>);

impl Filter for Ours {
    const NAME: &'static str = "sstfilter BlockedBloom";
    fn build(keys: &Keys) -> Self {
        let mut b = FilterBlockBuilder::new(BlockedBloomPolicy::new(BITS_PER_KEY as f64).unwrap());
        for k in keys.iter() {
            b.add_key(k);
        }
        Ours(FilterBlock::open(b.finish()).expect("fresh block opens"))
    }
    #[inline]
    fn contains(&self, key: &[u8]) -> bool {
        self.0.may_contain(key)
    }
    fn size_bytes(&self) -> usize {
        self.0.as_bytes().len()
    }
}

impl Ours {
    pub fn block(&self) -> &FilterBlock<Vec<u8>> {
        &self.0
    }
}

/// Ours: a StandardBloom block (the classic Bloom filter, k = round(bits/key · ln 2)) opened over its bytes.
pub struct OursStandard(FilterBlock<Vec<u8>>);

impl Filter for OursStandard {
    const NAME: &'static str = "sstfilter StandardBloom";
    fn build(keys: &Keys) -> Self {
        let policy = sstfilter::StandardBloomPolicy::new(BITS_PER_KEY as f64).unwrap();
        let mut b = FilterBlockBuilder::new(policy);
        for k in keys.iter() {
            b.add_key(k);
        }
        OursStandard(FilterBlock::open(b.finish()).expect("fresh block opens"))
    }
    #[inline]
    fn contains(&self, key: &[u8]) -> bool {
        self.0.may_contain(key)
    }
    fn size_bytes(&self) -> usize {
        self.0.as_bytes().len()
    }
}

impl OursStandard {
    pub fn block(&self) -> &FilterBlock<Vec<u8>> {
        &self.0
    }
}

/// fastbloom 0.17, fed the same xxh3 hash (its default hasher is SipHash, slower and not what a store would use).
pub struct Fastbloom(fastbloom::BloomFilter);

impl Filter for Fastbloom {
    const NAME: &'static str = "fastbloom (xxh3)";
    fn build(keys: &Keys) -> Self {
        let mut f = fastbloom::BloomFilter::with_num_bits(keys.len() * BITS_PER_KEY)
            .expected_items(keys.len());
        for k in keys.iter() {
            f.insert_hash(xxh3_64(k));
        }
        Fastbloom(f)
    }
    #[inline]
    fn contains(&self, key: &[u8]) -> bool {
        self.0.contains_hash(xxh3_64(key))
    }
    fn size_bytes(&self) -> usize {
        self.0.num_bits() / 8
    }
}

/// sbbf-rs-safe 0.3: Parquet's split-block Bloom filter (256-bit blocks, 8 probes).
pub struct Sbbf(sbbf_rs_safe::Filter);

impl Filter for Sbbf {
    const NAME: &'static str = "sbbf-rs-safe";
    fn build(keys: &Keys) -> Self {
        let mut f = sbbf_rs_safe::Filter::new(BITS_PER_KEY, keys.len());
        for k in keys.iter() {
            f.insert_hash(xxh3_64(k));
        }
        Sbbf(f)
    }
    #[inline]
    fn contains(&self, key: &[u8]) -> bool {
        self.0.contains_hash(xxh3_64(key))
    }
    fn size_bytes(&self) -> usize {
        self.0.as_bytes().len()
    }
}

/// xorf 0.13 BinaryFuse8: a static filter at a fixed ~9 bits/key and 0.39 % FPR.
pub struct BinaryFuse8(xorf::BinaryFuse8);

impl Filter for BinaryFuse8 {
    const NAME: &'static str = "xorf BinaryFuse8";
    fn build(keys: &Keys) -> Self {
        let hashes: Vec<u64> = keys.iter().map(xxh3_64).collect();
        BinaryFuse8(xorf::BinaryFuse8::try_from(&hashes).expect("distinct keys build"))
    }
    #[inline]
    fn contains(&self, key: &[u8]) -> bool {
        use xorf::Filter as _;
        self.0.contains(&xxh3_64(key))
    }
    fn size_bytes(&self) -> usize {
        self.0.fingerprints.len()
    }
}

/// rusty-leveldb 4.0's BloomPolicy (LevelDB's standard Bloom, 32-bit hash), one filter over all keys.
pub struct LevelDb(rusty_leveldb::BloomPolicy, Vec<u8>);

impl Filter for LevelDb {
    const NAME: &'static str = "rusty-leveldb BloomPolicy";
    fn build(keys: &Keys) -> Self {
        use rusty_leveldb::FilterPolicy as _;
        let policy = rusty_leveldb::BloomPolicy::new(BITS_PER_KEY as u32);
        let (buf, offsets) = keys.leveldb_layout();
        let filter = policy.create_filter(buf, &offsets);
        LevelDb(policy, filter)
    }
    #[inline]
    fn contains(&self, key: &[u8]) -> bool {
        use rusty_leveldb::FilterPolicy as _;
        self.0.key_may_match(key, &self.1)
    }
    fn size_bytes(&self) -> usize {
        self.1.len()
    }
}

/// A block of `keys` built with `policy` and opened over its bytes.
fn block_of(policy: impl FilterPolicy, keys: &Keys) -> FilterBlock<Vec<u8>> {
    let mut b = FilterBlockBuilder::new(policy);
    for k in keys.iter() {
        b.add_key(k);
    }
    FilterBlock::open(b.finish()).expect("fresh block opens")
}

/// Ours: a Ribbon block. `LOG2_INV_FPR = 0` means "Bloom-equivalent `BITS_PER_KEY`" (BlockedBloom's false-positive
/// rate at `BITS_PER_KEY`, `RibbonPolicy::new`); otherwise the target rate is `2^-LOG2_INV_FPR`
/// (`RibbonPolicy::with_fpr`), to compare with the xor filters' fixed rates.
pub struct OursRibbonAt<const LOG2_INV_FPR: i32>(FilterBlock<Vec<u8>>);

/// Ours: Ribbon at BlockedBloom's rate at `BITS_PER_KEY`.
pub type OursRibbon = OursRibbonAt<0>;

impl<const LOG2_INV_FPR: i32> Filter for OursRibbonAt<LOG2_INV_FPR> {
    const NAME: &'static str = match LOG2_INV_FPR {
        0 => "sstfilter Ribbon",
        8 => "sstfilter Ribbon (2^-8)",
        16 => "sstfilter Ribbon (2^-16)",
        _ => "sstfilter Ribbon (other rate)",
    };
    fn build(keys: &Keys) -> Self {
        let policy = match LOG2_INV_FPR {
            0 => RibbonPolicy::new(BITS_PER_KEY as f64).unwrap(),
            bits => RibbonPolicy::with_fpr(2f64.powi(-bits)).unwrap(),
        };
        OursRibbonAt(block_of(policy, keys))
    }
    #[inline]
    fn contains(&self, key: &[u8]) -> bool {
        self.0.may_contain(key)
    }
    fn size_bytes(&self) -> usize {
        self.0.as_bytes().len()
    }
}

impl<const LOG2_INV_FPR: i32> OursRibbonAt<LOG2_INV_FPR> {
    pub fn block(&self) -> &FilterBlock<Vec<u8>> {
        &self.0
    }
}

/// xorf 0.13 BinaryFuse16: a static filter at a fixed ~18 bits/key and 2^-16 false-positive rate.
pub struct BinaryFuse16(xorf::BinaryFuse16);

impl Filter for BinaryFuse16 {
    const NAME: &'static str = "xorf BinaryFuse16";
    fn build(keys: &Keys) -> Self {
        let hashes: Vec<u64> = keys.iter().map(xxh3_64).collect();
        BinaryFuse16(xorf::BinaryFuse16::try_from(&hashes).expect("distinct keys build"))
    }
    #[inline]
    fn contains(&self, key: &[u8]) -> bool {
        use xorf::Filter as _;
        self.0.contains(&xxh3_64(key))
    }
    fn size_bytes(&self) -> usize {
        self.0.fingerprints.len() * 2
    }
}

/// The whole number in environment variable `name`, or `default` when it is unset or not a number: how the
/// store benchmarks take their sizes.
pub fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The median of `xs` (the upper one of an even count); NaN for none.
pub fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs.get(xs.len() / 2).copied().unwrap_or(f64::NAN)
}

/// The median of `totals` each divided by `count`: a pass's total per lookup or per scan.
pub fn median_per(totals: impl Iterator<Item = f64>, count: u64) -> f64 {
    median(totals.map(|total| total / count as f64).collect())
}
