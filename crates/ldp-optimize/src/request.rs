//! What a front end asks for (the `ldp` tool's flags, the Python keywords, the browser
//! page's inputs), each setting optional: one place for the defaults, the cross-checks and
//! the messages, so that every front end resolves the same request to the same instance
//! and refuses the same mistakes with the same words. A front end parses its input into a
//! [`TuneRequest`] or an [`InstanceRequest`], calls it, and names the setting at fault
//! ([`RequestError::knob`]) in its own spelling.

use ldp_analytic::longitudinal::{CollectionsError, check_collections};
use ldp_analytic::{LhAsr, Poisoning, PoisoningError};
use ldp_core::{DomainSize, Epsilon, ParamError, Protocol, Spec};
use thiserror::Error;

use crate::choose::{ChooseError, Choice, choose_protocol_after};
use crate::error::OptimizeError;
use crate::objective::{Objective, ObjectiveSet, Weights};
use crate::param_values::ParamValues;
use crate::pareto::{Candidate, frontier_in};
use crate::space::Search;
use crate::strategy::{Bounds, Strategy};
use crate::options::TuneOptions;
use crate::tune::{Tuned, candidates, tune};

/// A setting of a request, as named in its errors. [`Knob::name`] is its keyword spelling
/// (the Python keyword; the `ldp` tool's flag is `--` and the name with `-` for `_`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Knob {
    /// The protocol.
    Protocol,
    /// The family parameter given instead of the preset or tuning.
    Param,
    /// [`TuneRequest::w_asr`].
    AsrWeight,
    /// [`TuneRequest::w_epg`].
    EpgWeight,
    /// [`TuneRequest::w_bits`].
    BitsWeight,
    /// [`TuneRequest::search`].
    Search,
    /// [`TuneRequest::strategy`].
    Strategy,
    /// [`TuneRequest::asr_max`].
    AsrMax,
    /// [`TuneRequest::epg_max`].
    EpgMax,
    /// [`TuneRequest::bits_max`].
    BitsMax,
    /// [`TuneRequest::collections`].
    Collections,
    /// [`TuneRequest::lh_asr`].
    LhAsr,
    /// [`TuneRequest::beta`].
    Beta,
    /// [`TuneRequest::targets`].
    Targets,
    /// [`TuneRequest::target_mass`].
    TargetMass,
    /// The objectives of a frontier.
    Objectives,
}

