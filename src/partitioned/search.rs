//! Finding a key's partition without a byte compare at every step of the search: the separators' heads (the 8
//! bytes after the prefix all of them share, as one big-endian integer each) are searched first, from the slot the
//! key's head falls in, and whole separators are compared only among those whose head equals the key's.

use core::cmp::Ordering;

use crate::order::compare;

/// The separators of one index, reduced to what a search needs first. Built once when the index is opened.
///
/// The heads are sorted into `2^b` slots (`2^b` the first power of two at least the number of heads) by a map that
/// keeps their order ([`Slots`]), and each slot keeps the position of its first head: a key's head names its slot in
/// a few instructions, and the slot the few heads (most often none to two) its position lies among. So a search
/// reads one line of slots and one of heads, where a tree of heads reads a line a level; heads that still crowd
/// into a slot are searched by halves, never worse than a binary search over them all.
#[derive(Clone, Debug, Default)]
pub(crate) struct SeparatorHeads {
    /// The prefix every separator starts with (that of the first and the last, which are sorted).
    common: Vec<u8>,
    /// The prefix's head, and the bits of a head it sets (none when longer than 8 bytes: then compared in full).
    common_head: u64,
    common_mask: u64,
    /// Separator `i`'s 8 bytes after `common`, zero-padded, big-endian: a non-decreasing list whose order agrees
    /// with the separators' wherever two heads differ; then [`WINDOW`] of `u64::MAX` (never below a key's head),
    /// so that a window of heads from any position up to `len` reads.
    heads: Vec<u64>,
    /// Slot `t`'s first position: the number of heads whose slot is below `t`; one more entry, `len`.
    starts: Vec<u32>,
    /// How a head is mapped to its slot.
    slots: Slots,
    /// The number of heads (separators).
    len: usize,
}

/// A map from heads to slots that keeps their order (a greater head never has a lower slot), so that the heads of
/// slots below a key's are below the key and those of slots above it above it.
#[derive(Clone, Debug)]
enum Slots {
    /// The span from the first head to the last cut into equal slots: the head less the first, shifted right.
    /// Right for heads spread evenly over their integers, as hashed or counted binary keys are.
    Span { first: u64, shift: u32 },
    /// The head's first bytes as digits of a number whose digit at each byte is the byte's rank among those the
    /// separators have there (two in the first byte and ten in the others, for decimal ids), shifted right: the
    /// slots then spread over the values the heads take, where most of a span would lie between them.
    Ranks {
        /// For each of the first bytes (up to 8) and each byte value: the number of the separators' values there
        /// below it times the weight of its digit (the product of the later bytes' numbers of values), shifted
        /// left by [`FLAG_BITS`], plus one if it is one of those values.
        digits: Vec<[u32; 256]>,
        shift: u32,
    },
}

/// The low bits of a digit's table entry, one where the byte is one of the separators' values there: the entries of
/// a head whose ranked bytes all are add up to its number above these bits and to the number of bytes ranked (at
/// most 8) in them.
const FLAG_BITS: u32 = 4;

/// The bound on the ranks' number, so that it fits in a `u32` above its flags.
const MAX_RANKED: u64 = 1 << (u32::BITS - FLAG_BITS - 1);

impl Default for Slots {
    fn default() -> Self {
        Slots::Span { first: 0, shift: 0 }
    }
}

/// Heads compared at once, without a branch, when a slot holds no more.
const WINDOW: usize = 4;

impl Slots {
    /// The slot of `k`, possibly past the last (the caller bounds it).
    #[inline]
    fn of(&self, k: u64) -> u64 {
        match self {
            Slots::Span { first, shift } => k.saturating_sub(*first) >> shift,
            Slots::Ranks { digits, shift } => {
                let bytes = head_bytes(k);
                // Wrapping: the flags never carry (at most 8 in 4 bits), and where every byte is one of the
                // separators' the number is below `MAX_RANKED`; only the other entries (which go to `between`) can
                // add past 2^32.
                let sum = digits
                    .iter()
                    .zip(&bytes)
                    .map(|(digit, &byte)| digit.get(usize::from(byte)).copied().unwrap_or(0))
                    .fold(0u32, u32::wrapping_add);
                if (sum & ((1 << FLAG_BITS) - 1)) as usize == digits.len() {
                    u64::from(sum >> FLAG_BITS) >> shift
                } else {
                    between(digits, &bytes) >> shift
                }
            }
        }
    }

