//! The writer: collects key hashes while a table is built, and sizes and encodes the filter at `finish`.

use core::fmt;
use std::sync::Arc;

use crate::error::UsageError;
use crate::format::{PrefixName, Prefixes, TRAILER_LEN, Trailer};
use crate::hash::{KeyHash, key_hash};
use crate::policy::FilterPolicy;
use crate::prefix::PrefixExtractor;

/// Most hashes per storage chunk: 4096 × 8 bytes = 32 KiB. Hashes are kept in chunks rather than one growing
/// `Vec` so that collecting n keys never copies them: a doubling `Vec` would briefly need up to `24·n` bytes while
/// it reallocates, on the flush and compaction paths where memory is tightest.
const CHUNK: usize = 4096;

/// Hashes in a bucket's first chunk. Each next chunk of the bucket doubles, up to [`CHUNK`]: a bucket's unused
/// capacity is then never more than the hashes it holds (or this first chunk), so a builder holds about
/// `8·n` bytes for `n` keys, up to twice that, and no fixed amount beyond 2 KiB (32 buckets of 8 hashes).
const FIRST_CHUNK: usize = 8;

/// Hashes are kept in `1 << BUCKET_BITS` buckets by their top bits. Every filter kind picks a key's block or
/// start position by fastrange over the high bits of its hash, which is monotone in those bits whatever the
/// final filter size: so a bucket's keys all land in one 32nd of the filter, and building bucket by bucket
/// writes a cache-sized region at a time instead of the whole filter at random.
const BUCKET_BITS: u32 = 5;

/// Chunk sizes: `FIRST_CHUNK << class` hashes for class `0..CLASSES`, the last being [`CHUNK`].
const CLASSES: usize = (CHUNK / FIRST_CHUNK).trailing_zeros() as usize + 1;

/// Chunks a reset emptied, by size class, for the next table's keys: a bucket asks for the sizes it asked for
/// before, so a reused builder allocates nothing new for a table no larger than the last.
#[derive(Debug, Clone, Default)]
struct Spare([Vec<Vec<u64>>; CLASSES]);

impl Spare {
    /// The size class of a chunk of `capacity` hashes (the largest class it fills).
    fn class(capacity: usize) -> usize {
        ((capacity / FIRST_CHUNK).max(1).ilog2() as usize).min(CLASSES - 1)
    }

    /// An empty chunk of at least `capacity` hashes: a kept one of its class, else a new one.
    fn take(&mut self, capacity: usize) -> Vec<u64> {
        let mut chunk = self
            .0
            .get_mut(Self::class(capacity))
            .and_then(Vec::pop)
            .unwrap_or_default();
        chunk.reserve_exact(capacity);
        chunk
    }

    /// Keeps `chunk`'s memory, emptied.
    fn put(&mut self, mut chunk: Vec<u64>) {
        if chunk.capacity() > 0 {
            chunk.clear();
            if let Some(class) = self.0.get_mut(Self::class(chunk.capacity())) {
                class.push(chunk);
            }
        }
    }

    fn iter(&self) -> impl Iterator<Item = &Vec<u64>> {
        self.0.iter().flatten()
    }
}

/// A list of chunks of hashes: full chunks, and the one being filled.
#[derive(Debug, Clone, Default)]
struct Chunks {
    full: Vec<Vec<u64>>,
    current: Vec<u64>,
}

impl Chunks {
    /// Retires the current chunk (if any) and starts an empty one of twice its capacity (see [`FIRST_CHUNK`]),
    /// taken from `spare` when a reset left chunks there, so that pushes never reallocate.
    #[cold]
    fn start_chunk(&mut self, spare: &mut Spare) {
        let capacity = (self.current.capacity() * 2).clamp(FIRST_CHUNK, CHUNK);
        let done = core::mem::replace(&mut self.current, spare.take(capacity));
        if done.is_empty() {
            spare.put(done);
        } else {
            self.full.push(done);
        }
    }

