//! What a front end asks of tuning (the `ldp` tool's flags, the Python keywords), each
//! setting optional: one place for the defaults and the cross-checks, so every front end
//! resolves the same request to the same [`TuneOptions`] and refuses the same mistakes.

use ldp_analytic::repeated::{CollectionsError, check_collections};
use thiserror::Error;

use crate::error::OptimizeError;
use crate::objective::Weights;
use crate::space::Search;
use crate::strategy::{Bounds, Strategy};
use crate::tune::TuneOptions;

/// A tuning request; a `None` field takes the default its documentation names.
///
/// ```
/// use ldp_optimize::{Bounds, Knob, Strategy, TuneRequest};
///
/// // A bound alone selects the eps-constraint strategy.
/// let request = TuneRequest { bounds: Some(Bounds::asr(0.05)?), ..TuneRequest::default() };
/// assert_eq!(request.options()?.strategy, Strategy::EpsConstraint(Bounds::asr(0.05)?));
///
/// // Every refusal names the setting at fault, for the front end to name its flag.
/// let bad = TuneRequest { w_asr: Some(1.5), ..TuneRequest::default() };
/// assert_eq!(bad.options().unwrap_err().knob(), Knob::AsrWeight);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct TuneRequest {
    /// The ASR weight, in [0, 1]; MSE weighs 1 minus it (default 0.5).
    pub w_asr: Option<f64>,
    /// The EPG weight, finite and >= 0 (default 0).
    pub w_epg: Option<f64>,
    /// The report-size weight, finite and >= 0 (default 0).
    pub w_bits: Option<f64>,
    /// The grid, or the grid then refinement (default the paper's grid).
    pub search: Option<Search>,
    /// The selection strategy (default weighted, or eps-constraint when `bounds` is
    /// given). A named eps-constraint without `bounds` is the paper's (ASR <= 0.1).
    pub strategy: Option<Strategy>,
    /// Bounds of the eps-constraint strategy; no other strategy takes them.
    pub bounds: Option<Bounds>,
    /// Tune against the ASR after this many linked reports, 1 to
    /// [`MAX_COLLECTIONS`](ldp_analytic::repeated::MAX_COLLECTIONS) (default 1, the
    /// paper's one-shot ASR).
    pub collections: Option<u32>,
}

/// A setting of a [`TuneRequest`], as named in its errors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Knob {
    /// [`TuneRequest::w_asr`].
    AsrWeight,
    /// [`TuneRequest::w_epg`].
    EpgWeight,
    /// [`TuneRequest::w_bits`].
    BitsWeight,
    /// [`TuneRequest::strategy`].
    Strategy,
    /// [`TuneRequest::bounds`].
    Bounds,
    /// [`TuneRequest::collections`].
    Collections,
}

