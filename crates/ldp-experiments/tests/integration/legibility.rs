//! The legibility rules a program can check, on the SVG of every figure's quick run:
//! no text under 7 pt at the printed width, no two texts overlapping, no series drawn on
//! another's with nothing saying so, no two legend keys alike, tick labels on every axis
//! in one notation, no floating-point noise in labels,
//! a colour bar where markers are coloured by epsilon; and the PNG and PDF renderings
//! exist. Also: every committed manifest matches its config.

use std::path::Path;

use ldp_experiments::config::Kind;
use ldp_experiments::plot::{
    ALL_CURVES, Axis, Dash, LINE_HIDDEN, Look, MIN_FONT_PT, Marker, Panel, Point, SUBSCRIPT_SHIFT,
    Scale, panel_ticks, render_pdf, render_png, render_svg, viridis,
};
use ldp_experiments::runner::{self, load_configs};

fn root() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The attribute `name` of an SVG tag.
fn attribute<'a>(tag: &'a str, name: &str) -> Option<&'a str> {
    let at = tag.find(&format!(" {name}=\""))? + name.len() + 3;
    Some(&tag[at..at + tag[at..].find('"')?])
}

struct Text {
    size_pt: f64,
    content: String,
    /// Its box (left, top, right, bottom) in canvas units, estimated from the anchor, the
    /// baseline shift and DejaVu Sans' advances; `None` for rotated text.
    bounds: Option<[f64; 4]>,
}

/// The width of `text` in ems of DejaVu Sans, the font the figures are set in (read from
/// the font file, independently of the crate's own measure).
fn advance_ems(text: &str) -> f64 {
    static FACE: std::sync::OnceLock<ttf_parser::Face<'static>> = std::sync::OnceLock::new();
    let face = FACE.get_or_init(|| {
        ttf_parser::Face::parse(include_bytes!("../../fonts/DejaVuSans.ttf"), 0).unwrap()
    });
    let em = f64::from(face.units_per_em());
    text.chars()
        .map(|c| {
            let glyph = face
                .glyph_index(c)
                .unwrap_or_else(|| panic!("{c:?} is not in the font"));
            f64::from(face.glyph_hor_advance(glyph).unwrap()) / em
        })
        .sum()
}

/// The box of a text element: plotters anchors text at (x, y) horizontally by
/// `text-anchor` and vertically by `dy` (0.76em: top, 0.5ex: middle, -0.5ex: bottom).
fn bounds(tag: &str, content: &str) -> Option<[f64; 4]> {
    if tag.contains("transform=") {
        return None;
    }
    let number = |name| attribute(tag, name)?.parse::<f64>().ok();
    let (x, y, size) = (number("x")?, number("y")?, number("font-size")?);
    // DejaVu Sans: each character's advance from the font itself; ascent 0.76 em,
    // descent 0.24.
    let width = advance_ems(content) * size;
    let left = match attribute(tag, "text-anchor") {
        Some("middle") => x - width / 2.0,
        Some("end") => x - width,
        _ => x,
    };
    let top = match attribute(tag, "dy") {
        Some("0.76em") => y,
        Some("0.5ex") => y - 0.5 * size,
        Some("-0.5ex") => y - size,
        _ => y - 0.76 * size,
    };
    Some([left, top, left + width, top + size])
}

/// Every text element with its printed size: font-size times points per canvas unit.
fn texts(svg: &str) -> Vec<Text> {
    let head = &svg[..svg.find('>').unwrap()];
    let width_pt: f64 = attribute(head, "width")
        .unwrap()
        .trim_end_matches("pt")
        .parse()
        .unwrap();
    let view_width: f64 = attribute(head, "viewBox")
        .unwrap()
        .split_whitespace()
        .nth(2)
        .unwrap()
        .parse()
        .unwrap();
    let mut out = Vec::new();
    let mut rest = svg;
    while let Some(at) = rest.find("<text") {
        rest = &rest[at..];
        let tag_end = rest.find('>').unwrap();
        let close = rest.find("</text>").unwrap();
        let tag = &rest[..tag_end];
        let size: f64 = attribute(tag, "font-size").unwrap().parse().unwrap();
        // Subscripts are tspans inside; their text counts with the element's.
        let inner = &rest[tag_end + 1..close];
        let content = inner
            .replace(&format!("<tspan baseline-shift=\"{SUBSCRIPT_SHIFT}\">"), "")
            .replace("</tspan>", "")
            // XML's entities as the characters they print (a note's apostrophe).
            .replace("&apos;", "'")
            .replace("&quot;", "\"")
            .replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&amp;", "&")
            .trim()
            .to_owned();
        out.push(Text {
            size_pt: size * width_pt / view_width,
            bounds: bounds(tag, &content),
            content,
        });
        rest = &rest[close..];
    }
    out
}

