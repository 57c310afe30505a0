//! The Hadamard mechanism (`ldp_core::families::hadamard_mechanism`): a pure protocol
//! with `p* = e^eps / (1 + e^eps)` and `q* = 1/2`, whose support is computed from the
//! public Sylvester matrix. MSE, exact ASR, EPG and costs, side by side.

use ldp_core::families::hadamard_mechanism::{HadamardMechanism, coefficients, keep_probability};
use ldp_core::{DomainSize, Epsilon};

use crate::asr::LhAsr;
use crate::cost::{Encoding, index_bits};
use crate::family::ClosedForms;

/// HM's approximate variance per user (n = 1): the basic Hadamard response's.
///
/// # Formula
///
/// ```text
/// Var = q* (1 - q*) / (p* - q*)^2 = ((e^eps + 1) / (e^eps - 1))^2
/// ```
///
/// Paper Eq. "approx_var" at `p* = e^eps / (1 + e^eps)`, `q* = 1/2`.
pub fn variance(eps: Epsilon) -> f64 {
    let p = keep_probability(eps);
    0.25 / ((p - 0.5) * (p - 0.5))
}

/// The exact expected ASR of the uniform-over-support attack.
///
/// # Formula
///
/// ```text
/// ASR = (p (2K - 1) + (1 - p)) / (k K),   p = p*
/// ```
///
/// with K the columns of the Sylvester matrix; derived here (the paper's attack, Section
/// "ldp_protocols", on a family it does not treat). Report (j, b) supports the items whose sign at column j is b; each of them puts
/// `p / K` on it, so a report with a support contributes `p / (k K)` whatever its size,
/// and one without `(1 - p) / (k K)` (every item puts `(1 - p) / K` on it, guessed right
/// once in k). Exactly one of the 2K reports has no support, (0, 1): row 0 is +1 at
/// every column, and at a column j > 0 the item `2^i` for the lowest one-bit i of j
/// (an item, as `2^i < k`) has sign -1.
pub fn asr(k: DomainSize, eps: Epsilon) -> f64 {
    let p = keep_probability(eps);
    let big_k = coefficients(k) as f64;
    (p * (2.0 * big_k - 1.0) + (1.0 - p)) / (k.as_f64() * big_k)
}

impl ClosedForms for HadamardMechanism {
    fn variance(_: DomainSize, eps: Epsilon, (): ()) -> f64 {
        variance(eps)
    }

    fn asr(k: DomainSize, eps: Epsilon, (): (), _: LhAsr) -> f64 {
        asr(k, eps)
    }

    /// Column 0 with bit 0 supports every target.
    ///
    /// # Formula
    ///
    /// ```text
    /// gain = (r - r/2) / (p* - 1/2)
    /// ```
    ///
    /// Cao et al.'s maximal gain of one fake report, `(s - r q*) / (p* - q*)` with `s = r`.
    fn fake_report_gain(_: DomainSize, eps: Epsilon, (): (), targets: u32) -> Option<f64> {
        Some(0.5 * f64::from(targets) / (keep_probability(eps) - 0.5))
    }

    /// A column in `0..K` and a bit.
    ///
    /// # Formula
    ///
    /// ```text
    /// bits = ceil(log2 K) + 1
    /// ```
    fn encodings(k: DomainSize, eps: Epsilon, (): ()) -> Vec<(Encoding, f64)> {
        vec![(Encoding::IndexAndValue, Self::bits(k, eps, ()))]
    }

    fn bits(k: DomainSize, _: Epsilon, (): ()) -> f64 {
        index_bits(coefficients(k) as f64) + 1.0
    }

    /// One counter increment (the transform runs once per estimate).
    ///
    /// # Formula
    ///
    /// ```text
    /// ops = 1
    /// ```
    fn server_ops(_: DomainSize, _: Epsilon, (): ()) -> f64 {
        1.0
    }

    /// A uniform column and a coin.
    ///
    /// # Formula
    ///
    /// ```text
    /// draws = 2
    /// ```
    fn client_draws(_: DomainSize, _: Epsilon, (): ()) -> f64 {
        2.0
    }

    /// No exact form implemented: the supports of linked reports overlap through the
    /// matrix's structure.
    fn asr_after(_: DomainSize, _: Epsilon, (): (), _: u32) -> Option<f64> {
        None
    }

    /// Any other item supports a report with probability exactly 1/2, but whether two
    /// items do together depends on the pair: no one pair law.
    fn pairwise_support(_: DomainSize, _: Epsilon, (): ()) -> Option<(f64, f64)> {
        None
    }

    fn map_asr(_: DomainSize, _: Epsilon, (): (), _: &[f64]) -> Option<f64> {
        None
    }
}
