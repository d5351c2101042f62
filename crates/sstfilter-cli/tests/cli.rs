//! Smoke tests of the `sstfilter` binary: every subcommand runs and reports, and bad input gives a clear error
//! and exit code 1 (2 for bad arguments), never a panic.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Output, Stdio};

use sstfilter::{BlockedBloomPolicy, FilterBlockBuilder};
use sstfilter_table::{TableBuilder, TableOptions};

fn sstfilter(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sstfilter"))
        .args(args)
        .output()
        .expect("the binary runs")
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Runs and expects success; returns stdout.
fn ok(args: &[&str]) -> String {
    let output = sstfilter(args);
    assert!(
        output.status.success(),
        "{args:?} failed: {}\n{}",
        stderr(&output),
        stdout(&output)
    );
    stdout(&output)
}

/// Runs and expects a clean failure with `code`; returns stderr.
fn fails(args: &[&str], code: i32) -> String {
    let output = sstfilter(args);
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(code), "{args:?}: {err}");
    assert!(!err.contains("panicked"), "{args:?} panicked: {err}");
    err
}

fn write_table(path: &Path, keys: u32, options: &TableOptions) {
    let mut builder = TableBuilder::create(path, options).unwrap();
    for i in 0..keys {
        builder
            .add(format!("key-{i:06}").as_bytes(), b"value")
            .unwrap();
    }
    builder.finish().unwrap();
}

#[test]
fn demo_builds_tables_and_meets_the_read_target() {
    let dir = tempfile::tempdir().unwrap();
    let tables = dir.path().join("tables");
    let svg = dir.path().join("fpr.svg");
    let out = ok(&[
        "demo",
        "--keys",
        "3000",
        "--tables",
        "3",
        "--lookups",
        "5000",
        "--dir",
        tables.to_str().unwrap(),
        "--plot",
        svg.to_str().unwrap(),
    ]);
    for expected in [
        "no filter",
        "BlockedBloom",
        "reads per",
        "Every present lookup returned its value",
    ] {
        assert!(out.contains(expected), "missing {expected:?} in:\n{out}");
    }
    // The lookups are deterministic, so this is a fixed measurement, not a flaky one.
    let verdict = out
        .lines()
        .find(|l| l.starts_with("BlockedBloom: "))
        .unwrap_or_else(|| panic!("no BlockedBloom verdict in:\n{out}"));
    assert!(verdict.contains("(target <= 1.2: met)"), "{verdict}");
    for config in ["no-filter", "BlockedBloom"] {
        for t in 0..3 {
            assert!(tables.join(config).join(format!("{t:06}.sst")).is_file());
        }
    }
    let chart = std::fs::read_to_string(&svg).unwrap();
    assert!(chart.starts_with("<svg") && chart.contains("BlockedBloom measured"));

    // The kept tables can be inspected.
    let inspected = ok(&[
        "inspect",
        tables.join("BlockedBloom/000002.sst").to_str().unwrap(),
    ]);
    assert!(
        inspected.contains("kind             BlockedBloom (tag 1)"),
        "{inspected}"
    );
    assert!(inspected.contains("keys             3,000"), "{inspected}");
}

#[test]
fn demo_removes_its_temporary_directory() {
    let out = ok(&["demo", "--keys", "500", "--tables", "2", "--lookups", "500"]);
    let line = out.lines().find(|l| l.starts_with("tables in ")).unwrap();
    let path = line
        .strip_prefix("tables in ")
        .and_then(|rest| rest.strip_suffix(" (removed at exit)"))
        .unwrap();
    assert!(!Path::new(path).exists(), "{path} was left behind");
}

#[test]
fn demo_read_latency_charges_reads_on_a_simulated_remote_store() {
    let out = ok(&[
        "demo",
        "--keys",
        "2000",
        "--tables",
        "4",
        "--lookups",
        "1000",
        "--read-latency",
        "20ms",
    ]);
    assert!(out.contains("SIMULATED remote storage"), "{out}");
    // No filter: 4 reads per absent lookup, 4,000 per 1,000 lookups, at least 80 s charged.
    let line = out
        .lines()
        .skip_while(|l| !l.contains("SIMULATED"))
        .find(|l| l.starts_with("no filter"))
        .unwrap();
    assert!(line.contains("4000.0") && line.contains("80."), "{line}");
    let blocked = out
        .lines()
        .skip_while(|l| !l.contains("SIMULATED"))
        .find(|l| l.starts_with("BlockedBloom"))
        .unwrap();
    let saved: Vec<&str> = blocked.split_whitespace().collect();
    assert!(
        saved[3].ends_with('s') && saved[3].starts_with("7"),
        "{blocked}"
    ); // ~79 s saved
    assert!(fails(&["demo", "--read-latency", "fast"], 2).contains("duration"));
}

#[test]
fn demo_prefix_scans_skip_tables_with_prefix_filters() {
    let out = ok(&["demo", "--prefix", "--tables", "4"]);
    for expected in [
        "whole keys only",
        "keys + prefixes",
        "prefixes only",
        "sstfilter.delimited:2f",
        "Every scan returned the same rows in every configuration",
    ] {
        assert!(out.contains(expected), "missing {expected:?} in:\n{out}");
    }
    // Absent tenants: every table read without prefixes, almost none with them.
    let absent_reads = |config: &str| -> f64 {
        let line = out
            .lines()
            .find(|l| l.starts_with(config) && l.contains("absent"))
            .unwrap();
        let cells: Vec<&str> = line.split_whitespace().collect();
        let at = cells.iter().position(|&c| c == "absent").unwrap();
        cells[at + 1].parse().unwrap() // tables read per scan
    };
    assert_eq!(absent_reads("whole keys only"), 4.0, "{out}");
    assert!(absent_reads("keys + prefixes") < 0.2, "{out}");
}

