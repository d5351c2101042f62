//! Our RocksDB table reader (`sstfilter_rocksdb::RocksDbTable`) on SST files RocksDB 7.8.3 itself writes in the
//! same test run: `rocksdb_oracle.cc` (built here with g++ against Debian's `librocksdb-dev`) writes each file with
//! RocksDB's `SstFileWriter`, answers lookups through RocksDB's own table reader (a DB the file is ingested into,
//! its filter's answers read from RocksDB's perf counters) and computes RocksDB's block checksums. Without g++ or
//! the library (`apt-get install g++ librocksdb-dev`) each test fails under CI (`CI=true`) and elsewhere skips its
//! check and says so in its last line (`sstfilter_side_by_side::checks`).
//!
//! Format version 6 is checked on files converted here from RocksDB-written version 5 files (7.8.3 writes no
//! version 6): self-checked against RocksDB's source, not against a file RocksDB wrote.

mod common;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use common::{Checks, mix, oracle, put_keys};
use sstfilter_side_by_side::sst::{footer_handle, open_written, read_damaged, read_regions};

use sstfilter_rocksdb::{
    RocksDbBlock, RocksDbBloomBuilder, RocksDbChecksum, RocksDbFilterFormat, RocksDbTable,
    RocksDbTableError, RocksDbTableFilter,
};

/// Runs the oracle with `args`, `keys` on its standard input.
fn run(args: &[&str], keys: &[Vec<u8>]) -> Vec<u8> {
    let mut input = Vec::new();
    put_keys(&mut input, keys);
    common::run(args, &input)
}

/// `n` distinct keys in byte order (as a table holds them): 8 to 40 bytes of `seed`'s draw, sharing prefixes.
fn keys(n: usize, seed: u64) -> Vec<Vec<u8>> {
    let mut keys: Vec<Vec<u8>> = (0..n as u64)
        .map(|i| {
            let r = mix(seed ^ i << 16);
            let len = 8 + (r % 33) as usize;
            let mut key = format!("user{:04}:", r % 97).into_bytes();
            key.extend((0..len as u64).map(|j| mix(r ^ j) as u8));
            key
        })
        .collect();
    keys.sort();
    keys.dedup();
    keys
}

/// Keys no table here holds (every table key has a `user` prefix), spread over the tables' key range.
fn absent(n: usize) -> Vec<Vec<u8>> {
    (0..n as u64)
        .map(|i| format!("user{:04}:absent{}", i % 97, mix(i)).into_bytes())
        .collect()
}

/// How RocksDB writes a table.
#[derive(Debug, Clone, Copy)]
struct Config {
    policy: &'static str,
    bits_per_key: f64,
    format_version: u32,
    checksum: u8,
    partitioned: bool,
    whole_keys: bool,
}

/// A file written by RocksDB's `SstFileWriter` for `config`, holding `keys` (each its own value): its path and
/// bytes.
fn write_sst(config: Config, keys: &[Vec<u8>]) -> (PathBuf, Vec<u8>) {
    static FILES: AtomicUsize = AtomicUsize::new(0);
    let n = FILES.fetch_add(1, Ordering::Relaxed);
    let path = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("rocksdb_sst_{}_{n}.sst", std::process::id()));
    let flag = |b: bool| if b { "1" } else { "0" };
    let args = [
        "sst",
        path.to_str().unwrap(),
        config.policy,
        &config.bits_per_key.to_string(),
        &config.format_version.to_string(),
        &config.checksum.to_string(),
        flag(config.partitioned),
        flag(config.whole_keys),
    ];
    run(&args, keys);
    let bytes = std::fs::read(&path).unwrap();
    (path, bytes)
}

/// RocksDB's answers through its own table reader: per key, `Some(false)` where the table's filter said no match,
/// `Some(true)` where it said may match, `None` where RocksDB did not ask it (a key outside the table's range).
fn ask_rocksdb(path: &Path, queries: &[Vec<u8>]) -> Vec<Option<bool>> {
    let db = path.with_extension("db");
    let _ = std::fs::remove_dir_all(&db);
    let answers = run(
        &["ask", path.to_str().unwrap(), db.to_str().unwrap()],
        queries,
    );
    std::fs::remove_dir_all(&db).unwrap();
    assert_eq!(answers.len(), queries.len());
    answers
        .into_iter()
        .map(|a| (a < 2).then_some(a == 1))
        .collect()
}

/// The bytes of the block at `offset` of `size` bytes (without its trailer).
fn block_bytes(file: &[u8], offset: u64, size: u64) -> &[u8] {
    &file[offset as usize..(offset + size) as usize]
}

