//! # ldp-core
//!
//! Client and server code for the eight frequency-estimation protocols studied in
//! "Revisiting Locally Differentially Private Protocols: Towards Better Trade-offs in
//! Privacy, Utility, and Attack Resistance" (Arcolezi and Gambs): GRR, SS, SUE, OUE, BLH,
//! OLH, SHE and THE, as six mechanism families with the paper's presets.
//!
//! | family | type | report | presets |
//! |---|---|---|---|
//! | randomized response | [`Grr`] | [`GrrReport`] | GRR |
//! | subset selection | [`SubsetSelection`] | [`SubsetReport`] | SS (any omega) |
//! | unary encoding | [`UnaryEncoding`] | [`OnesReport`] | SUE, OUE (any p) |
//! | local hashing | [`LocalHashing`] | [`LhReport`] | BLH, OLH (any g) |
//! | summation HE | [`SummationHistogram`] | [`SheReport`] | SHE |
//! | thresholding HE | [`ThresholdHistogram`] | [`OnesReport`] | THE (any theta) |
//!
//! A client calls [`Mechanism::perturb`]; a server feeds reports to the mechanism's
//! [`Aggregator`] and asks for an [`Estimator`]. Attacks use [`Support`] and
//! [`Mechanism::log_likelihood`].
//!
//! ```
//! use ldp_core::{Aggregator, DomainSize, Epsilon, Estimator, LocalHashing, Mechanism};
//! use ldp_core::simulation::{stream_rng, Role};
//!
//! let olh = LocalHashing::optimized(DomainSize::new(10)?, Epsilon::new(2.0)?);
//! let mut rng = stream_rng(2024, 0, Role::Genuine, 0);
//! let mut server = olh.aggregator();
//! for user in 0..5_000u32 {
//!     let report = olh.perturb(user % 10, &mut rng)?; // client side
//!     server.add(&report)?;                           // server side
//! }
//! let freq = server.estimate(Estimator::Simplex)?;
//! assert!((freq.iter().sum::<f64>() - 1.0).abs() < 1e-9);
//! # Ok::<(), ldp_core::Error>(())
//! ```
//!
//! Randomness is always supplied by the caller. For reproducible simulations use
//! [`simulation::stream_rng`]; deployed clients should seed ChaCha20 from the OS.

pub mod aggregate;
pub mod error;
pub mod estimate;
pub mod families;
pub mod mechanism;
pub mod report;
mod sampling;
pub mod simulation;
pub mod spec;
pub mod vocab;

pub use aggregate::{Aggregator, SheSums, SupportCounts};
pub use error::{AggregateError, Error, ItemOutOfRange, ParamError, ReportError};
pub use estimate::Estimator;
pub use families::grr::Grr;
pub use families::histogram::{SummationHistogram, ThresholdHistogram};
pub use families::local_hash::LocalHashing;
pub use families::subset::SubsetSelection;
pub use families::unary::UnaryEncoding;
pub use mechanism::{Mechanism, PureProtocol, Support};
pub use report::{GrrReport, LhReport, OnesReport, SheReport, SubsetReport};
pub use spec::{AnyMechanism, FamilyParams, Spec};
pub use vocab::{DomainSize, Epsilon, Family, Protocol};
