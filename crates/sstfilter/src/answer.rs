//! What a filter block answers about a prefix or a range: "absent", "may contain", or that it cannot tell and
//! why ([`Unfiltered`], which a store may count).

use core::fmt;

/// What a filter block says about a prefix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PrefixAnswer {
    /// No key with the prefix was added: skip the table.
    Absent,
    /// A key with the prefix may have been added.
    MayContain,
    /// The block cannot answer (read the table), and why: a caller may count these.
    Unfiltered(Unfiltered),
}

impl PrefixAnswer {
    /// Whether the table must be read: `false` only for [`Absent`](Self::Absent).
    #[must_use]
    pub const fn may_contain(&self) -> bool {
        !matches!(self, PrefixAnswer::Absent)
    }
}

/// Why a filter block cannot answer a prefix or range question.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Unfiltered {
    /// The block holds no prefixes (built without an extractor, or before prefix filters existed).
    NoPrefixes,
    /// The block was built with another extractor than the question's.
    OtherExtractor,
    /// The keys the scan covers do not share one stored prefix (see [`PrefixProbe::for_scan`]).
    ScanNotDetermined,
    /// The block is a point filter, not a Range filter: it answers a range only when the range is one key.
    NoRangeFilter,
    /// The range covers more runs of the Range filter's maximum range length than a question checks (16): the
    /// filter's bound would be weak anyway.
    RangeTooWide,
}

impl fmt::Display for Unfiltered {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Unfiltered::NoPrefixes => "the filter holds no prefixes",
            Unfiltered::OtherExtractor => "the filter was built with another prefix extractor",
            Unfiltered::ScanNotDetermined => "the scan does not determine one stored prefix",
            Unfiltered::NoRangeFilter => "the filter is a point filter, not a range filter",
            Unfiltered::RangeTooWide => "the range is wider than the range filter checks",
        })
    }
}

/// What a filter block says about a key range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RangeAnswer {
    /// No key lies in the range: skip the table.
    Absent,
    /// A key may lie in the range.
    MayContain,
    /// The block cannot answer (read the table), and why: a caller may count these.
    Unfiltered(Unfiltered),
}

impl RangeAnswer {
    /// Whether the table must be read: `false` only for [`Absent`](Self::Absent).
    #[must_use]
    pub const fn may_contain(&self) -> bool {
        !matches!(self, RangeAnswer::Absent)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_absent_skips_the_table() {
        assert!(PrefixAnswer::MayContain.may_contain());
        assert!(PrefixAnswer::Unfiltered(Unfiltered::NoPrefixes).may_contain());
        assert!(!PrefixAnswer::Absent.may_contain());
        assert!(RangeAnswer::Unfiltered(Unfiltered::RangeTooWide).may_contain());
        assert!(!RangeAnswer::Absent.may_contain());
    }
}
