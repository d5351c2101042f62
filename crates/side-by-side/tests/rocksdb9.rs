//! Our RocksDB code against RocksDB 9 itself, in the same test run: `rocksdb9_oracle.py`, through the `rocksdict`
//! Python package (RocksDB 9.8.4), writes SST files with RocksDB's `SstFileWriter` from the keys and settings each
//! test gives, ingests each into a database and asks RocksDB about probe keys: its `key_may_exist`, and what the
//! table's filter answered for a `Get` and for a prefix seek (read from RocksDB's statistics). The tests check that
//! `RocksDbBloomBuilder` and `RocksDbRibbonBuilder` write RocksDB 9's filter blocks under its default settings
//! (`optimize_filters_for_memory` on), that `RocksDbTable` reads every file RocksDB 9 writes (format version 6, its
//! default, among them) and that our point and prefix answers are RocksDB's.
//!
//! Without python3 or rocksdict (`pip install rocksdict==0.3.29`), or with a rocksdict that runs another RocksDB than
//! 9.x, each test fails under CI (`CI=true`) and elsewhere skips its checks and says so in its last line
//! (`sstfilter_side_by_side::checks`).

use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

use sstfilter_rocksdb::{
    RocksDbBloomBuilder, RocksDbChecksum, RocksDbPrefixExtractor, RocksDbRibbonBuilder,
    RocksDbTable, RocksDbTableFilter,
};
use sstfilter_side_by_side::checks::Checks;
use sstfilter_side_by_side::sst::{open_written, read_damaged, read_regions};
use sstfilter_side_by_side::{put_keys, splitmix64 as mix};

/// RocksDB 9 through rocksdict: the version it runs (asked once per test binary), or why it cannot run.
fn rocksdb9() -> Result<&'static str, String> {
    static VERSION: OnceLock<Result<String, String>> = OnceLock::new();
    let install = "pip install rocksdict==0.3.29";
    let found = VERSION.get_or_init(|| {
        let output = Command::new("python3")
            .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("rocksdb9_oracle.py"))
            .arg("version")
            .output()
            .map_err(|e| format!("no RocksDB 9: no python3 ({e}; then {install})"))?;
        let version = String::from_utf8_lossy(&output.stdout).trim().to_string();
        if !output.status.success() {
            let why = String::from_utf8_lossy(&output.stderr);
            let why = why.lines().last().unwrap_or_default().to_string();
            return Err(format!("no RocksDB 9: no rocksdict ({why}; {install})"));
        }
        if !version.starts_with("9.") {
            return Err(format!(
                "no RocksDB 9: rocksdict runs RocksDB {version} ({install})"
            ));
        }
        Ok(version)
    });
    found.as_deref().map_err(Clone::clone)
}

/// One table for RocksDB 9 to write: RocksDB's own option names and values over its defaults (`cf:NAME=VALUE` for
/// the column family, `table:NAME=VALUE` for the block-based table), the keys in order, and the keys to ask about.
struct Job {
    settings: Vec<String>,
    keys: Vec<Vec<u8>>,
    probes: Vec<Vec<u8>>,
}

/// RocksDB's answers for one probe key: `key_may_exist`, and what the table's filter answered for a `Get` and a
/// prefix seek (`None` where RocksDB did not ask it).
#[derive(Debug, Clone, Copy)]
struct Asked {
    may_exist: bool,
    get: Option<bool>,
    seek: Option<bool>,
}

