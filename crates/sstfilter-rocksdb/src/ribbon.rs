//! Queries RocksDB's Standard128Ribbon filter (RocksDB 7.8.3, block-based table format_version 5: the full-filter
//! block whose first metadata byte is -2), answering exactly as RocksDB does.
//!
//! The block is a solution of 16-byte segments followed by 5 metadata bytes: the marker 0xFE, the ordinal seed, and
//! the number of 128-slot blocks (24 bits, little-endian). The solution is interleaved: each block holds one 128-bit
//! segment per solution column, the first `upper_start_block` blocks one column fewer than the rest, so that any
//! whole number of segments can serve any number of blocks. A key's seeded hash picks a start slot and a 128-bit
//! coefficient row; aligned at that slot, the row spans the rest of its block and the start of the next. The key may
//! be present only if, in every column, the parity of the solution bits its row selects equals that column's bit
//! of the key's 32-bit result row.

/// Slots in a block, which is also the width of a coefficient row and of a segment in bits.
pub(crate) const BLOCK_SLOTS: u32 = 128;
/// Bytes in a segment: one column's solution bits for one block, as a little-endian `u128`.
pub(crate) const SEGMENT_BYTES: usize = 16;
/// The most solution columns: a result row has 32 bits, so RocksDB leaves any further segments unread.
pub(crate) const MAX_COLUMNS: u32 = 32;
/// One past the largest block count the metadata's 24-bit field can hold; RocksDB never reads another.
const BLOCKS_LIMIT: u32 = 1 << 24;
/// Metadata bytes after the solution; RocksDB takes the length of solution and metadata together as a `u32`.
const METADATA_BYTES: usize = 5;

/// Odd multiplier turning the small ordinal seed into a raw seed that changes many bits from one seed to the next.
const TO_RAW_SEED: u64 = 0xc782_19a2_3eea_dd03;
/// The high nibble of every byte, folded onto the low nibble after that multiplication to mix within each byte.
const SEED_MIX_MASK: u64 = 0xf0f0_f0f0_f0f0_f0f0;
/// Odd multiplier re-hashing the key's hash under the raw seed (RocksDB seeds existing hashes, not keys).
const REHASH: u64 = 0x6193_d459_236a_3a0d;
/// Odd multiplier from the seeded hash to the bits of the coefficient and result rows, decorrelating them from the
/// start slot (which depends on the hash's high bits).
const COEFF_AND_RESULT: u64 = 0xc28f_8282_2b65_0bed;
/// Constant xor'd into the low half of the coefficient row so that its two halves are not copies.
const COEFF_XOR: u64 = 0xc367_844a_6e52_731d;

/// Whether a key whose RocksDB 64-bit hash is `h` may be in the Standard128Ribbon filter whose solution bytes
/// (the block without its 5 metadata bytes) are `solution`, built with `num_blocks` blocks of 128 slots and the
/// ordinal seed `seed` (the metadata's seed byte). Never panics; answers `true` wherever the bytes cannot be read as
/// RocksDB reads them.
///
/// Handling the whole block is the caller's part: RocksDB reads a block of 5 bytes or fewer as "always false".
/// Where `num_blocks < 2` or the solution has no whole segment, RocksDB also answers true for every key. Where we
/// answer true but RocksDB would not, the input cannot come from a RocksDB block: `num_blocks` of 2^24 or more
/// (its metadata field has 24 bits), or a block of 4 GiB or more (RocksDB would read its length modulo 2^32).
/// RocksDB never reads out of bounds here: it derives the column layout from the solution's length, so any length
/// and any `num_blocks` keep its reads inside the solution.
///
/// The tests' entry point; [`RocksDbFilter`](super::RocksDbFilter) keeps the [`Prepared`] query of its block.
#[cfg(test)]
pub(crate) fn may_contain(solution: &[u8], num_blocks: u32, seed: u32, h: u64) -> bool {
    Prepared::new(solution.len(), num_blocks, seed)
        .is_none_or(|prepared| prepared.may_contain(solution, h))
}

/// What every query of one block needs, derived once from its metadata and length (as RocksDB's reader does when
/// it is made): the segments' layout, the raw seed and the number of start slots. A division and the checks of
/// the block's sizes stay out of the query.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Prepared {
    layout: Layout,
    raw_seed: u32,
    num_starts: u32,
}

