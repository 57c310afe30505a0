//! Drawing a [`Figure`] to SVG with plotters: plotters lays out the axes, ticks and labels
//! of each panel; lines, markers, error bars, the legend and the colour bar are drawn in
//! backend coordinates, so dashes and marker shapes are exact.
//!
//! The canvas has [`UNITS_PER_PT`] units per point (plotters' coordinates are integers),
//! and the document's `width` and `height` are in points, so the SVG prints at the
//! figure's width with the font sizes chosen here.

use std::sync::OnceLock;

use plotters::coord::Shift;
use plotters::coord::ranged1d::{Ranged, ValueFormatter};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::style::{Dash, Look, Marker, Rgb};
use super::ticks::{self, tick};
use super::{Axis, ColorBar, Figure, Panel, Scale};
use crate::error::ExperimentError;

/// Canvas units per point.
const UNITS_PER_PT: f64 = 4.0;

/// The smallest text in any figure, in points at the printed width.
pub const MIN_FONT_PT: f64 = 7.0;

/// Panel titles.
const TITLE_PT: f64 = 8.0;
/// Space above a panel's title, in points.
const TITLE_GAP: f64 = 3.0;
/// Space between a panel's title band (or its cell) and its chart, in points.
const CHART_MARGIN: f64 = 3.0;
/// Space right of a chart: room for half the last x tick label, centred on the frame's
/// right edge.
const RIGHT_MARGIN: f64 = 8.0;
/// Height of the x tick labels and the x axis label, in points.
const X_LABEL_AREA: f64 = 18.0;

fn u(pt: f64) -> i32 {
    (pt * UNITS_PER_PT).round() as i32
}

/// A font of `pt` points as printed (plotters' SVG backend writes 1/1.24 of the size it is
/// given).
fn font(pt: f64) -> FontDesc<'static> {
    ("DejaVu Sans", pt * UNITS_PER_PT * 1.24).into_font()
}

fn rgb(c: Rgb) -> RGBColor {
    RGBColor(c.0, c.1, c.2)
}

fn plot_err<E: std::fmt::Debug>(e: E) -> ExperimentError {
    ExperimentError::Plot(format!("{e:?}"))
}

/// Printed width of `text` at `pt` points: the sum of its characters' advances in the
/// font it is set in (DejaVu Sans; kerning, which narrows it, ignored).
fn text_width(text: &str, pt: f64) -> f64 {
    static FACE: OnceLock<ttf_parser::Face<'static>> = OnceLock::new();
    let face = FACE.get_or_init(|| {
        ttf_parser::Face::parse(super::export::FONT, 0).expect("the bundled font parses")
    });
    let em = f64::from(face.units_per_em());
    let advance = |c: char| {
        face.glyph_index(c)
            .and_then(|g| face.glyph_hor_advance(g))
            .map_or(0.6, |a| f64::from(a) / em)
    };
    text.chars().map(advance).sum::<f64>() * pt
}

type Root<'a> = DrawingArea<SVGBackend<'a>, Shift>;

