//! Byte strings to integers: the order-preserving projection of keys and bounds (FORMAT.md 4.5, "Projection"),
//! and Grafite's locality-preserving hash of the projected values.
//!
//! Every key of a block starts with the block's common prefix `P`. The `m` bytes after it (zero-padded) are read
//! as digits in a **mixed radix**: position `j` has the alphabet `A_j` of the byte values keys have there, and a
//! byte becomes its rank in `A_j`. Keys map to `Σ rank_j · W_j` with `W_j` the product of the later positions'
//! alphabet sizes: lexicographic order becomes numeric order, and only byte values that occur take up room, so
//! decimal ids stay consecutive integers (a scan of 100 consecutive ids is a projected range of about 100,
//! where reading the bytes as one big-endian number would spread it over `2^16`). The writer takes as many
//! positions as fit in 64 bits (up to [`MAX_POSITIONS`]), and widens the alphabets that miss only a few values,
//! just before the positions whose bytes are their own digits, to all 256 values ([`widen`]): there the mixed radix
//! saves nothing, and a query reads such positions as one word.
//!
//! A bound that does not start with `P` lies below or above every key. One that does is mapped digit by digit;
//! at the first byte outside its position's alphabet the keys that share the digits before are all above it or
//! all below it in that byte, which gives the projected value the bound stands for (below as a lower bound,
//! just under as an upper bound).

use core::cmp::Ordering;
use core::ops::Bound;

use crate::cpu::with_popcnt;
use crate::math::{fastrange64, splitmix64};
use crate::order::compare;

/// The most projected positions a block has: the builder keeps this many bytes per key.
pub(crate) const MAX_POSITIONS: usize = 16;

/// Bytes of one position's alphabet: a 256-bit set, four little-endian u64 words (bit `b` = byte value `b`).
pub(crate) const ALPHABET_LEN: usize = 32;

/// Bytes of one position's word ranks: for each of the alphabet's four words, how many values the words before it
/// hold (0, then at most 192). With them a byte's rank is one count of bits in one word, where counting all four
/// words would take four: on x86-64 builds without the `popcnt` feature (Rust's default target) each count is a
/// dozen instructions.
pub(crate) const WORD_RANKS_LEN: usize = 4;

/// Bytes per projected position: its weight (u64), its alphabet and its word ranks.
pub(crate) const POSITION_LEN: usize = 8 + ALPHABET_LEN + WORD_RANKS_LEN;

/// A projection read in place: the common prefix, and per position its alphabet and weight.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Projection<'a> {
    pub(crate) prefix: &'a [u8],
    /// The length of the longest key after the prefix, if every key's bytes after it are projected.
    pub(crate) longest: Option<usize>,
    /// The positions' tables as the payload has them, `m` of each in turn: the little-endian u64 weights, the
    /// alphabets of [`ALPHABET_LEN`] bytes, the word ranks of [`WORD_RANKS_LEN`] bytes. Kept whole and cut where a
    /// position is read on its own: the verbatim run of binary keys reads none of them.
    pub(crate) tables: &'a [u8],
    /// The block's [`Verbatim`] run (`Projection::verbatim`).
    pub(crate) verbatim: Verbatim,
}

/// The positions where the bytes are their own digits: every one has all 256 byte values in its alphabet and the
/// weight `256^(end − 1 − j)`, so the digits there are the bytes read as one big-endian number, and a query reads
/// them as one word instead of position by position. Binary keys (hashes, big-endian integers) are like that past
/// their first bytes, up to the padding position that may follow them (the alphabet `{0}`, of weight 1, the last).
/// At most 8 positions: their weights fit in a u64. Derived from a block's projection when it is opened, not stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Verbatim {
    /// The first position of the run (`MAX_POSITIONS` when there is none).
    pub(crate) start: u8,
    /// The position after the run.
    pub(crate) end: u8,
    /// Whether the position after the run is the last, the padding alphabet `{0}` of weight 1.
    pub(crate) padded: bool,
}

impl Verbatim {
    /// No verbatim run: every position is read on its own.
    pub(crate) const NONE: Verbatim = Verbatim {
        start: MAX_POSITIONS as u8,
        end: MAX_POSITIONS as u8,
        padded: false,
    };

