//! Audits of a client of several attributes ([`ldp_core::multidim::Multidim`]): the
//! worst likelihood ratio of the whole tuple and of one attribute, exactly where the
//! outputs can be listed, and the distinguishing test of LDP-Auditor's multidimensional
//! auditor, with an event that reaches the true ratio.
//!
//! A user's input is a tuple of items. Two kinds of neighbours matter:
//! - **the whole tuple**: every attribute changes. SPL and SMP claim `eps` here; the RS+
//!   solutions only their per-report `eps'` (their genuine report is sent at `eps'`).
//! - **one attribute**: one item changes, the others stay. Every solution claims `eps`
//!   here (for RS+ it is the anchors' guarantee; it fails for GRR over unequal domains and
//!   for UE-r, see `ldp_core::multidim`).
//!
//! The test runs LDP-Auditor's tuples, `(0, …, 0)` against `(k_1 - 1, …, k_d - 1)`, and for
//! each attribute j the all-zero tuple against the one with `k_j - 1` at j alone. Its
//! events:
//! - [`Statistic::LikelihoodRatio`]: the report is at least `e^t` times as likely under
//!   `v1` as under `v2`, from the exact likelihoods ([`Multidim::log_likelihood_each`]).
//!   The threshold t of each pair is chosen on a calibration sample drawn from streams of
//!   their own, so the counts that give the bound never chose it.
//! - [`Statistic::AttackGuess`]: LDP-Auditor's. The attacker picks an attribute uniformly
//!   and guesses its item from that attribute's report (uniformly when the report names
//!   another attribute); the event is the guess equalling `v1`'s item.

use ldp_core::attack_surface::AttackSurface;
use ldp_core::multidim::{Multidim, MultidimReport, Solution};
use ldp_core::simulation::{Role, stream_rng};
use ldp_core::{ExactOutputs, Mechanism, parallel};
use rand::RngExt;
use serde::Serialize;

use crate::exact::{EXACT_LIMIT, too_large, worst};
use crate::interval::clopper_pearson;
use crate::tally::{BATCH, count_batches};
use crate::{Audit, AuditConfig, AuditError, Coverage, PairAudit, Pairs, Plan, Statistic};

/// Calibration reports per input, at most: enough to place the threshold, few beside
/// the trials.
pub const CALIBRATION: u64 = 50_000;

/// What a solution claims, for the whole tuple and for one attribute.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Claims {
    /// The user's budget, claimed for a change of one attribute.
    pub attribute: f64,
    /// The budget claimed when every attribute changes: `eps` for SPL and SMP, the
    /// per-report `eps'` for the RS+ solutions.
    pub whole: f64,
}

impl Claims {
    /// The claims of `m`'s solution.
    pub fn of<M: Mechanism>(m: &Multidim<M>) -> Self {
        let eps = m.epsilon().get();
        Claims {
            attribute: eps,
            whole: if m.solution().fakes() {
                m.report_epsilon().get()
            } else {
                eps
            },
        }
    }
}

/// The exact audit of a client of several attributes.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MultidimExact {
    /// The solution audited (`spl`, `smp`, …).
    pub solution: &'static str,
    /// What it claims.
    pub claims: Claims,
    /// The worst ratio when every attribute may change.
    pub eps_whole: f64,
    /// The worst ratio when one attribute changes.
    pub eps_attribute: f64,
    /// The attribute whose change gives `eps_attribute`.
    pub worst_attribute: usize,
    /// Outputs examined, over all attributes.
    pub outputs: u64,
    /// How each attribute's outputs were chosen.
    pub coverage: Vec<Coverage>,
    /// The floating-point error the two ratios may carry.
    pub rounding: f64,
}

impl MultidimExact {
    /// Whether the client spends more than a claim, beyond rounding.
    pub fn flagged(&self) -> bool {
        self.eps_whole > self.claims.whole + self.rounding
            || self.eps_attribute > self.claims.attribute + self.rounding
    }
}

