//! Building a table's filter: [`TableFilterBuilder`], fed each key once in table order, and the blocks it gives
//! back ([`TableFilterBlocks`]).

use core::fmt;

use super::options::{SharedPolicy, TableFilterOptions};
use crate::builder::{FilterBlockBuilder, Hashes};
use crate::error::UsageError;
use crate::hash::key_hash;
use crate::kind::range::builder::RangeFilterBuilder;
use crate::partitioned::{PartitionedFilterBuilder, Partitions};

/// Builds every filter of one table from its keys, given once each in table order: the point filter (one block,
/// or partitions and their index), its prefixes, and the range filter beside it, as [`TableFilterOptions`] say.
///
/// One contract for every combination: keys come in non-decreasing byte order; a key equal to the previous one
/// counts once (a table's versions of one key); a key below it is refused with [`UsageError::KeysOutOfOrder`]
/// and not added. With partitions cut at data blocks, call [`end_data_block`](Self::end_data_block) after the last
/// key of each data block. [`finish_and_reset`](Self::finish_and_reset) gives back the blocks and keeps the
/// builder, and its memory, for the next table.
///
/// ```
/// use std::sync::Arc;
/// use sstfilter::{BlockedBloomPolicy, FixedPrefix, KeyProbe, NoPartitions, RangePolicy, TableFilter,
///     TableFilterBuilder, TableFilterOptions};
///
/// let options = TableFilterOptions::new()
///     .point(BlockedBloomPolicy::new(10.0)?)
///     .prefixes(Arc::new(FixedPrefix::new(4)), true)?
///     .range(RangePolicy::new(1 << 10, 0.01)?)?;
/// let mut builder = TableFilterBuilder::new(&options);
/// for i in 0..1000u32 {
///     builder.add_key(format!("t{:03}:{:06}", i / 100, i * 7).as_bytes())?; // sorted
/// }
/// let blocks = builder.finish_and_reset()?;
/// // A store writes the blocks where it keeps blocks, and records where the two it must find again went.
/// let (point, range) = (blocks.point_block().unwrap().to_vec(), blocks.range_block().unwrap().to_vec());
/// let filter = TableFilter::open(&options, Some(&point[..]), Some(&range[..]))?;
/// assert!(filter.may_contain(&KeyProbe::new(b"t000:000021"), &NoPartitions).must_read()); // a key (i = 3)
/// assert!(!filter.may_contain_prefix(b"t999", &NoPartitions).must_read()); // no key starts with "t999"
/// # Ok::<(), sstfilter::UsageError>(())
/// ```
pub struct TableFilterBuilder {
    point: Option<PointBuilder>,
    range: Option<RangeFilterBuilder>,
    /// The key added last, for the order check (once for every filter).
    last: Vec<u8>,
    /// Distinct keys added.
    keys: u64,
    /// Keys are taken in any order ([`TableFilterOptions::any_key_order`]).
    any_order: bool,
    /// A key came after a larger one (in any order): a key may repeat apart, so `finish` counts repeats once.
    unsorted: bool,
    /// In any order, when the point filter does not hold whole keys: their hashes, to count them once each.
    counted: Option<Hashes>,
}

enum PointBuilder {
    Whole(FilterBlockBuilder<SharedPolicy>),
    Partitioned(PartitionedFilterBuilder<SharedPolicy>),
}

impl fmt::Debug for TableFilterBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TableFilterBuilder")
            .field("keys", &self.keys)
            .field(
                "partitioned",
                &matches!(self.point, Some(PointBuilder::Partitioned(_))),
            )
            .field("range", &self.range.is_some())
            .finish_non_exhaustive()
    }
}

impl TableFilterBuilder {
    /// A builder for the filters `options` describe (which checked every setting where it was made).
    #[must_use]
    pub fn new(options: &TableFilterOptions) -> Self {
        let point = options.point.as_ref().map(|policy| {
            let block = FilterBlockBuilder::new(policy.clone());
            let block = match &options.prefixes {
                Some(p) => {
                    block.with_named_prefixes(p.extractor.clone(), p.name.clone(), p.whole_keys)
                }
                None => block,
            };
            match options.partitions {
                None => PointBuilder::Whole(block),
                Some((bytes, cuts)) => PointBuilder::Partitioned(
                    PartitionedFilterBuilder::new(policy.clone())
                        .with_checked_partition_bytes(bytes)
                        .with_cuts(cuts)
                        .with_partition_builder(block),
                ),
            }
        });
        let whole_keys = matches!(&point, Some(PointBuilder::Whole(b)) if b.has_whole_keys());
        TableFilterBuilder {
            point,
            range: options.range.map(RangeFilterBuilder::new),
            last: Vec::new(),
            keys: 0,
            any_order: options.any_key_order,
            unsorted: false,
            counted: (options.any_key_order && !whole_keys).then(Hashes::default),
        }
    }

