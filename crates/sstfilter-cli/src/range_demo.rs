//! `sstfilter demo --range`: range scans across an LSM of real table files, with a point filter in every table,
//! and with a range filter beside it (its bytes counted with the point filter's): how many tables each short scan
//! reads, how many it skips, and how long it takes.
//!
//! Keys are `order:{id:010}`. Ids come in runs of 1,000: in the even runs every fourth id is a key, dealt round
//! robin to the tables; the odd runs hold no key. So every table spans the whole key range, and a scan inside an
//! odd run is empty in every table, where only a range filter can rule a table out (a point filter is never asked
//! about a range). Each configuration scans `[order:X, order:X+k)`, newest table first, for 1,000 empty and 1,000
//! starts `X` in runs that hold keys, at each `k`.

use std::io::Write;
use std::ops::Bound::{Excluded, Included};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use sstfilter::{BlockedBloomPolicy, RangePolicy, key_hash};
use sstfilter_table::{Table, TableOptions, TableStats};

use crate::error::{CliResult, Context};
use crate::lsm::{create_dir, create_table, open_table, reading, table_path, total_stats, writing};
use crate::text::{TextTable, per_second, thousands};

/// Ids per run.
const RUN: u64 = 1000;
/// Scans per class and length.
const SCANS: u64 = 1000;
/// Scan lengths, in ids.
const LENGTHS: [u64; 3] = [1, 10, 100];
/// The range filter's longest checked range (2^8 ids) and its rate there.
const RANGE_LOG2: u32 = 8;
const RANGE_FPR: f64 = 0.01;

/// Most keys per table.
pub(crate) const MAX_KEYS: u64 = 100_000;

/// Most keys in all tables: the ids reach 8 x their number and must fit the 10 digits of `key`.
pub(crate) const MAX_ENTRIES: u64 = 1_250_000_000;

fn key(id: u64) -> Vec<u8> {
    format!("order:{id:010}").into_bytes()
}

/// Whether `id` is a key, and of which table.
fn table_of(id: u64, tables: u64) -> Option<u64> {
    ((id / RUN).is_multiple_of(2) && id.is_multiple_of(4)).then_some(id / 4 % tables)
}

