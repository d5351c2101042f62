//! The Range filter's builder: takes a table's keys in sorted order, finds their common prefix as it goes, and
//! projects each key once (FORMAT.md 4.5).

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
/// Each key costs 16 bytes until [`finish`](Self::finish) (its bytes after the prefix), plus a copy of the last
/// key for the order check. The common prefix can only shrink as sorted keys arrive; a key's bytes are taken after
/// the prefix known when it arrives, and shifted once at the end if the prefix shrank after it (the bytes in
/// between are the first key's, which every later key shares).
///
/// ```
/// use std::ops::Bound::{Excluded, Included, Unbounded};
/// use sstfilter::{FilterBlock, Answer, RangeFilterBuilder, RangePolicy};
///
/// // Order ids as 8 big-endian bytes after a table prefix: the projection keeps them as integers.
/// let key = |id: u64| [&b"orders/"[..], &id.to_be_bytes()].concat();
/// // Ranges of up to 2^16 ids, at most 1 % false positives for an empty one.
/// let mut builder = RangeFilterBuilder::new(RangePolicy::new(1 << 16, 0.01));
/// for id in (0..1000).map(|i| i * 1000) {
///     builder.add_key(&key(id))?; // sorted, as a table's keys are
/// }
/// let filter = FilterBlock::open(builder.finish())?;
/// let scan = |lo: u64, hi: u64| filter.may_contain_range(Included(&key(lo)), Excluded(&key(hi)));
/// assert!(scan(41_000, 41_001).may_contain()); // holds order 41000
/// assert!(filter.may_contain(&key(41_000))); // point questions too
/// // Past the last key: absent for certain.
/// assert_eq!(filter.may_contain_range(Included(&key(999_001)), Unbounded), Answer::Absent);
/// // Empty short ranges: absent but for about 1 % of them.
/// let false_positives = (0..999).filter(|i| scan(i * 1000 + 1, i * 1000 + 1000).may_contain()).count();
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
    /// The last key added, for the order check.
    last: Vec<u8>,
    /// Length of the prefix common to every key so far.
    prefix_len: usize,
    /// Length of the longest key so far.
    longest: usize,
    /// Each distinct key's first 16 bytes after the prefix known when it was added, zero-padded.
    windows: Vec<[u8; MAX_POSITIONS]>,
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
            last: Vec::new(),
            prefix_len: 0,
            longest: 0,
            windows: Vec::new(),
            runs: Vec::new(),
        }
    }

    /// Adds a key. Keys must come in non-decreasing byte order (a table's order); a key equal to the previous one
    /// is added once, and a key below it is refused with [`UsageError::KeysOutOfOrder`] and not added. A distinct
    /// key past the policy's [`max_keys`](RangePolicy::max_keys) is refused with [`UsageError::TooManyKeys`]: the
    /// filter could not keep its rate.
    pub fn add_key(&mut self, key: &[u8]) -> Result<(), UsageError> {
        use core::cmp::Ordering;
        let prefix = self.first.get(..self.prefix_len).unwrap_or_default();
        // Most keys keep the common prefix; then their order against the last key is that of their windows (zero
        // padding included: a key that ends sorts before one that goes on), unless the windows are equal.
        let keeps_prefix = key.starts_with(prefix);
        let mut taken = window(key.get(self.prefix_len..).unwrap_or_default());
        if let Some(&last) = self.windows.last() {
            #[expect(
                clippy::big_endian_bytes,
                reason = "a window read big-endian compares as its bytes do"
            )]
            let order = match u128::from_be_bytes(taken).cmp(&u128::from_be_bytes(last)) {
                Ordering::Equal => key.cmp(self.last.as_slice()),
                _ if !keeps_prefix => key.cmp(self.last.as_slice()),
                by_window => by_window,
            };
            match order {
                Ordering::Less => return Err(UsageError::KeysOutOfOrder),
                Ordering::Equal => return Ok(()),
                Ordering::Greater => {}
            }
        }
        let max = self.max_keys;
        if self.windows.len() as u64 >= max {
            return Err(UsageError::TooManyKeys {
                expected: max,
                found: max.saturating_add(1),
            });
        }
        if self.windows.is_empty() {
            self.first
                .extend_from_slice(key.get(..Self::MAX_PREFIX_LEN).unwrap_or(key));
            self.prefix_len = self.first.len();
            self.runs.push((0, self.prefix_len));
            taken = window(key.get(self.prefix_len..).unwrap_or_default());
        } else if !keeps_prefix {
            let shared = prefix.iter().zip(key).take_while(|(a, b)| a == b).count();
            self.prefix_len = shared;
            self.runs.push((self.windows.len(), shared));
            taken = window(key.get(shared..).unwrap_or_default());
        }
        self.windows.push(taken);
        self.longest = self.longest.max(key.len());
        self.last.clear();
        self.last.extend_from_slice(key);
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
        self.windows.len()
    }

    /// Whether no key was added.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.windows.is_empty()
    }

    /// Bytes the builder holds: 16 per key, the first and last key.
    #[must_use]
    pub fn memory_bytes(&self) -> usize {
        self.windows.capacity() * MAX_POSITIONS
            + self.first.capacity()
            + self.last.capacity()
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
        let (alphabets, weights) = projection::choose(&self.windows, longest);
        // Sorted keys project to non-decreasing values: equal neighbours are keys that differ past the projected
        // bytes, one value for the filter.
        let mut values = projection::values(&self.windows, &alphabets, &weights);
        values.dedup();
        let universe = universe(values.len() as u64);
        let start = out.len();
        out.reserve(
            self.policy.payload_len(values.len() as u64)
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
        let (params, num_codes) =
            range::build(&chosen, values, self.policy.range_log2(), universe, out);
        Trailer::append(
            out,
            start,
            FilterKind::Range,
            params.encode(),
            num_codes,
            None,
        );
        self.first.clear();
        self.last.clear();
        self.windows.clear();
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
            .chain([self.windows.len()]);
        for (&(start, p), end) in self.runs.iter().zip(ends) {
            let between = self.first.get(prefix_len..p).unwrap_or_default();
            if between.is_empty() {
                continue;
            }
            for w in self.windows.get_mut(start..end).into_iter().flatten() {
                let mut shifted = [0u8; MAX_POSITIONS];
                for (d, s) in shifted.iter_mut().zip(between.iter().chain(w.iter())) {
                    *d = *s;
                }
                *w = shifted;
            }
        }
    }
}

/// The first [`MAX_POSITIONS`] bytes of `bytes`, zero-padded.
fn window(bytes: &[u8]) -> [u8; MAX_POSITIONS] {
    let mut w = [0u8; MAX_POSITIONS];
    let len = bytes.len().min(MAX_POSITIONS);
    if let (Some(to), Some(from)) = (w.get_mut(..len), bytes.get(..len)) {
        to.copy_from_slice(from);
    }
    w
}