/// Renders `fig` as an SVG document.
pub fn render_svg(fig: &Figure) -> Result<String, ExperimentError> {
    let width_pt = fig.width.points();
    let legend_rows = legend_layout(&fig.legend, width_pt - 2.0 * MARGIN);
    let (size, body_top) = canvas(fig);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, size).into_drawing_area();
        root.fill(&WHITE).map_err(plot_err)?;
        let mut top = MARGIN;
        if let Some(bar) = &fig.color_bar {
            draw_color_bar(&root, bar, width_pt, top)?;
            top += COLOR_BAR_H;
        }
        draw_legend(&root, &legend_rows, MARGIN, top)?;
        top += legend_height(fig, &legend_rows);
        draw_notes(&root, &note_lines(fig), top)?;
        let y_shared = shared_y(fig);
        let areas = body(&root, fig, body_top);
        let notation = notation(fig, &areas, y_shared);
        for (panel, area) in fig.panels.iter().zip(&areas) {
            draw_panel(
                &root,
                area,
                panel,
                y_shared,
                &notation,
                fig.color_bar.as_ref(),
            )?;
        }
        root.present().map_err(plot_err)?;
    }
    // Print size in points, whole canvas units of them (so that a font's printed size is
    // exactly the one chosen); the canvas keeps its finer units through the viewBox.
    let width_pt = f64::from(size.0) / UNITS_PER_PT;
    let height_pt = f64::from(size.1) / UNITS_PER_PT;
    let head = format!(r#"<svg width="{}" height="{}""#, size.0, size.1);
    let printed = format!(r#"<svg width="{width_pt}pt" height="{height_pt}pt""#);
    Ok(subscripts(&svg.replacen(&head, &printed, 1)))
}

/// The margin around a figure, in points.
const MARGIN: f64 = 3.0;

/// The height of the colour bar's band, in points.
const COLOR_BAR_H: f64 = 27.0;

/// The height of the legend's band, in points.
fn legend_height(fig: &Figure, rows: &[Vec<(String, Look, f64)>]) -> f64 {
    if fig.legend.is_empty() {
        0.0
    } else {
        rows.len() as f64 * 10.0 + 3.0
    }
}

/// The height of one line of a note, in points.
const NOTE_LINE: f64 = 9.0;

/// The figure's notes, broken into lines that fit its width (at word boundaries).
fn note_lines(fig: &Figure) -> Vec<String> {
    let width = fig.width.points() - 2.0 * MARGIN;
    let mut lines = Vec::new();
    for note in &fig.notes {
        let mut line = String::new();
        for word in note.split_whitespace() {
            let longer = if line.is_empty() {
                word.to_owned()
            } else {
                format!("{line} {word}")
            };
            if !line.is_empty() && text_width(&longer, MIN_FONT_PT) > width {
                lines.push(std::mem::replace(&mut line, word.to_owned()));
            } else {
                line = longer;
            }
        }
        if !line.is_empty() {
            lines.push(line);
        }
    }
    lines
}

/// The notes' lines, left-aligned under the legend from `top` points.
fn draw_notes(root: &Root<'_>, lines: &[String], top: f64) -> Result<(), ExperimentError> {
    for (i, line) in lines.iter().enumerate() {
        let y = top + NOTE_LINE * (i as f64 + 0.5);
        root.draw(&Text::new(
            line.clone(),
            (u(MARGIN), u(y)),
            font(MIN_FONT_PT)
                .color(&RGBColor(60, 60, 60))
                .pos(Pos::new(HPos::Left, VPos::Center)),
        ))
        .map_err(plot_err)?;
    }
    Ok(())
}

/// The canvas size in units, and where the panels start (points from the top).
fn canvas(fig: &Figure) -> ((u32, u32), f64) {
    let width_pt = fig.width.points();
    let legend_rows = legend_layout(&fig.legend, width_pt - 2.0 * MARGIN);
    let legend_h = legend_height(fig, &legend_rows);
    let notes = note_lines(fig).len();
    let notes_h = if notes == 0 {
        0.0
    } else {
        notes as f64 * NOTE_LINE + 2.0
    };
    let legend_h = legend_h + notes_h;
    let bar_h = if fig.color_bar.is_some() {
        COLOR_BAR_H
    } else {
        0.0
    };
    let rows = fig.panels.len().div_ceil(fig.columns.max(1)).max(1);
    let height_pt = MARGIN * 2.0 + legend_h + bar_h + rows as f64 * fig.panel_height;
    (
        (u(width_pt) as u32, u(height_pt) as u32),
        MARGIN + bar_h + legend_h,
    )
}

/// The panels' areas, row by row, below `top` points.
fn body<'a>(root: &Root<'a>, fig: &Figure, top: f64) -> Vec<Root<'a>> {
    let cols = fig.columns.max(1);
    let rows = fig.panels.len().div_ceil(cols).max(1);
    root.margin(u(top), u(MARGIN), u(MARGIN), u(MARGIN))
        .split_evenly((rows, cols))
}

/// How far a subscript sits below the baseline. A length rather than the keyword `sub`,
/// which resvg (the PNG and PDF path) ignores.
pub const SUBSCRIPT_SHIFT: &str = "-0.3em";

/// Typesets the subscripts of the weights (w_ASR, w_MSE) and of the audit's empirical
/// epsilon (ε_emp) as SVG subscripts, at full size.
fn subscripts(svg: &str) -> String {
    let mut out = svg.to_owned();
    for (base, name) in [("w", "ASR"), ("w", "MSE"), ("ε", "emp")] {
        out = out.replace(
            &format!("{base}_{name}"),
            &format!(r#"{base}<tspan baseline-shift="{SUBSCRIPT_SHIFT}">{name}</tspan>"#),
        );
    }
    out
}

/// The y range shared by every panel, if the figure shares one.
fn shared_y(fig: &Figure) -> Option<(f64, f64)> {
    if !fig.share_y {
        return None;
    }
    if let Some(r) = fig.panels.iter().find_map(|p| p.y.range) {
        return Some(r);
    }
    let log = fig.panels.first().is_some_and(|p| p.y.scale == Scale::Log);
    Some(fit(fig.panels.iter().flat_map(y_values), log))
}

fn y_values(p: &Panel) -> impl Iterator<Item = f64> + '_ {
    p.series
        .iter()
        .flat_map(|s| s.points.iter().flat_map(|q| [q.y - q.err, q.y + q.err]))
}

