//! Expected poisoning gain (EPG) of the maximal gain attack (Cao et al. 2021).
//!
//! A fraction `beta` of all reports are fake; each fake report supports `s` of the `r`
//! target items. Feeding the estimator of Eq. "estimator" the genuine plus fake reports
//! gives, for the total estimated frequency of the targets,
//! `E[f~_T] - f_T = beta ((s - r q*) / (p* - q*) - f_T)`.
//! UE, THE and LH can support every target (`s = r`, the paper's Eq. "epg_pq"); a GRR
//! report supports one item (`s = 1`); an SS report at most omega (`s = min(r, omega)`).
//! Each family's `(s - r q*) / (p* - q*)` is its [`ClosedForms::fake_report_gain`].

use ldp_core::{
    Clip, ClipBound, DomainSize, FakeFraction, Family, ParamError, Spec, dispatch_family,
};
use serde::{Deserialize, Serialize};

use crate::family::ClosedForms;

/// The attacker's budget and goal.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "PoisoningFields", into = "PoisoningFields")]
pub struct Poisoning {
    beta: FakeFraction,
    targets: u32,
    target_mass: f64,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct PoisoningFields {
    beta: f64,
    targets: u32,
    target_mass: f64,
}

impl From<Poisoning> for PoisoningFields {
    fn from(p: Poisoning) -> Self {
        Self {
            beta: p.beta.get(),
            targets: p.targets,
            target_mass: p.target_mass,
        }
    }
}

impl TryFrom<PoisoningFields> for Poisoning {
    type Error = PoisoningError;
    fn try_from(f: PoisoningFields) -> Result<Self, PoisoningError> {
        Poisoning::new(f.beta, f.targets, f.target_mass)
    }
}

/// A poisoning setting outside its range.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum PoisoningError {
    /// The fake-user fraction is outside `[0, 1)` (ldp-core's [`FakeFraction`]).
    #[error(transparent)]
    Param(#[from] ParamError),
    /// At least one target is needed.
    #[error("the number of targets r must be at least 1")]
    NoTargets,
    /// The targets' true mass is a probability.
    #[error("target mass f_T must lie in [0, 1], got {0}")]
    TargetMass(f64),
    /// More targets than items.
    #[error("{targets} targets exceed the domain size {k}")]
    TooManyTargets {
        /// Number of targets.
        targets: u32,
        /// Domain size.
        k: u32,
    },
    /// A target is not an item of the domain.
    #[error("target {target} is outside the domain 0..{k}")]
    TargetOutsideDomain {
        /// The target.
        target: u32,
        /// Domain size.
        k: usize,
    },
    /// More targets supported per fake report than there are targets.
    #[error("a fake report cannot support {supported} of {targets} targets")]
    Supported {
        /// Targets supported per fake report.
        supported: u32,
        /// Number of targets.
        targets: u32,
    },
    /// The clipped form applies to the families whose servers clip (SHE) only.
    #[error("the clipped gain applies to SHE, whose servers clip, not to the {0:?} family")]
    NotShe(Family),
}

impl Default for Poisoning {
    /// The paper's setting (after Cao et al.): beta = 0.05, r = 1, f_T = 0.01.
    fn default() -> Self {
        Self {
            beta: FakeFraction::new(0.05).expect("0.05 is a fraction"),
            targets: 1,
            target_mass: 0.01,
        }
    }
}

impl Poisoning {
    /// Validated poisoning parameters.
    pub fn new(beta: f64, targets: u32, target_mass: f64) -> Result<Self, PoisoningError> {
        let beta = FakeFraction::new(beta)?;
        if targets == 0 {
            return Err(PoisoningError::NoTargets);
        }
        if !(0.0..=1.0).contains(&target_mass) {
            return Err(PoisoningError::TargetMass(target_mass));
        }
        Ok(Self {
            beta,
            targets,
            target_mass,
        })
    }

    /// Fraction of fake reports among all reports.
    pub fn beta(&self) -> f64 {
        self.beta.get()
    }
    /// Number of target items r.
    pub fn targets(&self) -> u32 {
        self.targets
    }
    /// True frequency mass of the targets among genuine users, f_T.
    pub fn target_mass(&self) -> f64 {
        self.target_mass
    }