/// The worst likelihood ratio of `m`, for the whole tuple and for one attribute.
///
/// - SPL: attributes are independent, so the whole tuple's worst ratio is the sum of
///   the attributes' worst ones (each at `eps / d`), one attribute's the largest.
/// - SMP: a report depends on the attribute it names only; both are the largest
///   attribute's worst ratio at `eps`.
/// - RS+: `P[y | x] = (1/d) prod_i F_i(y_i) sum_j R_j(y_j | x_j)` with
///   `R_j = M_j / F_j`, so the ratio of two tuples is `sum_j R_j(y_j|x_j) /
///   sum_j R_j(y_j|x'_j)`, each attribute's output and items free. Its maximum is found by
///   Dinkelbach's iteration on the attributes' (largest, smallest) `R_j` per output; one
///   attribute j changing gives `(R_j(y|x) + C) / (R_j(y|x') + C)`, largest at the
///   smallest `C` the other attributes can sum to. This needs every output of each
///   attribute ([`Coverage::Every`]: GRR, the Hadamard and hashed-sketch families, FLH);
///   the families listed by symmetry (SS, UE, THE) or seeds (LH) are refused, since a
///   fake's likelihood depends on all of a report.
///
/// Refused when the outputs take more than [`EXACT_LIMIT`] likelihoods per attribute.
///
/// ```
/// use ldp_audit::exact_multidim;
/// use ldp_core::multidim::{Multidim, Solution};
/// use ldp_core::{DomainSize, Epsilon, Grr};
/// let domains = [DomainSize::new(2)?, DomainSize::new(3)?];
/// let rsfd = Multidim::new(Solution::RsFd, Epsilon::new(1.0)?, &domains, Grr::new)?;
/// let exact = exact_multidim(&rsfd)?;
/// assert!((exact.eps_whole - rsfd.report_epsilon().get()).abs() < 1e-9);
/// assert!(exact.eps_attribute > 1.07); // over unequal domains, above the anchors' eps
/// assert!(exact.flagged());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn exact_multidim<M>(m: &Multidim<M>) -> Result<MultidimExact, AuditError>
where
    M: AttackSurface,
    M::Report: Serialize,
{
    let solution = m.solution();
    let mut outputs = 0u64;
    let mut coverage = Vec::new();
    let mut largest: f64 = 1.0;
    let (eps_whole, eps_attribute, worst_attribute) = if solution.fakes() {
        // Per attribute and output y: the largest and smallest R_j(y | x) over x.
        let mut extremes: Vec<Vec<(f64, f64)>> = Vec::new();
        let mut lls = Vec::new();
        for (j, a) in m.attributes().iter().enumerate() {
            let ExactOutputs {
                outputs: ys,
                coverage: c,
            } = a.exact_outputs(EXACT_LIMIT).map_err(too_large)?;
            match c {
                Coverage::Every => {}
                Coverage::Symmetry => return Err(AuditError::ExactFakes("by symmetry")),
                Coverage::Witness => return Err(AuditError::ExactFakes("by a witness")),
                Coverage::Seeds { .. } => return Err(AuditError::ExactFakes("by hash seed")),
            }
            coverage.push(c);
            let mut each = Vec::new();
            for y in ys {
                outputs += 1;
                a.log_likelihoods(&y, &mut lls);
                let fake = m.fake_log_likelihood(j, &y);
                let (lo, hi) = lls
                    .iter()
                    .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &l| {
                        (lo.min(l), hi.max(l))
                    });
                largest = largest.max(hi.abs()).max(fake.abs());
                each.push(((hi - fake).exp(), (lo - fake).exp()));
            }
            extremes.push(each);
        }
        let (whole, one, at) = rs_ratios(&extremes);
        (whole.ln(), one.ln(), at)
    } else {
        let mut each = Vec::new();
        for a in m.attributes() {
            let ExactOutputs {
                outputs: ys,
                coverage: c,
            } = a.exact_outputs(EXACT_LIMIT).map_err(too_large)?;
            let audit = worst(a, ys, c);
            outputs += audit.outputs;
            largest = largest.max(audit.rounding / (16.0 * f64::EPSILON));
            coverage.push(c);
            each.push(audit.eps_exact);
        }
        let (at, &one) = each
            .iter()
            .enumerate()
            .max_by(|a, b| a.1.total_cmp(b.1))
            .expect("a client has an attribute");
        let whole = if solution == Solution::Spl {
            each.iter().sum()
        } else {
            one
        };
        (whole, one, at)
    };
    Ok(MultidimExact {
        solution: solution.name(),
        claims: Claims::of(m),
        eps_whole,
        eps_attribute,
        worst_attribute,
        outputs,
        coverage,
        rounding: 16.0 * f64::EPSILON * largest * m.dimensions() as f64,
    })
}

