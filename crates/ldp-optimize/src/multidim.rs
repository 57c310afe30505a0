//! Several attributes per user: the closed forms of every (solution, protocol, budget) for
//! a table of attributes ([`analyze_multidim`]), and the choice of the most accurate one
//! under bounds on what an attacker learns ([`choose_multidim`]).
//!
//! A row is one client ([`ldp_core::multidim`]): every attribute runs the protocol at the
//! solution's per-report budget, an adaptive protocol tuned for its attribute's domain.
//! Its numbers come from `ldp_analytic::multidim`:
//! - `mse`: the estimate's variance for `n` users of a uniform table, averaged over
//!   attributes and items (users drawn from the table: `Population::Sampled`);
//! - `asr`: the reconstruction attack's success on one attribute, averaged over attributes;
//! - `asr_joint`: the probability that one report gives every attribute away;
//! - `profiled` (SMP, given a number of surveys): the probability that every value an
//!   attacker joins across that many surveys is right, the profile re-identification
//!   matches.
//!
//! RS+RFD needs the server's priors, which the closed forms take directly
//! (`ldp_analytic::multidim::Collection::with_priors`): it is not among the solutions
//! analysed here.

use ldp_analytic::LhAsr;
use ldp_analytic::multidim::{Collection, Population, Sampling, Unreported};
use ldp_core::multidim::Solution;
use ldp_core::{DomainSize, Epsilon, Protocol};

use crate::options::TuneOptions;
use crate::tune::protocol_spec;

/// The columns of a multidimensional analysis: `solution`, `protocol`, then
/// [`MultidimRow::numbers`] in order.
pub const MULTIDIM_COLUMNS: [&str; 8] = [
    "solution",
    "protocol",
    "eps",
    "eps_report",
    "mse",
    "asr",
    "asr_joint",
    "profiled",
];

/// What to analyse: every solution x protocol x budget over one table of attributes.
#[derive(Debug, Clone)]
pub struct MultidimRequest {
    /// Solutions (not RS+RFD, which needs priors).
    pub solutions: Vec<Solution>,
    /// Protocols, classic or adaptive.
    pub protocols: Vec<Protocol>,
    /// Each attribute's domain size.
    pub domains: Vec<DomainSize>,
    /// Total budgets per user.
    pub eps: Vec<Epsilon>,
    /// Users, for the `mse` column.
    pub users: f64,
    /// SMP surveys joined into a profile, for the `profiled` column (none: no column
    /// value).
    pub surveys: Option<u32>,
    /// How adaptive protocols are tuned.
    pub tuning: TuneOptions,
}

/// The closed forms of one client.
#[derive(Debug, Clone, PartialEq)]
pub struct MultidimRow {
    /// The solution.
    pub solution: Solution,
    /// The protocol.
    pub protocol: Protocol,
    /// The user's total budget.
    pub eps: f64,
    /// Each report's budget.
    pub eps_report: f64,
    /// Mean variance of an item's estimate for the request's users (uniform table).
    pub mse: f64,
    /// Mean reconstruction success on one attribute.
    pub asr: f64,
    /// The probability that one report gives every attribute away.
    pub asr_joint: f64,
    /// SMP with surveys: every value joined over the surveys right.
    pub profiled: Option<f64>,
}

impl MultidimRow {
    /// The numeric columns after `solution` and `protocol`, in [`MULTIDIM_COLUMNS`]'s order.
    pub fn numbers(&self) -> [Option<f64>; 6] {
        [
            Some(self.eps),
            Some(self.eps_report),
            Some(self.mse),
            Some(self.asr),
            Some(self.asr_joint),
            self.profiled,
        ]
    }
}

/// Why a multidimensional analysis could not run.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum MultidimAnalysisError {
    /// Nothing to analyse.
    #[error("give at least one {0}")]
    Empty(&'static str),
    /// RS+RFD among the solutions.
    #[error(
        "rsrfd draws its fakes from the server's priors, which this analysis does not take (ldp_analytic::multidim::Collection::with_priors does)"
    )]
    Priors,
    /// The number of users.
    #[error("the number of users must be finite and at least 1, got {0}")]
    Users(f64),
    /// A client that cannot be formed (a family without a null input under rsfd-z, a
    /// budget too small, a tuning that fails).
    #[error("{solution} {protocol} at eps = {eps}: {reason}")]
    Client {
        /// The solution.
        solution: Solution,
        /// The protocol.
        protocol: Protocol,
        /// The budget.
        eps: f64,
        /// Why.
        reason: String,
    },
}

