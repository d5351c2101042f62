//! BlockedBloom: a cache-local blocked Bloom filter.
//!
//! Every key maps to one 64-byte block (one cache line), chosen by fastrange on the upper 32 bits of its hash;
//! all of its probes fall inside that block, so a query costs one cache miss. The probe positions are derived
//! from the same 64-bit hash:
//!
//! * the hash is remixed by one multiplication, `x = h · 0x9E3779B97F4A7C15` (the 64-bit golden ratio, odd, so a
//!   bijection), and the top 63 bits of `x` are cut into seven 9-bit *draws* (bit positions `0..512`), most
//!   significant first;
//! * further draws come seven at a time from the words `splitmix64(h + i · 0x9E3779B97F4A7C15)`, `i = 1, 2, …`;
//! * a key's bits are its first `k` draws, **with replacement**: two draws may name the same bit, and the key then
//!   sets fewer than `k` bits. The query tests the same `k` draws.
//!
//! Why with replacement (the scheme of RocksDB's FastLocalBloom) and not `k` distinct draws, which this crate
//! used before its first release: distinct draws lower the false-positive rate by about 1 % relative (0.955 %
//! against 0.966 % at 10 bits/key, exactly), but a hit must then find out whether two of its first draws were
//! equal, and on filters larger than the cache that check cost a third of the hit time: a query's instructions
//! decide how many queries the CPU keeps in flight while their cache lines come from memory (BENCHMARKS.md 4b).
//! With replacement, a query is one multiplication and `k` byte tests, and the rate is RocksDB's own.
//!
//! Bits are addressed byte-wise (bit `p` of a block is bit `p % 8` of byte `p / 8`), so the layout is
//! independent of the host's endianness.

#[cfg(target_arch = "x86_64")]
mod avx2;
pub(crate) mod policy;

use super::{
    BatchQuery, CONTAINS_NOTHING, KindParams, MAY_CONTAIN_ALL, Queries, Query, check_reserved,
};
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

/// Byte 1 of the parameters: the probe derivation. 1 is the module docs' draws with replacement, which this
/// version writes. Blocks written before the first release carry 0 there: a key owned its first `k` *distinct*
/// draws, which include its first `k` draws, so the query of derivation 1 loses none of their keys and reads
/// them too. The byte's real job is the other direction: a pre-release reader, which took byte 1 for a reserved
/// zero, refuses a derivation-1 block instead of asking for distinct draws a key with a repeated draw never set.
const DRAWS_WITH_REPLACEMENT: u8 = 1;

/// Derivation 0: the pre-release distinct draws (see [`DRAWS_WITH_REPLACEMENT`]), read, never written.
const DISTINCT_DRAWS: u8 = 0;

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
                found: u64::from(num_probes),
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
    pub(crate) const fn payload_len(&self) -> usize {
        self.num_blocks as usize * BLOCK_BYTES
    }

    /// The theoretical false-positive rate with `num_keys` keys: the blocked-Bloom rate for 512-bit blocks
    /// (the cache-local rate RocksDB documents: 0.957 % at 10 bits/key and 6 probes); 0 for an empty filter.
    #[must_use]
    pub(crate) fn expected_fpr(&self, num_keys: u64) -> f64 {
        if num_keys == 0 {
            return 0.0;
        }
        let bits_per_key = self.payload_len() as f64 * 8.0 / num_keys as f64;
        blocked_bloom_fpr(bits_per_key, u32::from(self.num_probes), BLOCK_BITS)
    }

    /// The trailer's parameter bytes: byte 0 is the probe count, byte 1 the probe derivation, the rest are
    /// reserved and zero.
    pub(crate) fn encode(&self) -> [u8; PARAMS_LEN] {
        let mut out = [0u8; PARAMS_LEN];
        out[0] = self.num_probes;
        out[1] = DRAWS_WITH_REPLACEMENT;
        out
    }

    /// Decodes and validates the parameters of a block whose payload is `payload_len` bytes and which claims
    /// `num_keys` keys. Everything a probe relies on is checked here, once.
    pub(crate) fn decode(
        params: &[u8; PARAMS_LEN],
        payload_len: usize,
        num_keys: u64,
    ) -> Result<Self> {
        let [num_probes, derivation, reserved @ ..] = params;
        if *derivation != DRAWS_WITH_REPLACEMENT && *derivation != DISTINCT_DRAWS {
            return Err(Error::BadParams {
                kind: Some(FilterKind::BlockedBloom),
                field: "probe derivation",
                found: u64::from(*derivation),
            });
        }
        check_reserved(FilterKind::BlockedBloom, reserved, 2)?;
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
                found: (payload_len / BLOCK_BYTES) as u64,
            })?;
        // An empty payload answers "absent" for every key, so it is only valid for an empty key set; a non-empty
        // payload with no keys is just as inconsistent.
        if (num_blocks == 0) != (num_keys == 0) {
            return Err(Error::BadParams {
                kind: Some(FilterKind::BlockedBloom),
                field: "num_keys",
                found: num_keys,
            });
        }
        BlockedBloomParams::new(num_blocks, *num_probes)
    }
}

