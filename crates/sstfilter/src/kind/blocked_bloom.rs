//! BlockedBloom: a cache-local blocked Bloom filter.
//!
//! Every key maps to one 64-byte block (one cache line), chosen by fastrange on the upper 32 bits of its hash;
//! all of its probes fall inside that block, so a query costs one cache miss. The probe positions are derived
//! from the same 64-bit hash:
//!
//! * the hash is remixed by one multiplication, `x = h · 0x9E3779B97F4A7C15` (the 64-bit golden ratio, odd, so a
//!   bijection), and the top 63 bits of `x` are cut into seven 9-bit *draws* (bit positions `0..512`), most
//!   significant first;
//! * further draws come seven at a time from the words `splitmix64(h + i · 0x9E3779B97F4A7C15)`, `i = 1, 2, …`
//!   (distinct inputs through a bijective mixer, so no key can get stuck on a repeating word);
//! * a key's bits are its first `k` **distinct** draws: a draw equal to an earlier one is skipped. After 64 words
//!   (448 draws) without `k` distinct values, which no key has been seen to need, the remaining bits are the
//!   lowest unused positions, so the sequence is total and terminates for every hash.
//!
//! Distinct probes are what bring the false-positive rate below the blocked-Bloom rate with replacement
//! (at 10 bits/key and 6 probes: 0.955 % measured, against 0.967 % with replacement; see BENCHMARKS.md).
//!
//! The query takes advantage of a property of this scheme: the first `k` draws are always a subset of the
//! key's bits. If any of them is clear the key is absent, whatever the duplicates, so a miss never needs the
//! distinctness bookkeeping. Only when all `k` are set does the query check, branch-free, whether two of those
//! draws were equal (within and across the first two draw words, for `k ≤ 14`), and in that rare case (3 % of
//! keys at `k = 6`, 16 % at `k = 14`) walk the exact distinct sequence; so does every key at `k > 14`.
//!
//! Bits are addressed byte-wise (bit `p` of a block is bit `p % 8` of byte `p / 8`), so the layout is
//! independent of the host's endianness.

use core::ops::ControlFlow;

use super::{BatchQuery, CONTAINS_NOTHING, KindParams, MAY_CONTAIN_ALL, Query, check_reserved};
use crate::error::{Error, Result};
use crate::format::PARAMS_LEN;
use crate::math::{fastrange32, splitmix64};
use crate::prefetch::prefetch;
use crate::sizing::rates::blocked_bloom_fpr;
use crate::tag::FilterKind;

/// Bytes in one block: one cache line on every mainstream CPU.
pub(crate) const BLOCK_BYTES: usize = 64;

/// Bits in one block.
pub(crate) const BLOCK_BITS: u32 = 512;

/// Multiplier of the probe remix: 2^64 / φ, odd. Any odd constant makes the remix a bijection; this one spreads
/// low input bits into the high output bits that the draws use first.
const MIX: u64 = 0x9E37_79B9_7F4A_7C15;

/// Draws cut from one 64-bit word: 7 × 9 = 63 bits.
const DRAWS_PER_WORD: usize = 7;

/// Draw words tried before the remaining bits are filled deterministically (see the module docs).
const MAX_DRAW_WORDS: usize = 64;

/// The parameters of a BlockedBloom filter: its number of 64-byte blocks and its probe count.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct BlockedBloomParams {
    num_blocks: u32,
    num_probes: u8,
}

impl BlockedBloomParams {
    /// The largest probe count the format allows. Beyond about 100 bits/key the optimum exceeds this, and by then
    /// the false-positive rate (< 1e-10) is limited by block-load variance, not by the probe count.
    pub const MAX_PROBES: u8 = 24;

    /// Parameters for an explicit size and probe count.
    ///
    /// Returns [`Error::BadParams`] when `num_probes` is not in `1..=MAX_PROBES`.
    pub fn new(num_blocks: u32, num_probes: u8) -> Result<Self> {
        if num_probes == 0 || num_probes > Self::MAX_PROBES {
            return Err(Error::BadParams {
                kind: Some(FilterKind::BlockedBloom),
                field: "num_probes",
                value: u64::from(num_probes),
            });
        }
        Ok(BlockedBloomParams {
            num_blocks,
            num_probes,
        })
    }

