//! Apple's count-mean sketches (`ldp_core::families::sketch`): CMS and HCMS, h rows of m
//! columns. MSE (the ideal hash's variance plus the exact bias of the public hashes), the
//! **exact** expected ASR from the public hashes, EPG and costs, side by side.
//!
//! Notation: `rho_ux` is the share of rows under which items u and x share a column; for
//! an ideal hash `E[rho] = 1/m` and `E[rho^2] = 1/m^2 + (m - 1) / (m^2 h)`. The factor
//! `m / (m - 1)` is the published estimator's.

use std::ops::{ControlFlow, Range};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use ldp_core::families::local_hash::collision_bias;
use ldp_core::families::sketch::{self, CountMeanSketch, HadamardCountMeanSketch, column};
use ldp_core::{DomainSize, Epsilon};

use crate::asr::LhAsr;
use crate::cost::{Encoding, index_bits};
use crate::family::ClosedForms;

/// The mean squared share of another item's column, for an ideal hash.
///
/// # Formula
///
/// ```text
/// E[rho^2] = 1/m^2 + (m - 1) / (m^2 h)
/// ```
fn mean_square_share(hashes: u32, width: u32) -> f64 {
    let (h, m) = (f64::from(hashes), f64::from(width));
    1.0 / (m * m) + (m - 1.0) / (m * m * h)
}

/// The square of the sketches' debiasing scale.
///
/// # Formula
///
/// ```text
/// (m / (m - 1))^2
/// ```
fn scale2(width: u32) -> f64 {
    let m = f64::from(width);
    (m / (m - 1.0)).powi(2)
}

/// The mean of the squared bias of the public hashes over the k items.
fn mean_squared_bias(hashes: u32, width: u32, f: &[f64]) -> f64 {
    let b = collision_bias(width, hashes, f);
    b.iter().map(|b| b * b).sum::<f64>() / b.len() as f64
}

/// Per-row quantities of the public hashes that depend on k, m and the row alone: the
/// columns row j uses ([`used_columns`], CMS) and their rank ([`column_ranks`], HCMS).
/// Neither eps nor h changes them (h rows are the first h of any larger h), so they are
/// computed once per (k, m), for the rows asked so far, and a grid over budgets and
/// heights reuses them: `ldp analyze --protocol all` over the paper's 12 domain sizes and
/// 37 budgets evaluates each (k, m) once instead of 37 times. Process-wide (the CLI's
/// threads share it; the browser has one); the values are what the direct computation
/// gives, so the closed forms stay pure functions of their arguments.
struct RowMemo {
    /// The most recently computed last.
    entries: Mutex<Vec<MemoEntry>>,
}

/// One (k, m)'s values for rows `0..rows.len()`.
struct MemoEntry {
    k: u32,
    width: u32,
    rows: Arc<[u32]>,
}

/// The (k, m) the memo keeps: a page's or a grid's worth (the paper's grid has 12 domain
/// sizes, the practitioner's choice 5 widths per domain size).
const MEMO_ENTRIES: usize = 64;

/// The most rows one entry keeps (256 KiB): taller sketches are computed anew.
const MEMO_ROWS: u32 = 1 << 16;

