//! Arbitrary bytes as a RocksDB SST file or a LevelDB table, its format version 0 (seeds: tables RocksDB 7.8.3
//! wrote, full and partitioned filters, every checksum type in turn, format version 0 and no checksums, and a table
//! LevelDB 1.23 wrote): `RocksDbTable::open` rejects them with a typed error, or every meta block, the properties
//! block's handle, the filter (full or partitioned, each partition) and its answers for keys cut from the bytes and
//! for their prefixes, the index block and the data blocks it names (each read as stored, and its entries where it
//! is not compressed) come without a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sstfilter_rocksdb::{
    RocksDbBlock, RocksDbBlockEntries, RocksDbBlockHandle, RocksDbTable, RocksDbTableFilter,
};

fuzz_target!(|data: &[u8]| {
    let Ok(table) = RocksDbTable::open(data) else {
        return;
    };
    let _ = (table.format_version(), table.checksum());
    let _ = table.properties_handle();
    // A meta block's handle is what the meta-index says (checked only when the block is read): any value.
    for meta in table.meta_blocks().take(64) {
        if let Ok(meta) = meta {
            let _ = table.read_block(meta.handle, RocksDbBlock::BlockBasedFilter);
        }
    }
    if let Some(index) = table.index_handle() {
        read_index(&table, index);
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

/// The index block at `index`, and the data blocks its entries name, read and (uncompressed) walked entry by entry,
/// as `sstfilter inspect` reads a LevelDB table.
fn read_index(table: &RocksDbTable<'_>, index: RocksDbBlockHandle) {
    let Ok(block) = table.read_block(index, RocksDbBlock::Index) else {
        return;
    };
    if block.compression != 0 {
        return;
    }
    for entry in
        RocksDbBlockEntries::new(block.contents, RocksDbBlock::Index, index.offset).take(64)
    {
        let Some(handle) = entry
            .ok()
            .and_then(|(_, value)| RocksDbBlockHandle::decode(value))
        else {
            continue;
        };
        if let Ok(data) = table.read_block(handle, RocksDbBlock::Data)
            && data.compression == 0
        {
            let entries =
                RocksDbBlockEntries::new(data.contents, RocksDbBlock::Data, handle.offset);
            for (key, value) in entries.take(1024).flatten() {
                assert!(key.len() <= data.contents.len() && value.len() <= data.contents.len());
            }
        }
    }
}
