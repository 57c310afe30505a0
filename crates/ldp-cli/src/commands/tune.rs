//! `ldp tune` and `ldp frontier`.

use anyhow::{Context, Result};
use clap::Args;
use ldp_analytic::shuffle::Shuffle;
use ldp_core::Protocol;
use ldp_optimize::{Objective, ObjectiveSet};

use crate::output::{Format, Value, number, print};
use crate::protocol::{
    Every, Frontier, RequestArgs, budget, domain, flagged, knob, one_or_all, parse_protocol,
};

#[derive(Debug, Args)]
pub(crate) struct TuneCmd {
    // Its help names the adaptive protocols of the registry.
    #[arg(long, help = format!(
        "Adaptive protocol ({}), or `all`: the lowest MSE of every protocol (classic ones at \
         their presets, adaptive ones tuned) under the bounds given",
        Protocol::list(&Protocol::ADAPTIVE)
    ))]
    protocol: String,
    /// Domain size.
    #[arg(long, required_unless_present = "attributes")]
    k: Option<u64>,
    /// Privacy budget (of each report; with --central-eps, the largest one the shuffle
    /// allows is used instead).
    #[arg(
        long,
        required_unless_present = "central_eps",
        conflicts_with = "central_eps"
    )]
    eps: Option<f64>,
    /// Reports shuffled together before the analyst sees them: with --central-eps, tune
    /// at the largest local budget whose shuffled reports are (central eps, --delta)-DP
    /// (`ldp shuffle`), and say what that gains over tuning at the central eps locally.
    #[arg(
        long = "shuffle-users",
        value_name = "N",
        requires_all = ["delta", "central_eps"],
        conflicts_with = "attributes"
    )]
    shuffle_users: Option<u64>,
    /// With --shuffle-users: the central delta.
    #[arg(long, requires = "shuffle_users")]
    delta: Option<f64>,
    /// With --shuffle-users: the central eps the shuffled reports must meet.
    #[arg(long = "central-eps", value_name = "E", requires = "shuffle_users")]
    central_eps: Option<f64>,
    /// Several attributes per user, instead of --k: each attribute's domain size. Chooses
    /// the solution x protocol (of --solution and --protocol, each a list or `all`) with
    /// the lowest MSE for --users users under --asr-max (mean ASR on one attribute),
    /// --asr-joint-max and --profiled-max, and says why.
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
    /// With --attributes: the SMP surveys an attacker joins into a profile.
    #[arg(long, requires = "attributes")]
    surveys: Option<u32>,
    /// With --attributes: the ASR of every attribute at once at most A.
    #[arg(long = "asr-joint-max", value_name = "A", requires = "attributes")]
    asr_joint_max: Option<f64>,
    /// With --attributes --surveys: an SMP profile entirely right at most this often.
    #[arg(long = "profiled-max", value_name = "P", requires = "surveys")]
    profiled_max: Option<f64>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Csv)]
    format: Format,
    /// How the protocol is tuned, or the bounds of the choice among every protocol.
    #[command(flatten)]
    settings: RequestArgs<Every>,
}

const TUNE_COLUMNS: [&str; 9] = [
    "protocol", "k", "eps", "strategy", "param", "asr", "mse", "epg", "bits",
];

pub(crate) fn run_tune(a: &TuneCmd) -> Result<()> {
    let request = a.settings.request;
    if let Some(ks) = &a.attributes {
        // A list (`grr,oue`) or `all`, as analyze takes.
        let protocols: Vec<String> = a.protocol.split(',').map(str::to_owned).collect();
        let eps = [a.eps.context("--eps is required")?];
        return super::multidim_analyze::tune(super::multidim_analyze::Args {
            ks,
            solutions: &a.solution,
            protocols: &protocols,
            eps: &eps,
            users: a.users,
            surveys: a.surveys,
            asr_max: request.asr_max,
            asr_joint_max: a.asr_joint_max,
            profiled_max: a.profiled_max,
            sort: None,
            format: a.format,
            tuning: request,
        });
    }
    let k =
        a.k.context("--k is required (or --attributes K1,K2,... for several attributes)")?;
    let k = domain(k)?;
    let flag = |e| flagged(e, &request, None);
    let shuffle = match (a.shuffle_users, a.delta, a.central_eps) {
        (Some(users), Some(delta), Some(central)) => {
            let shuffle = Shuffle::new(users, delta).context("--shuffle-users, --delta")?;
            let eps0 = shuffle.max_local_eps(central).context("--central-eps")?;
            Some((shuffle, central, eps0))
        }
        _ => None,
    };
    let eps = match (shuffle, a.eps) {
        (Some((_, _, eps0)), _) => budget(eps0)?,
        (None, Some(eps)) => budget(eps)?,
        (None, None) => anyhow::bail!("--eps is required (or --shuffle-users with --central-eps)"),
    };
    if let Some(asr) = request.change_asr_bound(k).map_err(flag)? {
        let left_out: Vec<&str> = Protocol::ALL
            .into_iter()
            .filter(|p| !p.family().relabelling_invariant())
            .map(|p| p.name())
            .collect();
        note!(
            "ldp: precision at most {} at a change rate of {} on fresh daily reports is an ASR of at most {} (local hashing's exact ASR){}",
            number(request.precision_max.unwrap_or(f64::NAN)),
            number(request.change_rate.unwrap_or(f64::NAN)),
            number(asr),
            if one_or_all(&a.protocol)?.is_none() {
                format!("; {} are left out", left_out.join(", "))
            } else {
                String::new()
            }
        );
    }
    let row = tune_row(a, &request, k, eps, true)?;
    if let Some((shuffle, central, eps0)) = shuffle {
        let local = tune_row(a, &request, k, budget(central)?, false)?;
        let (mse, local_mse) = (row[6].sort_key(), local[6].sort_key());
        note!(
            "ldp: {} shuffled reports at eps0 = {} are ({}, {})-DP for the analyst of the shuffled batch; tuned at eps = {} without the shuffler the mse would be {} ({}x this one); the asr is per report at eps0, against whoever sees reports with their senders",
            shuffle.users(),
            number(eps0),
            number(central),
            number(shuffle.delta()),
            number(central),
            number(local_mse),
            number(local_mse / mse),
        );
    }
    print(
        &mut std::io::stdout().lock(),
        a.format,
        &TUNE_COLUMNS,
        &[row],
    )
}

