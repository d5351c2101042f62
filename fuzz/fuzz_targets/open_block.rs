//! Arbitrary bytes as a filter block: `open` either rejects them or yields a block whose every query and
//! accessor runs without panicking.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sstfilter::FilterBlock;

fuzz_target!(|data: &[u8]| {
    if let Ok(filter) = FilterBlock::open(data) {
        sstfilter_fuzz::exercise(&filter, data);
    }
});
