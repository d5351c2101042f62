//! StandardBloom: the classic Bloom filter of the literature (one bit array, `k` probes anywhere in it).
//!
//! This is a block kind of its own that [`StandardBloomPolicy`](crate::StandardBloomPolicy) builds, and the
//! serialised form of the in-memory `BloomFilter` of the `sstfilter-memory` crate, which sets its bits with
//! [`StandardBloomParams::probes`] and frames them with [`StandardBloomParams::write_block`] (`builder.rs`).
//! Compared with BlockedBloom it spends `k` cache misses per query instead of one, and in exchange reaches the
//! textbook false-positive rate `(1 - e^(-kn/m))^k` (0.82 % at 10 bits/key against BlockedBloom's 0.96 %).
//!
//! Probes are derived from the one 64-bit key hash `h` as in Guava's `BloomFilter` (Kirsch & Mitzenmacher's
//! double hashing, `h1 + i·h2`), widened to 64 bits: `h1 = h`, `h2 = h` rotated by 32 bits (so the two halves
//! of the hash play the roles of Guava's two 32-bit hashes), and probe `i` is bit
//! `fastrange64(h1 + i·h2 mod 2^64, m)` of the `m`-bit array. Fastrange needs no division and uses every bit of
//! the sum, so `m` can be any size, not only a power of two.
//!
//! Bit `p` is bit `p % 8` of payload byte `p / 8`, which is also bit `p % 64` of little-endian 64-bit word
//! `p / 64`: an in-memory filter keeps `u64` words, which `write_block` serialises with `to_le_bytes`.

mod builder;
pub(crate) mod policy;

use super::{KindParams, Queries, check_reserved};
use crate::error::{Error, Result};
use crate::format::PARAMS_LEN;
use crate::hash::KeyHash;
use crate::le::LeReader;
use crate::math::fastrange64;
use crate::prefetch::prefetch;
use crate::sizing::rates::standard_bloom_fpr;
use crate::tag::FilterKind;

/// The most 64-bit words a block may have (FORMAT.md 4.4): the bit count rounded up to whole words must fit in the
/// u64 the parameter is stored in. A format limit, the same on every platform, so that whether a block is valid
/// never depends on the reader's word size: a block that a platform cannot hold in memory never reaches its reader.
pub(crate) const FORMAT_MAX_WORDS: u64 = u64::MAX / 64;

/// The most words a writer on this platform may choose: the format's limit, or fewer where a `Vec<u64>` cannot
/// hold that many (`isize::MAX` bytes), so that a filter's words can always be allocated and counted in a `usize`.
pub(crate) const MAX_WORDS: u64 = {
    let by_memory = isize::MAX as u64 / 8;
    if FORMAT_MAX_WORDS < by_memory {
        FORMAT_MAX_WORDS
    } else {
        by_memory
    }
};

/// The parameters of a StandardBloom filter: its number of bits `m` and of probes per key `k`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct StandardBloomParams {
    num_bits: u64,
    num_probes: u8,
}

impl StandardBloomParams {
    /// The largest probe count the format allows (the parameter is one byte). The optimum passes 24 only beyond
    /// about 35 bits per key.
    pub const MAX_PROBES: u32 = 255;

    /// Parameters for an explicit size and probe count.
    ///
    /// Returns [`Error::BadParams`] when `num_bits` is 0, beyond the format's limit (`2^64 - 64`) or larger than
    /// this platform can allocate, or `num_probes` is not in `1..=Self::MAX_PROBES`.
    pub fn new(num_bits: u64, num_probes: u32) -> Result<Self> {
        let bad = |field, value| Error::BadParams {
            kind: Some(FilterKind::StandardBloom),
            field,
            found: value,
        };
        let params = Self::checked(num_bits, num_probes)?;
        if num_bits.div_ceil(64) > MAX_WORDS {
            return Err(bad("num_bits", num_bits));
        }
        Ok(params)
    }

