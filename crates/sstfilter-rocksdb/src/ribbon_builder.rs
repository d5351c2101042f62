//! Writes RocksDB's Standard128Ribbon filter byte for byte: RocksDB's `Standard128RibbonBitsBuilder` (7.8.3's and
//! 9.8.4's are the same), the builder of `NewRibbonFilterPolicy` in a table whose level is unknown (`format_version`
//! 5 and later).
//!
//! RocksDB's construction is deterministic, so every step is reproduced as RocksDB takes it:
//!
//! 1. The rate: the policy turns its "Bloom-equivalent" bits per key into a desired false-positive rate, the
//!    estimated rate of a FastLocalBloom filter of that many bits per key ([`cache_local_fp_rate`]).
//! 2. The slots: from the key count, RocksDB's measured table of how many keys a power of two of slots takes with at
//!    most a 1-in-20 chance that banding fails, interpolated, with a formula past the table ([`slots_for_keys`]),
//!    rounded up to whole 128-slot blocks (at least 2).
//! 3. The bytes: enough 16-byte segments for the rate, mixing blocks of `b` and `b + 1` solution columns, with a
//!    rounding bias from the first key hash's high half ([`solution_len`]).
//! 4. The Bloom fallback: where the system would have fewer than 1024 slots and the FastLocalBloom filter of the
//!    same bits per key is smaller, where there are more keys than RocksDB's Ribbon takes, or where no seed bands.
//! 5. Banding: the ordinal seed starts at the first key hash's low byte and steps by one (modulo 256) until every
//!    key's row fits ([`Banding::solve`]).
//! 6. Back-substitution, from the last slot to the first, straight into the interleaved segments the reader reads
//!    ([`Banding::back_substitute`]), then the 5 metadata bytes.
//!
//! Floating point: steps 1 to 3 take `f64` operations in the order RocksDB's C++ does, with no fused multiply-add
//! (Debian's x86-64 `librocksdb` has none, and Rust never contracts). The basic operations and `sqrt` are exact IEEE
//! arithmetic and give the same bits everywhere; `exp`, `pow` (step 1) and `log` (step 2) come from the platform's
//! math library, as RocksDB's do, so the bytes are RocksDB's where both use the same library (the Rust standard
//! library calls the system's libm: glibc on Linux, as RocksDB does). The powers of two of step 3 are exact in any
//! library. Each result is then truncated to an integer, so a difference in the last bit of a library function
//! could only show where a truncation falls within that bit of an integer.

use crate::bloom::{RocksDbBloomBuilder, millibits_per_key};
use crate::error::{RocksDbUsageError, configured};
use crate::ribbon::{BLOCK_SLOTS, Layout, MAX_COLUMNS, Row, SEGMENT_BYTES, raw_seed};

/// The first metadata byte of a Standard128Ribbon block (`-2`).
const MARKER: u8 = 0xFE;

/// The most keys RocksDB builds a Ribbon filter of; with more, it writes its Bloom filter (whose 32-bit length
/// they may still fit).
const MAX_RIBBON_KEYS: u32 = 950_000_000;

/// Below this many slots RocksDB writes whichever of Ribbon and its Bloom fallback is smaller.
const BLOOM_COMPARED_BELOW_SLOTS: u32 = 1024;

/// The ordinal seeds RocksDB tries: 0 to 255, as many as the metadata's seed byte holds.
const SEED_MASK: u32 = 255;

/// Bits of the cache line RocksDB's rate estimate assumes for the Bloom filter it matches.
const CACHE_LINE_BITS: f64 = 512.0;

/// For `2^i` slots, `i < 18`: how many keys RocksDB's measurements found banding takes with at most a 1-in-20
/// chance of failure for 128-bit rows (0 where too few slots to say). RocksDB's own data (`ribbon_config.cc`,
/// `kOneIn20`, 128-bit coefficients, no "smash"): the slot count of every filter depends on it.
const KEYS_BY_LOG2_SLOTS: [f64; 18] = [
    0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 248.851, 499.532, 1001.26, 2003.97, 4005.59, 8000.39,
    15966.6, 31828.1, 63447.3, 126506.0,
];

/// How much the slots-per-key factor grows for each doubling of the slots past the table (RocksDB's figure for
/// 128-bit rows).
const FACTOR_PER_DOUBLING: f64 = 0.0038;

