//! Elias–Fano coding of a sorted set of distinct integers below a universe `r` (Elias 1974, Fano 1971), with the
//! one query a range filter needs: is any value in `[lo, hi]`?
//!
//! Each value keeps its low `l = ⌊log2(r / n)⌋` bits verbatim in the *lower* array and its high part `v >> l` in
//! unary in the *upper* bit vector: value `i` (in increasing order) sets bit `(v_i >> l) + i`, so bucket `b` (the
//! values whose high part is `b`) is a run of one-bits ended by a zero-bit, the `b`-th zero. That is
//! `n · l + n + ⌈r / 2^l⌉ ≤ n · (log2(r / n) + 2)` bits, within 2 bits per value of the information-theoretic
//! minimum. To find bucket `b` without scanning from the start, every 256th zero is sampled: a u32 holding the
//! number of values before it (its position less its rank), which is half the room of its position as a u64 and
//! limits a sequence to `2^32 − 1` values. Between two samples lie 256 zeros and any number of ones: crowded
//! buckets (consecutive keys fill buckets of thousands of values) would make that stretch thousands of words long,
//! so every 1024 bits the count of zeros before is kept too (a u16, modulo `2^16`: the samples around it give the
//! rest), and a long stretch is searched by those counts.
//!
//! Every read is bounds-checked: on bytes that are not a sequence this module wrote (a corrupt block whose
//! checksum was not verified) a query may answer wrongly, but it never panics and always terminates. When a read
//! falls outside the arrays the query answers "may contain".

use crate::cpu::with_popcnt;
use crate::prefetch::prefetch;

/// One in this many zero-bits of the upper vector is sampled.
pub(crate) const ZEROS_PER_SAMPLE: u64 = 256;

/// The most values a sequence holds: a sample counts values in a u32.
pub(crate) const MAX_LEN: u64 = u32::MAX as u64;

/// Bytes of one sample.
const SAMPLE_LEN: u64 = 4;

/// Bits of the upper vector a count of zeros covers (16 words).
const COUNTED_BITS: u64 = 1024;

/// A stretch between two samples longer than this many bits is searched by the counts of zeros; a shorter one is
/// walked word by word (up to 256 zeros, a few words where buckets hold one or two values).
const CROWDED_BITS: u64 = 8 * COUNTED_BITS;

/// Words of ones a crowded bucket is walked for past its first word (a line of eight at a compare), before its end is
/// searched among the counts of zeros: a long stretch's worth, as many as cost about what that search costs.
const WALKED_WORDS: usize = (CROWDED_BITS / 64) as usize;

/// The most counts of zeros a search of a crowded bucket's end steps over at once: a count is kept modulo 2^16, and
/// `2^16 / COUNTED_BITS` counts could hold 2^16 zeros between them, which would leave it where it was.
const MAX_COUNT_STEP: u64 = (1 << 16) / COUNTED_BITS / 2;

/// The most values of a bucket read one by one; a bucket holding more is searched from where its low bits put them.
const LINEAR_STEPS: u64 = 4;

/// The most values of a bucket searched as if spread over all its low bits, without reading its ends first: their
/// low bits (`128 · l` bits, 8 lines' worth where `l ≤ 32`) are fetched at once, so a guess off by many values
/// costs reads of lines already on their way, where reading the ends first waits for a line before the guess can
/// be made. A cluster's buckets of 65 to 128 values went the ends' way at a bound of 64, the slower one
/// (BENCHMARKS.md, "Range filters").
const SPREAD_VALUES: u64 = 128;

/// The sizes of an Elias–Fano sequence: what a writer lays out and a reader validates against the payload length.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Layout {
    /// Number of values `n` (at least 1).
    pub(crate) len: u64,
    /// Low bits kept per value, `l`.
    pub(crate) lower_bits: u32,
    /// Number of buckets, `⌊(r − 1) / 2^l⌋ + 1`: the zero-bits of the upper vector.
    pub(crate) buckets: u64,
    /// 64-bit words of the lower array, `⌈n · l / 64⌉`.
    pub(crate) lower_words: u64,
    /// 64-bit words of the upper vector, `⌈(n + buckets) / 64⌉`.
    pub(crate) upper_words: u64,
    /// Samples (u32 each), `⌈buckets / 256⌉`. (Before them, after the upper words, one count of zeros (u16) per
    /// [`COUNTED_BITS`] of the upper vector: `⌈upper_words / 16⌉`.)
    pub(crate) samples: u64,
    /// The mean number of values a bucket, `n / B`, in 32.32 fixed point: a query's estimates multiply by it where
    /// a division would wait a dozen cycles on the way to a prefetch.
    values_per_bucket: u64,
    /// Bytes of the arrays together: where every question finds what follows them in the payload, kept
    /// here so that a question does not redo the checked arithmetic of it.
    bytes: u64,
}

impl Layout {
    /// The layout of `len ≥ 1` distinct values below `universe ≥ len`, with the canonical `l`; `None` if `len` is 0,
    /// exceeds the universe or [`MAX_LEN`].
    pub(crate) fn new(len: u64, universe: u64) -> Option<Layout> {
        if len == 0 || len > universe || len > MAX_LEN {
            return None;
        }
        let lower_bits = lower_bits(len, universe);
        let buckets = ((universe - 1) >> lower_bits) + 1;
        // In 128 bits: n · l and n + buckets may pass 2^64.
        let lower_words = (u128::from(len) * u128::from(lower_bits)).div_ceil(64);
        let upper_words = (u128::from(len) + u128::from(buckets)).div_ceil(64);
        let samples = buckets.div_ceil(ZEROS_PER_SAMPLE);
        let counts = upper_words.div_ceil(u128::from(COUNTED_BITS / 64));
        let samples_at = 8 * (lower_words + upper_words) + 2 * counts;
        let bytes = samples_at + u128::from(samples) * u128::from(SAMPLE_LEN);
        Some(Layout {
            len,
            lower_bits,
            buckets,
            lower_words: u64::try_from(lower_words).ok()?,
            upper_words: u64::try_from(upper_words).ok()?,
            samples,
            // `len < 2^32`, so the shift fits.
            values_per_bucket: (len << 32) / buckets,
            bytes: u64::try_from(bytes).ok()?,
        })
    }

    /// Bytes of the arrays together (below 2^62 for every layout `new` makes: `len ≤ 2^32` and `buckets < 2^64`).
    pub(crate) const fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Where the samples start: after the words and the counts of zeros, which take the bytes between.
    const fn samples_at(&self) -> u64 {
        self.bytes - SAMPLE_LEN * self.samples
    }

    /// Counts of zeros: one per [`COUNTED_BITS`] of the upper vector.
    const fn counts(&self) -> u64 {
        self.upper_words.div_ceil(COUNTED_BITS / 64)
    }
}

