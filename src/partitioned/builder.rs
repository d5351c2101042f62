//! Building a partitioned filter: sorted keys cut into partitions of about a target size, each an ordinary
//! filter block, and the separators that tell lookups which partition holds a key.

use core::fmt;

use crate::builder::FilterBlockBuilder;
use std::sync::Arc;

use crate::error::UsageError;
use crate::format::{PartitionIndexTag, PrefixName, Prefixes, TRAILER_LEN, Trailer};
use crate::policy::FilterPolicy;
use crate::prefix::PrefixExtractor;

use super::index::{ENTRY_LEN, Entry, encode_params};

/// Default filter bytes per partition: 4 KiB, RocksDB's `metadata_block_size` default and one page.
pub const DEFAULT_PARTITION_BYTES: usize = 4096;

/// Largest partition size [`PartitionedFilterBuilder::with_partition_bytes`] accepts; larger settings are refused.
pub const MAX_PARTITION_BYTES: usize = 1 << 30;

/// `bytes` if it is a partition size the builder accepts (`1..=MAX_PARTITION_BYTES`), else why not.
pub(crate) fn check_partition_bytes(bytes: usize) -> Result<usize, UsageError> {
    if (1..=MAX_PARTITION_BYTES).contains(&bytes) {
        Ok(bytes)
    } else {
        Err(UsageError::setting(
            "partition_bytes",
            format!("1 to {MAX_PARTITION_BYTES} bytes"),
            bytes,
        ))
    }
}

/// Where a partition may end.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PartitionCuts {
    /// Between any two distinct keys, as soon as the partition reaches its size (decoupled from data blocks):
    /// partitions come out closest to the target size.
    #[default]
    Anywhere,
    /// Only after a key that ended a data block ([`PartitionedFilterBuilder::end_data_block`]), once the partition
    /// reaches its size (coupled): a partition then covers whole data blocks, which a store with partitioned
    /// indexes wants (the filter partition and the index partition of a key are cut at the same place). A
    /// partition that reaches four times its size with no data block ending is cut anyway, so a store that never
    /// calls `end_data_block` gets bounded partitions, not one of the whole table.
    AtDataBlocks,
}

/// Builds a partitioned filter from a table's keys, added in non-decreasing byte order.
///
/// Each partition is an ordinary filter block of the policy, sized from its own key count (one
/// [`FilterBlockBuilder`], reset after each partition, builds them all). A partition ends once it holds the number
/// of hashes the policy fits in the target bytes, never between two equal keys. [`finish`](Self::finish) returns
/// the [`Partitions`]; the store writes their blocks and then the index, which records where it put them. With
/// [`with_prefixes`](Self::with_prefixes) each partition also holds the prefixes of its keys.
#[derive(Clone)]
pub struct PartitionedFilterBuilder<P: FilterPolicy + Clone> {
    policy: P,
    partition_bytes: usize,
    /// Distinct keys per partition, computed from the policy at the first key.
    target_keys: Option<usize>,
    cuts: PartitionCuts,
    current: FilterBlockBuilder<P>,
    last_key: Option<Vec<u8>>,
    /// Whether the key added last ended a data block ([`PartitionCuts::AtDataBlocks`]).
    at_data_block_end: bool,
    blocks: Vec<Vec<u8>>,
    separators: Vec<u8>,
    /// One per finished partition, with offset 0 until [`Partitions::index`] is given the offsets.
    entries: Vec<Entry>,
    /// A separator end past `u32::MAX`: the index cannot record it.
    separators_overflow: bool,
}

impl<P: FilterPolicy + Clone + fmt::Debug> fmt::Debug for PartitionedFilterBuilder<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PartitionedFilterBuilder")
            .field("policy", &self.policy)
            .field("partition_bytes", &self.partition_bytes)
            .field("cuts", &self.cuts)
            .field("partitions", &self.blocks.len())
            .finish_non_exhaustive()
    }
}