/// Data range of one axis, padded; positive for log axes.
pub(super) fn fit(values: impl Iterator<Item = f64>, log: bool) -> (f64, f64) {
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
        // 5% of the decades spanned (at least 12%), as the linear axes get: markers at
        // the ends stay whole.
        let pad = (hi / lo).powf(0.05).max(1.12);
        // A power of ten within a tenth of a decade beyond the padding joins the axis,
        // so that it can carry a label (1e-9, 1e-7, 1e-5 rather than 1e-8, 3e-7, 1e-5).
        let (lo, hi) = (lo / pad, hi * pad);
        let below = 10f64.powf(lo.log10().floor());
        let above = 10f64.powf(hi.log10().ceil());
        let lo = if (lo / below).log10() < 0.1 {
            below
        } else {
            lo
        };
        let hi = if (above / hi).log10() < 0.1 {
            above
        } else {
            hi
        };
        (lo, hi)
    } else {
        let pad = if hi > lo {
            (hi - lo) * 0.05
        } else {
            lo.abs().max(1.0) * 0.1
        };
        (lo - pad, hi + pad)
    }
}

/// The labelled ticks of one axis as drawn, and the extent of the panel's data on it.
#[derive(Debug, Clone, PartialEq)]
pub struct AxisTicks {
    /// The tick values, increasing.
    pub values: Vec<f64>,
    /// Their labels.
    pub labels: Vec<String>,
    /// The smallest and largest value of the data on this axis (positive ones on a log
    /// axis).
    pub extent: (f64, f64),
}

/// The ticks each panel of `fig` labels, `[x, y]`, exactly as [`render_svg`] draws them
/// (after thinning to fit): what the legibility test reads.
pub fn panel_ticks(fig: &Figure) -> Vec<[AxisTicks; 2]> {
    let (size, top) = canvas(fig);
    let mut unused = String::new();
    let root = SVGBackend::with_string(&mut unused, size).into_drawing_area();
    let areas = body(&root, fig, top);
    let y_shared = shared_y(fig);
    let notation = notation(fig, &areas, y_shared);
    let extent = |values: &mut dyn Iterator<Item = f64>, log: bool| {
        values
            .filter(|v| v.is_finite() && (!log || *v > 0.0))
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
                (lo.min(v), hi.max(v))
            })
    };
    areas
        .iter()
        .zip(&fig.panels)
        .map(|(area, p)| {
            let (x, y, _) = panel_axes(area, p, y_shared, &notation);
            let ys = &mut p.series.iter().flat_map(|s| s.points.iter().map(|q| q.y));
            [(extent(&mut x_values(p), x.log), x), (extent(ys, y.log), y)].map(|(extent, c)| {
                AxisTicks {
                    labels: c.ticks.iter().map(|&v| c.label(v)).collect(),
                    values: c.ticks,
                    extent,
                }
            })
        })
        .collect()
}

/// How a figure writes its tick labels: one notation per axis, and per family of axes
/// (the axes of one quantity, by their label) across the figure's panels.
#[derive(Debug, Clone, Default)]
struct Notation {
    /// Small labels in exponent form (log axes below 0.1, linear axes with a label below
    /// 0.01): where some axis must use that form, a log axis labelling a value below
    /// 0.001 or a linear one whose labels need it (decimals past six characters, 0.00075,
    /// or values from 1e4 up), so that `1e-4` and `0.001` never share a figure.
    small_in_exponent: bool,
    /// The labels of the log axes written wholly in exponent form (`1e-2, 1e-1, 1`, never
    /// `1e-2, 0.1, 1`): those where some axis of that label has a tick that must be
    /// (below 0.001, from 1e4 up, or below 0.1 in a figure of small labels in exponent
    /// form), on every panel alike.
    exponent_axes: Vec<String>,
}

