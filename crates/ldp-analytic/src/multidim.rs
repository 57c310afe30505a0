//! Several attributes per user ([`ldp_core::multidim`]): the per-attribute variance of
//! SPL, SMP and the RS+ solutions, the expected success of the reconstruction attack on one
//! attribute and on all of them, and what repeated SMP surveys give an attacker who builds
//! a profile (Arcolezi, Gambs, Couchot and Palamidessi, PVLDB 16(5), 2023, Eq. 4 and 5),
//! and the expected gain of the maximal gain poisoning attack on each attribute
//! ([`Collection::epg`]: SMP's fakes concentrate, the RS+ solutions amplify the gain d-fold).
//!
//! Nothing here is written per family: every quantity goes through the one-attribute
//! entry points, [`variance::exact`], [`asr::expected`] and [`crate::epg`], at the budget each report
//! spends ([`Solution::report_epsilon`]). A [`Collection`] holds each attribute's
//! [`Spec`] at that budget and the fakes' law, built from a preset protocol
//! ([`Collection::classic`]), any closure ([`Collection::new`]), or a running client
//! ([`Collection::of`]).
//!
//! **Two populations.** The variance of an estimate depends on what it estimates.
//! [`Population::Fixed`] is this crate's convention ([`variance::exact`]): n given users,
//! `n f` of whom hold the item, and the error about their frequency. [`Population::Sampled`]
//! draws each user's item independently from `f` and measures the error about `f`; it adds
//! `f (1 - f) / n` (sampling error) and is the convention of multi-freq-ldpy's
//! `Variance_RSpFD` and of risks-ldp's RS+RFD variance, which it reproduces.
//!
//! **Where the RS+ variance is not `d^2` times the family's.** A report of attribute `j`
//! under RS+ carries the user's item with probability `1/d` and a fake's otherwise, so the
//! family's estimator sees inputs drawn from `g = f / d + (d - 1) / d phi`. Plugging `g`
//! into the family's fixed-population variance, `d^2 Var_exact(eps', n, g)`, treats each
//! user as holding a fixed input, and misses the variance of that random choice (for GRR
//! with k = 4, d = 3, eps = 2, f = 0.5: 0.86 / n against the exact 2.61 / n, which the tests
//! measure). [`rs_plus_variance`] adds it back.
//!
//! ```
//! use ldp_analytic::multidim::{Collection, Population};
//! use ldp_core::multidim::Solution;
//! use ldp_core::{DomainSize, Epsilon, Protocol};
//! let domains = [DomainSize::new(4)?, DomainSize::new(10)?];
//! let n = 10_000.0;
//! let var = |solution, eps| -> Result<f64, Box<dyn std::error::Error>> {
//!     let c = Collection::classic(solution, Protocol::Grr, Epsilon::new(eps)?, &domains)?;
//!     Ok(c.variance(1, 0, n, 0.1, Population::Fixed)?)
//! };
//! // At a small budget RS+FD estimates attribute 1 best, and SPL worst;
//! assert!(var(Solution::RsFd, 1.0)? < var(Solution::Smp, 1.0)?);
//! assert!(var(Solution::Smp, 1.0)? < var(Solution::Spl, 1.0)?);
//! // at a large one the fakes cost RS+FD more than it gains.
//! assert!(var(Solution::RsFd, 6.0)? > var(Solution::Spl, 6.0)?);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fmt::Display;

use ldp_core::multidim::{Multidim, Priors, Solution};
use ldp_core::{
    DomainSize, Epsilon, Family, Mechanism, ParamError, Protocol, Spec, dispatch_family,
};

use crate::epg::PoisoningError;
use crate::{LhAsr, asr, variance};

mod poisoning;

pub use poisoning::{SmpNaming, smp_best_shares, smp_fake_share};

/// How far a vector of true frequencies may sum from one.
pub const FREQUENCY_SUM_TOLERANCE: f64 = 1e-6;

/// Bad input to the multidimensional closed forms.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum MultidimInputError {
    /// d = 0.
    #[error("no attributes: a multidimensional collection needs at least one (d >= 1)")]
    NoAttributes,
    /// A number of users that is not finite and positive (or not whole where it must be).
    #[error("the number of users must be {requirement}, got {value}")]
    Users {
        /// The value given.
        value: f64,
        /// What it must be.
        requirement: &'static str,
    },
    /// A frequency (or a fakes' share) outside `[0, 1]`.
    #[error("{what} must lie in [0, 1], got {value}")]
    Frequency {
        /// Which number.
        what: &'static str,
        /// The value given.
        value: f64,
    },
    /// Frequencies that do not sum to one.
    #[error("the true frequencies of attribute {attribute} sum to {sum}, not 1")]
    FrequencySum {
        /// The attribute.
        attribute: usize,
        /// Their sum.
        sum: f64,
    },
    /// Two lengths that must agree.
    #[error("{what}: expected {expected}, got {found}")]
    Length {
        /// What was counted.
        what: &'static str,
        /// The length required.
        expected: usize,
        /// The length given.
        found: usize,
    },
    /// An attribute index past the last.
    #[error("attribute {attribute} does not exist: there are {d}")]
    Attribute {
        /// The index given.
        attribute: usize,
        /// The number of attributes.
        d: usize,
    },
    /// An item outside its attribute's domain.
    #[error("item {item} of attribute {attribute} is outside its domain 0..{k}")]
    Item {
        /// The attribute.
        attribute: usize,
        /// The item.
        item: u32,
        /// The attribute's domain size.
        k: u32,
    },
    /// The per-report budget could not be formed.
    #[error("the per-report budget: {0}")]
    Budget(ParamError),
    /// An attribute's spec could not be built.
    #[error("attribute {attribute}: {reason}")]
    Build {
        /// The attribute.
        attribute: usize,
        /// Why.
        reason: String,
    },
    /// A spec of another domain size or budget than asked.
    #[error(
        "attribute {attribute}: the spec built has k = {k} and eps = {eps}, not the {asked_k} and {asked_eps} asked"
    )]
    WrongSpec {
        /// The attribute.
        attribute: usize,
        /// Its domain size.
        k: u32,
        /// Its budget.
        eps: f64,
        /// The domain size asked.
        asked_k: u32,
        /// The budget asked.
        asked_eps: f64,
    },
    /// Specs of more than one family.
    #[error(
        "every attribute must be of one family: attribute {attribute} is {found:?}, not {expected:?}"
    )]
    MixedFamilies {
        /// The first attribute of another family.
        attribute: usize,
        /// The first attribute's family.
        expected: Family,
        /// Its family.
        found: Family,
    },
    /// RS+FD-z over a family without a report of no item.
    #[error(
        "RS+FD-z needs a report of no item, which the {0:?} family does not have (UE and THE do)"
    )]
    NoNullInput(Family),
    /// RS+RFD without priors, or priors for another solution.
    #[error("{0}")]
    Priors(&'static str),
    /// A quantity asked of a solution it does not describe.
    #[error("{what} is defined for {expected} collections, not {found}")]
    Solution {
        /// The quantity.
        what: &'static str,
        /// The solution it needs.
        expected: &'static str,
        /// The collection's.
        found: Solution,
    },
    /// An attack success that depends on the data, for a family whose attack does not
    /// treat every wrong item alike.
    #[error(
        "the {0:?} family's reconstruction attack does not guess every wrong item alike: its \
         success against data-dependent fakes has no closed form here (GRR, SS, UE, THE, SHE \
         and LH do)"
    )]
    NotSymmetric(Family),
    /// A fake-user fraction outside `[0, 1)`.
    #[error("the fake-user fraction: {0}")]
    Beta(ParamError),
    /// A poisoning setting the one-attribute closed form refuses ([`crate::epg`]).
    #[error("attribute {attribute}: {source}")]
    Poisoning {
        /// The attribute.
        attribute: usize,
        /// Why.
        source: PoisoningError,
    },
    /// A target listed twice.
    #[error("target {item} of attribute {attribute} is listed twice")]
    DuplicateTarget {
        /// The attribute.
        attribute: usize,
        /// The item.
        item: u32,
    },
    /// SMP fake users' shares of the attributes that are not a distribution over them.
    #[error(
        "the SMP fakes' shares of the attributes must be d = {d} numbers in [0, 1] summing to 1, got {shares:?}"
    )]
    Shares {
        /// The number of attributes.
        d: usize,
        /// The shares given.
        shares: Vec<f64>,
    },
}

