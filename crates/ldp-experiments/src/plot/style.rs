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

/// The large-domain oracles, each in a paper protocol's colour with a marker that no
/// protocol of similar MSE has, so that a figure's coinciding points stay apart: FLH
/// estimates as OLH does (diamond), whose variance is OUE's (triangle down), so FLH is a
/// square.
const ADDED_LOOKS: [(Protocol, Rgb, Marker); 5] = [
    (Protocol::Hr, OKABE_ITO[0], Marker::Diamond),
    (Protocol::Hm, OKABE_ITO[6], Marker::Star),
    (Protocol::Flh, OKABE_ITO[5], Marker::Square),
    (Protocol::Cms, OKABE_ITO[2], Marker::Plus),
    (Protocol::Hcms, OKABE_ITO[3], Marker::Cross),
];

/// The colour and marker of a classic protocol: the paper's table and the large-domain
/// oracles'; a protocol added later takes the palette's colours in turn, each with a
/// marker no paper protocol of that colour has (so that every protocol looks different
/// from every other).
fn classic_look(p: Protocol) -> (Rgb, Marker) {
    let listed = PAPER_LOOKS.iter().chain(&ADDED_LOOKS);
    if let Some(&(_, color, marker)) = listed.into_iter().find(|(q, _, _)| *q == p) {
        return (color, marker);
    }
    let later = p.id() as usize - Protocol::PAPER.len();
    let (_, color, taken) = PAPER_LOOKS[later % PAPER_LOOKS.len()];
    let at = MARKERS
        .iter()
        .position(|&m| m == taken)
        .expect("a listed marker");
    (
        color,
        MARKERS[(at + 1 + later / PAPER_LOOKS.len()) % MARKERS.len()],
    )
}

/// The look of `p` in every figure: its colour and marker (the paper's for its
/// protocols); classic protocols solid with a filled marker, adaptive ones dashed with a
/// hollow marker of their classic counterpart's shape. The protocols added since the
/// paper share its colours, so their lines are dash-dotted.
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

    #[test]
    fn viridis_reads_in_greyscale_and_every_protocol_looks_different() {
        let l: Vec<f64> = (0..=20)
            .map(|i| luminance(viridis(f64::from(i) / 20.0)))
            .collect();
        assert!(l.windows(2).all(|w| w[1] > w[0]), "{l:?}");
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
                let same = la.color == lb.color && la.marker == lb.marker && la.filled == lb.filled;
                assert!(!same, "{a} and {b} look alike: {la:?}");
            }
        }
    }
}
