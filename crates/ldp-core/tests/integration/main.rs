//! ldp-core's integration tests, one binary (one build and link step where there were eleven).
//! Each module was a test binary of its own; `client`, `goodness_of_fit` and `privacy_audit`
//! also run without default features in CI (the deployment path).

mod bad_input;
mod client;
mod common;
mod estimation;
mod estimators;
mod golden;
mod goodness_of_fit;
mod identity;
mod likelihoods;
mod longitudinal;
mod multidim;
mod presets;
mod privacy_audit;
mod properties;
