//! Banding: on-the-fly Gaussian elimination over GF(2) of one shard's rows (Dillinger & Walzer 2021, section 3).
//!
//! Slot `i` holds at most one *pivot*: a coefficient row whose lowest set bit is at `i` (stored shifted so that
//! bit 0 is slot `i`) and the result bits that go with it. A new row is added at its start: if the slot is
//! free it becomes the pivot; otherwise the pivot is XORed into it, which clears bit 0, and the row moves on to
//! its new lowest set bit. The rows stay inside the band `start..start + 128`, so the system is upper
//! triangular with bandwidth 128 once every row has a pivot, and back-substitution (`solution.rs`) solves it.
//!
//! A row that XORs down to zero is linearly dependent on the rows before it. If its result bits also reduce
//! to zero it is redundant, not a failure: that is what a repeated key hash (or any exact duplicate row)
//! produces. Otherwise the system has no solution for this seed and the shard must be retried.

/// The band of one shard under construction: a pivot row and result per slot. Reused across shards and seeds
/// so that construction allocates only once per filter.
#[derive(Debug, Default)]
pub(crate) struct Banding {
    /// Low halves of the pivot rows, bit 0 at the slot; 0 means the slot is free. The halves are kept apart
    /// rather than as one `u128` per slot: each elimination step waits for the load of its slot's low half, and
    /// an 8-byte stride is addressed by the load itself where a 16-byte one first needs a shift (builds
    /// 2–3 % faster at 10^6 keys).
    lows: Vec<u64>,
    /// High halves of the pivot rows.
    highs: Vec<u64>,
    /// The result bits of each pivot.
    results: Vec<u32>,
    /// Elimination steps taken (slots visited), for the overhead measurements in `build.rs`'s tests.
    #[cfg(test)]
    pub(crate) steps: u64,
}

/// A row on its way through the band: the slot of its lowest set bit, the row shifted to start there, and its
/// result bits.
#[derive(Debug, Clone, Copy)]
struct Insertion {
    slot: usize,
    low: u64,
    high: u64,
    result: u32,
}

impl Insertion {
    fn new(start: usize, row: u128, result: u32) -> Self {
        Insertion {
            slot: start,
            low: row as u64,
            high: (row >> 64) as u64,
            result,
        }
    }
}

/// What one elimination step did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    /// The row moved to its next set bit.
    Continue,
    /// The row became a pivot, or reduced to nothing and was redundant.
    Done,
    /// The row reduced to zero with non-zero result bits.
    Inconsistent,
}

/// The system has no solution: a row reduced to zero while its result bits did not (or its band ran off the
/// end of the shard, which well-formed starts never do).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Inconsistent;

impl Banding {
    /// Empties the band and sizes it for a shard of `slots` slots.
    pub(crate) fn reset(&mut self, slots: usize) {
        self.lows.clear();
        self.lows.resize(slots, 0);
        self.highs.clear();
        self.highs.resize(slots, 0);
        self.results.clear();
        self.results.resize(slots, 0);
    }

    /// Adds the equation `row · solution[start..start + 128] = result`. `row` must have bit 0 set.
    #[cfg(test)]
    pub(crate) fn add(&mut self, start: usize, row: u128, result: u32) -> Result<(), Inconsistent> {
        self.slots()
            .add_rest(Insertion::new(start, row, result), core::iter::empty())
    }