/// The RS+ ratios from each attribute's per-output `(max_x R, min_x R)`: the largest
/// `sum_j a_j / sum_j b_j` (one point per attribute, by Dinkelbach's iteration), and the
/// largest one-attribute ratio with the attribute giving it.
fn rs_ratios(extremes: &[Vec<(f64, f64)>]) -> (f64, f64, usize) {
    // Whole tuple: lambda is the largest ratio where max sum (a - lambda b) = 0.
    let mut lambda = 1.0;
    for _ in 0..200 {
        let (mut a, mut b) = (0.0, 0.0);
        for points in extremes {
            let &(pa, pb) = points
                .iter()
                .max_by(|x, y| (x.0 - lambda * x.1).total_cmp(&(y.0 - lambda * y.1)))
                .expect("every attribute has an output");
            a += pa;
            b += pb;
        }
        let next = a / b;
        if next <= lambda * (1.0 + 1e-15) {
            break;
        }
        lambda = next;
    }
    // One attribute: the others sum to their smallest R.
    let floors: Vec<f64> = extremes
        .iter()
        .map(|points| points.iter().map(|p| p.1).fold(f64::INFINITY, f64::min))
        .collect();
    let floor_sum: f64 = floors.iter().sum();
    let (mut one, mut at) = (1.0, 0);
    for (j, points) in extremes.iter().enumerate() {
        let c = floor_sum - floors[j];
        for &(a, b) in points {
            let ratio = (a + c) / (b + c);
            if ratio > one {
                (one, at) = (ratio, j);
            }
        }
    }
    (lambda, one, at)
}

/// The distinguishing test of a client of several attributes.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MultidimAudit {
    /// The solution audited.
    pub solution: &'static str,
    /// What it claims.
    pub claims: Claims,
    /// The tuples run; each pair's `v1` and `v2` index this list. Pair 0 changes every
    /// attribute; pair `1 + j` (when there are several attributes) changes attribute j.
    pub inputs: Vec<Vec<u32>>,
    /// The likelihood-ratio event's threshold `t` of each pair (a report counts when it
    /// is at least `e^t` times as likely under `v1`); empty when that event is not counted.
    pub thresholds: Vec<f64>,
    /// The counts and bounds, one [`crate::StatisticAudit`] per statistic.
    pub audit: Audit,
}

impl MultidimAudit {
    /// The bound of `statistic` when every attribute changes (pair 0).
    pub fn eps_whole(&self, statistic: Statistic) -> Option<f64> {
        self.audit.statistic(statistic).map(|s| s.pairs[0].eps_emp)
    }

    /// The largest bound of `statistic` over the pairs that change one attribute (pair 0
    /// when there is one attribute).
    pub fn eps_attribute(&self, statistic: Statistic) -> Option<f64> {
        let s = self.audit.statistic(statistic)?;
        let one = if s.pairs.len() == 1 {
            &s.pairs[..]
        } else {
            &s.pairs[1..]
        };
        Some(one.iter().map(|p| p.eps_emp).fold(0.0, f64::max))
    }