    fn check(&self, k: DomainSize) -> Result<(), PoisoningError> {
        if self.targets > k.get() {
            Err(PoisoningError::TooManyTargets {
                targets: self.targets,
                k: k.get(),
            })
        } else {
            Ok(())
        }
    }
}

/// The expected gain, or the statement that it has no bound.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Gain {
    /// A finite expected gain.
    Finite(f64),
    /// The attacker can make the gain arbitrarily large (SHE without clipping: a fake
    /// report may carry any real number on the target coordinates).
    Unbounded,
}

impl Gain {
    /// The finite value, if any.
    pub fn finite(self) -> Option<f64> {
        match self {
            Gain::Finite(v) => Some(v),
            Gain::Unbounded => None,
        }
    }
}

/// EPG of the maximal gain attack for any protocol instance: `beta (g - f_T)` with `g`
/// the expected estimate one fake report adds to the targets (each family's
/// [`ClosedForms::fake_report_gain`]).
///
/// ```
/// use ldp_analytic::epg::{expected, Gain, Poisoning};
/// use ldp_core::{DomainSize, Epsilon, Protocol, Spec};
/// let (k, eps) = (DomainSize::new(100)?, Epsilon::new(4.0)?);
/// let oue = Spec::classic(Protocol::Oue, k, eps)?;
/// let gain = expected(&oue, &Poisoning::default())?.finite().unwrap();
/// // beta (r (1 - q) / (p - q) - f_T) with p = 1/2, q = 1/(e^4 + 1)
/// let q = 1.0 / (4f64.exp() + 1.0);
/// assert!((gain - 0.05 * ((1.0 - q) / (0.5 - q) - 0.01)).abs() < 1e-12);
/// let she = Spec::classic(Protocol::She, k, eps)?;
/// assert_eq!(expected(&she, &Poisoning::default())?, Gain::Unbounded);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn expected(spec: &Spec, attack: &Poisoning) -> Result<Gain, PoisoningError> {
    attack.check(spec.k())?;
    let (k, eps, r) = (spec.k(), spec.eps(), attack.targets);
    let per_fake =
        dispatch_family!(spec.params(), F, param => F::fake_report_gain(k, eps, param, r));
    Ok(match per_fake {
        Some(g) => Gain::Finite(attack.beta() * (g - attack.target_mass)),
        None => Gain::Unbounded,
    })
}

/// EPG when each fake report supports only `supported` of the r targets, as an LH
/// attacker who could not find a seed hashing all targets together achieves, or an HR
/// attacker whose targets lie in several blocks: for the pure protocols
/// `beta ((s - r q*) / (p* - q*) - f_T)`, each family's
/// [`ClosedForms::fake_report_gain_supporting`]. At `s = r` this is [`expected`] for UE,
/// THE and LH; SHE's gain is [`Gain::Unbounded`] whatever s. `supported` is what
/// `ldp_core::AttackSurface::plan_max_gain` finds for the actual targets.
///
/// ```
/// use ldp_analytic::epg::{expected, expected_with_support, Poisoning};
/// use ldp_core::{DomainSize, Epsilon, Protocol, Spec};
/// let olh = Spec::classic(Protocol::Olh, DomainSize::new(100)?, Epsilon::new(4.0)?)?;
/// let attack = Poisoning::new(0.05, 5, 0.0)?;
/// let full = expected(&olh, &attack)?.finite().unwrap();
/// let four = expected_with_support(&olh, &attack, 4)?.finite().unwrap();
/// assert!(four < full);
/// assert!((expected_with_support(&olh, &attack, 5)?.finite().unwrap() - full).abs() < 1e-12);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn expected_with_support(
    spec: &Spec,
    attack: &Poisoning,
    supported: u32,
) -> Result<Gain, PoisoningError> {
    if supported > attack.targets {
        return Err(PoisoningError::Supported {
            supported,
            targets: attack.targets,
        });
    }
    let (k, eps, r) = (spec.k(), spec.eps(), attack.targets);
    let per_fake = dispatch_family!(spec.params(), F, param => F::fake_report_gain_supporting(k, eps, param, r, supported));
    Ok(match per_fake {
        Some(g) => Gain::Finite(attack.beta() * (g - attack.target_mass)),
        None => Gain::Unbounded,
    })
}

