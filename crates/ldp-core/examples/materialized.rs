//! Reports per second of the materialized path: `perturb_all` (the reports of every user
//! in memory, in parallel) then one aggregator over them. It is what a binding that
//! hands reports to its caller can at best do, and the Python package's benchmark
//! (`crates/ldp-py/bench/bench.py`) sets its numbers beside these.
//!
//! `cargo run --release -p ldp-core --example materialized -- PROTOCOL K EPS USERS`

use std::time::Instant;

use ldp_core::simulation::{Role, perturb_all};
use ldp_core::{Aggregator, DomainSize, Epsilon, Mechanism, Protocol, Spec, dispatch};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [protocol, k, eps, users] = &args[..] else {
        return Err("usage: materialized PROTOCOL K EPS USERS".into());
    };
    let protocol: Protocol = protocol.parse()?;
    let k = DomainSize::new(k.parse()?)?;
    let spec = Spec::classic(protocol, k, Epsilon::new(eps.parse()?)?)?;
    let users: u32 = users.parse()?;
    let items: Vec<u32> = (0..users).map(|i| i % k.get()).collect();
    let mut best = f64::INFINITY;
    dispatch!(spec.build()?, m => {
        for run in 0..9 {
            let start = Instant::now();
            let reports = perturb_all(&m, &items, run, 0, Role::Genuine)?;
            let mut server = m.aggregator();
            for r in &reports {
                server.add(r)?;
            }
            std::hint::black_box(server.estimate(ldp_core::Estimator::Unbiased)?);
            best = best.min(start.elapsed().as_secs_f64());
        }
    });
    println!("{}", f64::from(users) / best);
    Ok(())
}
