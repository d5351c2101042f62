//! Sorting a Range filter's codes: a least-significant-digit radix sort over the high bits of the codes only (about
//! `log2 n` of them, the bits that tell apart the codes' Elias–Fano buckets), then one insertion pass that orders
//! the few codes sharing their high bits. The codes of keys in different runs are random, so a comparison sort pays
//! about `log2 n` unpredictable branches a code; a radix pass is a count and a scatter, without a branch on the data,
//! and sorting only the high bits needs two or three passes instead of one a byte of the universe.

/// The widest digit: 2^11 counters stay in L1, and a scatter's 2^11 open lines in L2.
const MAX_DIGIT_BITS: u32 = 11;

/// The most digits: enough for the high bits of up to 2^33 codes.
const MAX_DIGITS: usize = 3;

/// Replaces every value of `values` by its code `code(v)` (below `universe`) and sorts the codes in increasing
/// order, using `scratch` (at least as long) as the second buffer: the codes are computed in the pass that counts
/// their digits.
pub(crate) fn code_and_sort(
    values: &mut [u64],
    scratch: &mut [u64],
    universe: u64,
    code: impl Fn(u64) -> u64,
) {
    let n = values.len();
    let scratch = scratch.get_mut(..n).unwrap_or_default();
    // Small inputs, or no scratch: the counting passes cost more than they save.
    if n < 256 || scratch.len() < n || u32::try_from(n).is_err() {
        values.iter_mut().for_each(|v| *v = code(*v));
        values.sort_unstable();
        return;
    }
    let bits = u64::BITS - universe.saturating_sub(1).leading_zeros();
    // One more high bit than `log2 n`: a group of codes sharing their high bits holds half a code on average when
    // the codes are spread evenly, and the codes of one run, in the order they came (increasing), when clustered.
    let high_bits = (u64::BITS - (n as u64).leading_zeros()).min(bits);
    let low_bits = bits - high_bits;
    let digits = high_bits.div_ceil(MAX_DIGIT_BITS).max(1);
    let digit_bits = high_bits.div_ceil(digits);
    // Digit `d` of a code: its bits from `low_bits + d · digit_bits` (below 64 for `d < digits`).
    let digit = Digit {
        low_bits,
        digit_bits,
    };
    // Every digit's counts in the pass that computes the codes (u32: at most 2^32 − 1 codes).
    let mut counts = vec![[0u32; 1 << MAX_DIGIT_BITS]; digits as usize];
    match digits {
        1 => count::<1>(values, &mut counts, &code, digit),
        2 => count::<2>(values, &mut counts, &code, digit),
        _ => count::<MAX_DIGITS>(values, &mut counts, &code, digit),
    }
    let (mut from, mut to) = (&mut *values, &mut *scratch);
    let mut passes = 0;
    for (d, count) in counts.iter_mut().enumerate() {
        // A digit every code shares leaves the order as it is.
        if count.contains(&(n as u32)) {
            continue;
        }
        // Each digit's count becomes the position of its first code.
        let mut at = 0;
        for slot in count.iter_mut() {
            (*slot, at) = (at, at + *slot);
        }
        let shift = digit.shift(d);
        for &c in from.iter() {
            if let Some(start) = count.get_mut(digit.of(c, shift))
                && let Some(slot) = to.get_mut(*start as usize)
            {
                *slot = c;
                *start += 1;
            }
        }
        core::mem::swap(&mut from, &mut to);
        passes += 1;
    }
    if passes % 2 == 1 {
        values.copy_from_slice(scratch);
    }
    order_within_groups(values);
}

/// Where a code's digits are: `digit_bits` bits each (at most [`MAX_DIGIT_BITS`]), from bit `low_bits`.
#[derive(Clone, Copy)]
struct Digit {
    low_bits: u32,
    digit_bits: u32,
}

impl Digit {
    /// The shift to digit `d`.
    #[inline(always)]
    fn shift(self, d: usize) -> u32 {
        (self.low_bits + d as u32 * self.digit_bits).min(63)
    }

