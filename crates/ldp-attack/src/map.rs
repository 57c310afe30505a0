//! The Bayesian (MAP) reconstruction attack with an informative prior, and its exact
//! expected success rate where that is tractable.
//!
//! The paper's attack assumes a uniform prior; an attacker who knows the population
//! distribution guesses `argmax_x P[report | x] prior(x)` (paper Eq.
//! "bayes_attack_general_prior"), which can only do better.

use ldp_core::Mechanism;
pub(crate) use ldp_core::attack_surface::argmax_uniform;
use rand::Rng;
use serde::{Deserialize, Serialize};

use crate::data::Population;

/// The attacker's prior over the items: non-negative finite weights, not all zero, stored
/// normalized. Validated at construction.
///
/// ```
/// use ldp_attack::Prior;
/// let prior = Prior::new(vec![1.0, 3.0])?;
/// assert_eq!(prior.probabilities(), &[0.25, 0.75]);
/// assert!(Prior::new(vec![1.0, -1.0]).is_err());
/// assert!(Prior::new(vec![0.0, 0.0]).is_err());
/// # Ok::<(), ldp_attack::PriorError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "Vec<f64>", into = "Vec<f64>")]
pub struct Prior {
    probs: Vec<f64>,
    log: Vec<f64>,
}

/// A prior that is not a distribution over the domain.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum PriorError {
    /// A weight is negative or not finite.
    #[error("prior weight {index} must be finite and >= 0, got {value}")]
    Weight {
        /// Item of the weight.
        index: usize,
        /// The rejected value.
        value: f64,
    },
    /// Every weight is zero (or there are none).
    #[error("the prior needs at least one positive weight")]
    AllZero,
    /// The prior and the protocol disagree on k.
    #[error("the prior has {found} weights but the domain has k = {expected} items")]
    Length {
        /// k of the protocol.
        expected: usize,
        /// Weights given.
        found: usize,
    },
}

impl Prior {
    /// Normalizes `weights`, one per item.
    pub fn new(weights: Vec<f64>) -> Result<Self, PriorError> {
        if let Some((index, &value)) = weights
            .iter()
            .enumerate()
            .find(|(_, w)| !(w.is_finite() && **w >= 0.0))
        {
            return Err(PriorError::Weight { index, value });
        }
        // Scaled by the largest weight first, so that weights near f64::MAX do not
        // overflow the sum.
        let largest = weights.iter().copied().fold(0.0, f64::max);
        if largest <= 0.0 {
            return Err(PriorError::AllZero);
        }
        let total: f64 = weights.iter().map(|w| w / largest).sum();
        let probs: Vec<f64> = weights.iter().map(|w| w / largest / total).collect();
        let log = probs.iter().map(|p| p.ln()).collect();
        Ok(Self { probs, log })
    }

    /// The population's own distribution: the best prior an attacker could have.
    pub fn from_population(population: &Population) -> Self {
        let counts: Vec<f64> = population.counts().iter().map(|&c| c as f64).collect();
        Self::new(counts).expect("a population has users")
    }

    /// Number of items.
    pub fn len(&self) -> usize {
        self.probs.len()
    }

    /// Whether the prior is over no items (never true for a constructed prior).
    pub fn is_empty(&self) -> bool {
        self.probs.is_empty()
    }

    /// The normalized probabilities.
    pub fn probabilities(&self) -> &[f64] {
        &self.probs
    }

    /// Their natural logs (`-inf` for impossible items).
    pub fn log_probabilities(&self) -> &[f64] {
        &self.log
    }

    /// Checks that the prior covers exactly `k` items.
    pub fn check_len(&self, k: usize) -> Result<(), PriorError> {
        if self.probs.len() == k {
            Ok(())
        } else {
            Err(PriorError::Length {
                expected: k,
                found: self.probs.len(),
            })
        }
    }
}

impl TryFrom<Vec<f64>> for Prior {
    type Error = PriorError;
    fn try_from(weights: Vec<f64>) -> Result<Self, PriorError> {
        Self::new(weights)
    }
}

impl From<Prior> for Vec<f64> {
    fn from(p: Prior) -> Vec<f64> {
        p.probs
    }
}

/// `argmax_x ln P[report | x] + ln prior(x)`, ties broken uniformly at random.
/// The prior must cover the mechanism's k items ([`Prior::check_len`]); `scratch` is
/// reusable memory.
pub fn map_guess<M: Mechanism, R: Rng + ?Sized>(
    mech: &M,
    report: &M::Report,
    prior: &Prior,
    scratch: &mut Vec<f64>,
    rng: &mut R,
) -> u32 {
    debug_assert_eq!(prior.len(), mech.domain_size().as_usize());
    mech.log_likelihoods(report, scratch);
    let scores = prior
        .log
        .iter()
        .zip(scratch.iter())
        .map(|(&lp, &ll)| lp + ll);
    argmax_uniform(scores, rng)
}