    /// The span from `first` to `last` in `2^bits` slots.
    fn span(first: u64, last: u64, bits: u32) -> Slots {
        let shift = (u64::BITS - (last - first).leading_zeros()).saturating_sub(bits);
        Slots::Span { first, shift }
    }

    /// The ranks of the first bytes of `heads` (sorted), enough of them to tell about `slots` values apart (or
    /// [`MAX_RANKED`]); `None` where every byte takes every value (the span is then the better map) or where more
    /// than `tables` bytes would be ranked.
    fn ranked(heads: &[u64], slots: u64, tables: usize) -> Option<Slots> {
        let byte = |h: u64, j: usize| usize::from(head_bytes(h).get(j).copied().unwrap_or(0));
        // Each byte's values, as long as the product of their numbers is below what is needed.
        let mut present = Vec::new();
        let mut product = 1u64;
        for j in 0..8 {
            let mut seen = [false; 256];
            for &h in heads {
                if let Some(s) = seen.get_mut(byte(h, j)) {
                    *s = true;
                }
            }
            let count = seen.iter().filter(|&&s| s).count() as u64;
            if product * count >= MAX_RANKED {
                break;
            }
            if present.len() >= tables {
                return None;
            }
            product *= count;
            present.push(seen);
            if product >= slots {
                break;
            }
        }
        if present.iter().all(|seen| seen.iter().all(|&s| s)) {
            return None;
        }
        let mut digits = vec![[0u32; 256]; present.len()];
        let mut weight = 1u32; // NOTE: at most `product`, below `MAX_RANKED`
        for (digit, seen) in digits.iter_mut().zip(&present).rev() {
            let mut below = 0u32;
            for (entry, &s) in digit.iter_mut().zip(seen) {
                *entry = (below * weight) << FLAG_BITS | u32::from(s);
                below += u32::from(s);
            }
            weight *= below;
        }
        // The largest value a key can take is `product` (every digit carried): it falls in the last slot.
        let shift =
            (u64::BITS - (product - 1).leading_zeros()).saturating_sub(slots.trailing_zeros());
        Some(Slots::Ranks { digits, shift })
    }

    /// Slot `t`'s first position among `heads` (sorted) for each of `slots` slots, then `heads.len()`; `None` if
    /// the heads are more than a `u32` counts.
    fn starts(&self, heads: &[u64], slots: u64) -> Option<Vec<u32>> {
        let mut starts = Vec::with_capacity(usize::try_from(slots).ok()?.checked_add(1)?);
        let mut at = 0;
        for slot in 0..slots {
            while heads.get(at).is_some_and(|&h| self.of(h) < slot) {
                at += 1;
            }
            starts.push(u32::try_from(at).ok()?);
        }
        starts.push(u32::try_from(heads.len()).ok()?);
        Some(starts)
    }

    /// The number of `heads` (sorted) in slots that hold more than a window: those searched by halves.
    fn crowded(&self, heads: &[u64]) -> usize {
        let (mut crowded, mut run, mut slot) = (0, 0, None);
        for &h in heads {
            let this = Some(self.of(h));
            if this != slot {
                (run, slot) = (0, this);
            }
            run += 1;
            crowded += match run {
                n if n == WINDOW + 1 => n,
                n if n > WINDOW + 1 => 1,
                _ => 0,
            };
        }
        crowded
    }
}

/// The number of a head with a byte none of the separators has there (`digits` as in [`Slots::Ranks`]): the head
/// lies between two of theirs, and the digits after that byte count as zeros, so that it is numbered as the least
/// head above it made of their bytes would be (a greater head never gets a lower number). Out of line: a key
/// from the keys' own alphabet does not come here.
#[cold]
#[inline(never)]
fn between(digits: &[[u32; 256]], bytes: &[u8; 8]) -> u64 {
    let mut value = 0u64;
    for (digit, &byte) in digits.iter().zip(bytes) {
        let entry = digit.get(usize::from(byte)).copied().unwrap_or(0);
        value += u64::from(entry >> FLAG_BITS);
        if entry & 1 == 0 {
            break;
        }
    }
    value
}

