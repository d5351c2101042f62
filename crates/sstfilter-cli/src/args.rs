//! The command line: the subcommands and their options, the parsers of human numbers, and what the parsed
//! arguments ask for.

use std::path::PathBuf;
use std::time::Duration;

use clap::error::ErrorKind;
use clap::{Arg, ArgAction, ArgGroup, ArgMatches, Command, value_parser};
use sstfilter::RangePolicy;

use crate::calc::CalcArgs;
use crate::lsm::{DemoArgs, Mode};
use crate::text::thousands;
use crate::{keys, plot, prefix_demo, range_demo};

/// What the command line asks for.
pub(crate) enum Job {
    Demo(DemoArgs),
    Inspect(PathBuf),
    Calc(CalcArgs),
}

/// Parses the process's arguments. Bad arguments, `--help` and `--version` end the process here (clap prints
/// them; exit code 2 for an error).
pub(crate) fn parse() -> Job {
    let mut command = command();
    let matches = command.get_matches_mut();
    let job = match matches.subcommand() {
        Some(("demo", m)) => demo_args(m).map(Job::Demo),
        Some(("calc", m)) => calc_args(m).map(Job::Calc),
        Some(("inspect", m)) => match m.get_one::<PathBuf>("file") {
            Some(path) => Ok(Job::Inspect(path.clone())),
            None => Err("inspect needs a FILE".to_owned()),
        },
        _ => Err("unknown command (see --help)".to_owned()),
    };
    job.unwrap_or_else(|message| {
        // A limit that involves several options: a usage error like clap's own, with the subcommand's usage.
        let name = matches.subcommand_name().unwrap_or_default();
        match command.find_subcommand_mut(name) {
            Some(subcommand) => subcommand.error(ErrorKind::ValueValidation, message).exit(),
            None => command.error(ErrorKind::ValueValidation, message).exit(),
        }
    })
}

fn command() -> Command {
    Command::new("sstfilter")
        .about(
            "SST filter blocks: what they save on real tables, what a block holds, how to size one",
        )
        .version(env!("CARGO_PKG_VERSION"))
        .subcommand_required(true)
        .arg_required_else_help(true)
        .subcommand(demo_command())
        .subcommand(inspect_command())
        .subcommand(calc_command())
}

fn demo_command() -> Command {
    Command::new("demo")
        .about(
            "Build an LSM of table files and look keys up with no filter and with each filter kind: \
             filter size, measured vs theoretical FPR, data-block reads per lookup, lookups/s",
        )
        .arg(
            Arg::new("keys")
                .long("keys")
                .value_name("N")
                .help("Keys per table (--range: at most 100,000)")
                .default_value("100000")
                .value_parser(|s: &str| parse_count(s, 1, u64::MAX)),
        )
        .arg(
            Arg::new("tables")
                .long("tables")
                .value_name("T")
                .help("Tables in the LSM (all overlap the whole key range)")
                .default_value("10")
                .value_parser(|s: &str| parse_count(s, 1, u64::MAX)),
        )
        .arg(
            Arg::new("bits-per-key")
                .long("bits-per-key")
                .value_name("B")
                .help("Bits per key of every filter (1 to 100)")
                .default_value("10")
                .value_parser(|s: &str| parse_float(s, 1.0, 100.0)),
        )
        .arg(
            Arg::new("lookups")
                .long("lookups")
                .value_name("L")
                .help("Absent lookups, and as many present ones, per configuration")
                .default_value("100000")
                .value_parser(|s: &str| parse_count(s, 1, MAX_LOOKUPS)),
        )
        .arg(
            Arg::new("dir")
                .long("dir")
                .value_name("PATH")
                .help("Build the tables here and keep them (default: a temporary directory)")
                .value_parser(table_dir),
        )
        .arg(plot_arg())
        .arg(
            Arg::new("prefix")
                .long("prefix")
                .help(
                    "Instead, scan key prefixes across an LSM whose filters hold no prefixes, prefixes beside \
                     whole keys, or prefixes only: tables read and skipped per scan (5,000 keys per table and \
                     1,000 scans per class of tenant, so not with --keys, --lookups, --plot or --read-latency)",
                )
                .conflicts_with_all(["keys", "lookups", "plot", "read-latency"])
                .action(ArgAction::SetTrue),
        )
        .arg(
            Arg::new("read-latency")
                .long("read-latency")
                .value_name("TIME")
                .help(
                    "Also report the lookups on a SIMULATED remote store that charges every data-block read \
                     TIME (20ms, 500us, 1.5ms): time per 1,000 lookups and the time the filters saved (point \
                     lookups only: not with --prefix, --partitioned or --range)",
                )
                .value_parser(parse_duration),
        )
        .arg(
            Arg::new("partitioned")
                .long("partitioned")
                .help(
                    "Instead, compare full filters with 4 KiB partitions under filter memory budgets of 1, 10 \
                     and 100 %: resident filter bytes, partition loads and data-block reads per lookup (not \
                     with --plot or --read-latency)",
                )
                .conflicts_with_all(["prefix", "plot", "read-latency"])
                .action(ArgAction::SetTrue),
        )
        .arg(
            Arg::new("range")
                .long("range")
                .help(
                    "Instead, scan short key ranges across an LSM with a point filter and with a range \
                     filter in every table: tables read and skipped per empty and non-empty scan (1,000 scans \
                     per class and length, so not with --lookups, --plot or --read-latency)",
                )
                .conflicts_with_all(["prefix", "partitioned", "lookups", "plot", "read-latency"])
                .action(ArgAction::SetTrue),
        )
}

