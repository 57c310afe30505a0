//! Perturb and aggregate throughput per family at k in {100, 1000, 10000}.
//!
//! Run with `cargo bench -p ldp-core --bench throughput`. Throughput is in reports per
//! second, except `lh_aggregate`, which counts item hashes (k per report).
#![allow(missing_docs)]

use std::hint::black_box;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use ldp_core::families::local_hash::xxh32_decimal;
use ldp_core::simulation::{Role, USERS_PER_STREAM, perturb_all, simulate, stream_rng};
use ldp_core::{
    Aggregator, DomainSize, Epsilon, Grr, LocalHashing, Mechanism, SubsetSelection,
    SummationHistogram, ThresholdHistogram, UnaryEncoding,
};

const BATCH: usize = 100_000;
const KS: [u32; 3] = [100, 1000, 10_000];

fn items(k: u32, n: usize) -> Vec<u32> {
    (0..n as u32)
        .map(|i| i.wrapping_mul(2_654_435_761) % k)
        .collect()
}

/// Single-threaded perturbation, and perturb + aggregate on all cores via `simulate`.
fn bench_family<M: Mechanism>(
    c: &mut Criterion,
    name: &str,
    make: impl Fn(DomainSize, Epsilon) -> Result<M, ldp_core::ParamError>,
) {
    let mut group = c.benchmark_group(name);
    group
        .measurement_time(Duration::from_secs(3))
        .sample_size(10);
    for k in KS {
        let mech = make(DomainSize::new(k).unwrap(), Epsilon::new(2.0).unwrap()).unwrap();
        // SHE draws k Laplace values per report: two streams' worth of users, so that
        // the parallel run has a batch for each core.
        let n = if name == "she" {
            2 * USERS_PER_STREAM
        } else {
            BATCH
        };
        let data = items(k, n);
        group.throughput(Throughput::Elements(n as u64));
        group.bench_with_input(BenchmarkId::new("perturb_1thread", k), &data, |b, data| {
            b.iter(|| {
                let mut rng = stream_rng(1, 0, Role::Genuine, 0);
                for &x in data {
                    black_box(mech.perturb(x, &mut rng).unwrap());
                }
            })
        });
        if name != "lh" {
            group.bench_with_input(
                BenchmarkId::new("perturb_aggregate_parallel", k),
                &data,
                |b, data| {
                    b.iter(|| {
                        black_box(simulate(&mech, data, 1, 0, Role::Genuine).unwrap().count())
                    })
                },
            );
        }
    }
    group.finish();
}

fn lh_aggregate(c: &mut Criterion) {
    let mut group = c.benchmark_group("lh_aggregate");
    group
        .measurement_time(Duration::from_secs(3))
        .sample_size(10);
    for k in KS {
        let mech = LocalHashing::optimized(DomainSize::new(k).unwrap(), Epsilon::new(2.0).unwrap())
            .unwrap();
        let n = 2_000_000 / k as usize;
        let reports = perturb_all(&mech, &items(k, n), 1, 0, Role::Genuine).unwrap();
        group.throughput(Throughput::Elements(n as u64 * u64::from(k)));
        group.bench_with_input(
            BenchmarkId::new("hashes_1thread", k),
            &reports,
            |b, reports| {
                b.iter(|| {
                    let mut agg = mech.aggregator();
                    for r in reports {
                        agg.add(r).unwrap();
                    }
                    black_box(agg.count())
                })
            },
        );
        // The floor: the same k hashes per report and nothing else.
        group.bench_with_input(
            BenchmarkId::new("native_xxh32_baseline", k),
            &reports,
            |b, reports| {
                b.iter(|| {
                    let mut acc = 0u32;
                    for r in reports {
                        for v in 0..k {
                            acc ^= xxh32_decimal(v, r.seed);
                        }
                    }
                    black_box(acc)
                })
            },
        );
        // The generic hash the scan used before its straight-line one: itoa, then
        // xxhash-rust's XXH32.
        group.bench_with_input(
            BenchmarkId::new("generic_xxh32_itoa", k),
            &reports,
            |b, reports| {
                b.iter(|| {
                    let mut acc = 0u32;
                    let mut buf = itoa::Buffer::new();
                    for r in reports {
                        for v in 0..k {
                            acc ^= xxhash_rust::xxh32::xxh32(buf.format(v).as_bytes(), r.seed);
                        }
                    }
                    black_box(acc)
                })
            },
        );
    }
    group.finish();
}

fn families(c: &mut Criterion) {
    bench_family(c, "grr", Grr::new);
    bench_family(c, "ss", SubsetSelection::optimized);
    bench_family(c, "oue", UnaryEncoding::optimized);
    bench_family(c, "sue", UnaryEncoding::symmetric);
    bench_family(c, "lh", LocalHashing::optimized);
    bench_family(c, "the", ThresholdHistogram::optimized);
    bench_family(c, "she", SummationHistogram::new);
}

/// OUE at large budgets, where q is small and gaps are drawn in several base-64 digits.
fn oue_small_q(c: &mut Criterion) {
    let mut group = c.benchmark_group("oue_small_q");
    group
        .measurement_time(Duration::from_secs(3))
        .sample_size(10);
    let k = DomainSize::new(1000).unwrap();
    for eps in [6.0, 10.0, 20.0] {
        let mech = UnaryEncoding::optimized(k, Epsilon::new(eps).unwrap()).unwrap();
        let data = items(k.get(), BATCH);
        group.throughput(Throughput::Elements(BATCH as u64));
        group.bench_with_input(
            BenchmarkId::new("perturb_1thread", eps),
            &data,
            |b, data| {
                b.iter(|| {
                    let mut rng = stream_rng(1, 0, Role::Genuine, 0);
                    for &x in data {
                        black_box(mech.perturb(x, &mut rng).unwrap());
                    }
                })
            },
        );
    }
    group.finish();
}

criterion_group!(benches, families, oue_small_q, lh_aggregate);
criterion_main!(benches);
