//! The memoized protocols' estimation error against `ldp_analytic::longitudinal`'s variance:
//! one collection of n users, many seeded runs, the measured MSE over the k items beside
//! the exact variance `V/n + f (1 - p_s - q_s) / (n (p_s - q_s))` with `V` the closed form.

use ldp_analytic::longitudinal;
use ldp_core::longitudinal::{Longitudinal, LongitudinalProtocol};
use ldp_core::simulation::{Role, stream_rng};
use ldp_core::{Aggregator, DomainSize, Epsilon, Mechanism, dispatch_memoized};

#[test]
fn measured_mse_of_one_collection_matches_the_closed_form() {
    let (k, n, runs) = (10u32, 2_000u32, 300u64);
    // A skewed population: item i holds a share proportional to i + 1.
    let items: Vec<u32> = (0..n)
        .map(|u| {
            let mut r = u % 55;
            let mut i = 0;
            while r > i {
                r -= i + 1;
                i += 1;
            }
            i
        })
        .collect();
    let mut truth = vec![0.0; k as usize];
    for &x in &items {
        truth[x as usize] += 1.0 / f64::from(n);
    }
    for protocol in LongitudinalProtocol::ALL {
        let l = Longitudinal::new(
            protocol,
            DomainSize::new(k).unwrap(),
            Epsilon::new(3.0).unwrap(),
            Epsilon::new(1.0).unwrap(),
        )
        .unwrap();
        let mut squared = Vec::new();
        for run in 0..runs {
            let mut rng = stream_rng(21, run, Role::Genuine, protocol as u64);
            let est = dispatch_memoized!(&l, m => {
                let mut server = m.one_report().aggregator();
                for &x in &items {
                    let memo = m.memoize(x, &mut rng).unwrap();
                    server.add(&m.report(&memo, &mut rng).unwrap()).unwrap();
                }
                server.raw_estimate().unwrap()
            })
            .unwrap();
            let mse: f64 = est
                .iter()
                .zip(&truth)
                .map(|(e, f)| (e - f).powi(2))
                .sum::<f64>()
                / f64::from(k);
            squared.push(mse);
        }
        let mean = squared.iter().sum::<f64>() / runs as f64;
        let se = (squared.iter().map(|m| (m - mean).powi(2)).sum::<f64>()
            / (runs as f64 - 1.0)
            / runs as f64)
            .sqrt();
        let c = l.chained();
        let nf = f64::from(n);
        let expected = truth
            .iter()
            .map(|f| {
                longitudinal::memoized_variance(&l) / nf
                    + f * (1.0 - c.p - c.q) / (nf * (c.p - c.q))
            })
            .sum::<f64>()
            / f64::from(k);
        let z = (mean - expected) / se;
        assert!(
            z.abs() < 3.0,
            "{protocol:?}: measured {mean:.4e} +- {se:.1e}, closed form {expected:.4e} (z = {z:.2})"
        );
    }
}
