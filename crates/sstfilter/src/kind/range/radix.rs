//! Sorting a Range filter's codes: a least-significant-digit radix sort, byte by byte, over only the bytes a code
//! below the universe can have. The codes of keys in different runs are random, so a comparison sort pays about
//! `log2 n` unpredictable branches a code; a radix pass is a count and a scatter, without a branch on the data.

/// Bits a digit: 256 counters fit in a few lines of L1.
const DIGIT_BITS: u32 = 8;

/// Sorts `codes` (every one below `universe`) in increasing order, using `scratch` as the second buffer.
pub(crate) fn sort(codes: &mut Vec<u64>, universe: u64, scratch: &mut Vec<u64>) {
    // Small inputs: the counting passes cost more than they save.
    if codes.len() < 256 {
        codes.sort_unstable();
        return;
    }
    let bits = u64::BITS - universe.saturating_sub(1).leading_zeros();
    let digits = bits.div_ceil(DIGIT_BITS);
    // Every digit's counts in one read of the codes.
    let mut counts = vec![[0usize; 1 << DIGIT_BITS]; digits as usize];
    for &c in codes.iter() {
        for (d, count) in counts.iter_mut().enumerate() {
            if let Some(slot) = count.get_mut(digit(c, d as u32)) {
                *slot += 1;
            }
        }
    }
    scratch.clear();
    scratch.resize(codes.len(), 0);
    for (d, count) in counts.iter().enumerate() {
        // A digit every code shares leaves the order as it is.
        if count.contains(&codes.len()) {
            continue;
        }
        let mut next = [0usize; 1 << DIGIT_BITS];
        let mut at = 0;
        for (start, &c) in next.iter_mut().zip(count) {
            *start = at;
            at += c;
        }
        for &c in codes.iter() {
            if let Some(start) = next.get_mut(digit(c, d as u32))
                && let Some(slot) = scratch.get_mut(*start)
            {
                *slot = c;
                *start += 1;
            }
        }
        core::mem::swap(codes, scratch);
    }
}

/// Digit `d` (from the least significant) of `c`.
#[inline]
fn digit(c: u64, d: u32) -> usize {
    (c >> (d * DIGIT_BITS)) as usize & ((1 << DIGIT_BITS) - 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::math::splitmix64;

    #[test]
    fn sorts_as_the_standard_sort_does() {
        let mut scratch = Vec::new();
        for universe in [1u64, 2, 255, 256, 257, 1 << 20, 1 << 37, u64::MAX] {
            for n in [0usize, 1, 255, 256, 1000, 70_000] {
                let mut codes: Vec<u64> = (0..n as u64)
                    .map(|i| splitmix64(universe, i) % universe)
                    .collect();
                // Runs of equal and of shared-digit codes too.
                codes.extend((0..n as u64 / 4).map(|i| (universe - 1).min(i / 3)));
                let mut expected = codes.clone();
                expected.sort_unstable();
                sort(&mut codes, universe, &mut scratch);
                assert_eq!(codes, expected, "universe {universe} n {n}");
            }
        }
    }
}
