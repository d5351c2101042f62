//! The writer: collects key hashes while a table is built, and sizes and encodes the filter at `finish`.

use core::fmt;
use std::sync::Arc;

use crate::error::UsageError;
use crate::format::{PrefixName, Prefixes, TRAILER_LEN, Trailer};
use crate::hash::{KeyHash, key_hash};
use crate::policy::FilterPolicy;
use crate::prefix::PrefixExtractor;

/// Hashes per storage chunk: 4096 × 8 bytes = 32 KiB. Hashes are kept in fixed-size chunks rather than one
/// growing `Vec` so that collecting n keys never holds more than `8·n` bytes plus one partly filled chunk per
/// bucket: a doubling `Vec` would briefly need up to `24·n` while it reallocates, on the flush and compaction
/// paths where memory is tightest. (Untouched chunk capacity is not resident memory.)
const CHUNK: usize = 4096;

/// Hashes are kept in `1 << BUCKET_BITS` buckets by their top bits. Every filter kind picks a key's block or
/// start position by fastrange over the high bits of its hash, which is monotone in those bits whatever the
/// final filter size: so a bucket's keys all land in one 32nd of the filter, and building bucket by bucket
/// writes a cache-sized region at a time instead of the whole filter at random.
const BUCKET_BITS: u32 = 5;

/// A list of fixed-capacity chunks of hashes: full chunks, and the one being filled.
#[derive(Debug, Clone, Default)]
struct Chunks {
    full: Vec<Vec<u64>>,
    current: Vec<u64>,
}

impl Chunks {
    #[inline]
    fn push(&mut self, h: u64) {
        if self.current.len() == self.current.capacity() {
            self.start_chunk();
        }
        self.current.push(h);
    }

    /// Retires the current chunk (if any) and starts an empty one of `CHUNK` capacity, so that pushes never
    /// reallocate.
    #[cold]
    fn start_chunk(&mut self) {
        let fresh = Vec::with_capacity(CHUNK);
        let done = core::mem::replace(&mut self.current, fresh);
        if !done.is_empty() {
            self.full.push(done);
        }
    }

    /// Every chunk, in insertion order.
    fn iter(&self) -> impl Iterator<Item = &Vec<u64>> + Clone {
        self.full.iter().chain(core::iter::once(&self.current))
    }
}

/// Builds one filter block for one table.
///
/// Feed it every key of the table (in any order; a sorted table gives duplicates next to each other, and an
/// adjacent duplicate hash is dropped so a key with several versions counts once), then call
/// [`finish`](Self::finish) to get the block's bytes. It stores 8 bytes per distinct key until then.
///
/// ```
/// use sstfilter::{BlockedBloomPolicy, FilterBlock, FilterBlockBuilder};
///
/// let mut builder = FilterBlockBuilder::new(BlockedBloomPolicy::new(10.0));
/// builder.add_key(b"apple");
/// builder.add_key(b"banana");
/// let block = builder.finish();
/// let filter = FilterBlock::open(&block[..]).unwrap();
/// assert!(filter.may_contain(b"apple"));
/// ```
#[derive(Clone)]
pub struct FilterBlockBuilder<P: FilterPolicy> {
    policy: P,
    buckets: [Chunks; 1 << BUCKET_BITS],
    len: usize,
    last: Option<u64>,
    prefixes: Option<PrefixConfig>,
}

/// What a builder with a prefix extractor adds besides whole keys.
#[derive(Clone)]
struct PrefixConfig {
    extractor: Arc<dyn PrefixExtractor>,
    /// The extractor's name, checked when the builder was made and recorded as it was then.
    name: PrefixName,
    whole_keys: bool,
    /// The hash of the prefix added last: sorted keys give runs of equal prefixes, each added once.
    last_prefix: Option<u64>,
}