    /// Parameters that the format allows (FORMAT.md 4.4), whether or not this platform could allocate them: what
    /// a reader checks, for whom the payload, already in memory, is proof enough that the words fit.
    fn checked(num_bits: u64, num_probes: u32) -> Result<Self> {
        let bad = |field, value| Error::BadParams {
            kind: Some(FilterKind::StandardBloom),
            field,
            found: value,
        };
        if num_bits == 0 || num_bits.div_ceil(64) > FORMAT_MAX_WORDS {
            return Err(bad("num_bits", num_bits));
        }
        let num_probes = u8::try_from(num_probes)
            .ok()
            .filter(|&k| k != 0)
            .ok_or_else(|| bad("num_probes", u64::from(num_probes)))?;
        Ok(StandardBloomParams {
            num_bits,
            num_probes,
        })
    }

    /// Parameters with the size clamped into `1..=64·MAX_WORDS` bits and the probe count into `1..=MAX_PROBES`, for
    /// writers that computed them (and test that they are in range).
    pub(crate) const fn clamped(num_bits: u64, num_probes: u32) -> Self {
        let num_bits = if num_bits == 0 {
            1
        } else if num_bits > MAX_WORDS * 64 {
            MAX_WORDS * 64
        } else {
            num_bits
        };
        let num_probes = if num_probes == 0 {
            1
        } else if num_probes > Self::MAX_PROBES {
            Self::MAX_PROBES
        } else {
            num_probes
        };
        StandardBloomParams {
            num_bits,
            num_probes: num_probes as u8, // NOTE: at most MAX_PROBES = 255
        }
    }

    /// Number of bits `m` that probes address.
    #[must_use]
    pub const fn num_bits(&self) -> u64 {
        self.num_bits
    }

    /// Number of probes `k` per key.
    #[must_use]
    pub const fn num_probes(&self) -> u32 {
        self.num_probes as u32
    }

    /// Number of little-endian 64-bit words of the bit array: `ceil(m / 64)`.
    #[must_use]
    pub const fn num_words(&self) -> usize {
        // Fits: `new` keeps the word count within `isize::MAX / 8`, and `decode` equal to a payload's length / 8.
        self.num_bits.div_ceil(64) as usize
    }

    /// Length of the payload in bytes: the whole words, `8 · ceil(m / 64)`.
    #[must_use]
    pub(crate) const fn payload_len(&self) -> usize {
        self.num_words() * 8
    }

    /// The theoretical false-positive rate with `num_keys` keys: `(1 - e^(-kn/m))^k`; 0 for an empty filter.
    #[must_use]
    pub(crate) fn expected_fpr(&self, num_keys: u64) -> f64 {
        standard_bloom_fpr(self.num_bits as f64, num_keys as f64, self.num_probes())
    }

    /// The bit positions a key with hash `hash` owns, in probe order (positions may repeat): each is below
    /// [`num_bits`](Self::num_bits), and position `p` is bit `p % 64` of the little-endian 64-bit word `p / 64` of
    /// the payload.
    ///
    /// Public so that a filter that keeps its bit array in memory and inserts into it (the `sstfilter-memory`
    /// crate's `BloomFilter`) sets and tests exactly the bits a block of these parameters holds, from this one
    /// home of the probe formula; [`write_block`](Self::write_block) then makes its words a block.
    #[inline]
    pub fn probes(&self, hash: KeyHash) -> impl ExactSizeIterator<Item = u64> + use<> {
        let h = hash.get();
        Probes {
            next: h,
            step: h.rotate_left(32),
            num_bits: self.num_bits,
            left: self.num_probes,
        }
    }

    /// The trailer's parameter bytes: the probe count, 7 reserved zero bytes, the bit count.
    pub(crate) fn encode(&self) -> [u8; PARAMS_LEN] {
        let mut out = [0u8; PARAMS_LEN];
        out[0] = self.num_probes; // NOTE: bytes 1..8 are reserved and zero.
        out[8..].copy_from_slice(&self.num_bits.to_le_bytes());
        out
    }

    /// Decodes and validates the parameters of a block whose payload is `payload_len` bytes. Everything a probe
    /// relies on is checked here, once: a probe count in range, and a payload that holds every addressed bit.
    /// The key count is informational for this kind (any value is valid).
    pub(crate) fn decode(params: &[u8; PARAMS_LEN], payload_len: usize) -> Result<Self> {
        let mut r = LeReader::new(params);
        let num_probes = r.u8().unwrap_or_default();
        let reserved = r.array::<7>().unwrap_or_default();
        let num_bits = r.u64().unwrap_or_default();
        check_reserved(FilterKind::StandardBloom, &reserved, 1)?;
        // The format's limit, not this platform's: a payload of the expected length is in memory already.
        let params = StandardBloomParams::checked(num_bits, u32::from(num_probes))?;
        // Compared in u64, where the expected length cannot overflow (it is at most 2^61 - 8).
        let expected = num_bits.div_ceil(64) * 8;
        if expected != payload_len as u64 {
            return Err(Error::LengthMismatch {
                kind: FilterKind::StandardBloom,
                expected,
                found: payload_len as u64,
            });
        }
        Ok(params)
    }
}