/// Every pair of differently labelled series of `panel` drawn, in whole or in part,
/// exactly on one another, `(under, over, how many points)`: a marker at the place of a
/// later series' marker (within a thousandth of the axis, in log space on a log axis:
/// whatever the shapes, one point is seen where there are two), or half a line's length
/// or more on a later series' line (lines that only meet are seen). A reader sees one series there;
/// the figure must say there are two.
fn coinciding(panel: &Panel) -> Vec<(String, String, usize)> {
    let place = |axis: &Axis, v: f64| match axis.scale {
        Scale::Linear => v,
        Scale::Log => v.log10(),
    };
    let finite = |q: &&Point| {
        q.x.is_finite()
            && q.y.is_finite()
            && (q.x > 0.0 || panel.x.scale == Scale::Linear)
            && (q.y > 0.0 || panel.y.scale == Scale::Linear)
    };
    let all = || {
        panel
            .series
            .iter()
            .flat_map(|s| s.points.iter())
            .filter(finite)
    };
    let extent = |axis: &Axis, vs: &mut dyn Iterator<Item = f64>| {
        let (lo, hi) = vs.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        });
        let (lo, hi) = axis
            .range
            .map_or((lo, hi), |(a, b)| (place(axis, a), place(axis, b)));
        (hi - lo).abs().max(1e-300)
    };
    let wx = extent(&panel.x, &mut all().map(|q| place(&panel.x, q.x)));
    let wy = extent(&panel.y, &mut all().map(|q| place(&panel.y, q.y)));
    let at = |q: &Point| (place(&panel.x, q.x) / wx, place(&panel.y, q.y) / wy);
    let near = |a: (f64, f64), b: (f64, f64)| (a.0 - b.0).abs() < 1e-3 && (a.1 - b.1).abs() < 1e-3;
    // On the segment from a to b, to a thousandth.
    let on_segment = |p: (f64, f64), a: (f64, f64), b: (f64, f64)| {
        let (dx, dy) = (b.0 - a.0, b.1 - a.1);
        let l2 = dx * dx + dy * dy;
        let t = if l2 > 0.0 {
            (((p.0 - a.0) * dx + (p.1 - a.1) * dy) / l2).clamp(0.0, 1.0)
        } else {
            0.0
        };
        near(p, (a.0 + t * dx, a.1 + t * dy))
    };
    let mut out = Vec::new();
    for (i, s) in panel.series.iter().enumerate() {
        let mine: Vec<(f64, f64)> = s.points.iter().filter(finite).map(at).collect();
        for t in &panel.series[i + 1..] {
            let subject = |l: &str| l.split(" (").next().unwrap_or(l).trim().to_owned();
            if !s.label.is_empty() && subject(&s.label) == subject(&t.label) {
                // One subject drawn twice: a closed form's line and its measured points, or
                // a protocol's lines for each k (`AUE (k = 25)`).
                continue;
            }
            let theirs: Vec<(f64, f64)> = t.points.iter().filter(finite).map(at).collect();
            let mut hit = vec![false; mine.len()];
            if s.look.marker.is_some() && t.look.marker.is_some() {
                for (h, &p) in hit.iter_mut().zip(&mine) {
                    *h |= theirs.iter().any(|&r| near(p, r));
                }
            }
            if s.look.dash != Dash::None && t.look.dash != Dash::None {
                // Lines that meet are seen; a line with half its length or more on
                // another's is not.
                let on = |p| theirs.windows(2).any(|w| on_segment(p, w[0], w[1]));
                let (mut total, mut under) = (0.0, Vec::new());
                for j in 1..mine.len() {
                    let (a, b) = (mine[j - 1], mine[j]);
                    let length = ((b.0 - a.0).powi(2) + (b.1 - a.1).powi(2)).sqrt();
                    total += length;
                    if on(a) && on(b) && on(((a.0 + b.0) / 2.0, (a.1 + b.1) / 2.0)) {
                        under.push((j, length));
                    }
                }
                let hidden: f64 = under.iter().map(|u| u.1).sum();
                if total > 0.0 && hidden >= LINE_HIDDEN * total {
                    for (j, _) in under {
                        hit[j - 1] = true;
                        hit[j] = true;
                    }
                }
            }
            let n = hit.iter().filter(|&&h| h).count();
            if n > 0 {
                out.push((s.label.clone(), t.label.clone(), n));
            }
        }
    }
    out
}

