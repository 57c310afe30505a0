//! # ldp-attack
//!
//! The adversary's side of LDP frequency estimation, run against real `ldp-core` reports
//! and estimators so that every closed form of `ldp-analytic` can be checked by
//! measurement:
//!
//! - data reconstruction: the paper's attack for every family and a MAP attack with an
//!   informative prior ([`Adversary::guess`], [`map::map_guess`]), with the MAP attack's
//!   exact expected success rate where it is tractable ([`map::map_asr_exact`]);
//! - poisoning (Cao et al. 2021): the maximal gain, random item and random output attacks
//!   ([`PoisonKind`]); fake reports pass the same validation as genuine ones;
//! - measurement ([`measure`]): simulate users from a [`Population`] (such as the Adult
//!   Age data of the paper), perturb, aggregate, estimate and attack, over seeded runs in
//!   parallel, with standard errors.
//!
//! For local hashing, each report's support (k hashes) is computed once and shared by the
//! aggregation and the attack.

mod adversary;
pub mod data;
pub mod map;
mod measure;
mod poison;

pub use adversary::Adversary;
pub use data::{DataError, Population};
pub use measure::{
    Estimate, MeasureConfig, MeasureError, Measurement, ReconstructionAttack, measure,
};
pub use poison::{PoisonConfig, PoisonKind};
