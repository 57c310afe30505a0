//! Audit throughput: reports drawn and counted (both statistics) per second, per family,
//! at k = 100 and eps = 1. `cargo bench -p ldp-audit --bench trials`.

#![allow(missing_docs)] // criterion_group! writes undocumented functions

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use ldp_audit::{AuditConfig, audit_mechanism};
use ldp_core::{DomainSize, Epsilon, Protocol, Spec};

const TRIALS: u64 = 50_000;

fn trials(c: &mut Criterion) {
    let mut group = c.benchmark_group("audit_trials");
    // Two inputs per audit.
    group.throughput(Throughput::Elements(2 * TRIALS));
    group.sample_size(10);
    let k = DomainSize::new(100).unwrap();
    let eps = Epsilon::new(1.0).unwrap();
    let config = AuditConfig {
        trials: TRIALS,
        ..AuditConfig::default()
    };
    // The paper's eight classic protocols.
    for &protocol in &Protocol::PAPER[..8] {
        let mech = Spec::classic(protocol, k, eps).unwrap().build().unwrap();
        group.bench_function(protocol.name(), |b| {
            b.iter(|| audit_mechanism(&mech, &config).unwrap())
        });
    }
    group.finish();
}

criterion_group!(benches, trials);
criterion_main!(benches);
