//! Tick positions and labels: at least two labels per axis, ticks inside each decade on
//! short log axes, and no floating-point noise.

/// A tick label with at most 3 significant digits: `0.25`, `1e-6`, `2.5e4`. Values within
/// 1e-12 of the axis span from zero print as `0` (never `-1.73e-18`).
pub fn tick(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return if v == 0.0 { "0".into() } else { format!("{v}") };
    }
    if (1e-3..1e4).contains(&v.abs()) {
        decimal(v)
    } else {
        scientific(v)
    }
}

/// `v` as `0.0015`: three significant digits, no trailing zeros.
fn decimal(v: f64) -> String {
    let digits = (2 - v.abs().log10().floor() as i32).max(0) as usize;
    let s = format!("{v:.digits$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_owned()
    } else {
        s
    }
}

/// The labels of a linear axis' `ticks`, in one style: decimals where every label is six
/// characters at most (`0.0005, 0.001, 0.0015`) and `exponent` is not asked for, exponent
/// form for all otherwise.
pub(super) fn linear_ticks(ticks: &[f64], exponent: bool) -> Vec<String> {
    let decimals: Vec<String> = ticks
        .iter()
        .map(|&v| if v == 0.0 { "0".into() } else { decimal(v) })
        .collect();
    let short = ticks.iter().all(|v| v.abs() < 1e4) && decimals.iter().all(|l| l.len() <= 6);
    if short && !exponent {
        decimals
    } else {
        ticks
            .iter()
            .map(|&v| if v == 0.0 { "0".into() } else { scientific(v) })
            .collect()
    }
}

/// `v` as `2.5e-3`: at most three significant digits, no trailing zeros.
fn scientific(v: f64) -> String {
    let s = format!("{v:.2e}");
    let (mantissa, exp) = s.split_once('e').expect("scientific format");
    let mantissa = mantissa.trim_end_matches('0').trim_end_matches('.');
    format!("{mantissa}e{exp}")
}

/// A log axis' label in a figure whose labels below 0.1 are all in exponent form (set
/// where some label of the figure must be, below 0.001), so that `1e-4` and `0.001`
/// never share a figure; [`tick`] otherwise.
pub(super) fn log_tick(v: f64, small_in_exponent: bool) -> String {
    if small_in_exponent && v > 0.0 && v < 0.1 {
        scientific(v)
    } else {
        tick(v)
    }
}

/// A log axis' label where the whole axis is in exponent form: `1e-3`, `1e4`; values
/// from 1 to 10, the mantissas themselves, as they are (`1`, `2`, `5`).
pub(super) fn exponent_tick(v: f64) -> String {
    if (1.0..10.0).contains(&v) {
        decimal(v)
    } else {
        scientific(v)
    }
}

/// Whether `v` is a power of ten (to rounding).
pub(super) fn is_power_of_ten(v: f64) -> bool {
    v > 0.0 && (v.log10() - v.log10().round()).abs() < 1e-9
}

/// Whether a log axis with these ticks is written in exponent form: where one of them
/// would be (below 0.001 or from 10^4 up), so that `0.1` never stands beside `1e-2`.
pub(super) fn needs_exponent(ticks: &[f64]) -> bool {
    let (lo, hi) = (1e-3 * (1.0 - 1e-9), 1e4 * (1.0 - 1e-9));
    ticks.iter().any(|&v| v > 0.0 && (v < lo || v >= hi))
}

/// Tick positions of a linear axis over `lo..hi`: about `want` round values (steps of 1, 2,
/// 2.5 or 5 times a power of ten), never fewer than two, snapped so that zero is exactly 0.
pub(super) fn linear(lo: f64, hi: f64, want: usize) -> Vec<f64> {
    let span = hi - lo;
    if !(span.is_finite() && span > 0.0) {
        return vec![lo, hi];
    }
    let raw = span / want.max(1) as f64;
    let magnitude = 10f64.powf(raw.log10().floor());
    let steps: Vec<f64> = [0.5, 1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * magnitude)
        .collect();
    let at = |step: f64| -> Vec<f64> {
        let first = (lo / step).ceil() as i64;
        let last = (hi / step).floor() as i64;
        (first..=last)
            .map(|i| {
                let v = i as f64 * step;
                // Multiples of the step, rounded to its precision: no 0.30000000000000004.
                let digits = (-step.log10().floor()).max(0.0) as i32 + 2;
                let scale = 10f64.powi(digits);
                (v * scale).round() / scale
            })
            .collect()
    };
    // The coarsest step with at most about `want` ticks, finer where that leaves fewer
    // than three (an axis from 0.02 to 0.52 has 0.2 and 0.4 at steps of 0.2).
    let coarsest = steps
        .iter()
        .position(|s| span / s <= want as f64 + 0.5)
        .unwrap_or(steps.len() - 1);
    let ticks = (0..=coarsest)
        .rev()
        .map(|i| at(steps[i]))
        .find(|t| t.len() >= 3)
        .unwrap_or_else(|| at(steps[coarsest]));
    if ticks.len() >= 2 {
        ticks
    } else {
        vec![lo, hi]
    }
}

