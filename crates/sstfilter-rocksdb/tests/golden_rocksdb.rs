//! Filter blocks RocksDB 7.8.3 wrote (`tests/golden-rocksdb/`), read without RocksDB: every key of each block may
//! match, every answer for 2,000 absent keys is the one RocksDB gave, and the FastLocalBloom and Ribbon blocks are
//! what `RocksDbBloomBuilder` and `RocksDbRibbonBuilder` write for the same keys under RocksDB 7.8.3's default
//! `optimize_filters_for_memory = false`. `crates/side-by-side/tests/rocksdb_agreement.rs` checks, where
//! RocksDB is installed, that RocksDB still writes and answers exactly these (and writes a missing file with
//! `SSTFILTER_BLESS=1`).
//!
//! A file is named `{filter}-n{keys}-bpk{bits per key}.txt` (`fastlocalbloom` from `NewBloomFilterPolicy` with table
//! `format_version` 5, `legacy` the same with `format_version` 4, `ribbon` from `NewRibbonFilterPolicy`); its keys
//! are `golden-{i}` for `i` in `0..keys`. Line 1 is the block in lowercase hex; line 2 RocksDB's answer (`1` may
//! match, `0` no match) for each of the keys `absent-{i}`, `i` in `0..2000`.

use std::path::Path;

use sstfilter_rocksdb::{
    RocksDbBloomBuilder, RocksDbFilter, RocksDbFilterFormat, RocksDbRibbonBuilder,
};

/// Every file, and the filter RocksDB reads each as.
const FILES: [(&str, &str); 7] = [
    ("fastlocalbloom-n0-bpk10", "Empty"),
    ("fastlocalbloom-n100-bpk7.5", "FastLocalBloom"),
    ("fastlocalbloom-n1000-bpk10", "FastLocalBloom"),
    ("fastlocalbloom-n1000-bpk23.4", "FastLocalBloom"),
    ("ribbon-n1000-bpk10", "Ribbon"),
    ("ribbon-n3000-bpk7.5", "Ribbon"),
    ("legacy-n1000-bpk10", "LegacyBloom"),
];

fn unhex(hex: &str) -> Vec<u8> {
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
        .collect()
}

#[test]
fn rocksdb_written_blocks_answer_as_rocksdb_did() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden-rocksdb");
    for (name, kind) in FILES {
        let file = std::fs::read_to_string(dir.join(format!("{name}.txt"))).unwrap();
        let mut lines = file.lines();
        let (block, answers) = (unhex(lines.next().unwrap()), lines.next().unwrap());
        let n: usize = name
            .split("-n")
            .nth(1)
            .unwrap()
            .split('-')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        let bits_per_key: f64 = name.rsplit("bpk").next().unwrap().parse().unwrap();
        let keys: Vec<Vec<u8>> = (0..n).map(|i| format!("golden-{i}").into_bytes()).collect();

        let filter = RocksDbFilter::from_verified(&block);
        let format = format!("{:?}", filter.format());
        assert!(format.starts_with(kind), "{name}: read as {format}");
        for key in &keys {
            assert!(filter.may_contain(key), "{name}: lost {key:?}");
        }
        assert_eq!(answers.len(), 2000, "{name}");
        for (i, want) in answers.chars().enumerate() {
            let key = format!("absent-{i}");
            assert_eq!(
                filter.may_contain(key.as_bytes()),
                want == '1',
                "{name}: {key}"
            );
        }
        let ours = if name.starts_with("fastlocalbloom") {
            let mut builder =
                RocksDbBloomBuilder::new(bits_per_key).with_optimize_filters_for_memory(false);
            keys.iter().for_each(|key| builder.add_key(key));
            Some(builder.finish())
        } else if name.starts_with("ribbon") {
            let mut builder =
                RocksDbRibbonBuilder::new(bits_per_key).with_optimize_filters_for_memory(false);
            keys.iter().for_each(|key| builder.add_key(key));
            Some(builder.finish())
        } else {
            None
        };
        assert!(
            ours.is_none_or(|ours| ours == block),
            "{name}: our builder writes other bytes"
        );
        if matches!(filter.format(), RocksDbFilterFormat::Empty) {
            assert!(!answers.contains('1'), "{name}");
        }
    }
}