/// The closed forms of one client.
fn row(
    solution: Solution,
    protocol: Protocol,
    eps: Epsilon,
    request: &MultidimRequest,
) -> Result<MultidimRow, MultidimAnalysisError> {
    let fail = |reason: String| MultidimAnalysisError::Client {
        solution,
        protocol,
        eps: eps.get(),
        reason,
    };
    let collection = Collection::new(solution, eps, &request.domains, |k, e| {
        protocol_spec(protocol, k, e, &request.tuning)
    })
    .map_err(|e| fail(e.to_string()))?;
    let d = request.domains.len() as f64;
    let mut mse = 0.0;
    let mut asr = 0.0;
    for (j, k) in request.domains.iter().enumerate() {
        let f = 1.0 / k.as_f64();
        // A uniform table: every item of an attribute has the same variance.
        mse += collection
            .variance(j, 0, request.users, f, Population::Sampled)
            .map_err(|e| fail(e.to_string()))?;
        asr += collection
            .asr(j, LhAsr::Exact)
            .map_err(|e| fail(e.to_string()))?;
    }
    let asr_joint = collection
        .asr_joint(LhAsr::Exact)
        .map_err(|e| fail(e.to_string()))?;
    let profiled = match (solution, request.surveys) {
        (Solution::Smp, Some(s)) => Some(
            collection
                .profile(
                    s,
                    Sampling::WithoutRepetition,
                    Unreported::Ignored,
                    LhAsr::Exact,
                )
                .map_err(|e| fail(e.to_string()))?
                .all_correct,
        ),
        _ => None,
    };
    Ok(MultidimRow {
        solution,
        protocol,
        eps: eps.get(),
        eps_report: collection.report_epsilon().get(),
        mse: mse / d,
        asr: asr / d,
        asr_joint,
        profiled,
    })
}

fn check(request: &MultidimRequest) -> Result<(), MultidimAnalysisError> {
    for (empty, what) in [
        (request.solutions.is_empty(), "solution"),
        (request.protocols.is_empty(), "protocol"),
        (request.domains.is_empty(), "attribute"),
        (request.eps.is_empty(), "budget"),
    ] {
        if empty {
            return Err(MultidimAnalysisError::Empty(what));
        }
    }
    if request.solutions.contains(&Solution::RsRfd) {
        return Err(MultidimAnalysisError::Priors);
    }
    if !(request.users.is_finite() && request.users >= 1.0) {
        return Err(MultidimAnalysisError::Users(request.users));
    }
    Ok(())
}

/// Every solution x protocol x budget of the request, in that order (a client that
/// cannot be formed is its row's error).
///
/// ```
/// use ldp_core::multidim::Solution;
/// use ldp_core::{DomainSize, Epsilon, Protocol};
/// use ldp_optimize::{analyze_multidim, MultidimRequest, TuneOptions};
/// let request = MultidimRequest {
///     solutions: vec![Solution::Spl, Solution::Smp],
///     protocols: vec![Protocol::Grr],
///     domains: vec![DomainSize::new(74)?, DomainSize::new(7)?, DomainSize::new(16)?],
///     eps: vec![Epsilon::new(4.0)?],
///     users: 45_222.0,
///     surveys: Some(3),
///     tuning: TuneOptions::default(),
/// };
/// let rows = analyze_multidim(&request)?;
/// let (spl, smp) = (rows[0].as_ref().unwrap(), rows[1].as_ref().unwrap());
/// assert!(smp.mse < spl.mse);              // one report at eps beats three at eps / 3
/// assert!(smp.profiled.unwrap() > 0.0);    // every value of three surveys right
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn analyze_multidim(
    request: &MultidimRequest,
) -> Result<Vec<Result<MultidimRow, MultidimAnalysisError>>, MultidimAnalysisError> {
    check(request)?;
    let mut rows = Vec::new();
    for &solution in &request.solutions {
        for &protocol in &request.protocols {
            for &eps in &request.eps {
                rows.push(row(solution, protocol, eps, request));
            }
        }
    }
    Ok(rows)
}

