//! Prefix scans through the reference table: every scan returns exactly the entries that start with its prefix,
//! whatever the filter says; tables whose filter holds the extractor's prefixes and not the scanned one are skipped
//! without a read, and tables that cannot tell are read (and counted).

use std::sync::Arc;

use sstfilter::{Answer, DelimitedPrefix, FixedPrefix, PrefixExtractor, RibbonPolicy};
use sstfilter_table::{Table, TableBuilder, TableOptions};

/// Entries `t{tenant:03}/{row:04}` for the tenants in `tenants`, 20 rows each.
fn entries(tenants: impl Iterator<Item = u32>) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut out: Vec<(Vec<u8>, Vec<u8>)> = tenants
        .flat_map(|t| {
            (0..20).map(move |r| {
                (
                    format!("t{t:03}/{r:04}").into_bytes(),
                    format!("v{t}.{r}").into_bytes(),
                )
            })
        })
        .collect();
    out.sort();
    out
}

/// The table of `entries` written with `written` and read with `read` (whose extractor its prefix questions use).
fn table(
    written: &TableOptions,
    read: &TableOptions,
    entries: &[(Vec<u8>, Vec<u8>)],
) -> Table<Vec<u8>> {
    let mut builder = TableBuilder::new(Vec::new(), written).unwrap();
    for (k, v) in entries {
        builder.add(k, v).unwrap();
    }
    let (_, file) = builder.finish().unwrap();
    Table::from_reader(file.clone(), file.len() as u64, read).unwrap()
}

/// Options with a BlockedBloom filter at 10 bits/key holding `extractor`'s prefixes.
fn with_prefixes(extractor: Arc<dyn PrefixExtractor>, whole_keys: bool) -> TableOptions {
    TableOptions::default().filters(
        sstfilter::TableFilterOptions::new()
            .point(sstfilter::BlockedBloomPolicy::new(10.0).unwrap())
            .prefixes(extractor, whole_keys)
            .unwrap(),
    )
}

#[test]
fn scans_return_exactly_the_prefixed_entries_and_skip_tables_without_them() {
    let tenants: Arc<dyn PrefixExtractor> = Arc::new(DelimitedPrefix::new(b'/'));
    let stored = entries((0..300).filter(|t| t % 3 == 0)); // every third tenant
    for whole_keys in [true, false] {
        for block_size in [64usize, 4096] {
            let options = with_prefixes(tenants.clone(), whole_keys).block_size(block_size);
            let t = table(&options, &options, &stored);
            for tenant in 0..300u32 {
                for scan in [
                    format!("t{tenant:03}/"),
                    format!("t{tenant:03}/001"),
                    format!("t{tenant:03}/0019"),
                ] {
                    let want: Vec<(Vec<u8>, Vec<u8>)> = stored
                        .iter()
                        .filter(|(k, _)| k.starts_with(scan.as_bytes()))
                        .cloned()
                        .collect();
                    let got = t.scan_prefix(scan.as_bytes()).unwrap();
                    assert_eq!(
                        got, want,
                        "scan {scan}, whole keys {whole_keys}, block size {block_size}"
                    );
                }
            }
            let stats = t.stats();
            assert_eq!(stats.prefix_scans, 900);
            // 600 scans of absent tenants; the filter skips about 99 % of them.
            assert!(stats.prefix_scans_skipped > 580, "{stats:?}");
            assert_eq!(stats.prefix_scans_unfiltered, 0);
            // Point lookups: every stored key is found, through the filter or not.
            for (k, v) in &stored {
                assert_eq!(t.get(k).unwrap().as_deref(), Some(&v[..]));
            }
        }
    }
}

#[test]
fn tables_that_cannot_tell_are_read_and_counted() {
    let stored = entries(0..50);
    let slash: Arc<dyn PrefixExtractor> = Arc::new(DelimitedPrefix::new(b'/'));
    // No prefixes in the filter, or no filter, or another extractor, or none given to the reader: every scan
    // reads the table, and is right. (Written with the first options, read with the second.)
    let slashes = with_prefixes(slash.clone(), true);
    let cases = [
        ("no prefixes", TableOptions::default(), slashes.clone()),
        (
            "no filter",
            TableOptions::default().filters(sstfilter::TableFilterOptions::new()),
            slashes.clone(),
        ),
        (
            "other extractor",
            with_prefixes(Arc::new(FixedPrefix::new(4)), true),
            slashes.clone(),
        ),
        (
            "no extractor to read with",
            slashes,
            TableOptions::default(),
        ),
        (
            "scan shorter than the prefix",
            TableOptions::default().filters(
                sstfilter::TableFilterOptions::new()
                    .point(RibbonPolicy::new(10.0).unwrap())
                    .prefixes(Arc::new(FixedPrefix::new(5)), true)
                    .unwrap(),
            ),
            with_prefixes(Arc::new(FixedPrefix::new(5)), true),
        ),
    ];
    for (name, written, read) in cases {
        let t = table(&written, &read, &stored);
        for scan in [&b"t00"[..], b"t001", b"t999"] {
            assert!(
                matches!(t.may_contain_prefix(scan), Answer::MayContain(_)),
                "{name}"
            );
            let want: Vec<_> = stored
                .iter()
                .filter(|(k, _)| k.starts_with(scan))
                .cloned()
                .collect();
            assert_eq!(t.scan_prefix(scan).unwrap(), want, "{name}: {scan:?}");
        }
        let stats = t.stats();
        assert_eq!(
            (
                stats.prefix_scans,
                stats.prefix_scans_unfiltered,
                stats.prefix_scans_skipped
            ),
            (3, 3, 0),
            "{name}"
        );
    }
}
