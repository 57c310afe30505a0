//! The "W2" workload: Adult Age (n = 48,842, k = 100), eps = 4, all twelve protocols,
//! every user perturbed, aggregated, estimated and attacked (one run each).
//! Run with `cargo bench -p ldp-attack`.
#![allow(missing_docs)]

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use ldp_attack::{MeasureConfig, Population, ReconstructionAttack, measure};
use ldp_core::{Epsilon, FamilyParams, Protocol, Spec};

fn w2(c: &mut Criterion) {
    let pop = Population::adult_age();
    let (k, eps) = (pop.k(), Epsilon::new(4.0).unwrap());
    // The adaptive protocols at their tuned parameters for k = 100, eps = 4 (ldp-optimize's
    // paper search; ldp-attack does not depend on it).
    let mut specs: Vec<(String, Spec)> = Protocol::CLASSIC
        .iter()
        .map(|&p| (p.name().to_owned(), Spec::classic(p, k, eps).unwrap()))
        .collect();
    for (name, family) in [
        ("ass", FamilyParams::SubsetSelection { omega: 7 }),
        ("aue", FamilyParams::UnaryEncoding { p: 0.818_181_818 }),
        ("alh", FamilyParams::LocalHashing { g: 13 }),
        (
            "athe",
            FamilyParams::ThresholdHistogram {
                theta: 0.782_828_283,
            },
        ),
    ] {
        specs.push((name.to_owned(), Spec::new(k, eps, family).unwrap()));
    }
    let config = MeasureConfig {
        runs: 1,
        seed: 7,
        attack: ReconstructionAttack::Paper,
        poisoning: None,
    };
    let mut group = c.benchmark_group("w2");
    group
        .sample_size(20)
        .measurement_time(Duration::from_secs(5));
    group.bench_function("all_twelve_protocols", |b| {
        b.iter(|| {
            for (_, spec) in &specs {
                black_box(measure(spec, &pop, &config).unwrap());
            }
        })
    });
    for (name, spec) in &specs {
        group.bench_function(name.as_str(), |b| {
            b.iter(|| black_box(measure(spec, &pop, &config).unwrap()))
        });
    }
    group.finish();
}

criterion_group!(benches, w2);
criterion_main!(benches);
