//! The counting Bloom filter (Fan, Cao, Almeida & Broder, 2000): 4-bit counters instead of bits, so that keys
//! can be removed.

use sstfilter::{KeyHash, StandardBloomParams, UsageError, key_hash};

use crate::rates::{bloom_cardinality, bloom_fill_fpr};
use crate::{BloomFilter, configured, invalid_setting, params_for_rate, params_for_size};

/// Counters per 64-bit word.
const PER_WORD: u64 = 16;

/// The value at which a counter sticks: it is never incremented past it nor decremented from it.
const SATURATED: u64 = 15;

/// A Bloom filter that supports removal: each of its `m` positions is a 4-bit counter, incremented by an
/// insertion and decremented by a removal. It takes 4 times the memory of a [`BloomFilter`] of the same `m`.
///
/// It is a multiset: a key inserted twice needs two removals. Counters saturate at 15 and a saturated counter is
/// never decremented again (it no longer knows its true count), so saturation can only cost false positives,
/// never false negatives. With the optimal probe count the mean counter is `ln 2 ≈ 0.69`, and Fan et al. bound
/// the probability that a counter needs more than 4 bits by 1.37·10^-15, so in practice none saturates;
/// [`saturated_counters`](Self::saturated_counters) says if one did.
///
/// **Only remove keys that were inserted.** [`remove`](Self::remove) refuses a key the filter certainly does
/// not hold, but a key that was never inserted and happens to be a false positive would be "removed" by
/// decrementing other keys' counters, and those keys could then be reported absent. This is inherent to counting
/// Bloom filters; the filter cannot tell the two cases apart.
///
/// ```
/// use sstfilter_memory::CountingBloomFilter;
///
/// let mut sessions = CountingBloomFilter::with_rate(10_000, 0.01);
/// sessions.insert(b"alice");
/// sessions.insert(b"bob");
/// assert!(sessions.remove(b"alice"));
/// assert!(!sessions.contains(b"alice"));
/// assert!(sessions.contains(b"bob"));
/// assert!(!sessions.remove(b"carol")); // certainly not present: nothing to remove
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CountingBloomFilter {
    /// `num_bits` is the number of counters.
    params: StandardBloomParams,
    /// Counter `p` is bits `4·(p % 16)..4·(p % 16) + 4` of word `p / 16`.
    words: Vec<u64>,
    /// Number of non-zero counters: the fill, for the O(1) estimates.
    nonzero: u64,
    /// Number of counters that reached [`SATURATED`].
    saturated: u64,
}

impl CountingBloomFilter {
    /// A filter for `expected_items` keys at false-positive rate `fpr`, with as many counters and probes
    /// as [`BloomFilter::with_rate`] has bits and probes.
    ///
    /// # Panics
    /// If `fpr` is not strictly between 0 and 1, or the filter would not fit in memory. Use
    /// [`try_with_rate`](Self::try_with_rate) for untrusted configuration.
    #[must_use]
    pub fn with_rate(expected_items: usize, fpr: f64) -> Self {
        configured(Self::try_with_rate(expected_items, fpr))
    }

    /// Like [`with_rate`](Self::with_rate), but an error instead of a panic.
    pub fn try_with_rate(expected_items: usize, fpr: f64) -> Result<Self, UsageError> {
        params_for_rate("CountingBloomFilter fpr", expected_items, fpr)
            .and_then(Self::try_with_params)
    }

    /// A filter of exactly `counters` counters with `hashes` probes per key.
    ///
    /// # Panics
    /// If `counters` is 0 or not addressable, or `hashes` is not in `1..=255`. Use
    /// [`try_with_size`](Self::try_with_size) for untrusted configuration.
    #[must_use]
    pub fn with_size(counters: u64, hashes: u32) -> Self {
        configured(Self::try_with_size(counters, hashes))
    }

    /// Like [`with_size`](Self::with_size), but an error instead of a panic.
    pub fn try_with_size(counters: u64, hashes: u32) -> Result<Self, UsageError> {
        params_for_size("CountingBloomFilter size", counters, hashes)
            .and_then(Self::try_with_params)
    }

    /// An empty filter with `params.num_bits()` counters and `params.num_probes()` probes, or an error if its
    /// `4 · num_bits` bits do not fit in this platform's address space.
    pub fn try_with_params(params: StandardBloomParams) -> Result<Self, UsageError> {
        let words = usize::try_from(params.num_bits().div_ceil(PER_WORD))
            .ok()
            // A `Vec<u64>` holds at most isize::MAX bytes.
            .filter(|&words| words <= isize::MAX as usize / 8)
            .ok_or_else(|| {
                invalid_setting(
                    "CountingBloomFilter size",
                    "counters that fit in this platform's address space",
                    params.num_bits(),
                )
            })?;
        Ok(CountingBloomFilter {
            params,
            words: vec![0; words],
            nonzero: 0,
            saturated: 0,
        })
    }

