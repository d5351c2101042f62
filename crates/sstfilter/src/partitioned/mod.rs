//! Partitioned filters: a table's keys cut into key ranges, each range an ordinary filter block (a partition),
//! plus a small **partition index** that names each partition's last key and location (FORMAT.md, section 8).
//!
//! A store pins only the index (tens of bytes per partition) and loads the one partition a lookup needs through
//! its own block cache, so a big table's filter no longer has to be resident all at once.
//!
//! ```text
//! sorted keys ─ PartitionedFilterBuilder (cut every ~partition_bytes of filter) ─▶ Partitions
//!    ├─ blocks(): one filter block per partition ─▶ the store writes them and notes their offsets
//!    └─ index(offsets) ─▶ the partition index block (separators ‖ entries ‖ trailer, tag 16)
//! lookup(key) ─ PartitionedFilter (index pinned): binary search ─▶ one partition ─ PartitionLoader ─▶ answer
//! ```

mod builder;
mod index;
mod reader;

pub use builder::{
    DEFAULT_PARTITION_BYTES, MAX_PARTITION_BYTES, PartitionCuts, PartitionedFilterBuilder,
    Partitions,
};
pub use reader::{PartitionAnswer, PartitionError, PartitionedFilter};

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
/// The filter checks that what comes back is the partition the index names (length, stored checksum and key
/// count); it does not recompute the CRC over the bytes on every query. Verify each block once when it enters the
/// cache ([`PartitionedFilter::verify_partition`]), as with any filter block.
pub trait PartitionLoader {
    /// The loaded bytes: a borrowed slice, a cache handle, an `Arc`, anything that is `AsRef<[u8]>`.
    type Block<'a>: AsRef<[u8]>
    where
        Self: 'a;
    /// Why a load failed (an I/O error, a cache error): the query then answers "may contain".
    type Error;

    /// The bytes of `partition`.
    fn load(&self, partition: &Partition) -> Result<Self::Block<'_>, Self::Error>;
}

impl<L: PartitionLoader + ?Sized> PartitionLoader for &L {
    type Block<'a>
        = L::Block<'a>
    where
        Self: 'a;
    type Error = L::Error;

    fn load(&self, partition: &Partition) -> Result<Self::Block<'_>, Self::Error> {
        (**self).load(partition)
    }
}