/// RocksDB's constant for `1 / ln 2`, to ten decimals.
#[expect(
    clippy::approx_constant,
    reason = "RocksDB's truncated constant, not `LOG2_E`: the slot count follows RocksDB's rounding"
)]
const LOG2_OF_E: f64 = 1.4426950409;

/// Writes RocksDB's Standard128Ribbon filter for the keys it is given: the same bytes as RocksDB's
/// `NewRibbonFilterPolicy(bits_per_key)` builder for the same keys in the same order, in a table of `format_version`
/// 5 or later whose level is unknown (RocksDB's default context). That includes RocksDB's own fallback to its
/// FastLocalBloom filter, whose bytes are then [`RocksDbBloomBuilder`]'s at the same bits per key and the same
/// `optimize_filters_for_memory`: for small key sets where that filter is smaller, for more than 950 million keys,
/// and if no seed solves the system. No keys give no bytes, which RocksDB reads as a filter of no keys.
///
/// By default the bytes of RocksDB 9.2 and later under their defaults, whose `optimize_filters_for_memory` is on;
/// [`with_optimize_filters_for_memory`](Self::with_optimize_filters_for_memory) turns it off for the bytes of RocksDB
/// 7.x, 8.x, 9.0 and 9.1 under theirs. A Ribbon filter's bytes are the same either way where RocksDB's allocation
/// comes from glibc's heap: the setting changes the Bloom fallback's probe count, and which Ribbon filters of a
/// RocksDB built with glibc's `malloc_usable_size` no other program can predict
/// ([`RocksDbBloomBuilder::with_optimize_filters_for_memory`] says which).
///
/// The bits per key are "Bloom-equivalent", as RocksDB's: the filter aims at the false-positive rate of a
/// FastLocalBloom filter of that many bits per key, in about 30 % less space. Building keeps the keys' hashes and,
/// in [`finish`](Self::finish), a 20-byte row per slot (about 21 bytes per key).
///
/// ```
/// use sstfilter_rocksdb::{RocksDbFilter, RocksDbFilterFormat, RocksDbRibbonBuilder};
///
/// let keys: Vec<String> = (0..2000).map(|i| format!("user{i:05}")).collect();
/// let mut builder = RocksDbRibbonBuilder::new(10.0);
/// for key in &keys {
///     builder.add_key(key.as_bytes());
/// }
/// let block = builder.finish();
/// // The bytes of a table's filter block, whose block checksum the table reader verified:
/// let filter = RocksDbFilter::from_verified(&block);
/// assert!(matches!(filter.format(), RocksDbFilterFormat::Ribbon { num_blocks: 16, .. }));
/// assert!(keys.iter().all(|key| filter.may_contain(key.as_bytes())));
/// ```
#[derive(Debug, Clone)]
pub struct RocksDbRibbonBuilder {
    /// The keys' hashes, and the Bloom filter RocksDB falls back to (at the same bits per key).
    bloom: RocksDbBloomBuilder,
    /// The inverse of the false-positive rate aimed at (RocksDB's `desired_one_in_fp_rate_`).
    one_in_fp_rate: f64,
}

impl RocksDbRibbonBuilder {
    /// A builder of `bits_per_key` Bloom-equivalent bits per key (RocksDB's `bloom_equivalent_bits_per_key`; its
    /// Bloom fallback takes them rounded to thousandths, as RocksDB rounds them).
    ///
    /// # Panics
    ///
    /// If `bits_per_key` is not in `1.0..100.0`; [`try_new`](Self::try_new) returns the error instead.
    #[must_use]
    #[track_caller]
    pub fn new(bits_per_key: f64) -> Self {
        configured(Self::try_new(bits_per_key))
    }

    /// [`new`](Self::new), or an error if `bits_per_key` is not in `1.0..100.0` (RocksDB would silently build no
    /// filter below 0.5 bits per key, a 1-bit one below 1, and a 100-bit one above 100).
    pub fn try_new(bits_per_key: f64) -> Result<Self, RocksDbUsageError> {
        let millibits = millibits_per_key("RocksDbRibbonBuilder", bits_per_key)?;
        let bloom = RocksDbBloomBuilder::with_millibits(millibits);
        // RocksDB estimates the rate from the bits per key as given, not rounded, with the rounded ones' probes.
        let one_in_fp_rate = 1.0 / cache_local_fp_rate(bits_per_key, bloom.configured_num_probes());
        Ok(RocksDbRibbonBuilder {
            bloom,
            one_in_fp_rate,
        })
    }

