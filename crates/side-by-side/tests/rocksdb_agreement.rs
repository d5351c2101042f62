//! Our RocksDB filter code against RocksDB 7.8.3 itself, in the same test run: `rocksdb_oracle.cc` (built here
//! with g++ against Debian's `librocksdb-dev`) builds filters with RocksDB's own builders, answers with RocksDB's
//! own readers and hashes with RocksDB's own `Hash64`; every test checks ours against what it wrote. Without g++ or
//! the library (`apt-get install g++ librocksdb-dev`) each test fails under CI (`CI=true`) and elsewhere skips its
//! check and says so in its last line (`sstfilter_side_by_side::checks`).

mod common;

use std::path::Path;

use common::{Checks, mix, oracle, put_keys, run};
use sstfilter_rocksdb::{
    RocksDbBloomBuilder, RocksDbFilter, RocksDbFilterFormat, RocksDbRibbonBuilder, rocksdb_hash64,
};

/// `n` keys: mostly 16 bytes (a table's typical key), with every length up to 40 and some up to 300 mixed in,
/// and an adjacent duplicate now and then (RocksDB's builders drop a hash equal to the previous one).
fn keys(n: usize, seed: u64) -> Vec<Vec<u8>> {
    let mut out: Vec<Vec<u8>> = Vec::with_capacity(n);
    for i in 0..n as u64 {
        let r = mix(seed ^ i);
        if r.is_multiple_of(97)
            && let Some(last) = out.last()
        {
            out.push(last.clone());
            continue;
        }
        let len = match r % 8 {
            0 => (r >> 8) as usize % 41,
            1 => (r >> 8) as usize % 301,
            _ => 16,
        };
        out.push((0..len as u64).map(|j| mix(r ^ j) as u8).collect());
    }
    out
}

/// RocksDB's filter of `keys` built by `imple` at `bits_per_key`, and its answers for `queries`.
fn rocksdb_filter(
    imple: &str,
    bits_per_key: f64,
    keys: &[Vec<u8>],
    queries: &[Vec<u8>],
) -> (Vec<u8>, Vec<bool>) {
    rocksdb_filter_with(imple, bits_per_key, false, keys, queries)
}

/// [`rocksdb_filter`], with `optimize_filters_for_memory` where `optimized`.
fn rocksdb_filter_with(
    imple: &str,
    bits_per_key: f64,
    optimized: bool,
    keys: &[Vec<u8>],
    queries: &[Vec<u8>],
) -> (Vec<u8>, Vec<bool>) {
    let mut input = Vec::new();
    put_keys(&mut input, keys);
    put_keys(&mut input, queries);
    let optimized = if optimized { "1" } else { "0" };
    let out = run(
        &["filter", imple, &bits_per_key.to_string(), optimized],
        &input,
    );
    let len = u32::from_le_bytes(out[..4].try_into().unwrap()) as usize;
    let (filter, answers) = out[4..].split_at(len);
    assert_eq!(answers.len(), queries.len());
    (filter.to_vec(), answers.iter().map(|&a| a == 1).collect())
}

/// Checks that our reader answers as RocksDB did for every present key (all "may match") and every query; returns
/// the format it read and RocksDB's false positives among the queries.
fn agree(
    filter: &[u8],
    keys: &[Vec<u8>],
    queries: &[Vec<u8>],
    theirs: &[bool],
    what: &str,
) -> (RocksDbFilterFormat, usize) {
    let ours = RocksDbFilter::from_verified(filter);
    for k in keys {
        assert!(
            ours.may_contain(k),
            "{what}: a present key answered no match: {k:x?}"
        );
    }
    for (q, &t) in queries.iter().zip(theirs) {
        assert_eq!(ours.may_contain(q), t, "{what}: {q:x?}");
    }
    (ours.format(), theirs.iter().filter(|&&t| t).count())
}

/// Key counts at the edges of RocksDB's sizes (none, one, around a line of keys), then larger tables.
const COUNTS: [usize; 12] = [0, 1, 2, 5, 6, 7, 63, 64, 65, 1000, 4097, 100_000];

const BITS_PER_KEY: [f64; 9] = [1.0, 2.08, 3.5, 5.0, 7.5, 10.0, 16.0, 23.4, 99.0];

