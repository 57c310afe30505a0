//! Hadamard response (Acharya, Sun and Zhang 2019) with B blocks of b columns
//! (`ldp_core::families::hadamard`): MSE, exact ASR, EPG and costs, side by side.
//!
//! Notation: `t = e^-eps`, `D = 2B - 1 + e^eps` (so `D t = (2B - 1) t + 1`), and the
//! estimator's scale `D / (e^eps - 1) = D t / (1 - t)`. A report lands in a column of
//! item x's row (x's "+" half) with probability `e^eps / D`, in the other half of x's
//! block with `1 / D`; an item of the same block puts `(e^eps + 1) / (2D)` on each half,
//! an item of another block `1 / D`.

use ldp_core::families::hadamard::{HadamardResponse, Layout, normalizer_t};
use ldp_core::{DomainSize, Epsilon};

use crate::asr::LhAsr;
use crate::cost::{Encoding, index_bits};
use crate::family::ClosedForms;
use crate::pure::{one_minus_t, t};

/// The estimator's scale: what one report in a column adds to each supported item's
/// estimate.
///
/// # Formula
///
/// ```text
/// scale = D / (e^eps - 1) = D t / (1 - t)
/// ```
fn scale(eps: Epsilon, blocks: u32) -> f64 {
    normalizer_t(eps, blocks) / one_minus_t(eps)
}

pub use ldp_core::families::hadamard::{item_variance, uniform_variance as variance};

/// The exact expected ASR of the uniform-over-support attack.
///
/// # Formula
///
/// ```text
/// ASR = (2 / (b D k)) (e^eps (K - E) + E)
/// ```
///
/// with K the columns and E those whose support is empty; derived here (the paper's
/// attack, Section "ldp_protocols", on a family it does not treat). A column supports the items of its block whose row is +1 there; every such item puts
/// `2 e^eps / (b D)` on it, so a column with a support contributes that much whatever its
/// size, and a column without one `2 / (b D)` per item, guessed right once in k. A block
/// of three or more items supports every column (rows 1 and 2 cannot both be -1 where
/// row 3 = 1 xor 2 is too), one of two items leaves b/4 columns empty, one item b/2, and
/// a block without items all b.
pub fn asr(k: DomainSize, eps: Epsilon, blocks: u32) -> f64 {
    let layout = Layout::new(k, blocks);
    let b = layout.block as f64;
    let empty_columns = |items: u64| match items {
        0 => b,
        1 => b / 2.0,
        2 => b / 4.0,
        _ => 0.0,
    };
    // Full blocks, then at most one partly filled, then empty ones.
    let (per, kk) = (layout.per_block(), u64::from(k.get()));
    let (full, rest) = (kk / per, kk % per);
    let used = full + u64::from(rest > 0);
    let empty = full as f64 * empty_columns(per)
        + if rest > 0 { empty_columns(rest) } else { 0.0 }
        + (u64::from(blocks) - used) as f64 * b;
    let outputs = layout.outputs() as f64;
    let dt = normalizer_t(eps, blocks);
    // 2 e^eps / (b D) = 2 / (b D t); 2 / (b D) = 2 t / (b D t).
    2.0 * ((outputs - empty) + empty * t(eps)) / (b * dt * k.as_f64())
}

impl ClosedForms for HadamardResponse {
    fn variance(k: DomainSize, eps: Epsilon, blocks: u32) -> f64 {
        variance(k, eps, blocks)
    }

    /// The mean over the items of each estimate's variance.
    ///
    /// # Formula
    ///
    /// ```text
    /// MSE = (1/k) sum_x (1/n) [scale^2 (F_x (e^eps + 1) + (1 - F_x) 2) / D - f_x]
    /// ```
    ///
    /// with `F_x` the share of x's block ([`item_variance`]): paper Eq. "mse_var" with
    /// HR's variances.
    fn expected_mse(k: DomainSize, eps: Epsilon, blocks: u32, n: f64, f: &[f64]) -> f64 {
        let per = Layout::new(k, blocks).per_block();
        f.chunks(usize::try_from(per).unwrap_or(usize::MAX))
            .flat_map(|block| {
                let f_block: f64 = block.iter().sum();
                block
                    .iter()
                    .map(move |&f_x| item_variance(eps, blocks, f_block, f_x))
            })
            .sum::<f64>()
            / (n * f.len() as f64)
    }

    fn asr(k: DomainSize, eps: Epsilon, blocks: u32, _: LhAsr) -> f64 {
        asr(k, eps, blocks)
    }

    /// Column 0 of a block adds `scale` to each of its items' estimates and nothing to
    /// other blocks'.
    ///
    /// # Formula
    ///
    /// ```text
    /// gain = s scale,   s = min(r, b - 1)
    /// ```
    ///
    /// with s the targets in one block, at most every item of a block.
    fn fake_report_gain(k: DomainSize, eps: Epsilon, blocks: u32, targets: u32) -> Option<f64> {
        let per = Layout::new(k, blocks).per_block();
        Some(u64::from(targets).min(per) as f64 * scale(eps, blocks))
    }

    /// Column 0 of a block holding `supported` targets.
    ///
    /// # Formula
    ///
    /// ```text
    /// gain = supported scale
    /// ```
    fn fake_report_gain_supporting(
        _: DomainSize,
        eps: Epsilon,
        blocks: u32,
        _: u32,
        supported: u32,
    ) -> Option<f64> {
        Some(f64::from(supported) * scale(eps, blocks))
    }

    /// One column in `0..K`.
    ///
    /// # Formula
    ///
    /// ```text
    /// bits = ceil(log2 K)
    /// ```
    fn encodings(k: DomainSize, _: Epsilon, blocks: u32) -> Vec<(Encoding, f64)> {
        let outputs = Layout::new(k, blocks).outputs() as f64;
        vec![(Encoding::Index, index_bits(outputs))]
    }

    /// One counter increment (the transform, `K log2 b` additions, runs once per
    /// estimate, not per report).
    ///
    /// # Formula
    ///
    /// ```text
    /// ops = 1
    /// ```
    fn server_ops(_: DomainSize, _: Epsilon, _: u32) -> f64 {
        1.0
    }

    /// A coin, and a uniform column.
    ///
    /// # Formula
    ///
    /// ```text
    /// draws = 2
    /// ```
    fn client_draws(_: DomainSize, _: Epsilon, _: u32) -> f64 {
        2.0
    }

    /// No exact form: the supports of the items of one block are dependent.
    fn asr_after(_: DomainSize, _: Epsilon, _: u32, _: u32) -> Option<f64> {
        None
    }

    /// Not one pair: it depends on whether the other item shares the block.
    fn pairwise_support(_: DomainSize, _: Epsilon, _: u32) -> Option<(f64, f64)> {
        None
    }

    fn map_asr(_: DomainSize, _: Epsilon, _: u32, _: &[f64]) -> Option<f64> {
        None
    }
}
