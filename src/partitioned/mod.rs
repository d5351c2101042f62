//! Partitioned filters: the builder, the index and the reader. What they are and how a store uses them: the crate
//! docs, "Partitioned filters"; the byte layout: FORMAT.md section 8.
//!
//! ```text
//! sorted keys ─ PartitionedFilterBuilder (cut every ~partition_bytes of filter) ─▶ Partitions
//!    ├─ blocks(): one filter block per partition ─▶ the store writes them and notes their offsets
//!    └─ index(offsets) ─▶ the partition index block (separators ‖ entries ‖ trailer, tag 16)
//! lookup(key) ─ PartitionedFilter (index pinned): heads search ─▶ one partition ─ PartitionLoader ─▶ answer
//! ```

mod builder;
mod index;
mod reader;
mod search;

pub(crate) use builder::check_partition_bytes;
pub use builder::{
    DEFAULT_PARTITION_BYTES, MAX_PARTITION_BYTES, PartitionCuts, PartitionedFilterBuilder,
    Partitions,
};
pub use reader::PartitionedFilter;

use core::num::NonZeroU64;

use crate::error::Error;
use crate::reader::FilterBlock;

/// One partition as the index names it: where the store put it and what it must be.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct Partition {
    /// Its position in the index, `0..num_partitions`.
    pub position: usize,
    /// Where the store wrote it (a file offset, or any number the store's loader understands).
    pub offset: u64,
    /// The partition block's length in bytes.
    pub len: u64,
    /// The key count in the partition block's trailer.
    pub num_keys: u64,
    /// The CRC32 stored in the partition block's trailer: a loaded block with another one is not this
    /// partition (another table's, swapped, or stale) and is not trusted.
    pub checksum: u32,
}

/// Loads a partition's bytes for a [`PartitionedFilter`], typically through the store's block cache.
///
/// A partition is asked in one of two ways. A loader that holds it verified (a [`VerifiedPartition`], which only
/// [`PartitionedFilter::verify_partition`] makes: a cache verifies each partition once, when it enters) has the
/// question asked where it lies ([`ask_in_place`](Self::ask_in_place)): the fast path of a cache hit. Otherwise
/// [`load`](Self::load) hands back the bytes, which the filter verifies in full (CRC32 included) before they may
/// answer "absent". Either way a loader cannot hand the filter unverified bytes as verified: it cannot lose a
/// key, only cost time.
pub trait PartitionLoader {
    /// The loaded bytes: a borrowed slice, a cache handle, an `Arc`, anything that is `AsRef<[u8]>`.
    type Block<'a>: AsRef<[u8]>
    where
        Self: 'a;
    /// Why a load failed (an I/O error, a cache error): the query then answers "may contain".
    type Error;

    /// The bytes of `partition` (read from storage, or from a cache of bytes): the filter verifies them.
    fn load(&self, partition: &Partition) -> Result<Self::Block<'_>, Self::Error>;

    /// Asks `question` of its partition where the loader holds it verified (a [`VerifiedPartition`] in its
    /// cache), without handing it out: nothing is copied and no reference count is touched, the fast path of a
    /// cache hit. A cache that keeps a table's partitions by position finds it at
    /// [`question.position()`](PartitionQuestion::position), which reads nothing; one that keys them otherwise
    /// reads the index entry with [`question.partition()`](PartitionQuestion::partition). `None`, what this
    /// default does, when the loader does not hold it: the filter then calls [`load`](Self::load). The question
    /// checks that it is given the partition it is about.
    ///
    /// ```
    /// use std::collections::HashMap;
    /// use sstfilter::{
    ///     BlockedBloomPolicy, Partition, PartitionLoader, PartitionQuestion, PartitionedFilter,
    ///     PartitionedFilterBuilder, VerifiedPartition,
    /// };
    ///
    /// /// Partitions verified as they entered, by position.
    /// struct Cached(HashMap<usize, VerifiedPartition<Vec<u8>>>);
    /// impl PartitionLoader for Cached {
    ///     type Block<'a> = &'a [u8];
    ///     type Error = &'static str;
    ///     fn load(&self, _: &Partition) -> Result<&[u8], Self::Error> {
    ///         Err("not cached") // a store would read it, verify it and keep it here
    ///     }
    ///     fn ask_in_place<Q: PartitionQuestion>(&self, question: &Q) -> Option<Q::Answer> {
    ///         Some(question.ask(self.0.get(&question.position())?))
    ///     }
    /// }
    ///
    /// let mut builder = PartitionedFilterBuilder::new(BlockedBloomPolicy::new(10.0)?).with_partition_bytes(256)?;
    /// for i in 0..1_000u32 {
    ///     builder.add_key(format!("usr:{i:08}").as_bytes())?;
    /// }
    /// let partitions = builder.finish();
    /// let offsets: Vec<u64> = (0..partitions.blocks().len() as u64).collect();
    /// let filter = PartitionedFilter::open(partitions.index(&offsets)?)?;
    /// let mut cache = Cached(HashMap::new());
    /// for (p, bytes) in filter.partitions().zip(partitions.blocks()) {
    ///     cache.0.insert(p.position, filter.verify_partition(&p, bytes.clone())?);
    /// }
    /// assert!(filter.may_contain(b"usr:00000042", &cache));
    /// // "Absent", answered by the cached partition in place: `load` was never called (its error would have
    /// // answered "may contain").
    /// assert!(!filter.may_contain(b"usr:00000042/", &cache));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn ask_in_place<Q: PartitionQuestion>(&self, question: &Q) -> Option<Q::Answer> {
        let _ = question;
        None
    }
}

