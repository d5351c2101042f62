//! The reference table: round trips, the reads a filter avoids in an LSM, and corrupt files.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use proptest::prelude::*;
use sstfilter::{BlockedBloomPolicy, key_hash};
use sstfilter_table::{
    BlockType, FOOTER_LEN, Table, TableBuilder, TableError, TableOptions, TableStats,
};

type Entries = Vec<(Vec<u8>, Vec<u8>)>;

/// Builds a table in memory.
fn build(entries: &Entries, options: &TableOptions) -> Vec<u8> {
    let mut builder = TableBuilder::new(Vec::new(), options).unwrap();
    for (k, v) in entries {
        builder.add(k, v).unwrap();
    }
    let (summary, bytes) = builder.finish().unwrap();
    assert_eq!(summary.file_len, bytes.len() as u64);
    assert_eq!(summary.num_entries, entries.len() as u64);
    bytes
}

/// Builds a table file.
fn build_file(dir: &Path, name: &str, entries: &Entries, options: &TableOptions) -> PathBuf {
    let path = dir.join(name);
    let mut builder = TableBuilder::create(&path, options).unwrap();
    for (k, v) in entries {
        builder.add(k, v).unwrap();
    }
    builder.finish().unwrap();
    path
}

/// An 8-byte big-endian integer key: big-endian so that keys sort numerically, as stores encode them.
#[expect(clippy::big_endian_bytes, reason = "a key shape, not a format field")]
fn int_key(i: u64) -> Vec<u8> {
    i.to_be_bytes().to_vec()
}

/// Three realistic key shapes (DESIGN.md §4), sorted and distinct, with values of varied length.
fn shaped_entries(n: usize) -> Entries {
    let mut map = BTreeMap::new();
    for i in 0..n as u64 {
        let key = match i % 3 {
            0 => format!("usr:{:012}{}", i * 2, "x".repeat((i % 9) as usize)).into_bytes(),
            1 => int_key(i * 2),
            _ => format!("https://example.com/a/very/long/shared/prefix/{}", i * 2).into_bytes(),
        };
        let value_len = match i % 50 {
            0 => 0,
            1 => 10_000, // larger than a data block
            _ => (i % 97) as usize,
        };
        let value: Vec<u8> = (0..value_len)
            .map(|j| (i as usize * 31 + j) as u8)
            .collect();
        map.insert(key, value);
    }
    map.into_iter().collect()
}

fn absent_keys(n: usize) -> Vec<Vec<u8>> {
    (0..n as u64)
        .map(|i| match i % 3 {
            0 => format!("usr:{:012}", i * 2 + 1).into_bytes(),
            1 => int_key(i * 2 + 1),
            _ => format!(
                "https://example.com/a/very/long/shared/prefix/{}",
                i * 2 + 1
            )
            .into_bytes(),
        })
        .collect()
}

#[test]
fn every_key_round_trips_with_its_value() {
    let dir = tempfile::tempdir().unwrap();
    let entries = shaped_entries(30_000);
    let configurations = [
        ("default", TableOptions::default()),
        (
            "no filter",
            TableOptions::default().filters(sstfilter::TableFilterOptions::new()),
        ),
        ("tiny blocks", TableOptions::default().block_size(100)),
        (
            "64 KiB blocks, 4 bits/key",
            TableOptions::default().block_size(65536).filters(
                sstfilter::TableFilterOptions::new().point(BlockedBloomPolicy::new(4.0).unwrap()),
            ),
        ),
    ];
    for (i, (name, options)) in configurations.iter().enumerate() {
        let path = build_file(dir.path(), &format!("{i}.sst"), &entries, options);
        let table = Table::open(&path, &TableOptions::default()).unwrap();
        table.verify().unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(table.num_entries(), entries.len() as u64, "{name}");
        assert!(table.filter_error().is_none(), "{name}");
        assert_eq!(
            table.table_filter().point_filter().is_some(),
            table.filter_handle().is_some(),
            "{name}"
        );
        for (k, v) in &entries {
            assert_eq!(table.get(k).unwrap().as_ref(), Some(v), "{name}: key {k:?}");
        }
        for k in absent_keys(5_000) {
            assert_eq!(table.get(&k).unwrap(), None, "{name}: absent key {k:?}");
        }
        // Keys before the first and after the last key.
        assert_eq!(table.get(b"").unwrap(), None, "{name}");
        assert_eq!(table.get(&[0xff; 40]).unwrap(), None, "{name}");
        let stats = table.stats();
        assert_eq!(stats.lookups, entries.len() as u64 + 5_002, "{name}");
        assert_eq!(stats.filter_unavailable, 0, "{name}");
    }
}

