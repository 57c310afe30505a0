//! Poisoning attacks (Cao, Jia and Gong 2021): fake users inject crafted reports to raise
//! the estimated frequency of target items.

use ldp_core::{Clip, FakeFraction, ParamError};
use serde::{Deserialize, Serialize};

pub use ldp_core::PoisonKind;

/// The attacker's target items: non-empty, distinct, kept sorted.
///
/// ```
/// use ldp_attack::Targets;
/// assert_eq!(Targets::new(vec![9, 2])?.items(), &[2, 9]);
/// assert!(Targets::new(vec![]).is_err());
/// assert!(Targets::new(vec![3, 3]).is_err());
/// # Ok::<(), ldp_attack::PoisonError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "Vec<u32>", into = "Vec<u32>")]
pub struct Targets(Vec<u32>);

impl Targets {
    /// Validates and sorts `items`.
    pub fn new(mut items: Vec<u32>) -> Result<Self, PoisonError> {
        if items.is_empty() {
            return Err(PoisonError::NoTargets);
        }
        items.sort_unstable();
        if let Some(w) = items.windows(2).find(|w| w[0] == w[1]) {
            return Err(PoisonError::DuplicateTarget(w[0]));
        }
        Ok(Self(items))
    }

    /// The targets, increasing.
    pub fn items(&self) -> &[u32] {
        &self.0
    }

    /// Number of targets r.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Always false: there is at least one target.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The largest target, which must lie in the domain.
    pub fn max(&self) -> u32 {
        *self.0.last().expect("non-empty")
    }
}

impl TryFrom<Vec<u32>> for Targets {
    type Error = PoisonError;
    fn try_from(items: Vec<u32>) -> Result<Self, PoisonError> {
        Self::new(items)
    }
}

impl From<Targets> for Vec<u32> {
    fn from(t: Targets) -> Vec<u32> {
        t.0
    }
}

/// An invalid poisoning setting.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum PoisonError {
    /// The fake-user fraction or the SHE clipping bound is out of range.
    #[error(transparent)]
    Param(#[from] ParamError),
    /// At least one target is needed.
    #[error("at least one target is needed")]
    NoTargets,
    /// A target is listed twice.
    #[error("target {0} is listed twice")]
    DuplicateTarget(u32),
}

/// A poisoning attack to simulate alongside the genuine users, validated at construction.
///
/// ```
/// use ldp_attack::{PoisonConfig, PoisonKind};
/// let attack = PoisonConfig::new(PoisonKind::Mga, 0.05, vec![20, 21])?;
/// assert_eq!(attack.beta().get(), 0.05);
/// assert!(PoisonConfig::new(PoisonKind::Mga, 1.0, vec![20]).is_err());
/// # Ok::<(), ldp_attack::PoisonError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PoisonConfig {
    kind: PoisonKind,
    beta: FakeFraction,
    targets: Targets,
    #[serde(default)]
    clip: Clip,
}

impl PoisonConfig {
    /// `kind` with a fraction `beta` of fake users against `targets`. A server of a
    /// clipping family (SHE) clips at the recommended bound unless
    /// [`PoisonConfig::with_clip`] says otherwise.
    pub fn new(kind: PoisonKind, beta: f64, targets: Vec<u32>) -> Result<Self, PoisonError> {
        Ok(Self {
            kind,
            beta: FakeFraction::new(beta)?,
            targets: Targets::new(targets)?,
            clip: Clip::Recommended,
        })
    }

    /// How the attacked server clips (SHE; the other families ignore it).
    pub fn with_clip(self, clip: Clip) -> Self {
        Self { clip, ..self }
    }

    /// The attack.
    pub fn kind(&self) -> PoisonKind {
        self.kind
    }

    /// Fraction of fake reports among all reports.
    pub fn beta(&self) -> FakeFraction {
        self.beta
    }

    /// The targets.
    pub fn targets(&self) -> &Targets {
        &self.targets
    }

    /// How the attacked server clips.
    pub fn clip(&self) -> Clip {
        self.clip
    }
}
