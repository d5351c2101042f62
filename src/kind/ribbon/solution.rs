//! The solution: `r` (or `r + 1`) bits per slot, stored column by column in blocks of 64 slots ("interleaved",
//! as RocksDB's `InterleavedSolutionStorage`), so a query reads whole 64-bit words and computes each result
//! bit as the parity of three ANDs.
//!
//! Block `b` covers slots `64·b .. 64·b + 64` and holds one 8-byte little-endian word per column; bit `k` of
//! column `i`'s word is column `i` of slot `64·b + k`. Blocks before `upper_start_block` have `lower_columns`
//! columns, the others one more, which is how a filter reaches a fractional number of bits per key: a query
//! starting in a lower block compares `r` result bits (false-positive rate `2^-r`), one starting in an upper
//! block `r + 1`. Blocks are stored one after the other, so block `b` starts at word
//! `b·(r + 1) − min(b, upper_start_block)`.
//!
//! A 128-bit row starting at bit `k` of block `b` spans blocks `b`, `b + 1` and (unless `k = 0`) `b + 2`: three
//! words per column, about three cache lines per query at 7 columns. (Blocks of 128 slots, as in RocksDB, need
//! four words per column and touch four or five lines.)

use super::Equation;
use super::banding::Banding;
use crate::prefetch::prefetch;
use crate::sizing::rates::ribbon_fpr;

/// Slots per block: one 64-bit word per column.
pub(crate) const BLOCK_SLOTS: u64 = 64;

/// Bytes of one column word.
const WORD_BYTES: usize = 8;

/// The most columns a block can have: result bits are a `u32`.
pub(crate) const MAX_COLUMNS: u32 = 32;

/// The solution's shape: how many blocks, and how many columns each has (where each block's columns live).
/// Every method is pure arithmetic on validated parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Shape {
    /// Columns of a block before `upper_start_block`: `r`, in `1..=MAX_COLUMNS`.
    pub(crate) lower_columns: u32,
    /// The first block with `r + 1` columns; `num_blocks` when every block has `r`.
    pub(crate) upper_start_block: u32,
    /// Number of 64-slot blocks.
    pub(crate) num_blocks: u32,
}

impl Shape {
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
        u64::from(self.num_blocks) * BLOCK_SLOTS
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
        ribbon_fpr(self.lower_columns, self.lower_fraction())
    }
}

/// Parity of the bits of `v`, as 0 or 1, for the query: without the `popcnt` instruction LLVM lowers
/// `count_ones() & 1` to two xor-folds and the parity flag (`setnp`), eight instructions and no multiplication,
/// which the query's independent columns run faster than [`parity_by_multiply`] (BENCHMARKS.md 4b).
#[inline(always)]
fn parity(v: u64) -> u64 {
    u64::from(v.count_ones() & 1)
}

/// Parity of the bits of `v`, as 0 or 1, for back-substitution. Two xor-shifts leave each nibble's parity in its
/// lowest bit; one multiplication by `0x1111…` sums those 16 bits into the top nibble (no carry crosses a nibble
/// below it, as each partial sum is at most 15), whose lowest bit is the parity. Back-substitution carries each
/// slot's bits into the next slot's window, so it waits on this chain, which the multiplication keeps shorter:
/// [`parity`] there made builds slower (BENCHMARKS.md 4b).
#[inline(always)]
fn parity_by_multiply(v: u64) -> u64 {
    const NIBBLE_LOW_BITS: u64 = 0x1111_1111_1111_1111;
    let v = v ^ (v >> 1);
    let v = v ^ (v >> 2);
    ((v & NIBBLE_LOW_BITS).wrapping_mul(NIBBLE_LOW_BITS) >> 60) & 1
}

