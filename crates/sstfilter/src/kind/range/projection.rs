//! Byte strings to integers: the order-preserving projection of keys and bounds, and Grafite's locality-preserving
//! hash of the projected values.
//!
//! Every key of a block starts with the block's common prefix `P`. A byte string `x` that starts with `P` projects
//! to the 8 bytes after `P`, read big-endian and zero-padded: `v(x) = BE64(x[|P|..|P|+8] ‖ 0…)`. For two keys
//! `a ≤ b`, `v(a) ≤ v(b)` (big-endian order of the padded bytes is their lexicographic order, and cutting or padding
//! never reorders), so a key inside a byte-string range projects inside the projected range. A string that does not
//! start with `P` lies entirely below or above every key.

use core::cmp::Ordering;

use crate::math::{fastrange64, splitmix64};

/// Where a byte string falls relative to the keys of a block whose common prefix is `P`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Projected {
    /// Below every key: a proper prefix of `P`, or smaller than `P` at the first byte where they differ.
    Below,
    /// Starts with `P`; the projected value.
    At(u64),
    /// Above every key: greater than `P` at the first byte where they differ.
    Above,
}

/// The projection of `x` for the common prefix `prefix` (module docs).
#[inline]
pub(crate) fn project(prefix: &[u8], x: &[u8]) -> Projected {
    let shared = x.len().min(prefix.len());
    match x.get(..shared).cmp(&prefix.get(..shared)) {
        Ordering::Less => Projected::Below,
        Ordering::Greater => Projected::Above,
        Ordering::Equal if x.len() < prefix.len() => Projected::Below,
        Ordering::Equal => Projected::At(suffix_value(x.get(prefix.len()..).unwrap_or_default())),
    }
}

/// The first 8 bytes of `suffix`, big-endian, zero-padded on the right.
#[inline]
// The one big-endian read of the crate, on purpose: it makes numeric order lexicographic order. It reads a key,
// not stored bytes (the block stores values little-endian).
#[allow(clippy::big_endian_bytes)]
pub(crate) fn suffix_value(suffix: &[u8]) -> u64 {
    let mut bytes = [0u8; 8];
    for (b, s) in bytes.iter_mut().zip(suffix) {
        *b = *s;
    }
    u64::from_be_bytes(bytes)
}

/// Grafite's hash (Costa, Ferragina & Vinciguerra, SIGMOD 2024) of a projected value `v` into `0..universe`:
/// `(q(v >> range_log2) + (v mod 2^range_log2)) mod universe`, with `q(i) = fastrange64(mix(i + φ), universe)`.
/// Values in one aligned run of `2^range_log2` keep their distances (a range inside the run is a run of codes),
/// and runs land at independent random offsets. Requires `universe ≥ 1`.
#[inline]
pub(crate) fn code(v: u64, range_log2: u32, universe: u64) -> u64 {
    let offset = v & low_mask(range_log2);
    wrap(run_base(v >> range_log2, universe), offset, universe)
}

/// `q(run)`: where the run of values `run · 2^range_log2 ..` starts among the codes.
#[inline]
pub(crate) fn run_base(run: u64, universe: u64) -> u64 {
    fastrange64(splitmix64(run, 1), universe)
}

/// `(base + offset) mod universe`, in 128 bits (the sum may pass 2^64).
#[inline]
pub(crate) fn wrap(base: u64, offset: u64, universe: u64) -> u64 {
    ((u128::from(base) + u128::from(offset)) % u128::from(universe.max(1))) as u64
}

/// `2^bits - 1`, for `bits` in `0..=63`.
#[inline]
pub(crate) const fn low_mask(bits: u32) -> u64 {
    (1u64 << bits) - 1
}

#[cfg(test)]
#[allow(clippy::big_endian_bytes)] // keys are written big-endian to sort as integers
mod tests {
    use super::*;

    #[test]
    fn projection_is_monotone_and_places_strings_outside_the_prefix() {
        let p = b"user:";
        assert_eq!(project(p, b"user"), Projected::Below);
        assert_eq!(project(p, b"usea"), Projected::Below);
        assert_eq!(project(p, b""), Projected::Below);
        assert_eq!(project(p, b"usez"), Projected::Above);
        assert_eq!(project(p, b"user:"), Projected::At(0));
        assert_eq!(
            project(p, b"user:\x01"),
            Projected::At(0x0100_0000_0000_0000)
        );
        assert_eq!(
            project(p, b"user:abcdefghXYZ"),
            Projected::At(u64::from_be_bytes(*b"abcdefgh"))
        );
        let mut strings: Vec<Vec<u8>> = Vec::new();
        for a in [b'a', b'b', b'z'] {
            for len in 0..10 {
                let mut s = b"user:".to_vec();
                s.extend(std::iter::repeat_n(a, len));
                strings.push(s.clone());
                s.push(0);
                strings.push(s);
            }
        }
        strings.sort();
        for w in strings.windows(2) {
            let (Projected::At(x), Projected::At(y)) = (project(p, &w[0]), project(p, &w[1]))
            else {
                panic!("every string starts with the prefix");
            };
            assert!(x <= y, "{:?} {:?}", w[0], w[1]);
        }
    }

    #[test]
    fn codes_keep_distances_inside_a_run_and_stay_below_the_universe() {
        for universe in [1u64, 2, 1000, 1 << 40, u64::MAX] {
            for range_log2 in [0u32, 4, 16] {
                for v in [0u64, 17, 1 << 20, u64::MAX - 5] {
                    let c = code(v, range_log2, universe);
                    assert!(c < universe);
                    let run_start = v & !low_mask(range_log2);
                    let base = code(run_start, range_log2, universe);
                    assert_eq!(c, wrap(base, v - run_start, universe));
                }
            }
        }
    }
}
