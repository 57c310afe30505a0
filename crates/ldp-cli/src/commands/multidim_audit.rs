//! `ldp audit --attributes K1,K2,... --solution S`: the privacy of a client of several
//! attributes, for the whole tuple and for one attribute (`ldp_audit::exact_multidim`,
//! `ldp_audit::audit_multidim`).

use anyhow::{Result, bail};
use indicatif::ProgressBar;
use ldp_audit::{
    AuditConfig, Claims, MultidimAudit, PairAudit, Statistic, audit_multidim_with_progress,
    exact_multidim,
};
use ldp_core::multidim::MultidimSpec;

use crate::output::{Format, Value, print};

/// The columns of a multidimensional audit: one row per statistic and neighbour kind.
const COLUMNS: [&str; 15] = [
    "client",
    "attributes",
    "eps",
    "changed",
    "claimed",
    "statistic",
    "eps_measured",
    "v1",
    "v2",
    "hits_v1",
    "hits_v2",
    "tpr_low",
    "fpr_high",
    "trials",
    "flagged",
];

/// Runs the exact audit (`config` None) or the test of `spec`'s client and prints it.
pub(crate) fn run(
    spec: &MultidimSpec,
    protocol: &str,
    config: Option<&AuditConfig>,
    bar: impl Fn(u64) -> ProgressBar,
    format: Format,
) -> Result<()> {
    let domains: Vec<String> = spec
        .specs()
        .iter()
        .map(|s| s.k().get().to_string())
        .collect();
    let attributes = domains.join(",");
    let client = format!("{}[{protocol}]", spec.solution().name());
    let eps = spec.epsilon().get();
    let lead = |changed: String, claimed: f64| {
        vec![
            Value::Text(client.clone()),
            Value::Text(attributes.clone()),
            Value::number(eps),
            Value::Text(changed),
            Value::Num(claimed),
        ]
    };
    let rows = match config {
        None => {
            let exact = ldp_core::dispatch_multidim!(spec, m => exact_multidim(&m))??;
            let mut rows = Vec::new();
            for (changed, claimed, measured) in [
                ("every".to_string(), exact.claims.whole, exact.eps_whole),
                (
                    format!("attribute {}", exact.worst_attribute),
                    exact.claims.attribute,
                    exact.eps_attribute,
                ),
            ] {
                let mut row = lead(changed, claimed);
                row.extend([
                    "exact".into(),
                    Value::Num(measured),
                    Value::Empty,
                    Value::Empty,
                    Value::Empty,
                    Value::Empty,
                    Value::Empty,
                    Value::Empty,
                    Value::Empty,
                    Value::Text((measured > claimed + exact.rounding).to_string()),
                ]);
                rows.push(row);
            }
            let coverage: Vec<String> = exact.coverage.iter().map(|c| format!("{c:?}")).collect();
            note!(
                "ldp: {} outputs examined (per attribute: {})",
                exact.outputs,
                coverage.join(", ")
            );
            rows
        }
        Some(config) => {
            let inputs = spec.specs().len() + if spec.specs().len() > 1 { 2 } else { 1 };
            let calibration = config.trials.min(ldp_audit::CALIBRATION);
            let bar = bar(inputs as u64 * (config.trials + calibration));
            let audit = ldp_core::dispatch_multidim!(spec, m => audit_multidim_with_progress(&m, config, &|n| bar.inc(n)))??;
            bar.finish_and_clear();
            note!(
                "ldp: v1 and v2 are tuples: {}",
                audit
                    .inputs
                    .iter()
                    .enumerate()
                    .map(|(i, x)| format!("#{i} = {x:?}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            test_rows(&audit, &lead)
        }
    };
    print(&mut std::io::stdout().lock(), format, &COLUMNS, &rows)
}

/// Per statistic: the pair changing every attribute, and the one-attribute pair with the
/// largest bound.
fn test_rows(audit: &MultidimAudit, lead: &dyn Fn(String, f64) -> Vec<Value>) -> Vec<Vec<Value>> {
    let Claims { attribute, whole } = audit.claims;
    let mut rows = Vec::new();
    for s in &audit.audit.statistics {
        let one = audit
            .attribute_pairs(s.statistic)
            .iter()
            .enumerate()
            .max_by(|a, b| a.1.eps_emp.total_cmp(&b.1.eps_emp))
            .map(|(j, p)| (j, p.clone()));
        let mut pairs = vec![("every".to_string(), whole, s.pairs[0].clone())];
        if let Some((j, p)) = one.filter(|_| s.pairs.len() > 1) {
            pairs.push((format!("attribute {j}"), attribute, p));
        }
        for (changed, claimed, p) in pairs {
            rows.push(row(
                lead(changed, claimed),
                s.statistic,
                &p,
                audit.audit.trials,
                claimed,
            ));
        }
    }
    rows
}

fn row(
    mut lead: Vec<Value>,
    statistic: Statistic,
    p: &PairAudit,
    trials: u64,
    claimed: f64,
) -> Vec<Value> {
    lead.extend([
        statistic.name().into(),
        Value::Num(p.eps_emp),
        Value::Text(format!("#{}", p.v1)),
        Value::Text(format!("#{}", p.v2)),
        Value::Int(p.hits_v1),
        Value::Int(p.hits_v2),
        Value::Num(p.tpr_low),
        Value::Num(p.fpr_high),
        Value::Int(trials),
        Value::Text((p.eps_emp > claimed).to_string()),
    ]);
    lead
}

/// The flags that do not apply to a client of several attributes.
pub(crate) fn refuse(command: bool, pairs: bool, collections: bool) -> Result<()> {
    if command {
        bail!(
            "--attributes: an external client of several attributes cannot be audited yet; audit one of this toolkit's (--protocol)"
        );
    }
    if pairs {
        bail!(
            "--pairs: a client of several attributes is audited on fixed tuples (all first items against all last, and each attribute's change alone)"
        );
    }
    if collections {
        bail!("--eps-perm and --collections go with the memoized protocols, not with --attributes");
    }
    Ok(())
}