impl<P: FilterPolicy + Clone> PartitionedFilterBuilder<P> {
    /// A builder that cuts partitions of [`DEFAULT_PARTITION_BYTES`] anywhere, each sized by `policy`.
    #[must_use]
    pub fn new(policy: P) -> Self {
        PartitionedFilterBuilder {
            current: FilterBlockBuilder::new(policy.clone()),
            policy,
            partition_bytes: DEFAULT_PARTITION_BYTES,
            target_keys: None,
            cuts: PartitionCuts::Anywhere,
            last_key: None,
            at_data_block_end: false,
            blocks: Vec::new(),
            separators: Vec::new(),
            entries: Vec::new(),
            separators_overflow: false,
        }
    }

    /// Target filter bytes per partition, `1..=MAX_PARTITION_BYTES` (default [`DEFAULT_PARTITION_BYTES`]); any
    /// other is refused with [`UsageError::InvalidSetting`]. Call before the first key.
    pub fn with_partition_bytes(self, bytes: usize) -> Result<Self, UsageError> {
        check_partition_bytes(bytes).map(|bytes| self.with_checked_partition_bytes(bytes))
    }

    /// [`with_partition_bytes`](Self::with_partition_bytes) of a size [`check_partition_bytes`] accepted.
    pub(crate) fn with_checked_partition_bytes(mut self, bytes: usize) -> Self {
        self.partition_bytes = bytes;
        self.target_keys = None;
        self
    }

    /// Where partitions may end (default [`PartitionCuts::Anywhere`]).
    #[must_use]
    pub fn with_cuts(mut self, cuts: PartitionCuts) -> Self {
        self.cuts = cuts;
        self
    }

    /// Also adds the prefix `extractor` gives each key to the partition that holds the key (once per run of equal
    /// prefixes in a partition), as [`FilterBlockBuilder::with_prefixes`] does for one block; without
    /// `whole_keys`, prefixes only. Fails as that does, for an extractor name a block cannot record.
    pub fn with_prefixes(
        self,
        extractor: Arc<dyn PrefixExtractor>,
        whole_keys: bool,
    ) -> Result<Self, UsageError> {
        let current =
            FilterBlockBuilder::new(self.policy.clone()).with_prefixes(extractor, whole_keys)?;
        Ok(self.with_partition_builder(current))
    }

    /// Builds each partition with `current` (an empty builder of this policy, with the prefixes it adds).
    pub(crate) fn with_partition_builder(mut self, current: FilterBlockBuilder<P>) -> Self {
        self.current = current;
        self
    }

    /// Adds a key. Keys must not decrease (equal keys are allowed and stay in one partition); a smaller key than
    /// the previous one is refused with [`UsageError::KeysOutOfOrder`] and not added.
    pub fn add_key(&mut self, key: &[u8]) -> Result<(), UsageError> {
        let target = self.target_keys();
        if let Some(last) = &self.last_key {
            if key < last.as_slice() {
                return Err(UsageError::KeysOutOfOrder);
            }
            // At data blocks, a partition that reaches four times its size without one ending (a store that
            // never says where its data blocks end, or one huge data block) is cut anyway: its size stays bounded.
            let may_cut = self.cuts == PartitionCuts::Anywhere
                || self.at_data_block_end
                || self.current.len() >= target.saturating_mul(4);
            if key != last.as_slice() && may_cut && self.current.len() >= target {
                let separator = shortest_separator(last, key);
                self.cut(&separator);
            }
        }
        self.current.add_key(key);
        let last = self.last_key.get_or_insert_with(Vec::new);
        last.clear();
        last.extend_from_slice(key);
        self.at_data_block_end = false;
        Ok(())
    }

    /// Says that the key added last ended a data block: with [`PartitionCuts::AtDataBlocks`], a partition that
    /// has reached its size ends there. (Ignored with [`PartitionCuts::Anywhere`].)
    pub fn end_data_block(&mut self) {
        self.at_data_block_end = true;
    }

