//! Arbitrary bytes as a RocksDB SST file (seeds: tables RocksDB 7.8.3 wrote, full and partitioned filters, every
//! checksum type in turn): `RocksDbTable::open` rejects them with a typed error, or every meta block, the filter
//! (full or partitioned, each partition) and its answers for keys cut from the bytes come without a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sstfilter_rocksdb::{RocksDbTable, RocksDbTableFilter};

fuzz_target!(|data: &[u8]| {
    let Ok(table) = RocksDbTable::open(data) else {
        return;
    };
    let _ = (table.format_version(), table.checksum());
    // A meta block's handle is what the meta-index says (checked only when the block is read): any value.
    for meta in table.meta_blocks().take(64) {
        let _ = meta.map(|meta| meta.handle);
    }
    let Ok(Some(filter)) = table.filter() else {
        return;
    };
    let _ = filter.policy();
    let _ = filter.prefix_extractor();
    for key in data.chunks(9).take(32) {
        let _ = (filter.may_contain(key), filter.may_contain_prefix(key));
    }
    if let RocksDbTableFilter::Partitioned(partitioned) = &filter {
        let _ = (partitioned.len(), partitioned.whole_keys());
        for partition in partitioned.partitions().take(64) {
            if let Ok(filter) = partition.filter {
                let _ = filter.may_contain(&partition.separator);
            }
        }
    }
});