    /// Adds the table's next key to every filter. Keys must not decrease (unless the options take them in
    /// [any order](TableFilterOptions::any_key_order)); a key equal to the previous one is taken once, a smaller
    /// one is refused ([`UsageError::KeysOutOfOrder`]) and not added. A range filter whose
    /// policy cannot keep its rate for one more key refuses it ([`UsageError::TooManyKeys`]); then nothing of the
    /// key is added.
    pub fn add_key(&mut self, key: &[u8]) -> Result<(), UsageError> {
        if self.keys > 0 {
            match key.cmp(self.last.as_slice()) {
                core::cmp::Ordering::Less if !self.any_order => {
                    return Err(UsageError::KeysOutOfOrder);
                }
                core::cmp::Ordering::Less => self.unsorted = true,
                core::cmp::Ordering::Equal => return Ok(()),
                core::cmp::Ordering::Greater => {}
            }
        }
        if let Some(counted) = &mut self.counted {
            counted.push(key_hash(key).get());
        }
        // The range filter first: it is the one that can refuse a key in order.
        if let Some(range) = &mut self.range {
            range.add_key(key)?;
        }
        match &mut self.point {
            Some(PointBuilder::Whole(builder)) => builder.add_key(key),
            Some(PointBuilder::Partitioned(builder)) => builder.add_key(key)?,
            None => {}
        }
        self.last.clear();
        self.last.extend_from_slice(key);
        self.keys += 1;
        Ok(())
    }

    /// Says that the key added last ended a data block: with partitions cut at data blocks
    /// ([`PartitionCuts::AtDataBlocks`](crate::PartitionCuts::AtDataBlocks)), a partition that has reached its
    /// size ends there. (Ignored otherwise.)
    pub fn end_data_block(&mut self) {
        if let Some(PointBuilder::Partitioned(builder)) = &mut self.point {
            builder.end_data_block();
        }
    }

    /// Keys added since the last reset, each once when keys come in order. In
    /// [any order](TableFilterOptions::any_key_order), a key given again after others counts again here until
    /// [`finish_and_reset`](Self::finish_and_reset), whose [`TableFilterBlocks::num_keys`] counts it once.
    #[must_use]
    pub fn len(&self) -> u64 {
        self.keys
    }

    /// Whether no key was added since the last reset.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.keys == 0
    }

    /// Builds every filter of the keys added since the last reset and empties the builder for the next table
    /// (same options), keeping its memory. Fails as [`PartitionedFilterBuilder::finish`] does (partitions cut at
    /// data blocks and no data block ever ended) and for a partition index larger than its format addresses; the
    /// builder is empty after a failure too, ready for the next table.
    pub fn finish_and_reset(&mut self) -> Result<TableFilterBlocks, UsageError> {
        let mut num_keys = self.keys;
        let unsorted = core::mem::take(&mut self.unsorted);
        if let Some(PointBuilder::Whole(builder)) = &mut self.point {
            let distinct = builder.dedup(unsorted) as u64;
            if unsorted {
                num_keys = distinct;
            }
        }
        if let Some(counted) = self.counted.as_mut().filter(|_| unsorted) {
            counted.dedup();
            num_keys = counted.len() as u64;
        }
        let point = match &mut self.point {
            Some(PointBuilder::Whole(builder)) => {
                Some(PointBlocks::Whole(builder.finish_and_reset()))
            }
            Some(PointBuilder::Partitioned(builder)) => {
                Some(PointBlocks::Partitioned(builder.finish_and_reset()))
            }
            None => None,
        };
        let range = self
            .range
            .as_mut()
            .map(RangeFilterBuilder::finish_and_reset);
        self.last.clear();
        self.keys = 0;
        if let Some(counted) = &mut self.counted {
            counted.clear();
        }
        if let Some(PointBlocks::Partitioned(partitions)) = &point {
            // The index's offsets are the store's to give; check now that the separators fit its format.
            partitions.index(&vec![0; partitions.blocks().len()])?;
        }
        Ok(TableFilterBlocks {
            point,
            range,
            num_keys,
        })
    }

    /// [`finish_and_reset`](Self::finish_and_reset) for a builder not needed after.
    pub fn finish(mut self) -> Result<TableFilterBlocks, UsageError> {
        self.finish_and_reset()
    }
}

