//! What the side-by-side binaries share with the C++ bench beside them (`filter_bench.cc`): its keys, and our
//! policy for each of its filter names; and what the tests against RocksDB share ([`checks`], [`sst`]).

pub mod checks;
pub mod sst;

use sstfilter::{BlockedBloomPolicy, FilterPolicy, RibbonPolicy, StandardBloomPolicy};

/// Key length, as in the C++ bench.
pub const KEY_LEN: usize = 16;

/// splitmix64 as the C++ bench computes it (the increment before the finalizer).
pub fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Appends `keys` in the input format of the oracles the tests run (`rocksdb_oracle.cc`, `rocksdb9_oracle.py`): u32
/// count, then u32 length and bytes per key (little-endian).
pub fn put_keys(input: &mut Vec<u8>, keys: &[Vec<u8>]) {
    input.extend_from_slice(&(keys.len() as u32).to_le_bytes());
    for k in keys {
        input.extend_from_slice(&(k.len() as u32).to_le_bytes());
        input.extend_from_slice(k);
    }
}

/// Key `idx`: `"key"` + `%09llu(idx)` + 4 hex digits from the low nibbles of `splitmix64(idx)`.
fn make_key(idx: u64, out: &mut [u8]) {
    out[..3].copy_from_slice(b"key");
    let mut rest = idx;
    for digit in out[3..12].iter_mut().rev() {
        *digit = b'0' + (rest % 10) as u8;
        rest /= 10;
    }
    let h = splitmix64(idx);
    for (i, byte) in out[12..KEY_LEN].iter_mut().enumerate() {
        *byte = b"0123456789abcdef"[((h >> (4 * i)) & 15) as usize];
    }
}

/// Keys `first .. first + count`, back to back.
pub fn keys(first: u64, count: usize) -> Vec<u8> {
    let mut buf = vec![0u8; count * KEY_LEN];
    for (i, key) in buf.chunks_exact_mut(KEY_LEN).enumerate() {
        make_key(first + i as u64, key);
    }
    buf
}

/// Our policy for a kind name: `blocked` is `BlockedBloomPolicy::new(bits_per_key).unwrap()` (against RocksDB's
/// FastLocalBloom), `ribbon` is `RibbonPolicy::new(bits_per_key).unwrap()`, Ribbon at BlockedBloom's rate at that many
/// bits/key (against RocksDB's Standard128Ribbon, which targets its Bloom filter's rate the same way), `standard`
/// is `StandardBloomPolicy::new(bits_per_key).unwrap()` (against LevelDB's Bloom filter).
pub fn policy(kind: &str, bits_per_key: f64) -> Option<Box<dyn FilterPolicy>> {
    match kind {
        "blocked" => Some(Box::new(BlockedBloomPolicy::new(bits_per_key).unwrap())),
        "ribbon" => Some(Box::new(RibbonPolicy::new(bits_per_key).unwrap())),
        "standard" => Some(Box::new(StandardBloomPolicy::new(bits_per_key).unwrap())),
        _ => None,
    }
}