/// The tables RocksDB 9 writes for `jobs`: each file's bytes and RocksDB's answers for its probe keys.
fn write_tables(jobs: &[Job]) -> Vec<(Vec<u8>, Vec<Asked>)> {
    static FILES: AtomicUsize = AtomicUsize::new(0);
    let paths: Vec<_> = jobs
        .iter()
        .map(|_| {
            let n = FILES.fetch_add(1, Ordering::Relaxed);
            Path::new(env!("CARGO_TARGET_TMPDIR"))
                .join(format!("rocksdb9_{}_{n}.sst", std::process::id()))
        })
        .collect();
    let mut input = (jobs.len() as u32).to_le_bytes().to_vec();
    for (job, path) in jobs.iter().zip(&paths) {
        let path = path.to_str().unwrap().as_bytes();
        input.extend((path.len() as u32).to_le_bytes());
        input.extend(path);
        let settings: Vec<Vec<u8>> = job
            .settings
            .iter()
            .map(|s| s.clone().into_bytes())
            .collect();
        put_keys(&mut input, &settings);
        put_keys(&mut input, &job.keys);
        put_keys(&mut input, &job.probes);
    }
    let mut child = Command::new("python3")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("rocksdb9_oracle.py"))
        .arg("tables")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || stdin.write_all(&input).unwrap());
    let output = child.wait_with_output().unwrap();
    writer.join().unwrap();
    assert!(output.status.success(), "rocksdb9_oracle.py tables failed");
    let mut answers = output.stdout.as_slice();
    let answer = |byte: u8| (byte < 2).then_some(byte == 1);
    jobs.iter()
        .zip(paths)
        .map(|(job, path)| {
            let (mine, rest) = answers.split_at(3 * job.probes.len());
            answers = rest;
            let asked = mine
                .chunks_exact(3)
                .map(|a| Asked {
                    may_exist: a[0] == 1,
                    get: answer(a[1]),
                    seek: answer(a[2]),
                })
                .collect();
            let bytes = std::fs::read(&path).unwrap();
            std::fs::remove_file(path).unwrap();
            (bytes, asked)
        })
        .collect()
}

/// RocksDB's two filter policies, at a number of bits per key.
#[derive(Debug, Clone, Copy)]
enum Policy {
    Bloom(f64),
    Ribbon(f64),
}

impl Policy {
    /// The settings of a table of this policy, its filter full or partitioned (over a partitioned index, as
    /// RocksDB requires).
    fn settings(self, partitioned: bool) -> Vec<String> {
        let mut settings = vec![match self {
            Policy::Bloom(b) => format!("table:filter_policy=bloomfilter:{b}"),
            Policy::Ribbon(b) => format!("table:filter_policy=ribbonfilter:{b}"),
        }];
        if partitioned {
            settings.push("table:partition_filters=true".into());
            settings.push("table:index_type=kTwoLevelIndexSearch".into());
        }
        settings
    }

    /// Our block of `keys`, under `optimize_filters_for_memory` where `optimized`.
    fn build(self, optimized: bool, keys: &[Vec<u8>]) -> Vec<u8> {
        match self {
            Policy::Bloom(b) => {
                let mut builder =
                    RocksDbBloomBuilder::new(b).with_optimize_filters_for_memory(optimized);
                keys.iter().for_each(|k| builder.add_key(k));
                builder.finish()
            }
            Policy::Ribbon(b) => {
                let mut builder =
                    RocksDbRibbonBuilder::new(b).with_optimize_filters_for_memory(optimized);
                keys.iter().for_each(|k| builder.add_key(k));
                builder.finish()
            }
        }
    }
}

/// `n` distinct 16-byte keys (hex digits) in byte order.
fn plain_keys(n: usize, seed: u64) -> Vec<Vec<u8>> {
    let mut keys: Vec<Vec<u8>> = (0..n as u64)
        .map(|i| format!("{:016x}", mix(seed << 40 ^ i)).into_bytes())
        .collect();
    keys.sort();
    keys
}

/// The filter blocks of the whole-key table `file` of `keys`, each with the keys RocksDB built it from: the full
/// filter and every key, or each partition and the keys after the previous partition's separator up to its own.
fn filter_blocks<'a>(file: &'a [u8], keys: &'a [Vec<u8>]) -> Vec<(&'a [u8], &'a [Vec<u8>])> {
    let table = RocksDbTable::open(file).unwrap();
    let block = |offset: u64, size: u64| &file[offset as usize..(offset + size) as usize];
    match table.filter().unwrap().expect("a filter") {
        RocksDbTableFilter::Full { .. } => {
            let meta = table
                .meta_blocks()
                .map(Result::unwrap)
                .find(|m| m.name.starts_with(b"fullfilter."))
                .unwrap();
            vec![(block(meta.handle.offset, meta.handle.size), keys)]
        }
        RocksDbTableFilter::Partitioned(partitioned) => {
            let seq = if partitioned.separators_are_internal_keys() {
                8
            } else {
                0
            };
            let mut rest = keys;
            let mut blocks = Vec::new();
            let partitions: Vec<_> = partitioned.partitions().collect();
            for (i, p) in partitions.iter().enumerate() {
                let separator = &p.separator[..p.separator.len() - seq];
                let end = if i + 1 == partitions.len() {
                    rest.len()
                } else {
                    rest.partition_point(|k| k.as_slice() <= separator)
                };
                let (mine, after) = rest.split_at(end);
                blocks.push((block(p.handle.offset, p.handle.size), mine));
                rest = after;
            }
            blocks
        }
    }
}