#[test]
fn hash_agrees_with_rocksdb_for_every_length_class() {
    let mut checks = Checks::new("hash_agrees_with_rocksdb_for_every_length_class");
    if checks.need(oracle()).is_none() {
        return;
    }
    // Every length to 2,100 (two blocks of the long-input accumulator and a partial stripe), in three fills, and
    // random keys.
    let mut inputs: Vec<Vec<u8>> = Vec::new();
    for fill in [0u8, b'a', 0xff] {
        inputs.extend((0..=2100).map(|len| vec![fill; len]));
    }
    inputs
        .extend((0..5000u64).map(|i| (0..mix(i) % 2200).map(|j| mix(i ^ j << 20) as u8).collect()));
    let mut input = Vec::new();
    put_keys(&mut input, &inputs);
    let theirs = run(&["hash"], &input);
    for (key, h) in inputs.iter().zip(theirs.chunks_exact(8)) {
        let want = u64::from_le_bytes(h.try_into().unwrap());
        assert_eq!(rocksdb_hash64(key), want, "length {}", key.len());
    }
    eprintln!("{} hashes agree with RocksDB's Hash64", inputs.len());
}

#[test]
fn bloom_bytes_are_rocksdb_bytes_and_answers_are_rocksdb_answers() {
    let mut checks = Checks::new("bloom_bytes_are_rocksdb_bytes_and_answers_are_rocksdb_answers");
    if checks.need(oracle()).is_none() {
        return;
    }
    let queries = keys(20_000, 0xab5e);
    let mut checked = 0;
    for bits_per_key in BITS_PER_KEY {
        for (i, n) in COUNTS.into_iter().enumerate() {
            let keys = keys(n, i as u64);
            let (theirs, answers) = rocksdb_filter("bloom", bits_per_key, &keys, &queries);
            let ours = bloom_bytes(bits_per_key, &keys);
            assert!(
                ours == theirs,
                "{bits_per_key} bits/key, {n} keys: our bytes differ from RocksDB's"
            );
            let what = format!("FastLocalBloom {bits_per_key} bits/key, {n} keys");
            let (format, _) = agree(&theirs, &keys, &queries, &answers, &what);
            assert!(
                n == 0 && format == RocksDbFilterFormat::Empty
                    || matches!(format, RocksDbFilterFormat::FastLocalBloom { .. }),
                "{what}: {format:?}"
            );
            checked += 1;
        }
    }
    eprintln!(
        "{checked} FastLocalBloom filters byte-identical to RocksDB's, every answer RocksDB's"
    );
}

#[test]
fn a_million_keys_read_and_build_as_rocksdb() {
    let mut checks = Checks::new("a_million_keys_read_and_build_as_rocksdb");
    if checks.need(oracle()).is_none() {
        return;
    }
    let keys = keys(1_000_000, 0x106);
    let queries = keys_absent(100_000);
    for imple in ["bloom", "ribbon", "legacy"] {
        let (theirs, answers) = rocksdb_filter(imple, 10.0, &keys, &queries);
        let ours = match imple {
            "bloom" => Some(bloom_bytes(10.0, &keys)),
            "ribbon" => Some(ribbon_bytes(10.0, &keys)),
            _ => None,
        };
        assert!(
            ours.is_none_or(|ours| ours == theirs),
            "{imple}: our bytes differ from RocksDB's"
        );
        let (format, fp) = agree(&theirs, &keys, &queries, &answers, imple);
        eprintln!(
            "10^6 keys, {format:?}: {fp} false positives of RocksDB's in 10^5 absent keys, ours the same"
        );
    }
}

/// `RocksDbBloomBuilder`'s block of `keys` at `bits_per_key`, under RocksDB 7.8.3's default
/// `optimize_filters_for_memory = false`.
fn bloom_bytes(bits_per_key: f64, keys: &[Vec<u8>]) -> Vec<u8> {
    let mut builder =
        RocksDbBloomBuilder::new(bits_per_key).with_optimize_filters_for_memory(false);
    keys.iter().for_each(|k| builder.add_key(k));
    builder.finish()
}

/// `RocksDbRibbonBuilder`'s block of `keys` at `bits_per_key`, under RocksDB 7.8.3's default
/// `optimize_filters_for_memory = false`.
fn ribbon_bytes(bits_per_key: f64, keys: &[Vec<u8>]) -> Vec<u8> {
    let mut builder =
        RocksDbRibbonBuilder::new(bits_per_key).with_optimize_filters_for_memory(false);
    keys.iter().for_each(|k| builder.add_key(k));
    builder.finish()
}