/// Whether `text` names `label` as a whole (not `norm` inside `norm-sub`).
fn names(text: &str, label: &str) -> bool {
    let word = |c: char| c.is_alphanumeric() || c == '-' || c == '_';
    text.match_indices(label).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + label.len()..].chars().next();
        !before.is_some_and(word) && !after.is_some_and(word)
    })
}

/// What a reader sees of a legend key: colour, line, marker shape and fill (a stroked
/// marker looks the same filled or hollow).
fn seen(look: &Look) -> (ldp_experiments::plot::Rgb, Dash, Option<Marker>, bool) {
    let filled = look.filled || look.marker.is_some_and(Marker::is_stroked);
    (look.color, look.dash, look.marker, filled)
}

/// The problems of one log axis' labels: more than one notation on it (`0.1` beside
/// `1e-2`), or an odd value in exponent form (`3e-7`, not 1, 2 or 5 times a power of
/// ten) where a power of ten within the data is left unlabelled.
fn log_label_problems(values: &[f64], labels: &[String], extent: (f64, f64)) -> Vec<String> {
    let mut out = Vec::new();
    let outside_mantissas = |v: &f64| !(1.0..10.0).contains(v);
    let exponent = values
        .iter()
        .zip(labels)
        .filter(|(v, _)| outside_mantissas(v))
        .filter(|(_, l)| l.contains('e'))
        .count();
    let decimal = values
        .iter()
        .zip(labels)
        .filter(|(v, _)| outside_mantissas(v))
        .filter(|(_, l)| !l.contains('e'))
        .count();
    if exponent > 0 && decimal > 0 {
        out.push(format!("two notations on one axis: {labels:?}"));
    }
    let mantissa = |v: f64| {
        let m = v / 10f64.powf(v.log10().floor());
        (m * 1e6).round() / 1e6
    };
    // Labels a figure asks for (365 days, eps = 8) are written out; an odd one in
    // exponent form is a thinning's makeshift.
    let odd = values
        .iter()
        .zip(labels)
        .any(|(&v, l)| l.contains('e') && ![1.0, 2.0, 5.0].contains(&mantissa(v)));
    if odd {
        let (lo, hi) = extent;
        let mut e = lo.log10().ceil() as i32;
        while 10f64.powi(e) <= hi * (1.0 + 1e-9) {
            let decade = 10f64.powi(e);
            if !values.iter().any(|&v| (v / decade - 1.0).abs() < 1e-9) {
                out.push(format!(
                    "an odd label where a power of ten ({decade:e}) is unlabelled: {labels:?}"
                ));
                break;
            }
            e += 1;
        }
    }
    out
}

fn is_number(s: &str) -> bool {
    s.trim().parse::<f64>().is_ok()
}

