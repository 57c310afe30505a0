//! Pool inference (Gadotti et al. 2022) on real reports.

use ldp_attack::pool::{
    Block, Knowledge, PoolAttacker, PoolConfig, PoolError, Pools, PoolsError, Preferences,
    measure_pools, report_log_likelihoods, simulate_run,
};
use ldp_core::simulation::{Role, stream_rng};
use ldp_core::{AttackSurface, DomainSize, Epsilon, Family, Mechanism, Protocol, Spec, dispatch};

fn eps(v: f64) -> Epsilon {
    Epsilon::new(v).unwrap()
}

fn k(v: u32) -> DomainSize {
    DomainSize::new(v).unwrap()
}

/// Three pools of ten items in `0..60`; the rest is `30..60`.
fn three_pools() -> Pools {
    Pools::consecutive(k(60), 3, 10).unwrap()
}

/// ln P[r | x] for every x, from the mechanism's own `log_likelihoods`, beside the
/// attack's (shifted) values from the evidence.
fn both<M: Mechanism + AttackSurface>(m: &M, r: &M::Report) -> (Vec<f64>, Option<Vec<f64>>) {
    let mut exact = Vec::new();
    m.log_likelihoods(r, &mut exact);
    let (mut fast, mut scratch) = (Vec::new(), Vec::new());
    let fast = report_log_likelihoods(m, r, &mut fast, &mut scratch).map(|()| fast);
    (exact, fast)
}

#[test]
fn the_evidence_gives_every_protocols_exact_likelihoods() {
    let mut families = Vec::new();
    for protocol in Protocol::ALL {
        // The adaptive protocols are their families' mechanisms at a tuned parameter.
        let Ok(spec) = Spec::classic(protocol, k(12), eps(2.0)) else {
            continue;
        };
        families.push(spec.family());
        let mut rng = stream_rng(5, 0, Role::Genuine, 0);
        dispatch!(spec.build().unwrap(), m => {
            for x in 0..12 {
                let r = m.perturb(x, &mut rng).unwrap();
                let (exact, fast) = both(&m, &r);
                let top = exact.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                match fast {
                    None => assert!(exact.iter().all(|&l| l == top), "{protocol:?}"),
                    Some(fast) => {
                        // Equal up to one constant: compare the differences to the first item.
                        for (e, f) in exact.iter().zip(&fast) {
                            let d = (e - exact[0]) - (f - fast[0]);
                            assert!(d.abs() < 1e-9, "{protocol:?} item {x}: off by {d}");
                        }
                    }
                }
            }
        });
    }
    families.dedup();
    assert_eq!(families, Family::ALL);
}

/// The posterior by brute force: the mechanism's own likelihoods, the model's mixture
/// written out item by item, and the integral over the reference's `(alpha, beta)` triangle
/// with the density `1 / (alpha + beta)` (nested Gauss-Legendre, 400 x 400 nodes; the
/// corner's log singularity costs about 1e-4). With `jacobian = false`, the flat density
/// the paper wrote.
fn brute_force(
    pools: &Pools,
    phi: &[f64],
    log_likelihoods: &[Vec<f64>],
    jacobian: bool,
) -> Vec<f64> {
    let n = pools.pools().len();
    let nf = n as f64;
    let block = |x: u32| {
        pools
            .pools()
            .iter()
            .position(|p| p.contains(&x))
            .unwrap_or(n)
    };
    let like: Vec<Vec<f64>> = log_likelihoods
        .iter()
        .map(|l| {
            let top = l.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            l.iter().map(|v| (v - top).exp()).collect()
        })
        .collect();
    let (z, w) = gl(400);
    let mut post: Vec<f64> = (0..n)
        .map(|u| {
            let mut total = 0.0;
            let b_hi = 1.0 - 1.0 / nf;
            for (&zb, &wb) in z.iter().zip(&w) {
                let beta = b_hi * (zb + 1.0) / 2.0;
                let (a_lo, a_hi) = (beta / (nf - 1.0), 1.0 - beta);
                for (&za, &wa) in z.iter().zip(&w) {
                    let alpha = a_lo + (a_hi - a_lo) * (za + 1.0) / 2.0;
                    let mut f = 1.0;
                    for l in &like {
                        let p: f64 = (0..pools.k().get())
                            .map(|x| {
                                let b = block(x);
                                let share = if b == u {
                                    alpha
                                } else if b < n {
                                    beta / (nf - 1.0)
                                } else {
                                    1.0 - alpha - beta
                                };
                                share * phi[x as usize] * l[x as usize]
                            })
                            .sum();
                        f *= p;
                    }
                    let density = if jacobian { 1.0 / (alpha + beta) } else { 1.0 };
                    total += wb * wa * b_hi / 2.0 * (a_hi - a_lo) / 2.0 * f * density;
                }
            }
            total
        })
        .collect();
    let s: f64 = post.iter().sum();
    post.iter_mut().for_each(|p| *p /= s);
    post
}

