//! Shared by the fuzz targets: the filter kinds to build, and a routine that exercises every read path of an
//! opened block.

use arbitrary::Arbitrary;
use sstfilter::{
    FastBloomPolicy, FilterBlock, FilterBlockBuilder, FilterPolicy, KeyHash, RibbonPolicy,
    StandardBloomPolicy, key_hash,
};

/// Every built-in policy, by bits per key. Add each new kind here.
const POLICIES: &[fn(f64) -> Box<dyn FilterPolicy>] = &[
    |b| Box::new(FastBloomPolicy::new(b)),
    |b| Box::new(RibbonPolicy::new(b)),
    |b| Box::new(StandardBloomPolicy::new(b)),
];

/// How to build a block: which policy and at how many bits per key.
#[derive(Arbitrary, Debug, Clone, Copy)]
pub struct Recipe {
    kind: u8,
    /// Bits per key in 1/16ths above 1.0, so every value is a valid setting (1.0 ..= 4096.9).
    bits_per_key_sixteenths: u16,
}

impl Recipe {
    /// The bits per key this recipe asks for, capped at 64 to keep builds fast.
    pub fn bits_per_key(&self) -> f64 {
        (1.0 + f64::from(self.bits_per_key_sixteenths) / 16.0).min(64.0)
    }

    /// The policy this recipe selects; every policy of the crate is reachable.
    pub fn policy(&self) -> Box<dyn FilterPolicy> {
        let make = POLICIES[usize::from(self.kind) % POLICIES.len()];
        make(self.bits_per_key())
    }

    /// Builds a block from `keys`.
    pub fn build(&self, keys: &[Vec<u8>]) -> Vec<u8> {
        let mut builder = FilterBlockBuilder::new(self.policy());
        for key in keys {
            builder.add_key(key);
        }
        builder.finish()
    }
}

/// Calls every query and accessor of an opened block, with keys taken from `probe_bytes`. Must never panic.
pub fn exercise<B: AsRef<[u8]>>(filter: &FilterBlock<B>, probe_bytes: &[u8]) {
    let _ = filter.verify();
    let _ = (
        filter.kind(),
        filter.params(),
        filter.num_keys(),
        filter.format_version(),
    );
    let _ = (
        filter.bits_per_key(),
        filter.expected_fpr(),
        filter.stored_checksum(),
    );
    let keys: Vec<&[u8]> = probe_bytes.chunks(7).take(64).collect();
    let mut answers = vec![false; keys.len()];
    filter.may_contain_batch(&keys, &mut answers);
    for (key, batch) in keys.iter().zip(&answers) {
        assert_eq!(
            filter.may_contain(key),
            *batch,
            "batch and single answers differ"
        );
    }
    let hashes: Vec<KeyHash> = probe_bytes
        .chunks(8)
        .take(64)
        .map(|c| {
            let mut word = [0u8; 8];
            word[..c.len()].copy_from_slice(c);
            KeyHash(u64::from_le_bytes(word))
        })
        .chain([KeyHash(0), KeyHash(u64::MAX), key_hash(b"")])
        .collect();
    let mut by_hash = vec![false; hashes.len()];
    filter.may_contain_hash_batch(&hashes, &mut by_hash);
    for (h, batch) in hashes.iter().zip(&by_hash) {
        assert_eq!(
            filter.may_contain_hash(*h),
            *batch,
            "batch and single answers differ"
        );
    }
}
