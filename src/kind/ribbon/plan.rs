//! The plan a construction follows: the key count, the solution's shape, the shards and the slots, and the memory
//! building it needs. Writer-side only (a reader takes every size from the block); which plan to build for a
//! key set and a rate is the policy's choice (`policy/ribbon.rs`).

use super::directory;
use super::solution::Shape;

/// Seeds tried per shard before construction gives up (and the policy writes its BlockedBloom fallback). At the
/// default overheads a shard fails a seed at most one time in twelve, so 16 failures in a row (below
/// `10^-17`) are not expected in the lifetime of any store; a seed is one byte in the block, so up to 256
/// would be readable.
pub(crate) const MAX_SEEDS: u8 = 16;

/// A shard may hold this many times the mean keys per shard before construction gives up on the key set (it
/// would mean a broken hash: a shard's key count is binomial, and at
/// [`SHARD_TARGET_KEYS`](super::policy::SHARD_TARGET_KEYS) keys 1.5× the mean is dozens of standard deviations
/// out). It bounds the per-shard scratch memory.
const MAX_SHARD_LOAD: f64 = 1.5;

/// Bytes of construction scratch per slot of the largest shard: a 16-byte pivot row and 4 bytes of result.
const BAND_BYTES_PER_SLOT: u64 = 20;

/// The shape of a Ribbon filter for a known number of keys: what [`RibbonPolicy`](crate::RibbonPolicy) plans
/// at `finish`, and what the block's parameters will be if construction succeeds.
///
/// Keys are split by hash into shards of about 8 Ki keys (`num_shards`); each shard is an independent Ribbon
/// system with `slot_overhead` more slots than keys, and all shards share one solution of `num_blocks` blocks of
/// 64 slots with `r` or `r + 1` result bits per slot.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RibbonPlan {
    num_keys: u64,
    shape: Shape,
    num_shards: u32,
    total_slots: u32,
}

impl RibbonPlan {
    /// A plan for `num_keys` keys (at least one) split into `num_shards` shards over `total_slots` slots, stored in
    /// `shape`. The caller (the policy) keeps `total_slots` within the shape's slots.
    pub(crate) const fn new(
        num_keys: u64,
        shape: Shape,
        num_shards: u32,
        total_slots: u32,
    ) -> Self {
        RibbonPlan {
            num_keys,
            shape,
            num_shards,
            total_slots,
        }
    }

    /// This plan with another solution shape and slot count (same keys and shards), so that tests can reach
    /// every shape the format allows rather than only those a rate and the overhead table give.
    #[cfg(test)]
    pub(crate) fn with_shape(self, shape: Shape, total_slots: u32) -> Self {
        RibbonPlan {
            shape,
            total_slots,
            ..self
        }
    }

    /// This plan with another shard count.
    #[cfg(test)]
    pub(crate) fn with_shards(self, num_shards: u32) -> Self {
        RibbonPlan { num_shards, ..self }
    }

    /// Number of keys the plan is for.
    #[must_use]
    pub(crate) fn num_keys(&self) -> u64 {
        self.num_keys
    }

    /// Result bits per slot in the lower blocks, `r`; upper blocks have `r + 1`.
    #[cfg(test)]
    #[must_use]
    pub(crate) fn lower_columns(&self) -> u32 {
        self.shape.lower_columns
    }

    /// The first block with `r + 1` result bits per slot.
    #[cfg(test)]
    #[must_use]
    pub(crate) fn upper_start_block(&self) -> u32 {
        self.shape.upper_start_block
    }

    /// Number of 64-slot blocks of the solution.
    #[cfg(test)]
    #[must_use]
    pub(crate) fn num_blocks(&self) -> u32 {
        self.shape.num_blocks
    }

    /// Number of independent shards.
    #[must_use]
    pub(crate) fn num_shards(&self) -> u32 {
        self.num_shards
    }

    /// Slots over all shards (the last block may be partly unused).
    #[must_use]
    pub(crate) fn total_slots(&self) -> u32 {
        self.total_slots
    }

    /// Slots per key minus one.
    #[cfg(test)]
    #[must_use]
    pub(crate) fn slot_overhead(&self) -> f64 {
        f64::from(self.total_slots) / self.num_keys as f64 - 1.0
    }

    /// Length of the payload a successful construction writes, in bytes.
    #[must_use]
    pub(crate) const fn payload_len(&self) -> usize {
        let len = self.shape.len_bytes() + directory::len(self.num_shards as u64);
        if len > usize::MAX as u64 {
            usize::MAX
        } else {
            len as usize
        }
    }

    /// The theoretical false-positive rate: `2^-r` for a query starting in a lower block, `2^-(r+1)` in an
    /// upper one, weighted by their share of the slots.
    #[must_use]
    pub(crate) fn expected_fpr(&self) -> f64 {
        self.shape.false_positive_rate()
    }

    /// Peak memory construction may allocate besides the output and the hashes the builder already holds (8 bytes
    /// per key), whatever the order of the hashes: the hashes grouped by shard (8 bytes per key), the per-shard
    /// bookkeeping, and the band of the largest shard allowed (20 bytes per slot): 8 bytes per key, 25 bytes per
    /// shard and about 250 KiB (8.25 bytes per key at 10^6 keys, 8.03 at 10^7). A [`FilterBlockBuilder`]
    /// hands its hashes over in the order of the shards, so only a window of them is grouped at a time: the
    /// measured peak is then under a byte per key (`tests/ribbon_memory.rs`).
    ///
    /// [`FilterBlockBuilder`]: crate::FilterBlockBuilder
    #[must_use]
    pub fn build_memory(&self) -> usize {
        let shards = u64::from(self.num_shards);
        let bookkeeping = shards * (4 + 4 + 8 + 8 + 1); // key counts, first slots, two key offsets, seeds
        let band = self.max_shard_slots() * BAND_BYTES_PER_SLOT;
        usize::try_from(8 * self.num_keys + bookkeeping + band).unwrap_or(usize::MAX)
    }

    /// The most keys one shard may hold before construction gives up.
    pub(crate) fn max_shard_keys(&self) -> u64 {
        let mean = self.num_keys as f64 / f64::from(self.num_shards);
        (mean * MAX_SHARD_LOAD).ceil() as u64 + 64
    }

    /// The most slots one shard can be given (its share of the slots at [`max_shard_keys`](Self::max_shard_keys)).
    fn max_shard_slots(&self) -> u64 {
        let per_key = f64::from(self.total_slots) / self.num_keys as f64;
        ((self.max_shard_keys() as f64 * per_key).ceil() as u64).min(u64::from(self.total_slots))
    }

    /// The solution's shape.
    pub(crate) fn shape(&self) -> Shape {
        self.shape
    }
}

#[cfg(test)]
mod tests {
    use super::super::policy::plan_for;

    #[test]
    fn build_memory_is_about_eight_bytes_per_key_plus_one_band() {
        let p = plan_for(10_000_000, 0.01, None).unwrap();
        let per_key = p.build_memory() as f64 / 1e7;
        assert!((8.0..8.1).contains(&per_key), "{per_key}");
        assert!(p.build_memory() < 8 * 10_000_000 + 400 * 1024);
    }
}
