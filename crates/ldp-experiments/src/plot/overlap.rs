//! Series drawn exactly over one another: a marker on another's marker, a stretch of line
//! on another's line. A reader sees one where there are two, so a figure that has such
//! series says so in a note; these functions find them for the note.

use super::{Axis, Panel, Point, Scale};

/// Where one series lies under a later one in a panel: the two labels (under, over) and
/// the points of the lower one that the upper one covers.
#[derive(Debug, Clone, PartialEq)]
pub struct Coincidence {
    /// The label of the series drawn first (under).
    pub under: String,
    /// The label of the series drawn over it.
    pub over: String,
    /// The points of `under` on `over`'s markers or line.
    pub points: Vec<Point>,
    /// Whether every drawn point of `under` is covered.
    pub whole: bool,
}

/// How near two places must be to coincide, as a share of the panel's extent on each
/// axis (in log space on a log axis): a thousandth, exact to the drawing's resolution.
pub const COINCIDENT: f64 = 1e-3;

/// What a label names: the part before any parenthesis (`AUE` of `AUE (k = 25)`).
fn subject(label: &str) -> &str {
    label.split(" (").next().unwrap_or(label).trim()
}

/// The share of a line's length (in the panel's units, each axis' extent 1) that must lie
/// on another's for the line to count as hidden.
pub const LINE_HIDDEN: f64 = 0.5;

/// Where `v` lies on `axis` (log10 on a log axis).
fn place(axis: &Axis, v: f64) -> f64 {
    match axis.scale {
        Scale::Linear => v,
        Scale::Log => v.log10(),
    }
}

fn drawn(panel: &Panel, q: &Point) -> bool {
    q.x.is_finite()
        && q.y.is_finite()
        && (q.x > 0.0 || panel.x.scale == Scale::Linear)
        && (q.y > 0.0 || panel.y.scale == Scale::Linear)
}

/// Distance from `p` to the segment `a`-`b`.
fn to_segment(p: (f64, f64), a: (f64, f64), b: (f64, f64)) -> f64 {
    let (dx, dy) = (b.0 - a.0, b.1 - a.1);
    let length2 = dx * dx + dy * dy;
    let t = if length2 > 0.0 {
        (((p.0 - a.0) * dx + (p.1 - a.1) * dy) / length2).clamp(0.0, 1.0)
    } else {
        0.0
    };
    ((p.0 - a.0 - t * dx).powi(2) + (p.1 - a.1 - t * dy).powi(2)).sqrt()
}

/// Every pair of differently labelled series of `panel` of which the earlier lies, in
/// whole or in part, exactly under the later: one of its markers at the place of one of
/// the later one's markers (whatever the shapes: one point is seen where two are), or
/// half its line's length or more on the later one's line (a segment on it where both
/// ends and its middle are). Series of one
/// subject (the same label before any parenthesis: a closed form's line and its measured
/// points, a protocol's lines for each k, `AUE (k = 25)`) are not compared, nor are
/// unlabelled ones.
pub fn coincidences(panel: &Panel) -> Vec<Coincidence> {
    let all: Vec<(f64, f64)> = panel
        .series
        .iter()
        .flat_map(|s| s.points.iter())
        .filter(|q| drawn(panel, q))
        .map(|q| (place(&panel.x, q.x), place(&panel.y, q.y)))
        .collect();
    let extent = |axis: &Axis, vs: &mut dyn Iterator<Item = f64>| {
        let (lo, hi) = match axis.range {
            Some((a, b)) => (place(axis, a), place(axis, b)),
            None => vs.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
                (lo.min(v), hi.max(v))
            }),
        };
        (hi - lo).abs().max(1e-300)
    };
    let wx = extent(&panel.x, &mut all.iter().map(|p| p.0));
    let wy = extent(&panel.y, &mut all.iter().map(|p| p.1));
    let at = |q: &Point| (place(&panel.x, q.x) / wx, place(&panel.y, q.y) / wy);
    let mut out = Vec::new();
    for (i, s) in panel.series.iter().enumerate() {
        if s.label.is_empty() {
            continue;
        }
        let mine: Vec<&Point> = s.points.iter().filter(|q| drawn(panel, q)).collect();
        for t in &panel.series[i + 1..] {
            if t.label.is_empty() || subject(&t.label) == subject(&s.label) {
                continue;
            }
            let theirs: Vec<(f64, f64)> = t
                .points
                .iter()
                .filter(|q| drawn(panel, q))
                .map(at)
                .collect();
            let mut covered = vec![false; mine.len()];
            if s.look.marker.is_some() && t.look.marker.is_some() {
                for (c, q) in covered.iter_mut().zip(&mine) {
                    let (x, y) = at(q);
                    *c |= theirs
                        .iter()
                        .any(|r| (r.0 - x).abs() < COINCIDENT && (r.1 - y).abs() < COINCIDENT);
                }
            }
            let lines = s.look.dash != super::Dash::None && t.look.dash != super::Dash::None;
            if lines && theirs.len() >= 2 {
                let on = |p: (f64, f64)| {
                    theirs
                        .windows(2)
                        .any(|w| to_segment(p, w[0], w[1]) < COINCIDENT)
                };
                // Lines that meet (at a common start, or a limit they all reach) are
                // still seen; a line is hidden where half its length or more lies on
                // another's.
                let (mut total, mut hidden) = (0.0, 0.0);
                let mut on_segments = Vec::new();
                for j in 0..mine.len().saturating_sub(1) {
                    let (a, b) = (at(mine[j]), at(mine[j + 1]));
                    let length = ((b.0 - a.0).powi(2) + (b.1 - a.1).powi(2)).sqrt();
                    total += length;
                    let middle = ((a.0 + b.0) / 2.0, (a.1 + b.1) / 2.0);
                    if on(a) && on(b) && on(middle) {
                        hidden += length;
                        on_segments.push(j);
                    }
                }
                if total > 0.0 && hidden >= LINE_HIDDEN * total {
                    for j in on_segments {
                        covered[j] = true;
                        covered[j + 1] = true;
                    }
                }
            }
            if covered.iter().any(|&c| c) {
                out.push(Coincidence {
                    under: s.label.clone(),
                    over: t.label.clone(),
                    points: mine
                        .iter()
                        .zip(&covered)
                        .filter(|(_, c)| **c)
                        .map(|(q, _)| **q)
                        .collect(),
                    whole: covered.iter().all(|&c| c),
                });
            }
        }
    }
    out
}