    /// The run of a projection of `m` positions (at most [`MAX_POSITIONS`]), given whether position `j`'s
    /// alphabet is `full` (all 256 values), whether it is the `padding` alphabet `{0}`, and its `weight`: the
    /// longest run of full positions ending at the last position, or just before it when the last is the padding
    /// alphabet of weight 1, whose weights are `256^(end − 1 − j)`.
    pub(crate) fn find(
        m: usize,
        full: impl Fn(usize) -> bool,
        padding: impl Fn(usize) -> bool,
        weight: impl Fn(usize) -> Option<u64>,
    ) -> Verbatim {
        let padded = m
            .checked_sub(1)
            .filter(|&last| padding(last) && weight(last) == Some(1));
        let end = padded.unwrap_or(m);
        let mut start = end;
        while let Some(j) = start.checked_sub(1).filter(|_| end - start < 8) {
            // NOTE: end − start < 8
            if !(full(j) && weight(j) == Some(1u64 << (8 * (end - start)))) {
                break;
            }
            start = j;
        }
        if start == end {
            Verbatim::NONE
        } else {
            Verbatim {
                start: start as u8, // NOTE: at most 16
                end: end as u8,
                padded: padded.is_some(),
            }
        }
    }
}

/// Where a string falls against the keys' common prefix.
enum Against<'a> {
    Below,
    /// Starts with the prefix; what follows it.
    After(&'a [u8]),
    Above,
}

/// A bound mapped digit by digit.
enum Digits {
    /// Every position's byte is in its alphabet: the value, exactly.
    Exact(u128),
    /// At some position the byte is not: the value of the digits before it plus `rank · W_j`, the start of the
    /// keys above the bound.
    Between(u128),
}

impl<'a> Projection<'a> {
    /// Number of positions `m`.
    fn positions(&self) -> usize {
        self.tables.len() / POSITION_LEN
    }