    /// Empties the chunks into `spare`, keeping their memory.
    fn clear_into(&mut self, spare: &mut Spare) {
        for chunk in self
            .full
            .drain(..)
            .chain([core::mem::take(&mut self.current)])
        {
            spare.put(chunk);
        }
    }

    /// Every chunk, in insertion order.
    fn iter(&self) -> impl Iterator<Item = &Vec<u64>> + Clone {
        self.full.iter().chain(core::iter::once(&self.current))
    }
}

/// The hashes collected for one filter, in buckets by their top bits (see [`BUCKET_BITS`]), with the chunks a reset
/// emptied kept for the next table.
#[derive(Debug, Clone, Default)]
pub(crate) struct Hashes {
    buckets: [Chunks; 1 << BUCKET_BITS],
    spare: Spare,
    len: usize,
    last: Option<u64>,
}

impl Hashes {
    /// Adds `h` unless it is the hash added last; returns whether it was added.
    #[inline]
    pub(crate) fn push(&mut self, h: u64) -> bool {
        if self.last == Some(h) {
            return false;
        }
        self.last = Some(h);
        let Some(bucket) = self.buckets.get_mut((h >> (64 - BUCKET_BITS)) as usize) else {
            return false;
        };
        if bucket.current.len() == bucket.current.capacity() {
            bucket.start_chunk(&mut self.spare);
        }
        bucket.current.push(h);
        self.len += 1;
        true
    }

    /// Drops every repeated hash, not only adjacent ones: each bucket is sorted through one scratch buffer as large
    /// as the largest bucket (about a 32nd of the hashes) and written back into its own chunks.
    pub(crate) fn dedup(&mut self) {
        let mut scratch: Vec<u64> = Vec::new();
        self.len = 0;
        for bucket in &mut self.buckets {
            scratch.clear();
            for chunk in bucket.full.iter_mut().chain([&mut bucket.current]) {
                scratch.append(chunk);
            }
            scratch.sort_unstable();
            scratch.dedup();
            self.len += scratch.len();
            let mut rest = scratch.as_slice();
            for chunk in bucket.full.iter_mut().chain([&mut bucket.current]) {
                let (now, later) = rest.split_at(chunk.capacity().min(rest.len()));
                chunk.extend_from_slice(now);
                rest = later;
            }
        }
        self.last = None;
    }

    /// Forgets every hash, keeping the memory.
    pub(crate) fn clear(&mut self) {
        for bucket in &mut self.buckets {
            bucket.clear_into(&mut self.spare);
        }
        self.len = 0;
        self.last = None;
    }

    /// The hashes of bucket `i`, chunk by chunk.
    fn bucket(&self, i: usize) -> impl Iterator<Item = &[u64]> + Clone {
        self.buckets
            .get(i)
            .into_iter()
            .flat_map(Chunks::iter)
            .map(Vec::as_slice)
    }

    /// Hashes held.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Bytes of memory held: chunks in use and kept.
    fn memory_bytes(&self) -> usize {
        self.buckets
            .iter()
            .flat_map(Chunks::iter)
            .chain(self.spare.iter())
            .map(|chunk| chunk.capacity() * 8)
            .sum()
    }
}

/// Builds one filter block for one table.
///
/// Feed it every key of the table (in any order; a sorted table gives duplicates next to each other, and an
/// adjacent duplicate hash is dropped so a key with several versions counts once), then call
/// [`finish`](Self::finish) to get the block's bytes. It stores 8 bytes per distinct key until then (up to twice
/// that while its chunks grow, and no fixed amount beyond 2 KiB). To build the filters of many tables with one
/// builder and its memory, call [`finish_and_reset`](Self::finish_and_reset) instead.
///
/// ```
/// use sstfilter::{BlockedBloomPolicy, FilterBlock, FilterBlockBuilder};
///
/// let mut builder = FilterBlockBuilder::new(BlockedBloomPolicy::new(10.0)?);
/// builder.add_key(b"apple");
/// builder.add_key(b"banana");
/// let block = builder.finish();
/// let filter = FilterBlock::open(&block[..])?;
/// assert!(filter.may_contain(b"apple"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
pub struct FilterBlockBuilder<P: FilterPolicy> {
    policy: P,
    /// The whole keys' hashes.
    keys: Hashes,
    prefixes: Option<PrefixConfig>,
}

