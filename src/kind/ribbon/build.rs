//! Construction: count and group the hashes by shard, give each shard its share of the slots, band and solve
//! each shard (retrying seeds), and write the directory.

use super::banding::Banding;
use super::config::{MAX_SEEDS, RibbonPlan};
use super::row::{COEFF_BITS, coeff_row, local_start, remix, result_bits, shard_of};
use super::solution::back_substitute;
use super::{RibbonParams, directory};

/// Why a key set could not be built into a Ribbon filter; the builder then writes FastBloom instead.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unbuildable {
    /// The hashes did not number what the plan was made for.
    KeyCountChanged,
    /// A shard received far more keys than a working hash can give it (see `MAX_SHARD_LOAD`).
    ShardOverloaded,
    /// A shard's share of the slots is too small for one row.
    ShardTooSmall,
    /// Every seed left some shard's system unsolvable.
    NoSeedSolved,
}

/// Appends a Ribbon payload for `hashes` to `out` as planned by `plan`, or leaves `out` as it was and says why
/// it cannot. Memory: see [`RibbonPlan::build_memory`].
pub(crate) fn build(
    plan: &RibbonPlan,
    hashes: impl Iterator<Item = u64> + Clone,
    out: &mut Vec<u8>,
) -> Result<RibbonParams, Unbuildable> {
    let params = RibbonParams::from_plan(plan);
    let num_shards = plan.num_shards();
    let total_slots = plan.total_slots();

    // Keys per shard.
    let mut counts = vec![0u32; num_shards as usize];
    for h in hashes.clone() {
        if let Some(count) = counts.get_mut(shard_of(h, num_shards)) {
            *count = count.saturating_add(1);
        }
    }
    let n: u64 = counts.iter().map(|&c| u64::from(c)).sum();
    if n != plan.num_keys() || n == 0 {
        return Err(Unbuildable::KeyCountChanged);
    }

    // Each shard's first slot: its share of the slots by cumulative key count, so every shard gets the same
    // overhead (to within a slot) and the total is exactly as planned.
    let max_keys = plan.max_shard_keys();
    let mut firsts = Vec::with_capacity(counts.len());
    let mut offsets = Vec::with_capacity(counts.len());
    let mut cumulative = 0u64;
    for &count in &counts {
        let first = u128::from(cumulative) * u128::from(total_slots) / u128::from(n);
        firsts.push(first as u32); // ≤ total_slots, a u32
        offsets.push(cumulative as usize); // ≤ n, the length of a Vec
        cumulative += u64::from(count);
        let last = u128::from(cumulative) * u128::from(total_slots) / u128::from(n);
        if count > 0 {
            if u64::from(count) > max_keys {
                return Err(Unbuildable::ShardOverloaded);
            }
            if last - first < u128::from(COEFF_BITS) {
                return Err(Unbuildable::ShardTooSmall);
            }
        }
    }

    // The hashes grouped by shard (a counting sort), so each shard is solved from a contiguous slice.
    let mut grouped = vec![0u64; n as usize];
    let mut cursor = offsets.clone();
    for h in hashes {
        if let Some(at) = cursor.get_mut(shard_of(h, num_shards)) {
            if let Some(slot) = grouped.get_mut(*at) {
                *slot = h;
            }
            *at += 1;
        }
    }

    let start = out.len();
    out.resize(start + params.payload_len(), 0);
    let payload = out.get_mut(start..).unwrap_or_default();
    let (solution, dir) = payload.split_at_mut(params.solution_len().min(payload.len()));
    let layout = plan.layout();
    let mut band = Banding::default();
    let mut seeds = vec![0u8; counts.len()];
    let ends = firsts.iter().skip(1).copied().chain([total_slots]);
    let shards = firsts
        .iter()
        .zip(ends)
        .zip(offsets.iter().zip(cursor.iter()));
    for (((&lo, hi), (&from, &to)), seed) in shards.zip(seeds.iter_mut()) {
        let keys = grouped.get(from..to).unwrap_or_default();
        if keys.is_empty() {
            continue; // an empty shard owns no slots
        }
        match solve_shard(&mut band, keys, u64::from(hi - lo), layout.max_columns()) {
            Some(solved) => *seed = solved,
            None => {
                out.truncate(start);
                return Err(Unbuildable::NoSeedSolved);
            }
        }
        back_substitute(&layout, solution, u64::from(lo), &band);
    }
    directory::write(dir, &firsts, &seeds, total_slots);
    Ok(params)
}

/// Bands the rows of `keys` into a shard of `slots` slots, trying seeds until the system is solvable, and
/// returns the seed (the band then holds the solvable system), or `None` after [`MAX_SEEDS`] failures.
/// Results are cut to `columns` bits, so that rows which agree on every stored column are redundant.
fn solve_shard(band: &mut Banding, keys: &[u64], slots: u64, columns: u32) -> Option<u8> {
    let num_starts = slots - (COEFF_BITS - 1);
    let result_mask = u32::MAX >> (32 - columns.min(32));
    (0..MAX_SEEDS).find(|&seed| {
        band.reset(slots as usize);
        keys.iter().all(|&h| {
            let x = remix(h, seed);
            let start = local_start(x, num_starts) as usize;
            band.add(start, coeff_row(x), result_bits(x) & result_mask)
                .is_ok()
        })
    })
}
