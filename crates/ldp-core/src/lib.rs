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
//! The large-domain oracles added since (Hadamard response and mechanism, fast local
//! hashing, Apple's count-mean sketches) are families of [`families`] too: the registry
//! there is the one list of them ([`Protocol::ALL`]).
//!
//! Several attributes per user are [`multidim`]'s combinators over any family: SPL, SMP,
//! RS+FD and RS+RFD ([`multidim::Multidim`]).
//!
//! Repeated collection is memoization over any family ([`longitudinal::Memoized`]), with
//! the chains L-GRR, L-SUE, L-OUE, L-OSUE, L-SOUE, L-OLH, L-BLH (LOLOHA) and L-ADP as
//! its presets
//! ([`longitudinal`]).
//!
//! A client sends [`Client::report`]s; a server feeds them to the mechanism's
//! [`Aggregator`] and asks for an [`Estimator`]. Attacks use [`Support`] and
//! [`Mechanism::log_likelihood`]; simulations use the seeded streams of [`simulation`].
//!
//! ```
//! use ldp_core::{Aggregator, Client, DomainSize, Epsilon, Estimator, LocalHashing, Mechanism};
//!
//! let olh = LocalHashing::optimized(DomainSize::new(10)?, Epsilon::new(2.0)?)?;
//! let mut client = Client::from_os_rng(olh.clone())?; // on the device: OS-seeded ChaCha20
//! let mut server = olh.aggregator();                  // on the server
//! for user in 0..5_000u32 {
//!     server.add(&client.report(user % 10)?)?;
//! }
//! let freq = server.estimate(Estimator::Simplex)?;
//! assert!((freq.iter().sum::<f64>() - 1.0).abs() < 1e-9);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! ## Features
//!
//! - `serde` (default): serialization of mechanisms, reports and aggregator states.
//! - `parallel` (default): simulations on every core (rayon).
//!
//! A device that only perturbs needs neither: `default-features = false`.

pub mod aggregate;
pub mod attack_surface;
mod client;
pub mod error;
pub mod estimate;
pub mod exact_outputs;
pub mod families;
pub mod longitudinal;
pub mod mechanism;
pub mod memory;
pub mod multidim;
pub mod names;
pub mod output_counts;
pub mod parallel;
pub mod protocol_set;
pub mod rejections;
pub mod report;
mod sampling;
pub mod server;
pub mod simulation;
pub mod space;
pub mod spec;
pub mod transform;
pub mod vocab;

pub use aggregate::{Aggregator, StateValues, SupportCounts};
pub use attack_surface::{AttackSurface, MaxGain, PoisonKind};
pub use client::Client;
pub use error::{AggregateError, Error, ItemOutOfRange, ParamError, ReportError};
pub use estimate::Estimator;
pub use exact_outputs::{Coverage, ExactOutputs, TooManyOutputs};
pub use families::grr::Grr;
pub use families::local_hash::LocalHashing;
pub use families::subset::SubsetSelection;
pub use families::summation::{SheSums, SummationHistogram};
pub use families::threshold::ThresholdHistogram;
pub use families::unary::UnaryEncoding;
pub use families::{
    AnyAggregator, AnyMechanism, Family, FamilyMechanism, FamilyParams, NotClassic, ParamValue,
    Protocol, Registered, UnknownProtocol, WrongFamily,
};
pub use mechanism::{MAX_RUNNABLE_DOMAIN, Mechanism, PureProtocol, Support, Wire};
pub use names::UnknownName;
pub use output_counts::{CountedOutputs, OutputCounts};
pub use protocol_set::{ProtocolSet, ProtocolSetError};
pub use rejections::{OnInvalid, Reason, Rejected, Rejections};
pub use report::{GrrReport, LhReport, OnesReport, ReportTags, SheReport, SubsetReport};
pub use server::{Clip, ClipBound, ClipError};
pub use space::ParameterSpace;
pub use spec::Spec;
pub use vocab::{DomainSize, Epsilon, FakeFraction};
