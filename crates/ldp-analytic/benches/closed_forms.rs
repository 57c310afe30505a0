//! Cost of evaluating ASR, MSE and EPG. Run with `cargo bench -p ldp-analytic`.
#![allow(missing_docs)]

use std::hint::black_box;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use ldp_analytic::{Options, evaluate, sketch, summation};
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

/// The paper's grid (configs/paper/asr_analysis.ron): 12 domain sizes, and the budgets
/// 0.1, 0.2, ..., 2.0 then 2.0, 2.5, ..., 10 (37, 2.0 twice as the figure has it).
fn paper_grid() -> (Vec<u32>, Vec<Epsilon>) {
    let ks = vec![
        25, 50, 75, 100, 250, 500, 750, 1000, 2500, 5000, 7500, 10_000,
    ];
    let high = (1..=20).map(|i| f64::from(i) / 10.0);
    let low = (0..=16).map(|i| 2.0 + f64::from(i) / 2.0);
    let eps = high.chain(low).map(|e| Epsilon::new(e).unwrap()).collect();
    (ks, eps)
}

/// Every classic protocol's closed forms over `ks` x `eps`.
fn evaluate_grid(protocols: &[Protocol], ks: &[u32], eps: &[Epsilon]) {
    for &p in protocols {
        for &k in ks {
            let k = DomainSize::new(k).unwrap();
            for &e in eps {
                let spec = Spec::classic(p, k, e).unwrap();
                black_box(evaluate(&spec, &Options::default()).unwrap());
            }
        }
    }
}

/// The paper's grid for the sketches (the per-row counts of the public hashes computed
/// once per (k, m) and reused over the budgets) and for every classic protocol. `cold`:
/// the domain sizes shifted by 1 to 8 in turn, 96 (k, m) in a cycle, more than the
/// sketches' memo keeps (64, oldest out first), so that none is in it yet, as in a fresh
/// `ldp analyze`; `warm`: the same grid again.
fn paper_grid_sketches(c: &mut Criterion) {
    let mut group = c.benchmark_group("paper_grid");
    group.measurement_time(Duration::from_secs(3));
    let (ks, eps) = paper_grid();
    let sketches = [Protocol::Cms, Protocol::Hcms];
    let mut shift = 0;
    group.bench_function("cms+hcms/cold", |b| {
        b.iter_custom(|iters| {
            let start = std::time::Instant::now();
            for _ in 0..iters {
                shift = shift % 8 + 1;
                let shifted: Vec<u32> = ks.iter().map(|k| k + shift).collect();
                evaluate_grid(&sketches, &shifted, &eps);
            }
            start.elapsed()
        })
    });
    group.bench_function("cms+hcms/warm", |b| {
        b.iter(|| evaluate_grid(&sketches, &ks, &eps))
    });
    group.bench_function("all_classic/warm", |b| {
        b.iter(|| evaluate_grid(&Protocol::CLASSIC, &ks, &eps))
    });
    group.finish();
}

/// CMS's exact ASR at the page's largest k for the widths the practitioner's choice
/// compares (h = 256 rows each): cold (k + 1 to 16 in turn, 80 (k, m) in a cycle, none
/// in the memo yet) and warm.
fn cms_asr_page(c: &mut Criterion) {
    let mut group = c.benchmark_group("cms_asr_k=100000");
    group.measurement_time(Duration::from_secs(3));
    group.sample_size(20);
    let eps = Epsilon::new(1.0).unwrap();
    let mut shift = 0;
    group.bench_function("m=16..4096/cold", |b| {
        b.iter_custom(|iters| {
            let start = std::time::Instant::now();
            for _ in 0..iters {
                shift = shift % 16 + 1;
                let k = DomainSize::new(100_000 + shift).unwrap();
                for m in [16, 64, 256, 1024, 4096] {
                    black_box(sketch::cms_asr(k, eps, 256, m));
                }
            }
            start.elapsed()
        })
    });
    let k = DomainSize::new(100_000).unwrap();
    group.bench_function("m=16..4096/warm", |b| {
        b.iter(|| {
            for m in [16, 64, 256, 1024, 4096] {
                black_box(sketch::cms_asr(k, eps, 256, m));
            }
        })
    });
    group.finish();
}

/// The shuffle accountant: one central eps at 10^8 reports (the issue asks for under a
/// second), the inverse there, and a figure's log grid of 10^5 to 10^9 reports.
fn shuffle_accountant(c: &mut Criterion) {
    use ldp_analytic::shuffle::Shuffle;
    let mut group = c.benchmark_group("shuffle");
    group.sample_size(10);
    let big = Shuffle::new(100_000_000, 1e-8).unwrap();
    for eps0 in [0.5, 4.0] {
        group.bench_function(format!("central_eps/n=1e8,eps0={eps0}"), |b| {
            b.iter(|| black_box(big.central_eps(black_box(eps0)).unwrap()))
        });
    }
    group.bench_function("max_local_eps/n=1e8,central=0.1", |b| {
        b.iter(|| black_box(big.max_local_eps(black_box(0.1)).unwrap()))
    });
    group.bench_function("central_eps/grid n=1e5..1e9 x eps0=0.5,2,4", |b| {
        b.iter(|| {
            for i in 0..=16 {
                let n = 10f64.powf(5.0 + 0.25 * f64::from(i)) as u64;
                let shuffle = Shuffle::new(n, 1e-8).unwrap();
                for eps0 in [0.5, 2.0, 4.0] {
                    black_box(shuffle.central_eps(eps0).unwrap());
                }
            }
        })
    });
    group.finish();
}

criterion_group!(
    benches,
    all_classic,
    she_asr,
    paper_grid_sketches,
    cms_asr_page,
    shuffle_accountant
);
criterion_main!(benches);
