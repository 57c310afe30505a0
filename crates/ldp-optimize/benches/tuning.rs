//! Tuning cost of each adaptive protocol, and of the paper's whole grid.
//! Run with `cargo bench -p ldp-optimize`.
#![allow(missing_docs)]

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use ldp_core::{DomainSize, Epsilon, Protocol};
use ldp_optimize::{Search, TuneOptions, protocol_spec, tune};

fn per_protocol(c: &mut Criterion) {
    let mut group = c.benchmark_group("tune");
    group.measurement_time(Duration::from_secs(2));
    for kv in [100u32, 10_000] {
        for search in [Search::Paper, Search::Refined] {
            let o = TuneOptions {
                search,
                ..TuneOptions::default()
            };
            for p in Protocol::ADAPTIVE {
                let (k, eps) = (DomainSize::new(kv).unwrap(), Epsilon::new(4.0).unwrap());
                group.bench_function(format!("{}/k={kv}/{search:?}", p.name()), |b| {
                    b.iter(|| black_box(tune(p, k, eps, &o).unwrap()))
                });
            }
        }
    }
    group.finish();
}

/// The paper's analytic grid: 12 protocols x 12 domain sizes x 39 budgets (both regimes).
fn paper_grid(c: &mut Criterion) {
    let ks = [
        25u32, 50, 75, 100, 250, 500, 750, 1000, 2500, 5000, 7500, 10_000,
    ];
    let mut eps: Vec<f64> = (1..=20).map(|i| f64::from(i) / 10.0).collect();
    eps.extend((5..=20).map(|i| f64::from(i) / 2.0));
    eps.dedup();
    let o = TuneOptions::default();
    let mut group = c.benchmark_group("paper_grid");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(10));
    group.bench_function(format!("12x{}x{}", ks.len(), eps.len()), |b| {
        b.iter(|| {
            for &kv in &ks {
                for &e in &eps {
                    let (k, ee) = (DomainSize::new(kv).unwrap(), Epsilon::new(e).unwrap());
                    for p in Protocol::PAPER {
                        let spec = protocol_spec(p, k, ee, &o).unwrap();
                        black_box(ldp_optimize::objectives(&spec, o.lh_asr, &o.poisoning).unwrap());
                    }
                }
            }
        })
    });
    group.finish();
}

criterion_group!(benches, per_protocol, paper_grid);
criterion_main!(benches);