/// The bit positions of one key: `fastrange64(h + i·rotl(h, 32), m)` for `i = 0..k`.
#[derive(Debug, Clone)]
struct Probes {
    next: u64,
    step: u64,
    num_bits: u64,
    left: u8,
}

impl Iterator for Probes {
    type Item = u64;

    #[inline(always)]
    fn next(&mut self) -> Option<u64> {
        self.left = self.left.checked_sub(1)?;
        let pos = fastrange64(self.next, self.num_bits);
        self.next = self.next.wrapping_add(self.step);
        Some(pos)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (usize::from(self.left), Some(usize::from(self.left)))
    }
}

impl ExactSizeIterator for Probes {}

/// Builds the payload for the hashes in `runs` into `out` (appending `params.payload_len()` bytes).
pub(crate) fn build<'a>(
    params: &StandardBloomParams,
    runs: impl Iterator<Item = &'a [u64]>,
    out: &mut Vec<u8>,
) {
    let start = out.len();
    out.resize(start + params.payload_len(), 0);
    let payload = out.get_mut(start..).unwrap_or_default();
    for run in runs {
        for &h in run {
            for pos in params.probes(KeyHash::from_raw(h)) {
                if let Some(byte) = payload.get_mut((pos >> 3) as usize) {
                    *byte |= 1 << (pos & 7);
                }
            }
        }
    }
}

/// The queries of every StandardBloom filter (see [`Query`](super::Query)): its probe count is not worth a constant, the
/// probes being spread over the whole array anyway.
pub(crate) const QUERIES: Queries = Queries {
    single: query,
    prefetch: prefetch_key,
    batch: query_batch,
};

/// Whether a key with hash `h` may be in the filter whose payload is `block`, with `params` validated against it
/// by [`StandardBloomParams::decode`]. A position outside `block` (impossible after validation) answers "may
/// contain".
fn query(params: &KindParams, block: &[u8], h: u64) -> bool {
    let KindParams::StandardBloom(params) = params else {
        return true;
    };
    may_contain(block, params, h)
}

/// [`query`] with the parameters unwrapped.
fn may_contain(block: &[u8], params: &StandardBloomParams, h: u64) -> bool {
    params.probes(KeyHash::from_raw(h)).all(|pos| {
        block
            .get((pos >> 3) as usize)
            .is_none_or(|byte| byte >> (pos & 7) & 1 == 1)
    })
}

/// Starts fetching every line a key with hash `h` probes, for a batch: see [`Prefetch`](super::Prefetch).
fn prefetch_key(params: &KindParams, block: &[u8], h: u64) {
    if let KindParams::StandardBloom(params) = params {
        for pos in params.probes(KeyHash::from_raw(h)) {
            prefetch(block, (pos >> 3) as usize);
        }
    }
}

