//! RocksDB's two Bloom filters: FastLocalBloom (`format_version` 5 and later, the one RocksDB writes today), read
//! and written bit for bit, and the legacy Bloom filter of older tables, read.
//!
//! FastLocalBloom puts a key in one 64-byte cache line: the low 32 bits of its [`rocksdb_hash64`] pick the line
//! by fastrange over the line count, the high 32 bits are the first probe, and each next probe multiplies by
//! `0x9e3779b9`; a probe's bit is its top 9 bits. The legacy filter takes LevelDB's hash with RocksDB's
//! sign-extended tail, picks the line as the hash modulo the line count, and steps probes by the hash rotated
//! right by 17, within lines of `2^k` bytes (64 unless the writer's cache line differed).

use sstfilter_leveldb::leveldb_hash_sign_extended;

use crate::error::{RocksDbUsageError, configured};
use crate::hash::rocksdb_hash64;

/// Bytes of a FastLocalBloom line (a cache line).
pub(crate) const LINE_BYTES: usize = 64;

/// The multiplier from one FastLocalBloom probe to the next (the golden ratio in 32 bits).
const PROBE_STEP: u32 = 0x9e37_79b9;

/// The seed of RocksDB's `BloomHash`, the legacy filter's hash.
const LEGACY_SEED: u32 = 0xbc9f_1d34;

/// The most bytes a FastLocalBloom filter's lines take (`0xffffffc0`): RocksDB caps a filter there, and a reader
/// takes the length as 32 bits.
const MAX_LINES_BYTES: u64 = 0xffff_ffc0;

/// The fewest and the most bits per key [`RocksDbBloomBuilder`] takes: RocksDB's policy turns a lower setting into
/// 1 (or into no filter below 0.5) and a higher one into 100 without a word; here that is refused where it is set.
const BITS_PER_KEY: core::ops::Range<f64> = 1.0..100.0;

/// The probe count FastLocalBloom uses for `millibits` thousandths of a bit per key (RocksDB's
/// `FastLocalBloomImpl::ChooseNumProbes`): the count whose cache-local false-positive rate is lowest at that size,
/// from 1 probe below 2.08 bits per key to 24 above 50.
pub(crate) const fn choose_num_probes(millibits: u32) -> u8 {
    match millibits {
        ..=2080 => 1,
        2081..=3580 => 2,
        3581..=5100 => 3,
        5101..=6640 => 4,
        6641..=8300 => 5,
        8301..=10070 => 6,
        10071..=11720 => 7,
        11721..=14001 => 8,
        14002..=16050 => 9,
        16051..=18300 => 10,
        18301..=22001 => 11,
        22002..=25501 => 12,
        50001.. => 24,
        // NOTE: 25502..=50000 gives 11 to 23
        _ => ((millibits - 1) / 2000 - 1) as u8,
    }
}

/// Whether a key whose [`rocksdb_hash64`] is `h` may be in the FastLocalBloom filter whose lines are `lines`
/// (the block without its 5 metadata bytes), with `num_probes` probes: RocksDB's answer for every block RocksDB
/// writes. A block whose line count is not whole is read over its whole lines, as RocksDB does; one too short for
/// a line, or too long for RocksDB's 32-bit length, answers "may match" (RocksDB would read out of bounds or
/// truncate the length).
#[inline]
pub(crate) fn fast_local_may_contain(lines: &[u8], num_probes: u8, h: u64) -> bool {
    let Some(at) = line_of(lines, h) else {
        return true;
    };
    let Some(bits) = lines
        .get(at..)
        .and_then(|rest| rest.first_chunk::<LINE_BYTES>())
    else {
        return true;
    };
    let (words, _) = bits.as_chunks::<8>();
    let mut probe = (h >> 32) as u32; // NOTE: the high half is the first probe
    for _ in 0..num_probes {
        // Bit `q` of a line is bit `q % 8` of byte `q / 8`: bit `q % 64` of its little-endian word `q / 64`.
        let bit = probe >> (32 - 9);
        let word = words
            .get((bit >> 6) as usize)
            .map_or(0, |w| u64::from_le_bytes(*w)); // NOTE: `bit < 512`
        if word >> (bit & 63) & 1 == 0 {
            return false;
        }
        probe = probe.wrapping_mul(PROBE_STEP);
    }
    true
}