#[test]
fn demo_range_scans_skip_tables_with_range_filters() {
    let out = ok(&["demo", "--range", "--tables", "4", "--keys", "20000"]);
    assert!(
        out.contains("Every scan returned the same rows in both configurations"),
        "{out}"
    );
    // Empty scans of 100 ids: every table read with point filters, almost none with the range filter.
    let empty_reads = |config: &str| -> f64 {
        let line = out
            .lines()
            .find(|l| l.starts_with(config) && l.contains(" 100 ") && l.contains("empty"))
            .unwrap();
        let cells: Vec<&str> = line.split_whitespace().collect();
        let at = cells.iter().position(|&c| c == "empty").unwrap();
        cells[at + 1].parse().unwrap() // tables read per scan
    };
    assert_eq!(empty_reads("point (BlockedBloom)"), 4.0, "{out}");
    assert!(empty_reads("point + range") < 0.2, "{out}");
    // The range configuration's filter bytes count its range filter blocks too: more than the point filters.
    let bits_per_key = |config: &str| -> f64 {
        let line = out.lines().find(|l| l.starts_with(config)).unwrap();
        let cells: Vec<&str> = line[config.len()..].split_whitespace().collect();
        cells[1].parse().unwrap()
    };
    assert!(
        bits_per_key("point + range (Grafite)") > bits_per_key("point (BlockedBloom)") + 10.0,
        "{out}"
    );
}

#[test]
fn calc_sizes_range_filters() {
    let out = ok(&[
        "calc",
        "--range-len",
        "1000",
        "--fpr",
        "1%",
        "--keys",
        "1e6",
    ]);
    assert!(out.contains("L = 2^10 = 1,024"), "{out}");
    // log2(1024 / 0.01) = 16.6; Elias-Fano adds 2 to 3 bits per key.
    let bits: f64 = out
        .lines()
        .find(|l| l.contains("MiB"))
        .and_then(|l| l.split_whitespace().next())
        .and_then(|b| b.parse().ok())
        .unwrap();
    assert!((18.6..19.7).contains(&bits), "{out}");
    let out = ok(&["calc", "--range-len", "65536", "--bits-per-key", "20"]);
    assert!(out.contains("25.0 %"), "{out}");
}

#[test]
fn inspect_explains_raw_filter_blocks_and_tables() {
    let dir = tempfile::tempdir().unwrap();
    let mut builder = FilterBlockBuilder::new(BlockedBloomPolicy::new(12.0).unwrap());
    for i in 0..1000u32 {
        builder.add_key(&i.to_le_bytes());
    }
    let block = dir.path().join("block.bin");
    std::fs::write(&block, builder.finish()).unwrap();
    let out = ok(&["inspect", block.to_str().unwrap()]);
    for expected in [
        "filter block",
        "kind             BlockedBloom (tag 1)",
        "probes per key",
        "keys             1,000",
        "prefixes         none",
        "bits/key         12.",
        "expected FPR",
        "ok",
    ] {
        assert!(out.contains(expected), "missing {expected:?} in:\n{out}");
    }

    let table = dir.path().join("plain.sst");
    write_table(
        &table,
        100,
        &TableOptions::default().filters(sstfilter::TableFilterOptions::new()),
    );
    let out = ok(&["inspect", table.to_str().unwrap()]);
    assert!(out.contains("no filter block"), "{out}");
}

#[test]
fn demo_partitioned_keeps_the_index_resident_and_loads_partitions_within_the_budget() {
    let out = ok(&[
        "demo",
        "--partitioned",
        "--tables",
        "2",
        "--keys",
        "20000",
        "--lookups",
        "2000",
    ]);
    let cells = |config: &str, stream: &str| -> Vec<String> {
        let line = out
            .lines()
            .find(|l| l.starts_with(config) && l.contains(stream))
            .unwrap_or_else(|| panic!("no {config} {stream} row in:\n{out}"));
        line.split_whitespace().map(str::to_owned).collect()
    };
    let number = |cell: &str| -> f64 { cell.replace(',', "").parse().unwrap() };
    for stream in ["uniform", "skewed"] {
        let full = cells("full, pinned", stream);
        let small = cells("partitioned, 1 % budget", stream);
        // Columns counted from the end: 5 resident bytes, 4 loads, 3 hits, 2 data-block reads, 1 ns.
        let at = |cells: &[String], from_end: usize| number(&cells[cells.len() - from_end]);
        assert!(at(&small, 5) < at(&full, 5) / 10.0, "{out}");
        assert!(at(&small, 4) > 1.0, "with 1 % every lookup loads: {out}");
        // Reads avoided stay those of the full filter: about 1 % of 2 tables.
        assert!(at(&small, 2) < 0.1 && at(&full, 2) < 0.1, "{out}");
        // Timed in turn over several passes, every lookup of the fully cached partitions a hit.
        let cached = cells("partitioned, all cached", stream);
        assert_eq!(at(&cached, 4), 0.0, "{out}");
        assert_eq!(at(&cached, 3), 2.0, "one hit a table: {out}");
        let ratio = out
            .split(&format!("x ({stream})"))
            .next()
            .and_then(|before| before.rsplit(' ').next())
            .and_then(|r| r.parse::<f64>().ok());
        assert!(
            ratio.is_some_and(|r| r > 0.0),
            "no {stream} ratio in:\n{out}"
        );
    }
}