/// Why a [`TuneRequest`] has no options.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum RequestError {
    /// The ASR weight lies outside [0, 1].
    #[error("the ASR weight must lie in [0, 1] (the MSE weight is 1 minus it), got {0}")]
    AsrWeight(f64),
    /// The EPG or report-size weight is negative or not finite.
    #[error("a weight must be finite and >= 0, got {value}")]
    Weight {
        /// [`Knob::EpgWeight`] or [`Knob::BitsWeight`].
        knob: Knob,
        /// The rejected value.
        value: f64,
    },
    /// Bounds were given with a strategy other than eps-constraint.
    #[error("the {0} strategy takes no bound (only eps-constraint does)")]
    BoundNotTaken(&'static str),
    /// The strategy has no meaning for the weighted objectives.
    #[error(transparent)]
    Strategy(OptimizeError),
    /// The number of collections lies outside 1 to
    /// [`MAX_COLLECTIONS`](ldp_analytic::repeated::MAX_COLLECTIONS).
    #[error(transparent)]
    Collections(#[from] CollectionsError),
}

impl RequestError {
    /// The setting at fault.
    pub fn knob(&self) -> Knob {
        match self {
            RequestError::AsrWeight(_) => Knob::AsrWeight,
            RequestError::Weight { knob, .. } => *knob,
            RequestError::BoundNotTaken(_) => Knob::Bounds,
            RequestError::Strategy(_) => Knob::Strategy,
            RequestError::Collections(_) => Knob::Collections,
        }
    }
}

impl TuneRequest {
    /// The options, every other field of [`TuneOptions`] at its default.
    pub fn options(&self) -> Result<TuneOptions, RequestError> {
        let w_asr = self.w_asr.unwrap_or(0.5);
        if !(0.0..=1.0).contains(&w_asr) {
            return Err(RequestError::AsrWeight(w_asr));
        }
        let (w_epg, w_bits) = (self.w_epg.unwrap_or(0.0), self.w_bits.unwrap_or(0.0));
        for (knob, value) in [(Knob::EpgWeight, w_epg), (Knob::BitsWeight, w_bits)] {
            if !(value.is_finite() && value >= 0.0) {
                return Err(RequestError::Weight { knob, value });
            }
        }
        // ASR and MSE weigh 1 together, so the total is positive and nothing is left to fail.
        let weights =
            Weights::all(w_asr, 1.0 - w_asr, w_epg, w_bits).map_err(RequestError::Strategy)?;
        let strategy = match (self.strategy, self.bounds) {
            (None, None) => Strategy::Weighted,
            (None | Some(Strategy::EpsConstraint(_)), Some(b)) => Strategy::EpsConstraint(b),
            (Some(s), Some(_)) => return Err(RequestError::BoundNotTaken(s.name())),
            (Some(s), None) => s,
        };
        strategy
            .check_dimensions(weights.active())
            .map_err(RequestError::Strategy)?;
        let collections = self.collections.unwrap_or(1);
        check_collections(&[collections])?;
        Ok(TuneOptions {
            weights,
            search: self.search.unwrap_or_default(),
            strategy,
            collections,
            ..TuneOptions::default()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::objective::ObjectiveSet;
    use ldp_analytic::repeated::MAX_COLLECTIONS;

    #[test]
    fn the_empty_request_is_the_default_options() {
        assert_eq!(TuneRequest::default().options(), Ok(TuneOptions::default()));
    }

    #[test]
    fn weights_are_normalized_with_mse_the_complement_of_asr() {
        let o = TuneRequest {
            w_asr: Some(0.2),
            w_epg: Some(1.0),
            ..TuneRequest::default()
        }
        .options()
        .unwrap();
        let w = o.weights;
        for (got, want) in [
            (w.asr(), 0.1),
            (w.mse(), 0.4),
            (w.epg(), 0.5),
            (w.bits(), 0.0),
        ] {
            approx::assert_abs_diff_eq!(got, want, epsilon = 1e-15);
        }
    }

    #[test]
    fn bounds_select_eps_constraint_and_no_other_strategy_takes_them() {
        let b = Bounds::asr(0.05).unwrap();
        let with = |strategy| TuneRequest {
            strategy,
            bounds: Some(b),
            ..TuneRequest::default()
        };
        assert_eq!(
            with(None).options().unwrap().strategy,
            Strategy::EpsConstraint(b)
        );
        // A named eps-constraint takes the given bounds over the paper's.
        let paper = Strategy::from_name("eps-constraint").unwrap();
        assert_eq!(
            with(Some(paper)).options().unwrap().strategy,
            Strategy::EpsConstraint(b)
        );
        let err = with(Some(Strategy::Utopia)).options().unwrap_err();
        assert_eq!(err, RequestError::BoundNotTaken("utopia"));
        assert_eq!(err.knob(), Knob::Bounds);
        // Without bounds, a named eps-constraint is the paper's.
        let o = TuneRequest {
            strategy: Some(paper),
            ..TuneRequest::default()
        };
        assert_eq!(o.options().unwrap().strategy, paper);
    }

    #[test]
    fn every_refusal_names_its_knob() {
        let cases = [
            (
                TuneRequest {
                    w_asr: Some(-0.1),
                    ..TuneRequest::default()
                },
                Knob::AsrWeight,
            ),
            (
                TuneRequest {
                    w_epg: Some(f64::NAN),
                    ..TuneRequest::default()
                },
                Knob::EpgWeight,
            ),
            (
                TuneRequest {
                    w_bits: Some(-1.0),
                    ..TuneRequest::default()
                },
                Knob::BitsWeight,
            ),
            (
                // The elbow needs exactly two weighted objectives.
                TuneRequest {
                    w_epg: Some(0.5),
                    strategy: Some(Strategy::Elbow),
                    ..TuneRequest::default()
                },
                Knob::Strategy,
            ),
            (
                TuneRequest {
                    collections: Some(0),
                    ..TuneRequest::default()
                },
                Knob::Collections,
            ),
            (
                TuneRequest {
                    collections: Some(MAX_COLLECTIONS + 1),
                    ..TuneRequest::default()
                },
                Knob::Collections,
            ),
        ];
        for (request, knob) in cases {
            let err = request.options().unwrap_err();
            assert_eq!(err.knob(), knob, "{request:?}: {err}");
        }
        // The limits themselves are accepted.
        for t in [1, MAX_COLLECTIONS] {
            let o = TuneRequest {
                collections: Some(t),
                ..TuneRequest::default()
            };
            assert_eq!(o.options().unwrap().collections, t);
        }
        let elbow = TuneRequest {
            strategy: Some(Strategy::Elbow),
            ..TuneRequest::default()
        };
        assert_eq!(
            elbow.options().unwrap().weights.active(),
            ObjectiveSet::ASR_MSE
        );
    }
}