type Result<T> = std::result::Result<T, MultidimInputError>;

/// What a variance measures the error about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Population {
    /// n given users, `n f` of whom hold the item: the error about their frequency. The
    /// convention of [`variance::exact`].
    Fixed,
    /// n users whose items are drawn independently from `f`: the error about `f`. Adds
    /// `f (1 - f) / n` to the fixed-population variance of SPL and RS+; the convention of
    /// multi-freq-ldpy's `Variance_RSpFD` and risks-ldp's RS+RFD variance.
    Sampled,
}

/// How SMP's random group size enters its variance.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SmpGroup {
    /// The users who sample attribute j, `n_j ~ Binomial(n, 1/d)`, replaced by their mean
    /// `n / d` (`1 / n_j` by `d / n`: a slight underestimate, `E[1/n_j] >= d/n` by Jensen).
    Mean,
    /// The exact expectation over `n_j`, given `n_j >= 1` (with no such user there is no
    /// estimate); n must be whole.
    Exact,
}

fn check_users(n: f64) -> Result<()> {
    if n.is_finite() && n > 0.0 {
        Ok(())
    } else {
        Err(MultidimInputError::Users {
            value: n,
            requirement: "finite and > 0",
        })
    }
}

fn check_unit(what: &'static str, value: f64) -> Result<()> {
    if (0.0..=1.0).contains(&value) {
        Ok(())
    } else {
        Err(MultidimInputError::Frequency { what, value })
    }
}

fn check_dimensions(d: usize) -> Result<f64> {
    if d == 0 {
        Err(MultidimInputError::NoAttributes)
    } else {
        Ok(d as f64)
    }
}

/// SPL's variance of one item's estimate: each attribute reported by all n users at
/// `eps / d`; `spec` is the attribute's protocol at that budget.
///
/// # Formula
///
/// ```text
/// Fixed:   Var_exact(eps/d, n, f)
/// Sampled: Var_exact(eps/d, n, f) + f (1 - f) / n
/// ```
///
/// ```
/// use ldp_analytic::multidim::{spl_variance, Population};
/// use ldp_analytic::variance;
/// use ldp_core::{DomainSize, Epsilon, Protocol, Spec};
/// let spec = Spec::classic(Protocol::Oue, DomainSize::new(8)?, Epsilon::new(0.5)?)?;
/// let fixed = spl_variance(&spec, 1000.0, 0.2, Population::Fixed)?;
/// assert_eq!(fixed, variance::exact(&spec, 1000.0, 0.2));
/// let sampled = spl_variance(&spec, 1000.0, 0.2, Population::Sampled)?;
/// assert!((sampled - fixed - 0.2 * 0.8 / 1000.0).abs() < 1e-15);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn spl_variance(spec: &Spec, n: f64, f: f64, population: Population) -> Result<f64> {
    check_users(n)?;
    check_unit("the true frequency f", f)?;
    let fixed = variance::exact(spec, n, f);
    Ok(match population {
        Population::Fixed => fixed,
        Population::Sampled => fixed + f * (1.0 - f) / n,
    })
}

/// SMP's variance of one item's estimate: each user samples one of `d` attributes, so
/// attribute j is estimated from the `m ~ Binomial(n, 1/d)` users who sampled it, at the
/// full budget; `spec` is the attribute's protocol at `eps`.
///
/// # Formula
///
/// With `c = n Var_exact(eps, n, f)` the family's per-user variance, given m the estimate
/// is the family's over m users plus, for a fixed population, the error of a simple random
/// sample of m of the n users (without replacement):
///
/// ```text
/// Fixed:   E[1/m] (c + f (1 - f) n / (n - 1)) - f (1 - f) / (n - 1)
/// Sampled: E[1/m] (c + f (1 - f))
/// ```
///
/// with `E[1/m]` over `m ~ Binomial(n, 1/d)` given `m >= 1` ([`SmpGroup::Exact`], summed
/// from the mode outwards until the terms fall below 1e-17 of the sum), or `d / n`
/// ([`SmpGroup::Mean`]). `Var_exact(eps, n / d, f)` alone, the family's variance at the
/// mean group size, omits the sampling term `f (1 - f) (d - 1) / (n - 1)`.
///
/// ```
/// use ldp_analytic::multidim::{smp_variance, Population, SmpGroup};
/// use ldp_core::{DomainSize, Epsilon, Protocol, Spec};
/// let spec = Spec::classic(Protocol::Grr, DomainSize::new(4)?, Epsilon::new(2.0)?)?;
/// let mean = smp_variance(&spec, 3, 3000.0, 0.5, Population::Fixed, SmpGroup::Mean)?;
/// let exact = smp_variance(&spec, 3, 3000.0, 0.5, Population::Fixed, SmpGroup::Exact)?;
/// assert!(exact > mean && exact < mean * 1.002); // E[1/m] is about d/n (1 + (d-1)/n)
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn smp_variance(
    spec: &Spec,
    d: usize,
    n: f64,
    f: f64,
    population: Population,
    group: SmpGroup,
) -> Result<f64> {
    let d = check_dimensions(d)?;
    check_users(n)?;
    check_unit("the true frequency f", f)?;
    let inverse = match group {
        SmpGroup::Mean => d / n,
        SmpGroup::Exact => {
            if n.fract() != 0.0 || n > 1e12 {
                return Err(MultidimInputError::Users {
                    value: n,
                    requirement: "a whole number (at most 1e12) for the exact group size",
                });
            }
            mean_inverse_binomial(n as u64, 1.0 / d)
        }
    };
    let c = n * variance::exact(spec, n, f);
    let spread = f * (1.0 - f);
    Ok(match population {
        Population::Sampled => inverse * (c + spread),
        // With one user, f is 0 or 1 and the sample is the population.
        Population::Fixed if n <= 1.0 => inverse * c,
        Population::Fixed => inverse * (c + spread * n / (n - 1.0)) - spread / (n - 1.0),
    })
}

/// `E[1/m | m >= 1]` for `m ~ Binomial(n, p)`.
fn mean_inverse_binomial(n: u64, p: f64) -> f64 {
    if p >= 1.0 {
        return 1.0 / n as f64;
    }
    let nf = n as f64;
    let mode = (((nf + 1.0) * p).floor() as u64).clamp(1, n);
    let ratio = p / (1.0 - p);
    // Relative to the mode's probability: the scale cancels in the ratio.
    let (mut weight, mut sum) = (1.0, 1.0 / mode as f64);
    let mut w = 1.0;
    for m in mode + 1..=n {
        w *= (nf - (m - 1) as f64) / m as f64 * ratio;
        weight += w;
        sum += w / m as f64;
        if w < 1e-17 * weight {
            break;
        }
    }
    w = 1.0;
    for m in (1..mode).rev() {
        w *= (m + 1) as f64 / (nf - m as f64) / ratio;
        weight += w;
        sum += w / m as f64;
        if w < 1e-17 * weight {
            break;
        }
    }
    // The weights are over m >= 1 only, so the ratio is the conditional mean.
    sum / weight
}