/// RocksDB 9's defaults with a filter policy: for FastLocalBloom and Ribbon at 10 bits per key, full and
/// partitioned, 1 to 10^6 keys, our builders write every filter block RocksDB wrote (each partition of a
/// partitioned filter from the keys RocksDB gave it); then the same at other bits per key, and with
/// `optimize_filters_for_memory` off in RocksDB and in ours. `RocksDbTable` reads each file, and answers absent
/// keys as RocksDB's `Get` did.
#[test]
fn default_filters_are_rocksdb9_bytes() {
    let mut checks = Checks::new("default_filters_are_rocksdb9_bytes");
    let Some(version) = checks.need(rocksdb9()) else {
        return;
    };
    const COUNTS: [usize; 8] = [1, 2, 7, 100, 1000, 10_000, 100_000, 1_000_000];
    let mut configs = Vec::new();
    for policy in [Policy::Bloom(10.0), Policy::Ribbon(10.0)] {
        for partitioned in [false, true] {
            configs.extend(COUNTS.map(|n| (policy, partitioned, true, n)));
            configs.extend([1, 100, 1000, 100_000].map(|n| (policy, partitioned, false, n)));
        }
    }
    for policy in [
        Policy::Bloom(7.5),
        Policy::Ribbon(23.4),
        Policy::Ribbon(5.0),
    ] {
        for partitioned in [false, true] {
            configs.extend([1, 100, 5000].map(|n| (policy, partitioned, true, n)));
        }
    }
    let probes: Vec<Vec<u8>> = (0..100u64)
        .map(|i| format!("{:016x}~", mix(i)).into_bytes())
        .collect();
    let jobs: Vec<Job> = configs
        .iter()
        .enumerate()
        .map(|(i, &(policy, partitioned, optimized, n))| {
            let mut settings = policy.settings(partitioned);
            if !optimized {
                settings.push("table:optimize_filters_for_memory=false".into());
            }
            Job {
                settings,
                keys: plain_keys(n, i as u64),
                probes: probes.clone(),
            }
        })
        .collect();
    let (mut blocks, mut equal, mut asked, mut setting_matters) = (0, 0, 0, 0);
    let mut differing = Vec::new();
    for ((config, job), (file, answers)) in configs.iter().zip(&jobs).zip(write_tables(&jobs)) {
        let (policy, partitioned, optimized, n) = *config;
        let what = format!(
            "{policy:?}, {n} keys, {}, optimize_filters_for_memory {optimized}",
            if partitioned { "partitioned" } else { "full" }
        );
        let table = RocksDbTable::open(&file).unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_eq!(table.format_version(), 6, "{what}: RocksDB 9's default");
        assert_eq!(table.checksum(), RocksDbChecksum::Xxh3, "{what}");
        for (block, keys) in filter_blocks(&file, &job.keys) {
            blocks += 1;
            if policy.build(optimized, keys) == block {
                equal += 1;
            } else {
                differing.push(format!("{what}: a block of {} keys", keys.len()));
            }
            // The other setting's bytes, to show the comparison tells the two apart.
            setting_matters += usize::from(policy.build(!optimized, keys) != block);
        }
        let filter = table.filter().unwrap().unwrap();
        assert!(job.keys.iter().all(|k| filter.may_contain(k)), "{what}");
        for (probe, theirs) in job.probes.iter().zip(answers) {
            if let Some(theirs) = theirs.get {
                assert_eq!(filter.may_contain(probe), theirs, "{what}: {probe:x?}");
                asked += 1;
            }
        }
    }
    assert!(
        differing.is_empty(),
        "{} of {blocks} filter blocks differ from RocksDB {version}'s: {differing:#?}",
        differing.len()
    );
    assert!(asked > 0, "RocksDB asked no filter");
    assert!(
        setting_matters > 0,
        "optimize_filters_for_memory changed no block"
    );
    eprintln!(
        "RocksDB {version}: {} tables, {blocks} filter blocks (full filters and partitions), {equal} byte-identical \
         ({setting_matters} differ under the other optimize_filters_for_memory); {asked} absent keys answered as \
         RocksDB's Get",
        configs.len()
    );
}