fn inspect_command() -> Command {
    Command::new("inspect")
        .about(
            "Explain a file: a filter block (kind, parameters, keys, bits/key, expected FPR, CRC), a \
             reference table (its checks, and its filter block, range filter or partitioned filter with every \
             partition checked), a LevelDB table (its filter policy, per-2 KiB filters and block CRCs) or a \
             RocksDB table (its footer, meta blocks and filter, full or partitioned, checksums verified)",
        )
        .arg(
            Arg::new("file")
                .value_name("FILE")
                .help(
                    "The file to read: a raw sstfilter block, a reference table (as `demo --dir` keeps), a \
                     LevelDB-format table (.ldb, from LevelDB or rusty-leveldb) or a RocksDB SST file; the \
                     bytes decide which",
                )
                .required(true)
                .value_parser(value_parser!(PathBuf)),
        )
}

fn calc_command() -> Command {
    Command::new("calc")
        .about(
            "Size filters from the formulas: bits and probes for a target FPR, the FPR of a given size, \
             or (--levels) a memory budget split across LSM levels to minimise wasted reads (Monkey)",
        )
        .arg(
            Arg::new("keys")
                .long("keys")
                .short('n')
                .value_name("N")
                .help("Keys (with --levels: in all levels together); 1e6 and 1_000_000 work")
                .default_value("1000000")
                .value_parser(|s: &str| parse_count(s, 1, MAX_CALC_KEYS)),
        )
        .arg(
            Arg::new("fpr")
                .long("fpr")
                .short('p')
                .value_name("P")
                .help(
                    "Target false-positive rate: 0.01 or 1% (not with --bits, --bits-per-key or --levels, \
                     which set the size instead)",
                )
                .default_value("0.01")
                .conflicts_with_all(["bits", "bits-per-key", "levels"])
                .value_parser(parse_rate),
        )
        .arg(
            Arg::new("bits")
                .long("bits")
                .short('m')
                .value_name("M")
                .help("Filter size in bits: prints the FPR of each model instead")
                .conflicts_with_all(["bits-per-key", "levels"])
                .value_parser(|s: &str| parse_count(s, 1, u64::MAX)),
        )
        .arg(
            Arg::new("bits-per-key")
                .long("bits-per-key")
                .short('b')
                .value_name("B")
                .help("Filter size in bits per key, up to 1000 (with --levels: the budget, default 10)")
                .value_parser(|s: &str| parse_positive(s, MAX_CALC_BITS_PER_KEY)),
        )
        .group(ArgGroup::new("size").args(["bits", "bits-per-key"]))
        .arg(
            Arg::new("probes")
                .long("probes")
                .short('k')
                .value_name("K")
                .help("Probes per key with --bits or --bits-per-key (default: each model's choice)")
                .requires("size")
                .conflicts_with("levels")
                .value_parser(value_parser!(u32).range(1..=64)),
        )
        .arg(
            Arg::new("range-len")
                .long("range-len")
                .value_name("L")
                .help(
                    "Size a range filter for empty ranges of up to L projected values (rounded up to a \
                     power of two, at most 2^56): bits/key at --fpr, or the rate at --bits-per-key (no --plot)",
                )
                .conflicts_with_all(["bits", "levels", "probes", "plot"])
                .value_parser(|s: &str| parse_count(s, 1, RangePolicy::MAX_RANGE_LEN)),
        )
        .arg(
            Arg::new("levels")
                .long("levels")
                .short('l')
                .value_name("L")
                .help("Split the budget across L LSM levels (sizes growing by --size-ratio)")
                .value_parser(value_parser!(u32).range(1..=20)),
        )
        .arg(
            Arg::new("size-ratio")
                .long("size-ratio")
                .value_name("R")
                .help("Growth factor from one level to the next")
                .default_value("10")
                .requires("levels")
                .value_parser(|s: &str| parse_float(s, 1.0, 1000.0)),
        )
        .arg(
            Arg::new("memory")
                .long("memory")
                .value_name("BYTES")
                .help("Budget for all levels' filters: 512MiB, 1.5GiB, 100MB or bytes")
                .requires("levels")
                .conflicts_with("bits-per-key")
                .value_parser(parse_bytes),
        )
        .arg(plot_arg())
}