impl SeparatorHeads {
    /// The heads of `separators`, which must be in strictly increasing order (an index's open checks it); `None`
    /// for more than `u32::MAX` of them (more than a block of 128 GiB). Allocates 12 to 16 bytes a separator, and
    /// the ranks' tables (1 KiB a byte ranked) only where they cost no more than half the heads (4 bytes more).
    pub(crate) fn new<'a>(separators: impl Iterator<Item = &'a [u8]> + Clone) -> Option<Self> {
        let (Some(first), Some(last)) = (separators.clone().next(), separators.clone().last())
        else {
            return Some(SeparatorHeads::default());
        };
        let shared = first.iter().zip(last).take_while(|(a, b)| a == b).count();
        let common = first.get(..shared).unwrap_or_default().to_vec();
        let common_mask = match shared {
            0..=8 => u64::MAX
                .checked_shr(8 * shared as u32)
                .map_or(u64::MAX, |m| !m),
            _ => 0,
        };
        // Allocated once at its size: the decoder-safety rule bounds what an open allocates by the block.
        let len = separators.clone().count();
        let mut heads = Vec::with_capacity(len + WINDOW);
        heads.extend(separators.map(|separator| head(separator.get(shared..).unwrap_or_default())));
        // At least two slots, so that a shift is at most 63.
        let bits = len.next_power_of_two().trailing_zeros().max(1);
        let slots = 1u64 << bits;
        let (low, high) = (heads.first().copied()?, heads.last().copied()?);
        let span = Slots::span(low, high, bits);
        // The ranks where they crowd fewer heads into slots and their tables (1 KiB a byte) cost no more than half
        // the heads.
        let slots_map = match Slots::ranked(&heads, slots, len / 256) {
            Some(ranked) if ranked.crowded(&heads) < span.crowded(&heads) => ranked,
            _ => span,
        };
        let starts = slots_map.starts(&heads, slots)?;
        heads.extend([u64::MAX; WINDOW]);
        Some(SeparatorHeads {
            common_head: head(&common),
            common_mask,
            common,
            heads,
            starts,
            slots: slots_map,
            len,
        })
    }

    /// The position of the first separator `>= key` (the number of separators if there is none), where
    /// `separator(i)` gives separator `i` for the compares the heads cannot decide.
    #[inline]
    pub(crate) fn position_of<'a>(
        &self,
        key: &[u8],
        separator: impl Fn(usize) -> Option<&'a [u8]>,
    ) -> usize {
        let shared = self.common.len().min(key.len());
        // The key against the shared prefix: in one compare of heads where the prefix has at most 8 bytes (the
        // key's bytes past it masked off; a shorter key's padding, zeros, compares as a proper prefix does).
        let order = if self.common.len() <= 8 {
            (head(key) & self.common_mask).cmp(&self.common_head)
        } else {
            compare(
                key.get(..shared).unwrap_or_default(),
                self.common.get(..shared).unwrap_or_default(),
            )
        };
        match order {
            // Below the shared prefix, or a proper prefix of it: before every separator.
            Ordering::Less => return 0,
            Ordering::Equal if key.len() < self.common.len() => return 0,
            // Above it: past every separator.
            Ordering::Greater => return self.len,
            Ordering::Equal => {}
        }
        let k = head(key.get(shared..).unwrap_or_default());
        // Separators whose head is below the key's are below the key, and those above it above; only heads equal
        // to the key's (rarely more than one) leave the order open.
        let lo = self.first_at_least(k);
        if lo >= self.len || self.heads.get(lo) != Some(&k) {
            return lo;
        }
        self.among_ties(lo, k, key, separator)
    }

    /// [`position_of`](Self::position_of) where the head at `lo`, the first at least the key's, equals it, `k`:
    /// whole separators are compared among the heads that do. Out of line: heads rarely tie with a key's.
    #[cold]
    #[inline(never)]
    fn among_ties<'a>(
        &self,
        lo: usize,
        k: u64,
        key: &[u8],
        separator: impl Fn(usize) -> Option<&'a [u8]>,
    ) -> usize {
        let mut hi = lo;
        while hi < self.len && self.heads.get(hi) == Some(&k) {
            hi += 1;
        }
        first_separator_at_least(lo, hi, key, separator)
    }

    /// The number of heads below `k`, which is the position of the first head at least `k` (heads are sorted):
    /// among the heads of `k`'s slot, as those of the slots before it are below `k` and those after it above.
    #[inline]
    fn first_at_least(&self, k: u64) -> usize {
        // A key past the last slot is past its heads: the last slot's end, `len`, bounds the search.
        let slot = usize::try_from(self.slots.of(k))
            .unwrap_or(usize::MAX)
            .min(self.starts.len().saturating_sub(2));
        let Some(&[start, end]) = self.starts.get(slot..).and_then(<[u32]>::first_chunk) else {
            return self.len; // no slots: no heads
        };
        let (start, end) = (start as usize, end as usize);
        // Heads from `end` on are above `k` (or padding), so a window past the slot counts only the slot's.
        if end - start <= WINDOW
            && let Some(window) = self.heads.get(start..start + WINDOW)
        {
            return start + window.iter().map(|&h| usize::from(h < k)).sum::<usize>();
        }
        start
            + self
                .heads
                .get(start..end)
                .map_or(0, |slot| slot.partition_point(|&h| h < k))
    }
}