fn gl(n: usize) -> (Vec<f64>, Vec<f64>) {
    // Golub-Welsch would do; Newton on the recurrence is enough here.
    let (mut z, mut w) = (vec![0.0; n], vec![0.0; n]);
    for i in 0..n {
        let mut x = (std::f64::consts::PI * (i as f64 + 0.75) / (n as f64 + 0.5)).cos();
        let mut dp = 1.0;
        for _ in 0..100 {
            let (mut p0, mut p1) = (1.0, x);
            for j in 2..=n {
                let p2 = ((2 * j - 1) as f64 * x * p1 - (j - 1) as f64 * p0) / j as f64;
                (p0, p1) = (p1, p2);
            }
            dp = n as f64 * (x * p1 - p0) / (x * x - 1.0);
            let dx = p1 / dp;
            x -= dx;
            if dx.abs() < 1e-15 {
                break;
            }
        }
        z[i] = x;
        w[i] = 2.0 / ((1.0 - x * x) * dp * dp);
    }
    (z, w)
}

#[test]
fn the_posterior_matches_brute_force_on_a_tiny_domain() {
    // Pools {0, 1} and {2}, rest {3, 4}; the attacker knows the Zipf law (unequal weights).
    let pools = Pools::new(k(5), vec![vec![0, 1], vec![2]]).unwrap();
    let zipf = 1.2;
    let phi = {
        let w = |len: usize| -> Vec<f64> {
            let v: Vec<f64> = (1..=len).map(|r| (r as f64).powf(-zipf)).collect();
            let s: f64 = v.iter().sum();
            v.into_iter().map(|x| x / s).collect()
        };
        let mut phi = w(2);
        phi.extend(w(1));
        phi.extend(w(2));
        phi
    };
    let attacker = PoolAttacker::new(&pools, Knowledge::Exact, zipf, 20);
    let (mut worst, mut flat_gap) = (0.0f64, 0.0f64);
    for (i, protocol) in [
        Protocol::Grr,
        Protocol::Oue,
        Protocol::Olh,
        Protocol::She,
        Protocol::Cms,
    ]
    .into_iter()
    .enumerate()
    {
        let spec = Spec::classic(protocol, k(5), eps(3.0)).unwrap();
        let mut rng = stream_rng(11, i as u64, Role::Genuine, 0);
        dispatch!(spec.build().unwrap(), m => {
            for records in [vec![0, 0, 1], vec![2, 2, 2], vec![3, 0, 4, 2]] {
                let reports: Vec<_> = records.iter().map(|&x| m.perturb(x, &mut rng).unwrap()).collect();
                let exact: Vec<Vec<f64>> = reports.iter().map(|r| both(&m, r).0).collect();
                let sums: Vec<Option<Vec<f64>>> = reports
                    .iter()
                    .map(|r| both(&m, r).1.and_then(|l| attacker.sums(&l)))
                    .collect();
                let t = records.len() as u32;
                let ours = &attacker.posteriors(&sums, &[t])[0];
                let truth = brute_force(&pools, &phi, &exact, true);
                let flat = brute_force(&pools, &phi, &exact, false);
                for u in 0..2 {
                    worst = worst.max((ours[u] - truth[u]).abs());
                    flat_gap = flat_gap.max((ours[u] - flat[u]).abs());
                }
            }
        });
    }
    assert!(worst < 2e-3, "largest gap to brute force {worst}");
    // The paper's flat density in (alpha, beta) gives other posteriors: the check can tell.
    assert!(
        flat_gap > 1e-2,
        "the Jacobian made no visible difference ({flat_gap})"
    );
}