    /// Distinct keys a partition holds before it may end: the most for which the policy's block fits in the
    /// partition bytes, and at least one.
    fn target_keys(&mut self) -> usize {
        let bytes = self.partition_bytes;
        let policy = &self.policy;
        *self.target_keys.get_or_insert_with(|| {
            let fits = |n: usize| policy.estimated_block_len(n) <= bytes;
            let (mut lo, mut hi) = (1usize, bytes.saturating_mul(8).max(2));
            // Invariant: lo fits or is 1; hi does not fit (a filter of more than 8 keys per byte is not a filter).
            while hi - lo > 1 {
                let mid = lo + (hi - lo) / 2;
                if fits(mid) {
                    lo = mid;
                } else {
                    hi = mid;
                }
            }
            lo
        })
    }

    /// Ends the current partition with `separator`, a key at least its last key and less than every later one.
    fn cut(&mut self, separator: &[u8]) {
        let mut block = Vec::with_capacity(self.current.estimated_block_len());
        let (num_keys, checksum) = self.current.finish_block(&mut block);
        self.current.reset();
        self.separators.extend_from_slice(separator);
        let sep_end = u32::try_from(self.separators.len()).unwrap_or_else(|_| {
            self.separators_overflow = true;
            u32::MAX
        });
        self.entries.push(Entry {
            offset: 0,
            len: block.len() as u64,
            num_keys,
            checksum,
            sep_end,
        });
        self.blocks.push(block);
    }

    /// Ends the last partition at the last key itself, so that a lookup past it needs no partition, and returns
    /// the partitions. No keys give no partitions (every lookup answers "absent").
    #[must_use]
    pub fn finish(mut self) -> Partitions {
        self.finish_and_reset()
    }

    /// [`finish`](Self::finish), leaving the builder empty (same policy, size, cuts and prefixes) for the next
    /// table, with the memory its filter builder holds.
    pub fn finish_and_reset(&mut self) -> Partitions {
        if let Some(last) = self.last_key.take() {
            self.cut(&last);
        }
        let partitions = Partitions {
            blocks: core::mem::take(&mut self.blocks),
            separators: core::mem::take(&mut self.separators),
            entries: core::mem::take(&mut self.entries),
            separators_overflow: core::mem::take(&mut self.separators_overflow),
            prefixes: self
                .current
                .prefixes()
                .map(|p| (p.name.clone(), p.whole_keys)),
        };
        self.current.reset();
        self.at_data_block_end = false;
        partitions
    }
}

/// The partitions of a finished [`PartitionedFilterBuilder`]: write each block, then the index with the offsets
/// where they went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Partitions {
    blocks: Vec<Vec<u8>>,
    separators: Vec<u8>,
    entries: Vec<Entry>,
    separators_overflow: bool,
    /// The extractor's name and whether whole keys were kept, when the partitions hold prefixes: the index
    /// records them too.
    prefixes: Option<(PrefixName, bool)>,
}

impl Partitions {
    /// The partition blocks, in key order: ordinary filter blocks ([`FilterBlock::open`](crate::FilterBlock::open)
    /// opens each).
    #[must_use]
    pub fn blocks(&self) -> &[Vec<u8>] {
        &self.blocks
    }

    /// Keys in all partitions, as their trailers count them.
    #[must_use]
    pub fn num_keys(&self) -> u64 {
        self.entries.iter().map(|e| e.num_keys).sum()
    }

