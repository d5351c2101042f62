//! LevelDB compatibility: our LevelDB Bloom filter against rusty-leveldb's `BloomPolicy` (a port of LevelDB's
//! `util/bloom.cc`), byte for byte and answer for answer, on every key set proptest tries.

use proptest::prelude::*;
use rusty_leveldb::FilterPolicy as _;
use sstfilter_leveldb::LevelDbBloomPolicy;

/// Keys in rusty-leveldb's `create_filter` layout: one buffer and the offset where each key starts.
fn leveldb_layout(keys: &[Vec<u8>]) -> (Vec<u8>, Vec<usize>) {
    let mut buf = Vec::new();
    let mut offsets = Vec::new();
    for k in keys {
        offsets.push(buf.len());
        buf.extend_from_slice(k);
    }
    (buf, offsets)
}

fn keys_strategy() -> impl Strategy<Value = Vec<Vec<u8>>> {
    // Every length class of the hash (0–3 tail bytes, several words), bytes >= 0x80, duplicates.
    let key = prop_oneof![
        proptest::collection::vec(any::<u8>(), 0..40),
        proptest::collection::vec(0u8..2, 0..5),
    ];
    proptest::collection::vec(key, 0..300)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn filters_are_byte_identical_to_rusty_leveldb(keys in keys_strategy(), bits_per_key in 0usize..=60) {
        let ours = LevelDbBloomPolicy::new(bits_per_key);
        let theirs = rusty_leveldb::BloomPolicy::new(bits_per_key as u32);
        let refs: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
        let (buf, offsets) = leveldb_layout(&keys);
        let our_filter = ours.create_filter(&refs);
        prop_assert_eq!(&our_filter, &theirs.create_filter(&buf, &offsets));
        prop_assert_eq!(our_filter.len(), ours.filter_len(keys.len()));
        for k in &keys {
            prop_assert!(ours.may_contain(k, &our_filter), "lost {:?}", k);
        }
    }

    #[test]
    fn answers_are_identical_to_rusty_leveldb(
        keys in keys_strategy(),
        probes in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..24), 0..200),
        bits_per_key in 1usize..=30,
    ) {
        let ours = LevelDbBloomPolicy::new(bits_per_key);
        let theirs = rusty_leveldb::BloomPolicy::new(bits_per_key as u32);
        let refs: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
        let filter = ours.create_filter(&refs);
        for probe in probes.iter().chain(&keys) {
            prop_assert_eq!(ours.may_contain(probe, &filter), theirs.key_may_match(probe, &filter));
        }
    }

    #[test]
    fn answers_on_arbitrary_bytes_are_identical_to_rusty_leveldb(
        filter in proptest::collection::vec(any::<u8>(), 2..200),
        probes in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..24), 1..50),
    ) {
        // Any filter of 2 bytes or more: both read it the same way (reserved k > 30 included). Shorter ones are
        // where we deliberately differ (rusty-leveldb divides by zero on some of them).
        let ours = LevelDbBloomPolicy::new(10);
        let theirs = rusty_leveldb::BloomPolicy::new(10);
        for probe in &probes {
            prop_assert_eq!(ours.may_contain(probe, &filter), theirs.key_may_match(probe, &filter));
        }
    }
}

#[test]
fn names_match() {
    assert_eq!(
        LevelDbBloomPolicy::NAME,
        rusty_leveldb::BloomPolicy::new(10).name()
    );
}

/// Our filter-block builder against the filter blocks of real tables: rusty-leveldb writes a database with its
/// own `BloomPolicy`; for each table file we parse the data blocks (LevelDB's table format, uncompressed), feed
/// their offsets and user keys to `LevelDbFilterBlockBuilder`, and require the table's filter block byte for byte.
/// Our reader then finds every key through the table's own filter block.
mod real_tables {
    use std::rc::Rc;

    use sstfilter_leveldb::{
        LevelDbBloomPolicy, LevelDbFilterBlockBuilder, LevelDbFilterBlockReader,
    };

    /// LevelDB's table magic number, the last 8 bytes of every table file.
    const TABLE_MAGIC: u64 = 0xdb47_7524_8b80_fb57;
    const FOOTER_LEN: usize = 48;

    fn varint(bytes: &[u8], at: &mut usize) -> u64 {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let b = bytes[*at];
            *at += 1;
            value |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                break;
            }
        }
        value
    }

    fn handle(bytes: &[u8], at: &mut usize) -> (usize, usize) {
        (varint(bytes, at) as usize, varint(bytes, at) as usize)
    }

    /// The (key, value) entries of a block (its contents, without the 5-byte trailer), keys prefix-decoded.
    fn entries(block: &[u8]) -> Vec<(Vec<u8>, Vec<u8>)> {
        let restarts = u32::from_le_bytes(block[block.len() - 4..].try_into().unwrap()) as usize;
        let end = block.len() - 4 - 4 * restarts;
        let (mut at, mut key, mut out) = (0, Vec::new(), Vec::new());
        while at < end {
            let shared = varint(block, &mut at) as usize;
            let unshared = varint(block, &mut at) as usize;
            let value_len = varint(block, &mut at) as usize;
            key.truncate(shared);
            key.extend_from_slice(&block[at..at + unshared]);
            at += unshared;
            out.push((key.clone(), block[at..at + value_len].to_vec()));
            at += value_len;
        }
        out
    }

    fn block_at(file: &[u8], (offset, size): (usize, usize)) -> &[u8] {
        assert_eq!(file[offset + size], 0, "uncompressed block");
        &file[offset..offset + size]
    }

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
            let footer = &file[file.len() - FOOTER_LEN..];
            assert_eq!(
                u64::from_le_bytes(footer[40..].try_into().unwrap()),
                TABLE_MAGIC
            );
            let mut at = 0;
            let metaindex = handle(footer, &mut at);
            let index = handle(footer, &mut at);

            let meta = entries(block_at(&file, metaindex));
            let (_, filter_handle) = meta
                .iter()
                .find(|(k, _)| k == filter_name.as_bytes())
                .expect("filter block");
            let filter_handle = handle(filter_handle, &mut 0);
            let filter_block = &file[filter_handle.0..filter_handle.0 + filter_handle.1];

            let policy = LevelDbBloomPolicy::new(10);
            let mut builder = LevelDbFilterBlockBuilder::new(policy);
            let mut user_keys = Vec::new();
            let mut data_end = 0;
            for (_, data_handle) in entries(block_at(&file, index)) {
                let data_handle = handle(&data_handle, &mut 0);
                data_end = data_handle.0 + data_handle.1 + 5; // block, compression type, CRC
                builder.start_block(data_handle.0 as u64).unwrap();
                for (internal_key, _) in entries(block_at(&file, data_handle)) {
                    let user_key = &internal_key[..internal_key.len() - 8];
                    builder.add_key(user_key);
                    user_keys.push((data_handle.0 as u64, user_key.to_vec()));
                }
            }
            // LevelDB's TableBuilder starts a block at the offset after each data block it flushes, the last
            // one included (Flush: `filter_block->StartBlock(offset)`), before it finishes the filter block.
            builder.start_block(data_end as u64).unwrap();
            let ours = builder.finish().unwrap();
            assert!(
                ours == filter_block,
                "{}: filter block differs",
                path.display()
            );

            let reader = LevelDbFilterBlockReader::new(filter_block, policy);
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
}
