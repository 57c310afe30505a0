//! The large-domain oracles against their targets (issue 25):
//!
//! - `hr_vs_grr`: HR perturb + aggregate at k = 2^16, reports per second, beside GRR;
//! - `hcms_perturb`: HCMS's client beside its bare limit (one XXH32 and three draws);
//! - `hr_estimate`: HR's server estimate (one fast Walsh-Hadamard transform) at K = 2^20;
//! - `flh_vs_olh_aggregate`: FLH's aggregation at k = 10^4, k' = 1000 beside OLH's, in
//!   reports per second (FLH's 10^7 reports against OLH's 2 * 10^4: OLH hashes every item
//!   per report, so its rate does not depend on n and a longer run adds nothing).
//!
//! Run with `cargo bench -p ldp-core --bench large_domain`. Single-threaded unless named.
#![allow(missing_docs)]

use std::hint::black_box;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use ldp_core::families::fast_local_hash::FastLocalHashing;
use ldp_core::families::hadamard::HadamardResponse;
use ldp_core::families::sketch::{column, hcms::HadamardCountMeanSketch};
use ldp_core::simulation::{Role, perturb_all, stream_rng};
use ldp_core::{Aggregator, DomainSize, Epsilon, Grr, LocalHashing, Mechanism};
use rand::RngExt;

fn items(k: u32, n: usize) -> Vec<u32> {
    (0..n as u32)
        .map(|i| i.wrapping_mul(2_654_435_761) % k)
        .collect()
}

fn group<'a>(
    c: &'a mut Criterion,
    name: &str,
) -> criterion::BenchmarkGroup<'a, criterion::measurement::WallTime> {
    let mut group = c.benchmark_group(name);
    group
        .measurement_time(Duration::from_secs(3))
        .sample_size(10);
    group
}

/// Perturb every item and add every report to a fresh aggregator, on one thread.
fn perturb_aggregate<M: Mechanism>(mech: &M, data: &[u32]) -> u64 {
    let mut rng = stream_rng(1, 0, Role::Genuine, 0);
    let mut agg = mech.aggregator();
    for &x in data {
        agg.add(&mech.perturb(x, &mut rng).unwrap()).unwrap();
    }
    agg.count()
}

fn hr_vs_grr(c: &mut Criterion) {
    let k = DomainSize::new(1 << 16).unwrap();
    let eps = Epsilon::new(2.0).unwrap();
    let data = items(k.get(), 1_000_000);
    let mut g = group(c, "hr_vs_grr");
    g.throughput(Throughput::Elements(data.len() as u64));
    let grr = Grr::new(k, eps).unwrap();
    g.bench_with_input(BenchmarkId::new("grr", k.get()), &data, |b, d| {
        b.iter(|| black_box(perturb_aggregate(&grr, d)))
    });
    let hr = HadamardResponse::optimized(k, eps).unwrap();
    g.bench_with_input(BenchmarkId::new("hr", k.get()), &data, |b, d| {
        b.iter(|| black_box(perturb_aggregate(&hr, d)))
    });
    g.finish();
}

fn hcms_perturb(c: &mut Criterion) {
    let k = DomainSize::new(100_000).unwrap();
    let eps = Epsilon::new(2.0).unwrap();
    let data = items(k.get(), 1_000_000);
    let hcms = HadamardCountMeanSketch::optimized(k, eps).unwrap();
    let (h, m) = (hcms.hashes(), hcms.width());
    let mut g = group(c, "hcms_perturb");
    g.throughput(Throughput::Elements(data.len() as u64));
    g.bench_with_input(BenchmarkId::new("hcms", k.get()), &data, |b, d| {
        b.iter(|| {
            let mut rng = stream_rng(1, 0, Role::Genuine, 0);
            for &x in d {
                black_box(hcms.perturb(x, &mut rng).unwrap());
            }
        })
    });
    // The floor: a row, a coefficient and a coin, and the item's column in that row.
    g.bench_with_input(BenchmarkId::new("bare_limit", k.get()), &data, |b, d| {
        b.iter(|| {
            let mut rng = stream_rng(1, 0, Role::Genuine, 0);
            for &x in d {
                let row = rng.random_range(0..h);
                let coefficient = rng.random_range(0..m);
                let flip = rng.random_bool(0.88);
                black_box((column(x, row, m), coefficient, flip));
            }
        })
    });
    g.finish();
}

fn hr_estimate(c: &mut Criterion) {
    // One block and k just below 2^20: K = 2^20 columns.
    let k = DomainSize::new((1 << 20) - 1).unwrap();
    let hr = HadamardResponse::new(k, Epsilon::new(1.0).unwrap(), 1).unwrap();
    assert_eq!(hr.outputs(), 1 << 20);
    let reports = perturb_all(&hr, &items(k.get(), 100_000), 1, 0, Role::Genuine).unwrap();
    let mut agg = hr.aggregator();
    for r in &reports {
        agg.add(r).unwrap();
    }
    let mut g = group(c, "hr_estimate");
    g.bench_function(BenchmarkId::new("fwht", hr.outputs()), |b| {
        b.iter(|| black_box(agg.raw_estimate().unwrap()))
    });
    g.finish();
}

fn flh_vs_olh_aggregate(c: &mut Criterion) {
    let k = DomainSize::new(10_000).unwrap();
    let eps = Epsilon::new(2.0).unwrap();
    let mut g = group(c, "flh_vs_olh_aggregate");

    let flh = FastLocalHashing::new(k, eps, 8, 1000).unwrap();
    let flh_reports = perturb_all(&flh, &items(k.get(), 10_000_000), 1, 0, Role::Genuine).unwrap();
    g.throughput(Throughput::Elements(flh_reports.len() as u64));
    g.bench_function(BenchmarkId::new("flh", "1e7_reports"), |b| {
        b.iter(|| {
            let mut agg = flh.aggregator();
            for r in &flh_reports {
                agg.add(r).unwrap();
            }
            black_box(agg.raw_estimate().unwrap())
        })
    });

    let olh = LocalHashing::optimized(k, eps).unwrap();
    let olh_reports = perturb_all(&olh, &items(k.get(), 20_000), 1, 0, Role::Genuine).unwrap();
    g.throughput(Throughput::Elements(olh_reports.len() as u64));
    g.bench_function(BenchmarkId::new("olh", "2e4_reports"), |b| {
        b.iter(|| {
            let mut agg = olh.aggregator();
            for r in &olh_reports {
                agg.add(r).unwrap();
            }
            black_box(agg.raw_estimate().unwrap())
        })
    });
    g.finish();
}

criterion_group!(
    benches,
    hr_vs_grr,
    hcms_perturb,
    hr_estimate,
    flh_vs_olh_aggregate
);
criterion_main!(benches);