impl Knob {
    /// The keyword spelling: `w_asr`, `asr_max`, `asr_after`, ...
    pub fn name(self) -> &'static str {
        match self {
            Knob::Protocol => "protocol",
            Knob::Param => "param",
            Knob::AsrWeight => "w_asr",
            Knob::EpgWeight => "w_epg",
            Knob::BitsWeight => "w_bits",
            Knob::Search => "search",
            Knob::Strategy => "strategy",
            Knob::AsrMax => "asr_max",
            Knob::EpgMax => "epg_max",
            Knob::BitsMax => "bits_max",
            Knob::Collections => "asr_after",
            Knob::LhAsr => "lh_asr",
            Knob::Beta => "beta",
            Knob::Targets => "targets",
            Knob::TargetMass => "target_mass",
            Knob::Objectives => "objectives",
        }
    }

    /// The `ldp` tool's flag: `--w-asr`, `--asr-after`, ...
    pub fn flag(self) -> String {
        format!("--{}", self.name().replace('_', "-"))
    }
}

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
    /// A parameter was given for a protocol without one.
    #[error("{0} has no parameter")]
    NoParameter(&'static str),
    /// A parameter was given for a protocol whose definition fixes it.
    #[error("{protocol} fixes {name} by its definition; for another {name} use {adaptive}")]
    FixedParameter {
        /// The protocol.
        protocol: &'static str,
        /// The parameter's name.
        name: &'static str,
        /// The adaptive protocol of the family, which takes any value.
        adaptive: &'static str,
    },
    /// A whole-number parameter was given a fraction (or a value out of `u32`).
    #[error("{0} must be a whole number from 0 to 2^32 - 1")]
    NotWhole(&'static str),
    /// One number was given for a family with several parameters.
    #[error("{protocol} has the parameters {names}: give them by name, as name=value pairs")]
    NameParameters {
        /// The protocol.
        protocol: &'static str,
        /// Its family's parameter names.
        names: String,
    },
    /// A parameter name the family does not have.
    #[error("{protocol} has no parameter `{name}`; its parameters are {names}")]
    UnknownParameter {
        /// The protocol.
        protocol: &'static str,
        /// The name given.
        name: String,
        /// Its family's parameter names.
        names: String,
    },
    /// A parameter was given twice.
    #[error("{0} is given twice")]
    RepeatedParameter(&'static str),
    /// The parameter lies outside its family's range, or the instance cannot run.
    #[error(transparent)]
    Param(ParamError),
    /// Choosing among every protocol needs a bound and takes no weights.
    #[error(
        "protocol all picks the lowest MSE under the bounds; it takes no weights, strategy or search"
    )]
    ChooseTakesNoWeights(Knob),
    /// Choosing among every protocol needs a bound.
    #[error("protocol all picks the lowest MSE under bounds: give asr_max, epg_max or bits_max")]
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

/// The adaptive protocols' names: `ass, aue, alh and athe`.
fn adaptive_names() -> String {
    match Protocol::ADAPTIVE.map(Protocol::name).as_slice() {
        [] => "none".to_owned(),
        [one] => (*one).to_owned(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

impl RequestError {
    /// Whether the error is about the value given for its knob (out of range, of the
    /// wrong kind, or not admitted by the protocol), rather than about giving the knob at
    /// all: front ends then show the value beside the knob's name.
    pub fn about_value(&self) -> bool {
        matches!(
            self,
            RequestError::Bound { .. }
                | RequestError::Poisoning(..)
                | RequestError::NoParameter(_)
                | RequestError::FixedParameter { .. }
                | RequestError::NotWhole(_)
                | RequestError::NameParameters { .. }
                | RequestError::UnknownParameter { .. }
                | RequestError::RepeatedParameter(_)
                | RequestError::Param(_)
        )
    }

    /// The setting at fault, if one is.
    pub fn knob(&self) -> Option<Knob> {
        Some(match self {
            RequestError::AsrWeight(_) => Knob::AsrWeight,
            RequestError::Weight { knob, .. }
            | RequestError::Bound { knob, .. }
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
            RequestError::NoParameter(_)
            | RequestError::FixedParameter { .. }
            | RequestError::NotWhole(_)
            | RequestError::NameParameters { .. }
            | RequestError::UnknownParameter { .. }
            | RequestError::RepeatedParameter(_)
            | RequestError::Param(_) => Knob::Param,
            RequestError::FewObjectives => Knob::Objectives,
            RequestError::Tuning { .. } | RequestError::Choosing { .. } => return None,
        })
    }
}

/// A tuning request; a `None` field takes the default its documentation names.
///
/// ```
/// use ldp_optimize::{Bounds, Knob, Strategy, TuneRequest};
///
/// // A bound alone selects the eps-constraint strategy.
/// let request = TuneRequest { asr_max: Some(0.05), ..TuneRequest::default() };
/// assert_eq!(request.options()?.strategy, Strategy::EpsConstraint(Bounds::asr(0.05)?));
///
/// // Every refusal names the setting at fault, for the front end to name its flag.
/// let bad = TuneRequest { w_asr: Some(1.5), ..TuneRequest::default() };
/// assert_eq!(bad.options().unwrap_err().knob(), Some(Knob::AsrWeight));
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
    /// The selection strategy (default weighted, or eps-constraint when a bound is
    /// given). A named eps-constraint without bounds is the paper's (ASR <= 0.1).
    pub strategy: Option<Strategy>,
    /// The largest ASR of the eps-constraint strategy (no other strategy takes bounds).
    pub asr_max: Option<f64>,
    /// The largest EPG.
    pub epg_max: Option<f64>,
    /// The largest report size in bits.
    pub bits_max: Option<f64>,
    /// Tune against the ASR after this many linked reports, 1 to
    /// [`MAX_COLLECTIONS`](ldp_analytic::longitudinal::MAX_COLLECTIONS) (default 1, the
    /// paper's one-shot ASR).
    pub collections: Option<u32>,
    /// The LH ASR form of the objective (default the paper's).
    pub lh_asr: Option<LhAsr>,
    /// The maximal gain attack's fraction of fake users (default 0.05).
    pub beta: Option<f64>,
    /// Its number of targets r (default 1).
    pub targets: Option<u32>,
    /// The targets' true mass f_T (default 0.01).
    pub target_mass: Option<f64>,
}

impl TuneRequest {
    /// The first tuning setting given (weights, search, strategy, bounds, collections), if
    /// any: these make sense only where something is tuned or chosen.
    pub fn tuning_given(&self) -> Option<Knob> {
        [
            (Knob::AsrWeight, self.w_asr.is_some()),
            (Knob::EpgWeight, self.w_epg.is_some()),
            (Knob::BitsWeight, self.w_bits.is_some()),
            (Knob::Search, self.search.is_some()),
            (Knob::Strategy, self.strategy.is_some()),
            (Knob::AsrMax, self.asr_max.is_some()),
            (Knob::EpgMax, self.epg_max.is_some()),
            (Knob::BitsMax, self.bits_max.is_some()),
            (Knob::Collections, self.collections.is_some()),
        ]
        .into_iter()
        .find_map(|(knob, on)| on.then_some(knob))
    }

    /// The first setting given, if any: a tuning setting, the LH ASR form or a poisoning
    /// setting. An instance that is not tuned takes none of them.
    pub fn given(&self) -> Option<Knob> {
        self.tuning_given()
            .or(self.lh_asr.map(|_| Knob::LhAsr))
            .or(self.poisoning_given())
    }

    /// The first bound given, if any.
    fn bound_given(&self) -> Option<Knob> {
        [
            (Knob::AsrMax, self.asr_max.is_some()),
            (Knob::EpgMax, self.epg_max.is_some()),
            (Knob::BitsMax, self.bits_max.is_some()),
        ]
        .into_iter()
        .find_map(|(knob, on)| on.then_some(knob))
    }

    /// The first poisoning setting given, if any.
    fn poisoning_given(&self) -> Option<Knob> {
        [
            (Knob::Beta, self.beta.is_some()),
            (Knob::Targets, self.targets.is_some()),
            (Knob::TargetMass, self.target_mass.is_some()),
        ]
        .into_iter()
        .find_map(|(knob, on)| on.then_some(knob))
    }

    /// The bounds given, `None` when none is.
    pub fn bounds(&self) -> Result<Option<Bounds>, RequestError> {
        let mut out: Option<Bounds> = None;
        for (knob, value) in [
            (Knob::AsrMax, self.asr_max),
            (Knob::EpgMax, self.epg_max),
            (Knob::BitsMax, self.bits_max),
        ] {
            let Some(v) = value else { continue };
            let next = match (knob, out) {
                (Knob::AsrMax, None) => Bounds::asr(v),
                (Knob::AsrMax, Some(b)) => b.with_asr(v),
                (Knob::EpgMax, None) => Bounds::epg(v),
                (Knob::EpgMax, Some(b)) => b.with_epg(v),
                (_, None) => Bounds::bits(v),
                (_, Some(b)) => b.with_bits(v),
            };
            out = Some(next.map_err(|error| RequestError::Bound {
                knob,
                value: v,
                error,
            })?);
        }
        Ok(out)
    }

    /// The poisoning setting of EPG, each setting not given at its default.
    pub fn poisoning(&self) -> Result<Poisoning, RequestError> {
        let d = Poisoning::default();
        let (beta, targets, mass) = (
            self.beta.unwrap_or(d.beta()),
            self.targets.unwrap_or(d.targets()),
            self.target_mass.unwrap_or(d.target_mass()),
        );
        Poisoning::new(beta, targets, mass).map_err(|e| {
            let knob = match e {
                PoisoningError::Param(_) => Knob::Beta,
                PoisoningError::TargetMass(_) => Knob::TargetMass,
                _ => Knob::Targets,
            };
            RequestError::Poisoning(e, knob)
        })
    }

    /// Refuses an LH ASR form when no protocol of `protocols` has two: only local
    /// hashing's ASR has a paper and an exact form (found by evaluating both at the
    /// protocol's classic counterpart, so a new family with two forms is covered).
    pub fn check_lh_asr_used(
        &self,
        protocols: &[Protocol],
        k: DomainSize,
        eps: Epsilon,
    ) -> Result<(), RequestError> {
        if self.lh_asr.is_none() {
            return Ok(());
        }
        let has_two_forms = |p: &Protocol| {
            Spec::classic(p.classic_counterpart(), k, eps).is_ok_and(|spec| {
                ldp_analytic::asr::expected(&spec, LhAsr::Paper)
                    != ldp_analytic::asr::expected(&spec, LhAsr::Exact)
            })
        };
        if protocols.iter().any(has_two_forms) {
            Ok(())
        } else {
            Err(RequestError::Unused {
                knob: Knob::LhAsr,
                why: "only local hashing's ASR has a paper and an exact form",
            })
        }
    }

    /// Refuses a poisoning setting when every protocol of `protocols` has an unbounded
    /// EPG (SHE without clipping), which no setting changes.
    pub fn check_poisoning_used(
        &self,
        protocols: &[Protocol],
        k: DomainSize,
        eps: Epsilon,
    ) -> Result<(), RequestError> {
        let Some(knob) = self.poisoning_given() else {
            return Ok(());
        };
        let poisoning = self.poisoning()?;
        let bounded = |p: &Protocol| {
            Spec::classic(p.classic_counterpart(), k, eps).is_ok_and(|spec| {
                !matches!(
                    ldp_analytic::epg::expected(&spec, &poisoning),
                    Ok(ldp_analytic::Gain::Unbounded)
                )
            })
        };
        if protocols.iter().any(bounded) {
            Ok(())
        } else {
            Err(RequestError::Unused {
                knob,
                why: "the EPG of these protocols is unbounded whatever the poisoning setting",
            })
        }
    }

    /// The poisoning setting, refused when given but unused: EPG is then neither
    /// weighted, bounded, nor (`epg_objective`) an objective.
    fn used_poisoning(&self, epg_objective: bool) -> Result<Poisoning, RequestError> {
        let used = epg_objective || self.w_epg.is_some_and(|w| w > 0.0) || self.epg_max.is_some();
        match self.poisoning_given() {
            Some(knob) if !used => Err(RequestError::PoisoningUnused(knob)),
            _ => self.poisoning(),
        }
    }

    /// The tuning options.
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
        let strategy = match (self.strategy, self.bounds()?) {
            (None, None) => Strategy::Weighted,
            (None | Some(Strategy::EpsConstraint(_)), Some(b)) => Strategy::EpsConstraint(b),
            (Some(s), Some(_)) => {
                return Err(RequestError::BoundNotTaken {
                    knob: self.bound_given().expect("a bound was given"),
                    strategy: s.name(),
                });
            }
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
            lh_asr: self.lh_asr.unwrap_or_default(),
            poisoning: self.used_poisoning(false)?,
            ..TuneOptions::default()
        })
    }

    /// Tunes the adaptive `protocol` at (k, eps).
    pub fn tune(
        &self,
        protocol: Protocol,
        k: DomainSize,
        eps: Epsilon,
    ) -> Result<Tuned, RequestError> {
        if !protocol.is_adaptive() {
            return Err(RequestError::NotAdaptive {
                protocol: protocol.name(),
            });
        }
        self.check_lh_asr_used(&[protocol], k, eps)?;
        let options = self.options()?;
        tune(protocol, k, eps, &options).map_err(|error| RequestError::Tuning {
            context: format!("tuning {} at k = {k}, eps = {eps}", protocol.name()),
            error,
        })
    }

    /// The lowest-MSE instance among every protocol under the bounds (the ASR after
    /// `collections` reports where given): [`choose_protocol_after`]. Takes bounds, and no
    /// weights, search or strategy.
    pub fn choose(&self, k: DomainSize, eps: Epsilon) -> Result<Choice, RequestError> {
        if let Some(knob) = [
            (Knob::AsrWeight, self.w_asr.is_some()),
            (Knob::EpgWeight, self.w_epg.is_some()),
            (Knob::BitsWeight, self.w_bits.is_some()),
            (Knob::Search, self.search.is_some()),
            (Knob::Strategy, self.strategy.is_some()),
        ]
        .into_iter()
        .find_map(|(knob, on)| on.then_some(knob))
        {
            return Err(RequestError::ChooseTakesNoWeights(knob));
        }
        let bounds = self.bounds()?.ok_or(RequestError::ChooseNeedsBounds)?;
        let collections = self.collections.unwrap_or(1);
        check_collections(&[collections])?;
        let poisoning = self.used_poisoning(false)?;
        choose_protocol_after(
            k,
            eps,
            &bounds,
            self.lh_asr.unwrap_or_default(),
            &poisoning,
            collections,
        )
        .map_err(|error| RequestError::Choosing {
            context: format!("choosing a protocol at k = {k}, eps = {eps}"),
            error,
        })
    }

    /// The Pareto frontier of the adaptive `protocol`'s parameter in `objectives` (two
    /// or more), over its paper space. Takes the LH ASR form and the poisoning setting
    /// (for EPG); the tuning settings do not apply.
    pub fn frontier(
        &self,
        protocol: Protocol,
        k: DomainSize,
        eps: Epsilon,
        objectives: &[Objective],
    ) -> Result<Vec<Candidate>, RequestError> {
        if !protocol.is_adaptive() {
            return Err(RequestError::NotAdaptive {
                protocol: protocol.name(),
            });
        }
        let set = ObjectiveSet::of(objectives);
        if set.len() < 2 {
            return Err(RequestError::FewObjectives);
        }
        if set.contains(Objective::Asr) {
            self.check_lh_asr_used(&[protocol], k, eps)?;
        } else if self.lh_asr.is_some() {
            return Err(RequestError::Unused {
                knob: Knob::LhAsr,
                why: "ASR is not an objective of this frontier",
            });
        }
        let options = TuneOptions {
            lh_asr: self.lh_asr.unwrap_or_default(),
            poisoning: self.used_poisoning(set.contains(Objective::Epg))?,
            ..TuneOptions::default()
        };
        let all = candidates(protocol, k, eps, &options).map_err(|error| RequestError::Tuning {
            context: format!(
                "the frontier of {} at k = {k}, eps = {eps}",
                protocol.name()
            ),
            error,
        })?;
        Ok(frontier_in(&all, set))
    }
}

/// One protocol instance as a front end asks for it: a protocol at (k, eps), with its
/// parameter given, or its preset, or tuned.
#[derive(Debug, Clone, PartialEq)]
pub struct InstanceRequest {
    /// The protocol.
    pub protocol: Protocol,
    /// The domain size.
    pub k: DomainSize,
    /// The budget.
    pub eps: Epsilon,
    /// The family parameters, instead of the preset (classic) or tuning (adaptive).
    pub param: Option<ParamValues>,
    /// How an adaptive protocol without `param` is tuned; refused for any other instance.
    pub tuning: TuneRequest,
}

/// A resolved instance, and how it was tuned.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Instance {
    /// The protocol.
    pub protocol: Protocol,
    /// The instance.
    pub spec: Spec,
    /// The tuning that chose the parameter, for an adaptive protocol without one given.
    pub tuned: Option<Tuned>,
}