    /// Positions `from..to` of the table whose entries, of `len` bytes, start at byte `at` of the tables.
    fn table(&self, at: usize, len: usize, from: usize, to: usize) -> &'a [u8] {
        self.tables
            .get(at + len * from..at + len * to)
            .unwrap_or_default()
    }

    /// Positions `from..to` of the alphabets.
    fn alphabets(&self, from: usize, to: usize) -> &'a [u8] {
        self.table(8 * self.positions(), ALPHABET_LEN, from, to)
    }

    fn against<'x>(&self, x: &'x [u8]) -> Against<'x> {
        if self.prefix.is_empty() {
            return Against::After(x); // without a call to compare no bytes
        }
        let shared = x.len().min(self.prefix.len());
        match compare(
            x.get(..shared).unwrap_or_default(),
            self.prefix.get(..shared).unwrap_or_default(),
        ) {
            Ordering::Less => Against::Below,
            Ordering::Greater => Against::Above,
            Ordering::Equal if x.len() < self.prefix.len() => Against::Below,
            Ordering::Equal => Against::After(x.get(self.prefix.len()..).unwrap_or_default()),
        }
    }

    /// The block's [`Verbatim`] run.
    pub(crate) fn verbatim(&self) -> Verbatim {
        let alphabet = |j: usize| Some(self.alphabets(j, j + 1)).filter(|a| !a.is_empty());
        Verbatim::find(
            self.positions(),
            |j| alphabet(j).is_some_and(|a| a.iter().all(|&b| b == u8::MAX)),
            |j| {
                alphabet(j)
                    .is_some_and(|a| a.iter().enumerate().all(|(i, &b)| b == u8::from(i == 0)))
            },
            |j| {
                self.table(0, 8, j, j + 1)
                    .try_into()
                    .ok()
                    .map(u64::from_le_bytes)
            },
        )
    }

    /// The digits of `suffix` (the bytes after the prefix, zero-padded).
    #[inline(always)]
    fn digits(&self, suffix: &[u8]) -> Digits {
        Self::finish(self.steps(suffix, 0, MAX_POSITIONS, 0))
    }

    /// The digits of two suffixes, their common leading bytes read once: the two bounds of a short range share all
    /// but their last few.
    #[inline(always)]
    fn digit_pair(&self, a: &[u8], b: &[u8]) -> (Digits, Digits) {
        // Only the positions before the verbatim run: past it a reading costs the same shared or not.
        let common = a
            .iter()
            .zip(b)
            .take(usize::from(self.verbatim.start))
            .take_while(|(x, y)| x == y)
            .count();
        let shared = match common {
            0 => Ok(0),
            _ => self.steps(a, 0, common, 0),
        };
        match shared {
            // Stopped at a byte both have: both stop there.
            Err(v) => (Digits::Between(v), Digits::Between(v)),
            Ok(acc) => (
                Self::finish(self.steps(a, common, MAX_POSITIONS, acc)),
                Self::finish(self.steps(b, common, MAX_POSITIONS, acc)),
            ),
        }
    }

    /// The digits of a reading [`steps`](Self::steps) finished: exact if it read every position.
    fn finish(steps: Result<u128, u128>) -> Digits {
        match steps {
            Ok(v) => Digits::Exact(v),
            Err(v) => Digits::Between(v),
        }
    }

    /// The reading of `suffix` (zero-padded) at positions `from..to`, `acc` being the sum of the steps before:
    /// per position, the word of the alphabet that holds the byte says whether the byte is in it, and its bits
    /// below the byte plus the word's rank give the byte's rank; the positions of the verbatim run are the bytes as
    /// they are. `Ok` with the sum if every byte read is in its alphabet, `Err` with the sum up to the first that is
    /// not (its step included).
    #[inline(always)]
    fn steps(&self, suffix: &[u8], from: usize, to: usize, acc: u128) -> Result<u128, u128> {
        let Verbatim {
            start,
            end: after,
            padded,
        } = self.verbatim;
        let (start, after) = (usize::from(start), usize::from(after));
        if start == 0 && from == 0 && to == MAX_POSITIONS {
            // Every position is the run's, or its padding (binary keys: hashes, big-endian integers): one word read,
            // without the clamps of the general case below (which gives the same).
            let acc = acc + u128::from(big_endian(suffix, 0, after, after));
            return if padded {
                padding(suffix, after, acc)
            } else {
                Ok(acc)
            };
        }
        let end = to.min(self.positions());
        let from = from.min(end);
        // `from ≤ head ≤ tail ≤ end` (max then min: `clamp` would check its bounds' order on every call).
        let head = start.max(from).min(end);
        let tail = after.max(head).min(end);
        let acc = self.one_by_one(suffix, from, head, acc)?;
        let acc = acc + u128::from(big_endian(suffix, head, tail, after));
        if padded && tail == after && after < end {
            return padding(suffix, after, acc);
        }
        self.one_by_one(suffix, tail, end, acc)
    }

    /// [`steps`](Self::steps) at positions `from..to` (`from ≤ to ≤ m`), each on its own.
    #[inline(always)]
    fn one_by_one(
        &self,
        suffix: &[u8],
        from: usize,
        to: usize,
        mut acc: u128,
    ) -> Result<u128, u128> {
        if from >= to {
            return Ok(acc); // a verbatim run took them all: no tables to cut
        }
        let ranks_at = (8 + ALPHABET_LEN) * self.positions();
        let positions = self
            .alphabets(from, to)
            .chunks_exact(ALPHABET_LEN)
            .zip(
                self.table(ranks_at, WORD_RANKS_LEN, from, to)
                    .chunks_exact(WORD_RANKS_LEN),
            )
            .zip(self.table(0, 8, from, to).chunks_exact(8));
        let read = suffix.get(from..).unwrap_or_default();
        for (j, ((alphabet, ranks), weight)) in positions.enumerate() {
            let byte = read.get(j).copied().unwrap_or(0);
            let w = usize::from(byte / 64);
            let word = alphabet
                .get(8 * w..8 * w + 8)
                .and_then(|b| b.try_into().ok())
                .map_or(0, u64::from_le_bytes);
            let bit = u32::from(byte % 64);
            let member = word >> bit & 1 == 1;
            // A full word (every byte value occurs, as in binary keys) ranks without a count of bits, which the
            // default x86-64 target makes a dozen instructions.
            let below = match word & ((1u64 << bit) - 1) {
                _ if word == u64::MAX => bit,
                0 => 0, // the first value of its word, as the padding byte 0 always is
                bits => bits.count_ones(),
            };
            let rank = u32::from(ranks.get(w).copied().unwrap_or(0)) + below;
            let weight = u64::from_le_bytes(weight.try_into().unwrap_or_default());
            // No overflow, even on corrupt bytes: at most 16 terms, each below 2^9 · 2^64. A plain sum, where a
            // saturating one would put two conditional moves on the chain of dependent additions.
            acc += u128::from(rank) * u128::from(weight);
            if !member {
                return Err(acc);
            }
        }
        Ok(acc)
    }

    /// The projected value of a key, or `None` if `key` cannot be one (outside the prefix, or a byte outside its
    /// position's alphabet).
    #[inline]
    pub(crate) fn point(&self, key: &[u8]) -> Option<u64> {
        match self.against(key) {
            Against::After(suffix) => match self.digits(suffix) {
                Digits::Exact(v) => Some(clamp(v)),
                Digits::Between(_) => None,
            },
            Against::Below | Against::Above => None,
        }
    }

    /// The projected values `[lo, hi]` of the keys between `lower` and `upper`; `None` if no key can be.
    #[inline]
    pub(crate) fn bounds(&self, lower: Bound<&[u8]>, upper: Bound<&[u8]>) -> Option<(u64, u64)> {
        // Binary keys (hashes, big-endian integers) as long as the keys: each bound's digits are its bytes, read as
        // one word, what the general reading below gives them (the padding, if any, reads the 0 past their end).
        // The run's start first: where it does not take every position, no prefix is compared for nothing.
        if self.verbatim.start == 0
            && let (Some(x), Some(y)) = (self.whole_run(lower), self.whole_run(upper))
        {
            let value = |suffix: &[u8]| big_endian(suffix, 0, suffix.len(), suffix.len());
            return Some((
                self.lower(x, Digits::Exact(value(x).into()), is_excluded(lower))?,
                self.upper(y, Digits::Exact(value(y).into()), is_excluded(upper))?,
            ));
        }
        // The other keys' bounds are read position by position, a count of bits each: in the build with `popcnt`
        // where the CPU has it.
        with_popcnt(
            #[inline(always)]
            || self.bounds_read(lower, upper),
        )
    }

    /// [`bounds`](Self::bounds) of keys other than binary ones as long as the keys, read position by position (in
    /// the build the caller is in: the tests call it to check the target's build against the one with `popcnt`).
    #[inline(always)]
    pub(super) fn bounds_read(
        &self,
        lower: Bound<&[u8]>,
        upper: Bound<&[u8]>,
    ) -> Option<(u64, u64)> {
        match (self.bound(lower), self.bound(upper)) {
            // The common case, both bounds after the prefix: their common leading bytes read once.
            (Some(Against::After(x)), Some(Against::After(y))) => {
                let (dx, dy) = self.digit_pair(x, y);
                Some((
                    self.lower(x, dx, is_excluded(lower))?,
                    self.upper(y, dy, is_excluded(upper))?,
                ))
            }
            (a, b) => {
                let lo = match a {
                    None | Some(Against::Below) => 0,
                    Some(Against::Above) => return None,
                    Some(Against::After(x)) => self.lower(x, self.digits(x), is_excluded(lower))?,
                };
                let hi = match b {
                    None | Some(Against::Above) => u64::MAX,
                    Some(Against::Below) => return None,
                    Some(Against::After(y)) => self.upper(y, self.digits(y), is_excluded(upper))?,
                };
                Some((lo, hi))
            }
        }
    }

    /// What follows the prefix in `bound`, if that is exactly as long as the verbatim run, which must start at the
    /// first position (the caller checks that once for both bounds).
    #[inline]
    fn whole_run<'x>(&self, bound: Bound<&'x [u8]>) -> Option<&'x [u8]> {
        let (Bound::Included(x) | Bound::Excluded(x)) = bound else {
            return None;
        };
        // Without a call to compare no bytes, where there is no prefix.
        let suffix = match self.prefix {
            [] => x,
            prefix => x.strip_prefix(prefix)?,
        };
        (suffix.len() == usize::from(self.verbatim.end)).then_some(suffix)
    }

    fn bound<'x>(&self, bound: Bound<&'x [u8]>) -> Option<Against<'x>> {
        match bound {
            Bound::Included(x) | Bound::Excluded(x) => Some(self.against(x)),
            Bound::Unbounded => None,
        }
    }

    /// The least value of a key `≥ a` (`> a` if `excluded`), for `a` = the prefix, `suffix`, whose digits are
    /// `digits`; `None` if every key is below it.
    fn lower(&self, suffix: &[u8], digits: Digits, excluded: bool) -> Option<u64> {
        match digits {
            // A key above `a` with `a`'s value agrees with `a` (zero-padded) on every projected position, so it is
            // `a` followed by more bytes. When no key is longer after the prefix than `a`, none is: every key
            // above `a` projects above its value.
            Digits::Exact(v) if excluded && self.longest.is_some_and(|k| suffix.len() >= k) => {
                u64::try_from(v + 1).ok()
            }
            Digits::Exact(v) | Digits::Between(v) => u64::try_from(v).ok(),
        }
    }

    /// The greatest value of a key `≤ b` (`< b` if `excluded`), for `b` = the prefix, `suffix`, whose digits are
    /// `digits`; `None` if every key is above it.
    fn upper(&self, suffix: &[u8], digits: Digits, excluded: bool) -> Option<u64> {
        match digits {
            // A key below `b` with `b`'s value is `b` cut before trailing zero bytes, or agrees with `b` past the
            // projected positions: when all of `b` is projected and it does not end with a zero byte, every key
            // below it projects below its value.
            Digits::Exact(v) if excluded && strict(suffix, self.positions()) => {
                v.checked_sub(1).map(clamp)
            }
            Digits::Exact(v) => Some(clamp(v)),
            // Keys sharing the digits before the unknown byte and below it in that byte end just under `v`.
            Digits::Between(v) => v.checked_sub(1).map(clamp),
        }
    }
}

