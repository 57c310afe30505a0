//! Subset selection (Wang et al. 2016; Ye and Barg 2018), paper Section "SS".

use rand::Rng;
use rand_distr::{Bernoulli, Distribution};

use crate::aggregate::SupportCounts;
use crate::attack_surface::{AttackSurface, MaxGain, distinct_outside, support_attack_surface};
use crate::error::{ItemOutOfRange, ParamError, ReportError};
use crate::exact_outputs::{Coverage, ExactOutputs, TooManyOutputs, symmetry_patterns};
use crate::families::{FamilyMechanism, FamilyParams};
use crate::mechanism::{Mechanism, PureProtocol, Support, check_runnable, eq_by_spec};
use crate::report::{ReportLimits, SubsetReport, check_sorted_distinct};
use crate::sampling::{floyd_sorted, lift_around};
use crate::server::Clip;
use crate::space::ParameterSpace;
use crate::spec::Spec;
use crate::vocab::{DomainSize, Epsilon};

/// SS's `(p*, q*)` (paper Section "SS"): `p* = w e^eps / (w e^eps + k - w)` and
/// `q* = (w e^eps (w - 1) + (k - w) w) / ((k - 1)(w e^eps + k - w))`, divided through by
/// e^eps so that no term overflows. `omega` must lie in `[1, k-1]`.
pub fn probabilities(k: DomainSize, eps: Epsilon, omega: u32) -> (f64, f64) {
    let t = (-eps.get()).exp();
    let (w, kf) = (f64::from(omega), k.as_f64());
    let denom = w + (kf - w) * t;
    (
        w / denom,
        w * ((w - 1.0) + (kf - w) * t) / ((kf - 1.0) * denom),
    )
}

/// The paper's preset subset size, `max(1, round(k / (e^eps + 1)))`, which minimizes the
/// MSE. It never exceeds k - 1, since `k / (e^eps + 1) < k / 2`.
pub fn optimal_size(k: DomainSize, eps: Epsilon) -> u32 {
    (k.as_f64() / (eps.exp() + 1.0)).round().max(1.0) as u32
}

/// The paper's space for ASS: every omega in `[1, k - 1]`.
pub fn paper_space(k: DomainSize, _: Epsilon) -> ParameterSpace {
    ParameterSpace::integers(1, k.get() - 1).expect("k >= 2")
}

/// SS: report a subset of exactly `omega` items. The true item is in it with probability
/// `p = omega e^eps / (omega e^eps + k - omega)`; the rest are drawn uniformly without
/// replacement from the other items (Floyd's algorithm, O(omega)).
///
/// Privacy: a subset S holding x has probability `p / C(k-1, omega-1)`, one without x
/// `(1-p) / C(k-1, omega)`; their ratio is `p (k - omega) / ((1-p) omega) = e^eps`.
///
/// ```
/// use ldp_core::{DomainSize, Epsilon, SubsetSelection};
/// let ss = SubsetSelection::optimized(DomainSize::new(100)?, Epsilon::new(4.0)?)?;
/// assert_eq!(ss.subset_size(), 2); // round(100 / (e^4 + 1))
/// assert!(SubsetSelection::new(DomainSize::new(100)?, Epsilon::new(4.0)?, 100).is_err());
/// # Ok::<(), ldp_core::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct SubsetSelection {
    k: DomainSize,
    eps: Epsilon,
    omega: u32,
    p: f64,
    q: f64,
    include_true: Bernoulli,
    /// ln P[S | x] for a subset holding x, and for one without it.
    ln_prob_with: f64,
    ln_prob_without: f64,
}