fn plot_arg() -> Arg {
    Arg::new("plot")
        .long("plot")
        .value_name("FILE.svg")
        .help("Also write an SVG chart of FPR vs bits/key (theory curves and measured or sized points)")
        .value_parser(plot::output_path)
}

/// The `--dir` value: a directory, or a path where one can be made (not a file).
fn table_dir(value: &str) -> Result<PathBuf, String> {
    let path = PathBuf::from(value);
    if path.exists() && !path.is_dir() {
        return Err(format!("{value} is a file, not a directory"));
    }
    Ok(path)
}

/// The demo's arguments, or why they cannot run together.
fn demo_args(m: &ArgMatches) -> Result<DemoArgs, String> {
    let mode = if m.get_flag("prefix") {
        Mode::Prefix
    } else if m.get_flag("partitioned") {
        Mode::Partitioned
    } else if m.get_flag("range") {
        Mode::Range
    } else {
        Mode::Lookups
    };
    let args = DemoArgs {
        keys: m.get_one("keys").copied().unwrap_or(100_000),
        tables: m.get_one("tables").copied().unwrap_or(10),
        bits_per_key: m.get_one("bits-per-key").copied().unwrap_or(10.0),
        lookups: m.get_one("lookups").copied().unwrap_or(100_000),
        dir: m.get_one::<PathBuf>("dir").cloned(),
        plot: m.get_one::<PathBuf>("plot").cloned(),
        mode,
        read_latency: m.get_one::<Duration>("read-latency").copied(),
    };
    // Each demo's keys are fixed-width numbers, so that they sort like the numbers: past the width they would
    // not, and the table builder would refuse them.
    let entries = args.keys.saturating_mul(args.tables);
    let limit = match args.mode {
        Mode::Lookups | Mode::Partitioned => (entries > keys::MAX_ENTRIES).then(|| {
            format!(
                "--keys x --tables is at most {} (the keys are 12-digit ids)",
                thousands(keys::MAX_ENTRIES)
            )
        }),
        Mode::Prefix => (args.tables > prefix_demo::MAX_TABLES).then(|| {
            format!(
                "--prefix builds at most {} tables (tenants are 5-digit numbers)",
                prefix_demo::MAX_TABLES
            )
        }),
        Mode::Range if args.keys > range_demo::MAX_KEYS => Some(format!(
            "--range builds at most {} keys per table",
            thousands(range_demo::MAX_KEYS)
        )),
        Mode::Range => (entries > range_demo::MAX_ENTRIES).then(|| {
            format!(
                "with --range, --keys x --tables is at most {} (the keys are 10-digit ids)",
                thousands(range_demo::MAX_ENTRIES)
            )
        }),
    };
    limit.map_or(Ok(args), Err)
}