/// What a table's filter holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Contents {
    /// Whole keys, no prefix extractor.
    WholeKeys,
    /// Whole keys and their 5-byte prefixes (`rocksdb.FixedPrefix.5`).
    WholeKeysAndPrefixes,
    /// 5-byte prefixes only (`rocksdb.FixedPrefix.5`, `whole_key_filtering` off).
    FixedPrefixes,
    /// Prefixes of at most 5 bytes only (`rocksdb.CappedPrefix.5`, `whole_key_filtering` off).
    CappedPrefixes,
}

impl Contents {
    const ALL: [Contents; 4] = [
        Contents::WholeKeys,
        Contents::WholeKeysAndPrefixes,
        Contents::FixedPrefixes,
        Contents::CappedPrefixes,
    ];

    fn whole_keys(self) -> bool {
        matches!(self, Contents::WholeKeys | Contents::WholeKeysAndPrefixes)
    }

    fn extractor(self) -> Option<RocksDbPrefixExtractor> {
        match self {
            Contents::WholeKeys => None,
            Contents::WholeKeysAndPrefixes | Contents::FixedPrefixes => {
                Some(RocksDbPrefixExtractor::Fixed(5))
            }
            Contents::CappedPrefixes => Some(RocksDbPrefixExtractor::Capped(5)),
        }
    }

    fn settings(self) -> Vec<String> {
        let mut settings = Vec::new();
        match self.extractor() {
            Some(RocksDbPrefixExtractor::Fixed(n)) => {
                settings.push(format!("cf:prefix_extractor=rocksdb.FixedPrefix.{n}"))
            }
            Some(RocksDbPrefixExtractor::Capped(n)) => {
                settings.push(format!("cf:prefix_extractor=rocksdb.CappedPrefix.{n}"))
            }
            _ => {}
        }
        if !self.whole_keys() {
            settings.push("table:whole_key_filtering=false".into());
        }
        settings
    }
}

/// Whether the table holds keys of the 5-byte prefix `"{p:04}:"`: half of the numbers below 2,000.
fn held(p: u64) -> bool {
    mix(p ^ 0x5eed).is_multiple_of(2)
}

/// `n` distinct keys in byte order: a held prefix `"{p:04}:"`, then 3 to 30 bytes of `seed`'s draw.
fn prefixed_keys(n: usize, seed: u64) -> Vec<Vec<u8>> {
    let held: Vec<u64> = (0..2000).filter(|&p| held(p)).collect();
    let mut keys: Vec<Vec<u8>> = (0..n as u64)
        .map(|i| {
            let r = mix(seed << 32 ^ i);
            let mut key = format!("{:04}:", held[(r % held.len() as u64) as usize]).into_bytes();
            key.extend((0..3 + (r >> 16) % 28).map(|j| mix(r ^ j) as u8));
            key
        })
        .collect();
    keys.sort();
    keys.dedup();
    keys
}

/// Keys to ask about: absent keys of every prefix below 2,000 (about half of them prefixes no table holds), the
/// bare prefixes, keys shorter than a prefix, keys before and after the tables' range, and some of `keys`.
fn prefixed_probes(keys: &[Vec<u8>]) -> Vec<Vec<u8>> {
    let mut probes: Vec<Vec<u8>> = (0..400u64)
        .map(|i| format!("{:04}:{:x}", mix(i) % 2000, mix(i ^ 0xab5e)).into_bytes())
        .collect();
    probes.extend((0..100u64).map(|i| format!("{:04}:", mix(i ^ 7) % 2000).into_bytes()));
    probes.extend((0..40u64).map(|i| format!("{}", mix(i) % 1000).into_bytes()));
    probes.extend([&b""[..], b"/", b"0", b"00", b"~", b"~~~~~~", b"\xff"].map(<[u8]>::to_vec));
    probes.extend(keys.iter().step_by(keys.len() / 40 + 1).cloned());
    probes
}