/// Where the line of the key whose hash is `h` starts in `lines`: fastrange of the hash's low half over the whole
/// lines; `None` for a block RocksDB would read its length wrongly (`2^32` bytes or more).
#[inline]
fn line_of(lines: &[u8], h: u64) -> Option<usize> {
    let len = u32::try_from(lines.len()).ok()?;
    Some(fastrange32(h as u32, len / LINE_BYTES as u32) as usize * LINE_BYTES) // NOTE: the low half picks the line
}

/// `hash · range / 2^32`: a hash spread over `0..range` without a division (RocksDB's `FastRange32`).
#[inline]
fn fastrange32(hash: u32, range: u32) -> u32 {
    ((u64::from(hash) * u64::from(range)) >> 32) as u32 // NOTE: below `range`
}

/// Sets the probes of every hash of `hashes` in `lines`, as [`fast_local_may_contain`] reads them. No line is
/// prefetched ahead of its writes: a prefetch instruction has no safe form on stable Rust (`_mm_prefetch` is a
/// `#[target_feature]` function, `unsafe` to call even where SSE is the baseline), and this crate has no `unsafe`.
fn fast_local_add_all(lines: &mut [u8], num_probes: u8, hashes: &[u64]) {
    for &h in hashes {
        let Some(bits) = line_of(lines, h)
            .and_then(|at| lines.get_mut(at..))
            .and_then(|rest| rest.first_chunk_mut::<LINE_BYTES>())
        else {
            continue; // unreachable: the builder sizes `lines` in whole lines, below 2^32 bytes
        };
        let mut probe = (h >> 32) as u32;
        for _ in 0..num_probes {
            let bit = probe >> (32 - 9);
            if let Some(b) = bits.get_mut((bit >> 3) as usize) {
                *b |= 1 << (bit & 7);
            }
            probe = probe.wrapping_mul(PROBE_STEP);
        }
    }
}

/// RocksDB's legacy `BloomHash`: LevelDB's hash with the left-over bytes sign-extended.
pub(crate) fn legacy_hash(key: &[u8]) -> u32 {
    leveldb_hash_sign_extended(key, LEGACY_SEED)
}

/// Whether a key whose [`legacy_hash`] is `h` may be in the legacy Bloom filter `lines` of `num_lines` lines of
/// `2^log2_line_bytes` bytes with `num_probes` probes (the layout [`super::RocksDbFilter`] validated: the lines
/// fill `lines` exactly).
pub(crate) fn legacy_may_contain(
    lines: &[u8],
    num_probes: u8,
    num_lines: u32,
    log2_line_bytes: u32,
    h: u32,
) -> bool {
    let Some(line) = h.checked_rem(num_lines) else {
        return true;
    };
    let line_bytes = 1usize << log2_line_bytes; // NOTE: validated at most 2^32
    let Some(bits) = lines.get(line as usize * line_bytes..(line as usize + 1) * line_bytes) else {
        return true;
    };
    let line_bits_mask = (line_bytes as u64 * 8 - 1) as u32; // NOTE: RocksDB masks in 32 bits
    let delta = h.rotate_right(17);
    let mut probe = h;
    for _ in 0..num_probes {
        let bit = probe & line_bits_mask;
        if bits
            .get((bit >> 3) as usize)
            .is_none_or(|b| b >> (bit & 7) & 1 == 0)
        {
            return false;
        }
        probe = probe.wrapping_add(delta);
    }
    true
}

