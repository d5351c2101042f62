//! LevelDB's tables are this crate's tables of format version 0: rusty-leveldb writes a database with its own
//! `BloomPolicy`, `RocksDbTable` reads each table file (footer, meta-index, index and data blocks, every block's
//! CRC32C verified), and `sstfilter_leveldb::LevelDbFilterBlockBuilder`, fed each data block's offset and user
//! keys, must rebuild the table's filter block byte for byte. The reader then finds every key through the table's
//! own filter block.

use std::rc::Rc;

use sstfilter_leveldb::{LevelDbBloomPolicy, LevelDbFilterBlockBuilder, LevelDbFilterBlockReader};
use sstfilter_rocksdb::{RocksDbBlock, RocksDbBlockEntries, RocksDbBlockHandle, RocksDbTable};

/// The bytes after a block's contents: its compression type and its checksum.
const BLOCK_TRAILER_LEN: u64 = 5;

#[test]
fn our_builder_rebuilds_rusty_leveldb_filter_blocks() {
    let dir = tempfile::tempdir().unwrap();
    let options = rusty_leveldb::Options {
        create_if_missing: true,
        filter_policy: Rc::new(Box::new(rusty_leveldb::BloomPolicy::new(10))),
        ..Default::default()
    };
    let mut db = rusty_leveldb::DB::open(dir.path(), options).unwrap();
    // Keys of varied lengths and values of varied sizes, so data blocks start at irregular offsets, some
    // 2 KiB ranges hold two block starts and some none.
    for i in 0..60_000u32 {
        let key = format!(
            "key:{:08}{}",
            i.wrapping_mul(2_654_435_761) % 1_000_000,
            "x".repeat((i % 7) as usize)
        );
        db.put(key.as_bytes(), &vec![b'v'; (i % 300) as usize])
            .unwrap();
    }
    db.flush().unwrap();
    db.close().unwrap();

    let filter_name = format!("filter.{}", LevelDbBloomPolicy::NAME);
    let mut tables = 0;
    for entry in std::fs::read_dir(dir.path()).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "ldb") {
            continue;
        }
        let file = std::fs::read(&path).unwrap();
        assert_eq!(
            file[file.len() - 8..],
            RocksDbTable::LEGACY_MAGIC.to_le_bytes()
        );
        let table = RocksDbTable::open(&file).unwrap();
        assert_eq!(table.format_version(), 0);
        assert_eq!(table.properties_handle(), Ok(None), "a LevelDB table");

        let filter = table
            .meta_blocks()
            .map(Result::unwrap)
            .find(|meta| *meta.name == *filter_name.as_bytes())
            .expect("filter block");
        let filter_block = table
            .read_block(filter.handle, RocksDbBlock::BlockBasedFilter)
            .unwrap();
        assert_eq!(filter_block.compression, 0);

        let policy = LevelDbBloomPolicy::new(10);
        let mut builder = LevelDbFilterBlockBuilder::new(policy);
        let mut user_keys = Vec::new();
        let mut data_end = 0;
        let index_handle = table.index_handle().unwrap();
        let index = table.read_block(index_handle, RocksDbBlock::Index).unwrap();
        assert_eq!(
            index.compression, 0,
            "uncompressed, as rusty-leveldb writes"
        );
        for entry in
            RocksDbBlockEntries::new(index.contents, RocksDbBlock::Index, index_handle.offset)
        {
            let data_handle = RocksDbBlockHandle::decode(entry.unwrap().1).unwrap();
            data_end = data_handle.offset + data_handle.size + BLOCK_TRAILER_LEN;
            builder.start_block(data_handle.offset).unwrap();
            let data = table.read_block(data_handle, RocksDbBlock::Data).unwrap();
            assert_eq!(data.compression, 0);
            for entry in
                RocksDbBlockEntries::new(data.contents, RocksDbBlock::Data, data_handle.offset)
            {
                let (internal_key, _) = entry.unwrap();
                let user_key = &internal_key[..internal_key.len() - 8];
                builder.add_key(user_key);
                user_keys.push((data_handle.offset, user_key.to_vec()));
            }
        }
        // LevelDB's TableBuilder starts a block at the offset after each data block it flushes, the last
        // one included (Flush: `filter_block->StartBlock(offset)`), before it finishes the filter block.
        builder.start_block(data_end).unwrap();
        let ours = builder.finish().unwrap();
        assert!(
            ours == filter_block.contents,
            "{}: filter block differs",
            path.display()
        );

        let reader = LevelDbFilterBlockReader::new(filter_block.contents, policy);
        assert!(reader.num_filters() > 1);
        for (offset, key) in &user_keys {
            assert!(
                reader.may_contain(*offset, key),
                "{}: lost {key:?}",
                path.display()
            );
        }
        tables += 1;
    }
    assert!(tables >= 2, "{tables} tables");
}