/// Every policy, format version 1 to 6 (what RocksDB 9 writes; it writes 1 for 0), full and partitioned filters,
/// whole keys with and without prefixes and prefixes only (fixed and capped), 1 to 20,000 keys, each checksum type
/// by turns, and format version 6 with every checksum type: `RocksDbTable` reads every file, finds every key of it
/// by key and by prefix, and answers every probe RocksDB asked its filter about as RocksDB did: a `Get` as
/// `may_match` (whole keys) or `may_contain_prefix` (prefixes only), `key_may_exist` the same, a prefix seek as
/// `may_contain_prefix`.
#[test]
fn rocksdb9_tables_are_read_and_answer_as_rocksdb9() {
    let mut checks = Checks::new("rocksdb9_tables_are_read_and_answer_as_rocksdb9");
    let Some(version) = checks.need(rocksdb9()) else {
        return;
    };
    const CHECKSUMS: [&str; 5] = ["kNoChecksum", "kCRC32c", "kxxHash", "kxxHash64", "kXXH3"];
    const COUNTS: [usize; 4] = [1, 7, 2000, 20_000];
    let mut configs = Vec::new();
    let mut turn = 0;
    for policy in [Policy::Bloom(10.0), Policy::Bloom(4.5), Policy::Ribbon(8.0)] {
        for format_version in 1..=6 {
            for partitioned in [false, true] {
                let contents = Contents::ALL[turn % 4];
                configs.push((
                    policy,
                    format_version,
                    turn % 5,
                    partitioned,
                    contents,
                    COUNTS[turn % 4],
                ));
                turn += 1;
            }
        }
    }
    for checksum in 0..5 {
        for partitioned in [false, true] {
            let contents = Contents::ALL[(checksum + 1) % 4];
            configs.push((
                Policy::Bloom(10.0),
                6,
                checksum,
                partitioned,
                contents,
                2000,
            ));
        }
    }
    let jobs: Vec<Job> = configs
        .iter()
        .enumerate()
        .map(
            |(i, &(policy, format_version, checksum, partitioned, contents, n))| {
                let mut settings = policy.settings(partitioned);
                settings.push(format!("table:format_version={format_version}"));
                settings.push(format!("table:checksum={}", CHECKSUMS[checksum]));
                if partitioned {
                    // Many small partitions, and separators that share prefixes.
                    settings.push("table:metadata_block_size=256".into());
                    settings.push("table:index_block_restart_interval=3".into());
                }
                settings.extend(contents.settings());
                let keys = prefixed_keys(n, i as u64);
                Job {
                    settings,
                    probes: prefixed_probes(&keys),
                    keys,
                }
            },
        )
        .collect();
    let (mut gets, mut seeks, mut negatives, mut prefix_negatives) = (0, 0, 0, 0);
    let mut may_exist_equal = 0;
    for ((config, job), (file, answers)) in configs.iter().zip(&jobs).zip(write_tables(&jobs)) {
        let (_, format_version, checksum, partitioned, contents, _) = *config;
        let what = format!("{config:?}, {} keys", job.keys.len());
        let (_, filter) = open_written(&file, format_version, checksum as u8, &what);
        assert_eq!(filter.prefix_extractor(), contents.extractor(), "{what}");
        match &filter {
            RocksDbTableFilter::Full { whole_keys, .. } => {
                assert!(
                    !partitioned && *whole_keys == contents.whole_keys(),
                    "{what}"
                );
            }
            RocksDbTableFilter::Partitioned(p) => {
                assert!(
                    partitioned && p.whole_keys() == contents.whole_keys(),
                    "{what}"
                );
                assert!(p.partitions().all(|p| p.filter.is_ok()), "{what}");
            }
        }
        for key in &job.keys {
            assert!(filter.may_contain(key), "{what}: lost {key:x?}");
            assert!(
                filter.may_contain_prefix(key),
                "{what}: lost the prefix of {key:x?}"
            );
            let bare = contents.extractor().and_then(|e| e.prefix(key));
            assert!(
                bare.is_none_or(|p| filter.may_contain_prefix(p)),
                "{what}: {key:x?}"
            );
        }
        for (probe, asked) in job.probes.iter().zip(answers) {
            if let Some(theirs) = asked.get {
                let ours = if contents.whole_keys() {
                    filter.may_contain(probe)
                } else {
                    filter.may_contain_prefix(probe)
                };
                assert_eq!(ours, theirs, "{what}: Get {probe:x?}");
                // Where the filter may match, key_may_exist still says no for an absent key of a data block in the
                // block cache (the table's first and last): "may exist" must be ours.
                assert!(!asked.may_exist || ours, "{what}: key_may_exist {probe:x?}");
                may_exist_equal += usize::from(asked.may_exist == ours);
                gets += 1;
                negatives += usize::from(!ours);
            }
            if let Some(theirs) = asked.seek {
                assert_eq!(
                    filter.may_contain_prefix(probe),
                    theirs,
                    "{what}: seek {probe:x?}"
                );
                seeks += 1;
                prefix_negatives += usize::from(!theirs);
            }
        }
    }
    assert!(
        negatives > 0 && prefix_negatives > 0,
        "{negatives} {prefix_negatives}"
    );
    eprintln!(
        "RocksDB {version}: {} tables read; {gets} Gets answered as RocksDB's ({negatives} no match; \
         key_may_exist the same for {may_exist_equal}, never \"may\" where we say no), {seeks} prefix seeks \
         ({prefix_negatives} no match)",
        configs.len()
    );
}