#[test]
fn inspect_explains_partitioned_tables() {
    let dir = tempfile::tempdir().unwrap();
    let table = dir.path().join("partitioned.sst");
    let options = TableOptions::default().filters(
        sstfilter::TableFilterOptions::new()
            .point(sstfilter::BlockedBloomPolicy::new(10.0).unwrap())
            .partitioned(512, sstfilter::PartitionCuts::AtDataBlocks)
            .unwrap(),
    );
    write_table(&table, 5000, &options);
    let out = ok(&["inspect", table.to_str().unwrap()]);
    for expected in [
        "partitioned filter: index at offset",
        "5,000 keys match the table",
        "partitions       ",
        "keys/partition   min",
        "for the index (kept in memory)",
        "kinds            BlockedBloom × ",
        "every partition's CRC ok",
        "partition 0:",
    ] {
        assert!(out.contains(expected), "missing {expected:?} in:\n{out}");
    }
    // A damaged partition is named, and the exit code says so.
    let mut bytes = std::fs::read(&table).unwrap();
    let data_end = {
        let t = sstfilter_table::Table::open(&table, &TableOptions::default()).unwrap();
        t.table_filter()
            .partitioned_filter()
            .unwrap()
            .partition(1)
            .unwrap()
            .offset as usize
    };
    bytes[data_end + 10] ^= 1;
    std::fs::write(&table, &bytes).unwrap();
    let err = fails(&["inspect", table.to_str().unwrap()], 1);
    assert!(err.contains("filter partition 1"), "{err}");
}

/// A rusty-leveldb database of `keys` keys with `policy`, flushed; returns its first table file.
fn leveldb_table(
    dir: &Path,
    keys: u32,
    policy: Box<dyn rusty_leveldb::FilterPolicy>,
) -> std::path::PathBuf {
    let options = rusty_leveldb::Options {
        create_if_missing: true,
        filter_policy: std::rc::Rc::new(policy),
        ..rusty_leveldb::Options::default()
    };
    let mut db = rusty_leveldb::DB::open(dir, options).unwrap();
    for i in 0..keys {
        db.put(format!("key-{i:06}").as_bytes(), b"value").unwrap();
    }
    // Writes the memtable into a table (flush only syncs the log).
    db.compact_range(b"", b"\xff").unwrap();
    drop(db);
    let files: Vec<std::path::PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files
        .iter()
        .find(|p| p.extension().is_some_and(|e| e == "ldb"))
        .unwrap_or_else(|| panic!("no table file among {files:?}"))
        .clone()
}

#[test]
fn inspect_explains_leveldb_tables_and_their_filters() {
    let dir = tempfile::tempdir().unwrap();
    let table = leveldb_table(
        &dir.path().join("bloom"),
        5000,
        Box::new(rusty_leveldb::BloomPolicy::new(10)),
    );
    let out = ok(&["inspect", table.to_str().unwrap()]);
    for expected in [
        ": LevelDB table",
        "entries          5,000",
        "every block's CRC32C ok",
        "policy leveldb.BuiltinBloomFilter2 (metaindex key filter.leveldb.BuiltinBloomFilter2)",
        "(base_lg 11)",
        "probes           6..=6",
        "over 5,000 keys",
        "expected FPR",
    ] {
        assert!(out.contains(expected), "missing {expected:?} in:\n{out}");
    }
    // LevelDB's Bloom at 10 bits/key: each filter has at least 10 bits per key (rounded up to bytes and 64 bits).
    let bits: f64 = out
        .lines()
        .find(|l| l.contains("bits/key"))
        .and_then(|l| l.split_whitespace().nth(1))
        .unwrap()
        .parse()
        .unwrap();
    assert!((10.0..11.0).contains(&bits), "{out}");

    // Our policy inside rusty-leveldb: each per-2 KiB filter is an sstfilter block.
    let ours = leveldb_table(
        &dir.path().join("ours"),
        5000,
        Box::new(sstfilter_rusty_leveldb::RustyLevelDbFilterPolicy::new(
            BlockedBloomPolicy::new(10.0).unwrap(),
        )),
    );
    let out = ok(&["inspect", ours.to_str().unwrap()]);
    assert!(
        out.contains("policy sstfilter (metaindex key filter.sstfilter)"),
        "{out}"
    );
    assert!(out.contains("kinds            BlockedBloom × "), "{out}");

    // A flipped byte in a data block: a one-line error and exit code 1.
    let mut bytes = std::fs::read(&table).unwrap();
    bytes[100] ^= 1;
    std::fs::write(&table, &bytes).unwrap();
    let err = fails(&["inspect", table.to_str().unwrap()], 1);
    assert!(
        err.contains("corrupt LevelDB table: data block at offset 0: checksum mismatch"),
        "{err}"
    );
    assert_eq!(err.trim().lines().count(), 1, "{err}");
}

/// A table written by C++ LevelDB 1.23 with its defaults (Snappy-compressed blocks) and its Bloom filter
/// (`tests/fixtures/make-leveldb-table.cc`).
#[test]
fn inspect_explains_a_table_written_by_cpp_leveldb() {
    let table = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/leveldb-1.23-bloom10-snappy.ldb");
    let out = ok(&["inspect", table.to_str().unwrap()]);
    for expected in [
        "data blocks      32",
        "entries          3,000",
        "every block's CRC32C ok",
        "policy leveldb.BuiltinBloomFilter2",
        "17 per-2048 B filters (base_lg 11)",
        "probes           6..=6",
        "bits/key         10.02 over 3,000 keys",
        "expected FPR     0.836 %",
    ] {
        assert!(out.contains(expected), "missing {expected:?} in:\n{out}");
    }
}

