//! Measurements beside their closed forms: which closed form a measured ASR, MSE or
//! poisoning gain is compared with, written once for every front end that shows the two
//! together (`ldp simulate`, the empirical figures of `ldp-experiments`, the browser's
//! `Client.attack`). A [`Row`] is one measured quantity ([`Estimate`]: mean and standard
//! error), the closed form of what was measured, or the reason there is none
//! ([`NoClosedForm`]); the front ends render rows and choose no formula.
//!
//! The pairing:
//!
//! - the paper's reconstruction attack (uniform prior), [`Row::asr`]: [`asr::expected`]
//!   with [`LhAsr::Exact`], for local hashing the exact expectation over hash functions,
//!   which a measurement estimates (the paper's approximation overestimates it);
//! - the MAP attack with a prior, [`Row::map_asr`]: [`map::asr_exact`], none where the
//!   family has no tractable form ([`NoClosedForm::MapAsr`]);
//! - the mean squared error on n users of true frequencies f, [`Row::mse`]:
//!   [`variance::expected_mse`];
//! - the poisoning gain, [`Row::gain`], at the fraction of fake users the simulation
//!   realized with whole users and the targets' true mass ([`Poisoned::setting`]): for
//!   the maximal gain attack, the gain at the targets each fake report supported
//!   ([`epg::expected_with_support`]) where the family's servers do not clip, and the
//!   gain against the server's clipping ([`epg::expected_against`]) where they do
//!   (unbounded without clipping, [`NoClosedForm::Unbounded`]); the random item and
//!   random output attacks have no closed form.
//!
//! ```
//! use ldp_analytic::compare::{NoClosedForm, Poisoned, Row};
//! use ldp_core::simulation::Estimate;
//! use ldp_core::{Clip, DomainSize, Epsilon, PoisonKind, Protocol, Spec};
//! let grr = Spec::classic(Protocol::Grr, DomainSize::new(4)?, Epsilon::new(1.0)?)?;
//! let measured = Estimate { mean: 0.47, se: 0.01 };
//! let asr = Row::asr(&grr, measured);
//! let p = 1f64.exp() / (1f64.exp() + 3.0); // GRR's ASR is p
//! assert!((asr.expected().unwrap() - p).abs() < 1e-12);
//! assert!((asr.z().unwrap() - (0.47 - p) / 0.01).abs() < 1e-9);
//! let truth = [0.25; 4];
//! let random_item = Poisoned {
//!     kind: PoisonKind::Ria,
//!     targets: &[1],
//!     truth: &truth,
//!     users: 1000,
//!     fake_users: 50,
//!     clip: Clip::Recommended,
//!     supported: None,
//! };
//! let gain = Row::gain(&grr, &random_item, Estimate { mean: 0.05, se: 0.01 })?;
//! assert_eq!(gain.closed_form, Err(NoClosedForm::RandomItem));
//! assert_eq!(gain.expected(), None);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use ldp_core::simulation::Estimate;
use ldp_core::{Clip, Family, PoisonKind, Spec};

use crate::epg::{self, Gain, Poisoning, PoisoningError};
use crate::map::{self, PriorLength};
use crate::{LhAsr, asr, variance};

/// What a row measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Quantity {
    /// The reconstruction attack's success rate.
    Asr,
    /// The mean squared error of the unbiased estimate over the k items.
    Mse,
    /// The poisoning gain on the targets' total estimated frequency.
    Gain,
}

impl Quantity {
    /// The columns of `ldp simulate` for the measured mean, its standard error and the
    /// closed form (the gain's closed form is the EPG).
    ///
    /// ```
    /// use ldp_analytic::compare::Quantity;
    /// assert_eq!(Quantity::Asr.columns(), ["asr", "asr_se", "asr_expected"]);
    /// assert_eq!(Quantity::Gain.columns(), ["gain", "gain_se", "epg"]);
    /// ```
    pub fn columns(self) -> [&'static str; 3] {
        match self {
            Quantity::Asr => ["asr", "asr_se", "asr_expected"],
            Quantity::Mse => ["mse", "mse_se", "mse_expected"],
            Quantity::Gain => ["gain", "gain_se", "epg"],
        }
    }
}

