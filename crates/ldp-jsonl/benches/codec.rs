//! Writing and reading JSON-lines reports against serde_json, per report family.
//!
//! Run with `cargo bench -p ldp-jsonl`. Throughput is in bytes of JSON.
#![allow(missing_docs)]

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use ldp_core::simulation::{Role, perturb_all};
use ldp_core::{DomainSize, Epsilon, LocalHashing, Mechanism, SummationHistogram, UnaryEncoding};
use ldp_jsonl::JsonReport;
use serde::Serialize;
use serde::de::DeserializeOwned;

fn family<M: Mechanism>(c: &mut Criterion, name: &str, m: &M, n: usize)
where
    M::Report: JsonReport + Serialize + DeserializeOwned,
{
    let k = m.domain_size().get();
    let items: Vec<u32> = (0..n as u32).map(|i| i % k).collect();
    let reports = perturb_all(m, &items, 1, 0, Role::Genuine).unwrap();
    let lines: Vec<Vec<u8>> = reports
        .iter()
        .map(|r| serde_json::to_vec(r).unwrap())
        .collect();
    let bytes: usize = lines.iter().map(|l| l.len() + 1).sum();
    let mut group = c.benchmark_group(name);
    group
        .measurement_time(Duration::from_secs(3))
        .sample_size(10)
        .throughput(Throughput::Bytes(bytes as u64));
    let digits = ldp_jsonl::Digits::for_domain(k);
    group.bench_function("write_ldp_jsonl", |b| {
        b.iter(|| {
            let mut out = Vec::with_capacity(bytes);
            for r in &reports {
                r.write_json_with(&digits, &mut out);
                out.push(b'\n');
            }
            black_box(out.len())
        })
    });
    group.bench_function("write_serde_json", |b| {
        b.iter(|| {
            let mut out = Vec::with_capacity(bytes);
            for r in &reports {
                serde_json::to_writer(&mut out, r).unwrap();
                out.push(b'\n');
            }
            black_box(out.len())
        })
    });
    group.bench_function("read_ldp_jsonl", |b| {
        b.iter(|| {
            for l in &lines {
                black_box(M::Report::parse_json(l).unwrap());
            }
        })
    });
    group.bench_function("read_serde_json", |b| {
        b.iter(|| {
            for l in &lines {
                black_box(serde_json::from_slice::<M::Report>(l).unwrap());
            }
        })
    });
    group.finish();
}

fn codec(c: &mut Criterion) {
    let eps = Epsilon::new(1.0).unwrap();
    let k = DomainSize::new(500).unwrap();
    family(
        c,
        "oue_k500",
        &UnaryEncoding::optimized(k, eps).unwrap(),
        20_000,
    );
    family(
        c,
        "olh_k500",
        &LocalHashing::optimized(k, eps).unwrap(),
        200_000,
    );
    let k = DomainSize::new(100).unwrap();
    family(
        c,
        "she_k100",
        &SummationHistogram::new(k, eps).unwrap(),
        10_000,
    );
}

criterion_group!(benches, codec);
criterion_main!(benches);
