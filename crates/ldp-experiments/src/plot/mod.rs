//! Small-multiple SVG figures (plotters): a grid of panels, each with lines, markers,
//! error bars and vertical reference lines, on linear or log axes.

use plotters::coord::Shift;
use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::prelude::*;

use crate::error::ExperimentError;

/// How a series is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// Solid line.
    Line,
    /// Dashed line.
    Dashed,
    /// Markers only.
    Markers,
    /// Solid line with markers.
    LineMarkers,
}

/// One curve of a panel.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// Legend label.
    pub label: String,
    /// Index into the palette.
    pub color: usize,
    /// Points, in drawing order.
    pub points: Vec<(f64, f64)>,
    /// Drawing style.
    pub style: Style,
    /// Vertical error half-widths, one per point (empty for none).
    pub errors: Vec<f64>,
}

/// A vertical reference line.
#[derive(Debug, Clone, PartialEq)]
pub struct VLine {
    /// Where.
    pub x: f64,
    /// Legend label.
    pub label: String,
    /// Index into the palette.
    pub color: usize,
}

/// One panel.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Panel {
    /// Title above the panel.
    pub title: String,
    /// X axis label.
    pub x_label: String,
    /// Y axis label.
    pub y_label: String,
    /// Log-scaled x axis.
    pub x_log: bool,
    /// Log-scaled y axis.
    pub y_log: bool,
    /// Curves.
    pub series: Vec<Series>,
    /// Vertical lines.
    pub vlines: Vec<VLine>,
}

/// A grid of panels.
#[derive(Debug, Clone, PartialEq)]
pub struct Figure {
    /// Title above the grid.
    pub title: String,
    /// Panels per row.
    pub columns: usize,
    /// Panels, row by row.
    pub panels: Vec<Panel>,
}

/// A categorical palette (Tableau 10 and two more), readable on white.
const PALETTE: [RGBColor; 12] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
    RGBColor(0, 0, 128),
    RGBColor(128, 0, 0),
];

/// The palette color of index `i`.
pub fn color(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

const PANEL_W: u32 = 420;
const PANEL_H: u32 = 320;
const TITLE_H: u32 = 40;

/// Renders `fig` as an SVG document.
pub fn render_svg(fig: &Figure) -> Result<String, ExperimentError> {
    let cols = fig.columns.max(1);
    let rows = fig.panels.len().div_ceil(cols).max(1);
    let size = (PANEL_W * cols as u32, PANEL_H * rows as u32 + TITLE_H);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, size).into_drawing_area();
        root.fill(&WHITE).map_err(plot_err)?;
        let (top, body) = root.split_vertically(TITLE_H);
        top.titled(&fig.title, ("sans-serif", 20))
            .map_err(plot_err)?;
        for (panel, area) in fig.panels.iter().zip(body.split_evenly((rows, cols))) {
            draw_panel(&area, panel)?;
        }
        root.present().map_err(plot_err)?;
    }
    Ok(svg)
}

/// A tick label with at most 3 significant digits: `0.25`, `1e-6`, `2.5e4`.
pub fn tick(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return format!("{v}");
    }
    let a = v.abs();
    if (1e-3..1e4).contains(&a) {
        let digits = (2 - a.log10().floor() as i32).max(0) as usize;
        let s = format!("{v:.digits$}");
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_owned()
        } else {
            s
        }
    } else {
        let s = format!("{v:.2e}");
        let (mantissa, exp) = s.split_once('e').expect("scientific format");
        let mantissa = mantissa.trim_end_matches('0').trim_end_matches('.');
        format!("{mantissa}e{exp}")
    }
}

fn plot_err<E: std::fmt::Debug>(e: E) -> ExperimentError {
    ExperimentError::Plot(format!("{e:?}"))
}

/// Data range of one axis, padded; positive for log axes.
fn range(values: impl Iterator<Item = f64>, log: bool) -> (f64, f64) {
    let (lo, hi) = values
        .filter(|v| v.is_finite() && (!log || *v > 0.0))
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        });
    if !lo.is_finite() {
        return if log { (0.1, 10.0) } else { (0.0, 1.0) };
    }
    if log {
        let (lo, hi) = if hi / lo < 1.01 {
            (lo / 2.0, hi * 2.0)
        } else {
            (lo, hi)
        };
        (lo / 1.15, hi * 1.15)
    } else {
        let pad = if hi > lo {
            (hi - lo) * 0.05
        } else {
            lo.abs().max(1.0) * 0.1
        };
        (lo - pad, hi + pad)
    }
}