/// The notation of `fig`'s tick labels (see [`Notation`]).
fn notation(fig: &Figure, areas: &[Root<'_>], y_shared: Option<(f64, f64)>) -> Notation {
    let plain = Notation::default();
    let small_in_exponent = areas.iter().zip(&fig.panels).any(|(area, p)| {
        let (x, y, _) = panel_axes(area, p, y_shared, &plain);
        [x, y].iter().any(|c| {
            if c.log {
                c.ticks.iter().any(|&v| v > 0.0 && v < 1e-3)
            } else {
                ticks::linear_ticks(&c.ticks, false)
                    .iter()
                    .any(|l| l.contains('e'))
            }
        })
    });
    let mut exponent_axes: Vec<String> = Vec::new();
    for p in &fig.panels {
        let (x, y) = axis_coords(p, y_shared, &plain);
        for (c, axis) in [(x, &p.x), (y, &p.y)] {
            let small = small_in_exponent && c.ticks.iter().any(|&v| v > 0.0 && v < 0.1);
            if c.log
                && (small || ticks::needs_exponent(&c.ticks))
                && !exponent_axes.contains(&axis.label)
            {
                exponent_axes.push(axis.label.clone());
            }
        }
    }
    Notation {
        small_in_exponent,
        exponent_axes,
    }
}

/// The abscissae a panel must show: its points with their error bars, and its lines.
fn x_values(p: &Panel) -> impl Iterator<Item = f64> + '_ {
    p.series
        .iter()
        .flat_map(|s| s.points.iter().flat_map(|q| [q.x - q.xerr, q.x + q.xerr]))
        .chain(p.vlines.iter().map(|v| v.x))
}

/// A panel's axes as drawn in `area`: ranges, thinned ticks, and the width of the y
/// labels' area in points.
fn panel_axes(
    area: &Root<'_>,
    p: &Panel,
    y_shared: Option<(f64, f64)>,
    notation: &Notation,
) -> (Coord, Coord, f64) {
    let (w, h) = area.dim_in_pixel();
    let (w, h) = (f64::from(w) / UNITS_PER_PT, f64::from(h) / UNITS_PER_PT);
    let (x, y) = axis_coords(p, y_shared, notation);
    // Label widths: about 0.6 em per character; heights one line.
    let y_area = y
        .ticks
        .iter()
        .map(|&v| text_width(&y.label(v), MIN_FONT_PT))
        .fold(0.0, f64::max)
        + MIN_FONT_PT * 1.5
        + 3.0;
    // The frame's length as `draw_in` lays it out (the title band about 1.6 lines).
    let x_len = w - y_area - CHART_MARGIN - RIGHT_MARGIN;
    let y_len = h - TITLE_GAP - TITLE_PT * 1.6 - 2.0 * CHART_MARGIN - X_LABEL_AREA;
    let labels = x.clone();
    let x = x.thinned(x_len, |v| text_width(&labels.label(v), MIN_FONT_PT), 3.0);
    let y = y.thinned(y_len, |_| MIN_FONT_PT, 1.5);
    (x, y, y_area)
}

/// A panel's axes before their labels are thinned to fit.
fn axis_coords(p: &Panel, y_shared: Option<(f64, f64)>, notation: &Notation) -> (Coord, Coord) {
    let (x0, x1) =
        p.x.range
            .unwrap_or_else(|| fit(x_values(p), p.x.scale == Scale::Log));
    let (y0, y1) = y_shared
        .or(p.y.range)
        .unwrap_or_else(|| fit(y_values(p), p.y.scale == Scale::Log));
    (
        Coord::new(&p.x, x0, x1, notation),
        Coord::new(&p.y, y0, y1, notation),
    )
}

fn draw_panel(
    root: &Root<'_>,
    area: &Root<'_>,
    p: &Panel,
    y_shared: Option<(f64, f64)>,
    notation: &Notation,
    bar: Option<&ColorBar>,
) -> Result<(), ExperimentError> {
    let (x, y, y_area) = panel_axes(area, p, y_shared, notation);
    draw_in(root, area, p, bar, x, y, y_area)
}

/// One axis: its range, linear or log, and the ticks of [`ticks`]; labels by [`tick`].
#[derive(Debug, Clone)]
struct Coord {
    lo: f64,
    hi: f64,
    log: bool,
    /// In a figure that writes small labels in exponent form (see [`Notation`]).
    small_in_exponent: bool,
    /// A log axis written wholly in exponent form (see [`Notation`]).
    exponent: bool,
    ticks: Vec<f64>,
}

impl Coord {
    fn new(axis: &Axis, lo: f64, hi: f64, notation: &Notation) -> Self {
        let asked: Option<Vec<f64>> = axis.ticks.as_ref().map(|t| {
            let inside = |v: &&f64| (lo.min(hi)..=lo.max(hi)).contains(*v);
            t.iter().filter(inside).copied().collect()
        });
        let log = axis.scale == Scale::Log;
        let exponent = log && notation.exponent_axes.contains(&axis.label);
        let mut ticks = asked
            .filter(|t| t.len() >= 2)
            .unwrap_or_else(|| axis_ticks(axis.scale, lo, hi));
        if exponent && axis.ticks.is_none() {
            // In exponent form the powers of ten alone, where three of them lie on the
            // axis (1e-3, 1e-2, 1e-1, not 2e-3 and 5e-3 between).
            let decades: Vec<f64> = ticks
                .iter()
                .copied()
                .filter(|v| ticks::is_power_of_ten(*v))
                .collect();
            if decades.len() >= 3 {
                ticks = decades;
            }
        }
        Coord {
            lo,
            hi,
            log,
            small_in_exponent: notation.small_in_exponent,
            exponent,
            ticks,
        }
    }

