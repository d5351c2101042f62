//! `sstfilter calc`: filter sizing from the formulas of `sstfilter::sizing`, and a memory budget split across LSM
//! levels (Monkey).

use std::io::{self, Write};
use std::path::PathBuf;

use sstfilter::sizing::bits_per_key_bound;
use sstfilter::sizing::{
    FilterModel, MAX_LEVEL_BITS_PER_KEY, Sizing, allocate_levels, geometric_levels, level_rate,
    uniform_levels,
};
use sstfilter::{BlockedBloomParams, RangePolicy};

use crate::error::CliResult;
use crate::plot::{self, Series, Style};
use crate::text::{TextTable, bytes, percent, thousands};

/// The models compared side by side, in table order.
const MODELS: &[FilterModel] = &[
    FilterModel::StandardBloom,
    FilterModel::BlockedBloom,
    FilterModel::Ribbon,
    FilterModel::Bound,
];

/// The most bits per key `FilterModel::bits_per_key_for` searches (its documentation's 1024): a target that a
/// model misses there is unreachable for it.
const SEARCHED_BITS_PER_KEY: f64 = 1024.0;

/// The grid `allocate_levels` buys bits on (its documentation's 1/64 bit/key): the least a level can get.
const LEVEL_STEP: f64 = 1.0 / 64.0;

/// Bits per key of the level budget when neither `--bits-per-key` nor `--memory` is given.
const DEFAULT_BUDGET_BITS_PER_KEY: f64 = 10.0;

/// What `calc` was asked.
pub(crate) struct CalcArgs {
    /// Keys in the filter (with `--levels`: in all levels together).
    pub(crate) keys: u64,
    /// Target false-positive rate (sizing mode).
    pub(crate) fpr: f64,
    /// Bits of the filter (rate mode).
    pub(crate) bits: Option<u64>,
    /// Bits per key: the filter's size in rate mode, the budget with `--levels`.
    pub(crate) bits_per_key: Option<f64>,
    /// Probes per key in rate mode (each model's own choice otherwise).
    pub(crate) probes: Option<u32>,
    /// Levels of the LSM tree (level mode).
    pub(crate) levels: Option<u32>,
    /// The longest empty range a range filter is sized for (range mode).
    pub(crate) range_len: Option<u64>,
    /// Growth factor between consecutive levels.
    pub(crate) size_ratio: f64,
    /// Memory budget in bytes for all levels' filters.
    pub(crate) memory: Option<u64>,
    /// Where to write the chart.
    pub(crate) plot: Option<PathBuf>,
}

pub(crate) fn run(out: &mut dyn Write, args: &CalcArgs) -> CliResult<()> {
    if let Some(range_len) = args.range_len {
        range_report(out, args, range_len)?;
        return Ok(());
    }
    let (marks, label) = if let Some(levels) = args.levels {
        (levels_report(out, args, levels)?, "Monkey levels")
    } else if let Some(bits) = args.bits.or_else(|| {
        args.bits_per_key
            .map(|b| (b * args.keys as f64).round() as u64)
    }) {
        let sizes: Vec<Option<Sizing>> = MODELS
            .iter()
            .map(|m| m.size_for_bits(args.keys, bits, args.probes))
            .collect();
        // `size_for_bits` refuses only a probe count the model cannot use.
        let unreachable = |model: FilterModel| {
            let k = args.probes.unwrap_or_default();
            match model {
                FilterModel::BlockedBloom => format!(
                    "it cannot use k = {k} probes (it takes 1 to {})",
                    BlockedBloomParams::MAX_PROBES
                ),
                _ => format!("it cannot use k = {k} probes"),
            }
        };
        let probes = args.probes.map_or_else(
            || "each model's own probe count".to_owned(),
            |k| format!("k = {k}"),
        );
        writeln!(
            out,
            "False-positive rate of {} keys in {} bits ({:.2} bits/key), {probes}:\n",
            thousands(args.keys),
            thousands(bits),
            bits as f64 / args.keys as f64
        )?;
        (sizing_report(out, &sizes, unreachable)?, "sized")
    } else {
        let sizes: Vec<Option<Sizing>> = MODELS
            .iter()
            .map(|m| m.size_for_fpr(args.keys, args.fpr))
            .collect();
        // `size_for_fpr` refuses a target the model does not reach within its search.
        let unreachable = |model: FilterModel| {
            format!(
                "its rate stays above {} (its lowest within {} bits/key)",
                percent(model.fpr(SEARCHED_BITS_PER_KEY)),
                SEARCHED_BITS_PER_KEY
            )
        };
        writeln!(
            out,
            "Filter size for {} keys at a false-positive rate of at most {}:\n",
            thousands(args.keys),
            percent(args.fpr)
        )?;
        (sizing_report(out, &sizes, unreachable)?, "sized")
    };
    if let Some(path) = &args.plot {
        let title = "False-positive rate vs bits/key (theory)";
        plot::write(out, path, title, &chart(&marks, label))?;
    }
    Ok(())
}

