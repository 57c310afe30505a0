//! Several attributes per user: SPL, SMP, RS+FD and RS+RFD as combinators over any
//! one-shot mechanism.
//!
//! A user holds one item of each of `d` attributes (age, occupation, …), attribute `j`
//! over its own domain `0..k_j`. [`Multidim`] wraps one mechanism per attribute, all of
//! one family, and spends the user's budget on them as its [`Solution`] says: SPL splits
//! it, SMP samples one attribute, and the RS+ solutions sample one and hide it among fake
//! reports of the others (Arcolezi et al., "Random Sampling Plus Fake Data", CIKM 2021;
//! RS+RFD: Arcolezi, Gambs, Couchot and Palamidessi, PVLDB 16(5), 2023). From a family
//! the combinator needs only [`Mechanism::perturb`] (a fake is the report of a uniform
//! item, or of a prior's), its likelihoods (for audits and attribute inference), and
//! for RS+FD-z the family's report of no item ([`Mechanism::NULL_INPUT`]).
//!
//! The server ([`MultidimAggregator`]) keeps one aggregator per attribute. A fake shifts
//! each attribute's input distribution to `g = f / d + (d - 1) / d phi`, with `phi` the
//! fakes' law (uniform, zero for no item, or the prior), so any family's unbiased estimate
//! of `g` gives `f = d g - (d - 1) phi`, and the estimators that read the channel take the
//! shifted `(p*, q*)` wherever the fakes support every item alike (not RS+RFD's).
//!
//! **What the budget protects.** SPL and SMP are `eps`-LDP for the whole tuple. The RS+
//! solutions report at `eps' = ln(d (e^eps - 1) + 1) > eps`, and a user whose every
//! attribute changes is protected at `eps'` only: the report of a user whose items all
//! match it is `e^eps'` times as likely as that of one whose items match none. The
//! anchors' `eps` bounds the change of one attribute's value, and exactly so for UE-z
//! and for GRR over equal domains; over unequal domains GRR exceeds it (k = 2 and 3 at
//! eps = 1: `e^1.072`), and UE-r's uniform fakes exceed it too.
//! `tests/integration/multidim.rs` computes these ratios exactly, from the likelihoods.
//!
//! ```
//! use ldp_core::multidim::{Multidim, Solution};
//! use ldp_core::simulation::{stream_rng, Role};
//! use ldp_core::{DomainSize, Epsilon, Estimator, UnaryEncoding};
//!
//! let domains = [DomainSize::new(4)?, DomainSize::new(3)?];
//! let rsfd = Multidim::new(Solution::RsFd, Epsilon::new(2.0)?, &domains, UnaryEncoding::optimized)?;
//! let mut server = rsfd.aggregator();
//! let mut rng = stream_rng(7, 0, Role::Genuine, 0);
//! for user in 0..20_000u32 {
//!     server.add(&rsfd.perturb(&[user % 4, (user % 3).min(1)], &mut rng)?)?;
//! }
//! let freq = server.estimate(Estimator::Unbiased)?;
//! assert!((freq[0][2] - 0.25).abs() < 0.05);       // attribute 0 is uniform
//! assert!((freq[1][2] - 0.0).abs() < 0.05);        // nobody holds item 2 of attribute 1
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod aggregate;
mod error;
mod priors;
mod report;
mod solution;
mod spec;

pub use aggregate::MultidimAggregator;
pub use error::MultidimError;
pub use priors::{PRIOR_SUM_TOLERANCE, Priors};
pub use report::MultidimReport;
pub use solution::{Solution, UnknownSolution};
pub use spec::MultidimSpec;

use rand::{Rng, RngExt};

use crate::error::{ParamError, ReportError};
use crate::mechanism::Mechanism;
use crate::vocab::{DomainSize, Epsilon};

/// A multidimensional client: one mechanism per attribute, all at the per-report budget
/// of its [`Solution`], and RS+RFD's priors.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(try_from = "MultidimState<M>", bound = "M: Mechanism")
)]
pub struct Multidim<M> {
    solution: Solution,
    eps: Epsilon,
    attributes: Vec<M>,
    #[cfg_attr(feature = "serde", serde(skip_serializing_if = "Option::is_none"))]
    priors: Option<Priors>,
}

#[cfg(feature = "serde")]
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields, bound = "M: Mechanism")]
struct MultidimState<M> {
    solution: Solution,
    eps: Epsilon,
    attributes: Vec<M>,
    #[serde(default)]
    priors: Option<Priors>,
}

