//! JavaScript numbers and option objects, checked: a number is a double in JavaScript, so
//! a domain size of `100.5` or a seed of `-1` is refused by name rather than truncated.

use ldp_core::{DomainSize, Epsilon, Protocol};
use serde::de::DeserializeOwned;
use wasm_bindgen::{JsCast, JsValue};

use crate::error::{Kind, error};

/// The largest integer a JavaScript number holds exactly (2^53 - 1).
const MAX_SAFE: f64 = 9_007_199_254_740_991.0;

/// A whole number in `0..=max`, or an error naming `what`.
pub(crate) fn whole(what: &str, v: f64, max: f64) -> Result<f64, JsValue> {
    if v.fract() == 0.0 && (0.0..=max).contains(&v) {
        Ok(v)
    } else {
        Err(error(
            Kind::Param,
            format!("{what}: expected a whole number from 0 to {max}, got {v}"),
        ))
    }
}

/// The domain size `k`.
pub(crate) fn domain(k: f64) -> Result<DomainSize, JsValue> {
    let k = whole("k", k, f64::from(u32::MAX))?;
    DomainSize::new(k as u32).map_err(|e| error(Kind::Param, format!("k: {e}")))
}

/// The budget `eps`.
pub(crate) fn budget(eps: f64) -> Result<Epsilon, JsValue> {
    Epsilon::new(eps).map_err(|e| error(Kind::Param, format!("eps: {e}")))
}

/// A protocol by name (`"olh"`, any case).
pub(crate) fn protocol(name: &str) -> Result<Protocol, JsValue> {
    name.parse()
        .map_err(|e| error(Kind::Param, format!("protocol: {e}")))
}

/// Items from a JavaScript array or typed array of numbers, each a whole number below k.
pub(crate) fn items(values: &[f64], k: DomainSize) -> Result<Vec<u32>, JsValue> {
    let k = k.get();
    values
        .iter()
        .enumerate()
        .map(|(i, &v)| {
            if v.fract() == 0.0 && (0.0..f64::from(k)).contains(&v) {
                Ok(v as u32)
            } else {
                Err(error(
                    Kind::Input,
                    format!(
                        "items[{i}] = {v}: items are whole numbers from 0 to {}",
                        k - 1
                    ),
                ))
            }
        })
        .collect()
}

/// A seed: a JavaScript number that is a safe integer, or a BigInt below 2^64.
pub(crate) fn seed(value: &JsValue) -> Result<u64, JsValue> {
    if let Some(v) = value.as_f64() {
        return whole("seed", v, MAX_SAFE).map(|v| v as u64);
    }
    if value.is_bigint() {
        return u64::try_from(value.clone())
            .map_err(|_| error(Kind::Param, "seed: a BigInt seed must lie in 0..2^64"));
    }
    Err(error(
        Kind::Param,
        "seed: expected a number (a safe integer) or a BigInt",
    ))
}

/// An options object (`undefined` or `null` for none), read through its JSON text so
/// that a misspelt key is an error naming it. A key whose value is `null` or `undefined`
/// is not given; `NaN` and infinities, which JSON would turn into `null`, are refused.
pub(crate) fn options<T: DeserializeOwned + Default>(value: &JsValue) -> Result<T, JsValue> {
    if value.is_undefined() || value.is_null() {
        return Ok(T::default());
    }
    if let Some(object) = value.dyn_ref::<js_sys::Object>() {
        for entry in js_sys::Object::entries(object).iter() {
            let pair = js_sys::Array::from(&entry);
            if let Some(v) = pair.get(1).as_f64()
                && !v.is_finite()
            {
                let key = pair.get(0).as_string().unwrap_or_default();
                return Err(error(
                    Kind::Param,
                    format!("{key}: expected a finite number, got {v}"),
                ));
            }
        }
    }
    let text: String = js_sys::JSON::stringify(value)
        .map_err(|_| error(Kind::Param, "options: not an object JSON can represent"))?
        .into();
    // Through a JSON value, so that a message names the key at fault and no position in
    // a text the caller never wrote.
    serde_json::from_str::<serde_json::Value>(&text)
        .and_then(T::deserialize)
        .map_err(|e| error(Kind::Param, format!("options: {e}")))
}

/// A measurement's `runs` (1 to `max`) and `seed`, as the options gave them.
#[cfg(feature = "measure")]
pub(crate) fn runs_and_seed(runs: f64, seed: f64, max: f64) -> Result<(u64, u64), JsValue> {
    let runs = whole("runs", runs, max)? as u64;
    if runs == 0 {
        return Err(error(Kind::Param, "runs: at least one run is needed"));
    }
    Ok((runs, self::seed(&JsValue::from_f64(seed))?))
}