/// ORs `bits` into the column word with index `word` (ignored past the end of `solution`).
#[inline(always)]
fn or_into(solution: &mut [u8], word: u64, bits: u64) {
    let at = usize::try_from(word)
        .ok()
        .and_then(|w| w.checked_mul(WORD_BYTES));
    if let Some(bytes) = at.and_then(|at| solution.get_mut(at..)?.first_chunk_mut::<WORD_BYTES>()) {
        *bytes = (u64::from_le_bytes(*bytes) | bits).to_le_bytes();
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
///
/// `M` is a compile-time constant at least [`Shape::max_columns`] (so that the column loop is unrolled); the
/// columns past a block's own are solved against zero result bits (the band's results were cut to
/// `max_columns` bits) and not stored.
pub(crate) fn back_substitute<const M: usize>(
    shape: &Shape,
    solution: &mut [u8],
    first_slot: u64,
    band: &Banding,
) {
    // window[i] bit k = column i of slot (current + k): the 128 solution bits a pivot's row can touch.
    let mut window = [0u128; M];
    let pivots = band.rows().zip(band.results()).enumerate().rev();
    for (offset, (row, &result)) in pivots {
        let slot = first_slot + offset as u64;
        let tail = row >> 1; // the row's bits for the slots above this one
        for (i, column) in window.iter_mut().enumerate() {
            let above = *column & tail;
            let bit =
                u64::from(result >> i) ^ parity_by_multiply(above as u64 ^ (above >> 64) as u64);
            *column = (*column << 1) | u128::from(bit & 1);
        }
        // The window now starts at `slot`: store its block's part when that is the first slot of a block or
        // of the shard (the bits above the block were stored when the window passed their block).
        if slot.is_multiple_of(BLOCK_SLOTS) || offset == 0 {
            let block = slot / BLOCK_SLOTS;
            let first = shape.first_word(block);
            let shift = (slot % BLOCK_SLOTS) as u32;
            for (i, column) in window
                .iter()
                .take(shape.columns(block) as usize)
                .enumerate()
            {
                or_into(solution, first + i as u64, (column << shift) as u64);
            }
        }
    }
}

/// The first column words of block `block` and the two after it: the blocks a row starting in `block` spans.
#[inline(always)]
fn spanned_blocks(shape: &Shape, block: u64) -> [u64; 3] {
    let first = shape.first_word(block);
    let second = first + u64::from(shape.columns(block));
    [first, second, second + u64::from(shape.columns(block + 1))]
}

/// Prefetches each cache line that [`probe`] reads for a row starting at `start` (the first words of three
/// blocks, up to the widest block's column count): issued for many keys before probing them, the prefetches
/// overlap their cache misses.
#[inline(always)]
pub(crate) fn prefetch_span(shape: &Shape, solution: &[u8], start: u64) {
    let columns = shape.max_columns() as usize;
    let [first, _, third] = spanned_blocks(shape, start / BLOCK_SLOTS);
    let byte = |word: u64| {
        usize::try_from(word)
            .ok()
            .and_then(|w| w.checked_mul(WORD_BYTES))
    };
    let (Some(from), Some(to)) = (byte(first), byte(third + columns as u64)) else {
        return;
    };
    // The words span at most `3·columns·8` bytes: one prefetch per 64 bytes and one at the end reach every line.
    for line in 0..(3 * columns * WORD_BYTES).div_ceil(CACHE_LINE) {
        let at = from + line * CACHE_LINE;
        if at < to {
            prefetch(solution, at);
        }
    }
    prefetch(solution, to.saturating_sub(1));
}

/// Bytes per cache line on every mainstream CPU.
const CACHE_LINE: usize = 64;

/// `M` consecutive column words from index `at`, each word past the end of the solution reading as zero.
///
/// A probe reads `M` words from the first word of each of three blocks, where `M` may exceed the block's own
/// column count (lower blocks in a mixed shape, and the shared widest instance for 25..=32 columns): the words
/// beyond it belong to the next block, or lie past the end, and are never compared. What must be exact are
/// the first `columns(block)` words, so when fewer than `M` words remain, the ones that exist are read and only
/// the missing ones are zero. (Zeroing all `M` words there, as this function once did, made a probe whose row
/// reaches the last block read that block's real columns as zero whenever `M` exceeded the last block's column
/// count: keys were lost at 25..=31 columns, where `M` is 32.)
#[inline(always)]
fn words<const M: usize>(solution: &[[u8; WORD_BYTES]], at: u64) -> [u64; M] {
    let at = usize::try_from(at).unwrap_or(usize::MAX);
    match solution.get(at..).and_then(<[_]>::first_chunk::<M>) {
        Some(words) => words.map(u64::from_le_bytes),
        None => words_near_the_end(solution, at),
    }
}

/// [`words`] when fewer than `M` words remain after `at`: the remaining words, then zeros.
#[cold]
#[inline(never)]
fn words_near_the_end<const M: usize>(solution: &[[u8; WORD_BYTES]], at: usize) -> [u64; M] {
    let mut out = [0u64; M];
    let remaining = solution.get(at..).unwrap_or_default();
    for (word, bytes) in out.iter_mut().zip(remaining) {
        *word = u64::from_le_bytes(*bytes);
    }
    out
}

/// Whether the row starting at slot `start` reproduces `result` in every column of its block: the query, with
/// `M` = [`Shape::max_columns`] (a compile-time constant, so the column loop is unrolled and its loads are not
/// bounds-checked one by one).
///
/// Each column's bit is the parity of the row masked against the three words it spans. All `M` columns are
/// computed whatever the block (no branch on the data); the block's column count only selects which bits are
/// compared. Correct for any `M` at least the block's column count: column `i` of the block is compared only
/// for `i < columns(block)`, and blocks `block + 1` and `block + 2` have at least as many columns (column
/// counts never decrease along the solution), so their word `i` is their own column `i`, or zero past the end
/// of the solution (see [`words`]).
#[inline(always)]
pub(crate) fn probe<const M: usize>(shape: &Shape, solution: &[u8], equation: &Equation) -> bool {
    let Equation { start, row, result } = *equation;
    let (solution, _) = solution.as_chunks::<WORD_BYTES>();
    let block = start / BLOCK_SLOTS;
    let bit = (start % BLOCK_SLOTS) as u32;
    let columns = shape.columns(block);
    let [first, second, third] = spanned_blocks(shape, block);
    let (here, next, last) = (
        words::<M>(solution, first),
        words::<M>(solution, second),
        words::<M>(solution, third),
    );
    let shifted = row << bit;
    let (mask_here, mask_next) = (shifted as u64, (shifted >> 64) as u64);
    let mask_last = ((row >> 1) >> (127 - bit)) as u64; // row >> (128 - bit), and 0 when bit == 0
    let mut found = 0u64;
    for (i, ((a, b), c)) in here.iter().zip(next).zip(last).enumerate() {
        let v = (a & mask_here) ^ (b & mask_next) ^ (c & mask_last);
        found |= parity(v) << i;
    }
    // At most 33 columns even for parameters that failed validation, so the shifts stay in range.
    let compared = u64::MAX >> (64 - columns.min(MAX_COLUMNS));
    (found ^ u64::from(result)) & compared == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(lower: u32, upper_start: u32, blocks: u32) -> Shape {
        Shape {
            lower_columns: lower,
            upper_start_block: upper_start,
            num_blocks: blocks,
        }
    }

    #[test]
    fn both_parities_count_the_bits() {
        let mut x = 0x0123_4567_89AB_CDEF_u64;
        let edges = [
            0u64,
            1,
            3,
            1 << 63,
            u64::MAX,
            u64::MAX - 1,
            0x8000_0000_0000_0001,
        ];
        let random = (0..10_000).map(|_| {
            x = x.wrapping_mul(0x9E37_79B9_7F4A_7C15).rotate_left(29) ^ 0x55;
            x
        });
        for v in edges.into_iter().chain(random) {
            let want = u64::from(v.count_ones() % 2);
            assert_eq!((parity(v), parity_by_multiply(v)), (want, want), "{v:#x}");
        }
    }

    #[test]
    fn blocks_follow_each_other_with_their_column_counts() {
        let l = shape(6, 3, 5);
        assert_eq!(
            (l.columns(0), l.columns(2), l.columns(3), l.columns(4)),
            (6, 6, 7, 7)
        );
        assert_eq!(l.max_columns(), 7);
        let firsts: Vec<u64> = (0..=5).map(|b| l.first_word(b)).collect();
        assert_eq!(firsts, [0, 6, 12, 18, 25, 32]);
        assert_eq!(l.len_bytes(), 32 * 8);
        assert_eq!(l.slots(), 5 * 64);
        assert_eq!(shape(6, 5, 5).max_columns(), 6);
        assert_eq!(shape(6, 0, 5).len_bytes(), 5 * 7 * 8);
        assert!((l.lower_fraction() - 0.6).abs() < 1e-12);
        let want = 0.6 / 64.0 + 0.4 / 128.0;
        assert!((l.false_positive_rate() - want).abs() < 1e-15);
    }

    /// A band of explicit rows, solved and then queried: every row must reproduce its result in its block's
    /// columns, across block boundaries and the lower/upper boundary, in a shard that starts and ends inside
    /// a block.
    #[test]
    fn back_substitution_satisfies_every_row() {
        let l = shape(3, 3, 8); // blocks 0..3: 3 columns; blocks 3..8: 4 columns
        let first_slot = 40;
        let slots = 8 * 64 - first_slot as usize - 5;
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
        back_substitute::<4>(&l, &mut solution, first_slot, &band);
        for &(start, row, result) in &rows {
            let global = first_slot + start as u64;
            let columns = l.columns(global / BLOCK_SLOTS);
            let want = result & (u32::MAX >> (32 - columns));
            let equation = |result| Equation {
                start: global,
                row,
                result,
            };
            assert!(
                probe::<4>(&l, &solution, &equation(want)),
                "row at {global}"
            );
            // Flipping any compared result bit must make it fail: the probe really compares.
            assert!(!probe::<4>(&l, &solution, &equation(want ^ 1)));
            assert!(!probe::<4>(
                &l,
                &solution,
                &equation(want ^ (1 << (columns - 1)))
            ));
        }
        // Bits outside the shard stay zero.
        let first_word_bits = u64::from_le_bytes(solution[..8].try_into().unwrap());
        assert_eq!(first_word_bits & ((1u64 << first_slot) - 1), 0);
    }

    #[test]
    fn probes_past_the_end_never_panic() {
        let l = shape(8, 1, 1);
        let solution = vec![0xFFu8; 8 * 8];
        for start in [
            0u64,
            1,
            63,
            64,
            127,
            128,
            1 << 20,
            u64::from(u32::MAX),
            u64::MAX,
        ] {
            let equation = Equation {
                start,
                row: u128::MAX,
                result: 0,
            };
            let _ = probe::<9>(&l, &solution, &equation);
            let _ = probe::<9>(&l, &[], &equation);
            prefetch_span(&l, &solution, start);
            prefetch_span(&l, &[], start);
        }
    }
}
