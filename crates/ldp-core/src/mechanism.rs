//! The capabilities a mechanism offers: perturbation (client), support (server and attacks),
//! exact likelihoods (audits and Bayesian attacks), and aggregation.

use std::fmt::Debug;

use rand::Rng;

use crate::aggregate::Aggregator;
use crate::error::{ItemOutOfRange, ParamError, ReportError};
use crate::spec::Spec;
use crate::vocab::{DomainSize, Epsilon};

/// The largest domain a runnable mechanism accepts: `2^24` items.
///
/// An aggregator holds one `u64` counter per item (128 MiB at this bound) and an SHE report
/// one number per item, so a larger k cannot run on ordinary machines. The closed forms of
/// `ldp-analytic`, which allocate nothing, take any [`DomainSize`].
pub const MAX_RUNNABLE_DOMAIN: u32 = 1 << 24;

/// Checks that a mechanism over `0..k` at budget `eps` can run: `k` at most
/// [`MAX_RUNNABLE_DOMAIN`] ([`check_domain`]), and `eps` large enough that `e^eps > 1` in
/// floating point ([`Epsilon::check_signal`]): every family whose probabilities are
/// written in `e^eps` calls it (SHE, whose noise is `Laplace(2/eps)`, has its own floor).
pub(crate) fn check_runnable(k: DomainSize, eps: Epsilon) -> Result<(), ParamError> {
    check_domain(k)?;
    eps.check_signal()
}

/// Checks `k` against [`MAX_RUNNABLE_DOMAIN`].
pub(crate) fn check_domain(k: DomainSize) -> Result<(), ParamError> {
    if k.get() <= MAX_RUNNABLE_DOMAIN {
        Ok(())
    } else {
        Err(ParamError::DomainTooLarge {
            value: k.get(),
            max: MAX_RUNNABLE_DOMAIN,
        })
    }
}

/// Serialization, when the `serde` feature is on; nothing otherwise. Lets the traits below
/// ask for serde bounds without forcing serde on clients that only perturb.
#[cfg(feature = "serde")]
pub trait Wire: serde::Serialize + serde::de::DeserializeOwned {}
#[cfg(feature = "serde")]
impl<T: serde::Serialize + serde::de::DeserializeOwned> Wire for T {}
/// Serialization, when the `serde` feature is on; nothing otherwise.
#[cfg(not(feature = "serde"))]
pub trait Wire {}
#[cfg(not(feature = "serde"))]
impl<T> Wire for T {}

/// An epsilon-LDP randomizer over the domain `0..k`.
///
/// Perturbation takes `&self` and a caller-supplied RNG, in the spirit of rand's
/// `Distribution`: one mechanism value serves any number of users and threads. Deployed
/// clients should go through [`crate::Client`], which insists on a cryptographically
/// secure generator; simulations pass seeded streams ([`crate::simulation`]).
///
/// A mechanism is identified by its [`Spec`] (family, k, eps and family parameter):
/// two mechanisms are equal exactly when their specs are, and every derived number
/// (p*, q*, sampler tables) is a function of the spec computed by one formula.
pub trait Mechanism: Clone + Debug + PartialEq + Send + Sync + Wire {
    /// What a client sends to the server.
    type Report: Clone + Debug + PartialEq + Send + Sync + Wire;
    /// The server-side streaming state for this mechanism.
    type Aggregator: Aggregator<Mechanism = Self>;

    /// The defining parameters.
    fn spec(&self) -> Spec;

    /// The domain size k.
    fn domain_size(&self) -> DomainSize {
        self.spec().k()
    }

    /// The privacy budget the mechanism satisfies.
    fn epsilon(&self) -> Epsilon {
        self.spec().eps()
    }

    /// Randomizes one user's `item`. Fails only when `item` is not in `0..k`.
    fn perturb<R: Rng + ?Sized>(
        &self,
        item: u32,
        rng: &mut R,
    ) -> Result<Self::Report, ItemOutOfRange>;

    /// [`Mechanism::perturb`] into `report`, reusing its memory: the same draws from
    /// `rng` and the same report, for loops that perturb many users one at a time.
    /// UE, THE, SS and SHE override it; the default assigns a fresh report. On error `report` is left as it was.
    ///
    /// ```
    /// use ldp_core::{DomainSize, Epsilon, Mechanism, UnaryEncoding};
    /// use ldp_core::simulation::{stream_rng, Role};
    /// let oue = UnaryEncoding::optimized(DomainSize::new(50)?, Epsilon::new(1.0)?)?;
    /// let (mut a, mut b) = (stream_rng(1, 0, Role::Genuine, 0), stream_rng(1, 0, Role::Genuine, 0));
    /// let mut report = oue.perturb(0, &mut a)?;
    /// assert_eq!(report, oue.perturb(0, &mut b)?);
    /// oue.perturb_into(7, &mut a, &mut report)?;
    /// assert_eq!(report, oue.perturb(7, &mut b)?);
    /// assert!(oue.perturb_into(50, &mut a, &mut report).is_err());
    /// # Ok::<(), ldp_core::Error>(())
    /// ```
    #[inline]
    fn perturb_into<R: Rng + ?Sized>(
        &self,
        item: u32,
        rng: &mut R,
        report: &mut Self::Report,
    ) -> Result<(), ItemOutOfRange> {
        *report = self.perturb(item, rng)?;
        Ok(())
    }