/// Builds the payload for the hashes in `runs` into `out` (appending `params.payload_len()` bytes).
pub(crate) fn build<'a>(
    params: &BlockedBloomParams,
    runs: impl Iterator<Item = &'a [u64]>,
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
        runs
    );
}

/// Sets every key's bits (its first `K` draws), with a compile-time probe count `K`.
fn set_key_bits<'a, const K: usize>(
    lines: &mut [[u8; BLOCK_BYTES]],
    num_blocks: u32,
    runs: impl Iterator<Item = &'a [u64]>,
) {
    for run in runs {
        for &h in run {
            // The index is < num_blocks == lines.len() by fastrange; `if let` keeps this panic-free regardless.
            if let Some(line) = lines.get_mut(block_index(h, num_blocks)) {
                for j in 0..K {
                    set_bit(line, draw(h, j));
                }
            }
        }
    }
}

/// The queries for `params` (see [`Query`]): a filter of no blocks contains nothing; the single query is the
/// vector one ([`vector_queries`]) where the CPU and the probe count allow it, else [`query`] (and the batch's
/// likewise).
pub(crate) fn queries(params: &BlockedBloomParams) -> Queries {
    if params.num_blocks == 0 {
        return CONTAINS_NOTHING;
    }
    let (single, batch): (Query, BatchQuery) =
        vector_queries(params.num_probes).unwrap_or(select_probes!(
            params.num_probes,
            otherwise(MAY_CONTAIN_ALL.single, MAY_CONTAIN_ALL.batch),
            query,
            query_batch
        ));
    Queries {
        single,
        prefetch: prefetch_key,
        batch,
    }
}

/// The queries that test a key's draws all at once ([`avx2`]), single and batched, for a filter of `num_probes`
/// probes, where the CPU has AVX2 and the probes fit two registers.
#[cfg(target_arch = "x86_64")]
fn vector_queries(num_probes: u8) -> Option<(Query, BatchQuery)> {
    if !std::arch::is_x86_feature_detected!("avx2") {
        return None;
    }
    macro_rules! up_to_max_probes {
        ($($k:literal)+) => {
            match num_probes {
                $($k => Some((avx2::query::<$k> as Query, avx2::query_batch::<$k> as BatchQuery)),)+
                _ => None,
            }
        };
    }
    // 1 to `avx2::MAX_PROBES`.
    up_to_max_probes!(1 2 3 4 5 6 7 8 9 10 11 12 13 14)
}

/// No vector queries off x86-64.
#[cfg(not(target_arch = "x86_64"))]
fn vector_queries(_num_probes: u8) -> Option<(Query, BatchQuery)> {
    None
}

/// Whether a key with hash `h` may be in the filter whose payload is `payload`, with `K` the probe count of
/// `params`, validated against the payload by [`BlockedBloomParams::decode`].
///
/// The hot path, kept to the fewest instructions: on a filter larger than the cache every query waits for its
/// cache line, and the fewer instructions each query takes, the more queries the CPU's reorder buffer holds at
/// once, so the more of those waits overlap (this is what the distinct draws cost: BENCHMARKS.md 4b). One multiply
/// for the block, one bounds check (a block outside the payload, impossible after validation, answers "may
/// contain"), one multiply for the draws, `K` byte tests in two halves ([`probe_line_halves`]).
///
/// No prefetch: the `K` loads follow the block index within a few instructions and are issued together (an
/// unaligned block's two cache lines at once), and the compiler scheduled a prefetch after them anyway. The
/// batched path, which fetches many keys' lines before probing any, is where prefetching pays.
fn query<const K: usize>(params: &KindParams, payload: &[u8], h: u64) -> bool {
    query_by(params, payload, h, probe_line_halves::<K>)
}