/// The digits at positions `from..to` of `suffix` (zero-padded), positions of a verbatim run that ends at `end`
/// (`end − from ≤ 8`): the bytes there as a big-endian number, times `256^(end − to)`.
#[inline]
fn big_endian(suffix: &[u8], from: usize, to: usize, end: usize) -> u64 {
    if from >= to {
        return 0;
    }
    // Shifts below 64 bits: `1 ≤ to − from ≤ end − from ≤ 8`.
    let width = 8 * (to - from) as u32;
    let word = |at: usize| {
        suffix
            .get(at..at.checked_add(8)?)
            .and_then(|b| b.try_into().ok())
            .map(u64::from_be_bytes)
    };
    // One load where 8 bytes end at `to` (a bound as long as the keys) or start at `from`; byte by byte otherwise.
    let digits = if let Some(w) = to.checked_sub(8).and_then(word) {
        w & u64::MAX.wrapping_shr(64 - width)
    } else if let Some(w) = word(from) {
        w.wrapping_shr(64 - width)
    } else {
        (from..to).fold(0u64, |acc, j| {
            acc << 8 | u64::from(suffix.get(j).copied().unwrap_or(0))
        })
    };
    digits.wrapping_shl(8 * (end - to) as u32)
}

/// The step of the last position, `at`, when it is the padding alphabet `{0}` of weight 1: any byte but 0 ranks 1
/// there and is outside.
#[inline(always)]
fn padding(suffix: &[u8], at: usize, acc: u128) -> Result<u128, u128> {
    match suffix.get(at).copied().unwrap_or(0) {
        0 => Ok(acc),
        _ => Err(acc + 1),
    }
}