/// Checks what is read from a RocksDB-written `file` of `config` holding `keys`; returns our answers to `queries`.
fn check_table(file: &[u8], config: Config, keys: &[Vec<u8>], queries: &[Vec<u8>]) -> Vec<bool> {
    let what = format!("{config:?}, {} keys", keys.len());
    let (table, filter) = open_written(file, config.format_version, config.checksum, &what);
    match &filter {
        RocksDbTableFilter::Full {
            filter: full,
            whole_keys,
            ..
        } => {
            assert!(!config.partitioned, "{what}");
            assert_eq!(*whole_keys, config.whole_keys, "{what}");
            if config.policy == "bloom" && config.format_version == 5 && config.whole_keys {
                // The filter block is the bytes our builder writes for the same keys.
                let meta = table
                    .meta_blocks()
                    .map(Result::unwrap)
                    .find(|m| m.name.starts_with(b"fullfilter."));
                let handle = meta.unwrap().handle;
                let mut builder = RocksDbBloomBuilder::new(config.bits_per_key)
                    .with_optimize_filters_for_memory(false);
                keys.iter().for_each(|k| builder.add_key(k));
                assert!(
                    builder.finish() == block_bytes(file, handle.offset, handle.size),
                    "{what}: bytes differ"
                );
                assert!(matches!(
                    full.format(),
                    RocksDbFilterFormat::FastLocalBloom { .. }
                ));
            }
        }
        RocksDbTableFilter::Partitioned(partitioned) => {
            assert!(config.partitioned, "{what}");
            assert_eq!(partitioned.whole_keys(), config.whole_keys, "{what}");
            assert!(partitioned.partitions().all(|p| p.filter.is_ok()), "{what}");
        }
    }
    for key in keys {
        assert!(
            filter.may_contain(key),
            "{what}: a key of the table answered no match: {key:x?}"
        );
    }
    queries.iter().map(|q| filter.may_contain(q)).collect()
}

const CHECKSUMS: [u8; 5] = [0, 1, 2, 3, 4];

/// Every format version RocksDB 7.8.3 writes from 2, every checksum type, Bloom (two sizes) and Ribbon, full and
/// partitioned filters, whole-key and prefix-only filters, 1 to 100,000 keys: we read every file, and answer every
/// key RocksDB's table reader asked its filter about as it did.
#[test]
fn every_table_rocksdb_writes_is_read_and_answers_as_rocksdb() {
    let mut checks = Checks::new("every_table_rocksdb_writes_is_read_and_answers_as_rocksdb");
    if checks.need(oracle()).is_none() {
        return;
    }
    let queries = absent(3000);
    let (mut files, mut asked, mut negatives, mut key_checks) = (0, 0, 0, 0);
    for (policy, bits_per_key) in [("bloom", 10.0), ("bloom", 4.5), ("ribbon", 8.0)] {
        for format_version in 2..=5 {
            for checksum in CHECKSUMS {
                for partitioned in [false, true] {
                    // Prefix-only filters in one checksum type; 100,000 keys in one, by turns.
                    let whole_keys = checksum != 2;
                    let mut counts = vec![1, 7, 10_000];
                    if usize::from(checksum) == format_version as usize % 5 {
                        counts.push(100_000);
                    }
                    for n in counts {
                        let config = Config {
                            policy,
                            bits_per_key,
                            format_version,
                            checksum,
                            partitioned,
                            whole_keys,
                        };
                        let keys = keys(n, files);
                        let (path, file) = write_sst(config, &keys);
                        let ours = check_table(&file, config, &keys, &queries);
                        let theirs = ask_rocksdb(&path, &queries);
                        for ((q, ours), theirs) in queries.iter().zip(ours).zip(theirs) {
                            if let Some(theirs) = theirs {
                                assert_eq!(ours, theirs, "{config:?}, {n} keys: {q:x?}");
                                asked += 1;
                                negatives += usize::from(!theirs);
                            }
                        }
                        std::fs::remove_file(path).unwrap();
                        files += 1;
                        key_checks += keys.len();
                    }
                }
            }
        }
    }
    eprintln!(
        "{files} RocksDB tables read; {key_checks} keys of theirs all may match; {asked} absent keys answered as \
         RocksDB's table reader answered ({negatives} no match)"
    );
}

