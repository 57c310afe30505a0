//! Objectives: attack success (ASR), utility loss (MSE) and, beyond the paper, poisoning
//! gain (EPG) and report size (bits), combined by normalized weights.

use serde::{Deserialize, Serialize};

use crate::error::OptimizeError;

/// One of the objectives a protocol instance is judged by. All are minimized.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Objective {
    /// Expected reconstruction-attack success rate.
    Asr,
    /// Approximate variance per user (the paper's MSE).
    Mse,
    /// Expected poisoning gain of the maximal gain attack.
    Epg,
    /// Expected bits of one report (ldp-analytic's `cost::bits`).
    Bits,
}

impl Objective {
    /// The four objectives, in this order.
    pub const ALL: [Objective; 4] = [
        Objective::Asr,
        Objective::Mse,
        Objective::Epg,
        Objective::Bits,
    ];

    /// Lower-case name: asr, mse, epg, bits.
    pub fn name(self) -> &'static str {
        match self {
            Objective::Asr => "asr",
            Objective::Mse => "mse",
            Objective::Epg => "epg",
            Objective::Bits => "bits",
        }
    }

    fn bit(self) -> u8 {
        1 << self as u8
    }
}

ldp_core::named_knob!(Objective, "objective");

/// A set of objectives: which ones a frontier or a strategy looks at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct ObjectiveSet(u8);

impl ObjectiveSet {
    /// The paper's pair, (ASR, MSE).
    pub const ASR_MSE: ObjectiveSet = ObjectiveSet(0b11);

    /// The set holding `objectives`.
    pub fn of(objectives: &[Objective]) -> Self {
        Self(objectives.iter().fold(0, |m, o| m | o.bit()))
    }

    /// Whether `o` is in the set.
    pub fn contains(self, o: Objective) -> bool {
        self.0 & o.bit() != 0
    }

    /// The members, in [`Objective::ALL`] order.
    pub fn iter(self) -> impl Iterator<Item = Objective> + Clone {
        Objective::ALL
            .into_iter()
            .filter(move |&o| self.contains(o))
    }

    /// Number of members.
    pub fn len(self) -> usize {
        self.0.count_ones() as usize
    }

    /// Whether the set is empty.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }
}

/// The objective values of one candidate.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Objectives {
    /// Expected reconstruction-attack success rate.
    pub asr: f64,
    /// Approximate variance per user (the paper's MSE, n = 1).
    pub mse: f64,
    /// Expected poisoning gain (infinite for SHE, which is never tuned).
    pub epg: f64,
    /// Expected bits of one report.
    pub bits: f64,
}

impl Objectives {
    /// The value of objective `o`.
    pub fn get(&self, o: Objective) -> f64 {
        match o {
            Objective::Asr => self.asr,
            Objective::Mse => self.mse,
            Objective::Epg => self.epg,
            Objective::Bits => self.bits,
        }
    }

    /// Every objective set to `v`.
    pub(crate) fn splat(v: f64) -> Self {
        Self {
            asr: v,
            mse: v,
            epg: v,
            bits: v,
        }
    }

    /// `f` applied to each objective.
    pub(crate) fn map(&self, f: impl Fn(Objective, f64) -> f64) -> Self {
        Self {
            asr: f(Objective::Asr, self.asr),
            mse: f(Objective::Mse, self.mse),
            epg: f(Objective::Epg, self.epg),
            bits: f(Objective::Bits, self.bits),
        }
    }
}

/// Non-negative weights of (ASR, MSE, EPG, bits), normalized to sum to one. The
/// objectives with a positive weight are the ones every strategy looks at
/// ([`Weights::active`]). Validated at construction, and when deserialized.
///
/// ```
/// use ldp_optimize::{Objective, Weights};
/// let w = Weights::new(1.0, 3.0)?;
/// assert_eq!((w.asr(), w.mse(), w.epg(), w.bits()), (0.25, 0.75, 0.0, 0.0));
/// assert_eq!(w.active().len(), 2);
/// let four = Weights::all(1.0, 1.0, 1.0, 1.0)?;
/// assert!(four.active().contains(Objective::Bits));
/// assert!(Weights::new(0.0, 0.0).is_err());
/// assert!(Weights::new(-1.0, 2.0).is_err());
/// # Ok::<(), ldp_optimize::OptimizeError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "WeightFields", into = "WeightFields")]
pub struct Weights {
    asr: f64,
    mse: f64,
    epg: f64,
    bits: f64,
}

/// The serialized weights, validated on the way in.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct WeightFields {
    asr: f64,
    mse: f64,
    #[serde(default)]
    epg: f64,
    #[serde(default)]
    bits: f64,
}

impl TryFrom<WeightFields> for Weights {
    type Error = OptimizeError;
    fn try_from(w: WeightFields) -> Result<Self, OptimizeError> {
        Weights::all(w.asr, w.mse, w.epg, w.bits)
    }
}

