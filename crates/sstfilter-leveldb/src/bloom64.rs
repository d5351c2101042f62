//! [`Bloom64Policy`]: LevelDB's filter bytes (bit array, then the probe count) with sstfilter's 64-bit key
//! hash and the optimal probe count, for stores that keep LevelDB's small per-2 KiB filters.

use sstfilter::sizing::FilterModel;
use sstfilter::{MAX_BITS_PER_KEY, key_hash};

use crate::bloom_bits::{self, BitPlacement, MAX_PROBES};
use crate::error::{LevelDbUsageError, configured};

/// A standard Bloom filter in LevelDB's filter bytes, built on [`key_hash`] (xxh3-64) instead of LevelDB's 32-bit
/// hash, with the optimal probe count `round(ln 2 · bits_per_key)` instead of LevelDB's `floor(0.69 ·
/// bits_per_key)`.
///
/// LevelDB-format tables (rusty-leveldb's, LevelDB's) keep one filter per 2 KiB of data-block offsets, about 35
/// keys for 100-byte values: too small for sstfilter's blocks, whose 36-byte trailer alone is 8 bits per key
/// there. This policy writes exactly LevelDB's number of bytes for the same bits per key (`max(64, n · bits)`
/// bits rounded up to bytes, plus the probe-count byte) and spends them better: at 10 bits/key its measured
/// false-positive rate is about 0.85 times `leveldb.BuiltinBloomFilter2`'s (BENCHMARKS.md, "Reads avoided").
///
/// The bytes (FORMAT.md, appendix "Bloom64"): bit `p` is bit `p % 8` of byte `p / 8` of the array of `m = 8 ·
/// (len − 1)` bits, the last byte is the probe count `k`, and a key with hash `h` owns bits
/// `fastrange64(splitmix64(h, i), m)` for `i` in `1..=k`, the first `k` outputs of splitmix64 seeded with `h`.
/// Independent probes matter on filters this small: double hashing (`h1 + i·h2`, as LevelDB and StandardBloom
/// probe) gives about 10 % more false positives at the same bits, hash and probe count (0.913 % against
/// 0.831 % at 35 keys and 10 bits/key; the unit test `beats_leveldb_bloom_on_small_filters_at_equal_bytes`
/// measures both).
///
/// The filter has no checksum or version of its own (the table's block checksum covers it), so the name
/// [`NAME`](Self::NAME) carries the version, and a reader answers "may match" for anything it cannot use: a
/// filter shorter than 2 bytes, a probe count of 0 or above 30 (the optimum
/// passes it only beyond 43 bits per key, where writers clamp it).
///
/// ```
/// use sstfilter_leveldb::Bloom64Policy;
///
/// let policy = Bloom64Policy::new(10.0);
/// let filter = policy.create_filter(&[b"apple", b"banana"]);
/// assert!(policy.may_contain(b"apple", &filter));
/// assert_eq!(filter.len(), 8 + 1); // the 64-bit minimum and the probe count, as LevelDB
/// assert_eq!(filter.last(), Some(&7)); // round(10 · ln 2)
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bloom64Policy {
    bits_per_key: f64,
    num_probes: u8,
}

impl Bloom64Policy {
    /// The name a table records for this policy. It changes with any change to the bytes' meaning.
    pub const NAME: &'static str = "sstfilter.Bloom64.v1";

    /// A policy spending `bits_per_key` bits per key.
    ///
    /// # Panics
    /// If `bits_per_key` is not a number from 1 to [`MAX_BITS_PER_KEY`]. Use [`try_new`](Self::try_new) for
    /// untrusted configuration.
    #[must_use]
    #[track_caller]
    pub fn new(bits_per_key: f64) -> Self {
        configured(Self::try_new(bits_per_key))
    }

