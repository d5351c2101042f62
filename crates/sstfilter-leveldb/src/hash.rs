//! LevelDB's 32-bit hash (`util/hash.cc`), the one its Bloom filter derives every probe from.
//!
//! A Murmur-like hash: 4-byte little-endian words are folded in with a multiply and a shift, and the 1–3 left-over
//! bytes are added in one step. It is part of LevelDB's on-disk format, so it is reproduced exactly, including
//! the wrapping 32-bit arithmetic and the length term of the initial state (`n · m` truncated to 32 bits).

/// The multiplier of LevelDB's hash (`m` in `util/hash.cc`).
const MUL: u32 = 0xc6a4_a793;

/// The final shift applied after the left-over bytes (`r` in `util/hash.cc`).
const TAIL_SHIFT: u32 = 24;

/// LevelDB's `Hash(data, n, seed)`.
#[must_use]
pub fn leveldb_hash(data: &[u8], seed: u32) -> u32 {
    murmur1(data, seed, u32::from)
}

/// LevelDB's hash with the 1–3 left-over bytes sign-extended, as older LevelDB releases computed it where `char`
/// is signed and as RocksDB's copy still does (`rocksdb::Hash`, which RocksDB's legacy Bloom filter is built on):
/// the two differ only for inputs whose length is not a multiple of 4 and whose tail holds a byte of 0x80 or
/// more. Both are part of a file format, so both are kept.
#[must_use]
pub fn leveldb_hash_sign_extended(data: &[u8], seed: u32) -> u32 {
    murmur1(data, seed, |b| b as i8 as u32)
}

/// The hash of LevelDB's `util/hash.cc`, with `tail` widening each of the 1–3 left-over bytes.
fn murmur1(data: &[u8], seed: u32, tail: fn(u8) -> u32) -> u32 {
    // LevelDB computes `seed ^ (n * m)` in 32-bit arithmetic: only the low 32 bits of the length matter, so the
    // truncating cast is exactly its behaviour.
    let mut h = seed ^ (data.len() as u32).wrapping_mul(MUL);
    let (words, rest) = data.as_chunks::<4>();
    for word in words {
        h = h.wrapping_add(u32::from_le_bytes(*word)).wrapping_mul(MUL);
        h ^= h >> 16;
    }
    if !rest.is_empty() {
        // The C++ switch falls through from case 3 to case 1: byte i of the tail is added shifted by 8·i.
        for (i, &b) in rest.iter().enumerate() {
            h = h.wrapping_add(tail(b) << (8 * i));
        }
        h = h.wrapping_mul(MUL);
        h ^= h >> TAIL_SHIFT;
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    /// LevelDB's own `util/hash_test.cc` (`SignedUnsignedIssue`): the tail bytes are unsigned (an old LevelDB
    /// sign-extended bytes >= 0x80), and a 48-byte input covers the word loop.
    #[test]
    fn matches_leveldb_hash_test_vectors() {
        const SEED: u32 = 0xbc9f_1d34;
        assert_eq!(leveldb_hash(&[], SEED), 0xbc9f_1d34);
        assert_eq!(leveldb_hash(&[0x62], SEED), 0xef13_45c4);
        assert_eq!(leveldb_hash(&[0xc3, 0x97], SEED), 0x5b66_3814);
        assert_eq!(leveldb_hash(&[0xe2, 0x99, 0xa5], SEED), 0x323c_078f);
        assert_eq!(leveldb_hash(&[0xe1, 0x80, 0xb9, 0x32], SEED), 0xed21_633a);
        let data5: [u8; 48] = [
            0x01, 0xc0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, //
            0x00, 0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04, 0x00, //
            0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x18, 0x28, 0x00, 0x00, 0x00, //
            0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, //
        ];
        assert_eq!(leveldb_hash(&data5, 0x1234_5678), 0xf333_dabb);
    }

    /// The sign-extended tail changes only a tail byte of 0x80 or more: the words, and small tail bytes, are
    /// hashed alike.
    #[test]
    fn the_sign_extended_hash_differs_only_in_high_tail_bytes() {
        const SEED: u32 = 0xbc9f_1d34;
        for data in [
            &b""[..],
            b"abcd",
            b"a",
            b"abc",
            b"abcdefg",
            &[0x80, 0, 0, 0xff],
        ] {
            assert_eq!(
                leveldb_hash_sign_extended(data, SEED),
                leveldb_hash(data, SEED),
                "{data:?}"
            );
        }
        for data in [
            &[0x80u8][..],
            &[0xc3, 0x97],
            &[0xe2, 0x99, 0xa5],
            &[1, 2, 3, 4, 0xff],
        ] {
            assert_ne!(
                leveldb_hash_sign_extended(data, SEED),
                leveldb_hash(data, SEED),
                "{data:?}"
            );
        }
    }
}
