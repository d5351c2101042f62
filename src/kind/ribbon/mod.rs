//! Ribbon: a standard Ribbon filter (Dillinger & Walzer, "Ribbon filter: practically smaller than Bloom and
//! Xor", 2021) with 128-bit coefficient rows, split into independently solved shards.
//!
//! Each key is one linear equation over GF(2): a 128-bit coefficient row starting at a slot, and `r` result
//! bits. The filter stores a solution (`r` bits per slot) that satisfies every key's equation; a query
//! recomputes its key's equation and checks it, which a key that was never added passes with probability
//! `2^-r`. Everything derives from the one 64-bit key hash (`row.rs`).
//!
//! * **Shards.** Keys are split by hash into shards of about 8 Ki keys, each an independent Ribbon system with
//!   its own slot range and seed, recorded in a small directory at the end of the payload (`directory.rs`).
//!   A long system needs more spare slots than a short one (RocksDB's measurements: +0.38 % per doubling at
//!   128-bit rows), so shards keep the slot overhead near 1.5 % at any key count, where one system of 10^7 keys
//!   would need about 4.5 %; a shard that fails to solve is retried with another seed on its own; and a shard's
//!   band fits in the L2 cache while it is built.
//! * **Fractional bits per key.** The solution is stored in blocks of 64 slots, column by column
//!   (`solution.rs`); blocks before `upper_start_block` have `r` columns, the others `r + 1`, so any
//!   false-positive rate between `2^-32` and `1/2` can be targeted.
//! * **Construction** (`build.rs`) groups the hashes by shard, bands each shard by on-the-fly Gaussian
//!   elimination (`banding.rs`), retries a shard's seed on failure (up to 16), and back-substitutes into the
//!   solution. If a shard cannot be solved, construction says why and the policy writes its fallback.
//!
//! The byte layout is FORMAT.md section 4.3; the sizes and the measurements behind them are in BENCHMARKS.md.

mod banding;
mod build;
mod directory;
mod plan;
pub(crate) mod policy;
mod row;
mod solution;

use super::{BATCH, BatchQuery, KindParams, PREFETCH_NOTHING, Queries, Query, check_reserved};
use crate::error::{Error, Result};
use crate::format::PARAMS_LEN;
use crate::le::LeReader;
use crate::tag::FilterKind;
pub(crate) use build::build;
pub(crate) use directory::len as directory_len;
pub use plan::RibbonPlan;
pub(crate) use row::COEFF_BITS;
pub(crate) use solution::{BLOCK_SLOTS, MAX_COLUMNS, Shape};

/// The most blocks a Ribbon filter can have: directory entries are `u32` slot numbers.
const MAX_BLOCKS: u32 = 1 << 26;

/// The widest probe instance. Column counts become compile-time constants through `dispatch_probes!`
/// (`kind/mod.rs`, exact instances for 1..=24); the rare counts above it (false-positive rates below 2^-24)
/// share this instance. It is correct for any count up to it because both sides only ever use a block's own
/// columns: construction solves the extra columns against zero result bits and stores `columns(block)` of
/// them (`solution::back_substitute`), and a probe compares `columns(block)` bits, reading each column word
/// it compares from the solution, or zero past its end (`solution::words`, which once zeroed whole groups of
/// `M` words near the end and so lost keys at 25..=31 columns).
const WIDEST: usize = MAX_COLUMNS as usize;

/// The parameters of a Ribbon filter, as stored in the trailer: the solution's shape and the shard count.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RibbonParams {
    shape: Shape,
    num_shards: u32,
    /// Bytes of the solution, which the directory follows (derived, cached for the query).
    solution_len: usize,
}

impl RibbonParams {
    /// The parameters a successful construction of `plan` stores.
    fn from_plan(plan: &RibbonPlan) -> Self {
        Self::new(plan.shape(), plan.num_shards())
    }

    const fn new(shape: Shape, num_shards: u32) -> Self {
        RibbonParams {
            shape,
            num_shards,
            solution_len: shape.len_bytes() as usize,
        }
    }

    /// Result bits per slot in the lower blocks, `r`; upper blocks have `r + 1`.
    #[must_use]
    pub(crate) const fn lower_columns(&self) -> u32 {
        self.shape.lower_columns
    }

    /// The first block with `r + 1` result bits per slot (`num_blocks` if there is none).
    #[must_use]
    pub(crate) const fn upper_start_block(&self) -> u32 {
        self.shape.upper_start_block
    }

    /// Number of 64-slot blocks of the solution.
    #[must_use]
    pub(crate) const fn num_blocks(&self) -> u32 {
        self.shape.num_blocks
    }

    /// Number of independently solved shards.
    #[must_use]
    pub(crate) const fn num_shards(&self) -> u32 {
        self.num_shards
    }