    /// This axis with its tick labels thinned to fit `length` points.
    fn thinned(self, length: f64, size: impl Fn(f64) -> f64, gap: f64) -> Self {
        let ticks = ticks::thin(
            self.ticks.clone(),
            self.log,
            |v| self.fraction(v) * length,
            size,
            gap,
            length,
        );
        Coord { ticks, ..self }
    }

    /// The label of the tick at `v`: on a linear axis in the style of all its ticks.
    fn label(&self, v: f64) -> String {
        if self.exponent {
            return ticks::exponent_tick(v);
        }
        if self.log {
            return ticks::log_tick(v, self.small_in_exponent);
        }
        let small = |t: &f64| t.abs() > 0.0 && t.abs() < 0.01;
        let exponent = self.small_in_exponent && self.ticks.iter().any(small);
        match self.ticks.iter().position(|&t| t == v) {
            Some(i) => ticks::linear_ticks(&self.ticks, exponent).swap_remove(i),
            None => tick(v),
        }
    }

    /// Where `v` lies on the axis, from 0 to 1.
    fn fraction(&self, v: f64) -> f64 {
        if self.log {
            (v.ln() - self.lo.ln()) / (self.hi.ln() - self.lo.ln())
        } else {
            (v - self.lo) / (self.hi - self.lo)
        }
    }
}

impl Ranged for Coord {
    type FormatOption = plotters::coord::ranged1d::NoDefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        let t = self.fraction(*value);
        let t = if t.is_finite() {
            t.clamp(-1.0, 2.0)
        } else {
            0.0
        };
        limit.0 + (t * f64::from(limit.1 - limit.0)).round() as i32
    }

    fn key_points<Hint: plotters::coord::ranged1d::KeyPointHint>(&self, _: Hint) -> Vec<f64> {
        self.ticks.clone()
    }

    fn range(&self) -> std::ops::Range<f64> {
        self.lo..self.hi
    }
}

impl ValueFormatter<f64> for Coord {
    fn format(value: &f64) -> String {
        tick(*value)
    }
}

fn axis_ticks(scale: Scale, lo: f64, hi: f64) -> Vec<f64> {
    match scale {
        Scale::Linear => ticks::linear(lo, hi, 4),
        Scale::Log => ticks::log(lo, hi),
    }
}

fn draw_in(
    root: &Root<'_>,
    area: &Root<'_>,
    p: &Panel,
    bar: Option<&ColorBar>,
    x: Coord,
    y: Coord,
    y_area: f64,
) -> Result<(), ExperimentError> {
    // The title in a band of its own above the chart's margin: the top tick label is
    // centred on the frame's edge and rises half its height above it.
    let area = area
        .margin(u(TITLE_GAP), 0, 0, 0)
        .titled(&p.title, font(TITLE_PT))
        .map_err(plot_err)?;
    let (x_labels, y_labels) = (x.clone(), y.clone());
    let mut chart = ChartBuilder::on(&area)
        .margin(u(CHART_MARGIN))
        .margin_right(u(RIGHT_MARGIN))
        .x_label_area_size(u(X_LABEL_AREA))
        .y_label_area_size(u(y_area))
        .build_cartesian_2d(x, y)
        .map_err(plot_err)?;
    chart
        .configure_mesh()
        .x_desc(p.x.label.as_str())
        .y_desc(p.y.label.as_str())
        .x_label_formatter(&|v| x_labels.label(*v))
        .y_label_formatter(&|v| y_labels.label(*v))
        .label_style(font(MIN_FONT_PT))
        .axis_desc_style(font(MIN_FONT_PT))
        .bold_line_style(RGBColor(228, 228, 228).stroke_width(u(0.4) as u32))
        .light_line_style(TRANSPARENT)
        .axis_style(RGBColor(90, 90, 90).stroke_width(u(0.5) as u32))
        .set_all_tick_mark_size(u(2.0))
        .draw()
        .map_err(plot_err)?;
    let spec = chart.as_coord_spec().clone();
    let to_px = |x: f64, y: f64| spec.translate(&(x, y));
    let (yr0, yr1) = {
        let r = chart.y_range();
        (r.start, r.end)
    };
    for v in &p.vlines {
        let path = [to_px(v.x, yr0), to_px(v.x, yr1)];
        draw_line(root, &path, v.look)?;
    }
    for s in &p.series {
        let points: Vec<_> = s
            .points
            .iter()
            .filter(|q| q.x.is_finite() && q.y.is_finite())
            .collect();
        let style = rgb(s.look.color).stroke_width(u(0.5) as u32);
        let cap = u(1.5);
        for q in points.iter().filter(|q| q.err > 0.0 && q.err.is_finite()) {
            let (top, bottom) = (to_px(q.x, q.y + q.err), to_px(q.x, q.y - q.err));
            for seg in [
                vec![top, bottom],
                vec![(top.0 - cap, top.1), (top.0 + cap, top.1)],
                vec![(bottom.0 - cap, bottom.1), (bottom.0 + cap, bottom.1)],
            ] {
                root.draw(&PathElement::new(seg, style)).map_err(plot_err)?;
            }
        }
        for q in points.iter().filter(|q| q.xerr > 0.0 && q.xerr.is_finite()) {
            let lo = if q.x - q.xerr > 0.0 || p.x.scale == Scale::Linear {
                q.x - q.xerr
            } else {
                q.x / 10.0
            };
            let (left, right) = (to_px(lo, q.y), to_px(q.x + q.xerr, q.y));
            for seg in [
                vec![left, right],
                vec![(left.0, left.1 - cap), (left.0, left.1 + cap)],
                vec![(right.0, right.1 - cap), (right.0, right.1 + cap)],
            ] {
                root.draw(&PathElement::new(seg, style)).map_err(plot_err)?;
            }
        }
        let path: Vec<(i32, i32)> = points.iter().map(|q| to_px(q.x, q.y)).collect();
        draw_line(root, &path, s.look)?;
        if let Some(marker) = s.look.marker {
            for (q, &at) in points.iter().zip(&path) {
                let color = match (q.shade, bar) {
                    (Some(v), Some(bar)) => bar.color(v),
                    _ => s.look.color,
                };
                draw_marker(root, at, marker, color, s.look.filled)?;
            }
        }
    }
    Ok(())
}

