//! The Range filter's builder: takes a table's keys in sorted order, finds their common prefix as it goes, and
//! projects each key once (FORMAT.md 4.5).

use core::cmp::Ordering;

use super::policy::RangePolicy;
use super::projection::{self, MAX_POSITIONS};
use super::{self as range, Chosen};
use crate::error::UsageError;
use crate::format::{TRAILER_LEN, Trailer};
use crate::tag::FilterKind;

/// Builds a Range filter block from a table's keys, given in sorted order (FORMAT.md 4.5).
///
/// The block stores the prefix every key shares and projects the bytes after it (up to 16) in a mixed radix of
/// the byte values that occur at each position (FORMAT.md 4.5), which the builder learns from all the keys.
///
/// Each key costs 16 bytes until [`finish`](Self::finish) (its bytes after the prefix), which then serve as the
/// buffers the filter is computed in; the order check keeps the last key's bytes past those 16, if it has any. The
/// common prefix can only shrink as sorted keys arrive; a key's bytes are taken after the prefix known when it
/// arrives, and shifted once at the end if the prefix shrank after it (the bytes in between are the first key's,
/// which every later key shares).
///
/// ```
/// use std::ops::Bound::{Excluded, Included, Unbounded};
/// use sstfilter::{FilterBlock, Answer, RangeFilterBuilder, RangePolicy};
///
/// // Order ids as 8 big-endian bytes after a table prefix: the projection keeps them as integers.
/// let key = |id: u64| [&b"orders/"[..], &id.to_be_bytes()].concat();
/// // Ranges of up to 2^16 ids, at most 1 % false positives for an empty one.
/// let mut builder = RangeFilterBuilder::new(RangePolicy::new(1 << 16, 0.01)?);
/// for id in (0..1000).map(|i| i * 1000) {
///     builder.add_key(&key(id))?; // sorted, as a table's keys are
/// }
/// let filter = FilterBlock::open(builder.finish())?;
/// let scan = |lo: u64, hi: u64| filter.may_contain_range(Included(&key(lo)), Excluded(&key(hi)));
/// assert!(scan(41_000, 41_001).must_read()); // holds order 41000
/// assert!(filter.may_contain(&key(41_000))); // point questions too
/// // Past the last key: absent for certain.
/// assert_eq!(filter.may_contain_range(Included(&key(999_001)), Unbounded), Answer::Absent);
/// // Empty short ranges: absent but for about 1 % of them.
/// let false_positives = (0..999).filter(|i| scan(i * 1000 + 1, i * 1000 + 1000).must_read()).count();
/// assert!(false_positives < 40);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct RangeFilterBuilder {
    policy: RangePolicy,
    /// The policy's [`max_keys`](RangePolicy::max_keys), computed once.
    max_keys: u64,
    /// The first key, up to [`Self::MAX_PREFIX_LEN`] bytes: the common prefix is a prefix of it.
    first: Vec<u8>,
    /// Length of the prefix common to every key so far.
    prefix_len: usize,
    /// Length of the longest key so far.
    longest: usize,
    /// Each distinct key's window: its first 16 bytes after the prefix known when it was added, zero-padded, read
    /// as a big-endian u128, in two words (high, low). At the end they become the projected values and the sort's
    /// second buffer.
    words: Vec<u64>,
    /// The last key's length after the prefix.
    last_len: usize,
    /// The last key's bytes past its window (after the prefix and 16 bytes): for the order check of a key with the
    /// same window.
    last_tail: Vec<u8>,
    /// `(first window, prefix length)` for each run of windows taken after the same prefix length.
    runs: Vec<(usize, usize)>,
}

impl RangeFilterBuilder {
    /// The longest common prefix a block stores (the parameter is a u16). Keys sharing a longer one project as if
    /// it were this long: the 8 projected bytes are then part of the shared prefix, equal for every key, and the
    /// filter answers "may contain" for any range that reaches them.
    pub const MAX_PREFIX_LEN: usize = u16::MAX as usize;

    /// A builder sizing its filter with `policy`.
    #[must_use]
    pub fn new(policy: RangePolicy) -> Self {
        RangeFilterBuilder {
            policy,
            max_keys: policy.max_keys(),
            first: Vec::new(),
            prefix_len: 0,
            longest: 0,
            words: Vec::new(),
            last_len: 0,
            last_tail: Vec::new(),
            runs: Vec::new(),
        }
    }