    /// Length of the payload in bytes: the solution and the shard directory.
    #[must_use]
    pub(crate) const fn payload_len(&self) -> usize {
        self.solution_len + directory::len(self.num_shards as u64) as usize
    }

    /// The theoretical false-positive rate: `2^-r` for a query that starts in a lower block, `2^-(r + 1)` in an
    /// upper one, weighted by their share of the blocks. It does not depend on the key count.
    #[must_use]
    pub(crate) fn expected_fpr(&self) -> f64 {
        self.shape.false_positive_rate()
    }

    /// Bytes of the solution, which the directory follows.
    const fn solution_len(&self) -> usize {
        self.solution_len
    }

    /// The trailer's parameter bytes (FORMAT.md section 4.3).
    pub(crate) fn encode(&self) -> [u8; PARAMS_LEN] {
        let mut out = [0u8; PARAMS_LEN];
        let fields = [
            (4, self.num_shards.to_le_bytes()),
            (8, self.shape.num_blocks.to_le_bytes()),
            (12, self.shape.upper_start_block.to_le_bytes()),
        ];
        out[0] = self.shape.lower_columns as u8; // NOTE: r ≤ 32 fits a byte; bytes 1..4 stay reserved.
        for (at, bytes) in fields {
            if let Some(field) = out.get_mut(at..at + 4) {
                field.copy_from_slice(&bytes);
            }
        }
        out
    }

    /// Decodes and validates the parameters of a block whose payload is `payload_len` bytes and which claims
    /// `num_keys` keys. Everything a probe relies on is checked here, once; the directory entries, which are
    /// payload, are range-checked by each probe instead (so `open` stays O(1)).
    pub(crate) fn decode(
        params: &[u8; PARAMS_LEN],
        payload_len: usize,
        num_keys: u64,
    ) -> Result<Self> {
        let bad = |field: &'static str, value: u64| Error::BadParams {
            kind: Some(FilterKind::Ribbon),
            field,
            found: value,
        };
        let mut r = LeReader::new(params);
        let (lower, reserved) = (r.u8(), r.array::<3>());
        let (num_shards, num_blocks, upper_start) = (r.u32(), r.u32(), r.u32());
        let (Some(lower), Some(reserved), Some(num_shards), Some(num_blocks), Some(upper_start)) =
            (lower, reserved, num_shards, num_blocks, upper_start)
        else {
            return Err(bad("params", 0)); // unreachable: 16 bytes hold these fields
        };
        check_reserved(FilterKind::Ribbon, &reserved, 1)?;
        let lower = u32::from(lower);
        if !(1..=MAX_COLUMNS).contains(&lower) {
            return Err(bad("lower_columns", u64::from(lower)));
        }
        if num_shards == 0 {
            return Err(bad("num_shards", 0));
        }
        if num_blocks == 0 || num_blocks > MAX_BLOCKS {
            return Err(bad("num_blocks", u64::from(num_blocks)));
        }
        // Upper blocks have r + 1 columns, which must fit the 32 result bits.
        if upper_start > num_blocks || (lower == MAX_COLUMNS && upper_start != num_blocks) {
            return Err(bad("upper_start_block", u64::from(upper_start)));
        }
        // A Ribbon filter is only ever built for at least one key (none is a BlockedBloom block).
        if num_keys == 0 {
            return Err(bad("num_keys", 0));
        }
        let shape = Shape {
            lower_columns: lower,
            upper_start_block: upper_start,
            num_blocks,
        };
        let expected = shape.len_bytes() + directory::len(u64::from(num_shards));
        if expected != payload_len as u64 {
            return Err(Error::LengthMismatch {
                kind: FilterKind::Ribbon,
                expected,
                found: payload_len as u64,
            });
        }
        Ok(Self::new(shape, num_shards))
    }
}

/// The queries for `params` (see [`Query`]), with the widest block's column count as a constant. Column counts
/// above 24 (rates below 2^-24) share the [`WIDEST`] instance.
pub(crate) fn queries(params: &RibbonParams) -> Queries {
    let (single, batch): (Query, BatchQuery) = select_probes!(
        params.shape.max_columns(),
        otherwise(query::<WIDEST>, query_batch::<WIDEST>),
        query,
        query_batch
    );
    Queries {
        single,
        prefetch: PREFETCH_NOTHING,
        batch,
    }
}

/// Whether a key with hash `h` may be in `block`, the payload of a Ribbon filter with `params` (the query a
/// reader chooses, for the kind's own tests).
#[cfg(test)]
pub(crate) fn may_contain(block: &[u8], params: &RibbonParams, h: u64) -> bool {
    KindParams::Ribbon(*params).may_contain(block, h)
}