/// Our checksums of every kind are RocksDB's `ComputeBuiltinChecksum`, for every length to 600 bytes (the XXH3
/// form's last-byte mix, xxHash's and CRC32C's tails and stripes) and a few long inputs.
#[test]
fn checksums_are_rocksdbs() {
    let mut checks = Checks::new("checksums_are_rocksdbs");
    if checks.need(oracle()).is_none() {
        return;
    }
    let mut inputs: Vec<Vec<u8>> = (0..=600u64)
        .map(|len| (0..len).map(|i| mix(len << 32 ^ i) as u8).collect())
        .collect();
    inputs.extend([4096u64, 65_537, 1 << 20].map(|len| (0..len).map(|i| mix(i) as u8).collect()));
    let theirs = run(&["checksum"], &inputs);
    let mut theirs = theirs
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()));
    for input in &inputs {
        for checksum in CHECKSUMS {
            let checksum = RocksDbChecksum::from_byte(checksum).unwrap();
            assert_eq!(
                checksum.of(input),
                theirs.next().unwrap(),
                "{checksum:?} of {} bytes",
                input.len()
            );
        }
    }
    eprintln!(
        "{} inputs × 5 checksum types: every value RocksDB's",
        inputs.len()
    );
}

/// Every byte of every block the reader reads, and of the footer, flipped in turn (one bit, or all eight); the
/// file truncated at the end and at the start; another magic number: each gives a typed error or a filter that
/// still finds every key, never "no match" for a key of the table and never a panic.
#[test]
fn damaged_tables_give_typed_errors_or_may_match() {
    let mut checks = Checks::new("damaged_tables_give_typed_errors_or_may_match");
    if checks.need(oracle()).is_none() {
        return;
    }
    let configs = [
        ("bloom", 5, 1, false),
        ("bloom", 5, 4, true),
        ("ribbon", 4, 2, true),
        ("bloom", 2, 3, true),
        ("bloom", 3, 1, false),
    ];
    let (mut flips, mut caught) = (0, std::collections::BTreeMap::<String, usize>::new());
    for (i, (policy, format_version, checksum, partitioned)) in configs.into_iter().enumerate() {
        let config = Config {
            policy,
            bits_per_key: 10.0,
            format_version,
            checksum,
            partitioned,
            whole_keys: true,
        };
        let keys = keys(2000, 0xda ^ i as u64);
        let (path, file) = write_sst(config, &keys);
        std::fs::remove_file(path).unwrap();
        for (block, range) in read_regions(&file) {
            for at in range {
                for flip in [0x01u8, 0xff] {
                    let mut damaged = file.clone();
                    damaged[at] ^= flip;
                    let what = format!("{config:?}: {block} byte {at} ^ {flip:#x}");
                    let outcome = read_damaged(&damaged, &keys, &what);
                    // Only the footer has bytes nobody reads (its padding, the index handle): elsewhere a flip is
                    // always caught by the block's checksum.
                    if block != RocksDbBlock::Footer {
                        assert!(outcome.is_err(), "{what}: not caught");
                    }
                    let kind = outcome
                        .err()
                        .map_or("read, every key may match".into(), |e| {
                            format!("{e:?}")
                                .split([' ', '{', '('])
                                .next()
                                .unwrap()
                                .to_string()
                        });
                    *caught.entry(kind).or_default() += 1;
                    flips += 1;
                }
            }
        }
        for cut in (1..200).chain((200..file.len()).step_by(97)) {
            assert!(read_damaged(&file[..file.len() - cut], &keys, "truncated end").is_err());
            assert!(read_damaged(&file[cut..], &keys, "truncated start").is_err());
        }
        let mut other = file.clone();
        *other.last_mut().unwrap() ^= 0x10;
        assert!(matches!(
            RocksDbTable::open(&other),
            Err(RocksDbTableError::NotATable { .. })
        ));
    }
    eprintln!("{flips} damaged bytes: {caught:?}; truncations and another magic number refused");
}

/// RocksDB's `ChecksumModifierForContext` (format version 6): what a block's stored checksum adds.
fn modifier(context: u32, offset: u64) -> u32 {
    context ^ (offset as u32).wrapping_add((offset >> 32) as u32)
}

