//! `ldp analyze --attributes K1,K2,... --solution S1,S2`: the closed forms of every
//! solution x protocol x budget over a table of attributes (`ldp_optimize::analyze_multidim`),
//! filtered by bounds and sorted as asked; and `ldp tune --attributes`, the lowest-MSE one
//! meeting the bounds (`ldp_optimize::choose_multidim`).

use anyhow::{Context, Result, anyhow, bail};
use ldp_core::multidim::Solution;
use ldp_core::{DomainSize, ProtocolSet};
use ldp_optimize::{
    MULTIDIM_COLUMNS, MultidimBounds, MultidimRequest, MultidimRow, SettingGroup, TuneRequest,
    analyze_multidim, choose_multidim,
};

use crate::output::{Format, Value, number, print};
use crate::protocol::{budget, protocol_set};

/// The flags of `ldp analyze --attributes`.
pub(crate) struct Args<'a> {
    pub(crate) ks: &'a [u64],
    pub(crate) solutions: &'a [String],
    pub(crate) protocols: &'a [String],
    pub(crate) eps: &'a [f64],
    pub(crate) users: f64,
    pub(crate) surveys: Option<u32>,
    pub(crate) asr_max: Option<f64>,
    pub(crate) asr_joint_max: Option<f64>,
    pub(crate) profiled_max: Option<f64>,
    pub(crate) sort: Option<&'a str>,
    pub(crate) format: Format,
    pub(crate) tuning: TuneRequest,
}

/// `--solution`: names, or `all` (every solution but rsrfd, which needs priors).
fn solutions(names: &[String]) -> Result<Vec<Solution>> {
    if names.is_empty() {
        bail!("--attributes needs --solution spl,smp,rsfd,rsfd-z (or all)");
    }
    if names.len() == 1 && names[0].trim() == "all" {
        return Ok(Solution::ALL
            .into_iter()
            .filter(|s| *s != Solution::RsRfd)
            .collect());
    }
    names
        .iter()
        .map(|n| {
            let s = n
                .parse::<Solution>()
                .with_context(|| format!("--solution {}", n.trim()))?;
            if s == Solution::RsRfd {
                bail!(
                    "--solution rsrfd: its fakes come from the server's priors, which ldp analyze does not take (ldp simulate --solution rsrfd --prior FILE measures it)"
                );
            }
            Ok(s)
        })
        .collect()
}

fn bound(flag: &str, value: Option<f64>) -> Result<Option<f64>> {
    match value {
        Some(v) if !(0.0..=1.0).contains(&v) => {
            bail!(
                "{flag} {}: a probability bound must lie in [0, 1]",
                number(v)
            )
        }
        _ => Ok(value),
    }
}

/// The request and the bounds the flags name.
fn request(a: &Args<'_>) -> Result<(MultidimRequest, MultidimBounds)> {
    let domains = a
        .ks
        .iter()
        .enumerate()
        .map(|(j, &k)| {
            DomainSize::try_from(k).with_context(|| format!("--attributes: attribute {j}: k {k}"))
        })
        .collect::<Result<Vec<_>>>()?;
    if domains.is_empty() {
        bail!("--attributes: give at least one domain size");
    }
    let protocols = match protocol_set(a.protocols, false)? {
        ProtocolSet::OneShot(p) => p,
        ProtocolSet::Memoized(_) => bail!("--protocol: the memoized protocols take one attribute"),
    };
    if let Some(knob) = a.tuning.first_given(&[SettingGroup::Bias]) {
        bail!(
            "{}: with --attributes the mse column is the variance at --users users; the bias of \
             fixed hashes is counted for one attribute only",
            knob.flag()
        );
    }
    let bounds = MultidimBounds {
        asr_max: bound("--asr-max", a.asr_max)?,
        asr_joint_max: bound("--asr-joint-max", a.asr_joint_max)?,
        profiled_max: bound("--profiled-max", a.profiled_max)?,
    };
    let request = MultidimRequest {
        solutions: solutions(a.solutions)?,
        protocols,
        domains,
        eps: a.eps.iter().map(|&e| budget(e)).collect::<Result<_>>()?,
        users: a.users,
        surveys: a.surveys,
        tuning: a.tuning.options().map_err(|e| anyhow!(e))?,
    };
    Ok((request, bounds))
}

/// The values of one row, `users` after `eps_report`.
fn values(r: &MultidimRow, users: f64) -> Vec<Value> {
    let mut values = vec![
        Value::from(r.solution.name()),
        Value::from(r.protocol.name()),
    ];
    values.extend(
        r.numbers()
            .into_iter()
            .map(|v| v.map_or(Value::Empty, Value::number)),
    );
    values.insert(4, Value::number(users));
    values
}

/// `ldp tune --attributes`: the lowest-MSE client meeting the bounds
/// (`ldp_optimize::choose_multidim`), with the reason.
pub(crate) fn tune(a: Args<'_>) -> Result<()> {
    let (request, bounds) = request(&a)?;
    let Some(choice) = choose_multidim(&request, &bounds).map_err(|e| anyhow!(e))? else {
        bail!(
            "no solution x protocol meets the bounds: loosen --asr-max, --asr-joint-max or --profiled-max, or raise --eps"
        );
    };
    let mut columns: Vec<&str> = MULTIDIM_COLUMNS.to_vec();
    columns.insert(4, "users");
    columns.push("reason");
    let mut row = values(&choice.row, a.users);
    row.push(Value::from(choice.reason.as_str()));
    print(&mut std::io::stdout().lock(), a.format, &columns, &[row])
}

pub(crate) fn run(a: Args<'_>) -> Result<()> {
    let (request, bounds) = request(&a)?;
    let mut columns: Vec<&str> = MULTIDIM_COLUMNS.to_vec();
    columns.insert(4, "users");
    let sort = match a.sort {
        None => None,
        Some(c) => Some(
            columns
                .iter()
                .position(|x| *x == c.trim())
                .with_context(|| {
                    format!(
                        "--sort {c}: no such column; the columns are {}",
                        columns.join(", ")
                    )
                })?,
        ),
    };
    let analysed = analyze_multidim(&request).map_err(|e| anyhow!(e))?;
    let mut rows = Vec::new();
    let mut failures = Vec::new();
    for row in analysed {
        match row {
            Ok(r) if bounds.admit(&r) => rows.push(values(&r, a.users)),
            Ok(_) => {}
            Err(e) => failures.push(e.to_string()),
        }
    }
    if rows.is_empty()
        && let Some(first) = failures.first()
    {
        bail!("{first}");
    }
    if let Some(i) = sort {
        if i < 2 {
            rows.sort_by(|x, y| format!("{:?}", x[i]).cmp(&format!("{:?}", y[i])));
        } else {
            rows.sort_by(|x, y| x[i].sort_key().total_cmp(&y[i].sort_key()));
        }
    }
    print(&mut std::io::stdout().lock(), a.format, &columns, &rows)?;
    match failures.as_slice() {
        [] => Ok(()),
        [one] => bail!("{one} (the other rows are printed)"),
        [first, rest @ ..] => bail!(
            "{first} (and {} more rows failed; the other rows are printed)",
            rest.len()
        ),
    }
}
