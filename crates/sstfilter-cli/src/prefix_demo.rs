//! `sstfilter demo --prefix`: prefix scans across an LSM of real table files, with and without prefixes in the
//! filter blocks: how many tables each scan reads, how many it skips, and how long it takes.
//!
//! Keys are `t{tenant:05}/{row:04}`, tenants numbered `2·i`. Table `t` of `T` holds 25 rows of each of 100 tenants
//! present in every table (`i < 100`), and 25 rows of each tenant `i` in 100..100 + 100·T with `i mod T = t`
//! (present in one table). The odd tenants, which sort between the present ones, are in no table, so that only a
//! filter can rule them out. A scan of `t{tenant:05}/` over every table, newest first, is asked for 1,000 tenants
//! of each class.

use std::io::Write;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use sstfilter::{
    BlockedBloomPolicy, DelimitedPrefix, PrefixExtractor, TableFilterOptions, key_hash,
};
use sstfilter_table::{Table, TableOptions, TableStats};

use crate::error::{CliResult, Context};
use crate::lsm::{create_dir, create_table, open_table, reading, table_path, total_stats, writing};
use crate::text::{TextTable, per_second, thousands};

/// Tenants present in every table.
const EVERYWHERE: u64 = 100;
/// Tenants per table present in that table only.
const ONE_TABLE_PER_TABLE: u64 = 100;
/// Rows of a tenant in a table.
const ROWS: u64 = 25;
/// Scans per class of tenant.
const SCANS: u64 = 1000;

/// The three ways the tables are built.
const CONFIGS: [(&str, Option<bool>); 3] = [
    ("whole keys only", None),
    ("keys + prefixes", Some(true)),
    ("prefixes only", Some(false)),
];

/// Most tables: tenant `i` is written as the 5-digit number `2·i`, and the tenants reach `100 + 100·T`.
pub(crate) const MAX_TABLES: u64 = 499;

fn key(tenant: u64, row: u64) -> Vec<u8> {
    format!("t{:05}/{row:04}", 2 * tenant).into_bytes()
}

pub(crate) fn run(
    out: &mut dyn Write,
    root: &Path,
    tables: u64,
    bits_per_key: f64,
) -> CliResult<()> {
    let extractor: Arc<dyn PrefixExtractor> = Arc::new(DelimitedPrefix::new(b'/'));
    let one_table = 100..100 + ONE_TABLE_PER_TABLE * tables;
    writeln!(
        out,
        "sstfilter demo --prefix: prefix scans over an LSM of {tables} tables of {} keys `t<tenant>/<row>`",
        thousands((EVERYWHERE + ONE_TABLE_PER_TABLE) * ROWS)
    )?;
    writeln!(
        out,
        "{SCANS} scans of `t<tenant>/` per class: tenants in no table, in one table, in all {tables}; extractor {}, \
         BlockedBloom at {bits_per_key} bits/key\n",
        extractor.name()
    )?;
    let mut report = TextTable::new(&[
        &[
            "",
            "filter",
            "",
            "tables read",
            "tables skipped",
            "data blocks",
            "rows",
            "scans",
        ],
        &[
            "configuration",
            "bytes",
            "tenants",
            "per scan",
            "per scan",
            "read per scan",
            "per scan",
            "per second",
        ],
    ]);

    // A digest of the rows every class of scans returned, to check that every configuration returns the same.
    let mut digests: Vec<u64> = Vec::new();
    for (name, prefixes) in CONFIGS {
        let mut filters = TableFilterOptions::new().point(BlockedBloomPolicy::new(bits_per_key)?);
        if let Some(whole_keys) = prefixes {
            filters = filters.prefixes(extractor.clone(), whole_keys)?;
        }
        let options = TableOptions::default().filters(filters);
        let dir = root.join(name.replace(' ', "-").replace('+', "and"));
        create_dir(&dir)?;
        let mut lsm = Vec::new();
        for t in 0..tables {
            let path = table_path(&dir, t);
            let mut builder = create_table(&path, &options)?;
            let mut tenants: Vec<u64> = (0..EVERYWHERE)
                .chain(one_table.clone().filter(|i| i % tables == t))
                .collect();
            tenants.sort_unstable();
            for tenant in tenants {
                for row in 0..ROWS {
                    builder
                        .add(&key(tenant, row), b"value")
                        .context(writing(&path))?;
                }
            }
            builder.finish().context(writing(&path))?;
            lsm.push(open_table(&path, &options)?);
        }
        let filter_bytes: u64 = lsm
            .iter()
            .filter_map(Table::filter_handle)
            .map(|h| h.size())
            .sum();
        // Scanned as `t{n:05}/`: `n = 2·i` for tenant `i`, and the odd `n` of no tenant.
        let one_table_step = ((one_table.end - one_table.start) / SCANS).max(1) as usize;
        let classes: [(&str, Vec<u64>); 3] = [
            ("absent", (0..SCANS).map(|i| 2 * i + 1).collect()),
            (
                "in one table",
                one_table
                    .clone()
                    .step_by(one_table_step)
                    .take(SCANS as usize)
                    .map(|i| 2 * i)
                    .collect(),
            ),
            (
                "in every table",
                (0..SCANS).map(|i| 2 * (i % EVERYWHERE)).collect(),
            ),
        ];
        for (class, tenants) in classes {
            let before: TableStats = total_stats(&lsm);
            let started = Instant::now();
            let (mut rows, mut digest) = (0u64, 0u64);
            for &tenant in &tenants {
                let scan = format!("t{tenant:05}/");
                for (t, table) in lsm.iter().enumerate().rev() {
                    let found = table
                        .scan_prefix(scan.as_bytes())
                        .context(reading(&dir, t))?;
                    for (key, _) in found {
                        rows += 1;
                        digest = digest.wrapping_mul(0x100_0000_01B3) ^ key_hash(&key).get();
                    }
                }
            }
            let elapsed = started.elapsed();
            digests.push(digest);
            let delta = total_stats(&lsm) - before;
            let scans = tenants.len() as u64;
            report.row(vec![
                name.to_owned(),
                thousands(filter_bytes),
                class.to_owned(),
                format!(
                    "{:.2}",
                    (delta.prefix_scans - delta.prefix_scans_skipped) as f64 / scans as f64
                ),
                format!("{:.2}", delta.prefix_scans_skipped as f64 / scans as f64),
                format!("{:.2}", delta.data_block_reads as f64 / scans as f64),
                format!("{:.1}", rows as f64 / scans as f64),
                per_second(scans as f64 / elapsed.max(Duration::from_nanos(1)).as_secs_f64()),
            ]);
        }
    }
    write!(out, "{}", report.render())?;
    let classes = digests.len() / CONFIGS.len();
    let mut configs = digests.chunks(classes.max(1));
    let first = configs.next().unwrap_or_default();
    if configs.any(|config| config != first) {
        return Err("the configurations' scans returned different rows".into());
    }
    writeln!(
        out,
        "\nEvery scan returned the same rows in every configuration. A table is read when its filter cannot rule \
         the prefix out;\nwithout prefixes in the filter, every scan reads every table (the tables span the whole \
         key range)."
    )?;
    Ok(())
}
