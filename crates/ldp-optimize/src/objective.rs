//! Objectives: attack success (ASR), utility loss (MSE) and, beyond the paper, poisoning
//! gain (EPG), combined by normalized weights.

use serde::{Deserialize, Serialize};

use crate::error::OptimizeError;

/// Non-negative weights of (ASR, MSE, EPG), normalized to sum to one.
///
/// ```
/// use ldp_optimize::Weights;
/// let w = Weights::new(1.0, 3.0)?;
/// assert_eq!((w.asr(), w.mse(), w.epg()), (0.25, 0.75, 0.0));
/// assert!(Weights::new(0.0, 0.0).is_err());
/// assert!(Weights::new(-1.0, 2.0).is_err());
/// # Ok::<(), ldp_optimize::OptimizeError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Weights {
    asr: f64,
    mse: f64,
    epg: f64,
}

impl Default for Weights {
    /// The paper's default, w_ASR = w_MSE = 0.5.
    fn default() -> Self {
        Self {
            asr: 0.5,
            mse: 0.5,
            epg: 0.0,
        }
    }
}

impl Weights {
    /// Weights of ASR and MSE (the paper's two objectives).
    pub fn new(asr: f64, mse: f64) -> Result<Self, OptimizeError> {
        Self::with_epg(asr, mse, 0.0)
    }

    /// Weights of ASR, MSE and EPG (EPG as a third objective, which the paper leaves to
    /// future work).
    pub fn with_epg(asr: f64, mse: f64, epg: f64) -> Result<Self, OptimizeError> {
        for (name, value) in [("asr", asr), ("mse", mse), ("epg", epg)] {
            if !value.is_finite() || value < 0.0 {
                return Err(OptimizeError::Weight { name, value });
            }
        }
        let total = asr + mse + epg;
        if total <= 0.0 {
            return Err(OptimizeError::AllWeightsZero);
        }
        Ok(Self {
            asr: asr / total,
            mse: mse / total,
            epg: epg / total,
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

    /// `w_ASR ASR + w_MSE MSE + w_EPG EPG` (paper Eq. "objective_function" when w_EPG = 0).
    pub fn weighted_sum(&self, point: &Objectives) -> f64 {
        let epg = if self.epg > 0.0 {
            self.epg * point.epg
        } else {
            0.0
        };
        self.asr * point.asr + self.mse * point.mse + epg
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
                lo: Objectives {
                    asr: 0.0,
                    mse: 0.0,
                    epg: 0.0,
                },
                span: Objectives {
                    asr: 1.0,
                    mse: 1.0,
                    epg: 1.0,
                },
            },
            Scale::Normalized => {
                let range = |f: fn(&Objectives) -> f64| {
                    let (lo, hi) = points
                        .clone()
                        .map(|p| f(&p))
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
                let (asr, mse, epg) = (range(|p| p.asr), range(|p| p.mse), range(|p| p.epg));
                Scaler {
                    lo: Objectives {
                        asr: asr.0,
                        mse: mse.0,
                        epg: epg.0,
                    },
                    span: Objectives {
                        asr: asr.1,
                        mse: mse.1,
                        epg: epg.1,
                    },
                }
            }
        }
    }

    pub(crate) fn apply(&self, p: &Objectives) -> Objectives {
        Objectives {
            asr: (p.asr - self.lo.asr) / self.span.asr,
            mse: (p.mse - self.lo.mse) / self.span.mse,
            epg: (p.epg - self.lo.epg) / self.span.epg,
        }
    }
}