impl Prepared {
    /// The query of a block whose solution is `solution_len` bytes, of `num_blocks` blocks and ordinal seed
    /// `seed`; `None` where every key may match: inputs RocksDB cannot produce or reads as "always true".
    pub(crate) fn new(solution_len: usize, num_blocks: u32, seed: u32) -> Option<Prepared> {
        // RocksDB reads fewer than 2 blocks as "always true" (one block would give a single start slot).
        if !(2..BLOCKS_LIMIT).contains(&num_blocks) {
            return None;
        }
        // RocksDB takes the block's length as a u32: a longer block is not read as it was written.
        u32::try_from(solution_len.checked_add(METADATA_BYTES)?).ok()?;
        // Whole segments only: RocksDB ignores a trailing partial segment.
        let num_segments = u32::try_from(solution_len / SEGMENT_BYTES).ok()?;
        Some(Prepared {
            layout: Layout::new(num_segments, num_blocks)?,
            raw_seed: raw_seed(seed),
            // A row needs 128 slots from its start, so the last 127 slots start none.
            num_starts: num_blocks
                .checked_mul(BLOCK_SLOTS)?
                .checked_sub(BLOCK_SLOTS - 1)?,
        })
    }

    /// Whether a key whose RocksDB 64-bit hash is `h` may be in the block whose solution is `solution` (of the
    /// length this was prepared for); "may match" wherever a read would leave the solution (it never does for the
    /// length it was prepared for).
    #[inline]
    pub(crate) fn may_contain(self, solution: &[u8], h: u64) -> bool {
        self.query(solution, h).unwrap_or(true)
    }

    /// [`may_contain`](Self::may_contain)'s answer, `None` for a read past the solution.
    #[inline]
    fn query(self, solution: &[u8], h: u64) -> Option<bool> {
        let (segments, _) = solution.as_chunks::<SEGMENT_BYTES>();
        let layout = self.layout;
        let row = Row::new(h, self.raw_seed, self.num_starts);
        let block = row.start / BLOCK_SLOTS;
        let start_bit = row.start % BLOCK_SLOTS;
        let columns = layout.columns(block);
        let first = usize::try_from(layout.first_segment(block)?).ok()?;
        let width = usize::try_from(columns).ok()?;
        let after = first.checked_add(width)?;
        let own = segments.get(first..after)?;
        // A row starting mid-block runs on into the first `columns` segments of the next block. A row starting at
        // a block's first slot stays in its block (whose successor may not exist): its right part is empty, so
        // pairing the block with itself adds nothing.
        let next = if start_bit == 0 {
            own
        } else {
            segments.get(after..after.checked_add(width)?)?
        };

        let left = row.coeff << start_bit;
        let right = row.coeff.checked_shr(BLOCK_SLOTS - start_bit).unwrap_or(0);
        Some(
            own.iter()
                .zip(next)
                .zip(0..columns)
                .all(|((own, next), column)| {
                    let bits =
                        (u128::from_le_bytes(*own) & left) ^ (u128::from_le_bytes(*next) & right);
                    bits.count_ones() & 1 == (row.result >> column) & 1
                }),
        )
    }
}

/// How the solution's segments are shared among the blocks, which RocksDB derives from the two counts alone (so a
/// reader needs no more metadata than the block count): every block gets `upper_columns` segments, one per column,
/// but the first `upper_start_block` blocks get one fewer, so that any whole number of segments serves any number
/// of blocks.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Layout {
    /// The larger column count, at most 32 (a result row's bits).
    upper_columns: u32,
    /// The first block with `upper_columns` columns; the blocks before it have one fewer.
    upper_start_block: u32,
}

impl Layout {
    /// The layout of `num_segments` segments over `num_blocks` blocks: the fewest upper columns that use up every
    /// segment. `None` where there is no column to test (no segment or no block), where every key passes, as in
    /// RocksDB. Past 32 columns there are no result bits left: every block has 32 and the remaining segments are
    /// unused.
    pub(crate) fn new(num_segments: u32, num_blocks: u32) -> Option<Layout> {
        if num_blocks == 0 {
            return None;
        }
        let upper_columns = num_segments.div_ceil(num_blocks);
        let upper_start_block = upper_columns
            .checked_mul(num_blocks)?
            .checked_sub(num_segments)?;
        let layout = if upper_columns > MAX_COLUMNS {
            Layout {
                upper_columns: MAX_COLUMNS,
                upper_start_block: 0,
            }
        } else {
            Layout {
                upper_columns,
                upper_start_block,
            }
        };
        (layout.upper_columns > 0).then_some(layout)
    }

