//! The one 64-bit hash every filter kind derives its probes from.
//!
//! The hash is part of the on-disk format: a block built today must answer for the same keys on every platform
//! and every future version. It is therefore pinned: xxh3-64 with seed 0 (xxhash-rust), checked by golden values
//! in the tests below. Changing it would be a new format version.

use xxhash_rust::xxh3::xxh3_64;

/// The 64-bit hash of a key, as used by every filter kind.
///
/// A newtype so that a caller can hash a key once and query every table of every level with the same value
/// ([`FilterBlock::may_contain_hash`](crate::FilterBlock::may_contain_hash)), and so that a raw `u64` that is not
/// a key hash cannot be passed by accident: [`key_hash`] makes one from a key, and
/// [`from_raw`](Self::from_raw) from a value that was one (kept, sent over the wire) and says so.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct KeyHash(u64);

impl KeyHash {
    /// A hash that [`key_hash`] computed and the caller kept as a raw `u64` (stored beside a key, sent to another
    /// process). A value that is not `key_hash` of the key asked about can make a filter hide that key.
    #[must_use]
    #[inline]
    pub const fn from_raw(raw: u64) -> Self {
        KeyHash(raw)
    }

    /// The raw 64-bit value.
    #[must_use]
    #[inline]
    pub const fn get(self) -> u64 {
        self.0
    }
}

impl From<KeyHash> for u64 {
    #[inline]
    fn from(h: KeyHash) -> u64 {
        h.0
    }
}

/// Hashes a key with the crate's pinned hash function (xxh3-64, seed 0).
#[must_use]
#[inline]
pub fn key_hash(key: &[u8]) -> KeyHash {
    KeyHash(xxh3_64(key))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Golden values: if any of these change, every block ever written becomes unreadable (false negatives).
    /// They were computed with the xxHash C reference library (0.8.4, through Python's `xxhash` 4.1.0), not
    /// with the crate under test, and cover every length class of xxh3's short-input paths (0, 1–3, 4–8,
    /// 9–16, 17–128, 129–240) and its long-input loop.
    #[test]
    fn golden_hash_values_are_pinned() {
        let strings: [(&[u8], u64); 9] = [
            (b"", 0x2d06800538d394c2),
            (b"a", 0xe6c632b61e964e1f),
            (b"abc", 0x78af5f94892f3950),
            (b"usr:", 0x6517465c16242a8c),
            (b"usr:0001", 0xc56e7d0476fc8554),
            (b"usr:00001", 0x5617ca4196634e37),
            (b"usr:000000000001", 0x84037771797859f1),
            (b"usr:000000000001x", 0xc6003ed3b2bb0265),
            (b"usr:000000000001xxxxxxxx", 0xa3b78a5c9c7f279f),
        ];
        for (key, want) in strings {
            assert_eq!(key_hash(key).get(), want, "hash of {key:?}");
        }
        // Longer inputs: `len` bytes of the pattern (i·7 + 3) mod 256.
        let patterns: [(usize, u64); 6] = [
            (64, 0x287eb1fa9e4be2c1),
            (128, 0x67425a03650261bf),
            (129, 0xc664bf3311c6abc4),
            (240, 0x64556dc6b462a6cf),
            (241, 0x8beadd3a8874fe17),
            (1024, 0x9b81661c641c72b1),
        ];
        for (len, want) in patterns {
            let key: Vec<u8> = (0..len).map(|i| ((i * 7 + 3) % 256) as u8).collect();
            assert_eq!(key_hash(&key).get(), want, "hash of {len} pattern bytes");
        }
    }
}
