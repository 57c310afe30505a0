//! One module per kind of figure; each computes a tidy table and draws it.

mod analytic;
mod audit;
mod change;
mod costs;
mod empirical;
mod estimators;
mod large_domain;
mod longitudinal;
mod multidim;
mod objective;
mod pool;
mod sample_size;
mod shuffle;
mod strategies;
mod weights;

use ldp_core::{DomainSize, Epsilon, Family, Protocol};

use crate::config::{Experiment, Kind};
use crate::error::ExperimentError;
use crate::plot::{Figure, Panel, Point, fitted_range};
use crate::table::{Cell, Table};

/// What running an experiment produces.
#[derive(Debug, Clone)]
pub struct Output {
    /// Tidy data, one row per point.
    pub table: Table,
    /// The figure.
    pub figure: Figure,
    /// One-line statements about the result worth recording in the manifest
    /// (e.g. the largest z-score of an empirical check).
    pub findings: Vec<String>,
}

/// Computes the data and figure of `exp`.
pub fn run(exp: &Experiment) -> Result<Output, ExperimentError> {
    let options = exp.tuning.options()?;
    match &exp.kind {
        Kind::AsrVsEps { .. }
        | Kind::MseVsEps { .. }
        | Kind::AsrVsMse { .. }
        | Kind::AsrMseEpg { .. } => analytic::run(exp, &options),
        Kind::Strategies {
            protocols,
            domain_sizes,
            eps,
            strategies,
        } => strategies::run(exp, &options, protocols, domain_sizes, eps, strategies),
        Kind::Weights {
            protocols,
            domain_size,
            eps,
            w_asr,
        } => weights::run(exp, &options, protocols, *domain_size, *eps, w_asr),
        Kind::Objective {
            protocols,
            domain_size,
            eps,
        } => objective::run(exp, &options, protocols, *domain_size, *eps),
        Kind::Costs {
            protocols,
            domain_sizes,
            eps,
        } => costs::run(exp, &options, protocols, domain_sizes, eps),
        Kind::Shuffle { .. } => shuffle::run(exp, &options),
        Kind::Repeated { .. } => longitudinal::run(exp, &options),
        Kind::ChangeDetection { .. } => change::run(exp, &options),
        Kind::LargeDomain { .. } => large_domain::run(exp, &options),
        Kind::AuditGrid { .. } => audit::run(exp, &options),
        Kind::Estimators { .. } => estimators::run(exp, &options),
        Kind::Empirical {
            protocols,
            dataset,
            eps,
            runs,
            seed,
        } => empirical::run(exp, &options, protocols, *dataset, eps, *runs, *seed),
        Kind::FrontierVsN { .. } => sample_size::run(exp, &options),
        Kind::Reidentification { .. } => multidim::reidentification(exp, &options),
        Kind::AttributeInference { .. } => multidim::attribute_inference(exp, &options),
        Kind::FakeData { .. } => multidim::fake_data(exp, &options),
        Kind::PoolInference { .. } => pool::run(exp, &options),
    }
}

pub(crate) fn domain(k: u32) -> Result<DomainSize, ExperimentError> {
    Ok(DomainSize::new(k)?)
}

pub(crate) fn budget(e: f64) -> Result<Epsilon, ExperimentError> {
    Ok(Epsilon::new(e)?)
}

/// A number of users as people write it: "48,842".
pub(crate) fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A measured (MSE, ASR) point of a table with the columns `mse`, `asr`, their `_se` and
/// `eps`: bars of 3 standard errors both ways, coloured by the budget.
pub(crate) fn measured_point(table: &Table, r: &[Cell]) -> Point {
    Point {
        err: 3.0 * table.num(r, "asr_se"),
        xerr: 3.0 * table.num(r, "mse_se"),
        shade: Some(table.num(r, "eps")),
        ..Point::at(table.num(r, "mse"), table.num(r, "asr"))
    }
}

/// The paper's panel groups, in its order: short title, label, and the families each
/// holds (GRR with SS, the direct encodings; unary encoding; local hashing; the histogram
/// encodings). A family the paper does not have is a group of its own, after these.
const PAPER_GROUPS: [(&str, &str, &[Family]); 4] = [
    (
        "GRR and SS",
        "GRR and SS",
        &[Family::Grr, Family::SubsetSelection],
    ),
    ("UE", "Unary encoding", &[Family::UnaryEncoding]),
    ("LH", "Local hashing", &[Family::LocalHashing]),
    (
        "HE",
        "Histogram encoding",
        &[Family::SummationHistogram, Family::ThresholdHistogram],
    ),
];

