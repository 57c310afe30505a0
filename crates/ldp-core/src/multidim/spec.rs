//! A multidimensional client as front ends name it: a solution, a protocol (one spec per
//! attribute), a budget, and RS+RFD's priors; built into the typed [`Multidim`] with
//! [`dispatch_multidim!`](crate::dispatch_multidim).

use crate::error::ParamError;
use crate::families::{FamilyMechanism, NotClassic, Protocol, WrongFamily};
use crate::spec::Spec;
use crate::vocab::{DomainSize, Epsilon};

use super::{Multidim, MultidimError, Priors, Solution};

/// The parameters of a [`Multidim`] client, family chosen at run time: every attribute's
/// [`Spec`] at the solution's per-report budget, all of one family.
///
/// In JSON (with the `serde` feature): `{"solution": "rsfd", "eps": 1.0, "specs": [spec,
/// …]}`, plus `"priors": [[…], …]` for RS+RFD; read back through the checks of
/// [`MultidimSpec::new`].
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(try_from = "MultidimSpecState")
)]
pub struct MultidimSpec {
    solution: Solution,
    eps: Epsilon,
    specs: Vec<Spec>,
    #[cfg_attr(feature = "serde", serde(skip_serializing_if = "Option::is_none"))]
    priors: Option<Priors>,
}

#[cfg(feature = "serde")]
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct MultidimSpecState {
    solution: Solution,
    eps: Epsilon,
    specs: Vec<Spec>,
    #[serde(default)]
    priors: Option<Priors>,
}

#[cfg(feature = "serde")]
impl TryFrom<MultidimSpecState> for MultidimSpec {
    type Error = MultidimError;
    fn try_from(state: MultidimSpecState) -> Result<Self, MultidimError> {
        let domains: Vec<DomainSize> = state.specs.iter().map(Spec::k).collect();
        let mut given = state.specs.into_iter();
        // Each stored spec is compared to its domain and the solution's budget by `new`.
        Self::new(state.solution, state.eps, &domains, state.priors, |_, _| {
            given.next().ok_or(ParamError::Parameter {
                name: "specs",
                description: "the stored specs",
                requirement: "be one per attribute".into(),
                value: f64::NAN,
            })
        })
    }
}

impl MultidimSpec {
    /// The client of `solution` over `domains` at total budget `eps`, attribute j's spec
    /// being `spec_of(k_j, eps_report)` (e.g. a preset, or a tuned adaptive protocol).
    /// `priors` must be given for RS+RFD, and only then (their lengths are the domains).
    pub fn new(
        solution: Solution,
        eps: Epsilon,
        domains: &[DomainSize],
        priors: Option<Priors>,
        mut spec_of: impl FnMut(DomainSize, Epsilon) -> Result<Spec, ParamError>,
    ) -> Result<Self, MultidimError> {
        super::check_layout(solution, domains, priors.as_ref())?;
        let report_eps = solution
            .report_epsilon(eps, domains.len())
            .map_err(MultidimError::Budget)?;
        let specs = domains
            .iter()
            .enumerate()
            .map(|(j, &k)| {
                let param = |source| MultidimError::Param {
                    attribute: j as u32,
                    source,
                };
                let spec = spec_of(k, report_eps).map_err(param)?;
                if spec.k() != k || spec.eps() != report_eps {
                    return Err(param(ParamError::Parameter {
                        name: "attributes",
                        description: "an attribute's spec",
                        requirement: format!(
                            "have k = {} and the {} report budget {}",
                            k.get(),
                            solution.label(),
                            report_eps.get()
                        ),
                        value: spec.eps().get(),
                    }));
                }
                Ok(spec)
            })
            .collect::<Result<Vec<_>, _>>()?;
        let family = specs[0].family();
        if let Some(j) = specs.iter().position(|s| s.family() != family) {
            return Err(MultidimError::Family {
                attribute: j as u32,
                source: WrongFamily {
                    expected: family,
                    found: specs[j].family(),
                },
            });
        }
        Ok(Self {
            solution,
            eps,
            specs,
            priors,
        })
    }

