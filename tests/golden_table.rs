//! Format freeze for table filters (FORMAT.md section 9): the blocks of one table filter in each combination of
//! its options, under `tests/golden-table/<combination>/`, must keep being written byte for byte from the same
//! keys and options, and the reader written from FORMAT.md alone (`tests/spec/table.rs`) must answer every key,
//! scan and range question over them as `TableFilter` does.
//!
//! Each directory holds the blocks a `TableFilterBuilder` gave, as lowercase hex: `point.hex` (a filter block),
//! `index.hex` and `partition-<i>.hex` (a partition index whose entry `i` has offset `i`), `range.hex`. To create
//! a newly listed combination, run with `SSTFILTER_BLESS=1`; existing files are never rewritten.

mod spec;

use std::ops::Bound;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use spec::table::SpecTable;
use spec::{SpecBound, SpecExtractor};
use sstfilter::{
    BlockedBloomPolicy, DelimitedPrefix, KeyProbe, PartitionCuts, RangePolicy, RibbonPolicy,
    StandardBloomPolicy, TableFilter, TableFilterBuilder, TableFilterOptions, TableFilterPart,
    key_hash,
};

/// The keys of every golden table: 5 tenants `t<n>/`, ids in steps of 7, sorted.
fn keys() -> Vec<Vec<u8>> {
    let mut keys: Vec<Vec<u8>> = (0..240u32)
        .map(|i| format!("t{}/{:05}", i % 5, i * 7).into_bytes())
        .collect();
    keys.sort();
    keys
}

const SLASH: u8 = b'/';

/// Every combination, by directory name: its options.
fn combinations() -> Vec<(&'static str, TableFilterOptions)> {
    let tenants = || Arc::new(DelimitedPrefix::new(SLASH));
    let range = RangePolicy::new(1 << 10, 0.01).unwrap();
    let bloom = || TableFilterOptions::new().point(BlockedBloomPolicy::new(10.0).unwrap());
    let partitioned = |o: TableFilterOptions| o.partitioned(160, PartitionCuts::Anywhere);
    let combinations = || -> Result<_, sstfilter::UsageError> {
        Ok(vec![
            ("point", bloom()),
            ("point-prefixes", bloom().prefixes(tenants(), true)?),
            (
                "prefixes-only",
                TableFilterOptions::new()
                    .point(StandardBloomPolicy::new(10.0).unwrap())
                    .prefixes(tenants(), false)?,
            ),
            ("range", TableFilterOptions::new().range(range)?),
            (
                "point-range",
                TableFilterOptions::new()
                    .point(RibbonPolicy::with_fpr(0.01).unwrap())
                    .range(range)?,
            ),
            (
                "point-prefixes-range",
                bloom().prefixes(tenants(), true)?.range(range)?,
            ),
            ("partitioned", partitioned(bloom())?),
            (
                "partitioned-prefixes",
                partitioned(bloom().prefixes(tenants(), true)?)?,
            ),
            ("partitioned-range", partitioned(bloom().range(range)?)?),
            (
                "partitioned-prefixes-range",
                partitioned(bloom().prefixes(tenants(), true)?.range(range)?)?,
            ),
        ])
    };
    combinations().unwrap()
}

/// The blocks of a table filter as files: name, bytes, in the order the builder hands them.
fn written(options: &TableFilterOptions) -> Vec<(String, Vec<u8>)> {
    let mut builder = TableFilterBuilder::new(options);
    for key in keys() {
        builder.add_key(&key).unwrap();
    }
    let mut files = Vec::new();
    let mut partitions = 0u64;
    builder
        .finish()
        .unwrap()
        .write(|part, bytes| {
            let (name, position) = match part {
                TableFilterPart::Point => ("point.hex".to_owned(), 0),
                TableFilterPart::Partition(i) => {
                    partitions += 1;
                    (format!("partition-{i}.hex"), i as u64)
                }
                TableFilterPart::PartitionIndex => ("index.hex".to_owned(), 0),
                TableFilterPart::Range => ("range.hex".to_owned(), 0),
                _ => unreachable!("no other part"),
            };
            files.push((name, bytes.to_vec()));
            Ok(position)
        })
        .unwrap();
    files
}

fn to_hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn from_hex(text: &str) -> Vec<u8> {
    let text = text.trim();
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap())
        .collect()
}

fn dir(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden-table")
        .join(name)
}

/// A table's golden blocks, read back: the point block (or index), the range block, and the partitions by offset.
struct Golden {
    point: Option<Vec<u8>>,
    range: Option<Vec<u8>>,
    partitions: Vec<Vec<u8>>,
}

fn read(name: &str) -> Golden {
    let file = |f: &str| {
        std::fs::read_to_string(dir(name).join(f))
            .ok()
            .map(|t| from_hex(&t))
    };
    let partitions: Vec<Vec<u8>> = (0..)
        .map_while(|i| file(&format!("partition-{i}.hex")))
        .collect();
    Golden {
        point: file("point.hex").or_else(|| file("index.hex")),
        range: file("range.hex"),
        partitions,
    }
}

/// Absent keys, scans and ranges beside the present ones: every key with a byte changed or appended.
fn questions() -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for key in keys().iter().step_by(3) {
        let mut changed = key.clone();
        *changed.last_mut().unwrap() ^= 1;
        out.push(changed);
        let mut longer = key.clone();
        longer.push(b'0');
        out.push(longer);
        out.push(key[..key.len() - 2].to_vec());
    }
    out.extend(
        [&b""[..], b"t", b"t9/", b"u", b"t1/", b"t1/0", b"\xff"]
            .iter()
            .map(|k| k.to_vec()),
    );
    out
}