    /// Adds a key. Keys must come in non-decreasing byte order (a table's order); a key equal to the previous one
    /// is added once, and a key below it is refused with [`UsageError::KeysOutOfOrder`] and not added. A distinct
    /// key past the policy's [`max_keys`](RangePolicy::max_keys) is refused with [`UsageError::TooManyKeys`]: the
    /// filter could not keep its rate.
    // Inlined into the caller's loop (the first key and a shortening prefix are out of line): a call would save and
    // restore a dozen registers around a hundred instructions.
    #[inline]
    pub fn add_key(&mut self, key: &[u8]) -> Result<(), UsageError> {
        let prefix = self.first.get(..self.prefix_len).unwrap_or_default();
        // Without a call to compare no bytes: keys of fixed width often share none.
        let keeps_prefix = prefix.is_empty() || key.starts_with(prefix);
        let (Some(&[high, low]), true) = (self.words.last_chunk::<2>(), keeps_prefix) else {
            return self.add_first_or_shortening(key);
        };
        let rest = key.get(self.prefix_len..).unwrap_or_default();
        let taken = window(rest);
        // Both keys are the prefix and then their rests: the windows (zero padding included) order them, unless
        // they are equal; then a rest that fits in its window is the other's prefix, or both go on.
        let order = taken
            .cmp(&(u128::from(high) << 64 | u128::from(low)))
            .then_with(|| {
                if rest.len() <= MAX_POSITIONS || self.last_len <= MAX_POSITIONS {
                    rest.len().cmp(&self.last_len)
                } else {
                    rest.get(MAX_POSITIONS..).cmp(&Some(&self.last_tail[..]))
                }
            });
        match order {
            Ordering::Less => Err(UsageError::KeysOutOfOrder),
            Ordering::Equal => Ok(()),
            Ordering::Greater => self.push(key, rest, taken),
        }
    }

    /// [`add_key`](Self::add_key) for the first key, which sets the prefix, and for a key that shortens it: out of
    /// the path of the other keys, whose code stays small.
    #[cold]
    #[inline(never)]
    fn add_first_or_shortening(&mut self, key: &[u8]) -> Result<(), UsageError> {
        let prefix = self.first.get(..self.prefix_len).unwrap_or_default();
        if self.words.is_empty() {
            self.check_room()?;
            self.first
                .extend_from_slice(key.get(..Self::MAX_PREFIX_LEN).unwrap_or(key));
            self.prefix_len = self.first.len();
            self.runs.push((0, self.prefix_len));
        } else {
            // The last key starts with the prefix and this one does not: they differ within it, or this one ends
            // inside it.
            if key.cmp(prefix) == Ordering::Less {
                return Err(UsageError::KeysOutOfOrder);
            }
            self.check_room()?;
            let shared = prefix.iter().zip(key).take_while(|(a, b)| a == b).count();
            self.prefix_len = shared;
            self.runs.push((self.len(), shared));
        }
        let rest = key.get(self.prefix_len..).unwrap_or_default();
        self.push(key, rest, window(rest))
    }

    /// Adds a key in order, whose bytes after the prefix are `rest` and window `taken`, if the policy has room.
    #[inline(always)]
    fn push(&mut self, key: &[u8], rest: &[u8], taken: u128) -> Result<(), UsageError> {
        self.check_room()?;
        self.words.extend([(taken >> 64) as u64, taken as u64]);
        self.longest = self.longest.max(key.len());
        self.last_len = rest.len();
        self.last_tail.clear();
        if let Some(tail) = rest.get(MAX_POSITIONS..) {
            self.last_tail.extend_from_slice(tail);
        }
        Ok(())
    }

    /// Refuses a key past the policy's [`max_keys`](RangePolicy::max_keys).
    #[inline(always)]
    fn check_room(&self) -> Result<(), UsageError> {
        let max = self.max_keys;
        if self.len() as u64 >= max {
            return Err(UsageError::TooManyKeys {
                expected: max,
                found: max.saturating_add(1),
            });
        }
        Ok(())
    }

    /// The builder without its key limit, to rebuild blocks a pre-release writer made with a saturated universe.
    #[cfg(test)]
    pub(crate) fn without_key_limit(mut self) -> Self {
        self.max_keys = u64::MAX;
        self
    }

    /// Number of distinct keys added.
    #[must_use]
    pub fn len(&self) -> usize {
        self.words.len() / 2
    }

