//! `ldp analyze`.

use anyhow::{Context, Result, anyhow, bail};
use clap::Args;
use ldp_core::longitudinal::LongitudinalProtocol;
use ldp_core::simulation::{Role, Streams, USERS_PER_STREAM};
use ldp_core::{Mechanism, ProtocolSet, Spec, dispatch, parallel};
use ldp_jsonl::JsonReport;
use ldp_optimize::{
    ANALYSIS_COLUMNS, AnalysisError, AnalysisRequest, ParamValues, RowBounds, SettingGroup, analyze,
};

use ldp_analytic::shuffle::Shuffle;

use super::{change, longitudinal};
use crate::output::{Format, Value, number, print};
use crate::protocol::{Columns, RequestArgs, budget, build, domain, flagged, protocol_set};

#[derive(Debug, Args)]
pub(crate) struct AnalyzeArgs {
    /// Protocols, comma-separated, or `all`.
    #[arg(long, value_delimiter = ',', required = true)]
    protocol: Vec<String>,
    /// Domain sizes, comma-separated.
    #[arg(long, value_delimiter = ',', required_unless_present = "attributes")]
    k: Vec<u64>,
    /// Several attributes per user, instead of --k: each attribute's domain size. Prints
    /// one row per solution x protocol x budget: the per-report budget, the mean variance
    /// of an item's estimate for --users users of a uniform table, the mean ASR on one
    /// attribute, the ASR of all of them at once, and with --surveys the SMP profile.
    #[arg(
        long,
        value_delimiter = ',',
        value_name = "K1,K2,...",
        conflicts_with = "k"
    )]
    attributes: Option<Vec<u64>>,
    /// With --attributes: solutions, comma-separated (spl, smp, rsfd, rsfd-z), or `all`.
    #[arg(long, value_delimiter = ',', requires = "attributes")]
    solution: Vec<String>,
    /// With --attributes: the users behind the mse column.
    #[arg(long, requires = "attributes", default_value_t = 10_000.0)]
    users: f64,
    /// With --attributes: the SMP surveys an attacker joins into a profile; adds the
    /// probability that every value joined is right (column profiled).
    #[arg(long, requires = "attributes")]
    surveys: Option<u32>,
    /// With --attributes: keep only the rows whose ASR of every attribute at once is at
    /// most A.
    #[arg(long = "asr-joint-max", value_name = "A", requires = "attributes")]
    asr_joint_max: Option<f64>,
    /// With --attributes --surveys: keep only the rows whose profile is entirely right
    /// at most this often (SMP; the other solutions send no profile).
    #[arg(long = "profiled-max", value_name = "P", requires = "surveys")]
    profiled_max: Option<f64>,
    /// Privacy budgets, comma-separated.
    #[arg(long, value_delimiter = ',', required = true)]
    eps: Vec<f64>,
    /// The family parameters, for a single protocol (see `ldp perturb --help`).
    #[arg(long)]
    param: Option<ParamValues>,
    /// Keep only the rows with ASR at most A.
    #[arg(long = "asr-max", value_name = "A")]
    asr_max: Option<f64>,
    /// Keep only the rows whose reports take at most B bits.
    #[arg(long = "bits-max", value_name = "B")]
    bits_max: Option<f64>,
    /// Sort the rows by this column, increasing.
    #[arg(long, value_name = "COLUMN")]
    sort: Option<String>,
    /// Add `json_bytes`: the mean size of the tool's JSON report, measured on 2,000
    /// seeded reports, or as many as 64 MiB of JSON hold (at least one: SHE at large k).
    #[arg(long = "json-bytes")]
    json_bytes: bool,
    /// Add `collections` and `asr_after`: the ASR of the attack that links T reports of an
    /// unchanged value (exact forms; empty for ss with omega > 1 and she, which `ldp
    /// simulate --collections` measures). GRR's and SS's at omega = 1 cost O(T^2 log k),
    /// about 2 s per (k, eps) at T = 10000; the others take well under a second.
    #[arg(long, value_name = "T")]
    collections: Option<u32>,
    /// Add `change_rate`, `detect`, `false_alarm` and `precision`: the closed forms of the
    /// change detector (the paper's Example 2) on users whose value changes each day with
    /// probability R, for fresh reports (GRR) and the memoized protocols (l-grr, l-olh,
    /// l-blh); empty where there is none (`ldp simulate --days D --change-rate R`
    /// measures any protocol).
    #[arg(long = "change-rate", value_name = "R")]
    change_rate: Option<f64>,
    /// The memo's budget, for the memoized protocols l-grr, l-sue, l-oue, l-osue, l-soue,
    /// l-olh, l-blh and l-adp (--protocol all: all eight), whose --eps is the budget of one
    /// report.
    #[arg(long = "eps-perm", value_name = "E")]
    eps_perm: Option<f64>,
    /// Add `shuffle_users` and `central_eps`: the central eps, for the analyst who sees
    /// only the shuffled batch, of N shuffled reports at the row's eps (`ldp shuffle`; one
    /// collection: the batches of T collections compose, `ldp ledger`), beside the asr
    /// column, which is per report against whoever sees reports with their senders (and
    /// with --collections, after T linked reports). Rows whose reports are k-ary randomized
    /// response's (GRR, SS at omega = 1) use its own bound too (`ldp shuffle --grr`).
    #[arg(long = "shuffle-users", value_name = "N", requires = "delta")]
    shuffle_users: Option<u64>,
    /// With --shuffle-users: the central delta.
    #[arg(long, requires = "shuffle_users")]
    delta: Option<f64>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Csv)]
    format: Format,
    /// The tuning of the adaptive rows, the LH ASR form of the asr column and the
    /// maximal gain attack of the epg column.
    #[command(flatten)]
    settings: RequestArgs<Columns>,
}

