//! Experiment specifications, read from RON files (`configs/paper/<figure>.ron`).
//! Unknown fields are errors, so a typo cannot silently fall back to a default.

use ldp_analytic::LhAsr;
use ldp_core::Protocol;
use ldp_core::longitudinal::LongitudinalProtocol;
use ldp_optimize::{Scale, Search, Strategy, TuneOptions, Weights};
use serde::{Deserialize, Serialize};

use crate::error::ExperimentError;
use crate::plot::Width;

/// One experiment: everything a figure depends on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Experiment {
    /// The figure's label in the paper's LaTeX (also the output folder's name).
    pub figure: String,
    /// What the figure shows, for people.
    pub title: String,
    /// Where this configuration departs from, or interprets, the paper.
    #[serde(default)]
    pub notes: Vec<String>,
    /// How adaptive protocols are tuned.
    #[serde(default)]
    pub tuning: Tuning,
    /// The width the figure is printed at, from the paper's LaTeX (default: the full text
    /// width, `text(1.0)`); its text is at least 7 pt at that width.
    #[serde(default = "full_width")]
    pub width: Width,
    /// Run only when `cargo xtask reproduce --figure NAME` names it: a long grid whose
    /// shorter version is the figure every run reproduces.
    #[serde(default)]
    pub on_demand: bool,
    /// The computation.
    pub kind: Kind,
}

/// One line of [`Kind::PoolInference`]: a protocol at a budget, its preset parameter or,
/// for the sketches, `(hashes, width)`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PoolCurve {
    /// Protocol.
    pub protocol: Protocol,
    /// Privacy budget of each report.
    pub eps: f64,
    /// `(hashes, width)` of a count-mean sketch (CMS, HCMS); the preset otherwise.
    #[serde(default)]
    pub sketch: Option<(u32, u32)>,
    /// Legend label (default: the protocol's).
    #[serde(default)]
    pub label: Option<String>,
}

fn full_width() -> Width {
    Width::Text(1.0)
}

/// A range of privacy budgets, `from, from + step, ..., to` (inclusive), tagged with the
/// privacy regime it belongs to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EpsRange {
    /// "high" or "low" in the paper; any label.
    pub regime: String,
    /// First value.
    pub from: f64,
    /// Last value (included).
    pub to: f64,
    /// Step; must be positive.
    pub step: f64,
}

impl EpsRange {
    /// The values, rounded to 1e-9 so that decimal steps do not drift.
    pub fn values(&self) -> Vec<f64> {
        let n = ((self.to - self.from) / self.step + 1e-9).floor() as usize + 1;
        (0..n)
            .map(|i| ((self.from + i as f64 * self.step) * 1e9).round() / 1e9)
            .collect()
    }
}

/// How adaptive protocols are tuned (defaults: the paper's).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Tuning {
    /// ASR weight; the MSE weight is `1 - w_asr`.
    pub w_asr: f64,
    /// Grid only (`paper`) or grid then golden section (`refined`).
    pub search: Search,
    /// Strategy name: weighted, utopia, elbow, eps-constraint, hypervolume, tchebycheff.
    pub strategy: String,
    /// Raw or normalized objectives.
    pub scale: Scale,
    /// LH ASR form in the objective and the analytic curves.
    pub lh_asr: LhAsr,
}

impl Default for Tuning {
    fn default() -> Self {
        Self {
            w_asr: 0.5,
            search: Search::Paper,
            strategy: "weighted".into(),
            scale: Scale::Raw,
            lh_asr: LhAsr::Paper,
        }
    }
}

impl Tuning {
    /// The tuning options these settings describe.
    pub fn options(&self) -> Result<TuneOptions, ExperimentError> {
        Ok(TuneOptions {
            weights: Weights::new(self.w_asr, 1.0 - self.w_asr)?,
            search: self.search,
            strategy: strategy(&self.strategy)?,
            scale: self.scale,
            lh_asr: self.lh_asr,
            ..TuneOptions::default()
        })
    }
}