impl<P: FilterPolicy + fmt::Debug> fmt::Debug for FilterBlockBuilder<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FilterBlockBuilder")
            .field("policy", &self.policy)
            .field("len", &self.len)
            .field(
                "prefix_extractor",
                &self.prefixes.as_ref().map(|p| p.name.as_str()),
            )
            .field(
                "whole_keys",
                &self.prefixes.as_ref().is_none_or(|p| p.whole_keys),
            )
            .finish_non_exhaustive()
    }
}

impl<P: FilterPolicy> FilterBlockBuilder<P> {
    /// An empty builder that will size its filter with `policy`.
    #[must_use]
    pub fn new(policy: P) -> Self {
        FilterBlockBuilder {
            policy,
            buckets: Default::default(),
            len: 0,
            last: None,
            prefixes: None,
        }
    }

    /// Also adds the prefix `extractor` gives each key (once per run of equal prefixes), so that prefix scans can
    /// be answered ([`FilterBlock::may_contain_scan`](crate::FilterBlock::may_contain_scan)); the extractor's name
    /// is recorded in the block. Without `whole_keys` only prefixes are added, which saves space when only scans
    /// are filtered: point lookups then go through the key's prefix
    /// ([`PrefixProbe::for_key`](crate::PrefixProbe::for_key)), and keys outside the extractor's domain are not in
    /// the filter at all (a reader answers "may contain" for them).
    ///
    /// Fails with [`UsageError::InvalidSetting`] if the extractor's name is longer than
    /// [`MAX_PREFIX_NAME_LEN`](crate::MAX_PREFIX_NAME_LEN) bytes: a block records the name whole or not at all.
    pub fn with_prefixes(
        mut self,
        extractor: Arc<dyn PrefixExtractor>,
        whole_keys: bool,
    ) -> Result<Self, UsageError> {
        let name = PrefixName::new(extractor.name())?;
        self.prefixes = Some(PrefixConfig {
            extractor,
            name,
            whole_keys,
            last_prefix: None,
        });
        Ok(self)
    }

    /// Adds a key (hashing it with [`key_hash`]), and its prefix if the builder has a prefix extractor.
    #[inline]
    pub fn add_key(&mut self, key: &[u8]) {
        let Some(prefixes) = &mut self.prefixes else {
            self.add_hash(key_hash(key));
            return;
        };
        let prefix = prefixes.extractor.prefix(key).map(key_hash);
        let new_prefix = prefix.filter(|p| prefixes.last_prefix != Some(p.get()));
        if let Some(p) = new_prefix {
            prefixes.last_prefix = Some(p.get());
        }
        let whole_keys = prefixes.whole_keys;
        if let Some(p) = new_prefix {
            self.add_hash(p);
        }
        if whole_keys {
            self.add_hash(key_hash(key));
        }
    }

    /// Adds a key by its hash, for callers that already computed [`key_hash`] (a whole key: with a prefix
    /// extractor, use [`add_key`](Self::add_key) so that the prefix is added too). A hash equal to the previous
    /// one is ignored.
    #[inline]
    pub fn add_hash(&mut self, hash: KeyHash) {
        let h = hash.get();
        if self.last == Some(h) {
            return;
        }
        self.last = Some(h);
        if let Some(bucket) = self.buckets.get_mut((h >> (64 - BUCKET_BITS)) as usize) {
            bucket.push(h);
            self.len += 1;
        }
    }

    /// Number of distinct hashes added so far (adjacent duplicates are not counted).
    #[must_use]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no key has been added.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Size in bytes of the block [`finish`](Self::finish) would produce now.
    #[must_use]
    pub fn estimated_block_len(&self) -> usize {
        self.policy.estimated_block_len(self.len)
    }

    /// Bytes of memory the builder holds for the hashes collected so far.
    #[must_use]
    pub fn memory_bytes(&self) -> usize {
        self.buckets
            .iter()
            .flat_map(Chunks::iter)
            .map(|chunk| chunk.capacity() * 8)
            .sum()
    }