    /// The partition index block, recording that partition `i` was written at `offsets[i]` (a file offset, or
    /// whatever the store's [`PartitionLoader`](crate::PartitionLoader) understands).
    ///
    /// Fails with [`UsageError::PartitionCount`] if there is not one offset per partition, and with
    /// [`UsageError::TooLarge`] if the separators exceed the 4 GiB the index can address.
    pub fn index(&self, offsets: &[u64]) -> Result<Vec<u8>, UsageError> {
        if offsets.len() != self.entries.len() {
            return Err(UsageError::PartitionCount {
                expected: self.entries.len() as u64,
                found: offsets.len() as u64,
            });
        }
        if self.separators_overflow {
            return Err(UsageError::TooLarge {
                what: "partition index separators",
                expected: u64::from(u32::MAX),
                found: self.separators.len() as u64,
            });
        }
        let mut out =
            Vec::with_capacity(self.separators.len() + ENTRY_LEN * offsets.len() + TRAILER_LEN);
        out.extend_from_slice(&self.separators);
        for (entry, &offset) in self.entries.iter().zip(offsets) {
            Entry { offset, ..*entry }.encode_into(&mut out);
        }
        let params = encode_params(self.entries.len() as u64, self.separators.len() as u64);
        let prefixes = self.prefixes.as_ref().map(|(name, whole_keys)| Prefixes {
            name,
            whole_keys: *whole_keys,
        });
        Trailer::<PartitionIndexTag>::append_index(&mut out, 0, params, self.num_keys(), prefixes);
        Ok(out)
    }
}

/// A short key `s` with `last <= s < next` (REQUIRES `last < next`): one byte past their common prefix where that
/// suffices, else `last` itself. Every key of the partition that ends with `last` is `<= s`, every later key is
/// `> s`, so "the first separator `>=` a key" names the only partition that can hold it.
pub(crate) fn shortest_separator(last: &[u8], next: &[u8]) -> Vec<u8> {
    let common = last.iter().zip(next).take_while(|(a, b)| a == b).count();
    if let (Some(&l), Some(&n)) = (last.get(common), next.get(common)) {
        let head = last.get(..common).unwrap_or_default();
        // l < n here, since last < next and they differ at `common`.
        if l.checked_add(1).is_some_and(|b| b < n) {
            // head ‖ l+1: greater than last, less than next (which has n > l+1 at `common`).
            let mut s = head.to_vec();
            s.push(l + 1);
            return s;
        }
        if next.len() > common + 1 {
            // next's first common+1 bytes: greater than last (n > l), a proper prefix of next, so less than it.
            return next.get(..=common).unwrap_or(last).to_vec();
        }
    }
    last.to_vec()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn separators_lie_between_their_neighbours_and_are_short() {
        let cases: &[(&[u8], &[u8], &[u8])] = &[
            (b"apple", b"banana", b"b"),
            (b"abc1", b"abc9", b"abc2"),
            (b"abc1", b"abc2xyz", b"abc2"),
            (b"abc1", b"abc2", b"abc1"),
            (b"abc", b"abcd", b"abc"),
            (b"", b"a", b""),
            (b"a\xff", b"b", b"a\xff"),
            (b"a\xffzz", b"b", b"a\xffzz"),
            (b"a\xff", b"b\x00\x00", b"b"),
        ];
        for &(last, next, want) in cases {
            let s = shortest_separator(last, next);
            assert_eq!(s, want, "{last:?} {next:?}");
            assert!(
                last <= s.as_slice() && s.as_slice() < next,
                "{last:?} {s:?} {next:?}"
            );
        }
    }

    #[test]
    fn separators_of_every_short_pair_are_in_range() {
        let alphabet = [0u8, 1, 0x7f, 0xfe, 0xff];
        let mut keys: Vec<Vec<u8>> = vec![Vec::new()];
        for len in 1..=3 {
            let mut more = Vec::new();
            for k in keys.iter().filter(|k| k.len() == len - 1) {
                for &b in &alphabet {
                    let mut k = k.clone();
                    k.push(b);
                    more.push(k);
                }
            }
            keys.extend(more);
        }
        for last in &keys {
            for next in keys.iter().filter(|n| *n > last) {
                let s = shortest_separator(last, next);
                assert!(last <= &s && &s < next, "{last:?} {s:?} {next:?}");
            }
        }
    }
}