/// Prints one row per model, then a line for each model that has no filter to show (`unreachable` says why a
/// model has no sizing), and returns the `(bits_per_key, fpr)` point of each, for the chart.
fn sizing_report(
    out: &mut dyn Write,
    sizes: &[Option<Sizing>],
    unreachable: impl Fn(FilterModel) -> String,
) -> io::Result<Vec<Vec<(f64, f64)>>> {
    let mut notes = Vec::new();
    let mut table = TextTable::new(&[&[
        "model",
        "bits (m)",
        "memory",
        "bits/key",
        "probes (k)",
        "FPR",
        "space over bound",
    ]]);
    for (model, size) in MODELS.iter().zip(sizes) {
        let Some(s) = size else {
            table.row(vec![model.to_string(), "unreachable".to_owned()]);
            notes.push(format!("{}: unreachable: {}", model, unreachable(*model)));
            continue;
        };
        let no_filter = no_filter(*model, s);
        let probes = s.probes.filter(|_| no_filter.is_none());
        table.row(vec![
            model.to_string(),
            thousands(s.bits),
            bytes(s.bits.div_ceil(8)),
            format!("{:.2}", s.bits_per_key),
            probes.map_or_else(|| "-".to_owned(), |k| k.to_string()),
            percent(s.fpr),
            over_bound(s),
        ]);
        if let Some(why) = no_filter {
            notes.push(format!("{}: no filter: {why}", model));
        }
    }
    write!(out, "{}", table.render())?;
    for note in notes {
        writeln!(out, "{note}")?;
    }
    Ok(sizes
        .iter()
        .map(|s| s.iter().map(|s| (s.bits_per_key, s.fpr)).collect())
        .collect())
}

/// Why a sizing of `model` is no filter at all (nothing stored, every key "may be present"), if it is one.
fn no_filter(model: FilterModel, s: &Sizing) -> Option<String> {
    let min = model.min_bits_per_key();
    if model == FilterModel::BlockedBloom && s.bits == 0 {
        Some("it builds whole 512-bit blocks, and not one fits".to_owned())
    } else if s.bits == 0 || s.bits_per_key < min {
        Some(format!("it builds no filter below {min:.2} bits/key"))
    } else {
        None
    }
}

/// How much more space than the information-theoretic bound a sizing takes; "-" where the bound is no
/// yardstick: a rate of 1 (the bound is 0 bits) or one too small for a double (the bound is infinite).
fn over_bound(s: &Sizing) -> String {
    let over = s.bits_per_key / bits_per_key_bound(s.fpr) - 1.0;
    if s.fpr > 0.0 && s.fpr < 1.0 && over.is_finite() {
        // Below 0 only by rounding (the bound's own row, near a rate of 1): no filter takes less than the bound.
        format!("{:+.1} %", over.max(0.0) * 100.0)
    } else {
        "-".to_owned()
    }
}

