//! The law of a report's support given the true item, shared by the families whose
//! likelihood takes two values per report (`c_y rho` on the supported items, `c_y`
//! elsewhere): from it follow the one-shot ASR of the uniform-over-support attack, the ASR
//! after t linked reports, the pairwise rates of [`crate::longitudinal::error_exponent`] and
//! the MAP attack's exact success rate.

use ldp_core::DomainSize;

use crate::{asr, longitudinal, map};

/// How one report supports items when the true item is x.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SupportLaw {
    /// Exactly `size` items: x with probability `p`, and the others a uniform subset of
    /// the remaining k - 1 items (GRR: size 1, p = p*; SS: size omega).
    UniformSubset {
        /// Items per report.
        size: u32,
        /// Probability that x is among them.
        p: f64,
    },
    /// x with probability `p`, and every other item independently with probability `q`
    /// (UE and THE; LH under an ideal hash, whose other items collide with a report with
    /// probability 1/g).
    Independent {
        /// Probability that x is supported.
        p: f64,
        /// Probability that another item is supported.
        q: f64,
    },
}

impl SupportLaw {
    /// Expected success rate of a uniform guess among the supported items (uniform over the
    /// domain when none is): `p / size` for a uniform subset (`e^eps / (w e^eps + k - w)`
    /// for SS), [`asr::ones`] for independent supports.
    pub fn asr(self, k: DomainSize) -> f64 {
        match self {
            SupportLaw::UniformSubset { size, p } => p / f64::from(size),
            SupportLaw::Independent { p, q } => asr::ones(k, p, q),
        }
    }

    /// Exact ASR of the most-supported-item guess after `t` linked reports (ties
    /// uniform): multinomial counts for one item per report, independent counts for
    /// independent supports; `None` for subsets of more than one item, whose counts are
    /// dependent.
    pub fn asr_after(self, k: DomainSize, t: u32) -> Option<f64> {
        match self {
            SupportLaw::UniformSubset { size: 1, p } => Some(longitudinal::multinomial(k, t, p)),
            SupportLaw::UniformSubset { .. } => None,
            SupportLaw::Independent { p, q } => Some(longitudinal::independent_counts(k, t, p, q)),
        }
    }

    /// `(P10, P01)`: one report supports x and not a given other item y, and the reverse.
    pub fn pairwise(self, k: DomainSize) -> (f64, f64) {
        let k = k.as_f64();
        match self {
            SupportLaw::UniformSubset { size, p } => {
                let w = f64::from(size);
                (p * (1.0 - (w - 1.0) / (k - 1.0)), (1.0 - p) * w / (k - 1.0))
            }
            SupportLaw::Independent { p, q } => (p * (1.0 - q), (1.0 - p) * q),
        }
    }

    /// Exact success rate of the MAP attack for a prior sorted decreasingly.
    pub fn map_asr(self, sorted_prior: &[f64]) -> f64 {
        match self {
            SupportLaw::UniformSubset { size, p } => {
                map::subset_sum(sorted_prior, size as usize, p)
            }
            SupportLaw::Independent { p, q } => {
                let rho = p * (1.0 - q) / ((1.0 - p) * q);
                (1.0 - p) / (1.0 - q) * map::product_sum(sorted_prior, q, rho)
            }
        }
    }
}
