//! Apple's count-mean sketches (`ldp_core::families::sketch`): CMS and HCMS, h rows of m
//! columns. MSE (the ideal hash's variance plus the exact bias of the public hashes), the
//! **exact** expected ASR from the public hashes, EPG and costs, side by side.
//!
//! Notation: `rho_ux` is the share of rows under which items u and x share a column; for
//! an ideal hash `E[rho] = 1/m` and `E[rho^2] = 1/m^2 + (m - 1) / (m^2 h)`. The factor
//! `m / (m - 1)` is the published estimator's.

use ldp_core::families::local_hash::collision_bias;
use ldp_core::families::sketch::{self, CountMeanSketch, HadamardCountMeanSketch, column};
use ldp_core::{DomainSize, Epsilon};

use crate::asr::LhAsr;
use crate::cost::{Encoding, index_bits};
use crate::family::ClosedForms;

/// `E[rho^2]` for an ideal hash: `1/m^2 + (m - 1) / (m^2 h)`.
fn mean_square_share(hashes: u32, width: u32) -> f64 {
    let (h, m) = (f64::from(hashes), f64::from(width));
    1.0 / (m * m) + (m - 1.0) / (m * m * h)
}

/// `(m / (m - 1))^2`.
fn scale2(width: u32) -> f64 {
    let m = f64::from(width);
    (m / (m - 1.0)).powi(2)
}

/// The mean of the squared bias of the public hashes over the k items.
fn mean_squared_bias(hashes: u32, width: u32, f: &[f64]) -> f64 {
    let b = collision_bias(width, hashes, f);
    b.iter().map(|b| b * b).sum::<f64>() / b.len() as f64
}

/// The number of distinct columns row j gives the k items, stopping at m.
fn used_columns(k: DomainSize, row: u32, width: u32) -> u32 {
    let mut seen = vec![false; width as usize];
    let mut used = 0;
    for item in 0..k.get() {
        let c = column(item, row, width) as usize;
        if !std::mem::replace(&mut seen[c], true) {
            used += 1;
            if used == width {
                break;
            }
        }
    }
    used
}

/// The GF(2) rank of `{h_j(v) xor h_j(0)}` over the k items, stopping at `log2 m`.
fn column_rank(k: DomainSize, row: u32, width: u32) -> u32 {
    let full = width.ilog2();
    let first = column(0, row, width);
    // A basis kept by leading bit.
    let mut basis = [0u32; 32];
    let mut rank = 0;
    for item in 1..k.get() {
        let mut v = column(item, row, width) ^ first;
        while v != 0 {
            let top = 31 - v.leading_zeros() as usize;
            if basis[top] == 0 {
                basis[top] = v;
                rank += 1;
                break;
            }
            v ^= basis[top];
        }
        if rank == full {
            break;
        }
    }
    rank
}

/// HCMS: `p = e^eps / (1 + e^eps)` and `c = 1 / (2p - 1)`.
fn hcms_pc(eps: Epsilon) -> (f64, f64) {
    let p = sketch::hcms::keep_probability(eps);
    (p, sketch::hcms::debias(eps))
}

/// HCMS per-user variance of an item of share `f_x`, the others sharing a column with it
/// `E[rho^2]` of the time on average: `(m / (m - 1))^2 (c^2 - f_x - (1 - f_x) E[rho^2])`.
///
/// # Formula
/// A user's term is `(m / (m - 1)) (c s H[l][h_j(x)] - 1/m)`, `s` its reported sign: its
/// square is fixed and its mean `rho_ux` (1 for the item itself), so its variance is
/// `(m / (m - 1))^2 (c^2 - rho_ux^2)`.
pub fn hcms_item_variance(eps: Epsilon, hashes: u32, width: u32, f_x: f64) -> f64 {
    let (_, c) = hcms_pc(eps);
    scale2(width) * (c * c - f_x - (1.0 - f_x) * mean_square_share(hashes, width))
}

/// HCMS's exact expected ASR from the public hashes:
/// `(1 / (h m k)) sum_j (p (2m - E_j) + (1 - p) E_j)`, `E_j = m / 2^rank_j`.
///
/// # Formula
/// Report (j, l, s) supports the items whose column in row j has sign s in row l of H;
/// each of them puts `p / (h m)` on it, so a report with a support contributes
/// `p / (h m k)` whatever its size, and one without `(1 - p) / (h m k)`. Row l of H is
/// constant over the columns row j uses exactly when l is orthogonal (over GF(2)) to
/// their differences, for `m / 2^rank` values of l; for each such l one sign has no
/// support. O(h (log2 m + ...)) hashes: a row stops once its rank is full.
pub fn hcms_asr(k: DomainSize, eps: Epsilon, hashes: u32, width: u32) -> f64 {
    let (p, _) = hcms_pc(eps);
    let m = f64::from(width);
    let empty: f64 = (0..hashes)
        .map(|j| m / f64::from(1u32 << column_rank(k, j, width)))
        .sum();
    let h = f64::from(hashes);
    (p * (2.0 * m * h - empty) + (1.0 - p) * empty) / (h * m * k.as_f64())
}

