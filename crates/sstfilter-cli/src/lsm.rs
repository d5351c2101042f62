//! What every demo shares: its arguments, and the LSM of table files it builds and counts. The demos import this
//! module and the dispatcher (`demo.rs`) imports the demos, so nothing imports back up.

use std::path::{Path, PathBuf};
use std::time::Duration;

use sstfilter_table::{Table, TableStats};

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

/// The counters of all `tables`, added up: one snapshot of an LSM (used by every demo).
pub(crate) fn total_stats(tables: &[Table]) -> TableStats {
    let mut total = TableStats::default();
    for table in tables {
        total += table.stats();
    }
    total
}