/// A selection strategy by name, with the paper's defaults.
pub fn strategy(name: &str) -> Result<Strategy, ExperimentError> {
    Strategy::from_name(name)
        .ok_or_else(|| ExperimentError::Config(format!("unknown strategy `{name}`")))
}

/// A strategy of a strategies figure: a name with an optional scale of its own,
/// `hypervolume@normalized` or `hypervolume@raw` (the paper leaves open which objectives
/// the hypervolume is computed on); without a suffix, the experiment's scale.
pub fn strategy_with_scale(name: &str) -> Result<(Strategy, Option<Scale>), ExperimentError> {
    let (base, scale) = match name.split_once('@') {
        None => (name, None),
        Some((base, "raw")) => (base, Some(Scale::Raw)),
        Some((base, "normalized")) => (base, Some(Scale::Normalized)),
        Some((_, other)) => {
            return Err(ExperimentError::Config(format!(
                "strategy `{name}`: unknown scale `{other}` (raw or normalized)"
            )));
        }
    };
    Ok((strategy(base)?, scale))
}

/// How panels are grouped in an ASR-vs-MSE figure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Panels {
    /// One panel per protocol, one line per domain size.
    PerProtocol,
    /// One panel per family, one line per protocol (a single domain size).
    PerFamily,
}

fn per_protocol() -> Panels {
    Panels::PerProtocol
}

/// The poisoning attack of an EPG figure.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PoisoningSpec {
    /// Fraction of fake users.
    pub beta: f64,
    /// Number of targets r.
    pub targets: u32,
    /// True mass of the targets f_T.
    pub target_mass: f64,
}

/// Data sets the empirical experiments can use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Dataset {
    /// UCI Adult, Age attribute: 48,842 people, k = 100.
    AdultAge,
}

/// A table of several attributes per user, shipped with ldp-attack.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum TableData {
    /// UCI Adult's ten categorical attributes: 45,222 people (rows with a missing value
    /// dropped), k = 74, 7, 16, 7, 14, 6, 5, 2, 41, 2.
    Adult,
    /// ACSEmployment (folktables, Montana): 10,336 people, 18 attributes.
    AcsEmployment,
}

impl TableData {
    /// The shipped table.
    pub fn table(self) -> &'static ldp_attack::Table {
        match self {
            TableData::Adult => ldp_attack::Table::adult(),
            TableData::AcsEmployment => ldp_attack::Table::acs_employment(),
        }
    }

    /// Its name in figures.
    pub fn label(self) -> &'static str {
        match self {
            TableData::Adult => "Adult",
            TableData::AcsEmployment => "ACSEmployment",
        }
    }
}

