//! LevelDB's built-in Bloom filter, bit for bit (`util/bloom.cc`, policy name `leveldb.BuiltinBloomFilter2`).
//!
//! One filter is a byte string: `bits/8` bytes of Bloom bits followed by one byte holding the probe count `k`.
//!
//! ```text
//! +--------------------------------------+--------+
//! |  Bloom bits: m = 8 · (len - 1) bits  |   k    |
//! |  bit p = bit p % 8 of byte p / 8     |   u8   |
//! +--------------------------------------+--------+
//! ```
//!
//! * **Size**: `m = max(n · bits_per_key, 64)` rounded up to a whole byte, for `n` keys.
//! * **Probes**: `k = floor(bits_per_key · 0.69)` (≈ ln 2 · bits/key), clamped to `1..=30`.
//! * **Positions**: `h = leveldb_hash(key, 0xbc9f1d34)`, `delta = h` rotated right by 17; probe `j` (of `k`) is
//!   bit `h mod m`, then `h += delta` (wrapping 32-bit) — double hashing from one 32-bit hash.
//! * **Reading**: `k > 30` is reserved by LevelDB for "new encodings" and answers "may match", as does a filter
//!   whose `k` is 0.
//!
//! One deliberate difference from LevelDB: a filter shorter than 2 bytes answers "may match" where LevelDB
//! answers "no". [`LevelDbBloomPolicy::create_filter`] never writes one (its smallest filter is 9 bytes), so such
//! a filter can only be damage or another policy's bytes, and a wrong "no" would lose a key.

use sstfilter::MAX_BITS_PER_KEY;

use crate::bloom_bits::{self, BitPlacement, MAX_PROBES};
use crate::error::{LevelDbUsageError, configured};
use crate::hash::leveldb_hash;

/// The seed LevelDB's Bloom filter hashes keys with (`BloomHash` in `util/bloom.cc`).
const BLOOM_SEED: u32 = 0xbc9f_1d34;

/// LevelDB's `BloomFilterPolicy` (`NewBloomFilterPolicy(bits_per_key)`): writes and reads exactly the filters
/// LevelDB and rusty-leveldb do, so tables can move between them and this crate in both directions.
///
/// ```
/// use sstfilter_leveldb::LevelDbBloomPolicy;
///
/// let policy = LevelDbBloomPolicy::new(10);
/// let filter = policy.create_filter(&[b"apple", b"banana"]);
/// assert!(policy.may_contain(b"apple", &filter));
/// assert_eq!(filter.last(), Some(&6)); // k = floor(10 · 0.69)
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LevelDbBloomPolicy {
    bits_per_key: usize,
    num_probes: u8,
}

impl LevelDbBloomPolicy {
    /// The name LevelDB records for this policy in a table's meta-index (`"filter." + name`).
    pub const NAME: &'static str = "leveldb.BuiltinBloomFilter2";

    /// A policy spending `bits_per_key` bits per key, as LevelDB's `NewBloomFilterPolicy(bits_per_key)`. As in
    /// LevelDB, 0 still gives the 64-bit minimum filter with one probe.
    ///
    /// # Panics
    /// If `bits_per_key` is above [`MAX_BITS_PER_KEY`] (LevelDB accepts any value; a
    /// larger one is a unit mistake that would allocate gigabytes). Use [`try_new`](Self::try_new) for untrusted
    /// configuration.
    #[must_use]
    #[track_caller]
    pub fn new(bits_per_key: usize) -> Self {
        configured(Self::try_new(bits_per_key))
    }

    /// Like [`new`](Self::new), but an error instead of a panic for a value it refuses.
    pub fn try_new(bits_per_key: usize) -> Result<Self, LevelDbUsageError> {
        if bits_per_key as f64 > MAX_BITS_PER_KEY {
            return Err(LevelDbUsageError::BitsPerKey {
                policy: "LevelDbBloomPolicy",
                min: 0.0,
                max: MAX_BITS_PER_KEY,
                found: bits_per_key as f64,
            });
        }
        // LevelDB: `k_ = static_cast<size_t>(bits_per_key * 0.69)` in double precision, then clamped. The float
        // to integer cast truncates, as C++'s does.
        let k = (bits_per_key as f64 * 0.69) as u64;
        let num_probes = k.clamp(1, u64::from(MAX_PROBES)) as u8;
        Ok(LevelDbBloomPolicy {
            bits_per_key,
            num_probes,
        })
    }

    /// The configured bits per key.
    #[must_use]
    pub const fn bits_per_key(&self) -> usize {
        self.bits_per_key
    }
}

bloom_bits::shared_methods!(
    LevelDbBloomPolicy,
    "The filter for `keys`, byte for byte as LevelDB's `CreateFilter` writes it."
);

/// The `num_probes` bit positions of `key` in a bit array of `num_bits > 0` bits: LevelDB's double hashing.
/// The arithmetic on positions is 64-bit (LevelDB's `size_t`), so filters past 512 MiB index like LevelDB's.
fn probe_positions(key: &[u8], num_probes: u8, num_bits: u64) -> impl Iterator<Item = u64> {
    let mut h = leveldb_hash(key, BLOOM_SEED);
    // LevelDB: `delta = (h >> 17) | (h << 15)`, "rotate right 17 bits".
    let delta = h.rotate_right(17);
    (0..num_probes).map(move |_| {
        let bit = u64::from(h) % num_bits.max(1);
        h = h.wrapping_add(delta);
        bit
    })
}

