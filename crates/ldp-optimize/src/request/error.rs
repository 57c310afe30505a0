//! Why a request cannot be carried out, with the setting at fault.

use ldp_analytic::PoisoningError;
use ldp_analytic::longitudinal::CollectionsError;
use ldp_core::{ParamError, Protocol};
use thiserror::Error;

use super::TuneRequest;
use super::{Knob, SettingGroup};
use crate::choose::ChooseError;
use crate::error::{OptimizeError, listed};
use crate::param_values::{ParamValues, ParamValuesError};

/// Why a request cannot be carried out. [`RequestError::knob`] names the setting at
/// fault, and [`RequestError::about_value`] says whether the value given for it is at
/// fault, for the front end to write `--param 0.5: ...` or `param = 0.5: ...`.
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
    /// A bound is out of its range.
    #[error("{error}")]
    Bound {
        /// [`Knob::AsrMax`], [`Knob::EpgMax`] or [`Knob::BitsMax`].
        knob: Knob,
        /// The rejected value.
        value: f64,
        /// What is wrong with it.
        error: OptimizeError,
    },
    /// The change detector's bound cannot be met or does not apply.
    #[error("{why}")]
    Change {
        /// [`Knob::PrecisionMax`] or [`Knob::ChangeRate`].
        knob: Knob,
        /// What is wrong.
        why: String,
    },
    /// A setting of the bias term is out of its range.
    #[error("{why}, got {value}")]
    Bias {
        /// [`Knob::BiasUsers`] or [`Knob::BiasZipf`].
        knob: Knob,
        /// The rejected value.
        value: f64,
        /// What it must be.
        why: &'static str,
    },
    /// Bounds were given with a strategy other than eps-constraint.
    #[error("the {strategy} strategy takes no bound (only eps-constraint does)")]
    BoundNotTaken {
        /// The first bound given.
        knob: Knob,
        /// The strategy.
        strategy: &'static str,
    },
    /// The strategy has no meaning for the weighted objectives.
    #[error(transparent)]
    Strategy(OptimizeError),
    /// The number of collections lies outside 1 to
    /// [`MAX_COLLECTIONS`](ldp_analytic::longitudinal::MAX_COLLECTIONS).
    #[error(transparent)]
    Collections(#[from] CollectionsError),
    /// The poisoning setting is out of range.
    #[error("{0}")]
    Poisoning(PoisoningError, Knob),
    /// A poisoning setting was given where EPG plays no part.
    #[error(
        "the poisoning setting matters only when EPG is weighted (w_epg), bounded (epg_max) or an objective"
    )]
    PoisoningUnused(Knob),
    /// A setting was given that changes nothing for the protocols asked about.
    #[error("it changes nothing here: {why}")]
    Unused {
        /// The setting.
        knob: Knob,
        /// Why it changes nothing.
        why: &'static str,
    },
    /// A tuning setting was given for an instance that is not tuned.
    #[error(
        "{protocol} is not tuned here (only {} are, and not with a parameter given)",
        adaptive_names()
    )]
    NotTuned {
        /// The first tuning setting given.
        knob: Knob,
        /// The protocol.
        protocol: &'static str,
    },
    /// A tuning setting was given where no protocol is tuned.
    #[error(
        "no protocol here is tuned ({list} are, without a parameter given)",
        list = adaptive_names()
    )]
    NothingTuned(Knob),
    /// A protocol that is not adaptive was asked to be tuned.
    #[error(
        "only {list} are tuned (or `all` to choose among every protocol), not {protocol}",
        list = adaptive_names()
    )]
    NotAdaptive {
        /// The protocol.
        protocol: &'static str,
    },
    /// The parameters given do not fit the protocol's family (no parameter, fixed by
    /// the protocol, unknown or repeated names, a fraction for a whole number).
    #[error(transparent)]
    ParamValues(#[from] ParamValuesError),
    /// The parameter lies outside its family's range, or the instance cannot run.
    #[error(transparent)]
    Param(ParamError),
    /// Choosing among every protocol needs a bound and takes no weights.
    #[error(
        "protocol all picks the lowest MSE under the bounds; it takes no weights, strategy or search"
    )]
    ChooseTakesNoWeights(Knob),
    /// Choosing among every protocol needs a bound.
    #[error(
        "protocol all picks the lowest MSE under bounds: give {}",
        listed(Knob::of(SettingGroup::Bounds).map(Knob::name), "or")
    )]
    ChooseNeedsBounds,
    /// A frontier needs two or more objectives.
    #[error("a frontier needs two or more distinct objectives")]
    FewObjectives,
    /// Tuning, or drawing a frontier, failed.
    #[error("{context}: {error}")]
    Tuning {
        /// What was being done (`tuning aue at k = 100, eps = 1`).
        context: String,
        /// Why it failed.
        error: OptimizeError,
    },
    /// No protocol could be chosen.
    #[error("{context}: {error}")]
    Choosing {
        /// What was being done (`choosing a protocol at k = 100, eps = 1`).
        context: String,
        /// Why it failed.
        error: ChooseError,
    },
}

/// The adaptive protocols' names ([`Protocol::ADAPTIVE`]), listed with "and".
pub(super) fn adaptive_names() -> String {
    listed(Protocol::ADAPTIVE.map(Protocol::name), "and")
}

impl RequestError {
    /// Whether the error is about the value given for its knob (out of range, of the
    /// wrong kind, or not admitted by the protocol), rather than about giving the knob at
    /// all: front ends then show the value beside the knob's name.
    pub fn about_value(&self) -> bool {
        matches!(
            self,
            RequestError::Bound { .. }
                | RequestError::Bias { .. }
                | RequestError::Poisoning(..)
                | RequestError::ParamValues(_)
                | RequestError::Param(_)
        )
    }

    /// The value given for the setting at fault, as front ends show it beside the
    /// setting's name (`--beta 1.5: ...`, `beta = 1.5: ...`), when the error is about that
    /// value ([`RequestError::about_value`]): the request's value of the knob
    /// ([`TuneRequest::value`]), or `param` for [`Knob::Param`].
    pub fn given_value(
        &self,
        request: &TuneRequest,
        param: Option<&ParamValues>,
    ) -> Option<String> {
        if !self.about_value() {
            return None;
        }
        match self.knob()? {
            Knob::Param => param.map(ParamValues::to_string),
            knob => request.value(knob).map(|v| v.to_string()),
        }
    }

    /// The setting at fault, if one is.
    pub fn knob(&self) -> Option<Knob> {
        Some(match self {
            RequestError::AsrWeight(_) => Knob::AsrWeight,
            RequestError::Weight { knob, .. }
            | RequestError::Bound { knob, .. }
            | RequestError::Bias { knob, .. }
            | RequestError::Change { knob, .. }
            | RequestError::BoundNotTaken { knob, .. }
            | RequestError::NotTuned { knob, .. }
            | RequestError::Poisoning(_, knob)
            | RequestError::PoisoningUnused(knob)
            | RequestError::Unused { knob, .. }
            | RequestError::ChooseTakesNoWeights(knob)
            | RequestError::NothingTuned(knob) => *knob,
            RequestError::Strategy(_) => Knob::Strategy,
            RequestError::Collections(_) => Knob::Collections,
            RequestError::NotAdaptive { .. } | RequestError::ChooseNeedsBounds => Knob::Protocol,
            RequestError::ParamValues(_) | RequestError::Param(_) => Knob::Param,
            RequestError::FewObjectives => Knob::Objectives,
            RequestError::Tuning { .. } | RequestError::Choosing { .. } => return None,
        })
    }
}
