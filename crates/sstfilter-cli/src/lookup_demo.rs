//! `sstfilter demo` (the default mode): an LSM of real table files, looked up with no filter and with each filter
//! kind.

use std::fs;
use std::io::{self, Write};
use std::path::Path;
use std::time::{Duration, Instant};

use crate::configs::SharedFilterPolicy;
use sstfilter::sizing::FilterModel;
use sstfilter::{
    AlignedBlock, FilterBlock, FilterBlockBuilder, FilterCounts, FilterPolicy, FilterStats,
    KeyHash, TRAILER_LEN, key_hash,
};
use sstfilter_table::{Table, TableOptions, TableStats};

use crate::configs::{CONFIGS, FilterConfig};
use crate::error::{CliResult, Context};
use crate::keys;
use crate::lsm::{self, DemoArgs, total_stats};
use crate::plot::{self, Series, Style};
use crate::progress::{bar, tick};
use crate::text::{TextTable, bytes, per_second, percent, thousands};

/// Seeds of the lookup streams: fixed, so every configuration and every run asks for the same keys.
const ABSENT_SEED: u64 = 1;
const PRESENT_SEED: u64 = 2;
const SWEEP_SEED: u64 = 3;

/// Absent keys probed per point of the `--plot` sweep: enough for ±7 % at a 0.02 % rate.
const SWEEP_PROBES: u64 = 1_000_000;

/// What one configuration measured.
struct Row {
    name: &'static str,
    filter_bytes: u64,
    keys: u64,
    tables: u64,
    /// Mean theoretical FPR of the tables' filters (`None` without filters).
    fpr_theory: Option<f64>,
    absent: TableStats,
    absent_time: Duration,
    /// What the tables' shared `FilterStats` counted over both runs.
    filter_counts: FilterCounts,
    present: TableStats,
    present_time: Duration,
    lookups: u64,
}

impl Row {
    fn bits_per_key(&self) -> f64 {
        self.filter_bytes as f64 * 8.0 / (self.keys * self.tables) as f64
    }

    /// Data-block reads an absent lookup costs in theory: one per table without a filter, the false-positive
    /// rate per table with one.
    fn expected_absent_reads(&self) -> f64 {
        self.fpr_theory
            .map_or(self.tables as f64, |fpr| fpr * self.tables as f64)
    }

    fn absent_reads(&self) -> f64 {
        self.absent.data_block_reads as f64 / self.lookups as f64
    }
}

/// Runs the lookups demo with its tables in `root`.
pub(crate) fn run(out: &mut dyn Write, root: &Path, args: &DemoArgs) -> CliResult<()> {
    let total = args.keys * args.tables;
    writeln!(
        out,
        "sstfilter demo: an LSM of {} tables x {} keys ({} keys, 16-24 byte keys, 32-byte values, 4 KiB data blocks)",
        args.tables,
        thousands(args.keys),
        thousands(total)
    )?;
    writeln!(
        out,
        "{} absent and {} present lookups per configuration, newest table first; filters at {} bits/key",
        thousands(args.lookups),
        thousands(args.lookups),
        args.bits_per_key
    )?;
    writeln!(
        out,
        "tables in {} ({})\n",
        root.display(),
        if args.dir.is_some() {
            "kept"
        } else {
            "removed at exit"
        }
    )?;

    let absent: Vec<Vec<u8>> = keys::absent_ids(args.lookups, args.tables, args.keys, ABSENT_SEED)
        .into_iter()
        .map(keys::key)
        .collect();
    let present: Vec<u64> = keys::present_ids(args.lookups, args.tables, args.keys, PRESENT_SEED);

    let mut rows = Vec::new();
    for config in CONFIGS {
        let dir = root.join(config.name.replace(' ', "-"));
        let tables = build_tables(out, &dir, config, args)?;
        rows.push(measure(
            config.name,
            &dir,
            &tables,
            &absent,
            &present,
            args,
        )?);
        if args.dir.is_none() {
            // Keep at most one configuration's tables on disk at a time.
            drop(tables);
            fs::remove_dir_all(&dir)
                .context(|| format!("cannot remove the directory {}", dir.display()))?;
        }
    }
    print_report(out, &rows)?;
    if let Some(latency) = args.read_latency {
        print_remote(out, &rows, latency)?;
    }

    if let Some(path) = &args.plot {
        let series = chart_series(&rows, args)?;
        let title = format!(
            "False-positive rate vs bits/key ({} keys per filter)",
            thousands(args.keys)
        );
        plot::write(out, path, &title, &series)?;
    }
    Ok(())
}

