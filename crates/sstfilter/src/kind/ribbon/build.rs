//! Construction: count and group the hashes by shard, give each shard its share of the slots, band and solve
//! each shard (retrying seeds), and write the directory.

use super::banding::Banding;
use super::plan::{MAX_SEEDS, RibbonPlan};
use super::row::{COEFF_BITS, coeff_row, local_start, remix, result_bits, shard_of};
use super::solution::{BLOCK_SLOTS, back_substitute};
use super::{RibbonParams, WIDEST, directory};

/// Why a key set could not be built into a Ribbon filter; the builder then writes BlockedBloom instead.
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

/// Appends a Ribbon payload for the hashes in `runs` to `out` as planned by `plan`, or leaves `out` as it was
/// and says why it cannot. Memory: see [`RibbonPlan::build_memory`].
pub(crate) fn build<'a>(
    plan: &RibbonPlan,
    runs: impl Iterator<Item = &'a [u64]> + Clone,
    out: &mut Vec<u8>,
) -> Result<RibbonParams, Unbuildable> {
    let params = RibbonParams::from_plan(plan);
    let num_shards = plan.num_shards();
    let total_slots = plan.total_slots();

    // Keys per shard.
    let mut counts = vec![0u32; num_shards as usize];
    for run in runs.clone() {
        for &h in run {
            if let Some(count) = counts.get_mut(shard_of(h, num_shards)) {
                *count = count.saturating_add(1);
            }
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
    for run in runs {
        for &h in run {
            if let Some(at) = cursor.get_mut(shard_of(h, num_shards)) {
                if let Some(slot) = grouped.get_mut(*at) {
                    *slot = h;
                }
                *at += 1;
            }
        }
    }

    let start = out.len();
    out.resize(start + params.payload_len(), 0);
    let payload = out.get_mut(start..).unwrap_or_default();
    let (solution, dir) = payload.split_at_mut(params.solution_len().min(payload.len()));
    let shape = plan.shape();
    let mut scratch = Scratch::default();
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
        match solve_shard(&mut scratch, keys, u64::from(hi - lo), shape.max_columns()) {
            Some(solved) => *seed = solved,
            None => {
                out.truncate(start);
                return Err(Unbuildable::NoSeedSolved);
            }
        }
        let (first_slot, band) = (u64::from(lo), &scratch.band);
        dispatch_probes!(
            shape.max_columns(),
            otherwise back_substitute::<WIDEST>(&shape, solution, first_slot, band),
            back_substitute,
            &shape,
            solution,
            first_slot,
            band
        );
    }
    directory::write(dir, &firsts, &seeds, total_slots);
    Ok(params)
}

/// Bands the rows of `keys` into a shard of `slots` slots, trying seeds until the system is solvable, and
/// returns the seed (the band then holds the solvable system), or `None` after [`MAX_SEEDS`] failures.
/// Results are cut to `columns` bits, so that rows which agree on every stored column are redundant.
fn solve_shard(scratch: &mut Scratch, keys: &[u64], slots: u64, columns: u32) -> Option<u8> {
    (0..MAX_SEEDS).find(|&seed| solve_one_seed(scratch, keys, slots, columns, seed))
}

/// Bands the rows of `keys` with `seed` into a shard of `slots` slots; whether the system is solvable.
fn solve_one_seed(scratch: &mut Scratch, keys: &[u64], slots: u64, columns: u32, seed: u8) -> bool {
    let num_starts = slots - (COEFF_BITS - 1);
    let result_mask = u32::MAX >> (32 - columns.min(32));
    scratch.sort_by_start(keys, seed, num_starts);
    scratch.band.reset(slots as usize);
    let rows = scratch.sorted.iter().map(|&x| {
        let start = local_start(x, num_starts) as usize;
        (start, coeff_row(x), result_bits(x) & result_mask)
    });
    scratch.band.add_all(rows).is_ok()
}

/// Working memory for solving shards, reused from one shard to the next.
#[derive(Debug, Default)]
struct Scratch {
    band: Banding,
    /// A shard's remixed hashes in order of their start block.
    sorted: Vec<u64>,
    /// Keys per start block, then each block's next position in `sorted`.
    counts: Vec<u32>,
}

impl Scratch {
    /// Fills `sorted` with the remixed hashes of `keys` in order of their start's block (a counting sort).
    /// The order does not change the band that results, only how far apart consecutive rows land: sorted
    /// rows walk through the band in address order, so elimination stays in the L1 cache.
    fn sort_by_start(&mut self, keys: &[u64], seed: u8, num_starts: u64) {
        let block_of = |x: u64| (local_start(x, num_starts) / BLOCK_SLOTS) as usize;
        self.counts.clear();
        self.counts
            .resize(num_starts.div_ceil(BLOCK_SLOTS) as usize + 1, 0);
        for &h in keys {
            if let Some(count) = self.counts.get_mut(block_of(remix(h, seed))) {
                *count += 1;
            }
        }
        let mut next = 0u32;
        for count in &mut self.counts {
            (*count, next) = (next, next + *count);
        }
        self.sorted.clear();
        self.sorted.resize(keys.len(), 0);
        for &h in keys {
            let x = remix(h, seed);
            if let Some(at) = self.counts.get_mut(block_of(x)) {
                if let Some(slot) = self.sorted.get_mut(*at as usize) {
                    *slot = x;
                }
                *at += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bands `keys` with `seed` into `slots` slots with rows `width` bits wide (128 as built, or 64: the same
    /// rows cut to their low 64 bits, starting up to `slots - 64`), for the width comparison below.
    fn solvable_at_width(
        scratch: &mut Scratch,
        keys: &[u64],
        slots: u64,
        width: u64,
        seed: u8,
    ) -> bool {
        let num_starts = slots - (width - 1);
        let cut = u128::MAX >> (128 - width);
        scratch.sort_by_start(keys, seed, num_starts);
        scratch.band.reset(slots as usize);
        let rows = scratch.sorted.iter().map(|&x| {
            let start = local_start(x, num_starts) as usize;
            (start, coeff_row(x) & cut, result_bits(x) & 0xFF)
        });
        scratch.band.add_all(rows).is_ok()
    }

    /// The measurement behind `config::OVERHEAD_TABLE` and BENCHMARKS.md's slot-overhead tables: for shards of
    /// `n` keys at each slot overhead, the share of seeds that solve the shard, the elimination steps per key
    /// of a successful seed, and the steps per key including failed seeds (the construction cost), for 128-bit
    /// rows (as built) and 64-bit rows (the alternative). Keys are random 64-bit hashes; each cell is 100 to
    /// 2000 shards.
    ///
    /// `cargo test --release -p sstfilter --lib -- --ignored ribbon_overhead_table --nocapture`
    #[test]
    #[ignore = "a measurement (about a minute), not a check"]
    fn ribbon_overhead_table() {
        let overheads = [
            0.0, 0.0025, 0.005, 0.0075, 0.01, 0.015, 0.02, 0.03, 0.05, 0.08, 0.15, 0.3,
        ];
        println!(
            "| row bits | keys | overhead | success per seed | steps/key (solved) | steps/key (with retries) |"
        );
        println!("|---:|---:|---:|---:|---:|---:|");
        for width in [128u64, 64] {
            for n in [128usize, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768] {
                let trials = (400 * 8192 / n).clamp(100, 2000) as u64;
                for overhead in overheads {
                    let slots = ((n as f64 * (1.0 + overhead)).ceil() as u64).max(width);
                    let (mut solved, mut solved_steps, mut all_steps) = (0u64, 0u64, 0u64);
                    let mut scratch = Scratch::default();
                    for trial in 0..trials {
                        let keys: Vec<u64> =
                            (0..n as u64).map(|i| remix(i ^ trial << 32, 1)).collect();
                        scratch.band.steps = 0;
                        // One seed per trial: the trial's keys are fresh, which is what a new seed gives.
                        let ok = solvable_at_width(&mut scratch, &keys, slots, width, 0);
                        all_steps += scratch.band.steps;
                        if ok {
                            solved += 1;
                            solved_steps += scratch.band.steps;
                        }
                    }
                    let p = solved as f64 / trials as f64;
                    let per_key =
                        |steps: u64, shards: u64| steps as f64 / (shards.max(1) * n as u64) as f64;
                    println!(
                        "| {width} | {n} | {:.2} % | {:.3} | {:.1} | {:.1} |",
                        overhead * 100.0,
                        p,
                        per_key(solved_steps, solved),
                        per_key(all_steps, solved),
                    );
                    if p == 1.0 && overhead > 0.01 {
                        break; // every larger overhead solves too
                    }
                }
            }
        }
    }
}
