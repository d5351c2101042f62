//! Arbitrary bytes as a filter block: `open` either rejects them or yields a block whose every query and
//! accessor runs without panicking; loading them as an in-memory `BloomFilter` either fails or yields a filter
//! that answers like the block.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sstfilter::{BloomFilter, FilterBlock};

fuzz_target!(|data: &[u8]| {
    if let Ok(filter) = FilterBlock::open(data) {
        sstfilter_fuzz::exercise(&filter, data);
    }
    if let Ok(loaded) = BloomFilter::from_block(data) {
        let block = FilterBlock::open_verified(data).expect("from_block accepted it");
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