    /// Sets RocksDB's `optimize_filters_for_memory`: on by default, as in RocksDB 9.2 and later, off for RocksDB
    /// 7.x, 8.x, 9.0 and 9.1 ([`RocksDbBloomBuilder::with_optimize_filters_for_memory`] says what it changes).
    #[must_use]
    pub fn with_optimize_filters_for_memory(mut self, on: bool) -> Self {
        self.bloom = self.bloom.with_optimize_filters_for_memory(on);
        self
    }

    /// Adds a key (the whole key the table's filter is asked for: with RocksDB's default settings, the user key
    /// without its timestamp).
    pub fn add_key(&mut self, key: &[u8]) {
        self.bloom.add_key(key);
    }

    /// The number of keys kept: keys added less those whose hash equals the previous key's (RocksDB's builders
    /// drop those, and size the filter by the rest).
    #[must_use]
    pub fn num_keys(&self) -> usize {
        self.bloom.num_keys()
    }

    /// The filter block: RocksDB's Standard128Ribbon solution then its 5 metadata bytes (`0xFE`, the seed, the
    /// block count in 24 bits), or RocksDB's FastLocalBloom block where RocksDB falls back to it; no bytes for no
    /// keys.
    #[must_use]
    pub fn finish(&self) -> Vec<u8> {
        match self.bloom.hashes().first() {
            None => Vec::new(),
            Some(&first) => self.ribbon(first).unwrap_or_else(|| self.bloom.finish()),
        }
    }

    /// The Ribbon block of the keys, whose first hash is `first`; `None` where RocksDB writes its Bloom filter.
    fn ribbon(&self, first: u64) -> Option<Vec<u8>> {
        let hashes = self.bloom.hashes();
        let num_keys = u32::try_from(hashes.len())
            .ok()
            .filter(|&n| n <= MAX_RIBBON_KEYS)?;
        // Whole blocks, at least two: one block would give a single start slot (`slots_for_keys` is never 0).
        let num_slots = slots_for_keys(num_keys)
            .checked_next_multiple_of(BLOCK_SLOTS)?
            .max(2 * BLOCK_SLOTS);
        // The high half of the first hash rounds the proportion of wider blocks, the low byte picks the first seed.
        let len = solution_len(num_slots, self.one_in_fp_rate, (first >> 32) as u32);
        if num_slots < BLOOM_COMPARED_BELOW_SLOTS && self.bloom.lines_len() < len {
            return None;
        }
        let (seed, banding) = Banding::solve(num_slots, hashes, first as u32 & SEED_MASK)?;
        let num_blocks = num_slots / BLOCK_SLOTS;
        let mut block = vec![0u8; len];
        banding.back_substitute(num_blocks, &mut block);
        let [b0, b1, b2, _] = num_blocks.to_le_bytes(); // NOTE: below 2^24 for at most `MAX_RIBBON_KEYS`
        block.extend_from_slice(&[MARKER, seed as u8, b0, b1, b2]);
        Some(block)
    }
}

/// RocksDB's estimate of a FastLocalBloom filter's false-positive rate (`BloomMath::CacheLocalFpRate` for 512-bit
/// lines): the mean of the standard Bloom rates one standard deviation of keys per line above and below the mean.
/// `exp` and `pow` are the platform's, as RocksDB's are.
fn cache_local_fp_rate(bits_per_key: f64, num_probes: u8) -> f64 {
    let keys_per_line = CACHE_LINE_BITS / bits_per_key;
    let deviation = keys_per_line.sqrt();
    let crowded = standard_fp_rate(CACHE_LINE_BITS / (keys_per_line + deviation), num_probes);
    let uncrowded = standard_fp_rate(CACHE_LINE_BITS / (keys_per_line - deviation), num_probes);
    (crowded + uncrowded) / 2.0
}

/// The false-positive rate of a standard Bloom filter of `bits_per_key` with `num_probes` probes.
fn standard_fp_rate(bits_per_key: f64, num_probes: u8) -> f64 {
    let k = f64::from(num_probes);
    (1.0 - (-k / bits_per_key).exp()).powf(k)
}