    /// Whether no key was added.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.words.is_empty()
    }

    /// Bytes the builder holds: 16 per key, the first key, the last key's bytes past its window.
    #[must_use]
    pub fn memory_bytes(&self) -> usize {
        self.words.capacity() * 8
            + self.first.capacity()
            + self.last_tail.capacity()
            + self.runs.capacity() * 16
    }

    /// The policy this builder sizes its filter with.
    #[must_use]
    pub fn policy(&self) -> &RangePolicy {
        &self.policy
    }

    /// Builds the filter and returns the block's bytes: the payload followed by the trailer.
    #[must_use]
    pub fn finish(mut self) -> Vec<u8> {
        self.finish_and_reset()
    }

    /// Builds the block of the keys added since the last reset (as [`finish`](Self::finish)) and empties the
    /// builder for the next table, keeping its memory.
    #[must_use]
    pub fn finish_and_reset(&mut self) -> Vec<u8> {
        let mut block = Vec::new();
        self.finish_into(&mut block);
        block
    }

    /// Like [`finish_and_reset`](Self::finish_and_reset), but appends the block to `out`. The block's checksum
    /// covers only the appended bytes.
    pub fn finish_into(&mut self, out: &mut Vec<u8>) {
        let policy = self.policy;
        self.finish_in_universe(out, |n| policy.universe(n));
    }

    /// [`finish_into`](Self::finish_into) with the universe `universe(n)` for `n` distinct projected values (the
    /// policy's, or, to rebuild a block from its stored parameters, that block's).
    pub(crate) fn finish_in_universe(
        &mut self,
        out: &mut Vec<u8>,
        universe: impl FnOnce(u64) -> u64,
    ) {
        let prefix_len = self.prefix_len;
        self.shift_windows(prefix_len);
        // Every key is at least as long as the common prefix.
        let longest = self.longest - prefix_len;
        let (alphabets, weights) = projection::choose(
            &self.words,
            longest,
            self.policy.max_range_len(),
            self.policy.fpr(),
        );
        // The windows' first half becomes their values, its second half the sort's second buffer.
        let distinct = projection::project_in_place(&mut self.words, &alphabets, &weights);
        let universe = universe(distinct as u64);
        let start = out.len();
        out.reserve(
            self.policy.payload_len(distinct as u64)
                + 44 * weights.len()
                + prefix_len
                + TRAILER_LEN,
        );
        let chosen = Chosen {
            prefix: self.first.get(..prefix_len).unwrap_or_default(),
            longest,
            alphabets: &alphabets,
            weights: &weights,
        };
        let keys = self.len();
        let (values, scratch) = self.words.split_at_mut(keys);
        let (params, num_codes) = range::build(
            &chosen,
            values,
            scratch,
            self.policy.range_log2(),
            universe,
            out,
        );
        Trailer::append(
            out,
            start,
            FilterKind::Range,
            params.encode(),
            num_codes,
            None,
        );
        self.first.clear();
        self.words.clear();
        self.last_len = 0;
        self.last_tail.clear();
        self.runs.clear();
        self.prefix_len = 0;
        self.longest = 0;
    }

    /// Takes every window after `prefix_len` bytes, which is at most the prefix length of every run: a window taken
    /// after `p > prefix_len` bytes becomes the first key's bytes `prefix_len..p` followed by the window's first
    /// bytes.
    fn shift_windows(&mut self, prefix_len: usize) {
        let ends = self
            .runs
            .iter()
            .skip(1)
            .map(|&(start, _)| start)
            .chain([self.len()]);
        for (&(start, p), end) in self.runs.iter().zip(ends) {
            let between = self.first.get(prefix_len..p).unwrap_or_default();
            if between.is_empty() {
                continue;
            }
            let head = window(between);
            // NOTE: a shift by 128 bits or more keeps only the first key's bytes.
            let shift = 8 * between.len().min(MAX_POSITIONS) as u32;
            let words = self.words.get_mut(2 * start..2 * end).unwrap_or_default();
            for [high, low] in words.as_chunks_mut::<2>().0 {
                let w = u128::from(*high) << 64 | u128::from(*low);
                let shifted = head | w.checked_shr(shift).unwrap_or(0);
                (*high, *low) = ((shifted >> 64) as u64, shifted as u64);
            }
        }
    }
}

/// The first [`MAX_POSITIONS`] bytes of `bytes`, zero-padded, read as a big-endian number: the key's window.
#[expect(
    clippy::big_endian_bytes,
    reason = "a window read big-endian compares as its bytes do"
)]
#[inline]
fn window(bytes: &[u8]) -> u128 {
    // Most keys are 8 bytes or more after the prefix: whole words, without a copy.
    let word = |b: &[u8]| match b.first_chunk::<8>() {
        Some(&w) => u64::from_be_bytes(w),
        None => b
            .iter()
            .zip((0..8).rev())
            .fold(0, |w, (&x, at)| w | u64::from(x) << (8 * at)),
    };
    u128::from(word(bytes)) << 64 | u128::from(word(bytes.get(8..).unwrap_or_default()))
}
