//! The solution: `r` (or `r + 1`) bits per slot, stored column by column in blocks of 128 slots ("interleaved",
//! as RocksDB's `InterleavedSolutionStorage`), so a query reads whole 128-bit words and computes each result
//! bit as the parity of one AND.
//!
//! Block `b` covers slots `128·b .. 128·b + 128` and holds one 16-byte little-endian word per column; bit `k`
//! of column `i`'s word is column `i` of slot `128·b + k`. Blocks before `upper_start_block` have
//! `lower_columns` columns, the others one more, which is how a filter reaches a fractional number of bits per
//! key: a query starting in a lower block compares `r` result bits (false-positive rate `2^-r`), one starting
//! in an upper block `r + 1`. Blocks are stored one after the other, so block `b` starts at word
//! `b·(r + 1) − min(b, upper_start_block)`.

use super::banding::Banding;
use super::row::COEFF_BITS;

/// Bytes of one column word.
const WORD_BYTES: usize = 16;

/// The most columns a block can have: result bits are a `u32`.
pub(crate) const MAX_COLUMNS: u32 = 32;

/// Where each block's columns live. Every method is pure arithmetic on validated parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Layout {
    /// Columns of a block before `upper_start_block`: `r`, in `1..=MAX_COLUMNS`.
    pub(crate) lower_columns: u32,
    /// The first block with `r + 1` columns; `num_blocks` when every block has `r`.
    pub(crate) upper_start_block: u32,
    /// Number of 128-slot blocks.
    pub(crate) num_blocks: u32,
}

impl Layout {
    /// Number of columns of block `block`.
    #[inline(always)]
    pub(crate) fn columns(&self, block: u64) -> u32 {
        self.lower_columns + u32::from(block >= u64::from(self.upper_start_block))
    }

    /// The most columns any block has (`r + 1` if there are upper blocks).
    #[inline(always)]
    pub(crate) fn max_columns(&self) -> u32 {
        self.columns(u64::from(self.num_blocks).saturating_sub(1))
    }

    /// Index of block `block`'s first column word.
    #[inline(always)]
    pub(crate) const fn first_word(&self, block: u64) -> u64 {
        let upper_start = self.upper_start_block as u64;
        let lower_blocks = if block < upper_start {
            block
        } else {
            upper_start
        };
        block * (self.lower_columns as u64 + 1) - lower_blocks
    }

    /// Number of slots (the blocks' capacity).
    pub(crate) fn slots(&self) -> u64 {
        u64::from(self.num_blocks) * COEFF_BITS
    }

    /// Length of the solution in bytes.
    pub(crate) const fn len_bytes(&self) -> u64 {
        self.first_word(self.num_blocks as u64) * WORD_BYTES as u64
    }

    /// The fraction of slots in lower blocks (`r` columns).
    pub(crate) fn lower_fraction(&self) -> f64 {
        if self.num_blocks == 0 {
            return 1.0;
        }
        f64::from(self.upper_start_block.min(self.num_blocks)) / f64::from(self.num_blocks)
    }

    /// The false-positive rate of a query whose start is uniform over the slots: `2^-r` in lower blocks and
    /// `2^-(r + 1)` in upper ones, mixed by their share of slots.
    pub(crate) fn false_positive_rate(&self) -> f64 {
        let lower = (-f64::from(self.lower_columns)).exp2();
        let f = self.lower_fraction();
        f * lower + (1.0 - f) * lower / 2.0
    }
}

/// Parity of the bits of `v`, as 0 or 1.
#[inline(always)]
fn parity(v: u128) -> u32 {
    ((v as u64) ^ ((v >> 64) as u64)).count_ones() & 1
}

/// Byte offset of the column word with index `word`, if it is addressable at all.
#[inline(always)]
fn word_offset(word: u64) -> Option<usize> {
    usize::try_from(word).ok()?.checked_mul(WORD_BYTES)
}

/// The column word with index `word`, or 0 past the end of `solution`.
#[inline(always)]
fn load(solution: &[u8], word: u64) -> u128 {
    word_offset(word)
        .and_then(|at| solution.get(at..)?.first_chunk::<WORD_BYTES>())
        .map_or(0, |bytes| u128::from_le_bytes(*bytes))
}

/// ORs `bits` into the column word with index `word` (ignored past the end of `solution`).
#[inline(always)]
fn or_into(solution: &mut [u8], word: u64, bits: u128) {
    if let Some(bytes) =
        word_offset(word).and_then(|at| solution.get_mut(at..)?.first_chunk_mut::<WORD_BYTES>())
    {
        *bytes = (u128::from_le_bytes(*bytes) | bits).to_le_bytes();
    }
}

/// Solves a shard's band (slots `first_slot..first_slot + band.rows().len()`) from its last slot down and ORs
/// its solution bits into `solution`, which must be zero at those slots. Slots outside the shard are left
/// alone, so shards that share a block can be solved one after the other.
///
/// A free slot (no pivot) gets the solution 0: it is a free variable, and any value satisfies every equation.
/// Every column is solved in every block (lower blocks simply do not store their last column): the band was
/// built with `max_columns` result bits for every row, so the full solution satisfies every row in every
/// column, and each query only checks the columns its block stores.
pub(crate) fn back_substitute(
    layout: &Layout,
    solution: &mut [u8],
    first_slot: u64,
    band: &Banding,
) {
    let columns = layout.max_columns() as usize;
    // window[i] bit k = column i of slot (current + k): the 128 solution bits a pivot's row can touch.
    let mut window = [0u128; MAX_COLUMNS as usize];
    let pivots = band.rows().iter().zip(band.results()).enumerate().rev();
    for (offset, (&row, &result)) in pivots {
        let slot = first_slot + offset as u64;
        let tail = row >> 1; // the row's bits for the slots above this one
        for (i, column) in window.iter_mut().take(columns).enumerate() {
            let bit = (result >> i) ^ parity(*column & tail);
            *column = (*column << 1) | u128::from(bit & 1);
        }
        // The window now starts at `slot`: store it when that is the first slot of a block or of the shard.
        if slot.is_multiple_of(COEFF_BITS) || offset == 0 {
            let block = slot / COEFF_BITS;
            let first = layout.first_word(block);
            let shift = (slot % COEFF_BITS) as u32;
            for (i, column) in window
                .iter()
                .take(layout.columns(block) as usize)
                .enumerate()
            {
                or_into(solution, first + i as u64, column << shift);
            }
        }
    }
}