/// Writes RocksDB's FastLocalBloom filter (the `format_version` 5 Bloom filter of its block-based tables) for the
/// keys it is given: the same bytes as RocksDB's `NewBloomFilterPolicy(bits_per_key)` builder for the same keys in
/// the same order. By default the bytes of RocksDB 9.2 and later under their defaults, whose
/// `optimize_filters_for_memory` is on; [`with_optimize_filters_for_memory`](Self::with_optimize_filters_for_memory)
/// turns it off for the bytes of RocksDB 7.x, 8.x, 9.0 and 9.1 under theirs (that setting's docs say what it
/// changes, and which filters of a RocksDB built with glibc's `malloc_usable_size` no other program can predict).
///
/// ```
/// use sstfilter_rocksdb::{RocksDbBloomBuilder, RocksDbFilter, RocksDbFilterFormat};
///
/// let mut builder = RocksDbBloomBuilder::new(10.0);
/// for key in [&b"apple"[..], b"banana", b"cherry"] {
///     builder.add_key(key);
/// }
/// let block = builder.finish();
/// // The bytes of a table's filter block, whose block checksum the table reader verified:
/// let filter = RocksDbFilter::from_verified(&block);
/// // One 64-byte line for three keys: 170 bits per key, whose probe count is 24 (RocksDB 9's default).
/// assert!(matches!(filter.format(), RocksDbFilterFormat::FastLocalBloom { num_probes: 24, .. }));
/// assert!(filter.may_contain(b"banana"));
/// // RocksDB 7.8.3's default: the probe count of the configured 10 bits per key.
/// let builder = builder.with_optimize_filters_for_memory(false);
/// let filter_block = builder.finish();
/// let filter = RocksDbFilter::from_verified(&filter_block);
/// assert!(matches!(filter.format(), RocksDbFilterFormat::FastLocalBloom { num_probes: 6, .. }));
/// ```
#[derive(Debug, Clone)]
pub struct RocksDbBloomBuilder {
    /// Bits per key in thousandths, as RocksDB rounds them.
    millibits_per_key: u32,
    /// The keys' hashes, a hash equal to the one before left out (as RocksDB does: it counts keys for the size).
    hashes: Vec<u64>,
    /// RocksDB's `optimize_filters_for_memory`: the probe count from the filter's actual bits per key.
    optimize_filters_for_memory: bool,
}

