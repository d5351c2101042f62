//! FORMAT.md section 9, from the text alone: a table filter's answers from its point block (a filter block, or a
//! partition index and the partitions it names) and its range block. Every answer is `false` only for "absent".

use super::{
    Kind, SpecBlock, SpecBound, SpecExtractor, SpecIndex, SpecPartition, SpecRange,
    SpecRangeAnswer, open, open_index, partition_for,
};

/// The blocks of one table filter as a store keeps them: partitions are found by their entry's offset, an index
/// into `blocks`.
pub struct SpecTable<'a> {
    pub point: Option<&'a [u8]>,
    pub range: Option<&'a [u8]>,
    pub blocks: &'a [&'a [u8]],
}

/// The point block, opened.
enum Point<'a> {
    None,
    /// Did not open or verify: "may contain" for every question it takes part in.
    Unusable,
    Block(SpecBlock<'a>),
    Index(SpecIndex),
}

/// The section 4.5 range rules' "empty" range.
fn is_empty(lower: SpecBound<'_>, upper: SpecBound<'_>) -> bool {
    use SpecBound::{Excluded, Included};
    match (lower, upper) {
        (Included(a), Included(b)) => a > b,
        (Included(a) | Excluded(a), Included(b) | Excluded(b)) => a >= b,
        _ => false,
    }
}

/// Section 8's `u`: `s` with its trailing `0xFF` bytes dropped and its last byte incremented; `None` when `s` is
/// empty or all `0xFF`.
fn upper_of(s: &[u8]) -> Option<Vec<u8>> {
    let mut u = s.to_vec();
    while u.last() == Some(&0xFF) {
        u.pop();
    }
    let last = u.last_mut()?;
    *last += 1;
    Some(u)
}

impl<'a> SpecTable<'a> {
    /// Section 9: a block that opens and verifies in the other slot's kind (a Range block as the point block, a
    /// hash kind or an index as the range block) refuses the pair.
    pub fn in_their_places(&self) -> bool {
        let verified = |bytes: &[u8]| {
            let index =
                bytes.len() >= 36 && bytes[bytes.len() - 31] == 16 && open_index(bytes).is_ok();
            let block = open(bytes).ok().filter(|b| b.checksum_ok);
            let range = block
                .as_ref()
                .is_some_and(|b| matches!(b.kind, Kind::Range { .. }));
            (index, range, block.is_some())
        };
        let point_ok = self.point.is_none_or(|bytes| !verified(bytes).1);
        let range_ok = self.range.is_none_or(|bytes| {
            let (index, range, block) = verified(bytes);
            !index && (range || !block)
        });
        point_ok && range_ok
    }