/// Keys no key set here has: 17 bytes (the sets' keys have 16 or a length drawn below 41 from other seeds, so a
/// collision is possible only for the drawn lengths and has probability about 2^-136).
fn keys_absent(n: usize) -> Vec<Vec<u8>> {
    (0..n as u64)
        .map(|i| {
            (0..17)
                .map(|j| mix(i << 8 ^ j ^ 0xdead_0000) as u8)
                .collect()
        })
        .collect()
}

#[test]
fn legacy_bloom_answers_are_rocksdb_answers() {
    let mut checks = Checks::new("legacy_bloom_answers_are_rocksdb_answers");
    if checks.need(oracle()).is_none() {
        return;
    }
    let queries = keys(20_000, 0x1e9);
    let mut checked = 0;
    for bits_per_key in BITS_PER_KEY {
        for (i, n) in COUNTS.into_iter().enumerate() {
            let keys = keys(n, 0x1e9 ^ i as u64);
            let (theirs, answers) = rocksdb_filter("legacy", bits_per_key, &keys, &queries);
            let what = format!("legacy Bloom {bits_per_key} bits/key, {n} keys");
            let (format, _) = agree(&theirs, &keys, &queries, &answers, &what);
            assert!(
                n == 0 || matches!(format, RocksDbFilterFormat::LegacyBloom { .. }),
                "{what}: {format:?}"
            );
            checked += 1;
        }
    }
    eprintln!("{checked} legacy Bloom filters of RocksDB's: every answer RocksDB's");
}

#[test]
fn ribbon_answers_are_rocksdb_answers() {
    let mut checks = Checks::new("ribbon_answers_are_rocksdb_answers");
    if checks.need(oracle()).is_none() {
        return;
    }
    let queries = keys(20_000, 0x41bb);
    let (mut ribbons, mut others) = (0, 0);
    for bits_per_key in BITS_PER_KEY {
        for (i, n) in COUNTS.into_iter().enumerate() {
            let keys = keys(n, 0x41bb ^ i as u64);
            let (theirs, answers) = rocksdb_filter("ribbon", bits_per_key, &keys, &queries);
            let what = format!("Ribbon policy {bits_per_key} bits/key, {n} keys");
            match agree(&theirs, &keys, &queries, &answers, &what).0 {
                RocksDbFilterFormat::Ribbon { .. } => ribbons += 1,
                _ => others += 1,
            }
        }
    }
    assert!(ribbons > 0, "RocksDB built no Ribbon filter");
    eprintln!(
        "{ribbons} Ribbon filters and {others} of RocksDB's fallbacks: every answer RocksDB's"
    );
}

/// `RocksDbRibbonBuilder` writes RocksDB's bytes: for every bits per key and key count here (around RocksDB's
/// switch between Ribbon and its Bloom fallback below 1024 slots, around a block of 128 slots, and larger), and for
/// 10^6 keys, the block `NewRibbonFilterPolicy`'s builder writes for the same keys, and RocksDB's reader finds every
/// key in it.
#[test]
fn ribbon_bytes_are_rocksdb_bytes() {
    let mut checks = Checks::new("ribbon_bytes_are_rocksdb_bytes");
    if checks.need(oracle()).is_none() {
        return;
    }
    const RIBBON_BITS_PER_KEY: [f64; 10] = [1.0, 2.5, 5.0, 7.5, 8.0, 10.0, 16.0, 23.4, 50.0, 99.0];
    const RIBBON_COUNTS: [usize; 15] = [
        0, 1, 2, 5, 63, 64, 65, 127, 128, 129, 500, 1000, 4097, 10_000, 100_000,
    ];
    let configs = RIBBON_BITS_PER_KEY
        .iter()
        .flat_map(|&b| RIBBON_COUNTS.iter().map(move |&n| (b, n)))
        .chain([(7.5, 1_000_000)]);
    let (mut ribbons, mut fallbacks, mut empty) = (0, 0, 0);
    for (i, (bits_per_key, n)) in configs.enumerate() {
        let keys = keys(n, 0x71bb ^ i as u64);
        // The present keys are the queries: RocksDB's reader must find each in RocksDB's block.
        let (theirs, answers) = rocksdb_filter("ribbon", bits_per_key, &keys, &keys);
        assert!(
            answers.iter().all(|&a| a),
            "RocksDB lost a key of its own filter"
        );
        let ours = ribbon_bytes(bits_per_key, &keys);
        let what = format!("{bits_per_key} bits/key, {n} keys");
        assert!(ours == theirs, "{what}: our bytes differ from RocksDB's");
        match RocksDbFilter::from_verified(&ours).format() {
            RocksDbFilterFormat::Ribbon { .. } => ribbons += 1,
            RocksDbFilterFormat::FastLocalBloom { .. } => fallbacks += 1,
            RocksDbFilterFormat::Empty if n == 0 && ours.is_empty() => empty += 1,
            other => panic!("{what}: {other:?}"),
        }
    }
    assert!(ribbons > 0 && fallbacks > 0);
    eprintln!(
        "{} Ribbon-policy blocks byte-identical to RocksDB's: {ribbons} Ribbon, {fallbacks} RocksDB's Bloom \
         fallback, {empty} of no keys",
        ribbons + fallbacks + empty
    );
}