#[test]
fn more_quadrature_nodes_change_little() {
    let pools = three_pools();
    let spec = Spec::classic(Protocol::Oue, k(60), eps(2.0)).unwrap();
    let base = PoolConfig {
        users: 60,
        ..PoolConfig::reference(1, 3, &[10, 90])
    };
    let coarse = simulate_run(&spec, &pools, &base, 0).unwrap();
    let fine = simulate_run(
        &spec,
        &pools,
        &PoolConfig {
            quadrature: 60,
            ..base.clone()
        },
        0,
    )
    .unwrap();
    let mut worst = 0.0f64;
    for (a, b) in coarse.iter().zip(&fine) {
        assert_eq!(a.pool, b.pool); // the same users
        for (pa, pb) in a.posteriors.iter().zip(&b.posteriors) {
            for (x, y) in pa.iter().zip(pb) {
                worst = worst.max((x - y).abs());
            }
        }
    }
    assert!(worst < 1e-2, "20 and 60 nodes per axis differ by {worst}");
}

#[test]
fn a_strong_budget_reveals_the_pool_and_a_tiny_one_reveals_nothing() {
    let pools = three_pools();
    // Every record from the preferred pool: the pool is there to be found.
    let config = PoolConfig {
        users: 300,
        preferences: Preferences::Fixed {
            gamma: 1.0,
            delta: 1.0,
        },
        ..PoolConfig::reference(2, 17, &[1, 40])
    };
    let strong = Spec::classic(Protocol::Grr, k(60), eps(12.0)).unwrap();
    let m = measure_pools(&strong, &pools, &config).unwrap();
    // One report is already nearly the item; forty leave no doubt.
    assert!(m.auc[1].mean > 0.99, "{:?}", m.auc);
    assert!(m.roc_auc[1].mean > 0.999, "{:?}", m.roc_auc);
    assert!(m.precision[1][0].mean > 0.99, "{:?}", m.precision);

    let blind = Spec::classic(Protocol::Grr, k(60), eps(0.01)).unwrap();
    let config = PoolConfig {
        users: 900,
        ..config
    };
    let m = measure_pools(&blind, &pools, &config).unwrap();
    assert!((m.null_precision - 1.0 / 3.0).abs() < 1e-12);
    for c in 0..2 {
        // 900 users per run: the SE of an AUC near 0.5 is below 0.02.
        assert!((m.roc_auc[c].mean - 0.5).abs() < 0.06, "{:?}", m.roc_auc);
        assert!((m.auc[c].mean - 1.0 / 3.0).abs() < 0.08, "{:?}", m.auc);
    }
}

#[test]
fn more_records_help_the_reference_attacker() {
    let pools = three_pools();
    let spec = Spec::classic(Protocol::Olh, k(60), eps(2.0)).unwrap();
    let config = PoolConfig {
        users: 400,
        ..PoolConfig::reference(1, 9, &[2, 100])
    };
    let m = measure_pools(&spec, &pools, &config).unwrap();
    assert!(m.auc[1].mean > m.auc[0].mean + 0.1, "{:?}", m.auc);
    assert!(m.roc_auc[1].mean > 0.65, "{:?}", m.roc_auc);
}

#[test]
fn results_are_identical_for_one_and_three_threads() {
    let pools = three_pools();
    let spec = Spec::classic(Protocol::Oue, k(60), eps(1.0)).unwrap();
    // Two batches of users (4096 per stream), two runs.
    let config = PoolConfig {
        users: 4200,
        ..PoolConfig::reference(2, 23, &[3, 8])
    };
    let run = |threads| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
            .install(|| {
                (
                    measure_pools(&spec, &pools, &config).unwrap(),
                    simulate_run(&spec, &pools, &config, 1).unwrap(),
                )
            })
    };
    let (one, three) = (run(1), run(3));
    assert_eq!(one, three);
    assert_eq!(one.1.len(), 4200);
}