/// `l = ⌊log2(universe / len)⌋`: the most low bits such that `len · 2^l ≤ universe`. Requires
/// `1 ≤ len ≤ universe`.
pub(crate) const fn lower_bits(len: u64, universe: u64) -> u32 {
    63 - (universe / len).leading_zeros()
}

/// Appends the sequence of `values` (strictly increasing, all below the universe `layout` was made for, and
/// exactly `layout.len` of them, at most [`MAX_LEN`]) to `out`: the lower words, the upper words, the counts of
/// zeros, the samples, all little-endian.
pub(crate) fn encode(values: &[u64], layout: &Layout, out: &mut Vec<u8>) {
    let l = layout.lower_bits;
    let start = out.len();
    // The arrays are set in place, in the output: no buffer of their own to allocate, fault in and copy.
    let (lower_len, upper_len) = (
        8 * layout.lower_words as usize,
        8 * layout.upper_words as usize,
    );
    out.resize(start + lower_len + upper_len, 0);
    let arrays = out.get_mut(start..).unwrap_or_default();
    let (lower, upper) = arrays.split_at_mut(lower_len.min(arrays.len()));
    let (lower, upper) = (lower.as_chunks_mut::<8>().0, upper.as_chunks_mut::<8>().0);
    // Both arrays fill in order (the low bits value after value, the upper bits at increasing positions): each
    // word is assembled in a register and stored once.
    let mut lower_words = lower.iter_mut();
    let (mut low_word, mut filled) = (0u64, 0u32);
    let (mut upper_word, mut upper_at) = (0u64, 0u64);
    for (i, &v) in values.iter().enumerate() {
        if l > 0 {
            let low = v & ((1u64 << l) - 1);
            low_word |= low << filled;
            filled += l;
            if filled >= 64 {
                if let Some(w) = lower_words.next() {
                    *w = low_word.to_le_bytes();
                }
                filled -= 64;
                // The bits of `low` that did not fit (none when `filled` is 0).
                low_word = low.checked_shr(l - filled).unwrap_or(0);
            }
        }
        let bit = (v >> l) + i as u64;
        if bit / 64 != upper_at {
            if let Some(w) = upper.get_mut(upper_at as usize) {
                *w = upper_word.to_le_bytes();
            }
            (upper_word, upper_at) = (0, bit / 64);
        }
        upper_word |= 1 << (bit % 64);
    }
    if let (true, Some(w)) = (filled > 0, lower_words.next()) {
        *w = low_word.to_le_bytes();
    }
    if let Some(w) = upper.get_mut(upper_at as usize) {
        *w = upper_word.to_le_bytes();
    }
    let upper_bits = layout.len + layout.buckets;
    let mut samples = Vec::with_capacity(layout.samples as usize);
    let mut counts = Vec::with_capacity(layout.counts() as usize);
    let mut zeros_before = 0u64;
    let mut next_sampled = 0u64;
    for (index, &w) in upper.iter().enumerate() {
        if (index as u64).is_multiple_of(COUNTED_BITS / 64) {
            counts.push(zeros_before as u16); // NOTE: modulo 2^16, as stored
        }
        let w = u64::from_le_bytes(w);
        let start = index as u64 * 64;
        let valid = if upper_bits - start >= 64 {
            u64::MAX
        } else {
            (1u64 << (upper_bits - start)) - 1
        };
        let zeros = !w & valid;
        let count = u64::from(zeros.count_ones());
        while next_sampled < zeros_before + count {
            let rank = (next_sampled - zeros_before) as u32; // NOTE: below count ≤ 64
            let position = start + u64::from(select_in_word(zeros, rank));
            // The values before the zero: at most `layout.len ≤ MAX_LEN`.
            samples.push((position - next_sampled) as u32);
            next_sampled += ZEROS_PER_SAMPLE;
        }
        zeros_before += count;
    }
    debug_assert_eq!(samples.len() as u64, layout.samples);
    debug_assert_eq!(counts.len() as u64, layout.counts());
    for c in &counts {
        out.extend_from_slice(&c.to_le_bytes());
    }
    for s in &samples {
        out.extend_from_slice(&s.to_le_bytes());
    }
}

/// An encoded sequence over a payload's bytes: the three arrays of [`encode`], in place, in words.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Sequence<'a> {
    layout: &'a Layout,
    lower: &'a [[u8; 8]],
    upper: &'a [[u8; 8]],
    samples: &'a [[u8; SAMPLE_LEN as usize]],
    /// The bytes the arrays are in: the counts of zeros (after the upper words), read only for long stretches, are
    /// cut from them there.
    bytes: &'a [u8],
}

impl<'a> Sequence<'a> {
    /// The sequence laid out as `layout` at the start of `bytes` (short arrays, if `bytes` is too short: reads
    /// past them answer "may contain").
    #[inline]
    pub(crate) fn new(layout: &'a Layout, bytes: &'a [u8]) -> Self {
        let lower_len = usize::try_from(layout.lower_words).unwrap_or(usize::MAX);
        let upper_len = usize::try_from(layout.upper_words).unwrap_or(usize::MAX);
        let (words, _) = bytes.as_chunks::<8>();
        let (lower, rest) = words.split_at(lower_len.min(words.len()));
        let (upper, _) = rest.split_at(upper_len.min(rest.len()));
        // The samples end the arrays (if the bytes hold them all).
        let samples_at = usize::try_from(layout.samples_at()).unwrap_or(usize::MAX);
        let (samples, _) = bytes.get(samples_at..).unwrap_or_default().as_chunks();
        Sequence {
            layout,
            lower,
            upper,
            samples,
            bytes,
        }
    }

    /// Whether any value lies in `[lo, hi]` (requires `lo ≤ hi`). Answers `true` wherever the bytes are not a
    /// sequence [`encode`] wrote.
    #[inline]
    pub(crate) fn any_in(&self, lo: u64, hi: u64) -> bool {
        self.successor_at_most(lo, hi).unwrap_or(true)
    }

    /// Starts fetching the lines [`any_in`](Self::any_in) will read for a `lo` (a hint: nothing if the bytes are
    /// inconsistent).
    #[inline]
    pub(crate) fn prefetch(&self, lo: u64) {
        // The bucket before `lo`'s ends where its first value's bit starts: the sample below that zero-bit.
        if let Some(rank) = (lo >> self.layout.lower_bits).checked_sub(1) {
            let _ = self.sampled(rank);
        }
    }

    /// Whether the smallest value `≥ lo` exists and is `≤ hi`; `None` where the bytes are inconsistent. Compiled
    /// twice: with `popcnt` for CPUs that have it (the select counts bits), and as the target is.
    #[inline]
    fn successor_at_most(&self, lo: u64, hi: u64) -> Option<bool> {
        with_popcnt(
            #[inline(always)]
            || self.successor_in(lo, hi),
        )
    }