/// Builds the configuration's tables and opens them (index 0 is the oldest).
fn build_tables(
    out: &mut dyn Write,
    dir: &Path,
    config: &FilterConfig,
    args: &DemoArgs,
) -> CliResult<Vec<Table>> {
    let options = match (config.policy)(args.bits_per_key)? {
        Some(policy) => {
            TableOptions::default().filters(sstfilter::TableFilterOptions::new().point(policy))
        }
        None => TableOptions::default().filters(sstfilter::TableFilterOptions::new()),
    };
    let started = Instant::now();
    let label = format!("{}: building tables", config.name);
    let (paths, file_bytes) = lsm::build_tables(dir, &options, args, label)?;
    writeln!(
        out,
        "{:<12} built {} tables ({}) in {:.2} s",
        config.name,
        args.tables,
        bytes(file_bytes),
        started.elapsed().as_secs_f64()
    )?;
    // One FilterStats for all the tables of a configuration, as a store keeps one for all its tables.
    let stats = FilterStats::new();
    let tables = paths
        .iter()
        .map(|p| lsm::open_table(p, &options).map(|t| t.with_filter_stats(stats.clone())))
        .collect::<CliResult<Vec<_>>>()?;
    for table in &tables {
        if let Some(e) = table.filter_error() {
            return Err(format!("a freshly built filter block does not open: {e}").into());
        }
    }
    Ok(tables)
}

/// Runs the absent and the present lookups against the tables and collects the counters.
fn measure(
    name: &'static str,
    dir: &Path,
    tables: &[Table],
    absent: &[Vec<u8>],
    present: &[u64],
    args: &DemoArgs,
) -> CliResult<Row> {
    let stats = || total_stats(tables);

    let progress = bar(absent.len() as u64, format!("{name}: absent lookups"));
    let before = stats();
    let started = Instant::now();
    for (n, key) in absent.iter().enumerate() {
        if lookup(dir, tables, key)?.is_some() {
            return Err(format!("absent key {:?} was found", String::from_utf8_lossy(key)).into());
        }
        tick(&progress, n as u64);
    }
    let absent_time = started.elapsed();
    let absent_stats = stats() - before;
    progress.finish_and_clear();

    let keys: Vec<Vec<u8>> = present.iter().map(|&id| keys::key(id)).collect();
    let progress = bar(keys.len() as u64, format!("{name}: present lookups"));
    let before = stats();
    let started = Instant::now();
    let mut wrong = None;
    for (n, key) in keys.iter().enumerate() {
        let value = lookup(dir, tables, key)?;
        if wrong.is_none()
            && value.as_deref() != present.get(n).map(|&id| keys::value(id)).as_deref()
        {
            wrong = Some(n);
        }
        tick(&progress, n as u64);
    }
    let present_time = started.elapsed();
    let present_stats = stats() - before;
    progress.finish_and_clear();
    if let Some(n) = wrong {
        let key = keys.get(n).map(|k| String::from_utf8_lossy(k).into_owned());
        return Err(format!("present key {key:?} was not found with its value").into());
    }

    let filters: Vec<&FilterBlock<AlignedBlock>> = tables
        .iter()
        .filter_map(|t| t.table_filter().point_filter())
        .collect();
    let fpr_theory = (!filters.is_empty())
        .then(|| filters.iter().map(|f| f.expected_fpr()).sum::<f64>() / filters.len() as f64);
    let filter_bytes = tables
        .iter()
        .filter_map(Table::filter_handle)
        .map(|h| h.size())
        .sum();
    let filter_counts = tables
        .first()
        .map(|t| t.filter_stats().counts())
        .unwrap_or_default();
    Ok(Row {
        name,
        filter_counts,
        filter_bytes,
        keys: args.keys,
        tables: args.tables,
        fpr_theory,
        absent: absent_stats,
        absent_time,
        present: present_stats,
        present_time,
        lookups: absent.len() as u64,
    })
}

/// An LSM point lookup: hash once, ask the tables (those in `dir`, oldest first) newest first, stop at the first
/// that holds the key.
fn lookup(dir: &Path, tables: &[Table], key: &[u8]) -> CliResult<Option<Vec<u8>>> {
    let hash = key_hash(key);
    for (t, table) in tables.iter().enumerate().rev() {
        if let Some(value) = table
            .get_with_hash(key, hash)
            .context(lsm::reading(dir, t))?
        {
            return Ok(Some(value));
        }
    }
    Ok(None)
}