    /// The client whose attributes all use the preset `protocol` (a classic one: an
    /// adaptive protocol is tuned, see [`MultidimSpec::new`]).
    ///
    /// ```
    /// use ldp_core::multidim::{MultidimSpec, Solution};
    /// use ldp_core::{dispatch_multidim, DomainSize, Epsilon, Protocol};
    /// let domains = [DomainSize::new(74)?, DomainSize::new(7)?, DomainSize::new(16)?];
    /// let spec = MultidimSpec::classic(Solution::RsFd, Protocol::Oue, Epsilon::new(1.0)?, &domains, None)?;
    /// let eps_report = dispatch_multidim!(&spec, m => m.report_epsilon().get())?;
    /// assert!((eps_report - (3.0 * (1f64.exp() - 1.0) + 1.0).ln()).abs() < 1e-12);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn classic(
        solution: Solution,
        protocol: Protocol,
        eps: Epsilon,
        domains: &[DomainSize],
        priors: Option<Priors>,
    ) -> Result<Self, MultidimError> {
        if protocol.is_adaptive() {
            return Err(MultidimError::NotClassic(NotClassic(protocol)));
        }
        Self::new(solution, eps, domains, priors, |k, e| {
            Spec::classic(protocol, k, e).map_err(|_| ParamError::Parameter {
                name: "protocol",
                description: "the protocol",
                requirement: "be classic".into(),
                value: f64::NAN,
            })
        })
    }

    /// For a client already built and checked.
    pub(crate) fn from_parts(
        solution: Solution,
        eps: Epsilon,
        specs: Vec<Spec>,
        priors: Option<Priors>,
    ) -> Self {
        Self {
            solution,
            eps,
            specs,
            priors,
        }
    }

    /// The solution.
    pub fn solution(&self) -> Solution {
        self.solution
    }

    /// The user's total budget.
    pub fn epsilon(&self) -> Epsilon {
        self.eps
    }

    /// Every attribute's spec, at the per-report budget.
    pub fn specs(&self) -> &[Spec] {
        &self.specs
    }

    /// RS+RFD's priors.
    pub fn priors(&self) -> Option<&Priors> {
        self.priors.as_ref()
    }

    /// The typed client, for the family `M` of the specs
    /// ([`dispatch_multidim!`](crate::dispatch_multidim) picks it).
    pub fn build<M: FamilyMechanism>(&self) -> Result<Multidim<M>, MultidimError> {
        let mut specs = self.specs.iter().enumerate();
        let build = |_: DomainSize, _: Epsilon| {
            let (j, spec) = specs.next().expect("one spec per attribute");
            let param = M::param_of(&spec.params()).ok_or(ParamError::Parameter {
                name: "family",
                description: "an attribute's family",
                requirement: format!("be {:?}", M::FAMILY),
                value: j as f64,
            })?;
            M::build(spec.k(), spec.eps(), param)
        };
        let domains: Vec<DomainSize> = self.specs.iter().map(Spec::k).collect();
        match &self.priors {
            Some(priors) if self.solution == Solution::RsRfd => {
                Multidim::with_priors(self.eps, priors.clone(), build)
            }
            _ => Multidim::new(self.solution, self.eps, &domains, build),
        }
    }
}

/// Runs `$body` with `$m` bound to the [`Multidim`] client of the
/// [`MultidimSpec`] `$spec`, whatever its family: `Ok($body)`, or the
/// [`MultidimError`] of building it.
#[macro_export]
macro_rules! dispatch_multidim {
    ($spec:expr, $m:ident => $body:expr) => {{
        let spec: &$crate::multidim::MultidimSpec = $spec;
        $crate::dispatch_family!(spec.specs()[0].params(), F, _ => {
            match spec.build::<F>() {
                Ok($m) => Ok($body),
                Err(e) => Err(e),
            }
        })
    }};
}
