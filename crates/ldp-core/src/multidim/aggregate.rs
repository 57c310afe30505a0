//! The multidimensional server: one aggregator per attribute, and each attribute's
//! estimate with the fakes taken out.

use crate::aggregate::{Aggregator, checked_count};
use crate::error::AggregateError;
use crate::estimate::{Channel, Estimator, Fit, FitOptions};
use crate::mechanism::Mechanism;

use super::{Multidim, MultidimError, MultidimReport, Solution};

/// The server of a [`Multidim`] collection: per attribute, an aggregator of its reports
/// (every user's for SPL and the RS+ solutions, those who sampled it for SMP).
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(try_from = "MultidimAggregatorState<M>", bound = "M: Mechanism")
)]
pub struct MultidimAggregator<M: Mechanism> {
    mechanism: Multidim<M>,
    n: u64,
    attributes: Vec<M::Aggregator>,
}

#[cfg(feature = "serde")]
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields, bound = "M: Mechanism")]
struct MultidimAggregatorState<M: Mechanism> {
    mechanism: Multidim<M>,
    n: u64,
    attributes: Vec<M::Aggregator>,
}

#[cfg(feature = "serde")]
impl<M: Mechanism> TryFrom<MultidimAggregatorState<M>> for MultidimAggregator<M> {
    type Error = MultidimError;
    fn try_from(state: MultidimAggregatorState<M>) -> Result<Self, MultidimError> {
        let corrupt = |reason: String| {
            MultidimError::aggregate(None, AggregateError::CorruptState { reason })
        };
        let MultidimAggregatorState {
            mechanism,
            n,
            attributes,
        } = state;
        if attributes.len() != mechanism.dimensions() {
            return Err(corrupt(format!(
                "{} aggregators for {} attributes",
                attributes.len(),
                mechanism.dimensions()
            )));
        }
        if let Some(j) =
            (0..attributes.len()).find(|&j| attributes[j].mechanism() != &mechanism.attributes()[j])
        {
            return Err(corrupt(format!(
                "attribute {j}'s aggregator is of another mechanism"
            )));
        }
        let counts = attributes.iter().map(Aggregator::count);
        let consistent = if mechanism.solution().names_its_attribute() {
            counts.map(u128::from).sum::<u128>() == u128::from(n)
        } else {
            counts.into_iter().all(|c| c == n)
        };
        if !consistent {
            return Err(corrupt(format!(
                "the attributes' report counts do not add up to the {n} users"
            )));
        }
        Ok(Self {
            mechanism,
            n,
            attributes,
        })
    }
}

impl<M: Mechanism> MultidimAggregator<M> {
    /// An empty server for `mechanism`.
    pub fn new(mechanism: Multidim<M>) -> Self {
        let attributes = mechanism.attributes().iter().map(M::aggregator).collect();
        Self {
            mechanism,
            n: 0,
            attributes,
        }
    }

    /// The client these reports come from.
    pub fn mechanism(&self) -> &Multidim<M> {
        &self.mechanism
    }

    /// Adds one user's report, after checking all of it: an invalid report adds nothing.
    pub fn add(&mut self, report: &MultidimReport<M::Report>) -> Result<(), MultidimError> {
        self.mechanism.validate(report)?;
        let n = checked_count(self.n, 1).map_err(|e| MultidimError::aggregate(None, e))?;
        // Each attribute counts at most n reports: no add below can overflow once n does
        // not, and each report was validated above.
        match report {
            MultidimReport::Sampled { attribute, report } => {
                let j = *attribute as usize;
                self.attributes[j]
                    .add(report)
                    .map_err(|e| MultidimError::aggregate(Some(j), e))?;
            }
            MultidimReport::Every(reports) => {
                for (j, (aggregator, r)) in self.attributes.iter_mut().zip(reports).enumerate() {
                    aggregator
                        .add(r)
                        .map_err(|e| MultidimError::aggregate(Some(j), e))?;
                }
            }
        }
        self.n = n;
        Ok(())
    }

    /// Adds everything `other` aggregated: both must serve the same client.
    pub fn merge(&mut self, other: &Self) -> Result<(), MultidimError> {
        if self.mechanism != other.mechanism {
            return Err(MultidimError::aggregate(
                None,
                AggregateError::Incompatible {
                    left: format!("{:?}", self.mechanism),
                    right: format!("{:?}", other.mechanism),
                },
            ));
        }
        let n = checked_count(self.n, other.n).map_err(|e| MultidimError::aggregate(None, e))?;
        for (j, (mine, theirs)) in self
            .attributes
            .iter_mut()
            .zip(&other.attributes)
            .enumerate()
        {
            mine.merge(theirs)
                .map_err(|e| MultidimError::aggregate(Some(j), e))?;
        }
        self.n = n;
        Ok(())
    }

    /// The users aggregated.
    pub fn count(&self) -> u64 {
        self.n
    }

    /// The aggregator of `attribute`'s reports (panics when it is out of range).
    pub fn attribute(&self, attribute: usize) -> &M::Aggregator {
        &self.attributes[attribute]
    }

    /// Every attribute's estimate.
    pub fn estimate(&self, estimator: Estimator) -> Result<Vec<Vec<f64>>, MultidimError> {
        (0..self.attributes.len())
            .map(|j| {
                self.fit(j, estimator, &FitOptions::default())
                    .map(|fit| fit.values)
            })
            .collect()
    }