/// The first position in `lo..hi` whose separator is `>= key` (`hi` if none is), by a binary search comparing
/// whole separators; `separator(i)` gives separator `i`. Over all of an index's separators, this is the search
/// without [`SeparatorHeads`].
pub(crate) fn first_separator_at_least<'a>(
    mut lo: usize,
    mut hi: usize,
    key: &[u8],
    separator: impl Fn(usize) -> Option<&'a [u8]>,
) -> usize {
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        // A separator that does not read cannot happen after open's checks; treat it as ">= key" so the search
        // moves left and never skips a partition that may hold the key.
        if separator(mid).is_some_and(|s| s < key) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

/// The first 8 bytes of `bytes`, zero-padded, as a big-endian integer: integers compare as the bytes do, except
/// that equal integers may stand for different bytes (a shorter string against one with zeros after it).
#[inline]
#[expect(
    clippy::big_endian_bytes,
    reason = "an integer whose order is the bytes' order, for comparing in memory; never stored"
)]
fn head(bytes: &[u8]) -> u64 {
    if let Some(word) = bytes.first_chunk::<8>() {
        return u64::from_be_bytes(*word);
    }
    // Shorter: byte by byte (a copy of a variable length would be a call to `memcpy`, on every lookup).
    bytes
        .iter()
        .zip((0..8).rev())
        .fold(0, |word, (&b, at)| word | u64::from(b) << (8 * at))
}

