//! `ldp.shuffle`: the shuffle accountant of `ldp_analytic::shuffle`.

use ldp_analytic::shuffle::Shuffle;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::errors::{ParamError, param};

/// The central (eps, delta) of ``users`` shuffled reports of any eps0-LDP randomizer
/// (Feldman, McMillan and Talwar, "Hiding Among the Clones", FOCS 2021), or the inverse.
///
/// With ``eps0``: a dict of ``central_eps`` (the guarantee: the shuffled reports are
/// (central_eps, delta)-DP for the analyst of the shuffled batch), ``central_eps_lower``
/// (the least this analysis could certify) and ``closed_form`` (None where it does not
/// apply). With ``central_eps``: a dict of ``eps0_max``, the largest local budget whose
/// shuffled reports meet it. Whoever sees reports with their senders faces each report's
/// own eps0 (``ldp.analyze`` at eps0 gives its ASR).
///
/// With ``grr_k``, the reports are GRR's over that many items (k-ary randomized response,
/// or SS with omega = 1): k-RR's own bound is used too, whichever gives the smaller delta
/// (Balle et al.'s privacy blanket decomposition under the clone analysis); never looser,
/// and tighter where e^eps0 > grr_k - 1. ``closed_form`` stays the generic one.
///
/// >>> import ldp
/// >>> r = ldp.shuffle(100_000, 1e-6, eps0=4.0)
/// >>> round(r["central_eps"], 6), round(r["closed_form"], 6)
/// (0.16977, 0.537804)
/// >>> round(ldp.shuffle(1_000_000, 1e-8, central_eps=1.0)["eps0_max"], 4)
/// 8.9942
/// >>> round(ldp.shuffle(100_000, 1e-6, eps0=4.0, grr_k=2)["central_eps"], 6)
/// 0.118153
#[pyfunction]
#[pyo3(signature = (users, delta, *, eps0=None, central_eps=None, grr_k=None))]
pub(crate) fn shuffle<'py>(
    py: Python<'py>,
    users: i64,
    delta: f64,
    eps0: Option<f64>,
    central_eps: Option<f64>,
    grr_k: Option<i64>,
) -> PyResult<Bound<'py, PyDict>> {
    // A negative count is the same mistake as 0 or 1, said with its value.
    let users = u64::try_from(users).map_err(|_| {
        ParamError::new_err(format!("a shuffle needs at least 2 reports, got {users}"))
    })?;
    let mut shuffle = Shuffle::new(users, delta).map_err(param)?;
    if let Some(k) = grr_k {
        let k = u64::try_from(k).map_err(|_| {
            ParamError::new_err(format!(
                "grr_k: randomized response needs a domain of at least 2 items, got k = {k}"
            ))
        })?;
        shuffle = shuffle
            .randomized_response(k)
            .map_err(|e| ParamError::new_err(format!("grr_k: {e}")))?;
    }
    let out = PyDict::new(py);
    match (eps0, central_eps) {
        (Some(eps0), None) => {
            let central = shuffle.central_eps(eps0).map_err(param)?;
            out.set_item("central_eps", central.upper)?;
            out.set_item("central_eps_lower", central.lower)?;
            out.set_item("closed_form", shuffle.closed_form(eps0).map_err(param)?)?;
        }
        (None, Some(target)) => {
            out.set_item("eps0_max", shuffle.max_local_eps(target).map_err(param)?)?;
        }
        _ => {
            return Err(ParamError::new_err(
                "give exactly one of eps0 (its central eps) and central_eps (the largest eps0 for it)",
            ));
        }
    }
    Ok(out)
}
