//! The randomizer shared by unary encoding and thresholding: a one-hot vector whose true
//! bit is kept with probability p and whose other bits are set with probability q, all
//! independently. UE and THE differ only in how they choose (p, q).

use rand::Rng;
use rand_distr::{Bernoulli, Distribution};

use crate::error::{ItemOutOfRange, ParamError, ReportError};
use crate::mechanism::check_runnable;
use crate::report::{OnesReport, check_sorted_distinct};
use crate::sampling::BernoulliSet;
use crate::vocab::{DomainSize, Epsilon};

/// Independent bits with probabilities p (true item) and q (others), sampled in O(1 + kq).
#[derive(Clone)]
pub(crate) struct IndependentBits {
    pub(crate) k: DomainSize,
    pub(crate) eps: Epsilon,
    pub(crate) p: f64,
    pub(crate) q: f64,
    keep: Bernoulli,
    others: BernoulliSet,
    /// `ln p`, `ln(1 - p)`, `ln q`, `ln(1 - q)`: the likelihoods' terms, taken once (the
    /// MAP attack asks two likelihoods per report).
    ln: [f64; 4],
}

/// The samplers are functions of (k, eps, p, q), so those alone are shown.
impl std::fmt::Debug for IndependentBits {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IndependentBits")
            .field("k", &self.k)
            .field("eps", &self.eps)
            .field("p", &self.p)
            .field("q", &self.q)
            .finish_non_exhaustive()
    }
}

impl IndependentBits {
    /// `p` and `q` must be probabilities with the LDP ratio `p(1-q)/((1-p)q) <= e^eps`;
    /// fails only when k exceeds [`crate::MAX_RUNNABLE_DOMAIN`].
    pub(crate) fn new(k: DomainSize, eps: Epsilon, p: f64, q: f64) -> Result<Self, ParamError> {
        check_runnable(k, eps)?;
        Ok(Self {
            k,
            eps,
            p,
            q,
            keep: Bernoulli::new(p).expect("p is a probability"),
            others: BernoulliSet::new(q),
            ln: [p.ln(), (-p).ln_1p(), q.ln(), (-q).ln_1p()],
        })
    }

    /// Draws the one-bits: the true bit w.p. p, the k - 1 others by geometric gaps (those
    /// below the item first, then those above it).
    pub(crate) fn perturb<R: Rng + ?Sized>(
        &self,
        item: u32,
        rng: &mut R,
    ) -> Result<OnesReport, ItemOutOfRange> {
        // Room for the mean number of one-bits plus a few standard deviations.
        let mean = self.others.mean_count(self.k.get() - 1);
        let mut report = OnesReport {
            ones: Vec::with_capacity((mean + 4.0 * mean.sqrt()) as usize + 2),
        };
        self.perturb_into(item, rng, &mut report)?;
        Ok(report)
    }

    /// [`IndependentBits::perturb`] into `report`'s memory.
    #[inline]
    pub(crate) fn perturb_into<R: Rng + ?Sized>(
        &self,
        item: u32,
        rng: &mut R,
        report: &mut OnesReport,
    ) -> Result<(), ItemOutOfRange> {
        self.k.check_item(item)?;
        let with_x = self.keep.sample(rng);
        let ones = &mut report.ones;
        ones.clear();
        // Bits on disjoint ranges are independent: drawing the others below the item, then
        // those above it, keeps the list sorted without a branch per bit.
        self.others.for_each(item, rng, |i| ones.push(i));
        if with_x {
            ones.push(item);
        }
        let above = item + 1;
        self.others
            .for_each(self.k.get() - above, rng, |i| ones.push(above + i));
        Ok(())
    }

    /// The report of no item: every bit set w.p. q (UE-z's fake data).
    pub(crate) fn perturb_null<R: Rng + ?Sized>(&self, rng: &mut R) -> OnesReport {
        let mut ones = Vec::new();
        self.others.for_each(self.k.get(), rng, |i| ones.push(i));
        OnesReport { ones }
    }

    /// `ln P[ones | no item]`.
    pub(crate) fn null_log_likelihood(&self, report: &OnesReport) -> f64 {
        let set = report.ones.len() as f64;
        let [_, _, ln_q, ln_not_q] = self.ln;
        set * ln_q + (self.k.as_f64() - set) * ln_not_q
    }

    pub(crate) fn validate(&self, report: &OnesReport) -> Result<(), ReportError> {
        check_sorted_distinct("ones", &report.ones, self.k.get())
    }

    /// `ln P[ones | item]`.
    pub(crate) fn log_likelihood(&self, report: &OnesReport, item: u32) -> f64 {
        let has_x = report.ones.binary_search(&item).is_ok();
        self.log_likelihood_given(report.ones.len(), has_x)
    }