    fn point(&self) -> Point<'a> {
        let Some(bytes) = self.point else {
            return Point::None;
        };
        if bytes.len() >= 36 && bytes[bytes.len() - 31] == 16 {
            // Section 3: tag 16 (in a version-2 trailer) is a partition index.
            return match open_index(bytes) {
                Ok(index) => Point::Index(index),
                Err(_) => Point::Unusable,
            };
        }
        match open(bytes) {
            Ok(block) if block.checksum_ok && !matches!(block.kind, Kind::Range { .. }) => {
                Point::Block(block)
            }
            _ => Point::Unusable,
        }
    }

    /// Section 8: partition `i`'s bytes, if they load and pass every check against the entry.
    fn partition(&self, entry: &SpecPartition) -> Option<SpecBlock<'a>> {
        let bytes = *self.blocks.get(usize::try_from(entry.offset).ok()?)?;
        let block = open(bytes).ok()?;
        let stored_crc = u32::from_le_bytes(bytes[bytes.len() - 4..].try_into().ok()?);
        (block.checksum_ok
            && !matches!(block.kind, Kind::Range { .. })
            && bytes.len() as u64 == entry.len
            && block.num_keys == entry.num_keys
            && stored_crc == entry.checksum)
            .then_some(block)
    }

    /// The range block's answer (`ask`'s), or "may contain" without a usable one.
    fn range_says(&self, ask: impl FnOnce(&SpecRange) -> bool) -> bool {
        let Some(bytes) = self.range else {
            return true;
        };
        match open(bytes) {
            Ok(block) if block.checksum_ok && matches!(block.kind, Kind::Range { .. }) => {
                block.range().is_none_or(|range| ask(&range))
            }
            _ => true,
        }
    }

    /// Section 2.1's whole-key question to one block, or the prefix question for the key's prefix when the block
    /// holds prefixes only and `extractor` is the one it names.
    fn key_in(
        block: &SpecBlock<'_>,
        key: &[u8],
        h: u64,
        extractor: Option<SpecExtractor>,
        hash: &dyn Fn(&[u8]) -> u64,
    ) -> bool {
        if block.whole_keys {
            return block.may_contain_hash(h);
        }
        match extractor {
            Some(e) if block.prefix_name.as_deref() == Some(e.name().as_str()) => {
                match e.prefix_len(key) {
                    Some(n) => block.may_contain_hash(hash(&key[..n])),
                    None => true,
                }
            }
            _ => true,
        }
    }

    /// A key `k` with hash `h`: the point block's answer and the range block's, "absent" if either says so.
    pub fn may_contain_key(
        &self,
        key: &[u8],
        extractor: Option<SpecExtractor>,
        hash: &dyn Fn(&[u8]) -> u64,
    ) -> bool {
        let h = hash(key);
        let point = match self.point() {
            Point::None | Point::Unusable => true,
            Point::Block(block) => Self::key_in(&block, key, h, extractor, hash),
            Point::Index(index) => match partition_for(&index.partitions, key) {
                None => false,
                Some(i) => self
                    .partition(&index.partitions[i])
                    .is_none_or(|block| Self::key_in(&block, key, h, extractor, hash)),
            },
        };
        point && self.range_says(|r| r.may_contain(key))
    }

    /// A prefix scan over `s`: the point block's prefix question (over partitions, section 8) and the range
    /// block asked about `[s, u)`.
    pub fn may_contain_scan(
        &self,
        s: &[u8],
        extractor: Option<SpecExtractor>,
        hash: &dyn Fn(&[u8]) -> u64,
    ) -> bool {
        let u = upper_of(s);
        let prefix_hash = extractor.and_then(|e| e.scan_len(s).map(|n| (e.name(), hash(&s[..n]))));
        let point = match (self.point(), &prefix_hash) {
            (Point::None | Point::Unusable, _) | (_, None) => true,
            (Point::Block(block), Some((name, h))) => block.may_contain_prefix(name, *h),
            (Point::Index(index), Some((name, h))) => {
                if index.prefix_name.as_deref() != Some(name.as_str()) {
                    true
                } else {
                    let parts = &index.partitions;
                    match parts.iter().position(|p| p.separator.as_slice() >= s) {
                        None => false,
                        Some(first) => {
                            let last = u
                                .as_ref()
                                .and_then(|u| parts.iter().position(|p| &p.separator >= u))
                                .unwrap_or(parts.len() - 1);
                            parts[first..=last].iter().any(|entry| {
                                self.partition(entry)
                                    .is_none_or(|b| b.may_contain_prefix(name, *h))
                            })
                        }
                    }
                }
            }
        };
        let upper = u
            .as_deref()
            .map_or(SpecBound::Unbounded, SpecBound::Excluded);
        point
            && self.range_says(|r| {
                r.may_contain_range(SpecBound::Included(s), upper) != SpecRangeAnswer::Absent
            })
    }

    /// A range: "absent" if empty (section 4.5); otherwise the range block's answer, the key's question for a
    /// range of one key (with the reader's extractor, as a key's), and "absent" past a partition index's last
    /// separator.
    pub fn may_contain_range(
        &self,
        lower: SpecBound<'_>,
        upper: SpecBound<'_>,
        extractor: Option<SpecExtractor>,
        hash: &dyn Fn(&[u8]) -> u64,
    ) -> bool {
        if is_empty(lower, upper) {
            return false;
        }
        if let (Point::Index(index), SpecBound::Included(k) | SpecBound::Excluded(k)) =
            (self.point(), lower)
            && partition_for(&index.partitions, k).is_none()
        {
            return false;
        }
        let range =
            self.range_says(|r| r.may_contain_range(lower, upper) != SpecRangeAnswer::Absent);
        let point = match (lower, upper) {
            (SpecBound::Included(a), SpecBound::Included(b)) if a == b => {
                let only_point = SpecTable {
                    point: self.point,
                    range: None,
                    blocks: self.blocks,
                };
                only_point.may_contain_key(a, extractor, hash)
            }
            _ => true,
        };
        range && point
    }
}
