//! Byte strings in their order, compared where a comparison is on every question's path: a range question's two
//! bounds, a partitioned lookup's key against the prefix its separators share. Such strings are short, and the
//! library's `memcmp` spends more in its call than in comparing them.

use core::cmp::Ordering;

/// `a.cmp(b)` (a proper prefix first), without a call: 8 bytes at a time as big-endian integers, whose order is the
/// bytes' order, then byte by byte.
#[inline]
#[expect(
    clippy::big_endian_bytes,
    reason = "an integer whose order is the bytes' order, for comparing in memory; never stored"
)]
pub(crate) fn compare(a: &[u8], b: &[u8]) -> Ordering {
    let mut at = 0;
    while let (Some(x), Some(y)) = (
        a.get(at..).and_then(|r| r.first_chunk::<8>()),
        b.get(at..).and_then(|r| r.first_chunk::<8>()),
    ) {
        if x != y {
            return u64::from_be_bytes(*x).cmp(&u64::from_be_bytes(*y));
        }
        at += 8;
    }
    let (a, b) = (
        a.get(at..).unwrap_or_default(),
        b.get(at..).unwrap_or_default(),
    );
    for (x, y) in a.iter().zip(b) {
        if x != y {
            return x.cmp(y);
        }
    }
    a.len().cmp(&b.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every pair of a set of strings over a small alphabet, up to 19 bytes (no whole word, one, two, and tails of
    /// every length), and long strings differing at every offset or a proper prefix of each other: the order of
    /// slices.
    #[test]
    fn agrees_with_the_order_of_slices() {
        let alphabet = [0u8, 1, 0x7f, 0x80, 0xff];
        let mut strings: Vec<Vec<u8>> = vec![Vec::new()];
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        for len in 1..=19 {
            for _ in 0..30 {
                let s = (0..len)
                    .map(|_| {
                        x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                        alphabet[(x >> 61) as usize % 5]
                    })
                    .collect();
                strings.push(s);
            }
        }
        // Pairs that agree for a while: each string and its copy with one byte changed or one more byte.
        for s in strings.clone() {
            let mut longer = s.clone();
            longer.push(0);
            strings.push(longer);
            if let Some(last) = s.last() {
                let mut changed = s.clone();
                *changed.last_mut().unwrap() = last.wrapping_add(1);
                strings.push(changed);
            }
        }
        for a in &strings {
            for b in &strings {
                assert_eq!(compare(a, b), a.cmp(b), "{a:?} {b:?}");
            }
        }
        let long: Vec<u8> = (0..40u8).collect();
        for at in 0..long.len() {
            for delta in [1u8, 0x80] {
                let mut other = long.clone();
                other[at] = other[at].wrapping_add(delta);
                assert_eq!(compare(&long, &other), long.cmp(&other), "{at} {delta}");
                assert_eq!(compare(&other, &long), other.cmp(&long), "{at} {delta}");
            }
            assert_eq!(compare(&long[..at], &long), Ordering::Less, "{at}");
            assert_eq!(compare(&long, &long[..at]), Ordering::Greater, "{at}");
            assert_eq!(compare(&long[..at], &long[..at]), Ordering::Equal, "{at}");
        }
    }
}