/// Tables written by RocksDB 7.8.3 (`SstFileWriter`, 3,000 keys `user:%08d`, each its own value), through
/// `crates/side-by-side/rocksdb_oracle.cc`: `rocksdb_oracle sst PATH bloom 10 5 1 0 1` (a full Bloom filter,
/// CRC32c checksums) and `rocksdb_oracle sst PATH ribbon 8 5 4 1 1` (a partitioned Ribbon filter, XXH3 checksums).
#[test]
fn inspect_explains_tables_written_by_rocksdb() {
    let fixture = |name: &str| {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures")
            .join(name);
        ok(&["inspect", path.to_str().unwrap()])
    };
    let out = fixture("rocksdb-7.8.3-bloom10-full.sst");
    for expected in [
        "RocksDB table (block-based, format_version 5)",
        "checksums        Crc32c",
        "meta block       fullfilter.rocksdb.BuiltinBloomFilter at offset 19,290, 3,781 bytes",
        "full filter, policy rocksdb.BuiltinBloomFilter, whole keys",
        "FastLocalBloom, 6 probes, 3,776 bytes: 59 lines of 64 bytes",
    ] {
        assert!(out.contains(expected), "missing {expected:?} in:\n{out}");
    }
    let out = fixture("rocksdb-7.8.3-ribbon8-partitioned.sst");
    for expected in [
        "checksums        Xxh3",
        "partitioned filter, policy rocksdb.BuiltinBloomFilter, whole keys, 10 partitions (separators are user keys)",
        "partitions       Standard128Ribbon × 10",
    ] {
        assert!(out.contains(expected), "missing {expected:?} in:\n{out}");
    }
    // A damaged byte in the filter is a checksum error, named, not an answer.
    let dir = tempfile::tempdir().unwrap();
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/rocksdb-7.8.3-bloom10-full.sst");
    let mut bytes = std::fs::read(path).unwrap();
    bytes[19_290 + 100] ^= 1;
    let damaged = dir.path().join("damaged.sst");
    std::fs::write(&damaged, bytes).unwrap();
    let err = fails(&["inspect", damaged.to_str().unwrap()], 1);
    assert!(
        err.contains("RocksDB table") && err.contains("checksum"),
        "{err}"
    );
}

/// Tables RocksDB 7.8.3 wrote that a reader going by the magic number alone would misread
/// (`tests/fixtures/make-rocksdb-tables.cc`, 3,000 keys `user:%08d`, RocksDB's Bloom filter at 10 bits/key): one of
/// `format_version` 0, which ends in LevelDB's magic number but is RocksDB's table, properties and filter included;
/// one with `kNoChecksum`, whose blocks nothing verifies.
#[test]
fn inspect_explains_rocksdb_tables_by_their_footer_and_says_what_was_not_verified() {
    let fixture = |name: &str| {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures")
            .join(name)
    };
    let v0 = fixture("rocksdb-7.8.3-bloom10-v0.sst");
    let bytes = std::fs::read(&v0).unwrap();
    assert_eq!(
        bytes[bytes.len() - 8..],
        0xdb47_7524_8b80_fb57_u64.to_le_bytes(),
        "LevelDB's magic number"
    );
    let out = ok(&["inspect", v0.to_str().unwrap()]);
    for expected in [
        "RocksDB table (block-based, format_version 0: LevelDB's footer and magic number",
        "checksums        Crc32c; verified for every block read here",
        "meta block       rocksdb.properties",
        "full filter, policy rocksdb.BuiltinBloomFilter, whole keys",
        "filter           legacy Bloom, 6 probes, 59 lines of 64 bytes",
    ] {
        assert!(out.contains(expected), "missing {expected:?} in:\n{out}");
    }
    assert!(!out.contains("LevelDB table"), "{out}");
    assert!(!out.contains("no filter"), "{out}");

    let unchecked = fixture("rocksdb-7.8.3-bloom10-nochecksum.sst");
    let out = ok(&["inspect", unchecked.to_str().unwrap()]);
    for expected in [
        "RocksDB table (block-based, format_version 5)",
        "checksums        no checksums: nothing could be verified",
        "filter           FastLocalBloom, 6 probes",
    ] {
        assert!(out.contains(expected), "missing {expected:?} in:\n{out}");
    }
    assert!(!out.contains("verified for every block"), "{out}");

    // A damaged filter byte: the format_version 0 table's CRC32C finds it; without checksums nothing can, and the
    // output still says so rather than vouching for the bytes.
    let dir = tempfile::tempdir().unwrap();
    for (fixture, caught) in [(v0, true), (unchecked, false)] {
        let mut bytes = std::fs::read(&fixture).unwrap();
        bytes[19_290 + 100] ^= 1;
        let damaged = dir.path().join("damaged.sst");
        std::fs::write(&damaged, bytes).unwrap();
        let output = sstfilter(&["inspect", damaged.to_str().unwrap()]);
        if caught {
            assert_eq!(output.status.code(), Some(1));
            let err = stderr(&output);
            assert!(
                err.contains("RocksDB table: filter block at offset 19290: checksum mismatch"),
                "{err}"
            );
        } else {
            assert!(output.status.success());
            assert!(
                stdout(&output).contains("nothing could be verified"),
                "{}",
                stdout(&output)
            );
        }
    }
}

