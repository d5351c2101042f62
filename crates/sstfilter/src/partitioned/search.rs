//! Finding a key's partition without a byte compare at every step of the search: the separators' heads (the 8
//! bytes after the prefix all of them share, as one big-endian integer each) are searched first, without
//! branching on the data, and whole separators are compared only among those whose head equals the key's.

use core::cmp::Ordering;

/// The separators of one index, reduced to what a search needs first. Built once when the index is opened.
#[derive(Clone, Debug, Default)]
pub(crate) struct SeparatorHeads {
    /// The prefix every separator starts with (that of the first and the last, which are sorted).
    common: Vec<u8>,
    /// Separator `i`'s 8 bytes after `common`, zero-padded, big-endian: a non-decreasing list whose order agrees
    /// with the separators' wherever two heads differ.
    heads: Vec<u64>,
}

impl SeparatorHeads {
    /// The heads of `separators`, which must be in strictly increasing order (an index's open checks it).
    pub(crate) fn new<'a>(separators: impl Iterator<Item = &'a [u8]> + Clone) -> Self {
        let (Some(first), Some(last)) = (separators.clone().next(), separators.clone().last())
        else {
            return SeparatorHeads::default();
        };
        let shared = first.iter().zip(last).take_while(|(a, b)| a == b).count();
        let common = first.get(..shared).unwrap_or_default().to_vec();
        let heads = separators
            .map(|s| head(s.get(shared..).unwrap_or_default()))
            .collect();
        SeparatorHeads { common, heads }
    }

    /// The position of the first separator `>= key` (the number of separators if there is none), where
    /// `separator(i)` gives separator `i` for the compares the heads cannot decide.
    pub(crate) fn position_of<'a>(
        &self,
        key: &[u8],
        separator: impl Fn(usize) -> Option<&'a [u8]>,
    ) -> usize {
        let shared = self.common.len().min(key.len());
        match key.get(..shared).cmp(&self.common.get(..shared)) {
            // Below the shared prefix, or a proper prefix of it: before every separator.
            Ordering::Less => return 0,
            Ordering::Equal if key.len() < self.common.len() => return 0,
            // Above it: past every separator.
            Ordering::Greater => return self.heads.len(),
            Ordering::Equal => {}
        }
        let k = head(key.get(shared..).unwrap_or_default());
        // Separators whose head is below the key's are below the key, and those above it above; only heads equal
        // to the key's (rarely more than one) leave the order open.
        let lo = first_at_least(&self.heads, k);
        let mut hi = lo;
        while self.heads.get(hi) == Some(&k) {
            hi += 1;
        }
        first_separator_at_least(lo, hi, key, separator)
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
#[expect(
    clippy::big_endian_bytes,
    reason = "an integer whose order is the bytes' order, for comparing in memory; never stored"
)]
fn head(bytes: &[u8]) -> u64 {
    let mut word = [0u8; 8];
    for (w, b) in word.iter_mut().zip(bytes) {
        *w = *b;
    }
    u64::from_be_bytes(word)
}

/// The first position of the non-decreasing `heads` whose head is at least `k` (the length if none is): a binary
/// search whose steps depend only on the length, each choosing its half with a conditional move rather than a
/// branch the data decides (which a search over random keys mispredicts half the time).
fn first_at_least(heads: &[u64], k: u64) -> usize {
    let mut base = 0;
    let mut size = heads.len();
    while size > 1 {
        let half = size / 2;
        // `base + half < heads.len()` throughout; a missing head counts as "at least k", never skipping one.
        let below = heads.get(base + half).is_some_and(|&h| h < k);
        base = core::hint::select_unpredictable(below, base + half, base);
        size -= half;
    }
    base + usize::from(heads.get(base).is_some_and(|&h| h < k))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The plain search the heads must agree with.
    fn reference(separators: &[Vec<u8>], key: &[u8]) -> usize {
        separators.partition_point(|s| s.as_slice() < key)
    }

    fn check(separators: &[Vec<u8>], keys: &[Vec<u8>]) {
        let heads = SeparatorHeads::new(separators.iter().map(Vec::as_slice));
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