    /// Perturbs `item` into `slot`: the first call fills the empty slot with
    /// [`Mechanism::perturb`], later ones refill its report with
    /// [`Mechanism::perturb_into`]. A loop over users keeps one slot and so one report's
    /// memory; the draws are `perturb`'s.
    #[inline]
    fn perturb_reusing<'a, R: Rng + ?Sized>(
        &self,
        item: u32,
        rng: &mut R,
        slot: &'a mut Option<Self::Report>,
    ) -> Result<&'a mut Self::Report, ItemOutOfRange> {
        match slot {
            Some(report) => {
                self.perturb_into(item, rng, report)?;
                Ok(report)
            }
            None => Ok(slot.insert(self.perturb(item, rng)?)),
        }
    }

    /// Whether the family has a null input: a report of a user who holds no item, which
    /// supports every item at the "other item" law (UE's and THE's all-zero vector, each
    /// bit set w.p. q). RS+FD's zero fakes ([`crate::multidim::Solution::RsFdNull`]) use
    /// it. False by default; a family that opts in overrides the two methods below.
    const NULL_INPUT: bool = false;

    /// The report of a user with no item ([`Mechanism::NULL_INPUT`]); `None` for families
    /// without one.
    fn perturb_null<R: Rng + ?Sized>(&self, rng: &mut R) -> Option<Self::Report> {
        let _ = rng;
        None
    }

    /// `ln P[report | no item]` ([`Mechanism::NULL_INPUT`]); `None` for families without
    /// a null input. The report must be valid.
    fn null_log_likelihood(&self, report: &Self::Report) -> Option<f64> {
        let _ = report;
        None
    }

    /// Checks that a report (typically received from outside) lies in the output space.
    fn validate(&self, report: &Self::Report) -> Result<(), ReportError>;

    /// `ln P[report | item]`: the exact log-probability of a report given the true item
    /// (for SHE, the log-density). The report must be valid; `item` must be in `0..k`.
    fn log_likelihood(&self, report: &Self::Report, item: u32) -> f64;

    /// `ln P[report | x]` for every item x, written to `out` (resized to k). The default
    /// calls [`Mechanism::log_likelihood`] k times; families override it when the k values
    /// share most of their work.
    fn log_likelihoods(&self, report: &Self::Report, out: &mut Vec<f64>) {
        out.clear();
        out.extend((0..self.domain_size().get()).map(|x| self.log_likelihood(report, x)));
    }

    /// A fresh, empty aggregator for this mechanism.
    fn aggregator(&self) -> Self::Aggregator;
}

/// Mechanisms whose reports "support" a set of items (Wang et al. 2017's pure framework).
pub trait Support: Mechanism {
    /// Calls `visit` once per supported item, in increasing order.
    fn for_each_supported(&self, report: &Self::Report, visit: impl FnMut(u32));

    /// Whether `report` supports `item`.
    fn supports(&self, report: &Self::Report, item: u32) -> bool;

    /// Adds 1 to `counts[i]` (k entries) for every supported item `i` and calls
    /// `visit(i)` on each, in increasing order: what an aggregator does with a report.
    /// The default walks [`Support::for_each_supported`]; LH adds each block of its scan
    /// at once (for BLH half the domain matches, and a scattered increment per match
    /// cost more than the hashing).
    #[inline]
    fn add_support(&self, report: &Self::Report, counts: &mut [u64], mut visit: impl FnMut(u32)) {
        self.for_each_supported(report, |i| {
            counts[i as usize] += 1;
            visit(i);
        });
    }

    /// For families whose support is listed by testing every item of `0..k` but tested
    /// for one item in O(1) (here LH, FLH and the Hadamard mechanism; CMS and HCMS could
    /// join): the mean number of items a genuine report supports. The attack then guesses
    /// by rejection, drawing items until one is supported (about `k / support` tests),
    /// when that beats the scan. `None` (the default): the support is listed directly and
    /// the attack always lists it.
    fn scanned_support_mean(&self) -> Option<f64> {
        None
    }

    /// The supported items, in increasing order.
    fn support(&self, report: &Self::Report) -> Vec<u32> {
        let mut out = Vec::new();
        self.for_each_supported(report, |i| out.push(i));
        out
    }

    /// The fewest and the most items one valid report can support (GRR: exactly one, SS:
    /// exactly omega, the others: between 0 and k), as the family's registry entry states
    /// it ([`crate::FamilyMechanism::support_size_range`]). Restored aggregator states are
    /// checked against it.
    fn support_size_range(&self) -> (u32, u32) {
        let spec = self.spec();
        spec.support_size_range().unwrap_or((0, spec.k().get()))
    }
}

/// A pure protocol: a report supports the true item with probability `p*` and any other
/// given item with probability `q* < p*`. The unbiased estimator of the paper's
/// Eq. "estimator" needs only these two numbers.
pub trait PureProtocol: Support {
    /// P[report supports x | input x].
    fn p_star(&self) -> f64;
    /// P[report supports x | input x' != x].
    fn q_star(&self) -> f64;
}

/// `PartialEq` by [`Mechanism::spec`], the mechanism's identity.
macro_rules! eq_by_spec {
    ($ty:ty) => {
        impl PartialEq for $ty {
            fn eq(&self, other: &Self) -> bool {
                $crate::mechanism::Mechanism::spec(self)
                    == $crate::mechanism::Mechanism::spec(other)
            }
        }
    };
}
pub(crate) use eq_by_spec;

/// [`Mechanism::log_likelihoods`] of a mechanism whose likelihood takes one value on the
/// items a report supports and another on the rest: both computed once by the caller,
/// then the support walked once. The same numbers, bit for bit, as k calls of
/// [`Mechanism::log_likelihood`], without its logarithms per item (a MAP attack makes
/// this call for every report).
pub(crate) fn two_valued_log_likelihoods<M: Support>(
    m: &M,
    report: &M::Report,
    supported: f64,
    unsupported: f64,
    out: &mut Vec<f64>,
) {
    out.clear();
    out.resize(m.domain_size().as_usize(), unsupported);
    m.for_each_supported(report, |i| out[i as usize] = supported);
}