/// Why a measured quantity has no closed form beside it.
///
/// ```
/// use ldp_analytic::compare::NoClosedForm;
/// assert_eq!(
///     NoClosedForm::RandomOutput.to_string(),
///     "the random output attack has no closed form"
/// );
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum NoClosedForm {
    /// The MAP attack's exact success rate is tractable only where a report's likelihood
    /// takes two values (GRR, SS, UE, THE, LH; [`map::asr_exact`]).
    #[error("the MAP attack's success rate has no tractable closed form for the {0:?} family")]
    MapAsr(Family),
    /// The maximal gain attack's gain has no bound: a server of a clipping family (SHE)
    /// that does not clip takes any value a fake report carries ([`Gain::Unbounded`]).
    #[error("the maximal gain attack's gain is unbounded against an unclipped {0:?} server")]
    Unbounded(Family),
    /// The random item attack (a target perturbed honestly) has no closed form.
    #[error("the random item attack has no closed form")]
    RandomItem,
    /// The random output attack (a uniformly random report) has no closed form.
    #[error("the random output attack has no closed form")]
    RandomOutput,
}

/// A poisoning attack as a simulation ran it: what the gain's closed form needs.
///
/// ```
/// use ldp_analytic::compare::Poisoned;
/// use ldp_core::{Clip, PoisonKind};
/// let truth = [0.5, 0.3, 0.2];
/// let attack = Poisoned {
///     kind: PoisonKind::Mga,
///     targets: &[1, 2],
///     truth: &truth,
///     users: 95,
///     fake_users: 5,
///     clip: Clip::Recommended,
///     supported: Some(2),
/// };
/// let setting = attack.setting()?;
/// assert_eq!(setting.beta(), 0.05); // 5 fake users among 100
/// assert_eq!(setting.targets(), 2);
/// assert_eq!(setting.target_mass(), 0.5);
/// # Ok::<(), ldp_analytic::PoisoningError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Poisoned<'a> {
    /// The attack.
    pub kind: PoisonKind,
    /// The target items (distinct, in `0..k`).
    pub targets: &'a [u32],
    /// The genuine users' true frequencies, one per item.
    pub truth: &'a [f64],
    /// Genuine users.
    pub users: usize,
    /// Fake users beside them.
    pub fake_users: usize,
    /// How the attacked server clips (a clipping family's only).
    pub clip: Clip,
    /// Targets each fake report of the maximal gain attack supported (what
    /// `ldp_core::AttackSurface::plan_max_gain` found); `None` for the other attacks.
    pub supported: Option<u32>,
}

