//! The filter kind tag: which algorithm a block holds. A leaf module: the error type, the container and the kinds
//! all name kinds, and it depends on none of them.

use core::fmt;

/// The filter algorithm a block was built with, as stored in the trailer's kind tag.
///
/// The reader dispatches on this tag, never on configuration. Tag 0 is reserved (it catches zeroed memory);
/// unknown tags are rejected with [`Error::UnknownKind`](crate::Error::UnknownKind).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
#[repr(u8)]
pub enum FilterKind {
    /// Cache-local blocked Bloom filter: one 64-byte block per key, all probes inside it.
    BlockedBloom = 1,
    /// Standard Ribbon filter with 128-bit rows, split into independently solved shards.
    Ribbon = 2,
    /// Range filter (Grafite): answers whether any key lies between two bounds, and point questions by key.
    Range = 3,
    /// The classic Bloom filter: one bit array, `k` probes anywhere in it (also the serialised in-memory
    /// `BloomFilter` of the `sstfilter-memory` crate).
    StandardBloom = 4,
}

impl FilterKind {
    /// The tag byte stored in the trailer.
    #[must_use]
    pub const fn tag(self) -> u8 {
        self as u8
    }

    /// The kind a tag byte stands for, or `None` for a reserved or unknown tag.
    #[must_use]
    pub(crate) const fn from_tag(tag: u8) -> Option<Self> {
        match tag {
            1 => Some(FilterKind::BlockedBloom),
            2 => Some(FilterKind::Ribbon),
            3 => Some(FilterKind::Range),
            4 => Some(FilterKind::StandardBloom),
            _ => None,
        }
    }
}

/// The tag of a partition index block (FORMAT.md, section 8): not a filter kind, so that a filter reader rejects
/// an index ([`Error::PartitionIndex`](crate::Error::PartitionIndex)) and an index reader rejects a filter.
pub(crate) const PARTITION_INDEX_TAG: u8 = 16;

impl fmt::Display for FilterKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            FilterKind::BlockedBloom => "BlockedBloom",
            FilterKind::Ribbon => "Ribbon",
            FilterKind::StandardBloom => "StandardBloom",
            FilterKind::Range => "Range",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_round_trip_and_reserved_tags_are_none() {
        for kind in [
            FilterKind::BlockedBloom,
            FilterKind::Ribbon,
            FilterKind::StandardBloom,
            FilterKind::Range,
        ] {
            assert_eq!(FilterKind::from_tag(kind.tag()), Some(kind));
        }
        assert_eq!(
            (FilterKind::Ribbon.tag(), FilterKind::StandardBloom.tag()),
            (2, 4)
        );
        for reserved in [0u8, 5, 15, 16, 255] {
            assert_eq!(FilterKind::from_tag(reserved), None);
        }
    }
}