/// A single query's answer with `probe` testing the key's line (the scalar probe or the vector one).
#[inline(always)]
fn query_by(
    params: &KindParams,
    payload: &[u8],
    h: u64,
    probe: impl FnOnce(&[u8; BLOCK_BYTES], u64) -> bool,
) -> bool {
    let KindParams::BlockedBloom(params) = params else {
        return true;
    };
    cache_line(payload, params.num_blocks, h).is_none_or(|line| probe(line, h))
}

/// Starts fetching the cache line of a key with hash `h` (both ends of its 64 bytes, which straddle two lines when
/// the payload is not 64-byte aligned), for a batch: see [`Prefetch`](super::Prefetch).
fn prefetch_key(params: &KindParams, payload: &[u8], h: u64) {
    if let KindParams::BlockedBloom(params) = params
        && let Some(line) = cache_line(payload, params.num_blocks, h)
    {
        prefetch(line, 0);
        prefetch(line, BLOCK_BYTES - 1);
    }
}

/// [`query`] for every hash of `hashes`, into the matching slot of `out` (up to the shorter of the two), whose
/// cache lines [`prefetch_key`] has started fetching: by now they come from L1, or are on their way together.
fn query_batch<const K: usize>(
    params: &KindParams,
    block: &[u8],
    hashes: &[u64],
    out: &mut [bool],
) {
    query_batch_by(params, block, hashes, out, probe_line::<K>);
}

/// A batch's answers with `probe` testing each key's line (the scalar probe or the vector one).
#[inline(always)]
fn query_batch_by(
    params: &KindParams,
    block: &[u8],
    hashes: &[u64],
    out: &mut [bool],
    probe: impl Fn(&[u8; BLOCK_BYTES], u64) -> bool,
) {
    let KindParams::BlockedBloom(params) = params else {
        out.fill(true);
        return;
    };
    for (answer, &h) in out.iter_mut().zip(hashes) {
        *answer = cache_line(block, params.num_blocks, h).is_none_or(|line| probe(line, h));
    }
}

/// The cache line (64-byte block) of a hash inside the payload, which starts at offset 0 of `block`.
#[inline(always)]
fn cache_line(block: &[u8], num_blocks: u32, h: u64) -> Option<&[u8; BLOCK_BYTES]> {
    block
        .as_chunks::<BLOCK_BYTES>()
        .0
        .get(block_index(h, num_blocks))
}

/// The block of a hash: fastrange over the upper 32 bits, leaving the lower bits' entropy to the remix.
#[inline]
fn block_index(h: u64, num_blocks: u32) -> usize {
    fastrange32((h >> 32) as u32, num_blocks) as usize
}

/// The `i`-th 64-bit draw word of a hash: `h·MIX` for the first (the hot path: one multiplication), then the
/// `i`-th output of splitmix64 seeded with `h` (Steele, Lea & Flood, 2014), for keys with more than seven probes.
#[inline(always)]
fn draw_word(h: u64, i: usize) -> u64 {
    if i == 0 {
        return h.wrapping_mul(MIX);
    }
    splitmix64(h, i as u64)
}

/// Draw `j` of a hash (a bit position in `0..512`): 9-bit lane `j % 7` of draw word `j / 7`, most significant
/// first. Inside a loop over `j` with a compile-time bound, the word is computed once per seven draws.
#[inline(always)]
fn draw(h: u64, j: usize) -> usize {
    let word = draw_word(h, j / DRAWS_PER_WORD);
    (word >> (64 - 9 * (j % DRAWS_PER_WORD + 1))) as usize & (BLOCK_BITS as usize - 1)
}

/// Sets bit `pos` of a line in its 64-bit little-endian word: the format's bit `pos % 8` of byte `pos / 8`, as
/// [`bit_at`] reads it. The word's mask comes from [`BIT_IN_WORD`] rather than a shift: the build's loop is bound
/// mostly by its arithmetic, and a shift needs its count in one particular register and a constant 1 to shift,
/// where the table takes one load (BENCHMARKS.md 4b, "Builds, stop 24").
#[inline(always)]
fn set_bit(block: &mut [u8; BLOCK_BYTES], pos: usize) {
    if let (Some(word), Some(bit)) = (
        block.as_chunks_mut::<8>().0.get_mut(pos >> 6),
        BIT_IN_WORD.get(pos & 63),
    ) {
        *word = (u64::from_le_bytes(*word) | bit).to_le_bytes();
    }
}

