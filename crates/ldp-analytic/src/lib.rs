//! # ldp-analytic
//!
//! Closed forms for the twelve protocols of "Revisiting Locally Differentially Private
//! Protocols" (Arcolezi and Gambs) and the families added since: the estimation variance
//! the paper calls MSE ([`variance`]), the expected success rate of the data
//! reconstruction attack ([`asr`]) and of the MAP attack with a prior ([`map`]), the
//! expected gain of the maximal gain poisoning attack ([`epg`]), and, beyond the paper, the
//! communication and computation cost of a report ([`cost`]), and what repeated collection
//! of one value gives an attacker, with and without memoization ([`longitudinal`]), and how
//! often its changes are seen ([`change`]); several attributes per user (SPL, SMP, RS+FD, RS+RFD:
//! per-attribute variance, the attack on one attribute and on all, and profiling over
//! surveys, [`multidim`]); the central guarantee of shuffled reports and the local budget a
//! central target allows ([`shuffle`]); the budget a user spends over surveys
//! ([`ledger`]); and which closed form a measured quantity is shown beside ([`compare`]). Everything
//! is a pure function of a [`ldp_core::Spec`] (k, eps, family parameter): no randomness,
//! and one kind of cache, which changes no value: the sketches' exact ASR keeps what their
//! public hashes give each (k, m), CMS's per-row counts and HCMS's ranks, for the next
//! budget ([`sketch`]). An adaptive
//! protocol is its family evaluated at its tuned parameter (tuning lives in
//! `ldp-optimize`).
//!
//! Each family's formulas sit side by side in its own module ([`grr`], [`subset`],
//! [`unary`], [`local_hash`], [`summation`], [`threshold`]), behind the [`ClosedForms`]
//! trait; the modules named for a quantity hold its entry point, which dispatches on the
//! spec's family, and the mathematics the families share ([`support`]).
//!
//! ```
//! use ldp_analytic::{evaluate, Options};
//! use ldp_core::{DomainSize, Epsilon, Protocol, Spec};
//! let spec = Spec::classic(Protocol::Sue, DomainSize::new(100)?, Epsilon::new(2.0)?)?;
//! let m = evaluate(&spec, &Options::default())?;
//! assert!(m.asr > 0.0 && m.asr < 1.0 && m.mse > 0.0);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! ## Deviations from the paper
//!
//! The paper's equations are the specification, except where they are wrong or
//! numerically unusable:
//!
//! - **SS variance.** The printed Eq. "var_ss" does not reduce to GRR's variance at
//!   omega = 1. We compute `q*(1-q*)/(p*-q*)^2` from the paper's own p* and q*, which
//!   simplifies to `(w e^eps - e^eps + k - w)(w e^eps + k - w - 1) / (w (e^eps-1)^2 (k-w))`
//!   ([`subset::variance`]).
//! - **LH ASR.** Eq. "exp_asr_lh" ignores hash collisions and the event that the true
//!   item is not supported; it overestimates the attack (0.279 against an exact and
//!   measured 0.234 for OLH at k = 100, eps = 4, about 19 %). Both forms are provided
//!   ([`asr::LhAsr`], [`local_hash::asr_paper`], [`local_hash::asr_exact`]); figures use
//!   the paper's by default, as the paper does.
//! - **UE/THE ASR.** The appendix's event sum underflows to zero above k of about 1000 when
//!   summed term by term; we evaluate its closed form with `ln_1p`/`exp_m1` ([`asr::ones`]).
//! - **SHE ASR.** The paper estimates its integral by Monte Carlo; we evaluate it to about
//!   1e-12 by splitting it at its kinks, two pieces in closed form and one by adaptive
//!   quadrature ([`summation::asr`]).
//! - **EPG for GRR and SS.** Eq. "epg_pq" assumes a fake report can support all r targets;
//!   a GRR report supports one item and an SS report at most omega, which [`epg`] accounts for.
//! - **SHE EPG** is unbounded without server-side clipping ([`epg::Gain::Unbounded`]);
//!   [`epg::expected_she_clipped`] gives the clipped variant.

// What a family provides, and the entry points that dispatch to it, by quantity.
pub mod asr;
pub mod bounds;
pub mod change;
pub mod compare;
pub mod cost;
pub mod epg;
mod family;
pub mod ledger;
pub mod longitudinal;
pub mod map;
pub mod multidim;
pub mod pure;
mod quad;
pub mod shuffle;
pub mod support;
pub mod variance;

// The families' closed forms: one module each, the registry of `ldp_core::families` names
// them all.
pub mod bit_flip;
pub mod fast_local_hash;
pub mod grr;
pub mod hadamard;
pub mod hadamard_mechanism;
pub mod local_hash;
mod ones;
pub mod sketch;
pub mod subset;
pub mod summation;
pub mod threshold;
pub mod unary;

use ldp_core::Spec;
use serde::{Deserialize, Serialize};

pub use asr::LhAsr;
pub use epg::{Gain, Poisoning, PoisoningError};
pub use family::ClosedForms;

/// What to evaluate, beyond the protocol instance.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Options {
    /// Which LH ASR form to report.
    pub lh_asr: LhAsr,
    /// The poisoning attack whose gain to report.
    pub poisoning: Poisoning,
    /// The users and prior behind the bias of the fixed-hash families, counted in the MSE
    /// ([`variance::BiasSetting`]); `None` leaves it out, the paper's MSE.
    #[serde(default)]
    pub bias: Option<variance::BiasSetting>,
}

/// The objectives of one protocol instance: the paper's three and its costs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Metrics {
    /// Expected reconstruction-attack success rate (uniform prior).
    pub asr: f64,
    /// Approximate variance per user (n = 1), the paper's MSE, plus [`Metrics::bias`].
    pub mse: f64,
    /// The bias of fixed public hashes in the units of the variance per user
    /// ([`variance::BiasSetting::per_user`]): 0 for the unbiased families, or when
    /// [`Options::bias`] is `None`.
    #[serde(default)]
    pub bias: f64,
    /// Expected poisoning gain of the maximal gain attack.
    pub epg: Gain,
    /// Expected bits of one report under the most compact encoding ([`cost::bits`]).
    pub bits: f64,
    /// Expected server operations per report ([`cost::server_ops`]).
    pub server_ops: f64,
    /// Expected random variates per report on the client ([`cost::client_draws`]).
    pub client_draws: f64,
}

/// ASR, MSE, EPG and costs of one protocol instance.
pub fn evaluate(spec: &Spec, options: &Options) -> Result<Metrics, PoisoningError> {
    let bias = options.bias.map_or(0.0, |b| b.per_user(spec));
    Ok(Metrics {
        asr: asr::expected(spec, options.lh_asr),
        mse: variance::approx_per_user(spec) + bias,
        bias,
        epg: epg::expected(spec, &options.poisoning)?,
        bits: cost::bits(spec),
        server_ops: cost::server_ops(spec),
        client_draws: cost::client_draws(spec),
    })
}
