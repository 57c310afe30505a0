//! ldp-audit's integration tests, one binary (one build and link step where there were two).
//! Each module was a test binary of its own.

mod audit;
mod linked;
mod multidim;
