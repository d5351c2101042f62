//! Number formatting and aligned text tables for the reports.

/// `1234567` → `"1,234,567"`.
pub(crate) fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A rate as a percentage with three significant digits: `0.009571` → `"0.957 %"`.
pub(crate) fn percent(rate: f64) -> String {
    let p = rate * 100.0;
    if p == 0.0 {
        return "0 %".to_owned();
    }
    let decimals = 2 - p.abs().log10().floor() as i32;
    if decimals > 6 {
        return format!("{p:.2e} %");
    }
    format!("{p:.prec$} %", prec = decimals.max(0) as usize)
}

/// A count per second with a metric prefix and three significant digits: `1_930_000.0` → `"1.93 M"`.
pub(crate) fn per_second(rate: f64) -> String {
    let (value, prefix) = if rate >= 1e6 {
        (rate / 1e6, " M")
    } else if rate >= 1e3 {
        (rate / 1e3, " k")
    } else {
        (rate, "")
    };
    let decimals = if value >= 100.0 {
        0
    } else if value >= 10.0 {
        1
    } else {
        2
    };
    format!("{value:.decimals$}{prefix}")
}

/// Bytes with a binary prefix: `1_250_036` → `"1.19 MiB"`.
pub(crate) fn bytes(n: u64) -> String {
    const UNITS: [&str; 7] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    let mut value = n as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    let name = UNITS.get(unit).copied().unwrap_or("B");
    if unit == 0 {
        format!("{n} B")
    } else {
        format!("{value:.2} {name}")
    }
}

/// A table printed with aligned columns: the first column left-aligned, the others right-aligned. The header may
/// span several lines.
pub(crate) struct TextTable {
    header: Vec<Vec<String>>,
    rows: Vec<Vec<String>>,
}

impl TextTable {
    /// A table with these header lines (each a list of cells, one per column).
    pub(crate) fn new(header: &[&[&str]]) -> Self {
        TextTable {
            header: header
                .iter()
                .map(|line| line.iter().map(|s| (*s).to_owned()).collect())
                .collect(),
            rows: Vec::new(),
        }
    }

    pub(crate) fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    pub(crate) fn render(&self) -> String {
        let lines: Vec<&Vec<String>> = self.header.iter().chain(&self.rows).collect();
        let columns = lines.iter().map(|l| l.len()).max().unwrap_or(0);
        let widths: Vec<usize> = (0..columns)
            .map(|c| {
                lines
                    .iter()
                    .filter_map(|l| l.get(c))
                    .map(|s| s.chars().count())
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let mut out = String::new();
        for (n, line) in lines.iter().enumerate() {
            if n == self.header.len() {
                let total = widths.iter().sum::<usize>() + 2 * widths.len().saturating_sub(1);
                out.push_str(&"-".repeat(total));
                out.push('\n');
            }
            let cells: Vec<String> = line
                .iter()
                .zip(&widths)
                .enumerate()
                .map(|(c, (cell, &w))| {
                    if c == 0 {
                        format!("{cell:<w$}")
                    } else {
                        format!("{cell:>w$}")
                    }
                })
                .collect();
            out.push_str(cells.join("  ").trim_end());
            out.push('\n');
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_numbers() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(1_234_567), "1,234,567");
        assert_eq!(percent(0.009571), "0.957 %");
        assert_eq!(percent(0.5), "50.0 %");
        assert_eq!(percent(1.0), "100 %");
        assert_eq!(percent(0.0), "0 %");
        assert_eq!(percent(1.5e-6), "0.000150 %");
        assert_eq!(percent(1.5e-7), "1.50e-5 %");
        assert_eq!(percent(1.5e-9), "1.50e-7 %");
        assert_eq!(per_second(1_930_000.0), "1.93 M");
        assert_eq!(per_second(12_345.0), "12.3 k");
        assert_eq!(per_second(950.0), "950");
        assert_eq!(bytes(512), "512 B");
        assert_eq!(bytes(1_250_036), "1.19 MiB");
        assert_eq!(bytes(u64::MAX), "16.00 EiB");
    }

    #[test]
    fn aligns_columns() {
        let mut t = TextTable::new(&[&["name", "n"]]);
        t.row(vec!["a".into(), "1".into()]);
        t.row(vec!["long name".into(), "1,000".into()]);
        assert_eq!(
            t.render(),
            "name           n\n----------------\na              1\nlong name  1,000\n"
        );
    }
}