    /// [`successor_at_most`](Self::successor_at_most), inlined into each of its two builds.
    #[inline(always)]
    fn successor_in(&self, lo: u64, hi: u64) -> Option<bool> {
        let l = self.layout.lower_bits;
        let bucket = lo >> l;
        // The first bit of `bucket`: just past the zero that ends the bucket before it.
        let mut pos = match bucket.checked_sub(1) {
            None => 0,
            // NOTE: a position is below `64 ·` the words of the upper vector
            Some(before) => self.select_zero(before)? + 1,
        };
        // Values before `pos`: bits before it less the zeros (one per earlier bucket).
        let mut index = pos.checked_sub(bucket)?;
        // In the bucket, the smallest value `≥ lo` is the first whose low bits are `≥ lo`'s: one by one when the bucket
        // holds a few (most hold one or two), else searched (clustered keys fill a bucket with hundreds).
        let low_lo = lo & ((1u64 << l) - 1); // NOTE: `l ≤ 63`
        // An empty bucket (about half of them) is told by its first bit, before counting.
        let count = match self.bit(pos)? {
            false => 0,
            true => self.ones_from(pos, bucket)?,
        };
        let end = index + count; // NOTE: both below the bits of the upper vector
        if count <= LINEAR_STEPS {
            let mut at = index;
            while at < end {
                let low = self.low(at)?;
                if low >= low_lo {
                    return Some((bucket << l | low) <= hi);
                }
                at += 1;
            }
        } else if let Some(at) = self.search_bucket(index, end, low_lo, high_in(bucket, hi, l))? {
            return Some((bucket << l | self.low(at)?) <= hi);
        }
        // The successor is in a later bucket, above `hi` if `hi` is in this one (as a range much shorter than a
        // bucket mostly is).
        if hi >> l == bucket {
            return Some(false);
        }
        pos = pos.checked_add(count)?;
        index = end;
        // `pos` ends `bucket`; the successor is the next value, in a later bucket, so above `lo`. It can be `≤ hi`
        // only if its high part is at most `hi >> l`, which puts its bit at most at `(hi >> l) + index`.
        let last = (hi >> l).checked_add(index)?;
        match self.next_one(pos + 1, last)? {
            None => Some(false),
            Some(at) => {
                let v = ((at - index) << l) | self.low(index)?;
                Some(v <= hi)
            }
        }
    }

    /// The first of a bucket's values `from..to` (more than [`LINEAR_STEPS`]) whose low bits are at least `low`, if
    /// any, or one read on the way whose low bits are from `low` to `high` (the question's answer is then known):
    /// from where `low` puts it among them. A bucket of up to [`SPREAD_VALUES`] is taken as spread over all the
    /// low bits; a larger one is first read at both ends, which places `low` outside it at once or interpolates
    /// between its ends (clustered keys often fill a part of a bucket only).
    fn search_bucket(&self, from: u64, to: u64, low: u64, high: u64) -> Option<Option<u64>> {
        let count = to - from;
        if count <= SPREAD_VALUES {
            self.prefetch_lows(from, to); // up to 8 lines: `128 · l ≤ 8 · 512` bits where `l ≤ 32`
            // NOTE: `low < 2^l`, so the share is below `count`; a product and a shift, not a division.
            let share = (u128::from(count) * u128::from(low)) >> self.layout.lower_bits;
            let guess = from + share as u64;
            let at = self.first_at_least(from, to, low, high, guess)?;
            return Some((at < to).then_some(at));
        }
        let (first, last) = (self.low(from)?, self.low(to - 1)?);
        if first >= low {
            return Some(Some(from));
        }
        if last < low {
            return Some(None);
        }
        // One of values `from + 1 .. to` is the answer.
        let guess = from + 1 + interpolate(count - 2, low - first, last - first);
        self.first_at_least(from + 1, to, low, high, guess)
            .map(Some)
    }

    /// The first of values `from..to` (increasing low bits) whose low bits are at least `low`, `to` if none is, found
    /// from `guess` (in `from..to`) by steps doubling away from it, then by halves: a guess off by `d` values costs
    /// about `2 · log2 d` reads. A value read on the way whose low bits are from `low` to `high` ends the search
    /// early (its index is returned): a question about a range holding many keys, as a range in a cluster does,
    /// needs one of them, not the first.
    fn first_at_least(&self, from: u64, to: u64, low: u64, high: u64, guess: u64) -> Option<u64> {
        // Values before `below` are under `low`; values from `above` on are not.
        let (mut below, mut above) = (from, to);
        let mut step = 1u64;
        let first = self.low(guess)?;
        if first < low {
            below = guess + 1;
            while below < above {
                let probe = below.saturating_add(step - 1).min(above - 1);
                let v = self.low(probe)?;
                if v >= low {
                    if v <= high {
                        return Some(probe);
                    }
                    above = probe;
                    break;
                }
                below = probe + 1;
                step = step.saturating_mul(2);
            }
        } else {
            if first <= high {
                return Some(guess);
            }
            above = guess;
            while below < above {
                let probe = above.saturating_sub(step).max(below);
                let v = self.low(probe)?;
                if v < low {
                    below = probe + 1;
                    break;
                }
                if v <= high {
                    return Some(probe);
                }
                above = probe;
                step = step.saturating_mul(2);
            }
        }
        while below < above {
            let mid = below + (above - below) / 2;
            let v = self.low(mid)?;
            if v < low {
                below = mid + 1;
            } else if v <= high {
                return Some(mid);
            } else {
                above = mid;
            }
        }
        Some(below)
    }

    /// The position of the sampled zero-bit at or below rank `rank`, with the lines the query reads after it started
    /// on their way.
    #[inline]
    fn sampled(&self, rank: u64) -> Option<u64> {
        let before = self.sample(rank / ZEROS_PER_SAMPLE)?;
        let start = before.checked_add(rank - rank % ZEROS_PER_SAMPLE)?;
        self.prefetch_near(start, before, rank % ZEROS_PER_SAMPLE);
        Some(start)
    }

