//! The standard in-memory Bloom filter, and its serialisation as a StandardBloom block.

use sstfilter::{
    Error, FilterBlock, FilterKind, KeyHash, KindParams, Result, StandardBloomParams, TRAILER_LEN,
    UsageError, key_hash,
};

use crate::rates::{bloom_cardinality, bloom_fill_fpr};
use crate::{configured, params_for_rate, params_for_size};

/// A Bloom filter over byte-string keys, in memory: insert keys, ask whether a key may have been inserted.
///
/// `contains` never answers `false` for an inserted key; it answers `true` for a key that was not inserted with
/// a small probability, the false-positive rate, which grows as the filter fills. Size it for the number of
/// keys you expect with [`with_rate`](Self::with_rate), or explicitly with [`with_size`](Self::with_size).
///
/// [`expected_fpr`](Self::expected_fpr) (the rate it delivers now) and [`estimated_len`](Self::estimated_len)
/// (how many distinct keys it holds) are computed from its fill, which they count: a pass over the bit array
/// (about 0.1 ms for the 1.2 MB of a filter planned for a million keys; `cargo bench -p sstfilter-bench --bench memory`), so take
/// them every few thousand insertions, not after each. Inserts do not keep a running count because that would
/// make every probe wait for its word to arrive from memory, where now it is a store that never waits.
///
/// Two filters of equal size combine with [`union`](Self::union). [`to_block`](Self::to_block) writes it as a
/// checksummed [`FilterKind::StandardBloom`] block that [`FilterBlock`] queries in place and
/// [`from_block`](Self::from_block) loads back.
///
/// ```
/// use sstfilter::FilterBlock;
/// use sstfilter_memory::BloomFilter;
///
/// let mut filter = BloomFilter::with_rate(10_000, 0.01);
/// for i in 0..10_000u32 {
///     filter.insert(format!("user-{i}").as_bytes());
/// }
/// assert!(filter.contains(b"user-42"));
/// assert!(filter.expected_fpr() < 0.011);
/// assert!((filter.estimated_len() / 10_000.0 - 1.0).abs() < 0.05);
///
/// let bytes = filter.to_block();
/// assert!(FilterBlock::open(&bytes[..])?.may_contain(b"user-42"));
/// assert_eq!(BloomFilter::from_block(&bytes)?, filter);
/// # Ok::<(), sstfilter::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct BloomFilter {
    params: StandardBloomParams,
    /// Bit `p` is bit `p % 64` of word `p / 64`; bits at or past `num_bits` stay zero.
    words: Vec<u64>,
}

impl BloomFilter {
    /// A filter for `expected_items` keys at false-positive rate `fpr` once it holds them, sized as
    /// Guava sizes it: `m = -n·ln(fpr) / ln² 2` bits (rounded up to whole 64-bit words) and `k = round((m/n)·ln
    /// 2)` probes. One million items at 1 % take 1.2 MB and 7 probes.
    ///
    /// # Panics
    /// If `fpr` is not strictly between 0 and 1, or the filter would not fit in this platform's address space.
    /// Use [`try_with_rate`](Self::try_with_rate) for untrusted configuration.
    #[must_use]
    pub fn with_rate(expected_items: usize, fpr: f64) -> Self {
        configured(Self::try_with_rate(expected_items, fpr))
    }

    /// Like [`with_rate`](Self::with_rate), but an error instead of a panic for an invalid `fpr` or size.
    pub fn try_with_rate(expected_items: usize, fpr: f64) -> Result<Self, UsageError> {
        params_for_rate("BloomFilter fpr", expected_items, fpr).map(Self::with_params)
    }

    /// A filter of exactly `bits` bits with `hashes` probes per key.
    ///
    /// # Panics
    /// If `bits` is 0 or not addressable, or `hashes` is not in `1..=255`. Use
    /// [`try_with_size`](Self::try_with_size) for untrusted configuration.
    #[must_use]
    pub fn with_size(bits: u64, hashes: u32) -> Self {
        configured(Self::try_with_size(bits, hashes))
    }