/// Whether the row starting at slot `start` reproduces `result` in every column of its block: the query.
///
/// The row spans the block of `start` and the next one; each column's bit is the parity of the row masked
/// against the two words. The loop runs `max_columns` times whatever the block (a fixed trip count per
/// filter, so it predicts perfectly) and the column count of this block only selects which bits are compared.
/// Words past the end of the solution read as 0; they only ever meet a zero mask or an uncompared column.
#[inline(always)]
pub(crate) fn probe(layout: &Layout, solution: &[u8], start: u64, row: u128, result: u32) -> bool {
    let block = start / COEFF_BITS;
    let bit = (start % COEFF_BITS) as u32;
    let columns = layout.columns(block);
    let first = layout.first_word(block);
    let next = first + u64::from(columns); // the next block's first word
    let mask_here = row << bit;
    let mask_next = (row >> 1) >> (127 - bit); // row >> (128 - bit), and 0 when bit == 0
    let mut found = 0u64;
    for i in 0..u64::from(layout.max_columns()) {
        let v = (load(solution, first + i) & mask_here) ^ (load(solution, next + i) & mask_next);
        found |= u64::from(parity(v)) << i;
    }
    // At most 33 columns even for parameters that failed validation, so the shifts stay in range.
    let compared = u64::MAX >> (64 - columns.min(MAX_COLUMNS));
    (found ^ u64::from(result)) & compared == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout(lower: u32, upper_start: u32, blocks: u32) -> Layout {
        Layout {
            lower_columns: lower,
            upper_start_block: upper_start,
            num_blocks: blocks,
        }
    }

    #[test]
    fn blocks_follow_each_other_with_their_column_counts() {
        let l = layout(6, 3, 5);
        assert_eq!(
            (l.columns(0), l.columns(2), l.columns(3), l.columns(4)),
            (6, 6, 7, 7)
        );
        assert_eq!(l.max_columns(), 7);
        let firsts: Vec<u64> = (0..=5).map(|b| l.first_word(b)).collect();
        assert_eq!(firsts, [0, 6, 12, 18, 25, 32]);
        assert_eq!(l.len_bytes(), 32 * 16);
        assert_eq!(layout(6, 5, 5).max_columns(), 6);
        assert_eq!(layout(6, 0, 5).len_bytes(), 5 * 7 * 16);
        assert!((l.lower_fraction() - 0.6).abs() < 1e-12);
        let want = 0.6 / 64.0 + 0.4 / 128.0;
        assert!((l.false_positive_rate() - want).abs() < 1e-15);
    }

    /// A band whose rows are given explicitly, solved and then queried: every row must reproduce its result
    /// in its block's columns, across a block boundary and a lower/upper boundary.
    #[test]
    fn back_substitution_satisfies_every_row() {
        let l = layout(3, 2, 4); // blocks 0, 1: 3 columns; blocks 2, 3: 4 columns
        let first_slot = 40;
        let slots = 4 * 128 - first_slot as usize - 5;
        let mut band = Banding::default();
        band.reset(slots);
        let mut rows = Vec::new();
        let mut x = 7u64;
        for k in 0..slots - 20 {
            x = x.wrapping_mul(0x9E37_79B9_7F4A_7C15).rotate_left(29) ^ k as u64;
            let start = (k * (slots - 128) / (slots - 20)).min(slots - 128);
            let row = (u128::from(x) << 64 | u128::from(x.rotate_left(31))) | 1;
            let result = (x >> 40) as u32 & 0xF;
            if band.add(start, row, result).is_ok() {
                rows.push((start, row, result));
            }
        }
        assert!(rows.len() > slots - 40, "{}", rows.len());
        let mut solution = vec![0u8; l.len_bytes() as usize];
        back_substitute(&l, &mut solution, first_slot, &band);
        for &(start, row, result) in &rows {
            let global = first_slot + start as u64;
            let columns = l.columns(global / 128);
            let want = result & (u32::MAX >> (32 - columns));
            assert!(probe(&l, &solution, global, row, want), "row at {global}");
            // Flipping any compared result bit must make it fail: the probe really compares.
            assert!(!probe(&l, &solution, global, row, want ^ 1));
            assert!(!probe(
                &l,
                &solution,
                global,
                row,
                want ^ (1 << (columns - 1))
            ));
        }
        // Bits outside the shard stay zero.
        let first_word_bits = u128::from_le_bytes(solution[..16].try_into().unwrap());
        assert_eq!(first_word_bits & ((1u128 << first_slot) - 1), 0);
    }

    #[test]
    fn probes_past_the_end_never_panic() {
        let l = layout(8, 1, 1);
        let solution = vec![0xFFu8; 16 * 8];
        for start in [0u64, 1, 127, 128, 1 << 20, u64::from(u32::MAX)] {
            let _ = probe(&l, &solution, start, u128::MAX, 0);
            let _ = probe(&l, &[], start, u128::MAX, 0);
        }
    }
}
