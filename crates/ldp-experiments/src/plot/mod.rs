//! Figures as data, drawn to SVG (plotters) and rendered to PNG and PDF (resvg, svg2pdf)
//! with an embedded font, so that a fresh machine needs nothing else.
//!
//! A figure is laid out for the width at which the paper prints it ([`Width`]: a share of
//! one column, 252 pt, or of the text width, 516 pt); the SVG's units are points at that
//! width, so a font size in the SVG is the printed size. No text is smaller than 7 pt.

mod export;
mod overlap;
mod style;
mod svg;
mod ticks;

pub use export::{render_pdf, render_png};
pub use overlap::{
    ALL_CURVES, COINCIDENT, Coincidence, LINE_HIDDEN, coincidence_note, coincidence_summary,
    coincidences,
};
pub use style::{
    ALL_MARKERS, Dash, GREY, Look, MARKERS, Marker, OKABE_ITO, RED, Rgb, memoized_look,
    ordered_look, protocol_look, protocol_marker, viridis,
};
pub use svg::{
    AxisTicks, MIN_FONT_PT, SUBSCRIPT_SHIFT, marker_is_opaque, marker_radius, panel_ticks,
    render_svg,
};
pub use ticks::tick;

/// The width a figure is printed at, as the paper's LaTeX places it: a share of one
/// column (`figure`, `\includegraphics[width=0.88\linewidth]`) or of the text width
/// (`figure*`). The article class is IEEEtran's two-column conference format: columns of
/// 21 pc (252 pt, 3.5 in), text 43 pc wide (516 pt, 7.17 in).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Width {
    /// This share of one column.
    Column(f64),
    /// This share of the full text width.
    Text(f64),
}

impl Width {
    /// One column, in points.
    pub const COLUMN_PT: f64 = 252.0;
    /// The text width, in points.
    pub const TEXT_PT: f64 = 516.0;

    /// The width in points (1/72 in).
    pub fn points(self) -> f64 {
        match self {
            Width::Column(f) => f * Self::COLUMN_PT,
            Width::Text(f) => f * Self::TEXT_PT,
        }
    }

    /// The share of the column or text width.
    pub fn fraction(self) -> f64 {
        match self {
            Width::Column(f) | Width::Text(f) => f,
        }
    }
}

/// The range an axis of `scale` fitted to `values` takes (padded as every fitted axis
/// is): for panels that share one range.
pub fn fitted_range(values: impl Iterator<Item = f64>, scale: Scale) -> (f64, f64) {
    svg::fit(values, scale == Scale::Log)
}

/// One point of a series.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Point {
    /// Abscissa.
    pub x: f64,
    /// Ordinate.
    pub y: f64,
    /// Half-width of a vertical error bar (0 for none).
    pub err: f64,
    /// Half-width of a horizontal error bar (0 for none).
    pub xerr: f64,
    /// A value on the figure's colour bar that colours this point's marker, if any.
    pub shade: Option<f64>,
}

impl Point {
    /// A plain point.
    pub fn at(x: f64, y: f64) -> Self {
        Point {
            x,
            y,
            err: 0.0,
            xerr: 0.0,
            shade: None,
        }
    }
}

/// A series of points drawn with one look.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// Its legend label (empty: not in the legend).
    pub label: String,
    /// How it is drawn.
    pub look: Look,
    /// Points, in drawing order.
    pub points: Vec<Point>,
}

/// Linear or logarithmic axis.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    /// Linear.
    Linear,
    /// Base-10 logarithmic.
    Log,
}

/// One axis of a panel.
#[derive(Debug, Clone, PartialEq)]
pub struct Axis {
    /// Its label.
    pub label: String,
    /// Its scale.
    pub scale: Scale,
    /// A fixed range; `None` fits the data.
    pub range: Option<(f64, f64)>,
    /// Tick positions the figure asks for (those inside the range, thinned to fit like
    /// any others); `None` places round values.
    pub ticks: Option<Vec<f64>>,
}

impl Axis {
    /// A linear axis fitted to the data.
    pub fn linear(label: &str) -> Self {
        Axis {
            label: label.into(),
            scale: Scale::Linear,
            range: None,
            ticks: None,
        }
    }

    /// A log axis fitted to the data.
    pub fn log(label: &str) -> Self {
        Axis {
            label: label.into(),
            scale: Scale::Log,
            range: None,
            ticks: None,
        }
    }

    /// This axis over a fixed range.
    pub fn over(self, lo: f64, hi: f64) -> Self {
        Axis {
            range: Some((lo, hi)),
            ..self
        }
    }

    /// This axis with ticks at `ticks` (values a reader looks for, such as 365 days).
    pub fn ticks_at(self, ticks: &[f64]) -> Self {
        Axis {
            ticks: Some(ticks.to_vec()),
            ..self
        }
    }
}

/// A vertical reference line across a panel.
#[derive(Debug, Clone, PartialEq)]
pub struct VLine {
    /// Where.
    pub x: f64,
    /// Legend label (empty: none).
    pub label: String,
    /// How it is drawn.
    pub look: Look,
}

/// One panel.
#[derive(Debug, Clone, PartialEq)]
pub struct Panel {
    /// Title above the panel.
    pub title: String,
    /// Horizontal axis.
    pub x: Axis,
    /// Vertical axis.
    pub y: Axis,
    /// Series, drawn in order.
    pub series: Vec<Series>,
    /// Vertical lines.
    pub vlines: Vec<VLine>,
}

/// The colour bar of a figure whose markers are coloured by a continuous value.
#[derive(Debug, Clone, PartialEq)]
pub struct ColorBar {
    /// What the colour shows.
    pub label: String,
    /// The value at the dark end.
    pub min: f64,
    /// The value at the bright end.
    pub max: f64,
}

impl ColorBar {
    /// The colour of `v`.
    pub fn color(&self, v: f64) -> Rgb {
        let t = if self.max > self.min {
            (v - self.min) / (self.max - self.min)
        } else {
            0.5
        };
        viridis(t)
    }
}

/// A grid of panels with one legend (and colour bar) above them, outside the data.
#[derive(Debug, Clone, PartialEq)]
pub struct Figure {
    /// Printed width.
    pub width: Width,
    /// Panels per row.
    pub columns: usize,
    /// Height of one panel, in points.
    pub panel_height: f64,
    /// Panels, row by row.
    pub panels: Vec<Panel>,
    /// The shared legend: label and look of each key, in order.
    pub legend: Vec<(String, Look)>,
    /// The colour bar, for figures coloured by a continuous value.
    pub color_bar: Option<ColorBar>,
    /// All panels share one y range (the union of theirs, or the first fixed one).
    pub share_y: bool,
    /// Sentences printed under the legend, across the figure: what the legend cannot say
    /// (series drawn on one another, what a panel leaves out).
    pub notes: Vec<String>,
}

impl Figure {
    /// The legend keys of every labelled series and line, each label once, in order of
    /// first appearance.
    pub fn legend_from_series(panels: &[Panel]) -> Vec<(String, Look)> {
        let mut keys: Vec<(String, Look)> = Vec::new();
        for p in panels {
            let labelled = p
                .series
                .iter()
                .map(|s| (&s.label, s.look))
                .chain(p.vlines.iter().map(|v| (&v.label, v.look)));
            for (label, look) in labelled {
                if !label.is_empty() && !keys.iter().any(|(l, _)| l == label) {
                    keys.push((label.clone(), look));
                }
            }
        }
        keys
    }
}
