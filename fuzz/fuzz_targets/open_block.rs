//! Arbitrary bytes as a filter block: `open_unverified` (the structure alone; `open` also checks the CRC32, which
//! random bytes rarely pass) either rejects them or yields a block whose every query and accessor runs without
//! panicking; loading them as an in-memory `BloomFilter` either fails or yields a filter
//! that answers like the block; as a partition index, `PartitionedFilter::open` rejects them or every query runs
//! without panicking, with partitions cut from the same bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sstfilter::{FilterBlock, PartitionedFilter};
use sstfilter_memory::BloomFilter;

fuzz_target!(|data: &[u8]| {
    let verified = FilterBlock::open(data);
    match FilterBlock::open_unverified(data) {
        Ok(filter) => {
            assert_eq!(verified.is_ok(), filter.verify().is_ok());
            sstfilter_fuzz::exercise(&filter, data);
        }
        Err(_) => assert!(verified.is_err()),
    }
    if let Ok(index) = PartitionedFilter::open(data) {
        let blocks: Vec<&[u8]> = data.chunks(64).collect();
        sstfilter_fuzz::exercise_index(&index, &blocks, data);
    }
    if let Ok(loaded) = BloomFilter::from_block(data) {
        let block = FilterBlock::open(data).expect("from_block accepted it");
        for key in data.chunks(5).take(64) {
            assert_eq!(
                loaded.contains(key),
                block.may_contain(key),
                "loaded filter and block differ"
            );
        }
        let _ = (loaded.estimated_len(), loaded.expected_fpr());
    }
});
