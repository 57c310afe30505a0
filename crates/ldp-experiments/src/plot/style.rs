//! Colours, markers and line styles: one look per protocol and per domain size across all
//! figures, a palette that survives colour blindness and greyscale (Okabe and Ito's), and
//! a perceptually uniform colour map (viridis) for continuous values such as epsilon.

use ldp_core::Protocol;
use ldp_core::longitudinal::LongitudinalProtocol;

/// An sRGB colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rgb(pub u8, pub u8, pub u8);

/// How a line is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dash {
    /// No line (markers only).
    None,
    /// Solid.
    Solid,
    /// Dashes.
    Dashed,
    /// Dash-dot.
    DashDot,
}

/// A marker shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Marker {
    /// Circle.
    Circle,
    /// Square.
    Square,
    /// Triangle pointing up.
    Triangle,
    /// Triangle pointing down.
    TriangleDown,
    /// Diamond.
    Diamond,
    /// Plus sign.
    Plus,
    /// Diagonal cross.
    Cross,
    /// Five-pointed star.
    Star,
    /// Regular pentagon, a vertex up.
    Pentagon,
    /// Regular hexagon, flat top and bottom.
    Hexagon,
    /// Triangle pointing left.
    TriangleLeft,
    /// Triangle pointing right.
    TriangleRight,
    /// Six-spoked asterisk.
    Asterisk,
    /// Two triangles tip to tip, pointing in (a bow tie on its side).
    Bowtie,
}

impl Marker {
    /// Whether the marker is drawn in strokes only (plus, cross, asterisk): filled and
    /// hollow ones look alike but for their size.
    pub fn is_stroked(self) -> bool {
        matches!(self, Marker::Plus | Marker::Cross | Marker::Asterisk)
    }
}

/// The look of a series: colour, line and marker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Look {
    /// Colour of the line and markers.
    pub color: Rgb,
    /// Line style.
    pub dash: Dash,
    /// Marker, if any.
    pub marker: Option<Marker>,
    /// Filled (true) or hollow markers.
    pub filled: bool,
}

impl Look {
    /// A solid line in `color`, no marker.
    pub fn line(color: Rgb) -> Self {
        Look {
            color,
            dash: Dash::Solid,
            marker: None,
            filled: true,
        }
    }

    /// This look with another line style.
    pub fn with_dash(self, dash: Dash) -> Self {
        Look { dash, ..self }
    }

    /// This look with a marker.
    pub fn with_marker(self, marker: Marker) -> Self {
        Look {
            marker: Some(marker),
            ..self
        }
    }

    /// This look without its marker.
    pub fn without_marker(self) -> Self {
        Look {
            marker: None,
            ..self
        }
    }
}

/// Okabe and Ito's colour-blind-safe palette (yellow darkened to olive, to read on white).
pub const OKABE_ITO: [Rgb; 8] = [
    Rgb(0, 0, 0),
    Rgb(230, 159, 0),
    Rgb(86, 180, 233),
    Rgb(0, 158, 115),
    Rgb(153, 140, 0),
    Rgb(0, 114, 178),
    Rgb(213, 94, 0),
    Rgb(204, 121, 167),
];

/// Grey for reference lines and neutral legend keys.
pub const GREY: Rgb = Rgb(110, 110, 110);

/// Red, for the lines a paper's caption calls red (the closed forms beside the measured
/// points of the empirical figure): darker than Okabe-Ito's vermillion, which reads as
/// orange, and told apart by its dashes where colour is not seen.
pub const RED: Rgb = Rgb(200, 16, 16);

/// `p`'s marker alone, grey in the legend: for points whose colour comes from a colour bar.
pub fn protocol_marker(p: Protocol) -> Look {
    Look {
        color: GREY,
        dash: Dash::None,
        ..protocol_look(p)
    }
}

/// The colour and marker of each classic protocol of the paper, as its figures have them
/// (an adaptive protocol takes its classic counterpart's, hollow).
const PAPER_LOOKS: [(Protocol, Rgb, Marker); 8] = [
    (Protocol::Grr, OKABE_ITO[0], Marker::Circle),
    (Protocol::Ss, OKABE_ITO[6], Marker::Square),
    (Protocol::Sue, OKABE_ITO[5], Marker::Triangle),
    (Protocol::Oue, OKABE_ITO[2], Marker::TriangleDown),
    (Protocol::Blh, OKABE_ITO[3], Marker::Plus),
    (Protocol::Olh, OKABE_ITO[1], Marker::Diamond),
    (Protocol::She, OKABE_ITO[7], Marker::Cross),
    (Protocol::The, OKABE_ITO[4], Marker::Star),
];

/// Colours beside Okabe and Ito's for the protocols added since the paper: each far from
/// the palette's eight and from the others (dark and light, red and blue and green), so
/// that no two classic protocols share a colour.
const ADDED_COLORS: [Rgb; 6] = [
    Rgb(136, 34, 85),
    Rgb(231, 41, 138),
    Rgb(140, 81, 10),
    Rgb(102, 166, 30),
    Rgb(51, 34, 136),
    Rgb(27, 94, 32),
];

