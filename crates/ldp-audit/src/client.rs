//! Distinguishing tests on any client: a Rust closure, a Python callable (through
//! `ldp-py`) or an external command ([`CommandClient`]).

use ldp_core::simulation::{Role, stream_rng};

use crate::tally::count_batches;
use crate::{Audit, AuditConfig, AuditError, Observation, Plan, Shape};

/// The most items one call of [`Client::perturb`] gets.
pub const MAX_BATCH: u64 = 1 << 24;

/// A client under audit: perturbs `items` (all equal to one input) and returns one
/// report per item, in order. Its randomness is its own.
pub trait Client: Sync {
    /// One report per item.
    fn perturb(&self, items: &[u32]) -> Result<Vec<Observation>, AuditError>;
}

impl<F> Client for F
where
    F: Fn(&[u32]) -> Result<Vec<Observation>, AuditError> + Sync,
{
    fn perturb(&self, items: &[u32]) -> Result<Vec<Observation>, AuditError> {
        self(items)
    }
}

/// How an audit of a client runs.
#[derive(Debug, Clone, PartialEq)]
pub struct ClientAudit {
    /// The test.
    pub config: AuditConfig,
    /// The shape of the client's reports.
    pub shape: Shape,
    /// The domain size.
    pub k: u32,
    /// The budget the client claims, if any (the test does not use it).
    pub claimed_eps: Option<f64>,
    /// Items per call of [`Client::perturb`]: memory is O(batch) per core.
    pub batch: u64,
}

/// Runs the distinguishing test on `client`, batches in parallel on every core, calling
/// `progress(reports)` after each batch. Every report is checked against the shape; the
/// first invalid one stops the audit with an error naming its input and line.
///
/// ```
/// use ldp_audit::{audit_client, AuditConfig, AuditError, ClientAudit, Observation, Shape, Statistic};
/// // A broken randomized response that always tells the truth.
/// let truthful = |items: &[u32]| -> Result<Vec<Observation>, AuditError> {
///     Ok(items.iter().map(|&x| Observation::Value(x)).collect())
/// };
/// let setup = ClientAudit {
///     config: AuditConfig { trials: 10_000, ..AuditConfig::default() },
///     shape: Shape::Value,
///     k: 10,
///     claimed_eps: Some(1.0),
///     batch: 1000,
/// };
/// let audit = audit_client(&truthful, &setup, &|_| {})?;
/// assert!(audit.eps_emp() > 7.0);
/// assert_eq!(audit.flagged(), Some(true));
/// # Ok::<(), AuditError>(())
/// ```
pub fn audit_client(
    client: &dyn Client,
    setup: &ClientAudit,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<Audit, AuditError> {
    if setup.batch == 0 || setup.batch > MAX_BATCH {
        return Err(AuditError::Batch(setup.batch));
    }
    if let Shape::Hashed { g } = setup.shape
        && g < 2
    {
        return Err(AuditError::HashRange(g));
    }
    let plan = Plan::new(setup.k, &setup.config)?;
    let counters = count_batches(&plan, setup.batch, |i, b, n| {
        let x = plan.inputs()[i];
        let reports = client.perturb(&vec![x; n])?;
        let counters = tally(&plan, setup.shape, i, b, reports, n)?;
        progress(n as u64);
        Ok::<_, AuditError>(counters)
    })?;
    plan.finish(&counters, setup.claimed_eps)
}

/// Counts one batch of reports of input `plan.inputs()[i]`.
pub(crate) fn tally(
    plan: &Plan,
    shape: Shape,
    i: usize,
    b: u64,
    reports: Vec<Observation>,
    expected: usize,
) -> Result<Vec<u64>, AuditError> {
    let x = plan.inputs()[i];
    if reports.len() != expected {
        return Err(AuditError::ReportCount {
            input: x,
            expected,
            got: reports.len(),
        });
    }
    let mut attacker = stream_rng(plan.seed(), u64::from(x), Role::Attacker, b);
    let mut counters = plan.counters();
    for (line, report) in reports.into_iter().enumerate() {
        let report = report
            .check(shape, plan.k())
            .map_err(|reason| AuditError::Report {
                input: x,
                line: line + 1,
                reason,
            })?;
        let guess = plan
            .needs_guess()
            .then(|| report.guess(shape, plan.k(), &mut attacker));
        plan.count(
            &mut counters,
            i,
            |statistic, v1, v2| report.shows(statistic, shape, v1, v2),
            guess,
        );
    }
    Ok(counters)
}
