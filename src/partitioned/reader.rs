//! Reading a partitioned filter: the pinned index finds a key's partition, the caller's loader brings it.

use core::fmt;
use core::num::NonZeroU64;
use core::sync::atomic::{AtomicU64, Ordering};

use crate::error::{Error, Result};
use crate::format::{self, PartitionIndexTag, Trailer, block_checksum};
use crate::hash::{KeyHash, key_hash};
use crate::reader::FilterBlock;
use crate::tag::FilterKind;

use super::index::Layout;
use super::search::{SeparatorHeads, first_separator_at_least};
use super::{
    Partition, PartitionLoader, PartitionQuestion, Stamp, VerifiedPartition, check_identity,
};

/// The number the last opened index got (none yet: 0): a process never opens 2^64 - 1 of them, so no two indexes
/// share one.
static LAST_INDEX: AtomicU64 = AtomicU64::new(0);

/// A partitioned filter, opened over its index block (FORMAT.md, section 8), which it keeps: the partitions are
/// fetched through a [`PartitionLoader`] when a query needs one.
///
/// [`open`](Self::open) checks the index's CRC and its whole layout (O(index), once): an index is small and
/// pinned, and a damaged one must fail to open rather than name the wrong partition. A query then binary-searches
/// the separators for the first one `>=` the key: the key can only be in that partition. A key greater than the
/// last separator (the table's last key) is in no partition and is absent without a load.
///
/// A partition that fails to load, does not verify (structure and CRC32, for bytes the loader did not verify),
/// or is not the one its index entry describes (length, stored checksum, key count) answers "may contain"
/// ([`TableFilter`](crate::TableFilter) counts it as a decode error).
///
/// ```
/// use sstfilter::{BlockedBloomPolicy, Partition, PartitionLoader, PartitionedFilter, PartitionedFilterBuilder};
///
/// let mut builder = PartitionedFilterBuilder::new(BlockedBloomPolicy::new(10.0)?).with_partition_bytes(256)?;
/// for i in 0..10_000u32 {
///     builder.add_key(format!("usr:{i:08}").as_bytes())?;
/// }
/// let partitions = builder.finish();
/// // A store writes each partition where it likes; here they are kept in memory, "offset" = position.
/// let blocks: Vec<Vec<u8>> = partitions.blocks().to_vec();
/// let offsets: Vec<u64> = (0..blocks.len() as u64).collect();
/// let index = partitions.index(&offsets)?;
///
/// let filter = PartitionedFilter::open(index)?; // verifies the index's CRC: it stays pinned
///
/// // Bytes the filter verifies on every load (a cache of verified partitions answers in place instead).
/// struct InMemory(Vec<Vec<u8>>);
/// impl PartitionLoader for InMemory {
///     type Block<'a> = &'a [u8];
///     type Error = &'static str;
///     fn load(&self, partition: &Partition) -> Result<&[u8], Self::Error> {
///         self.0.get(partition.offset as usize).map(Vec::as_slice).ok_or("no such partition")
///     }
/// }
/// let loader = InMemory(blocks);
/// assert!(filter.num_partitions() > 1);
/// assert!(filter.may_contain(b"usr:00004242", &loader));
/// assert!(!filter.may_contain(b"zzz", &loader)); // past the last key: no partition is loaded
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
pub struct PartitionedFilter<B> {
    bytes: B,
    payload_len: usize,
    layout: Layout,
    /// The separators' heads, for finding a key's partition ([`with_search_heads`](Self::with_search_heads)).
    heads: Option<SeparatorHeads>,
    trailer: Trailer<PartitionIndexTag>,
    /// This index's number among those the process opened (its clones share it): what its verified partitions
    /// are stamped with.
    id: NonZeroU64,
}

impl<B> fmt::Debug for PartitionedFilter<B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PartitionedFilter")
            .field("partitions", &self.layout.partitions)
            .field("separator_bytes", &self.layout.separator_bytes)
            .field("num_keys", &self.trailer.num_keys)
            .finish_non_exhaustive()
    }
}