/// The slots RocksDB gives `num_keys` keys (`num_keys > 0`; `BandingConfigHelper1MaybeSupported::GetNumSlots`), not
/// yet rounded to blocks: the nearest power of two of slots by the keys' log (the platform's `log`, as RocksDB's),
/// then a linear interpolation between the key counts of that power and the next, rounded up.
fn slots_for_keys(num_keys: u32) -> u32 {
    let keys = f64::from(num_keys);
    let mut log2_slots = (keys.ln() * LOG2_OF_E + 0.5) as u32; // NOTE: at most 32 for a u32
    let mut lower = keys_for_log2_slots(log2_slots);
    if log2_slots == 0 || lower == 0.0 {
        // Too few keys for the table: the fewest slots a filter has.
        return 2 * BLOCK_SLOTS;
    }
    let upper = if keys < lower {
        log2_slots -= 1;
        core::mem::replace(&mut lower, keys_for_log2_slots(log2_slots))
    } else {
        keys_for_log2_slots(log2_slots + 1)
    };
    let upper_portion = (keys - lower) / (upper - lower);
    let lower_slots = power_of_two(log2_slots);
    (upper_portion * lower_slots + lower_slots + 0.999999999) as u32
}

/// The keys `2^log2_slots` slots take (RocksDB's `GetNumToAddForPow2`): the measured table, then past it the slots
/// over a factor that grows by [`FACTOR_PER_DOUBLING`] per doubling from the table's last entry.
fn keys_for_log2_slots(log2_slots: u32) -> f64 {
    if let Some(&keys) = KEYS_BY_LOG2_SLOTS.get(log2_slots as usize) {
        return keys;
    }
    let last = KEYS_BY_LOG2_SLOTS.len() - 1;
    let last_factor = power_of_two(last as u32) / KEYS_BY_LOG2_SLOTS.last().copied().unwrap_or(1.0);
    let base_factor = last_factor - last as f64 * FACTOR_PER_DOUBLING;
    power_of_two(log2_slots) / (base_factor + f64::from(log2_slots) * FACTOR_PER_DOUBLING)
}

/// `2^exponent`, exactly (`exponent < 64`).
fn power_of_two(exponent: u32) -> f64 {
    1u64.checked_shl(exponent).unwrap_or(0) as f64 // NOTE: a power of two converts exactly
}

/// The bytes of the solution for `num_slots` slots (a whole number of blocks, at least 2) at `one_in_fp_rate`
/// (RocksDB's `GetBytesForOneInFpRate`): `b = floor(log2(one_in_fp_rate))` columns in some blocks and `b + 1` in
/// the rest, in the proportion whose rate is the one aimed at. The wider blocks start at that proportion of the
/// start slots, plus RocksDB's rounding bias of `(rounding + 0.5) / 2^32` of a slot, in whole blocks rounded down.
/// Rates RocksDB cannot reach get its limits: 32 columns everywhere for a rate below `2^-32`, a single segment for
/// a rate of 1.
fn solution_len(num_slots: u32, one_in_fp_rate: f64, rounding: u32) -> usize {
    let fp_rate = 1.0 / one_in_fp_rate;
    if !(one_in_fp_rate > 1.0 && fp_rate < 1.0) {
        return SEGMENT_BYTES;
    }
    // NOTE: not NaN here, so this is RocksDB's `!(one_in_fp_rate <= 2^32 - 1)`
    if one_in_fp_rate > f64::from(u32::MAX) {
        return num_slots as usize * (MAX_COLUMNS as usize / 8); // NOTE: 32 result bits per slot
    }
    let lower_columns = (one_in_fp_rate as u32).ilog2(); // NOTE: `one_in_fp_rate` is at least 1
    let lower_fp_rate = 1.0 / power_of_two(lower_columns);
    let upper_fp_rate = 1.0 / power_of_two(lower_columns + 1);
    let lower_portion = (fp_rate - upper_fp_rate) / (lower_fp_rate - upper_fp_rate);
    let bias = (f64::from(rounding) + 0.5) / power_of_two(32);
    let num_starts = num_slots - (BLOCK_SLOTS - 1);
    let upper_start_block =
        ((lower_portion * f64::from(num_starts) + bias) / f64::from(BLOCK_SLOTS)) as u64; // NOTE: below the blocks
    let num_blocks = u64::from(num_slots / BLOCK_SLOTS);
    let num_segments =
        num_blocks * u64::from(lower_columns) + num_blocks.saturating_sub(upper_start_block);
    num_segments as usize * SEGMENT_BYTES // NOTE: at most 32 segments per block of 128 slots
}