    /// The estimate of `attribute`'s frequencies.
    ///
    /// SPL and SMP estimate each attribute as its family does. The RS+ solutions take the
    /// fakes out: with `phi` the fakes' law ([`Multidim::fake_law`]) the reports of
    /// attribute `j` are those of inputs drawn from `g = f / d + (d - 1) / d phi`, so
    ///
    /// # Formula
    ///
    /// ```text
    /// f_v = d g_v - (d - 1) phi_v
    /// p*' = p* / d + (d - 1) / d s,   q*' = q* / d + (d - 1) / d s
    /// ```
    ///
    /// with `g` the family's unbiased estimate, to which the estimator's post-processing
    /// is then applied. The estimators that read the channel (IBU, MLE, Base-Cut) use the
    /// shifted `(p*', q*')` instead, with `s` the probability that a fake supports a given
    /// item: `q* + (p* - q*) / k` for uniform fakes, `q*` for reports of no item. RS+RFD's
    /// fakes support each item with its own probability, so no single channel describes
    /// them: those estimators are refused there.
    pub fn fit(
        &self,
        attribute: usize,
        estimator: Estimator,
        options: &FitOptions,
    ) -> Result<Fit, MultidimError> {
        let aggregator = self
            .attributes
            .get(attribute)
            .ok_or(MultidimError::NoSuchAttribute {
                attribute,
                d: self.attributes.len(),
            })?;
        self.mechanism
            .fit_attribute(attribute, aggregator, estimator, options)
    }
}

impl<M: Mechanism> Multidim<M> {
    /// The estimate of `attribute`'s frequencies from `aggregator`, the aggregator of that
    /// attribute's reports alone (those of every user for SPL and the RS+ solutions, of
    /// the users who sampled it for SMP): what [`MultidimAggregator::fit`] returns, for a
    /// server that aggregates one attribute's reports apart from the others (a query
    /// engine's aggregate function over one column). The RS+ correction and the shifted
    /// channel are described there; the users are `aggregator.count()` under RS+, whose
    /// every user reports every attribute.
    ///
    /// `aggregator` must be one of `attribute`'s mechanism (an error otherwise).
    ///
    /// ```
    /// use ldp_core::multidim::{Multidim, Solution};
    /// use ldp_core::simulation::{stream_rng, Role};
    /// use ldp_core::estimate::FitOptions;
    /// use ldp_core::{Aggregator, DomainSize, Epsilon, Estimator, Grr, Mechanism};
    ///
    /// let domains = [DomainSize::new(4)?, DomainSize::new(3)?];
    /// let rsfd = Multidim::new(Solution::RsFd, Epsilon::new(2.0)?, &domains, Grr::new)?;
    /// let mut server = rsfd.aggregator();
    /// // Attribute 1's column, aggregated on its own.
    /// let mut column = rsfd.attribute(1)?.aggregator();
    /// let mut rng = stream_rng(3, 0, Role::Genuine, 0);
    /// for user in 0..2_000u32 {
    ///     let report = rsfd.perturb(&[user % 4, user % 3], &mut rng)?;
    ///     server.add(&report)?;
    ///     if let Some(r) = report.of(1) {
    ///         column.add(r)?;
    ///     }
    /// }
    /// let options = FitOptions::default();
    /// let alone = rsfd.fit_attribute(1, &column, Estimator::Unbiased, &options)?;
    /// assert_eq!(alone.values, server.fit(1, Estimator::Unbiased, &options)?.values);
    /// assert!(rsfd.fit_attribute(2, &column, Estimator::Unbiased, &options).is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn fit_attribute(
        &self,
        attribute: usize,
        aggregator: &M::Aggregator,
        estimator: Estimator,
        options: &FitOptions,
    ) -> Result<Fit, MultidimError> {
        let mechanism = self.attribute(attribute)?;
        let fail = |e| MultidimError::aggregate(Some(attribute), e);
        if aggregator.mechanism() != mechanism {
            return Err(fail(AggregateError::Incompatible {
                left: format!("{:?}", mechanism.spec()),
                right: format!("{:?}", aggregator.mechanism().spec()),
            }));
        }
        if !self.solution().fakes() {
            return aggregator.fit(estimator, options).map_err(fail);
        }
        let d = self.dimensions() as f64;
        if !estimator.needs_channel() {
            let phi = self.fake_law(attribute);
            let raw = aggregator.raw_estimate().map_err(fail)?;
            let unfaked = raw
                .iter()
                .zip(&phi)
                .map(|(g, phi)| d * g - (d - 1.0) * phi)
                .collect();
            return estimator.apply(unfaked).map(Fit::direct).map_err(fail);
        }
        let refuse = |why: &str| {
            fail(AggregateError::NeedsChannel {
                estimator: estimator.name(),
                why: why.into(),
            })
        };
        let channel = aggregator
            .channel()
            .ok_or_else(|| refuse("these reports have no single (p*, q*)"))?;
        let counts = aggregator
            .support_counts()
            .ok_or_else(|| refuse("this aggregator has no support counts"))?;
        let k = mechanism.domain_size().as_f64();
        let fake_support = match self.solution() {
            Solution::RsFd => channel.q + (channel.p - channel.q) / k,
            Solution::RsFdNull => channel.q,
            _ => {
                return Err(refuse(
                    "RS+RFD's fakes support each item with its own probability",
                ));
            }
        };
        let shift = (d - 1.0) / d * fake_support;
        let shifted = Channel {
            p: channel.p / d + shift,
            q: channel.q / d + shift,
            one_item_per_report: channel.one_item_per_report,
        };
        if aggregator.count() == 0 {
            return Err(fail(AggregateError::Empty));
        }
        estimator
            .from_counts(&counts, aggregator.count(), shifted, options)
            .map_err(fail)
    }
}