/// The groups of series of `panel` drawn on one another: series that coincide with one
/// another, directly or through a third, in the order met.
fn groups(panel: &Panel) -> Vec<Vec<String>> {
    let mut here: Vec<Vec<String>> = Vec::new();
    for c in coincidences(panel) {
        let find =
            |here: &[Vec<String>], l: &str| here.iter().position(|m| m.iter().any(|x| x == l));
        let at = match (find(&here, &c.under), find(&here, &c.over)) {
            (Some(a), Some(b)) if a != b => {
                let merged = here.remove(a.max(b));
                here[a.min(b)].extend(merged);
                a.min(b)
            }
            (Some(a), _) | (None, Some(a)) => a,
            (None, None) => {
                here.push(Vec::new());
                here.len() - 1
            }
        };
        for l in [&c.under, &c.over] {
            if !here[at].contains(l) {
                here[at].push(l.clone());
            }
        }
    }
    here
}

/// What a note says of a group that holds every curve of its panel (three or more),
/// after which it names the panels: the test of legibility reads it so.
pub const ALL_CURVES: &str = "every curve somewhere";

/// A group of labels as a note writes it: `SUE = OUE = AUE (k = 2500, k = 5000)`, the
/// series of one subject once with their parentheticals; [`ALL_CURVES`] for a group of
/// every subject of the panel.
fn group_text(group: &[String], subjects: &[&str]) -> String {
    let mut named: Vec<(&str, Vec<&str>)> = Vec::new();
    for label in group {
        let what = subject(label);
        let detail = label[what.len()..]
            .trim()
            .trim_start_matches('(')
            .trim_end_matches(')');
        match named.iter_mut().find(|(s, _)| *s == what) {
            Some((_, details)) => details.push(detail),
            None => named.push((what, vec![detail])),
        }
    }
    if named.len() >= 3 && subjects.iter().all(|s| named.iter().any(|(n, _)| n == s)) {
        return ALL_CURVES.to_owned();
    }
    named
        .iter()
        .map(|(what, details)| {
            let details: Vec<&str> = details.iter().copied().filter(|d| !d.is_empty()).collect();
            if details.is_empty() {
                (*what).to_owned()
            } else {
                format!("{what} ({})", details.join(", "))
            }
        })
        .collect::<Vec<_>>()
        .join(" = ")
}

/// `a, b and c`.
fn list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// A sentence naming the series of `panels` drawn on one another, each group of them
/// once with the panels where it occurs (their titles, or their number past two):
/// `"{lead} FLH = OLH (MSE, ε = 1; MSE, ε = 4); HM = HCMS (MSE, ε = 4)."`. `None` where
/// nothing coincides.
pub fn coincidence_note(panels: &[Panel], lead: &str) -> Option<String> {
    let mut said: Vec<(String, Vec<String>)> = Vec::new();
    for panel in panels {
        let subjects: Vec<&str> =
            panel
                .series
                .iter()
                .filter(|s| !s.label.is_empty())
                .fold(Vec::new(), |mut all, s| {
                    if !all.contains(&subject(&s.label)) {
                        all.push(subject(&s.label));
                    }
                    all
                });
        for group in groups(panel) {
            let text = group_text(&group, &subjects);
            match said.iter_mut().find(|(t, _)| *t == text) {
                Some((_, titles)) => titles.push(panel.title.clone()),
                None => said.push((text, vec![panel.title.clone()])),
            }
        }
    }
    if said.is_empty() {
        return None;
    }
    let parts: Vec<String> = said
        .iter()
        .map(|(text, titles)| {
            if text == ALL_CURVES {
                format!("{text} ({})", titles.join("; "))
            } else if titles.len() == panels.len() && panels.len() > 1 {
                format!("{text} (every panel)")
            } else if titles.len() > 2 {
                format!("{text} ({} panels)", titles.len())
            } else {
                format!("{text} ({})", titles.join("; "))
            }
        })
        .collect();
    Some(format!("{lead} {}.", parts.join("; ")))
}

/// A sentence naming, over the whole figure, the series drawn on one another somewhere,
/// for figures where that is the rule rather than the exception (strategies that mostly
/// agree): `"{lead} a, b and c (in 9 of 12 panels)."`. `None` where nothing coincides.
pub fn coincidence_summary(panels: &[Panel], lead: &str) -> Option<String> {
    let mut members: Vec<String> = Vec::new();
    let mut count = 0;
    for panel in panels {
        let here = groups(panel);
        if !here.is_empty() {
            count += 1;
        }
        for l in here.into_iter().flatten() {
            if !members.contains(&l) {
                members.push(l);
            }
        }
    }
    (count > 0).then(|| {
        format!(
            "{lead} {} (in {count} of {} panels).",
            list(&members),
            panels.len()
        )
    })
}