/// The same lookups on a simulated remote store: every data-block read the run made is charged `latency` on top
/// of the measured time, and the time saved is against the first configuration (no filter).
fn print_remote(out: &mut dyn Write, rows: &[Row], latency: Duration) -> io::Result<()> {
    writeln!(
        out,
        "\nSIMULATED remote storage: each data-block read charged {latency:?} (an object-store GET), on top of the \
         measured time;\nper 1,000 lookups, and the time the filters saved against \"{}\":",
        rows.first().map_or("", |r| r.name)
    )?;
    let mut table = TextTable::new(&[
        &["", "absent lookups", "", "", "present lookups", "", ""],
        &[
            "configuration",
            "reads",
            "time",
            "saved",
            "reads",
            "time",
            "saved",
        ],
    ]);
    let per_thousand = |reads: u64, time: Duration, lookups: u64| -> (f64, Duration) {
        let scale = 1000.0 / lookups.max(1) as f64;
        let charged = time + latency.saturating_mul(u32::try_from(reads).unwrap_or(u32::MAX));
        (reads as f64 * scale, charged.mul_f64(scale))
    };
    let base = rows.first().map(|b| {
        (
            per_thousand(b.absent.data_block_reads, b.absent_time, b.lookups),
            per_thousand(b.present.data_block_reads, b.present_time, b.lookups),
        )
    });
    for (i, row) in rows.iter().enumerate() {
        let base = base.filter(|_| i > 0);
        let absent = per_thousand(row.absent.data_block_reads, row.absent_time, row.lookups);
        let present = per_thousand(row.present.data_block_reads, row.present_time, row.lookups);
        let saved = |mine: Duration, theirs: Option<Duration>| {
            theirs.map_or_else(
                || "-".to_owned(),
                |t| format!("{:.2?}", t.saturating_sub(mine)),
            )
        };
        table.row(vec![
            row.name.to_owned(),
            format!("{:.1}", absent.0),
            format!("{:.2?}", absent.1),
            saved(absent.1, base.map(|b| b.0.1)),
            format!("{:.1}", present.0),
            format!("{:.2?}", present.1),
            saved(present.1, base.map(|b| b.1.1)),
        ]);
    }
    write!(out, "{}", table.render())
}

fn print_report(out: &mut dyn Write, rows: &[Row]) -> io::Result<()> {
    let mut table = TextTable::new(&[
        &[
            "",
            "filter",
            "bits/",
            "FPR",
            "FPR",
            "reads per",
            "expected",
            "reads",
            "absent",
            "present",
            "reads per",
        ],
        &[
            "configuration",
            "bytes",
            "key",
            "measured",
            "theory",
            "absent lookup",
            "FPR x tables",
            "avoided",
            "lookups/s",
            "lookups/s",
            "present lookup",
        ],
    ]);
    for row in rows {
        let dash = || "-".to_owned();
        table.row(vec![
            row.name.to_owned(),
            thousands(row.filter_bytes),
            format!("{:.2}", row.bits_per_key()),
            row.absent.observed_fpr().map_or_else(dash, percent),
            row.fpr_theory.map_or_else(dash, percent),
            format!("{:.4}", row.absent_reads()),
            format!("{:.4}", row.expected_absent_reads()),
            thousands(row.absent.reads_avoided()),
            per_second(row.lookups as f64 / row.absent_time.as_secs_f64()),
            per_second(row.lookups as f64 / row.present_time.as_secs_f64()),
            format!(
                "{:.3}",
                row.present.data_block_reads as f64 / row.lookups as f64
            ),
        ]);
    }
    writeln!(out, "\n{}", table.render())?;

    let baseline = rows.first();
    for row in rows.iter().filter(|r| r.fpr_theory.is_some()) {
        let ratio = row.absent_reads() / row.expected_absent_reads();
        writeln!(
            out,
            "{}: {:.4} data-block reads per absent lookup = {:.2} x FPR x tables (target <= 1.2: {})",
            row.name,
            row.absent_reads(),
            ratio,
            if ratio <= 1.2 { "met" } else { "MISSED" }
        )?;
        let asked = row.absent.filter_checks;
        writeln!(
            out,
            "  the filters answered \"absent\" {} of {} times ({}): data-block reads avoided",
            thousands(row.absent.reads_avoided()),
            thousands(asked),
            percent(row.absent.reads_avoided() as f64 / asked.max(1) as f64)
        )?;
        let counts = row.filter_counts;
        writeln!(
            out,
            "  FilterStats over both runs: {} reads avoided, {} true positives, observed FPR {}, {} unusable",
            thousands(counts.reads_avoided()),
            thousands(counts.true_positives),
            counts
                .observed_fpr()
                .map_or_else(|| "-".to_owned(), percent),
            thousands(counts.decode_errors)
        )?;
        if let Some(base) = baseline.filter(|b| b.fpr_theory.is_none()) {
            writeln!(
                out,
                "  absent lookups {:.1}x and present lookups {:.1}x the speed of \"{}\" in this run",
                base.absent_time.as_secs_f64() / row.absent_time.as_secs_f64(),
                base.present_time.as_secs_f64() / row.present_time.as_secs_f64(),
                base.name
            )?;
        }
    }
    writeln!(
        out,
        "\nEvery present lookup returned its value. Reads here are positioned reads served from the OS page\n\
         cache (the files were just written); on cold storage every avoided read also saves a device access."
    )
}

