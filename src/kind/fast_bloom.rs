//! FastBloom: a cache-local blocked Bloom filter.
//!
//! Every key maps to one 64-byte block (one cache line), chosen by fastrange on the upper 32 bits of its hash;
//! all of its probes fall inside that block, so a query costs one cache miss. The probe positions are derived
//! from the same 64-bit hash:
//!
//! * the hash is remixed by one multiplication, `x = h · 0x9E3779B97F4A7C15` (the 64-bit golden ratio, odd, so a
//!   bijection), and the top 63 bits of `x` are cut into seven 9-bit *draws* (bit positions `0..512`), most
//!   significant first;
//! * further draws come from `x' = (x ^ (x >> 32)) · 0x9E3779B97F4A7C15`, seven at a time;
//! * a key's bits are its first `k` **distinct** draws: a draw equal to an earlier one is skipped.
//!
//! Distinct probes are what bring the false-positive rate below the blocked-Bloom rate with replacement
//! (at 10 bits/key and 6 probes: 0.955 % measured, against 0.967 % with replacement; see BENCHMARKS.md).
//!
//! The query takes advantage of a property of this scheme: the first `k` draws are always a subset of the
//! key's bits. If any of them is clear the key is absent, whatever the duplicates, so a miss never needs the
//! distinctness bookkeeping. Only when all `k` are set does the query check, branch-free, whether two of those
//! draws were equal, and in that rare case (3 % of keys at `k = 6`) walk the exact distinct sequence.
//!
//! Bits are addressed byte-wise (bit `p` of a block is bit `p % 8` of byte `p / 8`), so the layout is
//! independent of the host's endianness.

use core::ops::ControlFlow;

use crate::error::{Error, Result};
use crate::format::{FilterKind, PARAMS_LEN};
use crate::math::{blocked_bloom_fpr, fastrange32};

/// Bytes in one block: one cache line on every mainstream CPU.
pub const BLOCK_BYTES: usize = 64;

/// Bits in one block.
pub const BLOCK_BITS: u32 = 512;

/// The largest probe count the format allows. Beyond about 100 bits/key the optimum exceeds this, and by then
/// the false-positive rate (< 1e-10) is limited by block-load variance, not by the probe count.
pub const MAX_PROBES: u8 = 24;

/// Multiplier of the probe remix: 2^64 / φ, odd. Any odd constant makes the remix a bijection; this one spreads
/// low input bits into the high output bits that the draws use first.
const MIX: u64 = 0x9E37_79B9_7F4A_7C15;

/// Draws cut from one 64-bit word: 7 × 9 = 63 bits.
const DRAWS_PER_WORD: usize = 7;

/// The parameters of a FastBloom filter: its number of 64-byte blocks and its probe count.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FastBloomParams {
    num_blocks: u32,
    num_probes: u8,
}

impl FastBloomParams {
    /// Parameters for an explicit size and probe count.
    ///
    /// Returns [`Error::BadParams`] when `num_probes` is not in `1..=MAX_PROBES`.
    pub fn new(num_blocks: u32, num_probes: u8) -> Result<Self> {
        if num_probes == 0 || num_probes > MAX_PROBES {
            return Err(Error::BadParams {
                kind: Some(FilterKind::FastBloom),
                field: "num_probes",
                value: u64::from(num_probes),
            });
        }
        Ok(FastBloomParams {
            num_blocks,
            num_probes,
        })
    }