impl Poisoned<'_> {
    /// The attack as the closed forms take it: the fraction of fake users realized,
    /// `fake_users / (fake_users + users)`, the number of targets, and their true mass
    /// (the sum of their frequencies, at most 1).
    pub fn setting(&self) -> Result<Poisoning, PoisoningError> {
        let k = self.truth.len();
        let mut mass = 0.0;
        for &t in self.targets {
            mass += *self
                .truth
                .get(t as usize)
                .ok_or(PoisoningError::TargetOutsideDomain { target: t, k })?;
        }
        let fakes = self.fake_users as f64;
        let beta = fakes / (fakes + self.users as f64);
        Poisoning::new(beta, self.targets.len() as u32, f64::min(mass, 1.0))
    }

    /// The targets each fake report supported, where that is fewer than one report of
    /// `spec`'s family can support ([`epg::supportable_targets`]): an LH attacker whose
    /// seed search fell short, an HR attacker whose targets lie in several blocks. The
    /// gain's closed form ([`Row::gain`]) is then the gain at that number.
    ///
    /// ```
    /// use ldp_analytic::compare::Poisoned;
    /// use ldp_core::{Clip, DomainSize, Epsilon, PoisonKind, Protocol, Spec};
    /// let (k, eps) = (DomainSize::new(4)?, Epsilon::new(1.0)?);
    /// let truth = [0.25; 4];
    /// let attack = |supported| Poisoned {
    ///     kind: PoisonKind::Mga,
    ///     targets: &[1, 2],
    ///     truth: &truth,
    ///     users: 100,
    ///     fake_users: 5,
    ///     clip: Clip::Recommended,
    ///     supported: Some(supported),
    /// };
    /// let olh = Spec::classic(Protocol::Olh, k, eps)?;
    /// assert_eq!(attack(1).short_support(&olh), Some(1));
    /// assert_eq!(attack(2).short_support(&olh), None);
    /// // A GRR report supports one item: one of two targets is all it can.
    /// let grr = Spec::classic(Protocol::Grr, k, eps)?;
    /// assert_eq!(attack(1).short_support(&grr), None);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn short_support(&self, spec: &Spec) -> Option<u32> {
        let r = self.targets.len() as u32;
        self.supported
            .filter(|&s| s < epg::supportable_targets(spec, r))
    }
}

/// One measured quantity beside its closed form.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Row {
    /// What was measured.
    pub quantity: Quantity,
    /// The measured mean and its standard error.
    pub measured: Estimate,
    /// The closed form's value, or why there is none.
    pub closed_form: Result<f64, NoClosedForm>,
}