/// The panel group of a protocol: its paper group, or after them one per other family,
/// in registry order.
fn group(p: Protocol) -> usize {
    let f = p.family();
    PAPER_GROUPS
        .iter()
        .position(|(_, _, families)| families.contains(&f))
        .unwrap_or_else(|| {
            let later = Family::ALL
                .iter()
                .filter(|g| !PAPER_GROUPS.iter().any(|(_, _, fs)| fs.contains(g)));
            PAPER_GROUPS.len() + later.take_while(|&&g| g != f).count()
        })
}

/// The label of `p`'s panel group ("Unary encoding"); a family the paper does not have is
/// labelled by its first protocol.
pub(crate) fn family_label(p: Protocol) -> &'static str {
    PAPER_GROUPS
        .get(group(p))
        .map_or_else(|| first_protocol(p.family()).label(), |g| g.1)
}

/// The title of `p`'s panel group ("UE").
pub(crate) fn group_title(p: Protocol) -> &'static str {
    PAPER_GROUPS
        .get(group(p))
        .map_or_else(|| first_protocol(p.family()).label(), |g| g.0)
}

/// The family's first protocol in registry order.
fn first_protocol(f: Family) -> Protocol {
    Protocol::ALL
        .into_iter()
        .find(|p| p.family() == f)
        .expect("every family has a protocol")
}

/// The protocols grouped for panels: each group's classic protocols, then its adaptive
/// ones, in the order given.
pub(crate) fn family_groups(protocols: &[Protocol]) -> Vec<Vec<Protocol>> {
    let mut groups: Vec<Vec<Protocol>> = vec![Vec::new(); PAPER_GROUPS.len() + Family::ALL.len()];
    for adaptive in [false, true] {
        for &p in protocols.iter().filter(|p| p.is_adaptive() == adaptive) {
            groups[group(p)].push(p);
        }
    }
    groups.retain(|g| !g.is_empty());
    groups
}

/// One panel per protocol, a column per panel group (the paper's GRR and SS, UE, LH, HE),
/// classic protocols above adaptive ones: each adaptive protocol sits under its classic
/// counterpart, and the panels of a column share their y range, so that the lower ASR
/// the adaptive protocols reach reads at a glance. Returns the panels in row order and
/// the number of columns. Protocol lists whose groups differ in size keep their order,
/// four panels a row, each panel its own range.
pub(crate) fn under_counterparts(
    protocols: &[Protocol],
    mut panel: impl FnMut(Protocol) -> Panel,
) -> (Vec<Panel>, usize) {
    let groups = family_groups(protocols);
    let rows = groups.first().map_or(0, Vec::len);
    if groups.len() < 2 || groups.iter().any(|g| g.len() != rows) {
        return (protocols.iter().map(|&p| panel(p)).collect(), 4);
    }
    let mut columns: Vec<Vec<Panel>> = groups
        .iter()
        .map(|g| g.iter().map(|&p| panel(p)).collect())
        .collect();
    for column in &mut columns {
        let scale = column[0].y.scale;
        let values: Vec<f64> = column
            .iter()
            .flat_map(|p| &p.series)
            .flat_map(|s| &s.points)
            .flat_map(|q| [q.y - q.err, q.y + q.err])
            .collect();
        let range = fitted_range(values.into_iter(), scale);
        for p in column.iter_mut() {
            p.y.range = Some(range);
        }
    }
    let width = columns.len();
    let mut cells: Vec<std::vec::IntoIter<Panel>> =
        columns.into_iter().map(Vec::into_iter).collect();
    let mut panels = Vec::new();
    for _ in 0..rows {
        for column in &mut cells {
            panels.extend(column.next());
        }
    }
    (panels, width)
}

/// The protocols in panel order: by group, classic before adaptive.
pub(crate) fn by_family(protocols: &[Protocol]) -> Vec<Protocol> {
    family_groups(protocols).concat()
}

/// A parameter value as people write it: integers without decimals ("13"), others to
/// three decimals ("0.818").
pub(crate) fn value(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e9 {
        format!("{}", v as i64)
    } else {
        let s = format!("{v:.3}");
        s.trim_end_matches('0').trim_end_matches('.').to_owned()
    }
}

/// The parameter's name for axis labels: Greek where the name is a Greek letter
/// (omega, theta), `-` for a family without one.
pub(crate) fn param_name(p: Protocol) -> &'static str {
    match p.parameter_name() {
        Some("omega") => "ω",
        Some("theta") => "θ",
        Some(name) => name,
        None => "-",
    }
}

/// The preset parameter of `p`'s classic counterpart at (k, eps); `None` for GRR and SHE.
pub(crate) fn classic_param(
    p: Protocol,
    k: DomainSize,
    eps: Epsilon,
) -> Result<Option<f64>, ExperimentError> {
    let spec = ldp_core::Spec::classic(p.classic_counterpart(), k, eps)
        .map_err(|e| ExperimentError::Config(e.to_string()))?;
    Ok(spec.params().value())
}
