//! The time of the iterative estimators (issue 27): IBU and MLE on OUE and GRR support
//! counts of 48,842 reports (Adult Age's population) at k = 100, 1000 and 10 000, eps = 1,
//! with the default cap and tolerance; beside them Norm-Sub, a one-pass post-processing.
//!
//! Run with `cargo bench -p ldp-core --bench estimators`.
#![allow(missing_docs)]

use std::hint::black_box;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use ldp_core::estimate::FitOptions;
use ldp_core::simulation::{Role, perturb_all};
use ldp_core::{Aggregator, DomainSize, Epsilon, Estimator, Grr, Mechanism, UnaryEncoding};

const USERS: u32 = 48_842;

/// A Zipf-like population: item i held with weight 1 / (i + 1).
fn items(k: u32) -> Vec<u32> {
    let weights: Vec<f64> = (0..k).map(|i| 1.0 / f64::from(i + 1)).collect();
    let total: f64 = weights.iter().sum();
    let mut out = Vec::with_capacity(USERS as usize);
    for (i, w) in weights.iter().enumerate() {
        let n = (w / total * f64::from(USERS)).round() as usize;
        out.extend(std::iter::repeat_n(i as u32, n));
    }
    out
}

fn server<M: Mechanism>(m: &M, k: u32) -> M::Aggregator {
    let reports = perturb_all(m, &items(k), 7, 0, Role::Genuine).unwrap();
    let mut server = m.aggregator();
    for r in &reports {
        server.add(r).unwrap();
    }
    server
}

fn estimators(c: &mut Criterion) {
    let mut group = c.benchmark_group("estimate");
    group
        .measurement_time(Duration::from_secs(3))
        .sample_size(10);
    let eps = Epsilon::new(1.0).unwrap();
    for k in [100u32, 1000, 10_000] {
        let domain = DomainSize::new(k).unwrap();
        let oue = server(&UnaryEncoding::optimized(domain, eps).unwrap(), k);
        let grr = server(&Grr::new(domain, eps).unwrap(), k);
        for (name, estimator) in [
            ("ibu", Estimator::Ibu),
            ("mle", Estimator::Mle),
            ("norm-sub", Estimator::NormSub),
        ] {
            for (protocol, fit) in [
                ("oue", oue.fit(estimator, &FitOptions::default()).unwrap()),
                ("grr", grr.fit(estimator, &FitOptions::default()).unwrap()),
            ] {
                eprintln!(
                    "{protocol} {name} k = {k}: {} iterations, stopped by {}",
                    fit.iterations,
                    fit.stop.name()
                );
            }
            group.bench_with_input(BenchmarkId::new(format!("oue/{name}"), k), &k, |b, _| {
                b.iter(|| black_box(oue.estimate(estimator).unwrap()));
            });
            group.bench_with_input(BenchmarkId::new(format!("grr/{name}"), k), &k, |b, _| {
                b.iter(|| black_box(grr.estimate(estimator).unwrap()));
            });
        }
    }
    group.finish();
}

criterion_group!(benches, estimators);
criterion_main!(benches);