/// The arguments of `calc`, or why they cannot run together.
fn calc_args(m: &ArgMatches) -> Result<CalcArgs, String> {
    let args = CalcArgs {
        keys: m.get_one("keys").copied().unwrap_or(1_000_000),
        fpr: m.get_one("fpr").copied().unwrap_or(0.01),
        bits: m.get_one("bits").copied(),
        bits_per_key: m.get_one("bits-per-key").copied(),
        probes: m.get_one("probes").copied(),
        levels: m.get_one("levels").copied(),
        range_len: m.get_one("range-len").copied(),
        size_ratio: m.get_one("size-ratio").copied().unwrap_or(10.0),
        memory: m.get_one("memory").copied(),
        plot: m.get_one::<PathBuf>("plot").cloned(),
    };
    match args.bits {
        Some(bits) if bits as f64 / args.keys as f64 > MAX_CALC_BITS_PER_KEY => Err(format!(
            "--bits {} for {} keys is {:.0} bits/key: at most {MAX_CALC_BITS_PER_KEY}, as with --bits-per-key",
            thousands(bits),
            thousands(args.keys),
            bits as f64 / args.keys as f64
        )),
        _ => Ok(args),
    }
}

/// Most lookups per stream: the demo holds the lookup keys in memory (10^8 of them take several GB).
const MAX_LOOKUPS: u64 = 100_000_000;

/// Most keys `calc` sizes for, 2^53: the formulas count in floating point, exact up to there, and 1,000 bits for
/// each of them still fit the 64-bit bit counts.
const MAX_CALC_KEYS: u64 = 1 << 53;

/// Most bits per key `calc` sizes with: the bound's rate there, 2^-1000, is near the smallest a double holds,
/// so that larger sizes would print rates of 0.
const MAX_CALC_BITS_PER_KEY: f64 = 1000.0;

/// A whole number from `min` to `max`: `1000000`, `1_000_000`, `1,000,000` or `1e6`.
fn parse_count(s: &str, min: u64, max: u64) -> Result<u64, String> {
    let cleaned: String = s.chars().filter(|c| !matches!(c, '_' | ',')).collect();
    let n = match cleaned.parse::<u64>() {
        Ok(n) => n,
        // Up to 2^53 a double holds every whole number, so `1e6` is read exactly; beyond, the digits are needed.
        Err(_) => match cleaned.parse::<f64>() {
            Ok(f) if f.fract() == 0.0 && (0.0..=9.0e15).contains(&f) => f as u64,
            Ok(f) if f.fract() == 0.0 && f > 0.0 => {
                return Err(format!(
                    "{s:?} is too large for this notation: write the number in digits"
                ));
            }
            _ => return Err(format!("{s:?} is not a whole number")),
        },
    };
    if n < min {
        return Err(format!("must be at least {}", thousands(min)));
    }
    if n > max {
        return Err(format!("must be at most {}", thousands(max)));
    }
    Ok(n)
}

/// A number in `min..=max`.
/// A duration: a number with the unit `s`, `ms`, `us` or `ns` (`20ms`, `1.5ms`, `500us`), up to an hour.
fn parse_duration(s: &str) -> Result<Duration, String> {
    let split = s.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(s.len());
    let (number, unit) = s.split_at(split);
    let value: f64 = number
        .trim()
        .parse()
        .map_err(|_| format!("{s:?} is not a duration such as 20ms"))?;
    let seconds = match unit.trim() {
        "s" => value,
        "ms" => value / 1e3,
        "us" | "µs" => value / 1e6,
        "ns" => value / 1e9,
        _ => return Err(format!("{s:?}: the unit must be s, ms, us or ns")),
    };
    if !(0.0..=3600.0).contains(&seconds) {
        return Err(format!("{s:?} must be between 0 and an hour"));
    }
    Ok(Duration::from_secs_f64(seconds))
}