/// A polyline in backend units, with the look's dash pattern.
fn draw_line(root: &Root<'_>, path: &[(i32, i32)], look: Look) -> Result<(), ExperimentError> {
    let pattern: &[f64] = match look.dash {
        Dash::None => return Ok(()),
        Dash::Solid => &[],
        Dash::Dashed => &[4.0, 2.0],
        Dash::DashDot => &[4.0, 1.5, 1.0, 1.5],
    };
    let style = rgb(look.color).stroke_width(u(0.9) as u32);
    if pattern.is_empty() {
        if path.len() >= 2 {
            root.draw(&PathElement::new(path.to_vec(), style))
                .map_err(plot_err)?;
        }
        return Ok(());
    }
    for dash in dashes(
        path,
        &pattern.iter().map(|p| p * UNITS_PER_PT).collect::<Vec<_>>(),
    ) {
        root.draw(&PathElement::new(dash, style))
            .map_err(plot_err)?;
    }
    Ok(())
}

/// The "on" pieces of `path` under a dash `pattern` (on, off, on, off, ... lengths).
fn dashes(path: &[(i32, i32)], pattern: &[f64]) -> Vec<Vec<(i32, i32)>> {
    let mut out = Vec::new();
    let mut current: Vec<(i32, i32)> = Vec::new();
    let (mut phase, mut left) = (0usize, pattern[0]);
    for w in path.windows(2) {
        let (a, b) = (
            (f64::from(w[0].0), f64::from(w[0].1)),
            (f64::from(w[1].0), f64::from(w[1].1)),
        );
        let length = ((b.0 - a.0).powi(2) + (b.1 - a.1).powi(2)).sqrt();
        let mut done = 0.0;
        while done < length {
            let step = left.min(length - done);
            let at = |d: f64| {
                let t = d / length;
                (
                    (a.0 + (b.0 - a.0) * t).round() as i32,
                    (a.1 + (b.1 - a.1) * t).round() as i32,
                )
            };
            if phase % 2 == 0 {
                if current.is_empty() {
                    current.push(at(done));
                }
                current.push(at(done + step));
            }
            done += step;
            left -= step;
            if left <= 1e-9 {
                if phase % 2 == 0 && current.len() >= 2 {
                    out.push(std::mem::take(&mut current));
                }
                current.clear();
                phase = (phase + 1) % pattern.len();
                left = pattern[phase];
            }
        }
    }
    if current.len() >= 2 {
        out.push(current);
    }
    out
}

/// The radius of a marker, in points: a hollow marker is larger than a filled one and
/// has no fill, so that where an adaptive protocol coincides with its classic counterpart
/// (same shape and colour) both are seen, the filled one inside the ring.
pub fn marker_radius(filled: bool) -> f64 {
    if filled { 2.1 } else { 3.1 }
}