#[test]
fn an_empty_table_opens_and_holds_nothing() {
    for options in [
        TableOptions::default(),
        TableOptions::default().filters(sstfilter::TableFilterOptions::new()),
    ] {
        let bytes = build(&Vec::new(), &options);
        // A caller that passes a wrong length gets an error, not a panic.
        let err = Table::from_reader(bytes, 0, &TableOptions::default())
            .map(|_| ())
            .unwrap_err();
        assert!(matches!(err, TableError::TooShort { .. }), "{err}");
        let bytes = build(&Vec::new(), &options);
        let len = bytes.len() as u64;
        let table = Table::from_reader(bytes, len, &TableOptions::default()).unwrap();
        table.verify().unwrap();
        assert_eq!(table.num_entries(), 0);
        assert_eq!(table.num_data_blocks(), 0);
        assert_eq!(table.get(b"anything").unwrap(), None);
        assert_eq!(table.stats().data_block_reads, 0);
    }
}

#[test]
fn builder_rejects_unsorted_and_duplicate_keys() {
    let mut builder = TableBuilder::new(Vec::new(), &TableOptions::default()).unwrap();
    builder.add(b"b", b"1").unwrap();
    for bad in [&b"a"[..], b"b"] {
        let err = builder.add(bad, b"2").unwrap_err();
        assert!(
            matches!(&err, TableError::KeyOutOfOrder { previous, key } if previous == b"b" && key == bad),
            "{err}"
        );
    }
    builder.add(b"c", b"3").unwrap();
    assert_eq!(builder.num_entries(), 2);
}

/// A block size of 0 used to be clamped to 1 and one past `MAX_BLOCK_SIZE` to it; both are refused where the
/// builder is made, as are the filters' partition sizes, and the limits themselves are accepted.
#[test]
fn sizes_out_of_range_are_refused_not_clamped() {
    let refused = |options: TableOptions| match TableBuilder::new(Vec::new(), &options) {
        Err(TableError::Usage(sstfilter::UsageError::InvalidSetting { setting, .. })) => setting,
        other => panic!("accepted or another error: {:?}", other.map(|_| ())),
    };
    let max = sstfilter_table::MAX_BLOCK_SIZE;
    assert_eq!(
        refused(TableOptions::default().block_size(0)),
        "TableOptions::block_size"
    );
    assert_eq!(
        refused(TableOptions::default().block_size(max + 1)),
        "TableOptions::block_size"
    );
    for bytes in [1, max] {
        assert!(TableBuilder::new(Vec::new(), &TableOptions::default().block_size(bytes)).is_ok());
    }
    // Filter settings are refused where they are made, before a table's options hold them.
    let partitioned = |bytes| {
        sstfilter::TableFilterOptions::new()
            .point(BlockedBloomPolicy::new(10.0).unwrap())
            .partitioned(bytes, sstfilter::PartitionCuts::Anywhere)
    };
    for bytes in [0, sstfilter::MAX_PARTITION_BYTES + 1] {
        assert!(matches!(
            partitioned(bytes),
            Err(sstfilter::UsageError::InvalidSetting {
                setting: "partition_bytes",
                ..
            })
        ));
    }
    let options = TableOptions::default().filters(partitioned(1).unwrap());
    assert!(TableBuilder::new(Vec::new(), &options).is_ok());
}

/// Builds `tables` tables of an LSM whose key ranges overlap completely: table `t` holds the even ids `2·(i·T + t)`.
fn lsm_entries(tables: usize, per_table: usize) -> Vec<Entries> {
    (0..tables)
        .map(|t| {
            (0..per_table)
                .map(|i| {
                    let id = 2 * (i * tables + t) as u64;
                    (
                        format!("usr:{id:012}").into_bytes(),
                        id.to_le_bytes().to_vec(),
                    )
                })
                .collect()
        })
        .collect()
}

