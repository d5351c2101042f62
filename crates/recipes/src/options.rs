//! The builders' options beside the policy: prefixes (`FilterBlockBuilder::with_prefixes`) and partitioning
//! (`PartitionedFilterBuilder`).

use std::sync::Arc;

use arbitrary::Arbitrary;
use sstfilter::{
    CappedPrefix, DelimitedPrefix, FixedPrefix, Partition, PartitionCuts, PartitionLoader,
    PartitionQuestion, PartitionedFilter, PartitionedFilterBuilder, Partitions, PrefixExtractor,
    UsageError, VerifiedPartition,
};

use crate::recipe::SharedPolicy;

/// The setting a partitioned filter builder names when it refuses a partition size.
pub(crate) const PARTITION_BYTES_SETTING: &str = "partition_bytes";

/// A prefix extractor with its parameter: a built-in one (lengths up to 15, any delimiter byte), or a user's with
/// a name of any length (a block records at most `MAX_PREFIX_NAME_LEN` bytes: `with_prefixes` refuses longer
/// names).
#[derive(Arbitrary, Debug, Clone, Copy, PartialEq, Eq)]
pub enum Extractor {
    /// `FixedPrefix::new(len % 16)`.
    Fixed(u8),
    /// `DelimitedPrefix::new(delimiter)`.
    Delimited(u8),
    /// `CappedPrefix::new(len % 16)`.
    Capped(u8),
    /// A user's extractor, `CappedPrefix::new(2)`'s prefixes under a name of `name_len % 512` bytes.
    Named(u16),
}

/// A user's extractor: capped prefixes of 2 bytes, under a name of any length.
pub struct NamedCapped(pub String);

impl PrefixExtractor for NamedCapped {
    fn name(&self) -> &str {
        &self.0
    }
    fn prefix_len(&self, key: &[u8]) -> Option<usize> {
        Some(key.len().min(2))
    }
    fn scan_prefix_len(&self, scan: &[u8]) -> Option<usize> {
        (scan.len() >= 2).then_some(2)
    }
}

impl Extractor {
    /// The extractor this value stands for.
    #[must_use]
    pub fn get(self) -> Arc<dyn PrefixExtractor> {
        match self {
            Extractor::Fixed(len) => Arc::new(FixedPrefix::new(usize::from(len % 16))),
            Extractor::Delimited(delimiter) => Arc::new(DelimitedPrefix::new(delimiter)),
            Extractor::Capped(len) => Arc::new(CappedPrefix::new(usize::from(len % 16))),
            Extractor::Named(len) => Arc::new(NamedCapped("n".repeat(usize::from(len % 512)))),
        }
    }
}

/// `FilterBlockBuilder::with_prefixes`: the extractor, and whether whole keys are kept beside the prefixes.
#[derive(Arbitrary, Debug, Clone, Copy, PartialEq, Eq)]
pub struct Prefixes {
    /// The extractor.
    pub extractor: Extractor,
    /// Whether whole keys are added too.
    pub whole_keys: bool,
}

/// How a partitioned filter is cut: every parameter of `PartitionedFilterBuilder`.
#[derive(Arbitrary, Debug, Clone, Copy, PartialEq, Eq)]
pub struct Partitioning {
    /// `with_partition_bytes` (0 is refused).
    pub partition_bytes: u16,
    /// `with_cuts(PartitionCuts::AtDataBlocks)` instead of `Anywhere`.
    pub at_data_blocks: bool,
    /// `end_data_block` after every this many keys (plus one).
    pub keys_per_data_block: u8,
}