    /// Adds every equation of `rows` (start, row, result), two at a time: two interleaved cursors each take
    /// the next row as soon as theirs is placed. A step reads and writes its slot before the next step runs, so
    /// the interleaving is just another insertion order, and the order of insertion does not change whether the
    /// system is solvable (nor, since the pivots' slots and the solution are fixed by the rows alone, the
    /// filter's bytes). Two independent dependency chains keep the CPU busier than one: each step is a load,
    /// XOR, trailing-zero count and add that the next step waits for.
    ///
    /// The cursors share one stream of rows rather than a half each: a shard's steps are not spread evenly over
    /// its rows, so with halves one cursor ran out early and the other did most of the steps alone. Three or four
    /// cursors are slower: each cursor's row holds four registers. (BENCHMARKS.md 4b, "Builds, stop 24".)
    pub(crate) fn add_all(
        &mut self,
        rows: impl Iterator<Item = (usize, u128, u32)>,
    ) -> Result<(), Inconsistent> {
        let mut slots = self.slots();
        let mut rows = rows.map(|(s, row, result)| Insertion::new(s, row, result));
        let (mut a, mut b) = (rows.next(), rows.next());
        while let (Some(x), Some(y)) = (&mut a, &mut b) {
            let (step_a, step_b) = (slots.step(x), slots.step(y));
            match step_a {
                Step::Continue => {}
                Step::Done => a = rows.next(),
                Step::Inconsistent => return Err(Inconsistent),
            }
            match step_b {
                Step::Continue => {}
                Step::Done => b = rows.next(),
                Step::Inconsistent => return Err(Inconsistent),
            }
        }
        // The rows ran out; the other cursor finishes its row alone.
        match a.or(b) {
            Some(x) => slots.add_rest(x, rows),
            None => Ok(()),
        }
    }

    /// The band's arrays as [`Slots`].
    fn slots(&mut self) -> Slots<'_> {
        // `reset` gives the three one length; cutting them to it here tells the compiler so.
        let n = self
            .lows
            .len()
            .min(self.highs.len())
            .min(self.results.len());
        Slots {
            lows: self.lows.get_mut(..n).unwrap_or_default(),
            highs: self.highs.get_mut(..n).unwrap_or_default(),
            results: self.results.get_mut(..n).unwrap_or_default(),
            #[cfg(test)]
            steps: &mut self.steps,
        }
    }

    /// The pivot rows by slot (0 for a free slot).
    pub(crate) fn rows(&self) -> impl DoubleEndedIterator<Item = u128> + ExactSizeIterator + '_ {
        self.lows
            .iter()
            .zip(&self.highs)
            .map(|(&low, &high)| u128::from(high) << 64 | u128::from(low))
    }

    /// The result bits by slot (0 for a free slot).
    pub(crate) fn results(&self) -> &[u32] {
        &self.results
    }
}

/// A band's three arrays cut to one length, so that the one bounds check of a step's slot covers all three: a step
/// is about thirty instructions, and two more checks were a measurable part of them.
struct Slots<'a> {
    lows: &'a mut [u64],
    highs: &'a mut [u64],
    results: &'a mut [u32],
    #[cfg(test)]
    steps: &'a mut u64,
}