/// Tick positions of a log axis over `lo..hi` (both > 0): the powers of ten; 1, 2 and 5
/// times them when the axis spans fewer than three decades; every integer multiple when it
/// spans less than one; always at least two.
pub(super) fn log(lo: f64, hi: f64) -> Vec<f64> {
    if !(lo > 0.0 && hi > lo) {
        return vec![lo, hi];
    }
    let decades = (hi / lo).log10();
    let multiples: &[f64] = if decades < 1.0 {
        &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0]
    } else if decades < 3.0 {
        &[1.0, 2.0, 5.0]
    } else {
        &[1.0]
    };
    let mut ticks = Vec::new();
    let first = lo.log10().floor() as i32;
    let last = hi.log10().ceil() as i32;
    // Every other power of ten on very long axes.
    let every = if decades > 8.0 { 2 } else { 1 };
    for e in first..=last {
        if multiples.len() == 1 && e.rem_euclid(every) != 0 {
            continue;
        }
        for m in multiples {
            let v = m * 10f64.powi(e);
            if v >= lo * (1.0 - 1e-12) && v <= hi * (1.0 + 1e-12) {
                ticks.push(v);
            }
        }
    }
    if ticks.len() >= 3 {
        ticks
    } else {
        // Too short for multiples of powers of ten (1 to 1.75: only 1): round values, as
        // on a linear axis.
        let round = linear(lo, hi, 4);
        if round.len() >= 3 && round[0] > 0.0 {
            round
        } else if ticks.len() >= 2 {
            ticks
        } else {
            vec![round3(lo), round3(hi)]
        }
    }
}

/// `v` to one significant digit.
fn round1(v: f64) -> f64 {
    if v == 0.0 {
        return 0.0;
    }
    let magnitude = 10f64.powf(v.abs().log10().floor());
    (v / magnitude).round() * magnitude
}

/// `v` to three significant digits.
fn round3(v: f64) -> f64 {
    let magnitude = 10f64.powf(v.abs().log10().floor() - 2.0);
    (v / magnitude).round() * magnitude
}