    /// Parameters for `num_keys` keys at `bits_per_key` bits each, with the probe count from the measured table
    /// ([`probes_for_bits_per_key`]). The block count is `ceil(num_keys · bits_per_key / 512)`, at least one block
    /// when there are keys, zero for none, and saturates at `u32::MAX` blocks (256 GiB).
    #[must_use]
    pub fn for_keys(num_keys: usize, bits_per_key: f64) -> Self {
        let bits = num_keys as f64 * bits_per_key;
        let blocks = (bits / f64::from(BLOCK_BITS)).ceil();
        let num_blocks = if num_keys == 0 {
            0
        } else if blocks >= f64::from(u32::MAX) {
            u32::MAX
        } else {
            (blocks as u32).max(1)
        };
        FastBloomParams {
            num_blocks,
            num_probes: probes_for_bits_per_key(bits_per_key),
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
    /// (see [`blocked_bloom_fpr`]); 0 for an empty filter.
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
        if let Some(pos) = reserved.iter().position(|&b| b != 0) {
            return Err(Error::BadParams {
                kind: Some(FilterKind::FastBloom),
                field: "reserved parameter byte",
                value: pos as u64 + 1,
            });
        }
        if !payload_len.is_multiple_of(BLOCK_BYTES) {
            return Err(Error::LengthMismatch {
                kind: FilterKind::FastBloom,
                expected: (payload_len / BLOCK_BYTES * BLOCK_BYTES) as u64,
                found: payload_len as u64,
            });
        }
        let num_blocks =
            u32::try_from(payload_len / BLOCK_BYTES).map_err(|_| Error::BadParams {
                kind: Some(FilterKind::FastBloom),
                field: "num_blocks",
                value: (payload_len / BLOCK_BYTES) as u64,
            })?;
        // An empty payload answers "absent" for every key, so it is only valid for an empty key set; a non-empty
        // payload with no keys is just as inconsistent.
        if (num_blocks == 0) != (num_keys == 0) {
            return Err(Error::BadParams {
                kind: Some(FilterKind::FastBloom),
                field: "num_keys",
                value: num_keys,
            });
        }
        FastBloomParams::new(num_blocks, *num_probes)
    }
}

/// The probe count for a bits/key setting, from the table measured by `examples/tune_probes.rs` (see
/// BENCHMARKS.md): the smallest `k` whose false-positive rate is within 1 % of the best `k` at that setting.
#[must_use]
pub fn probes_for_bits_per_key(bits_per_key: f64) -> u8 {
    let optimal = (bits_per_key * core::f64::consts::LN_2).round();
    if optimal.is_nan() || optimal < 1.0 {
        1
    } else if optimal >= f64::from(MAX_PROBES) {
        MAX_PROBES
    } else {
        optimal as u8
    }
}

/// Builds the payload for `hashes` into `out` (appending `params.payload_len()` bytes).
pub(crate) fn build(
    params: &FastBloomParams,
    hashes: impl Iterator<Item = u64>,
    out: &mut Vec<u8>,
) {
    let start = out.len();
    out.resize(start + params.payload_len(), 0);
    let payload = out.get_mut(start..).unwrap_or_default();
    let (blocks, _) = payload.as_chunks_mut::<BLOCK_BYTES>();
    let probes = usize::from(params.num_probes);
    for h in hashes {
        let index = block_index(h, params.num_blocks);
        // The index is < num_blocks == blocks.len() by fastrange; `if let` keeps this panic-free regardless.
        if let Some(block) = blocks.get_mut(index) {
            let _ = for_each_distinct_probe(h, probes, |pos| {
                set_bit(block, pos);
                ControlFlow::<()>::Continue(())
            });
        }
    }
}

/// A borrowed, validated FastBloom payload, ready to answer queries.
#[derive(Debug, Clone, Copy)]
pub(crate) struct FastBloomRef<'a> {
    blocks: &'a [[u8; BLOCK_BYTES]],
    num_probes: u8,
}

impl<'a> FastBloomRef<'a> {
    /// Views `payload` (already validated against `params` by [`FastBloomParams::decode`]) as blocks.
    pub(crate) fn new(payload: &'a [u8], params: &FastBloomParams) -> Self {
        let (blocks, _) = payload.as_chunks::<BLOCK_BYTES>();
        FastBloomRef {
            blocks,
            num_probes: params.num_probes,
        }
    }

    /// Whether a key with hash `h` may have been added.
    #[inline]
    pub(crate) fn may_contain(&self, h: u64) -> bool {
        if self.blocks.is_empty() {
            return false; // built from no keys: contains nothing
        }
        match self.block_for(h) {
            Some(block) => dispatch_probes!(self.num_probes, otherwise true, probe_block, block, h),
            None => true,
        }
    }

    /// Answers for every hash of `hashes` into the matching slot of `out` (up to the shorter of the two).
    ///
    /// Two passes per group of hashes: first every block address is computed, then every block is probed. The
    /// second pass is a short loop of independent loads, so the CPU keeps many cache misses in flight at once.
    #[inline]
    pub(crate) fn may_contain_batch(&self, hashes: &[u64], out: &mut [bool]) {
        if self.blocks.is_empty() {
            out.fill(false);
            return;
        }
        dispatch_probes!(
            self.num_probes,
            otherwise out.fill(true),
            probe_batch,
            self,
            hashes,
            out
        );
    }

    /// The block a hash maps to. Always `Some` for a non-empty filter (fastrange stays below the block count,
    /// which open validated to fit in u32); callers answer "may contain" for `None` all the same.
    #[inline]
    fn block_for(&self, h: u64) -> Option<&'a [u8; BLOCK_BYTES]> {
        self.blocks.get(block_index(h, self.blocks.len() as u32))
    }
}