/// `1 << i` at index `i`: the mask of bit `i` of a 64-bit word, for [`set_bit`].
#[expect(
    clippy::indexing_slicing,
    reason = "evaluated at compile time: an index out of range fails the build"
)]
static BIT_IN_WORD: [u64; 64] = {
    let mut masks = [0u64; 64];
    let mut i = 0;
    while i < 64 {
        masks[i] = 1 << i;
        i += 1;
    }
    masks
};

/// The query for a cache line with a compile-time probe count `K`: whether all of the key's `K` draws are set.
/// The bits are combined arithmetically, not with `&&`, so that a miss costs no mispredicted branch per probe.
#[inline(always)]
fn probe_line<const K: usize>(line: &[u8; BLOCK_BYTES], h: u64) -> bool {
    draws_set(line, h, 0..K) != 0
}

/// [`probe_line`] for a single query: the first half of the draws, then one branch (a clear bit answers
/// "absent" at once), then the second half. A key that is not in the filter finds a clear bit among the first
/// three of six draws nine times in ten (each bit is set with probability about 0.46 at 10 bits/key), so on a
/// miss the CPU runs half the probe instructions and goes on to the next query sooner, with more of the queries'
/// cache misses in flight at once; the branch is predictable in a stream of mostly misses or mostly hits. A
/// branch after every draw, as in RocksDB, lost where the line comes from the L3 cache: the mispredicted branches
/// cost more than they overlap (BENCHMARKS.md 4b). The batched query keeps [`probe_line`]: its lines are in L1 by
/// then, and a branch could only mispredict. Where the CPU has AVX2, both queries of a filter of up to 14 probes
/// use the vector probe of the `avx2` module instead, which tests every draw at once.
#[inline(always)]
fn probe_line_halves<const K: usize>(line: &[u8; BLOCK_BYTES], h: u64) -> bool {
    let half = K.div_ceil(2);
    draws_set(line, h, 0..half) != 0 && draws_set(line, h, half..K) != 0
}

/// 1 if draws `draws` of the key with hash `h` are all set in `line`, else 0, without branches.
#[inline(always)]
fn draws_set(line: &[u8; BLOCK_BYTES], h: u64, draws: core::ops::Range<usize>) -> u8 {
    let mut all_set = 1u8;
    for j in draws {
        all_set &= bit_at(line, draw(h, j));
    }
    all_set
}