pub(crate) fn run(
    out: &mut dyn Write,
    root: &Path,
    tables: u64,
    keys_per_table: u64,
    bits_per_key: f64,
) -> CliResult<()> {
    // Each even run gives every table RUN / 4 / tables keys.
    let runs = (keys_per_table * tables).div_ceil(RUN / 4).max(1);
    let last_id = 2 * runs * RUN;
    writeln!(
        out,
        "sstfilter demo --range: range scans `[order:X, order:X+k)` over an LSM of {tables} tables of about {} \
         keys `order:<id>`",
        thousands(keys_per_table)
    )?;
    writeln!(
        out,
        "{SCANS} empty scans and {SCANS} in runs that hold keys, per length k, newest table first; point filter BlockedBloom at \
         {bits_per_key} bits/key, range filter for ranges of 2^{RANGE_LOG2} ids at {} %\n",
        RANGE_FPR * 100.0
    )?;
    let mut report = TextTable::new(&[
        &[
            "",
            "filter",
            "filter",
            "",
            "",
            "tables read",
            "tables skipped",
            "data blocks",
            "rows",
            "scans",
        ],
        &[
            "filter",
            "bytes",
            "bits/key",
            "k",
            "scans",
            "per scan",
            "per scan",
            "per scan",
            "per scan",
            "per second",
        ],
    ]);
    let configs: [(&str, TableOptions); 2] = [
        (
            "point (BlockedBloom)",
            TableOptions::default().filters(
                sstfilter::TableFilterOptions::new().point(BlockedBloomPolicy::new(bits_per_key)?),
            ),
        ),
        (
            "point + range (Grafite)",
            TableOptions::default().filters(
                sstfilter::TableFilterOptions::new()
                    .point(BlockedBloomPolicy::new(bits_per_key)?)
                    .range(RangePolicy::new(1 << RANGE_LOG2, RANGE_FPR)?)?,
            ),
        ),
    ];
    let mut digests: Vec<u64> = Vec::new();
    for (name, options) in configs {
        let dir = root.join(if name.contains("range") {
            "range"
        } else {
            "point"
        });
        create_dir(&dir)?;
        let paths: Vec<PathBuf> = (0..tables).map(|t| table_path(&dir, t)).collect();
        let mut builders = paths
            .iter()
            .map(|path| create_table(path, &options))
            .collect::<CliResult<Vec<_>>>()?;
        for id in 0..last_id {
            let t = table_of(id, tables).map(|t| t as usize);
            if let Some((builder, path)) = t.and_then(|t| builders.get_mut(t).zip(paths.get(t))) {
                builder.add(&key(id), b"value").context(writing(path))?;
            }
        }
        let mut lsm = Vec::new();
        for (builder, path) in builders.into_iter().zip(&paths) {
            builder.finish().context(writing(path))?;
            lsm.push(open_table(path, &options)?);
        }
        // Every filter the tables hold: the point filter, and the range filter block beside it.
        let filter_bytes: u64 = lsm
            .iter()
            .flat_map(|t| [t.filter_handle(), t.range_filter_handle()])
            .flatten()
            .map(|h| h.size())
            .sum();
        let entries: u64 = lsm.iter().map(Table::num_entries).sum();
        for k in LENGTHS {
            for (class, parity) in [("empty", 1u64), ("in key runs", 0)] {
                // Starts spread over the runs of the class, inside a run so that the scan stays in it.
                let starts: Vec<u64> = (0..SCANS)
                    .map(|i| {
                        let run = (2 * (i * 7919 % runs) + parity) * RUN;
                        run + (i * 104_729) % (RUN - k)
                    })
                    .collect();
                let before: TableStats = total_stats(&lsm);
                let started = Instant::now();
                let (mut rows, mut digest) = (0u64, 0u64);
                for &x in &starts {
                    let (lo, hi) = (key(x), key(x + k));
                    for (t, table) in lsm.iter().enumerate().rev() {
                        let scanned = table
                            .scan_range(Included(&lo), Excluded(&hi))
                            .context(reading(&dir, t))?;
                        for (found, _) in scanned {
                            rows += 1;
                            digest = digest.wrapping_mul(0x100_0000_01B3) ^ key_hash(&found).get();
                        }
                    }
                }
                let elapsed = started.elapsed();
                digests.push(digest);
                if class == "empty" && rows > 0 {
                    return Err("an empty scan returned rows".into());
                }
                let delta = total_stats(&lsm) - before;
                let scans = starts.len() as f64;
                report.row(vec![
                    name.to_owned(),
                    thousands(filter_bytes),
                    format!("{:.2}", filter_bytes as f64 * 8.0 / entries.max(1) as f64),
                    k.to_string(),
                    class.to_owned(),
                    format!(
                        "{:.2}",
                        (delta.range_scans - delta.range_scans_skipped) as f64 / scans
                    ),
                    format!("{:.2}", delta.range_scans_skipped as f64 / scans),
                    format!("{:.2}", delta.data_block_reads as f64 / scans),
                    format!("{:.1}", rows as f64 / scans),
                    per_second(scans / elapsed.max(Duration::from_nanos(1)).as_secs_f64()),
                ]);
            }
        }
    }
    write!(out, "{}", report.render())?;
    let (first, second) = digests.split_at(digests.len() / 2);
    if first != second {
        return Err("the configurations' scans returned different rows".into());
    }
    writeln!(
        out,
        "\nEvery scan returned the same rows in both configurations. SlateDB and the reference table never ask a point \
         filter about a range,\nso with one every scan reads every table; the range filter skips a table unless it says \
         a key may lie in the range (filter bytes count both blocks)."
    )?;
    Ok(())
}
