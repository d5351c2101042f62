//! The reader: opens a block in place (zero-copy, O(1)) and answers membership queries.

use crate::answer::{Answer, Reason};
use crate::error::{Error, Result};
use crate::format::{self, FLAG_PREFIXES_ONLY, Trailer, block_checksum};
use crate::hash::{KeyHash, key_hash};
use crate::kind::range::{self, KeyRange};
use crate::kind::{BATCH, KeyQuery, MAY_CONTAIN_ALL};
use crate::kind::{KindParams, Queries, Query};
use crate::prefix::{PrefixExtractor, PrefixProbe};
use crate::tag::FilterKind;
use core::ops::Bound;

/// A filter block opened over its bytes, which it borrows or owns without copying: `&[u8]`, `Vec<u8>`,
/// `bytes::Bytes`, a memory map — anything that is `AsRef<[u8]>`.
///
/// [`open`](Self::open) validates the structure (the trailer and the kind's parameters against the payload
/// length, in O(1)) and checks the CRC32 over the whole block (one pass over its bytes, at several GB/s): a
/// block that opens answers "absent" only from bytes it verified. Open each block once, where it enters the
/// store's cache, and keep the `FilterBlock`: queries then cost nothing more.
/// [`open_unverified`](Self::open_unverified) skips the CRC32, for bytes the store has already checked with a
/// checksum of its own over the same bytes; damaged bytes opened that way can hide keys.
///
/// The filter kind is read from the block, never from configuration, so a reader opens blocks written with any
/// policy. `FilterBlock` is `Send + Sync` when `B` is, and queries take `&self`. `B::as_ref` must return the same
/// bytes on every call (as every byte container does); if it did not, queries would still stay in bounds and
/// never panic, but their answers would be meaningless.
///
/// ```
/// use sstfilter::{BlockedBloomPolicy, FilterBlock, FilterBlockBuilder, key_hash};
///
/// let mut builder = FilterBlockBuilder::new(BlockedBloomPolicy::new(10.0)?);
/// for i in 0..1000u32 {
///     builder.add_key(format!("usr:{i:012}").as_bytes());
/// }
/// let block: Vec<u8> = builder.finish();
///
/// let filter = FilterBlock::open(block)?; // takes ownership; `&block[..]` would borrow
/// assert!(filter.may_contain(b"usr:000000000042"));
/// // Hash once, then ask every table of every level:
/// let h = key_hash(b"usr:000000000042");
/// assert!(filter.may_contain_hash(h));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct FilterBlock<B> {
    bytes: B,
    payload_len: usize,
    trailer: Trailer,
    params: KindParams,
    /// The query compiled for this block's kind and probe count, chosen once here rather than on every query.
    query: Query,
    /// The queries for whole keys: the kind's, or "may contain" for a block of prefixes only.
    key_queries: Queries,
    /// The query by key of a kind that stores keys, not hashes (Range): whole-key questions go to it.
    by_key: Option<KeyQuery>,
}

impl<B: AsRef<[u8]>> FilterBlock<B> {
    /// Opens a block: validates its trailer and parameters and checks its CRC32.
    ///
    /// Never panics and allocates nothing, whatever the bytes. An `Err` means the block cannot be used; a
    /// storage engine should then treat every key as possibly present (and count it).
    pub fn open(bytes: B) -> Result<Self> {
        let block = Self::open_unverified(bytes)?;
        block.verify()?;
        Ok(block)
    }