/// A filter's question about one partition, which a [`PartitionLoader`] holding that partition answers with
/// [`ask`](Self::ask) in [`PartitionLoader::ask_in_place`]. Only this crate's filters ask questions (the trait is
/// sealed), and each first checks that the partition it is given is the one its index names.
pub trait PartitionQuestion: sealed::Sealed {
    /// What the question returns.
    type Answer;

    /// The position in the index of the partition the question is about, `0..num_partitions`.
    fn position(&self) -> usize;

    /// The partition the question is about as its index entry names it (the entry is read on each call). `None`
    /// never happens for a question a filter asks: it only asks about the partitions its index has.
    fn partition(&self) -> Option<Partition>;

    /// The question's answer from `partition`.
    fn ask<B: AsRef<[u8]>>(&self, partition: &VerifiedPartition<B>) -> Self::Answer;
}

pub(crate) mod sealed {
    /// Keeps [`PartitionQuestion`](super::PartitionQuestion) to this crate's questions.
    pub trait Sealed {}
}

/// Whether `filter` is `partition`: its length, stored checksum and key count are the index entry's (a
/// partition of another table, swapped or stale, is not).
pub(crate) fn check_identity<T: AsRef<[u8]>>(
    partition: &Partition,
    filter: &FilterBlock<T>,
) -> Result<(), Error> {
    if filter.as_bytes().len() as u64 != partition.len
        || filter.stored_checksum() != partition.checksum
        || filter.num_keys() != partition.num_keys
    {
        return Err(Error::PartitionMismatch {
            partition: partition.position as u64,
        });
    }
    Ok(())
}

/// A partition's bytes, opened, with their CRC32 checked and matched to their entry in a partition index: made
/// only by [`PartitionedFilter::verify_partition`], so holding one proves the bytes were verified. Keep these in
/// a cache and have questions asked of them where they lie ([`PartitionLoader::ask_in_place`]); a lookup then
/// skips both the checksum and the decoding.
#[derive(Debug, Clone)]
pub struct VerifiedPartition<B> {
    filter: FilterBlock<B>,
    /// The index that verified it and as which of its partitions, when that is the partition the index names
    /// at that position.
    stamp: Option<Stamp>,
}

/// An open partition index (the number [`PartitionedFilter::open`] gave it) and one of its positions: a partition
/// verified there answers that index's questions about that position without its entry being read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stamp {
    pub(crate) index: NonZeroU64,
    pub(crate) position: usize,
}

impl<B: AsRef<[u8]>> VerifiedPartition<B> {
    /// Wraps a filter that `verify_partition` opened, verified and matched to its entry.
    pub(crate) fn new(filter: FilterBlock<B>, stamp: Option<Stamp>) -> Self {
        VerifiedPartition { filter, stamp }
    }

    /// Where it was verified.
    pub(crate) fn stamp(&self) -> Option<Stamp> {
        self.stamp
    }

    /// The partition's filter block.
    #[must_use]
    pub fn filter(&self) -> &FilterBlock<B> {
        &self.filter
    }

    /// The partition's bytes.
    #[must_use]
    pub fn as_bytes(&self) -> &[u8] {
        self.filter.as_bytes()
    }

    /// Gives back the bytes.
    #[must_use]
    pub fn into_inner(self) -> B {
        self.filter.into_inner()
    }
}