    /// Parameters with the probe count clamped into `1..=MAX_PROBES`, for writers whose counts come from a table
    /// (that they are in range is tested where the table is).
    pub(crate) const fn clamped(num_blocks: u32, num_probes: u8) -> Self {
        let num_probes = if num_probes == 0 {
            1
        } else if num_probes > Self::MAX_PROBES {
            Self::MAX_PROBES
        } else {
            num_probes
        };
        BlockedBloomParams {
            num_blocks,
            num_probes,
        }
    }

    /// Number of 64-byte blocks.
    #[must_use]
    pub const fn num_blocks(&self) -> u32 {
        self.num_blocks
    }

    /// Number of distinct bits set (and tested) per key.
    #[must_use]
    pub const fn num_probes(&self) -> u8 {
        self.num_probes
    }

    /// Length of the payload in bytes.
    #[must_use]
    pub const fn payload_len(&self) -> usize {
        self.num_blocks as usize * BLOCK_BYTES
    }

    /// The theoretical false-positive rate with `num_keys` keys: the blocked-Bloom rate for 512-bit blocks
    /// (the cache-local rate RocksDB documents: 0.957 % at 10 bits/key and 6 probes); 0 for an empty filter.
    #[must_use]
    pub fn expected_fpr(&self, num_keys: u64) -> f64 {
        if num_keys == 0 {
            return 0.0;
        }
        let bits_per_key = self.payload_len() as f64 * 8.0 / num_keys as f64;
        blocked_bloom_fpr(bits_per_key, u32::from(self.num_probes), BLOCK_BITS)
    }

    /// The trailer's parameter bytes: byte 0 is the probe count, the rest are reserved and zero.
    pub(crate) fn encode(&self) -> [u8; PARAMS_LEN] {
        let mut out = [0u8; PARAMS_LEN];
        out[0] = self.num_probes;
        out
    }

    /// Decodes and validates the parameters of a block whose payload is `payload_len` bytes and which claims
    /// `num_keys` keys. Everything a probe relies on is checked here, once.
    pub(crate) fn decode(
        params: &[u8; PARAMS_LEN],
        payload_len: usize,
        num_keys: u64,
    ) -> Result<Self> {
        let [num_probes, reserved @ ..] = params;
        check_reserved(FilterKind::BlockedBloom, reserved, 1)?;
        if !payload_len.is_multiple_of(BLOCK_BYTES) {
            return Err(Error::LengthMismatch {
                kind: FilterKind::BlockedBloom,
                expected: (payload_len / BLOCK_BYTES * BLOCK_BYTES) as u64,
                found: payload_len as u64,
            });
        }
        let num_blocks =
            u32::try_from(payload_len / BLOCK_BYTES).map_err(|_| Error::BadParams {
                kind: Some(FilterKind::BlockedBloom),
                field: "num_blocks",
                value: (payload_len / BLOCK_BYTES) as u64,
            })?;
        // An empty payload answers "absent" for every key, so it is only valid for an empty key set; a non-empty
        // payload with no keys is just as inconsistent.
        if (num_blocks == 0) != (num_keys == 0) {
            return Err(Error::BadParams {
                kind: Some(FilterKind::BlockedBloom),
                field: "num_keys",
                value: num_keys,
            });
        }
        BlockedBloomParams::new(num_blocks, *num_probes)
    }
}

/// Builds the payload for `hashes` into `out` (appending `params.payload_len()` bytes).
pub(crate) fn build(
    params: &BlockedBloomParams,
    hashes: impl Iterator<Item = u64>,
    out: &mut Vec<u8>,
) {
    let start = out.len();
    out.resize(start + params.payload_len(), 0);
    let payload = out.get_mut(start..).unwrap_or_default();
    let (lines, _) = payload.as_chunks_mut::<BLOCK_BYTES>();
    dispatch_probes!(
        params.num_probes,
        otherwise(),
        set_key_bits,
        lines,
        params.num_blocks,
        hashes
    );
}

