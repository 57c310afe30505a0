//! `ldp shuffle`: the central (eps, delta) of n shuffled eps0-LDP reports, or the largest
//! eps0 whose shuffled reports meet a central target.

use anyhow::Result;
use clap::Args;
use ldp_analytic::shuffle::Shuffle;

use crate::output::{Format, Value, print};

#[derive(Debug, Args)]
#[command(after_help = "Examples:
  ldp shuffle --users 100000 --delta 1e-6 --eps0 1,2,4
  ldp shuffle --users 1000000,100000000 --delta 1e-8 --central-eps 0.5
  ldp shuffle --users 100000 --delta 1e-6 --eps0 4 --grr 2

The bounds are Feldman, McMillan and Talwar's (\"Hiding Among the Clones\", FOCS 2021) for
any eps0-LDP randomizer; with --grr, also k-ary randomized response's own (the privacy
blanket's decomposition, Balle et al., CRYPTO 2019), whichever is smaller. They are about the analyst who sees the shuffled batch; whoever
sees reports with identities faces each report's own eps0 (and its reconstruction rate,
`ldp analyze`).")]
pub(crate) struct ShuffleArgs {
    /// Reports shuffled together, one per user (at least 2); a comma-separated list for
    /// several batch sizes.
    #[arg(long, value_delimiter = ',', required = true, value_name = "N1,N2,...")]
    users: Vec<u64>,
    /// The central delta, in (0, 1).
    #[arg(long)]
    delta: f64,
    /// Local budgets, comma-separated: the central eps of each, numerically (bracketed:
    /// `central_eps` is the guarantee, `central_eps_lower` the least this analysis could
    /// certify) and in closed form where that applies.
    #[arg(
        long,
        value_delimiter = ',',
        value_name = "E1,E2,...",
        required_unless_present = "central_eps",
        conflicts_with = "central_eps"
    )]
    eps0: Vec<f64>,
    /// Central targets, comma-separated: the largest eps0 whose shuffled reports meet each
    /// (`eps0_max`), and their ratio (`amplification`).
    #[arg(long = "central-eps", value_delimiter = ',', value_name = "E1,E2,...")]
    central_eps: Vec<f64>,
    /// The reports are GRR's over K items (k-ary randomized response; SS with omega = 1
    /// reports the same): use its own bound too, never looser than the generic one, and
    /// tighter where e^eps0 is above K - 1. The closed form stays the generic one.
    #[arg(long, value_name = "K")]
    grr: Option<u64>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Csv)]
    format: Format,
}

const FORWARD: [&str; 6] = [
    "users",
    "delta",
    "eps0",
    "central_eps",
    "central_eps_lower",
    "closed_form",
];

const INVERSE: [&str; 5] = ["users", "delta", "central_eps", "eps0_max", "amplification"];

pub(crate) fn run(a: &ShuffleArgs) -> Result<()> {
    let mut rows = Vec::new();
    for &n in &a.users {
        let mut shuffle = Shuffle::new(n, a.delta)?;
        if let Some(k) = a.grr {
            shuffle = shuffle
                .randomized_response(k)
                .map_err(|e| anyhow::anyhow!("--grr: {e}"))?;
        }
        for &eps0 in &a.eps0 {
            let central = shuffle.central_eps(eps0)?;
            rows.push(vec![
                Value::Int(n),
                Value::Num(a.delta),
                Value::Num(eps0),
                Value::Num(central.upper),
                Value::Num(central.lower),
                shuffle.closed_form(eps0)?.into(),
            ]);
        }
        for &target in &a.central_eps {
            let eps0 = shuffle.max_local_eps(target)?;
            rows.push(vec![
                Value::Int(n),
                Value::Num(a.delta),
                Value::Num(target),
                Value::Num(eps0),
                Value::Num(eps0 / target),
            ]);
        }
    }
    let columns: &[&str] = if a.eps0.is_empty() {
        &INVERSE
    } else {
        &FORWARD
    };
    print(&mut std::io::stdout().lock(), a.format, columns, &rows)
}