/// Bit `pos` of a line as 0 or 1. Bit `pos % 64` of the little-endian word `pos / 64` is bit `pos % 8` of byte
/// `pos / 8` (the format's byte addressing), read a word at a time: a 64-bit shift needs no mask on its count
/// (x86 takes it modulo 64), a byte's would (modulo 8): one instruction less a probe.
#[inline(always)]
fn bit_at(line: &[u8; BLOCK_BYTES], pos: usize) -> u8 {
    line.as_chunks::<8>().0.get(pos >> 6).map_or(1, |word| {
        (u64::from_le_bytes(*word) >> (pos & 63)) as u8 & 1
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Draw `j` as FORMAT.md 4.2 states it, written out independently of [`draw`].
    fn documented_draw(h: u64, j: u64) -> usize {
        let word = if j < 7 {
            h.wrapping_mul(0x9E37_79B9_7F4A_7C15)
        } else {
            let mut z = h.wrapping_add((j / 7).wrapping_mul(0x9E37_79B9_7F4A_7C15));
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        };
        ((word >> (64 - 9 * (j % 7 + 1))) & 511) as usize
    }

    fn built_line<const K: usize>(h: u64) -> [u8; BLOCK_BYTES] {
        let mut lines = [[0u8; BLOCK_BYTES]];
        set_key_bits::<K>(&mut lines, 1, [&[h][..]].into_iter());
        lines[0]
    }

    fn set_positions(line: &[u8; BLOCK_BYTES]) -> Vec<usize> {
        (0..BLOCK_BITS as usize)
            .filter(|&p| bit_at(line, p) == 1)
            .collect()
    }

    /// The answer of the vector queries [`queries`] chooses for `K` probes (the single one's, checked equal to
    /// the batch's), asked about `line` as a filter's only block; `None` where it chooses none (more probes than
    /// two registers hold, no AVX2, not x86-64).
    pub(super) fn vector_answer<const K: usize>(line: &[u8; BLOCK_BYTES], h: u64) -> Option<bool> {
        let params = KindParams::BlockedBloom(BlockedBloomParams::new(1, K as u8).unwrap());
        vector_queries(K as u8).map(|(single, batch)| {
            let mut batched = [false; 3];
            batch(&params, line, &[h, h, h], &mut batched);
            let answer = single(&params, line, h);
            assert_eq!(batched, [answer; 3], "K = {K}, h = {h:#x}");
            answer
        })
    }

    /// A key's bits are exactly its first `K` draws (with repeats collapsed), and every probe (the batch's, the
    /// single query's, and the vector query's where the CPU has one) answers "may contain" for its own line and
    /// "absent" as soon as any one of those bits is cleared.
    fn check_key_bits<const K: usize>(h: u64) -> bool {
        let line = built_line::<K>(h);
        let mut want: Vec<usize> = (0..K as u64).map(|j| documented_draw(h, j)).collect();
        want.sort_unstable();
        want.dedup();
        assert_eq!(set_positions(&line), want, "K = {K}, h = {h:#x}");
        assert!(probe_line::<K>(&line, h), "K = {K}, h = {h:#x}");
        assert!(probe_line_halves::<K>(&line, h), "K = {K}, h = {h:#x}");
        assert_ne!(
            vector_answer::<K>(&line, h),
            Some(false),
            "K = {K}, h = {h:#x}"
        );
        for &pos in &want {
            let mut cleared = line;
            cleared[pos / 8] ^= 1 << (pos % 8);
            assert!(
                !probe_line::<K>(&cleared, h),
                "K = {K}, h = {h:#x}, bit {pos}"
            );
            assert!(
                !probe_line_halves::<K>(&cleared, h),
                "K = {K}, h = {h:#x}, bit {pos}"
            );
            assert_ne!(
                vector_answer::<K>(&cleared, h),
                Some(true),
                "K = {K}, h = {h:#x}, bit {pos}"
            );
        }
        want.len() < K
    }

    #[test]
    fn key_bits_are_its_first_k_draws() {
        let mut repeated = 0;
        for h in (0..3000u64)
            .map(|i| i.wrapping_mul(0x2545_F491_4F6C_DD1D))
            .chain([0, u64::MAX, 1 << 63, MIX])
        {
            check_key_bits::<1>(h);
            check_key_bits::<2>(h);
            check_key_bits::<3>(h);
            check_key_bits::<4>(h);
            check_key_bits::<5>(h);
            repeated += usize::from(check_key_bits::<6>(h));
            check_key_bits::<7>(h);
            check_key_bits::<8>(h);
            check_key_bits::<14>(h);
            check_key_bits::<15>(h);
            check_key_bits::<24>(h);
        }
        // About 3 % of hashes repeat a draw among 6; hash 0 repeats all of them. The test must have seen some.
        assert!(repeated > 30, "{repeated}");
    }

    #[test]
    fn a_hash_whose_draws_all_repeat_sets_and_finds_one_bit() {
        // Hash 0 makes the first word 0: its first seven draws are all bit 0.
        assert_eq!(set_positions(&built_line::<6>(0)), [0]);
        let mut line = [0u8; BLOCK_BYTES];
        line[0] = 1;
        assert!(probe_line::<6>(&line, 0) && probe_line_halves::<6>(&line, 0));
        assert!(!probe_line::<6>(&[0u8; BLOCK_BYTES], 0));
        assert!(!probe_line_halves::<6>(&[0u8; BLOCK_BYTES], 0));
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
        // The pre-release derivation (distinct draws, byte 1 = 0) is read; unknown ones are refused.
        let mut distinct = p.encode();
        distinct[1] = 0;
        assert_eq!(BlockedBloomParams::decode(&distinct, 192, 10), Ok(p));
        for derivation in [2u8, 3, 255] {
            let mut other = p.encode();
            other[1] = derivation;
            assert_eq!(
                BlockedBloomParams::decode(&other, 192, 10),
                Err(Error::BadParams {
                    kind: Some(FilterKind::BlockedBloom),
                    field: "probe derivation",
                    found: u64::from(derivation),
                })
            );
        }
    }
}