impl BitPlacement for LevelDbBloomPolicy {
    fn probe_count(&self) -> u8 {
        self.num_probes
    }

    fn wanted_bits(&self, num_keys: usize) -> u64 {
        (num_keys as u64).saturating_mul(self.bits_per_key as u64)
    }

    fn positions(key: &[u8], num_probes: u8, num_bits: u64) -> impl Iterator<Item = u64> {
        probe_positions(key, num_probes, num_bits)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(n: u32) -> Vec<Vec<u8>> {
        // LevelDB's bloom_test.cc encodes key i as its 4 little-endian bytes.
        (0..n).map(|i| i.to_le_bytes().to_vec()).collect()
    }

    fn filter_of(policy: &LevelDbBloomPolicy, keys: &[Vec<u8>]) -> Vec<u8> {
        let refs: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
        policy.create_filter(&refs)
    }

    #[test]
    fn probe_count_follows_leveldb() {
        let expect = [
            (0, 1),
            (1, 1),
            (2, 1),
            (3, 2),
            (10, 6),
            (16, 11),
            (20, 13),
            (43, 29),
            (44, 30),
            (100, 30),
        ];
        for (bits_per_key, k) in expect {
            assert_eq!(
                LevelDbBloomPolicy::new(bits_per_key).num_probes(),
                k,
                "{bits_per_key} bits/key"
            );
        }
        assert!(LevelDbBloomPolicy::try_new(101).is_err());
        assert!(LevelDbBloomPolicy::try_new(usize::MAX).is_err());
    }

    #[test]
    fn sizes_follow_leveldb() {
        let policy = LevelDbBloomPolicy::new(10);
        // Minimum 64 bits (8 bytes) plus the k byte; then ceil(n·10/8) + 1.
        assert_eq!(policy.create_filter(&[]).len(), 9);
        assert_eq!(filter_of(&policy, &keys(6)).len(), 9);
        assert_eq!(filter_of(&policy, &keys(7)).len(), 10);
        assert_eq!(filter_of(&policy, &keys(1000)).len(), 1251);
        assert_eq!(policy.filter_len(1000), 1251);
    }

    #[test]
    fn empty_filter_matches_nothing() {
        // bloom_test.cc EmptyFilter: a filter built from no keys rejects every key.
        let policy = LevelDbBloomPolicy::new(10);
        let filter = policy.create_filter(&[]);
        assert_eq!(filter, [0, 0, 0, 0, 0, 0, 0, 0, 6]);
        assert!(!policy.may_contain(b"hello", &filter));
        assert!(!policy.may_contain(b"world", &filter));
    }

    #[test]
    fn small_filter_matches_its_keys_only() {
        // bloom_test.cc Small.
        let policy = LevelDbBloomPolicy::new(10);
        let filter = policy.create_filter(&[b"hello", b"world"]);
        assert!(policy.may_contain(b"hello", &filter));
        assert!(policy.may_contain(b"world", &filter));
        assert!(!policy.may_contain(b"x", &filter));
        assert!(!policy.may_contain(b"foo", &filter));
    }

    #[test]
    fn varying_lengths_stay_within_leveldb_bounds() {
        // bloom_test.cc VaryingLengths: no false negatives, size within n·10/8 + 40 bytes, FPR <= 2 %, and at
        // most 2 "mediocre" filters (FPR > 1.25 %) of the larger sizes.
        let policy = LevelDbBloomPolicy::new(10);
        let mut mediocre = 0;
        let mut good = 0;
        let mut length = 1;
        while length <= 10_000 {
            let filter = filter_of(&policy, &keys(length));
            assert!(
                filter.len() <= (length as usize * 10 / 8) + 40,
                "length {length}"
            );
            for key in keys(length) {
                assert!(
                    policy.may_contain(&key, &filter),
                    "length {length}: lost {key:?}"
                );
            }
            let fp = (0..10_000u32)
                .filter(|i| policy.may_contain(&(i + 1_000_000_000).to_le_bytes(), &filter))
                .count();
            let rate = fp as f64 / 10_000.0;
            assert!(rate <= 0.02, "length {length}: FPR {rate}");
            if rate > 0.0125 {
                mediocre += 1;
            } else {
                good += 1;
            }
            length = if length < 10 {
                length + 1
            } else if length < 100 {
                length + 10
            } else if length < 1000 {
                length + 100
            } else {
                length + 1000
            };
        }
        assert!(mediocre * 5 <= good, "{mediocre} mediocre, {good} good");
    }

    #[test]
    fn reserved_or_degenerate_filters_may_match() {
        let policy = LevelDbBloomPolicy::new(10);
        let mut filter = policy.create_filter(&[b"a", b"b"]);
        for k in 31..=255u8 {
            *filter.last_mut().unwrap() = k;
            assert!(policy.may_contain(b"absent", &filter), "k = {k}");
        }
        *filter.last_mut().unwrap() = 0;
        assert!(policy.may_contain(b"absent", &filter), "k = 0 tests no bit");
        for short in [&[][..], &[0], &[6], &[255]] {
            assert!(policy.may_contain(b"absent", short), "{short:?}");
        }
    }
}