impl RowMemo {
    const fn new() -> Self {
        RowMemo {
            entries: Mutex::new(Vec::new()),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Vec<MemoEntry>> {
        // Nothing panics while the lock is held; a poisoned lock holds complete entries.
        self.entries.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// `compute(k, rows, width)`'s values for rows `0..hashes`, those of rows already
    /// computed for (k, width) taken from the memo. Computed outside the lock: two threads
    /// may compute the same rows, and get the same values.
    fn rows(
        &self,
        k: DomainSize,
        width: u32,
        hashes: u32,
        compute: fn(DomainSize, Range<u32>, u32) -> Vec<u32>,
    ) -> Arc<[u32]> {
        let known = {
            let entries = self.lock();
            let found = entries.iter().find(|e| e.k == k.get() && e.width == width);
            match found {
                Some(e) if e.rows.len() >= hashes as usize => return Arc::clone(&e.rows),
                Some(e) => Arc::clone(&e.rows),
                None => Arc::from([]),
            }
        };
        let mut rows = known.to_vec();
        rows.extend(compute(k, known.len() as u32..hashes, width));
        let rows: Arc<[u32]> = rows.into();
        if hashes <= MEMO_ROWS {
            let mut entries = self.lock();
            // Another thread may have stored more rows of this (k, m) meanwhile: keep those.
            let taller =
                |e: &MemoEntry| e.k == k.get() && e.width == width && e.rows.len() >= rows.len();
            if entries.iter().any(taller) {
                return rows;
            }
            entries.retain(|e| !(e.k == k.get() && e.width == width));
            if entries.len() == MEMO_ENTRIES {
                entries.remove(0);
            }
            entries.push(MemoEntry {
                k: k.get(),
                width,
                rows: Arc::clone(&rows),
            });
        }
        rows
    }
}

static USED_COLUMNS: RowMemo = RowMemo::new();
static COLUMN_RANKS: RowMemo = RowMemo::new();

/// The number of distinct columns each row of `rows` gives the k items: their columns
/// scanned in blocks ([`sketch::for_each_column_block`]) into a bitset, each row stopping
/// once it uses all m.
fn used_columns(k: DomainSize, rows: Range<u32>, width: u32) -> Vec<u32> {
    let mut seen = vec![0u64; width.div_ceil(64) as usize];
    rows.map(|row| {
        seen.fill(0);
        let mut used = 0;
        sketch::for_each_column_block(k.get(), row, width, |_, columns| {
            // Counted in a local: `used` itself lives outside the closure.
            let mut new = 0;
            for &c in columns {
                let (word, bit) = (&mut seen[(c / 64) as usize], 1u64 << (c % 64));
                new += u32::from(*word & bit == 0);
                *word |= bit;
            }
            used += new;
            if used == width {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        });
        used
    })
    .collect()
}

/// [`column_rank`] of each row of `rows`.
fn column_ranks(k: DomainSize, rows: Range<u32>, width: u32) -> Vec<u32> {
    rows.map(|row| column_rank(k, row, width)).collect()
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

/// HCMS's keep probability of the sign and its debiasing factor.
///
/// # Formula
///
/// ```text
/// p = e^eps / (1 + e^eps)
/// c = 1 / (2p - 1)
/// ```
fn hcms_pc(eps: Epsilon) -> (f64, f64) {
    let p = sketch::hcms::keep_probability(eps);
    (p, sketch::hcms::debias(eps))
}

/// HCMS per-user variance of an item of share `f_x`, the others sharing a column with it
/// `E[rho^2]` of the time on average.
///
/// # Formula
///
/// ```text
/// Var_x = (m / (m - 1))^2 (c^2 - f_x - (1 - f_x) E[rho^2])
/// ```
///
/// Derived here (Apple's sketches are not in the paper). A user's term is `(m / (m - 1)) (c s H[l][h_j(x)] - 1/m)`, `s` its reported sign: its
/// square is fixed and its mean `rho_ux` (1 for the item itself), so its variance is
/// `(m / (m - 1))^2 (c^2 - rho_ux^2)`.
pub fn hcms_item_variance(eps: Epsilon, hashes: u32, width: u32, f_x: f64) -> f64 {
    let (_, c) = hcms_pc(eps);
    scale2(width) * (c * c - f_x - (1.0 - f_x) * mean_square_share(hashes, width))
}

/// HCMS's exact expected ASR from the public hashes.
///
/// # Formula
///
/// ```text
/// ASR = (1 / (h m k)) sum_j (p (2m - E_j) + (1 - p) E_j),   E_j = m / 2^rank_j
/// ```
///
/// Derived here (the paper's attack, Section "ldp_protocols", on a family it does not
/// treat). Report (j, l, s) supports the items whose column in row j has sign s in row l of H;
/// each of them puts `p / (h m)` on it, so a report with a support contributes
/// `p / (h m k)` whatever its size, and one without `(1 - p) / (h m k)`. Row l of H is
/// constant over the columns row j uses exactly when l is orthogonal (over GF(2)) to
/// their differences, for `m / 2^rank` values of l; for each such l one sign has no
/// support. O(h (log2 m + ...)) hashes: a row stops once its rank is full; the ranks are
/// computed once per (k, m) and kept for the next budget or height.
pub fn hcms_asr(k: DomainSize, eps: Epsilon, hashes: u32, width: u32) -> f64 {
    let (p, _) = hcms_pc(eps);
    let m = f64::from(width);
    let ranks = COLUMN_RANKS.rows(k, width, hashes, column_ranks);
    let empty: f64 = ranks[..hashes as usize]
        .iter()
        .map(|&rank| m / f64::from(1u32 << rank))
        .sum();
    let h = f64::from(hashes);
    (p * (2.0 * m * h - empty) + (1.0 - p) * empty) / (h * m * k.as_f64())
}

impl ClosedForms for HadamardCountMeanSketch {
    /// [`hcms_item_variance`] at `f_x -> 0`.
    ///
    /// # Formula
    ///
    /// ```text
    /// Var = (m / (m - 1))^2 (c^2 - E[rho^2])
    /// ```
    fn variance(_: DomainSize, eps: Epsilon, (hashes, width): (u32, u32)) -> f64 {
        hcms_item_variance(eps, hashes, width, 0.0)
    }

    /// The mean over the items of each estimate's variance and squared bias.
    ///
    /// # Formula
    ///
    /// ```text
    /// MSE = (1/k) sum_x [Var_x / n + b_x^2]
    /// ```
    ///
    /// with `Var_x` [`hcms_item_variance`] and `b` the exact bias of the public hashes
    /// (`collision_bias`, O(h k) hashes): paper Eq. "mse_var" with a bias term.
    fn expected_mse(_: DomainSize, eps: Epsilon, (h, m): (u32, u32), n: f64, f: &[f64]) -> f64 {
        let var: f64 = f
            .iter()
            .map(|&fx| hcms_item_variance(eps, h, m, fx))
            .sum::<f64>()
            / f.len() as f64;
        var / n + mean_squared_bias(h, m, f)
    }

    /// The public hashes' mean squared bias in expectation over an ideal hash
    /// ([`crate::variance::collision_squared_bias`] with range m over h rows).
    fn expected_squared_bias(k: DomainSize, _: Epsilon, (h, m): (u32, u32), mass: f64) -> f64 {
        crate::variance::collision_squared_bias(k, m, h, mass)
    }

    /// [`hcms_asr`], exact (the same for either `lh`).
    fn asr(k: DomainSize, eps: Epsilon, (h, m): (u32, u32), _: LhAsr) -> f64 {
        hcms_asr(k, eps, h, m)
    }

    /// Row 0, coefficient 0, sign +.
    ///
    /// # Formula
    ///
    /// ```text
    /// gain = r (m / (m - 1)) (c - 1/m)
    /// ```
    fn fake_report_gain(
        k: DomainSize,
        eps: Epsilon,
        param: (u32, u32),
        targets: u32,
    ) -> Option<f64> {
        Self::fake_report_gain_supporting(k, eps, param, targets, targets)
    }

    /// A target the report does not support gets the opposite sign.
    ///
    /// # Formula
    ///
    /// ```text
    /// gain = (m / (m - 1)) (s (c - 1/m) + (r - s) (-c - 1/m))
    /// ```
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
    ///
    /// # Formula
    ///
    /// ```text
    /// bits = ceil(log2 (h m)) + 1
    /// ```
    fn encodings(k: DomainSize, eps: Epsilon, param: (u32, u32)) -> Vec<(Encoding, f64)> {
        vec![(Encoding::IndexAndValue, Self::bits(k, eps, param))]
    }

    fn bits(_: DomainSize, _: Epsilon, (h, m): (u32, u32)) -> f64 {
        index_bits(f64::from(h) * f64::from(m)) + 1.0
    }

    /// One counter increment (the transforms and the O(h k) hashes run once per estimate).
    ///
    /// # Formula
    ///
    /// ```text
    /// ops = 1
    /// ```
    fn server_ops(_: DomainSize, _: Epsilon, _: (u32, u32)) -> f64 {
        1.0
    }

    /// A row, a coefficient and a coin.
    ///
    /// # Formula
    ///
    /// ```text
    /// draws = 3
    /// ```
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

/// CMS: each bit's `(p, q)` and the debiasing factor.
///
/// # Formula
///
/// ```text
/// c = 1 / (2p - 1)
/// ```
fn cms_pqc(eps: Epsilon) -> (f64, f64, f64) {
    let (p, q) = sketch::cms::bit_probabilities(eps);
    (p, q, sketch::cms::debias(eps))
}

/// CMS per-user variance of an item of share `f_x`.
///
/// # Formula
///
/// ```text
/// Var_x = (m / (m - 1))^2 (c^2 - f_x - (1 - f_x) E[(2 rho - 1)^2]) / 4
/// ```
///
/// Derived here (Apple's sketches are not in the paper). A user's term is `(m / (m - 1)) ((c/2) v + 1/2 - 1/m)`, `v = ±1` its bit at x's column
/// in its row, whose mean is `(2 rho_ux - 1) / c` (1/c for the item itself): the variance
/// is `(m / (m - 1))^2 (c^2 - (2 rho_ux - 1)^2) / 4`.
pub fn cms_item_variance(eps: Epsilon, hashes: u32, width: u32, f_x: f64) -> f64 {
    let (_, _, c) = cms_pqc(eps);
    let m = f64::from(width);
    let others = 1.0 - 4.0 / m + 4.0 * mean_square_share(hashes, width);
    scale2(width) * (c * c - f_x - (1.0 - f_x) * others) / 4.0
}

/// CMS's exact expected ASR from the public hashes.
///
/// # Formula
///
/// ```text
/// ASR = (1 / (k h)) sum_j [(p/q) (1 - p^u_j) + q p^(u_j - 1)]
/// ```
///
/// with `u_j` the columns row j uses; derived here (the paper's attack, Section
/// "ldp_protocols", on a family it does not treat). A report of row j with one-bits y supports the items whose column is set. Every such
/// item puts `P_1(|y|) / h = q^(|y|-1) p^(m-|y|+1) / h` on it, so a report with a support
/// contributes that over k; one without contributes `P_0(|y|) / (h k)`, with
/// `P_0(w) = q^(w+1) p^(m-1-w)`. Of the `C(m, w)` reports of weight w, `C(m - u, w)`
/// miss every used column; the binomial sums close to the form above. O(h min(k, m ln m))
/// hashes, scanned in blocks: a row stops once it uses every column. The counts are
/// computed once per (k, m) and kept for the next budget or height, which then costs
/// two powers per distinct count.
pub fn cms_asr(k: DomainSize, eps: Epsilon, hashes: u32, width: u32) -> f64 {
    let (p, q, _) = cms_pqc(eps);
    let used = USED_COLUMNS.rows(k, width, hashes, used_columns);
    let total = sum_by_count(&used[..hashes as usize], |u| {
        let u = f64::from(u);
        (p / q) * (1.0 - p.powf(u)) + q * p.powf(u - 1.0)
    });
    total / (k.as_f64() * f64::from(hashes))
}

/// `sum_j term(counts[j])`, in row order, each distinct count's term computed once: the
/// rows share a few counts (all m once k passes m ln m), so a budget costs a handful of
/// powers rather than 2h. The same terms in the same order as mapping every row.
fn sum_by_count(counts: &[u32], term: impl Fn(u32) -> f64) -> f64 {
    let (Some(&lo), Some(&hi)) = (counts.iter().min(), counts.iter().max()) else {
        return counts.iter().map(|&c| term(c)).sum();
    };
    let span = (hi - lo) as usize + 1;
    if span > counts.len() {
        return counts.iter().map(|&c| term(c)).sum();
    }
    let mut terms = vec![None; span];
    counts
        .iter()
        .map(|&c| *terms[(c - lo) as usize].get_or_insert_with(|| term(c)))
        .sum()
}

impl ClosedForms for CountMeanSketch {
    /// [`cms_item_variance`] at `f_x -> 0`.
    ///
    /// # Formula
    ///
    /// ```text
    /// Var = (m / (m - 1))^2 (c^2 - E[(2 rho - 1)^2]) / 4
    /// ```
    fn variance(_: DomainSize, eps: Epsilon, (hashes, width): (u32, u32)) -> f64 {
        cms_item_variance(eps, hashes, width, 0.0)
    }

    /// The mean over the items of each estimate's variance and squared bias.
    ///
    /// # Formula
    ///
    /// ```text
    /// MSE = (1/k) sum_x [Var_x / n + b_x^2]
    /// ```
    ///
    /// with `Var_x` [`cms_item_variance`] and `b` the exact bias of the public hashes:
    /// paper Eq. "mse_var" with a bias term.
    fn expected_mse(_: DomainSize, eps: Epsilon, (h, m): (u32, u32), n: f64, f: &[f64]) -> f64 {
        let var: f64 = f
            .iter()
            .map(|&fx| cms_item_variance(eps, h, m, fx))
            .sum::<f64>()
            / f.len() as f64;
        var / n + mean_squared_bias(h, m, f)
    }

    /// The public hashes' mean squared bias in expectation over an ideal hash
    /// ([`crate::variance::collision_squared_bias`] with range m over h rows).
    fn expected_squared_bias(k: DomainSize, _: Epsilon, (h, m): (u32, u32), mass: f64) -> f64 {
        crate::variance::collision_squared_bias(k, m, h, mass)
    }

    /// [`cms_asr`], exact (the same for either `lh`).
    fn asr(k: DomainSize, eps: Epsilon, (h, m): (u32, u32), _: LhAsr) -> f64 {
        cms_asr(k, eps, h, m)
    }

    /// A row with every bit set.
    ///
    /// # Formula
    ///
    /// ```text
    /// gain = r (m / (m - 1)) ((c + 1)/2 - 1/m)
    /// ```
    fn fake_report_gain(
        k: DomainSize,
        eps: Epsilon,
        param: (u32, u32),
        targets: u32,
    ) -> Option<f64> {
        Self::fake_report_gain_supporting(k, eps, param, targets, targets)
    }

    /// A row whose bits are set at `s` of the targets' columns only.
    ///
    /// # Formula
    ///
    /// ```text
    /// gain = (m / (m - 1)) (s ((c + 1)/2 - 1/m) + (r - s) ((1 - c)/2 - 1/m))
    /// ```
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
    ///
    /// # Formula
    ///
    /// ```text
    /// bits = ceil(log2 h) + m
    /// ```
    fn encodings(k: DomainSize, eps: Epsilon, param: (u32, u32)) -> Vec<(Encoding, f64)> {
        vec![(Encoding::IndexAndBits, Self::bits(k, eps, param))]
    }

    fn bits(_: DomainSize, _: Epsilon, (h, m): (u32, u32)) -> f64 {
        index_bits(f64::from(h)) + f64::from(m)
    }

    /// The row's counter and one increment per one-bit.
    ///
    /// # Formula
    ///
    /// ```text
    /// ops = 1 + p + (m - 1) q
    /// ```
    fn server_ops(_: DomainSize, eps: Epsilon, (_, m): (u32, u32)) -> f64 {
        let (p, q, _) = cms_pqc(eps);
        1.0 + p + (f64::from(m) - 1.0) * q
    }

    /// The row, then unary encoding's draws over the m columns.
    ///
    /// # Formula
    ///
    /// ```text
    /// draws = 1 + 3 + (m - 1) q
    /// ```
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The distinct columns of row j, item by item.
    fn used_columns_directly(k: DomainSize, row: u32, width: u32) -> u32 {
        let mut seen = vec![false; width as usize];
        (0..k.get())
            .filter(|&v| !std::mem::replace(&mut seen[column(v, row, width) as usize], true))
            .count() as u32
    }

    /// CMS's and HCMS's ASR summed row by row from the direct computations, in the
    /// closed forms' order.
    fn asr_directly(k: DomainSize, eps: Epsilon, hashes: u32, width: u32) -> (f64, f64) {
        let (p, q, _) = cms_pqc(eps);
        let total: f64 = (0..hashes)
            .map(|j| {
                let u = f64::from(used_columns_directly(k, j, width));
                (p / q) * (1.0 - p.powf(u)) + q * p.powf(u - 1.0)
            })
            .sum();
        let cms = total / (k.as_f64() * f64::from(hashes));
        let (p, _) = hcms_pc(eps);
        let m = f64::from(width);
        let empty: f64 = (0..hashes)
            .map(|j| m / f64::from(1u32 << column_rank(k, j, width)))
            .sum();
        let h = f64::from(hashes);
        let hcms = (p * (2.0 * m * h - empty) + (1.0 - p) * empty) / (h * m * k.as_f64());
        (cms, hcms)
    }

    #[test]
    fn the_scanned_counts_are_the_direct_ones() {
        // Around the scan's blocks and decimal lengths, widths a power of two or not, and
        // rows that fill every column (k well above m ln m) and rows that cannot.
        for k in [2, 9, 10, 11, 25, 80, 81, 101, 1000, 1001, 12_345] {
            let k = DomainSize::new(k).unwrap();
            for width in [2, 3, 16, 100, 1024, 4096] {
                let scanned = used_columns(k, 0..40, width);
                for (row, &u) in (0..40).zip(&scanned) {
                    assert_eq!(u, used_columns_directly(k, row, width), "{k} {width} {row}");
                }
            }
        }
    }

    #[test]
    fn the_memo_gives_the_direct_values_and_extends_by_rows() {
        let memo = RowMemo::new();
        let (k, width) = (DomainSize::new(5000).unwrap(), 1024);
        let short = memo.rows(k, width, 16, used_columns);
        let tall = memo.rows(k, width, 256, used_columns);
        assert_eq!((short.len(), tall.len()), (16, 256));
        assert_eq!(short[..], tall[..16]);
        assert_eq!(tall[..], used_columns(k, 0..256, width)[..]);
        // Served from the memo: the same allocation.
        assert!(Arc::ptr_eq(&tall, &memo.rows(k, width, 64, used_columns)));
        // Another key is another entry; the oldest goes past MEMO_ENTRIES.
        let other = memo.rows(k, 64, 8, used_columns);
        assert_eq!(other[..], used_columns(k, 0..8, 64)[..]);
        for extra in 0..MEMO_ENTRIES as u32 {
            memo.rows(DomainSize::new(2 + extra).unwrap(), 2, 1, used_columns);
        }
        let entries = memo.lock();
        assert_eq!(entries.len(), MEMO_ENTRIES);
        assert!(!entries.iter().any(|e| e.k == 5000));
    }

    #[test]
    fn the_memoized_asr_is_the_direct_one_to_the_bit() {
        // Each (k, m) twice over budgets and heights: the first call fills the memo, the
        // others read it (or extend it).
        for k in [25, 1000, 10_000] {
            let k = DomainSize::new(k).unwrap();
            for (hashes, width) in [(16, 1024), (256, 1024), (64, 16), (256, 16), (16, 4096)] {
                for eps in [0.1, 1.0, 2.0, 10.0] {
                    let eps = Epsilon::new(eps).unwrap();
                    let (cms, hcms) = asr_directly(k, eps, hashes, width);
                    let got = (
                        cms_asr(k, eps, hashes, width),
                        hcms_asr(k, eps, hashes, width),
                    );
                    assert_eq!(
                        got.0.to_bits(),
                        cms.to_bits(),
                        "CMS {k} {eps} {hashes} {width}"
                    );
                    assert_eq!(
                        got.1.to_bits(),
                        hcms.to_bits(),
                        "HCMS {k} {eps} {hashes} {width}"
                    );
                }
            }
        }
    }
}