/// The large-domain oracles and dBitFlip: each a colour of its own and a marker no other protocol has,
/// so that a figure whose colours show a colour bar still tells all eighteen protocols
/// apart by their markers, and a figure's coinciding lines (FLH on OLH, HM on HCMS) by
/// their colours.
const ADDED_LOOKS: [(Protocol, Rgb, Marker); 6] = [
    (Protocol::Hr, ADDED_COLORS[0], Marker::Pentagon),
    (Protocol::Hm, ADDED_COLORS[1], Marker::Hexagon),
    (Protocol::Flh, ADDED_COLORS[2], Marker::TriangleLeft),
    (Protocol::Cms, ADDED_COLORS[3], Marker::TriangleRight),
    (Protocol::Hcms, ADDED_COLORS[4], Marker::Asterisk),
    (Protocol::DBitFlip, ADDED_COLORS[5], Marker::Bowtie),
];

/// The colour and marker of a classic protocol: the paper's table and the large-domain
/// oracles'; a protocol added later takes a marker no listed protocol has if one is
/// left, else a colour and marker that no listed protocol has together (and the style
/// test asks for a marker of its own).
fn classic_look(p: Protocol) -> (Rgb, Marker) {
    let listed = || PAPER_LOOKS.iter().chain(&ADDED_LOOKS);
    if let Some(&(_, color, marker)) = listed().find(|(q, _, _)| *q == p) {
        return (color, marker);
    }
    let later = p.id() as usize - Protocol::PAPER.len();
    let (_, color, _) = PAPER_LOOKS[later % PAPER_LOOKS.len()];
    let untaken = |m: Marker| listed().all(|&(_, _, taken)| taken != m);
    if let Some(marker) = ALL_MARKERS.into_iter().filter(|&m| untaken(m)).nth(later) {
        return (color, marker);
    }
    OKABE_ITO
        .into_iter()
        .flat_map(|c| ALL_MARKERS.map(|m| (c, m)))
        .filter(|&(c, m)| listed().all(|&(_, tc, tm)| (tc, tm) != (c, m)))
        .nth(later)
        .unwrap_or((color, ALL_MARKERS[later % ALL_MARKERS.len()]))
}

/// Every marker shape.
pub const ALL_MARKERS: [Marker; 14] = [
    Marker::Circle,
    Marker::Square,
    Marker::Triangle,
    Marker::TriangleDown,
    Marker::Diamond,
    Marker::Plus,
    Marker::Cross,
    Marker::Star,
    Marker::Pentagon,
    Marker::Hexagon,
    Marker::TriangleLeft,
    Marker::TriangleRight,
    Marker::Asterisk,
    Marker::Bowtie,
];

/// The look of `p` in every figure: its colour and marker (the paper's for its
/// protocols); classic protocols solid with a filled marker, adaptive ones dashed with a
/// hollow marker of their classic counterpart's shape. The protocols added since the
/// paper are dash-dotted, filled, each in a colour and marker of its own.
pub fn protocol_look(p: Protocol) -> Look {
    let (color, marker) = classic_look(p.classic_counterpart());
    if !Protocol::PAPER.contains(&p) && !p.is_adaptive() {
        return Look {
            color,
            dash: Dash::DashDot,
            marker: Some(marker),
            filled: true,
        };
    }
    if p.is_adaptive() {
        Look {
            color,
            dash: Dash::Dashed,
            marker: Some(marker),
            filled: false,
        }
    } else {
        Look {
            color,
            dash: Dash::Solid,
            marker: Some(marker),
            filled: true,
        }
    }
}

/// The look of a memoized protocol: a colour and marker that no other protocol has
/// together (L-GRR is not GRR, which a figure shows beside it), L-GRR, L-SUE and L-OUE in
/// the colour of their first round; L-ADP (which coincides with the chain it picks) dashed
/// and hollow.
pub fn memoized_look(p: LongitudinalProtocol) -> Look {
    use LongitudinalProtocol as L;
    let (color, marker) = match p {
        L::LGrr => (OKABE_ITO[0], Marker::Square),
        L::LSue => (OKABE_ITO[5], Marker::Circle),
        L::LOue => (OKABE_ITO[2], Marker::Cross),
        L::LOsue => (OKABE_ITO[3], Marker::Diamond),
        L::LSoue => (OKABE_ITO[1], Marker::Square),
        L::LOlh => (OKABE_ITO[1], Marker::Pentagon),
        L::LBlh => (OKABE_ITO[4], Marker::Pentagon),
        L::LAdp => (OKABE_ITO[7], Marker::Star),
    };
    let adaptive = p == L::LAdp;
    Look {
        color,
        dash: if adaptive { Dash::Dashed } else { Dash::Solid },
        marker: Some(marker),
        filled: !adaptive,
    }
}