fn draw_panel(area: &DrawingArea<SVGBackend, Shift>, p: &Panel) -> Result<(), ExperimentError> {
    let xs = p
        .series
        .iter()
        .flat_map(|s| s.points.iter().map(|q| q.0))
        .chain(p.vlines.iter().map(|v| v.x));
    let ys = p.series.iter().flat_map(|s| {
        s.points.iter().enumerate().flat_map(move |(i, q)| {
            let e = s.errors.get(i).copied().unwrap_or(0.0);
            [q.1 - e, q.1 + e]
        })
    });
    let (x0, x1) = range(xs, p.x_log);
    let (y0, y1) = range(ys, p.y_log);
    match (p.x_log, p.y_log) {
        (false, false) => draw_in(area, p, x0..x1, y0..y1),
        (true, false) => draw_in(area, p, (x0..x1).log_scale(), y0..y1),
        (false, true) => draw_in(area, p, x0..x1, (y0..y1).log_scale()),
        (true, true) => draw_in(area, p, (x0..x1).log_scale(), (y0..y1).log_scale()),
    }
}

fn draw_in<X, Y>(
    area: &DrawingArea<SVGBackend, Shift>,
    p: &Panel,
    x: X,
    y: Y,
) -> Result<(), ExperimentError>
where
    X: AsRangedCoord<Value = f64>,
    Y: AsRangedCoord<Value = f64>,
    X::CoordDescType: ValueFormatter<f64>,
    Y::CoordDescType: ValueFormatter<f64>,
{
    let mut chart = ChartBuilder::on(area)
        .caption(&p.title, ("sans-serif", 16))
        .margin(8)
        .x_label_area_size(34)
        .y_label_area_size(52)
        .build_cartesian_2d(x, y)
        .map_err(plot_err)?;
    chart
        .configure_mesh()
        .x_desc(p.x_label.as_str())
        .y_desc(p.y_label.as_str())
        .x_labels(6)
        .y_labels(6)
        .x_label_formatter(&|v| tick(*v))
        .y_label_formatter(&|v| tick(*v))
        .label_style(("sans-serif", 11))
        .axis_desc_style(("sans-serif", 12))
        .light_line_style(RGBColor(235, 235, 235))
        .draw()
        .map_err(plot_err)?;
    let y_span = chart.y_range();
    for v in &p.vlines {
        let c = color(v.color);
        chart
            .draw_series(DashedLineSeries::new(
                [(v.x, y_span.start), (v.x, y_span.end)],
                6,
                4,
                c.stroke_width(2),
            ))
            .map_err(plot_err)?
            .label(v.label.as_str())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], c.stroke_width(2)));
    }
    for s in &p.series {
        let c = color(s.color);
        let pts = s
            .points
            .iter()
            .copied()
            .filter(|q| q.0.is_finite() && q.1.is_finite());
        let anno = match s.style {
            Style::Line | Style::LineMarkers => {
                chart.draw_series(LineSeries::new(pts.clone(), c.stroke_width(2)))
            }
            Style::Dashed => {
                chart.draw_series(DashedLineSeries::new(pts.clone(), 6, 4, c.stroke_width(2)))
            }
            Style::Markers => chart.draw_series(pts.clone().map(|q| Circle::new(q, 3, c.filled()))),
        }
        .map_err(plot_err)?;
        anno.label(s.label.as_str())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], c.stroke_width(2)));
        if s.style == Style::LineMarkers {
            chart
                .draw_series(pts.clone().map(|q| Circle::new(q, 2, c.filled())))
                .map_err(plot_err)?;
        }
        if !s.errors.is_empty() {
            let bars = s
                .points
                .iter()
                .zip(&s.errors)
                .filter(|(q, e)| q.0.is_finite() && e.is_finite());
            chart
                .draw_series(bars.map(|(&(px, py), &e)| {
                    ErrorBar::new_vertical(px, py - e, py, py + e, c.stroke_width(1), 6)
                }))
                .map_err(plot_err)?;
        }
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(RGBColor(200, 200, 200))
        .label_font(("sans-serif", 10))
        .position(SeriesLabelPosition::UpperRight)
        .draw()
        .map_err(plot_err)?;
    Ok(())
}
