//! `ldp simulate --dataset TABLE --solution NAME`: every record of a table of several
//! attributes perturbed, aggregated and attacked, run after run.

use anyhow::Result;
use ldp_attack::Table;
use ldp_attack::multidim::{AttributeInference, measure_joint};
use ldp_core::AttackSurface;
use ldp_core::Estimator;
use ldp_core::multidim::Multidim;
use ldp_core::simulation::{Role, for_each_batch, stream_rng};
use rand::Rng;

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

/// Runs `runs` collections of every record of `table` under `m`. Run r perturbs user i
/// with the stream of batch i / 4096 of `(seed, r, Genuine)`, aggregates, and estimates;
/// the attribute-inference attacker then guesses the sampled attribute of the very same
/// reports (made again from the same streams, its coins from the `Attacker` streams), and
/// the joint reconstruction is measured on a collection of its own
/// ([`measure_joint`], seeded from the run).
pub(crate) fn measure<M: AttackSurface>(
    m: &Multidim<M>,
    table: &Table,
    runs: u64,
    seed: u64,
) -> Result<TableMeasurement> {
    let d = m.dimensions();
    let n = table.len();
    let truth = table.marginals();
    let rows: Vec<u32> = table.rows().flatten().copied().collect();
    let mut out = TableMeasurement {
        mse: vec![Runs::default(); d],
        asr: vec![Runs::default(); d],
        joint: Runs::default(),
        inference: m.solution().fakes().then(Runs::default),
    };
    for run in 0..runs {
        let mut server = m.aggregator();
        for_each_batch(
            n,
            |b, users| -> Result<_> {
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
            out.mse[j].0.push(se / e.len() as f64);
        }
        if let Some(inference) = &mut out.inference {
            let attacker = AttributeInference::from_estimates(m, &server)?;
            let mut hits = 0u64;
            for_each_batch(
                n,
                |b, users| -> Result<u64> {
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
            inference.0.push(hits as f64 / n as f64);
        }
        let joint_seed = stream_rng(seed, run, Role::Other(1), 0).next_u64();
        let joint = measure_joint(m, &rows, joint_seed)?;
        for (j, share) in joint.per_attribute.iter().enumerate() {
            out.asr[j].0.push(*share);
        }
        out.joint.0.push(joint.joint);
    }
    Ok(out)
}
