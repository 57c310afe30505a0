//! Generalized randomized response (Kairouz et al. 2016), paper Eq. "grr".

use rand::{Rng, RngExt};
use rand_distr::{Bernoulli, Distribution};

use crate::aggregate::SupportCounts;
use crate::attack_surface::{AttackSurface, MaxGain, support_attack_surface};
use crate::error::{ItemOutOfRange, ParamError, ReportError};
use crate::exact_outputs::{Coverage, ExactOutputs, TooManyOutputs};
use crate::families::{FamilyMechanism, FamilyParams};
use crate::longitudinal::{MemoShape, Refresh};
use crate::mechanism::{
    Mechanism, PureProtocol, Support, check_runnable, eq_by_spec, two_valued_log_likelihoods,
};
use crate::report::{GrrReport, ReportLimits};
use crate::sampling::uniform_other;
use crate::server::Clip;
use crate::spec::Spec;
use crate::vocab::{DomainSize, Epsilon};

/// GRR's `(p, q) = (e^eps / (e^eps + k - 1), 1 / (e^eps + k - 1))`, which are also its
/// `(p*, q*)`. Written in `t = e^-eps`, so that no term overflows for any finite eps.
pub fn probabilities(k: DomainSize, eps: Epsilon) -> (f64, f64) {
    let t = (-eps.get()).exp();
    let denom = 1.0 + (k.as_f64() - 1.0) * t;
    (1.0 / denom, t / denom)
}

/// GRR: report the true item with probability `p = e^eps / (e^eps + k - 1)`, otherwise
/// one of the other `k - 1` items uniformly, each with `q = 1 / (e^eps + k - 1)`.
///
/// Privacy: `p / q = e^eps` is the largest ratio of two inputs' probabilities of a report.
///
/// ```
/// use ldp_core::{DomainSize, Epsilon, Grr, Mechanism, simulation::stream_rng, simulation::Role};
/// let grr = Grr::new(DomainSize::new(10)?, Epsilon::new(1.0)?)?;
/// let mut rng = stream_rng(42, 0, Role::Genuine, 0);
/// let report = grr.perturb(3, &mut rng)?;
/// assert!(report.y < 10);
/// # Ok::<(), ldp_core::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct Grr {
    k: DomainSize,
    eps: Epsilon,
    p: f64,
    q: f64,
    /// `ln p` and `ln q`, taken once: a MAP attack asks for them with every report.
    ln_p: f64,
    ln_q: f64,
    keep: Bernoulli,
}

impl Grr {
    /// GRR over `0..k` at privacy budget `eps`; fails only when k exceeds
    /// [`crate::MAX_RUNNABLE_DOMAIN`].
    pub fn new(k: DomainSize, eps: Epsilon) -> Result<Self, ParamError> {
        check_runnable(k, eps)?;
        let (p, q) = probabilities(k, eps);
        Ok(Self {
            k,
            eps,
            p,
            q,
            ln_p: p.ln(),
            ln_q: q.ln(),
            // p lies in (1/k, 1) for any valid k and eps (p rounds to 1.0 only when the
            // difference is below f64 resolution, which Bernoulli accepts).
            keep: Bernoulli::new(p).expect("p in [0, 1]"),
        })
    }
}

eq_by_spec!(Grr);

impl FamilyMechanism for Grr {
    const RELABELLING_INVARIANT: bool = true;

    fn check(_: DomainSize, _: Epsilon, (): ()) -> Result<(), ParamError> {
        Ok(())
    }

    fn build(k: DomainSize, eps: Epsilon, (): ()) -> Result<Self, ParamError> {
        Self::new(k, eps)
    }

    fn probabilities(k: DomainSize, eps: Epsilon, (): ()) -> Option<(f64, f64)> {
        Some(probabilities(k, eps))
    }

    fn support_size_range(_: DomainSize, (): ()) -> Option<(u32, u32)> {
        Some((1, 1))
    }

    /// One item.
    fn report_limits(k: DomainSize, (): ()) -> ReportLimits {
        ReportLimits {
            values: k.get(),
            entries: 1,
            seeds: 0,
        }
    }

    /// A memo is refreshed by randomized response over the k items; one report is GRR.
    fn refresh(k: DomainSize, (): ()) -> Option<Refresh<()>> {
        Some(Refresh {
            shape: MemoShape::Value { values: k.get() },
            chained: |(), _| (),
        })
    }
}

impl Mechanism for Grr {
    type Report = GrrReport;
    type Aggregator = SupportCounts<Grr>;

    fn spec(&self) -> Spec {
        Spec::from_parts(self.k, self.eps, FamilyParams::Grr)
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
            self.ln_p
        } else {
            self.ln_q
        }
    }

    fn log_likelihoods(&self, report: &GrrReport, out: &mut Vec<f64>) {
        two_valued_log_likelihoods(self, report, self.ln_p, self.ln_q, out);
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

impl AttackSurface for Grr {
    support_attack_surface!();

    /// GRR's report supports one item: each fake user reports a uniformly chosen target.
    fn plan_max_gain(&self, _: &[u32], _: Clip) -> MaxGain<GrrReport> {
        MaxGain {
            fixed: None,
            supported: 1,
        }
    }

    fn max_gain_report<R: Rng + ?Sized>(
        &self,
        _: &MaxGain<GrrReport>,
        targets: &[u32],
        rng: &mut R,
    ) -> GrrReport {
        GrrReport {
            y: targets[rng.random_range(0..targets.len())],
        }
    }

    fn random_output<R: Rng + ?Sized>(&self, _: Clip, rng: &mut R) -> GrrReport {
        GrrReport {
            y: rng.random_range(0..self.k.get()),
        }
    }

    /// Every output: one per item.
    fn exact_outputs(
        &self,
        limit: u64,
    ) -> Result<ExactOutputs<impl Iterator<Item = GrrReport>>, TooManyOutputs> {
        TooManyOutputs::check(u64::from(self.k.get()), self.k, limit)?;
        Ok(ExactOutputs {
            outputs: (0..self.k.get()).map(|y| GrrReport { y }),
            coverage: Coverage::Every,
        })
    }
}