impl<B: AsRef<[u8]>> PartitionedFilter<B> {
    /// Opens a partition index, checking its trailer, its CRC32 and its layout: one entry per partition,
    /// separators strictly increasing and inside the index, key counts adding up to the trailer's. Fails with
    /// [`Error::NotPartitionIndex`] for an ordinary filter block.
    pub fn open(bytes: B) -> Result<Self> {
        let block = bytes.as_ref();
        let (payload_len, trailer) = Trailer::<PartitionIndexTag>::decode_index(block)?;
        let found = block_checksum(block);
        if found != trailer.checksum {
            return Err(Error::ChecksumMismatch {
                expected: trailer.checksum,
                found,
            });
        }
        let payload = block.get(..payload_len).unwrap_or_default();
        let layout = Layout::validate(payload, &trailer.params, trailer.num_keys)?;
        Ok(PartitionedFilter {
            bytes,
            payload_len,
            layout,
            heads: None,
            trailer,
            id: NonZeroU64::MIN.saturating_add(LAST_INDEX.fetch_add(1, Ordering::Relaxed)),
        })
    }

    /// Finds a key's partition from a copy of the separators' first bytes (8 bytes each, with a table of 4-byte
    /// slots that a key's first bytes index: 12 to 20 bytes a partition, allocated here once; under two thirds
    /// of the index's entries, so never more than the block), most often in two cache lines and without a byte
    /// compare: several times faster than the plain binary search over the separators that [`open`](Self::open)
    /// alone uses without allocating. For an index kept open across many lookups (pinned beside a table).
    #[must_use]
    pub fn with_search_heads(mut self) -> Self {
        let payload = format::payload(self.bytes.as_ref(), self.payload_len);
        let layout = &self.layout;
        self.heads = SeparatorHeads::new(
            (0..layout.partitions).filter_map(|position| layout.separator(payload, position)),
        );
        self
    }

    fn payload(&self) -> &[u8] {
        format::payload(self.bytes.as_ref(), self.payload_len)
    }

    /// Number of partitions.
    #[must_use]
    pub fn num_partitions(&self) -> usize {
        self.layout.partitions
    }

    /// Keys in all partitions (the index trailer's count, checked at open against the entries).
    #[must_use]
    pub fn num_keys(&self) -> u64 {
        self.trailer.num_keys
    }

    /// The name of the prefix extractor whose prefixes the partitions hold, if they hold prefixes (the index
    /// records it, FORMAT.md section 8).
    #[must_use]
    pub fn prefix_extractor_name(&self) -> Option<&str> {
        self.trailer.prefix_extractor_name(self.bytes.as_ref())
    }

    /// Whether the partitions hold whole keys (all do, but those built with prefixes only).
    pub(crate) fn holds_whole_keys(&self) -> bool {
        self.trailer.holds_whole_keys()
    }

    /// Partition `position`, or `None` past the last.
    #[must_use]
    pub fn partition(&self, position: usize) -> Option<Partition> {
        (position < self.layout.partitions)
            .then(|| self.layout.entry(self.payload(), position))
            .flatten()
            .map(|e| e.partition(position))
    }

