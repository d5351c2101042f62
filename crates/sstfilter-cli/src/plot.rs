//! An SVG chart of false-positive rate (log scale) against bits per key: theory curves and measured points, one
//! colour per filter kind, drawn with plotters' SVG backend (its other backends are not compiled).

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use plotters::prelude::*;

use crate::error::{CliResult, Context};

/// How a series is drawn.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Style {
    /// A line through the points; dashed for reference curves that are not a built kind.
    Line { dashed: bool },
    /// A marker at each point.
    Markers { radius: f64 },
}

/// One named series of `(bits_per_key, fpr)` points.
#[derive(Debug, Clone)]
pub(crate) struct Series {
    pub(crate) name: String,
    /// Index into the palette: a kind's theory curve and measured points share it.
    pub(crate) color: usize,
    pub(crate) style: Style,
    pub(crate) points: Vec<(f64, f64)>,
}

/// Colours for the series (colour-blind-safe, Okabe–Ito).
const PALETTE: [RGBColor; 8] = [
    RGBColor(0x00, 0x72, 0xB2),
    RGBColor(0xD5, 0x5E, 0x00),
    RGBColor(0x00, 0x9E, 0x73),
    RGBColor(0xCC, 0x79, 0xA7),
    RGBColor(0xE6, 0x9F, 0x00),
    RGBColor(0x56, 0xB4, 0xE9),
    RGBColor(0x00, 0x00, 0x00),
    RGBColor(0x99, 0x99, 0x99),
];

const SIZE: (u32, u32) = (900, 520);

/// The `--plot` value: a file whose folder exists, checked when the arguments are parsed, so that a mistyped
/// folder is reported before the work that the chart would show, not after it.
pub(crate) fn output_path(value: &str) -> Result<PathBuf, String> {
    let path = PathBuf::from(value);
    if path.is_dir() {
        return Err(format!("{value} is a directory: name the chart's file"));
    }
    // A bare file name has the empty parent: the current directory.
    let folder = match path.parent() {
        Some(folder) if folder.as_os_str().is_empty() => Path::new("."),
        Some(folder) => folder,
        None => return Err(format!("{value:?} is not a file name")),
    };
    if !folder.is_dir() {
        return Err(format!(
            "cannot write the chart there: {} is not an existing directory",
            folder.display()
        ));
    }
    Ok(path)
}

/// Writes the chart to `path` and says so on `out`.
pub(crate) fn write(
    out: &mut dyn Write,
    path: &Path,
    title: &str,
    series: &[Series],
) -> CliResult<()> {
    fs::write(path, render(title, series))
        .context(|| format!("cannot write the chart to {}", path.display()))?;
    writeln!(out, "\nchart written to {}", path.display())?;
    Ok(())
}

/// Renders the chart as a standalone SVG document (plotters' SVG backend).
pub(crate) fn render(title: &str, series: &[Series]) -> String {
    let mut svg = String::new();
    // Drawing into a String cannot fail for lack of space; an error leaves a partial chart, which the caller
    // writes as it is (a chart is an illustration, never an input).
    let _ = draw(&mut svg, title, series);
    svg
}

/// Whether a point can be drawn on a log scale.
fn drawable(&(x, y): &(f64, f64)) -> bool {
    x.is_finite() && y.is_finite() && y > 0.0
}

fn draw(
    svg: &mut String,
    title: &str,
    series: &[Series],
) -> Result<(), Box<dyn std::error::Error>> {
    let (mut x_max, mut y_min) = (1.0f64, 1.0f64);
    for &(x, y) in series
        .iter()
        .flat_map(|s| &s.points)
        .filter(|p| drawable(p))
    {
        x_max = x_max.max(x);
        y_min = y_min.min(y);
    }
    let x_step = if x_max > 24.0 { 4.0 } else { 2.0 };
    let x_max = (x_max / x_step).ceil() * x_step;
    // Whole decades, from the lowest rate shown (between 1e-9 and 0.1) up to 1; points below are left out (a
    // curve ends at the bottom edge instead of running along it).
    let lowest_decade = y_min.log10().floor().clamp(-9.0, -1.0) as i32;
    let y_floor = 10f64.powi(lowest_decade);

    let root = SVGBackend::with_string(svg, SIZE).into_drawing_area();
    root.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 18))
        .margin(16)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(0.0..x_max, (y_floor..1.0).log_scale())?;
    chart
        .configure_mesh()
        .x_desc("bits per key")
        .y_desc("false-positive rate")
        .x_labels((x_max / x_step) as usize + 1)
        .y_labels((1 - lowest_decade) as usize)
        .x_label_formatter(&|x| format!("{x}"))
        .y_label_formatter(&|y| format!("1e{}", y.log10().round()))
        .light_line_style(WHITE)
        .draw()?;
    for s in series {
        let color = PALETTE
            .get(s.color % PALETTE.len())
            .copied()
            .unwrap_or(BLACK);
        let visible = s
            .points
            .iter()
            .copied()
            .filter(|p| drawable(p) && p.1 >= y_floor);
        let name = s.name.clone();
        match s.style {
            Style::Line { dashed: false } => {
                chart
                    .draw_series(LineSeries::new(visible, color.stroke_width(2)))?
                    .label(name)
                    .legend(move |(x, y)| {
                        PathElement::new([(x, y), (x + 20, y)], color.stroke_width(2))
                    });
            }
            Style::Line { dashed: true } => {
                chart
                    .draw_series(DashedLineSeries::new(visible, 6, 4, color.stroke_width(2)))?
                    .label(name)
                    .legend(move |(x, y)| {
                        PathElement::new([(x, y), (x + 20, y)], color.stroke_width(1))
                    });
            }
            Style::Markers { radius } => {
                let r = radius.round() as i32;
                chart
                    .draw_series(visible.map(|p| Circle::new(p, r, color.filled())))?
                    .label(name)
                    .legend(move |(x, y)| Circle::new((x + 10, y), r, color.filled()));
            }
        }
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()?;
    root.present()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_every_series_and_escapes_names() {
        let series = vec![
            Series {
                name: "theory <A&B>".into(),
                color: 0,
                style: Style::Line { dashed: false },
                points: (1..=20)
                    .map(|b| (f64::from(b), 0.6185f64.powi(b)))
                    .collect(),
            },
            Series {
                name: "measured".into(),
                color: 0,
                style: Style::Markers { radius: 4.0 },
                points: vec![(10.0, 0.0096), (12.0, 0.0), (14.0, 0.0012)],
            },
        ];
        let svg = render("FPR", &series);
        assert!(svg.starts_with("<svg "), "{svg}");
        assert!(svg.trim_end().ends_with("</svg>"));
        assert!(svg.contains("theory &lt;A&amp;B&gt;"), "names are escaped");
        let curve = r##"stroke="#0072B2" stroke-width="2""##;
        assert_eq!(
            svg.matches(curve).count(),
            2,
            "the curve and its legend line"
        );
        // Two drawable measured points (a zero rate has no place on a log scale) plus the legend marker.
        assert_eq!(svg.matches("<circle").count(), 3);
        // Decades down to the lowest rate: 0.6185^20 ≈ 6.7e-5.
        assert!(svg.contains("1e-5") && !svg.contains("1e-6"), "{svg}");
    }
}
