//! # ldp-optimize
//!
//! Multi-objective tuning of LDP protocols, after Section "our_protocols" and the
//! appendix "optimization_methods" of "Revisiting Locally Differentially Private
//! Protocols" (Arcolezi and Gambs):
//!
//! - parameter spaces and the paper's grids ([`paper_space`]), with an optional
//!   golden-section refinement ([`Search::Refined`]);
//! - objectives ASR and MSE and, beyond the paper, the poisoning gain EPG and the report
//!   size in bits ([`Objective`]), combined by normalized [`Weights`], raw or min-max
//!   [`Scale`]d;
//! - Pareto frontiers in any set of objectives ([`frontier`], [`frontier_in`]);
//! - the six selection strategies ([`Strategy`], [`select`]), with what each means beyond
//!   two objectives documented in [`strategy`](Strategy);
//! - the adaptive protocols ([`ldp_core::Protocol::ADAPTIVE`], [`tune`]), whose result is a real
//!   `ldp-core` mechanism plus the objective values that justified it; their integer
//!   spaces are searched exactly without a full scan where the strategy allows
//!   (branch and bound on the objectives' shape);
//! - the practitioner's question over every protocol at once: the lowest MSE under
//!   bounds on ASR, EPG and report size ([`choose_protocol`]), or on the ASR after many
//!   linked reports ([`choose_protocol_after`]).
//!
//! ```
//! use ldp_core::{DomainSize, Epsilon, Mechanism, Protocol, AnyMechanism};
//! use ldp_optimize::{tune, TuneOptions};
//! let tuned = tune(Protocol::Aue, DomainSize::new(100)?, Epsilon::new(4.0)?, &TuneOptions::default())?;
//! assert!((tuned.param() - 0.818).abs() < 1e-3); // the paper's appendix value
//! let AnyMechanism::UnaryEncoding(aue) = tuned.mechanism()? else { unreachable!() };
//! assert_eq!(aue.epsilon().get(), 4.0);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Tuning is analytic and cheap: AUE at k = 1e4 evaluates 100 grid points in
//! microseconds (the paper's code takes 35 s for one such configuration).

mod analysis;
mod bounds;
mod choose;
mod error;
mod multidim;
mod objective;
mod options;
mod param_values;
mod pareto;
mod request;
mod search;
mod space;
mod strategy;
mod tune;

pub use analysis::{
    ANALYSIS_COLUMNS, Analysis, AnalysisError, AnalysisRequest, AnalysisRow, MAX_ANALYSIS_ROWS,
    RowBounds, analyze,
};
pub use choose::{
    Choice, ChooseError, Reachable, choose_protocol, choose_protocol_after, choose_protocol_among,
};
pub use error::{FullScan, OptimizeError};
pub use ldp_core::ParameterSpace;
pub use multidim::{
    MULTIDIM_COLUMNS, MultidimAnalysisError, MultidimBounds, MultidimChoice, MultidimRequest,
    MultidimRow, analyze_multidim, choose_multidim,
};
pub use objective::{Objective, ObjectiveSet, Objectives, Scale, Weights};
pub use options::TuneOptions;
pub use param_values::{ParamSyntax, ParamValues, ParamValuesError, Short};
pub use pareto::{Candidate, frontier, frontier_in};
pub use request::{
    Instance, InstanceRequest, Knob, RequestError, SettingGroup, SettingSyntax, SettingValue,
    TuneRequest,
};
pub use space::{MAX_GRID_POINTS, Search, paper_space};
pub use strategy::{Bounds, Reference, Rho, Selection, Strategy, select};
pub use tune::{
    Tuned, candidates, candidates_in, objectives, objectives_for, protocol_spec, tune, tune_in,
};
