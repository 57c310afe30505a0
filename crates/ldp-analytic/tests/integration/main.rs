//! ldp-analytic's integration tests, one binary (one build and link step where there were
//! five). Each module was a test binary of its own.

mod bias;
mod closed_forms;
mod costs;
mod large_domain;
mod ledger;
mod longitudinal;
mod multidim;
mod numerics;
mod shuffle;
