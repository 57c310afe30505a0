//! Histogram encoding: summation (SHE) and thresholding (THE), paper Section "HE".

use rand::Rng;
use rand_distr::{Distribution, Exp1};
use serde::{Deserialize, Serialize};

use crate::aggregate::SheSums;
use crate::error::{ItemOutOfRange, ParamError, ReportError};
use crate::families::bits::{IndependentBits, independent_bits_mechanism};
use crate::mechanism::Mechanism;
use crate::report::SheReport;
use crate::vocab::{DomainSize, Epsilon};

/// SHE: the client adds Laplace noise of scale `2 / eps` to every coordinate of its one-hot
/// vector and sends the noisy vector; the server sums the vectors.
///
/// Privacy: two one-hot vectors are at L1 distance 2, so the Laplace density ratio is at
/// most `exp(2 * eps / 2) = e^eps`.
///
/// The noise is drawn in floating point (`b * (E1 - E2)` with two exact exponentials).
/// Floating-point Laplace samplers are known to leak through the low-order bits of their
/// output (Mironov 2012); this implementation is **not hardened** against such attacks.
/// THE, which sends only the thresholded index set, is sampled without floating-point
/// noise and does not have this weakness.
///
/// ```
/// use ldp_core::{DomainSize, Epsilon, Mechanism, SummationHistogram};
/// use ldp_core::simulation::{stream_rng, Role};
/// let she = SummationHistogram::new(DomainSize::new(5)?, Epsilon::new(1.0)?);
/// let report = she.perturb(2, &mut stream_rng(7, 0, Role::Genuine, 0))?;
/// assert_eq!(report.y.len(), 5);
/// # Ok::<(), ldp_core::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "HistogramParams", into = "HistogramParams")]
pub struct SummationHistogram {
    k: DomainSize,
    eps: Epsilon,
}

/// Serialized parameters of [`SummationHistogram`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HistogramParams {
    /// Domain size.
    pub k: DomainSize,
    /// Privacy budget.
    pub epsilon: Epsilon,
}

impl SummationHistogram {
    /// SHE over `0..k` at privacy budget `eps`.
    pub fn new(k: DomainSize, eps: Epsilon) -> Self {
        Self { k, eps }
    }

    /// The Laplace scale `b = 2 / eps`.
    pub fn scale(&self) -> f64 {
        2.0 / self.eps.get()
    }
}

impl TryFrom<HistogramParams> for SummationHistogram {
    type Error = ParamError;
    fn try_from(p: HistogramParams) -> Result<Self, ParamError> {
        Ok(Self::new(p.k, p.epsilon))
    }
}

impl From<SummationHistogram> for HistogramParams {
    fn from(m: SummationHistogram) -> Self {
        Self {
            k: m.k,
            epsilon: m.eps,
        }
    }
}

impl Mechanism for SummationHistogram {
    type Report = SheReport;
    type Aggregator = SheSums;

    fn domain_size(&self) -> DomainSize {
        self.k
    }

    fn epsilon(&self) -> Epsilon {
        self.eps
    }

    fn perturb<R: Rng + ?Sized>(
        &self,
        item: u32,
        rng: &mut R,
    ) -> Result<SheReport, ItemOutOfRange> {
        self.k.check_item(item)?;
        let b = self.scale();
        let mut y: Vec<f64> = (0..self.k.get())
            .map(|_| {
                let (e1, e2): (f64, f64) = (Exp1.sample(rng), Exp1.sample(rng));
                b * (e1 - e2)
            })
            .collect();
        y[item as usize] += 1.0;
        Ok(SheReport { y })
    }

    fn validate(&self, report: &SheReport) -> Result<(), ReportError> {
        if report.y.len() != self.k.as_usize() {
            return Err(ReportError::Length {
                field: "y",
                expected: self.k.as_usize(),
                found: report.y.len(),
            });
        }
        match report.y.iter().position(|v| !v.is_finite()) {
            Some(position) => Err(ReportError::NonFinite {
                field: "y",
                position,
            }),
            None => Ok(()),
        }
    }

    /// Log-density of the noisy vector: `sum_i [-ln(2b) - |y_i - 1{i = item}| / b]`.
    fn log_likelihood(&self, report: &SheReport, item: u32) -> f64 {
        let b = self.scale();
        let norm = -(2.0 * b).ln() * report.y.len() as f64;
        let dist: f64 = report
            .y
            .iter()
            .enumerate()
            .map(|(i, &v)| (v - f64::from(u8::from(i == item as usize))).abs())
            .sum();
        norm - dist / b
    }

    /// O(k): hypotheses differ only in which coordinate carries the 1, so
    /// `ln f(y | x) = ln f(y | none) + (|y_x| - |y_x - 1|) / b`.
    fn log_likelihoods(&self, report: &SheReport, out: &mut Vec<f64>) {
        let b = self.scale();
        let base = -(2.0 * b).ln() * report.y.len() as f64
            - report.y.iter().map(|v| v.abs()).sum::<f64>() / b;
        out.clear();
        out.extend(
            report
                .y
                .iter()
                .map(|&v| base + (v.abs() - (v - 1.0).abs()) / b),
        );
    }