impl SubsetSelection {
    /// SS with subset size `omega` in `[1, k-1]`.
    pub fn new(k: DomainSize, eps: Epsilon, omega: u32) -> Result<Self, ParamError> {
        check_subset_size(k, omega)?;
        check_runnable(k, eps)?;
        let (p, q) = probabilities(k, eps, omega);
        let (t, w, kf) = ((-eps.get()).exp(), f64::from(omega), k.as_f64());
        let k1 = u64::from(k.get() - 1);
        Ok(Self {
            k,
            eps,
            omega,
            p,
            q,
            include_true: Bernoulli::new(p).expect("p in [0, 1]"),
            ln_prob_with: p.ln() - ln_binomial(k1, u64::from(omega - 1)),
            // 1 - p = (k - omega) e^-eps / (omega + (k - omega) e^-eps), without cancellation.
            ln_prob_without: ((kf - w) * t / (w + (kf - w) * t)).ln()
                - ln_binomial(k1, u64::from(omega)),
        })
    }

    /// The paper's preset, [`optimal_size`], which minimizes the MSE.
    pub fn optimized(k: DomainSize, eps: Epsilon) -> Result<Self, ParamError> {
        Self::new(k, eps, optimal_size(k, eps))
    }

    /// The subset size omega.
    pub fn subset_size(&self) -> u32 {
        self.omega
    }
}

eq_by_spec!(SubsetSelection);

impl FamilyMechanism for SubsetSelection {
    const RELABELLING_INVARIANT: bool = true;

    fn check(k: DomainSize, _: Epsilon, omega: u32) -> Result<(), ParamError> {
        check_subset_size(k, omega)
    }

    fn build(k: DomainSize, eps: Epsilon, omega: u32) -> Result<Self, ParamError> {
        Self::new(k, eps, omega)
    }

    fn probabilities(k: DomainSize, eps: Epsilon, omega: u32) -> Option<(f64, f64)> {
        Some(probabilities(k, eps, omega))
    }

    fn support_size_range(_: DomainSize, omega: u32) -> Option<(u32, u32)> {
        Some((omega, omega))
    }

    /// omega items.
    fn report_limits(k: DomainSize, omega: u32) -> ReportLimits {
        ReportLimits {
            values: k.get(),
            entries: omega,
            seeds: 0,
        }
    }
}

impl Mechanism for SubsetSelection {
    type Report = SubsetReport;
    type Aggregator = SupportCounts<SubsetSelection>;

    fn spec(&self) -> Spec {
        Spec::from_parts(
            self.k,
            self.eps,
            FamilyParams::SubsetSelection { omega: self.omega },
        )
    }

    fn perturb<R: Rng + ?Sized>(
        &self,
        item: u32,
        rng: &mut R,
    ) -> Result<SubsetReport, ItemOutOfRange> {
        let mut report = SubsetReport { subset: Vec::new() };
        self.perturb_into(item, rng, &mut report)?;
        Ok(report)
    }

    fn perturb_into<R: Rng + ?Sized>(
        &self,
        item: u32,
        rng: &mut R,
        report: &mut SubsetReport,
    ) -> Result<(), ItemOutOfRange> {
        self.k.check_item(item)?;
        let with_x = self.include_true.sample(rng);
        let m = if with_x { self.omega - 1 } else { self.omega };
        floyd_sorted(self.k.get() - 1, m, rng, &mut report.subset);
        lift_around(&mut report.subset, item, with_x);
        Ok(())
    }

    fn validate(&self, report: &SubsetReport) -> Result<(), ReportError> {
        if report.subset.len() != self.omega as usize {
            return Err(ReportError::Length {
                field: "subset",
                expected: self.omega as usize,
                found: report.subset.len(),
            });
        }
        check_sorted_distinct("subset", &report.subset, self.k.get())
    }

    fn log_likelihood(&self, report: &SubsetReport, item: u32) -> f64 {
        if self.supports(report, item) {
            self.ln_prob_with
        } else {
            self.ln_prob_without
        }
    }

    fn aggregator(&self) -> SupportCounts<SubsetSelection> {
        SupportCounts::new(self.clone())
    }
}

impl Support for SubsetSelection {
    #[inline]
    fn for_each_supported(&self, report: &SubsetReport, visit: impl FnMut(u32)) {
        report.subset.iter().copied().for_each(visit);
    }

    fn supports(&self, report: &SubsetReport, item: u32) -> bool {
        report.subset.binary_search(&item).is_ok()
    }
}

