//! Report files and the in-process estimates the engine's must equal.
#![allow(dead_code, unreachable_pub)]

use std::path::Path;

use datafusion::arrow::array::{Array, AsArray};
use datafusion::arrow::datatypes::{Float64Type, UInt64Type};
use datafusion::arrow::record_batch::RecordBatch;
use ldp_arrow::ReportWriter;
use ldp_core::simulation::{Role, perturb_all};
use ldp_core::{
    Aggregator, AnyMechanism, Clip, DomainSize, Epsilon, Estimator, FamilyMechanism, Protocol,
    Spec, StateValues, dispatch,
};

/// A directory removed when dropped.
pub fn temp_dir(name: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("ldp-datafusion-{name}-"))
        .tempdir()
        .unwrap()
}

pub fn spec(protocol: Protocol, k: u32, eps: f64) -> Spec {
    Spec::classic(
        protocol,
        DomainSize::new(k).unwrap(),
        Epsilon::new(eps).unwrap(),
    )
    .unwrap()
}

/// A skewed population of `n` users over `k` items, different for each `shift`.
pub fn items(n: u32, k: u32, shift: u32) -> Vec<u32> {
    (0..n).map(|i| ((i % 7) * (i % 5) + shift) % k).collect()
}

/// What the in-process aggregator says about some reports.
#[derive(Debug, Clone, PartialEq)]
pub struct Expected {
    pub n: u64,
    /// The counters: support counts, or counts per output cell (SHE: empty).
    pub counts: Vec<u64>,
    /// SHE's clipped sums (others: empty).
    pub sums: Vec<f64>,
    pub estimate: Vec<f64>,
}

/// Perturbs `items` with `spec`'s mechanism, writes the reports to `files` Parquet files
/// in `dir`, and aggregates them in process (SHE clipped as the engine's default).
pub fn write_reports(dir: &Path, spec: &Spec, items: &[u32], files: usize, seed: u64) -> Expected {
    std::fs::create_dir_all(dir).unwrap();
    let any: AnyMechanism = spec.build().unwrap();
    dispatch!(&any, m => {
        let reports = perturb_all(m, items, seed, 0, Role::Genuine).unwrap();
        let per_file = reports.len().div_ceil(files);
        for (i, chunk) in reports.chunks(per_file).enumerate() {
            let mut w = ReportWriter::create(&dir.join(format!("part-{i}.parquet")), m.clone(), None).unwrap();
            // Several record batches per file.
            for batch in chunk.chunks(777) {
                w.write(batch).unwrap();
            }
            w.finish().unwrap();
        }
        // The server the engine builds by default: SHE clipped at `1 + 40/eps`.
        let mut server = m.server(Clip::Recommended);
        for r in &reports {
            server.add(r).unwrap();
        }
        let (counts, sums) = match server.state_values() {
            StateValues::Counts(c) => (c.to_vec(), Vec::new()),
            StateValues::Sums(s) => (Vec::new(), s.to_vec()),
        };
        Expected {
            n: server.count(),
            counts,
            sums,
            estimate: server.estimate(Estimator::Unbiased).unwrap(),
        }
    })
}

/// The `(n, counts | sums)` of an `ldp_counts` result row.
pub fn counts_row(batch: &RecordBatch, column: usize, row: usize) -> (u64, Vec<u64>, Vec<f64>) {
    let s = batch.column(column).as_struct();
    let n = s.column(0).as_primitive::<UInt64Type>().value(row);
    let values = s.column(1).as_list::<i32>().value(row);
    match values.as_primitive_opt::<UInt64Type>() {
        Some(c) => (n, c.values().to_vec(), Vec::new()),
        None => (
            n,
            Vec::new(),
            values.as_primitive::<Float64Type>().values().to_vec(),
        ),
    }
}

/// The estimate of an `ldp_estimate` result row.
pub fn estimate_row(batch: &RecordBatch, column: usize, row: usize) -> Vec<f64> {
    let list = batch.column(column).as_list::<i32>();
    assert!(!list.is_null(row));
    list.value(row)
        .as_primitive::<Float64Type>()
        .values()
        .to_vec()
}

/// Equal up to rounding (SHE's float sums run in another order).
pub fn assert_close(a: &[f64], b: &[f64], what: &str) {
    assert_eq!(a.len(), b.len(), "{what}");
    for (x, y) in a.iter().zip(b) {
        assert!(
            (x - y).abs() <= 1e-9 * (1.0 + y.abs()),
            "{what}: {x} vs {y}"
        );
    }
}

pub const ALL: &[Protocol] = &Protocol::CLASSIC;

/// What ldp-core's multidimensional server says about reports of several attributes.
#[derive(Debug, Clone, PartialEq)]
pub struct MultidimExpected {
    /// The users.
    pub users: u64,
    /// Each attribute's reports (the users for every solution but SMP).
    pub reports: Vec<u64>,
    /// `MultidimAggregator::estimate(Estimator::Unbiased)`.
    pub estimate: Vec<Vec<f64>>,
    /// `MultidimAggregator::fit(j, Estimator::Ibu, default options)` per attribute, or its
    /// error.
    pub ibu: Vec<Result<Vec<f64>, String>>,
}

/// `users` users of `spec`'s collection (a skewed population, each attribute its own
/// shape), perturbed from `seed`, written by ldp-arrow's multidim writer to `files`
/// Parquet files in `dir` (several record batches each), and aggregated in process by
/// `MultidimAggregator`.
pub fn write_multidim_reports(
    dir: &Path,
    spec: &ldp_core::multidim::MultidimSpec,
    users: u32,
    files: usize,
    seed: u64,
) -> MultidimExpected {
    use ldp_arrow::multidim::MultidimWriter;
    use ldp_core::estimate::FitOptions;
    use ldp_core::simulation::stream_rng;
    std::fs::create_dir_all(dir).unwrap();
    ldp_core::dispatch_multidim!(spec, md => {
        let domains = md.domains();
        let mut rng = stream_rng(seed, 0, Role::Genuine, 0);
        let reports = (0..users)
            .map(|u| {
                let items: Vec<u32> = domains
                    .iter()
                    .enumerate()
                    .map(|(j, k)| ((u % 7) * (u % (5 + j as u32)) + j as u32) % k.get())
                    .collect();
                md.perturb(&items, &mut rng).unwrap()
            })
            .collect::<Vec<_>>();
        let per_file = reports.len().div_ceil(files);
        for (i, chunk) in reports.chunks(per_file).enumerate() {
            let mut w = MultidimWriter::create(&dir.join(format!("part-{i}.parquet")), md.clone(), None).unwrap();
            for batch in chunk.chunks(555) {
                w.write(batch).unwrap();
            }
            w.finish().unwrap();
        }
        let mut server = md.aggregator();
        for r in &reports {
            server.add(r).unwrap();
        }
        MultidimExpected {
            users: server.count(),
            reports: (0..md.dimensions()).map(|j| server.attribute(j).count()).collect(),
            estimate: server.estimate(Estimator::Unbiased).unwrap(),
            ibu: (0..md.dimensions())
                .map(|j| {
                    server
                        .fit(j, Estimator::Ibu, &FitOptions::default())
                        .map(|fit| fit.values)
                        .map_err(|e| e.to_string())
                })
                .collect(),
        }
    })
    .unwrap()
}
