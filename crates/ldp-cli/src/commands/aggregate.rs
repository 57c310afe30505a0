//! `ldp aggregate`.

use std::io::Write;

use anyhow::{Result, bail};
use clap::{Args, ValueEnum};
use ldp_core::{Aggregator, Estimator, Mechanism};

use super::ProtocolArgs;
use super::reports::{for_each_line, parse_report, spec_of};

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum EstimatorArg {
    /// Raw unbiased estimate (may be negative).
    Unbiased,
    /// Clip negatives, renormalize.
    Clip,
    /// Norm-Sub.
    NormSub,
    /// Projection onto the probability simplex.
    Simplex,
}

#[derive(Debug, Args)]
pub(crate) struct AggregateArgs {
    #[command(flatten)]
    protocol: ProtocolArgs,
    /// Post-processing of the estimate.
    #[arg(long, value_enum, default_value_t = EstimatorArg::Unbiased)]
    estimator: EstimatorArg,
}

pub(crate) fn run(a: &AggregateArgs) -> Result<()> {
    let spec = spec_of(&a.protocol)?;
    let estimator = match a.estimator {
        EstimatorArg::Unbiased => Estimator::Unbiased,
        EstimatorArg::Clip => Estimator::ClipRenormalize,
        EstimatorArg::NormSub => Estimator::NormSub,
        EstimatorArg::Simplex => Estimator::Simplex,
    };
    ldp_core::dispatch!(spec.build()?, m => aggregate_stream(&m, estimator))
}

/// Streams the reports into the aggregator (memory O(k)); prints only after the whole
/// input was accepted, so a bad line rejects the stream as a whole.
fn aggregate_stream<M: Mechanism>(m: &M, estimator: Estimator) -> Result<()> {
    let mut agg = m.aggregator();
    let n = for_each_line(std::io::stdin().lock(), |_, line| {
        agg.add(&parse_report(m, line)?)?;
        Ok(())
    })
    .map_err(|e| e.context("report stream rejected, nothing aggregated"))?;
    if n == 0 {
        bail!("no reports on stdin");
    }
    let estimate = agg.estimate(estimator)?;
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    writeln!(out, "item,estimate")?;
    for (i, f) in estimate.iter().enumerate() {
        writeln!(out, "{i},{f}")?;
    }
    out.flush()?;
    Ok(())
}