    /// Every partition, in key order.
    pub fn partitions(&self) -> impl Iterator<Item = Partition> + '_ {
        (0..self.layout.partitions).filter_map(|p| self.partition(p))
    }

    /// Partition `position`'s separator: at least its last key, less than the next partition's first key.
    pub(crate) fn separator(&self, position: usize) -> Option<&[u8]> {
        (position < self.layout.partitions)
            .then(|| self.layout.separator(self.payload(), position))
            .flatten()
    }

    /// The one partition that can hold `key`: the first whose separator is `>= key`; `None` if the key is past
    /// the last separator, where no partition can hold it.
    pub(crate) fn find(&self, key: &[u8]) -> Option<Partition> {
        self.partition(self.position_of(key))
    }

    /// The position of the first separator `>= key` (the number of partitions if there is none): the partition
    /// that can hold `key`.
    #[inline]
    pub(crate) fn position_of(&self, key: &[u8]) -> usize {
        let separator = |position| self.separator(position);
        match &self.heads {
            Some(heads) => heads.position_of(key, separator),
            None => first_separator_at_least(0, self.layout.partitions, key, separator),
        }
    }

    /// Whether `key` may be in the filter, loading its partition through `loader` if needed: `false` past the
    /// last separator (no load), else the partition's answer; `true` if the partition could not be loaded or
    /// used.
    pub fn may_contain<L: PartitionLoader>(&self, key: &[u8], loader: &L) -> bool {
        let Some(partition) = self.find(key) else {
            return false;
        };
        let question = ByHash {
            index: self,
            position: partition.position,
            hash: key_hash(key),
        };
        let answer = match loader.ask_in_place(&question) {
            Some(answer) => answer,
            None => match loader.load(&partition) {
                Ok(bytes) => self
                    .verify_partition(&partition, bytes)
                    .and_then(|verified| question.ask(&verified)),
                Err(_) => return true,
            },
        };
        answer.unwrap_or(true)
    }

    /// Opens `bytes` as `partition`: an ordinary filter block whose structure and CRC32 check out
    /// ([`FilterBlock::open`]), that holds key hashes (a Range block is refused with [`Error::BadParams`]: asked by
    /// hash, it could only ever answer "may contain"), and whose length, stored checksum and key count are the ones
    /// the index recorded (else [`Error::PartitionMismatch`]). What a store does once, when a partition enters its cache; the
    /// [`VerifiedPartition`] it gets back is what its loader hands out.
    pub fn verify_partition<T: AsRef<[u8]>>(
        &self,
        partition: &Partition,
        bytes: T,
    ) -> Result<VerifiedPartition<T>> {
        let filter = FilterBlock::open(bytes)?;
        if filter.kind() == FilterKind::Range {
            return Err(Error::BadParams {
                kind: Some(filter.kind()),
                field: "partition without key hashes",
                found: partition.position as u64,
            });
        }
        check_identity(partition, &filter)?;
        // Stamped only as the partition this index has at that position: one verified as another index's partition
        // matches it by its entry on every question.
        let stamp = (self.partition(partition.position) == Some(*partition)).then_some(Stamp {
            index: self.id,
            position: partition.position,
        });
        Ok(VerifiedPartition::new(filter, stamp))
    }

    /// Whether `verified` is partition `position` of this index: verified by this index as that partition, or,
    /// verified elsewhere, with the length, stored checksum and key count of its entry.
    pub(crate) fn holds<T: AsRef<[u8]>>(
        &self,
        position: usize,
        verified: &VerifiedPartition<T>,
    ) -> Result<()> {
        if verified.stamp()
            == Some(Stamp {
                index: self.id,
                position,
            })
        {
            return Ok(());
        }
        match self.partition(position) {
            Some(partition) => check_identity(&partition, verified.filter()),
            None => Err(Error::PartitionMismatch {
                partition: position as u64,
            }),
        }
    }

    /// The index block's bytes.
    #[must_use]
    pub fn as_bytes(&self) -> &[u8] {
        self.bytes.as_ref()
    }

    /// The index block's bytes, giving up the reader.
    #[must_use]
    pub fn into_inner(self) -> B {
        self.bytes
    }
}

/// "May this partition hold the key of `hash`?", asked of the partition the index names for the key.
struct ByHash<'a, B> {
    index: &'a PartitionedFilter<B>,
    position: usize,
    hash: KeyHash,
}

impl<B> super::sealed::Sealed for ByHash<'_, B> {}

impl<B: AsRef<[u8]>> PartitionQuestion for ByHash<'_, B> {
    type Answer = Result<bool>;

    fn position(&self) -> usize {
        self.position
    }

    fn partition(&self) -> Option<Partition> {
        self.index.partition(self.position)
    }

    fn ask<T: AsRef<[u8]>>(&self, partition: &VerifiedPartition<T>) -> Result<bool> {
        self.index.holds(self.position, partition)?;
        Ok(partition.filter().may_contain_hash(self.hash))
    }
}
