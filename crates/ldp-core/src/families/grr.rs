//! Generalized randomized response (Kairouz et al. 2016), paper Eq. "grr".

use rand::Rng;
use rand_distr::{Bernoulli, Distribution};
use serde::{Deserialize, Serialize};

use crate::aggregate::SupportCounts;
use crate::error::{ItemOutOfRange, ParamError, ReportError};
use crate::mechanism::{Mechanism, PureProtocol, Support};
use crate::report::GrrReport;
use crate::sampling::uniform_other;
use crate::vocab::{DomainSize, Epsilon};

/// GRR: report the true item with probability `p = e^eps / (e^eps + k - 1)`, otherwise
/// one of the other `k - 1` items uniformly, each with `q = 1 / (e^eps + k - 1)`.
///
/// ```
/// use ldp_core::{DomainSize, Epsilon, Grr, Mechanism, simulation::stream_rng, simulation::Role};
/// let grr = Grr::new(DomainSize::new(10)?, Epsilon::new(1.0)?);
/// let mut rng = stream_rng(42, 0, Role::Genuine, 0);
/// let report = grr.perturb(3, &mut rng)?;
/// assert!(report.y < 10);
/// # Ok::<(), ldp_core::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "GrrParams", into = "GrrParams")]
pub struct Grr {
    k: DomainSize,
    eps: Epsilon,
    p: f64,
    q: f64,
    keep: Bernoulli,
}

/// Serialized parameters of [`Grr`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GrrParams {
    /// Domain size.
    pub k: DomainSize,
    /// Privacy budget.
    pub epsilon: Epsilon,
}

impl Grr {
    /// GRR over `0..k` at privacy budget `eps`.
    pub fn new(k: DomainSize, eps: Epsilon) -> Self {
        // In terms of e^-eps, which cannot overflow for any finite eps.
        let t = (-eps.get()).exp();
        let denom = 1.0 + (k.as_f64() - 1.0) * t;
        let p = 1.0 / denom;
        Self {
            k,
            eps,
            p,
            q: t / denom,

            // p lies in (1/k, 1) for any valid k and eps (p rounds to 1.0 only when the
            // difference is below f64 resolution, which Bernoulli accepts).
            keep: Bernoulli::new(p).expect("p in [0, 1]"),
        }
    }
}

impl TryFrom<GrrParams> for Grr {
    type Error = ParamError;
    fn try_from(p: GrrParams) -> Result<Self, ParamError> {
        Ok(Self::new(p.k, p.epsilon))
    }
}

impl From<Grr> for GrrParams {
    fn from(m: Grr) -> Self {
        Self {
            k: m.k,
            epsilon: m.eps,
        }
    }
}

impl Mechanism for Grr {
    type Report = GrrReport;
    type Aggregator = SupportCounts<Grr>;

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
    ) -> Result<GrrReport, ItemOutOfRange> {
        self.k.check_item(item)?;
        let y = if self.keep.sample(rng) {
            item
        } else {
            uniform_other(self.k.get(), item, rng)
        };
        Ok(GrrReport { y })
    }

    fn validate(&self, report: &GrrReport) -> Result<(), ReportError> {
        if report.y < self.k.get() {
            Ok(())
        } else {
            Err(ReportError::OutOfRange {
                field: "y",
                value: u64::from(report.y),
                bound: u64::from(self.k.get()),
            })
        }
    }

    fn log_likelihood(&self, report: &GrrReport, item: u32) -> f64 {
        if report.y == item {
            self.p.ln()
        } else {
            self.q.ln()
        }
    }

    fn aggregator(&self) -> SupportCounts<Grr> {
        SupportCounts::new(self.clone())
    }
}

impl Support for Grr {
    #[inline]
    fn for_each_supported(&self, report: &GrrReport, mut visit: impl FnMut(u32)) {
        visit(report.y);
    }

    fn supports(&self, report: &GrrReport, item: u32) -> bool {
        report.y == item
    }
}

impl PureProtocol for Grr {
    fn p_star(&self) -> f64 {
        self.p
    }
    fn q_star(&self) -> f64 {
        self.q
    }
}