/// The computation behind a figure.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Kind {
    /// Re-identification across SMP surveys (beyond the paper: its Example 1 and
    /// Arcolezi et al., PVLDB 2023): RID-ACC@k after the surveys against eps, a panel per
    /// (background knowledge, k), a line per protocol, the baseline k/n dashed.
    Reidentification {
        /// Protocols, one line each (adaptive ones tuned per attribute).
        protocols: Vec<Protocol>,
        /// The users, who are also the background knowledge.
        data: TableData,
        /// Total budgets.
        eps: Vec<f64>,
        /// Surveys, each of a random subset of the attributes.
        surveys: usize,
        /// Whether a user may be asked an attribute again (and replays its memo).
        repetition: bool,
        /// Partial knowledge too: the attacker knows a random subset of the columns.
        partial: bool,
        /// The k of RID-ACC@k, a panel each.
        top: Vec<usize>,
        /// Independent runs (survey plans, reports and, for partial knowledge, columns).
        runs: u64,
        /// Master seed.
        seed: u64,
    },
    /// Attribute inference on the RS+ solutions: the Bayes-optimal attacker's accuracy
    /// against eps, a line per client, the baseline 1/d dashed.
    AttributeInference {
        /// Clients: (protocol, solution name: rsfd, rsfd-z or rsrfd).
        clients: Vec<(Protocol, String)>,
        /// The users.
        data: TableData,
        /// Total budgets.
        eps: Vec<f64>,
        /// Independent runs.
        runs: u64,
        /// Master seed.
        seed: u64,
    },
    /// RS+RFD against RS+FD: the average MSE over attributes and the attribute-inference
    /// accuracy against eps, a line per (protocol, solution).
    FakeData {
        /// Protocols.
        protocols: Vec<Protocol>,
        /// The users.
        data: TableData,
        /// Total budgets.
        eps: Vec<f64>,
        /// Budget of the Laplace noise on the true counts from which RS+RFD's prior is
        /// made (per attribute: this over d), as the anchors' "correct" prior.
        prior_eps: f64,
        /// Independent runs.
        runs: u64,
        /// Master seed.
        seed: u64,
    },
    /// Pool inference (Gadotti et al., USENIX Security 2022): the Bayesian attacker's AUC
    /// (area under precision against null rate, theirs) and per-pool ROC AUC against the
    /// records each user reports, a line per protocol, the blind guess as a dashed line.
    /// Not in the paper: an attack on many reports of different records.
    PoolInference {
        /// One line each.
        curves: Vec<PoolCurve>,
        /// Domain size (the reference's universe U).
        domain_size: u32,
        /// Pools of `pool_size` consecutive items from 0; the other items are the rest.
        pools: u32,
        /// Items per pool.
        pool_size: u32,
        /// Zipf exponent within pools and the rest.
        zipf: f64,
        /// Records per user at which the attack is measured, increasing.
        records: Vec<u32>,
        /// Users per run.
        users: usize,
        /// Independent runs.
        runs: u64,
        /// Master seed.
        seed: u64,
    },
    /// Expected ASR against eps, a panel per protocol, a line per domain size.
    AsrVsEps {
        /// Protocols, one panel each.
        protocols: Vec<Protocol>,
        /// Domain sizes, one line each.
        domain_sizes: Vec<u32>,
        /// Privacy budgets.
        eps: Vec<EpsRange>,
    },
    /// Approximate variance per user against eps.
    MseVsEps {
        /// How panels are grouped (default: one per protocol).
        #[serde(default = "per_protocol")]
        panels: Panels,
        /// Protocols, one panel each.
        protocols: Vec<Protocol>,
        /// Domain sizes, one line each.
        domain_sizes: Vec<u32>,
        /// Privacy budgets.
        eps: Vec<EpsRange>,
    },
    /// ASR against MSE as eps varies.
    AsrVsMse {
        /// Protocols.
        protocols: Vec<Protocol>,
        /// Domain sizes.
        domain_sizes: Vec<u32>,
        /// Privacy budgets.
        eps: Vec<EpsRange>,
        /// Panel grouping.
        panels: Panels,
    },
    /// ASR, MSE and EPG jointly, as three 2-D projections per family.
    AsrMseEpg {
        /// Protocols (grouped by family).
        protocols: Vec<Protocol>,
        /// Domain size.
        domain_size: u32,
        /// Privacy budgets.
        eps: Vec<EpsRange>,
        /// The maximal gain attack's setting.
        poisoning: PoisoningSpec,
    },
    /// The parameter each selection strategy picks, against eps.
    Strategies {
        /// Adaptive protocols.
        protocols: Vec<Protocol>,
        /// Domain sizes, one row of panels each.
        domain_sizes: Vec<u32>,
        /// Privacy budgets.
        eps: Vec<EpsRange>,
        /// Strategy names.
        strategies: Vec<String>,
    },
    /// The tuned parameter against the ASR weight, beside the classic parameter.
    Weights {
        /// Adaptive protocols.
        protocols: Vec<Protocol>,
        /// Domain size.
        domain_size: u32,
        /// Privacy budget.
        eps: f64,
        /// ASR weights (MSE weight = 1 - w).
        w_asr: EpsRange,
    },
    /// The tuning objective against the parameter, with both optima marked.
    Objective {
        /// Adaptive protocols.
        protocols: Vec<Protocol>,
        /// Domain size.
        domain_size: u32,
        /// Privacy budget.
        eps: f64,
    },
    /// Expected report size (bits) against MSE, expected ASR as colour: a panel per
    /// (budget, domain size), a point per protocol. Not in the paper: its named next axis.
    Costs {
        /// Protocols.
        protocols: Vec<Protocol>,
        /// Domain sizes, one column of panels each.
        domain_sizes: Vec<u32>,
        /// Privacy budgets, one row of panels each.
        eps: Vec<f64>,
    },
    /// Privacy amplification by shuffling (Feldman, McMillan and Talwar's bounds for any
    /// eps0-LDP randomizer): the central eps of n shuffled reports against n, a line per
    /// local budget; and the variance per user of protocols tuned at the largest eps0 that
    /// a central target allows, against tuned locally at the target itself. Not in the
    /// paper.
    Shuffle {
        /// Local budgets, one line each in the first panel.
        eps0: Vec<f64>,
        /// Numbers of reports: from 10^a to 10^b (a, b), four points per decade.
        log10_users: (u32, u32),
        /// The central delta.
        delta: f64,
        /// The central eps of the second panel.
        central_eps: f64,
        /// Protocols of the second panel (at their presets; adaptive ones tuned).
        protocols: Vec<Protocol>,
        /// The domain size of the second panel.
        domain_size: u32,
    },
    /// ASR of the attack that links t reports of one unchanged value, against t (log
    /// axis): the one-shot protocols without memoization (top row) and the memoized ones
    /// (bottom row), a column per budget. Closed forms as lines, measurements on the data
    /// set as points with 3-SE bars. Not in the paper: its "additional adversarial models".
    Repeated {
        /// One-shot protocols.
        protocols: Vec<Protocol>,
        /// Memoized protocols.
        memoized: Vec<LongitudinalProtocol>,
        /// Budgets of one report, one column of panels each.
        eps: Vec<f64>,
        /// The memo's budget is this multiple of the per-report budget (above 1).
        eps_perm_factor: f64,
        /// Numbers of collections at which the closed forms are drawn.
        collections: Vec<u32>,
        /// Numbers of collections at which the attack is measured.
        measured: Vec<u32>,
        /// Data set (its domain size is k).
        dataset: Dataset,
        /// Users attacked, spread evenly over the data set.
        users: usize,
        /// Master seed.
        seed: u64,
    },
    /// Detecting a user's value changes from linked daily reports (the paper's Example 2):
    /// the detector's recall, false alarms and precision against the per-report budget,
    /// for fresh reports, memos refreshed daily and permanent memos. Closed forms as lines
    /// where reports are one value, measurements as points with 3-SE bars. Not in the
    /// paper.
    ChangeDetection {
        /// One-shot protocols reporting afresh every day.
        protocols: Vec<Protocol>,
        /// Memoized protocols (one memo per value, refreshed every day).
        memoized: Vec<LongitudinalProtocol>,
        /// One-shot protocols under a permanent memo (one report per value, replayed).
        permanent: Vec<Protocol>,
        /// Budgets of one report (the x axis).
        eps: Vec<f64>,
        /// The memoized protocols' memo budget is this multiple of the per-report budget
        /// (above 1).
        eps_perm_factor: f64,
        /// Probability that a user's value changes from one day to the next, in (0, 1).
        change_rate: f64,
        /// Days each user reports (at least 2).
        days: u32,
        /// Data set: the users' first values (its domain size is k).
        dataset: Dataset,
        /// Users, spread evenly over the data set.
        users: usize,
        /// Independent runs per point.
        runs: u64,
        /// Master seed.
        seed: u64,
    },
    /// MSE, exact ASR and bits against k (powers of two), a column per budget: closed
    /// forms as lines, measurements at a few k as points with 3-SE bars. Not in the
    /// paper: the large-domain frequency oracles beside its protocols.
    LargeDomain {
        /// Protocols (their presets).
        protocols: Vec<Protocol>,
        /// The exponents of k, `(lo, hi)`: k = 2^lo, ..., 2^hi.
        log2_k: (u32, u32),
        /// Privacy budgets, one column of panels each.
        eps: Vec<f64>,
        /// The exponents of k at which MSE and ASR are measured.
        measured: Vec<u32>,
        /// Users per measurement, spread evenly over the k items.
        users: usize,
        /// Independent runs per measurement.
        runs: u64,
        /// Master seed.
        seed: u64,
    },
    /// Measured MSE of every estimator against eps, a panel per (sample, protocol). Not in
    /// the paper: the estimators beyond its unbiased one.
    Estimators {
        /// Protocols (their presets), one panel each per sample.
        protocols: Vec<Protocol>,
        /// Data set (its domain size is k).
        dataset: Dataset,
        /// Privacy budgets.
        eps: Vec<f64>,
        /// Fractions of the data set, drawn without replacement (1.0: all of it).
        samples: Vec<f64>,
        /// Estimators by name (`ldp_core::Estimator`), one line each.
        estimators: Vec<String>,
        /// Independent runs per point.
        runs: u64,
        /// Master seed.
        seed: u64,
    },
    /// Privacy audits of our clients over LDP-Auditor's grid: eps_emp / eps per protocol
    /// against eps, our likelihood-ratio event beside LDP-Auditor's attack guess, and the
    /// exact audit. Not in the paper.
    AuditGrid {
        /// Protocols (their presets), one panel each.
        protocols: Vec<Protocol>,
        /// Domain sizes: each point spans their values.
        domain_sizes: Vec<u32>,
        /// Privacy budgets.
        eps: Vec<f64>,
        /// Reports per input.
        trials: u64,
        /// The bounds hold with confidence 1 - alpha.
        alpha: f64,
        /// Master seed (point i uses seed + i).
        seed: u64,
    },
    /// Measured ASR-MSE frontiers of classic-adaptive pairs at several numbers of users
    /// drawn from a data set, beside their closed forms: a row per number of users, a
    /// column per pair.
    FrontierVsN {
        /// Pairs of a classic protocol and its adaptive counterpart, one column each.
        pairs: Vec<(Protocol, Protocol)>,
        /// Data set (its domain size is k); each row's users are drawn from it i.i.d.
        dataset: Dataset,
        /// Numbers of users, one row each.
        users: Vec<u64>,
        /// Privacy budgets.
        eps: Vec<EpsRange>,
        /// Independent runs per point.
        runs: u64,
        /// Master seed.
        seed: u64,
    },
    /// Measured ASR and MSE on a data set beside their closed forms.
    Empirical {
        /// Protocols, one panel each.
        protocols: Vec<Protocol>,
        /// Data set (its domain size is k).
        dataset: Dataset,
        /// Privacy budgets.
        eps: Vec<EpsRange>,
        /// Independent runs per point.
        runs: u64,
        /// Master seed.
        seed: u64,
    },
}