impl ClosedForms for HadamardCountMeanSketch {
    /// [`hcms_item_variance`] at `f_x -> 0`.
    fn variance(_: DomainSize, eps: Epsilon, (hashes, width): (u32, u32)) -> f64 {
        hcms_item_variance(eps, hashes, width, 0.0)
    }

    /// `(1/k) sum_x [var_x / n + b_x^2]`, the bias `b` of the public hashes exact
    /// (`collision_bias`, O(h k) hashes).
    fn expected_mse(_: DomainSize, eps: Epsilon, (h, m): (u32, u32), n: f64, f: &[f64]) -> f64 {
        let var: f64 = f
            .iter()
            .map(|&fx| hcms_item_variance(eps, h, m, fx))
            .sum::<f64>()
            / f.len() as f64;
        var / n + mean_squared_bias(h, m, f)
    }

    /// [`hcms_asr`], exact (the same for either `lh`).
    fn asr(k: DomainSize, eps: Epsilon, (h, m): (u32, u32), _: LhAsr) -> f64 {
        hcms_asr(k, eps, h, m)
    }

    /// Row 0, coefficient 0, sign +: `r (m / (m - 1)) (c - 1/m)`.
    fn fake_report_gain(
        k: DomainSize,
        eps: Epsilon,
        param: (u32, u32),
        targets: u32,
    ) -> Option<f64> {
        Self::fake_report_gain_supporting(k, eps, param, targets, targets)
    }

    /// `(m / (m - 1)) (s (c - 1/m) + (r - s) (-c - 1/m))`: a target the report does not
    /// support gets the opposite sign.
    fn fake_report_gain_supporting(
        _: DomainSize,
        eps: Epsilon,
        (_, width): (u32, u32),
        targets: u32,
        supported: u32,
    ) -> Option<f64> {
        let (_, c) = hcms_pc(eps);
        let m = f64::from(width);
        let (s, r) = (f64::from(supported), f64::from(targets));
        Some(m / (m - 1.0) * (s * (c - 1.0 / m) + (r - s) * (-c - 1.0 / m)))
    }

    /// The (row, coefficient) index and the sign bit.
    fn encodings(k: DomainSize, eps: Epsilon, param: (u32, u32)) -> Vec<(Encoding, f64)> {
        vec![(Encoding::IndexAndValue, Self::bits(k, eps, param))]
    }

    fn bits(_: DomainSize, _: Epsilon, (h, m): (u32, u32)) -> f64 {
        index_bits(f64::from(h) * f64::from(m)) + 1.0
    }

    /// One counter increment (the transforms and the O(h k) hashes run once per estimate).
    fn server_ops(_: DomainSize, _: Epsilon, _: (u32, u32)) -> f64 {
        1.0
    }

    /// A row, a coefficient and a coin.
    fn client_draws(_: DomainSize, _: Epsilon, _: (u32, u32)) -> f64 {
        3.0
    }

    /// No exact form implemented.
    fn asr_after(_: DomainSize, _: Epsilon, _: (u32, u32), _: u32) -> Option<f64> {
        None
    }

    fn pairwise_support(_: DomainSize, _: Epsilon, _: (u32, u32)) -> Option<(f64, f64)> {
        None
    }

    fn map_asr(_: DomainSize, _: Epsilon, _: (u32, u32), _: &[f64]) -> Option<f64> {
        None
    }
}

/// CMS: each bit's `(p, q)` and `c = 1 / (2p - 1)`.
fn cms_pqc(eps: Epsilon) -> (f64, f64, f64) {
    let (p, q) = sketch::cms::bit_probabilities(eps);
    (p, q, sketch::cms::debias(eps))
}

/// CMS per-user variance of an item of share `f_x`:
/// `(m / (m - 1))^2 (c^2 - f_x - (1 - f_x) E[(2 rho - 1)^2]) / 4`.
///
/// # Formula
/// A user's term is `(m / (m - 1)) ((c/2) v + 1/2 - 1/m)`, `v = ±1` its bit at x's column
/// in its row, whose mean is `(2 rho_ux - 1) / c` (1/c for the item itself): the variance
/// is `(m / (m - 1))^2 (c^2 - (2 rho_ux - 1)^2) / 4`.
pub fn cms_item_variance(eps: Epsilon, hashes: u32, width: u32, f_x: f64) -> f64 {
    let (_, _, c) = cms_pqc(eps);
    let m = f64::from(width);
    let others = 1.0 - 4.0 / m + 4.0 * mean_square_share(hashes, width);
    scale2(width) * (c * c - f_x - (1.0 - f_x) * others) / 4.0
}