    /// Like [`new`](Self::new), but an error instead of a panic for a value it refuses.
    pub fn try_new(bits_per_key: f64) -> Result<Self, LevelDbUsageError> {
        // The rule every Bloom policy of the core applies: below 1 bit per key a filter is useless.
        if !(1.0..=MAX_BITS_PER_KEY).contains(&bits_per_key) {
            return Err(LevelDbUsageError::BitsPerKey {
                policy: "Bloom64Policy",
                min: 1.0,
                max: MAX_BITS_PER_KEY,
                found: bits_per_key,
            });
        }
        // NOTE: the standard Bloom filter's probe count is always given (`Some`), and at least 1.
        let optimal = FilterModel::StandardBloom.probes(bits_per_key).unwrap_or(1);
        let probes = optimal.min(u32::from(MAX_PROBES));
        Ok(Bloom64Policy {
            bits_per_key,
            // NOTE: `probes` is 1..=30, so the conversion cannot fail.
            num_probes: u8::try_from(probes).unwrap_or(MAX_PROBES),
        })
    }

    /// The configured bits per key.
    #[must_use]
    pub const fn bits_per_key(&self) -> f64 {
        self.bits_per_key
    }
}

bloom_bits::shared_methods!(
    Bloom64Policy,
    "The filter for `keys`, the size LevelDB's would have at the same bits per key."
);

impl BitPlacement for Bloom64Policy {
    fn probe_count(&self) -> u8 {
        self.num_probes
    }

    fn wanted_bits(&self, num_keys: usize) -> u64 {
        // Saturating float-to-integer conversion: an absurd product gives an absurd (not wrapped) size, which
        // the allocation then refuses, as it would refuse the keys themselves.
        (num_keys as f64 * self.bits_per_key).ceil() as u64
    }

    /// The first `num_probes` outputs of splitmix64 seeded with the key's hash, each mapped onto the bits.
    fn positions(key: &[u8], num_probes: u8, num_bits: u64) -> impl Iterator<Item = u64> {
        let h = key_hash(key).get();
        (1..=u64::from(num_probes)).map(move |i| fastrange64(splitmix64(h, i), num_bits))
    }
}

/// Maps a 64-bit hash uniformly onto `0..n` without a division: the high half of the 128-bit product (Lemire's
/// "fastrange", widened). Returns 0 when `n == 0`.
#[inline]
const fn fastrange64(hash: u64, n: u64) -> u64 {
    ((hash as u128 * n as u128) >> 64) as u64
}