    /// Inserts a key (once more, if it was already there). Returns `true` if the key was certainly not in the
    /// filter before (one of its counters was zero).
    #[inline]
    pub fn insert(&mut self, key: &[u8]) -> bool {
        self.insert_hash(key_hash(key))
    }

    /// [`insert`](Self::insert) for a key hashed with [`key_hash`].
    pub fn insert_hash(&mut self, hash: KeyHash) -> bool {
        // Branch-free on the counters' values: a branch on a value still on its way from memory would be
        // mispredicted half the time and stall the next probes' loads behind it.
        let (mut newly_nonzero, mut newly_saturated) = (0u64, 0u64);
        for pos in self.params.probes(hash) {
            let (index, shift) = slot(pos);
            // In bounds: probes are < num_bits <= 16 · words.len().
            if let Some(word) = self.words.get_mut(index) {
                let count = *word >> shift & 0xF;
                *word += u64::from(count < SATURATED) << shift;
                newly_nonzero += u64::from(count == 0);
                newly_saturated += u64::from(count == SATURATED - 1);
            }
        }
        self.nonzero += newly_nonzero;
        self.saturated += newly_saturated;
        newly_nonzero != 0
    }

    /// Removes one insertion of a key that may be present, and returns `true`; returns `false` and changes
    /// nothing if the key is certainly absent. Saturated counters are left as they are.
    ///
    /// Only call it for keys that were inserted (see the type's documentation).
    #[inline]
    pub fn remove(&mut self, key: &[u8]) -> bool {
        self.remove_hash(key_hash(key))
    }

    /// [`remove`](Self::remove) for a key hashed with [`key_hash`].
    pub fn remove_hash(&mut self, hash: KeyHash) -> bool {
        if !self.contains_hash(hash) {
            return false;
        }
        for pos in self.params.probes(hash) {
            let (index, shift) = slot(pos);
            let Some(word) = self.words.get_mut(index) else {
                continue;
            };
            let count = *word >> shift & 0xF;
            // Zero is only reachable when removing a key that was never inserted and probes one counter twice;
            // decrementing it would borrow from the neighbouring counter.
            let decrement = u64::from(count != 0 && count != SATURATED);
            *word -= decrement << shift;
            self.nonzero -= u64::from(count == 1);
        }
        true
    }

    /// Whether `key` may be in the filter: `false` means it certainly is not.
    #[inline]
    #[must_use]
    pub fn contains(&self, key: &[u8]) -> bool {
        self.contains_hash(key_hash(key))
    }

    /// [`contains`](Self::contains) for a key hashed with [`key_hash`].
    #[must_use]
    pub fn contains_hash(&self, hash: KeyHash) -> bool {
        self.params.probes(hash).all(|pos| {
            let (index, shift) = slot(pos);
            self.words
                .get(index)
                .is_none_or(|word| word >> shift & 0xF != 0)
        })
    }

    /// The number of distinct keys present, estimated from the fraction of zero counters (as
    /// [`BloomFilter::estimated_len`]).
    #[must_use]
    pub fn estimated_len(&self) -> f64 {
        bloom_cardinality(
            self.params.num_bits(),
            self.nonzero,
            self.params.num_probes(),
        )
    }

    /// The false-positive probability of a query now, from the fraction of non-zero counters (as
    /// [`BloomFilter::expected_fpr`]).
    #[must_use]
    pub fn expected_fpr(&self) -> f64 {
        bloom_fill_fpr(
            self.params.num_bits(),
            self.nonzero,
            self.params.num_probes(),
        )
    }

    /// Number of counters that reached 15 and are stuck there (each may cost false positives, never a false
    /// negative). Zero in any filter used within its planned capacity.
    #[must_use]
    pub fn saturated_counters(&self) -> u64 {
        self.saturated
    }