/// Whether every byte of `suffix` is projected and it does not end with a zero byte.
fn strict(suffix: &[u8], positions: usize) -> bool {
    suffix.len() <= positions && suffix.last() != Some(&0)
}

/// Whether `bound` leaves its key out.
fn is_excluded(bound: Bound<&[u8]>) -> bool {
    matches!(bound, Bound::Excluded(_))
}

/// A value in 64 bits (the writer's weights keep every key's below 2^64; corrupt ones saturate).
fn clamp(v: u128) -> u64 {
    u64::try_from(v).unwrap_or(u64::MAX)
}

/// The word ranks of an alphabet: entry `w` counts the alphabet's values in its words before `w`.
pub(crate) fn word_ranks(alphabet: &[u64; 4]) -> [u8; WORD_RANKS_LEN] {
    let mut ranks = [0u8; WORD_RANKS_LEN];
    let mut below = 0u32;
    for (rank, word) in ranks.iter_mut().zip(alphabet) {
        *rank = below as u8; // NOTE: at most 192
        below += word.count_ones();
    }
    ranks
}

/// Windows a writer's passes take at a time: 4 KiB, in L1 while a pass reads them once a position.
const BLOCK: usize = 256;

/// Byte `j` of a window kept as two words, high then low.
#[inline(always)]
fn byte_at(window: &[u64; 2], j: usize) -> u8 {
    window
        .get(j / 8)
        .map_or(0, |w| (w >> (8 * (7 - j % 8))) as u8)
}

/// How many leading bytes every window of `block` shares, for windows in non-decreasing order: those the first
/// and the last share (sorted keys of a cluster, or any keys' first byte in a small block, differ only further on).
fn shared_bytes(block: &[[u64; 2]]) -> usize {
    let word = |w: &[u64; 2]| u128::from(w[0]) << 64 | u128::from(w[1]);
    match (block.first(), block.last()) {
        (Some(first), Some(last)) => (word(first) ^ word(last)).leading_zeros() as usize / 8,
        _ => 0,
    }
}