/// The row of `--protocol` (one adaptive protocol tuned, or the best of all) at `eps`,
/// with its notes on stderr if `notes`.
fn tune_row(
    a: &TuneCmd,
    request: &ldp_optimize::TuneRequest,
    k: ldp_core::DomainSize,
    eps: ldp_core::Epsilon,
    notes: bool,
) -> Result<Vec<Value>> {
    let flag = |e| flagged(e, request, None);
    Ok(if let Some(p) = one_or_all(&a.protocol)? {
        let t = request.tune(p, k, eps).map_err(flag)?;
        if t.fell_back && notes {
            note!("ldp: note: no parameter meets the bounds; the utopia point was chosen instead");
        }
        vec![
            Value::from(p.name()),
            Value::Int(u64::from(k.get())),
            Value::Num(eps.get()),
            Value::from(t.strategy.name()),
            Value::number(t.param()),
            Value::Num(t.objectives.asr),
            Value::Num(t.objectives.mse),
            Value::Num(t.objectives.epg),
            Value::number(t.objectives.bits),
        ]
    } else {
        let collections = request.collections.unwrap_or(1);
        if collections > 1 && notes {
            note!(
                "ldp: asr is the ASR after {collections} linked reports; ss and ass beyond omega = 1, and she, have no exact form for it and are left out"
            );
        }
        let choice = request.choose(k, eps).map_err(flag)?;
        let o = choice.objectives;
        vec![
            Value::from(choice.protocol.name()),
            Value::Int(u64::from(k.get())),
            Value::Num(eps.get()),
            Value::from("eps-constraint"),
            Value::params(&choice.spec.params()),
            Value::Num(o.asr),
            Value::Num(o.mse),
            o.epg.is_finite().then_some(o.epg).into(),
            Value::number(o.bits),
        ]
    })
}

#[derive(Debug, Args)]
pub(crate) struct FrontierCmd {
    // Its help names the adaptive protocols of the registry.
    #[arg(long, help = format!("Adaptive protocol: {}", Protocol::list(&Protocol::ADAPTIVE)))]
    protocol: String,
    /// Domain size.
    #[arg(long)]
    k: u64,
    /// Privacy budget.
    #[arg(long)]
    eps: f64,
    /// The objectives of the frontier, two or more of asr, mse, epg, bits.
    #[arg(
        long,
        value_delimiter = ',',
        value_parser = knob::<Objective>(Objective::ALL.map(Objective::name)),
        default_values = ["asr", "mse"]
    )]
    objectives: Vec<Objective>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Csv)]
    format: Format,
    /// The LH ASR form of the asr objective and the maximal gain attack of the epg one.
    #[command(flatten)]
    settings: RequestArgs<Frontier>,
}

pub(crate) fn run_frontier(a: &FrontierCmd) -> Result<()> {
    let p = parse_protocol(&a.protocol)?;
    let request = a.settings.request;
    let front = request
        .frontier(p, domain(a.k)?, budget(a.eps)?, &a.objectives)
        .map_err(|e| flagged(e, &request, None))?;
    let set = ObjectiveSet::of(&a.objectives);
    let mut columns = vec!["param"];
    columns.extend(set.iter().map(Objective::name));
    let rows: Vec<Vec<Value>> = front
        .iter()
        .map(|c| {
            std::iter::once(Value::number(c.param()))
                .chain(set.iter().map(|o| Value::Num(c.objectives.get(o))))
                .collect()
        })
        .collect();
    print(&mut std::io::stdout().lock(), a.format, &columns, &rows)
}