/// RocksDB's banding storage: for each slot, the coefficient row (shifted to start at the slot) and result row of
/// the equation that slot pivots, or zero.
struct Banding {
    coeffs: Vec<u128>,
    results: Vec<u32>,
}

impl Banding {
    /// The system of `hashes` over `num_slots` slots (a whole number of blocks, at least 2) banded under the first
    /// ordinal seed from `first_seed` on, modulo 256, for which every row fits, with that seed; `None` if none does
    /// (RocksDB then writes its Bloom filter).
    fn solve(num_slots: u32, hashes: &[u64], first_seed: u32) -> Option<(u32, Banding)> {
        let slots = usize::try_from(num_slots).ok()?;
        let num_starts = num_slots.checked_sub(BLOCK_SLOTS - 1)?;
        let mut banding = Banding {
            coeffs: vec![0; slots],
            results: vec![0; slots],
        };
        let mut seed = first_seed;
        loop {
            let raw = raw_seed(seed);
            if hashes
                .iter()
                .all(|&h| banding.add(Row::new(h, raw, num_starts)))
            {
                return Some((seed, banding));
            }
            banding.coeffs.fill(0);
            banding.results.fill(0);
            seed = (seed + 1) & SEED_MASK;
            if seed == first_seed {
                return None;
            }
        }
    }

    /// Adds one equation by Gaussian elimination within the band: from its start slot, while the slot of its first
    /// coefficient already pivots an equation, subtract (xor) that one and move to the next set coefficient. It
    /// fits when it reaches a free slot, or when it cancels to nothing with a zero result (a repeated key);
    /// otherwise (nothing left but a nonzero result) this seed's system has no solution.
    fn add(&mut self, row: Row) -> bool {
        let (mut at, mut coeff, mut result) = (row.start as usize, row.coeff, row.result);
        loop {
            // The row spans 128 slots from a start below `num_starts`, so every slot it reaches exists.
            let (Some(pivot), Some(pivot_result)) =
                (self.coeffs.get_mut(at), self.results.get_mut(at))
            else {
                return false;
            };
            if *pivot == 0 {
                *pivot = coeff;
                *pivot_result = result;
                return true;
            }
            coeff ^= *pivot;
            result ^= *pivot_result;
            if coeff == 0 {
                return result == 0;
            }
            let skip = coeff.trailing_zeros(); // NOTE: at least 1: both rows had bit 0 set
            at += skip as usize;
            coeff >>= skip;
        }
    }