impl RocksDbBloomBuilder {
    /// A builder of `bits_per_key` bits per key (RocksDB's `bits_per_key`, rounded to thousandths as RocksDB
    /// rounds it).
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
        let millibits = millibits_per_key("RocksDbBloomBuilder", bits_per_key)?;
        Ok(Self::with_millibits(millibits))
    }

    /// A builder of `millibits_per_key` thousandths of a bit per key, as [`millibits_per_key`] gives them.
    pub(crate) const fn with_millibits(millibits_per_key: u32) -> Self {
        RocksDbBloomBuilder {
            millibits_per_key,
            hashes: Vec::new(),
            optimize_filters_for_memory: true,
        }
    }

    /// Sets RocksDB's `optimize_filters_for_memory` (a `BlockBasedTableOptions` setting): on by default, as in
    /// RocksDB 9.2 and later; off is the default of RocksDB 7.x, 8.x, 9.0 and 9.1. RocksDB's construction under it is
    /// the same from 7.x to 10.x.
    ///
    /// Off, the probe count is the one of the configured bits per key. On, RocksDB sizes the filter by the memory
    /// its allocator hands out (`malloc_usable_size`, where RocksDB was built with it), then takes the probe count
    /// from the bits per key the filter actually has: with its lines rounded up to 64 bytes, one key at 10 bits per
    /// key gets 512 bits and 24 probes rather than 6, and 100 keys 1,024 bits and 7 probes. The sizing grows the
    /// filter to the whole lines that fit in the allocation; and once the policy's filters came out more accurate
    /// than their targets, it may cut later ones to 3/4, 13/16, 7/8 or 15/16 of their size (the policy keeps that
    /// balance across every filter it builds).
    ///
    /// What is written is RocksDB's filter for an allocation from glibc's heap, and from RocksDB built without
    /// `malloc_usable_size` (the `rocksdict` Python package's RocksDB, for one), for every size. glibc's heap
    /// chunks are whole multiples of 16 bytes and at most 16 bytes larger than the smallest that fits, and a Bloom
    /// filter's lines are 64 bytes, so the allocation holds no further line and the balance stays at zero.
    /// RocksDB built with glibc's `malloc_usable_size` (RocksDB's own builds, Debian's) writes other bytes, which
    /// depend on the history of the process's heap and no other program can predict, for:
    ///
    /// * a filter whose allocation glibc serves by `mmap`: one of at least glibc's mmap threshold, which is 128 KiB
    ///   when a process starts (a filter of about 105,000 keys at 10 bits per key) and rises to the size of every
    ///   larger mmapped block the process frees, up to 32 MiB. The allocation is rounded up to 4 KiB pages and the
    ///   filter grows by up to 63 lines;
    /// * a Ribbon filter ([`RocksDbRibbonBuilder`](super::RocksDbRibbonBuilder)) whose heap chunk is the one 16
    ///   bytes larger (glibc hands a free chunk over whole when the rest would be too small to keep): RocksDB adds
    ///   a 16-byte segment;
    /// * every filter the same RocksDB policy builds after one of those, which its balance may shrink.
    #[must_use]
    pub const fn with_optimize_filters_for_memory(mut self, on: bool) -> Self {
        self.optimize_filters_for_memory = on;
        self
    }

    /// Adds a key (the whole key the table's filter is asked for: with RocksDB's default settings, the user key
    /// without its timestamp).
    pub fn add_key(&mut self, key: &[u8]) {
        let h = rocksdb_hash64(key);
        if self.hashes.last() != Some(&h) {
            self.hashes.push(h);
        }
    }

    /// The number of keys kept: keys added less those whose hash equals the previous key's.
    #[must_use]
    pub fn num_keys(&self) -> usize {
        self.hashes.len()
    }

    /// The probe count the filter of the keys kept so far gets: RocksDB's choice for the configured bits per key,
    /// or, under [`with_optimize_filters_for_memory`](Self::with_optimize_filters_for_memory), for the bits per key
    /// of the filter's whole lines (RocksDB's `GetNumProbes`).
    #[must_use]
    pub fn num_probes(&self) -> u8 {
        if !self.optimize_filters_for_memory {
            return self.configured_num_probes();
        }
        let millibits = self.lines_len() as u64 * 8000;
        let keys = (self.hashes.len() as u64).max(1);
        // NOTE: below 612,000 (the configured bits, plus a line's rounding for a single key): RocksDB's C++ `int`
        // holds it
        choose_num_probes(u32::try_from(millibits / keys).unwrap_or(u32::MAX))
    }

    /// The probe count of the configured bits per key, whatever the keys.
    pub(crate) const fn configured_num_probes(&self) -> u8 {
        choose_num_probes(self.millibits_per_key)
    }

    /// The filter block: the lines, then RocksDB's 5 metadata bytes (`0xFF` for a newer Bloom filter, 0 for
    /// FastLocalBloom, the probe count with 64-byte lines, two zero bytes). No keys give the 5 bytes alone, which
    /// RocksDB reads as a filter of no keys.
    #[must_use]
    pub fn finish(&self) -> Vec<u8> {
        let num_probes = self.num_probes();
        let mut block = vec![0u8; self.lines_len()];
        if !block.is_empty() {
            fast_local_add_all(&mut block, num_probes, &self.hashes);
        }
        block.extend_from_slice(&[0xFF, 0, num_probes, 0, 0]);
        block
    }

    /// Bytes of the lines [`finish`](Self::finish) writes for the keys kept so far: the bits per key times the
    /// keys, rounded up to whole bytes, capped, then rounded up to whole lines (RocksDB's `CalculateSpace`, less
    /// the metadata).
    pub(crate) fn lines_len(&self) -> usize {
        let bits = (self.hashes.len() as u128) * u128::from(self.millibits_per_key);
        let target = u64::try_from(bits.div_ceil(8000)).unwrap_or(u64::MAX);
        let len = target
            .min(MAX_LINES_BYTES)
            .next_multiple_of(LINE_BYTES as u64);
        usize::try_from(len).unwrap_or(usize::MAX)
    }

    /// The hashes of the keys kept, in the order they were added.
    pub(crate) fn hashes(&self) -> &[u64] {
        &self.hashes
    }
}