    /// The pairs that change one attribute, for `statistic`.
    pub fn attribute_pairs(&self, statistic: Statistic) -> &[PairAudit] {
        match self.audit.statistic(statistic) {
            Some(s) if s.pairs.len() > 1 => &s.pairs[1..],
            Some(s) => &s.pairs[..],
            None => &[],
        }
    }

    /// Whether some bound exceeds its claim: the whole tuple's `claims.whole`, one
    /// attribute's `claims.attribute`. Every bound holds at once with confidence
    /// `1 - alpha`.
    pub fn flagged(&self) -> bool {
        self.audit.statistics.iter().any(|s| {
            self.eps_whole(s.statistic)
                .is_some_and(|e| e > self.claims.whole)
                || self
                    .eps_attribute(s.statistic)
                    .is_some_and(|e| e > self.claims.attribute)
        })
    }
}

/// Runs the distinguishing test of `config` on `m`'s own client: `trials` reports of each
/// tuple, on every core, in seeded batches (the same result for any thread count).
/// `config.pairs` must be [`Pairs::Extremes`]: the pairs are the tuples of the module
/// docs. [`Statistic::FirstListed`] does not apply.
///
/// ```
/// use ldp_audit::{audit_multidim, AuditConfig, Statistic};
/// use ldp_core::multidim::{Multidim, Solution};
/// use ldp_core::{DomainSize, Epsilon, Grr};
/// let domains = [DomainSize::new(3)?, DomainSize::new(3)?];
/// let rsfd = Multidim::new(Solution::RsFd, Epsilon::new(1.0)?, &domains, Grr::new)?;
/// let audit = audit_multidim(&rsfd, &AuditConfig { trials: 100_000, ..AuditConfig::default() })?;
/// let whole = audit.eps_whole(Statistic::LikelihoodRatio).unwrap();
/// // Every attribute changing: above the claimed eps = 1, up to the per-report eps' = 1.43.
/// assert!(whole > 1.1 && whole <= audit.claims.whole);
/// assert!(!audit.flagged());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn audit_multidim<M>(m: &Multidim<M>, config: &AuditConfig) -> Result<MultidimAudit, AuditError>
where
    M: AttackSurface + Sync,
    M::Report: Send,
{
    audit_multidim_with_progress(m, config, &|_| {})
}