#[test]
fn bad_pools_are_named() {
    let ten = k(10);
    assert_eq!(
        Pools::new(ten, vec![vec![0, 1]]),
        Err(PoolsError::TooFewPools { pools: 1 })
    );
    assert_eq!(
        Pools::new(ten, vec![vec![0], vec![]]),
        Err(PoolsError::EmptyPool {
            block: Block::Pool(1)
        })
    );
    assert_eq!(
        Pools::new(ten, vec![vec![0], vec![10]]),
        Err(PoolsError::OutsideDomain {
            item: 10,
            block: Block::Pool(1),
            k: 10
        })
    );
    assert_eq!(
        Pools::new(ten, vec![vec![0, 3], vec![4, 3]]),
        Err(PoolsError::Overlap {
            item: 3,
            first: Block::Pool(0),
            second: Block::Pool(1)
        })
    );
    assert_eq!(
        Pools::new(ten, vec![vec![2, 2], vec![4]]),
        Err(PoolsError::Overlap {
            item: 2,
            first: Block::Pool(0),
            second: Block::Pool(0)
        })
    );
    // Pools covering the domain leave the rest, which the model needs, empty.
    assert_eq!(
        Pools::new(ten, vec![(0..5).collect(), (5..10).collect()]),
        Err(PoolsError::EmptyPool { block: Block::Rest })
    );
    assert_eq!(
        Pools::with_rest(ten, vec![vec![0], vec![1]], (2..9).collect()),
        Err(PoolsError::LeftOut { item: 9 })
    );
    assert_eq!(
        Pools::with_rest(ten, vec![vec![0], vec![1]], (1..10).collect()),
        Err(PoolsError::Overlap {
            item: 1,
            first: Block::Pool(1),
            second: Block::Rest
        })
    );
    assert_eq!(
        Pools::with_rest(ten, vec![vec![0], vec![1]], vec![]),
        Err(PoolsError::EmptyPool { block: Block::Rest })
    );
    let fine = Pools::with_rest(ten, vec![vec![0], vec![1]], (2..10).rev().collect()).unwrap();
    assert_eq!(fine.rest()[0], 9);
    assert_eq!(
        Pools::consecutive(ten, 3, 4),
        Err(PoolsError::OutsideDomain {
            item: 10,
            block: Block::Pool(2),
            k: 10
        })
    );
}

#[test]
fn bad_settings_are_named() {
    let pools = three_pools();
    let spec = Spec::classic(Protocol::Grr, k(60), eps(1.0)).unwrap();
    let ok = PoolConfig {
        users: 10,
        ..PoolConfig::reference(1, 1, &[1, 2])
    };
    let check = |c: PoolConfig| measure_pools(&spec, &pools, &c).unwrap_err();
    let other = Spec::classic(Protocol::Grr, k(61), eps(1.0)).unwrap();
    assert_eq!(
        measure_pools(&other, &pools, &ok).unwrap_err(),
        PoolError::DomainMismatch {
            spec: 61,
            pools: 60
        }
    );
    assert_eq!(
        check(PoolConfig {
            runs: 0,
            ..ok.clone()
        }),
        PoolError::NoRuns
    );
    assert_eq!(
        check(PoolConfig {
            users: 0,
            ..ok.clone()
        }),
        PoolError::NoUsers
    );
    for records in [vec![], vec![0, 3], vec![3, 3], vec![5, 2]] {
        assert_eq!(
            check(PoolConfig {
                records: records.clone(),
                ..ok.clone()
            }),
            PoolError::Records { records }
        );
    }
    for zipf in [-0.5, f64::INFINITY] {
        assert_eq!(
            check(PoolConfig { zipf, ..ok.clone() }),
            PoolError::Zipf { zipf }
        );
    }
    assert!(matches!(
        check(PoolConfig {
            zipf: f64::NAN,
            ..ok.clone()
        }),
        PoolError::Zipf { zipf } if zipf.is_nan()
    ));
    // delta below 1/n = 1/3.
    assert_eq!(
        check(PoolConfig {
            preferences: Preferences::Fixed {
                gamma: 0.5,
                delta: 0.3
            },
            ..ok.clone()
        }),
        PoolError::Preferences {
            gamma: 0.5,
            delta: 0.3,
            low: 1.0 / 3.0
        }
    );
    for nodes in [0, 201] {
        assert_eq!(
            check(PoolConfig {
                quadrature: nodes,
                ..ok.clone()
            }),
            PoolError::Quadrature { nodes }
        );
    }
    assert!(measure_pools(&spec, &pools, &ok).is_ok());
}