#[test]
fn every_figure_is_legible_at_its_printed_width() {
    let configs = load_configs(&root().join("configs/paper")).unwrap();
    assert!(configs.len() >= 15);
    for c in configs {
        let (output, _) = runner::run(&c, true, "test").unwrap();
        let figure = &output.figure;
        let name = &c.experiment.figure;
        let svg = render_svg(figure).unwrap();
        // Printed at the size the config takes from the paper's LaTeX (to a canvas unit).
        let head = &svg[..svg.find('>').unwrap()];
        let printed: f64 = attribute(head, "width")
            .unwrap()
            .trim_end_matches("pt")
            .parse()
            .unwrap();
        let placed = c.experiment.width.points();
        assert!(
            (printed - placed).abs() <= 0.25,
            "{name}: printed {printed} pt wide, placed at {placed} pt"
        );
        let texts = texts(&svg);
        let smallest = texts
            .iter()
            .map(|t| t.size_pt)
            .fold(f64::INFINITY, f64::min);
        assert!(
            smallest >= MIN_FONT_PT - 1e-9,
            "{name}: text of {smallest:.2} pt"
        );
        // Every text lies on the canvas (a last tick label ran past the right edge).
        let view: Vec<f64> = attribute(head, "viewBox")
            .unwrap()
            .split_whitespace()
            .map(|v| v.parse().unwrap())
            .collect();
        for t in &texts {
            if let Some(b) = t.bounds {
                let slack = 0.1 * (b[3] - b[1]);
                assert!(
                    b[0] >= -slack && b[2] <= view[2] + slack,
                    "{name}: `{}` runs off the figure",
                    t.content
                );
            }
        }
        // No two texts overlap (a panel's title and its top tick label did), allowing a
        // tenth of the text's size for the estimate of its width.
        for (i, a) in texts.iter().enumerate() {
            for b in &texts[i + 1..] {
                let (Some(p), Some(q)) = (a.bounds, b.bounds) else {
                    continue;
                };
                let slack = 0.1 * (p[3] - p[1]).min(q[3] - q[1]);
                let overlap = p[0] + slack < q[2]
                    && q[0] + slack < p[2]
                    && p[1] + slack < q[3]
                    && q[1] + slack < p[3];
                assert!(!overlap, "{name}: `{}` overlaps `{}`", a.content, b.content);
            }
        }
        // Every series can be seen, or the figure says where it cannot: two series drawn
        // on one another, in whole or in part, are named together by a note or a legend
        // key (hollow adaptive markers were filled white and covered their classic
        // counterparts; GRR's line lay under another's with nothing saying so).
        let said: Vec<&str> = figure
            .notes
            .iter()
            .map(String::as_str)
            .chain(figure.legend.iter().map(|(l, _)| l.as_str()))
            .collect();
        let subject = |l: &str| l.split(" (").next().unwrap_or(l).trim().to_owned();
        for panel in &figure.panels {
            let pairs = coinciding(panel);
            // A note may say it of the whole panel: every curve of it lies on another.
            let all = {
                let subjects: Vec<String> =
                    panel
                        .series
                        .iter()
                        .map(|s| subject(&s.label))
                        .fold(Vec::new(), |mut v, l| {
                            if !v.contains(&l) {
                                v.push(l);
                            }
                            v
                        });
                let met = |l: &String| {
                    pairs
                        .iter()
                        .any(|(u, o, _)| subject(u) == *l || subject(o) == *l)
                };
                subjects.len() >= 3 && subjects.iter().all(met)
            };
            for (under, over, n) in &pairs {
                let (a, b) = (subject(under), subject(over));
                let told = !a.is_empty()
                    && !b.is_empty()
                    && said.iter().any(|t| names(t, &a) && names(t, &b));
                let of_all = all
                    && said
                        .iter()
                        .any(|t| t.contains(ALL_CURVES) && names(t, &panel.title));
                assert!(
                    told || of_all,
                    "{name}, panel `{}`: `{under}` lies under `{over}` at {n} point(s) and no note or legend key says so",
                    panel.title
                );
            }
        }
        // Every legend key looks different from every other: two protocols with one
        // marker (bits_vs_mse, coloured by the ASR, drew HR and OLH alike) cannot be told
        // apart.
        for (i, (a, la)) in figure.legend.iter().enumerate() {
            for (b, lb) in &figure.legend[i + 1..] {
                assert!(
                    seen(la) != seen(lb),
                    "{name}: legend keys `{a}` and `{b}` look alike: {la:?}"
                );
            }
        }
        // Every axis: at least three labels, spanning its data (a label in the lowest and
        // in the highest third of the data's extent, in log space on a log axis); one
        // style for small numbers on the log axes of a figure (never `1e-4` beside
        // `0.001`); one notation on each log axis (never `0.1` beside `1e-2`) and on
        // every axis of one quantity (never `1000` on one panel, `1e3` on the next);
        // and powers of ten where they fit (never `1e-8, 3e-7, 1e-5` with `1e-7` left out).
        let mut small = Vec::new();
        let mut in_exponent: Vec<(String, bool)> = Vec::new();
        for (panel, axes) in figure.panels.iter().zip(panel_ticks(figure)) {
            for (ticks, axis) in axes.iter().zip([&panel.x, &panel.y]) {
                let place = |v: f64| match axis.scale {
                    Scale::Linear => v,
                    Scale::Log => v.log10(),
                };
                let at = format!("{name}, panel `{}`, axis `{}`", panel.title, axis.label);
                let (values, labels) = (&ticks.values, &ticks.labels);
                assert!(values.len() >= 3, "{at}: labels {labels:?}");
                // A range shared with other panels is the axis' data: judge it whole.
                let (lo, hi) = axis.range.unwrap_or(ticks.extent);
                let (lo, hi) = (place(lo), place(hi));
                let third = (hi - lo) / 3.0;
                let (first, last) = (place(values[0]), place(values[values.len() - 1]));
                assert!(
                    first <= lo + third + 1e-9 && last >= hi - third - 1e-9,
                    "{at}: labels {labels:?} leave a third of the data's extent unlabelled"
                );
                if axis.scale == Scale::Log {
                    for (v, label) in values.iter().zip(labels) {
                        if *v < 0.1 {
                            small.push(label.clone());
                        }
                    }
                    let problems = log_label_problems(values, labels, ticks.extent);
                    assert!(problems.is_empty(), "{at}: {problems:?}");
                    let outside = |(v, _): &(&f64, &String)| !(1.0..10.0).contains(*v);
                    if let Some((_, l)) = values.iter().zip(labels).find(outside) {
                        in_exponent.push((axis.label.clone(), l.contains('e')));
                    }
                }
            }
        }
        for (label, e) in &in_exponent {
            assert!(
                in_exponent.iter().all(|(m, f)| m != label || f == e),
                "{name}: the axes `{label}` in two notations"
            );
        }
        let exponent = small.iter().filter(|l| l.contains('e')).count();
        assert!(
            exponent == 0 || exponent == small.len(),
            "{name}: small log-axis labels in two styles: {small:?}"
        );
        // Every panel: a title, and tick labels on both axes.
        let numbers: Vec<&Text> = texts.iter().filter(|t| is_number(&t.content)).collect();
        assert!(
            numbers.len() >= 4 * figure.panels.len(),
            "{name}: {} tick labels for {} panels",
            numbers.len(),
            figure.panels.len()
        );
        for t in &numbers {
            let v: f64 = t.content.trim().parse().unwrap();
            assert!(
                v == 0.0 || v.abs() >= 1e-12,
                "{name}: floating-point noise in the tick label {}",
                t.content
            );
            assert!(
                t.content.len() <= 6,
                "{name}: long tick label {}",
                t.content
            );
        }
        // Colour-coded figures carry a colour bar (its gradient starts at viridis(0)):
        // epsilon in the trade-off figures, the ASR in the cost figure.
        let coloured = matches!(
            c.experiment.kind,
            Kind::AsrVsMse { .. }
                | Kind::AsrMseEpg { .. }
                | Kind::Empirical { .. }
                | Kind::FrontierVsN { .. }
                | Kind::Costs { .. }
        );
        let bar_label = if matches!(c.experiment.kind, Kind::Costs { .. }) {
            "expected ASR"
        } else {
            "privacy budget ε"
        };
        let dark = viridis(0.0);
        let dark = format!("fill=\"#{:02X}{:02X}{:02X}\"", dark.0, dark.1, dark.2);
        assert_eq!(figure.color_bar.is_some(), coloured, "{name}: colour bar");
        if coloured {
            assert!(
                svg.contains("<rect") && svg.contains(&dark),
                "{name}: no gradient"
            );
            assert!(texts.iter().any(|t| t.content == bar_label), "{name}");
        }
        // Greek letters, not their names, in every label.
        for t in &texts {
            for word in ["epsilon", "omega", "theta"] {
                assert!(!t.content.contains(word), "{name}: `{}`", t.content);
            }
        }
        let png = render_png(&svg, 72.0).unwrap();
        assert_eq!(&png[1..4], b"PNG", "{name}");
        let pdf = render_pdf(&svg).unwrap();
        assert!(pdf.starts_with(b"%PDF"), "{name}");
    }
}

#[test]
fn every_committed_manifest_matches_its_config() {
    let configs = load_configs(&root().join("configs/paper")).unwrap();
    for c in configs {
        let name = &c.experiment.figure;
        let manifest = root().join("results/paper").join(name).join("manifest.ron");
        let text = std::fs::read_to_string(&manifest)
            .unwrap_or_else(|e| panic!("{}: {e}", manifest.display()));
        let hash = format!("{:016x}", xxhash_rust::xxh64::xxh64(c.text.as_bytes(), 0));
        assert!(
            text.contains(&format!("config_hash: \"{hash}\"")),
            "{name}: results/paper is stale (its config changed): run cargo xtask reproduce --figure {name}"
        );
        // Committed results come from committed code: a manifest made from a dirty tree
        // names a commit that does not hold the code that made it.
        assert!(
            text.contains("tree_dirty: false") && !text.contains("-dirty\""),
            "{name}: results/paper was made from a dirty tree: commit the code, then run cargo xtask reproduce --figure {name}"
        );
        for file in ["figure.svg", "figure.png", "figure.pdf", "data.csv"] {
            assert!(
                manifest.with_file_name(file).exists(),
                "{name}: {file} is not committed"
            );
        }
    }
}
