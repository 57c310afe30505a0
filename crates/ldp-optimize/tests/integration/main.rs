//! ldp-optimize's integration tests, one binary (one build and link step where there were
//! six). Each module was a test binary of its own.

mod choose;
mod collections;
mod protocol_values;
mod search;
mod selection;
mod tuning;
