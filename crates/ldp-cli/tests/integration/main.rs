//! The `ldp` tool's integration tests, one binary (one build and link step where there were
//! eight). Each module was a test binary of its own.

mod audit;
mod cli;
mod docs_examples;
mod hardening;
mod multidim;
mod parquet;
mod repeated;
mod skip_invalid;