/// What a builder with a prefix extractor adds besides whole keys.
#[derive(Clone)]
struct PrefixConfig {
    extractor: Arc<dyn PrefixExtractor>,
    /// The extractor's name, checked when the builder was made and recorded as it was then.
    name: PrefixName,
    whole_keys: bool,
    /// The prefixes' hashes, apart from the whole keys': sorted keys give runs of equal prefixes, each added once,
    /// and a table filter counts prefixes out of order once each.
    hashes: Hashes,
    /// The prefix added last, if any was.
    last: Option<Vec<u8>>,
    /// A prefix came after a larger one: its runs may repeat.
    unsorted: bool,
}

impl<P: FilterPolicy + fmt::Debug> fmt::Debug for FilterBlockBuilder<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FilterBlockBuilder")
            .field("policy", &self.policy)
            .field("len", &self.len())
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
            keys: Hashes::default(),
            prefixes: None,
        }
    }

    /// Also adds the prefix `extractor` gives each key (once per run of equal prefixes), so that prefix scans can
    /// be answered ([`FilterBlock::may_contain_prefix`](crate::FilterBlock::may_contain_prefix)); the extractor's name
    /// is recorded in the block. Without `whole_keys` only prefixes are added, which saves space when only scans
    /// are filtered: point lookups then go through the key's prefix (a [`TableFilter`](crate::TableFilter) given the
    /// extractor does so), and keys outside the extractor's domain are not in
    /// the filter at all (a reader answers "may contain" for them).
    ///
    /// Fails with [`UsageError::InvalidSetting`] if the extractor's name is longer than
    /// [`MAX_PREFIX_NAME_LEN`](crate::MAX_PREFIX_NAME_LEN) bytes: a block records the name whole or not at all.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use sstfilter::{Answer, BlockedBloomPolicy, DelimitedPrefix, FilterBlock, FilterBlockBuilder};
    ///
    /// let users = Arc::new(DelimitedPrefix::new(b':')); // "usr:", "org:", ...
    /// let mut builder = FilterBlockBuilder::new(BlockedBloomPolicy::new(10.0)?).with_prefixes(users.clone(), true)?;
    /// for key in [&b"org:acme"[..], b"usr:alice", b"usr:bob"] {
    ///     builder.add_key(key);
    /// }
    /// let filter = FilterBlock::open(builder.finish())?;
    /// assert_eq!(filter.prefix_extractor_name(), Some("sstfilter.delimited:3a"));
    /// assert!(filter.may_contain_prefix(users.as_ref(), b"usr:b").must_read()); // scan "usr:b*": read the table
    /// assert_eq!(filter.may_contain_prefix(users.as_ref(), b"grp:"), Answer::Absent); // no "grp:" key here
    /// assert!(filter.may_contain(b"usr:alice")); // whole keys are still there
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn with_prefixes(
        self,
        extractor: Arc<dyn PrefixExtractor>,
        whole_keys: bool,
    ) -> Result<Self, UsageError> {
        let name = PrefixName::new(extractor.name())?;
        Ok(self.with_named_prefixes(extractor, name, whole_keys))
    }

    /// [`with_prefixes`](Self::with_prefixes) with the extractor's name already checked.
    pub(crate) fn with_named_prefixes(
        mut self,
        extractor: Arc<dyn PrefixExtractor>,
        name: PrefixName,
        whole_keys: bool,
    ) -> Self {
        self.prefixes = Some(PrefixConfig {
            extractor,
            name,
            whole_keys,
            hashes: Hashes::default(),
            last: None,
            unsorted: false,
        });
        self
    }

    /// Adds a key (hashing it with [`key_hash`]), and its prefix if the builder has a prefix extractor (once per
    /// run of keys that share it).
    #[inline]
    pub fn add_key(&mut self, key: &[u8]) {
        let Some(prefixes) = &mut self.prefixes else {
            self.keys.push(key_hash(key).get());
            return;
        };
        let mut added = None;
        if let Some(prefix) = prefixes.extractor.prefix(key) {
            let order = prefixes.last.as_deref().map(|last| prefix.cmp(last));
            if order != Some(core::cmp::Ordering::Equal) {
                prefixes.unsorted |= order == Some(core::cmp::Ordering::Less);
                let hash = key_hash(prefix).get();
                prefixes.hashes.push(hash);
                added = Some(hash);
                let last = prefixes.last.get_or_insert_with(Vec::new);
                last.clear();
                last.extend_from_slice(prefix);
            }
        }
        if prefixes.whole_keys {
            let hash = key_hash(key).get();
            // A key that is its own prefix is in the filter once.
            if added != Some(hash) {
                self.keys.push(hash);
            }
        }
    }

    /// Adds a key by its hash, for callers that already computed [`key_hash`] (a whole key: with a prefix
    /// extractor, use [`add_key`](Self::add_key) so that the prefix is added too). A hash equal to the previous
    /// one is ignored.
    #[inline]
    pub fn add_hash(&mut self, hash: KeyHash) {
        self.keys.push(hash.get());
    }

    /// Drops the repeats that were not adjacent, for a table filter whose keys came out of order (`keys`) or
    /// whose prefixes did: the filter is then sized for, and records, each key and prefix once. Returns how many
    /// distinct whole keys the builder holds.
    pub(crate) fn dedup(&mut self, keys: bool) -> usize {
        if keys {
            self.keys.dedup();
        }
        if let Some(prefixes) = self.prefixes.as_mut().filter(|p| p.unsorted) {
            prefixes.hashes.dedup();
            prefixes.unsorted = false;
        }
        self.keys.len
    }

    /// Whether the builder adds whole keys (not only their prefixes).
    pub(crate) fn has_whole_keys(&self) -> bool {
        self.prefixes.as_ref().is_none_or(|p| p.whole_keys)
    }

    /// The prefix section the builder's blocks carry (for a partition index, which names its partitions').
    pub(crate) fn prefixes(&self) -> Option<Prefixes<'_>> {
        self.prefixes.as_ref().map(|p| Prefixes {
            name: &p.name,
            whole_keys: p.whole_keys,
        })
    }

    /// Number of hashes added so far: whole keys (a key equal to the one added just before is not counted again)
    /// and prefixes (each once per run of keys that share it).
    #[must_use]
    pub fn len(&self) -> usize {
        self.keys.len + self.prefixes.as_ref().map_or(0, |p| p.hashes.len)
    }

    /// Whether no key has been added.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Size in bytes of the block [`finish`](Self::finish) would produce now.
    pub(crate) fn estimated_block_len(&self) -> usize {
        self.policy.estimated_block_len(self.len())
    }

    /// Bytes of memory the builder holds for hashes: those collected so far, and the chunks a reset kept.
    #[must_use]
    pub fn memory_bytes(&self) -> usize {
        self.keys.memory_bytes()
            + self
                .prefixes
                .as_ref()
                .map_or(0, |p| p.hashes.memory_bytes())
    }

    /// Forgets every key added, keeping the configuration (policy, prefixes) and the memory, for the next table.
    pub(crate) fn reset(&mut self) {
        self.keys.clear();
        if let Some(prefixes) = &mut self.prefixes {
            prefixes.hashes.clear();
            prefixes.last = None;
            prefixes.unsorted = false;
        }
    }

    /// Builds the block of the keys added since the last reset (as [`finish`](Self::finish)) and resets the
    /// builder for the next table, keeping its memory.
    #[must_use]
    pub fn finish_and_reset(&mut self) -> Vec<u8> {
        let mut block = Vec::with_capacity(self.estimated_block_len());
        self.finish_block(&mut block);
        self.reset();
        block
    }

    /// Builds the filter and returns the block's bytes: the payload followed by the trailer.
    #[must_use]
    pub fn finish(self) -> Vec<u8> {
        let mut block = Vec::with_capacity(self.estimated_block_len());
        self.finish_block(&mut block);
        block
    }

    /// Appends the block of the keys added so far to `out`, returning what a partition index records of the block: its key count
    /// and the CRC32 in its trailer.
    pub(crate) fn finish_block(&self, out: &mut Vec<u8>) -> (u64, u32) {
        let len = self.len();
        let plan = self.policy.plan(len).fitted(len);
        let start = out.len();
        out.reserve(plan.payload_len() + TRAILER_LEN);
        // Bucket by bucket: ascending regions of the filter (see BUCKET_BITS).
        let prefix_hashes = self.prefixes.as_ref().map(|p| &p.hashes);
        let runs = (0..1 << BUCKET_BITS).flat_map(|i| {
            self.keys
                .bucket(i)
                .chain(prefix_hashes.into_iter().flat_map(move |p| p.bucket(i)))
        });
        let params = plan.build(runs, out);
        let prefixes = self.prefixes();
        let checksum = Trailer::append(
            out,
            start,
            params.kind(),
            params.encode(),
            len as u64,
            prefixes,
        );
        (len as u64, checksum)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{BlockedBloomParams, BlockedBloomPolicy, FilterBlock, FilterPlan};

    #[test]
    fn drops_adjacent_duplicates_only() {
        let mut b = FilterBlockBuilder::new(BlockedBloomPolicy::new(10.0).unwrap());
        for key in [&b"a"[..], b"a", b"b", b"a", b"b", b"b"] {
            b.add_key(key);
        }
        assert_eq!(b.len(), 4, "a, b, a, b");
    }

    /// Real key hashes, spread over all 32 buckets (a test of `KeyHash(0..n)`, whose top bits are zero, filled
    /// one bucket and checked nothing of the others).
    #[test]
    fn memory_grows_with_the_keys_and_has_no_fixed_floor() {
        let bound = |n: usize| 16 * n + 8 * FIRST_CHUNK * (1 << BUCKET_BITS);
        for n in [0usize, 1, 10, 100, 1000, 100_000, 300_000] {
            let mut b = FilterBlockBuilder::new(BlockedBloomPolicy::new(10.0).unwrap());
            for i in 0..n as u64 {
                b.add_key(&i.to_le_bytes());
            }
            let used = b.memory_bytes();
            assert!(used >= 8 * n, "{n} keys in {used} bytes");
            assert!(
                used <= bound(n),
                "{n} keys: {used} bytes, more than {}",
                bound(n)
            );
            // Past a few chunks a bucket, its last chunk is the only slack: under 8 bytes a key plus a chunk each.
            if n >= 100_000 {
                assert!(
                    used <= 8 * n + 8 * CHUNK * (1 << BUCKET_BITS),
                    "{n}: {used}"
                );
            }
        }
    }

    #[test]
    fn a_reset_builder_builds_the_same_blocks_in_the_same_memory() {
        let mut b = FilterBlockBuilder::new(BlockedBloomPolicy::new(10.0).unwrap());
        let table = |t: u64| (0..50_000u64).map(move |i| (t * 1_000_000 + i).to_le_bytes());
        let mut fresh = FilterBlockBuilder::new(BlockedBloomPolicy::new(10.0).unwrap());
        for key in table(0) {
            b.add_key(&key);
            fresh.add_key(&key);
        }
        let first = b.finish_and_reset();
        assert_eq!(first, fresh.finish());
        let held = b.memory_bytes();
        assert!(b.is_empty() && held > 0);
        for t in 1..4 {
            for key in table(t) {
                b.add_key(&key);
            }
            let mut again = FilterBlockBuilder::new(BlockedBloomPolicy::new(10.0).unwrap());
            table(t).for_each(|k| again.add_key(&k));
            assert_eq!(b.finish_and_reset(), again.finish(), "table {t}");
            assert_eq!(b.memory_bytes(), held, "table {t} allocated more");
        }
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
}