    fn aggregator(&self) -> SheSums {
        SheSums::new(self.clone())
    }
}

/// THE: SHE's noisy vector thresholded at `theta` on the client, which sends only the
/// indices above the threshold. Bit i is one with probability
/// `p = 1 - e^(eps (theta - 1) / 2) / 2` if it is the true item, `q = e^(-eps theta / 2) / 2`
/// otherwise (paper Eq. "the_parameters").
///
/// The index set is sampled exactly, without drawing k Laplace values: the true index is
/// Bernoulli(p) and the others independent Bernoulli(q) placed by geometric gaps, in
/// O(1 + kq). This has the same law as thresholding Laplace noise, and no floating-point
/// Laplace output ever leaves the client.
///
/// Privacy: post-processing of SHE, hence eps-LDP; directly, `p (1-q) / ((1-p) q)` is at
/// most `(2 e^(eps/4) - 1)^2 <= e^eps`.
///
/// ```
/// use ldp_core::{DomainSize, Epsilon, ThresholdHistogram};
/// let the = ThresholdHistogram::optimal(DomainSize::new(100)?, Epsilon::new(4.0)?);
/// assert!((the.threshold() - 0.81568).abs() < 1e-5); // paper: 0.816
/// assert!(ThresholdHistogram::new(DomainSize::new(100)?, Epsilon::new(4.0)?, 0.4).is_err());
/// # Ok::<(), ldp_core::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "ThresholdParams", into = "ThresholdParams")]
pub struct ThresholdHistogram {
    theta: f64,
    bits: IndependentBits,
}

/// Serialized parameters of [`ThresholdHistogram`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ThresholdParams {
    /// Domain size.
    pub k: DomainSize,
    /// Privacy budget.
    pub epsilon: Epsilon,
    /// Threshold theta in `[0.5, 1]`.
    pub theta: f64,
}

/// The threshold must lie in `[0.5, 1]`.
pub(crate) fn check_threshold(theta: f64) -> Result<(), ParamError> {
    if (0.5..=1.0).contains(&theta) {
        Ok(())
    } else {
        Err(ParamError::Threshold { value: theta })
    }
}

/// `(p, q)` of THE at threshold `theta` (paper Eq. "the_parameters").
pub fn threshold_pq(eps: Epsilon, theta: f64) -> (f64, f64) {
    let half = eps.get() / 2.0;
    let p = 1.0 - 0.5 * (half * (theta - 1.0)).exp();
    let q = 0.5 * (-half * theta).exp();
    (p, q)
}

impl ThresholdHistogram {
    /// THE with threshold `theta` in `[0.5, 1]`.
    pub fn new(k: DomainSize, eps: Epsilon, theta: f64) -> Result<Self, ParamError> {
        check_threshold(theta)?;
        let (p, q) = threshold_pq(eps, theta);
        Ok(Self {
            theta,
            bits: IndependentBits::new(k, eps, p, q),
        })
    }

    /// THE with the threshold minimizing the approximate variance `q(1-q)/(p-q)^2` on
    /// `[0.5, 1]`, located by golden-section search to 1e-9 (the variance is unimodal in theta).
    pub fn optimal(k: DomainSize, eps: Epsilon) -> Self {
        Self::new(k, eps, optimal_threshold(eps)).expect("optimum lies in [0.5, 1]")
    }

    /// The threshold theta.
    pub fn threshold(&self) -> f64 {
        self.theta
    }
}

/// The theta in `[0.5, 1]` minimizing THE's approximate variance, to 1e-9.
pub fn optimal_threshold(eps: Epsilon) -> f64 {
    let variance = |theta: f64| {
        let (p, q) = threshold_pq(eps, theta);
        q * (1.0 - q) / ((p - q) * (p - q))
    };
    let inv_phi = (5f64.sqrt() - 1.0) / 2.0;
    let (mut a, mut b) = (0.5f64, 1.0f64);
    let mut c = b - inv_phi * (b - a);
    let mut d = a + inv_phi * (b - a);
    let (mut fc, mut fd) = (variance(c), variance(d));
    while b - a > 1e-10 {
        if fc <= fd {
            b = d;
            d = c;
            fd = fc;
            c = b - inv_phi * (b - a);
            fc = variance(c);
        } else {
            a = c;
            c = d;
            fc = fd;
            d = a + inv_phi * (b - a);
            fd = variance(d);
        }
    }
    (a + b) / 2.0
}

impl TryFrom<ThresholdParams> for ThresholdHistogram {
    type Error = ParamError;
    fn try_from(p: ThresholdParams) -> Result<Self, ParamError> {
        Self::new(p.k, p.epsilon, p.theta)
    }
}

impl From<ThresholdHistogram> for ThresholdParams {
    fn from(m: ThresholdHistogram) -> Self {
        Self {
            k: m.bits.k,
            epsilon: m.bits.eps,
            theta: m.theta,
        }
    }
}

independent_bits_mechanism!(ThresholdHistogram);