    /// The column count of block `block`.
    pub(crate) const fn columns(self, block: u32) -> u32 {
        if block < self.upper_start_block {
            self.upper_columns - 1 // NOTE: `upper_start_block > 0` only where `upper_columns > 0`
        } else {
            self.upper_columns
        }
    }

    /// The first segment of block `block`: the blocks before it hold `upper_columns` segments each, less one for
    /// each of them below the upper start.
    pub(crate) fn first_segment(self, block: u32) -> Option<u32> {
        block
            .checked_mul(self.upper_columns)?
            .checked_sub(block.min(self.upper_start_block))
    }
}

/// A key's equation in the seeded system: where its 128 coefficients start, the coefficients, and the 32 result
/// bits its solution columns must reproduce.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Row {
    /// The start slot, below the system's start count.
    pub(crate) start: u32,
    /// Bit `i` is the coefficient of slot `start + i`; bit 0 is always set.
    pub(crate) coeff: u128,
    /// Bit `j` is the parity column `j` of the solution must give over the row's coefficients.
    pub(crate) result: u32,
}

impl Row {
    /// The row of a key whose RocksDB 64-bit hash is `h`, under the raw seed `raw_seed` ([`raw_seed`]), in a
    /// system of `num_starts` start slots.
    #[inline]
    pub(crate) fn new(h: u64, raw_seed: u32, num_starts: u32) -> Row {
        let hash = (h ^ u64::from(raw_seed)).wrapping_mul(REHASH);
        // The start slot scales the hash to `num_starts` by its high bits (a multiply-shift rather than a modulo).
        let start = ((u128::from(hash) * u128::from(num_starts)) >> 64) as u32; // NOTE: below `num_starts`
        let mixed = hash.wrapping_mul(COEFF_AND_RESULT);
        // The lowest bit is always set so that every row has a 1 at its start slot.
        let coeff = ((u128::from(mixed) << 64) ^ u128::from(mixed ^ COEFF_XOR)) | 1;
        // The result row takes the product's high bytes, the ones that depend on most of the hash, byte-reversed.
        let result = mixed.swap_bytes() as u32;
        Row {
            start,
            coeff,
            result,
        }
    }
}

