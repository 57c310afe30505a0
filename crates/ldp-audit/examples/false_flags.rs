//! How often is a correct client flagged? Audits every client of LDP-Auditor's grid (the
//! paper's eight protocols, eps in {0.25, ..., 10}, k in {25, ..., 200}) under `SEEDS`
//! seeds with the likelihood-ratio event, and prints the share of audits whose eps_emp
//! exceeds eps. With confidence bounds at level 1 - alpha, at most alpha is expected.
//!
//! `cargo run --release -p ldp-audit --example false_flags -- [TRIALS] [SEEDS]`
//! (defaults 1000000 and 20).

use ldp_audit::{AuditConfig, Statistic, audit_mechanism};
use ldp_core::{DomainSize, Epsilon, Protocol, Spec};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let trials: u64 = args.next().map_or(Ok(1_000_000), |a| a.parse())?;
    let seeds: u64 = args.next().map_or(Ok(20), |a| a.parse())?;
    // The paper's eight classic protocols.
    let protocols = &Protocol::PAPER[..8];
    let (mut audits, mut flagged) = (0u64, 0u64);
    for seed in 0..seeds {
        let mut this_seed = 0;
        for &protocol in protocols {
            for eps in [0.25, 0.5, 0.75, 1.0, 2.0, 4.0, 6.0, 10.0] {
                for k in [25, 50, 100, 150, 200] {
                    let mech = Spec::classic(protocol, DomainSize::new(k)?, Epsilon::new(eps)?)?
                        .build()?;
                    let config = AuditConfig {
                        trials,
                        seed,
                        statistics: vec![Statistic::LikelihoodRatio],
                        ..AuditConfig::default()
                    };
                    let audit = audit_mechanism(&mech, &config)?;
                    audits += 1;
                    if audit.flagged() == Some(true) {
                        flagged += 1;
                        this_seed += 1;
                        println!(
                            "seed {seed}: {} k = {k} eps = {eps}: eps_emp = {:.4}",
                            protocol.name(),
                            audit.eps_emp()
                        );
                    }
                }
            }
        }
        eprintln!("seed {seed}: {this_seed} of 320 flagged");
    }
    println!(
        "{flagged} of {audits} audits of correct clients flagged ({:.3}%), {trials} trials per input, alpha = 0.01",
        100.0 * flagged as f64 / audits as f64
    );
    Ok(())
}
