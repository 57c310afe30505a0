//! # ldp-datafusion
//!
//! LDP frequency estimation inside Apache DataFusion, distributed with Ballista. The
//! server side of every protocol is a sum of per-report support counts, so it is an
//! aggregate function: `ldp_estimate(report, spec)` returns the estimate,
//! `ldp_counts(report, spec)` the mergeable `(n, counts, skipped)` state. Reports are the Parquet
//! files of the `ldp-arrow` crate (and of `ldp perturb --output FILE.parquet`); the
//! algorithms are ldp-core's, unchanged, so the estimate equals `ldp aggregate`'s.
//!
//! ```no_run
//! use datafusion::prelude::SessionContext;
//! use ldp_datafusion::{register_functions, register_reports, spec_literal};
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let ctx = SessionContext::new();
//! register_functions(&ctx);
//! // Hive-style directories reports/day=2026-11-25/*.parquet, one spec for them all.
//! let spec = register_reports(&ctx, "reports", "reports/".as_ref(), &["day"]).await?;
//! let sql = format!(
//!     "SELECT day, ldp_estimate(report, {}) AS estimate FROM reports GROUP BY day",
//!     spec_literal(&spec)
//! );
//! ctx.sql(&sql).await?.show().await?;
//! # Ok(())
//! # }
//! ```
//!
//! Reports of several attributes per user (`ldp_core::multidim`, written by
//! `ldp_arrow::multidim` or `ldp perturb --attributes --output FILE.parquet`: one row per
//! user, a column `report_j` per attribute) are estimated one attribute at a time, the
//! second argument naming the collection and the attribute. The estimate of attribute `j`
//! is `MultidimAggregator`'s: SMP's over the users who sampled it, the RS+ solutions' with
//! the fakes taken out (ldp-core's [`Multidim::fit_attribute`]).
//!
//! [`Multidim::fit_attribute`]: ldp_core::multidim::Multidim::fit_attribute
//!
//! ```no_run
//! use datafusion::prelude::SessionContext;
//! use ldp_datafusion::{attribute_literal, register_functions, register_multidim_reports};
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let ctx = SessionContext::new();
//! register_functions(&ctx);
//! let spec = register_multidim_reports(&ctx, "users", "users/".as_ref(), &["day"]).await?;
//! let sql = format!(
//!     "SELECT day, ldp_estimate(report_1, {}) AS occupation FROM users GROUP BY day",
//!     attribute_literal(&spec, 1)
//! );
//! ctx.sql(&sql).await?.show().await?;
//! # Ok(())
//! # }
//! ```
//!
//! Under Ballista every process resolves the functions by name: the scheduler through
//! [`session_state`] (its session builder) and the executors through
//! [`function_registry`]; this crate's `ldp-scheduler`, `ldp-executor` and `ldp-query`
//! binaries are wired that way.

mod accumulator;
mod query;
mod session;
mod udaf;

pub use query::{ReportTable, fill_specs, run_sql};
pub use session::{
    DataFusionLdpError, attribute_literal, function_registry, register_functions,
    register_multidim_reports, register_reports, register_reports_as, remote_context,
    session_state, spec_literal, standalone_context,
};
pub use udaf::{COUNTS, ESTIMATE, LdpAggregate, Output, functions, ldp_counts, ldp_estimate};
