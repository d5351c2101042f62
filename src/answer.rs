//! What a filter answers about a table, whatever the question (a key, a prefix, a range): "absent", "may contain",
//! or that it cannot tell and why ([`Unfiltered`], which a store may count).

use core::fmt;

/// A filter's answer to "may this table hold what I ask for?" (a key, a prefix, a range).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    /// Nothing asked for was added: skip the table.
    Absent,
    /// Something asked for may have been added: read the table.
    MayContain,
    /// The filter cannot answer, and why: read the table (a caller may count these).
    Unfiltered(Unfiltered),
}

impl Answer {
    /// Whether the table must be read: `false` only for [`Absent`](Self::Absent).
    #[must_use]
    pub const fn may_contain(&self) -> bool {
        !matches!(self, Answer::Absent)
    }

    /// `Absent` for `false`, `MayContain` for `true`.
    #[must_use]
    pub const fn from_may_contain(may_contain: bool) -> Self {
        if may_contain {
            Answer::MayContain
        } else {
            Answer::Absent
        }
    }
}

/// Why a filter cannot answer a question: every reason means "read the table".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Unfiltered {
    /// The block holds no prefixes (built without an extractor, or before prefix filters existed).
    NoPrefixes,
    /// The block was built with another extractor than the question's.
    OtherExtractor,
    /// The keys the scan covers do not share one stored prefix (see
    /// [`PrefixProbe::for_scan`](crate::PrefixProbe::for_scan)).
    ScanNotDetermined,
    /// The block holds prefixes only, and the key is outside the extractor's domain (or no extractor was given to
    /// ask by the key's prefix): no whole key was added to be asked about.
    NoWholeKeys,
    /// The block is a point filter, not a Range filter: it answers a range only when the range is one key.
    NoRangeFilter,
    /// The table has no filter that answers this question.
    NoFilter,
    /// The question spans more partitions of a partitioned filter than one question loads.
    TooManyPartitions,
    /// The filter, or the partition the question needs, could not be used: it failed to load, to open or to
    /// verify, or is not the block it should be. Counted as a decode error.
    Unusable,
}

impl fmt::Display for Unfiltered {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Unfiltered::NoPrefixes => "the filter holds no prefixes",
            Unfiltered::OtherExtractor => "the filter was built with another prefix extractor",
            Unfiltered::ScanNotDetermined => "the scan does not determine one stored prefix",
            Unfiltered::NoWholeKeys => "the filter holds prefixes only, and the key has none",
            Unfiltered::NoRangeFilter => "the filter is a point filter, not a range filter",
            Unfiltered::NoFilter => "the table has no filter for this question",
            Unfiltered::TooManyPartitions => {
                "the question spans more filter partitions than it loads"
            }
            Unfiltered::Unusable => "the filter could not be used (load, open or verify failed)",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_absent_skips_the_table() {
        assert!(Answer::MayContain.may_contain());
        assert!(Answer::Unfiltered(Unfiltered::NoPrefixes).may_contain());
        assert!(Answer::Unfiltered(Unfiltered::Unusable).may_contain());
        assert!(!Answer::Absent.may_contain());
        assert_eq!(Answer::from_may_contain(false), Answer::Absent);
        assert_eq!(Answer::from_may_contain(true), Answer::MayContain);
    }
}
