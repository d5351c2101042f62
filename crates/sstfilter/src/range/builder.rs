//! The Range filter's builder: takes a table's keys in sorted order, finds their common prefix as it goes, and
//! projects each key once (FORMAT.md 4.5).

use crate::error::{Error, Result};
use crate::format::{TRAILER_LEN, Trailer};
use crate::kind::range::{self, projection::suffix_value};
use crate::policy::RangePolicy;
use crate::tag::FilterKind;

/// Builds a Range filter block from a table's keys, given in sorted order (FORMAT.md 4.5).
///
/// The block stores a prefix every key shares and projects each key to the 8 bytes after it. The builder takes the
/// keys' common prefix, cut short when fewer than 8 bytes follow it in the longest key, so that those 8 bytes end
/// with the keys' last byte: fixed-width integer ids keep their distances.
///
/// Each key costs 8 bytes until [`finish`](Self::finish) (its projection), plus a copy of the last key for the
/// order check. The common prefix can only shrink as sorted keys arrive; a key is projected after the prefix
/// known when it arrives, and re-projected once at the end if the prefix shrank after it (the bytes in between
/// are the first key's, which every later key shares).
#[derive(Debug, Clone)]
pub struct RangeFilterBuilder {
    policy: RangePolicy,
    /// The first key, up to [`Self::MAX_PREFIX_LEN`] bytes: the common prefix is a prefix of it.
    first: Vec<u8>,
    /// The last key added, for the order check.
    last: Vec<u8>,
    /// Length of the prefix common to every key so far.
    prefix_len: usize,
    /// Length of the longest key so far.
    max_len: usize,
    /// Each distinct key's projection after the prefix known when it was added.
    values: Vec<u64>,
    /// `(first value, prefix length)` for each run of values projected after the same prefix length.
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
            first: Vec::new(),
            last: Vec::new(),
            prefix_len: 0,
            max_len: 0,
            values: Vec::new(),
            runs: Vec::new(),
        }
    }

    /// Adds a key. Keys must come in non-decreasing byte order (a table's order); a key equal to the previous one
    /// is added once, and a key below it is refused with [`Error::KeysOutOfOrder`] and not added.
    pub fn add_key(&mut self, key: &[u8]) -> Result<()> {
        if self.values.is_empty() {
            self.first
                .extend_from_slice(key.get(..Self::MAX_PREFIX_LEN).unwrap_or(key));
            self.prefix_len = self.first.len();
            self.runs.push((0, self.prefix_len));
        } else {
            match key.cmp(self.last.as_slice()) {
                core::cmp::Ordering::Less => return Err(Error::KeysOutOfOrder),
                core::cmp::Ordering::Equal => return Ok(()),
                core::cmp::Ordering::Greater => {}
            }
            let shared = self
                .first
                .iter()
                .take(self.prefix_len)
                .zip(key)
                .take_while(|(a, b)| a == b)
                .count();
            if shared < self.prefix_len {
                self.prefix_len = shared;
                self.runs.push((self.values.len(), shared));
            }
        }
        self.max_len = self.max_len.max(key.len());
        self.values
            .push(suffix_value(key.get(self.prefix_len..).unwrap_or_default()));
        self.last.clear();
        self.last.extend_from_slice(key);
        Ok(())
    }

    /// Number of distinct keys added.
    #[must_use]
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// Whether no key was added.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// Bytes the builder holds: 8 per key, the first and last key.
    #[must_use]
    pub fn memory_bytes(&self) -> usize {
        self.values.capacity() * 8
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
    pub fn finish(self) -> Vec<u8> {
        let mut block = Vec::new();
        self.finish_into(&mut block);
        block
    }

    /// Like [`finish`](Self::finish), but appends the block to `out`. The block's checksum covers only the
    /// appended bytes.
    pub fn finish_into(self, out: &mut Vec<u8>) {
        let policy = self.policy;
        self.finish_in_universe(out, |n| policy.universe(n));
    }

    /// [`finish_into`](Self::finish_into) with the universe `universe(n)` for `n` distinct projected values (the
    /// policy's, or, to rebuild a block from its stored parameters, that block's).
    pub(crate) fn finish_in_universe(
        mut self,
        out: &mut Vec<u8>,
        universe: impl FnOnce(u64) -> u64,
    ) {
        // The stored prefix is the common prefix, shortened so that the 8 projected bytes end where the longest
        // key does: keys with fewer than 8 bytes after the common prefix (fixed-width ids) then project with their
        // last byte as the lowest, and consecutive ids stay consecutive, instead of being spread 2^(8·gap) apart
        // by the zero padding. Any prefix of the common prefix is a valid one (FORMAT.md 4.5).
        let prefix_len = self.prefix_len.min(self.max_len.saturating_sub(8));
        self.reproject(prefix_len);
        // Sorted keys project to non-decreasing values: equal neighbours are keys that differ past the projected
        // bytes, one value for the filter.
        self.values.dedup();
        let universe = universe(self.values.len() as u64);
        let start = out.len();
        out.reserve(self.policy.payload_len(self.values.len() as u64) + prefix_len + TRAILER_LEN);
        let prefix = self.first.get(..prefix_len).unwrap_or_default();
        let (params, num_codes) = range::build(
            prefix,
            &self.values,
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
    }

    /// Projects every value after `prefix_len` bytes, which is at most the prefix length of every run: a value
    /// taken after `p > prefix_len` bytes becomes the first key's bytes `prefix_len..p` followed by the value's
    /// first `8 − (p − prefix_len)` bytes.
    fn reproject(&mut self, prefix_len: usize) {
        let ends = self
            .runs
            .iter()
            .skip(1)
            .map(|&(start, _)| start)
            .chain([self.values.len()]);
        for (&(start, p), end) in self.runs.iter().zip(ends) {
            let shift = p.saturating_sub(prefix_len);
            if shift == 0 {
                continue;
            }
            let between = suffix_value(self.first.get(prefix_len..p).unwrap_or_default());
            for v in self.values.get_mut(start..end).into_iter().flatten() {
                *v = if shift >= 8 {
                    between
                } else {
                    between | (*v >> (8 * shift))
                };
            }
        }
    }
}