    /// Starts fetching the lines a query will read after a sample: from the sampled zero-bit at `start` (with
    /// `before` values before it), the upper words up to about `zeros` zero-bits further, and the low bits of the
    /// values about there. Both are estimated with the mean number of values a bucket, `n / B`; a value's low bits
    /// are the read that waits longest (the lower array is the biggest), and without the estimate it could start
    /// only once the upper words are scanned. Off by a few values, the lines are still the right ones or
    /// neighbours; further off, a fetch is wasted, never an answer.
    #[inline]
    fn prefetch_near(&self, start: u64, before: u64, zeros: u64) {
        // No overflow: `zeros < 256`, and `values_per_bucket` is at most 2^32 (`2^l ≤ r / n` makes `B ≥ n`), so
        // `ones < 2^40`; `before` is a u32 and `l < 64`. (A position that wraps would only be a useless hint.)
        let ones = (zeros * self.layout.values_per_bucket) >> 32;
        let bit = |b: u64| usize::try_from(b / 8).unwrap_or(usize::MAX);
        prefetch(
            self.upper.as_flattened(),
            bit(start.wrapping_add(zeros + ones)),
        );
        // Low bits of the values about there, and three quarters of a line either side (the count of values between
        // the sample and the bucket strays from its mean by a few): three lines.
        let at = (before + ones) * u64::from(self.layout.lower_bits);
        prefetch(self.lower.as_flattened(), bit(at.saturating_sub(384)));
        prefetch(self.lower.as_flattened(), bit(at));
        prefetch(self.lower.as_flattened(), bit(at + 384));
    }

    /// Starts fetching the lines of the low bits of values `from..to` (a bucket about to be searched, whose reads
    /// would otherwise wait one after the other), up to 8 lines.
    #[inline]
    fn prefetch_lows(&self, from: u64, to: u64) {
        let l = u64::from(self.layout.lower_bits);
        let (start, end) = (from.saturating_mul(l) / 8, to.saturating_mul(l) / 8);
        for at in (start..=end).step_by(64).take(8) {
            prefetch(
                self.lower.as_flattened(),
                usize::try_from(at).unwrap_or(usize::MAX),
            );
        }
    }

    /// The number of one-bits from `pos`, the first bit of `bucket`, up to the next zero-bit (the bucket's values).
    #[inline(always)]
    fn ones_from(&self, pos: u64, bucket: u64) -> Option<u64> {
        let (index, shift) = (pos / 64, pos % 64);
        // The bits shifted in at the top are zeros: a run stops at the word's end at the latest.
        let run = u64::from((!(Self::word(self.upper, index)? >> shift)).trailing_zeros());
        if run < 64 - shift {
            return Some(run);
        }
        // A crowded bucket (clustered keys) goes on for words of ones only: up to a long stretch's worth passed, a
        // line of eight words a compare of their AND, then (consecutive keys fill buckets of thousands) its end found
        // among the counts of zeros.
        let rest = self
            .upper
            .get(usize::try_from(index).ok()?.checked_add(1)?..)?;
        let near = rest.get(..WALKED_WORDS).unwrap_or(rest);
        let ones = |w: &[u8; 8]| u64::from_le_bytes(*w) == u64::MAX;
        let passed = 8 * near
            .as_chunks::<8>()
            .0
            .iter()
            .take_while(|eight| {
                eight
                    .iter()
                    .fold(u64::MAX, |all, w| all & u64::from_le_bytes(*w))
                    == u64::MAX
            })
            .count();
        let within = near
            .get(passed..)
            .and_then(|left| left.iter().position(|w| !ones(w)));
        match within.map(|k| passed + k) {
            Some(full) => {
                let next = rest.get(full).map(|w| u64::from_le_bytes(*w))?;
                Some(run + 64 * full as u64 + u64::from((!next).trailing_zeros()))
            }
            None => self.crowded_end(pos, bucket)?.checked_sub(pos),
        }
    }

    /// The position of the zero-bit that ends `bucket`, a crowded one whose ones run from `pos` through the
    /// [`WALKED_WORDS`] after its word: the counts after `pos` say `bucket` (the zeros before `pos`) up to the first
    /// past the bucket's end, found by steps doubling up to [`MAX_COUNT_STEP`] counts from the last count the walk
    /// passed, then by halves; the zero-bit is then the first in the 1024 bits after the last count that says
    /// `bucket`. Out of line, as few buckets are.
    #[cold]
    #[inline(never)]
    fn crowded_end(&self, pos: u64, bucket: u64) -> Option<u64> {
        let counts = self.counts()?;
        // Modulo 2^16, compared with a count at most `MAX_COUNT_STEP` counts after one known to say `bucket`: the
        // zeros between them are fewer than 2^16, so an equal count means none.
        let unmoved = |j: u64| {
            let count = counts.get(usize::try_from(j).ok()?)?;
            Some(u16::from_le_bytes(*count) == bucket as u16) // NOTE: modulo 2^16
        };
        // The walk passed ones only up to `walked`: the counts from the first after `pos` to the last before `walked`
        // say `bucket`.
        let walked = (pos / 64 + 1 + WALKED_WORDS as u64) * 64;
        let mut unmoved_at = (walked / COUNTED_BITS).max(pos.div_ceil(COUNTED_BITS));
        if unmoved(unmoved_at) != Some(true) {
            return self.zero_from(pos, 0); // the vector ends first, or bytes no writer made
        }
        let mut step = 1;
        let mut moved_at = loop {
            let next = unmoved_at + step;
            match unmoved(next) {
                Some(true) => unmoved_at = next,
                Some(false) => break next,
                None => break counts.len() as u64, // past the last count: the end is in the vector's last bits
            }
            step = (2 * step).min(MAX_COUNT_STEP);
        };
        while moved_at - unmoved_at > 1 {
            let mid = unmoved_at + (moved_at - unmoved_at) / 2;
            match unmoved(mid)? {
                true => unmoved_at = mid,
                false => moved_at = mid,
            }
        }
        self.zero_from(unmoved_at * COUNTED_BITS, 0)
    }