/// `file` (a RocksDB-written version 5 table) as format version 6 would have it, for the blocks our reader reads
/// (every meta block and filter partition, and the meta-index): each stored checksum plus its offset's modifier,
/// and version 6's footer, checksummed, with base context checksum `context`. `skip` names a block offset left
/// unconverted.
fn to_v6(file: &[u8], context: u32, skip: Option<u64>) -> Vec<u8> {
    let table = RocksDbTable::open(file).unwrap();
    let checksum = table.checksum();
    let ((meta_offset, meta_size), footer_offset) = footer_handle(file);
    assert_eq!(
        meta_offset + meta_size + 5,
        footer_offset as u64,
        "the meta-index is not next to the footer"
    );
    let mut handles = vec![(meta_offset, meta_size)];
    handles.extend(
        table
            .meta_blocks()
            .map(|m| m.unwrap().handle)
            .map(|h| (h.offset, h.size)),
    );
    if let Some(RocksDbTableFilter::Partitioned(filter)) = table.filter().unwrap() {
        handles.extend(
            filter
                .partitions()
                .map(|p| (p.handle.offset, p.handle.size)),
        );
    }
    let mut out = file[..footer_offset].to_vec();
    for (offset, size) in handles
        .into_iter()
        .filter(|&(offset, _)| Some(offset) != skip)
    {
        let at = (offset + size + 1) as usize;
        let stored = u32::from_le_bytes(out[at..at + 4].try_into().unwrap());
        out[at..at + 4]
            .copy_from_slice(&stored.wrapping_add(modifier(context, offset)).to_le_bytes());
    }
    let mut footer = vec![file[footer_offset]];
    footer.extend([0x3e, 0x00, 0x7a, 0x00]);
    footer.extend(0u32.to_le_bytes());
    footer.extend(context.to_le_bytes());
    footer.extend((meta_size as u32).to_le_bytes());
    footer.extend([0; 24]);
    footer.extend(6u32.to_le_bytes());
    footer.extend(&file[file.len() - 8..]);
    let sum = checksum
        .of(&footer)
        .wrapping_add(modifier(context, footer_offset as u64));
    footer[5..9].copy_from_slice(&sum.to_le_bytes());
    out.extend(footer);
    out
}

/// Format version 6, on version 5 files RocksDB wrote and this test converts (RocksDB 7.8.3 writes no version 6):
/// the converted file reads and answers as the original did; a block whose checksum lacks its offset's modifier,
/// a footer with another base context, or the original version 5 blocks under a version 6 footer are refused.
#[test]
fn format_version_6_converted_from_rocksdb_files() {
    let mut checks = Checks::new("format_version_6_converted_from_rocksdb_files");
    if checks.need(oracle()).is_none() {
        return;
    }
    let queries = absent(3000);
    let mut converted = 0;
    for checksum in CHECKSUMS {
        for (policy, partitioned) in [("bloom", false), ("bloom", true), ("ribbon", true)] {
            let config = Config {
                policy,
                bits_per_key: 10.0,
                format_version: 5,
                checksum,
                partitioned,
                whole_keys: true,
            };
            let keys = keys(5000, 0x6 ^ u64::from(checksum));
            let (path, file) = write_sst(config, &keys);
            std::fs::remove_file(path).unwrap();
            let want = check_table(&file, config, &keys, &queries);
            let context = mix(u64::from(checksum)) as u32 | 1;
            let v6 = to_v6(&file, context, None);
            let got = check_table(
                &v6,
                Config {
                    format_version: 6,
                    ..config
                },
                &keys,
                &queries,
            );
            assert_eq!(got, want, "{config:?}: version 6 answers differently");
            converted += 1;

            // A block left as version 5 wrote it fails its check where it is read.
            let table = RocksDbTable::open(&file).unwrap();
            for meta in table.meta_blocks().map(Result::unwrap) {
                let damaged = to_v6(&file, context, Some(meta.handle.offset));
                let outcome = read_damaged(&damaged, &keys, "unconverted block");
                let caught = matches!(
                    outcome,
                    Err(RocksDbTableError::ChecksumMismatch { offset, .. }) if offset == meta.handle.offset
                );
                assert!(
                    caught,
                    "{config:?}: {}: {outcome:?}",
                    String::from_utf8_lossy(&meta.name)
                );
            }
            if let Some(RocksDbTableFilter::Partitioned(filter)) = table.filter().unwrap() {
                let last = filter.partitions().last().unwrap().handle;
                let damaged = to_v6(&file, context, Some(last.offset));
                let outcome = read_damaged(&damaged, &keys, "unconverted partition");
                let caught = matches!(
                    outcome,
                    Err(RocksDbTableError::ChecksumMismatch { block: RocksDbBlock::FilterPartition, offset, .. })
                        if offset == last.offset
                );
                assert!(caught, "{config:?}: {outcome:?}");
            }
            // Another base context: the footer's checksum fails first. Version 5's blocks under version 6's
            // footer: the meta-index fails.
            let mut other = v6.clone();
            let at = other.len() - 53 + 9;
            other[at] ^= 2;
            assert!(matches!(
                RocksDbTable::open(&other),
                Err(RocksDbTableError::ChecksumMismatch {
                    block: RocksDbBlock::Footer,
                    ..
                })
            ));
            let mut mixed = file[..file.len() - 53].to_vec();
            mixed.extend_from_slice(&v6[v6.len() - 53..]);
            assert!(matches!(
                RocksDbTable::open(&mixed),
                Err(RocksDbTableError::ChecksumMismatch {
                    block: RocksDbBlock::MetaIndex,
                    ..
                })
            ));
        }
    }
    eprintln!(
        "{converted} RocksDB version 5 tables converted to version 6: read, answers unchanged, misplaced blocks refused"
    );
}