#[test]
fn golden_table_filters_are_frozen_and_read_alike_by_the_spec() {
    let bless = std::env::var_os("SSTFILTER_BLESS").is_some();
    let hash = |x: &[u8]| key_hash(x).get();
    let spec_tenants = SpecExtractor::Delimited(SLASH);
    for (name, options) in combinations() {
        let files = written(&options);
        if !dir(name).exists() {
            assert!(
                bless,
                "{name} is missing (run with SSTFILTER_BLESS=1 to create it)"
            );
            std::fs::create_dir_all(dir(name)).unwrap();
            for (file, bytes) in &files {
                std::fs::write(dir(name).join(file), to_hex(bytes)).unwrap();
            }
        }
        for (file, bytes) in &files {
            let golden = std::fs::read_to_string(dir(name).join(file))
                .unwrap_or_else(|e| panic!("{name}/{file}: {e}"));
            assert!(
                from_hex(&golden) == *bytes,
                "{name}/{file}: this crate now writes other bytes for the same keys and options"
            );
        }
        let golden = read(name);
        let blocks: Vec<&[u8]> = golden.partitions.iter().map(Vec::as_slice).collect();
        let spec = SpecTable {
            point: golden.point.as_deref(),
            range: golden.range.as_deref(),
            blocks: &blocks,
        };
        assert!(spec.in_their_places(), "{name}");
        let ours =
            TableFilter::open(&options, golden.point.as_deref(), golden.range.as_deref()).unwrap();
        // Swapped, as a store that mixed up its two places would give them: both readers refuse the pair.
        if let (Some(point), Some(range)) = (golden.point.as_deref(), golden.range.as_deref()) {
            let swapped = SpecTable {
                point: Some(range),
                range: Some(point),
                blocks: &blocks,
            };
            assert!(!swapped.in_their_places(), "{name}");
            assert!(
                TableFilter::open(&options, Some(range), Some(point)).is_err(),
                "{name}"
            );
        }
        assert!(
            ours.point_error().is_none() && ours.range_error().is_none(),
            "{name}"
        );
        let loader = InMemory(&blocks);
        let extractor = options.prefix_extractor().map(|_| spec_tenants);
        let mut absent = [0usize; 3]; // keys, scans, ranges
        for x in keys().iter().chain(&questions()) {
            let key = spec.may_contain_key(x, extractor, &hash);
            assert_eq!(
                ours.may_contain(&KeyProbe::new(x), &loader).must_read(),
                key,
                "{name}: key {x:?}"
            );
            let scan = spec.may_contain_scan(x, extractor, &hash);
            assert_eq!(
                ours.may_contain_prefix(x, &loader).must_read(),
                scan,
                "{name}: scan {x:?}"
            );
            let mut next = x.clone();
            next.push(b'5');
            for (lower, upper) in [
                (SpecBound::Included(&x[..]), SpecBound::Included(&x[..])),
                (SpecBound::Included(&x[..]), SpecBound::Excluded(&next[..])),
                (SpecBound::Excluded(&x[..]), SpecBound::Included(&next[..])),
                (SpecBound::Unbounded, SpecBound::Excluded(&x[..])),
            ] {
                let range = spec.may_contain_range(lower, upper, extractor, &hash);
                assert_eq!(
                    ours.may_contain_range(bound(lower), bound(upper), &loader)
                        .must_read(),
                    range,
                    "{name}: {lower:?}..{upper:?}"
                );
                absent[2] += usize::from(!range);
            }
            absent[0] += usize::from(!key);
            absent[1] += usize::from(!scan);
        }
        // The comparison covered "absent" answers too, for every question the combination filters.
        let has_range = name.contains("range");
        let filters_scans = options.prefix_extractor().is_some() || has_range;
        // A range of one key is a whole-key question: a block of prefixes only cannot answer it.
        let filters_ranges = has_range || options.holds_whole_keys();
        assert!(
            absent[0] > 0
                && (absent[1] > 0 || !filters_scans)
                && (absent[2] > 0 || !filters_ranges),
            "{name}: absent answers {absent:?}"
        );
        for key in keys() {
            assert!(
                spec.may_contain_key(&key, extractor, &hash),
                "{name}: spec lost {key:?}"
            );
        }
    }
}

/// The golden partitions by offset (their index's entry `i` has offset `i`).
struct InMemory<'a>(&'a [&'a [u8]]);

impl sstfilter::PartitionLoader for InMemory<'_> {
    type Block<'b>
        = &'b [u8]
    where
        Self: 'b;
    type Error = ();

    fn load(&self, p: &sstfilter::Partition) -> Result<&[u8], ()> {
        let at = usize::try_from(p.offset).map_err(|_| ())?;
        self.0.get(at).copied().ok_or(())
    }
}

/// A spec bound as ours.
fn bound(b: SpecBound<'_>) -> Bound<&[u8]> {
    match b {
        SpecBound::Included(k) => Bound::Included(k),
        SpecBound::Excluded(k) => Bound::Excluded(k),
        SpecBound::Unbounded => Bound::Unbounded,
    }
}