impl Experiment {
    /// Parses a RON configuration.
    pub fn from_ron(text: &str) -> Result<Self, ExperimentError> {
        let exp: Experiment =
            ron::from_str(text).map_err(|e| ExperimentError::Config(e.to_string()))?;
        exp.validate()?;
        Ok(exp)
    }

    fn validate(&self) -> Result<(), ExperimentError> {
        self.tuning.options()?;
        let bad = |m: &str| Err(ExperimentError::Config(format!("{}: {m}", self.figure)));
        let share = self.width.fraction();
        if !(share > 0.0 && share <= 1.0) {
            return bad(&format!(
                "width: a share of the column or text width lies in (0, 1], got {share}"
            ));
        }
        let ranges: Vec<&EpsRange> = match &self.kind {
            Kind::AsrVsEps { eps, .. }
            | Kind::MseVsEps { eps, .. }
            | Kind::AsrVsMse { eps, .. }
            | Kind::AsrMseEpg { eps, .. }
            | Kind::Strategies { eps, .. }
            | Kind::FrontierVsN { eps, .. }
            | Kind::Empirical { eps, .. } => eps.iter().collect(),
            Kind::Weights { w_asr, .. } => vec![w_asr],
            Kind::Objective { .. }
            | Kind::Costs { .. }
            | Kind::Shuffle { .. }
            | Kind::Repeated { .. }
            | Kind::ChangeDetection { .. }
            | Kind::LargeDomain { .. }
            | Kind::Estimators { .. }
            | Kind::AuditGrid { .. }
            | Kind::Reidentification { .. }
            | Kind::AttributeInference { .. }
            | Kind::FakeData { .. }
            | Kind::PoolInference { .. } => vec![],
        };
        if let Kind::Costs {
            domain_sizes, eps, ..
        } = &self.kind
            && (domain_sizes.is_empty() || eps.is_empty())
        {
            return bad("costs need at least one domain size and one budget");
        }
        if let Kind::Shuffle {
            eps0,
            log10_users: (from, to),
            delta,
            central_eps,
            protocols,
            ..
        } = &self.kind
        {
            if eps0.is_empty() || protocols.is_empty() {
                return bad("a shuffle figure needs at least one eps0 and one protocol");
            }
            if !(1..=10).contains(from) || !(from..=&10).contains(&to) {
                return bad("log10_users: from 10^1 to at most 10^10 reports, from <= to");
            }
            let named = |e: ldp_analytic::shuffle::ShuffleError| {
                ExperimentError::Config(format!("{}: {e}", self.figure))
            };
            let shuffle = ldp_analytic::shuffle::Shuffle::new(2, *delta).map_err(named)?;
            for &e in eps0 {
                shuffle.closed_form(e).map_err(named)?;
            }
            shuffle.max_local_eps(*central_eps).map_err(named)?;
        }
        for r in ranges {
            if !(r.step > 0.0 && r.from <= r.to && r.from.is_finite() && r.to.is_finite()) {
                return bad("a range needs from <= to and step > 0");
            }
        }
        if let Kind::Strategies { strategies, .. } = &self.kind {
            for s in strategies {
                strategy_with_scale(s)?;
            }
        }
        if let Kind::Empirical { runs: 0, .. }
        | Kind::Reidentification { runs: 0, .. }
        | Kind::AttributeInference { runs: 0, .. }
        | Kind::FakeData { runs: 0, .. }
        | Kind::PoolInference { runs: 0, .. } = &self.kind
        {
            return bad("runs must be at least 1");
        }
        if let Kind::Reidentification { top, surveys, .. } = &self.kind
            && (*surveys == 0 || top.is_empty() || top.contains(&0))
        {
            return bad("re-identification needs at least one survey and each top k >= 1");
        }
        if let Kind::FakeData { prior_eps, .. } = &self.kind
            && !(prior_eps.is_finite() && *prior_eps > 0.0)
        {
            return bad("the prior's budget must be finite and > 0");
        }
        if let Kind::AttributeInference { clients, .. } = &self.kind {
            for (_, solution) in clients {
                match solution.parse::<ldp_core::multidim::Solution>() {
                    Ok(s) if s.fakes() => {}
                    _ => return bad("attribute inference needs clients of rsfd, rsfd-z or rsrfd"),
                }
            }
        }
        if let Kind::FrontierVsN {
            pairs, users, runs, ..
        } = &self.kind
        {
            if *runs < 2 || pairs.is_empty() || users.is_empty() || users.contains(&0) {
                return bad("frontier_vs_n needs pairs, numbers of users >= 1 and at least 2 runs");
            }
            if let Some((c, a)) = pairs
                .iter()
                .find(|(c, a)| c.is_adaptive() || !a.is_adaptive() || a.classic_counterpart() != *c)
            {
                return bad(&format!(
                    "({}, {}) is not a classic protocol and its adaptive counterpart",
                    c.label(),
                    a.label()
                ));
            }
        }
        if let Kind::Estimators {
            eps,
            samples,
            estimators,
            runs,
            ..
        } = &self.kind
        {
            if *runs < 2 || eps.is_empty() || samples.is_empty() || estimators.is_empty() {
                return bad("estimators need budgets, samples, estimators and at least 2 runs");
            }
            for name in estimators {
                if let Err(e) = name.parse::<ldp_core::Estimator>() {
                    return bad(&e.to_string());
                }
            }
        }
        if let Kind::AuditGrid {
            domain_sizes,
            eps,
            trials,
            alpha,
            ..
        } = &self.kind
            && (domain_sizes.is_empty()
                || domain_sizes.iter().any(|&k| k < 2)
                || eps.is_empty()
                || *trials == 0
                || !(*alpha > 0.0 && *alpha < 1.0))
        {
            return bad(
                "audit_grid needs domain sizes of at least 2, budgets, trials and alpha in (0, 1)",
            );
        }
        if let Kind::LargeDomain {
            log2_k: (lo, hi),
            eps,
            measured,
            users,
            runs,
            ..
        } = &self.kind
        {
            if !(1 <= *lo && lo <= hi && *hi <= 24) || eps.is_empty() {
                return bad("large_domain needs 1 <= lo <= hi <= 24 and a budget");
            }
            if measured.iter().any(|m| m < lo || m > hi) || *users == 0 || *runs == 0 {
                return bad("measured exponents lie in [lo, hi], with users and runs");
            }
        }
        if let Kind::PoolInference { curves, .. } = &self.kind
            && curves.is_empty()
        {
            return bad("pool inference needs at least one curve");
        }
        if let Kind::Repeated {
            eps,
            eps_perm_factor,
            collections,
            measured,
            users,
            ..
        } = &self.kind
        {
            let increasing =
                |v: &[u32]| v.first().is_some_and(|&t| t >= 1) && v.windows(2).all(|w| w[0] < w[1]);
            if eps.is_empty()
                || eps_perm_factor.partial_cmp(&1.0) != Some(std::cmp::Ordering::Greater)
            {
                return bad("repeated collection needs budgets and eps_perm_factor > 1");
            }
            if !increasing(collections) || !increasing(measured) || *users == 0 {
                return bad("collections and measured must increase from 1 or more; users >= 1");
            }
        }
        if let Kind::ChangeDetection {
            eps,
            eps_perm_factor,
            change_rate,
            days,
            users,
            runs,
            ..
        } = &self.kind
        {
            if eps.is_empty()
                || eps_perm_factor.partial_cmp(&1.0) != Some(std::cmp::Ordering::Greater)
            {
                return bad("change detection needs budgets and eps_perm_factor > 1");
            }
            if !(*change_rate > 0.0 && *change_rate < 1.0) {
                return bad("change detection needs a change rate in (0, 1)");
            }
            if *days < 2 || *users == 0 || *runs == 0 {
                return bad("change detection needs days >= 2, users >= 1 and runs >= 1");
            }
        }
        Ok(())
    }