#[test]
fn inspect_reports_bad_files_as_errors() {
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name).to_str().unwrap().to_owned();
    let write = |name: &str, bytes: &[u8]| std::fs::write(dir.path().join(name), bytes).unwrap();

    write("empty", b"");
    write(
        "text",
        b"just some text, clearly not a filter block or a table",
    );
    let err = fails(&["inspect", &path("empty")], 1);
    assert!(
        err.starts_with("error: ") && err.contains("too short"),
        "{err}"
    );
    let err = fails(&["inspect", &path("text")], 1);
    assert!(
        err.contains("neither a reference table") && err.contains("bad magic"),
        "{err}"
    );
    let err = fails(&["inspect", &path("missing")], 1);
    assert!(err.contains("cannot open"), "{err}");

    // A raw block with a flipped payload bit, and every truncation of a small one.
    let mut builder = FilterBlockBuilder::new(BlockedBloomPolicy::new(10.0).unwrap());
    for i in 0..50u32 {
        builder.add_key(&i.to_le_bytes());
    }
    let block = builder.finish();
    let mut flipped = block.clone();
    flipped[5] ^= 1;
    write("flipped.bin", &flipped);
    let err = fails(&["inspect", &path("flipped.bin")], 1);
    assert!(err.contains("checksum mismatch"), "{err}");
    for len in (0..block.len()).step_by(7) {
        write("cut.bin", &block[..len]);
        fails(&["inspect", &path("cut.bin")], 1);
    }

    // Tables: a flipped filter bit (the table still opens: its filter is reported unusable), a flipped footer
    // bit, a truncation.
    write_table(&dir.path().join("good.sst"), 2000, &TableOptions::default());
    let good = std::fs::read(dir.path().join("good.sst")).unwrap();
    let filter_offset =
        u64::from_le_bytes(good[good.len() - 56..good.len() - 48].try_into().unwrap());
    let mut bad_filter = good.clone();
    bad_filter[filter_offset as usize + 3] ^= 0x10;
    write("bad-filter.sst", &bad_filter);
    let output = sstfilter(&["inspect", &path("bad-filter.sst")]);
    assert_eq!(output.status.code(), Some(1));
    assert!(stdout(&output).contains("UNUSABLE"), "{}", stdout(&output));
    assert!(
        stderr(&output).contains("filter block checksum mismatch"),
        "{}",
        stderr(&output)
    );

    let mut bad_footer = good.clone();
    let at = good.len() - 30;
    bad_footer[at] ^= 0x01;
    write("bad-footer.sst", &bad_footer);
    let err = fails(&["inspect", &path("bad-footer.sst")], 1);
    assert!(
        err.contains("corrupt table") && err.contains("footer checksum mismatch"),
        "{err}"
    );

    write("truncated.sst", &good[..good.len() - 10]);
    fails(&["inspect", &path("truncated.sst")], 1);
}

#[test]
fn calc_sizes_filters_and_splits_budgets() {
    let out = ok(&["calc"]);
    for expected in [
        "1,000,000 keys",
        "standard Bloom",
        "9.59",
        "BlockedBloom (512-bit blocks)",
        "information-theoretic bound",
        "6.64",
    ] {
        assert!(out.contains(expected), "missing {expected:?} in:\n{out}");
    }

    let out = ok(&[
        "calc",
        "--keys",
        "1e6",
        "--bits",
        "10_000_000",
        "--probes",
        "6",
    ]);
    assert!(
        out.contains("10.00 bits/key") && out.contains("k = 6"),
        "{out}"
    );

    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("levels.svg");
    let out = ok(&[
        "calc",
        "--levels",
        "5",
        "--keys",
        "1e8",
        "--memory",
        "100MiB",
        "--plot",
        svg.to_str().unwrap(),
    ]);
    assert!(out.contains("Monkey") && out.contains("x fewer"), "{out}");
    assert!(
        std::fs::read_to_string(&svg)
            .unwrap()
            .contains("Monkey levels")
    );
}

/// Issue 18's report: a budget far beyond what filters can use is said in words, and Monkey is never "more".
#[test]
fn calc_levels_says_when_the_budget_exceeds_what_filters_use() {
    let out = ok(&["calc", "--levels", "7", "--memory", "512MiB"]);
    assert!(!out.contains("x more"), "{out}");
    assert_eq!(
        out.matches("(the same: the budget leaves nothing to move between levels)")
            .count(),
        3,
        "{out}"
    );
    assert_eq!(out.matches("the budget exceeds what").count(), 3, "{out}");
    assert!(out.contains("7.63 MiB reach the kind's floor"), "{out}");
}

/// A larger budget never prints more wasted reads: Monkey's sum for every model, at budgets in 3 % steps over the
/// low budgets where the allocation once rose.
#[test]
fn calc_levels_never_prints_more_wasted_reads_for_a_larger_budget() {
    let mut previous: Vec<f64> = Vec::new();
    let mut bits_per_key = 1.0f64;
    while bits_per_key < 4.0 {
        let budget = format!("{bits_per_key}");
        let out = ok(&[
            "calc",
            "--levels",
            "5",
            "--keys",
            "1e8",
            "--bits-per-key",
            &budget,
        ]);
        let sums: Vec<f64> = out
            .lines()
            .filter_map(|line| line.split(", Monkey ").nth(1))
            .map(|rest| rest.split_whitespace().next().unwrap().parse().unwrap())
            .collect();
        assert_eq!(sums.len(), 3, "{out}");
        for (model, (now, before)) in sums.iter().zip(&previous).enumerate() {
            assert!(
                now <= before,
                "model {model} at {budget} bits/key: {now} > {before}\n{out}"
            );
        }
        previous = sums;
        bits_per_key *= 1.03;
    }
}