#[cfg(feature = "serde")]
impl<M: Mechanism> TryFrom<MultidimState<M>> for Multidim<M> {
    type Error = MultidimError;
    fn try_from(state: MultidimState<M>) -> Result<Self, MultidimError> {
        let mut given = state.attributes.into_iter();
        let domains: Vec<DomainSize> = given.as_slice().iter().map(M::domain_size).collect();
        // The stored mechanisms are rebuilt by the checks of `assemble`, which compare each
        // to the solution's budget.
        Self::assemble(state.solution, state.eps, &domains, state.priors, |_, _| {
            given.next().ok_or(ParamError::Parameter {
                name: "attributes",
                description: "the stored mechanisms",
                requirement: "be one per attribute".into(),
                value: f64::NAN,
            })
        })
    }
}

impl<M: Mechanism> Multidim<M> {
    /// The client of `solution` (any but RS+RFD, see [`Multidim::with_priors`]) for a user
    /// with budget `eps` and one item of each domain in `domains`; `build(k, eps_report)`
    /// makes an attribute's mechanism, e.g. `UnaryEncoding::optimized` or a closure over a
    /// preset.
    pub fn new(
        solution: Solution,
        eps: Epsilon,
        domains: &[DomainSize],
        build: impl FnMut(DomainSize, Epsilon) -> Result<M, ParamError>,
    ) -> Result<Self, MultidimError> {
        if solution == Solution::RsRfd {
            return Err(MultidimError::Priors(
                "RS+RFD draws its fakes from priors: build it with Multidim::with_priors",
            ));
        }
        Self::assemble(solution, eps, domains, None, build)
    }