impl Row {
    /// The paper's reconstruction attack (uniform prior) measured on `spec`, beside
    /// [`asr::expected`] with [`LhAsr::Exact`].
    ///
    /// ```
    /// use ldp_analytic::{asr, compare::Row, LhAsr};
    /// use ldp_core::simulation::Estimate;
    /// use ldp_core::{DomainSize, Epsilon, Protocol, Spec};
    /// let olh = Spec::classic(Protocol::Olh, DomainSize::new(100)?, Epsilon::new(4.0)?)?;
    /// let row = Row::asr(&olh, Estimate { mean: 0.23, se: 0.002 });
    /// // The exact form, with hash collisions: what a measurement estimates.
    /// assert_eq!(row.expected(), Some(asr::expected(&olh, LhAsr::Exact)));
    /// assert!(row.expected().unwrap() < asr::expected(&olh, LhAsr::Paper));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn asr(spec: &Spec, measured: Estimate) -> Row {
        Row {
            quantity: Quantity::Asr,
            measured,
            closed_form: Ok(asr::expected(spec, LhAsr::Exact)),
        }
    }

    /// The MAP attack with `prior` (one probability per item) measured on `spec`, beside
    /// [`map::asr_exact`]; [`NoClosedForm::MapAsr`] where the family has none.
    ///
    /// ```
    /// use ldp_analytic::compare::{NoClosedForm, Row};
    /// use ldp_core::simulation::Estimate;
    /// use ldp_core::{DomainSize, Epsilon, Family, Protocol, Spec};
    /// let (k, eps) = (DomainSize::new(4)?, Epsilon::new(1.0)?);
    /// let measured = Estimate { mean: 0.6, se: 0.01 };
    /// let prior = [0.7, 0.1, 0.1, 0.1];
    /// let grr = Spec::classic(Protocol::Grr, k, eps)?;
    /// assert!(Row::map_asr(&grr, &prior, measured)?.expected().unwrap() > 0.5);
    /// let she = Spec::classic(Protocol::She, k, eps)?;
    /// assert_eq!(
    ///     Row::map_asr(&she, &prior, measured)?.closed_form,
    ///     Err(NoClosedForm::MapAsr(Family::SummationHistogram))
    /// );
    /// assert!(Row::map_asr(&grr, &prior[..3], measured).is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn map_asr(spec: &Spec, prior: &[f64], measured: Estimate) -> Result<Row, PriorLength> {
        let family = spec.family();
        Ok(Row {
            quantity: Quantity::Asr,
            measured,
            closed_form: map::asr_exact(spec, prior)?.ok_or(NoClosedForm::MapAsr(family)),
        })
    }

    /// The mean squared error measured on `users` users of true frequencies `truth`,
    /// beside [`variance::expected_mse`].
    ///
    /// ```
    /// use ldp_analytic::{compare::Row, variance};
    /// use ldp_core::simulation::Estimate;
    /// use ldp_core::{DomainSize, Epsilon, Protocol, Spec};
    /// let oue = Spec::classic(Protocol::Oue, DomainSize::new(4)?, Epsilon::new(1.0)?)?;
    /// let truth = [0.4, 0.3, 0.2, 0.1];
    /// let row = Row::mse(&oue, &truth, 1000, Estimate { mean: 4e-3, se: 1e-4 });
    /// assert_eq!(row.expected(), Some(variance::expected_mse(&oue, 1000.0, &truth)));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn mse(spec: &Spec, truth: &[f64], users: usize, measured: Estimate) -> Row {
        Row {
            quantity: Quantity::Mse,
            measured,
            closed_form: Ok(variance::expected_mse(spec, users as f64, truth)),
        }
    }

    /// The gain of the poisoning attack `attack` measured on `spec`, beside its closed
    /// form (see the [module](self) for which).
    ///
    /// ```
    /// use ldp_analytic::compare::{NoClosedForm, Poisoned, Row};
    /// use ldp_core::simulation::Estimate;
    /// use ldp_core::{Clip, DomainSize, Epsilon, Family, PoisonKind, Protocol, Spec};
    /// let she = Spec::classic(Protocol::She, DomainSize::new(4)?, Epsilon::new(1.0)?)?;
    /// let truth = [0.25; 4];
    /// let attack = |clip| Poisoned {
    ///     kind: PoisonKind::Mga,
    ///     targets: &[0],
    ///     truth: &truth,
    ///     users: 95,
    ///     fake_users: 5,
    ///     clip,
    ///     supported: Some(1),
    /// };
    /// let measured = Estimate { mean: 2.0, se: 0.1 };
    /// // Clipped at 1 + 40/eps: beta (r c - f_T).
    /// let clipped = Row::gain(&she, &attack(Clip::Recommended), measured)?;
    /// assert!((clipped.expected().unwrap() - 0.05 * (41.0 - 0.25)).abs() < 1e-12);
    /// let unclipped = Row::gain(&she, &attack(Clip::Off), measured)?;
    /// assert_eq!(
    ///     unclipped.closed_form,
    ///     Err(NoClosedForm::Unbounded(Family::SummationHistogram))
    /// );
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn gain(
        spec: &Spec,
        attack: &Poisoned<'_>,
        measured: Estimate,
    ) -> Result<Row, PoisoningError> {
        let setting = attack.setting()?;
        let family = spec.family();
        let gain = match attack.kind {
            // At the targets one fake report supported: fewer than r where no report of
            // the protocol supports them all.
            PoisonKind::Mga => Ok(match attack.supported {
                Some(s) if !family.clips() => epg::expected_with_support(spec, &setting, s)?,
                _ => epg::expected_against(spec, &setting, attack.clip)?,
            }),
            PoisonKind::Ria => Err(NoClosedForm::RandomItem),
            PoisonKind::Roa => Err(NoClosedForm::RandomOutput),
        };
        Ok(Row {
            quantity: Quantity::Gain,
            measured,
            closed_form: gain.and_then(|g| match g {
                Gain::Finite(v) => Ok(v),
                Gain::Unbounded => Err(NoClosedForm::Unbounded(family)),
            }),
        })
    }

    /// The closed form's value, if there is one.
    pub fn expected(&self) -> Option<f64> {
        self.closed_form.ok()
    }

    /// The measured standard error where it is known (not from a single run of a mean
    /// squared error or a gain).
    ///
    /// ```
    /// use ldp_analytic::compare::Row;
    /// use ldp_core::simulation::Estimate;
    /// use ldp_core::{DomainSize, Epsilon, Protocol, Spec};
    /// let grr = Spec::classic(Protocol::Grr, DomainSize::new(4)?, Epsilon::new(1.0)?)?;
    /// let one_run = Estimate::from_runs([0.01].into_iter());
    /// assert_eq!(Row::mse(&grr, &[0.25; 4], 100, one_run).se(), None);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn se(&self) -> Option<f64> {
        self.measured.se.is_finite().then_some(self.measured.se)
    }

    /// The measurement's distance from the closed form in standard errors,
    /// `(mean - expected) / se` (infinite or NaN where the standard error is 0 or
    /// unknown); `None` without a closed form.
    pub fn z(&self) -> Option<f64> {
        self.expected()
            .map(|v| (self.measured.mean - v) / self.measured.se)
    }
}