/// The raw seed RocksDB derives from an ordinal seed: a one-to-one mixing, truncated to RocksDB's 32-bit seed type.
pub(crate) fn raw_seed(seed: u32) -> u32 {
    let product = u64::from(seed).wrapping_mul(TO_RAW_SEED);
    (product ^ ((product & SEED_MIX_MASK) >> 4)) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A splitmix64 step, for reproducible pseudo-random bytes and hashes.
    fn splitmix(state: &mut u64) -> u64 {
        *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = *state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    #[test]
    fn unreadable_inputs_say_true() {
        let mut rng = 1;
        let solution: Vec<u8> = (0..4096).map(|_| splitmix(&mut rng) as u8).collect();
        for _ in 0..2000 {
            let h = splitmix(&mut rng);
            // Fewer than 2 blocks, or more than the metadata can name.
            for num_blocks in [
                0,
                1,
                BLOCKS_LIMIT,
                BLOCKS_LIMIT + 1,
                u32::MAX / 128 + 1,
                u32::MAX,
            ] {
                assert!(may_contain(&solution, num_blocks, 0, h));
            }
            // No whole segment.
            for len in [0, 1, 15] {
                for num_blocks in [2, 3, 1000, BLOCKS_LIMIT - 1] {
                    assert!(may_contain(&solution[..len], num_blocks, 7, h));
                }
            }
        }
    }

    #[test]
    fn any_input_answers_without_panicking() {
        let mut rng = 2;
        let solution: Vec<u8> = (0..(16 * 40 * 33 + 7))
            .map(|_| splitmix(&mut rng) as u8)
            .collect();
        let mut rejected = 0u32;
        for len in (0..=solution.len())
            .step_by(37)
            .chain([16, 32, 48, 16 * 40 * 33])
        {
            for num_blocks in [2, 3, 5, 39, 40, 41, 255, 65_536, BLOCKS_LIMIT - 1] {
                for seed in [0, 1, 255, 256, u32::MAX] {
                    for _ in 0..20 {
                        let h = splitmix(&mut rng);
                        rejected += u32::from(!may_contain(&solution[..len], num_blocks, seed, h));
                    }
                }
            }
        }
        // Random bytes with columns to test reject most keys: the filter is really consulted.
        assert!(rejected > 10_000, "{rejected}");
    }

    #[test]
    fn raw_seed_is_identity_at_zero_and_distinct_on_bytes() {
        assert_eq!(raw_seed(0), 0);
        let mut seen: Vec<u32> = (0..256).map(raw_seed).collect();
        seen.sort_unstable();
        seen.dedup();
        assert_eq!(seen.len(), 256);
    }

    /// A block RocksDB 7.8.3 built (NewRibbonFilterPolicy(7.5), 500 keys: 5 blocks, 27 segments, so 5 or 6
    /// columns per block), with key hashes and RocksDB's answers: six added keys, six false positives, six rejected.
    const BLOCK: &str = concat!(
        "18f25e31418924a7956ebe0e0454f2d198b0807e1d45ea8e6cf1fb84041c4b7e583043b8293e002768fd119f2700f58888b2",
        "92ad2060dc57e2a3d4ad0444d8f25961ec2464d163f941428d8a225c6848cb4f293e0432c2545eeb8c45ac20f4a4f788ee53",
        "37001b03890572660004261cf0c1b0b0f737e01f83c245cbd69d55f6339b97100fbc23bbdd63af86ede2fe30887137742dc9",
        "56de9185cf462698cd799fe47c0f33e5bf5655c728aeb4633b381180539287858cc74521437aeb029eaa8f9bef83a6bea064",
        "9caf85f8749e4cfab9fd42b9e88621e26f6efbd3241a325905f51570cc16e9cf75f819596bab6c845a991c8df2bba389ce5f",
        "7f18383e97a6a2a9c16fbdb58f2ad865945d3cc6e08ec9dcbc60ed738e9bc4604834201eeaad45991592eb8abfbd73a95014",
        "101cd096fce2b08d174a3004f559f77d24d09bc01e1bc981804192692642c3002c483e281e00000000000000000000000000",
        "000059010000000000000000000000000000680100000000000000000000000000007b010000000000000000000000000000",
        "480100000000000000000000000000003d010000000000000000000000000000fe48050000",
    );
    /// Key hashes for `BLOCK` and RocksDB's MayMatch answers.
    const ANSWERS: [(u64, bool); 18] = [
        (0x9261dd822bf3d648, true),
        (0x7711ddfa89af88c7, true),
        (0xcc400f8c625d5afe, true),
        (0xd8545ae567380074, true),
        (0x546364296bea376e, true),
        (0xea0f10fe75eb66e7, true),
        (0xfd0b57f43aa44590, true),
        (0xbf70f80fa7089915, true),
        (0x5e9ccddfe5c2f730, true),
        (0x6736f32209dba2b6, true),
        (0x62646c3da73091ec, true),
        (0x5b792fb57a8b8c2b, true),
        (0x39566e240963894d, false),
        (0x8a00021665e1eb07, false),
        (0xf065b1b5ae7d1714, false),
        (0xd5c4ca5e38f50596, false),
        (0xdfc9c80608cecca3, false),
        (0x8e6663d6c8511363, false),
    ];

    #[test]
    fn answers_as_rocksdb_on_a_small_block() {
        let block: Vec<u8> = (0..BLOCK.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&BLOCK[i..i + 2], 16).unwrap())
            .collect();
        let (solution, meta) = block.split_at(block.len() - 5);
        assert_eq!(meta, [0xfe, 0x48, 5, 0, 0]);
        for (h, rocks) in ANSWERS {
            assert_eq!(may_contain(solution, 5, 0x48, h), rocks, "{h:#x}");
        }
    }
}