    /// Opens a block without checking its CRC32: the structure is validated (every query stays in bounds and
    /// never panics), but damaged bytes inside it can answer "absent" for a key that was added.
    ///
    /// Only for bytes the store verified itself, with a checksum over these same bytes, when they entered its
    /// cache (or that [`verify`](Self::verify) will check before the first query). Never panics and allocates
    /// nothing, whatever the bytes.
    pub fn open_unverified(bytes: B) -> Result<Self> {
        let block = bytes.as_ref();
        let (payload_len, trailer) = Trailer::decode(block)?;
        let params = KindParams::decode(
            trailer.kind,
            &trailer.params,
            format::payload(block, payload_len),
            trailer.num_keys,
        )?;
        let by_key = params.by_key();
        if by_key.is_some() && trailer.flags != 0 {
            // A kind that stores keys holds no prefix hashes (FORMAT.md 4.5).
            return Err(Error::BadParams {
                kind: Some(trailer.kind),
                field: "flags",
                found: u64::from(trailer.flags),
            });
        }
        let queries = params.queries();
        let key_queries = if trailer.flags & FLAG_PREFIXES_ONLY == 0 {
            queries
        } else {
            MAY_CONTAIN_ALL
        };
        Ok(FilterBlock {
            bytes,
            payload_len,
            trailer,
            params,
            query: queries.single,
            key_queries,
            by_key,
        })
    }

    /// Checks the CRC32 stored in the trailer against the block's bytes ([`open`](Self::open) already did).
    pub fn verify(&self) -> Result<()> {
        let found = block_checksum(self.bytes.as_ref());
        if found == self.trailer.checksum {
            Ok(())
        } else {
            Err(Error::ChecksumMismatch {
                expected: self.trailer.checksum,
                found,
            })
        }
    }

    /// The same block over borrowed bytes, without decoding it again.
    #[must_use]
    pub fn borrowed(&self) -> FilterBlock<&[u8]> {
        FilterBlock {
            bytes: self.bytes.as_ref(),
            payload_len: self.payload_len,
            trailer: self.trailer,
            params: self.params,
            query: self.query,
            key_queries: self.key_queries,
            by_key: self.by_key,
        }
    }

    /// Whether `key` may have been added: `false` means it certainly was not. A block of prefixes only (see
    /// [`holds_whole_keys`](Self::holds_whole_keys)) answers `true`: ask it about the key's prefix with
    /// [`may_contain_prefix`](Self::may_contain_prefix) (a [`TableFilter`](crate::TableFilter) does so itself).
    #[inline]
    #[must_use]
    pub fn may_contain(&self, key: &[u8]) -> bool {
        match self.by_key {
            Some(by_key) => by_key(&self.params, self.payload(), key),
            None => self.may_contain_hash(key_hash(key)),
        }
    }

    /// Whether a key with this hash may have been added: `false` means it certainly was not. A
    /// [`Range`](FilterKind::Range) filter stores projected keys, not hashes, and answers `true`: ask it by key.
    #[inline]
    #[must_use]
    pub fn may_contain_hash(&self, hash: KeyHash) -> bool {
        (self.key_queries.single)(&self.params, self.payload(), hash.get())
    }

    /// The answer for `key` hashed once (`hash == key_hash(key)`): by the kind's key query for a kind that stores
    /// keys, else by the hash.
    #[inline]
    pub(crate) fn may_contain_key_hashed(&self, key: &[u8], hash: KeyHash) -> bool {
        match self.by_key {
            Some(by_key) => by_key(&self.params, self.payload(), key),
            None => self.may_contain_hash(hash),
        }
    }

    /// Answers [`may_contain`](Self::may_contain) for many keys at once, writing `results[i]` for `keys[i]`.
    ///
    /// Faster per key than single queries on filters larger than the CPU cache: the keys are hashed in groups
    /// and their cache lines fetched together. Answers for the first `min(keys.len(), results.len())` keys.
    pub fn may_contain_batch<K: AsRef<[u8]>>(&self, keys: &[K], results: &mut [bool]) {
        if let Some(by_key) = self.by_key {
            let payload = self.payload();
            for (r, key) in results.iter_mut().zip(keys) {
                *r = by_key(&self.params, payload, key.as_ref());
            }
            return;
        }
        let mut hashes = [0u64; BATCH];
        let (params, payload, prefetch) = (&self.params, self.payload(), self.key_queries.prefetch);
        for (keys, results) in keys.chunks(BATCH).zip(results.chunks_mut(BATCH)) {
            // Each key's lines start on their way as soon as it is hashed, while the next keys are hashed.
            for (h, key) in hashes.iter_mut().zip(keys) {
                *h = key_hash(key.as_ref()).get();
                prefetch(params, payload, *h);
            }
            let n = keys.len().min(results.len());
            self.answer_batch(hashes.get(..n).unwrap_or_default(), results);
        }
    }