impl PureProtocol for SubsetSelection {
    fn p_star(&self) -> f64 {
        self.p
    }
    fn q_star(&self) -> f64 {
        self.q
    }
}

impl AttackSurface for SubsetSelection {
    support_attack_surface!();

    /// Each fake user reports a subset holding `min(r, omega)` targets (a uniform choice
    /// of them when r > omega), padded with uniformly drawn non-targets.
    fn plan_max_gain(&self, targets: &[u32], _: Clip) -> MaxGain<SubsetReport> {
        MaxGain {
            fixed: None,
            supported: (targets.len() as u32).min(self.omega),
        }
    }

    fn max_gain_report<R: Rng + ?Sized>(
        &self,
        _: &MaxGain<SubsetReport>,
        targets: &[u32],
        rng: &mut R,
    ) -> SubsetReport {
        let omega = self.omega as usize;
        let mut chosen: Vec<u32> = if targets.len() <= omega {
            targets.to_vec()
        } else {
            let idx = distinct_outside(targets.len() as u32, omega, &[], rng);
            idx.into_iter().map(|i| targets[i as usize]).collect()
        };
        let pad = distinct_outside(self.k.get(), omega - chosen.len(), targets, rng);
        chosen.extend(pad);
        chosen.sort_unstable();
        SubsetReport { subset: chosen }
    }

    fn random_output<R: Rng + ?Sized>(&self, _: Clip, rng: &mut R) -> SubsetReport {
        let mut subset = distinct_outside(self.k.get(), self.omega as usize, &[], rng);
        subset.sort_unstable();
        SubsetReport { subset }
    }

    /// The subsets of omega items that hold items 0 and 1 each way: every item is
    /// selected alike, so they meet every ratio (at most four outputs: never refused).
    fn exact_outputs(
        &self,
        _: u64,
    ) -> Result<ExactOutputs<impl Iterator<Item = SubsetReport>>, TooManyOutputs> {
        Ok(ExactOutputs {
            outputs: symmetry_patterns(self.k, self.omega)
                .into_iter()
                .map(|subset| SubsetReport { subset }),
            coverage: Coverage::Symmetry,
        })
    }
}

/// Subset sizes must lie in `[1, k-1]`.
pub(crate) fn check_subset_size(k: DomainSize, omega: u32) -> Result<(), ParamError> {
    if omega == 0 || omega >= k.get() {
        Err(ParamError::Parameter {
            name: "omega",
            description: "subset size omega",
            requirement: format!("lie in [1, {}] (k - 1)", k.get() - 1),
            value: f64::from(omega),
        })
    } else {
        Ok(())
    }
}

/// `ln C(n, r)` for `r <= n`: a sum of logs when `min(r, n - r)` is small (accurate to
/// rounding), the log-gamma form otherwise (O(1); absolute error about 1e-16 * ln(n!)).
/// It is the log of the number of SS reports (`n = k`, `r = omega`).
pub fn ln_binomial(n: u64, r: u64) -> f64 {
    let r = r.min(n - r);
    if r <= 64 {
        (0..r)
            .map(|i| ((n - i) as f64).ln() - ((i + 1) as f64).ln())
            .sum()
    } else {
        let lg = |x: u64| libm::lgamma(x as f64 + 1.0);
        lg(n) - lg(r) - lg(n - r)
    }
}

#[cfg(test)]
mod tests {
    use super::ln_binomial;

    #[test]
    fn ln_binomial_forms_agree_where_they_meet() {
        let sum = |n: u64, r: u64| -> f64 {
            (0..r)
                .map(|i| ((n - i) as f64).ln() - ((i + 1) as f64).ln())
                .sum()
        };
        for (n, r) in [(200, 65), (1000, 100), (100_000, 500)] {
            let rel = (ln_binomial(n, r) - sum(n, r)).abs() / sum(n, r);
            assert!(rel < 1e-12, "C({n}, {r}): {rel}");
        }
        assert_eq!(ln_binomial(10, 0), 0.0);
        assert!((ln_binomial(10, 3) - 120f64.ln()).abs() < 1e-13);
    }
}