/// `ticks` thinned so that their labels, `size(label)` long along an axis of `length`
/// (positions from 0 to `length`, same unit), keep `gap` apart: preferred ticks (powers of
/// ten on log axes, then 1-2-5, then the rest; every tick of a linear axis alike) are
/// kept first. The labels then span the axis: where none lies in its first or last third,
/// the candidate nearest that end takes the place of those it would crowd; and where they
/// fit, at least three stay (at least two always).
pub(super) fn thin(
    ticks: Vec<f64>,
    log: bool,
    position: impl Fn(f64) -> f64,
    size: impl Fn(f64) -> f64,
    gap: f64,
    length: f64,
) -> Vec<f64> {
    let rank = |v: f64| -> u8 {
        if !log {
            return 0;
        }
        let m = v / 10f64.powf(v.log10().floor());
        let m = (m * 1e6).round() / 1e6;
        if m == 1.0 {
            0
        } else if m == 2.0 || m == 5.0 {
            1
        } else {
            2
        }
    };
    let mut order: Vec<f64> = ticks.clone();
    // Stable: within a rank, in axis order (for linear axes every other tick goes first).
    order.sort_by_key(|&v| rank(v));
    if !log {
        let (even, odd): (Vec<_>, Vec<_>) = ticks.iter().enumerate().partition(|(i, _)| i % 2 == 0);
        order = even.into_iter().chain(odd).map(|(_, &v)| v).collect();
    }
    let apart =
        |v: f64, w: f64| (position(v) - position(w)).abs() >= (size(v) + size(w)) / 2.0 + gap;
    let mut kept: Vec<f64> = Vec::new();
    for &v in &order {
        if kept.iter().all(|&w| apart(v, w)) {
            kept.push(v);
        }
    }
    if let (Some(&low), Some(&high)) = (ticks.first(), ticks.last()) {
        // The ends of the axis at fractions 0 and 1: a label within a third of each.
        for (end, at) in [(low, 0.0), (high, 1.0)] {
            if !kept
                .iter()
                .any(|&w| (position(w) / length - at).abs() <= 1.0 / 3.0)
            {
                kept.retain(|&w| apart(w, end));
                kept.push(end);
            }
        }
    }
    for &v in &order {
        if kept.len() >= 3 {
            break;
        }
        if !kept.contains(&v) && kept.iter().all(|&w| apart(v, w)) {
            kept.push(v);
        }
    }
    if kept.len() == 2 {
        // No candidate fits between two labels (1e-6 and 1e-5 with no room for 2e-6 or
        // 5e-6): the round value halfway, in log space on a log axis (3e-6), if it fits.
        let (a, b) = (kept[0].min(kept[1]), kept[0].max(kept[1]));
        let mid = round1(if log { (a * b).sqrt() } else { (a + b) / 2.0 });
        if a < mid && mid < b && kept.iter().all(|&w| apart(mid, w)) {
            kept.push(mid);
        }
    }
    if kept.len() < 2 {
        let (first, last) = (ticks[0], ticks[ticks.len() - 1]);
        kept = vec![first, last];
    }
    kept.sort_by(f64::total_cmp);
    kept
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plot::Scale;

    #[test]
    fn labels_are_short_and_free_of_noise() {
        assert_eq!(tick(0.25), "0.25");
        assert_eq!(tick(1e-6), "1e-6");
        assert_eq!(tick(25_000.0), "2.5e4");
        assert_eq!(tick(13.0), "13");
        assert_eq!(tick(0.1 + 0.2), "0.3");
        assert_eq!(linear(-0.2, 1.0, 5), vec![0.0, 0.25, 0.5, 0.75, 1.0]);
        assert!(linear(0.0, 1.0, 5).iter().all(|v| tick(*v).len() <= 4));
    }

    #[test]
    fn crowded_labels_are_thinned_keeping_powers_of_ten() {
        let ticks = log(0.5, 300.0);
        let length = 30.0 * (300f64 / 0.5).log10();
        let kept = thin(
            ticks,
            true,
            |v| (v / 0.5).log10() * 30.0,
            |_| 12.0,
            2.0,
            length,
        );
        assert!(kept.contains(&1.0) && kept.contains(&10.0) && kept.contains(&100.0));
        assert!(
            !kept.contains(&20.0) || !kept.contains(&10.0) || 30.0 * (20f64.log10() - 1.0) >= 14.0
        );
    }

    #[test]
    fn log_labels_are_powers_of_ten_where_they_fit() {
        // The empirical figure's GRR panel: MSE from 1.85e-9 to 5.66e-5 on 88 pt, labels
        // 16 pt wide. Its padded range starts a tenth of a decade short of 1e-9: the
        // axis takes 1e-9 in, and labels every other power of ten (not 1e-8, 3e-7, 1e-5).
        let (lo, hi) = super::super::fitted_range([1.85e-9, 5.66e-5].into_iter(), Scale::Log);
        assert_eq!(lo, 1e-9);
        let length = 88.0;
        let at = |v: f64| (v / lo).log10() / (hi / lo).log10() * length;
        let kept = thin(log(lo, hi), true, at, |_| 15.7, 3.0, length);
        assert_eq!(kept, vec![1e-9, 1e-7, 1e-5]);
        assert!(kept.iter().all(|&v| is_power_of_ten(v)), "{kept:?}");
    }

    #[test]
    fn a_log_axis_is_in_one_notation() {
        assert!(needs_exponent(&[1e-4, 1e-3, 1e-2, 0.1]));
        assert!(needs_exponent(&[10.0, 100.0, 1000.0, 1e4]));
        assert!(!needs_exponent(&[1e-3, 0.01, 0.1, 1.0, 1000.0]));
        let labels: Vec<String> = [0.01, 0.1, 1.0, 10.0]
            .iter()
            .map(|&v| exponent_tick(v))
            .collect();
        assert_eq!(labels, ["1e-2", "1e-1", "1", "1e1"]);
    }

    #[test]
    fn every_axis_has_two_ticks_and_short_log_axes_ticks_inside_the_decade() {
        assert_eq!(log(2.0, 9.0), vec![2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0]);
        assert_eq!(log(0.5, 30.0), vec![0.5, 1.0, 2.0, 5.0, 10.0, 20.0]);
        assert_eq!(log(1.0, 1e4), vec![1.0, 10.0, 100.0, 1000.0, 1e4]);
        assert!(log(1.01, 1.02).len() >= 2);
        assert!(linear(3.0, 3.0000001, 5).len() >= 2);
    }
}