impl From<Weights> for WeightFields {
    fn from(w: Weights) -> Self {
        Self {
            asr: w.asr,
            mse: w.mse,
            epg: w.epg,
            bits: w.bits,
        }
    }
}

impl Default for Weights {
    /// The paper's default, w_ASR = w_MSE = 0.5.
    fn default() -> Self {
        Self {
            asr: 0.5,
            mse: 0.5,
            epg: 0.0,
            bits: 0.0,
        }
    }
}

impl Weights {
    /// Weights of ASR and MSE (the paper's two objectives).
    pub fn new(asr: f64, mse: f64) -> Result<Self, OptimizeError> {
        Self::all(asr, mse, 0.0, 0.0)
    }

    /// Weights of ASR, MSE and EPG (EPG as a third objective, which the paper leaves to
    /// future work).
    pub fn with_epg(asr: f64, mse: f64, epg: f64) -> Result<Self, OptimizeError> {
        Self::all(asr, mse, epg, 0.0)
    }

    /// Weights of all four objectives.
    pub fn all(asr: f64, mse: f64, epg: f64, bits: f64) -> Result<Self, OptimizeError> {
        for (name, value) in [("asr", asr), ("mse", mse), ("epg", epg), ("bits", bits)] {
            if !value.is_finite() || value < 0.0 {
                return Err(OptimizeError::Weight { name, value });
            }
        }
        let total = asr + mse + epg + bits;
        if total <= 0.0 {
            return Err(OptimizeError::AllWeightsZero);
        }
        Ok(Self {
            asr: asr / total,
            mse: mse / total,
            epg: epg / total,
            bits: bits / total,
        })
    }

    /// Normalized ASR weight.
    pub fn asr(&self) -> f64 {
        self.asr
    }
    /// Normalized MSE weight.
    pub fn mse(&self) -> f64 {
        self.mse
    }
    /// Normalized EPG weight.
    pub fn epg(&self) -> f64 {
        self.epg
    }
    /// Normalized bits weight.
    pub fn bits(&self) -> f64 {
        self.bits
    }

    /// The weight of objective `o`.
    pub fn get(&self, o: Objective) -> f64 {
        match o {
            Objective::Asr => self.asr,
            Objective::Mse => self.mse,
            Objective::Epg => self.epg,
            Objective::Bits => self.bits,
        }
    }

    /// The objectives with a positive weight.
    pub fn active(&self) -> ObjectiveSet {
        ObjectiveSet(
            Objective::ALL
                .into_iter()
                .filter(|&o| self.get(o) > 0.0)
                .fold(0, |m, o| m | o.bit()),
        )
    }

    /// `sum_i w_i f_i` over the weighted objectives (paper Eq. "objective_function" when
    /// only ASR and MSE are weighted). Objectives of zero weight are skipped, so an
    /// infinite EPG (SHE) does not turn the sum into NaN.
    pub fn weighted_sum(&self, point: &Objectives) -> f64 {
        self.active()
            .iter()
            .map(|o| self.get(o) * point.get(o))
            .sum()
    }
}

/// How objectives are scaled before they are combined or compared.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Scale {
    /// As they are: ASR is a probability, MSE a variance per user (the paper's choice).
    /// At small eps the MSE is orders of magnitude larger than the ASR and dominates.
    #[default]
    Raw,
    /// Each objective min-max scaled to [0, 1] over the candidate set, which makes the
    /// weights unit-free.
    Normalized,
}

/// Maps raw objectives to the chosen scale over a candidate set.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Scaler {
    lo: Objectives,
    span: Objectives,
}

impl Scaler {
    pub(crate) fn new(scale: Scale, points: impl Iterator<Item = Objectives> + Clone) -> Self {
        match scale {
            Scale::Raw => Scaler {
                lo: Objectives::splat(0.0),
                span: Objectives::splat(1.0),
            },
            Scale::Normalized => {
                let range = |o: Objective| {
                    let (lo, hi) = points
                        .clone()
                        .map(|p| p.get(o))
                        .filter(|v| v.is_finite())
                        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
                            (lo.min(v), hi.max(v))
                        });
                    if hi > lo {
                        (lo, hi - lo)
                    } else if lo.is_finite() {
                        (lo, 1.0)
                    } else {
                        (0.0, 1.0)
                    }
                };
                let ranges: Vec<(f64, f64)> = Objective::ALL.iter().map(|&o| range(o)).collect();
                Scaler {
                    lo: Objectives::splat(0.0).map(|o, _| ranges[o as usize].0),
                    span: Objectives::splat(0.0).map(|o, _| ranges[o as usize].1),
                }
            }
        }
    }

    pub(crate) fn apply(&self, p: &Objectives) -> Objectives {
        p.map(|o, v| (v - self.lo.get(o)) / self.span.get(o))
    }
}