impl Instance {
    /// The parameter shown beside the instance: its family's parameter, none for a family
    /// without one (GRR, SHE).
    pub fn shown_param(&self) -> Option<f64> {
        self.spec.family().value()
    }

    /// One line on how an adaptive protocol was tuned:
    /// `aue tuned at k = 100, eps = 4: p = 0.818 (weighted, w_asr = 0.5)`.
    pub fn tuning_note(&self) -> Option<String> {
        let t = self.tuned.as_ref()?;
        let (k, eps) = (self.spec.k(), self.spec.eps());
        let mut note = format!(
            "{} tuned at k = {k}, eps = {eps}: {} = {} ({}",
            self.protocol.name(),
            self.protocol.parameter_name().unwrap_or("-"),
            short(t.param()),
            t.strategy.name(),
        );
        if let Strategy::EpsConstraint(b) = t.strategy {
            for (o, v) in b.iter() {
                note += &format!(", {} <= {}", o.name(), short(v));
            }
        } else {
            note += &format!(", w_asr = {}", short(t.weights.asr()));
        }
        note += ")";
        if t.fell_back {
            note += "; no parameter meets the bound, the utopia point was chosen instead";
        }
        Some(note)
    }
}

/// A number as the front ends print it: shortest round trip, exponent form for very small
/// or large magnitudes.
fn short(v: f64) -> String {
    if v == 0.0 || !v.is_finite() || (1e-5..1e16).contains(&v.abs()) {
        format!("{v}")
    } else {
        format!("{v:e}")
    }
}