/// Looks `keys` up newest table first, stopping at the first hit; returns the hits and the summed counters.
fn lsm_lookups(tables: &[Table], keys: &[Vec<u8>]) -> (usize, TableStats) {
    let before: Vec<TableStats> = tables.iter().map(Table::stats).collect();
    let mut hits = 0;
    for key in keys {
        let hash = key_hash(key);
        for table in tables.iter().rev() {
            if table.get_with_hash(key, hash).unwrap().is_some() {
                hits += 1;
                break;
            }
        }
    }
    let mut total = TableStats::default();
    for (table, before) in tables.iter().zip(before) {
        total += table.stats() - before;
    }
    (hits, total)
}

#[test]
fn filters_cut_absent_lookup_reads_to_fpr_times_tables() {
    const TABLES: usize = 4;
    const PER_TABLE: usize = 20_000;
    const LOOKUPS: usize = 50_000;
    let dir = tempfile::tempdir().unwrap();
    let lsm = lsm_entries(TABLES, PER_TABLE);
    let open_all = |name: &str, options: &TableOptions| -> Vec<Table> {
        lsm.iter()
            .enumerate()
            .map(|(t, entries)| {
                Table::open(
                    build_file(dir.path(), &format!("{name}-{t}.sst"), entries, options),
                    options,
                )
                .unwrap()
            })
            .collect()
    };
    let plain = open_all(
        "plain",
        &TableOptions::default().filters(sstfilter::TableFilterOptions::new()),
    );
    let filtered = open_all(
        "bloom",
        &TableOptions::default().filters(
            sstfilter::TableFilterOptions::new().point(BlockedBloomPolicy::new(10.0).unwrap()),
        ),
    );

    // Odd ids below every table's last key: the index cannot rule them out, only the filter can.
    let range = (TABLES * (PER_TABLE - 1)) as u64;
    let absent: Vec<Vec<u8>> = (0..LOOKUPS as u64)
        .map(|i| format!("usr:{:012}", (i * 7919 % range) * 2 + 1).into_bytes())
        .collect();
    let (hits, without) = lsm_lookups(&plain, &absent);
    assert_eq!(hits, 0);
    assert_eq!(
        without.data_block_reads,
        (LOOKUPS * TABLES) as u64,
        "no filter: one read per table"
    );
    assert_eq!(without.filter_checks, 0);

    let (hits, with) = lsm_lookups(&filtered, &absent);
    assert_eq!(hits, 0);
    assert_eq!(with.filter_checks, (LOOKUPS * TABLES) as u64);
    assert_eq!(
        with.filter_negatives + with.false_positives,
        with.filter_checks
    );
    assert_eq!(
        with.data_block_reads, with.false_positives,
        "every read of an absent key is a false positive"
    );
    let theory: f64 = filtered
        .iter()
        .map(|t| t.table_filter().point_filter().unwrap().expected_fpr())
        .sum::<f64>()
        * LOOKUPS as f64;
    let reads = with.data_block_reads as f64;
    println!(
        "absent lookups: {reads} reads with BlockedBloom (theory {theory:.0}), {} without",
        without.data_block_reads
    );
    // The target: reads ≈ FPR × tables per lookup, not more than 1.2× that. Expected ~1900 reads, so
    // the 20 % margin is about 9 standard deviations.
    assert!(reads <= 1.2 * theory, "{reads} reads vs theory {theory}");
    assert!(reads >= 0.8 * theory, "{reads} reads vs theory {theory}");
    assert!(with.data_block_reads * 50 < without.data_block_reads);

    // Present keys: found in their table, values intact; the filter still spares the newer tables.
    let present: Vec<Vec<u8>> = (0..LOOKUPS as u64)
        .map(|i| format!("usr:{:012}", (i * 7919 % (TABLES * PER_TABLE) as u64) * 2).into_bytes())
        .collect();
    let (hits, with) = lsm_lookups(&filtered, &present);
    assert_eq!(hits, LOOKUPS);
    let (_, without) = lsm_lookups(&plain, &present);
    assert!(with.data_block_reads < without.data_block_reads);
    assert!(with.data_block_reads >= LOOKUPS as u64);
}