/// The RS+ solutions' variance of one item's estimate for attribute j: every user sends a
/// report of every attribute at `eps'`, the user's own item with probability `1/d`, and a
/// fake otherwise; `phi` is the fakes' share of the item (`1/k` for RS+FD, 0 for RS+FD-z,
/// the prior's for RS+RFD, [`Collection::fake_law`]) and `spec` the attribute's protocol at
/// `eps'` ([`Solution::report_epsilon`]). The estimate is `d g_hat - (d - 1) phi`, with
/// `g_hat` the family's unbiased estimate.
///
/// # Formula
///
/// A user's report is the family's report of an input that is the item with probability
/// `x1 = 1/d + (d-1)/d phi` if the user holds it and `x0 = (d-1)/d phi` if not. With
/// `g = f x1 + (1 - f) x0 = f/d + (d-1)/d phi`, the law of total variance per user gives
///
/// ```text
/// Fixed:   d^2 Var_exact(eps', n, g) + d^2 (g - f x1^2 - (1 - f) x0^2) / n
/// Sampled: d^2 Var_exact(eps', n, g) + d^2 g (1 - g) / n
///        = d^2 gamma (1 - gamma) / (n (p* - q*)^2),  gamma = q* + (p* - q*) g  (pure families)
/// ```
///
/// The first term is each report's noise given its input (the family's per-input variance
/// is linear in the input's indicator, and for RS+FD-z a report of no item has a non-holder's
/// variance, as UE's and THE's do); the second is the variance of which input the report
/// carries. `Sampled` is multi-freq-ldpy's `Variance_RSpFD` (GRR, UE-z, UE-r) and, with
/// risks-ldp's perturbed UE-r fakes, its RS+RFD variance (paper App. A-B); both exceed
/// `Fixed` by `f (1 - f) / n`.
///
/// ```
/// use ldp_analytic::multidim::{rs_plus_variance, Population};
/// use ldp_core::{DomainSize, Epsilon, Protocol, Spec};
/// let d = 3;
/// let eps_report = (3.0 * (2f64.exp() - 1.0) + 1.0).ln(); // eps' for eps = 2
/// let spec = Spec::classic(Protocol::Grr, DomainSize::new(4)?, Epsilon::new(eps_report)?)?;
/// let var = rs_plus_variance(&spec, d, 1000.0, 0.5, 0.25, Population::Sampled)?;
/// // multi-freq-ldpy's VAR_RSpFD_GRR
/// let (p, q) = spec.pure_probabilities().unwrap();
/// let gamma = (q + 0.5 * (p - q) + 2.0 / 4.0) / 3.0;
/// let anchor = 9.0 * gamma * (1.0 - gamma) / (1000.0 * (p - q) * (p - q));
/// assert!((var - anchor).abs() < 1e-12 * anchor);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn rs_plus_variance(
    spec: &Spec,
    d: usize,
    n: f64,
    f: f64,
    phi: f64,
    population: Population,
) -> Result<f64> {
    let d = check_dimensions(d)?;
    check_users(n)?;
    check_unit("the true frequency f", f)?;
    check_unit("the fakes' share phi", phi)?;
    let x0 = (d - 1.0) / d * phi;
    let x1 = 1.0 / d + x0;
    let g = f * x1 + (1.0 - f) * x0;
    let noise = d * d * variance::exact(spec, n, g);
    let choice = match population {
        Population::Fixed => g - f * x1 * x1 - (1.0 - f) * x0 * x0,
        Population::Sampled => g * (1.0 - g),
    };
    Ok(noise + d * d * choice.max(0.0) / n)
}

/// A multidimensional collection as the closed forms see it: the solution, the user's
/// budget, each attribute's protocol at the budget of one report
/// ([`Solution::report_epsilon`]), and RS+RFD's priors.
#[derive(Debug, Clone, PartialEq)]
pub struct Collection {
    solution: Solution,
    eps: Epsilon,
    report_eps: Epsilon,
    specs: Vec<Spec>,
    priors: Option<Priors>,
}

impl Collection {
    /// The collection of `solution` (any but RS+RFD, see [`Collection::with_priors`]) for
    /// users with budget `eps` and one item of each domain in `domains`.
    /// `build(k, eps_report)` makes an attribute's spec at the report's budget, e.g.
    /// `|k, e| Spec::classic(Protocol::Oue, k, e)`; it must return a spec of that k and
    /// budget, and every attribute's must be of one family (as [`Multidim`] requires).
    pub fn new<E: Display>(
        solution: Solution,
        eps: Epsilon,
        domains: &[DomainSize],
        build: impl FnMut(DomainSize, Epsilon) -> std::result::Result<Spec, E>,
    ) -> Result<Self> {
        if solution == Solution::RsRfd {
            return Err(MultidimInputError::Priors(
                "RS+RFD draws its fakes from priors: build it with Collection::with_priors",
            ));
        }
        Self::assemble(solution, eps, domains, None, build)
    }

    /// [`Collection::new`] with a preset protocol for every attribute
    /// (`Spec::classic(protocol, k_j, eps_report)`).
    pub fn classic(
        solution: Solution,
        protocol: Protocol,
        eps: Epsilon,
        domains: &[DomainSize],
    ) -> Result<Self> {
        Self::new(solution, eps, domains, |k, e| Spec::classic(protocol, k, e))
    }

