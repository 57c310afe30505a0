//! The native module of the `ldp` Python package (`ldp._ldp`). It wraps the crates of the
//! ldp workspace and adds no algorithm of its own; the Python layer in
//! `python/ldp/__init__.py` adds pandas and pyarrow conversions.

mod aggregator;
mod analysis;
mod args;
mod audit;
mod columns;
mod errors;
mod items;
mod ledger;
mod longitudinal;
mod mechanism;
mod multidim;
mod options;
mod reports;
mod shuffle;
mod threads;

use pyo3::prelude::*;

#[pymodule]
fn _ldp(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<mechanism::Mechanism>()?;
    m.add_class::<reports::Reports>()?;
    m.add_class::<aggregator::Aggregator>()?;
    m.add_class::<longitudinal::Longitudinal>()?;
    m.add_class::<multidim::Multidim>()?;
    m.add_class::<multidim::MultidimReports>()?;
    m.add_function(wrap_pyfunction!(mechanism::mechanism, m)?)?;
    m.add_function(wrap_pyfunction!(analysis::analyze, m)?)?;
    m.add_function(wrap_pyfunction!(analysis::tune, m)?)?;
    m.add_function(wrap_pyfunction!(analysis::frontier, m)?)?;
    m.add_function(wrap_pyfunction!(analysis::attack, m)?)?;
    m.add_function(wrap_pyfunction!(analysis::simulate, m)?)?;
    m.add_function(wrap_pyfunction!(aggregator::_aggregator_from_state, m)?)?;
    m.add_function(wrap_pyfunction!(longitudinal::longitudinal, m)?)?;
    m.add_function(wrap_pyfunction!(longitudinal::asr_after, m)?)?;
    m.add_function(wrap_pyfunction!(longitudinal::simulate_linked, m)?)?;
    m.add_function(wrap_pyfunction!(longitudinal::simulate_changes, m)?)?;
    m.add_function(wrap_pyfunction!(longitudinal::replay_changes, m)?)?;
    m.add_function(wrap_pyfunction!(reports::_reports_from_pickle, m)?)?;
    m.add_function(wrap_pyfunction!(multidim::multidim, m)?)?;
    m.add_function(wrap_pyfunction!(multidim::_table, m)?)?;
    m.add_function(wrap_pyfunction!(audit::audit, m)?)?;
    m.add_function(wrap_pyfunction!(audit::exact_audit, m)?)?;
    m.add_function(wrap_pyfunction!(shuffle::shuffle, m)?)?;
    m.add_function(wrap_pyfunction!(ledger::ledger, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    errors::register(m)?;
    Ok(())
}

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;