/// [`audit_multidim`], calling `progress(reports)` after each batch (calibration
/// included) with the number of reports it drew.
pub fn audit_multidim_with_progress<M>(
    m: &Multidim<M>,
    config: &AuditConfig,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<MultidimAudit, AuditError>
where
    M: AttackSurface + Sync,
    M::Report: Send,
{
    audit_multidim_until(m, config, progress, &|| false)
}

/// [`audit_multidim_with_progress`] that a caller can stop: each batch (calibration
/// included) first asks `stop()`, and once it is true the rest is skipped and the audit
/// returns [`AuditError::Stopped`].
pub fn audit_multidim_until<M>(
    m: &Multidim<M>,
    config: &AuditConfig,
    progress: &(dyn Fn(u64) + Sync),
    stop: &(dyn Fn() -> bool + Sync),
) -> Result<MultidimAudit, AuditError>
where
    M: AttackSurface + Sync,
    M::Report: Send,
{
    let stop = &crate::tally::latched(stop);
    if config.statistics.contains(&Statistic::FirstListed) {
        return Err(AuditError::Statistic {
            statistic: Statistic::FirstListed,
            reason: "this toolkit's reports are sorted lists",
        });
    }
    if config.pairs != Pairs::Extremes {
        return Err(AuditError::MultidimPairs);
    }
    let domains: Vec<u32> = m.domains().iter().map(|k| k.get()).collect();
    if let Some(&k) = domains.iter().find(|&&k| k < 2) {
        return Err(AuditError::Domain(k));
    }
    let inputs = tuples(&domains);
    let pairs: Vec<(u32, u32)> = (1..inputs.len() as u32).map(|v2| (0, v2)).collect();
    let plan = Plan::new(
        inputs.len() as u32,
        &AuditConfig {
            pairs: Pairs::List(pairs.clone()),
            ..config.clone()
        },
    )?;
    let thresholds = if plan.statistics().contains(&Statistic::LikelihoodRatio) {
        calibrate(m, &plan, config.alpha, &inputs, progress, stop)?
    } else {
        Vec::new()
    };
    let Ok(counters) = count_batches(&plan, BATCH, |i, b, n| {
        if stop() {
            return Ok::<_, std::convert::Infallible>(plan.counters());
        }
        let mut rng = stream_rng(plan.seed(), i as u64, Role::Genuine, b);
        let mut attacker = stream_rng(plan.seed(), i as u64, Role::Attacker, b);
        let mut counters = plan.counters();
        for _ in 0..n {
            let report = m
                .perturb(&inputs[i], &mut rng)
                .expect("audit tuples are in the domains");
            let lls = (!thresholds.is_empty()).then(|| {
                m.log_likelihood_each(&report, &inputs)
                    .expect("audit tuples are in the domains")
            });
            let guess = plan
                .needs_guess()
                .then(|| guess_hits(m, &report, &inputs[0], &mut attacker));
            count(&plan, &mut counters, i, |statistic, v2| match statistic {
                Statistic::AttackGuess => guess.unwrap_or(false),
                _ => lls
                    .as_ref()
                    .is_some_and(|l| at_least(l[0] - l[v2], thresholds[v2 - 1])),
            });
        }
        progress(n as u64);
        Ok(counters)
    });
    if stop() {
        return Err(AuditError::Stopped);
    }
    Ok(MultidimAudit {
        solution: m.solution().name(),
        claims: Claims::of(m),
        inputs,
        thresholds,
        audit: plan.finish(&counters, Some(m.epsilon().get()))?,
    })
}

/// The tuples of the test: all zero, all last, and all zero but attribute j last.
fn tuples(domains: &[u32]) -> Vec<Vec<u32>> {
    let zero = vec![0; domains.len()];
    let mut inputs = vec![zero.clone(), domains.iter().map(|k| k - 1).collect()];
    if domains.len() > 1 {
        for (j, k) in domains.iter().enumerate() {
            let mut x = zero.clone();
            x[j] = k - 1;
            inputs.push(x);
        }
    }
    inputs
}

/// Adds one report of input `i` to the counters (laid out as [`Plan`] says: pair, side,
/// statistic): input 0 is `v1` of every pair, input `p + 1` is `v2` of pair p.
/// `event(statistic, v2)` says whether the report shows the event of the pair `(0, v2)`.
fn count(plan: &Plan, counters: &mut [u64], i: usize, event: impl Fn(Statistic, usize) -> bool) {
    let s_len = plan.statistics().len();
    let (pairs, side) = if i == 0 {
        (0..plan.inputs().len() - 1, 0)
    } else {
        (i - 1..i, 1)
    };
    for p in pairs {
        for (s, &statistic) in plan.statistics().iter().enumerate() {
            counters[(p * 2 + side) * s_len + s] += u64::from(event(statistic, p + 1));
        }
    }
}

/// Whether a log-ratio reaches a threshold, up to the rounding of the likelihoods it
/// subtracts (equal ratios computed from different outputs must fall on the same side).
fn at_least(ratio: f64, threshold: f64) -> bool {
    ratio >= threshold - 1e-9 * threshold.abs().max(1.0)
}

/// LDP-Auditor's event: the attacker picks an attribute uniformly and its guess of that
/// attribute's item equals `v1`'s.
fn guess_hits<M: AttackSurface, R: rand::Rng + ?Sized>(
    m: &Multidim<M>,
    report: &MultidimReport<M::Report>,
    v1: &[u32],
    rng: &mut R,
) -> bool {
    let j = rng.random_range(0..m.dimensions());
    let a = &m.attributes()[j];
    let guess = match report {
        MultidimReport::Every(reports) => a.guess(&reports[j], rng),
        MultidimReport::Sampled { attribute, report } if *attribute as usize == j => {
            a.guess(report, rng)
        }
        MultidimReport::Sampled { .. } => rng.random_range(0..a.domain_size().get()),
    };
    guess == v1[j]
}

/// Each pair's likelihood-ratio threshold, from calibration reports drawn on streams of
/// their own: the one whose bound, projected to `trials` reports, is largest.
fn calibrate<M>(
    m: &Multidim<M>,
    plan: &Plan,
    alpha: f64,
    inputs: &[Vec<u32>],
    progress: &(dyn Fn(u64) + Sync),
    stop: &(dyn Fn() -> bool + Sync),
) -> Result<Vec<f64>, AuditError>
where
    M: AttackSurface + Sync,
    M::Report: Send,
{
    let n = plan.trials().min(CALIBRATION);
    // For each input, the log-ratio `ln P[y | v1] - ln P[y | x]` of its reports under
    // every input x (x = 0 gives zeros).
    let ratios: Vec<Vec<Vec<f64>>> = parallel::map(inputs.len(), |i| {
        let mut rng = stream_rng(plan.seed(), i as u64, Role::Other(CALIBRATION_ROLE), 0);
        let mut per_pair = vec![Vec::with_capacity(n as usize); inputs.len()];
        if stop() {
            return per_pair;
        }
        for _ in 0..n {
            let report = m
                .perturb(&inputs[i], &mut rng)
                .expect("audit tuples are in the domains");
            let lls = m
                .log_likelihood_each(&report, inputs)
                .expect("audit tuples are in the domains");
            for (x, l) in lls.iter().enumerate() {
                per_pair[x].push(lls[0] - l);
            }
        }
        progress(n);
        per_pair
    });
    if stop() {
        return Err(AuditError::Stopped);
    }
    // The level of each bound, as `Plan::finish` splits it.
    let alpha = alpha / ((inputs.len() - 1) * plan.statistics().len()) as f64;
    (1..inputs.len())
        .map(|v2| {
            let mut hits_v1 = ratios[0][v2].clone();
            let mut hits_v2 = ratios[v2][v2].clone();
            threshold(&mut hits_v1, &mut hits_v2, plan.trials(), alpha)
        })
        .collect()
}

/// The stream role of calibration reports (apart from the counted ones).
const CALIBRATION_ROLE: u32 = 0x6361_6c69;

/// The threshold among (up to 64 quantiles of) `v1`'s log-ratios whose bound, with the
/// calibration rates projected to `trials` reports, is largest.
fn threshold(v1: &mut [f64], v2: &mut [f64], trials: u64, alpha: f64) -> Result<f64, AuditError> {
    v1.sort_unstable_by(|a, b| b.total_cmp(a));
    v2.sort_unstable_by(|a, b| b.total_cmp(a));
    let (n1, n2) = (v1.len() as f64, v2.len() as f64);
    let above = |sorted: &[f64], t: f64| sorted.partition_point(|&r| at_least(r, t)) as f64;
    let step = v1.len().div_ceil(64).max(1);
    let mut best = (f64::NEG_INFINITY, v1[0]);
    let mut last = f64::NAN;
    for &t in v1.iter().step_by(step).chain(v1.last()) {
        if t == last || !t.is_finite() {
            continue;
        }
        last = t;
        let project = |c: f64, n: f64| ((c / n) * trials as f64).round().min(trials as f64) as u64;
        let h1 = project(above(v1, t), n1);
        // A threshold no calibration report of v2 passed is projected as if one had.
        let h2 = project(above(v2, t).max(1.0), n2);
        let (low, _) = clopper_pearson(h1, trials, alpha)?;
        let (_, high) = clopper_pearson(h2, trials, alpha)?;
        let bound = if low > 0.0 {
            (low / high).ln()
        } else {
            f64::NEG_INFINITY
        };
        if bound > best.0 {
            best = (bound, t);
        }
    }
    Ok(best.1)
}