/// CMS's exact expected ASR from the public hashes:
/// `(1 / (k h)) sum_j [(p/q)(1 - p^u_j) + q p^(u_j - 1)]`, `u_j` the columns row j uses.
///
/// # Formula
/// A report of row j with one-bits y supports the items whose column is set. Every such
/// item puts `P_1(|y|) / h = q^(|y|-1) p^(m-|y|+1) / h` on it, so a report with a support
/// contributes that over k; one without contributes `P_0(|y|) / (h k)`, with
/// `P_0(w) = q^(w+1) p^(m-1-w)`. Of the `C(m, w)` reports of weight w, `C(m - u, w)`
/// miss every used column; the binomial sums close to the form above. O(h min(k, m ln m))
/// hashes: a row stops once it uses every column.
pub fn cms_asr(k: DomainSize, eps: Epsilon, hashes: u32, width: u32) -> f64 {
    let (p, q, _) = cms_pqc(eps);
    let total: f64 = (0..hashes)
        .map(|j| {
            let u = f64::from(used_columns(k, j, width));
            (p / q) * (1.0 - p.powf(u)) + q * p.powf(u - 1.0)
        })
        .sum();
    total / (k.as_f64() * f64::from(hashes))
}

impl ClosedForms for CountMeanSketch {
    /// [`cms_item_variance`] at `f_x -> 0`.
    fn variance(_: DomainSize, eps: Epsilon, (hashes, width): (u32, u32)) -> f64 {
        cms_item_variance(eps, hashes, width, 0.0)
    }

    /// `(1/k) sum_x [var_x / n + b_x^2]`, the bias `b` of the public hashes exact.
    fn expected_mse(_: DomainSize, eps: Epsilon, (h, m): (u32, u32), n: f64, f: &[f64]) -> f64 {
        let var: f64 = f
            .iter()
            .map(|&fx| cms_item_variance(eps, h, m, fx))
            .sum::<f64>()
            / f.len() as f64;
        var / n + mean_squared_bias(h, m, f)
    }

    /// [`cms_asr`], exact (the same for either `lh`).
    fn asr(k: DomainSize, eps: Epsilon, (h, m): (u32, u32), _: LhAsr) -> f64 {
        cms_asr(k, eps, h, m)
    }

    /// A row with every bit set: `r (m / (m - 1)) ((c + 1)/2 - 1/m)`.
    fn fake_report_gain(
        k: DomainSize,
        eps: Epsilon,
        param: (u32, u32),
        targets: u32,
    ) -> Option<f64> {
        Self::fake_report_gain_supporting(k, eps, param, targets, targets)
    }

    /// `(m / (m - 1)) (s ((c + 1)/2 - 1/m) + (r - s) ((1 - c)/2 - 1/m))`.
    fn fake_report_gain_supporting(
        _: DomainSize,
        eps: Epsilon,
        (_, width): (u32, u32),
        targets: u32,
        supported: u32,
    ) -> Option<f64> {
        let (_, _, c) = cms_pqc(eps);
        let m = f64::from(width);
        let (s, r) = (f64::from(supported), f64::from(targets));
        let (hit, miss) = ((c + 1.0) / 2.0 - 1.0 / m, (1.0 - c) / 2.0 - 1.0 / m);
        Some(m / (m - 1.0) * (s * hit + (r - s) * miss))
    }

    /// The row's index and its m bits.
    fn encodings(k: DomainSize, eps: Epsilon, param: (u32, u32)) -> Vec<(Encoding, f64)> {
        vec![(Encoding::IndexAndBits, Self::bits(k, eps, param))]
    }

    fn bits(_: DomainSize, _: Epsilon, (h, m): (u32, u32)) -> f64 {
        index_bits(f64::from(h)) + f64::from(m)
    }

    /// The row's counter and one increment per one-bit.
    fn server_ops(_: DomainSize, eps: Epsilon, (_, m): (u32, u32)) -> f64 {
        let (p, q, _) = cms_pqc(eps);
        1.0 + p + (f64::from(m) - 1.0) * q
    }

    /// The row, then unary encoding's draws over the m columns.
    fn client_draws(_: DomainSize, eps: Epsilon, (_, m): (u32, u32)) -> f64 {
        let (_, q, _) = cms_pqc(eps);
        4.0 + (f64::from(m) - 1.0) * q
    }

    /// No exact form implemented.
    fn asr_after(_: DomainSize, _: Epsilon, _: (u32, u32), _: u32) -> Option<f64> {
        None
    }

    fn pairwise_support(_: DomainSize, _: Epsilon, _: (u32, u32)) -> Option<(f64, f64)> {
        None
    }

    fn map_asr(_: DomainSize, _: Epsilon, _: (u32, u32), _: &[f64]) -> Option<f64> {
        None
    }
}