/// Bounds on what an attacker learns, for [`choose_multidim`].
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct MultidimBounds {
    /// Mean reconstruction success on one attribute at most this.
    pub asr_max: Option<f64>,
    /// One report giving every attribute away at most this often.
    pub asr_joint_max: Option<f64>,
    /// An SMP profile over the request's surveys entirely right at most this often (a
    /// bound on what re-identification matches; clients without a profile meet it).
    pub profiled_max: Option<f64>,
}

impl MultidimBounds {
    /// Whether `row` meets every bound.
    pub fn admit(&self, row: &MultidimRow) -> bool {
        let within = |bound: Option<f64>, value: Option<f64>| match (bound, value) {
            (Some(b), Some(v)) => v <= b,
            _ => true,
        };
        within(self.asr_max, Some(row.asr))
            && within(self.asr_joint_max, Some(row.asr_joint))
            && within(self.profiled_max, row.profiled)
    }
}

/// The chosen client and why.
#[derive(Debug, Clone, PartialEq)]
pub struct MultidimChoice {
    /// The lowest-MSE row meeting the bounds.
    pub row: MultidimRow,
    /// The rows compared, and how many met the bounds.
    pub compared: usize,
    /// How many met the bounds.
    pub admitted: usize,
    /// One sentence: what was chosen over what.
    pub reason: String,
}