/// Sets every key's bits, with a compile-time probe count `K`. Like the query, the common case (no repeated
/// draw among the first `K`, 97 % of keys at `K = 6`) sets the first `K` draws directly; the rest take the
/// exact distinct sequence.
fn set_key_bits<const K: usize>(
    lines: &mut [[u8; BLOCK_BYTES]],
    num_blocks: u32,
    hashes: impl Iterator<Item = u64>,
) {
    // `for_each` rather than `for`: the builder's hashes come through nested chunk iterators, which internal
    // iteration walks as plain nested loops.
    hashes.for_each(|h| {
        // The index is < num_blocks == lines.len() by fastrange; `if let` keeps this panic-free regardless.
        let Some(line) = lines.get_mut(block_index(h, num_blocks)) else {
            return;
        };
        if K <= FAST_DRAWS && !has_duplicate_draw::<K>(h) {
            for j in 0..K {
                set_bit(
                    line,
                    draw_from(draw_word(h, j / DRAWS_PER_WORD), j % DRAWS_PER_WORD),
                );
            }
        } else {
            let _ = for_each_distinct_probe(h, K, |pos| {
                set_bit(line, pos);
                ControlFlow::<()>::Continue(())
            });
        }
    });
}

/// The queries for `params` (see [`Query`]): a filter of no blocks contains nothing.
pub(crate) fn queries(params: &BlockedBloomParams) -> (Query, BatchQuery) {
    if params.num_blocks == 0 {
        return CONTAINS_NOTHING;
    }
    select_probes!(params.num_probes, otherwise MAY_CONTAIN_ALL, query, query_batch)
}

/// Whether a key with hash `h` may be in the filter whose payload is `payload`, with `K` the probe count of
/// `params`, validated against the payload by [`BlockedBloomParams::decode`].
///
/// The hot path: one multiply for the block, one for the draws, `k` byte loads folded together without
/// branches, then a single test. Any index that would fall outside `payload` (impossible after validation)
/// answers "may contain".
///
/// Both ends of the key's 64 bytes are prefetched first, as RocksDB does: on a filter larger than the cache the
/// query waits for memory, and the prefetches start both lines (an unaligned block straddles two) before the
/// draws are computed. Measured with `crates/side-by-side` (7 interleaved runs against RocksDB's FastLocalBloom,
/// median of per-run ratios): misses at 10^7 keys went from 1.53× to 1.11× RocksDB's time, at 10^6 from 0.76×
/// to 0.64×; hits at 10^6 from 1.31× to 1.14×.
fn query<const K: usize>(params: &KindParams, payload: &[u8], h: u64) -> bool {
    let KindParams::BlockedBloom(params) = params else {
        return true;
    };
    let start = block_index(h, params.num_blocks) * BLOCK_BYTES;
    prefetch(payload, start);
    prefetch(payload, start + BLOCK_BYTES - 1);
    cache_line(payload, params.num_blocks, h).is_none_or(|line| probe_line::<K>(line, h))
}

/// [`query`] for every hash of `hashes`, into the matching slot of `out` (up to the shorter of the two).
///
/// Two passes, as RocksDB's batched `MayMatch`: the first prefetches every key's cache line (both ends of its 64
/// bytes, which straddle two lines when the payload is not 64-byte aligned), so that all of them are fetched
/// from memory at the same time; the second probes them, from L1 by then. A single query cannot overlap its
/// memory latency with the next one's as well as this.
fn query_batch<const K: usize>(
    params: &KindParams,
    block: &[u8],
    hashes: &[u64],
    out: &mut [bool],
) {
    let KindParams::BlockedBloom(params) = params else {
        out.fill(true);
        return;
    };
    let num_blocks = params.num_blocks;
    for &h in hashes {
        let start = block_index(h, num_blocks) * BLOCK_BYTES;
        prefetch(block, start);
        prefetch(block, start + BLOCK_BYTES - 1);
    }
    for (answer, &h) in out.iter_mut().zip(hashes) {
        *answer = cache_line(block, num_blocks, h).is_none_or(|line| probe_line::<K>(line, h));
    }
}