impl InstanceRequest {
    /// The instance: `param` if given, else the preset (classic) or the tuned parameter
    /// (adaptive). Tuning settings for an instance that is not tuned are refused.
    ///
    /// ```
    /// use ldp_core::{DomainSize, Epsilon, Protocol};
    /// use ldp_optimize::{InstanceRequest, Knob, TuneRequest};
    /// let (k, eps) = (DomainSize::new(100)?, Epsilon::new(4.0)?);
    /// let aue = InstanceRequest { protocol: Protocol::Aue, k, eps, param: None, tuning: TuneRequest::default() };
    /// let i = aue.resolve()?;
    /// assert!((i.shown_param().unwrap() - 0.818).abs() < 1e-3);
    /// assert!(i.tuning_note().unwrap().starts_with("aue tuned at k = 100, eps = 4: p = 0.818"));
    /// let oue = InstanceRequest { protocol: Protocol::Oue, param: Some(0.6.into()), ..aue };
    /// assert_eq!(oue.resolve().unwrap_err().knob(), Some(Knob::Param)); // OUE fixes p
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn resolve(&self) -> Result<Instance, RequestError> {
        let protocol = self.protocol;
        let tuned = protocol.is_adaptive() && self.param.is_none();
        if !tuned && let Some(knob) = self.tuning.given() {
            return Err(RequestError::NotTuned {
                knob,
                protocol: protocol.name(),
            });
        }
        let spec = match &self.param {
            None if tuned => {
                let t = self.tuning.tune(protocol, self.k, self.eps)?;
                return Ok(Instance {
                    protocol,
                    spec: t.spec,
                    tuned: Some(t),
                });
            }
            None => Spec::classic(protocol, self.k, self.eps).expect("a classic protocol"),
            Some(given) => Spec::new(
                self.k,
                self.eps,
                given.family_params(protocol, self.k, self.eps)?,
            )
            .map_err(RequestError::Param)?,
        };
        Ok(Instance {
            protocol,
            spec,
            tuned: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ldp_analytic::longitudinal::MAX_COLLECTIONS;

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
            asr_max: Some(0.05),
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
        assert_eq!(
            err,
            RequestError::BoundNotTaken {
                knob: Knob::AsrMax,
                strategy: "utopia"
            }
        );
        assert_eq!(err.knob(), Some(Knob::AsrMax));
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
            (
                TuneRequest {
                    bits_max: Some(-1.0),
                    ..TuneRequest::default()
                },
                Knob::BitsMax,
            ),
            (
                TuneRequest {
                    beta: Some(0.1),
                    ..TuneRequest::default()
                },
                Knob::Beta,
            ),
            (
                TuneRequest {
                    w_epg: Some(1.0),
                    target_mass: Some(2.0),
                    ..TuneRequest::default()
                },
                Knob::TargetMass,
            ),
        ];
        for (request, knob) in cases {
            let err = request.options().unwrap_err();
            assert_eq!(err.knob(), Some(knob), "{request:?}: {err}");
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

    #[test]
    fn instances_refuse_what_would_do_nothing() {
        let k = DomainSize::new(100).unwrap();
        let eps = Epsilon::new(1.0).unwrap();
        let request = |protocol, param: Option<f64>, tuning| InstanceRequest {
            protocol,
            k,
            eps,
            param: param.map(ParamValues::One),
            tuning,
        };
        let named = |protocol, text: &str| InstanceRequest {
            protocol,
            k,
            eps,
            param: Some(text.parse().unwrap()),
            tuning: TuneRequest::default(),
        };
        let weight = TuneRequest {
            w_asr: Some(0.3),
            ..TuneRequest::default()
        };
        let cases = [
            (
                request(Protocol::Oue, None, weight),
                "oue is not tuned here",
            ),
            (
                request(Protocol::Aue, Some(0.7), weight),
                "aue is not tuned here",
            ),
            (
                request(Protocol::Grr, Some(2.0), TuneRequest::default()),
                "grr has no parameter",
            ),
            (
                request(Protocol::Sue, Some(0.6), TuneRequest::default()),
                "sue fixes p by its definition; for another p use aue",
            ),
            (
                request(Protocol::Olh, Some(7.0), TuneRequest::default()),
                "olh fixes g by its definition; for another g use alh",
            ),
            (
                request(Protocol::Ss, Some(2.5), TuneRequest::default()),
                "omega must be a whole number",
            ),
            (
                request(Protocol::Ss, Some(100.0), TuneRequest::default()),
                "subset size omega must lie in [1, 99]",
            ),
            (
                named(Protocol::Ss, "w=3"),
                "ss has no parameter `w`; its parameters are omega",
            ),
            (
                named(Protocol::Ss, "omega=3,omega=4"),
                "omega is given twice",
            ),
            (
                named(Protocol::Ss, "omega=3.5"),
                "omega must be a whole number",
            ),
            (named(Protocol::Grr, "x=1"), "grr has no parameter"),
            (
                named(Protocol::Hr, "blocks=3"),
                "the number of Hadamard blocks must be a power of two in [1, 128], got 3",
            ),
        ];
        for (r, message) in cases {
            let err = r.resolve().unwrap_err();
            assert!(err.to_string().starts_with(message), "{err}");
            assert!(err.knob().is_some(), "{err}");
        }
        assert!(
            request(Protocol::Oue, None, weight)
                .resolve()
                .unwrap_err()
                .to_string()
                .contains("only ass, aue, alh and athe are")
        );
        let ss = request(Protocol::Ss, Some(7.0), TuneRequest::default())
            .resolve()
            .unwrap();
        assert_eq!(ss.shown_param(), Some(7.0));
        let by_name = named(Protocol::Ss, "omega=7").resolve().unwrap();
        assert_eq!(by_name.spec, ss.spec);
        assert_eq!(ss.tuning_note(), None);
        let grr = request(Protocol::Grr, None, TuneRequest::default())
            .resolve()
            .unwrap();
        assert_eq!(grr.shown_param(), None);
    }
}