/// The lowest-MSE client among the request's rows that meets `bounds` (rows that cannot
/// be formed are skipped), with the reason; `None` when none meets them.
///
/// ```
/// use ldp_core::multidim::Solution;
/// use ldp_core::{DomainSize, Epsilon, Protocol};
/// use ldp_optimize::{choose_multidim, MultidimBounds, MultidimRequest, TuneOptions};
/// let request = MultidimRequest {
///     solutions: vec![Solution::Spl, Solution::Smp, Solution::RsFd],
///     protocols: vec![Protocol::Grr, Protocol::Oue, Protocol::Olh],
///     domains: vec![DomainSize::new(74)?, DomainSize::new(7)?, DomainSize::new(16)?],
///     eps: vec![Epsilon::new(6.0)?],
///     users: 45_222.0,
///     surveys: Some(3),
///     tuning: TuneOptions::default(),
/// };
/// let bounds = MultidimBounds { profiled_max: Some(0.05), ..Default::default() };
/// let choice = choose_multidim(&request, &bounds)?.expect("a client meets the bound");
/// assert!(choice.row.profiled.is_none_or(|p| p <= 0.05));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn choose_multidim(
    request: &MultidimRequest,
    bounds: &MultidimBounds,
) -> Result<Option<MultidimChoice>, MultidimAnalysisError> {
    let rows: Vec<MultidimRow> = analyze_multidim(request)?
        .into_iter()
        .filter_map(Result::ok)
        .collect();
    let compared = rows.len();
    let mut admitted: Vec<&MultidimRow> = rows.iter().filter(|r| bounds.admit(r)).collect();
    admitted.sort_by(|a, b| a.mse.total_cmp(&b.mse));
    let Some(best) = admitted.first().copied() else {
        return Ok(None);
    };
    // The most accurate row overall, to say what the bounds cost.
    let unbounded = rows
        .iter()
        .min_by(|a, b| a.mse.total_cmp(&b.mse))
        .expect("the admitted row is among them");
    let label = |r: &MultidimRow| {
        format!(
            "{}[{}] at eps = {}",
            r.solution.label(),
            r.protocol.label(),
            r.eps
        )
    };
    let reason = if unbounded == best {
        format!(
            "{} has the lowest MSE of the {compared} clients compared, and meets the bounds",
            label(best)
        )
    } else {
        format!(
            "{} has the lowest MSE of the {} of {compared} clients meeting the bounds ({:.3}x that of {}, which does not meet them)",
            label(best),
            admitted.len(),
            best.mse / unbounded.mse,
            label(unbounded)
        )
    };
    // No closed form bounds attribute inference: say so where it applies.
    let reason = match best.solution {
        Solution::RsFdNull => format!(
            "{reason}; attribute inference is not bounded here, and RS+FD-z's fakes give the sampled attribute away at high budgets (measure it: ldp simulate)"
        ),
        s if s.fakes() => {
            format!("{reason}; attribute inference is not bounded here (measure it: ldp simulate)")
        }
        _ => reason,
    };
    Ok(Some(MultidimChoice {
        row: best.clone(),
        compared,
        admitted: admitted.len(),
        reason,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(solutions: Vec<Solution>, protocols: Vec<Protocol>) -> MultidimRequest {
        MultidimRequest {
            solutions,
            protocols,
            domains: [74u32, 7, 16, 2]
                .iter()
                .map(|&k| DomainSize::new(k).unwrap())
                .collect(),
            eps: vec![Epsilon::new(2.0).unwrap(), Epsilon::new(6.0).unwrap()],
            users: 10_000.0,
            surveys: Some(4),
            tuning: TuneOptions::default(),
        }
    }

    /// The rows are the closed forms of ldp-analytic for the clients ldp-core builds.
    #[test]
    fn rows_are_the_collections_closed_forms() {
        let req = request(vec![Solution::Smp, Solution::RsFd], vec![Protocol::Oue]);
        let rows = analyze_multidim(&req).unwrap();
        assert_eq!(rows.len(), 4);
        let smp = rows[1].as_ref().unwrap();
        let c = Collection::classic(
            Solution::Smp,
            Protocol::Oue,
            Epsilon::new(6.0).unwrap(),
            &req.domains,
        )
        .unwrap();
        let asr: f64 = (0..4).map(|j| c.asr(j, LhAsr::Exact).unwrap()).sum::<f64>() / 4.0;
        assert!((smp.asr - asr).abs() < 1e-15);
        assert_eq!(smp.eps_report, 6.0);
        let rsfd = rows[3].as_ref().unwrap();
        assert!((rsfd.eps_report - (4.0 * 6f64.exp_m1()).ln_1p()).abs() < 1e-12);
        assert!(rsfd.profiled.is_none() && smp.profiled.is_some());
    }

    #[test]
    fn the_choice_meets_the_bounds_and_says_what_they_cost() {
        let req = request(
            vec![Solution::Spl, Solution::Smp, Solution::RsFd],
            vec![Protocol::Grr, Protocol::Oue, Protocol::Olh],
        );
        let free = choose_multidim(&req, &MultidimBounds::default())
            .unwrap()
            .unwrap();
        assert!(free.reason.contains("lowest MSE of the 18 clients"));
        let bounded = MultidimBounds {
            profiled_max: Some(0.01),
            asr_max: Some(0.3),
            ..Default::default()
        };
        let choice = choose_multidim(&req, &bounded).unwrap().unwrap();
        assert!(bounded.admit(&choice.row));
        assert!(choice.row.mse >= free.row.mse);
        // Every admitted row is at least as noisy.
        for r in analyze_multidim(&req).unwrap().into_iter().flatten() {
            if bounded.admit(&r) {
                assert!(r.mse >= choice.row.mse);
            }
        }
        let impossible = MultidimBounds {
            asr_joint_max: Some(0.0),
            ..Default::default()
        };
        assert_eq!(choose_multidim(&req, &impossible).unwrap(), None);
    }

    #[test]
    fn bad_requests_are_named() {
        let mut req = request(vec![Solution::RsRfd], vec![Protocol::Grr]);
        assert_eq!(analyze_multidim(&req), Err(MultidimAnalysisError::Priors));
        req.solutions = vec![Solution::RsFdNull];
        let rows = analyze_multidim(&req).unwrap();
        assert!(matches!(rows[0], Err(MultidimAnalysisError::Client { .. })));
        req.users = 0.0;
        assert_eq!(
            analyze_multidim(&req),
            Err(MultidimAnalysisError::Users(0.0))
        );
        req.domains.clear();
        assert_eq!(
            analyze_multidim(&req),
            Err(MultidimAnalysisError::Empty("attribute"))
        );
    }
}