    /// The policy this builder sizes its filter with.
    #[must_use]
    pub fn policy(&self) -> &P {
        &self.policy
    }

    /// Builds the filter and returns the block's bytes: the payload followed by the trailer.
    #[must_use]
    pub fn finish(self) -> Vec<u8> {
        let mut block = Vec::with_capacity(self.estimated_block_len());
        self.finish_into(&mut block);
        block
    }

    /// Like [`finish`](Self::finish), but appends the block to `out` (for a table builder that assembles its
    /// file in one buffer). The block's checksum covers only the appended bytes.
    pub fn finish_into(self, out: &mut Vec<u8>) {
        self.finish_block(out);
    }

    /// [`finish_into`](Self::finish_into), returning what a partition index records of the block: its key count
    /// and the CRC32 in its trailer.
    pub(crate) fn finish_block(self, out: &mut Vec<u8>) -> (u64, u32) {
        let plan = self.policy.plan(self.len).fitted(self.len);
        let start = out.len();
        out.reserve(plan.payload_len() + TRAILER_LEN);
        // Bucket by bucket: ascending regions of the filter (see BUCKET_BITS).
        let runs = self
            .buckets
            .iter()
            .flat_map(Chunks::iter)
            .map(Vec::as_slice);
        let params = plan.build(runs, out);
        let prefixes = self.prefixes.as_ref().map(|p| Prefixes {
            name: &p.name,
            whole_keys: p.whole_keys,
        });
        let checksum = Trailer::append(
            out,
            start,
            params.kind(),
            params.encode(),
            self.len as u64,
            prefixes,
        );
        (self.len as u64, checksum)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{BlockedBloomParams, BlockedBloomPolicy, FilterBlock, FilterPlan};

    #[test]
    fn drops_adjacent_duplicates_only() {
        let mut b = FilterBlockBuilder::new(BlockedBloomPolicy::new(10.0));
        for key in [&b"a"[..], b"a", b"b", b"a", b"b", b"b"] {
            b.add_key(key);
        }
        assert_eq!(b.len(), 4, "a, b, a, b");
    }

    #[test]
    fn memory_is_eight_bytes_per_key_plus_one_chunk() {
        let mut b = FilterBlockBuilder::new(BlockedBloomPolicy::new(10.0));
        for i in 0..100_000u64 {
            b.add_hash(KeyHash::from_raw(i));
        }
        assert!(
            b.memory_bytes() <= 8 * 100_000 + 8 * CHUNK,
            "{}",
            b.memory_bytes()
        );
    }

    /// A user's plan whose BlockedBloom size disagrees with the key count still gives a block that opens and
    /// finds every key.
    #[test]
    fn plans_that_disagree_with_the_key_count_are_fitted() {
        struct Explicit(u32);
        impl FilterPolicy for Explicit {
            fn plan(&self, _num_keys: usize) -> FilterPlan {
                FilterPlan::BlockedBloom(BlockedBloomParams::new(self.0, 6).unwrap())
            }
        }
        for (blocks, keys) in [(0, &[&b"a"[..], b"b"][..]), (5, &[][..])] {
            let mut b = FilterBlockBuilder::new(Explicit(blocks));
            for key in keys {
                b.add_key(key);
            }
            let filter = FilterBlock::open(b.finish()).unwrap();
            assert_eq!(filter.num_keys(), keys.len() as u64);
            assert!(keys.iter().all(|k| filter.may_contain(k)));
        }
    }

    #[test]
    fn finish_into_appends_a_self_contained_block() {
        let mut b = FilterBlockBuilder::new(BlockedBloomPolicy::new(10.0));
        b.add_key(b"k");
        let alone = b.clone().finish();
        let mut out = b"header".to_vec();
        b.finish_into(&mut out);
        assert_eq!(&out[..6], b"header");
        assert_eq!(&out[6..], &alone[..]);
    }
}