/// The cache line (64-byte block) of a hash inside the payload, which starts at offset 0 of `block`.
#[inline(always)]
fn cache_line(block: &[u8], num_blocks: u32, h: u64) -> Option<&[u8; BLOCK_BYTES]> {
    let start = block_index(h, num_blocks) * BLOCK_BYTES;
    block.get(start..start + BLOCK_BYTES)?.try_into().ok()
}

/// The block of a hash: fastrange over the upper 32 bits, leaving the lower bits' entropy to the remix.
#[inline]
fn block_index(h: u64, num_blocks: u32) -> usize {
    fastrange32((h >> 32) as u32, num_blocks) as usize
}

/// The `i`-th 64-bit draw word of a hash: `h·MIX` for the first (the hot path: one multiplication), then the
/// `i`-th output of splitmix64 seeded with `h` (Steele, Lea & Flood, 2014), whose inputs `h + i·MIX` are distinct
/// and whose finalizer is a bijection, so consecutive words never repeat.
#[inline(always)]
fn draw_word(h: u64, i: usize) -> u64 {
    if i == 0 {
        return h.wrapping_mul(MIX);
    }
    splitmix64(h, i as u64)
}

/// The `i`-th draw (a bit position in `0..512`) inside a draw word: 9 bits, most significant first.
#[inline(always)]
fn draw_from(word: u64, i: usize) -> usize {
    (word >> (64 - 9 * (i + 1))) as usize & (BLOCK_BITS as usize - 1)
}

#[inline(always)]
fn set_bit(block: &mut [u8; BLOCK_BYTES], pos: usize) {
    if let Some(byte) = block.get_mut(pos >> 3) {
        *byte |= 1 << (pos & 7);
    }
}

/// Calls `f` with the key's first `probes` distinct draws, in order, stopping early if `f` breaks. This is the
/// definition of which bits a key owns; the builder and the exact query path both go through it.
fn for_each_distinct_probe<B>(
    h: u64,
    probes: usize,
    f: impl FnMut(usize) -> ControlFlow<B>,
) -> ControlFlow<B> {
    for_each_distinct_probe_within(h, probes, MAX_DRAW_WORDS, f)
}

/// [`for_each_distinct_probe`] with the number of draw words before the deterministic fill as a parameter, so
/// tests can reach the fill.
fn for_each_distinct_probe_within<B>(
    h: u64,
    probes: usize,
    max_words: usize,
    mut f: impl FnMut(usize) -> ControlFlow<B>,
) -> ControlFlow<B> {
    // Plain loops rather than an iterator chain: this is the exact path of ~3 % of hits and of every key with
    // more than 14 probes, and a chain of adapters cost several times the work it does.
    let mut seen = [0u64; (BLOCK_BITS / 64) as usize];
    let mut found = 0;
    for i in 0..max_words {
        let word = draw_word(h, i);
        for j in 0..DRAWS_PER_WORD {
            if found == probes {
                return ControlFlow::Continue(());
            }
            let pos = draw_from(word, j);
            if first_time(&mut seen, pos) {
                found += 1;
                f(pos)?;
            }
        }
    }
    // The fill: every position in order; already-taken ones are skipped.
    for pos in 0..BLOCK_BITS as usize {
        if found == probes {
            break;
        }
        if first_time(&mut seen, pos) {
            found += 1;
            f(pos)?;
        }
    }
    ControlFlow::Continue(())
}

/// Marks `pos` in `seen`; whether it was not marked before.
#[inline(always)]
fn first_time(seen: &mut [u64; (BLOCK_BITS / 64) as usize], pos: usize) -> bool {
    let (lane, bit) = (pos >> 6, 1u64 << (pos & 63));
    match seen.get_mut(lane) {
        Some(seen) if *seen & bit == 0 => {
            *seen |= bit;
            true
        }
        _ => false,
    }
}

