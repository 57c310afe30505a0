//! The capabilities a mechanism offers: perturbation (client), support (server and attacks),
//! exact likelihoods (audits and Bayesian attacks), and aggregation.

use std::fmt::Debug;

use rand::Rng;
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::aggregate::Aggregator;
use crate::error::{ItemOutOfRange, ReportError};
use crate::vocab::{DomainSize, Epsilon};

/// An epsilon-LDP randomizer over the domain `0..k`.
///
/// Perturbation takes `&self` and a caller-supplied RNG, in the spirit of rand's
/// `Distribution`: one mechanism value serves any number of users and threads.
pub trait Mechanism:
    Clone + Debug + PartialEq + Send + Sync + Serialize + DeserializeOwned
{
    /// What a client sends to the server.
    type Report: Clone + Debug + PartialEq + Serialize + DeserializeOwned + Send + Sync;
    /// The server-side streaming state for this mechanism.
    type Aggregator: Aggregator<Mechanism = Self>;

    /// The domain size k.
    fn domain_size(&self) -> DomainSize;

    /// The privacy budget the mechanism satisfies.
    fn epsilon(&self) -> Epsilon;

    /// Randomizes one user's `item`. Fails only when `item` is not in `0..k`.
    fn perturb<R: Rng + ?Sized>(
        &self,
        item: u32,
        rng: &mut R,
    ) -> Result<Self::Report, ItemOutOfRange>;

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

    /// The supported items, in increasing order.
    fn support(&self, report: &Self::Report) -> Vec<u32> {
        let mut out = Vec::new();
        self.for_each_supported(report, |i| out.push(i));
        out
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
