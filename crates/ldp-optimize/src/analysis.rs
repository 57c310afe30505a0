//! The closed forms of many instances at once, protocols x domain sizes x budgets: what
//! `ldp analyze`, Python's `analyze` and the browser page's table show, resolved and
//! evaluated once here so that they agree by construction.

use ldp_analytic::{Metrics, Options, evaluate, longitudinal};
use ldp_core::{DomainSize, Epsilon, Protocol};

use crate::param_values::ParamValues;
use crate::request::{Instance, InstanceRequest, Knob, RequestError, TuneRequest};

/// The most rows one analysis evaluates: each row is a few hundred bytes, and a request
/// beyond this is a typo, not a study.
pub const MAX_ANALYSIS_ROWS: usize = 10_000_000;

/// Protocols x domain sizes x budgets to analyse.
#[derive(Debug, Clone, PartialEq)]
pub struct AnalysisRequest {
    /// The protocols (adaptive ones are tuned with `tuning` unless `param` is given).
    pub protocols: Vec<Protocol>,
    /// The domain sizes.
    pub ks: Vec<DomainSize>,
    /// The budgets.
    pub eps: Vec<Epsilon>,
    /// The family parameters, for a single protocol.
    pub param: Option<ParamValues>,
    /// How adaptive protocols are tuned, the LH ASR form of the `asr` column, and the
    /// poisoning setting of the `epg` column.
    pub tuning: TuneRequest,
    /// Also evaluate the ASR after this many linked reports.
    pub collections: Option<u32>,
    /// Which rows to keep (none dropped by default).
    pub keep: RowBounds,
}

/// Bounds on the rows an analysis returns: a row whose instance exceeds one is dropped
/// (a row that failed is kept, with its error). These filter rows; they are not the
/// tuning bounds of [`TuneRequest`], which choose an adaptive protocol's parameter.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct RowBounds {
    /// Keep the rows with ASR at most this, in `[0, 1]`.
    pub asr_max: Option<f64>,
    /// Keep the rows whose reports take at most this many bits, finite and `>= 0`.
    pub bits_max: Option<f64>,
}

impl RowBounds {
    /// Checks both bounds.
    pub fn check(&self) -> Result<(), AnalysisError> {
        if let Some(a) = self.asr_max
            && !(0.0..=1.0).contains(&a)
        {
            return Err(AnalysisError::AsrMax(a));
        }
        if let Some(b) = self.bits_max
            && !(b.is_finite() && b >= 0.0)
        {
            return Err(AnalysisError::BitsMax(b));
        }
        Ok(())
    }

    /// Whether a row of these metrics is kept.
    pub fn keeps(&self, metrics: &Metrics) -> bool {
        self.asr_max.is_none_or(|m| metrics.asr <= m)
            && self.bits_max.is_none_or(|m| metrics.bits <= m)
    }
}

/// The columns of an analysis as every front end names them: the protocol, k, and the
/// numbers of [`Analysis::numbers`].
pub const ANALYSIS_COLUMNS: [&str; 11] = [
    "protocol",
    "k",
    "eps",
    "param",
    "asr",
    "mse",
    "bias",
    "epg",
    "bits",
    "server_cost",
    "client_cost",
];

/// One analysed instance.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Analysis {
    /// The instance (tuned for an adaptive protocol).
    pub instance: Instance,
    /// Its closed forms.
    pub metrics: Metrics,
    /// The ASR after [`AnalysisRequest::collections`] linked reports, where asked for and
    /// an exact form exists.
    pub asr_after: Option<f64>,
}

/// One row of an analysis: its grid point and its outcome (a row can fail alone, e.g.
/// when tuning finds no admissible parameter).
#[derive(Debug, Clone, PartialEq)]
pub struct AnalysisRow {
    /// The protocol.
    pub protocol: Protocol,
    /// The domain size.
    pub k: DomainSize,
    /// The budget.
    pub eps: Epsilon,
    /// The instance and its closed forms, or why there is none.
    pub outcome: Result<Analysis, RequestError>,
}