/// Prints the Monkey allocation against uniform bits/key for every buildable model; returns each model's
/// per-level points for the chart.
fn levels_report(
    out: &mut dyn Write,
    args: &CalcArgs,
    levels: u32,
) -> CliResult<Vec<Vec<(f64, f64)>>> {
    let level_keys = geometric_levels(args.keys, levels, args.size_ratio);
    let total_keys: u64 = level_keys.iter().sum();
    if total_keys == 0 {
        return Err("the levels hold no keys: raise --keys".into());
    }
    let total_bits = match (args.memory, args.bits_per_key) {
        (Some(memory), _) => memory as f64 * 8.0,
        (None, bits_per_key) => {
            bits_per_key.unwrap_or(DEFAULT_BUDGET_BITS_PER_KEY) * total_keys as f64
        }
    };
    let budget_per_key = total_bits / total_keys as f64;
    writeln!(
        out,
        "Filter memory for an LSM tree of {levels} levels (size ratio {}, {} keys): budget {} = {budget_per_key:.2} bits/key",
        args.size_ratio,
        thousands(total_keys),
        bytes((total_bits / 8.0).ceil() as u64)
    )?;
    writeln!(
        out,
        "An absent-key lookup probes one filter per level (leveling), so the sum of the levels' FPRs is the expected\n\
         number of wasted data-block reads per lookup. Monkey (Dayan et al., SIGMOD 2017) minimises that sum; it is\n\
         never worse than the uniform split, and no level gets more than {MAX_LEVEL_BITS_PER_KEY} bits/key (rates \
         below 1e-8).\n"
    )?;
    let empty = level_keys.iter().take_while(|&&keys| keys == 0).count();
    if empty > 0 {
        let which = if empty == 1 {
            "Level 1 holds".to_owned()
        } else {
            format!("Levels 1 to {empty} hold")
        };
        writeln!(
            out,
            "{which} no keys: {} keys do not fill {levels} levels growing by {}, so the table leaves them out.\n",
            thousands(args.keys),
            args.size_ratio
        )?;
    }
    let mut marks = vec![Vec::new(); MODELS.len()];
    for (model, marks) in MODELS.iter().zip(marks.iter_mut()) {
        if *model == FilterModel::Bound {
            continue; // no filter reaches the bound: there is nothing to allocate
        }
        let monkey = allocate_levels(*model, &level_keys, total_bits);
        let uniform = uniform_levels(*model, &level_keys, total_bits);
        let mut table = TextTable::new(&[
            &["", "", "uniform", "", "Monkey", ""],
            &["level", "keys", "bits/key", "FPR", "bits/key", "FPR"],
        ]);
        let (mut uniform_sum, mut monkey_sum, mut spent) = (0.0, 0.0, 0.0);
        for (level, ((&keys, &bits), &even)) in
            level_keys.iter().zip(&monkey).zip(&uniform).enumerate()
        {
            if keys == 0 {
                continue;
            }
            let (u, m) = (level_rate(*model, even), level_rate(*model, bits));
            uniform_sum += u;
            monkey_sum += m;
            spent += bits * keys as f64;
            marks.push((bits, m));
            table.row(vec![
                (level + 1).to_string(),
                thousands(keys),
                format!("{even:.2}"),
                percent(u),
                format!("{bits:.2}"),
                percent(m),
            ]);
        }
        writeln!(out, "{}:", model)?;
        write!(out, "{}", table.render())?;
        writeln!(
            out,
            "wasted data-block reads per absent lookup (sum of FPRs): uniform {}, Monkey {} ({})",
            reads(uniform_sum),
            reads(monkey_sum),
            comparison(uniform_sum, monkey_sum)
        )?;
        let unused = total_bits - spent;
        if unused > 0.01 * total_bits {
            let floor = level_rate(*model, MAX_LEVEL_BITS_PER_KEY);
            let at_floor = level_keys
                .iter()
                .zip(&monkey)
                .all(|(&keys, &bits)| keys == 0 || level_rate(*model, bits) <= floor);
            let (spent, unused) = (
                bytes((spent / 8.0).ceil() as u64),
                bytes((unused / 8.0).floor() as u64),
            );
            if monkey.iter().all(|&bits| bits == 0.0) {
                let smallest = level_keys
                    .iter()
                    .filter(|&&keys| keys > 0)
                    .map(|&keys| keys as f64 * model.min_bits_per_key().max(LEVEL_STEP))
                    .fold(f64::INFINITY, f64::min);
                writeln!(
                    out,
                    "the budget is too small for any {} filter: the smallest, on the smallest level, takes {}; \
                     every level reads a data block for every lookup",
                    model,
                    bytes((smallest / 8.0).ceil() as u64)
                )?;
            } else if at_floor {
                writeln!(
                    out,
                    "the budget exceeds what {} filters can use: {spent} reach the kind's floor (its rate stops \
                     falling, or {MAX_LEVEL_BITS_PER_KEY} bits/key); the other {unused} are unused",
                    model,
                )?;
            } else {
                let start = model.min_bits_per_key();
                let start = if start > 0.0 {
                    format!(", and {start:.2} bits/key for a level's first filter")
                } else {
                    String::new()
                };
                writeln!(
                    out,
                    "{unused} of the budget are left over: too little for the next step on any level that can \
                     take one (1/64 bit/key over its keys{start})"
                )?;
            }
        }
        writeln!(out)?;
    }
    Ok(marks)
}