/// The `i`-th output of splitmix64 seeded with `seed` (Steele, Lea & Flood, 2014): the finalizer of
/// `seed + i·0x9E3779B97F4A7C15`. For a fixed seed, distinct `i` give distinct inputs and the finalizer is a
/// bijection, so the outputs never repeat; they are statistically independent enough to serve as probe hashes.
#[inline]
const fn splitmix64(seed: u64, i: u64) -> u64 {
    let mut z = seed.wrapping_add(i.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::LevelDbBloomPolicy;
    use proptest::prelude::*;
    use sstfilter::StandardBloomParams;

    fn keys(prefix: &str, n: usize) -> Vec<Vec<u8>> {
        (0..n)
            .map(|i| format!("{prefix}{i:08}").into_bytes())
            .collect()
    }

    fn refs(keys: &[Vec<u8>]) -> Vec<&[u8]> {
        keys.iter().map(Vec::as_slice).collect()
    }

    #[test]
    fn sizes_match_leveldb_at_the_same_bits_per_key() {
        let ours = Bloom64Policy::new(10.0);
        let leveldb = LevelDbBloomPolicy::new(10);
        for n in [0, 1, 6, 7, 35, 100, 1000] {
            assert_eq!(ours.filter_len(n), leveldb.filter_len(n), "{n} keys");
            let k = keys("k", n);
            assert_eq!(ours.create_filter(&refs(&k)).len(), ours.filter_len(n));
        }
        assert_eq!(Bloom64Policy::new(10.0).num_probes(), 7);
        assert_eq!(Bloom64Policy::new(1.0).num_probes(), 1);
        assert_eq!(Bloom64Policy::new(100.0).num_probes(), MAX_PROBES);
        for bad in [0.5, 100.5, f64::NAN] {
            assert!(Bloom64Policy::try_new(bad).is_err(), "{bad}");
        }
    }

    /// Golden bytes: a change here is a change of format, which needs a new [`Bloom64Policy::NAME`].
    #[test]
    fn golden_filter() {
        let filter =
            Bloom64Policy::new(10.0).create_filter(&[b"apple", b"banana", b"", b"hello world"]);
        let hex: String = filter.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(hex, GOLDEN_HEX);
    }

    const GOLDEN_HEX: &str = "1482488926c8255d07";

    #[test]
    fn unusable_filters_answer_may_match() {
        let policy = Bloom64Policy::new(10.0);
        let mut filter = policy.create_filter(&[b"a", b"b"]);
        assert!(!filter.iter().take(8).all(|&b| b == 0xff));
        for probes in [0u8, MAX_PROBES + 1, u8::MAX] {
            if let Some(last) = filter.last_mut() {
                *last = probes;
            }
            assert!(policy.may_contain(b"absent", &filter), "{probes} probes");
        }
        assert!(policy.may_contain(b"absent", &[]));
        assert!(policy.may_contain(b"absent", &[7]));
    }

    /// Bloom64's sizes and hash with double hashing (`h + i·rotl(h, 32)`, StandardBloom's probing) instead of
    /// independent probes: the design alternative the test below measures.
    struct DoubleHashed(Bloom64Policy);

    impl BitPlacement for DoubleHashed {
        fn probe_count(&self) -> u8 {
            self.0.num_probes
        }
        fn wanted_bits(&self, num_keys: usize) -> u64 {
            self.0.wanted_bits(num_keys)
        }
        fn positions(key: &[u8], num_probes: u8, num_bits: u64) -> impl Iterator<Item = u64> {
            StandardBloomParams::new(num_bits, u32::from(num_probes))
                .expect("a valid test shape")
                .probes(key_hash(key))
        }
    }

    /// The point of the policy: on LevelDB-sized filters (35 keys, 352 bits), a lower false-positive rate than
    /// LevelDB's at the same bytes; the issue's target is at most 0.9 times LevelDB's rate. And the reason for
    /// independent probes: double hashing, at the same bits, hash and probe count, does measurably worse.
    /// `cargo test --release -p sstfilter-leveldb --lib beats_leveldb -- --nocapture` prints the three rates.
    #[test]
    fn beats_leveldb_bloom_on_small_filters_at_equal_bytes() {
        let ours = Bloom64Policy::new(10.0);
        let leveldb = LevelDbBloomPolicy::new(10);
        let double = DoubleHashed(ours);
        let mut false_positives = [0u64; 3];
        let mut queries = 0u64;
        for filter_no in 0..2000 {
            let present = keys(&format!("usr:{filter_no:06}:"), 35);
            let a = ours.create_filter(&refs(&present));
            let b = leveldb.create_filter(&refs(&present));
            let mut c = Vec::new();
            bloom_bits::append_filter(&double, refs(&present), &mut c);
            assert_eq!((a.len(), c.len()), (b.len(), b.len()));
            for key in &present {
                assert!(ours.may_contain(key, &a));
            }
            for absent in keys(&format!("abs:{filter_no:06}:"), 1000) {
                false_positives[0] += u64::from(ours.may_contain(&absent, &a));
                false_positives[1] += u64::from(leveldb.may_contain(&absent, &b));
                false_positives[2] +=
                    u64::from(bloom_bits::may_contain::<DoubleHashed>(&absent, &c));
                queries += 1;
            }
        }
        let [ours_rate, leveldb_rate, double_rate] =
            false_positives.map(|fp| fp as f64 / queries as f64);
        eprintln!(
            "Bloom64 {ours_rate:.5}, LevelDB {leveldb_rate:.5} ({:.3}x), Bloom64 with double hashing {double_rate:.5}",
            ours_rate / leveldb_rate
        );
        assert!(
            ours_rate <= 0.9 * leveldb_rate,
            "Bloom64 {ours_rate:.5} against LevelDB {leveldb_rate:.5}"
        );
        assert!(
            ours_rate <= 0.95 * double_rate,
            "independent probes {ours_rate:.5} against double hashing {double_rate:.5}"
        );
    }

    proptest! {
        #[test]
        fn every_key_is_found(
            keys in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..24), 0..300),
            bits in 1.0f64..40.0,
        ) {
            let policy = Bloom64Policy::new(bits);
            let filter = policy.create_filter(&refs(&keys));
            for key in &keys {
                prop_assert!(policy.may_contain(key, &filter));
            }
        }

        #[test]
        fn any_bytes_are_answered_without_panic(filter in proptest::collection::vec(any::<u8>(), 0..64)) {
            let _ = Bloom64Policy::new(10.0).may_contain(b"key", &filter);
        }
    }
}
