//! Any key set, any constructor of any policy or in-memory filter with any parameters (`Recipe`), with or without
//! prefixes: built, reopened from its bytes and verified, every key is found, by single and batched queries
//! alike, and no scan over a prefix of a key is answered "absent". Partitioned (the keys sorted, any partition
//! size and cuts), every key is found through the index and its partition.
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use sstfilter::{Answer, FilterBlock, PartitionedFilter, PrefixProbe};
use sstfilter_fuzz::{ByOffset, Partitioning, Prefixes, Recipe};

#[derive(Arbitrary, Debug)]
struct Input {
    recipe: Recipe,
    prefixes: Option<Prefixes>,
    partitioning: Option<Partitioning>,
    keys: Vec<Vec<u8>>,
}

fuzz_target!(|input: Input| {
    // A configuration a checked constructor refuses builds nothing: there is nothing to lose.
    let Ok(blocks) = input.recipe.build(&input.keys, input.prefixes) else {
        return;
    };
    if let (Some(partitioning), Ok(Some(policy))) = (input.partitioning, input.recipe.policy()) {
        let mut sorted = input.keys.clone();
        sorted.sort();
        let (partitions, index) = partitioning.build(policy, &sorted);
        let filter = PartitionedFilter::open(&index[..]).expect("a fresh index opens");
        let blocks: Vec<&[u8]> = partitions.blocks().iter().map(Vec::as_slice).collect();
        let loader = ByOffset(&blocks);
        for key in &sorted {
            let partition = filter.find(key).expect("a key is in a partition");
            filter
                .verify_partition(&partition, blocks[partition.position])
                .expect("a fresh partition verifies");
            assert!(
                filter.may_contain(key, &loader),
                "partitioned lost {key:?} with {:?} and {partitioning:?}",
                input.recipe
            );
        }
    }
    let filters: Vec<FilterBlock<&[u8]>> = blocks
        .iter()
        .map(|b| FilterBlock::open(&b[..]).expect("a freshly built block opens and verifies"))
        .collect();
    let mut found = vec![false; input.keys.len()];
    let mut answers = vec![false; input.keys.len()];
    for filter in &filters {
        filter.may_contain_batch(&input.keys, &mut answers);
        for ((key, found), &batch) in input.keys.iter().zip(&mut found).zip(&answers) {
            let single = filter.may_contain(key);
            assert_eq!(
                single, batch,
                "batch and single answers differ with {:?}",
                input.recipe
            );
            *found |= single;
        }
    }
    // (A Range policy that cannot hold this many keys built no block, and so answers nothing.)
    if !blocks.is_empty() {
        for (key, found) in input.keys.iter().zip(&found) {
            assert!(found, "lost key {key:?} with {:?}", input.recipe);
        }
    }
    let Some(prefixes) = input.prefixes else {
        return;
    };
    let extractor = prefixes.extractor.get();
    for filter in &filters {
        for key in &input.keys {
            // Every scan over a prefix of a stored key, and the key's own prefix probe.
            for end in 0..=key.len().min(24) {
                assert_ne!(
                    filter.may_contain_scan(extractor.as_ref(), &key[..end]),
                    Answer::Absent,
                    "scan {:?} lost key {key:?} with {:?} and {prefixes:?}",
                    &key[..end],
                    input.recipe
                );
            }
            if let Some(probe) = PrefixProbe::for_key(extractor.as_ref(), key) {
                assert!(filter.may_contain_prefix(&probe).may_contain());
            }
        }
    }
});