    /// The counts of zeros, between the upper words and the samples.
    fn counts(&self) -> Option<&'a [[u8; 2]]> {
        let counts_at = 8 * (self.layout.lower_words + self.layout.upper_words);
        let counts = self.bytes.get(
            usize::try_from(counts_at).ok()?..usize::try_from(self.layout.samples_at()).ok()?,
        )?;
        Some(counts.as_chunks::<2>().0)
    }

    /// The `i`-th 64-bit word of `array`.
    #[inline]
    fn word(array: &[[u8; 8]], i: u64) -> Option<u64> {
        array
            .get(usize::try_from(i).ok()?)
            .map(|w| u64::from_le_bytes(*w))
    }

    /// Sample `i`: the number of values before the zero-bit of rank `256 · i`.
    #[inline]
    fn sample(&self, i: u64) -> Option<u64> {
        let sample = self.samples.get(usize::try_from(i).ok()?)?;
        Some(u64::from(u32::from_le_bytes(*sample)))
    }

    /// Bit `pos` of the upper vector.
    #[inline]
    fn bit(&self, pos: u64) -> Option<bool> {
        Some(Self::word(self.upper, pos / 64)? >> (pos % 64) & 1 == 1)
    }

    /// The low `l` bits of value `index`.
    #[inline]
    fn low(&self, index: u64) -> Option<u64> {
        let l = u64::from(self.layout.lower_bits);
        if index >= self.layout.len {
            return None;
        }
        if l == 0 {
            return Some(0);
        }
        let at = index * l; // NOTE: below 2^32 · 64
        let (word, shift) = (at / 64, at % 64);
        let mut v = Self::word(self.lower, word)? >> shift;
        if shift + l > 64 {
            v |= Self::word(self.lower, word + 1)? << (64 - shift);
        }
        Some(v & (u64::MAX >> (64 - l)))
    }

    /// The position of the zero-bit of rank `rank` (counting from 0) in the upper vector.
    #[inline(always)]
    fn select_zero(&self, rank: u64) -> Option<u64> {
        let start = self.sampled(rank)?;
        let left = rank % ZEROS_PER_SAMPLE; // zeros to pass from the sampled one (which counts as the first)
        // The stretch's bits, to the next sampled zero-bit (its 256 zeros and the ones between the two samples), or
        // to the vector's end. (Wrapping arithmetic: on bytes no writer made, a wrong length only picks a path.)
        let next = self.sample(rank / ZEROS_PER_SAMPLE + 1);
        let stretch = match next {
            Some(ones) => ones.wrapping_sub(start - (rank - left)) + ZEROS_PER_SAMPLE,
            None => (64 * self.upper.len() as u64).saturating_sub(start),
        };
        let end = start.wrapping_add(stretch);
        if stretch > CROWDED_BITS {
            return self.select_counted(rank, start, end);
        }
        // Past the middle of a sample's stretch the next sample is nearer: counting back from it halves the words
        // a look-up counts (each a dozen instructions where the CPU lacks `popcnt`).
        if left > ZEROS_PER_SAMPLE / 2 && next.is_some() {
            return self.zero_before(end, ZEROS_PER_SAMPLE - left);
        }
        self.zero_from(start, left)
    }

    /// [`select_zero`](Self::select_zero) in a long stretch, from the sampled zero-bit at `start` to the next at
    /// `end` (or the vector's end): the last count of zeros at most `rank` is found by halves among the stretch's
    /// counts, and the zero-bit within the [`COUNTED_BITS`] after it. Out of line: most stretches are short.
    #[cold]
    #[inline(never)]
    fn select_counted(&self, rank: u64, start: u64, end: u64) -> Option<u64> {
        // A count is kept modulo 2^16. Those of the stretch lie from the sampled rank less `COUNTED_BITS` (the first
        // count may be that far before `start`) to the next sampled rank: within 2^16 of `base`.
        let base = (rank - rank % ZEROS_PER_SAMPLE).saturating_sub(COUNTED_BITS);
        let counts = self.counts()?;
        let zeros_before = |j: u64| {
            let count = counts.get(usize::try_from(j).ok()?)?;
            Some(base + (u64::from(u16::from_le_bytes(*count)).wrapping_sub(base) & 0xffff))
        };
        let last = (counts.len() as u64).checked_sub(1)?;
        // The first count is at most `rank` (it is at or before `start`); the last of them that is.
        let (mut low, mut high) = (start / COUNTED_BITS, (end / COUNTED_BITS).min(last));
        while low < high {
            let mid = low + (high - low).div_ceil(2);
            if zeros_before(mid)? <= rank {
                low = mid;
            } else {
                high = mid - 1;
            }
        }
        self.zero_from(low * COUNTED_BITS, rank.checked_sub(zeros_before(low)?)?)
    }

    /// The position of the zero-bit `left` zero-bits after the first at or after `start` (0: that one).
    #[inline]
    fn zero_from(&self, start: u64, mut left: u64) -> Option<u64> {
        let mut index = start / 64;
        let mut zeros = !Self::word(self.upper, index)? & (u64::MAX << (start % 64));
        loop {
            // A word of ones only (a crowded bucket's, as clustered keys fill) passes without counting, and one of a
            // single zero-bit (a crowded bucket's end) with a test.
            if zeros != 0 && zeros & (zeros - 1) == 0 {
                if left == 0 {
                    return Some(index * 64 + u64::from(zeros.trailing_zeros()));
                }
                left -= 1;
            } else if zeros != 0 {
                let counts = byte_counts(zeros);
                let count = total(counts);
                if left < count {
                    // NOTE: `left < count ≤ 64`
                    return Some(
                        index * 64 + u64::from(select_by_bytes(zeros, counts, left as u32)),
                    );
                }
                left -= count;
            }
            index += 1;
            zeros = !Self::word(self.upper, index)?;
        }
    }

    /// The position of the `back`-th zero-bit (from 1) before position `end` of the upper vector.
    #[inline]
    fn zero_before(&self, end: u64, mut back: u64) -> Option<u64> {
        let mut index = end / 64;
        let mut zeros = !Self::word(self.upper, index)? & ((1u64 << (end % 64)) - 1);
        loop {
            if zeros != 0 && zeros & (zeros - 1) == 0 {
                if back == 1 {
                    return Some(index * 64 + u64::from(zeros.trailing_zeros()));
                }
                back -= 1;
            } else if zeros != 0 {
                let counts = byte_counts(zeros);
                let count = total(counts);
                if back <= count {
                    // NOTE: `count − back < count ≤ 64`
                    let rank = (count - back) as u32;
                    return Some(index * 64 + u64::from(select_by_bytes(zeros, counts, rank)));
                }
                back -= count;
            }
            index = index.checked_sub(1)?;
            zeros = !Self::word(self.upper, index)?;
        }
    }

    /// The position of the first one-bit at or after `from`, `Some(None)` if there is none up to `last`
    /// (inclusive) or before the end of the vector.
    fn next_one(&self, from: u64, last: u64) -> Option<Option<u64>> {
        let mut index = from / 64;
        let Some(first) = Self::word(self.upper, index) else {
            return Some(None);
        };
        let mut ones = first & (u64::MAX << (from % 64));
        loop {
            if ones != 0 {
                let at = index * 64 + u64::from(ones.trailing_zeros());
                return Some((at <= last).then_some(at));
            }
            index += 1;
            if index * 64 > last {
                return Some(None);
            }
            match Self::word(self.upper, index) {
                Some(w) => ones = w,
                None => return Some(None),
            }
        }
    }
}

/// The greatest low bits a value of `bucket` may have and lie at most at `hi` (every low bits, `2^l − 1`, when `hi`
/// lies in a later bucket). Requires `bucket ≤ hi >> l`.
#[inline]
fn high_in(bucket: u64, hi: u64, l: u32) -> u64 {
    let mask = u64::MAX >> (64 - l.max(1)); // NOTE: `l ≥ 1` wherever a bucket is searched
    if hi >> l == bucket { hi & mask } else { mask }
}