/// [`may_contain`] for every hash of `hashes`, into the matching slot of `out`.
#[cfg(test)]
pub(crate) fn may_contain_batch(
    block: &[u8],
    params: &RibbonParams,
    hashes: &[u64],
    out: &mut [bool],
) {
    let params = KindParams::Ribbon(*params);
    let queries = params.queries();
    for &h in hashes {
        (queries.prefetch)(&params, block, h);
    }
    (queries.batch)(&params, block, hashes, out);
}

/// The batched query with the shape's column count `M` as a constant, [`BATCH`] keys at a time: each key is
/// located (its shard, seed and equation), its solution lines are prefetched (the shard directory, a few bytes a
/// shard, stays in the cache), and its equation is kept; then each kept equation is probed, by then with its lines
/// in the cache or on their way together.
///
/// The kind fetches here rather than in a [`Prefetch`](super::Prefetch) called as each key is hashed (what
/// BlockedBloom does), because finding a key's lines takes most of the work of its query: a prefetch of its own
/// located every key twice (BENCHMARKS.md 4b has the batches measured both ways).
fn query_batch<const M: usize>(
    params: &KindParams,
    block: &[u8],
    hashes: &[u64],
    out: &mut [bool],
) {
    let KindParams::Ribbon(params) = params else {
        out.fill(true);
        return;
    };
    let mut located: [Option<(Equation, &[u8])>; BATCH] = [None; BATCH];
    for (hashes, out) in hashes.chunks(BATCH).zip(out.chunks_mut(BATCH)) {
        for (found, &h) in located.iter_mut().zip(hashes) {
            *found = locate(block, params, h);
            if let Some((equation, solution)) = found {
                solution::prefetch_span(&params.shape, solution, equation.start);
            }
        }
        for ((answer, &found), &h) in out.iter_mut().zip(&located).zip(hashes) {
            *answer = answer_located::<M>(params, block, h, found);
        }
    }
}

/// Whether a key with hash `h` may be in the filter whose payload is `block`, with `M` the widest column count of
/// `params`, validated against the payload by [`RibbonParams::decode`].
///
/// One fastrange picks the shard, one 9-byte read gets its directory entry, a remix gives the row, and the
/// probe reads the three 64-slot blocks the row spans. Anything impossible in the directory (a shard smaller
/// than a row, or past the solution) answers "may contain"; an empty shard holds no key.
fn query<const M: usize>(params: &KindParams, block: &[u8], h: u64) -> bool {
    let KindParams::Ribbon(params) = params else {
        return true;
    };
    answer_located::<M>(params, block, h, locate(block, params, h))
}

/// The answer for the key with hash `h`, given what [`locate`] found for it: its equation probed against the
/// solution, or, when there is nothing to probe, "absent" only for an empty shard.
#[inline(always)]
fn answer_located<const M: usize>(
    params: &RibbonParams,
    block: &[u8],
    h: u64,
    located: Option<(Equation, &[u8])>,
) -> bool {
    match located {
        Some((equation, solution)) => solution::probe::<M>(&params.shape, solution, &equation),
        None => !block_holds_no_key(block, params, h),
    }
}

/// A key's equation in the solution: where its row starts, the row and the result bits.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Equation {
    start: u64,
    row: u128,
    result: u32,
}

/// The equation of the key with hash `h` and the solution it must satisfy, or `None` when there is nothing to
/// probe: the key's shard is empty (it holds no key), or its directory entry is impossible (a shard smaller
/// than a row, or past the solution), or the block is too short for its parameters.
#[inline(always)]
fn locate<'a>(block: &'a [u8], params: &RibbonParams, h: u64) -> Option<(Equation, &'a [u8])> {
    let (solution, dir) = block.split_at_checked(params.solution_len)?;
    let shard = directory::shard(dir, row::shard_of(h, params.num_shards))?;
    if shard.hi < shard.lo + COEFF_BITS || shard.hi > params.shape.slots() {
        return None;
    }
    let x = row::remix(h, shard.seed);
    let start = shard.lo + row::local_start(x, shard.hi - shard.lo - (COEFF_BITS - 1));
    let equation = Equation {
        start,
        row: row::coeff_row(x),
        result: row::result_bits(x),
    };
    Some((equation, solution))
}

/// Whether [`locate`] found nothing to probe because the key's shard is empty, the one case that answers
/// "absent"; everything else it cannot probe answers "may contain".
#[cold]
fn block_holds_no_key(block: &[u8], params: &RibbonParams, h: u64) -> bool {
    let dir = block.get(params.solution_len..).unwrap_or_default();
    directory::shard(dir, row::shard_of(h, params.num_shards)).is_some_and(|s| s.hi == s.lo)
}

#[cfg(test)]
mod tests;
