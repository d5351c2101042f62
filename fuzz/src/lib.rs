//! Shared by the fuzz targets: the routines that exercise every read path of an opened block or partition index.
//! How blocks are built (every constructor, with its refusal checks) and the no-false-negative checks are the
//! workspace's one list of constructors, `sstfilter_recipes` (`crates/recipes`), which the core's property test
//! shares.

use std::cell::Cell;
use std::ops::Bound;
use std::sync::Arc;

use sstfilter::{
    CappedPrefix, DelimitedPrefix, FilterBlock, FixedPrefix, KeyHash, Partition, PartitionLoader,
    PartitionedFilter, PrefixExtractor, key_hash,
};
use sstfilter_recipes::{ByOffset, Extractor};

/// A loader that loads nothing and keeps the offset of the partition asked last: which partition a key went to.
#[derive(Default)]
struct Routed(Cell<Option<u64>>);

impl PartitionLoader for Routed {
    type Block<'a> = &'a [u8];
    type Error = ();

    fn load(&self, partition: &Partition) -> Result<&[u8], ()> {
        self.0.set(Some(partition.offset));
        Err(())
    }
}

/// Calls every query and accessor of an opened partition index, with keys from `probe_bytes` and partitions
/// from `blocks`, and checks that the search heads find every key's partition where the plain search does. Must
/// never panic.
pub fn exercise_index<B: AsRef<[u8]> + Clone>(
    filter: &PartitionedFilter<B>,
    blocks: &[&[u8]],
    probe_bytes: &[u8],
) {
    let with_heads = filter.clone().with_search_heads();
    let (plain, heads) = (Routed::default(), Routed::default());
    for key in probe_bytes.chunks(3).take(64) {
        let _ = (
            filter.may_contain(key, &plain),
            with_heads.may_contain(key, &heads),
        );
        assert_eq!(
            heads.0.take(),
            plain.0.take(),
            "the search heads and the plain search disagree on {key:?}"
        );
    }
    let _ = (
        filter.num_partitions(),
        filter.num_keys(),
        filter.as_bytes().len(),
    );
    for partition in filter.partitions() {
        if let Some(block) = blocks.get(partition.position) {
            let _ = filter.verify_partition(&partition, *block);
        }
    }
    let loader = ByOffset(blocks);
    for key in probe_bytes.chunks(5).take(32) {
        let _ = filter.may_contain(key, &loader);
    }
}

/// The built-in extractor a block names, if it names one: so that fuzzed blocks reach the prefix probes, not only
/// the "other extractor" answer.
fn named(name: &str) -> Option<Arc<dyn PrefixExtractor>> {
    let (kind, parameter) = name.strip_prefix("sstfilter.")?.split_once(':')?;
    match kind {
        "fixed" => Some(Arc::new(FixedPrefix::new(parameter.parse().ok()?))),
        "capped" => Some(Arc::new(CappedPrefix::new(parameter.parse().ok()?))),
        "delimited" => Some(Arc::new(DelimitedPrefix::new(
            u8::from_str_radix(parameter, 16).ok()?,
        ))),
        _ => None,
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
        filter.holds_whole_keys(),
    );
    let extractors: Vec<Arc<dyn PrefixExtractor>> = filter
        .prefix_extractor_name()
        .and_then(named)
        .into_iter()
        .chain([Extractor::Fixed(3).get(), Extractor::Delimited(b':').get()])
        .collect();
    for extractor in &extractors {
        for scan in probe_bytes.chunks(5).take(16) {
            let _ = filter.may_contain_prefix(extractor.as_ref(), scan);
            if let Some(prefix) = extractor.prefix(scan) {
                let _ = filter.may_contain_prefix(extractor.as_ref(), prefix);
            }
        }
    }
    let _ = (filter.bits_per_key(), filter.expected_fpr());
    let keys: Vec<&[u8]> = probe_bytes.chunks(7).take(64).collect();
    let mut ranges = Vec::new();
    for pair in keys.chunks(2) {
        let (a, b) = (pair[0], pair.get(1).copied().unwrap_or_default());
        ranges.extend([
            (Bound::Included(a), Bound::Included(b)),
            (Bound::Excluded(a), Bound::Excluded(b)),
            (Bound::Included(a), Bound::Unbounded),
            (Bound::Unbounded, Bound::Excluded(b)),
        ]);
    }
    let mut range_answers = vec![sstfilter::Answer::Absent; ranges.len()];
    filter.may_contain_range_batch(&ranges, &mut range_answers);
    for (&(lower, upper), batch) in ranges.iter().zip(range_answers) {
        assert_eq!(
            filter.may_contain_range(lower, upper),
            batch,
            "batch and single range answers differ"
        );
    }
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
            KeyHash::from_raw(u64::from_le_bytes(word))
        })
        .chain([
            KeyHash::from_raw(0),
            KeyHash::from_raw(u64::MAX),
            key_hash(b""),
        ])
        .collect();
    for h in hashes {
        let _ = filter.may_contain_hash(h);
    }
}