/// Marker shapes for a few categories (domain sizes in the scatter figures).
pub const MARKERS: [Marker; 8] = [
    Marker::Circle,
    Marker::Diamond,
    Marker::Square,
    Marker::Star,
    Marker::Triangle,
    Marker::TriangleDown,
    Marker::Plus,
    Marker::Cross,
];

/// The look of the `i`-th of `n` ordered categories (domain sizes): a viridis colour in
/// order, so that neighbouring k look alike and the order reads in greyscale, and a
/// marker that cycles.
pub fn ordered_look(i: usize, n: usize) -> Look {
    let t = if n > 1 {
        i as f64 / (n - 1) as f64
    } else {
        0.0
    };
    Look {
        color: viridis(0.92 * t),
        dash: Dash::Solid,
        marker: Some(MARKERS[i % MARKERS.len()]),
        filled: true,
    }
}

/// Viridis at `t` in [0, 1] (dark purple to yellow), interpolated between nine samples.
pub fn viridis(t: f64) -> Rgb {
    const STOPS: [(f64, f64, f64); 9] = [
        (68.0, 1.0, 84.0),
        (71.0, 44.0, 122.0),
        (59.0, 81.0, 139.0),
        (44.0, 113.0, 142.0),
        (33.0, 144.0, 141.0),
        (39.0, 173.0, 129.0),
        (92.0, 200.0, 99.0),
        (170.0, 220.0, 50.0),
        (253.0, 231.0, 37.0),
    ];
    let t = if t.is_finite() {
        t.clamp(0.0, 1.0)
    } else {
        0.0
    };
    let x = t * (STOPS.len() - 1) as f64;
    let i = (x.floor() as usize).min(STOPS.len() - 2);
    let f = x - i as f64;
    let (a, b) = (STOPS[i], STOPS[i + 1]);
    let mix = |u: f64, v: f64| (u + (v - u) * f).round() as u8;
    Rgb(mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Relative luminance, for the greyscale check.
    fn luminance(c: Rgb) -> f64 {
        0.2126 * f64::from(c.0) + 0.7152 * f64::from(c.1) + 0.0722 * f64::from(c.2)
    }

    /// What a reader sees of a marker: its shape, and whether it is filled (strokes look
    /// alike filled or hollow).
    fn shape(look: &Look) -> (Option<Marker>, bool) {
        let filled = look.filled || look.marker.is_some_and(Marker::is_stroked);
        (look.marker, filled)
    }

    #[test]
    fn viridis_reads_in_greyscale() {
        let l: Vec<f64> = (0..=20)
            .map(|i| luminance(viridis(f64::from(i) / 20.0)))
            .collect();
        assert!(l.windows(2).all(|w| w[1] > w[0]), "{l:?}");
    }

    #[test]
    fn every_protocol_looks_different() {
        // The memoized protocols too: one figure shows GRR beside L-GRR.
        let looks: Vec<(String, Look)> = Protocol::ALL
            .iter()
            .map(|&p| (p.name().to_owned(), protocol_look(p)))
            .chain(
                LongitudinalProtocol::ALL
                    .iter()
                    .map(|&p| (p.name().to_owned(), memoized_look(p))),
            )
            .collect();
        for (i, (a, la)) in looks.iter().enumerate() {
            for (b, lb) in &looks[i + 1..] {
                // The same colour and marker, both filled or both hollow, read as one
                // protocol whatever the line (an adaptive protocol is its classic
                // counterpart's marker, hollow).
                let same = la.color == lb.color && shape(la) == shape(lb);
                assert!(!same, "{a} and {b} look alike: {la:?}");
            }
        }
    }

    #[test]
    fn every_protocol_has_a_marker_of_its_own_where_colour_shows_a_colour_bar() {
        // bits_vs_mse draws every protocol in one panel, coloured by the ASR: the marker
        // is all that tells them apart.
        let all = Protocol::ALL;
        for (i, &a) in all.iter().enumerate() {
            for &b in &all[i + 1..] {
                let (la, lb) = (protocol_marker(a), protocol_marker(b));
                assert!(
                    shape(&la) != shape(&lb),
                    "{} and {} have one marker: {la:?}",
                    a.label(),
                    b.label()
                );
            }
        }
    }

    #[test]
    fn every_classic_protocol_has_a_colour_and_line_of_its_own() {
        // large_domain draws the closed forms as lines without markers: colour and dash
        // are all that tell them apart; an adaptive protocol shares only its classic
        // counterpart's colour, dashed.
        for (i, &a) in Protocol::ALL.iter().enumerate() {
            for &b in &Protocol::ALL[i + 1..] {
                let (la, lb) = (protocol_look(a), protocol_look(b));
                assert!(
                    (la.color, la.dash) != (lb.color, lb.dash),
                    "{} and {} draw one line: {la:?}",
                    a.label(),
                    b.label()
                );
                let pair = a.classic_counterpart() == b.classic_counterpart();
                assert_eq!(
                    la.color == lb.color,
                    pair,
                    "{} and {}: {la:?}, {lb:?}",
                    a.label(),
                    b.label()
                );
            }
        }
    }
}