    /// The RS+RFD collection: fakes of items drawn from `priors`, one per attribute (its
    /// length the attribute's domain size).
    pub fn with_priors<E: Display>(
        eps: Epsilon,
        priors: Priors,
        build: impl FnMut(DomainSize, Epsilon) -> std::result::Result<Spec, E>,
    ) -> Result<Self> {
        let domains = priors
            .values()
            .iter()
            .enumerate()
            .map(|(attribute, prior)| {
                DomainSize::new(prior.len() as u32).map_err(|e| MultidimInputError::Build {
                    attribute,
                    reason: e.to_string(),
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Self::assemble(Solution::RsRfd, eps, &domains, Some(priors), build)
    }

    /// The collection a running client makes: its solution, budget, each attribute's
    /// mechanism's spec and its priors.
    pub fn of<M: Mechanism>(client: &Multidim<M>) -> Self {
        Self {
            solution: client.solution(),
            eps: client.epsilon(),
            report_eps: client.report_epsilon(),
            specs: client.attributes().iter().map(Mechanism::spec).collect(),
            priors: client.priors().cloned(),
        }
    }

    fn assemble<E: Display>(
        solution: Solution,
        eps: Epsilon,
        domains: &[DomainSize],
        priors: Option<Priors>,
        mut build: impl FnMut(DomainSize, Epsilon) -> std::result::Result<Spec, E>,
    ) -> Result<Self> {
        if domains.is_empty() {
            return Err(MultidimInputError::NoAttributes);
        }
        if let Some(p) = &priors {
            if p.len() != domains.len() {
                return Err(MultidimInputError::Length {
                    what: "priors, one per attribute",
                    expected: domains.len(),
                    found: p.len(),
                });
            }
        }
        let report_eps = solution
            .report_epsilon(eps, domains.len())
            .map_err(MultidimInputError::Budget)?;
        let mut specs: Vec<Spec> = Vec::with_capacity(domains.len());
        for (attribute, &k) in domains.iter().enumerate() {
            let spec = build(k, report_eps).map_err(|e| MultidimInputError::Build {
                attribute,
                reason: e.to_string(),
            })?;
            if spec.k() != k || spec.eps() != report_eps {
                return Err(MultidimInputError::WrongSpec {
                    attribute,
                    k: spec.k().get(),
                    eps: spec.eps().get(),
                    asked_k: k.get(),
                    asked_eps: report_eps.get(),
                });
            }
            if let Some(first) = specs.first() {
                if first.family() != spec.family() {
                    return Err(MultidimInputError::MixedFamilies {
                        attribute,
                        expected: first.family(),
                        found: spec.family(),
                    });
                }
            }
            specs.push(spec);
        }
        if solution == Solution::RsFdNull && !has_null_input(&specs[0]) {
            return Err(MultidimInputError::NoNullInput(specs[0].family()));
        }
        Ok(Self {
            solution,
            eps,
            report_eps,
            specs,
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

    /// The budget of each report.
    pub fn report_epsilon(&self) -> Epsilon {
        self.report_eps
    }

    /// The number of attributes, d.
    pub fn dimensions(&self) -> usize {
        self.specs.len()
    }

    /// Each attribute's protocol at the report's budget.
    pub fn specs(&self) -> &[Spec] {
        &self.specs
    }

    /// RS+RFD's priors.
    pub fn priors(&self) -> Option<&Priors> {
        self.priors.as_ref()
    }

    fn spec(&self, attribute: usize) -> Result<&Spec> {
        self.specs
            .get(attribute)
            .ok_or(MultidimInputError::Attribute {
                attribute,
                d: self.specs.len(),
            })
    }

    /// The fakes' law over the items of `attribute`, as [`Multidim::fake_law`] gives it:
    /// `1/k` each for RS+FD, zero for RS+FD-z, the prior for RS+RFD; for SPL and SMP,
    /// which send no fakes, zero.
    pub fn fake_law(&self, attribute: usize) -> Result<Vec<f64>> {
        let k = self.spec(attribute)?.k();
        Ok(match (self.solution, &self.priors) {
            (_, Some(priors)) => priors.get(attribute).to_vec(),
            (Solution::RsFd, None) => vec![1.0 / k.as_f64(); k.as_usize()],
            _ => vec![0.0; k.as_usize()],
        })
    }

    /// The variance of the estimate of `item` of `attribute` for `n` users of whom a share
    /// `f` hold it: [`spl_variance`], [`smp_variance`] (with the exact group size when n is
    /// whole, else its mean) or [`rs_plus_variance`] at the fakes' share of the item.
    ///
    /// ```
    /// use ldp_analytic::multidim::{Collection, Population};
    /// use ldp_core::multidim::{Priors, Solution};
    /// use ldp_core::{Epsilon, Protocol, Spec};
    /// let priors = Priors::new(vec![vec![0.7, 0.2, 0.1], vec![0.5, 0.5]])?;
    /// let rsrfd = Collection::with_priors(Epsilon::new(1.0)?, priors, |k, e| {
    ///     Spec::classic(Protocol::Sue, k, e)
    /// })?;
    /// let var = |item| rsrfd.variance(0, item, 5000.0, 0.3, Population::Fixed);
    /// // The fakes pile onto item 0, whose estimate is the noisier for it.
    /// assert!(var(0)? > var(2)?);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn variance(
        &self,
        attribute: usize,
        item: u32,
        n: f64,
        f: f64,
        population: Population,
    ) -> Result<f64> {
        let spec = self.spec(attribute)?;
        let k = spec.k().get();
        if item >= k {
            return Err(MultidimInputError::Item { attribute, item, k });
        }
        let d = self.dimensions();
        match self.solution {
            Solution::Spl => spl_variance(spec, n, f, population),
            Solution::Smp => {
                let group = if n.fract() == 0.0 && n <= 1e12 {
                    SmpGroup::Exact
                } else {
                    SmpGroup::Mean
                };
                smp_variance(spec, d, n, f, population, group)
            }
            Solution::RsFd | Solution::RsFdNull | Solution::RsRfd => {
                let phi = self.fake_law(attribute)?[item as usize];
                rs_plus_variance(spec, d, n, f, phi, population)
            }
        }
    }

    /// The one-report ASR `a_j` of each attribute at the report's budget.
    fn one_report(&self, lh: LhAsr) -> Vec<f64> {
        self.specs.iter().map(|s| asr::expected(s, lh)).collect()
    }

    /// The expected success of the reconstruction attack on `attribute`, under a uniform
    /// prior (this crate's ASR convention), with `a_j` the one-report ASR
    /// ([`asr::expected`]) at the report's budget.
    ///
    /// # Formula
    ///
    /// ```text
    /// SPL:  a_j(eps/d)
    /// SMP:  (1/d) a_j(eps)  + (1 - 1/d) / k_j
    /// RS+:  (1/d) a_j(eps') + (1 - 1/d) / k_j
    /// ```
    ///
    /// An SMP attacker knows which attribute was sampled and guesses the others uniformly.
    /// An RS+ attacker does not know which report is genuine, and guesses on each; a guess
    /// on a fake is independent of the user's item, so under a uniform prior it is right
    /// with probability `1/k_j` whatever the fakes' law (uniform items, no item, a prior).
    ///
    /// ```
    /// use ldp_analytic::{asr, multidim::Collection, LhAsr};
    /// use ldp_core::multidim::Solution;
    /// use ldp_core::{DomainSize, Epsilon, Protocol, Spec};
    /// let domains = [DomainSize::new(5)?; 4];
    /// let eps = Epsilon::new(1.0)?;
    /// let rsfd = Collection::classic(Solution::RsFd, Protocol::Grr, eps, &domains)?;
    /// let a = asr::expected(&rsfd.specs()[0], LhAsr::Exact);
    /// assert!((rsfd.asr(0, LhAsr::Exact)? - (a / 4.0 + 0.75 / 5.0)).abs() < 1e-15);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn asr(&self, attribute: usize, lh: LhAsr) -> Result<f64> {
        let spec = self.spec(attribute)?;
        let a = asr::expected(spec, lh);
        let (d, k) = (self.dimensions() as f64, spec.k().as_f64());
        Ok(match self.solution {
            Solution::Spl => a,
            _ => a / d + (1.0 - 1.0 / d) / k,
        })
    }

    /// The expected success of the reconstruction attack on `attribute` when the users'
    /// items follow `truth` (one frequency per item): where the fakes' law is not uniform
    /// (RS+RFD), a guess on a fake is right more often on the popular items it favours.
    /// Exact for the families whose attack, given the input u, guesses every other item
    /// with one probability `(1 - a) / (k - 1)` (GRR, SS, UE, THE, SHE, and LH under an
    /// ideal hash; refused for the others, [`MultidimInputError::NotSymmetric`]).
    ///
    /// # Formula
    ///
    /// ```text
    /// SPL:        a
    /// SMP, RS+FD, RS+FD-z:  (1/d) a + (1 - 1/d) / k
    /// RS+RFD:     (1/d) a + (1 - 1/d) [a <pi, f> + (1 - a)(1 - <pi, f>) / (k - 1)]
    /// ```
    ///
    /// An unreported SMP attribute is guessed uniformly: right w.p. `sum_v f_v / k = 1/k`.
    /// A uniform item's report, or one of no item, is exchangeable in the items, so the
    /// attack's guess on it is uniform (for UE-z, a uniform set bit or, with none, a uniform
    /// item). An RS+RFD fake is the report of an item drawn from `pi`, so the guess is v
    /// w.p. `a pi_v + (1 - a)(1 - pi_v) / (k - 1)`; for GRR that is `p pi_v + q (1 - pi_v)`,
    /// the law of the perturbed fake (this toolkit perturbs the prior's item; risks-ldp's
    /// GRR fakes are the prior's item itself, `pi_v`).
    ///
    /// ```
    /// use ldp_analytic::{multidim::Collection, LhAsr};
    /// use ldp_core::multidim::{Priors, Solution};
    /// use ldp_core::{Epsilon, Protocol, Spec};
    /// let priors = Priors::new(vec![vec![0.8, 0.1, 0.1], vec![0.5, 0.5]])?;
    /// let c = Collection::with_priors(Epsilon::new(1.0)?, priors, |k, e| {
    ///     Spec::classic(Protocol::Grr, k, e)
    /// })?;
    /// // A prior close to the truth makes the fakes look genuine to the attacker.
    /// let right = c.asr_for(0, &[0.8, 0.1, 0.1], LhAsr::Exact)?;
    /// let wrong = c.asr_for(0, &[0.1, 0.1, 0.8], LhAsr::Exact)?;
    /// assert!(right > c.asr(0, LhAsr::Exact)? && c.asr(0, LhAsr::Exact)? > wrong);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn asr_for(&self, attribute: usize, truth: &[f64], lh: LhAsr) -> Result<f64> {
        let spec = self.spec(attribute)?;
        check_symmetric(spec)?;
        check_truth(attribute, spec.k(), truth)?;
        let a = asr::expected(spec, lh);
        let (d, k) = (self.dimensions() as f64, spec.k().as_f64());
        let fake = match (self.solution, &self.priors) {
            (Solution::Spl, _) => return Ok(a),
            (_, Some(priors)) => {
                let overlap: f64 = priors
                    .get(attribute)
                    .iter()
                    .zip(truth)
                    .map(|(p, f)| p * f)
                    .sum();
                a * overlap + (1.0 - a) * (1.0 - overlap) / (k - 1.0)
            }
            _ => 1.0 / k,
        };
        Ok(a / d + (1.0 - 1.0 / d) * fake)
    }

    /// The expected probability that the attack reconstructs all d attributes of a user,
    /// under a uniform prior on every attribute, independently (exact).
    ///
    /// # Formula
    ///
    /// ```text
    /// SPL:      prod_j a_j(eps/d)
    /// SMP, RS+: (1/d) sum_j a_j prod_{i != j} 1/k_i
    /// ```
    ///
    /// Under SMP and RS+ exactly one report is genuine: given the sampled attribute j the
    /// guesses are independent, right w.p. `a_j` on j and `1/k_i` on each other. The
    /// product of the per-attribute ASRs ([`Collection::asr_joint_product`]) treats the d
    /// guesses as independent, which they are not: it overstates the joint success.
    ///
    /// ```
    /// use ldp_analytic::{multidim::Collection, LhAsr};
    /// use ldp_core::multidim::Solution;
    /// use ldp_core::{DomainSize, Epsilon, Protocol};
    /// let domains = [DomainSize::new(2)?, DomainSize::new(3)?];
    /// let eps = Epsilon::new(3.0)?;
    /// let rsfd = Collection::classic(Solution::RsFd, Protocol::Grr, eps, &domains)?;
    /// let (exact, product) = (rsfd.asr_joint(LhAsr::Exact)?, rsfd.asr_joint_product(LhAsr::Exact)?);
    /// assert!((exact - 0.4003).abs() < 1e-4 && (product - 0.4738).abs() < 1e-4);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn asr_joint(&self, lh: LhAsr) -> Result<f64> {
        let a = self.one_report(lh);
        if self.solution == Solution::Spl {
            return Ok(a.iter().product());
        }
        let guess: Vec<f64> = self.specs.iter().map(|s| 1.0 / s.k().as_f64()).collect();
        Ok(one_genuine(&a, |_, i| guess[i]))
    }

    /// The product of the per-attribute ASRs, `prod_j ASR_j`: the joint success if the d
    /// guesses were independent. Exact for SPL only; for SMP and RS+ it overstates
    /// [`Collection::asr_joint`].
    pub fn asr_joint_product(&self, lh: LhAsr) -> Result<f64> {
        (0..self.dimensions()).map(|j| self.asr(j, lh)).product()
    }

    /// The expected probability that the attack reconstructs all d attributes, averaged
    /// over the given users (one item per attribute each): exact for any joint law of the
    /// attributes, for the families of [`Collection::asr_for`]. Only RS+RFD depends on the
    /// users: its fakes' guesses favour the prior's items.
    ///
    /// # Formula
    ///
    /// ```text
    /// RS+RFD: mean over users u of (1/d) sum_j a_j prod_{i != j} psi_i(u_i),
    ///         psi_i(v) = a_i pi_i(v) + (1 - a_i)(1 - pi_i(v)) / (k_i - 1)
    /// ```
    ///
    /// and [`Collection::asr_joint`] for the other solutions.
    pub fn asr_joint_for(&self, users: &[Vec<u32>], lh: LhAsr) -> Result<f64> {
        for spec in &self.specs {
            check_symmetric(spec)?;
        }
        if users.is_empty() {
            return Err(MultidimInputError::Length {
                what: "users",
                expected: 1,
                found: 0,
            });
        }
        let d = self.dimensions();
        for items in users {
            if items.len() != d {
                return Err(MultidimInputError::Length {
                    what: "items per user, one per attribute",
                    expected: d,
                    found: items.len(),
                });
            }
            for (attribute, (&item, spec)) in items.iter().zip(&self.specs).enumerate() {
                if item >= spec.k().get() {
                    return Err(MultidimInputError::Item {
                        attribute,
                        item,
                        k: spec.k().get(),
                    });
                }
            }
        }
        let Some(priors) = &self.priors else {
            return self.asr_joint(lh);
        };
        let a = self.one_report(lh);
        let psi = |i: usize, v: u32| {
            let (pi, k) = (priors.get(i)[v as usize], self.specs[i].k().as_f64());
            a[i] * pi + (1.0 - a[i]) * (1.0 - pi) / (k - 1.0)
        };
        let total: f64 = users
            .iter()
            .map(|items| one_genuine(&a, |_, i| psi(i, items[i])))
            .sum();
        Ok(total / users.len() as f64)
    }

    /// What an attacker who links a user's reports over `surveys` SMP collections learns
    /// of the profile (risks-ldp's setting, PVLDB 2023 §3.2): each survey the user reports
    /// one attribute at the full budget, chosen as `sampling` says; a repeated attribute
    /// is memoized (the same report: it adds nothing). The attack's guess on a reported
    /// attribute is right w.p. `a_j = ASR(eps, k_j)` ([`asr::expected`], exact, where the
    /// paper's `ACC_FO` approximates LH's), independently across attributes; an unreported
    /// one as `unreported` says. Defined for SMP collections.
    ///
    /// # Formula
    ///
    /// With `u_j` the success on an unreported attribute (0 or `1/k_j`) and `R` the
    /// reported set, expanding `prod_j (u_j + (a_j - u_j) [j in R])`:
    ///
    /// ```text
    /// all_correct      = sum_t e_t P[T subset R, |T| = t]
    ///                    e_t = sum_{|T| = t} prod_{j in T} (a_j - u_j) prod_{j not in T} u_j
    /// expected_correct = sum_j u_j + (a_j - u_j) P[j in R]
    /// without repetition: P[T subset R] = prod_{i < t} (S - i) / (d - i)  (R a uniform S-subset)
    /// with repetition:    P[T subset R] = P[S uniform draws from d hit all t of T]
    ///                     (a chain on the number hit; P[j in R] = 1 - (1 - 1/d)^S)
    /// ```
    ///
    /// With unreported attributes missing and S = d this is risks-ldp's Eq. 4,
    /// `prod_j a_j`, without repetition, and Eq. 5, `(d! / d^d) prod_j a_j`, with.
    ///
    /// ```
    /// use ldp_analytic::multidim::{Collection, Sampling, Unreported};
    /// use ldp_analytic::{asr, LhAsr};
    /// use ldp_core::multidim::Solution;
    /// use ldp_core::{DomainSize, Epsilon, Protocol};
    /// let domains = [DomainSize::new(74)?, DomainSize::new(7)?, DomainSize::new(16)?];
    /// let smp = Collection::classic(Solution::Smp, Protocol::Grr, Epsilon::new(4.0)?, &domains)?;
    /// let a: f64 = smp.specs().iter().map(|s| asr::expected(s, LhAsr::Exact)).product();
    /// let eq4 = smp.profile(3, Sampling::WithoutRepetition, Unreported::Missing, LhAsr::Exact)?;
    /// let eq5 = smp.profile(3, Sampling::WithRepetition, Unreported::Missing, LhAsr::Exact)?;
    /// assert!((eq4.all_correct - a).abs() < 1e-15);
    /// assert!((eq5.all_correct - a * 6.0 / 27.0).abs() < 1e-15);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn profile(
        &self,
        surveys: u32,
        sampling: Sampling,
        unreported: Unreported,
        lh: LhAsr,
    ) -> Result<Profile> {
        if self.solution != Solution::Smp {
            return Err(MultidimInputError::Solution {
                what: "profiling over surveys",
                expected: "SMP",
                found: self.solution,
            });
        }
        let a = self.one_report(lh);
        let u: Vec<f64> = self
            .specs
            .iter()
            .map(|s| match unreported {
                Unreported::Missing => 0.0,
                Unreported::Guessed => 1.0 / s.k().as_f64(),
                Unreported::Ignored => 1.0,
            })
            .collect();
        let d = a.len();
        let covered = match sampling {
            Sampling::WithoutRepetition => subset_covered(d, surveys),
            Sampling::WithRepetition => draws_cover(d, surveys),
        };
        // e_t: the coefficients of prod_j (u_j + (a_j - u_j) z).
        let mut e = vec![0.0; d + 1];
        e[0] = 1.0;
        for (j, (&aj, &uj)) in a.iter().zip(&u).enumerate() {
            for t in (0..=j + 1).rev() {
                let carried = if t > 0 { e[t - 1] * (aj - uj) } else { 0.0 };
                e[t] = e[t] * uj + carried;
            }
        }
        let all_correct = e.iter().zip(&covered).map(|(e, c)| e * c).sum();
        let expected_correct = a
            .iter()
            .zip(&u)
            .map(|(aj, uj)| uj + (aj - uj) * covered[1])
            .sum();
        Ok(Profile {
            all_correct,
            expected_correct,
        })
    }
}

/// `(1/d) sum_j a_j prod_{i != j} other(j, i)`.
fn one_genuine(a: &[f64], other: impl Fn(usize, usize) -> f64) -> f64 {
    let d = a.len();
    let sum: f64 = (0..d)
        .map(|j| {
            a[j] * (0..d)
                .filter(|&i| i != j)
                .map(|i| other(j, i))
                .product::<f64>()
        })
        .sum();
    sum / d as f64
}

/// `P[T subset R]` for `|T| = 0..=d`, R a uniform min(S, d)-subset of d.
fn subset_covered(d: usize, surveys: u32) -> Vec<f64> {
    let s = (surveys as usize).min(d);
    let mut covered = vec![0.0; d + 1];
    covered[0] = 1.0;
    for t in 1..=d {
        covered[t] = if t > s {
            0.0
        } else {
            covered[t - 1] * (s - (t - 1)) as f64 / (d - (t - 1)) as f64
        };
    }
    covered
}

/// `P[S uniform draws from d hit every one of t given attributes]`, t = 0..=d: a chain on
/// the number of the t hit so far, each draw hitting a new one w.p. `(t - c) / d`.
fn draws_cover(d: usize, surveys: u32) -> Vec<f64> {
    let df = d as f64;
    (0..=d)
        .map(|t| {
            let mut state = vec![0.0; t + 1];
            state[0] = 1.0;
            for _ in 0..surveys {
                for c in (0..=t).rev() {
                    let stay = state[c] * c as f64 / df + state[c] * (df - t as f64) / df;
                    let enter = if c > 0 {
                        state[c - 1] * (t - (c - 1)) as f64 / df
                    } else {
                        0.0
                    };
                    state[c] = stay + enter;
                }
            }
            state[t]
        })
        .collect()
}

/// How each survey picks the attribute a user reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Sampling {
    /// Uniformly among the attributes the user has not reported yet (risks-ldp's
    /// "uniform" metric, Eq. 4); after d surveys every attribute is reported once.
    WithoutRepetition,
    /// Uniformly among all d, independently each survey (risks-ldp's "non-uniform"
    /// metric, Eq. 5); a repeated attribute adds nothing.
    WithRepetition,
}

/// What the attacker holds for an attribute the user never reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Unreported {
    /// Nothing: never counted as inferred (risks-ldp's profiles, where it is `-1`).
    Missing,
    /// A uniform guess, right w.p. `1/k_j` (as [`Collection::asr`] counts for SMP).
    Guessed,
    /// Not asked of the profile: `all_correct` is then the probability that every
    /// reported value is right (the profile a re-identification attack matches), and
    /// `expected_correct` counts each unreported attribute as one.
    Ignored,
}

