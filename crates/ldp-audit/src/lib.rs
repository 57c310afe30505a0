//! # ldp-audit
//!
//! Measures the privacy an LDP client really gives, in two ways:
//!
//! - **exact** ([`exact_audit`]): for a mechanism of this toolkit, the worst likelihood
//!   ratio `eps_exact` over every input pair and every output, from the mechanism's exact
//!   probabilities. It may be below the claimed budget (THE's thresholded reports spend
//!   less) and must never be above it.
//! - **statistical** ([`audit_mechanism`], [`audit_client`]): the black-box distinguishing
//!   test of LDP-Auditor (Arcolezi and Gambs, 2024): run input `v1` and input `v2`
//!   `trials` times each, count an event E of the reports, and bound
//!   `eps >= ln(TPR_low / FPR_high)` with Clopper-Pearson bounds on `P[E | v1]` and
//!   `P[E | v2]` ([`clopper_pearson`]), at confidence `1 - alpha`.
//!
//! The event matters. LDP-Auditor counts the reconstruction attacker's guess equalling v1
//! ([`Statistic::AttackGuess`]), whose likelihood ratio is far below e^eps for SS, UE and
//! LH: a correct client reads as spending half its budget, and a broken one hides. This
//! crate also counts the most powerful event of each report shape
//! ([`Statistic::LikelihoodRatio`]: "supports v1 and not v2"), whose ratio is the
//! mechanism's worst one, so a correct client's bound comes close to its eps and an
//! excess shows. Both are chosen from the report's shape alone, never from the claimed
//! parameters, and both are counted on the same reports.
//!
//! A client of several attributes (`ldp_core::multidim`) is audited for a change of every
//! attribute and of one, each against its own claim ([`exact_multidim`],
//! [`audit_multidim`]).
//!
//! Any client can be audited: this toolkit's ([`audit_mechanism`], every core, seeded and
//! the same for any thread count), a Rust closure or a Python callable ([`Client`]), or
//! an external program reading items and writing reports line by line
//! ([`CommandClient`], report forms in [`parse_line`]).
//!
//! ```
//! use ldp_audit::{audit_mechanism, exact_audit, AuditConfig, Statistic};
//! use ldp_core::{DomainSize, Epsilon, Protocol, Spec};
//! let olh = Spec::classic(Protocol::Olh, DomainSize::new(25)?, Epsilon::new(2.0)?)?.build()?;
//! let exact = exact_audit(&olh)?;
//! assert!((exact.eps_exact - 2.0).abs() < 1e-9); // GRR over g = 8 hash values: p/q = e^2
//! let audit = audit_mechanism(&olh, &AuditConfig { trials: 200_000, ..AuditConfig::default() })?;
//! let lr = audit.statistic(Statistic::LikelihoodRatio).unwrap().eps_emp;
//! let guess = audit.statistic(Statistic::AttackGuess).unwrap().eps_emp;
//! assert!(lr > 0.85 * exact.eps_exact && lr <= exact.eps_exact);
//! assert!(guess < lr);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod client;
mod command;
mod error;
mod exact;
mod interval;
mod linked;
mod mechanism;
mod multidim;
mod observation;
mod statistic;
mod tally;

pub use client::{Client, ClientAudit, MAX_BATCH, audit_client};
pub use command::{CommandClient, client_line_cap, stop_command_clients};
pub use error::AuditError;
pub use exact::{Coverage, EXACT_LIMIT, ExactAudit, exact_audit};
pub use interval::{MIN_ALPHA, clopper_pearson};
pub use linked::{LinkedExact, MAX_LINKED, audit_linked, exact_linked};
pub use mechanism::{audit_mechanism, audit_mechanism_until, audit_mechanism_with_progress};
pub use multidim::{
    CALIBRATION, Claims, MultidimAudit, MultidimExact, audit_multidim, audit_multidim_until,
    audit_multidim_with_progress, exact_multidim,
};
pub use observation::{Observation, Shape, parse_line};
pub use statistic::{Statistic, UnknownStatistic};
pub use tally::{Audit, AuditConfig, BATCH, MAX_TRIALS, PairAudit, Pairs, Plan, StatisticAudit};
