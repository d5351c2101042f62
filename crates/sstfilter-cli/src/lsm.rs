//! What every demo shares: its arguments, and the LSM of table files it builds and counts. The demos import this
//! module and the dispatcher (`demo.rs`) imports the demos, so nothing imports back up.

use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::time::Duration;

use sstfilter_table::{Table, TableBuilder, TableOptions, TableStats};

use crate::error::{CliResult, Context};
use crate::keys;
use crate::progress::{bar, tick};

/// What `demo` was asked to do.
pub(crate) struct DemoArgs {
    /// Keys per table.
    pub(crate) keys: u64,
    /// Tables in the LSM.
    pub(crate) tables: u64,
    /// Bits per key of every filter.
    pub(crate) bits_per_key: f64,
    /// Absent lookups, and as many present ones.
    pub(crate) lookups: u64,
    /// Where to keep the tables (a temporary directory otherwise).
    pub(crate) dir: Option<PathBuf>,
    /// Where to write the FPR chart.
    pub(crate) plot: Option<PathBuf>,
    /// Which demo runs.
    pub(crate) mode: Mode,
    /// A simulated latency charged to every data-block read (remote storage), if given.
    pub(crate) read_latency: Option<Duration>,
}

/// The demos: point lookups (the default), or one of the three that replace them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// Absent and present point lookups with no filter and with each filter kind.
    Lookups,
    /// Prefix scans (`--prefix`).
    Prefix,
    /// Full filters against partitioned ones under memory budgets (`--partitioned`).
    Partitioned,
    /// Range scans with and without a range filter (`--range`).
    Range,
}

/// The path of table `t` in `dir`: six digits, so that a directory listing shows the tables oldest first.
pub(crate) fn table_path(dir: &Path, t: u64) -> PathBuf {
    dir.join(format!("{t:06}.sst"))
}

/// Creates `dir` and its parents, naming it if that fails.
pub(crate) fn create_dir(dir: &Path) -> CliResult<()> {
    fs::create_dir_all(dir).context(|| format!("cannot create the directory {}", dir.display()))
}

/// Opens the table at `path`, naming it if that fails.
pub(crate) fn open_table(path: &Path, options: &TableOptions) -> CliResult<Table> {
    Table::open(path, options).context(|| format!("cannot open table {}", path.display()))
}

/// Creates a table builder at `path`, naming it if that fails.
pub(crate) fn create_table(path: &Path, options: &TableOptions) -> CliResult<TableBuilder<File>> {
    TableBuilder::create(path, options)
        .context(|| format!("cannot create table {}", path.display()))
}

/// What was being done when writing the table at `path` failed, for [`Context`].
pub(crate) fn writing(path: &Path) -> impl Fn() -> String + Copy + '_ {
    move || format!("cannot write table {}", path.display())
}

/// What was being done when reading table `t` of the LSM in `dir` failed, for [`Context`].
pub(crate) fn reading(dir: &Path, t: usize) -> impl Fn() -> String + Copy + '_ {
    move || format!("cannot read table {}", table_path(dir, t as u64).display())
}

/// Builds `args.tables` tables of `args.keys` keys (the ids of `keys::table_ids`) with `options` in `dir`, with a
/// progress bar labelled `label`. Returns their paths (index 0 is the oldest) and their bytes on disk.
pub(crate) fn build_tables(
    dir: &Path,
    options: &TableOptions,
    args: &DemoArgs,
    label: String,
) -> CliResult<(Vec<PathBuf>, u64)> {
    create_dir(dir)?;
    let progress = bar(args.keys * args.tables, label);
    let mut paths = Vec::new();
    let mut file_bytes = 0;
    for t in 0..args.tables {
        let path = table_path(dir, t);
        let mut builder = create_table(&path, options)?;
        for (n, id) in keys::table_ids(t, args.tables, args.keys).enumerate() {
            builder
                .add(&keys::key(id), &keys::value(id))
                .context(writing(&path))?;
            tick(&progress, t * args.keys + n as u64);
        }
        let (summary, _file) = builder.finish().context(writing(&path))?;
        file_bytes += summary.file_len;
        paths.push(path);
    }
    progress.finish_and_clear();
    Ok((paths, file_bytes))
}

/// The counters of all `tables`, added up: one snapshot of an LSM (used by every demo).
pub(crate) fn total_stats(tables: &[Table]) -> TableStats {
    let mut total = TableStats::default();
    for table in tables {
        total += table.stats();
    }
    total
}
