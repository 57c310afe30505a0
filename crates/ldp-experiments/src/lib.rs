//! # ldp-experiments
//!
//! Reproduces every figure of "Revisiting Locally Differentially Private Protocols"
//! (Arcolezi and Gambs) from RON configurations: one file per figure under
//! `configs/paper/`, each holding everything the figure depends on. Running a
//! configuration writes `data.csv` (tidy, one row per point), `figure.svg` and
//! `manifest.ron` (commit, config hash, seed, versions, threads, wall time) into
//! `results/paper/<figure>/`. `cargo xtask reproduce` drives it.
//!
//! To add an experiment, write a RON file with one of the [`config::Kind`]s:
//!
//! ```
//! use ldp_experiments::config::Experiment;
//! let exp = Experiment::from_ron(r#"(
//!     figure: "asr_k50",
//!     title: "ASR vs eps at k = 50",
//!     kind: AsrVsEps(protocols: [grr, oue, olh, aue], domain_sizes: [50],
//!                    eps: [(regime: "low", from: 2.0, to: 10.0, step: 1.0)]),
//! )"#)?;
//! let out = ldp_experiments::figures::run(&exp)?;
//! assert_eq!(out.table.rows.len(), 4 * 9);
//! # Ok::<(), ldp_experiments::ExperimentError>(())
//! ```
//!
//! Everything is deterministic: analytic figures have no randomness, and simulations draw
//! from seeded ChaCha streams, so results are identical for any number of threads.

pub mod config;
mod error;
pub mod figures;
pub mod plot;
pub mod runner;
pub mod table;

pub use error::ExperimentError;
