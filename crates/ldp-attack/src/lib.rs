//! # ldp-attack
//!
//! The adversary's side of LDP frequency estimation, run against real `ldp-core` reports
//! and estimators so that every closed form of `ldp-analytic` can be checked by
//! measurement:
//!
//! - data reconstruction: the paper's attack for every family and a MAP attack with an
//!   informative [`Prior`] ([`AttackSurface::guess`], [`map::map_guess`]); the MAP
//!   attack's exact expected success rate is `ldp_analytic::map::asr_exact`;
//! - poisoning (Cao et al. 2021): the maximal gain, random item and random output attacks
//!   ([`PoisonKind`]); fake reports pass the same validation as genuine ones, and the
//!   local-hashing attack's seed search is bounded and documented
//!   ([`ldp_core::attack_surface::best_seed`]);
//! - repeated collection ([`longitudinal`]): the combined-likelihood attack on t linked reports
//!   of one value, with and without memoization; and the detection of a value's changes
//!   from daily reports (the paper's Example 2, [`change`]);
//! - several attributes per user ([`multidim`]): joint reconstruction, attribute
//!   inference on RS+FD and RS+RFD, and re-identification across SMP surveys;
//! - data ([`data`]): one attribute per user ([`Population`], such as the paper's Adult
//!   Age), or several ([`Table`]: UCI Adult's ten categorical attributes and
//!   ACSEmployment's eighteen are shipped, and [`Table::from_csv_labels`] reads one's own);
//! - measurement ([`measure`]): simulate users from a [`Population`] (such as the Adult
//!   Age data of the paper), perturb, aggregate, estimate and attack, over seeded runs in
//!   parallel, with standard errors; beside the MSE, how well the estimate keeps the
//!   distribution's shape ([`shape`]: KL divergence, rank correlation of the top items).
//!
//! For local hashing, each report's support (k hashes) is computed once and shared by the
//! aggregation and the attack.
//!
//! ```
//! use ldp_attack::{measure, MeasureConfig, PoisonConfig, PoisonKind, Population, ReconstructionAttack};
//! use ldp_core::{Epsilon, Protocol, Spec};
//! let pop = Population::adult_age();
//! let olh = Spec::classic(Protocol::Olh, pop.k(), Epsilon::new(4.0)?)?;
//! let config = MeasureConfig {
//!     runs: 2,
//!     seed: 1,
//!     attack: ReconstructionAttack::Paper,
//!     poisoning: Some(PoisonConfig::new(PoisonKind::Mga, 0.05, vec![30])?),
//! };
//! let m = measure(&olh, &pop, &config)?;
//! assert!(m.gain.unwrap().mean > 0.05);
//! assert_eq!(m.targets_supported, Some(1));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod change;
pub mod data;
pub mod longitudinal;
pub mod map;
mod measure;
pub mod multidim;
mod poison;
pub mod pool;
pub mod shape;

pub use data::{DataError, Population, Table, TableError};
pub use ldp_core::{AttackSurface, MaxGain};
pub use map::{Prior, PriorError};
pub use measure::{
    BYTES_PER_RUN, Estimate, MAX_FAKE_USERS, MeasureConfig, MeasureError, Measurement,
    ReconstructionAttack, measure, measure_until,
};
pub use poison::{PoisonConfig, PoisonError, PoisonKind, Targets};
