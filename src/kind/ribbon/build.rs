//! Construction: count the hashes by shard, give each shard its share of the slots, group each shard's hashes and
//! band and solve the shard as soon as they are all in (retrying seeds), and write the directory.

use super::banding::Banding;
use super::plan::{MAX_SEEDS, RibbonPlan};
use super::row::{COEFF_BITS, coeff_row, local_start, remix, result_bits, shard_of};
use super::solution::{BLOCK_SLOTS, Shape, back_substitute};
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

    let start = out.len();
    out.resize(start + params.payload_len(), 0);
    let payload = out.get_mut(start..).unwrap_or_default();
    let (solution, dir) = payload.split_at_mut(params.solution_len().min(payload.len()));
    let mut seeds = vec![0u8; counts.len()];
    let shards = Shards {
        counts: &counts,
        firsts: &firsts,
        offsets: &offsets,
        total_slots,
        shape: plan.shape(),
    };
    if let Err(why) = shards.solve(runs, solution, &mut seeds) {
        out.truncate(start);
        return Err(why);
    }
    directory::write(dir, &firsts, &seeds, total_slots);
    Ok(params)
}

/// The shards' layout: keys and first slot per shard, and where each shard's keys start in the order of all keys
/// by shard.
struct Shards<'p> {
    counts: &'p [u32],
    firsts: &'p [u32],
    offsets: &'p [usize],
    total_slots: u32,
    shape: Shape,
}

impl Shards<'_> {
    /// Groups the hashes of `runs` by shard and solves each shard as soon as its last key has arrived, writing its
    /// solution into `solution` and its seed into `seeds`.
    ///
    /// The grouped keys live in a window of the order by shard (a counting sort), from the first shard not yet
    /// solved to the furthest shard a key has reached. The builder hands its hashes over bucket by bucket, in
    /// ascending order of their top bits, which is the order of the shards too (both are ranges of the hash); so
    /// the shards complete about in order and the window spans little more than one bucket (a 32nd of the keys),
    /// where grouping all the keys first took another 8 bytes per key, memory that is fresh from the kernel on a
    /// store's first builds. Keys in any other order are handled too, the window then growing to all of them.
    fn solve<'a>(
        &self,
        runs: impl Iterator<Item = &'a [u64]>,
        solution: &mut [u8],
        seeds: &mut [u8],
    ) -> Result<(), Unbuildable> {
        let num_shards = self.counts.len();
        let mut window: Vec<u64> = Vec::new();
        let mut base = 0usize; // the position of window[0] in the order of all keys by shard
        let mut filled = vec![0u32; num_shards];
        let mut first_open = 0usize; // shards before it are solved or empty
        let mut scratch = Scratch::default();
        for run in runs {
            for &h in run {
                let shard = shard_of(h, num_shards as u32);
                let (Some(&count), Some(fill), Some(&offset)) = (
                    self.counts.get(shard),
                    filled.get_mut(shard),
                    self.offsets.get(shard),
                ) else {
                    return Err(Unbuildable::KeyCountChanged);
                };
                // More keys than counted (the runs changed between passes): the shard may be solved already.
                if *fill >= count {
                    return Err(Unbuildable::KeyCountChanged);
                }
                // The window starts at a shard that is not complete, and this one is not: `offset >= base`.
                let Some(from) = offset.checked_sub(base) else {
                    return Err(Unbuildable::KeyCountChanged);
                };
                let at = from + *fill as usize;
                if window.len() <= at {
                    window.resize(from + count as usize, 0);
                }
                if let Some(slot) = window.get_mut(at) {
                    *slot = h;
                }
                *fill += 1;
                if *fill < count {
                    continue;
                }
                let keys = window.get(from..from + count as usize).unwrap_or_default();
                let seed = self.solve_into(&mut scratch, shard, keys, solution)?;
                if let Some(slot) = seeds.get_mut(shard) {
                    *slot = seed;
                }
                // Drop the keys of the solved shards at the window's front once they are half of it: each key is
                // moved at most about once.
                while first_open < num_shards
                    && filled.get(first_open) == self.counts.get(first_open)
                {
                    first_open += 1;
                }
                let open = self
                    .offsets
                    .get(first_open)
                    .map_or(window.len() + base, |&o| o);
                if (open - base) * 2 >= window.len() {
                    window.drain(..(open - base).min(window.len()));
                    base = open;
                }
            }
        }
        if filled != self.counts {
            return Err(Unbuildable::KeyCountChanged);
        }
        Ok(())
    }

    /// Solves shard `shard` from its `keys` ([`solve_shard`]), writes its solution into `solution` and returns its
    /// seed.
    fn solve_into(
        &self,
        scratch: &mut Scratch,
        shard: usize,
        keys: &[u64],
        solution: &mut [u8],
    ) -> Result<u8, Unbuildable> {
        let lo = self.firsts.get(shard).copied().unwrap_or(self.total_slots);
        let hi = self
            .firsts
            .get(shard + 1)
            .copied()
            .unwrap_or(self.total_slots);
        let columns = self.shape.max_columns();
        let seed = solve_shard(scratch, keys, u64::from(hi - lo), columns)
            .ok_or(Unbuildable::NoSeedSolved)?;
        let (shape, first_slot, band) = (&self.shape, u64::from(lo), &scratch.band);
        dispatch_probes!(
            columns,
            otherwise back_substitute::<WIDEST>(shape, solution, first_slot, band),
            back_substitute,
            shape,
            solution,
            first_slot,
            band
        );
        Ok(seed)
    }
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

    /// The measurement behind `policy::OVERHEAD_TABLE` and BENCHMARKS.md's slot-overhead tables: for shards of
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
