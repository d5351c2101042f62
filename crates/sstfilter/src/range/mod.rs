//! Range filters on the table level: the builder that projects a table's sorted keys, and the answer a reader
//! gives about a range. The kind itself (projection, Grafite's hash, the Elias–Fano codes) is `kind::range`.
//!
//! ```
//! use std::ops::Bound::{Excluded, Included, Unbounded};
//! use sstfilter::{FilterBlock, RangeAnswer, RangeFilterBuilder, RangePolicy};
//!
//! // Order ids as 8 big-endian bytes after a table prefix: the projection keeps them as integers.
//! let key = |id: u64| [&b"orders/"[..], &id.to_be_bytes()].concat();
//! // Ranges of up to 2^16 ids, at most 1 % false positives for an empty one.
//! let mut builder = RangeFilterBuilder::new(RangePolicy::new(1 << 16, 0.01));
//! for id in (0..1000).map(|i| i * 1000) {
//!     builder.add_key(&key(id))?; // sorted, as a table's keys are
//! }
//! let filter = FilterBlock::open(builder.finish())?;
//! let scan = |lo: u64, hi: u64| filter.may_contain_range(Included(&key(lo)), Excluded(&key(hi)));
//! assert!(scan(41_000, 41_001).may_contain()); // holds order 41000
//! assert!(filter.may_contain(&key(41_000))); // point questions too
//! // Past the last key: absent for certain.
//! assert_eq!(filter.may_contain_range(Included(&key(999_001)), Unbounded), RangeAnswer::Absent);
//! // Empty short ranges: absent but for about 1 % of them.
//! let false_positives = (0..999).filter(|i| scan(i * 1000 + 1, i * 1000 + 1000).may_contain()).count();
//! assert!(false_positives < 40);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod builder;

use core::ops::Bound;

pub use builder::RangeFilterBuilder;

use crate::prefix::Unfiltered;

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

/// Whether no byte string lies between `lower` and `upper` for certain (lower above upper, or equal with one of
/// them excluded). Other empty ranges (`(a, a\0)`, both excluded) are not detected: the filter answers them.
pub(crate) fn is_empty(lower: Bound<&[u8]>, upper: Bound<&[u8]>) -> bool {
    match (lower, upper) {
        (Bound::Included(a), Bound::Included(b)) => a > b,
        (Bound::Included(a) | Bound::Excluded(a), Bound::Included(b) | Bound::Excluded(b)) => {
            a >= b
        }
        _ => false,
    }
}

/// The one key of a range `[a, a]`, which a point filter can answer.
pub(crate) fn single_key<'a>(lower: Bound<&'a [u8]>, upper: Bound<&'a [u8]>) -> Option<&'a [u8]> {
    match (lower, upper) {
        (Bound::Included(a), Bound::Included(b)) if a == b => Some(a),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Bound::{Excluded, Included, Unbounded};

    #[test]
    fn empty_ranges_are_the_ones_no_string_can_be_in() {
        let (a, b): (&[u8], &[u8]) = (b"a", b"b");
        assert!(is_empty(Included(b), Included(a)));
        assert!(!is_empty(Included(a), Included(a)));
        assert!(is_empty(Included(a), Excluded(a)));
        assert!(is_empty(Excluded(a), Included(a)));
        assert!(is_empty(Excluded(b), Excluded(a)));
        assert!(!is_empty(Excluded(a), Excluded(b)));
        assert!(!is_empty(Unbounded, Excluded(a)));
        assert!(!is_empty(Included(b), Unbounded));
        assert_eq!(single_key(Included(a), Included(a)), Some(a));
        assert_eq!(single_key(Included(a), Excluded(a)), None);
    }
}