    /// Like [`with_size`](Self::with_size), but an error instead of a panic for invalid arguments.
    pub fn try_with_size(bits: u64, hashes: u32) -> Result<Self, UsageError> {
        params_for_size("BloomFilter size", bits, hashes).map(Self::with_params)
    }

    /// An empty filter with these parameters (for example those of a filter to union with later).
    #[must_use]
    pub fn with_params(params: StandardBloomParams) -> Self {
        BloomFilter {
            params,
            words: vec![0; params.num_words()],
        }
    }

    /// A filter over existing words; bits at or past `num_bits` are cleared, as the format tells readers to.
    pub(crate) fn from_words(params: StandardBloomParams, mut words: Vec<u64>) -> Self {
        words.resize(params.num_words(), 0);
        let tail = params.num_bits() % 64;
        if let Some(last) = words.last_mut()
            && tail != 0
        {
            *last &= (1u64 << tail) - 1;
        }
        BloomFilter { params, words }
    }

    /// Inserts a key. Returns `true` if this changed the filter, which means the key was certainly not in it
    /// before; `false` means it may have been (it was inserted before, or all of its bits were already set by
    /// other keys).
    #[inline]
    pub fn insert(&mut self, key: &[u8]) -> bool {
        self.insert_hash(key_hash(key))
    }

    /// [`insert`](Self::insert) for a key hashed with [`key_hash`].
    #[inline]
    pub fn insert_hash(&mut self, hash: KeyHash) -> bool {
        let mut changed = 0u64;
        for pos in self.params.probes(hash) {
            // In bounds: probes are < num_bits <= 64 · words.len().
            if let Some(word) = self.words.get_mut((pos >> 6) as usize) {
                let bit = 1u64 << (pos & 63);
                changed |= !*word & bit;
                *word |= bit;
            }
        }
        // When the caller ignores the answer, this (the only use of the words' old values) is optimised away and
        // the probes become plain stores that never wait for memory.
        changed != 0
    }

    /// Whether `key` may have been inserted: `false` means it certainly was not.
    #[inline]
    #[must_use]
    pub fn contains(&self, key: &[u8]) -> bool {
        self.contains_hash(key_hash(key))
    }

    /// [`contains`](Self::contains) for a key hashed with [`key_hash`].
    #[inline]
    #[must_use]
    pub fn contains_hash(&self, hash: KeyHash) -> bool {
        self.params.probes(hash).all(|pos| {
            self.words
                .get((pos >> 6) as usize)
                .is_none_or(|word| word >> (pos & 63) & 1 == 1)
        })
    }

    /// The false-positive probability of a query now, from the filter's fill: `(X/m)^k` for `X` set bits out of
    /// `m`. After `n` distinct insertions this is close to the textbook `(1 - e^(-kn/m))^k`, and unlike that
    /// formula it needs no count: it stays right after unions, duplicate inserts and loading from bytes.
    ///
    /// Counts the set bits: a pass over the bit array.
    #[must_use]
    pub fn expected_fpr(&self) -> f64 {
        bloom_fill_fpr(
            self.params.num_bits(),
            self.count_ones(),
            self.params.num_probes(),
        )
    }

    /// The number of distinct keys inserted, estimated from the fraction of zero bits:
    /// `n ≈ -(m/k)·ln(1 - X/m)` (Swamidass & Baldi, 2007). At the planned capacity its relative standard error
    /// is about `0.8 / √m` (0.08 % for a million bits; `tests/memory.rs` checks 5 % from one key up to the
    /// capacity). `f64::INFINITY` when every bit is set.
    ///
    /// Counts the set bits: a pass over the bit array.
    #[must_use]
    pub fn estimated_len(&self) -> f64 {
        bloom_cardinality(
            self.params.num_bits(),
            self.count_ones(),
            self.params.num_probes(),
        )
    }