    /// Writes the solution into `solution` (zeroed, a whole number of segments, for `num_blocks` blocks), laid out
    /// as [`Layout`] reads it. From the last slot to the first, each column's solution bit at a slot is the
    /// parity of that slot's row over the next 127 solution bits, xor the row's result bit (0 for a free slot),
    /// which makes every banded equation hold. A column's bits for one block are its segment there; a column that
    /// a lower block lacks is simply not written there.
    fn back_substitute(&self, num_blocks: u32, solution: &mut [u8]) {
        let (segments, _) = solution.as_chunks_mut::<SEGMENT_BYTES>();
        let Some(layout) = u32::try_from(segments.len())
            .ok()
            .and_then(|n| Layout::new(n, num_blocks))
        else {
            return; // no column: RocksDB writes nothing, and the filter matches every key
        };
        // Column `j`'s solution bits from the current slot on, the current slot at bit 0.
        let mut state = [0u128; MAX_COLUMNS as usize];
        let blocks = self
            .coeffs
            .chunks_exact(BLOCK_SLOTS as usize)
            .zip(self.results.chunks_exact(BLOCK_SLOTS as usize));
        for (block, (coeffs, results)) in (0..num_blocks).zip(blocks).rev() {
            let columns = state
                .get_mut(..layout.columns(block) as usize)
                .unwrap_or_default(); // NOTE: never more than `MAX_COLUMNS` columns
            for (&coeff, &result) in coeffs.iter().zip(results).rev() {
                for (j, column) in columns.iter_mut().enumerate() {
                    let next = *column << 1;
                    let bit = ((next & coeff).count_ones() ^ (result >> j)) & 1;
                    *column = next | u128::from(bit);
                }
            }
            let first = layout.first_segment(block).unwrap_or(u32::MAX) as usize;
            for (segment, column) in segments.iter_mut().skip(first).zip(columns.iter()) {
                *segment = column.to_le_bytes();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests::assert_schema;
    use crate::{RocksDbFilter, RocksDbFilterFormat};

    /// The filter of the 4-byte little-endian keys `keys` at `bits_per_key` (RocksDB's `Key(i)`), with
    /// `optimize_filters_for_memory` off (RocksDB 7.8.3's default, under which its schema test pins the bytes).
    fn filter_of(bits_per_key: f64, keys: core::ops::Range<u32>) -> Vec<u8> {
        let mut builder =
            RocksDbRibbonBuilder::new(bits_per_key).with_optimize_filters_for_memory(false);
        keys.for_each(|key| builder.add_key(&key.to_le_bytes()));
        builder.finish()
    }

    /// RocksDB's `FullBloomTest.Schema` for Standard128Ribbon (v7.8.3): for each bits per key and key range, the
    /// seed, RocksDB's 32-bit legacy hash of the whole filter block (which pins every byte), and the first false
    /// positives; and its first case, 87 keys at 5 bits per key, where Ribbon falls back to FastLocalBloom with
    /// the same bytes.
    #[test]
    fn filters_are_the_bytes_rocksdb_pins() {
        let fallback = filter_of(5.0, 0..87);
        assert_eq!(fallback.get(fallback.len() - 5), Some(&0xFF));
        let fps = "31,38,40,43,61,83,86,112,125,131";
        assert_schema(&fallback, 3, 3, 4130687756, fps, "87 keys at 5 bits/key");

        let cases: [(f64, core::ops::Range<u32>, u8, u32, &str); 13] = [
            (2.0, 0..2087, 61, 1705851228, "3,8,10,17,19,20,23,28,31,32"),
            (3.0, 0..2087, 61, 1095342358, "3,17,20,28,32,33,36,43,49,54"),
            (
                5.0,
                0..2087,
                61,
                3971337699,
                "3,33,36,43,67,70,76,78,84,102",
            ),
            (
                8.0,
                0..2087,
                61,
                3651449053,
                "33,187,203,296,300,322,411,419,547,582",
            ),
            (
                9.0,
                0..2087,
                61,
                1005676675,
                "33,187,203,296,411,419,604,612,615,619",
            ),
            (
                11.0,
                0..2087,
                61,
                3129900846,
                "411,419,623,665,727,794,955,1052,1323,1330",
            ),
            (
                14.0,
                0..2087,
                61,
                1855638875,
                "665,727,1323,1755,3866,4232,4442,4492,4736",
            ),
            (
                16.0,
                0..2087,
                61,
                459379967,
                "727,1323,1755,4442,4736,5386,6974,7154,8222",
            ),
            (
                10.0,
                0..2087,
                61,
                1273231667,
                "296,411,419,612,619,623,630,665,686,727",
            ),
            (
                10.0,
                1..2087,
                184,
                3007790572,
                "33,152,383,497,589,633,737,781,911,990",
            ),
            (
                10.0,
                1..2088,
                184,
                1942323379,
                "33,95,360,589,737,911,990,1048,1081,1414",
            ),
            (
                9.5,
                1..2088,
                184,
                1148258663,
                "33,54,95,360,589,693,737,911,990,1048",
            ),
            (
                10.499,
                1..2088,
                184,
                792138188,
                "33,95,360,589,737,990,1048,1081,1414,1643",
            ),
        ];
        for (bits_per_key, keys, seed, hash, fps) in cases {
            let what = format!("{bits_per_key} bits/key, keys {keys:?}");
            let block = filter_of(bits_per_key, keys);
            assert_eq!(block.get(block.len() - 5), Some(&MARKER), "{what}");
            assert_schema(&block, 4, seed, hash, fps, &what);
        }
    }

    /// `optimize_filters_for_memory` (the default) leaves a Ribbon block as it is and gives the Bloom fallback the
    /// probe count of its actual bits per key: 87 keys at 5 bits per key fall back to 64 bytes, 5.885 bits per key
    /// and 4 probes where the configured 5 bits give 3.
    #[test]
    fn optimized_for_memory_changes_only_the_fallback_probes() {
        let both = |bits_per_key: f64, n: u32| {
            let mut on = RocksDbRibbonBuilder::new(bits_per_key);
            (0..n).for_each(|key| on.add_key(&key.to_le_bytes()));
            (on.finish(), filter_of(bits_per_key, 0..n))
        };
        let (on, off) = both(5.0, 87);
        assert_eq!(on.len(), off.len());
        assert_eq!(on[on.len() - 5..], [0xff, 0, 4, 0, 0]);
        assert_eq!(off[off.len() - 5..], [0xff, 0, 3, 0, 0]);
        for (bits_per_key, n) in [(10.0, 2087), (7.5, 3000), (16.0, 100_000)] {
            let (on, off) = both(bits_per_key, n);
            assert_eq!(on.get(on.len() - 5), Some(&MARKER));
            assert!(on == off, "{bits_per_key} bits per key, {n} keys");
        }
    }

    /// The slot counts RocksDB's formula gives, before the rounding to blocks (worked by hand from
    /// `ribbon_config.cc`): the fewest below the table, each measured point's power of two, a key past a point
    /// interpolating just above it, and the formula past the table; then monotone, and more slots than keys.
    #[test]
    fn slot_counts_follow_rocksdb_table() {
        for (keys, slots) in [
            (1, 256),
            (180, 256),
            (248, 256),
            (249, 257),
            (499, 512),
            (1001, 1024),
            (126_506, 131_072),
        ] {
            assert_eq!(slots_for_keys(keys), slots, "{keys}");
        }
        let mut last = 0;
        for keys in (1..3_000_000).step_by(997) {
            let slots = slots_for_keys(keys);
            assert!(slots >= last && slots > keys, "{keys}: {slots}");
            last = slots;
        }
    }

    /// No keys: no bytes (RocksDB's "always false" filter); every key kept reads "may match", whichever filter
    /// RocksDB's rules choose.
    #[test]
    fn no_keys_give_no_bytes_and_kept_keys_match() {
        assert!(RocksDbRibbonBuilder::new(10.0).finish().is_empty());
        for bits_per_key in [1.0, 2.5, 7.5, 23.4, 99.999] {
            for n in [1u32, 2, 5, 127, 128, 129, 700, 3000] {
                let block = filter_of(bits_per_key, 0..n);
                let filter = RocksDbFilter::from_verified(&block);
                for key in 0..n {
                    assert!(
                        filter.may_contain(&key.to_le_bytes()),
                        "{bits_per_key} {n} {key}"
                    );
                }
            }
        }
    }

    /// A key set with repeated hashes, adjacent (dropped) and not (a redundant equation), still bands.
    #[test]
    fn repeated_keys_band() {
        let mut builder = RocksDbRibbonBuilder::new(10.0);
        for i in 0..3000u32 {
            builder.add_key(&(i % 1500).to_le_bytes());
            builder.add_key(&(i % 1500).to_le_bytes());
        }
        assert_eq!(builder.num_keys(), 3000);
        let block = builder.finish();
        let filter = RocksDbFilter::from_verified(&block);
        assert!(matches!(
            filter.format(),
            RocksDbFilterFormat::Ribbon { .. }
        ));
        assert!((0..1500u32).all(|i| filter.may_contain(&i.to_le_bytes())));
    }

    /// More equations than slots: no seed solves the system, and after trying all 256 from the first the search
    /// gives up (where RocksDB writes its Bloom filter); as many as a system takes bands at its first seed.
    #[test]
    fn an_unsolvable_system_tries_every_seed_then_gives_up() {
        let hashes: Vec<u64> = (0..300u32)
            .map(|i| crate::rocksdb_hash64(&i.to_le_bytes()))
            .collect();
        assert!(Banding::solve(256, &hashes, 200).is_none());
        let (seed, _) = Banding::solve(1024, &hashes, 255).unwrap();
        assert_eq!(seed, 255);
    }

    #[test]
    fn bits_per_key_outside_rocksdb_range_are_refused() {
        for bad in [0.0, 0.5, 0.999, 100.0, 1e9, f64::NAN, f64::INFINITY, -1.0] {
            assert!(RocksDbRibbonBuilder::try_new(bad).is_err(), "{bad}");
        }
        for good in [1.0, 9.999, 99.999] {
            assert!(RocksDbRibbonBuilder::try_new(good).is_ok(), "{good}");
        }
    }
}
