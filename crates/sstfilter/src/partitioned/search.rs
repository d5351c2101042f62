//! Finding a key's partition without a byte compare at every step of the search: the separators' heads (the 8
//! bytes after the prefix all of them share, as one big-endian integer each) are searched first, without
//! branching on the data, and whole separators are compared only among those whose head equals the key's.

use core::cmp::Ordering;

use crate::order::compare;

/// The separators of one index, reduced to what a search needs first. Built once when the index is opened.
///
/// The heads are kept as a static B+-tree of 64-byte nodes (8 heads each, one cache line): level 0 is every head
/// in order, padded with `u64::MAX` to whole nodes; each level above holds the last head of every node of the
/// level below, until one node holds them all. A search reads one node a level from the top (4 dependent lines
/// for 3,000 partitions, where a binary search over the heads reads 12) and counts its heads below the key's
/// without a branch.
#[derive(Clone, Debug, Default)]
pub(crate) struct SeparatorHeads {
    /// The prefix every separator starts with (that of the first and the last, which are sorted).
    common: Vec<u8>,
    /// Separator `i`'s 8 bytes after `common`, zero-padded, big-endian: a non-decreasing list whose order agrees
    /// with the separators' wherever two heads differ. Level 0 of the tree, nodes `0..levels[0].1`.
    nodes: Vec<Node>,
    /// Each level's first node in `nodes` and node count, the top level last.
    levels: Vec<(usize, usize)>,
    /// The number of heads (separators).
    len: usize,
}

/// Eight heads on one cache line.
#[derive(Clone, Copy, Debug)]
#[repr(align(64))]
struct Node([u64; NODE]);

/// Heads a node holds.
const NODE: usize = 8;

impl SeparatorHeads {
    /// The heads of `separators`, which must be in strictly increasing order (an index's open checks it).
    pub(crate) fn new<'a>(separators: impl Iterator<Item = &'a [u8]> + Clone) -> Self {
        let (Some(first), Some(last)) = (separators.clone().next(), separators.clone().last())
        else {
            return SeparatorHeads::default();
        };
        let shared = first.iter().zip(last).take_while(|(a, b)| a == b).count();
        let common = first.get(..shared).unwrap_or_default().to_vec();
        // Level 0: every head, in nodes filled as the separators come (no list of heads in between).
        let mut nodes = Vec::new();
        let mut len = 0;
        for separator in separators {
            let at = len % NODE;
            if at == 0 {
                nodes.push(Node([u64::MAX; NODE]));
            }
            if let Some(slot) = nodes.last_mut().and_then(|node| node.0.get_mut(at)) {
                *slot = head(separator.get(shared..).unwrap_or_default());
            }
            len += 1;
        }
        // Each level above: the last head of each node below (`u64::MAX` for a last node not full, which is
        // never below a key, as every node's last head it stands for is not).
        let mut levels = vec![(0, nodes.len())];
        while let Some(&(start, count)) = levels.last().filter(|&&(_, count)| count > 1) {
            let next = nodes.len();
            for first in (start..start + count).step_by(NODE) {
                let mut node = Node([u64::MAX; NODE]);
                for (slot, below) in node
                    .0
                    .iter_mut()
                    .zip(first..(first + NODE).min(start + count))
                {
                    *slot = nodes.get(below).map_or(u64::MAX, |n| n.0[NODE - 1]);
                }
                nodes.push(node);
            }
            levels.push((next, nodes.len() - next));
        }
        SeparatorHeads {
            common,
            nodes,
            levels,
            len,
        }
    }

    /// Head `i`.
    fn head(&self, i: usize) -> Option<u64> {
        (i < self.len).then(|| self.nodes.get(i / NODE)?.0.get(i % NODE).copied())?
    }

    /// The position of the first separator `>= key` (the number of separators if there is none), where
    /// `separator(i)` gives separator `i` for the compares the heads cannot decide.
    pub(crate) fn position_of<'a>(
        &self,
        key: &[u8],
        separator: impl Fn(usize) -> Option<&'a [u8]>,
    ) -> usize {
        let shared = self.common.len().min(key.len());
        match compare(
            key.get(..shared).unwrap_or_default(),
            self.common.get(..shared).unwrap_or_default(),
        ) {
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
        let mut hi = lo;
        while self.head(hi) == Some(k) {
            hi += 1;
        }
        first_separator_at_least(lo, hi, key, separator)
    }

    /// The number of heads below `k`, which is the position of the first head at least `k` (heads are sorted).
    /// From the top level down: in the node chosen so far, the heads below `k` number the node's children (the
    /// nodes of the level below) whose last head is below `k`, so the first child that may hold a head `>= k` is
    /// that count further on; at level 0 the count is the position itself. Padding, `u64::MAX`, is never below `k`.
    fn first_at_least(&self, k: u64) -> usize {
        let mut at = 0;
        for &(start, count) in self.levels.iter().rev() {
            // Every node of the level below ends below `k` (so does every head): past the last separator.
            if at >= count {
                return self.len;
            }
            let Some(node) = self.nodes.get(start + at) else {
                return self.len;
            };
            let below: usize = node.0.iter().map(|&h| usize::from(h < k)).sum();
            at = at * NODE + below;
        }
        at
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
    if let Some(word) = bytes.first_chunk::<8>() {
        return u64::from_be_bytes(*word);
    }
    // Shorter: byte by byte (a copy of a variable length would be a call to `memcpy`, on every lookup).
    bytes
        .iter()
        .zip((0..8).rev())
        .fold(0, |word, (&b, at)| word | u64::from(b) << (8 * at))
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
    #[expect(
        clippy::big_endian_bytes,
        reason = "keys whose byte order is their numbers' order"
    )]
    fn agrees_for_every_tree_height_and_at_every_node_edge() {
        // Counts around each node and level boundary (8, 64, 512, 4,096 heads), separators 3 apart so that keys
        // fall on, between, below and above them; with and without two last ones whose heads are all 0xFF (the
        // padding's own value).
        let counts = [
            1usize, 2, 7, 8, 9, 15, 16, 17, 63, 64, 65, 72, 511, 512, 513, 4095, 4096, 4097,
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
            let heads = SeparatorHeads::new(separators.iter().map(Vec::as_slice));
            let height = heads.levels.len();
            let mut expected = 1u32;
            while (n + top).div_ceil(NODE.pow(expected - 1)) > NODE {
                expected += 1;
            }
            assert_eq!(height, expected as usize, "{n} separators");
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