    /// Whether no key has been inserted (no bit is set). A pass over the bit array, stopping at the first set
    /// bit.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.words.iter().all(|&word| word == 0)
    }

    /// Number of set bits: a pass over the bit array.
    #[must_use]
    pub fn count_ones(&self) -> u64 {
        self.words.iter().map(|w| u64::from(w.count_ones())).sum()
    }

    /// Removes every key.
    pub fn clear(&mut self) {
        self.words.fill(0);
    }

    /// The filter's size `m` and probe count `k`.
    #[must_use]
    pub fn params(&self) -> &StandardBloomParams {
        &self.params
    }

    /// Number of bits `m`.
    #[must_use]
    pub fn num_bits(&self) -> u64 {
        self.params.num_bits()
    }

    /// Number of probes per key `k`.
    #[must_use]
    pub fn num_probes(&self) -> u32 {
        self.params.num_probes()
    }

    /// Bytes of memory the bit array takes (the struct itself adds a few dozen).
    #[must_use]
    pub fn memory_bytes(&self) -> usize {
        self.words.capacity() * 8
    }

    /// The filter of the union of both key sets: the bitwise OR. It is exactly the filter that inserting both
    /// sets into one filter would give.
    ///
    /// Returns [`UsageError::ParamsMismatch`] unless both filters have the same size and probe count.
    pub fn union(&self, other: &BloomFilter) -> Result<BloomFilter, UsageError> {
        let mut union = self.clone();
        union.union_in_place(other)?;
        Ok(union)
    }

    /// [`union`](Self::union) into `self`; on error `self` is unchanged.
    pub fn union_in_place(&mut self, other: &BloomFilter) -> Result<(), UsageError> {
        self.check_compatible(other)?;
        for (word, theirs) in self.words.iter_mut().zip(&other.words) {
            *word |= theirs;
        }
        Ok(())
    }

    /// The number of keys in both sets, estimated as `|A| + |B| - |A ∪ B|` from the three filters' fills
    /// (clamped at 0; the union is not built). Like every Bloom estimate it is good when the intersection is a
    /// sizeable part of the sets and noisy when it is a small difference of large numbers.
    ///
    /// Returns [`UsageError::ParamsMismatch`] unless both filters have the same size and probe count.
    pub fn estimated_intersection_len(&self, other: &BloomFilter) -> Result<f64, UsageError> {
        self.check_compatible(other)?;
        let union_ones = self
            .words
            .iter()
            .zip(&other.words)
            .map(|(a, b)| u64::from((a | b).count_ones()))
            .sum();
        let (m, k) = (self.params.num_bits(), self.params.num_probes());
        let union_len = bloom_cardinality(m, union_ones, k);
        let both = self.estimated_len() + other.estimated_len() - union_len;
        // A full union makes the expression ∞ - ∞ (NaN); nothing can be said then, and 0 is the safe answer.
        Ok(if both.is_nan() { 0.0 } else { both.max(0.0) })
    }

    /// The filter as a checksummed [`FilterKind::StandardBloom`] block: the bit array as little-endian 64-bit
    /// words, then the 36-byte trailer (FORMAT.md), written by [`StandardBloomParams::write_block`]. Its key count
    /// is the rounded [`estimated_len`](Self::estimated_len), so that [`FilterBlock::expected_fpr`] matches
    /// [`expected_fpr`](Self::expected_fpr) up to that rounding.
    #[must_use]
    pub fn to_block(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(8 * self.params.num_words() + TRAILER_LEN);
        self.write_block(&mut out);
        out
    }

    /// Like [`to_block`](Self::to_block), but appends the block to `out`; its checksum covers only the appended
    /// bytes.
    pub fn write_block(&self, out: &mut Vec<u8>) {
        // `as` saturates: a full filter's infinite estimate is stored as u64::MAX.
        let num_keys = self.estimated_len().round() as u64;
        // Never refused: every constructor gives `words` the parameters' number of words, and nothing resizes it.
        let _ = self.params.write_block(&self.words, num_keys, out);
    }

    /// Loads a filter from a [`FilterKind::StandardBloom`] block (written by [`to_block`](Self::to_block) or by
    /// a [`StandardBloomPolicy`](sstfilter::StandardBloomPolicy) builder), after validating its structure and
    /// checksum. The result can take more keys.
    ///
    /// Errors: anything [`FilterBlock::open`] rejects, and [`Error::WrongKind`] for a valid block of
    /// another kind. Allocates the size of the payload, never more.
    pub fn from_block(bytes: &[u8]) -> Result<Self> {
        let block = FilterBlock::open(bytes)?;
        let KindParams::StandardBloom(params) = *block.params() else {
            return Err(Error::WrongKind {
                expected: FilterKind::StandardBloom,
                found: block.kind(),
            });
        };
        // Every block's payload starts at its first byte (FORMAT.md, section 1), and `open` checked its length.
        let payload = bytes.get(..8 * params.num_words()).unwrap_or_default();
        let (words, _) = payload.as_chunks::<8>();
        let words = words.iter().map(|word| u64::from_le_bytes(*word)).collect();
        Ok(Self::from_words(params, words))
    }

    fn check_compatible(&self, other: &BloomFilter) -> Result<(), UsageError> {
        let mismatch = |field, left, right| {
            Err(UsageError::ParamsMismatch {
                field,
                expected: left,
                found: right,
            })
        };
        if self.params.num_bits() != other.params.num_bits() {
            return mismatch("num_bits", self.num_bits(), other.num_bits());
        }
        if self.params.num_probes() != other.params.num_probes() {
            let (left, right) = (self.num_probes(), other.num_probes());
            return mismatch("num_probes", u64::from(left), u64::from(right));
        }
        Ok(())
    }
}