    /// Answers a group whose hashes have been through the kind's prefetch.
    fn answer_batch(&self, hashes: &[u64], results: &mut [bool]) {
        (self.key_queries.batch)(&self.params, self.payload(), hashes, results);
    }

    /// The payload: the block without its trailer (`open` checked the length).
    #[inline]
    fn payload(&self) -> &[u8] {
        format::payload(self.bytes.as_ref(), self.payload_len)
    }

    /// Whether any key that starts with `prefix` may have been added, for a block built with `extractor`'s
    /// prefixes (the question of a prefix scan). The block answers only if it holds prefixes of an extractor of
    /// that name and `prefix` determines one stored prefix; otherwise it says why it cannot
    /// ([`Reason::NoPrefixes`], [`Reason::OtherExtractor`], [`Reason::ScanNotDetermined`]), and the table must be
    /// read.
    pub fn may_contain_prefix(&self, extractor: &dyn PrefixExtractor, prefix: &[u8]) -> Answer {
        PrefixProbe::for_scan(extractor, prefix)
            .map_or(Answer::MayContain(Reason::ScanNotDetermined), |probe| {
                self.may_contain_probe(&probe)
            })
    }

    /// The block's answer for a prefix hashed once.
    pub(crate) fn may_contain_probe(&self, probe: &PrefixProbe<'_>) -> Answer {
        match self.prefix_extractor_name() {
            None => Answer::MayContain(Reason::NoPrefixes),
            Some(name) if name != probe.extractor_name() => {
                Answer::MayContain(Reason::OtherExtractor)
            }
            Some(_) => Answer::from_may_contain((self.query)(
                &self.params,
                self.payload(),
                probe.hash().get(),
            )),
        }
    }