impl Analysis {
    /// The numbers of the columns after `protocol` and `k` ([`ANALYSIS_COLUMNS`]): eps,
    /// the parameter (none for a family without one), ASR, MSE (with the bias), the bias
    /// of fixed public hashes in it, EPG (none when unbounded), bits, server and client
    /// cost.
    pub fn numbers(&self) -> [Option<f64>; 9] {
        let m = self.metrics;
        [
            Some(self.instance.spec.eps().get()),
            self.instance.shown_param(),
            Some(m.asr),
            Some(m.mse),
            Some(m.bias),
            m.epg.finite(),
            Some(m.bits),
            Some(m.server_ops),
            Some(m.client_draws),
        ]
    }
}

/// Why an analysis cannot start.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum AnalysisError {
    /// A setting of the request is refused.
    #[error(transparent)]
    Request(#[from] RequestError),
    /// A parameter needs a single protocol.
    #[error("a parameter needs a single protocol, got {0}")]
    ParamNeedsOneProtocol(usize),
    /// A row bound on the ASR outside `[0, 1]` ([`RowBounds::asr_max`]).
    #[error("an ASR bound must lie in [0, 1], got {0}")]
    AsrMax(f64),
    /// A row bound on the report size that is negative or not finite
    /// ([`RowBounds::bits_max`]).
    #[error("a size bound must be finite and >= 0, got {0}")]
    BitsMax(f64),
    /// Too many rows.
    #[error(
        "{protocols} protocols x {ks} domain sizes x {budgets} budgets are {rows} rows, more than the {max} one analysis evaluates"
    )]
    TooManyRows {
        /// Protocols asked for.
        protocols: usize,
        /// Domain sizes asked for.
        ks: usize,
        /// Budgets asked for.
        budgets: usize,
        /// Their product (saturating).
        rows: usize,
        /// [`MAX_ANALYSIS_ROWS`].
        max: usize,
    },
}

impl AnalysisError {
    /// The setting at fault, if one is.
    pub fn knob(&self) -> Option<Knob> {
        match self {
            AnalysisError::Request(e) => e.knob(),
            AnalysisError::ParamNeedsOneProtocol(_) => Some(Knob::Param),
            AnalysisError::TooManyRows { .. }
            | AnalysisError::AsrMax(_)
            | AnalysisError::BitsMax(_) => None,
        }
    }
}