/// About `steps · part / whole` (for `part ≤ whole`): where a value falls among `steps` evenly spread, in 64-bit
/// arithmetic (a 128-bit division is a library call), keeping the top 31 bits of `part` and `whole`.
#[inline]
fn interpolate(steps: u64, part: u64, whole: u64) -> u64 {
    let shift = (64 - whole.leading_zeros()).saturating_sub(31);
    // NOTE: `steps < 2^32` and `part >> shift < 2^31`: the product fits.
    (steps.min(u64::from(u32::MAX)) * (part >> shift)) / (whole >> shift).max(1)
}

/// The position of the one-bit of rank `rank` (from 0) in `w`; 64 if `w` has no more than `rank` one-bits.
#[inline]
pub(crate) fn select_in_word(w: u64, rank: u32) -> u32 {
    select_by_bytes(w, byte_counts(w), rank)
}

/// Every byte of `w` replaced by its number of one-bits: a population count that stops before adding the bytes up,
/// so that [`select_by_bytes`] can use it too (the default x86-64 target has no `popcnt`, and this is most of the
/// dozen instructions a count of bits costs there).
#[inline]
fn byte_counts(w: u64) -> u64 {
    let pairs = w - ((w >> 1) & 0x5555_5555_5555_5555);
    let nibbles = (pairs & 0x3333_3333_3333_3333) + ((pairs >> 2) & 0x3333_3333_3333_3333);
    (nibbles + (nibbles >> 4)) & 0x0f0f_0f0f_0f0f_0f0f
}

/// One in each byte.
const BYTE_ONES: u64 = 0x0101_0101_0101_0101;

/// The number of one-bits of the word whose [`byte_counts`] are `counts`.
#[inline]
const fn total(counts: u64) -> u64 {
    counts.wrapping_mul(BYTE_ONES) >> 56
}

/// [`select_in_word`] given the word's [`byte_counts`], without a branch (Vigna, "Broadword implementation of
/// rank/select queries", 2008): the bytes' running counts side by side, compared with `rank` all at once, say
/// which byte holds the bit; a table selects in that byte.
#[inline]
fn select_by_bytes(w: u64, counts: u64, rank: u32) -> u32 {
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    if rank >= 64 {
        return 64;
    }
    // Byte `i`: the one-bits of bytes `0..=i` (at most 64: no carry into the next byte).
    let running = counts.wrapping_mul(BYTE_ONES);
    // High bit of byte `i` set when `running_i ≤ rank` (both below 128); those are the low bytes, as counts grow.
    let at_most = (((u64::from(rank) * BYTE_ONES) | HIGHS) - running) & HIGHS;
    let bytes_before = ((at_most >> 7).wrapping_mul(BYTE_ONES) >> 56) as u32; // NOTE: at most 8
    if bytes_before >= 8 {
        return 64;
    }
    let shift = 8 * bytes_before;
    let ones_before = ((running << 8) >> shift & 0xff) as u32; // NOTE: one byte
    let byte = (w >> shift & 0xff) as usize; // NOTE: one byte
    let within = SELECT_IN_BYTE
        .get(byte)
        .and_then(|positions| positions.get((rank - ones_before) as usize))
        .copied()
        .unwrap_or(8);
    shift + u32::from(within)
}

/// `SELECT_IN_BYTE[b][r]`: the position of the one-bit of rank `r` in byte `b` (8 if it has no more than `r`).
#[expect(
    clippy::indexing_slicing,
    reason = "evaluated at compile time, where an index out of bounds is a build error, not a panic"
)]
static SELECT_IN_BYTE: [[u8; 8]; 256] = {
    let mut table = [[8u8; 8]; 256];
    let mut b = 0;
    while b < 256 {
        let mut rank = 0;
        let mut bit = 0;
        while bit < 8 {
            if b >> bit & 1 == 1 {
                table[b][rank] = bit as u8;
                rank += 1;
            }
            bit += 1;
        }
        b += 1;
    }
    table
};

#[cfg(test)]
mod tests {
    use super::*;

    /// `n` values drawn from `0..universe` by `seed`, in drawing order.
    fn random_values(seed: u64, n: u64, universe: u64) -> Vec<u64> {
        (0..n)
            .map(|i| crate::math::splitmix64(seed, i) % universe)
            .collect()
    }

    fn sequence_bytes(values: &[u64], universe: u64) -> (Layout, Vec<u8>) {
        let layout = Layout::new(values.len() as u64, universe).unwrap();
        let mut out = Vec::new();
        encode(values, &layout, &mut out);
        assert_eq!(out.len() as u64, layout.bytes());
        (layout, out)
    }

    /// The arrays, assembled word by word in the output, hold the bits of the definition: value `i`'s low bits at
    /// `i · l` of the lower array, a one at `(v >> l) + i` of the upper array, nothing else.
    #[test]
    fn encode_sets_the_bits_of_the_definition() {
        for (universe, n) in [
            (1u64 << 20, 1000u64),
            (1 << 40, 3000),
            (5000, 5000),
            (u64::MAX, 50),
            (100, 7),
            (1 << 33, 1),
        ] {
            let mut values = random_values(universe, n, universe);
            values.sort_unstable();
            values.dedup();
            let (layout, bytes) = sequence_bytes(&values, universe);
            let l = u64::from(layout.lower_bits);
            let bit = |at: u64| bytes[(at / 8) as usize] >> (at % 8) & 1 == 1;
            let upper = layout.lower_words * 64;
            let ones = |from: u64, to: u64| (from..to).filter(|&at| bit(at)).count() as u64;
            let mut low_ones = 0;
            for (i, &v) in values.iter().enumerate() {
                let i = i as u64;
                for b in 0..l {
                    assert_eq!(
                        bit(i * l + b),
                        v >> b & 1 == 1,
                        "u={universe} value {i} bit {b}"
                    );
                }
                low_ones += u64::from((v & ((1u64 << l) - 1)).count_ones());
                assert!(bit(upper + (v >> l) + i), "u={universe} value {i}");
            }
            assert_eq!(ones(0, upper), low_ones, "u={universe}");
            let upper_end = upper + layout.upper_words * 64;
            assert_eq!(ones(upper, upper_end), values.len() as u64, "u={universe}");
        }
    }

    /// [`Sequence::any_in`], checked against the look-up as the target compiles it: on a CPU with `popcnt` the
    /// question runs the other build of it ([`with_popcnt`]), and both must answer alike.
    fn any_in_both_builds(seq: &Sequence<'_>, lo: u64, hi: u64) -> bool {
        let answer = seq.any_in(lo, hi);
        assert_eq!(
            seq.successor_in(lo, hi).unwrap_or(true),
            answer,
            "[{lo},{hi}]"
        );
        answer
    }