    /// The digit of `c` at `shift`.
    #[inline(always)]
    fn of(self, c: u64, shift: u32) -> usize {
        // NOTE: below 2^MAX_DIGIT_BITS, the counters' length
        ((c >> shift) & ((1 << self.digit_bits) - 1)) as usize % (1 << MAX_DIGIT_BITS)
    }
}

/// Replaces every value by its code and counts the code's `D` digits in `counts`, as many counters a code as it
/// has digits (a loop over a number of digits known only when running would cost more than the counting).
#[inline(always)]
fn count<const D: usize>(
    values: &mut [u64],
    counts: &mut [[u32; 1 << MAX_DIGIT_BITS]],
    code: &impl Fn(u64) -> u64,
    digit: Digit,
) {
    let shifts: [u32; D] = core::array::from_fn(|d| digit.shift(d));
    for v in values.iter_mut() {
        *v = code(*v);
        for (count, &shift) in counts.iter_mut().zip(&shifts) {
            if let Some(slot) = count.get_mut(digit.of(*v, shift)) {
                *slot += 1;
            }
        }
    }
}

/// Sorts `codes`, which are in order but for codes sharing their high bits, by moving each code back past the
/// greater ones before it (they can only be in its group). Keys chosen to crowd a group could make that quadratic:
/// past a budget of moves, a comparison sort finishes the job.
fn order_within_groups(codes: &mut [u64]) {
    let mut budget = codes.len().saturating_mul(8).saturating_add(1024);
    for i in 1..codes.len() {
        let Some(&c) = codes.get(i) else { break };
        let mut j = i;
        while let Some(&before) = j.checked_sub(1).and_then(|k| codes.get(k))
            && before > c
        {
            if budget == 0 {
                if let Some(slot) = codes.get_mut(j) {
                    *slot = c;
                }
                codes.sort_unstable();
                return;
            }
            budget -= 1;
            if let Some(slot) = codes.get_mut(j) {
                *slot = before;
            }
            j -= 1;
        }
        if let Some(slot) = codes.get_mut(j) {
            *slot = c;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::math::splitmix64;

    /// The codes come out as computing each and sorting them with the standard sort would give, for universes of
    /// every width (one, two and three digits, a digit every code shares, an odd number of passes), inputs below
    /// and above the size where the radix passes start, and codes clustered as a run of keys makes them.
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
                // Runs of increasing codes at random offsets, as a cluster of keys makes.
                codes.extend((0..n as u64 / 4).map(|i| {
                    (splitmix64(universe, i / 100) % universe).saturating_add(i % 100 * 7)
                        % universe
                }));
                // A code: a rotation of the universe (any map into it would do), so that values are not codes.
                let code = |v: u64| (v % universe).wrapping_add(universe / 3) % universe;
                let mut expected: Vec<u64> = codes.iter().map(|&v| code(v)).collect();
                expected.sort_unstable();
                scratch.resize(codes.len(), 0);
                code_and_sort(&mut codes, &mut scratch, universe, code);
                assert_eq!(codes, expected, "universe {universe} n {n}");
            }
        }
    }

    #[test]
    fn crowded_groups_are_sorted_within_the_budget_or_by_the_fallback() {
        let mut scratch = Vec::new();
        let mut check = |codes: Vec<u64>, what: &str| {
            let mut expected = codes.clone();
            expected.sort_unstable();
            let mut codes = codes;
            scratch.resize(codes.len(), 0);
            code_and_sort(&mut codes, &mut scratch, 1 << 40, |c| c);
            assert_eq!(codes, expected, "{what}");
        };
        // 5,000 codes in a universe of 2^40: groups of 2^27 codes (13 high bits).
        // Every code in one group, in decreasing order.
        check((0..5000u64).rev().collect(), "one group");
        // 4,000 codes of one group in decreasing order among 1,000 spread ones: the moves run out of budget and
        // the comparison sort finishes.
        check(
            (0..4000u64)
                .rev()
                .chain((0..1000).map(|i| i << 28))
                .collect(),
            "a crowded group",
        );
        // Pairs of codes a group, each pair out of order: moves within the budget.
        check(
            (0..4096u64)
                .map(|i| ((i / 2) << 27) | (1 - i % 2))
                .collect(),
            "pairs",
        );
    }
}
