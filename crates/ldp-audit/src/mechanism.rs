//! Distinguishing tests on this toolkit's own clients.

use ldp_core::attack_surface::AttackSurface;
use ldp_core::simulation::{Role, stream_rng};
use ldp_core::{AnyMechanism, dispatch};

use crate::tally::{BATCH, count_batches};
use crate::{Audit, AuditConfig, AuditError, Plan, Statistic};

/// Runs the distinguishing test of `config` on `mech`'s own client: `trials` reports of
/// each input, on every core, in seeded batches (the same result for any thread count).
///
/// ```
/// use ldp_audit::{audit_mechanism, AuditConfig, Statistic};
/// use ldp_core::{DomainSize, Epsilon, Protocol, Spec};
/// let grr = Spec::classic(Protocol::Grr, DomainSize::new(25)?, Epsilon::new(1.0)?)?.build()?;
/// let audit = audit_mechanism(&grr, &AuditConfig { trials: 200_000, ..AuditConfig::default() })?;
/// let lr = audit.statistic(Statistic::LikelihoodRatio).unwrap();
/// assert!(lr.eps_emp > 0.8 && lr.eps_emp <= 1.0);
/// assert_eq!(audit.flagged(), Some(false));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn audit_mechanism(mech: &AnyMechanism, config: &AuditConfig) -> Result<Audit, AuditError> {
    audit_mechanism_with_progress(mech, config, &|_| {})
}

/// [`audit_mechanism`], calling `progress(reports)` after each batch with the number of
/// reports it drew.
pub fn audit_mechanism_with_progress(
    mech: &AnyMechanism,
    config: &AuditConfig,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<Audit, AuditError> {
    audit_mechanism_until(mech, config, progress, &|| false)
}

/// [`audit_mechanism_with_progress`] that a caller can stop (Ctrl-C in a front end): each
/// batch first asks `stop()`, and once it is true the remaining batches are skipped and
/// the audit returns [`AuditError::Stopped`] within a batch's time.
pub fn audit_mechanism_until(
    mech: &AnyMechanism,
    config: &AuditConfig,
    progress: &(dyn Fn(u64) + Sync),
    stop: &(dyn Fn() -> bool + Sync),
) -> Result<Audit, AuditError> {
    let stop = &crate::tally::latched(stop);
    let spec = mech.spec();
    if config.statistics.contains(&Statistic::FirstListed) {
        return Err(AuditError::Statistic {
            statistic: Statistic::FirstListed,
            reason: "this toolkit's reports are sorted lists: audit an external client for it",
        });
    }
    let plan = Plan::new(spec.k().get(), config)?;
    let counters = dispatch!(mech, m => count(m, &plan, progress, stop));
    if stop() {
        return Err(AuditError::Stopped);
    }
    plan.finish(&counters, Some(spec.eps().get()))
}

fn count<M: AttackSurface + Sync>(
    m: &M,
    plan: &Plan,
    progress: &(dyn Fn(u64) + Sync),
    stop: &(dyn Fn() -> bool + Sync),
) -> Vec<u64>
where
    M::Report: Send,
{
    let guess = plan.needs_guess();
    let Ok(counters) = count_batches(plan, BATCH, |i, b, n| {
        if stop() {
            return Ok::<_, std::convert::Infallible>(plan.counters());
        }
        let x = plan.inputs()[i];
        let mut rng = stream_rng(plan.seed(), u64::from(x), Role::Genuine, b);
        let mut attacker = stream_rng(plan.seed(), u64::from(x), Role::Attacker, b);
        let mut counters = plan.counters();
        // One report's memory, refilled by every trial of the batch.
        let mut report: Option<M::Report> = None;
        for _ in 0..n {
            let report = m
                .perturb_reusing(x, &mut rng, &mut report)
                .expect("audit inputs are in the domain");
            let g = guess.then(|| m.guess(report, &mut attacker));
            plan.count(&mut counters, i, |_, v1, v2| m.separates(report, v1, v2), g);
        }
        progress(n as u64);
        Ok(counters)
    });
    counters
}

#[cfg(test)]
mod tests {
    use super::*;
    use ldp_core::{DomainSize, Epsilon, Protocol, Spec};
    use std::sync::atomic::{AtomicU64, Ordering};

    /// GRR at k = 10, eps = 1, and an audit of `batches` batches per input.
    fn grr_audit(batches: u64) -> (AnyMechanism, AuditConfig) {
        let k = DomainSize::new(10).unwrap();
        let grr = Spec::classic(Protocol::Grr, k, Epsilon::new(1.0).unwrap())
            .unwrap()
            .build()
            .unwrap();
        let config = AuditConfig {
            trials: batches * BATCH,
            ..AuditConfig::default()
        };
        (grr, config)
    }

    /// A stop asked for after the first batch skips every later one.
    #[test]
    fn a_stopped_audit_skips_the_remaining_batches() {
        let (grr, config) = grr_audit(100);
        let drawn = AtomicU64::new(0);
        let out = audit_mechanism_until(
            &grr,
            &config,
            &|n| {
                drawn.fetch_add(n, Ordering::Relaxed);
            },
            &|| drawn.load(Ordering::Relaxed) > 0,
        );
        assert!(matches!(out, Err(AuditError::Stopped)), "{out:?}");
        // At most one batch per thread was under way when the stop came.
        let most = rayon::current_num_threads() as u64 * BATCH;
        assert!(drawn.load(Ordering::Relaxed) <= most, "{drawn:?}");
    }

    /// A stop that says so once and then takes it back still stops the audit: the batches
    /// it skipped are not counted as batches without hits.
    #[test]
    fn a_stop_taken_back_still_stops() {
        let (grr, config) = grr_audit(8);
        let asked = AtomicU64::new(0);
        let out = audit_mechanism_until(&grr, &config, &|_| {}, &|| {
            asked.fetch_add(1, Ordering::Relaxed) == 2
        });
        assert!(matches!(out, Err(AuditError::Stopped)), "{out:?}");
    }
}
