//! Unary encoding (RAPPOR's SUE, Wang et al.'s OUE, and any p), paper Eq. "ue_parameters".

use rand::Rng;
use rand_distr::{Bernoulli, Distribution};
use serde::{Deserialize, Serialize};

use crate::aggregate::SupportCounts;
use crate::error::{ItemOutOfRange, ParamError, ReportError};
use crate::mechanism::{Mechanism, PureProtocol, Support};
use crate::report::{OnesReport, check_sorted_distinct};
use crate::sampling::BernoulliSet;
use crate::vocab::{DomainSize, Epsilon};

/// UE: one-hot encode the item, then keep the true bit with probability `p` and set every
/// other bit with probability `q = p / (e^eps (1 - p) + p)`.
///
/// Privacy: `p (1 - q) / ((1 - p) q) = e^eps` for this `q`, which is the largest ratio of
/// two inputs' probabilities for any bit vector.
///
/// Sampling is exact and costs O(1 + kq): only the one-bits are drawn (geometric gaps).
///
/// ```
/// use ldp_core::{DomainSize, Epsilon, PureProtocol, UnaryEncoding};
/// let (k, eps) = (DomainSize::new(100)?, Epsilon::new(2.0)?);
/// let oue = UnaryEncoding::optimized(k, eps);
/// assert_eq!(oue.p_star(), 0.5);
/// let aue = UnaryEncoding::new(k, eps, 0.818)?;
/// assert!(aue.q_star() > oue.q_star());
/// # Ok::<(), ldp_core::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "UnaryParams", into = "UnaryParams")]
pub struct UnaryEncoding {
    k: DomainSize,
    eps: Epsilon,
    p: f64,
    q: f64,
    keep: Bernoulli,
    others: BernoulliSet,
}

/// Serialized parameters of [`UnaryEncoding`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UnaryParams {
    /// Domain size.
    pub k: DomainSize,
    /// Privacy budget.
    pub epsilon: Epsilon,
    /// Probability of keeping the true bit, in `[0.5, 1)`.
    pub p: f64,
}

impl UnaryEncoding {
    /// UE with true-bit probability `p` in `[0.5, 1)`; `q` follows from `eps`.
    pub fn new(k: DomainSize, eps: Epsilon, p: f64) -> Result<Self, ParamError> {
        check_unary_p(p)?;
        let q = p / (eps.exp() * (1.0 - p) + p);
        Ok(Self::from_pq(k, eps, p, q))
    }

    /// Symmetric UE (RAPPOR): `p = e^(eps/2) / (e^(eps/2) + 1)`, `q = 1 - p`.
    pub fn symmetric(k: DomainSize, eps: Epsilon) -> Self {
        let h = (eps.get() / 2.0).exp();
        Self::from_pq(k, eps, h / (h + 1.0), 1.0 / (h + 1.0))
    }

    /// Optimized UE: `p = 1/2`, `q = 1 / (e^eps + 1)`, which minimizes the variance.
    pub fn optimized(k: DomainSize, eps: Epsilon) -> Self {
        Self::from_pq(k, eps, 0.5, 1.0 / (eps.exp() + 1.0))
    }

    fn from_pq(k: DomainSize, eps: Epsilon, p: f64, q: f64) -> Self {
        Self {
            k,
            eps,
            p,
            q,
            keep: Bernoulli::new(p).expect("p in [0.5, 1]"),
            others: BernoulliSet::new(q),
        }
    }
}

impl TryFrom<UnaryParams> for UnaryEncoding {
    type Error = ParamError;
    fn try_from(p: UnaryParams) -> Result<Self, ParamError> {
        Self::new(p.k, p.epsilon, p.p)
    }
}

impl From<UnaryEncoding> for UnaryParams {
    fn from(m: UnaryEncoding) -> Self {
        Self {
            k: m.k,
            epsilon: m.eps,
            p: m.p,
        }
    }
}

/// The true-bit probability must lie in `[0.5, 1)`.
pub(crate) fn check_unary_p(p: f64) -> Result<(), ParamError> {
    if (0.5..1.0).contains(&p) {
        Ok(())
    } else {
        Err(ParamError::UnaryP { value: p })
    }
}

/// Draws the one-bits of a perturbed one-hot vector: the true bit with probability
/// `keep`, the `k - 1` others independently via `others`. Shared by UE and THE.
pub(crate) fn sample_ones<R: Rng + ?Sized>(
    k: DomainSize,
    item: u32,
    keep: &Bernoulli,
    others: &BernoulliSet,
    rng: &mut R,
) -> OnesReport {
    let with_x = keep.sample(rng);
    // Room for the mean number of one-bits plus a few standard deviations.
    let mean = others.mean_count(k.get() - 1);
    let mut ones = Vec::with_capacity((mean + 4.0 * mean.sqrt()) as usize + 2);
    // The others are drawn over 0..k-1 and shifted past the true item on the fly.
    let mut pending_x = with_x;
    others.for_each(k.get() - 1, rng, |i| {
        if i >= item {
            if pending_x {
                ones.push(item);
                pending_x = false;
            }
            ones.push(i + 1);
        } else {
            ones.push(i);
        }
    });
    if pending_x {
        ones.push(item);
    }
    OnesReport { ones }
}

/// `ln P[ones | item]` for independent bits with probabilities `p` (true) and `q` (others).
pub(crate) fn ones_log_likelihood(
    k: DomainSize,
    p: f64,
    q: f64,
    report: &OnesReport,
    item: u32,
) -> f64 {
    let set = report.ones.len() as f64;
    let has_x = report.ones.binary_search(&item).is_ok();
    let (true_bit, others_set) = if has_x {
        (p.ln(), set - 1.0)
    } else {
        ((-p).ln_1p(), set)
    };
    let others_clear = (k.as_f64() - 1.0) - others_set;
    true_bit + others_set * q.ln() + others_clear * (-q).ln_1p()
}

impl Mechanism for UnaryEncoding {
    type Report = OnesReport;
    type Aggregator = SupportCounts<UnaryEncoding>;

    fn domain_size(&self) -> DomainSize {
        self.k
    }

    fn epsilon(&self) -> Epsilon {
        self.eps
    }

    #[inline]
    fn perturb<R: Rng + ?Sized>(
        &self,
        item: u32,
        rng: &mut R,
    ) -> Result<OnesReport, ItemOutOfRange> {
        self.k.check_item(item)?;
        Ok(sample_ones(self.k, item, &self.keep, &self.others, rng))
    }

    fn validate(&self, report: &OnesReport) -> Result<(), ReportError> {
        check_sorted_distinct("ones", &report.ones, self.k.get())
    }

    fn log_likelihood(&self, report: &OnesReport, item: u32) -> f64 {
        ones_log_likelihood(self.k, self.p, self.q, report, item)
    }

    fn aggregator(&self) -> SupportCounts<UnaryEncoding> {
        SupportCounts::new(self.clone())
    }
}

impl Support for UnaryEncoding {
    #[inline]
    fn for_each_supported(&self, report: &OnesReport, visit: impl FnMut(u32)) {
        report.ones.iter().copied().for_each(visit);
    }

    fn supports(&self, report: &OnesReport, item: u32) -> bool {
        report.ones.binary_search(&item).is_ok()
    }
}

impl PureProtocol for UnaryEncoding {
    fn p_star(&self) -> f64 {
        self.p
    }
    fn q_star(&self) -> f64 {
        self.q
    }
}