#[test]
fn corrupt_table_files_give_typed_errors() {
    let dir = tempfile::tempdir().unwrap();
    let entries = shaped_entries(2_000);
    let path = build_file(dir.path(), "good.sst", &entries, &TableOptions::default());
    let good = std::fs::read(&path).unwrap();
    let table = Table::open(&path, &TableOptions::default()).unwrap();
    let filter = table.filter_handle().unwrap();
    let index = table.index_handle();
    drop(table);

    let write = |name: &str, bytes: &[u8]| {
        let p = dir.path().join(name);
        std::fs::write(&p, bytes).unwrap();
        p
    };

    // Not a table at all, empty, truncated.
    for (name, bytes) in [
        (
            "text",
            &b"hello, this is not a table at all, not even close to one"[..],
        ),
        ("empty", &[][..]),
    ] {
        let err = Table::open(write(name, bytes), &TableOptions::default()).unwrap_err();
        assert!(
            matches!(
                err,
                TableError::BadMagic { .. } | TableError::TooShort { .. }
            ),
            "{name}: {err}"
        );
    }
    let err = Table::open(
        write("truncated", &good[..good.len() - 1]),
        &TableOptions::default(),
    )
    .unwrap_err();
    assert!(matches!(err, TableError::BadMagic { .. }), "{err}");
    let err = Table::open(dir.path().join("missing.sst"), &TableOptions::default()).unwrap_err();
    assert!(matches!(err, TableError::Io(_)), "{err}");

    // A flipped bit in the footer's handles, and in the index block.
    let mut bytes = good.clone();
    bytes[good.len() - FOOTER_LEN + 3] ^= 0x20;
    let err = Table::open(write("footer", &bytes), &TableOptions::default()).unwrap_err();
    assert!(
        matches!(
            err,
            TableError::ChecksumMismatch {
                block: BlockType::Footer,
                ..
            }
        ),
        "{err}"
    );
    let mut bytes = good.clone();
    bytes[index.offset() as usize + 5] ^= 1;
    let err = Table::open(write("index", &bytes), &TableOptions::default()).unwrap_err();
    assert!(
        matches!(
            err,
            TableError::ChecksumMismatch {
                block: BlockType::Index,
                ..
            }
        ),
        "{err}"
    );

    // A flipped bit in a data block: the table opens, lookups in that block fail, the others succeed.
    let mut bytes = good.clone();
    bytes[10] ^= 0x80;
    let table = Table::open(write("data", &bytes), &TableOptions::default()).unwrap();
    let err = table.get(&entries[0].0).unwrap_err();
    assert!(
        matches!(
            err,
            TableError::ChecksumMismatch {
                block: BlockType::Data { offset: 0 },
                ..
            }
        ),
        "{err}"
    );
    assert!(table.verify().is_err());
    let (last_key, last_value) = entries.last().unwrap();
    assert_eq!(table.get(last_key).unwrap().as_ref(), Some(last_value));

    // A flipped bit in the filter block: the table opens without its filter, finds every key, counts it.
    let mut bytes = good.clone();
    bytes[filter.offset() as usize + 7] ^= 2;
    let table = Table::open(write("filter", &bytes), &TableOptions::default()).unwrap();
    let err = table.filter_error().expect("the filter is unusable");
    assert!(
        matches!(
            err,
            TableError::ChecksumMismatch {
                block: BlockType::Filter,
                ..
            }
        ),
        "{err}"
    );
    assert!(table.table_filter().point_filter().is_none());
    for (k, v) in &entries {
        assert_eq!(table.get(k).unwrap().as_ref(), Some(v));
    }
    let stats = table.stats();
    assert_eq!(stats.filter_unavailable, entries.len() as u64);
    assert_eq!(stats.filter_checks, 0);
    table.verify().unwrap();
}