/// Whether a marker is drawn with a fill, hiding what lies under it: only a filled one.
pub fn marker_is_opaque(filled: bool) -> bool {
    filled
}

/// A marker centred at `at`, of [`marker_radius`].
fn draw_marker(
    root: &Root<'_>,
    at: (i32, i32),
    marker: Marker,
    color: Rgb,
    filled: bool,
) -> Result<(), ExperimentError> {
    let c = rgb(color);
    let r = marker_radius(filled) * UNITS_PER_PT;
    let outline = c.stroke_width(u(0.6) as u32);
    let pt = |dx: f64, dy: f64| (at.0 + dx.round() as i32, at.1 + dy.round() as i32);
    let opaque = marker_is_opaque(filled);
    let polygon = |points: Vec<(i32, i32)>| -> Result<(), ExperimentError> {
        if opaque {
            root.draw(&Polygon::new(points.clone(), c.filled()))
                .map_err(plot_err)?;
        }
        let mut closed = points;
        closed.push(closed[0]);
        root.draw(&PathElement::new(closed, outline))
            .map_err(plot_err)?;
        Ok(())
    };
    match marker {
        Marker::Circle => {
            if opaque {
                root.draw(&Circle::new(at, r.round() as i32, c.filled()))
                    .map_err(plot_err)?;
            }
            root.draw(&Circle::new(at, r.round() as i32, outline))
                .map_err(plot_err)?;
        }
        Marker::Square => {
            let s = r * 0.85;
            polygon(vec![pt(-s, -s), pt(s, -s), pt(s, s), pt(-s, s)])?;
        }
        Marker::Triangle => polygon(vec![
            pt(0.0, -r),
            pt(r * 0.95, r * 0.7),
            pt(-r * 0.95, r * 0.7),
        ])?,
        Marker::TriangleDown => polygon(vec![
            pt(0.0, r),
            pt(r * 0.95, -r * 0.7),
            pt(-r * 0.95, -r * 0.7),
        ])?,
        Marker::Diamond => polygon(vec![
            pt(0.0, -r),
            pt(r * 0.8, 0.0),
            pt(0.0, r),
            pt(-r * 0.8, 0.0),
        ])?,
        Marker::Star => {
            let points = (0..10)
                .map(|i| {
                    let a = std::f64::consts::PI * (f64::from(i) / 5.0 - 0.5);
                    let rr = if i % 2 == 0 { r * 1.15 } else { r * 0.5 };
                    pt(rr * a.cos(), rr * a.sin())
                })
                .collect();
            polygon(points)?;
        }
        Marker::Pentagon | Marker::Hexagon => {
            // Regular polygons of the circle's area, near enough: a vertex up (pentagon),
            // flat top and bottom (hexagon).
            let (n, start, rr) = if marker == Marker::Pentagon {
                (5, -0.5, r * 1.08)
            } else {
                (6, 0.0, r * 1.04)
            };
            let points = (0..n)
                .map(|i| {
                    let a = std::f64::consts::PI * (start + 2.0 * f64::from(i) / f64::from(n));
                    pt(rr * a.cos(), rr * a.sin())
                })
                .collect();
            polygon(points)?;
        }
        Marker::TriangleLeft => polygon(vec![
            pt(-r, 0.0),
            pt(r * 0.7, -r * 0.95),
            pt(r * 0.7, r * 0.95),
        ])?,
        Marker::TriangleRight => polygon(vec![
            pt(r, 0.0),
            pt(-r * 0.7, -r * 0.95),
            pt(-r * 0.7, r * 0.95),
        ])?,
        Marker::Bowtie => {
            let (w, h) = (r * 1.05, r * 0.85);
            polygon(vec![pt(-w, -h), pt(0.0, 0.0), pt(-w, h)])?;
            polygon(vec![pt(w, -h), pt(0.0, 0.0), pt(w, h)])?;
        }
        Marker::Asterisk => {
            let bold = c.stroke_width(u(0.9) as u32);
            for i in 0..3 {
                let a = std::f64::consts::PI * (0.5 + f64::from(i) / 3.0);
                let (dx, dy) = (r * 1.05 * a.cos(), r * 1.05 * a.sin());
                root.draw(&PathElement::new(vec![pt(-dx, -dy), pt(dx, dy)], bold))
                    .map_err(plot_err)?;
            }
        }
        Marker::Plus | Marker::Cross => {
            let s = if marker == Marker::Plus { r } else { r * 0.8 };
            let bold = c.stroke_width(u(0.9) as u32);
            let (a, b) = if marker == Marker::Plus {
                ([pt(-s, 0.0), pt(s, 0.0)], [pt(0.0, -s), pt(0.0, s)])
            } else {
                ([pt(-s, -s), pt(s, s)], [pt(-s, s), pt(s, -s)])
            };
            root.draw(&PathElement::new(a.to_vec(), bold))
                .map_err(plot_err)?;
            root.draw(&PathElement::new(b.to_vec(), bold))
                .map_err(plot_err)?;
        }
    }
    Ok(())
}