/// Format version 6 files RocksDB 9 wrote, full and partitioned, in each checksum type: a bit flipped anywhere in
/// the footer or in a block `RocksDbTable` reads (the meta-index, the properties, the filter or its partition index,
/// every partition) gives a typed error, never a panic and never "no match" for a key of the table. Version 6 covers
/// the whole footer with a checksum, and mixes each block's offset into the block's. (Without a checksum,
/// `kNoChecksum`, nothing guards a block's bytes, in RocksDB as here.)
#[test]
fn rocksdb9_format_version_6_damage_is_caught() {
    let mut checks = Checks::new("rocksdb9_format_version_6_damage_is_caught");
    let Some(version) = checks.need(rocksdb9()) else {
        return;
    };
    let checksums = ["kCRC32c", "kxxHash", "kxxHash64", "kXXH3"];
    let jobs: Vec<Job> = checksums
        .iter()
        .enumerate()
        .map(|(i, checksum)| {
            let mut settings = Policy::Bloom(10.0).settings(i % 2 == 1);
            settings.push(format!("table:checksum={checksum}"));
            settings.push("table:metadata_block_size=256".into());
            Job {
                settings,
                keys: plain_keys(1000, i as u64),
                probes: Vec::new(),
            }
        })
        .collect();
    let mut caught = std::collections::BTreeMap::<String, usize>::new();
    for ((file, _), (job, checksum)) in write_tables(&jobs)
        .into_iter()
        .zip(jobs.iter().zip(checksums))
    {
        assert_eq!(RocksDbTable::open(&file).unwrap().format_version(), 6);
        read_damaged(&file, &job.keys, checksum).unwrap();
        for (block, range) in read_regions(&file) {
            for at in range {
                let mut damaged = file.clone();
                damaged[at] ^= 1 << (at % 8);
                let what = format!("{checksum}: {block} byte {at}");
                let error = read_damaged(&damaged, &job.keys, &what)
                    .expect_err(&format!("{what}: not caught"));
                let kind = format!("{error:?}");
                *caught
                    .entry(kind.split([' ', '{', '(']).next().unwrap().into())
                    .or_default() += 1;
            }
        }
    }
    eprintln!("RocksDB {version}'s format version 6 tables, damaged bits caught: {caught:?}");
}