    /// Every `[lo, hi]` over a small universe answers exactly as the set does, in both builds of the look-up.
    #[test]
    fn any_in_is_exact_on_every_interval_of_small_universes() {
        let mut state = 7u64;
        for universe in [1u64, 2, 3, 5, 64, 65, 300, 1000] {
            for density in [1u64, 2, 5, 50] {
                let values: Vec<u64> = (0..universe)
                    .filter(|_| {
                        state = crate::math::splitmix64(state, 1);
                        state.is_multiple_of(density)
                    })
                    .collect();
                if values.is_empty() {
                    continue;
                }
                let (layout, bytes) = sequence_bytes(&values, universe);
                let seq = Sequence::new(&layout, &bytes);
                let step = (universe / 60).max(1);
                for lo in (0..universe).step_by(step as usize) {
                    for hi in lo..universe {
                        let expected = values.iter().any(|&v| (lo..=hi).contains(&v));
                        assert_eq!(
                            any_in_both_builds(&seq, lo, hi),
                            expected,
                            "u={universe} [{lo},{hi}]"
                        );
                    }
                }
            }
        }
    }

    /// Clustered values fill buckets with hundreds of values (searched from where their low bits put them): every
    /// interval's answer is still exact, at every offset inside and around the crowded buckets, in both builds of the
    /// look-up.
    #[test]
    fn crowded_buckets_answer_exactly() {
        // Buckets of 512 values (`l = 9`): the dense run below fills one with hundreds.
        let universe = 1u64 << 22;
        let mut values: Vec<u64> = (5000..9000).filter(|v| v % 7 != 3).collect();
        // Buckets of about a hundred values (one every 5 of 512), searched as spread over their low bits.
        values.extend((20_000..40_000).step_by(5));
        values.extend(random_values(5, 300, universe));
        values.sort_unstable();
        values.dedup();
        let (layout, bytes) = sequence_bytes(&values, universe);
        assert_eq!(layout.lower_bits, 9);
        let crowded = values
            .iter()
            .filter(|&&v| v >> layout.lower_bits == 6000 >> layout.lower_bits)
            .count();
        assert!(crowded as u64 > 10 * LINEAR_STEPS, "{crowded}");
        let seq = Sequence::new(&layout, &bytes);
        let middling = values
            .iter()
            .filter(|&&v| v >> layout.lower_bits == 30_000 >> layout.lower_bits)
            .count() as u64;
        assert!(
            (LINEAR_STEPS + 1..=SPREAD_VALUES).contains(&middling),
            "{middling}"
        );
        assert!(crowded as u64 > SPREAD_VALUES, "{crowded}");
        for lo in (4000..10_000)
            .chain(29_000..31_000)
            .chain((0..universe).step_by(3989))
        {
            for len in [0u64, 1, 2, 5, 300, 5000] {
                let hi = (lo + len).min(universe - 1);
                let expected = values.iter().any(|&v| (lo..=hi).contains(&v));
                assert_eq!(any_in_both_builds(&seq, lo, hi), expected, "[{lo},{hi}]");
            }
        }
    }

    #[test]
    fn huge_universes_and_wide_lower_parts() {
        let values = [0u64, 1, 1 << 40, u64::MAX - 3, u64::MAX - 2];
        let (layout, bytes) = sequence_bytes(&values, u64::MAX);
        assert_eq!(layout.lower_bits, 61);
        let seq = Sequence::new(&layout, &bytes);
        for &v in &values {
            assert!(seq.any_in(v, v));
        }
        assert!(!seq.any_in(2, (1 << 40) - 1));
        assert!(!seq.any_in(u64::MAX - 1, u64::MAX - 1));
        assert!(seq.any_in(3, u64::MAX - 1));
        let one = [u64::MAX - 1];
        let (layout, bytes) = sequence_bytes(&one, u64::MAX);
        assert_eq!(layout.lower_bits, 63);
        let seq = Sequence::new(&layout, &bytes);
        assert!(seq.any_in(0, u64::MAX - 1));
        assert!(!seq.any_in(0, u64::MAX - 2));
    }

    #[test]
    fn many_buckets_cross_samples() {
        let values: Vec<u64> = (0..5000u64).map(|i| i * 37 + (i % 3)).collect();
        let universe = 5000 * 37;
        let (layout, bytes) = sequence_bytes(&values, universe);
        assert!(layout.samples > 1);
        let seq = Sequence::new(&layout, &bytes);
        for &v in &values {
            assert!(any_in_both_builds(&seq, v, v));
            if v > 0 && !values.contains(&(v - 1)) {
                assert!(!any_in_both_builds(&seq, v - 1, v - 1));
            }
        }
    }

    /// The search in a crowded bucket finds the first value at or above every low part, from every guess.
    #[test]
    fn first_at_least_is_exact_from_every_guess() {
        let universe = 1u64 << 16;
        // Sparse values, and a stretch where every value is present: full buckets there.
        let values: Vec<u64> = (0..universe)
            .filter(|&v| {
                crate::math::splitmix64(2, v).is_multiple_of(40) || (30_000..30_300).contains(&v)
            })
            .collect();
        let (layout, bytes) = sequence_bytes(&values, universe);
        let seq = Sequence::new(&layout, &bytes);
        let l = layout.lower_bits;
        let bucket = 30_100 >> l;
        let from = values.iter().position(|&v| v >> l == bucket).unwrap() as u64;
        let to = values.iter().rposition(|&v| v >> l == bucket).unwrap() as u64 + 1;
        assert!(to - from > 20, "{}", to - from);
        for low in (0..1u64 << l).step_by(3) {
            let expected = (from..to)
                .find(|&i| values[i as usize] & ((1 << l) - 1) >= low)
                .unwrap_or(to);
            for guess in from..to {
                // A `high` below `low` never ends the search early: it finds the first.
                let at = seq.first_at_least(from, to, low, low.saturating_sub(1), guess);
                assert_eq!(at, Some(expected));
                // With a `high`, it ends at the first, or at a value from `low` to `high`.
                for high in [low, low + 2, low + 40, u64::MAX] {
                    let at = seq.first_at_least(from, to, low, high, guess).unwrap();
                    let v = |i: u64| values[i as usize] & ((1 << l) - 1);
                    assert!(
                        at == expected || (at < to && (low..=high).contains(&v(at))),
                        "{low} {high}"
                    );
                }
            }
        }
    }

    /// Every zero-bit of the upper vector is found by its rank, from the sample below it or, past the middle of a
    /// sample's stretch, back from the sample above; over sparse buckets and crowded ones.
    #[test]
    fn select_zero_finds_every_zero_from_either_sample() {
        let universe = 1u64 << 22;
        let mut values = random_values(9, 20_000, universe);
        values.extend(1_000_000..1_003_000); // a crowded stretch
        values.sort_unstable();
        values.dedup();
        let (layout, bytes) = sequence_bytes(&values, universe);
        let seq = Sequence::new(&layout, &bytes);
        let mut rank = 0;
        for pos in 0..layout.len + layout.buckets {
            if !seq.bit(pos).unwrap() {
                assert_eq!(seq.select_zero(rank), Some(pos), "rank {rank}");
                rank += 1;
            }
        }
        assert_eq!(rank, layout.buckets);
        assert!(layout.samples > 8, "{}", layout.samples);
    }