/// Every row of `request`, in order (protocols, then domain sizes, then budgets). The
/// request's settings are checked once, before any row is evaluated; a row that fails
/// alone carries its error.
///
/// ```
/// use ldp_core::{DomainSize, Epsilon, Protocol};
/// use ldp_optimize::{analyze, AnalysisRequest, TuneRequest};
/// let request = AnalysisRequest {
///     protocols: vec![Protocol::Grr, Protocol::Aue],
///     ks: vec![DomainSize::new(100)?],
///     eps: vec![Epsilon::new(1.0)?, Epsilon::new(4.0)?],
///     param: None,
///     tuning: TuneRequest::default(),
///     collections: None,
///     keep: Default::default(),
/// };
/// let rows = analyze(&request)?;
/// assert_eq!(rows.len(), 4);
/// let aue = rows[3].outcome.as_ref().unwrap();
/// assert!((aue.instance.shown_param().unwrap() - 0.818).abs() < 1e-3); // the appendix's p
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn analyze(request: &AnalysisRequest) -> Result<Vec<AnalysisRow>, AnalysisError> {
    let (protocols, ks, budgets) = (&request.protocols, &request.ks, &request.eps);
    let rows = protocols
        .len()
        .saturating_mul(ks.len())
        .saturating_mul(budgets.len());
    if rows > MAX_ANALYSIS_ROWS {
        return Err(AnalysisError::TooManyRows {
            protocols: protocols.len(),
            ks: ks.len(),
            budgets: budgets.len(),
            rows,
            max: MAX_ANALYSIS_ROWS,
        });
    }
    if request.param.is_some() && protocols.len() != 1 {
        return Err(AnalysisError::ParamNeedsOneProtocol(protocols.len()));
    }
    request.keep.check()?;
    // Checked once, in the order a reader would fix them.
    let tuning = request.tuning;
    let options = Options {
        lh_asr: tuning.lh_asr.unwrap_or_default(),
        poisoning: tuning.poisoning()?,
        bias: Some(tuning.bias()?),
    };
    if let Some(t) = request.collections {
        longitudinal::check_collections(&[t]).map_err(RequestError::from)?;
    }
    // The tuning of the adaptive rows: their settings, and the poisoning setting only
    // where EPG is weighted (it is otherwise the `epg` column's alone).
    let epg_weighted = tuning.w_epg.is_some_and(|w| w > 0.0);
    let for_tuning = TuneRequest {
        beta: tuning.beta.filter(|_| epg_weighted),
        targets: tuning.targets.filter(|_| epg_weighted),
        target_mass: tuning.target_mass.filter(|_| epg_weighted),
        // The adaptive protocols have no bias: it is the `mse` column's alone.
        bias_users: None,
        bias_zipf: None,
        ..tuning
    };
    let tuned = protocols.iter().any(|p| p.is_adaptive()) && request.param.is_none();
    if tuned {
        for_tuning.options()?;
    } else if let Some(knob) = for_tuning.tuning_given() {
        return Err(RequestError::NothingTuned(knob).into());
    }
    if let (Some(given), [p]) = (&request.param, protocols.as_slice()) {
        // A parameter the protocol cannot take is the request's error, not every row's.
        let probe = InstanceRequest {
            protocol: *p,
            k: ks
                .first()
                .copied()
                .unwrap_or(DomainSize::new(2).expect("2 items")),
            eps: budgets
                .first()
                .copied()
                .unwrap_or(Epsilon::new(1.0).expect("1 > 0")),
            param: Some(given.clone()),
            tuning: TuneRequest::default(),
        };
        if let Err(e @ RequestError::ParamValues(_)) = probe.resolve() {
            return Err(e.into());
        }
    }
    if let (Some(&k), Some(&eps)) = (ks.first(), budgets.first()) {
        tuning.check_lh_asr_used(protocols, k, eps)?;
        tuning.check_poisoning_used(protocols, k, eps)?;
        tuning.check_bias_used(protocols, k, eps)?;
    }
    let mut grid = Vec::with_capacity(rows);
    for &protocol in protocols {
        for &k in ks {
            for &eps in budgets {
                grid.push((protocol, k, eps));
            }
        }
    }
    let row = |&(protocol, k, eps): &(Protocol, DomainSize, Epsilon)| {
        let instance = InstanceRequest {
            protocol,
            k,
            eps,
            param: request.param.clone(),
            tuning: if protocol.is_adaptive() {
                // The LH ASR form was checked for the request as a whole; a row it
                // changes nothing for is tuned without it.
                let lh_asr = for_tuning
                    .lh_asr
                    .filter(|_| for_tuning.check_lh_asr_used(&[protocol], k, eps).is_ok());
                TuneRequest {
                    lh_asr,
                    ..for_tuning
                }
            } else {
                TuneRequest::default()
            },
        };
        let outcome = instance.resolve().and_then(|instance| {
            let metrics = evaluate(&instance.spec, &options)
                .map_err(|e| RequestError::Poisoning(e, Knob::Targets))?;
            let asr_after = request
                .collections
                .and_then(|t| longitudinal::asr_after(&instance.spec, t));
            Ok(Analysis {
                instance,
                metrics,
                asr_after,
            })
        });
        AnalysisRow {
            protocol,
            k,
            eps,
            outcome,
        }
    };
    #[cfg(feature = "parallel")]
    let mut out: Vec<AnalysisRow> = {
        use rayon::prelude::*;
        grid.par_iter().map(row).collect()
    };
    #[cfg(not(feature = "parallel"))]
    let mut out: Vec<AnalysisRow> = grid.iter().map(row).collect();
    out.retain(|r| {
        r.outcome
            .as_ref()
            .map_or(true, |a| request.keep.keeps(&a.metrics))
    });
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(protocols: Vec<Protocol>) -> AnalysisRequest {
        AnalysisRequest {
            protocols,
            ks: vec![DomainSize::new(100).unwrap()],
            eps: vec![Epsilon::new(2.0).unwrap()],
            param: None,
            tuning: TuneRequest::default(),
            collections: Some(30),
            keep: RowBounds::default(),
        }
    }

    #[test]
    fn row_bounds_drop_the_rows_beyond_them_and_are_checked() {
        let all = analyze(&request(Protocol::ALL.to_vec())).unwrap();
        let mut r = request(Protocol::ALL.to_vec());
        r.keep = RowBounds {
            asr_max: Some(0.2),
            bits_max: Some(64.0),
        };
        let kept = analyze(&r).unwrap();
        assert!(!kept.is_empty() && kept.len() < all.len());
        for row in &all {
            let a = row.outcome.as_ref().unwrap();
            let keeps = a.metrics.asr <= 0.2 && a.metrics.bits <= 64.0;
            assert_eq!(
                kept.iter().any(|k| k.protocol == row.protocol),
                keeps,
                "{}",
                row.protocol
            );
        }
        r.keep.asr_max = Some(1.5);
        assert_eq!(analyze(&r).unwrap_err(), AnalysisError::AsrMax(1.5));
        r.keep = RowBounds {
            asr_max: None,
            bits_max: Some(f64::INFINITY),
        };
        assert!(matches!(
            analyze(&r).unwrap_err(),
            AnalysisError::BitsMax(_)
        ));
    }

    #[test]
    fn rows_carry_the_closed_forms_of_their_instances() {
        let rows = analyze(&request(Protocol::ALL.to_vec())).unwrap();
        assert_eq!(rows.len(), Protocol::ALL.len());
        for row in rows {
            let a = row.outcome.unwrap();
            let spec = a.instance.spec;
            assert_eq!(
                a.metrics.asr,
                ldp_analytic::asr::expected(&spec, Default::default())
            );
            let bias = ldp_analytic::variance::BiasSetting::DEFAULT.per_user(&spec);
            assert_eq!(
                a.metrics.mse,
                ldp_analytic::variance::approx_per_user(&spec) + bias
            );
            assert_eq!(a.metrics.bias, bias);
            assert_eq!(a.asr_after, longitudinal::asr_after(&spec, 30));
        }
    }

    #[test]
    fn the_request_is_checked_before_any_row() {
        let mut r = request(vec![Protocol::Grr, Protocol::Ss]);
        r.param = Some(2.0.into());
        assert_eq!(
            analyze(&r).unwrap_err(),
            AnalysisError::ParamNeedsOneProtocol(2)
        );
        let mut r = request(vec![Protocol::Grr]);
        r.tuning.w_asr = Some(0.2);
        assert_eq!(analyze(&r).unwrap_err().knob(), Some(Knob::AsrWeight));
        let mut r = request(vec![Protocol::Oue]);
        r.param = Some(0.6.into());
        assert_eq!(analyze(&r).unwrap_err().knob(), Some(Knob::Param));
        // A grid beyond the limit is refused before anything is allocated.
        let mut r = request(vec![Protocol::Grr; 20_000]);
        r.eps = vec![Epsilon::new(1.0).unwrap(); 20_000];
        assert!(matches!(
            analyze(&r).unwrap_err(),
            AnalysisError::TooManyRows {
                rows: 400_000_000,
                ..
            }
        ));
    }
}
