//! What each family's module of this crate provides: its closed forms, side by side.
//!
//! The entry points of this crate ([`crate::asr::expected`], [`crate::variance::approx_per_user`],
//! [`crate::epg::expected`], [`crate::cost::bits`], [`crate::longitudinal::asr_after`], ...)
//! take a [`Spec`](ldp_core::Spec) and call its family's implementation through
//! [`ldp_core::dispatch_family!`]: a family without one is a compile error there.

use ldp_core::{DomainSize, Epsilon, FamilyMechanism};

use crate::asr::LhAsr;
use crate::cost::Encoding;
use crate::epg::Poisoning;

/// A family's closed forms, as pure functions of (k, eps, parameter). Each family's module
/// documents its formulas next to its implementation of this trait: every function that
/// computes one has a `# Formula` section, the formula in a text block and then the
/// paper's equation it comes from (its label, `Eq. "var_ue"`), or how it was derived where
/// the paper has none (the large-domain oracles).
pub trait ClosedForms: FamilyMechanism {
    /// Approximate variance of one item's estimate per user (n = 1): the paper's MSE.
    fn variance(k: DomainSize, eps: Epsilon, param: Self::Param) -> f64;

    /// Expected MSE of the raw estimate over the k items for `n` users with true
    /// frequencies `f`: `(1/k) sum_i Var[f_i]`. The default is the pure protocols' exact
    /// variance (paper Eq. "var"), `q*(1-q*) / (n (p*-q*)^2) + f_i (1 - p* - q*) / (n (p*-q*))`,
    /// or the per-user variance over n for a family without p* and q*.
    fn expected_mse(k: DomainSize, eps: Epsilon, param: Self::Param, n: f64, f: &[f64]) -> f64 {
        let approx = Self::variance(k, eps, param) / n;
        match Self::probabilities(k, eps, param) {
            Some((p, q)) => {
                let mean_f = f.iter().sum::<f64>() / f.len() as f64;
                approx + mean_f * (1.0 - p - q) / (n * (p - q))
            }
            None => approx,
        }
    }

    /// The mean over the k items of the squared bias that a fixed public set of hashes
    /// gives the estimates, in expectation over the draw of an ideal hash, for a population
    /// whose shares have `collision_mass = sum_x f_x^2` ([`crate::variance::Prior`]). Zero
    /// (the default) for every family whose estimate is unbiased.
    fn expected_squared_bias(
        _k: DomainSize,
        _eps: Epsilon,
        _param: Self::Param,
        _collision_mass: f64,
    ) -> f64 {
        0.0
    }

    /// Expected success rate of the paper's reconstruction attack under a uniform prior.
    /// `lh` selects between the paper's and the exact form where a family has both.
    fn asr(k: DomainSize, eps: Epsilon, param: Self::Param, lh: LhAsr) -> f64;

    /// The expected estimate one report of the maximal gain attack adds to the total of
    /// the `targets` target items, `(s - r q*) / (p* - q*)` with s the most targets one
    /// report can support (for the families whose support depends on where the targets
    /// lie, HR's blocks, the most over placements); `None` when it has no bound (SHE
    /// without clipping).
    fn fake_report_gain(
        k: DomainSize,
        eps: Epsilon,
        param: Self::Param,
        targets: u32,
    ) -> Option<f64>;

    /// What one fake report that supports only `supported` of the `targets` adds to their
    /// total estimate: by default [`ClosedForms::fake_report_gain`] less `1 / (p* - q*)`
    /// for each target it misses of those one report can support. Families whose
    /// reports are not pure override it.
    fn fake_report_gain_supporting(
        k: DomainSize,
        eps: Epsilon,
        param: Self::Param,
        targets: u32,
        supported: u32,
    ) -> Option<f64> {
        let full = Self::fake_report_gain(k, eps, param, targets)?;
        let Some((p, q)) = Self::probabilities(k, eps, param) else {
            return Some(full);
        };
        let most = Self::support_size_range(k, param).map_or(targets, |(_, hi)| hi.min(targets));
        Some(full - f64::from(most.saturating_sub(supported)) / (p - q))
    }

    /// Every encoding of a report and its expected size in bits, smallest first (the
    /// encoding this toolkit sends first when it is not the smallest, as for SHE).
    fn encodings(k: DomainSize, eps: Epsilon, param: Self::Param) -> Vec<(Encoding, f64)>;

    /// Expected bits of one report under the family's most compact encoding: the first of
    /// [`ClosedForms::encodings`]. Families override it to skip building the list (tuning
    /// calls it at every grid point).
    fn bits(k: DomainSize, eps: Epsilon, param: Self::Param) -> f64 {
        Self::encodings(k, eps, param)[0].1
    }

    /// Expected server operations to aggregate one report ([`crate::cost`]).
    fn server_ops(k: DomainSize, eps: Epsilon, param: Self::Param) -> f64;

    /// Expected random variates one report consumes on the client ([`crate::cost`]).
    fn client_draws(k: DomainSize, eps: Epsilon, param: Self::Param) -> f64;

    /// Exact expected ASR after `t` linked reports of one value ([`crate::longitudinal`]);
    /// `None` where no exact form is implemented.
    fn asr_after(k: DomainSize, eps: Epsilon, param: Self::Param, t: u32) -> Option<f64>;

    /// `(P10, P01)`: the probabilities that one report of the true item x supports x and
    /// not a given other item, and the reverse; they set the rate at which linked reports
    /// give x away ([`crate::longitudinal::error_exponent`]). `None` without supports.
    fn pairwise_support(k: DomainSize, eps: Epsilon, param: Self::Param) -> Option<(f64, f64)>;

    /// Exact expected success rate of the MAP attack, `sum_y max_x prior(x) P[y | x]`, for
    /// a prior given as probabilities sorted decreasingly ([`crate::map`]); `None` where no
    /// tractable form exists.
    fn map_asr(
        k: DomainSize,
        eps: Epsilon,
        param: Self::Param,
        sorted_prior: &[f64],
    ) -> Option<f64>;

    /// Lower bounds of the `wanted` objectives over every parameter value from `lo` to
    /// `hi`, for branch-and-bound tuning ([`crate::bounds`]); `None` for an objective not
    /// wanted or without a bound. The default knows none.
    #[allow(clippy::too_many_arguments)]
    fn lower_bounds(
        k: DomainSize,
        eps: Epsilon,
        lo: Self::Param,
        hi: Self::Param,
        wanted: crate::bounds::Wanted,
        lh: LhAsr,
        poisoning: &Poisoning,
    ) -> crate::bounds::LowerBounds {
        let _ = (k, eps, lo, hi, wanted, lh, poisoning);
        crate::bounds::LowerBounds::default()
    }
}