/// [`query`] for every hash of `hashes`, into the matching slot of `out` (up to the shorter of the two), whose
/// probed lines [`prefetch_key`] has started fetching, so that the misses of all of them overlap.
fn query_batch(params: &KindParams, block: &[u8], hashes: &[u64], out: &mut [bool]) {
    let KindParams::StandardBloom(params) = params else {
        out.fill(true);
        return;
    };
    for (answer, &h) in out.iter_mut().zip(hashes) {
        *answer = may_contain(block, params, h);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn params_round_trip_and_validation() {
        let p = StandardBloomParams::new(1000, 7).unwrap();
        assert_eq!(p.num_words(), 16);
        assert_eq!(p.payload_len(), 128);
        let bytes = p.encode();
        assert_eq!(bytes[0], 7);
        assert_eq!(&bytes[1..8], &[0; 7]);
        assert_eq!(u64::from_le_bytes(bytes[8..].try_into().unwrap()), 1000);
        assert_eq!(StandardBloomParams::decode(&bytes, 128), Ok(p));

        for len in [0, 120, 127, 129, 136] {
            assert_eq!(
                StandardBloomParams::decode(&bytes, len),
                Err(Error::LengthMismatch {
                    kind: FilterKind::StandardBloom,
                    expected: 128,
                    found: len as u64
                })
            );
        }
        let mut reserved = bytes;
        reserved[7] = 1;
        assert!(matches!(
            StandardBloomParams::decode(&reserved, 128),
            Err(Error::BadParams {
                field: "reserved parameter byte",
                found: 7,
                ..
            })
        ));
        let mut zero_k = bytes;
        zero_k[0] = 0;
        assert!(matches!(
            StandardBloomParams::decode(&zero_k, 128),
            Err(Error::BadParams {
                field: "num_probes",
                ..
            })
        ));
        let mut zero_m = bytes;
        zero_m[8..].fill(0);
        assert!(matches!(
            StandardBloomParams::decode(&zero_m, 0),
            Err(Error::BadParams {
                field: "num_bits",
                ..
            })
        ));
        // The largest bit count: the expected length is computed without overflow and does not match.
        let mut huge = bytes;
        huge[8..].fill(0xff);
        assert!(StandardBloomParams::decode(&huge, 128).is_err());

        assert!(StandardBloomParams::new(64, 0).is_err());
        assert!(StandardBloomParams::new(64, StandardBloomParams::MAX_PROBES + 1).is_err());
        assert!(StandardBloomParams::new(64, StandardBloomParams::MAX_PROBES).is_ok());
        assert!(StandardBloomParams::new(u64::MAX, 1).is_err());
    }

    #[test]
    fn the_size_limit_is_the_formats_on_every_platform() {
        // FORMAT.md 4.4: m up to 2^64 - 64 (2^58 - 1 words). At the limit the parameters are valid and only the
        // payload length can be wrong; one bit more is refused as `num_bits`, whatever the platform.
        assert_eq!(FORMAT_MAX_WORDS, (1 << 58) - 1);
        let params = |m: u64| {
            let mut bytes = [0u8; PARAMS_LEN];
            bytes[0] = 7;
            bytes[8..].copy_from_slice(&m.to_le_bytes());
            bytes
        };
        assert_eq!(
            StandardBloomParams::decode(&params(u64::MAX - 63), 128),
            Err(Error::LengthMismatch {
                kind: FilterKind::StandardBloom,
                expected: (1 << 61) - 8,
                found: 128
            })
        );
        assert!(matches!(
            StandardBloomParams::decode(&params(u64::MAX - 62), 128),
            Err(Error::BadParams {
                field: "num_bits",
                found,
                ..
            }) if found == u64::MAX - 62
        ));
    }

    #[test]
    fn probes_follow_the_documented_formula() {
        let p = StandardBloomParams::new(1_000_003, 5).unwrap();
        let h = 0x0123_4567_89ab_cdef_u64;
        let step = 0x89ab_cdef_0123_4567_u64;
        let want: Vec<u64> = (0..5u64)
            .map(|i| fastrange64(h.wrapping_add(i.wrapping_mul(step)), 1_000_003))
            .collect();
        let probes = |h| p.probes(KeyHash::from_raw(h));
        assert_eq!(probes(h).collect::<Vec<_>>(), want);
        assert_eq!(probes(h).len(), 5);
        assert!(probes(u64::MAX).all(|pos| pos < 1_000_003));
    }

    #[test]
    fn built_payload_answers_for_its_keys() {
        let p = StandardBloomParams::new(5056, 7).unwrap(); // 500 keys at about 10 bits each
        let hashes: Vec<u64> = (0..500u64)
            .map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15))
            .collect();
        let mut block = Vec::new();
        build(&p, [&hashes[..]].into_iter(), &mut block);
        assert_eq!(block.len(), p.payload_len());
        assert!(hashes.iter().all(|&h| may_contain(&block, &p, h)));
        let mut out = vec![false; hashes.len()];
        query_batch(&KindParams::StandardBloom(p), &block, &hashes, &mut out);
        assert!(out.iter().all(|&b| b));
        // A block too short for its parameters answers "may contain" rather than reading out of bounds.
        assert!(may_contain(&[], &p, 12345));
    }
}