/// Prints the size of a range filter (`RangePolicy`) for ranges of up to `range_len` at `--fpr`, or its rate at
/// `--bits-per-key`, and the rate bound at shorter ranges: `ε · ℓ / L`.
fn range_report(out: &mut dyn Write, args: &CalcArgs, range_len: u64) -> io::Result<()> {
    let policy = match args.bits_per_key {
        Some(bits) => RangePolicy::with_bits_per_key(bits, range_len),
        None => RangePolicy::new(range_len, args.fpr),
    };
    let policy = match policy {
        Ok(policy) => policy,
        Err(refused) => return writeln!(out, "unreachable: {refused}"),
    };
    let len = policy.max_range_len();
    let bits_per_key = policy.bits_per_key(args.keys);
    writeln!(
        out,
        "Range filter (Grafite) for {} keys, empty ranges of up to L = 2^{} = {} projected values:\n",
        thousands(args.keys),
        policy.range_log2(),
        thousands(len)
    )?;
    if let Some(why) = range_unreachable(args, &policy) {
        return writeln!(out, "unreachable: {why}");
    }
    let mut table = TextTable::new(&[&[
        "bits/key",
        "memory",
        "universe r",
        "FPR at ℓ = L",
        "over log2(L/ε)",
    ]]);
    table.row(vec![
        format!("{bits_per_key:.2}"),
        bytes(policy.payload_len(args.keys) as u64),
        thousands(policy.universe(args.keys)),
        percent(policy.fpr()),
        format!(
            "{:+.2} bits",
            bits_per_key - (len as f64 / policy.fpr()).log2()
        ),
    ]);
    write!(out, "{}", table.render())?;
    writeln!(out, "\nThe bound at shorter ranges, ε · ℓ / L:\n")?;
    let mut shorter = TextTable::new(&[&["range length ℓ", "FPR at most"]]);
    let mut l = 1u64;
    loop {
        shorter.row(vec![
            thousands(l),
            percent(policy.fpr() * l as f64 / len as f64),
        ]);
        if l >= len {
            break;
        }
        l = (l * 16).min(len);
    }
    write!(out, "{}", shorter.render())?;
    writeln!(
        out,
        "\n(Projected values: the bytes after the keys' common prefix, each position's byte values ranked; k \
         consecutive fixed-width decimal ids are k values. Bits/key leave out the per-block tables: 44 bytes per \
         projected position and the prefix.)"
    )
}

/// Why the range policy cannot keep its rate for `args.keys` keys, if it cannot: its universe `n · L / ε` must fit
/// in 64 bits (a builder refuses keys past `max_keys`).
fn range_unreachable(args: &CalcArgs, policy: &RangePolicy) -> Option<String> {
    if args.keys <= policy.max_keys() {
        return None;
    }
    let longest = (0..policy.range_log2()).rev().find(|&log2| {
        RangePolicy::new(1 << log2, policy.fpr()).is_ok_and(|p| args.keys <= p.max_keys())
    });
    let instead = longest.map_or_else(
        || "even ranges of 1 value need fewer keys per filter, or a higher rate".to_owned(),
        |log2| format!("at this rate and key count it keeps ranges of up to 2^{log2}"),
    );
    Some(format!(
        "{} keys at {} for ranges of 2^{} need a universe of n · L / ε = {:.3e} codes, more than the 2^64 a \
         range filter has (at most {} keys); {instead}",
        thousands(args.keys),
        percent(policy.fpr()),
        policy.range_log2(),
        args.keys as f64 * policy.max_range_len() as f64 / policy.fpr(),
        thousands(policy.max_keys())
    ))
}

/// A sum of rates as wasted reads per lookup: four decimals, or scientific notation when smaller.
fn reads(sum: f64) -> String {
    if sum == 0.0 || sum >= 1e-4 {
        format!("{sum:.4}")
    } else {
        format!("{sum:.2e}")
    }
}

/// How Monkey's sum compares with uniform's, in words a reader can act on.
fn comparison(uniform: f64, monkey: f64) -> String {
    if monkey >= uniform * (1.0 - 1e-3) {
        "the same: the budget leaves nothing to move between levels".to_owned()
    } else if monkey > 0.0 {
        format!("{:.2}x fewer with Monkey", uniform / monkey)
    } else {
        "none with Monkey".to_owned()
    }
}

/// Theory curves of every model, with `marks[i]` as markers (named `label`) on model `i`'s curve.
fn chart(marks: &[Vec<(f64, f64)>], label: &str) -> Vec<Series> {
    let max_bits = marks
        .iter()
        .flatten()
        .map(|&(b, _)| b)
        .fold(24.0f64, f64::max)
        .ceil();
    let mut series = Vec::new();
    for (color, (model, marks)) in MODELS.iter().zip(marks).enumerate() {
        series.push(Series {
            name: model.to_string(),
            color,
            style: Style::Line {
                dashed: *model == FilterModel::Bound,
            },
            points: (1..=(max_bits * 4.0) as u32)
                .map(|q| {
                    let b = f64::from(q) / 4.0;
                    (b, model.fpr(b))
                })
                .collect(),
        });
        if !marks.is_empty() {
            series.push(Series {
                name: format!("{} ({label})", model),
                color,
                style: Style::Markers { radius: 5.0 },
                points: marks.clone(),
            });
        }
    }
    series
}
