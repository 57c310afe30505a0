//! `ldp simulate --dataset TABLE --solution NAME`: every record of a table of several
//! attributes perturbed, aggregated and attacked, run after run.

use anyhow::Result;
use ldp_attack::Table;
use ldp_attack::multidim::measure_table;
use ldp_core::AttackSurface;
use ldp_core::multidim::Multidim;

/// One quantity measured once per run.
#[derive(Debug, Clone, Default)]
pub(crate) struct Runs(Vec<f64>);

impl Runs {
    /// The mean over the runs.
    pub(crate) fn mean(&self) -> f64 {
        self.0.iter().sum::<f64>() / self.0.len() as f64
    }

    /// The standard error of the mean over the runs; `None` for a single run.
    pub(crate) fn se(&self) -> Option<f64> {
        let r = self.0.len() as f64;
        if self.0.len() < 2 {
            return None;
        }
        let mean = self.mean();
        let var = self.0.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (r - 1.0);
        Some((var / r).sqrt())
    }
}

/// What the runs measured.
#[derive(Debug, Clone)]
pub(crate) struct TableMeasurement {
    /// Per attribute: the unbiased estimate's mean squared error over its items.
    pub(crate) mse: Vec<Runs>,
    /// Per attribute: the share of users whose item the reconstruction attack found
    /// (`measure_joint`'s `per_attribute`).
    pub(crate) asr: Vec<Runs>,
    /// The share of users whose every attribute it found.
    pub(crate) joint: Runs,
    /// RS+ solutions: the share of users whose sampled attribute the Bayes-optimal
    /// attacker, believing the server's own estimates, found.
    pub(crate) inference: Option<Runs>,
}

/// `ldp_attack::multidim::measure_table`'s runs, summarized as the tool prints them.
pub(crate) fn measure<M: AttackSurface>(
    m: &Multidim<M>,
    table: &Table,
    runs: u64,
    seed: u64,
) -> Result<TableMeasurement> {
    let t = measure_table(m, table, runs, seed, &|| false)?;
    Ok(TableMeasurement {
        mse: t.mse.into_iter().map(Runs).collect(),
        asr: t.asr.into_iter().map(Runs).collect(),
        joint: Runs(t.joint),
        inference: t.inference.map(Runs),
    })
}