#[test]
fn bad_arguments_are_usage_errors() {
    fails(&[], 2);
    fails(&["demo", "--keys", "0"], 2);
    fails(&["demo", "--bits-per-key", "0.5"], 2);
    fails(&["calc", "--fpr", "2"], 2);
    fails(&["calc", "--bits", "100", "--levels", "3"], 2);
    fails(&["inspect"], 2);
    fails(&["frobnicate"], 2);
}

/// Runs `sstfilter args` with stdout a pipe whose reader is closed before the process starts, so that its first
/// write fails with a broken pipe, deterministically.
fn with_stdout_closed(args: &[&str]) -> Output {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    Command::new(env!("CARGO_BIN_EXE_sstfilter"))
        .args(args)
        .stdout(writer)
        .stderr(Stdio::piped())
        .output()
        .unwrap()
}

/// Issue 26: `sstfilter calc --levels 3 | head -1` panicked on the broken pipe. A reader that goes away is the
/// normal end of a run: exit code 0 and nothing on stderr, in every subcommand and mode.
#[test]
fn a_closed_stdout_ends_every_subcommand_quietly() {
    let dir = tempfile::tempdir().unwrap();
    let table = dir.path().join("table.sst");
    write_table(&table, 500, &TableOptions::default());
    let block = dir.path().join("block.bin");
    let mut builder = FilterBlockBuilder::new(BlockedBloomPolicy::new(10.0).unwrap());
    builder.add_key(b"key");
    std::fs::write(&block, builder.finish()).unwrap();
    let ldb = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/leveldb-1.23-bloom10-snappy.ldb");
    let rocksdb = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/rocksdb-7.8.3-ribbon8-partitioned.sst");
    let svg = dir.path().join("chart.svg");
    let svg = svg.to_str().unwrap();
    let small = ["--keys", "300", "--tables", "2"];
    let runs: Vec<Vec<&str>> = vec![
        vec!["--version"],
        vec!["calc", "--help"],
        vec!["calc"],
        vec!["calc", "--levels", "3"],
        vec!["calc", "--levels", "3", "--plot", svg],
        vec!["calc", "--bits-per-key", "10", "--probes", "5"],
        vec!["calc", "--range-len", "1000"],
        vec!["inspect", table.to_str().unwrap()],
        vec!["inspect", block.to_str().unwrap()],
        vec!["inspect", ldb.to_str().unwrap()],
        vec!["inspect", rocksdb.to_str().unwrap()],
        [&["demo", "--lookups", "100"][..], &small].concat(),
        [&["demo", "--lookups", "100", "--plot", svg][..], &small].concat(),
        [
            &["demo", "--lookups", "100", "--read-latency", "1ms"][..],
            &small,
        ]
        .concat(),
        vec!["demo", "--prefix", "--tables", "2"],
        [&["demo", "--partitioned", "--lookups", "100"][..], &small].concat(),
        [&["demo", "--range"][..], &small].concat(),
    ];
    for args in runs {
        let output = with_stdout_closed(&args);
        let err = stderr(&output);
        assert!(!err.contains("panicked"), "{args:?} panicked: {err}");
        assert_eq!(output.status.code(), Some(0), "{args:?}: {err}");
        assert_eq!(err, "", "{args:?}");
    }
}

/// The same as a shell's `| head -1`: the reader takes one line and goes, while the run may still be writing.
#[test]
fn a_reader_that_stops_after_one_line_ends_the_run_quietly() {
    for args in [
        &["calc", "--levels", "3"][..],
        &["demo", "--keys", "300", "--tables", "2", "--lookups", "100"],
    ] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_sstfilter"))
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut first = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut first)
            .unwrap();
        assert!(!first.is_empty(), "{args:?} printed nothing");
        // Dropping the reader above closed the pipe; the run ends at its next write, or ends on its own.
        let output = child.wait_with_output().unwrap();
        let err = stderr(&output);
        assert!(!err.contains("panicked"), "{args:?} panicked: {err}");
        assert_eq!(output.status.code(), Some(0), "{args:?}: {err}");
    }
}

/// Issue 26: every I/O error names the path and what was being done, and a chart into a missing folder is
/// refused before the work, not after it.
#[test]
fn io_errors_name_the_path_and_what_was_being_done() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a-file");
    std::fs::write(&file, b"not a directory").unwrap();
    let file = file.to_str().unwrap();

    // --dir naming a regular file, or a directory under one.
    let err = fails(
        &["demo", "--keys", "300", "--tables", "2", "--dir", file],
        2,
    );
    assert!(
        err.contains(&format!("{file} is a file, not a directory")),
        "{err}"
    );
    let below = format!("{file}/tables");
    let err = fails(
        &["demo", "--keys", "300", "--tables", "2", "--dir", &below],
        1,
    );
    assert!(
        err.contains(&format!("cannot create the directory {below}")),
        "{err}"
    );

    // --plot into a missing folder: refused when the arguments are read, before any table is built.
    let missing = dir.path().join("missing");
    let chart = missing.join("chart.svg");
    let chart = chart.to_str().unwrap();
    let tables = dir.path().join("tables");
    let output = sstfilter(&[
        "demo",
        "--keys",
        "300",
        "--tables",
        "2",
        "--dir",
        tables.to_str().unwrap(),
        "--plot",
        chart,
    ]);
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{err}");
    assert!(
        err.contains(chart)
            && err.contains(&format!(
                "{} is not an existing directory",
                missing.display()
            )),
        "{err}"
    );
    assert!(
        stdout(&output).is_empty() && !tables.exists(),
        "the demo ran"
    );
    let err = fails(&["calc", "--plot", chart], 2);
    assert!(err.contains("cannot write the chart there"), "{err}");
    let err = fails(&["calc", "--plot", dir.path().to_str().unwrap()], 2);
    assert!(err.contains("is a directory"), "{err}");

    // inspect on a directory.
    let folder = dir.path().to_str().unwrap();
    let err = fails(&["inspect", folder], 1);
    assert!(
        err.contains(&format!("cannot inspect {folder}: it is a directory")),
        "{err}"
    );
}

