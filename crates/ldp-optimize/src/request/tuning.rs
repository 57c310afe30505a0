//! What a request does with its settings: checks them against each other and against
//! the protocols asked about, then tunes, chooses or draws a frontier.

use ldp_analytic::longitudinal::check_collections;
use ldp_analytic::variance::{BiasSetting, Prior};
use ldp_analytic::{LhAsr, Poisoning, PoisoningError};
use ldp_core::{DomainSize, Epsilon, Protocol, Spec};

use super::{Knob, RequestError, SettingGroup, TuneRequest};
use crate::choose::{Choice, choose_protocol_among};
use crate::objective::{Objective, ObjectiveSet, Weights};
use crate::options::TuneOptions;
use crate::pareto::{Candidate, frontier_in};
use crate::strategy::{Bounds, Strategy};
use crate::tune::{Tuned, candidates, tune};

impl TuneRequest {
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
        let has_two_forms = |p: &Protocol, k: DomainSize, eps: Epsilon| {
            Spec::classic(p.classic_counterpart(), k, eps).is_ok_and(|spec| {
                ldp_analytic::asr::expected(&spec, LhAsr::Paper)
                    != ldp_analytic::asr::expected(&spec, LhAsr::Exact)
            })
        };
        if protocols.iter().any(|p| has_two_forms(p, k, eps)) {
            Ok(())
        } else {
            // A local hashing protocol whose two forms agree at this (k, eps) (at large eps
            // the hash range is so wide that collisions vanish) is told so, not that it
            // is not local hashing: the forms differ at k = 100 and eps = 1.
            let reference = (DomainSize::new(100), Epsilon::new(1.0));
            let hashes = match reference {
                (Ok(k), Ok(eps)) => protocols.iter().any(|p| has_two_forms(p, k, eps)),
                _ => false,
            };
            Err(RequestError::Unused {
                knob: Knob::LhAsr,
                why: if hashes {
                    "local hashing's paper and exact ASR are equal at this k and eps"
                } else {
                    "only local hashing's ASR has a paper and an exact form"
                },
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
        let Some(knob) = self.first_given(&[SettingGroup::Poisoning]) else {
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

    /// The users and prior behind the bias of the fixed-hash protocols
    /// ([`BiasSetting`]), each at its default when not given (10,000 users, Zipf 1.1).
    ///
    /// ```
    /// use ldp_analytic::variance::{BiasSetting, Prior};
    /// use ldp_optimize::{Knob, TuneRequest};
    /// let request = TuneRequest { bias_users: Some(2e5), ..TuneRequest::default() };
    /// assert_eq!(request.bias()?, BiasSetting { users: 2e5, prior: Prior::Zipf(1.1) });
    /// let bad = TuneRequest { bias_zipf: Some(-1.0), ..TuneRequest::default() };
    /// assert_eq!(bad.bias().unwrap_err().knob(), Some(Knob::BiasZipf));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn bias(&self) -> Result<BiasSetting, RequestError> {
        let users = self.bias_users.unwrap_or(BiasSetting::DEFAULT.users);
        if !(users.is_finite() && users >= 1.0) {
            return Err(RequestError::Bias {
                knob: Knob::BiasUsers,
                value: users,
                why: "the users behind the bias must be finite and at least 1",
            });
        }
        let prior = match self.bias_zipf {
            None => BiasSetting::DEFAULT.prior,
            Some(s) if s.is_finite() && s >= 0.0 => Prior::Zipf(s),
            Some(value) => {
                return Err(RequestError::Bias {
                    knob: Knob::BiasZipf,
                    value,
                    why: "a Zipf exponent must be finite and >= 0",
                });
            }
        };
        Ok(BiasSetting { users, prior })
    }

    /// Refuses the bias settings when no protocol of `protocols` has a bias at (k, eps):
    /// only fixed public hashes (FLH's seeds, the sketches' rows) give one.
    pub fn check_bias_used(
        &self,
        protocols: &[Protocol],
        k: DomainSize,
        eps: Epsilon,
    ) -> Result<(), RequestError> {
        let Some(knob) = self.first_given(&[SettingGroup::Bias]) else {
            return Ok(());
        };
        self.bias()?;
        let biased = |p: &Protocol| {
            Spec::classic(p.classic_counterpart(), k, eps)
                .is_ok_and(|spec| ldp_analytic::variance::expected_squared_bias(&spec, 1.0) > 0.0)
        };
        if protocols.iter().any(biased) {
            Ok(())
        } else {
            Err(RequestError::Unused {
                knob,
                why: "only FLH and the sketches (CMS, HCMS), whose public hashes are fixed, \
                      have a bias",
            })
        }
    }

    /// The poisoning setting, refused when given but unused: EPG is then neither
    /// weighted, bounded, nor (`epg_objective`) an objective.
    fn used_poisoning(&self, epg_objective: bool) -> Result<Poisoning, RequestError> {
        let used = epg_objective || self.w_epg.is_some_and(|w| w > 0.0) || self.epg_max.is_some();
        match self.first_given(&[SettingGroup::Poisoning]) {
            Some(knob) if !used => Err(RequestError::PoisoningUnused(knob)),
            _ => self.poisoning(),
        }
    }

    /// The change detector's precision bound (`precision_max` at `change_rate`) as a
    /// bound on one report's exact ASR at domain size `k`
    /// ([`ldp_analytic::change::asr_for_precision`]): for a fresh report each day of a
    /// protocol whose law ignores the domain's labels, the detector's precision rises
    /// with that ASR alone. `None` when no precision bound is given.
    ///
    /// ```
    /// use ldp_core::DomainSize;
    /// use ldp_optimize::{Knob, TuneRequest};
    /// let request = TuneRequest { precision_max: Some(0.3), change_rate: Some(0.1), ..TuneRequest::default() };
    /// let asr = request.change_asr_bound(DomainSize::new(100)?)?.unwrap();
    /// assert!(asr > 0.8 && asr < 0.9); // fresh noise hides changes until the ASR is high
    /// // Random guesses already reach the change rate itself.
    /// let low = TuneRequest { precision_max: Some(0.05), ..request };
    /// assert_eq!(low.change_asr_bound(DomainSize::new(100)?).unwrap_err().knob(), Some(Knob::PrecisionMax));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn change_asr_bound(&self, k: DomainSize) -> Result<Option<f64>, RequestError> {
        let refuse = |knob, why: String| Err(RequestError::Change { knob, why });
        let Some(precision) = self.precision_max else {
            if self.change_rate.is_some() {
                return refuse(
                    Knob::ChangeRate,
                    "the change rate goes with precision_max, the bound it is the rate of"
                        .to_owned(),
                );
            }
            return Ok(None);
        };
        if !(precision > 0.0 && precision <= 1.0) {
            return refuse(
                Knob::PrecisionMax,
                format!("a precision lies in (0, 1], got {precision}"),
            );
        }
        let Some(rate) = self.change_rate else {
            return refuse(
                Knob::PrecisionMax,
                "a precision bound holds at a change rate: give change_rate, the daily \
                 probability that a value changes"
                    .to_owned(),
            );
        };
        if !(0.0..=1.0).contains(&rate) {
            return refuse(
                Knob::ChangeRate,
                format!("the daily probability that a value changes lies in [0, 1], got {rate}"),
            );
        }
        if self.collections.is_some_and(|t| t > 1) {
            return refuse(
                Knob::PrecisionMax,
                "the precision bound is about a fresh report each day, not the ASR after \
                 linked reports of one value (asr_after)"
                    .to_owned(),
            );
        }
        if self.lh_asr == Some(LhAsr::Paper) {
            return refuse(
                Knob::PrecisionMax,
                "the precision bound holds through local hashing's exact ASR, not the \
                 paper's (lh_asr)"
                    .to_owned(),
            );
        }
        match ldp_analytic::change::asr_for_precision(k, rate, precision) {
            Some(asr) => Ok(Some(asr)),
            None => refuse(
                Knob::PrecisionMax,
                format!(
                    "no protocol keeps the change detector's precision at most {precision}: \
                     at a change rate of {rate} random guesses already flag changes with \
                     precision {rate}"
                ),
            ),
        }
    }

    /// The bounds at domain size `k`: those given, the ASR bound tightened by the change
    /// detector's ([`TuneRequest::change_asr_bound`]).
    pub fn bounds_at(&self, k: DomainSize) -> Result<Option<Bounds>, RequestError> {
        let given = self.bounds()?;
        let Some(change) = self.change_asr_bound(k)? else {
            return Ok(given);
        };
        let asr = given
            .and_then(|b| b.iter().find(|(o, _)| *o == Objective::Asr))
            .map_or(change, |(_, a)| a.min(change));
        match given {
            None => Bounds::asr(asr),
            Some(b) => b.with_asr(asr),
        }
        .map(Some)
        .map_err(|error| RequestError::Bound {
            knob: Knob::PrecisionMax,
            value: asr,
            error,
        })
    }

    /// Whether a precision bound leaves `protocol` out: it bounds only the protocols whose
    /// law ignores the domain's labels.
    fn left_out_by_change(&self, protocol: Protocol) -> bool {
        self.precision_max.is_some() && !protocol.family().relabelling_invariant()
    }

    /// The LH ASR form used: the exact one under a precision bound.
    fn lh_asr_used(&self) -> LhAsr {
        match (self.lh_asr, self.precision_max) {
            (Some(form), _) => form,
            (None, Some(_)) => LhAsr::Exact,
            (None, None) => LhAsr::default(),
        }
    }

    /// The tuning options at domain size `k`: [`TuneRequest::options`] with the change
    /// detector's bound resolved ([`TuneRequest::bounds_at`]).
    pub fn options_at(&self, k: DomainSize) -> Result<TuneOptions, RequestError> {
        self.options_with(self.bounds_at(k)?)
    }

    /// The tuning options. A precision bound needs the domain size: use
    /// [`TuneRequest::options_at`].
    pub fn options(&self) -> Result<TuneOptions, RequestError> {
        if self.precision_max.is_some() {
            return Err(RequestError::Change {
                knob: Knob::PrecisionMax,
                why: "a precision bound is an ASR bound that depends on the domain size; \
                      it applies where one protocol is tuned or chosen at a k"
                    .to_owned(),
            });
        }
        self.options_with(self.bounds()?)
    }

    fn options_with(&self, bounds: Option<Bounds>) -> Result<TuneOptions, RequestError> {
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
        let strategy = match (self.strategy, bounds) {
            (None, None) => Strategy::Weighted,
            (None | Some(Strategy::EpsConstraint(_)), Some(b)) => Strategy::EpsConstraint(b),
            (Some(s), Some(_)) => {
                return Err(RequestError::BoundNotTaken {
                    knob: self
                        .first_given(&[SettingGroup::Bounds, SettingGroup::Change])
                        .expect("a bound was given"),
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
            lh_asr: self.lh_asr_used(),
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
        self.check_bias_used(&[protocol], k, eps)?;
        if self.left_out_by_change(protocol) {
            return Err(RequestError::Change {
                knob: Knob::PrecisionMax,
                why: format!(
                    "{}'s law depends on the domain's labels: its change detector has no \
                     form in its ASR",
                    protocol.name()
                ),
            });
        }
        let options = self.options_at(k)?;
        tune(protocol, k, eps, &options).map_err(|error| RequestError::Tuning {
            context: format!("tuning {} at k = {k}, eps = {eps}", protocol.name()),
            error,
        })
    }

    /// The lowest-MSE instance among every protocol under the bounds (the ASR after
    /// `collections` reports where given; a precision bound leaves out the protocols whose
    /// law depends on the domain's labels): [`crate::choose_protocol_among`]. Takes bounds, and no
    /// weights, search or strategy.
    pub fn choose(&self, k: DomainSize, eps: Epsilon) -> Result<Choice, RequestError> {
        if let Some(knob) = self.first_given(&[SettingGroup::Weights, SettingGroup::Method]) {
            return Err(RequestError::ChooseTakesNoWeights(knob));
        }
        let bounds = self.bounds_at(k)?.ok_or(RequestError::ChooseNeedsBounds)?;
        let collections = self.collections.unwrap_or(1);
        check_collections(&[collections])?;
        let poisoning = self.used_poisoning(false)?;
        // A bias setting must change something among the protocols compared (a precision
        // bound leaves FLH and the sketches out).
        let compared: Vec<Protocol> = Protocol::ALL
            .into_iter()
            .filter(|&p| !self.left_out_by_change(p))
            .collect();
        self.check_bias_used(&compared, k, eps)?;
        let settings = TuneOptions {
            lh_asr: self.lh_asr_used(),
            poisoning,
            collections,
            bias: Some(self.bias()?),
            ..TuneOptions::default()
        };
        choose_protocol_among(k, eps, &bounds, &settings, &|p| !self.left_out_by_change(p)).map_err(
            |error| RequestError::Choosing {
                context: format!("choosing a protocol at k = {k}, eps = {eps}"),
                error,
            },
        )
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
}