    /// The RS+RFD client: fakes of items drawn from `priors`, one per attribute (its
    /// length is the attribute's domain size).
    pub fn with_priors(
        eps: Epsilon,
        priors: Priors,
        build: impl FnMut(DomainSize, Epsilon) -> Result<M, ParamError>,
    ) -> Result<Self, MultidimError> {
        let domains = priors
            .values()
            .iter()
            .enumerate()
            .map(|(j, prior)| {
                DomainSize::new(prior.len() as u32).map_err(|source| MultidimError::Param {
                    attribute: j as u32,
                    source,
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        Self::assemble(Solution::RsRfd, eps, &domains, Some(priors), build)
    }

    fn assemble(
        solution: Solution,
        eps: Epsilon,
        domains: &[DomainSize],
        priors: Option<Priors>,
        mut build: impl FnMut(DomainSize, Epsilon) -> Result<M, ParamError>,
    ) -> Result<Self, MultidimError> {
        check_layout(solution, domains, priors.as_ref())?;
        let report_eps = solution
            .report_epsilon(eps, domains.len())
            .map_err(MultidimError::Budget)?;
        let mut attributes = Vec::with_capacity(domains.len());
        for (j, &k) in domains.iter().enumerate() {
            let param = |source| MultidimError::Param {
                attribute: j as u32,
                source,
            };
            let m = build(k, report_eps).map_err(param)?;
            if m.domain_size() != k || m.epsilon() != report_eps {
                return Err(param(ParamError::Parameter {
                    name: "attributes",
                    description: "an attribute's mechanism",
                    requirement: format!(
                        "have k = {} and the {} report budget {}",
                        k.get(),
                        solution.label(),
                        report_eps.get()
                    ),
                    value: m.epsilon().get(),
                }));
            }
            attributes.push(m);
        }
        if solution == Solution::RsFdNull && !M::NULL_INPUT {
            return Err(MultidimError::NoNullInput {
                family: attributes[0].spec().family(),
            });
        }
        Ok(Self {
            solution,
            eps,
            attributes,
            priors,
        })
    }

    /// How the budget is spent.
    pub fn solution(&self) -> Solution {
        self.solution
    }

    /// The user's total budget.
    pub fn epsilon(&self) -> Epsilon {
        self.eps
    }

    /// The budget of each attribute's report ([`Solution::report_epsilon`]).
    pub fn report_epsilon(&self) -> Epsilon {
        self.attributes[0].epsilon()
    }

    /// The number of attributes, d.
    pub fn dimensions(&self) -> usize {
        self.attributes.len()
    }

    /// The mechanism of `attribute`, or [`MultidimError::NoSuchAttribute`].
    pub fn attribute(&self, attribute: usize) -> Result<&M, MultidimError> {
        self.attributes
            .get(attribute)
            .ok_or(MultidimError::NoSuchAttribute {
                attribute,
                d: self.attributes.len(),
            })
    }

    /// Each attribute's mechanism.
    pub fn attributes(&self) -> &[M] {
        &self.attributes
    }

    /// Each attribute's domain size.
    pub fn domains(&self) -> Vec<DomainSize> {
        self.attributes.iter().map(M::domain_size).collect()
    }

    /// RS+RFD's priors.
    pub fn priors(&self) -> Option<&Priors> {
        self.priors.as_ref()
    }

    /// Its parameters, family named at run time: [`MultidimSpec::build`] of them is this
    /// client again.
    pub fn spec(&self) -> MultidimSpec {
        MultidimSpec::from_parts(
            self.solution,
            self.eps,
            self.attributes.iter().map(M::spec).collect(),
            self.priors.clone(),
        )
    }

    /// A fresh, empty server.
    pub fn aggregator(&self) -> MultidimAggregator<M> {
        MultidimAggregator::new(self.clone())
    }

    /// Checks a user's items: one per attribute, each in its domain.
    pub fn check_items(&self, items: &[u32]) -> Result<(), MultidimError> {
        if items.len() != self.attributes.len() {
            return Err(MultidimError::Arity {
                expected: self.attributes.len(),
                found: items.len(),
            });
        }
        for (j, (m, &x)) in self.attributes.iter().zip(items).enumerate() {
            m.domain_size()
                .check_item(x)
                .map_err(|source| MultidimError::Item {
                    attribute: j as u32,
                    source,
                })?;
        }
        Ok(())
    }

    /// Randomizes one user's `items` (one per attribute). Nothing is drawn unless every
    /// item is valid. The sampled attribute is drawn first, then the reports in attribute
    /// order.
    pub fn perturb<R: Rng + ?Sized>(
        &self,
        items: &[u32],
        rng: &mut R,
    ) -> Result<MultidimReport<M::Report>, MultidimError> {
        self.perturb_tracked(items, rng).map(|(report, _)| report)
    }

    /// [`Multidim::perturb`], with the attribute the user sampled (`None` for SPL, which
    /// samples none): the ground truth an attribute-inference measurement scores against.
    /// The same draws and the same report.
    pub fn perturb_tracked<R: Rng + ?Sized>(
        &self,
        items: &[u32],
        rng: &mut R,
    ) -> Result<(MultidimReport<M::Report>, Option<usize>), MultidimError> {
        self.check_items(items)?;
        let item = |j: usize, x: u32| MultidimError::Item {
            attribute: j as u32,
            source: crate::error::ItemOutOfRange {
                item: u64::from(x),
                k: self.attributes[j].domain_size().get(),
            },
        };
        let genuine = |j: usize, rng: &mut R| {
            self.attributes[j]
                .perturb(items[j], rng)
                .map_err(|_| item(j, items[j]))
        };
        let d = self.attributes.len();
        match self.solution {
            Solution::Spl => (0..d)
                .map(|j| genuine(j, rng))
                .collect::<Result<_, _>>()
                .map(|reports| (MultidimReport::Every(reports), None)),
            Solution::Smp => {
                let j = rng.random_range(0..d);
                let report = MultidimReport::Sampled {
                    attribute: j as u32,
                    report: genuine(j, rng)?,
                };
                Ok((report, Some(j)))
            }
            Solution::RsFd | Solution::RsFdNull | Solution::RsRfd => {
                let sampled = rng.random_range(0..d);
                (0..d)
                    .map(|j| {
                        if j == sampled {
                            genuine(j, rng)
                        } else {
                            self.fake(j, rng)
                        }
                    })
                    .collect::<Result<_, _>>()
                    .map(|reports| (MultidimReport::Every(reports), Some(sampled)))
            }
        }
    }

    /// A fake report of `attribute` (`0..d`), as the RS+ solutions draw one: the report of
    /// a uniform item (RS+FD), of no item (RS+FD-z) or of an item drawn from the prior
    /// (RS+RFD). For SPL and SMP, which send no fakes, the report of a uniform item.
    pub fn fake<R: Rng + ?Sized>(
        &self,
        attribute: usize,
        rng: &mut R,
    ) -> Result<M::Report, MultidimError> {
        let m = self.attribute(attribute)?;
        let item = match (self.solution, &self.priors) {
            (Solution::RsFdNull, _) => {
                return m.perturb_null(rng).ok_or(MultidimError::NoNullInput {
                    family: m.spec().family(),
                });
            }
            (_, Some(priors)) => priors.sample(attribute, rng),
            _ => rng.random_range(0..m.domain_size().get()),
        };
        m.perturb(item, rng).map_err(|source| MultidimError::Item {
            attribute: attribute as u32,
            source,
        })
    }

    /// Checks that `report` has this solution's shape and that every attribute's report
    /// lies in its mechanism's output space.
    pub fn validate(&self, report: &MultidimReport<M::Report>) -> Result<(), MultidimError> {
        let d = self.attributes.len();
        match (report, self.solution.names_its_attribute()) {
            (MultidimReport::Sampled { attribute, report }, true) => {
                let j = *attribute as usize;
                let m = self.attributes.get(j).ok_or_else(|| {
                    MultidimError::report(
                        None,
                        ReportError::OutOfRange {
                            field: "attribute",
                            value: u64::from(*attribute),
                            bound: d as u64,
                        },
                    )
                })?;
                m.validate(report)
                    .map_err(|e| MultidimError::report(Some(j), e))
            }
            (MultidimReport::Every(reports), false) => {
                if reports.len() != d {
                    return Err(MultidimError::report(
                        None,
                        ReportError::Length {
                            field: "every",
                            expected: d,
                            found: reports.len(),
                        },
                    ));
                }
                for (j, (m, r)) in self.attributes.iter().zip(reports).enumerate() {
                    m.validate(r)
                        .map_err(|e| MultidimError::report(Some(j), e))?;
                }
                Ok(())
            }
            (_, names) => Err(MultidimError::report(
                None,
                ReportError::Shape {
                    expected: if names {
                        "an SMP report naming its attribute: {\"sampled\": {\"attribute\": …, \"report\": …}}"
                    } else {
                        "a report per attribute: {\"every\": [ … ]}"
                    },
                },
            )),
        }
    }

    /// `ln P[report | items]`, exactly. The items are checked ([`Multidim::check_items`]);
    /// the report must be valid ([`Multidim::validate`]).
    ///
    /// # Formula
    ///
    /// ```text
    /// SPL:  sum_j ln M_j(r_j | x_j)
    /// SMP:  ln M_j(r | x_j) - ln d                       (r names attribute j)
    /// RS+:  ln( (1/d) sum_j M_j(r_j | x_j) prod_{i != j} F_i(r_i) )
    /// ```
    ///
    /// with `F_i` the fakes' law ([`Multidim::fake_log_likelihood`]).
    pub fn log_likelihood(
        &self,
        report: &MultidimReport<M::Report>,
        items: &[u32],
    ) -> Result<f64, MultidimError> {
        let mut each = self.log_likelihood_each(report, std::slice::from_ref(&items))?;
        Ok(each.pop().expect("one tuple in, one likelihood out"))
    }

    /// [`Multidim::log_likelihood`] of one report under each tuple of `inputs`, in order:
    /// the fakes' law, the costly part (`O(k)` per attribute), is computed once for all.
    /// Audits and attacks that weigh one report against many users call this.
    ///
    /// ```
    /// use ldp_core::multidim::{Multidim, Solution};
    /// use ldp_core::simulation::{stream_rng, Role};
    /// use ldp_core::{DomainSize, Epsilon, Grr};
    /// let domains = [DomainSize::new(4)?, DomainSize::new(3)?];
    /// let rsfd = Multidim::new(Solution::RsFd, Epsilon::new(1.0)?, &domains, Grr::new)?;
    /// let report = rsfd.perturb(&[2, 1], &mut stream_rng(1, 0, Role::Genuine, 0))?;
    /// let inputs: [&[u32]; 2] = [&[2, 1], &[0, 0]];
    /// let each = rsfd.log_likelihood_each(&report, &inputs)?;
    /// assert_eq!(each[1], rsfd.log_likelihood(&report, &[0, 0])?);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn log_likelihood_each<T: AsRef<[u32]>>(
        &self,
        report: &MultidimReport<M::Report>,
        inputs: &[T],
    ) -> Result<Vec<f64>, MultidimError> {
        for items in inputs {
            self.check_items(items.as_ref())?;
        }
        let d = self.attributes.len();
        let ln_d = (d as f64).ln();
        match report {
            MultidimReport::Sampled { attribute, report } => {
                let j = *attribute as usize;
                let m = self.attribute(j)?;
                Ok(inputs
                    .iter()
                    .map(|x| m.log_likelihood(report, x.as_ref()[j]) - ln_d)
                    .collect())
            }
            MultidimReport::Every(reports) => {
                if reports.len() != d {
                    return Err(MultidimError::report(
                        None,
                        ReportError::Length {
                            field: "every",
                            expected: d,
                            found: reports.len(),
                        },
                    ));
                }
                // Each attribute's genuine log-likelihood under x, into `out`.
                let genuine = |x: &[u32], out: &mut Vec<f64>| {
                    out.clear();
                    out.extend(
                        self.attributes
                            .iter()
                            .zip(reports)
                            .zip(x)
                            .map(|((m, r), &x)| m.log_likelihood(r, x)),
                    );
                };
                let mut each = Vec::with_capacity(d);
                if !self.solution.fakes() {
                    return Ok(inputs
                        .iter()
                        .map(|x| {
                            genuine(x.as_ref(), &mut each);
                            each.iter().sum()
                        })
                        .collect());
                }
                let fakes: Vec<f64> = (0..d)
                    .map(|j| self.fake_log_likelihood(j, &reports[j]))
                    .collect();
                let all_fake: f64 = fakes.iter().sum();
                Ok(inputs
                    .iter()
                    .map(|x| {
                        genuine(x.as_ref(), &mut each);
                        for (g, f) in each.iter_mut().zip(&fakes) {
                            *g -= f;
                        }
                        all_fake + log_sum_exp(&each) - ln_d
                    })
                    .collect())
            }
        }
    }

    /// `ln F(report)`: the log-probability that a fake of `attribute` is `report`. The
    /// report must be valid, and `attribute` in range (it panics otherwise, as slices do).
    /// For SPL and SMP, which send no fakes, that of a uniform item's report. A family
    /// that opts into [`Mechanism::NULL_INPUT`] must override
    /// [`Mechanism::null_log_likelihood`]; one that does not is read as uniform fakes.
    ///
    /// # Formula
    ///
    /// ```text
    /// uniform: ln( (1/k) sum_v M(r | v) )    no item: ln M(r | none)    prior: ln( sum_v pi_v M(r | v) )
    /// ```
    pub fn fake_log_likelihood(&self, attribute: usize, report: &M::Report) -> f64 {
        let m = &self.attributes[attribute];
        if self.solution == Solution::RsFdNull {
            if let Some(ll) = m.null_log_likelihood(report) {
                return ll;
            }
        }
        let mut each = Vec::new();
        m.log_likelihoods(report, &mut each);
        match &self.priors {
            Some(priors) => {
                for (ll, &weight) in each.iter_mut().zip(priors.get(attribute)) {
                    *ll += weight.ln();
                }
                log_sum_exp(&each)
            }
            None => log_sum_exp(&each) - m.domain_size().as_f64().ln(),
        }
    }

    /// The law of the fakes of `attribute`, item by item: each item's share of the input
    /// distribution a fake stands for (`1/k` each for RS+FD's uniform fakes, the prior for
    /// RS+RFD, zero for RS+FD-z's reports of no item, and zero for SPL and SMP, which send
    /// no fakes: as `ldp_analytic::multidim::Collection::fake_law`). The server subtracts
    /// `(d - 1) / d` of it. Panics when `attribute` is out of range, as slices do.
    pub fn fake_law(&self, attribute: usize) -> Vec<f64> {
        let k = self.attributes[attribute].domain_size();
        match (&self.priors, self.solution) {
            (Some(priors), _) => priors.get(attribute).to_vec(),
            (None, Solution::RsFd) => vec![1.0 / k.as_f64(); k.as_usize()],
            _ => vec![0.0; k.as_usize()],
        }
    }
}

/// Checks what a client's parameters must agree on, wherever it is built from: at least
/// one attribute, and priors given for RS+RFD only, one per attribute over its domain.
pub(crate) fn check_layout(
    solution: Solution,
    domains: &[DomainSize],
    priors: Option<&Priors>,
) -> Result<(), MultidimError> {
    if domains.is_empty() {
        return Err(MultidimError::NoAttributes);
    }
    match (priors, solution) {
        (None, Solution::RsRfd) => Err(MultidimError::Priors("RS+RFD needs a prior per attribute")),
        (Some(_), s) if s != Solution::RsRfd => {
            Err(MultidimError::Priors("only RS+RFD takes priors"))
        }
        (Some(p), _)
            if p.len() != domains.len()
                || p.values()
                    .iter()
                    .zip(domains)
                    .any(|(v, k)| v.len() != k.as_usize()) =>
        {
            Err(MultidimError::Priors(
                "each attribute needs a prior over its own domain",
            ))
        }
        _ => Ok(()),
    }
}

/// `ln sum_i e^{x_i}`, without overflow; `-inf` for no terms or all `-inf`.
pub fn log_sum_exp(values: &[f64]) -> f64 {
    let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if max == f64::NEG_INFINITY {
        return max;
    }
    max + values.iter().map(|v| (v - max).exp()).sum::<f64>().ln()
}