    /// Whether every counter is zero.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.nonzero == 0
    }

    /// Removes every key.
    pub fn clear(&mut self) {
        self.words.fill(0);
        self.nonzero = 0;
        self.saturated = 0;
    }

    /// The number of counters `m` and of probes per key `k`.
    #[must_use]
    pub fn params(&self) -> &StandardBloomParams {
        &self.params
    }

    /// Bytes of memory the counters take: `m / 2`, rounded up to whole 64-bit words.
    #[must_use]
    pub fn memory_bytes(&self) -> usize {
        self.words.capacity() * 8
    }

    /// The plain Bloom filter of the keys present now: bit `p` is set where counter `p` is non-zero. It answers
    /// exactly as this filter does, takes a quarter of the memory, and can be serialised with
    /// [`BloomFilter::to_block`] (the counts themselves are not kept).
    #[must_use]
    pub fn to_bloom_filter(&self) -> BloomFilter {
        let bits = self
            .words
            .chunks(4)
            .map(|counters| {
                counters.iter().enumerate().fold(0u64, |bits, (i, &word)| {
                    bits | nonzero_nibbles(word) << (16 * i)
                })
            })
            .collect();
        BloomFilter::from_words(self.params, bits)
    }
}

/// The word index and bit shift of counter `pos`.
#[inline(always)]
fn slot(pos: u64) -> (usize, u64) {
    ((pos / PER_WORD) as usize, pos % PER_WORD * 4)
}

/// A 16-bit mask with bit `i` set where nibble `i` of `word` is non-zero.
fn nonzero_nibbles(word: u64) -> u64 {
    // Fold each nibble's bits into its lowest bit, then gather the 16 lowest bits.
    let any = (word | word >> 1 | word >> 2 | word >> 3) & 0x1111_1111_1111_1111;
    (0..16).fold(0, |mask, i| mask | (any >> (4 * i) & 1) << i)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_a_multiset() {
        let mut f = CountingBloomFilter::with_rate(100, 0.01);
        assert!(f.insert(b"a"));
        assert!(!f.insert(b"a"));
        assert!(f.remove(b"a"));
        assert!(f.contains(b"a"), "inserted twice, removed once");
        assert!(f.remove(b"a"));
        assert!(!f.contains(b"a"));
        assert!(f.is_empty());
        assert!(!f.remove(b"a"));
        assert_eq!(f.estimated_len(), 0.0);
    }

    #[test]
    fn saturated_counters_stick() {
        let mut f = CountingBloomFilter::with_size(16, 1);
        for _ in 0..20 {
            f.insert(b"k");
        }
        assert_eq!(f.saturated_counters(), 1);
        for _ in 0..20 {
            assert!(f.remove(b"k"), "a saturated counter is never decremented");
        }
        assert!(f.contains(b"k"));
        // Exactly one counter (the key's) is set, at 15.
        assert_eq!(f.words.iter().map(|w| w.count_ones()).sum::<u32>(), 4);
    }

    #[test]
    fn removing_an_absent_key_with_a_repeated_probe_does_not_borrow() {
        // Two counters, 8 probes: every key probes each counter several times. Insert a key that sets both
        // counters to large values, then remove a different key (never inserted) many times: counters go
        // down but never wrap into each other.
        let mut f = CountingBloomFilter::with_size(2, 8);
        f.insert(b"present");
        for i in 0..100u32 {
            f.remove(format!("other-{i}").as_bytes());
        }
        assert!(
            f.words[0] >> 8 == 0,
            "no borrow into counters 2..16: {:#x}",
            f.words[0]
        );
    }

    #[test]
    fn projection_answers_like_the_counters() {
        let mut f = CountingBloomFilter::with_size(1000, 4);
        for i in 0..150u32 {
            f.insert(format!("k{i}").as_bytes());
        }
        for i in 0..50u32 {
            f.remove(format!("k{i}").as_bytes());
        }
        let bloom = f.to_bloom_filter();
        assert_eq!(bloom.count_ones(), f.nonzero);
        for i in 0..5000u32 {
            let key = format!("k{i}");
            assert_eq!(
                bloom.contains(key.as_bytes()),
                f.contains(key.as_bytes()),
                "{key}"
            );
        }
        assert_eq!(nonzero_nibbles(0xF000_0000_0000_0010), 0x8002);
    }

    #[test]
    fn sizes_and_validation() {
        let f = CountingBloomFilter::with_rate(1_000_000, 0.01);
        assert_eq!(f.params().num_bits(), 9_585_088);
        assert_eq!(f.memory_bytes(), 9_585_088 / 2);
        assert!(CountingBloomFilter::try_with_size(0, 3).is_err());
        assert!(CountingBloomFilter::try_with_size(64, 256).is_err());
        assert!(CountingBloomFilter::try_with_rate(10, 1.0).is_err());
    }
}
