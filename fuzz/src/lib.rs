//! Shared by the fuzz targets: the routines that exercise every read path of an opened block or partition index.
//! How blocks are built (every constructor, with its refusal checks) and the no-false-negative checks are the
//! workspace's one list of constructors, `sstfilter_recipes` (`crates/recipes`), which the core's property test
//! shares.

use std::ops::Bound;
use std::sync::Arc;

use sstfilter::{
    CappedPrefix, DelimitedPrefix, FilterBlock, FixedPrefix, KeyHash, PartitionedFilter,
    PrefixExtractor, PrefixProbe, key_hash,
};
use sstfilter_recipes::{ByOffset, Extractor};

/// Calls every query and accessor of an opened partition index, with keys from `probe_bytes` and partitions
/// from `blocks`, and checks that the search heads find every key's partition where the plain search does. Must
/// never panic.
pub fn exercise_index<B: AsRef<[u8]> + Clone>(
    filter: &PartitionedFilter<B>,
    blocks: &[&[u8]],
    probe_bytes: &[u8],
) {
    let with_heads = filter.clone().with_search_heads();
    for key in probe_bytes.chunks(3).take(64) {
        assert_eq!(
            with_heads.find(key),
            filter.find(key),
            "the search heads and the plain search disagree on {key:?}"
        );
    }
    let _ = (
        filter.num_partitions(),
        filter.num_keys(),
        filter.as_bytes().len(),
    );
    for partition in filter.partitions() {
        let _ = filter.separator(partition.position);
        if let Some(block) = blocks.get(partition.position) {
            let _ = filter.verify_partition(&partition, *block);
        }
    }
    let loader = ByOffset(blocks);
    for key in probe_bytes.chunks(5).take(32) {
        let _ = filter.find(key);
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
            let _ = filter.may_contain_scan(extractor.as_ref(), scan);
            if let Some(probe) = PrefixProbe::for_key(extractor.as_ref(), scan) {
                let _ = filter.may_contain_prefix(&probe);
            }
        }
    }
    let _ = (
        filter.bits_per_key(),
        filter.expected_fpr(),
        filter.stored_checksum(),
    );
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
