//! Family parameters as front ends take them: one number for a family with one parameter
//! (`--param 0.5`, `param=0.5`), or values by name for any family (`--param h=256,m=1024`,
//! `param={"h": 256, "m": 1024}`), the ones left out keeping the preset's values. They
//! print as the `param` cell of an analysis does (`h=256;m=1024`), which parses back.

use std::fmt;
use std::str::FromStr;

use ldp_core::{DomainSize, Epsilon, FamilyParams, Protocol, Spec};

/// Family parameters given instead of a preset or tuning.
///
/// ```
/// use ldp_optimize::ParamValues;
/// assert_eq!("0.5".parse::<ParamValues>(), Ok(ParamValues::One(0.5)));
/// let named: ParamValues = "h=256, m=1024".parse().unwrap();
/// assert_eq!(named, ParamValues::Named(vec![("h".into(), 256.0), ("m".into(), 1024.0)]));
/// assert_eq!(named.to_string(), "h=256;m=1024"); // as an analysis's `param` cell
/// assert_eq!("h=256;m=1024".parse::<ParamValues>(), Ok(named));
/// assert!("h=".parse::<ParamValues>().is_err());
/// ```
#[derive(Debug, Clone, PartialEq)]
pub enum ParamValues {
    /// The value of a family's only parameter.
    One(f64),
    /// Values by parameter name, in the order given.
    Named(Vec<(String, f64)>),
}

impl From<f64> for ParamValues {
    fn from(v: f64) -> Self {
        ParamValues::One(v)
    }
}

impl fmt::Display for ParamValues {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParamValues::One(v) => write!(f, "{}", Short(*v)),
            ParamValues::Named(values) => {
                for (i, (name, v)) in values.iter().enumerate() {
                    let sep = if i == 0 { "" } else { ";" };
                    write!(f, "{sep}{name}={}", Short(*v))?;
                }
                Ok(())
            }
        }
    }
}

/// A number in its shortest round-trip form, in exponent form below 1e-5 and from 1e16 in
/// magnitude: how every front end prints a parameter, a setting or a cell.
///
/// ```
/// use ldp_optimize::Short;
/// assert_eq!(Short(0.25).to_string(), "0.25");
/// assert_eq!(Short(1e-300).to_string(), "1e-300");
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Short(pub f64);

impl fmt::Display for Short {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let v = self.0;
        if v != 0.0 && v.is_finite() && !(1e-5..1e16).contains(&v.abs()) {
            write!(f, "{v:e}")
        } else {
            write!(f, "{v}")
        }
    }
}

/// Parameters that are neither a number nor `name=value` pairs.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "expected a number or name=value pairs separated by commas or semicolons (h=256,m=1024), got `{0}`"
)]
pub struct ParamSyntax(pub String);

/// Parameters that do not fit a protocol's family.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ParamValuesError {
    /// A parameter was given for a protocol without one.
    #[error("{0} has no parameter")]
    NoParameter(&'static str),
    /// A parameter was given for a protocol whose definition fixes it.
    #[error("{protocol} fixes {name} by its definition; for another {name} use {adaptive}")]
    FixedParameter {
        /// The protocol.
        protocol: &'static str,
        /// The parameter's name.
        name: &'static str,
        /// The adaptive protocol of the family, which takes any value.
        adaptive: &'static str,
    },
    /// A whole-number parameter was given a fraction (or a value out of `u32`).
    #[error("{0} must be a whole number from 0 to 2^32 - 1")]
    NotWhole(&'static str),
    /// One number was given for a family with several parameters.
    #[error("{protocol} has the parameters {names}: give them by name, as name=value pairs")]
    NameParameters {
        /// The protocol.
        protocol: &'static str,
        /// Its family's parameter names.
        names: String,
    },
    /// A parameter name the family does not have.
    #[error("{protocol} has no parameter `{name}`; its parameters are {names}")]
    UnknownParameter {
        /// The protocol.
        protocol: &'static str,
        /// The name given.
        name: String,
        /// Its family's parameter names.
        names: String,
    },
    /// A parameter was given twice.
    #[error("{0} is given twice")]
    RepeatedParameter(&'static str),
}

impl FromStr for ParamValues {
    type Err = ParamSyntax;
    fn from_str(s: &str) -> Result<Self, ParamSyntax> {
        let s = s.trim();
        if let Ok(v) = s.parse::<f64>() {
            return Ok(ParamValues::One(v));
        }
        let pair = |part: &str| {
            let (name, value) = part.split_once('=')?;
            let name = name.trim();
            let valid =
                !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            Some((name.to_owned(), value.trim().parse::<f64>().ok()?)).filter(|_| valid)
        };
        s.split([',', ';'])
            .map(pair)
            .collect::<Option<Vec<_>>>()
            .map(ParamValues::Named)
            .ok_or_else(|| ParamSyntax(s.to_owned()))
    }
}

impl ParamValues {
    /// The family parameters these values give `protocol` at (k, eps), before their
    /// ranges are checked: refused where the protocol has no parameter or its definition
    /// fixes it, for a name the family does not have or gives twice, for one number where
    /// the family has several parameters, and for a fraction where a whole number is
    /// needed. Named parameters left out keep the preset's values.
    pub fn family_params(
        &self,
        protocol: Protocol,
        k: DomainSize,
        eps: Epsilon,
    ) -> Result<FamilyParams, ParamValuesError> {
        let family = protocol.family();
        let names = family.parameter_names();
        if names.is_empty() {
            return Err(ParamValuesError::NoParameter(protocol.name()));
        }
        if protocol.fixes_parameter() {
            let adaptive = Protocol::ADAPTIVE
                .into_iter()
                .find(|a| a.family() == family)
                .map_or("an adaptive protocol", Protocol::name);
            return Err(ParamValuesError::FixedParameter {
                protocol: protocol.name(),
                name: names[0],
                adaptive,
            });
        }
        match self {
            ParamValues::One(x) => match names {
                [name] => {
                    FamilyParams::with_value(family, *x).ok_or(ParamValuesError::NotWhole(name))
                }
                _ => Err(ParamValuesError::NameParameters {
                    protocol: protocol.name(),
                    names: names.join(", "),
                }),
            },
            ParamValues::Named(given) => {
                let preset = Spec::classic(protocol.classic_counterpart(), k, eps)
                    .expect("a classic protocol")
                    .params()
                    .values();
                let mut values = preset.clone();
                let mut seen = vec![false; names.len()];
                for (name, v) in given {
                    let Some(i) = names.iter().position(|n| n == name) else {
                        return Err(ParamValuesError::UnknownParameter {
                            protocol: protocol.name(),
                            name: name.clone(),
                            names: names.join(", "),
                        });
                    };
                    if std::mem::replace(&mut seen[i], true) {
                        return Err(ParamValuesError::RepeatedParameter(names[i]));
                    }
                    // Each value alone against the preset, to name the one that is not whole.
                    let mut alone = preset.clone();
                    alone[i] = *v;
                    if FamilyParams::with_values(family, &alone).is_none() {
                        return Err(ParamValuesError::NotWhole(names[i]));
                    }
                    values[i] = *v;
                }
                Ok(FamilyParams::with_values(family, &values).expect("each value checked"))
            }
        }
    }
}