    /// Whether any key between `lower` and `upper` may have been added: the question of a range scan, with
    /// [`Bound`] semantics (`Included`, `Excluded`, `Unbounded`).
    ///
    /// A [`Range`](FilterKind::Range) filter answers it (see [`RangePolicy`](crate::RangePolicy) for its rate); a
    /// point filter answers only a range of one key (`Included(k)` to `Included(k)`), and otherwise says it
    /// cannot. A range that no byte string lies in (lower above upper) is absent from every block.
    ///
    /// ```
    /// use std::ops::Bound::{Excluded, Included};
    /// use sstfilter::{Answer, FilterBlock, RangeFilterBuilder, RangePolicy, Reason};
    ///
    /// let key = |id: u64| [&b"k:"[..], &id.to_be_bytes()].concat();
    /// let mut builder = RangeFilterBuilder::new(RangePolicy::new(1024, 0.01)?);
    /// for id in [10, 20, 420] {
    ///     builder.add_key(&key(id))?;
    /// }
    /// let filter = FilterBlock::open(builder.finish())?;
    /// let answer = filter.may_contain_range(Included(&key(20)), Excluded(&key(21)));
    /// assert_eq!(answer, Answer::MayContain(Reason::Matched)); // holds key 20
    /// // No key from 100 to 400: absent unless a false positive (at most 1 % · 301 / 1024 here).
    /// let _ = filter.may_contain_range(Included(&key(100)), Included(&key(400)));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn may_contain_range(&self, lower: Bound<&[u8]>, upper: Bound<&[u8]>) -> Answer {
        match &self.params {
            // The filter first: it answers most questions "absent" without comparing the bounds.
            KindParams::Range(p) => {
                if range::may_contain_range(p, self.payload(), lower, upper)
                    && !range::is_empty(lower, upper)
                {
                    Answer::MayContain(Reason::Matched)
                } else {
                    Answer::Absent
                }
            }
            _ if range::is_empty(lower, upper) => Answer::Absent,
            _ => match range::single_key(lower, upper) {
                Some(key) if self.holds_whole_keys() => {
                    if self.may_contain(key) {
                        Answer::MayContain(Reason::Matched)
                    } else {
                        Answer::Absent
                    }
                }
                _ => Answer::MayContain(Reason::NoRangeFilter),
            },
        }
    }

    /// [`may_contain_range`](Self::may_contain_range) for each of `ranges`, into `results` (as many as fit): the
    /// questions of a multi-range scan, or of many scans at once. A Range filter finds the codes of the next ranges
    /// and starts their cache lines on their way before it reads a range's, so that each range's memory wait
    /// overlaps the work on the next ones; every answer equals the single question's.
    ///
    /// ```
    /// use std::ops::Bound::{Excluded, Included};
    /// use sstfilter::{Answer, FilterBlock, RangeFilterBuilder, RangePolicy};
    ///
    /// let key = |id: u64| id.to_be_bytes();
    /// let mut builder = RangeFilterBuilder::new(RangePolicy::new(1024, 0.01)?);
    /// for id in (0..1000).map(|i| i * 1000) {
    ///     builder.add_key(&key(id))?;
    /// }
    /// let filter = FilterBlock::open(builder.finish())?;
    /// let bounds: Vec<([u8; 8], [u8; 8])> = (0..100).map(|i| (key(i * 1000), key(i * 1000 + 10))).collect();
    /// let ranges: Vec<_> = bounds.iter().map(|(a, b)| (Included(&a[..]), Excluded(&b[..]))).collect();
    /// let mut answers = vec![Answer::Absent; ranges.len()];
    /// filter.may_contain_range_batch(&ranges, &mut answers);
    /// assert!(answers.iter().all(|a| a.must_read())); // each holds the key i · 1000
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn may_contain_range_batch(&self, ranges: &[KeyRange<'_>], results: &mut [Answer]) {
        let KindParams::Range(p) = &self.params else {
            for (r, &(lower, upper)) in results.iter_mut().zip(ranges) {
                *r = self.may_contain_range(lower, upper);
            }
            return;
        };
        let ranges = ranges.get(..results.len()).unwrap_or(ranges);
        range::may_contain_ranges(p, self.payload(), ranges, |i, held| {
            if let Some(r) = results.get_mut(i) {
                *r = if held {
                    Answer::MayContain(Reason::Matched)
                } else {
                    Answer::Absent
                };
            }
        });
    }

    /// The name of the prefix extractor whose prefixes the block holds, if any.
    #[must_use]
    pub fn prefix_extractor_name(&self) -> Option<&str> {
        self.trailer.prefix_extractor_name(self.bytes.as_ref())
    }

    /// Whether the block holds whole keys (every block does, but one built with prefixes only).
    #[must_use]
    pub fn holds_whole_keys(&self) -> bool {
        self.trailer.holds_whole_keys()
    }

    /// The filter kind stored in the block.
    #[must_use]
    pub fn kind(&self) -> FilterKind {
        self.trailer.kind
    }

    /// The kind's parameters, as stored in the block.
    #[must_use]
    pub fn params(&self) -> &KindParams {
        &self.params
    }

    /// Number of distinct keys the filter was built from.
    #[must_use]
    pub fn num_keys(&self) -> u64 {
        self.trailer.num_keys
    }

    /// Payload bits per key (the trailer's fixed 36 bytes are not counted); 0 for an empty filter.
    #[must_use]
    pub fn bits_per_key(&self) -> f64 {
        if self.trailer.num_keys == 0 {
            0.0
        } else {
            self.payload_len as f64 * 8.0 / self.trailer.num_keys as f64
        }
    }

    /// The theoretical false-positive rate for this filter's kind, size and key count.
    #[must_use]
    pub fn expected_fpr(&self) -> f64 {
        self.params.expected_fpr(self.trailer.num_keys)
    }

    /// The format version the block was written with: 2 when it carries a prefix section, else 1 (FORMAT.md 2).
    #[must_use]
    pub fn format_version(&self) -> u8 {
        self.trailer.version
    }

    /// The CRC32 stored in the trailer.
    pub(crate) fn stored_checksum(&self) -> u32 {
        self.trailer.checksum
    }

    /// The whole block: payload and trailer.
    #[must_use]
    pub fn as_bytes(&self) -> &[u8] {
        self.bytes.as_ref()
    }

    /// Gives back the bytes the block was opened over.
    #[must_use]
    pub fn into_inner(self) -> B {
        self.bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::TRAILER_LEN;
    use crate::{BlockedBloomPolicy, FilterBlockBuilder};

    fn block_of(keys: &[&[u8]]) -> Vec<u8> {
        let mut b = FilterBlockBuilder::new(BlockedBloomPolicy::new(10.0).unwrap());
        for k in keys {
            b.add_key(k);
        }
        b.finish()
    }

    #[test]
    fn reader_is_send_and_sync() {
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<FilterBlock<Vec<u8>>>();
        assert_send_sync::<FilterBlock<&[u8]>>();
        assert_send_sync::<FilterBlock<std::sync::Arc<[u8]>>>();
    }

    #[test]
    fn empty_key_set_gives_a_valid_block_that_contains_nothing() {
        let block = block_of(&[]);
        assert_eq!(block.len(), TRAILER_LEN);
        let f = FilterBlock::open(&block[..]).unwrap();
        assert_eq!(f.num_keys(), 0);
        assert_eq!(f.bits_per_key(), 0.0);
        for i in 0..1000u32 {
            assert!(!f.may_contain(&i.to_le_bytes()));
        }
        let mut out = [true; 3];
        f.may_contain_batch(&[b"a", b"b", b"c"], &mut out);
        assert_eq!(out, [false; 3]);
    }

    #[test]
    fn opens_borrowed_owned_and_shared_bytes() {
        let block = block_of(&[b"x", b"y"]);
        assert!(FilterBlock::open(&block[..]).unwrap().may_contain(b"x"));
        assert!(FilterBlock::open(block.clone()).unwrap().may_contain(b"y"));
        let shared: std::sync::Arc<[u8]> = block.clone().into();
        let f = FilterBlock::open(shared).unwrap();
        assert!(f.may_contain(b"x"));
        assert_eq!(&f.into_inner()[..], &block[..]);
    }

    #[test]
    fn batch_answers_equal_single_answers() {
        let keys: Vec<Vec<u8>> = (0..1000u32).map(|i| i.to_le_bytes().to_vec()).collect();
        let key_refs: Vec<&[u8]> = keys.iter().map(|k| &k[..]).step_by(2).collect();
        let block = block_of(&key_refs);
        let f = FilterBlock::open(&block[..]).unwrap();
        let mut batch = vec![false; keys.len()];
        f.may_contain_batch(&keys, &mut batch);
        for (i, k) in keys.iter().enumerate() {
            assert_eq!(batch[i], f.may_contain(k), "key {i}");
            assert_eq!(f.may_contain_hash(key_hash(k)), batch[i], "key {i}");
        }
        assert!(batch.iter().step_by(2).all(|&b| b));
    }

    #[test]
    fn verify_catches_a_flipped_payload_bit() {
        let mut block = block_of(&[b"a", b"b"]);
        block[3] ^= 0x10;
        assert!(matches!(
            FilterBlock::open(&block[..]),
            Err(Error::ChecksumMismatch { .. })
        ));
        let f = FilterBlock::open_unverified(&block[..]).unwrap();
        assert!(matches!(f.verify(), Err(Error::ChecksumMismatch { .. })));
    }
}