/// The `--plot` chart: each kind's theory curve (from its policy), its measured rate at every whole bits/key
/// from 1 to 20 on the demo's first table's keys, and the demo run's own point; a standard Bloom filter and
/// the information-theoretic bound as references.
fn chart_series(rows: &[Row], args: &DemoArgs) -> CliResult<Vec<Series>> {
    let max_bits = args.bits_per_key.max(20.0).ceil();
    let hashes: Vec<KeyHash> = keys::table_ids(0, args.tables, args.keys)
        .map(|id| key_hash(&keys::key(id)))
        .collect();
    let probes: Vec<KeyHash> = keys::absent_ids(SWEEP_PROBES, args.tables, args.keys, SWEEP_SEED)
        .into_iter()
        .map(|id| key_hash(&keys::key(id)))
        .collect();
    let mut series = Vec::new();
    for (color, config) in CONFIGS.iter().enumerate() {
        if (config.policy)(1.0)?.is_none() {
            continue;
        }
        // The settings swept are each policy's own range, so a refused one is left out of the curve.
        let policy_at = |b: f64| (config.policy)(b).ok().flatten();
        // Each setting's point sits at the size its filter will have (its planned payload), as the measured
        // points do: for Ribbon the setting is Bloom-equivalent bits/key, not its size.
        let n = hashes.len();
        let payload_bits_per_key = |p: &SharedFilterPolicy| {
            (p.estimated_block_len(n) - TRAILER_LEN) as f64 * 8.0 / n as f64
        };
        let theory = (4..=(max_bits * 4.0) as u32)
            .map(|q| f64::from(q) / 4.0)
            .filter_map(|b| policy_at(b).map(|p| (payload_bits_per_key(&p), p.estimated_fpr(n))))
            .collect();
        series.push(Series {
            name: format!("{} theory", config.name),
            color,
            style: Style::Line { dashed: false },
            points: theory,
        });
        let progress = bar(max_bits as u64, format!("{}: FPR sweep", config.name));
        let mut measured = Vec::new();
        for b in 1..=max_bits as u32 {
            if let Some(policy) = policy_at(f64::from(b)) {
                measured.push(sweep_point(policy, &hashes, &probes)?);
            }
            progress.inc(1);
        }
        progress.finish_and_clear();
        series.push(Series {
            name: format!("{} measured", config.name),
            color,
            style: Style::Markers { radius: 3.5 },
            points: measured,
        });
        if let Some(row) = rows.iter().find(|r| r.name == config.name) {
            let point = row
                .absent
                .observed_fpr()
                .map(|fpr| (row.bits_per_key(), fpr));
            series.push(Series {
                name: format!("{} in the tables", config.name),
                color,
                style: Style::Markers { radius: 7.0 },
                points: point.into_iter().collect(),
            });
        }
    }
    for (i, model) in [FilterModel::StandardBloom, FilterModel::Bound]
        .into_iter()
        .enumerate()
    {
        series.push(Series {
            name: model.to_string(),
            color: CONFIGS.len() + i,
            style: Style::Line { dashed: true },
            points: (1..=(max_bits * 4.0) as u32)
                .map(|q| {
                    let b = f64::from(q) / 4.0;
                    (b, model.fpr(b))
                })
                .collect(),
        });
    }
    Ok(series)
}

/// Builds one in-memory filter from `hashes` and measures its false-positive rate on `probes`.
fn sweep_point(
    policy: SharedFilterPolicy,
    hashes: &[KeyHash],
    probes: &[KeyHash],
) -> CliResult<(f64, f64)> {
    let mut builder = FilterBlockBuilder::new(policy);
    for &h in hashes {
        builder.add_hash(h);
    }
    let filter = FilterBlock::open(builder.finish())?;
    let false_positives = probes
        .iter()
        .filter(|&&h| filter.may_contain_hash(h))
        .count();
    Ok((
        filter.bits_per_key(),
        false_positives as f64 / probes.len().max(1) as f64,
    ))
}