/// EPG of the maximal gain attack against a server that clips as `clip` says: for a
/// family whose servers clip (SHE), [`expected_she_clipped`] at the clipping bound, or
/// [`Gain::Unbounded`] without clipping; for the others, whose reports have bounded
/// influence by construction, [`expected`].
///
/// ```
/// use ldp_analytic::epg::{expected, expected_against, Gain, Poisoning};
/// use ldp_core::{Clip, DomainSize, Epsilon, Protocol, Spec};
/// let (k, eps) = (DomainSize::new(100)?, Epsilon::new(1.0)?);
/// let she = Spec::classic(Protocol::She, k, eps)?;
/// let attack = Poisoning::default();
/// assert_eq!(expected_against(&she, &attack, Clip::Off)?, Gain::Unbounded);
/// let clipped = expected_against(&she, &attack, Clip::Recommended)?.finite().unwrap();
/// assert!((clipped - 0.05 * (41.0 - 0.01)).abs() < 1e-12); // c = 1 + 40/eps
/// let oue = Spec::classic(Protocol::Oue, k, eps)?;
/// assert_eq!(expected_against(&oue, &attack, Clip::Off)?, expected(&oue, &attack)?);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn expected_against(
    spec: &Spec,
    attack: &Poisoning,
    clip: Clip,
) -> Result<Gain, PoisoningError> {
    if !spec.family().clips() {
        return expected(spec, attack);
    }
    match clip.bound(spec.eps()) {
        Some(bound) => Ok(Gain::Finite(expected_she_clipped(spec, attack, bound)?)),
        None => {
            attack.check(spec.k())?;
            Ok(Gain::Unbounded)
        }
    }
}

/// The number of the `targets` that one report of `spec`'s family can support: all of
/// them, except for GRR (one item per report) and SS (omega items per report).
///
/// ```
/// use ldp_analytic::epg::supportable_targets;
/// use ldp_core::{DomainSize, Epsilon, Protocol, Spec};
/// let (k, eps) = (DomainSize::new(100)?, Epsilon::new(4.0)?);
/// assert_eq!(supportable_targets(&Spec::classic(Protocol::Grr, k, eps)?, 3), 1);
/// assert_eq!(supportable_targets(&Spec::classic(Protocol::Ss, k, eps)?, 3), 2); // omega = 2
/// assert_eq!(supportable_targets(&Spec::classic(Protocol::Olh, k, eps)?, 3), 3);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn supportable_targets(spec: &Spec, targets: u32) -> u32 {
    let most = spec.support_size_range().map_or(targets, |(_, hi)| hi);
    targets.min(most)
}

/// EPG against SHE when the server clips every report coordinate to `[-bound, bound]`:
/// the best fake report puts `bound` on every target, so the gain is
/// `beta (r bound - f_T)`. This takes the genuine estimate's mean to be `f_T`, i.e.
/// neglects the clipping bias on genuine reports, which is below `(b/2) e^(-(bound - 1)/b)`
/// per coordinate (`b = 2/eps`; about `1e-9 b` at [`ClipBound::recommended`]).
///
/// ```
/// use ldp_analytic::epg::{expected_she_clipped, Poisoning};
/// use ldp_core::{ClipBound, DomainSize, Epsilon, Protocol, Spec};
/// let she = Spec::classic(Protocol::She, DomainSize::new(100)?, Epsilon::new(1.0)?)?;
/// let gain = expected_she_clipped(&she, &Poisoning::default(), ClipBound::recommended(she.eps()))?;
/// assert!((gain - 0.05 * (41.0 - 0.01)).abs() < 1e-12);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn expected_she_clipped(
    spec: &Spec,
    attack: &Poisoning,
    bound: ClipBound,
) -> Result<f64, PoisoningError> {
    let family = spec.family();
    if !family.clips() {
        return Err(PoisoningError::NotShe(family));
    }
    attack.check(spec.k())?;
    Ok(attack.beta() * (f64::from(attack.targets) * bound.get() - attack.target_mass))
}