/// Projects keys' windows in place: `words` holds each key's window (its first [`MAX_POSITIONS`] bytes after the
/// prefix, zero-padded, read as a big-endian u128), in non-decreasing order (the keys' order), as two words, high
/// then low; the first half becomes their projected values for the writer's `alphabets` and `weights` (every byte
/// of a window is in its alphabet). A position whose alphabet holds one byte adds nothing; the verbatim run is read
/// as one word; every other position through a table of its bytes' ranks times its weight. Returns the number of
/// distinct values (they come in the windows' order).
pub(crate) fn project_in_place(
    words: &mut [u64],
    alphabets: &[[u64; 4]],
    weights: &[u64],
) -> usize {
    let size = |a: &[u64; 4]| a.iter().map(|w| w.count_ones()).sum::<u32>();
    let run = Verbatim::find(
        alphabets.len(),
        |j| alphabets.get(j).is_some_and(|a| size(a) == 256),
        |j| alphabets.get(j) == Some(&[1, 0, 0, 0]),
        |j| weights.get(j).copied(),
    );
    let (start, end) = (
        usize::from(run.start),
        usize::from(run.end).min(MAX_POSITIONS),
    );
    // The run's bytes: the window shifted down past the bytes after it, cut to its width (at most 8 bytes).
    let run_shift = 8 * (MAX_POSITIONS - end) as u32;
    let run_mask = match end.saturating_sub(start) {
        0 => 0,
        width => u64::MAX >> (64 - 8 * width as u32), // NOTE: 1 ≤ width ≤ 8
    };
    let tables: Vec<(usize, [u64; 256])> = alphabets
        .iter()
        .zip(weights)
        .enumerate()
        .filter(|&(j, (alphabet, _))| !(start..end).contains(&j) && size(alphabet) > 1)
        .map(|(j, (alphabet, &weight))| {
            let mut table = [0u64; 256];
            let mut rank = 0u64;
            for (b, slot) in table.iter_mut().enumerate() {
                *slot = rank.saturating_mul(weight); // NOTE: only bytes outside the alphabet can reach 2^64
                rank += alphabet.get(b / 64).map_or(0, |w| w >> (b % 64) & 1);
            }
            (j, table)
        })
        .collect();
    // Block by block: the values of a block's windows, position by position (a short loop of a shift, a load and
    // an add; a position every window of the block shares adds one constant), then stored over the first half,
    // behind the windows still to read.
    let mut distinct = 0;
    let mut previous = None;
    let mut block_values = [0u64; BLOCK];
    let mut at = 0;
    while let Some(block) = words.get(2 * at..).map(|w| w.as_chunks::<2>().0) {
        let block = block.get(..BLOCK).unwrap_or(block);
        if block.is_empty() {
            break;
        }
        let values = block_values.get_mut(..block.len()).unwrap_or_default();
        let shared = shared_bytes(block);
        let (constant, varying) = tables.split_at(tables.partition_point(|&(j, _)| j < shared));
        let first = block.first().copied().unwrap_or_default();
        let constant: u64 = constant
            .iter()
            .map(|(j, table)| {
                table
                    .get(usize::from(byte_at(&first, *j)))
                    .copied()
                    .unwrap_or(0)
            })
            .sum(); // NOTE: below the product of the radixes, at most 2^64
        for (v, &[high, low]) in values.iter_mut().zip(block) {
            *v = (((u128::from(high) << 64 | u128::from(low)) >> run_shift) as u64 & run_mask)
                + constant;
        }
        for (j, table) in varying {
            for (v, window) in values.iter_mut().zip(block) {
                // NOTE: below the product of the radixes, at most 2^64
                *v += table
                    .get(usize::from(byte_at(window, *j)))
                    .copied()
                    .unwrap_or(0);
            }
        }
        for &v in values.iter() {
            distinct += usize::from(previous != Some(v));
            previous = Some(v);
        }
        if let Some(to) = words.get_mut(at..at + values.len()) {
            to.copy_from_slice(values);
        }
        at += values.len();
    }
    distinct
}