/// Issue 26: an option that a mode would ignore is refused, not silently dropped. `demo --prefix` used to run its
/// own 5,000 keys and 1,000 scans whatever --keys and --lookups said, and write no chart.
#[test]
fn options_a_mode_ignores_are_refused() {
    let err = fails(
        &[
            "demo",
            "--prefix",
            "--keys",
            "777",
            "--lookups",
            "10",
            "--plot",
            "p.svg",
            "--read-latency",
            "20ms",
        ],
        2,
    );
    assert!(err.contains("'--prefix' cannot be used with"), "{err}");
    let refused: [(&[&str], &str); 15] = [
        (&["demo", "--prefix", "--keys", "777"], "--keys"),
        (&["demo", "--prefix", "--lookups", "10"], "--lookups"),
        (&["demo", "--prefix", "--plot", "p.svg"], "--plot"),
        (
            &["demo", "--prefix", "--read-latency", "20ms"],
            "--read-latency",
        ),
        (&["demo", "--partitioned", "--plot", "p.svg"], "--plot"),
        (
            &["demo", "--partitioned", "--read-latency", "1ms"],
            "--read-latency",
        ),
        (&["demo", "--range", "--lookups", "10"], "--lookups"),
        (&["demo", "--range", "--plot", "p.svg"], "--plot"),
        (
            &["demo", "--range", "--read-latency", "1ms"],
            "--read-latency",
        ),
        (&["calc", "--levels", "3", "--fpr", "0.01"], "--fpr"),
        (&["calc", "--bits", "1000", "--fpr", "0.01"], "--fpr"),
        (&["calc", "--bits-per-key", "10", "--fpr", "1%"], "--fpr"),
        (
            &[
                "calc",
                "--range-len",
                "1000",
                "--bits-per-key",
                "20",
                "--fpr",
                "1%",
            ],
            "--fpr",
        ),
        (
            &["calc", "--range-len", "1000", "--plot", "p.svg"],
            "--plot",
        ),
        (&["calc", "--size-ratio", "4"], "--levels"),
    ];
    for (args, option) in refused {
        let err = fails(args, 2);
        assert!(
            err.contains(option)
                && (err.contains("cannot be used with") || err.contains("required")),
            "{args:?}: {err}"
        );
    }
    // --probes only counts with a size to probe.
    let err = fails(&["calc", "--probes", "5"], 2);
    assert!(err.contains("<--bits <M>|--bits-per-key <B>>"), "{err}");
    assert!(ok(&["calc", "--bits-per-key", "10", "--probes", "5"]).contains("k = 5"));

    // --range used to cut --keys to 100,000 without a word; the demos' keys are fixed-width numbers.
    let err = fails(&["demo", "--range", "--keys", "100001"], 2);
    assert!(
        err.contains("--range builds at most 100,000 keys per table"),
        "{err}"
    );
    let err = fails(&["demo", "--prefix", "--tables", "500"], 2);
    assert!(err.contains("at most 499 tables"), "{err}");
    let err = fails(&["demo", "--keys", "1e9", "--tables", "1000"], 2);
    assert!(
        err.contains("--keys x --tables is at most 500,000,000,000"),
        "{err}"
    );
    let err = fails(&["demo", "--lookups", "1e9"], 2);
    assert!(err.contains("must be at most 100,000,000"), "{err}");
}

#[test]
fn inspect_help_says_what_it_reads() {
    let help = ok(&["inspect", "--help"]);
    for expected in [
        "filter block",
        "reference table",
        "partitioned filter",
        "LevelDB",
        "RocksDB",
        "<FILE>  The file to read",
    ] {
        assert!(help.contains(expected), "missing {expected:?} in:\n{help}");
    }
}

/// Runs calc and checks that nothing it prints is a number that cannot be one: NaN, infinities, negative sizes.
fn calc_honestly(args: &[&str]) -> String {
    let out = ok(&[&["calc"][..], args].concat());
    for bad in ["NaN", "inf %", "-100.0 %", " -0.0"] {
        assert!(!out.contains(bad), "{args:?} printed {bad:?}:\n{out}");
    }
    out
}