/// What a profiling attacker achieves over several surveys ([`Collection::profile`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Profile {
    /// The probability that all d attributes of a user are inferred correctly.
    pub all_correct: f64,
    /// The expected number of attributes inferred correctly.
    pub expected_correct: f64,
}

fn has_null_input(spec: &Spec) -> bool {
    dispatch_family!(spec.params(), F, _param => <F as Mechanism>::NULL_INPUT)
}

/// The families whose mechanism (for LH, under an ideal hash) treats every item alike, so
/// that the attack, given the input u, guesses each other item with one probability.
/// Hadamard codes, fast local hashing's fixed hash functions and the sketches' public
/// hashes distinguish items.
fn check_symmetric(spec: &Spec) -> Result<()> {
    match spec.family() {
        Family::Grr
        | Family::SubsetSelection
        | Family::UnaryEncoding
        | Family::ThresholdHistogram
        | Family::SummationHistogram
        | Family::LocalHashing => Ok(()),
        other => Err(MultidimInputError::NotSymmetric(other)),
    }
}

fn check_truth(attribute: usize, k: DomainSize, truth: &[f64]) -> Result<()> {
    if truth.len() != k.as_usize() {
        return Err(MultidimInputError::Length {
            what: "true frequencies, one per item",
            expected: k.as_usize(),
            found: truth.len(),
        });
    }
    for &f in truth {
        check_unit("a true frequency", f)?;
    }
    let sum: f64 = truth.iter().sum();
    if (sum - 1.0).abs() > FREQUENCY_SUM_TOLERANCE {
        return Err(MultidimInputError::FrequencySum { attribute, sum });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use statrs::distribution::{Binomial, Discrete};

    fn eps(e: f64) -> Epsilon {
        Epsilon::new(e).unwrap()
    }

    fn k(k: u32) -> DomainSize {
        DomainSize::new(k).unwrap()
    }

    /// The anchors' amplified budget, written as they write it: ln((e^eps - 1 + b) / b),
    /// b = 1/d.
    fn amplified(e: f64, d: usize) -> f64 {
        let b = 1.0 / d as f64;
        ((e.exp() - 1.0 + b) / b).ln()
    }

    fn rel(a: f64, b: f64) -> f64 {
        (a - b).abs() / b.abs()
    }

    /// `d^2 gamma (1 - gamma) / (n (p - q)^2)`, the anchors' common form.
    fn anchor(gamma: f64, p: f64, q: f64, d: usize, n: f64) -> f64 {
        let d = d as f64;
        d * d * gamma * (1.0 - gamma) / (n * (p - q) * (p - q))
    }

    const SETTINGS: [(f64, usize, u32, f64, f64); 5] = [
        (0.5, 2, 2, 0.0, 1000.0),
        (1.0, 3, 7, 0.3, 5000.0),
        (2.0, 5, 16, 0.05, 20_000.0),
        (4.0, 10, 74, 0.9, 1e6),
        (0.1, 18, 3, 1.0, 45_000.0),
    ];

    /// multi-freq-ldpy's Variance_RSpFD.py, with the true f: our Sampled RS+ variance,
    /// through the real RS+FD / RS+FD-z collections, to 1e-12.
    #[test]
    fn rs_plus_reproduces_multi_freq_ldpy_variance_rspfd() {
        let mut checked = 0;
        for &(e, d, kk, f, n) in &SETTINGS {
            let ep = amplified(e, d);
            let kf = f64::from(kk);
            let domains = vec![k(kk); d];
            let pop = Population::Sampled;
            // GRR: p = e^eps'/(e^eps' + k - 1), q = (1 - p)/(k - 1), fakes uniform.
            let p = ep.exp() / (ep.exp() + kf - 1.0);
            let q = (1.0 - p) / (kf - 1.0);
            let gamma = (q + f * (p - q) + (d as f64 - 1.0) / kf) / d as f64;
            let c = Collection::classic(Solution::RsFd, Protocol::Grr, eps(e), &domains).unwrap();
            let ours = c.variance(d - 1, 0, n, f, pop).unwrap();
            assert!(
                rel(ours, anchor(gamma, p, q, d, n)) < 1e-12,
                "GRR {e} {d} {kk}"
            );
            for (protocol, p, q) in [
                (
                    Protocol::Sue,
                    (ep / 2.0).exp() / ((ep / 2.0).exp() + 1.0),
                    1.0 / ((ep / 2.0).exp() + 1.0),
                ),
                (Protocol::Oue, 0.5, 1.0 / (ep.exp() + 1.0)),
            ] {
                // UE-z: gamma = (1/d)(d q + f (p - q)).
                let gamma_z = (d as f64 * q + f * (p - q)) / d as f64;
                let z = Collection::classic(Solution::RsFdNull, protocol, eps(e), &domains)
                    .unwrap()
                    .variance(0, kk - 1, n, f, pop)
                    .unwrap();
                assert!(rel(z, anchor(gamma_z, p, q, d, n)) < 1e-12, "{protocol} z");
                // UE-r: gamma = (1/d)(f (p - q) + q + (d - 1)(p/k + (k - 1) q / k)).
                let gamma_r = (f * (p - q) + q + (d as f64 - 1.0) * (p / kf + (kf - 1.0) * q / kf))
                    / d as f64;
                let r = Collection::classic(Solution::RsFd, protocol, eps(e), &domains)
                    .unwrap()
                    .variance(0, 0, n, f, pop)
                    .unwrap();
                assert!(rel(r, anchor(gamma_r, p, q, d, n)) < 1e-12, "{protocol} r");
                checked += 2;
            }
            checked += 1;
        }
        assert_eq!(checked, 25);
    }

    fn prior(kk: u32) -> Vec<f64> {
        let w: Vec<f64> = (0..kk).map(|v| 2.0 + f64::from(v % 4)).collect();
        let t: f64 = w.iter().sum();
        w.into_iter().map(|x| x / t).collect()
    }

    /// risks-ldp's RS+RFD variance (paper App. A Thm 2, App. B Thm 4), with the true f.
    /// UE-r's fakes are perturbed there as here: equal to 1e-12. GRR's are the prior's item
    /// itself there (not perturbed): a fake supports v w.p. pi_v, which is our perturbed
    /// fake of share phi = (pi_v - q)/(p - q); at that phi our formula is theirs, and at
    /// the prior (what this toolkit's client sends) it is not.
    #[test]
    fn rs_plus_reproduces_risks_ldp_rsrfd_variance() {
        for &(e, d, kk, f, n) in &SETTINGS {
            let ep = amplified(e, d);
            let kf = f64::from(kk);
            let pi = prior(kk);
            let priors = Priors::new(vec![pi.clone(); d]).unwrap();
            let dd = d as f64;
            for (protocol, p, q) in [
                (
                    Protocol::Sue,
                    (ep / 2.0).exp() / ((ep / 2.0).exp() + 1.0),
                    1.0 / ((ep / 2.0).exp() + 1.0),
                ),
                (Protocol::Oue, 0.5, 1.0 / (ep.exp() + 1.0)),
            ] {
                let c = Collection::with_priors(eps(e), priors.clone(), |k, e| {
                    Spec::classic(protocol, k, e)
                })
                .unwrap();
                for v in 0..kk {
                    let pv = pi[v as usize];
                    let gamma = (f * (p - q) + q + (dd - 1.0) * (pv * (p - q) + q)) / dd;
                    let ours = c.variance(1, v, n, f, Population::Sampled).unwrap();
                    assert!(
                        rel(ours, anchor(gamma, p, q, d, n)) < 1e-12,
                        "{protocol} {v}"
                    );
                }
            }
            let p = ep.exp() / (ep.exp() + kf - 1.0);
            let q = (1.0 - p) / (kf - 1.0);
            let grr = Collection::with_priors(eps(e), priors.clone(), |k, e| {
                Spec::classic(Protocol::Grr, k, e)
            })
            .unwrap();
            let spec = grr.specs()[0];
            for v in 0..kk {
                let pv = pi[v as usize];
                let gamma = (q + f * (p - q) + (dd - 1.0) * pv) / dd;
                let theirs = anchor(gamma, p, q, d, n);
                let phi = (pv - q) / (p - q);
                if (0.0..=1.0).contains(&phi) {
                    let at = rs_plus_variance(&spec, d, n, f, phi, Population::Sampled).unwrap();
                    assert!(rel(at, theirs) < 1e-12, "GRR unperturbed {e} {d} {kk} {v}");
                }
                let perturbed = grr.variance(0, v, n, f, Population::Sampled).unwrap();
                let gamma_ours = (q + f * (p - q) + (dd - 1.0) * (q + pv * (p - q))) / dd;
                assert!(rel(perturbed, anchor(gamma_ours, p, q, d, n)) < 1e-12);
                if d > 1 && (pv - (q + pv * (p - q))).abs() > 1e-6 {
                    assert!(rel(perturbed, theirs) > 1e-6);
                }
            }
        }
    }

    /// Sampled exceeds Fixed by f (1 - f) / n for SPL and RS+, and d = 1 RS+ is the
    /// family's own variance.
    #[test]
    fn populations_differ_by_the_sampling_error() {
        let spec = Spec::classic(Protocol::Oue, k(9), eps(1.3)).unwrap();
        for &f in &[0.0, 0.2, 0.7, 1.0] {
            let n = 777.0;
            let gap = f * (1.0 - f) / n;
            let fixed = spl_variance(&spec, n, f, Population::Fixed).unwrap();
            let sampled = spl_variance(&spec, n, f, Population::Sampled).unwrap();
            assert!((sampled - fixed - gap).abs() < 1e-15);
            for &(d, phi) in &[(1usize, 0.3), (4, 0.0), (4, 0.25), (7, 1.0)] {
                let fixed = rs_plus_variance(&spec, d, n, f, phi, Population::Fixed).unwrap();
                let sampled = rs_plus_variance(&spec, d, n, f, phi, Population::Sampled).unwrap();
                assert!((sampled - fixed - gap).abs() < 1e-14, "{d} {phi} {f}");
                if d == 1 {
                    assert!(rel(fixed, variance::exact(&spec, n, f)) < 1e-13);
                }
            }
        }
    }

    /// E[1/m | m >= 1] against statrs's binomial pmf summed over every m.
    #[test]
    fn the_mean_inverse_group_size_is_the_binomial_sum() {
        for &(n, d) in &[(1u64, 3u32), (2, 2), (10, 3), (30, 3), (100, 18), (5000, 7)] {
            let p = 1.0 / f64::from(d);
            let b = Binomial::new(p, n).unwrap();
            let nonzero = 1.0 - b.pmf(0);
            let direct: f64 = (1..=n).map(|m| b.pmf(m) / m as f64).sum::<f64>() / nonzero;
            let ours = mean_inverse_binomial(n, p);
            // statrs's pmf goes through ln Gamma, about 1e-13 relative a term at n = 5000.
            assert!(rel(ours, direct) < 1e-11, "{n} {d}: {ours} vs {direct}");
        }
        assert_eq!(mean_inverse_binomial(40, 1.0), 1.0 / 40.0);
    }

    /// SMP at d = 1 is the family at n users; the group-size mean form is the exact one's
    /// limit; the sampling term makes SMP worse than the family at n / d.
    #[test]
    fn smp_variance_limits() {
        let spec = Spec::classic(Protocol::Grr, k(4), eps(2.0)).unwrap();
        for pop in [Population::Fixed, Population::Sampled] {
            for group in [SmpGroup::Mean, SmpGroup::Exact] {
                let one = smp_variance(&spec, 1, 500.0, 0.3, pop, group).unwrap();
                let spl = spl_variance(&spec, 500.0, 0.3, pop).unwrap();
                assert!(rel(one, spl) < 1e-12, "{pop:?} {group:?}");
            }
        }
        let mean = smp_variance(&spec, 3, 1e6, 0.5, Population::Fixed, SmpGroup::Mean).unwrap();
        let exact = smp_variance(&spec, 3, 1e6, 0.5, Population::Fixed, SmpGroup::Exact).unwrap();
        assert!(rel(exact, mean) < 3e-6);
        let plug_in = variance::exact(&spec, 1e6 / 3.0, 0.5);
        assert!(rel(mean, plug_in + 0.25 * 2.0 / (1e6 - 1.0)) < 1e-12);
    }

    /// P[T subset R] by enumerating every sequence of surveys.
    #[test]
    fn coverage_probabilities_by_enumeration() {
        for d in 1..=4usize {
            for s in 0..=5u32 {
                let mut with = vec![0.0; d + 1];
                let total = (d as f64).powi(s as i32);
                for code in 0..d.pow(s) {
                    let mut hit = vec![false; d];
                    let mut c = code;
                    for _ in 0..s {
                        hit[c % d] = true;
                        c /= d;
                    }
                    for (t, w) in with.iter_mut().enumerate() {
                        if hit[..t].iter().all(|&h| h) {
                            *w += 1.0 / total;
                        }
                    }
                }
                let ours = draws_cover(d, s);
                for t in 0..=d {
                    assert!((ours[t] - with[t]).abs() < 1e-12, "{d} {s} {t}");
                }
                // Without repetition: the first t of a uniform order of the d attributes.
                let without = subset_covered(d, s);
                let mut perms = 0.0;
                let mut counts = vec![0.0; d + 1];
                permutations(d, &mut |order: &[usize]| {
                    perms += 1.0;
                    let reported = &order[..(s as usize).min(d)];
                    for (t, c) in counts.iter_mut().enumerate() {
                        if (0..t).all(|j| reported.contains(&j)) {
                            *c += 1.0;
                        }
                    }
                });
                for t in 0..=d {
                    assert!(
                        (without[t] - counts[t] / perms).abs() < 1e-12,
                        "{d} {s} {t}"
                    );
                }
            }
        }
    }

    fn permutations(d: usize, visit: &mut impl FnMut(&[usize])) {
        fn go(prefix: &mut Vec<usize>, d: usize, visit: &mut impl FnMut(&[usize])) {
            if prefix.len() == d {
                visit(prefix);
                return;
            }
            for j in 0..d {
                if !prefix.contains(&j) {
                    prefix.push(j);
                    go(prefix, d, visit);
                    prefix.pop();
                }
            }
        }
        go(&mut Vec::new(), d, visit);
    }

    /// risks-ldp's Eq. 4 and 5 as their notebook computes them (d = 3, k = [74, 7, 16],
    /// the factor (d - idx)/d), with our exact per-attribute ASR in place of ACC_FO.
    #[test]
    fn profile_is_eq_4_and_5_after_d_surveys() {
        let ks = [74u32, 7, 16];
        let domains: Vec<DomainSize> = ks.iter().map(|&x| k(x)).collect();
        for protocol in [Protocol::Grr, Protocol::Oue, Protocol::Sue, Protocol::Olh] {
            for e in [1.0, 4.0, 8.0] {
                let c = Collection::classic(Solution::Smp, protocol, eps(e), &domains).unwrap();
                let acc: Vec<f64> = c
                    .specs()
                    .iter()
                    .map(|s| asr::expected(s, LhAsr::Exact))
                    .collect();
                let u: f64 = acc.iter().product();
                let nu: f64 = acc
                    .iter()
                    .enumerate()
                    .map(|(idx, a)| (3.0 - idx as f64) / 3.0 * a)
                    .product();
                let m = Unreported::Missing;
                let eq4 = c
                    .profile(3, Sampling::WithoutRepetition, m, LhAsr::Exact)
                    .unwrap();
                let eq5 = c
                    .profile(3, Sampling::WithRepetition, m, LhAsr::Exact)
                    .unwrap();
                assert!(rel(eq4.all_correct, u) < 1e-12);
                assert!(rel(eq5.all_correct, nu) < 1e-12);
                // Expected number: every attribute reported once without repetition.
                assert!(rel(eq4.expected_correct, acc.iter().sum()) < 1e-12);
                let once = 1.0 - (2.0f64 / 3.0).powi(3);
                assert!(rel(eq5.expected_correct, once * acc.iter().sum::<f64>()) < 1e-12);
            }
        }
        // GRR's ACC_FO is e^eps / (e^eps + k - 1): the anchor's own ASR.
        let c = Collection::classic(Solution::Smp, Protocol::Grr, eps(2.0), &domains).unwrap();
        let acc_grr: f64 = ks
            .iter()
            .map(|&x| 2f64.exp() / (2f64.exp() + f64::from(x) - 1.0))
            .product();
        let eq4 = c
            .profile(
                3,
                Sampling::WithoutRepetition,
                Unreported::Missing,
                LhAsr::Paper,
            )
            .unwrap();
        assert!(rel(eq4.all_correct, acc_grr) < 1e-12);
    }

    #[test]
    fn bad_input_is_refused_with_its_reason() {
        let spec = Spec::classic(Protocol::Grr, k(4), eps(1.0)).unwrap();
        let pop = Population::Fixed;
        assert_eq!(
            rs_plus_variance(&spec, 0, 10.0, 0.1, 0.2, pop),
            Err(MultidimInputError::NoAttributes)
        );
        for n in [0.0, -3.0, f64::NAN, f64::INFINITY] {
            assert!(matches!(
                spl_variance(&spec, n, 0.1, pop),
                Err(MultidimInputError::Users { .. })
            ));
        }
        for f in [-0.1, 1.5, f64::NAN] {
            assert!(matches!(
                smp_variance(&spec, 2, 10.0, f, pop, SmpGroup::Mean),
                Err(MultidimInputError::Frequency { .. })
            ));
        }
        assert!(matches!(
            rs_plus_variance(&spec, 2, 10.0, 0.1, 1.2, pop),
            Err(MultidimInputError::Frequency { .. })
        ));
        assert!(matches!(
            smp_variance(&spec, 2, 10.5, 0.1, pop, SmpGroup::Exact),
            Err(MultidimInputError::Users { .. })
        ));
        assert_eq!(
            Collection::classic(Solution::Spl, Protocol::Grr, eps(1.0), &[]),
            Err(MultidimInputError::NoAttributes)
        );
        assert_eq!(
            Collection::classic(Solution::RsFdNull, Protocol::Grr, eps(1.0), &[k(3)]),
            Err(MultidimInputError::NoNullInput(Family::Grr))
        );
        assert!(matches!(
            Collection::classic(Solution::RsRfd, Protocol::Grr, eps(1.0), &[k(3)]),
            Err(MultidimInputError::Priors(_))
        ));
        // A builder that ignores the budget it is given.
        assert!(matches!(
            Collection::new(Solution::Spl, eps(1.0), &[k(3), k(3)], |k, _| {
                Spec::classic(Protocol::Grr, k, eps(1.0))
            }),
            Err(MultidimInputError::WrongSpec { .. })
        ));
        let mut which = 0;
        assert!(matches!(
            Collection::new(Solution::Spl, eps(1.0), &[k(3), k(3)], |k, e| {
                which += 1;
                Spec::classic(
                    if which == 1 {
                        Protocol::Grr
                    } else {
                        Protocol::Oue
                    },
                    k,
                    e,
                )
            }),
            Err(MultidimInputError::MixedFamilies { attribute: 1, .. })
        ));
        let c =
            Collection::classic(Solution::RsFd, Protocol::Grr, eps(1.0), &[k(3), k(2)]).unwrap();
        assert_eq!(
            c.variance(2, 0, 10.0, 0.1, pop),
            Err(MultidimInputError::Attribute { attribute: 2, d: 2 })
        );
        assert_eq!(
            c.variance(1, 2, 10.0, 0.1, pop),
            Err(MultidimInputError::Item {
                attribute: 1,
                item: 2,
                k: 2
            })
        );
        assert!(matches!(
            c.asr_for(0, &[0.5, 0.5], LhAsr::Exact),
            Err(MultidimInputError::Length { .. })
        ));
        assert!(matches!(
            c.asr_for(0, &[0.5, 0.4, 0.4], LhAsr::Exact),
            Err(MultidimInputError::FrequencySum { .. })
        ));
        assert!(matches!(
            c.asr_joint_for(&[vec![0, 1, 0]], LhAsr::Exact),
            Err(MultidimInputError::Length { .. })
        ));
        assert!(matches!(
            c.asr_joint_for(&[vec![0, 2]], LhAsr::Exact),
            Err(MultidimInputError::Item { .. })
        ));
        assert!(matches!(
            c.profile(
                2,
                Sampling::WithRepetition,
                Unreported::Missing,
                LhAsr::Exact
            ),
            Err(MultidimInputError::Solution { .. })
        ));
        let hr = Collection::classic(Solution::RsFd, Protocol::Hr, eps(1.0), &[k(8), k(8)]);
        if let Ok(hr) = hr {
            assert!(matches!(
                hr.asr_for(0, &[0.125; 8], LhAsr::Exact),
                Err(MultidimInputError::NotSymmetric(_))
            ));
        }
        let priors = Priors::new(vec![vec![0.5, 0.5]]).unwrap();
        assert!(matches!(
            Collection::with_priors(eps(1.0), priors, |k, e| Spec::classic(Protocol::Grr, k, e))
                .map(|c| c.dimensions()),
            Ok(1)
        ));
    }
}
