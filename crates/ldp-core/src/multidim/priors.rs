//! RS+RFD's priors: one distribution per attribute, published by the server, from which
//! clients draw their fake items.

use rand::Rng;
use rand::distr::weighted::WeightedIndex;
use rand_distr::Distribution;

use super::MultidimError;

/// How far a prior's total may be from one before it is refused (it is then rescaled to
/// sum to one exactly).
pub const PRIOR_SUM_TOLERANCE: f64 = 1e-6;

/// A distribution over the items of each attribute: non-negative, finite, summing to one.
#[derive(Debug, Clone)]
pub struct Priors {
    values: Vec<Vec<f64>>,
    samplers: Vec<WeightedIndex<f64>>,
}

impl PartialEq for Priors {
    fn eq(&self, other: &Self) -> bool {
        self.values == other.values
    }
}

impl Priors {
    /// Checks every prior: at least two items, every value finite and non-negative, the
    /// total within [`PRIOR_SUM_TOLERANCE`] of one. Each is rescaled to sum to one, unless
    /// it does already up to rounding: rescaling again what was rescaled once would move
    /// the values by an ulp, so priors built from their own values are the same priors.
    ///
    /// ```
    /// use ldp_core::multidim::Priors;
    /// let priors = Priors::new(vec![vec![0.5, 0.5], vec![0.2, 0.3, 0.5]])?;
    /// assert_eq!(priors.get(1), &[0.2, 0.3, 0.5]);
    /// assert!(Priors::new(vec![vec![0.7, -0.1, 0.4]]).is_err());
    /// // Weights 1..=6 over their total: rescaled once, then kept.
    /// let skewed = Priors::new(vec![(1..=6).map(|v| f64::from(v) / 21.0).collect()])?;
    /// assert_eq!(Priors::new(skewed.values().to_vec())?, skewed);
    /// # Ok::<(), ldp_core::multidim::MultidimError>(())
    /// ```
    pub fn new(values: Vec<Vec<f64>>) -> Result<Self, MultidimError> {
        if values.is_empty() {
            return Err(MultidimError::NoAttributes);
        }
        let bad = |attribute: usize, reason: String| MultidimError::Prior {
            attribute: attribute as u32,
            reason,
        };
        let mut checked = Vec::with_capacity(values.len());
        let mut samplers = Vec::with_capacity(values.len());
        for (attribute, prior) in values.into_iter().enumerate() {
            if prior.len() < 2 {
                return Err(bad(
                    attribute,
                    format!("it has {} values; a domain has at least 2", prior.len()),
                ));
            }
            if let Some(item) = prior.iter().position(|v| !v.is_finite() || *v < 0.0) {
                return Err(bad(
                    attribute,
                    format!(
                        "the value of item {item} ({}) is not a finite non-negative number",
                        prior[item]
                    ),
                ));
            }
            let total: f64 = prior.iter().sum();
            if (total - 1.0).abs() > PRIOR_SUM_TOLERANCE {
                return Err(bad(attribute, format!("its values sum to {total}, not 1")));
            }
            // Rescaled unless it sums to one up to rounding already: a prior rescaled once
            // (and read back from its JSON, as a file's spec is) is kept as it is, so the
            // collection's spec survives the round trip and its fakes' law with it.
            let rounding = 2.0 * prior.len() as f64 * f64::EPSILON;
            let prior: Vec<f64> = if (total - 1.0).abs() <= rounding {
                prior
            } else {
                prior.into_iter().map(|v| v / total).collect()
            };
            samplers.push(WeightedIndex::new(&prior).map_err(|e| bad(attribute, e.to_string()))?);
            checked.push(prior);
        }
        Ok(Self {
            values: checked,
            samplers,
        })
    }

    /// The number of attributes.
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// Never: a prior has at least one attribute.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// The prior of `attribute` (panics when it is out of range, as slices do).
    pub fn get(&self, attribute: usize) -> &[f64] {
        &self.values[attribute]
    }

    /// Every attribute's prior.
    pub fn values(&self) -> &[Vec<f64>] {
        &self.values
    }

    /// An item of `attribute` drawn from its prior (O(log k)).
    pub(crate) fn sample<R: Rng + ?Sized>(&self, attribute: usize, rng: &mut R) -> u32 {
        self.samplers[attribute].sample(rng) as u32
    }
}

#[cfg(feature = "serde")]
impl serde::Serialize for Priors {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.values.serialize(serializer)
    }
}

#[cfg(feature = "serde")]
impl<'de> serde::Deserialize<'de> for Priors {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let values = Vec::<Vec<f64>>::deserialize(deserializer)?;
        Priors::new(values).map_err(serde::de::Error::custom)
    }
}