#[cfg(test)]
mod tests {
    use ldp_core::{DomainSize, Epsilon, FamilyParams, Protocol};

    use super::*;

    fn spec(p: Protocol, k: u32, eps: f64) -> Spec {
        Spec::classic(p, DomainSize::new(k).unwrap(), Epsilon::new(eps).unwrap()).unwrap()
    }

    const MEASURED: Estimate = Estimate {
        mean: 0.1,
        se: 0.01,
    };

    fn attack<'a>(kind: PoisonKind, targets: &'a [u32], truth: &'a [f64]) -> Poisoned<'a> {
        Poisoned {
            kind,
            targets,
            truth,
            users: 950,
            fake_users: 50,
            clip: Clip::Recommended,
            supported: (kind == PoisonKind::Mga).then_some(1),
        }
    }

    fn close(a: Option<f64>, b: Option<f64>) -> bool {
        match (a, b) {
            (Some(a), Some(b)) => (a - b).abs() <= 1e-12 * b.abs().max(1.0),
            _ => false,
        }
    }

    #[test]
    fn subset_selection_of_one_item_is_paired_as_grr() {
        let (k, eps) = (DomainSize::new(10).unwrap(), Epsilon::new(1.5).unwrap());
        let grr = spec(Protocol::Grr, 10, 1.5);
        let ss = Spec::new(k, eps, FamilyParams::SubsetSelection { omega: 1 }).unwrap();
        let truth: Vec<f64> = (1..=10).map(|i| f64::from(i) / 55.0).collect();
        let prior = truth.clone();
        let mga = attack(PoisonKind::Mga, &[2, 7], &truth);
        for (a, b) in [
            (Row::asr(&ss, MEASURED), Row::asr(&grr, MEASURED)),
            (
                Row::map_asr(&ss, &prior, MEASURED).unwrap(),
                Row::map_asr(&grr, &prior, MEASURED).unwrap(),
            ),
            (
                Row::mse(&ss, &truth, 1000, MEASURED),
                Row::mse(&grr, &truth, 1000, MEASURED),
            ),
            (
                Row::gain(&ss, &mga, MEASURED).unwrap(),
                Row::gain(&grr, &mga, MEASURED).unwrap(),
            ),
        ] {
            assert_eq!(a.quantity, b.quantity);
            assert!(close(a.expected(), b.expected()), "{a:?} vs {b:?}");
        }
    }