/// Under `optimize_filters_for_memory`, RocksDB 7.8.3 (Debian's, which sizes filters with glibc's
/// `malloc_usable_size`) writes our builders' bytes with the setting on, for every bits per key and key count here
/// whose allocation glibc serves from its heap: below its mmap threshold, 128 KiB in this process, which freed no
/// larger block. At 10^6 keys (1.25 MB), served by `mmap`, RocksDB grows the filter to the whole lines of the
/// allocation's 4 KiB pages, as `with_optimize_filters_for_memory` says, where ours keeps the target size.
#[test]
fn optimized_for_memory_bytes_are_rocksdb_bytes_from_glibcs_heap() {
    let mut checks = Checks::new("optimized_for_memory_bytes_are_rocksdb_bytes_from_glibcs_heap");
    if checks.need(oracle()).is_none() {
        return;
    }
    const MMAP_THRESHOLD: usize = 128 << 10;
    let (mut compared, mut mmapped) = (0, 0);
    for imple in ["bloom", "ribbon"] {
        for bits_per_key in BITS_PER_KEY {
            for (i, n) in COUNTS.into_iter().enumerate() {
                let keys = keys(n, 0x0ff ^ i as u64);
                let ours = if imple == "bloom" {
                    let mut builder = RocksDbBloomBuilder::new(bits_per_key);
                    keys.iter().for_each(|k| builder.add_key(k));
                    builder.finish()
                } else {
                    let mut builder = RocksDbRibbonBuilder::new(bits_per_key);
                    keys.iter().for_each(|k| builder.add_key(k));
                    builder.finish()
                };
                // RocksDB asks for the block and its 5-byte trailer; glibc adds 8 bytes and rounds to 16.
                if ours.len() + 5 + 8 + 15 >= MMAP_THRESHOLD {
                    mmapped += 1;
                    continue;
                }
                let (theirs, _) = rocksdb_filter_with(imple, bits_per_key, true, &keys, &[]);
                let what = format!("{imple} {bits_per_key} bits/key, {n} keys");
                assert!(ours == theirs, "{what}: our bytes differ from RocksDB's");
                compared += 1;
            }
        }
    }
    // 10^6 keys at 10 bits per key: some 1.24 MB of lines, and the allocation RocksDB asks for them (with 5 bytes
    // of metadata and 5 of trailer) glibc maps in whole 4 KiB pages, less its 16-byte header: RocksDB keeps the whole
    // lines of that.
    let keys = keys(1_000_000, 0x0ff);
    let mut builder = RocksDbBloomBuilder::new(10.0);
    keys.iter().for_each(|k| builder.add_key(k));
    let ours = builder.finish();
    let (theirs, _) = rocksdb_filter_with("bloom", 10.0, true, &keys, &[]);
    let chunk = (ours.len() + 5 + 8 + 15) & !15;
    let usable = (chunk + 8).next_multiple_of(4096) - 16;
    assert_eq!(
        theirs.len(),
        ((usable - 5 - 5) & !63) + 5,
        "an mmapped filter"
    );
    assert!(theirs.len() > ours.len());
    eprintln!(
        "{compared} filters optimized for memory byte-identical to RocksDB's ({mmapped} too large for glibc's heap \
         left out); at 10^6 keys RocksDB's mmapped filter grew from {} to {} bytes",
        ours.len(),
        theirs.len()
    );
}