impl Partitioning {
    /// Builds sorted `keys` into partitions with `policy` and returns them with their index, partition `i`
    /// recorded at offset `i`; `None` for a partition size of 0, which the builder refuses.
    ///
    /// # Panics
    /// If the keys are not sorted, or the builder refuses anything else.
    #[must_use]
    pub fn build(&self, policy: SharedPolicy, keys: &[Vec<u8>]) -> Option<(Partitions, Vec<u8>)> {
        let bytes = usize::from(self.partition_bytes);
        let mut builder = match PartitionedFilterBuilder::new(policy).with_partition_bytes(bytes) {
            Ok(builder) => builder.with_cuts(self.cuts()),
            Err(e) => {
                assert!(
                    bytes == 0
                        && matches!(&e, UsageError::InvalidSetting { setting, .. }
                            if *setting == PARTITION_BYTES_SETTING),
                    "partition size {bytes} refused: {e:?}"
                );
                return None;
            }
        };
        let per_block = usize::from(self.keys_per_data_block) + 1;
        for (i, key) in keys.iter().enumerate() {
            builder.add_key(key).expect("sorted keys");
            if (i + 1) % per_block == 0 {
                builder.end_data_block();
            }
        }
        // A table ends its last data block after its last key.
        builder.end_data_block();
        let partitions = builder.finish();
        let offsets: Vec<u64> = (0..partitions.blocks().len() as u64).collect();
        let index = partitions
            .index(&offsets)
            .expect("one offset per partition");
        Some((partitions, index))
    }

    /// Where partitions may end.
    #[must_use]
    pub fn cuts(&self) -> PartitionCuts {
        if self.at_data_blocks {
            PartitionCuts::AtDataBlocks
        } else {
            PartitionCuts::Anywhere
        }
    }

    /// Builds `keys` (sorted here) into partitions with `policy` and checks that every key is found through the
    /// index (by the plain search and by the search heads), by loads and asked in place, in a partition that
    /// verifies.
    pub fn check(&self, what: &str, policy: SharedPolicy, keys: &[Vec<u8>]) {
        let mut sorted = keys.to_vec();
        sorted.sort();
        let Some((partitions, index)) = self.build(policy, &sorted) else {
            return;
        };
        let filter = PartitionedFilter::open(&index[..])
            .unwrap_or_else(|e| panic!("{what}: a fresh index does not open: {e}"));
        let with_heads = filter.clone().with_search_heads();
        let blocks: Vec<&[u8]> = partitions.blocks().iter().map(Vec::as_slice).collect();
        let loader = ByOffset(&blocks);
        let verified: Vec<VerifiedPartition<&[u8]>> = filter
            .partitions()
            .map(|p| {
                filter
                    .verify_partition(&p, blocks[p.position])
                    .unwrap_or_else(|e| panic!("{what}: a fresh partition does not verify: {e}"))
            })
            .collect();
        let in_place = InPlace(&verified);
        for key in &sorted {
            assert!(
                filter.may_contain(key, &loader),
                "{what}: partitioned lost {key:?}"
            );
            assert!(
                with_heads.may_contain(key, &in_place),
                "{what}: partitioned, asked in place, lost {key:?}"
            );
        }
    }
}

/// Verified partitions, by position, asked in place ([`PartitionLoader::ask_in_place`]) as a cache would.
pub struct InPlace<'a>(pub &'a [VerifiedPartition<&'a [u8]>]);

impl PartitionLoader for InPlace<'_> {
    type Block<'b>
        = &'b [u8]
    where
        Self: 'b;
    type Error = ();

    fn load(&self, _partition: &Partition) -> Result<&[u8], ()> {
        Err(())
    }

    fn ask_in_place<Q: PartitionQuestion>(&self, question: &Q) -> Option<Q::Answer> {
        Some(question.ask(self.0.get(question.position())?))
    }
}

/// Partitions looked up by offset in a list of blocks (any bytes: a fuzzed index may name anything).
pub struct ByOffset<'a>(pub &'a [&'a [u8]]);

impl PartitionLoader for ByOffset<'_> {
    type Block<'b>
        = &'b [u8]
    where
        Self: 'b;
    type Error = ();

    fn load(&self, partition: &Partition) -> Result<&[u8], ()> {
        let at = usize::try_from(partition.offset).map_err(|_| ())?;
        self.0.get(at).copied().ok_or(())
    }
}