/// `bits_per_key` in thousandths as RocksDB's policies round it, or the error of `builder` if it is not in
/// `1.0..100.0` (RocksDB would silently build no filter below 0.5 bits per key, a 1-bit one below 1, and a 100-bit
/// one above 100).
pub(crate) fn millibits_per_key(
    builder: &'static str,
    bits_per_key: f64,
) -> Result<u32, RocksDbUsageError> {
    if !BITS_PER_KEY.contains(&bits_per_key) {
        return Err(RocksDbUsageError::BitsPerKey {
            builder,
            found: bits_per_key,
        });
    }
    // RocksDB's rounding, nudged up so that three decimals are read exactly on every platform.
    Ok((bits_per_key * 1000.0 + 0.500001) as u32) // NOTE: 1000..=100000
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests::assert_schema;

    /// The FastLocalBloom filter of the 4-byte little-endian keys `keys` at `bits_per_key` (RocksDB's `Key(i)`),
    /// with `optimize_filters_for_memory` off (RocksDB 7.8.3's default, under which its schema test pins the bytes).
    fn filter_of(bits_per_key: f64, keys: core::ops::Range<u32>) -> Vec<u8> {
        let mut builder =
            RocksDbBloomBuilder::new(bits_per_key).with_optimize_filters_for_memory(false);
        keys.for_each(|key| builder.add_key(&key.to_le_bytes()));
        builder.finish()
    }

    /// RocksDB's `FullBloomTest.Schema` for FastLocalBloom (v7.8.3): for each bits per key and key range, the
    /// probe count, RocksDB's 32-bit legacy hash of the whole filter block (which pins every byte), and the first
    /// false positives.
    #[test]
    fn filters_are_the_bytes_rocksdb_pins() {
        let cases: [(f64, core::ops::Range<u32>, u8, u32, &str); 14] = [
            (
                5.0,
                0..87,
                3,
                4130687756,
                "31,38,40,43,61,83,86,112,125,131",
            ),
            (2.0, 0..2087, 1, 3817481309, "11,13,17,25,29,30,35,37,45,53"),
            (3.0, 0..2087, 2, 2807269961, "4,15,17,24,27,28,29,53,63,70"),
            (
                5.0,
                0..2087,
                3,
                204628445,
                "15,24,29,39,53,87,89,100,103,104",
            ),
            (
                8.0,
                0..2087,
                5,
                355564975,
                "16,60,66,126,220,238,244,256,265,287",
            ),
            (
                9.0,
                0..2087,
                6,
                2137566013,
                "156,367,791,872,945,1015,1139,1159,1265",
            ),
            (
                11.0,
                0..2087,
                7,
                2561502687,
                "34,74,130,236,643,882,962,1015,1035,1110",
            ),
            (
                14.0,
                0..2087,
                8,
                3709876890,
                "130,240,522,565,989,2002,2526,3147,3543",
            ),
            (
                16.0,
                0..2087,
                9,
                1087138490,
                "3299,3611,3916,6620,7822,8079,8482,8942",
            ),
            (
                10.0,
                0..2087,
                6,
                2498541272,
                "16,126,133,422,466,472,813,1002,1035",
            ),
            (
                10.0,
                1..2087,
                6,
                2058382345,
                "16,126,133,422,466,472,813,1002,1035",
            ),
            (
                10.0,
                1..2088,
                6,
                23699164,
                "16,126,133,422,466,472,813,1002,1035",
            ),
            (
                9.5,
                1..2088,
                6,
                3166884174,
                "126,156,367,444,458,791,813,976,1015",
            ),
            (
                10.499,
                1..2088,
                7,
                4098502778,
                "16,236,240,472,1015,1045,1111,1409,1465",
            ),
        ];
        for (bits_per_key, keys, probes, hash, fps) in cases {
            let what = format!("{bits_per_key} bits/key, keys {keys:?}");
            assert_schema(&filter_of(bits_per_key, keys), 3, probes, hash, fps, &what);
        }
    }

    /// Under `optimize_filters_for_memory` (the default) the probe count is the filter's actual bits per key's:
    /// one key at 10 bits per key gets a whole 64-byte line and 24 probes (RocksDB 9 writes `ff 00 18 00 00`), 100
    /// and 1,000 keys 7 (their lines give 10.24 bits per key), where the configured 10 bits give 6. The filter has
    /// as many lines either way.
    #[test]
    fn optimized_for_memory_probes_follow_the_actual_bits_per_key() {
        let keys = |n: u32| (0..n).map(u32::to_le_bytes);
        for (n, optimized, plain) in [(0, 1, 6), (1, 24, 6), (3, 24, 6), (100, 7, 6), (1000, 7, 6)]
        {
            let mut on = RocksDbBloomBuilder::new(10.0);
            let mut off = RocksDbBloomBuilder::new(10.0).with_optimize_filters_for_memory(false);
            for key in keys(n) {
                on.add_key(&key);
                off.add_key(&key);
            }
            assert_eq!(
                (on.num_probes(), off.num_probes()),
                (optimized, plain),
                "{n} keys"
            );
            let (on, off) = (on.finish(), off.finish());
            assert_eq!(on.len(), off.len(), "{n} keys");
            assert_eq!(on[on.len() - 5..], [0xff, 0, optimized, 0, 0], "{n} keys");
            let filter = crate::RocksDbFilter::from_verified(&on);
            assert!(keys(n).all(|key| filter.may_contain(&key)), "{n} keys");
        }
        // At 10 bits per key 10,000 keys get 12,544 bytes, 10.035 bits per key: still 6 probes. At 10.07 bits 1,000
        // keys get 10.24 bits and 7 probes, where the configured 10.07 bits give 6.
        let mut builder = RocksDbBloomBuilder::new(10.0);
        keys(10_000).for_each(|key| builder.add_key(&key));
        assert_eq!(builder.num_probes(), 6);
        let mut builder = RocksDbBloomBuilder::new(10.07);
        keys(1000).for_each(|key| builder.add_key(&key));
        assert_eq!(builder.num_probes(), 7);
        assert_eq!(
            builder.with_optimize_filters_for_memory(false).num_probes(),
            6
        );
    }

    /// RocksDB's AVX2 query takes 8 probes at a time and steps by `0x9e3779b9^8` between groups; the scalar step
    /// here must be the same sequence, or filters of more than 8 probes would read differently on such builds.
    #[test]
    fn eight_probe_steps_are_the_vectorised_step() {
        assert_eq!(PROBE_STEP.wrapping_pow(8), 0xab25_f4c1);
    }

    /// The probe table at its edges (RocksDB's `ChooseNumProbes`).
    #[test]
    fn probe_counts_change_where_rocksdb_changes_them() {
        let edges = [
            (1000, 1),
            (2080, 1),
            (2081, 2),
            (10070, 6),
            (10071, 7),
            (25501, 12),
            (25502, 11),
            (26001, 12),
            (50000, 23),
            (50001, 24),
            (100_000, 24),
        ];
        for (millibits, probes) in edges {
            assert_eq!(choose_num_probes(millibits), probes, "{millibits}");
        }
    }

    #[test]
    fn bits_per_key_outside_rocksdb_range_are_refused() {
        for bad in [0.0, 0.5, 0.999, 100.0, 1e9, f64::NAN, f64::INFINITY, -1.0] {
            assert!(RocksDbBloomBuilder::try_new(bad).is_err(), "{bad}");
        }
        for good in [1.0, 9.999, 99.999] {
            assert!(RocksDbBloomBuilder::try_new(good).is_ok(), "{good}");
        }
    }
}