/// A number more than 0 and at most `max`.
fn parse_positive(s: &str, max: f64) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(x) if x > 0.0 && x <= max => Ok(x),
        _ => Err(format!("{s:?} is not a number above 0 and at most {max}")),
    }
}

fn parse_float(s: &str, min: f64, max: f64) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(x) if (min..=max).contains(&x) => Ok(x),
        _ => Err(format!("{s:?} is not a number from {min} to {max}")),
    }
}

/// A rate strictly between 0 and 1: `0.01` or `1%`.
fn parse_rate(s: &str) -> Result<f64, String> {
    let (number, scale) = match s.strip_suffix('%') {
        Some(percent) => (percent.trim(), 0.01),
        None => (s, 1.0),
    };
    match number.parse::<f64>() {
        Ok(x) if x * scale > 0.0 && x * scale < 1.0 => Ok(x * scale),
        _ => Err(format!("{s:?} is not a rate between 0 and 1 (exclusive)")),
    }
}

/// A byte count with an optional unit: `512MiB`, `1.5 GiB`, `100MB`, `4096`.
fn parse_bytes(s: &str) -> Result<u64, String> {
    const UNITS: [(&str, f64); 9] = [
        ("KiB", 1024.0),
        ("MiB", 1048576.0),
        ("GiB", 1073741824.0),
        ("TiB", 1099511627776.0),
        ("KB", 1e3),
        ("MB", 1e6),
        ("GB", 1e9),
        ("TB", 1e12),
        ("B", 1.0),
    ];
    let (number, scale) = UNITS
        .iter()
        .find_map(|&(unit, scale)| s.strip_suffix(unit).map(|n| (n.trim(), scale)))
        .unwrap_or((s.trim(), 1.0));
    match number.parse::<f64>() {
        Ok(x) if x > 0.0 && x * scale < 9.0e18 => Ok((x * scale).round() as u64),
        _ => Err(format!(
            "{s:?} is not a size such as 512MiB, 1.5GiB or 100MB"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_definition_is_consistent() {
        command().debug_assert();
    }

    #[test]
    fn parses_human_numbers() {
        assert_eq!(parse_count("1_000_000", 1, u64::MAX), Ok(1_000_000));
        assert_eq!(parse_count("1,000", 1, u64::MAX), Ok(1000));
        assert_eq!(parse_count("1e6", 1, u64::MAX), Ok(1_000_000));
        assert!(parse_count("1.5", 1, u64::MAX).is_err());
        assert!(parse_count("0", 1, u64::MAX).is_err());
        assert!(parse_count("-3", 1, u64::MAX).is_err());
        assert_eq!(parse_count("1e3", 1, 1000), Ok(1000));
        assert_eq!(
            parse_count("1001", 1, 1000),
            Err("must be at most 1,000".to_owned())
        );
        assert_eq!(parse_rate("1%"), Ok(0.01));
        assert_eq!(parse_rate("0.5"), Ok(0.5));
        assert!(parse_rate("0").is_err() && parse_rate("1").is_err() && parse_rate("x").is_err());
        assert_eq!(parse_bytes("512MiB"), Ok(512 << 20));
        assert_eq!(parse_bytes("1.5 GiB"), Ok(3 << 29));
        assert_eq!(parse_bytes("100MB"), Ok(100_000_000));
        assert_eq!(parse_bytes("4096"), Ok(4096));
        assert!(parse_bytes("lots").is_err());
        assert_eq!(parse_float("10", 1.0, 100.0), Ok(10.0));
        assert!(parse_float("0.5", 1.0, 100.0).is_err());
        assert_eq!(parse_positive("0.001", 1000.0), Ok(0.001));
        assert!(parse_positive("0", 1000.0).is_err() && parse_positive("1001", 1000.0).is_err());
    }
}