/// Batch query with a compile-time probe count (see [`FastBloomRef::may_contain_batch`]).
fn probe_batch<const K: usize>(filter: &FastBloomRef<'_>, hashes: &[u64], out: &mut [bool]) {
    const GROUP: usize = 16;
    for (hashes, out) in hashes.chunks(GROUP).zip(out.chunks_mut(GROUP)) {
        let mut blocks: [Option<&[u8; BLOCK_BYTES]>; GROUP] = [None; GROUP];
        for (slot, &h) in blocks.iter_mut().zip(hashes) {
            *slot = filter.block_for(h);
        }
        for ((answer, block), &h) in out.iter_mut().zip(blocks).zip(hashes) {
            *answer = block.is_none_or(|block| probe_block::<K>(block, h));
        }
    }
}

/// The block of a hash: fastrange over the upper 32 bits, leaving the lower bits' entropy to the remix.
#[inline]
fn block_index(h: u64, num_blocks: u32) -> usize {
    fastrange32((h >> 32) as u32, num_blocks) as usize
}

/// The `j`-th 64-bit draw word of a hash: `h·MIX`, then `(x ^ x>>32)·MIX` for each further word.
#[inline(always)]
fn draw_word(h: u64, j: usize) -> u64 {
    let mut x = h.wrapping_mul(MIX);
    for _ in 0..j {
        x = (x ^ (x >> 32)).wrapping_mul(MIX);
    }
    x
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

#[inline(always)]
fn bit_is_set(block: &[u8; BLOCK_BYTES], pos: usize) -> bool {
    block
        .get(pos >> 3)
        .is_some_and(|byte| byte >> (pos & 7) & 1 == 1)
}

/// Calls `f` with the key's first `probes` distinct draws, in order, stopping early if `f` breaks. This is the
/// definition of which bits a key owns; the builder and the exact query path both go through it.
fn for_each_distinct_probe<B>(
    h: u64,
    probes: usize,
    mut f: impl FnMut(usize) -> ControlFlow<B>,
) -> ControlFlow<B> {
    let mut seen = [0u64; (BLOCK_BITS / 64) as usize];
    let mut word = h.wrapping_mul(MIX);
    let mut in_word = 0;
    let mut found = 0;
    while found < probes {
        if in_word == DRAWS_PER_WORD {
            word = (word ^ (word >> 32)).wrapping_mul(MIX);
            in_word = 0;
        }
        let pos = draw_from(word, in_word);
        in_word += 1;
        let (lane, bit) = (pos >> 6, 1u64 << (pos & 63));
        if let Some(seen) = seen.get_mut(lane)
            && *seen & bit == 0
        {
            *seen |= bit;
            found += 1;
            f(pos)?;
        }
    }
    ControlFlow::Continue(())
}

/// The query for a block with a compile-time probe count `K` (see the module docs for why the first `K` draws
/// suffice to reject).
#[inline(always)]
fn probe_block<const K: usize>(block: &[u8; BLOCK_BYTES], h: u64) -> bool {
    let mut all_set = true;
    for j in 0..K {
        let word = draw_word(h, j / DRAWS_PER_WORD);
        all_set &= bit_is_set(block, draw_from(word, j % DRAWS_PER_WORD));
    }
    if !all_set {
        return false;
    }
    if K <= DRAWS_PER_WORD && !has_duplicate_draw::<K>(draw_word(h, 0)) {
        return true;
    }
    exact_probe(block, h, K)
}

/// Whether two of the first `K ≤ 7` draws of `word` are equal, branch-free: the draws are `K` 9-bit lanes;
/// XOR-ing the lanes with the lanes rotated by `d` makes a lane zero exactly where draws `d` apart are equal,
/// and rotations by `1..=K/2` cover every pair. A zero lane is detected with the usual borrow trick
/// (`(z - 0x..001) & !z & 0x..100`), which never reports a zero lane that is not there.
#[inline(always)]
fn has_duplicate_draw<const K: usize>(word: u64) -> bool {
    let width = 9 * K as u32;
    let lanes = word >> (64 - width);
    let full = if width == 64 {
        u64::MAX
    } else {
        (1u64 << width) - 1
    };
    let low = full / 0x1ff; // 0b…000000001_000000001: the lowest bit of every lane
    let high = low << 8; // the highest bit of every lane
    let mut zero_lane = 0u64;
    let mut d = 1;
    while d <= K / 2 {
        let shift = 9 * d as u32;
        let rotated = ((lanes >> shift) | (lanes << (width - shift))) & full;
        let diff = lanes ^ rotated;
        zero_lane |= diff.wrapping_sub(low) & !diff & high;
        d += 1;
    }
    zero_lane != 0
}

/// The exact query: all of the key's distinct draws are set.
#[cold]
fn exact_probe(block: &[u8; BLOCK_BYTES], h: u64, probes: usize) -> bool {
    for_each_distinct_probe(h, probes, |pos| {
        if bit_is_set(block, pos) {
            ControlFlow::Continue(())
        } else {
            ControlFlow::Break(())
        }
    })
    .is_continue()
}