/// Opens a damaged table and looks every key up. Every outcome must be an error or the right answer: a key that
/// was written is never reported absent and never returned with another value.
fn check_damaged(bytes: &[u8], entries: &Entries, what: &str) -> Outcome {
    let Ok(table) = Table::from_reader(bytes, bytes.len() as u64, &TableOptions::default()) else {
        return Outcome::RejectedAtOpen;
    };
    let mut errors = 0;
    for (k, v) in entries {
        match table.get(k) {
            Ok(found) => assert_eq!(found.as_ref(), Some(v), "{what}: wrong answer for {k:?}"),
            Err(_) => errors += 1,
        }
    }
    let _ = table.get(b"absent key");
    let _ = table.verify();
    if table.filter_error().is_some() {
        Outcome::FilterDropped
    } else if errors > 0 {
        Outcome::LookupErrors
    } else {
        Outcome::Harmless
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Outcome {
    RejectedAtOpen,
    FilterDropped,
    LookupErrors,
    Harmless,
}

#[test]
fn every_truncation_and_bit_flip_is_an_error_or_harmless() {
    let entries: Entries = (0..40u32)
        .map(|i| {
            (
                format!("k{i:03}").into_bytes(),
                vec![i as u8; (i % 7) as usize],
            )
        })
        .collect();
    let good = build(&entries, &TableOptions::default().block_size(64));
    for len in 0..good.len() {
        assert_eq!(
            check_damaged(&good[..len], &entries, &format!("truncated to {len}")),
            Outcome::RejectedAtOpen
        );
    }
    let mut tally: BTreeMap<String, usize> = BTreeMap::new();
    let mut damaged = good.clone();
    for bit in 0..good.len() * 8 {
        damaged[bit / 8] ^= 1 << (bit % 8);
        let outcome = check_damaged(&damaged, &entries, &format!("bit {bit} flipped"));
        // CRC32 detects every single-bit error, so no flip goes unnoticed.
        assert_ne!(outcome, Outcome::Harmless, "bit {bit}");
        *tally.entry(format!("{outcome:?}")).or_default() += 1;
        damaged[bit / 8] ^= 1 << (bit % 8);
    }
    println!("{} bytes: {tally:?}", good.len());
    assert_eq!(
        tally.len(),
        3,
        "flips land in the footer/index, the filter and the data: {tally:?}"
    );
}

#[test]
fn arbitrary_footer_bytes_never_panic() {
    let entries: Entries = (0..100u32)
        .map(|i| (format!("k{i:03}").into_bytes(), b"v".to_vec()))
        .collect();
    let good = build(&entries, &TableOptions::default().block_size(256));
    let mut passed = 0;
    for at in good.len() - FOOTER_LEN..good.len() {
        for value in 0..=255u8 {
            let mut bytes = good.clone();
            bytes[at] = value;
            if check_damaged(&bytes, &entries, &format!("byte {at} = {value}"))
                != Outcome::RejectedAtOpen
            {
                passed += 1;
            }
        }
    }
    assert_eq!(
        passed, FOOTER_LEN,
        "only the original value of each footer byte opens"
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn any_sorted_entries_round_trip(
        map in proptest::collection::btree_map(
            proptest::collection::vec(any::<u8>(), 0..24),
            proptest::collection::vec(any::<u8>(), 0..64),
            0..300,
        ),
        block_size in 1usize..600,
        with_filter in any::<bool>(),
        probe in proptest::collection::vec(any::<u8>(), 0..24),
    ) {
        let entries: Entries = map.clone().into_iter().collect();
        let mut options = TableOptions::default().block_size(block_size);
        if !with_filter {
            options = options.filters(sstfilter::TableFilterOptions::new());
        }
        let bytes = build(&entries, &options);
        let len = bytes.len() as u64;
        let table = Table::from_reader(bytes, len, &TableOptions::default()).unwrap();
        table.verify().unwrap();
        for (k, v) in &entries {
            prop_assert_eq!(table.get(k).unwrap(), Some(v.clone()));
        }
        prop_assert_eq!(table.get(&probe).unwrap(), map.get(&probe).cloned());
    }
}

/// Format freeze for the table layout: the golden table must keep opening with every key and value and, while
/// its version is the one this crate writes, be rebuilt byte for byte. A missing file is created with
/// `SSTFILTER_BLESS=1`; an existing one is never rewritten (a change to its bytes is a new table format version).
/// Builds the 60 golden entries with `options`, writes `tests/golden-table/{name}` if it is missing and
/// `SSTFILTER_BLESS` is set, and checks that the stored file opens, verifies, finds every entry, passes `check`, and
/// is what this crate writes today.
fn check_golden_table(name: &str, options: &TableOptions, check: impl Fn(&Table<&[u8]>, &[u8])) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden-table")
        .join(name);
    let entries: Entries = (0..60u32)
        .map(|i| {
            (
                format!("golden-{i:03}").into_bytes(),
                format!("value-{i}").into_bytes(),
            )
        })
        .collect();
    let built = build(&entries, options);
    if !path.exists() {
        assert!(
            std::env::var_os("SSTFILTER_BLESS").is_some(),
            "{} is missing (run with SSTFILTER_BLESS=1 to create it)",
            path.display()
        );
        std::fs::write(&path, &built).unwrap();
    }
    let golden = std::fs::read(&path).unwrap();
    let table =
        Table::from_reader(&golden[..], golden.len() as u64, &TableOptions::default()).unwrap();
    table.verify().unwrap();
    for (k, v) in &entries {
        assert_eq!(table.get(k).unwrap().as_ref(), Some(v));
        check(&table, k);
    }
    assert!(
        built == golden,
        "this crate now writes different table bytes"
    );
}

#[test]
fn golden_table_is_frozen() {
    let options = TableOptions::default().block_size(128).filters(
        sstfilter::TableFilterOptions::new().point(BlockedBloomPolicy::new(10.0).unwrap()),
    );
    check_golden_table("v1-n60-bpk10-block128.sst", &options, |table, _| {
        assert!(table.table_filter().point_filter().is_some() && table.num_data_blocks() > 5);
    });
}

/// Table format version 2: a range filter block beside the filter block, its handle before the footer.
#[test]
fn golden_table_with_a_range_filter_is_frozen() {
    let options = TableOptions::default().block_size(128).filters(
        sstfilter::TableFilterOptions::new()
            .point(BlockedBloomPolicy::new(10.0).unwrap())
            .range(sstfilter::RangePolicy::new(16, 0.01).unwrap())
            .unwrap(),
    );
    check_golden_table(
        "v2-n60-bpk10-range2e4-block128.sst",
        &options,
        |table, key| {
            assert!(
                table.table_filter().point_filter().is_some()
                    && table.table_filter().range_filter().is_some()
            );
            let one = std::ops::Bound::Included(key);
            assert!(table.may_contain_range(one, one).must_read());
        },
    );
}

/// Two tables report into one `FilterStats`: absent lookups are answers "absent" or false positives, present
/// ones true positives, and the observed rate is the table's own false-positive count over its checks.
#[test]
fn tables_report_into_one_shared_filter_stats() {
    let stats = sstfilter::FilterStats::new();
    let mut tables = Vec::new();
    for t in 0..2u64 {
        let entries: Entries = (0..2000u64)
            .map(|i| (int_key(2 * i + t * 10_000), b"v".to_vec()))
            .collect();
        let bytes = build(&entries, &TableOptions::default());
        let table = Table::from_reader(bytes.clone(), bytes.len() as u64, &TableOptions::default())
            .unwrap()
            .with_filter_stats(stats.clone());
        tables.push((table, entries));
    }
    for (table, entries) in &tables {
        for (k, _) in entries {
            assert!(table.get(k).unwrap().is_some());
            let mut absent = k.clone();
            absent.push(0);
            assert!(table.get(&absent).unwrap().is_none());
        }
    }
    let counts = stats.counts();
    let mut total = TableStats::default();
    for (table, _) in &tables {
        total += table.stats();
    }
    assert_eq!(counts.true_positives, 4000);
    assert_eq!(counts.absent, total.filter_negatives);
    assert_eq!(counts.may_contain, 4000 + total.false_positives);
    assert_eq!(counts.reads_avoided(), total.reads_avoided());
    // Both count the rate over the absent keys only (the present ones are as many checks again).
    let observed = counts.observed_fpr().unwrap();
    assert_eq!(Some(observed), total.observed_fpr());
    assert!(observed > 0.0 && observed < 0.03, "{observed}");
    assert_eq!(counts.decode_errors, 0);
}