/// The query for a cache line with a compile-time probe count `K` (see the module docs for why the first `K`
/// draws suffice to reject). The bits are combined arithmetically, not with `&&`, so that a miss costs no
/// mispredicted branch per probe.
#[inline(always)]
fn probe_line<const K: usize>(line: &[u8; BLOCK_BYTES], h: u64) -> bool {
    let mut all_set = 1u8;
    for j in 0..K {
        let word = draw_word(h, j / DRAWS_PER_WORD);
        all_set &= bit_at(line, draw_from(word, j % DRAWS_PER_WORD));
    }
    if all_set == 0 {
        return false;
    }
    if K <= FAST_DRAWS && !has_duplicate_draw::<K>(h) {
        return true;
    }
    exact_probe(line, h, K)
}

/// Bit `pos` of a line as 0 or 1.
#[inline(always)]
fn bit_at(line: &[u8; BLOCK_BYTES], pos: usize) -> u8 {
    line.get(pos >> 3).map_or(1, |byte| byte >> (pos & 7) & 1)
}

/// Probe counts up to which the common case (no repeated draw) skips the exact path: the draws of two words.
/// Beyond, every key takes the exact path (24 probes at most, at 30+ bits/key).
const FAST_DRAWS: usize = 2 * DRAWS_PER_WORD;

/// Whether two of the first `K ≤ 14` draws of `h` are equal, branch-free: the first 7 are the 9-bit lanes of draw
/// word 0, the next 7 those of word 1; repeats are looked for inside each word and across the two. Measured (the
/// sweep in BENCHMARKS.md 4b): with only word 0 checked, every hit at `K ≥ 8` took the exact path, 1.65–2.88×
/// RocksDB's hit time at 14–24 bits/key.
#[inline(always)]
fn has_duplicate_draw<const K: usize>(h: u64) -> bool {
    let first = K.min(DRAWS_PER_WORD);
    let word = draw_word(h, 0);
    if repeats_within(word, first) {
        return true;
    }
    if K <= DRAWS_PER_WORD {
        return false;
    }
    let second = K - DRAWS_PER_WORD;
    let next = draw_word(h, 1);
    repeats_within(next, second) || repeats_across(word, first, next, second)
}

/// The first `n ≤ 7` draws of `word` as `n` 9-bit lanes (lowest lane last), with the masks of every lane's lowest
/// and highest bit.
#[inline(always)]
fn lanes(word: u64, n: usize) -> (u64, u64, u64, u64) {
    let width = 9 * n as u32;
    let lanes = word.checked_shr(64 - width).unwrap_or(0);
    let full = if width == 64 {
        u64::MAX
    } else {
        (1u64 << width) - 1
    };
    let low = full / 0x1ff; // 0b…000000001_000000001: the lowest bit of every lane
    (lanes, full, low, low << 8)
}

/// Which lanes of `diff` are zero, as their highest bits: the usual borrow trick (`(z - 0x..001) & !z & 0x..100`),
/// which may mark a lane above a zero lane as well but never marks one when no lane is zero.
#[inline(always)]
fn zero_lanes(diff: u64, low: u64, high: u64) -> u64 {
    diff.wrapping_sub(low) & !diff & high
}

/// Whether two of the first `n ≤ 7` draws of `word` are equal: XOR-ing the lanes with the lanes rotated by `d`
/// makes a lane zero exactly where draws `d` apart are equal, and rotations by `1..=n/2` cover every pair.
#[inline(always)]
fn repeats_within(word: u64, n: usize) -> bool {
    let (lanes, full, low, high) = lanes(word, n);
    let width = 9 * n as u32;
    let mut zero = 0u64;
    let mut d = 1;
    while d <= n / 2 {
        let shift = 9 * d as u32;
        let rotated = ((lanes >> shift) | (lanes << (width - shift))) & full;
        zero |= zero_lanes(lanes ^ rotated, low, high);
        d += 1;
    }
    zero != 0
}