/// The projection a writer chooses for keys whose bytes after the prefix are the windows in `words` (as
/// [`project_in_place`] takes them, in the same order), at most `longest` bytes each, for a filter sized for ranges
/// of `range_len` at the rate `fpr`: per position the alphabet of the bytes there, as many positions as keep the
/// product of the alphabet sizes within 2^64, the alphabets just before the verbatim run widened where the rate
/// allows ([`widen`]), and the weights. Returns the alphabets (32 bytes each) and the weights.
pub(crate) fn choose(
    words: &[u64],
    longest: usize,
    range_len: u64,
    fpr: f64,
) -> (Vec<[u64; 4]>, Vec<u64>) {
    // Past the longest key every window is padding: the alphabet `{0}`, without reading a byte.
    let read = longest.min(MAX_POSITIONS);
    // A byte a position a key: one store each, where setting a bit would load, or and store (a chain from key to
    // key). A position whose alphabet is full has nothing left to learn: binary keys fill theirs within a few
    // thousand keys, and then no byte is read.
    let mut seen = vec![[false; 256]; read];
    let mut open: Vec<usize> = (0..read).collect();
    for block in words.as_chunks::<2>().0.chunks(BLOCK) {
        // Position by position over a block in L1: a short loop of a shift and a store; one store for a position
        // every window of the block shares.
        let shared = shared_bytes(block);
        for &j in &open {
            let Some(seen) = seen.get_mut(j) else {
                continue;
            };
            let windows = if j < shared {
                block.get(..1)
            } else {
                Some(block)
            };
            for window in windows.unwrap_or_default() {
                if let Some(s) = seen.get_mut(usize::from(byte_at(window, j))) {
                    *s = true;
                }
            }
        }
        open.retain(|&j| seen.get(j).is_some_and(|s| s.contains(&false)));
        if open.is_empty() {
            break;
        }
    }
    let mut alphabets = vec![[1u64, 0, 0, 0]; MAX_POSITIONS];
    for (alphabet, seen) in alphabets.iter_mut().zip(&seen) {
        *alphabet = [0; 4];
        for (b, _) in seen.iter().enumerate().filter(|&(_, &s)| s) {
            if let Some(w) = alphabet.get_mut(b / 64) {
                *w |= 1 << (b % 64);
            }
        }
    }
    let radix = |a: &[u64; 4]| u128::from(alphabet_size(a).max(1));
    let mut product = 1u128;
    let mut positions = 0;
    for alphabet in &alphabets {
        // Every key's value is below the product, so it fits in a u64 up to 2^64.
        if product * radix(alphabet) > 1u128 << 64 {
            break;
        }
        product *= radix(alphabet);
        positions += 1;
    }
    alphabets.truncate(positions);
    // Positions past every key's end (only the padding byte 0) tell bounds that go on from keys that end: one is
    // kept, the others add nothing.
    let padding_only = |a: &[u64; 4]| *a == [1, 0, 0, 0];
    while alphabets.len() >= 2 && alphabets.iter().rev().take(2).all(padding_only) {
        alphabets.pop();
    }
    loop {
        // A weight of 2^64 needs leading positions every key agrees on (a common prefix cut at its cap): give up
        // the last position until the weights fit.
        if let Some(weights) = weights_of(&alphabets) {
            // Widening keeps the weights within a u64.
            widen(&mut alphabets, range_len, fpr);
            let widened = weights_of(&alphabets).unwrap_or(weights);
            return (alphabets, widened);
        }
        alphabets.pop();
    }
}

/// The number of byte values in `alphabet`.
fn alphabet_size(alphabet: &[u64; 4]) -> u32 {
    alphabet.iter().map(|w| w.count_ones()).sum()
}

/// The weights of `alphabets` (`W_j`, the product of the sizes of the alphabets after `j`), if they fit in a u64.
fn weights_of(alphabets: &[[u64; 4]]) -> Option<Vec<u64>> {
    let mut weights = vec![0u64; alphabets.len()];
    let mut w = 1u128;
    for (weight, alphabet) in weights.iter_mut().zip(alphabets).rev() {
        *weight = u64::try_from(w).ok()?;
        w *= u128::from(alphabet_size(alphabet).max(1));
    }
    Some(weights)
}

/// The share of a filter's rate that widening alphabets ([`widen`]) may add to it.
const WIDENING_SHARE: f64 = 1.0 / 32.0;

/// The full alphabet: all 256 byte values.
const FULL: [u64; 4] = [u64::MAX; 4];

