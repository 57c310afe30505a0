//! Cost of evaluating ASR, MSE and EPG. Run with `cargo bench -p ldp-analytic`.
#![allow(missing_docs)]

use std::hint::black_box;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use ldp_analytic::{Options, evaluate, summation};
use ldp_core::{DomainSize, Epsilon, Protocol, Spec};

fn all_classic(c: &mut Criterion) {
    let mut group = c.benchmark_group("evaluate_all_classic");
    group.measurement_time(Duration::from_secs(2));
    for (k, e) in [(100u32, 4.0), (10_000, 1.0), (1_000_000_000, 0.1)] {
        let (kk, ee) = (DomainSize::new(k).unwrap(), Epsilon::new(e).unwrap());
        let specs: Vec<Spec> = Protocol::CLASSIC
            .iter()
            .map(|&p| Spec::classic(p, kk, ee).unwrap())
            .collect();
        group.bench_with_input(
            BenchmarkId::from_parameter(format!("k={k},eps={e}")),
            &specs,
            |b, specs| {
                b.iter(|| {
                    for s in specs {
                        black_box(evaluate(s, &Options::default()).unwrap());
                    }
                })
            },
        );
    }
    group.finish();
}

fn she_asr(c: &mut Criterion) {
    let mut group = c.benchmark_group("she_asr_quadrature");
    group.measurement_time(Duration::from_secs(2));
    for (k, e) in [(100u32, 4.0), (10_000, 1.0), (1_000_000_000, 50.0)] {
        let (kk, ee) = (DomainSize::new(k).unwrap(), Epsilon::new(e).unwrap());
        group.bench_function(format!("k={k},eps={e}"), |b| {
            b.iter(|| black_box(summation::asr(black_box(kk), ee)))
        });
    }
    group.finish();
}

criterion_group!(benches, all_classic, she_asr);
criterion_main!(benches);
