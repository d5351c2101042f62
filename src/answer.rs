//! What a filter answers about a table, whatever the question (a key, a prefix, a range): "absent", or "may
//! contain" with the reason ([`Reason`]), which a store may count.

use core::fmt;

/// A filter's answer to "must the store read this table for what it asks?" (a key, a prefix, a range).
///
/// There are two answers, and only [`Absent`](Self::Absent) skips the read: a store tests `answer ==
/// Answer::Absent` (or [`must_read`](Self::must_read)), and every other answer, a filter's match or a question no
/// usable filter could answer, reads the table.
///
/// ```
/// use sstfilter::{Answer, Reason};
///
/// let unusable = Answer::MayContain(Reason::Unusable); // e.g. a filter block that failed its checksum
/// assert!(unusable.must_read());
/// assert!(unusable != Answer::Absent);
/// assert!(!Answer::Absent.must_read());
/// ```
///
/// "May contain" is not one answer but one per reason, so a test that would skip the tables whose filter could not
/// be used does not compile:
///
/// ```compile_fail
/// # use sstfilter::{Answer, Reason};
/// let answer = Answer::MayContain(Reason::Unusable);
/// if answer == Answer::MayContain {} // error: `MayContain` needs its reason
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[must_use]
pub enum Answer {
    /// Nothing asked for was added: skip the table.
    Absent,
    /// Read the table: something asked for may have been added, or no filter could tell, and why.
    MayContain(Reason),
}

impl Answer {
    /// Whether the table must be read: `false` only for [`Absent`](Self::Absent).
    #[must_use]
    #[inline]
    pub const fn must_read(&self) -> bool {
        !matches!(self, Answer::Absent)
    }

    /// A filter's own answer: `Absent` for `false`, a match for `true`.
    #[inline]
    pub(crate) const fn from_may_contain(may_contain: bool) -> Self {
        if may_contain {
            Answer::MayContain(Reason::Matched)
        } else {
            Answer::Absent
        }
    }
}

/// Why a table must be read: a filter matched, or no usable filter could answer the question (every reason but
/// [`Matched`](Self::Matched)), which a store may count apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Reason {
    /// A filter matched what was asked: it was added, or this is one of the filter's false positives.
    Matched,
    /// The filter holds no prefixes (built without an extractor, or before prefix filters existed).
    NoPrefixes,
    /// The filter was built with another extractor than the question's.
    OtherExtractor,
    /// The keys the scan covers do not share one stored prefix: the scan is shorter than the prefixes the
    /// extractor takes, or outside its domain.
    ScanNotDetermined,
    /// The filter holds prefixes only, and the key is outside the extractor's domain (or the reader was given
    /// no extractor to ask by the key's prefix): no whole key was added to be asked about.
    NoWholeKeys,
    /// The table has a point filter but no range filter: a range is answered only when it is one key.
    NoRangeFilter,
    /// The table has no filter that answers this question.
    NoFilter,
    /// The question spans more partitions of a partitioned filter than one question loads.
    TooManyPartitions,
    /// The filter, or the partition the question needs, could not be used: it failed to load, to open or to
    /// verify, or is not the block it should be. Counted as a decode error.
    Unusable,
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Reason::Matched => "the filter matched",
            Reason::NoPrefixes => "the filter holds no prefixes",
            Reason::OtherExtractor => "the filter was built with another prefix extractor",
            Reason::ScanNotDetermined => "the scan does not determine one stored prefix",
            Reason::NoWholeKeys => "the filter holds prefixes only, and the key has none",
            Reason::NoRangeFilter => "the table has no range filter",
            Reason::NoFilter => "the table has no filter for this question",
            Reason::TooManyPartitions => "the question spans more filter partitions than it loads",
            Reason::Unusable => "the filter could not be used (load, open or verify failed)",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_absent_skips_the_table() {
        assert!(Answer::MayContain(Reason::Matched).must_read());
        assert!(Answer::MayContain(Reason::NoPrefixes).must_read());
        assert!(Answer::MayContain(Reason::Unusable).must_read());
        assert!(!Answer::Absent.must_read());
        assert_eq!(Answer::from_may_contain(false), Answer::Absent);
        assert_eq!(
            Answer::from_may_contain(true),
            Answer::MayContain(Reason::Matched)
        );
    }
}