    /// A reduced version for quick checks: four budgets per range (ends kept), the first
    /// and last domain sizes, every other weight, and 3 runs.
    pub fn quick(&self) -> Experiment {
        fn thin(r: &[EpsRange]) -> Vec<EpsRange> {
            r.iter()
                .map(|e| EpsRange {
                    step: if e.to > e.from {
                        (e.to - e.from) / 3.0
                    } else {
                        1.0
                    },
                    ..e.clone()
                })
                .collect()
        }

        fn ends(v: &[u32]) -> Vec<u32> {
            let mut out = vec![v[0]];
            if v.len() > 1 {
                out.push(v[v.len() - 1]);
            }
            out
        }
        // Fewer domain sizes and budgets, every other collection, a few runs: the same
        // figure, reduced in place.
        let mut kind = self.kind.clone();
        match &mut kind {
            Kind::AsrVsEps {
                domain_sizes, eps, ..
            }
            | Kind::MseVsEps {
                domain_sizes, eps, ..
            }
            | Kind::AsrVsMse {
                domain_sizes, eps, ..
            }
            | Kind::Strategies {
                domain_sizes, eps, ..
            } => {
                *domain_sizes = ends(domain_sizes);
                *eps = thin(eps);
            }
            Kind::AsrMseEpg { eps, .. } => *eps = thin(eps),
            Kind::Weights { w_asr, .. } => w_asr.step *= 2.0,
            Kind::Objective { .. } => {}
            Kind::Costs { domain_sizes, .. } => *domain_sizes = ends(domain_sizes),
            Kind::Shuffle { log10_users, .. } => {
                // Up to 10^6 reports: the shape of the figure in a fraction of the time.
                log10_users.1 = log10_users.1.min(6).max(log10_users.0);
            }
            Kind::Repeated {
                collections,
                measured,
                users,
                ..
            } => {
                *collections = collections.iter().copied().step_by(2).collect();
                measured.retain(|&t| t <= 50);
                *users = 200;
            }
            Kind::ChangeDetection {
                eps, users, runs, ..
            } => {
                // The two ends of the budgets, fewer users, one run.
                if eps.len() > 2 {
                    *eps = vec![eps[0], eps[eps.len() - 1]];
                }
                *users = (*users).min(500);
                *runs = 1;
            }
            Kind::Empirical { eps, runs, .. } | Kind::FrontierVsN { eps, runs, .. } => {
                *eps = thin(eps);
                *runs = 3;
            }
            Kind::LargeDomain {
                log2_k,
                measured,
                users,
                runs,
                ..
            } => {
                // Exponents up to 2^14, the first measured k, a few users.
                log2_k.1 = log2_k.1.min(14).max(log2_k.0);
                measured.retain(|&m| m <= log2_k.1);
                measured.truncate(1);
                *users = 2000;
                *runs = 4;
            }
            Kind::AuditGrid {
                domain_sizes,
                trials,
                ..
            } => {
                // The first and last domain sizes, few trials: the shape of the figure.
                *domain_sizes = ends(domain_sizes);
                *trials = (*trials).min(20_000);
            }
            Kind::Reidentification { eps, runs, .. }
            | Kind::AttributeInference { eps, runs, .. }
            | Kind::FakeData { eps, runs, .. } => {
                // The two ends of the budgets, one run.
                if eps.len() > 2 {
                    *eps = vec![eps[0], eps[eps.len() - 1]];
                }
                *runs = 1;
            }
            Kind::PoolInference { users, .. } => {
                // Every line and number of records, few users: the shape of the figure.
                *users = (*users).min(100);
            }
            Kind::Estimators { eps, runs, .. } => {
                // The two ends of the budgets, a few runs.
                if eps.len() > 2 {
                    *eps = vec![eps[0], eps[eps.len() - 1]];
                }
                *runs = 3;
            }
        }
        Experiment {
            kind,
            ..self.clone()
        }
    }
}

/// All values of a list of ranges, in order, with their regime labels.
pub fn eps_values(ranges: &[EpsRange]) -> Vec<(String, f64)> {
    ranges
        .iter()
        .flat_map(|r| r.values().into_iter().map(move |v| (r.regime.clone(), v)))
        .collect()
}