impl Slots<'_> {
    /// Finishes the insertion `current`, then inserts every row of `rest`.
    fn add_rest(
        &mut self,
        mut current: Insertion,
        mut rest: impl Iterator<Item = Insertion>,
    ) -> Result<(), Inconsistent> {
        loop {
            match self.step(&mut current) {
                Step::Continue => {}
                Step::Done => match rest.next() {
                    Some(next) => current = next,
                    None => return Ok(()),
                },
                Step::Inconsistent => return Err(Inconsistent),
            }
        }
    }

    /// One elimination step of an insertion.
    ///
    /// The row is handled as two halves so that the common step is short: a pivot always has bit 0 set, so
    /// its low half alone says whether the slot is free, and after an XOR the next set bit is almost always in
    /// the low half (the shift is then 1..=63 and a plain double-word shift).
    #[inline(always)]
    fn step(&mut self, at: &mut Insertion) -> Step {
        #[cfg(test)]
        {
            *self.steps += 1;
        }
        let (Some(low), Some(high), Some(result)) = (
            self.lows.get_mut(at.slot),
            self.highs.get_mut(at.slot),
            self.results.get_mut(at.slot),
        ) else {
            return Step::Inconsistent;
        };
        if *low == 0 {
            (*low, *high, *result) = (at.low, at.high, at.result);
            return Step::Done;
        }
        at.low ^= *low;
        at.high ^= *high;
        at.result ^= *result;
        let shift = if at.low != 0 {
            let shift = at.low.trailing_zeros(); // ≥ 1: the XOR cleared bit 0
            at.low = (at.low >> shift) | (at.high << (64 - shift));
            at.high >>= shift;
            shift
        } else if at.high != 0 {
            let shift = 64 + at.high.trailing_zeros();
            (at.low, at.high) = (at.high >> (shift - 64), 0);
            shift
        } else if at.result == 0 {
            return Step::Done; // redundant: an exact repeat of earlier rows
        } else {
            return Step::Inconsistent;
        };
        at.slot += shift as usize;
        Step::Continue
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pivots_keep_their_leading_bit_at_their_slot() {
        let mut band = Banding::default();
        band.reset(300);
        let mut x = 0x1234_5678_u64;
        for i in 0..200usize {
            x = x.wrapping_mul(0x9E37_79B9_7F4A_7C15).rotate_left(23);
            let row = (u128::from(x) << 64 | u128::from(x.rotate_left(7))) | 1;
            // Sparse starts: 200 rows over 172 starts leaves plenty of room.
            band.add(i * 172 / 200, row, x as u32).unwrap();
        }
        let placed = band.rows().filter(|&r| r != 0).count();
        assert_eq!(placed, 200);
        assert!(band.rows().all(|r| r == 0 || r & 1 == 1));
    }

    #[test]
    fn repeated_rows_are_redundant_and_contradictions_are_not() {
        let mut band = Banding::default();
        band.reset(256);
        let row = 0xDEAD_BEEF_u128 << 1 | 1;
        band.add(5, row, 7).unwrap();
        band.add(5, row, 7).unwrap();
        band.add(5, row, 7).unwrap();
        assert_eq!(band.rows().filter(|&r| r != 0).count(), 1);
        assert_eq!(band.add(5, row, 6), Err(Inconsistent));
        // A dependent combination: a ^ b ^ c (bit 0 set, as all three have it) with the XOR of their results
        // is redundant; with any other result it contradicts them.
        let (a, b, c) = (0b1011u128, 0b0111u128, 0b1_0001u128);
        band.add(100, a, 0b001).unwrap();
        band.add(100, b, 0b010).unwrap();
        band.add(100, c, 0b100).unwrap();
        band.add(100, a ^ b ^ c, 0b111).unwrap();
        assert_eq!(band.add(100, a ^ b ^ c, 0b110), Err(Inconsistent));
    }

    fn random_rows(n: usize, starts: usize, seed: u64) -> Vec<(usize, u128, u32)> {
        let mut x = seed;
        (0..n)
            .map(|i| {
                x = x.wrapping_mul(0x9E37_79B9_7F4A_7C15).rotate_left(23) ^ i as u64;
                let row = (u128::from(x) << 64 | u128::from(x.rotate_left(17))) | 1;
                (i * starts / n, row, (x >> 40) as u32)
            })
            .collect()
    }

    #[test]
    fn two_cursors_reach_the_rank_one_cursor_reaches() {
        for (n, seed) in [(0usize, 1u64), (1, 2), (2, 3), (333, 4), (1000, 5)] {
            let rows = random_rows(n, n.max(1) * 9 / 10 + 1, seed);
            let slots = n + 140;
            let (mut one, mut two) = (Banding::default(), Banding::default());
            one.reset(slots);
            two.reset(slots);
            for &(start, row, result) in &rows {
                one.add(start, row, result).unwrap();
            }
            two.add_all(rows.iter().copied()).unwrap();
            let rank = |b: &Banding| b.rows().filter(|&r| r != 0).count();
            assert_eq!(rank(&one), rank(&two), "n {n}");
            assert_eq!(rank(&two), n, "n {n}: independent rows all become pivots");
        }
    }

    #[test]
    fn two_cursors_find_a_contradiction_early_or_late() {
        let rows = random_rows(400, 300, 9);
        for at in [10usize, 390] {
            let mut contradicted = rows.clone();
            let (start, row, result) = rows[at - 5];
            contradicted.insert(at, (start, row, result ^ 1));
            let mut band = Banding::default();
            band.reset(500);
            assert_eq!(
                band.add_all(contradicted.iter().copied()),
                Err(Inconsistent),
                "at {at}"
            );
            let mut repeated = rows.clone();
            repeated.insert(at, (start, row, result));
            band.reset(500);
            assert_eq!(band.add_all(repeated.iter().copied()), Ok(()), "at {at}");
        }
    }

    #[test]
    fn a_row_that_would_leave_the_band_is_inconsistent() {
        let mut band = Banding::default();
        band.reset(4);
        band.add(3, 1, 0).unwrap();
        assert_eq!(band.add(3, 0b11, 0), Err(Inconsistent));
    }
}