/// Issue 26: absurd inputs to calc get a clear error or an honest line.
#[test]
fn calc_says_unreachable_instead_of_printing_nonsense() {
    // Out of range: usage errors.
    for (args, says) in [
        (&["calc", "--fpr", "0"][..], "not a rate between 0 and 1"),
        (&["calc", "--fpr", "1"], "not a rate between 0 and 1"),
        (&["calc", "--keys", "0"], "must be at least 1"),
        (&["calc", "--levels", "40"], "40 is not in 1..=20"),
        (&["calc", "--bits-per-key", "0"], "not a number above 0"),
        (&["calc", "--keys", "1e16"], "write the number in digits"),
        (
            &["calc", "--keys", "9007199254740993"],
            "must be at most 9,007,199,254,740,992",
        ),
        (
            &["calc", "--keys", "10", "--bits", "1e6"],
            "100000 bits/key: at most 1000",
        ),
        (
            &["calc", "--range-len", "72057594037927937"],
            "must be at most 72,057,594,037,927,936",
        ),
    ] {
        let err = fails(args, 2);
        assert!(err.contains(says), "{args:?}: {err}");
    }

    // The range policy's universe saturates at 2^64 codes: such (L, ε) cannot be kept. It printed a 1 % rate and
    // "-16.33 bits" over the bound.
    let out = calc_honestly(&["--range-len", "72057594037927936"]);
    assert!(
        out.contains("unreachable: 1,000,000 keys at 1.00 % for ranges of 2^56 need a universe")
            && out.contains("more than the 2^64 a range filter has")
            && out.contains("it keeps ranges of up to 2^37"),
        "{out}"
    );
    assert!(!out.contains("FPR at ℓ") && !out.contains(" -"), "{out}");
    let out = calc_honestly(&["--range-len", "137438953472"]);
    assert!(
        !out.contains("unreachable") && out.contains("+2.15 bits"),
        "{out}"
    );
    // What the policy refuses, calc says it cannot size, with the policy's reason.
    let out = calc_honestly(&["--range-len", "1", "--bits-per-key", "0.001"]);
    assert!(
        out.contains("unreachable: RangePolicy bits_per_key must be more than log2(L) + 2")
            && out.contains("got 0.001"),
        "{out}"
    );
    let out = calc_honestly(&["--range-len", "1", "--fpr", "1e-300"]);
    assert!(
        out.contains("unreachable: RangePolicy fpr must be from 2^-40"),
        "{out}"
    );

    // A rate no model reaches: each says how low it goes; the bound still sizes it.
    let out = calc_honestly(&["--fpr", "1e-300"]);
    assert_eq!(out.matches("  unreachable\n").count(), 3, "{out}");
    assert!(
        out.contains("Ribbon: unreachable: its rate stays above 2.33e-8 %"),
        "{out}"
    );
    assert!(out.contains("996.58"), "{out}");
    let out = calc_honestly(&["--fpr", "1e-320"]);
    assert_eq!(out.matches("  unreachable\n").count(), 4, "{out}");

    // Sizes below what a kind builds: no filter, said in words; no NaN or -inf over the bound.
    let out = calc_honestly(&["--bits-per-key", "0.001"]);
    assert!(
        out.contains(
            "BlockedBloom (512-bit blocks): no filter: it builds no filter below 1.00 bits/key"
        ) && out.contains("Ribbon: no filter: it builds no filter below 1.02 bits/key"),
        "{out}"
    );
    let out = calc_honestly(&["--bits", "1"]);
    assert!(
        out.contains("it builds whole 512-bit blocks, and not one fits"),
        "{out}"
    );
    let out = calc_honestly(&["--keys", "3", "--bits", "1000", "--probes", "64"]);
    assert!(
        out.contains("it cannot use k = 64 probes (it takes 1 to 24)"),
        "{out}"
    );

    // A budget of one byte is too small, not more than filters can use.
    let out = calc_honestly(&["--levels", "3", "--memory", "1"]);
    assert!(!out.contains("exceeds"), "{out}");
    assert_eq!(
        out.matches("the budget is too small for any").count(),
        3,
        "{out}"
    );
    // Levels too small to hold a key are said to be empty.
    let out = calc_honestly(&["--levels", "20", "--keys", "5"]);
    assert!(out.contains("Levels 1 to 19 hold no keys"), "{out}");
    // The largest key count: no overflow in the levels' sum.
    let out = calc_honestly(&["--levels", "3", "--keys", "9007199254740992"]);
    assert!(out.contains("9,007,199,254,740,992 keys"), "{out}");
}

/// Issue 26: a reference table with junk bytes in front is an error that states the rule that failed (it said
/// the index block "lies outside" a range it lay inside).
#[test]
fn inspect_states_the_layout_rule_a_shifted_table_breaks() {
    let dir = tempfile::tempdir().unwrap();
    let options = [
        TableOptions::default(),
        TableOptions::default().filters(
            sstfilter::TableFilterOptions::new()
                .point(sstfilter::BlockedBloomPolicy::new(10.0).unwrap())
                .range(sstfilter::RangePolicy::new(256, 0.01).unwrap())
                .unwrap(),
        ),
    ];
    for (n, options) in options.iter().enumerate() {
        let good = dir.path().join(format!("good-{n}.sst"));
        write_table(&good, 2000, options);
        let bytes = std::fs::read(&good).unwrap();
        let junk = dir.path().join(format!("junk-{n}.sst"));
        std::fs::write(&junk, [b"junk".as_slice(), &bytes].concat()).unwrap();
        let err = fails(&["inspect", junk.to_str().unwrap()], 1);
        assert!(
            err.contains("corrupt table: the index block (offset ")
                && err.contains("must end where the footer begins, at byte ")
                && err.contains("the file holds 4 bytes that its footer does not account for"),
            "{err}"
        );
        // Four bytes cut out of the data blocks: the index now runs into the footer.
        let cut = dir.path().join(format!("cut-{n}.sst"));
        std::fs::write(&cut, [&bytes[..100], &bytes[104..]].concat()).unwrap();
        let err = fails(&["inspect", cut.to_str().unwrap()], 1);
        assert!(
            err.contains("4 bytes fewer than its footer counts"),
            "{err}"
        );
    }
}