/// Whether one of the first `m` draws of `b` equals one of the first `n ≤ 7` draws of `a`: each draw of `b`,
/// copied into every lane, is compared with all lanes of `a` at once.
#[inline(always)]
fn repeats_across(a: u64, n: usize, b: u64, m: usize) -> bool {
    let (lanes, _, low, high) = lanes(a, n);
    let mut zero = 0u64;
    for j in 0..m {
        let copies = draw_from(b, j) as u64 * low;
        zero |= zero_lanes(lanes ^ copies, low, high);
    }
    zero != 0
}

/// The exact query: all of the key's distinct draws are set. Kept out of line: it is rare (3 % of hits at
/// `K = 6`), and inlined into every probe count it would bloat the hot path's code.
#[cold]
#[inline(never)]
fn exact_probe(block: &[u8; BLOCK_BYTES], h: u64, probes: usize) -> bool {
    exact_probe_within(block, h, probes, MAX_DRAW_WORDS)
}

/// [`exact_probe`] with the number of draw words before the fill as a parameter, so tests can query through the
/// fill.
fn exact_probe_within(block: &[u8; BLOCK_BYTES], h: u64, probes: usize, max_words: usize) -> bool {
    for_each_distinct_probe_within(h, probes, max_words, |pos| {
        if bit_at(block, pos) == 1 {
            ControlFlow::Continue(())
        } else {
            ControlFlow::Break(())
        }
    })
    .is_continue()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_bits_are_exactly_k_distinct_positions() {
        for probes in [1usize, 6, 7, 8, 16, 24] {
            for h in (0..2000u64).map(|i| i.wrapping_mul(0x2545_F491_4F6C_DD1D)) {
                let mut seen = Vec::new();
                let _ = for_each_distinct_probe(h, probes, |pos| {
                    assert!(pos < 512);
                    assert!(!seen.contains(&pos));
                    seen.push(pos);
                    ControlFlow::<()>::Continue(())
                });
                assert_eq!(seen.len(), probes);
            }
        }
    }

    #[test]
    fn every_hash_gets_its_bits_even_degenerate_ones() {
        // Hash 0 makes the first word 0 (all seven draws equal): later words must still supply the bits.
        for h in [0u64, u64::MAX, 1 << 63, MIX] {
            let mut n = 0;
            let _ = for_each_distinct_probe(h, usize::from(BlockedBloomParams::MAX_PROBES), |_| {
                n += 1;
                ControlFlow::<()>::Continue(())
            });
            assert_eq!(
                n,
                usize::from(BlockedBloomParams::MAX_PROBES),
                "hash {h:#x}"
            );
        }
    }

    #[test]
    fn the_deterministic_fill_completes_a_short_draw_sequence() {
        // With one draw word allowed, hash 0 draws position 0 seven times; the fill supplies 1, 2, 3, ….
        let mut bits = Vec::new();
        let _ = for_each_distinct_probe_within(0, 5, 1, |pos| {
            bits.push(pos);
            ControlFlow::<()>::Continue(())
        });
        assert_eq!(bits, [0, 1, 2, 3, 4]);
        // A line built through the fill answers "may contain" to the query through the fill, and "absent" as soon
        // as any one of the key's bits is clear: the query really walks the same sequence, fill included.
        for h in [0u64, 12_345, u64::MAX] {
            for probes in [5usize, 8, 24] {
                let mut line = [0u8; BLOCK_BYTES];
                let _ = for_each_distinct_probe_within(h, probes, 1, |pos| {
                    set_bit(&mut line, pos);
                    ControlFlow::<()>::Continue(())
                });
                let owned: Vec<usize> = (0..BLOCK_BITS as usize)
                    .filter(|&p| bit_at(&line, p) == 1)
                    .collect();
                assert_eq!(owned.len(), probes, "hash {h:#x}, {probes} probes");
                assert!(
                    exact_probe_within(&line, h, probes, 1),
                    "hash {h:#x}, {probes} probes"
                );
                for &pos in &owned {
                    line[pos / 8] ^= 1 << (pos % 8);
                    assert!(
                        !exact_probe_within(&line, h, probes, 1),
                        "hash {h:#x}: bit {pos} clear"
                    );
                    line[pos / 8] ^= 1 << (pos % 8);
                }
            }
        }
    }

    #[test]
    fn first_k_draws_are_a_subset_of_the_key_bits() {
        // The property the fast query path relies on to reject without deduplicating.
        for h in (0..5000u64).map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ i) {
            let mut bits = Vec::new();
            let _ = for_each_distinct_probe(h, 6, |pos| {
                bits.push(pos);
                ControlFlow::<()>::Continue(())
            });
            for j in 0..6 {
                assert!(bits.contains(&draw_from(draw_word(h, 0), j)));
            }
        }
    }

    #[test]
    fn duplicate_detector_matches_a_pairwise_comparison() {
        fn pairwise<const K: usize>(h: u64) -> bool {
            let draws: Vec<usize> = (0..K)
                .map(|j| draw_from(draw_word(h, j / DRAWS_PER_WORD), j % DRAWS_PER_WORD))
                .collect();
            (0..K).any(|a| (a + 1..K).any(|b| draws[a] == draws[b]))
        }
        fn check<const K: usize>(h: u64) -> bool {
            let dup = pairwise::<K>(h);
            assert_eq!(has_duplicate_draw::<K>(h), dup, "K = {K}, h = {h:#x}");
            dup
        }
        let (mut dups6, mut dups14) = (0, 0);
        for i in 0..200_000u64 {
            let h = i.wrapping_mul(0x9E37_79B9_7F4A_7C15).rotate_left(17) ^ (i << 3);
            check::<1>(h);
            check::<2>(h);
            dups6 += usize::from(check::<6>(h));
            check::<7>(h);
            check::<8>(h);
            check::<9>(h);
            check::<11>(h);
            check::<13>(h);
            dups14 += usize::from(check::<14>(h));
        }
        // About 3 % of random hashes repeat a draw among 6 (15 pairs of 512 positions), about 16 % among 14 (91
        // pairs): make sure the test saw many.
        assert!(dups6 > 3000 && dups14 > 20_000, "{dups6} {dups14}");
        // Forced repeats in every lane pair of one word.
        for a in 0..7 {
            for b in a + 1..7 {
                let mut word = 0u64;
                for j in 0..7 {
                    let v = if j == b { 100 + a } else { 100 + j };
                    word |= (v as u64) << (64 - 9 * (j + 1));
                }
                assert!(repeats_within(word, 7), "lanes {a} and {b}");
                assert!(
                    !repeats_within(word, b),
                    "lanes {a} and {b}: not among the first {b}"
                );
            }
        }
        // Forced repeats across the two words, at every pair of lanes.
        for a in 0..7 {
            for b in 0..7 {
                let (mut first, mut second) = (0u64, 0u64);
                for j in 0..7 {
                    first |= ((100 + j) as u64) << (64 - 9 * (j + 1));
                    let v = if j == b { 100 + a } else { 200 + j };
                    second |= (v as u64) << (64 - 9 * (j + 1));
                }
                assert!(repeats_across(first, 7, second, b + 1), "lanes {a} and {b}");
                assert!(
                    !repeats_across(first, 7, second, b),
                    "lanes {a} and {b}: second word cut before"
                );
            }
        }
    }

    #[test]
    fn params_validation() {
        assert!(BlockedBloomParams::new(1, 0).is_err());
        assert!(BlockedBloomParams::new(1, BlockedBloomParams::MAX_PROBES + 1).is_err());
        let p = BlockedBloomParams::new(3, 6).unwrap();
        assert_eq!(BlockedBloomParams::decode(&p.encode(), 192, 10), Ok(p));
        assert!(BlockedBloomParams::decode(&p.encode(), 191, 10).is_err());
        assert!(BlockedBloomParams::decode(&p.encode(), 0, 10).is_err());
        assert!(BlockedBloomParams::decode(&p.encode(), 192, 0).is_err());
        let mut reserved = p.encode();
        reserved[15] = 1;
        assert!(BlockedBloomParams::decode(&reserved, 192, 10).is_err());
    }
}