    /// `ln P[ones | item]` for a report with `set` one-bits, for an item whose bit is set
    /// (`has_x`) or clear: the likelihood depends on the report only through these two.
    pub(crate) fn log_likelihood_given(&self, set: usize, has_x: bool) -> f64 {
        let [ln_p, ln_not_p, ln_q, ln_not_q] = self.ln;
        let set = set as f64;
        let (true_bit, others_set) = if has_x {
            (ln_p, set - 1.0)
        } else {
            (ln_not_p, set)
        };
        let others_clear = (self.k.as_f64() - 1.0) - others_set;
        true_bit + others_set * ln_q + others_clear * ln_not_q
    }
}

/// Implements `Mechanism`, `Support`, `AttackSurface`, `PureProtocol` and `PartialEq` for a family whose
/// randomizer is the `bits: IndependentBits` field and whose `family_params()` method names
/// its parameter.
macro_rules! independent_bits_mechanism {
    ($ty:ty) => {
        $crate::mechanism::eq_by_spec!($ty);

        impl $crate::mechanism::Mechanism for $ty {
            type Report = $crate::report::OnesReport;
            type Aggregator = $crate::aggregate::SupportCounts<$ty>;

            fn spec(&self) -> $crate::spec::Spec {
                $crate::spec::Spec::from_parts(self.bits.k, self.bits.eps, self.family_params())
            }

            #[inline]
            fn perturb<R: rand::Rng + ?Sized>(
                &self,
                item: u32,
                rng: &mut R,
            ) -> Result<Self::Report, $crate::error::ItemOutOfRange> {
                self.bits.perturb(item, rng)
            }

            #[inline]
            fn perturb_into<R: rand::Rng + ?Sized>(
                &self,
                item: u32,
                rng: &mut R,
                report: &mut Self::Report,
            ) -> Result<(), $crate::error::ItemOutOfRange> {
                self.bits.perturb_into(item, rng, report)
            }

            fn validate(&self, report: &Self::Report) -> Result<(), $crate::error::ReportError> {
                self.bits.validate(report)
            }

            const NULL_INPUT: bool = true;

            fn perturb_null<R: rand::Rng + ?Sized>(&self, rng: &mut R) -> Option<Self::Report> {
                Some(self.bits.perturb_null(rng))
            }

            fn null_log_likelihood(&self, report: &Self::Report) -> Option<f64> {
                Some(self.bits.null_log_likelihood(report))
            }

            fn log_likelihood(&self, report: &Self::Report, item: u32) -> f64 {
                self.bits.log_likelihood(report, item)
            }

            fn log_likelihoods(&self, report: &Self::Report, out: &mut Vec<f64>) {
                $crate::mechanism::two_valued_log_likelihoods(
                    self,
                    report,
                    self.bits.log_likelihood_given(report.ones.len(), true),
                    self.bits.log_likelihood_given(report.ones.len(), false),
                    out,
                );
            }

            fn aggregator(&self) -> Self::Aggregator {
                $crate::aggregate::SupportCounts::new(self.clone())
            }
        }

        impl $crate::mechanism::Support for $ty {
            #[inline]
            fn for_each_supported(&self, report: &Self::Report, visit: impl FnMut(u32)) {
                report.ones.iter().copied().for_each(visit);
            }

            fn supports(&self, report: &Self::Report, item: u32) -> bool {
                report.ones.binary_search(&item).is_ok()
            }
        }

        impl $crate::attack_surface::AttackSurface for $ty {
            $crate::attack_surface::support_attack_surface!();

            /// Exactly the target bits set.
            fn plan_max_gain(
                &self,
                targets: &[u32],
                _: $crate::server::Clip,
            ) -> $crate::attack_surface::MaxGain<Self::Report> {
                $crate::attack_surface::MaxGain {
                    fixed: Some($crate::report::OnesReport {
                        ones: targets.to_vec(),
                    }),
                    supported: targets.len() as u32,
                }
            }

            /// Every bit set with probability 1/2.
            fn random_output<R: rand::Rng + ?Sized>(
                &self,
                _: $crate::server::Clip,
                rng: &mut R,
            ) -> Self::Report {
                use rand::RngExt;
                $crate::report::OnesReport {
                    ones: (0..self.bits.k.get())
                        .filter(|_| rng.random_bool(0.5))
                        .collect(),
                }
            }

            /// The reports of up to two one-bits that set bits 0 and 1 each way: every
            /// bit is flipped alike, so they meet every ratio (at most nine outputs:
            /// never refused).
            fn exact_outputs(
                &self,
                _: u64,
            ) -> Result<
                $crate::exact_outputs::ExactOutputs<impl Iterator<Item = Self::Report>>,
                $crate::exact_outputs::TooManyOutputs,
            > {
                let k = self.bits.k;
                Ok($crate::exact_outputs::ExactOutputs {
                    outputs: (0..=2)
                        .flat_map(move |size| $crate::exact_outputs::symmetry_patterns(k, size))
                        .map(|ones| $crate::report::OnesReport { ones }),
                    coverage: $crate::exact_outputs::Coverage::Symmetry,
                })
            }
        }

        impl $crate::mechanism::PureProtocol for $ty {
            fn p_star(&self) -> f64 {
                self.bits.p
            }
            fn q_star(&self) -> f64 {
                self.bits.q
            }
        }
    };
}
pub(crate) use independent_bits_mechanism;
