//! A StandardBloom block from a bit array kept in memory: the one way into the container for bits that were not
//! built from a [`FilterBlockBuilder`](crate::FilterBlockBuilder)'s hashes.

use super::StandardBloomParams;
use crate::error::UsageError;
use crate::format::{TRAILER_LEN, Trailer};
use crate::tag::FilterKind;

impl StandardBloomParams {
    /// Appends to `out` the [`FilterKind::StandardBloom`] block of a bit array of these parameters kept as 64-bit
    /// words (position `p` of [`probes`](Self::probes) is bit `p % 64` of `words[p / 64]`): the words in
    /// little-endian order, then the trailer with these parameters and `num_keys` (informational for this kind),
    /// whose CRC32 covers the appended bytes alone. Bits at or past [`num_bits`](Self::num_bits) are written as
    /// zero, as FORMAT.md 4.4 has writers do. [`FilterBlock::open`](crate::FilterBlock::open) reads the block.
    ///
    /// Public so that a filter that inserts into its bits in memory (the `sstfilter-memory` crate's
    /// `BloomFilter`) serialises into the blocks this crate reads, through the container's one trailer writer,
    /// without the container itself being public: it frames a StandardBloom payload and nothing else.
    ///
    /// Returns [`UsageError::ParamsMismatch`] (field `num_words`), and appends nothing, unless `words` holds exactly
    /// [`num_words`](Self::num_words) words.
    pub fn write_block(
        &self,
        words: &[u64],
        num_keys: u64,
        out: &mut Vec<u8>,
    ) -> Result<(), UsageError> {
        if words.len() != self.num_words() {
            return Err(UsageError::ParamsMismatch {
                field: "num_words",
                expected: self.num_words() as u64,
                found: words.len() as u64,
            });
        }
        let start = out.len();
        out.reserve(self.payload_len() + TRAILER_LEN);
        // All ones but for a last word's bits at or past `num_bits`, which a reader never tests.
        let tail = self.num_bits() % 64;
        let last_mask = if tail == 0 { u64::MAX } else { (1 << tail) - 1 };
        let last = words.len().saturating_sub(1);
        for (i, word) in words.iter().enumerate() {
            let word = if i == last { word & last_mask } else { *word };
            out.extend_from_slice(&word.to_le_bytes());
        }
        Trailer::append(
            out,
            start,
            FilterKind::StandardBloom,
            self.encode(),
            num_keys,
            None,
        );
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash::key_hash;
    use crate::policy::{FilterPlan, FilterPolicy};
    use crate::reader::FilterBlock;
    use crate::{FilterBlockBuilder, KindParams};

    /// Plans the given parameters whatever the key count.
    struct Explicit(StandardBloomParams);

    impl FilterPolicy for Explicit {
        fn plan(&self, _num_keys: usize) -> FilterPlan {
            FilterPlan::StandardBloom(self.0)
        }
    }

    /// The words of a filter of `params` holding `keys`, set through the public probes.
    fn words(params: StandardBloomParams, keys: &[Vec<u8>]) -> Vec<u64> {
        let mut words = vec![0u64; params.num_words()];
        for key in keys {
            for pos in params.probes(key_hash(key)) {
                words[(pos / 64) as usize] |= 1 << (pos % 64);
            }
        }
        words
    }

    #[test]
    fn framed_words_are_the_block_the_builder_writes() {
        let keys: Vec<Vec<u8>> = (0..300).map(|i| format!("k{i}").into_bytes()).collect();
        for (bits, probes) in [(1u64, 1u32), (64, 3), (1001, 7), (4099, 255)] {
            let params = StandardBloomParams::new(bits, probes).unwrap();
            let mut builder = FilterBlockBuilder::new(Explicit(params));
            keys.iter().for_each(|k| builder.add_key(k));
            let built = builder.finish();
            let mut framed = vec![0xAB; 3]; // appended after other bytes, which the checksum leaves out
            params
                .write_block(&words(params, &keys), keys.len() as u64, &mut framed)
                .unwrap();
            assert_eq!(framed[3..], built[..], "m {bits}, k {probes}");
        }
    }

    #[test]
    fn bits_past_the_array_are_written_as_zero() {
        let params = StandardBloomParams::new(1000, 5).unwrap();
        let mut block = Vec::new();
        params.write_block(&[u64::MAX; 16], 7, &mut block).unwrap();
        let opened = FilterBlock::open(&block[..]).unwrap();
        assert_eq!(*opened.params(), KindParams::StandardBloom(params));
        assert_eq!(opened.num_keys(), 7);
        // 1000 bits: 15 whole words, then 40 bits of the last; bits 1000..1024 are zero.
        assert!(block[..125].iter().all(|&b| b == 0xFF));
        assert_eq!(block[125..128], [0, 0, 0]);
    }

    #[test]
    fn words_of_another_size_are_refused() {
        let params = StandardBloomParams::new(1000, 5).unwrap();
        for len in [0, 15, 17] {
            let mut out = vec![1, 2];
            assert_eq!(
                params.write_block(&vec![0; len], 0, &mut out),
                Err(UsageError::ParamsMismatch {
                    field: "num_words",
                    expected: 16,
                    found: len as u64
                })
            );
            assert_eq!(out, [1, 2], "nothing appended");
        }
    }
}