impl<'a> Extend<&'a [u8]> for BloomFilter {
    fn extend<I: IntoIterator<Item = &'a [u8]>>(&mut self, keys: I) {
        for key in keys {
            self.insert(key);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sstfilter::{BlockedBloomPolicy, FilterBlockBuilder, StandardBloomPolicy};

    fn keys(range: core::ops::Range<u32>) -> Vec<Vec<u8>> {
        range.map(|i| format!("key-{i}").into_bytes()).collect()
    }

    #[test]
    fn insert_reports_whether_the_filter_changed() {
        let mut f = BloomFilter::with_rate(100, 0.01);
        assert!(f.is_empty());
        assert!(f.insert(b"a"));
        assert!(!f.insert(b"a"));
        assert!(f.contains(b"a"));
        assert!((1..=u64::from(f.num_probes())).contains(&f.count_ones()));
        f.clear();
        assert!(f.is_empty() && !f.contains(b"a"));
        assert_eq!(f.expected_fpr(), 0.0);
    }

    #[test]
    fn matches_a_block_built_by_the_policy_bit_for_bit() {
        // The in-memory filter and the block builder must agree on every probe position.
        let keys = keys(0..1000);
        let mut builder = FilterBlockBuilder::new(StandardBloomPolicy::new(10.0).unwrap());
        for k in &keys {
            builder.add_key(k);
        }
        let block = builder.finish();
        let from_block = BloomFilter::from_block(&block).unwrap();
        let mut filter = BloomFilter::with_params(*from_block.params());
        filter.extend(keys.iter().map(Vec::as_slice));
        assert_eq!(filter, from_block);
        let ours = filter.to_block();
        assert_eq!(
            ours[..ours.len() - TRAILER_LEN],
            block[..block.len() - TRAILER_LEN]
        );
    }

    #[test]
    fn block_round_trip_keeps_odd_sizes_and_clears_stray_tail_bits() {
        let mut f = BloomFilter::with_size(1000, 5);
        f.extend(keys(0..50).iter().map(Vec::as_slice));
        let mut block = f.to_block();
        assert_eq!(block.len(), 128 + TRAILER_LEN);
        assert_eq!(BloomFilter::from_block(&block).unwrap(), f);

        // Bits 1000..1024 are past num_bits: a writer leaves them zero and a reader ignores them.
        block[127] |= 0x80;
        let crc_at = block.len() - 4;
        let crc = crc32fast::hash(&block[..crc_at]);
        block[crc_at..].copy_from_slice(&crc.to_le_bytes());
        assert_eq!(BloomFilter::from_block(&block).unwrap(), f);
    }

    #[test]
    fn from_block_rejects_other_kinds_and_damage() {
        let mut builder = FilterBlockBuilder::new(BlockedBloomPolicy::new(10.0).unwrap());
        builder.add_key(b"k");
        assert_eq!(
            BloomFilter::from_block(&builder.finish()),
            Err(Error::WrongKind {
                expected: FilterKind::StandardBloom,
                found: FilterKind::BlockedBloom
            })
        );
        let mut block = BloomFilter::with_rate(10, 0.01).to_block();
        block[0] ^= 1;
        assert!(matches!(
            BloomFilter::from_block(&block),
            Err(Error::ChecksumMismatch { .. })
        ));
    }

    #[test]
    fn union_needs_equal_parameters() {
        let a = BloomFilter::with_size(1024, 7);
        let b = BloomFilter::with_size(2048, 7);
        let c = BloomFilter::with_size(1024, 6);
        assert_eq!(
            a.union(&b),
            Err(UsageError::ParamsMismatch {
                field: "num_bits",
                expected: 1024,
                found: 2048
            })
        );
        assert_eq!(
            a.estimated_intersection_len(&c),
            Err(UsageError::ParamsMismatch {
                field: "num_probes",
                expected: 7,
                found: 6
            })
        );
        let mut d = a.clone();
        d.insert(b"x");
        let before = d.clone();
        assert!(d.union_in_place(&b).is_err());
        assert_eq!(d, before);
    }

    #[test]
    fn intersection_estimate_tracks_the_overlap() {
        let mut a = BloomFilter::with_rate(20_000, 0.01);
        let mut b = a.clone();
        a.extend(keys(0..10_000).iter().map(Vec::as_slice));
        b.extend(keys(5_000..15_000).iter().map(Vec::as_slice));
        let both = a.estimated_intersection_len(&b).unwrap();
        assert!((both / 5_000.0 - 1.0).abs() < 0.05, "{both}");
        let empty = BloomFilter::with_params(*a.params());
        assert_eq!(a.estimated_intersection_len(&empty).unwrap(), 0.0);
    }

    #[test]
    fn a_full_filter_is_reported_honestly() {
        let mut f = BloomFilter::with_size(64, 3);
        f.extend(keys(0..1000).iter().map(Vec::as_slice));
        assert_eq!(f.count_ones(), 64);
        assert_eq!(f.expected_fpr(), 1.0);
        assert_eq!(f.estimated_len(), f64::INFINITY);
        assert_eq!(f.estimated_intersection_len(&f.clone()).unwrap(), 0.0);
        let block = f.to_block();
        let opened = FilterBlock::open(&block[..]).unwrap();
        assert_eq!(opened.num_keys(), u64::MAX);
        assert!(opened.may_contain(b"anything"));
    }

    #[test]
    #[should_panic(expected = "fpr must be strictly between 0 and 1")]
    fn with_rate_panics_on_a_bad_rate() {
        let _ = BloomFilter::with_rate(10, 1.5);
    }

    #[test]
    fn try_constructors_validate() {
        assert!(BloomFilter::try_with_size(0, 3).is_err());
        assert!(BloomFilter::try_with_size(64, 0).is_err());
        assert!(BloomFilter::try_with_size(64, 256).is_err());
        assert!(BloomFilter::try_with_rate(10, 0.0).is_err());
        assert!(BloomFilter::try_with_rate(10, 1e-300).is_err());
        let f = BloomFilter::with_size(100, 3);
        assert_eq!(
            (f.num_bits(), f.num_probes(), f.memory_bytes()),
            (100, 3, 16)
        );
    }
}
