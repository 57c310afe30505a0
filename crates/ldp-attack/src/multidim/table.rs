//! A whole table collected under a multidimensional solution, run after run: each
//! attribute's estimate error, each attribute's and the joint reconstruction rate, and,
//! for the RS+ solutions, the attribute-inference rate. What `ldp simulate --dataset
//! TABLE --solution NAME`, the Python package's `Multidim.simulate` and the page's
//! several-column comparison report.

use ldp_core::multidim::{Multidim, MultidimError};
use ldp_core::simulation::{Estimate, Role, for_each_batch, stream_rng};
use ldp_core::{AttackSurface, Estimator};
use rand::Rng;

use super::{AttributeInference, InferenceError, measure_joint};
use crate::data::Table;

/// Per run, what one collection of the table measured.
#[derive(Debug, Clone, PartialEq)]
pub struct TableMeasurement {
    /// Per attribute, per run: the unbiased estimate's mean squared error over its items.
    pub mse: Vec<Vec<f64>>,
    /// Per attribute, per run: the share of users whose item the reconstruction attack
    /// found ([`measure_joint`]'s `per_attribute`).
    pub asr: Vec<Vec<f64>>,
    /// Per run: the share of users whose every attribute it found.
    pub joint: Vec<f64>,
    /// RS+ solutions, per run: the share of users whose sampled attribute the
    /// Bayes-optimal attacker, believing the server's own estimates, found.
    pub inference: Option<Vec<f64>>,
}

impl TableMeasurement {
    /// The mean over the runs of per-run values, with its standard error.
    pub fn summary(runs: &[f64]) -> Estimate {
        Estimate::from_runs(runs.iter().copied())
    }
}

/// Why a table measurement failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum TableMeasureError {
    /// A record, a report or the estimate (the table does not fit the client).
    #[error(transparent)]
    Multidim(#[from] MultidimError),
    /// The attribute-inference attacker.
    #[error(transparent)]
    Inference(#[from] InferenceError),
    /// The caller asked the measurement to stop.
    #[error("stopped before every run finished")]
    Stopped,
}

/// Runs `runs` collections of every record of `table` under `m`. Run r perturbs user i
/// with the stream of batch i / 4096 of `(seed, r, Genuine)`, aggregates, and estimates;
/// the attribute-inference attacker then guesses the sampled attribute of the very same
/// reports (made again from the same streams, its coins from the `Attacker` streams), and
/// the joint reconstruction is measured on a collection of its own ([`measure_joint`],
/// seeded from the run's `Other(1)` stream). `stop()` is asked before each batch: once
/// it returns true the call fails with [`TableMeasureError::Stopped`].
pub fn measure_table<M: AttackSurface>(
    m: &Multidim<M>,
    table: &Table,
    runs: u64,
    seed: u64,
    stop: &(dyn Fn() -> bool + Sync),
) -> Result<TableMeasurement, TableMeasureError> {
    let stopped = || {
        if stop() {
            Err(TableMeasureError::Stopped)
        } else {
            Ok(())
        }
    };
    let d = m.dimensions();
    let n = table.len();
    let truth = table.marginals();
    let rows: Vec<u32> = table.rows().flatten().copied().collect();
    let mut out = TableMeasurement {
        mse: vec![Vec::new(); d],
        asr: vec![Vec::new(); d],
        joint: Vec::new(),
        inference: m.solution().fakes().then(Vec::new),
    };
    for run in 0..runs {
        let mut server = m.aggregator();
        for_each_batch(
            n,
            |b, users| -> Result<_, TableMeasureError> {
                stopped()?;
                let mut rng = stream_rng(seed, run, Role::Genuine, b);
                let mut partial = m.aggregator();
                for i in users {
                    partial.add(&m.perturb(table.row(i), &mut rng)?)?;
                }
                Ok(partial)
            },
            |partial| Ok(server.merge(&partial)?),
        )?;
        let estimate = server.estimate(Estimator::Unbiased)?;
        for (j, (e, f)) in estimate.iter().zip(&truth).enumerate() {
            let se: f64 = e.iter().zip(f).map(|(x, t)| (x - t).powi(2)).sum();
            out.mse[j].push(se / e.len() as f64);
        }
        if let Some(inference) = &mut out.inference {
            let attacker = AttributeInference::from_estimates(m, &server)?;
            let mut hits = 0u64;
            for_each_batch(
                n,
                |b, users| -> Result<u64, TableMeasureError> {
                    stopped()?;
                    let mut rng = stream_rng(seed, run, Role::Genuine, b);
                    let mut coins = stream_rng(seed, run, Role::Attacker, b);
                    let mut found = 0u64;
                    for i in users {
                        let (report, sampled) = m.perturb_tracked(table.row(i), &mut rng)?;
                        let guess = attacker.guess(&report, &mut coins)?;
                        found += u64::from(sampled == Some(guess));
                    }
                    Ok(found)
                },
                |found| {
                    hits += found;
                    Ok(())
                },
            )?;
            inference.push(hits as f64 / n as f64);
        }
        let joint_seed = stream_rng(seed, run, Role::Other(1), 0).next_u64();
        let joint = measure_joint(m, &rows, joint_seed)?;
        for (j, share) in joint.per_attribute.iter().enumerate() {
            out.asr[j].push(*share);
        }
        out.joint.push(joint.joint);
    }
    Ok(out)
}