/// Blocks RocksDB never writes, read by RocksDB's reader and ours: every metadata marker (0 to 255) over
/// filter bytes of several lengths, with metadata words that make valid, reserved and impossible layouts. Lengths
/// and words RocksDB itself would read out of bounds on are left out (a FastLocalBloom marker over fewer than 64
/// bytes, a legacy line count whose product with 64 wraps in 32 bits): ours answers "may match" there.
#[test]
fn any_metadata_reads_as_rocksdb_reads_it() {
    let mut checks = Checks::new("any_metadata_reads_as_rocksdb_reads_it");
    if checks.need(oracle()).is_none() {
        return;
    }
    let words: Vec<u32> = [
        0,
        1,
        2,
        3,
        4,
        5,
        37,
        2 << 8,
        6 << 8,
        6 << 8 | 1,
        6 << 8 | 1 << 16,
        30 << 8,
        31 << 8,
        2 << 8 | 123,
        5000 << 8 | 9,
        0x20 << 8 | 6,
        0xe6 << 8,
    ]
    .into_iter()
    .chain((0..24).map(|i| mix(i) as u32 & 0x03ff_ffff))
    .collect();
    let mut blocks = Vec::new();
    for marker in 0..=255u8 {
        for len in [0usize, 16, 32, 64, 112, 128, 192, 256, 320, 1024] {
            if marker == 0xff && len < 64 {
                continue;
            }
            for &word in &words {
                let mut block: Vec<u8> = (0..len as u64)
                    .map(|i| mix(i ^ u64::from(word) << 8 ^ u64::from(marker)) as u8)
                    .collect();
                block.push(marker);
                block.extend_from_slice(&word.to_le_bytes());
                blocks.push(block);
            }
        }
    }
    let queries = keys(200, 0x5ead);
    let mut input = Vec::new();
    put_keys(&mut input, &blocks);
    put_keys(&mut input, &queries);
    let theirs = run(&["read"], &input);
    assert_eq!(theirs.len(), blocks.len() * queries.len());
    let mut negatives = 0;
    for (block, answers) in blocks.iter().zip(theirs.chunks_exact(queries.len())) {
        let ours = RocksDbFilter::from_verified(block);
        for (q, &t) in queries.iter().zip(answers) {
            assert_eq!(
                ours.may_contain(q),
                t == 1,
                "{:?} of {} bytes: {q:x?}",
                ours.format(),
                block.len()
            );
            negatives += usize::from(t == 0);
        }
    }
    eprintln!(
        "{} blocks × {} keys: every answer RocksDB's ({negatives} no-match)",
        blocks.len(),
        queries.len()
    );
}

/// The golden RocksDB blocks of `crates/sstfilter-rocksdb/tests/golden-rocksdb/` (read there without RocksDB) are what
/// RocksDB writes: each file's block is RocksDB's filter of its keys, and its answers RocksDB's. With
/// `SSTFILTER_BLESS=1`, a listed file that does not exist is written from RocksDB's output.
#[test]
fn golden_rocksdb_blocks_are_rocksdb_blocks() {
    let mut checks = Checks::new("golden_rocksdb_blocks_are_rocksdb_blocks");
    if checks.need(oracle()).is_none() {
        return;
    }
    let dir =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../sstfilter-rocksdb/tests/golden-rocksdb");
    let absent: Vec<Vec<u8>> = (0..2000)
        .map(|i| format!("absent-{i}").into_bytes())
        .collect();
    for (name, imple, bits_per_key, n) in [
        ("fastlocalbloom-n0-bpk10", "bloom", 10.0, 0),
        ("fastlocalbloom-n100-bpk7.5", "bloom", 7.5, 100),
        ("fastlocalbloom-n1000-bpk10", "bloom", 10.0, 1000),
        ("fastlocalbloom-n1000-bpk23.4", "bloom", 23.4, 1000),
        ("ribbon-n1000-bpk10", "ribbon", 10.0, 1000),
        ("ribbon-n3000-bpk7.5", "ribbon", 7.5, 3000),
        ("legacy-n1000-bpk10", "legacy", 10.0, 1000),
    ] {
        let keys: Vec<Vec<u8>> = (0..n).map(|i| format!("golden-{i}").into_bytes()).collect();
        let (block, answers) = rocksdb_filter(imple, bits_per_key, &keys, &absent);
        let hex: String = block.iter().map(|b| format!("{b:02x}")).collect();
        let bits: String = answers.iter().map(|&a| if a { '1' } else { '0' }).collect();
        let want = format!("{hex}\n{bits}\n");
        let path = dir.join(format!("{name}.txt"));
        match std::fs::read_to_string(&path) {
            Ok(file) => assert!(
                file == want,
                "{name}: RocksDB now writes other bytes or answers"
            ),
            Err(_) if std::env::var_os("SSTFILTER_BLESS").is_some() => {
                std::fs::write(&path, want).unwrap()
            }
            Err(e) => panic!("{}: {e} (SSTFILTER_BLESS=1 writes it)", path.display()),
        }
    }
}
