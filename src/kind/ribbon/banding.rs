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
    /// Pivot rows, bit 0 at the slot; 0 means the slot is free.
    rows: Vec<u128>,
    /// The result bits of each pivot.
    results: Vec<u32>,
}

/// The system has no solution: a row reduced to zero while its result bits did not (or its band ran off the
/// end of the shard, which well-formed starts never do).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Inconsistent;

impl Banding {
    /// Empties the band and sizes it for a shard of `slots` slots.
    pub(crate) fn reset(&mut self, slots: usize) {
        self.rows.clear();
        self.rows.resize(slots, 0);
        self.results.clear();
        self.results.resize(slots, 0);
    }

    /// Adds the equation `row · solution[start..start + 128] = result`. `row` must have bit 0 set.
    ///
    /// This loop is the construction's hot spot: every step is one dependent load, XOR, trailing-zero count and
    /// add, and a key takes about `1 / (4 · slot overhead)` steps in a long band (BENCHMARKS.md, "Ribbon").
    #[inline]
    pub(crate) fn add(&mut self, start: usize, row: u128, result: u32) -> Result<(), Inconsistent> {
        let (mut slot, mut row, mut result) = (start, row, result);
        loop {
            let Some(pivot) = self.rows.get_mut(slot) else {
                return Err(Inconsistent);
            };
            if *pivot == 0 {
                *pivot = row;
                if let Some(r) = self.results.get_mut(slot) {
                    *r = result;
                }
                return Ok(());
            }
            row ^= *pivot;
            result ^= self.results.get(slot).copied().unwrap_or(0);
            // Both halves are tested separately: the low half is non-zero at almost every step, and its
            // trailing-zero count is the short dependency chain of this loop.
            let low = row as u64;
            let shift = if low != 0 {
                low.trailing_zeros()
            } else if row != 0 {
                row.trailing_zeros()
            } else if result == 0 {
                return Ok(()); // redundant: an exact repeat of earlier rows
            } else {
                return Err(Inconsistent);
            };
            slot += shift as usize;
            row >>= shift;
        }
    }

    /// The pivot rows by slot (0 for a free slot).
    pub(crate) fn rows(&self) -> &[u128] {
        &self.rows
    }

    /// The result bits by slot (0 for a free slot).
    pub(crate) fn results(&self) -> &[u32] {
        &self.results
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
        let placed = band.rows().iter().filter(|&&r| r != 0).count();
        assert_eq!(placed, 200);
        assert!(band.rows().iter().all(|&r| r == 0 || r & 1 == 1));
    }

    #[test]
    fn repeated_rows_are_redundant_and_contradictions_are_not() {
        let mut band = Banding::default();
        band.reset(256);
        let row = 0xDEAD_BEEF_u128 << 1 | 1;
        band.add(5, row, 7).unwrap();
        band.add(5, row, 7).unwrap();
        band.add(5, row, 7).unwrap();
        assert_eq!(band.rows().iter().filter(|&&r| r != 0).count(), 1);
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

    #[test]
    fn a_row_that_would_leave_the_band_is_inconsistent() {
        let mut band = Banding::default();
        band.reset(4);
        band.add(3, 1, 0).unwrap();
        assert_eq!(band.add(3, 0b11, 0), Err(Inconsistent));
    }
}