/// The blocks of one table's filter, to store: the point filter (one block, or partitions and their index) and
/// the range filter.
#[derive(Debug, Clone)]
pub struct TableFilterBlocks {
    point: Option<PointBlocks>,
    range: Option<Vec<u8>>,
    num_keys: u64,
}

#[derive(Debug, Clone)]
enum PointBlocks {
    Whole(Vec<u8>),
    Partitioned(Partitions),
}

/// Which block of a table filter a store is handed to write ([`TableFilterBlocks::write`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum TableFilterPart {
    /// The point filter, in one block.
    Point,
    /// Partition `i` of a partitioned point filter; its index comes after every partition.
    Partition(usize),
    /// The partition index: what the store records to find the point filter again.
    PartitionIndex,
    /// The range filter.
    Range,
}

/// Where a store put a block: its offset (a file offset, or any number the store's loader understands, as in
/// [`Partition::offset`](crate::Partition::offset)) and its length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockLocation {
    /// The offset the store gave for it.
    pub offset: u64,
    /// The block's length in bytes.
    pub len: u64,
}

/// Where a table filter's two entry points went: what a store records (in its footer or meta-index) to open the
/// filter again ([`TableFilter::open`](crate::TableFilter::open)); partitions are found through the index.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TableFilterLocations {
    /// The point filter's block, or its partition index.
    pub point: Option<BlockLocation>,
    /// The range filter's block.
    pub range: Option<BlockLocation>,
}

impl TableFilterBlocks {
    /// Hands each block to `write`, which stores it and returns its offset: partitions first (their index
    /// records their offsets), then the range filter, then the point filter or the index. Returns where the two
    /// blocks a reader opens went. A store that keeps blocks in memory returns `Ok` always; one that writes a file
    /// passes its I/O errors through.
    pub fn write(
        &self,
        mut write: impl FnMut(TableFilterPart, &[u8]) -> std::io::Result<u64>,
    ) -> std::io::Result<TableFilterLocations> {
        let mut place = |part, bytes: &[u8]| -> std::io::Result<BlockLocation> {
            Ok(BlockLocation {
                offset: write(part, bytes)?,
                len: bytes.len() as u64,
            })
        };
        let mut offsets = Vec::new();
        if let Some(PointBlocks::Partitioned(partitions)) = &self.point {
            for (i, block) in partitions.blocks().iter().enumerate() {
                offsets.push(place(TableFilterPart::Partition(i), block)?.offset);
            }
        }
        let range = match &self.range {
            Some(block) => Some(place(TableFilterPart::Range, block)?),
            None => None,
        };
        let point = match &self.point {
            None => None,
            Some(PointBlocks::Whole(block)) => Some(place(TableFilterPart::Point, block)?),
            Some(PointBlocks::Partitioned(partitions)) => {
                // One offset per partition, and `finish_and_reset` checked the separators fit: this cannot fail.
                // Were it to, an empty index would not open, and the reader would answer "may contain".
                let index = partitions.index(&offsets).unwrap_or_default();
                Some(place(TableFilterPart::PartitionIndex, &index)?)
            }
        };
        Ok(TableFilterLocations { point, range })
    }

    /// The point filter's block, when it is one block.
    #[must_use]
    pub fn point_block(&self) -> Option<&[u8]> {
        match &self.point {
            Some(PointBlocks::Whole(block)) => Some(block),
            _ => None,
        }
    }

    /// The point filter's partitions, when it is partitioned (write the blocks, then
    /// [`Partitions::index`] with their positions).
    #[must_use]
    pub fn partitions(&self) -> Option<&Partitions> {
        match &self.point {
            Some(PointBlocks::Partitioned(partitions)) => Some(partitions),
            _ => None,
        }
    }

    /// The range filter's block.
    #[must_use]
    pub fn range_block(&self) -> Option<&[u8]> {
        self.range.as_deref()
    }

    /// Distinct keys the filters were built from.
    #[must_use]
    pub fn num_keys(&self) -> u64 {
        self.num_keys
    }
}