    /// Buckets of hundreds of consecutive values make stretches between samples thousands of words long, searched
    /// by the counts of zeros: every zero-bit is still found by its rank, past the counts' wrap at 2^16 zeros, and
    /// every bucket's values are counted.
    #[test]
    fn select_zero_finds_every_zero_across_crowded_stretches() {
        let universe = 1u64 << 26;
        let mut values = random_values(5, 20_000, universe);
        values.extend(30_000_000..30_100_000); // 100,000 consecutive values: buckets of 2^l
        values.extend(60_000_000..60_000_300); // a crowded stretch shorter than a counted block
        values.sort_unstable();
        values.dedup();
        let (layout, bytes) = sequence_bytes(&values, universe);
        assert!(layout.buckets > 1 << 16, "{}", layout.buckets);
        let seq = Sequence::new(&layout, &bytes);
        let mut rank = 0;
        let mut first = 0; // the first bit of bucket `rank`
        for pos in 0..layout.len + layout.buckets {
            if Sequence::word(seq.upper, pos / 64).unwrap() >> (pos % 64) & 1 == 0 {
                assert_eq!(seq.select_zero(rank), Some(pos), "rank {rank}");
                if pos > first {
                    assert_eq!(
                        seq.ones_from(first, rank),
                        Some(pos - first),
                        "bucket {rank}"
                    );
                }
                rank += 1;
                first = pos + 1;
            }
        }
        assert_eq!(rank, layout.buckets);
        for lo in (29_990_000..30_110_000).step_by(997) {
            let expected = values.iter().any(|&v| (lo..=lo + 50).contains(&v));
            assert_eq!(seq.any_in(lo, lo + 50), expected, "{lo}");
        }
    }

    /// Consecutive values fill buckets of 16,384 (past the words a crowded bucket is walked for): each one's end is
    /// found among the counts of zeros, beside buckets of every size around the walk's end, past the counts' wrap at
    /// 2^16 zeros; every bucket's values are counted, and ranges around the crowded ones answer exactly.
    #[test]
    fn crowded_buckets_end_where_the_counts_say() {
        let universe = 1u64 << 32;
        let mut values = random_values(7, 20_000, universe);
        values.extend((1 << 30)..(1 << 30) + 100_000); // 6 full buckets
        let walked = 64 * (WALKED_WORDS as u64 + 1);
        let sizes = [
            1000,
            8000,
            walked - 1,
            walked,
            walked + 1,
            walked + 64,
            9000,
            12000,
            16383,
        ];
        for (i, len) in sizes.into_iter().enumerate() {
            let start = (1 << 29) + ((i as u64) << 16); // a bucket's first value
            values.extend(start..start + len);
        }
        values.sort_unstable();
        values.dedup();
        let (layout, bytes) = sequence_bytes(&values, universe);
        assert_eq!(layout.lower_bits, 14);
        assert!(layout.buckets > 1 << 16, "{}", layout.buckets);
        let seq = Sequence::new(&layout, &bytes);
        let (mut rank, mut first, mut crowded) = (0, 0, 0);
        for pos in 0..layout.len + layout.buckets {
            if Sequence::word(seq.upper, pos / 64).unwrap() >> (pos % 64) & 1 == 0 {
                if pos > first {
                    assert_eq!(
                        seq.ones_from(first, rank),
                        Some(pos - first),
                        "bucket {rank}"
                    );
                    crowded += usize::from(pos - first > walked);
                }
                rank += 1;
                first = pos + 1;
            }
        }
        assert!(crowded >= 9, "{crowded}");
        for &v in &values {
            if (v >> 14) % 7 == 0 {
                assert!(seq.any_in(v, v));
                assert!(seq.any_in(v.saturating_sub(100), v));
            }
        }
        for (i, len) in sizes.into_iter().enumerate() {
            let start = (1 << 29) + ((i as u64) << 16);
            for (lo, hi) in [
                (start + len, start + 16_383),
                (start + len - 1, start + len + 9),
            ] {
                let expected = values.iter().any(|v| (lo..=hi).contains(v));
                assert_eq!(seq.any_in(lo, hi), expected, "[{lo}, {hi}]");
            }
        }
    }

    /// The broadword selection agrees with counting bits one by one, on every rank of many words.
    #[test]
    fn select_in_word_agrees_with_counting_bits() {
        let words = (0..2000u64).map(|i| {
            let r = crate::math::splitmix64(3, i);
            // Sparse, dense and random words.
            match i % 3 {
                0 => r & crate::math::splitmix64(4, i) & crate::math::splitmix64(5, i),
                1 => r | crate::math::splitmix64(4, i),
                _ => r,
            }
        });
        for w in words.chain([0, u64::MAX, 1, 1 << 63]) {
            let positions: Vec<u32> = (0..64).filter(|&i| w >> i & 1 == 1).collect();
            for rank in 0..=64u32 {
                let expected = positions.get(rank as usize).copied().unwrap_or(64);
                assert_eq!(select_in_word(w, rank), expected, "{w:#x} rank {rank}");
            }
        }
    }

    #[test]
    fn select_in_word_finds_each_rank() {
        let w = 0b1011_0000_0000_0001_0000_0000_1000_0000_0000_0001u64 << 20;
        let positions: Vec<u32> = (0..64).filter(|&i| w >> i & 1 == 1).collect();
        for (rank, &p) in positions.iter().enumerate() {
            assert_eq!(select_in_word(w, rank as u32), p);
        }
        assert_eq!(select_in_word(w, positions.len() as u32), 64);
        assert_eq!(select_in_word(0, 0), 64);
    }

    #[test]
    fn truncated_or_garbled_arrays_answer_may_contain_without_panicking() {
        let values: Vec<u64> = (0..2000u64).map(|i| i * 11).collect();
        let (layout, bytes) = sequence_bytes(&values, 22_000);
        for cut in [0, 1, 8, bytes.len() / 2, bytes.len() - 1] {
            let seq = Sequence::new(&layout, &bytes[..cut]);
            for lo in (0..22_000).step_by(97) {
                let _ = seq.any_in(lo, lo + 5);
            }
        }
        let mut garbled = bytes.clone();
        for b in garbled.iter_mut() {
            *b = 0xff;
        }
        let seq = Sequence::new(&layout, &garbled);
        for lo in (0..22_000).step_by(97) {
            let _ = seq.any_in(lo, lo + 5);
        }
    }
}
