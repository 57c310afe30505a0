//! # ldp-optimize
//!
//! Multi-objective tuning of LDP protocols, after Section "our_protocols" and the
//! appendix "optimization_methods" of "Revisiting Locally Differentially Private
//! Protocols" (Arcolezi and Gambs):
//!
//! - parameter spaces and the paper's grids ([`paper_space`]), with an optional
//!   golden-section refinement ([`Search::Refined`]);
//! - objectives ASR, MSE and, beyond the paper, the poisoning gain EPG, combined by
//!   normalized [`Weights`], raw or min-max [`Scale`]d;
//! - Pareto frontiers in two and three objectives ([`frontier`], [`frontier_3d`]);
//! - the six selection strategies ([`Strategy`], [`select`]);
//! - the adaptive protocols ASS, AUE, ALH and ATHE ([`tune`]), whose result is a real
//!   `ldp-core` mechanism plus the objective values that justified it.
//!
//! ```
//! use ldp_core::{DomainSize, Epsilon, Mechanism, Protocol, AnyMechanism};
//! use ldp_optimize::{tune, TuneOptions};
//! let tuned = tune(Protocol::Aue, DomainSize::new(100)?, Epsilon::new(4.0)?, &TuneOptions::default())?;
//! assert!((tuned.param() - 0.818).abs() < 1e-3); // the paper's appendix value
//! let AnyMechanism::UnaryEncoding(aue) = tuned.mechanism() else { unreachable!() };
//! assert_eq!(aue.epsilon().get(), 4.0);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Tuning is analytic and cheap: AUE at k = 1e4 evaluates 100 grid points in
//! microseconds (the paper's code takes 35 s for one such configuration).

mod error;
mod objective;
mod pareto;
mod space;
mod strategy;
mod tune;

pub use error::OptimizeError;
pub use objective::{Objectives, Scale, Weights};
pub use pareto::{Candidate, frontier, frontier_3d};
pub use space::{MAX_GRID_POINTS, ParameterSpace, Search, paper_space};
pub use strategy::{Selection, Strategy, select};
pub use tune::{
    TuneOptions, Tuned, candidates, candidates_in, objectives, protocol_spec, tune, tune_in,
};