/// Legend keys packed into rows across `width` points.
fn legend_layout(keys: &[(String, Look)], width: f64) -> Vec<Vec<(String, Look, f64)>> {
    let mut rows: Vec<Vec<(String, Look, f64)>> = Vec::new();
    let mut used = f64::INFINITY;
    for (label, look) in keys {
        let w = 16.0 + text_width(label, MIN_FONT_PT) + 8.0;
        if used + w > width {
            rows.push(Vec::new());
            used = 0.0;
        }
        rows.last_mut()
            .expect("a row")
            .push((label.clone(), *look, w));
        used += w;
    }
    rows
}

fn draw_legend(
    root: &Root<'_>,
    rows: &[Vec<(String, Look, f64)>],
    left: f64,
    top: f64,
) -> Result<(), ExperimentError> {
    let full = root.dim_in_pixel().0 as f64 / UNITS_PER_PT;
    for (i, row) in rows.iter().enumerate() {
        let total: f64 = row.iter().map(|k| k.2).sum();
        let mut x = left + ((full - 2.0 * left) - total).max(0.0) / 2.0;
        let y = top + 5.0 + 10.0 * i as f64;
        for (label, look, w) in row {
            let (a, b) = ((u(x), u(y)), (u(x + 14.0), u(y)));
            draw_line(root, &[a, b], *look)?;
            if let Some(m) = look.marker {
                draw_marker(root, (u(x + 7.0), u(y)), m, look.color, look.filled)?;
            }
            root.draw(&Text::new(
                label.clone(),
                (u(x + 17.0), u(y)),
                TextStyle::from(font(MIN_FONT_PT)).pos(Pos::new(HPos::Left, VPos::Center)),
            ))
            .map_err(plot_err)?;
            x += w;
        }
    }
    Ok(())
}

/// A horizontal colour bar with its label on the left and ticks below, centred.
fn draw_color_bar(
    root: &Root<'_>,
    bar: &ColorBar,
    width: f64,
    top: f64,
) -> Result<(), ExperimentError> {
    let label_w = text_width(&bar.label, MIN_FONT_PT) + 6.0;
    let bar_w = (width * 0.45).min(220.0);
    let left = (width - bar_w - label_w) / 2.0 + label_w;
    let (y0, y1) = (top + 3.0, top + 10.0);
    root.draw(&Text::new(
        bar.label.clone(),
        (u(left - 5.0), u((y0 + y1) / 2.0)),
        TextStyle::from(font(MIN_FONT_PT)).pos(Pos::new(HPos::Right, VPos::Center)),
    ))
    .map_err(plot_err)?;
    let steps = 120;
    for i in 0..steps {
        let t0 = f64::from(i) / f64::from(steps);
        let t1 = f64::from(i + 1) / f64::from(steps);
        let c = rgb(super::style::viridis((t0 + t1) / 2.0));
        root.draw(&Rectangle::new(
            [
                (u(left + bar_w * t0), u(y0)),
                (u(left + bar_w * t1) + 1, u(y1)),
            ],
            c.filled(),
        ))
        .map_err(plot_err)?;
    }
    let outline = RGBColor(90, 90, 90).stroke_width(u(0.4) as u32);
    root.draw(&Rectangle::new(
        [(u(left), u(y0)), (u(left + bar_w), u(y1))],
        outline,
    ))
    .map_err(plot_err)?;
    for v in ticks::linear(bar.min, bar.max, 6) {
        let x = left + bar_w * (v - bar.min) / (bar.max - bar.min);
        root.draw(&PathElement::new(
            vec![(u(x), u(y1)), (u(x), u(y1 + 2.0))],
            outline,
        ))
        .map_err(plot_err)?;
        root.draw(&Text::new(
            tick(v),
            (u(x), u(y1 + 2.5)),
            TextStyle::from(font(MIN_FONT_PT)).pos(Pos::new(HPos::Center, VPos::Top)),
        ))
        .map_err(plot_err)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dashes_cover_the_path_in_the_pattern() {
        let d = dashes(&[(0, 0), (100, 0)], &[10.0, 5.0]);
        assert_eq!(d.len(), 7);
        assert_eq!(d[0], vec![(0, 0), (10, 0)]);
        assert_eq!(d[1], vec![(15, 0), (25, 0)]);
    }
}
