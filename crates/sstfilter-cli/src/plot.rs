//! A hand-written SVG chart of false-positive rate (log scale) against bits per key: theory curves and measured
//! points, one colour per filter kind.

use std::fmt::Write as _;

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
const PALETTE: [&str; 8] = [
    "#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#999999",
];

const WIDTH: f64 = 900.0;
const HEIGHT: f64 = 520.0;
const LEFT: f64 = 80.0;
const RIGHT: f64 = 320.0;
const TOP: f64 = 50.0;
const BOTTOM: f64 = 60.0;

/// Renders the chart as a standalone SVG document.
pub(crate) fn render(title: &str, series: &[Series]) -> String {
    let all = series
        .iter()
        .flat_map(|s| &s.points)
        .filter(|(x, y)| x.is_finite() && *y > 0.0 && y.is_finite());
    let (mut x_max, mut y_min) = (1.0f64, 1.0f64);
    for &(x, y) in all {
        x_max = x_max.max(x);
        y_min = y_min.min(y);
    }
    let x_step = if x_max > 24.0 { 4.0 } else { 2.0 };
    let x_max = (x_max / x_step).ceil() * x_step;
    // Whole decades, from the lowest rate shown (between 1e-9 and 0.1) up to 1.
    let lowest_decade = y_min.log10().floor().clamp(-9.0, -1.0) as i32;
    let plot_w = WIDTH - LEFT - RIGHT;
    let plot_h = HEIGHT - TOP - BOTTOM;
    let px = |x: f64| LEFT + x / x_max * plot_w;
    let py = |y: f64| TOP + (y.log10() / f64::from(lowest_decade)).clamp(0.0, 1.0) * plot_h;
    // Points below the lowest decade are left out (a curve ends at the bottom edge instead of running along it).
    let y_floor = 10f64.powi(lowest_decade);

    let mut svg = String::new();
    let _ = writeln!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(
        svg,
        r#"<rect width="{WIDTH}" height="{HEIGHT}" fill="white"/>"#
    );
    let _ = writeln!(
        svg,
        r#"<text x="{}" y="28" font-size="16" text-anchor="middle">{}</text>"#,
        LEFT + plot_w / 2.0,
        escape(title)
    );

    // Grid and ticks.
    let mut x = 0.0;
    while x <= x_max + 1e-9 {
        let _ = writeln!(
            svg,
            r##"<line x1="{0:.1}" y1="{TOP}" x2="{0:.1}" y2="{1}" stroke="#e0e0e0"/><text x="{0:.1}" y="{2}" text-anchor="middle">{3}</text>"##,
            px(x),
            TOP + plot_h,
            TOP + plot_h + 18.0,
            x
        );
        x += x_step;
    }
    for decade in lowest_decade..=0 {
        let y = py(10f64.powi(decade));
        let _ = writeln!(
            svg,
            r##"<line x1="{LEFT}" y1="{y:.1}" x2="{0}" y2="{y:.1}" stroke="#e0e0e0"/><text x="{1}" y="{2:.1}" text-anchor="end">1e{decade}</text>"##,
            LEFT + plot_w,
            LEFT - 8.0,
            y + 4.0
        );
    }
    let _ = writeln!(
        svg,
        r##"<rect x="{LEFT}" y="{TOP}" width="{plot_w}" height="{plot_h}" fill="none" stroke="#333"/>"##
    );
    let _ = writeln!(
        svg,
        r#"<text x="{}" y="{}" text-anchor="middle">bits per key</text>"#,
        LEFT + plot_w / 2.0,
        HEIGHT - 18.0
    );
    let _ = writeln!(
        svg,
        r#"<text transform="translate(22 {}) rotate(-90)" text-anchor="middle">false-positive rate</text>"#,
        TOP + plot_h / 2.0
    );

    // Series, clipped to the plot area.
    let _ = writeln!(
        svg,
        r#"<clipPath id="plot"><rect x="{LEFT}" y="{TOP}" width="{plot_w}" height="{plot_h}"/></clipPath><g clip-path="url(#plot)">"#
    );
    for s in series {
        let color = PALETTE
            .get(s.color % PALETTE.len())
            .copied()
            .unwrap_or("#000");
        let visible = s
            .points
            .iter()
            .filter(|(x, y)| x.is_finite() && *y >= y_floor && y.is_finite());
        match s.style {
            Style::Line { dashed } => {
                let path: Vec<String> = visible
                    .map(|&(x, y)| format!("{:.1},{:.1}", px(x), py(y)))
                    .collect();
                let dash = if dashed {
                    r#" stroke-dasharray="6 4""#
                } else {
                    ""
                };
                let _ = writeln!(
                    svg,
                    r#"<polyline points="{}" fill="none" stroke="{color}" stroke-width="2"{dash}/>"#,
                    path.join(" ")
                );
            }
            Style::Markers { radius } => {
                for &(x, y) in visible {
                    let _ = writeln!(
                        svg,
                        r#"<circle cx="{:.1}" cy="{:.1}" r="{radius}" fill="{color}" stroke="white"/>"#,
                        px(x),
                        py(y)
                    );
                }
            }
        }
    }
    let _ = writeln!(svg, "</g>");

    // Legend.
    for (i, s) in series.iter().enumerate() {
        let color = PALETTE
            .get(s.color % PALETTE.len())
            .copied()
            .unwrap_or("#000");
        let y = TOP + 10.0 + 22.0 * i as f64;
        let x = LEFT + plot_w + 16.0;
        let _ = match s.style {
            Style::Line { dashed } => writeln!(
                svg,
                r#"<line x1="{x}" y1="{y}" x2="{}" y2="{y}" stroke="{color}" stroke-width="2"{}/>"#,
                x + 24.0,
                if dashed {
                    r#" stroke-dasharray="6 4""#
                } else {
                    ""
                }
            ),
            Style::Markers { radius } => writeln!(
                svg,
                r#"<circle cx="{}" cy="{y}" r="{radius}" fill="{color}"/>"#,
                x + 12.0
            ),
        };
        let _ = writeln!(
            svg,
            r#"<text x="{}" y="{}">{}</text>"#,
            x + 32.0,
            y + 4.0,
            escape(&s.name)
        );
    }
    svg.push_str("</svg>\n");
    svg
}

/// Escapes text for an SVG text node.
fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
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
        assert!(svg.starts_with("<svg "));
        assert!(svg.trim_end().ends_with("</svg>"));
        assert!(svg.contains("theory &lt;A&amp;B&gt;"));
        assert_eq!(svg.matches("<polyline").count(), 1);
        // Two drawable measured points (a zero rate has no place on a log scale) plus the legend marker.
        assert_eq!(svg.matches("<circle").count(), 3);
        // Decades down to the lowest rate: 0.6185^20 ≈ 6.7e-5.
        assert!(svg.contains(">1e-5<") && !svg.contains(">1e-6<"));
    }
}
