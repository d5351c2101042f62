//! Hash arithmetic shared by the kinds: mapping a hash onto a range without division, and a stream of
//! independent words from one hash. (The false-positive and sizing formulas live in `sizing`.)

/// Maps a 32-bit hash uniformly onto `0..n` without a division (Lemire's "fastrange": the high half of the
/// 64-bit product). Requires nothing of `n`; returns 0 when `n == 0`.
#[must_use]
#[inline]
pub(crate) const fn fastrange32(hash: u32, n: u32) -> u32 {
    ((hash as u64 * n as u64) >> 32) as u32
}

/// Maps a 64-bit hash uniformly onto `0..n` without a division: the high half of the 128-bit product (Lemire's
/// "fastrange", widened). Returns 0 when `n == 0`.
#[must_use]
#[inline]
pub(crate) const fn fastrange64(hash: u64, n: u64) -> u64 {
    ((hash as u128 * n as u128) >> 64) as u64
}

/// The `i`-th output of splitmix64 seeded with `seed` (Steele, Lea & Flood, 2014): the finalizer of
/// `seed + i·0x9E3779B97F4A7C15`. For a fixed seed, distinct `i` give distinct inputs and the finalizer is a
/// bijection, so the outputs never repeat; they are statistically independent enough to serve as probe hashes.
#[must_use]
#[inline(always)]
pub(crate) const fn splitmix64(seed: u64, i: u64) -> u64 {
    let mut z = seed.wrapping_add(i.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fastrange_covers_the_range_uniformly() {
        assert_eq!(fastrange32(0, 10), 0);
        assert_eq!(fastrange32(u32::MAX, 10), 9);
        assert_eq!(fastrange32(u32::MAX, 0), 0);
        // Each of 7 buckets receives 2^32/7 (±1) of the 32-bit inputs; check on a stride.
        let mut counts = [0u32; 7];
        for h in (0..=u32::MAX).step_by(4099) {
            counts[fastrange32(h, 7) as usize] += 1;
        }
        let (min, max) = (counts.iter().min().unwrap(), counts.iter().max().unwrap());
        assert!(max - min <= 1, "{counts:?}");
    }

    #[test]
    fn fastrange64_covers_the_range() {
        assert_eq!(fastrange64(0, 10), 0);
        assert_eq!(fastrange64(u64::MAX, 10), 9);
        assert_eq!(fastrange64(u64::MAX, u64::MAX), u64::MAX - 1);
        assert_eq!(fastrange64(1 << 63, 1000), 500);
        assert_eq!(fastrange64(u64::MAX, 0), 0);
    }
}