    #[test]
    fn each_quantity_takes_its_own_closed_form() {
        let olh = spec(Protocol::Olh, 100, 4.0);
        let truth = vec![0.01; 100];
        assert_eq!(
            Row::asr(&olh, MEASURED).expected(),
            Some(asr::expected(&olh, LhAsr::Exact))
        );
        assert_eq!(
            Row::mse(&olh, &truth, 5000, MEASURED).expected(),
            Some(variance::expected_mse(&olh, 5000.0, &truth))
        );
        assert_eq!(
            Row::map_asr(&olh, &truth, MEASURED).unwrap().expected(),
            map::asr_exact(&olh, &truth).unwrap()
        );
        // The maximal gain attack at the targets a fake report supported: one of three.
        let targets = [3, 4, 5];
        let mga = attack(PoisonKind::Mga, &targets, &truth);
        let at_one = Poisoning::new(0.05, 3, 0.03).unwrap();
        let want = epg::expected_with_support(&olh, &at_one, 1)
            .unwrap()
            .finite();
        let got = Row::gain(&olh, &mga, MEASURED).unwrap();
        assert!(close(got.expected(), want), "{got:?} vs {want:?}");
        assert_eq!(mga.short_support(&olh), Some(1));
        // Unknown support: the full form.
        let full = Poisoned {
            supported: None,
            ..mga
        };
        let want = epg::expected(&olh, &at_one).unwrap().finite();
        assert!(close(
            Row::gain(&olh, &full, MEASURED).unwrap().expected(),
            want
        ));
        assert_eq!(full.short_support(&olh), None);
    }

    #[test]
    fn the_random_attacks_have_no_expected_gain() {
        let truth = vec![0.25; 4];
        for p in Protocol::CLASSIC {
            let s = spec(p, 4, 1.0);
            for (kind, why) in [
                (PoisonKind::Ria, NoClosedForm::RandomItem),
                (PoisonKind::Roa, NoClosedForm::RandomOutput),
            ] {
                let row = Row::gain(&s, &attack(kind, &[1], &truth), MEASURED).unwrap();
                assert_eq!(row.quantity, Quantity::Gain);
                assert_eq!(row.closed_form, Err(why), "{p}");
                assert_eq!((row.expected(), row.z()), (None, None));
                assert_eq!(row.se(), Some(0.01));
            }
        }
    }

    #[test]
    fn a_clipping_server_sets_the_gain_and_an_unclipped_one_bounds_nothing() {
        let she = spec(Protocol::She, 4, 2.0);
        let truth = vec![0.25; 4];
        let mga = attack(PoisonKind::Mga, &[0, 1], &truth);
        let at = |clip| Row::gain(&she, &Poisoned { clip, ..mga }, MEASURED).unwrap();
        // Clipped at c: beta (r c - f_T), whatever the support found.
        let c = 1.0 + 40.0 / 2.0;
        assert!(close(
            at(Clip::Recommended).expected(),
            Some(0.05 * (2.0 * c - 0.5))
        ));
        assert_eq!(
            at(Clip::Off).closed_form,
            Err(NoClosedForm::Unbounded(Family::SummationHistogram))
        );
        // A family that does not clip ignores the clipping rule.
        let oue = spec(Protocol::Oue, 4, 2.0);
        let full = Poisoned {
            supported: Some(2),
            ..mga
        };
        let off = Row::gain(
            &oue,
            &Poisoned {
                clip: Clip::Off,
                ..full
            },
            MEASURED,
        );
        assert_eq!(off, Row::gain(&oue, &full, MEASURED));
    }

    #[test]
    fn a_target_outside_the_truth_is_refused() {
        let grr = spec(Protocol::Grr, 4, 1.0);
        let truth = vec![0.25; 4];
        let bad = attack(PoisonKind::Mga, &[4], &truth);
        assert_eq!(
            Row::gain(&grr, &bad, MEASURED),
            Err(PoisoningError::TargetOutsideDomain { target: 4, k: 4 })
        );
    }

    #[test]
    fn z_is_the_distance_in_standard_errors() {
        let grr = spec(Protocol::Grr, 4, 1.0);
        let row = Row::asr(&grr, MEASURED);
        let p = row.expected().unwrap();
        assert_eq!(row.z(), Some((0.1 - p) / 0.01));
        let she = spec(Protocol::She, 4, 1.0);
        let no_form = Row::map_asr(&she, &[0.25; 4], MEASURED).unwrap();
        assert_eq!(no_form.z(), None);
    }
}