/// Widens to all 256 byte values the alphabets of the positions just before the run of full ones that ends the
/// projection (the run [`Verbatim::find`] finds when the block is opened), nearest first, while the product of all
/// sizes stays within 2^64, the run within 8 positions, and the rate the widened positions add within
/// [`WIDENING_SHARE`] of `fpr` for ranges of `range_len`.
///
/// Why: a query reads a verbatim run as one word, and a position outside it costs a rank, a count of bits and a
/// product for each bound. The leading bytes of binary keys whose alphabets miss a few values (big-endian integers
/// in a thousand clusters, random prefixes: each of their first bytes sees most of the 256) gain nothing from the
/// mixed radix, whose purpose is to keep sparse alphabets (decimal digits) dense. What widening costs: a range
/// that crosses from one byte value of position `j` to the next across `g` values no key has there spans `g·W_j`
/// more projected values than it would have. A range of up to `L` crosses a boundary of position `j` with chance
/// at most `L / W_j` (and surely when `W_j ≤ L`), a gap for a share `missing / 256` of the boundaries, and the
/// added values raise its false-positive chance by at most `ε · g·W_j / L` (and at most 1): an added rate of at
/// most `missing / 256 · min(ε, L / W_j)` per position.
fn widen(alphabets: &mut [[u64; 4]], range_len: u64, fpr: f64) {
    let m = alphabets.len();
    // The padding alphabet `{0}` may end the projection, after the run (its weight is 1).
    let end = match alphabets.last() {
        Some(&[1, 0, 0, 0]) => m - 1,
        _ => m,
    };
    let mut start = end;
    while start > 0 && end - start < 8 && alphabets.get(start - 1) == Some(&FULL) {
        start -= 1;
    }
    let mut product: u128 = alphabets
        .iter()
        .map(|a| u128::from(alphabet_size(a).max(1)))
        .product();
    let mut budget = fpr * WIDENING_SHARE;
    while start > 0 && end - start < 8 {
        let j = start - 1;
        let size = alphabets
            .get(j)
            .map_or(1, |a| u128::from(alphabet_size(a).max(1)));
        // NOTE: `end − start < 8`: the run's weight fits
        let weight = (1u64 << (8 * (end - start))) as f64;
        let added = (256 - size) as f64 / 256.0 * fpr.min(range_len as f64 / weight);
        let widened = product / size * 256;
        // The first weight, the product of the sizes after position 0, must stay below 2^64.
        let first_size = match j {
            0 => 256,
            _ => alphabets
                .first()
                .map_or(1, |a| u128::from(alphabet_size(a).max(1))),
        };
        if added > budget || widened > 1u128 << 64 || widened / first_size >= 1u128 << 64 {
            break;
        }
        let Some(alphabet) = alphabets.get_mut(j) else {
            break;
        };
        *alphabet = FULL;
        product = widened;
        budget -= added;
        start = j;
    }
}

/// Grafite's hash (Costa, Ferragina & Vinciguerra, SIGMOD 2024) of a projected value `v` into `0..universe`:
/// `(q(v >> run_log2) + (v mod 2^run_log2)) mod universe`, with `q(i) = fastrange64(mix(i + φ), universe)`.
/// Values in one aligned run of `2^run_log2` keep their distances (a range inside the run is a run of codes),
/// and runs land at independent random offsets. Requires `universe ≥ 1` and `2^run_log2 ≤ universe`.
#[inline]
pub(crate) fn code(v: u64, run_log2: u32, universe: u64) -> u64 {
    let offset = v & low_mask(run_log2);
    wrap(run_base(v >> run_log2, universe), offset, universe)
}

/// The runs' length, as a power of two: the largest `2^t ≤ universe` (Grafite's runs are as long as the
/// universe; a power of two no shorter than half of it keeps a run's offsets distinct codes with a shift instead of
/// a division, and a range of `ℓ ≤ L` crosses into a second run only with probability `ℓ / 2^t ≤ 2 · ε / n`).
/// Requires `universe ≥ 1`.
#[inline]
pub(crate) const fn run_log2(universe: u64) -> u32 {
    63 - universe.leading_zeros()
}

/// `q(run)`: where the run of values `run · 2^range_log2 ..` starts among the codes.
#[inline]
pub(crate) fn run_base(run: u64, universe: u64) -> u64 {
    fastrange64(splitmix64(run, 1), universe)
}

/// `(base + offset) mod universe` for `base < universe` and `offset < universe` (a run's offsets are below
/// `2^range_log2 ≤ universe`, which `decode` checks): the sum is below `2 · universe`, so one subtraction does it,
/// where a 128-bit remainder is a slow library call. The sum may pass 2^64; then it is above `universe` too.
#[inline]
pub(crate) fn wrap(base: u64, offset: u64, universe: u64) -> u64 {
    match base.overflowing_add(offset) {
        (sum, false) if sum < universe => sum,
        (sum, _) => sum.wrapping_sub(universe),
    }
}

/// `2^bits - 1`, for `bits` in `0..=63`.
#[inline]
pub(crate) const fn low_mask(bits: u32) -> u64 {
    (1u64 << bits) - 1
}