/// The bytes `head` was made of, first byte first.
#[inline]
#[expect(
    clippy::big_endian_bytes,
    reason = "the inverse of `head`: bytes in their order, for comparing in memory; never stored"
)]
fn head_bytes(head: u64) -> [u8; 8] {
    head.to_be_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The plain search the heads must agree with.
    fn reference(separators: &[Vec<u8>], key: &[u8]) -> usize {
        separators.partition_point(|s| s.as_slice() < key)
    }

    fn check(separators: &[Vec<u8>], keys: &[Vec<u8>]) {
        let heads = SeparatorHeads::new(separators.iter().map(Vec::as_slice)).unwrap();
        for key in keys {
            let found = heads.position_of(key, |i| separators.get(i).map(Vec::as_slice));
            assert_eq!(
                found,
                reference(separators, key),
                "{separators:?}, key {key:?}"
            );
        }
    }

    /// Every string over a small alphabet up to a length, sorted and distinct.
    fn strings(alphabet: &[u8], max_len: usize) -> Vec<Vec<u8>> {
        let mut out = vec![Vec::new()];
        let mut frontier = vec![Vec::new()];
        for _ in 0..max_len {
            let mut next = Vec::new();
            for s in &frontier {
                for &b in alphabet {
                    let mut t: Vec<u8> = s.clone();
                    t.push(b);
                    next.push(t);
                }
            }
            out.extend(next.iter().cloned());
            frontier = next;
        }
        out.sort();
        out
    }

    #[test]
    fn agrees_with_a_plain_search_on_every_small_case() {
        // Zeros (padding's own value), 0xFF and a middle byte; keys of every length around the separators'.
        let universe = strings(&[0, 7, 0xFF], 3);
        // Every run of up to 4 consecutive strings of the universe, and every pair, as the separators.
        let mut cases: Vec<Vec<Vec<u8>>> = vec![Vec::new()];
        for start in 0..universe.len() {
            for len in 1..=4 {
                if let Some(run) = universe.get(start..start + len) {
                    cases.push(run.to_vec());
                }
            }
            for end in start + 1..universe.len() {
                cases.push(vec![universe[start].clone(), universe[end].clone()]);
            }
        }
        for separators in &cases {
            check(separators, &universe);
        }
    }

    #[test]
    #[expect(
        clippy::big_endian_bytes,
        reason = "keys whose byte order is their numbers' order"
    )]
    fn agrees_for_every_slot_count_and_at_every_slot_edge() {
        // Counts around the powers of two that set the number of slots, separators 3 apart so that keys fall on,
        // between, below and above them and on every slot's edge (the keys cover the heads' span); evenly spread,
        // every slot holds at most a window. Then the same with two last separators whose heads are all 0xFF (the
        // padding's own value): the span is then the whole 64 bits and the others crowd into the first slot.
        let counts = [
            1usize, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 63, 64, 65, 511, 512, 513, 4095, 4096, 4097,
        ];
        for (n, top) in counts.into_iter().flat_map(|n| [(n, 0), (n, 2)]) {
            let mut separators: Vec<Vec<u8>> = (0..n as u64)
                .map(|i| [b"k".as_slice(), &(3 * i + 1).to_be_bytes()].concat())
                .collect();
            if top > 0 {
                separators.push([b"k".as_slice(), &[0xFF; 8], &[0]].concat());
                separators.push([b"k".as_slice(), &[0xFF; 9]].concat());
            }
            let mut keys: Vec<Vec<u8>> = (0..3 * n as u64 + 3)
                .map(|i| [b"k".as_slice(), &i.to_be_bytes()].concat())
                .collect();
            keys.extend([
                b"k".to_vec(),
                b"j".to_vec(),
                b"l".to_vec(),
                [b"k".as_slice(), &[0xFF; 8]].concat(),
                [b"k".as_slice(), &[0xFF; 10]].concat(),
            ]);
            check(&separators, &keys);
            let heads = SeparatorHeads::new(separators.iter().map(Vec::as_slice)).unwrap();
            assert_eq!(
                heads.starts.len(),
                (n + top).next_power_of_two().max(2) + 1,
                "{n} separators"
            );
            assert_eq!(
                heads.slots.crowded(&heads.heads[..heads.len]) > 0,
                top > 0 && n > WINDOW,
                "{n} separators, {top} more"
            );
        }
    }

    #[test]
    #[expect(
        clippy::big_endian_bytes,
        reason = "keys whose byte order is their numbers' order"
    )]
    fn agrees_where_heads_crowd_and_where_slots_are_empty() {
        // A thousand consecutive heads in the middle of a wide span, a few spread below them and ten at the top
        // (in the last slot, which keys above every head fall in too): most slots hold none, two hold more than a
        // window (searched by halves); keys on, beside and between every head.
        let mut values: Vec<u64> = (0..1000).map(|i| (1 << 40) + 2 * i).collect();
        values.extend([0, 5, 1 << 20, 1 << 50]);
        values.extend((0..10).map(|i| u64::MAX - 21 + 2 * i));
        values.sort_unstable();
        let separators: Vec<Vec<u8>> = values
            .iter()
            .map(|v| [b"id".as_slice(), &v.to_be_bytes()].concat())
            .collect();
        let keys: Vec<Vec<u8>> = values
            .iter()
            .flat_map(|&v| [v.saturating_sub(1), v, v.saturating_add(1)])
            .map(|v| [b"id".as_slice(), &v.to_be_bytes()].concat())
            .collect();
        check(&separators, &keys);
        let heads = SeparatorHeads::new(separators.iter().map(Vec::as_slice)).unwrap();
        assert!(heads.slots.crowded(&heads.heads[..heads.len]) > 0);
    }

    #[test]
    fn ranks_spread_decimal_ids_and_agree_on_bytes_between_digits() {
        // Decimal ids (two values in the first byte after the shared prefix, ten in the others): their heads crowd
        // into a few slots of their span, and spread over slots by their digits' ranks. Keys on and beside each
        // separator, and with bytes the separators do not have there (between, below and above the digits, and
        // past the ranked bytes), cut short or extended.
        let separators: Vec<Vec<u8>> = (0..3000u64)
            .map(|i| format!("usr:{:012}", 1 + i * 6661).into_bytes())
            .collect();
        let heads = SeparatorHeads::new(separators.iter().map(Vec::as_slice)).unwrap();
        assert!(
            matches!(heads.slots, Slots::Ranks { .. }),
            "{:?}",
            heads.slots
        );
        let crowded = heads.slots.crowded(&heads.heads[..heads.len]);
        assert!(
            crowded < heads.len / 20,
            "{crowded} of {} heads crowded",
            heads.len
        );
        let span = Slots::span(heads.heads[0], heads.heads[heads.len - 1], 12); // 2^12 slots for 3,000
        assert!(span.crowded(&heads.heads[..heads.len]) > heads.len / 2);
        let mut keys = Vec::new();
        for (i, s) in separators.iter().enumerate() {
            for id in [
                1 + i as u64 * 6661 - 1,
                1 + i as u64 * 6661 + 1,
                3 + i as u64 * 6661,
            ] {
                keys.push(format!("usr:{id:012}").into_bytes());
            }
            keys.push([s.as_slice(), b"abc"].concat());
            for at in [4, 8, 9, 10, 11, 12, 13, 15] {
                for byte in [0u8, b'/', b'5', b':', b'a', 0xFF] {
                    let mut k = s.clone();
                    k[at] = byte;
                    keys.push(k.clone());
                    k.truncate(at + 1);
                    keys.push(k);
                }
            }
        }
        check(&separators, &keys);
    }

    #[test]
    fn agrees_on_long_keys_for_every_prefix_length() {
        // Separators sharing 0 to 9 bytes (a prefix of up to 8 is compared as one head, a longer one byte by
        // byte), then pseudo-random bytes from a small alphabet (so that heads tie and keys fall on them); keys of
        // the prefix and 15 to 20 bytes of the same alphabet, the separators themselves extended to 16 bytes, and
        // keys below and above the prefix.
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut byte = move || {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1);
            [0u8, 1, b'm', 0xFE, 0xFF][(state >> 33) as usize % 5]
        };
        for shared in 0..=9 {
            let prefix = vec![b'p'; shared];
            let mut separators: Vec<Vec<u8>> = (0..300)
                .map(|i| {
                    let tail: Vec<u8> = (0..10 + i % 7).map(|_| byte()).collect();
                    [prefix.as_slice(), &tail].concat()
                })
                .collect();
            // The first and the last differ right after the prefix, so that it is exactly the shared one.
            separators.push([prefix.as_slice(), &[0u8; 12]].concat());
            separators.push([prefix.as_slice(), &[0xFFu8; 12]].concat());
            separators.sort();
            separators.dedup();
            let heads = SeparatorHeads::new(separators.iter().map(Vec::as_slice)).unwrap();
            assert_eq!(heads.common.len(), shared);
            let mut keys: Vec<Vec<u8>> = (0..3000)
                .map(|i| (0..15 + i % 6).map(|_| byte()).collect::<Vec<u8>>())
                .map(|tail| [prefix.as_slice(), &tail].concat())
                .collect();
            keys.extend(separators.iter().map(|s| {
                let mut k = s.clone();
                k.resize(k.len().max(16), 0);
                k
            }));
            keys.extend([vec![b'o'; 16], vec![b'q'; 16], vec![0xFF; 20]]);
            check(&separators, &keys);
        }
    }

    #[test]
    fn agrees_on_long_shared_prefixes_and_heads_that_tie() {
        // Separators sharing 4 bytes, then equal for 8 more (heads tie), then differing; and ones that end where
        // others go on with zeros.
        let mut separators: Vec<Vec<u8>> = Vec::new();
        for i in 0..200u32 {
            let mut s = b"usr:".to_vec();
            s.extend_from_slice(&[0u8; 8]);
            s.extend_from_slice(format!("{i:05}").as_bytes());
            separators.push(s);
        }
        separators.push([b"usr:".as_slice(), &[0u8; 9], &[1]].concat());
        separators.push(b"usr:\x01".to_vec());
        separators.push(b"usr:\x01\0".to_vec());
        separators.sort();
        separators.dedup();
        let mut keys: Vec<Vec<u8>> = separators.clone();
        for s in &separators {
            for cut in 0..s.len() {
                keys.push(s[..cut].to_vec());
            }
            let mut more = s.clone();
            more.push(0);
            keys.push(more);
            let mut bumped = s.clone();
            if let Some(last) = bumped.last_mut() {
                *last = last.wrapping_add(1);
            }
            keys.push(bumped);
        }
        keys.extend([
            b"usr".to_vec(),
            b"usr;".to_vec(),
            b"a".to_vec(),
            b"z".to_vec(),
        ]);
        check(&separators, &keys);
    }
}