pub(crate) fn run(a: &AnalyzeArgs) -> Result<()> {
    if let Some(ks) = &a.attributes {
        return super::multidim_analyze::run(a.multidim(ks)?);
    }
    if !a.solution.is_empty() {
        bail!("--solution goes with --attributes K1,K2,... (several attributes per user)");
    }
    if let Some(t) = a.collections {
        longitudinal::check_collections("--collections", &[t])?;
    }
    if let Some(r) = a.change_rate {
        change::check_rate(r)?;
    }
    let shuffle = match (a.shuffle_users, a.delta) {
        (Some(users), Some(delta)) => {
            Some(Shuffle::new(users, delta).context("--shuffle-users, --delta")?)
        }
        _ => None,
    };
    let protocols = match protocol_set(&a.protocol, a.eps_perm.is_some())? {
        ProtocolSet::Memoized(_) if shuffle.is_some() => {
            bail!("--shuffle-users goes with one-shot protocols, not with --eps-perm")
        }
        ProtocolSet::Memoized(protocols) => return run_memoized(a, &protocols),
        ProtocolSet::OneShot(protocols) => protocols,
    };
    let mut columns: Vec<&str> = ANALYSIS_COLUMNS.to_vec();
    if a.json_bytes {
        columns.push("json_bytes");
    }
    if a.collections.is_some() {
        columns.extend(["collections", "asr_after"]);
    }
    if a.change_rate.is_some() {
        columns.extend(change::ANALYZE_COLUMNS);
    }
    if shuffle.is_some() {
        columns.extend(["shuffle_users", "central_eps"]);
    }
    let sort = match &a.sort {
        None => None,
        Some(c) => Some(
            columns
                .iter()
                .position(|x| x == &c.trim())
                .with_context(|| {
                    format!(
                        "--sort {c}: no such column; the columns are {}",
                        columns.join(", ")
                    )
                })?,
        ),
    };
    // Check every k and eps up front, so that their errors come first and once.
    let ks = a.k.iter().map(|&k| domain(k)).collect::<Result<Vec<_>>>()?;
    let budgets = a
        .eps
        .iter()
        .map(|&e| budget(e))
        .collect::<Result<Vec<_>>>()?;
    // The central eps of each budget, once: every protocol and k at one budget shares it.
    let central: Vec<(f64, f64)> = match &shuffle {
        Some(shuffle) => parallel::map(budgets.len(), |i| {
            let e = budgets[i].get();
            Ok((e, shuffle.central_eps(e)?.upper))
        })
        .into_iter()
        .collect::<Result<_>>()?,
        None => Vec::new(),
    };
    let tuning = a.settings.request;
    let request = AnalysisRequest {
        protocols,
        ks,
        eps: budgets,
        param: a.param.clone(),
        tuning,
        collections: a.collections,
        // Row filters, not tuning bounds.
        keep: RowBounds {
            asr_max: a.asr_max,
            bits_max: a.bits_max,
        },
    };
    let analysed = analyze(&request).map_err(|e| match e {
        AnalysisError::Request(e) => flagged(e, &tuning, a.param.as_ref()),
        AnalysisError::ParamNeedsOneProtocol(_) => anyhow!("--param needs a single --protocol"),
        AnalysisError::AsrMax(v) => {
            anyhow!("--asr-max {}: an ASR bound must lie in [0, 1]", number(v))
        }
        AnalysisError::BitsMax(v) => {
            anyhow!(
                "--bits-max {}: a size bound must be finite and >= 0",
                number(v)
            )
        }
        e => anyhow::Error::new(e),
    })?;
    let results: Vec<Result<Vec<Value>>> = parallel::map(analysed.len(), |i| {
        let row = &analysed[i];
        let r = row
            .outcome
            .clone()
            .map_err(|e| flagged(e, &tuning, a.param.as_ref()))?;
        let mut values = vec![
            Value::from(row.protocol.name()),
            Value::Int(u64::from(row.k.get())),
        ];
        values.extend(r.numbers().map(|v| v.map_or(Value::Empty, Value::number)));
        // The param cell: several parameters as name=value pairs.
        values[3] = Value::params(&r.instance.spec.params());
        if a.json_bytes {
            values.push(Value::Num(json_bytes(&r.instance.spec)?));
        }
        if let Some(t) = a.collections {
            values.extend([Value::Int(u64::from(t)), r.asr_after.into()]);
        }
        if let Some(rate) = a.change_rate {
            let rates = ldp_analytic::change::one_shot(&r.instance.spec);
            values.extend(change::analyze_values(rate, rates));
        }
        if let Some(shuffle) = &shuffle {
            // k-ary randomized response's rows (GRR, SS at omega = 1) have a bound of
            // their own; the others share their budget's.
            let own = shuffle.for_spec(&r.instance.spec);
            let eps = if own.randomized_response_domain().is_some() {
                own.central_eps(row.eps.get())?.upper
            } else {
                central
                    .iter()
                    .find(|(e, _)| *e == row.eps.get())
                    .expect("every row's budget was asked for")
                    .1
            };
            values.extend([Value::Int(shuffle.users()), Value::Num(eps)]);
        }
        Ok(values)
    });
    let mut rows = Vec::new();
    let mut failures = Vec::new();
    for (row, r) in analysed.iter().zip(results) {
        match r {
            Ok(values) => rows.push(values),
            Err(err) => failures.push(format!(
                "{} k = {}, eps = {}: {err:#}",
                row.protocol.name(),
                row.k,
                row.eps
            )),
        }
    }
    if rows.is_empty()
        && let Some(first) = failures.first()
    {
        // Nothing to print: the error alone.
        bail!("{first}");
    }
    if let Some(i) = sort {
        if i == 0 {
            rows.sort_by(|x, y| format!("{:?}", x[0]).cmp(&format!("{:?}", y[0])));
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

impl AnalyzeArgs {
    /// The request of `--attributes`, the flags that do not apply refused by name.
    fn multidim<'a>(&'a self, ks: &'a [u64]) -> Result<super::multidim_analyze::Args<'a>> {
        for (flag, given) in [
            ("--param", self.param.is_some()),
            ("--bits-max", self.bits_max.is_some()),
            ("--json-bytes", self.json_bytes),
            ("--collections", self.collections.is_some()),
            ("--eps-perm", self.eps_perm.is_some()),
            ("--change-rate", self.change_rate.is_some()),
        ] {
            if given {
                bail!("{flag} does not apply to several attributes (--attributes)");
            }
        }
        Ok(super::multidim_analyze::Args {
            ks,
            solutions: &self.solution,
            protocols: &self.protocol,
            eps: &self.eps,
            users: self.users,
            surveys: self.surveys,
            asr_max: self.asr_max,
            asr_joint_max: self.asr_joint_max,
            profiled_max: self.profiled_max,
            sort: self.sort.as_deref(),
            format: self.format,
            tuning: self.settings.request,
        })
    }
}

/// `ldp analyze` for the memoized protocols (`--eps-perm`).
fn run_memoized(a: &AnalyzeArgs, protocols: &[LongitudinalProtocol]) -> Result<()> {
    for (flag, given) in [
        ("--param", a.param.is_some()),
        ("--json-bytes", a.json_bytes),
        ("--asr-max", a.asr_max.is_some()),
        ("--bits-max", a.bits_max.is_some()),
        ("--sort", a.sort.is_some()),
    ] {
        if given {
            bail!("{flag} does not apply to the memoized protocols");
        }
    }
    let tuning = a.settings.request;
    if let Some(knob) = tuning.first_given(&[
        SettingGroup::LhAsr,
        SettingGroup::Poisoning,
        SettingGroup::Bias,
    ]) {
        bail!("{} does not apply to the memoized protocols", knob.flag());
    }
    if let Some(knob) = tuning.tuning_given() {
        bail!("{}: the memoized protocols are not tuned", knob.flag());
    }
    let perm = longitudinal::eps_perm(a.eps_perm)?;
    let mut rows = Vec::new();
    for &p in protocols {
        for &k in &a.k {
            for &e in &a.eps {
                let mut row = longitudinal::analyze_row(p, k, e, perm, a.collections)?;
                if let Some(rate) = a.change_rate {
                    let l = longitudinal::build(p, domain(k)?, perm, budget(e)?)?;
                    row.extend(change::analyze_values(
                        rate,
                        ldp_analytic::change::memoized(&l),
                    ));
                }
                rows.push(row);
            }
        }
    }
    let mut columns = longitudinal::analyze_columns(a.collections);
    if a.change_rate.is_some() {
        columns.extend(change::ANALYZE_COLUMNS);
    }
    print(&mut std::io::stdout().lock(), a.format, &columns, &rows)
}

/// Mean bytes of one JSON report and its newline, over 2,000 seeded reports of items
/// spread evenly over the domain, or as many as [`JSON_SAMPLE_BYTES`] of JSON hold (at
/// least one). One report and its line are held at a time: a report of SHE at k = 2^24 is
/// 128 MiB of coordinates, and 2,000 of them held together did not fit in memory.
/// The reports are `perturb_all`'s (the same streams, in order), so the numbers did not
/// change where all 2,000 fit.
fn json_bytes(spec: &Spec) -> Result<f64> {
    const N: u32 = 2000;
    let k = spec.k().get();
    let streams = Streams::new(0, 0, Role::Genuine);
    dispatch!(build(spec)?, m => {
        let (mut line, mut total, mut measured) = (Vec::new(), 0usize, 0u32);
        // User i draws from its batch's stream, as in `perturb_all`.
        let batch = |i: u32| (i as usize / USERS_PER_STREAM) as u64;
        let mut rng = streams.batch(0);
        for i in 0..N {
            if i > 0 && batch(i) != batch(i - 1) {
                rng = streams.batch(batch(i));
            }
            let report = m.perturb(i % k, &mut rng).expect("items are in the domain");
            line.clear();
            report.write_json(&mut line);
            total += line.len() + 1;
            measured += 1;
            if total >= JSON_SAMPLE_BYTES {
                break;
            }
        }
        Ok(total as f64 / f64::from(measured))
    })
}

/// The most JSON `--json-bytes` measures per row: a mean over enough reports to be stable
/// to a few bytes, however large one report is.
const JSON_SAMPLE_BYTES: usize = 64 << 20;
