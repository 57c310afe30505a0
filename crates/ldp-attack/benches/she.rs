//! SHE's simulated users against rand_distr's sampler called per coordinate: drawing k
//! Laplace values from the same ChaCha stream and taking their sum and argmax (issue 14;
//! issue 28 made the client draw its words in bulk, below that reference). Adult Age
//! (n = 48,842, k = 100), eps = 4, one thread.
//!
//! Run with `cargo bench -p ldp-attack --bench she`.
#![allow(missing_docs)]

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use ldp_attack::Population;
use ldp_core::simulation::{Role, stream_rng};
use ldp_core::{
    AttackSurface, Clip, DomainSize, Epsilon, FamilyMechanism, Mechanism, SummationHistogram,
};
use rand::Rng;
use rand_distr::{Distribution, Exp1};

fn she(c: &mut Criterion) {
    let pop = Population::adult_age();
    let items = pop.items();
    let k = DomainSize::new(100).unwrap();
    let m = SummationHistogram::new(k, Epsilon::new(4.0).unwrap()).unwrap();
    let b = m.scale();
    let mut group = c.benchmark_group("she_k100_adult_age");
    group
        .measurement_time(Duration::from_secs(4))
        .sample_size(20)
        .throughput(Throughput::Elements(items.len() as u64));
    // The reference: k Laplace values per user from the stream, their sum and argmax, and
    // nothing else, with rand_distr's `Exp1` called per coordinate and a word of 64 signs
    // (the client's sampler until issue 28).
    group.bench_function("exp1_per_coordinate", |bench| {
        bench.iter(|| {
            let mut rng = stream_rng(1, 0, Role::Genuine, 0);
            let (mut total, mut hits) = (0.0, 0u32);
            for &x in items {
                let (mut best, mut at, mut signs) = (f64::NEG_INFINITY, 0usize, 0u64);
                for i in 0..100usize {
                    if i % 64 == 0 {
                        signs = rng.next_u64();
                    }
                    let e: f64 = Exp1.sample(&mut rng);
                    let v = if signs & 1 == 1 { -b * e } else { b * e }
                        + f64::from(u8::from(i == x as usize));
                    signs >>= 1;
                    total += v;
                    if v > best {
                        (best, at) = (v, i);
                    }
                }
                hits += u32::from(at == x as usize);
            }
            black_box((total, hits))
        })
    });
    // What a simulation does: perturb into one reused report, aggregate and attack.
    group.bench_function("perturb_aggregate_attack", |bench| {
        bench.iter(|| {
            let mut rng = stream_rng(1, 0, Role::Genuine, 0);
            let mut attacker = stream_rng(1, 0, Role::Attacker, 0);
            let mut server = m.server(Clip::Off);
            let (mut report, mut scratch) = (None, Vec::new());
            let mut hits = 0u32;
            for &x in items {
                let guess = m.genuine_user(
                    x,
                    &mut server,
                    &mut rng,
                    &mut attacker,
                    &mut report,
                    &mut scratch,
                );
                hits += u32::from(guess == x);
            }
            black_box((server, hits))
        })
    });
    // The same with a fresh report per user (what the reused one avoids).
    group.bench_function("materialized_reports", |bench| {
        bench.iter(|| {
            let mut rng = stream_rng(1, 0, Role::Genuine, 0);
            let mut attacker = stream_rng(1, 0, Role::Attacker, 0);
            let mut server = m.server(Clip::Off);
            let mut scratch = Vec::new();
            let mut hits = 0u32;
            for &x in items {
                let report = m.perturb(x, &mut rng).unwrap();
                hits += u32::from(
                    m.observe_and_guess(&mut server, &report, &mut scratch, &mut attacker) == x,
                );
            }
            black_box((server, hits))
        })
    });
    // The former sampler, two exponentials per coordinate, materialized (for reference).
    group.bench_function("two_exponentials_materialized", |bench| {
        bench.iter(|| {
            let mut rng = stream_rng(1, 0, Role::Genuine, 0);
            let mut sums = vec![0.0; 100];
            let mut hits = 0u32;
            for &x in items {
                let mut y: Vec<f64> = (0..100)
                    .map(|_| {
                        let (e1, e2): (f64, f64) = (Exp1.sample(&mut rng), Exp1.sample(&mut rng));
                        b * (e1 - e2)
                    })
                    .collect();
                y[x as usize] += 1.0;
                let mut at = 0;
                for (i, &v) in y.iter().enumerate() {
                    sums[i] += v;
                    if v > y[at] {
                        at = i;
                    }
                }
                hits += u32::from(at == x as usize);
            }
            black_box((sums, hits))
        })
    });
    group.finish();
}

criterion_group!(benches, she);
criterion_main!(benches);
