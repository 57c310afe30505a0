//! The multidimensional closed forms against the real `ldp_core::multidim` clients and
//! servers, and the reconstruction attack as `ldp-attack` runs it
//! (`ldp_core::AttackSurface::guess`), seeded: each measured mean within 3 standard errors
//! of its closed form, and the forms the closed forms replace rejected where they differ.

use ldp_analytic::LhAsr;
use ldp_analytic::multidim::{Collection, Population, Sampling, Unreported};
use ldp_analytic::variance;
use ldp_core::multidim::{Multidim, MultidimReport, Priors, Solution};
use ldp_core::simulation::{Role, stream_rng};
use ldp_core::{
    AttackSurface, DomainSize, Epsilon, Estimator, FamilyMechanism, Grr, Mechanism, ParamError,
    Protocol, Spec, UnaryEncoding,
};
use rand::RngExt;

/// Mean and standard error of a sample, accumulated.
#[derive(Default, Clone, Copy)]
struct Stat {
    n: f64,
    sum: f64,
    sum_sq: f64,
}

impl Stat {
    fn push(&mut self, x: f64) {
        self.n += 1.0;
        self.sum += x;
        self.sum_sq += x * x;
    }
    fn mean(&self) -> f64 {
        self.sum / self.n
    }
    fn se(&self) -> f64 {
        let m = self.mean();
        ((self.sum_sq / self.n - m * m).max(0.0) * self.n / (self.n - 1.0) / self.n).sqrt()
    }
    fn z(&self, expected: f64) -> f64 {
        (self.mean() - expected) / self.se()
    }
}

fn within(label: &str, s: &Stat, expected: f64) {
    println!(
        "{label}: measured {:.6e} ± {:.2e}, closed form {expected:.6e} (z = {:+.2})",
        s.mean(),
        s.se(),
        s.z(expected)
    );
    assert!(
        s.z(expected).abs() <= 3.0,
        "{label}: measured {} (SE {}) vs {expected}",
        s.mean(),
        s.se()
    );
}

fn domains(ks: &[u32]) -> Vec<DomainSize> {
    ks.iter().map(|&k| DomainSize::new(k).unwrap()).collect()
}

fn eps(e: f64) -> Epsilon {
    Epsilon::new(e).unwrap()
}

fn builder<M: FamilyMechanism>(
    protocol: Protocol,
) -> impl FnMut(DomainSize, Epsilon) -> Result<M, ParamError> {
    move |k, e| {
        let spec = Spec::classic(protocol, k, e).expect("classic");
        M::build(k, e, M::param_of(&spec.params()).expect("the same family"))
    }
}

/// Attribute j's truth: item v has weight (v + 1), item 0 a share of one half.
fn truth(k: u32) -> Vec<f64> {
    let rest: f64 = (1..k).map(|v| f64::from(v + 1)).sum();
    (0..k)
        .map(|v| {
            if v == 0 {
                0.5
            } else {
                0.5 * f64::from(v + 1) / rest
            }
        })
        .collect()
}

/// n fixed users, attribute j's column a deterministic quota of `truth(k_j)`, the columns
/// shuffled against each other by strides; returns the users and each column's exact
/// frequencies.
fn users(ks: &[u32], n: usize) -> (Vec<Vec<u32>>, Vec<Vec<f64>>) {
    let mut columns = Vec::new();
    let mut freqs = Vec::new();
    for (j, &k) in ks.iter().enumerate() {
        let mut column = Vec::with_capacity(n);
        for (v, f) in truth(k).iter().enumerate() {
            column.extend(std::iter::repeat_n(
                v as u32,
                (f * n as f64).round() as usize,
            ));
        }
        column.resize(n, k - 1);
        let stride = [1usize, 7919, 104_729][j % 3];
        let column: Vec<u32> = (0..n).map(|i| column[(i * stride) % n]).collect();
        let mut f = vec![0.0; k as usize];
        for &x in &column {
            f[x as usize] += 1.0 / n as f64;
        }
        columns.push(column);
        freqs.push(f);
    }
    let users = (0..n)
        .map(|i| columns.iter().map(|c| c[i]).collect())
        .collect();
    (users, freqs)
}

/// The squared error of item 0's unbiased estimate of every attribute over `runs`
/// collections of the fixed users.
fn squared_errors<M: Mechanism>(
    client: &Multidim<M>,
    users: &[Vec<u32>],
    freqs: &[Vec<f64>],
    runs: u64,
    seed: u64,
) -> Vec<Stat> {
    let mut stats = vec![Stat::default(); freqs.len()];
    for run in 0..runs {
        let mut rng = stream_rng(seed, run, Role::Genuine, 0);
        let mut server = client.aggregator();
        for items in users {
            server
                .add(&client.perturb(items, &mut rng).unwrap())
                .unwrap();
        }
        let Ok(est) = server.estimate(Estimator::Unbiased) else {
            continue; // SMP: an attribute nobody sampled (probability (1-1/d)^n)
        };
        for (j, s) in stats.iter_mut().enumerate() {
            s.push((est[j][0] - freqs[j][0]).powi(2));
        }
    }
    stats
}

fn check_variance<M: Mechanism>(label: &str, client: &Multidim<M>, n: usize, runs: u64) {
    let ks: Vec<u32> = client.domains().iter().map(|k| k.get()).collect();
    let (users, freqs) = users(&ks, n);
    let c = Collection::of(client);
    let stats = squared_errors(client, &users, &freqs, runs, 11);
    for (j, s) in stats.iter().enumerate() {
        let closed = c
            .variance(j, 0, n as f64, freqs[j][0], Population::Fixed)
            .unwrap();
        within(&format!("{label} attribute {j}"), s, closed);
    }
}

/// Every solution's per-attribute variance of item 0 (f = 1/2), with the real client and
/// server, fixed users.
#[test]
fn variance_matches_simulation_for_every_solution() {
    let ks = [4u32, 3, 5];
    let e = eps(2.0);
    let d = domains(&ks);
    let (n, runs) = (1000, 600);
    for solution in [Solution::Spl, Solution::Smp, Solution::RsFd] {
        let grr = Multidim::new(solution, e, &d, Grr::new).unwrap();
        check_variance(&format!("{solution:?} GRR"), &grr, n, runs);
    }
    for solution in [Solution::RsFd, Solution::RsFdNull] {
        let oue = Multidim::new(solution, e, &d, UnaryEncoding::optimized).unwrap();
        check_variance(&format!("{solution:?} OUE"), &oue, n, runs);
    }
    // Priors far from the truth (item 0 rare in them, a half in the data).
    let priors = Priors::new(
        ks.iter()
            .map(|&k| {
                let w: Vec<f64> = (0..k).map(|v| 1.0 + f64::from(v)).collect();
                let t: f64 = w.iter().sum();
                w.into_iter().map(|x| x / t).collect()
            })
            .collect(),
    )
    .unwrap();
    let grr = Multidim::with_priors(e, priors.clone(), Grr::new).unwrap();
    check_variance("RsRfd GRR", &grr, n, runs);
    let sue = Multidim::with_priors(e, priors, builder::<UnaryEncoding>(Protocol::Sue)).unwrap();
    check_variance("RsRfd SUE", &sue, n, runs);
}

/// The plug-in forms the closed forms replace are rejected by the same measurement:
/// RS+FD's `d^2 Var_exact(eps', n, g)` (no variance of which input a report carries) and
/// SMP's `Var_exact(eps, n/d, f)` (no sampling of the group).
#[test]
fn the_plug_in_forms_are_rejected() {
    let ks = [4u32, 3, 5];
    let (n, runs) = (1000usize, 600);
    let (users, freqs) = users(&ks, n);
    let f = freqs[0][0];
    let rsfd = Multidim::new(Solution::RsFd, eps(2.0), &domains(&ks), Grr::new).unwrap();
    let s = squared_errors(&rsfd, &users, &freqs, runs, 12)[0];
    let spec = rsfd.attributes()[0].spec();
    let g = f / 3.0 + 2.0 / 3.0 / 4.0;
    let plug_in = 9.0 * variance::exact(&spec, n as f64, g);
    let exact = Collection::of(&rsfd)
        .variance(0, 0, n as f64, f, Population::Fixed)
        .unwrap();
    println!(
        "RS+FD GRR: measured {:.4}/n, exact {:.4}/n, plug-in {:.4}/n",
        s.mean() * n as f64,
        exact * n as f64,
        plug_in * n as f64
    );
    within("RS+FD GRR exact", &s, exact);
    assert!(s.z(plug_in).abs() > 5.0, "z = {}", s.z(plug_in));

    let smp = Multidim::new(Solution::Smp, eps(2.0), &domains(&ks), Grr::new).unwrap();
    let s = squared_errors(&smp, &users, &freqs, runs, 13)[0];
    let spec = smp.attributes()[0].spec();
    let plug_in = variance::exact(&spec, n as f64 / 3.0, f);
    let exact = Collection::of(&smp)
        .variance(0, 0, n as f64, f, Population::Fixed)
        .unwrap();
    println!(
        "SMP GRR: measured {:.4}/n, exact {:.4}/n, plug-in {:.4}/n",
        s.mean() * n as f64,
        exact * n as f64,
        plug_in * n as f64
    );
    within("SMP GRR exact", &s, exact);
    assert!(s.z(plug_in).abs() > 5.0, "z = {}", s.z(plug_in));
}

/// SMP with few users: the exact expectation over the group size, measured; the mean
/// group size's value printed beside it.
#[test]
fn smp_exact_group_size_with_few_users() {
    let ks = [4u32, 3, 5];
    let (n, runs) = (30usize, 20_000);
    let (users, freqs) = users(&ks, n);
    let smp = Multidim::new(Solution::Smp, eps(1.0), &domains(&ks), Grr::new).unwrap();
    let s = squared_errors(&smp, &users, &freqs, runs, 14)[0];
    let spec = smp.attributes()[0].spec();
    let f = freqs[0][0];
    let exact = ldp_analytic::multidim::smp_variance(
        &spec,
        3,
        n as f64,
        f,
        Population::Fixed,
        ldp_analytic::multidim::SmpGroup::Exact,
    )
    .unwrap();
    let mean = ldp_analytic::multidim::smp_variance(
        &spec,
        3,
        n as f64,
        f,
        Population::Fixed,
        ldp_analytic::multidim::SmpGroup::Mean,
    )
    .unwrap();
    println!("SMP n = 30: mean group size z = {:+.2}", s.z(mean));
    within("SMP n = 30 exact group size", &s, exact);
}

/// Users drawn independently from the truth each run: the Sampled population, about the
/// distribution's frequency.
#[test]
fn sampled_population_matches_simulation() {
    let ks = [4u32, 3];
    let (n, runs) = (800usize, 1500);
    let client = Multidim::new(
        Solution::RsFd,
        eps(1.5),
        &domains(&ks),
        UnaryEncoding::optimized,
    )
    .unwrap();
    let c = Collection::of(&client);
    let truths: Vec<Vec<f64>> = ks.iter().map(|&k| truth(k)).collect();
    let mut stats = vec![Stat::default(); ks.len()];
    for run in 0..runs {
        let mut rng = stream_rng(15, run, Role::Genuine, 0);
        let mut server = client.aggregator();
        for _ in 0..n {
            let items: Vec<u32> = truths
                .iter()
                .map(|t| {
                    let mut u: f64 = rng.random();
                    let mut v = 0;
                    while v + 1 < t.len() && u >= t[v] {
                        u -= t[v];
                        v += 1;
                    }
                    v as u32
                })
                .collect();
            server
                .add(&client.perturb(&items, &mut rng).unwrap())
                .unwrap();
        }
        let est = server.estimate(Estimator::Unbiased).unwrap();
        for (j, s) in stats.iter_mut().enumerate() {
            s.push((est[j][0] - truths[j][0]).powi(2));
        }
    }
    for (j, s) in stats.iter().enumerate() {
        let closed = c
            .variance(j, 0, n as f64, truths[j][0], Population::Sampled)
            .unwrap();
        within(&format!("RS+FD OUE sampled, attribute {j}"), s, closed);
    }
}

/// The attack on every attribute of one report, as `ldp-attack` runs it: the family's
/// guess on each report; an SMP attribute not reported, a uniform guess.
fn attack<M: AttackSurface>(
    client: &Multidim<M>,
    report: &MultidimReport<M::Report>,
    rng: &mut impl rand::Rng,
) -> Vec<u32> {
    (0..client.dimensions())
        .map(|j| match report.of(j) {
            Some(r) => client.attributes()[j].guess(r, rng),
            None => rng.random_range(0..client.attributes()[j].domain_size().get()),
        })
        .collect()
}

/// Per-attribute and joint success over `n` users; items uniform (`users = None`) or the
/// given users.
fn measure_asr<M: AttackSurface>(
    client: &Multidim<M>,
    n: usize,
    users: Option<&[Vec<u32>]>,
    seed: u64,
) -> (Vec<Stat>, Stat) {
    let d = client.dimensions();
    let mut rng = stream_rng(seed, 0, Role::Genuine, 0);
    let mut arng = stream_rng(seed, 0, Role::Attacker, 0);
    let mut each = vec![Stat::default(); d];
    let mut joint = Stat::default();
    for i in 0..n {
        let items: Vec<u32> = match users {
            Some(u) => u[i % u.len()].clone(),
            None => client
                .domains()
                .iter()
                .map(|k| rng.random_range(0..k.get()))
                .collect(),
        };
        let report = client.perturb(&items, &mut rng).unwrap();
        let guess = attack(client, &report, &mut arng);
        let right: Vec<bool> = guess.iter().zip(&items).map(|(g, x)| g == x).collect();
        for (s, &r) in each.iter_mut().zip(&right) {
            s.push(f64::from(u8::from(r)));
        }
        joint.push(f64::from(u8::from(right.iter().all(|&r| r))));
    }
    (each, joint)
}

fn check_asr<M: AttackSurface>(label: &str, client: &Multidim<M>, n: usize) {
    let c = Collection::of(client);
    let (each, joint) = measure_asr(client, n, None, 21);
    for (j, s) in each.iter().enumerate() {
        within(
            &format!("{label} ASR attribute {j}"),
            s,
            c.asr(j, LhAsr::Exact).unwrap(),
        );
    }
    within(
        &format!("{label} joint ASR"),
        &joint,
        c.asr_joint(LhAsr::Exact).unwrap(),
    );
}

/// Uniform items: every solution's per-attribute and joint ASR.
#[test]
fn asr_matches_the_attack_for_every_solution() {
    let ks = [2u32, 3, 4];
    let d = domains(&ks);
    let e = eps(2.5);
    let n = 60_000;
    for solution in [Solution::Spl, Solution::Smp, Solution::RsFd] {
        let grr = Multidim::new(solution, e, &d, Grr::new).unwrap();
        check_asr(&format!("{solution:?} GRR"), &grr, n);
    }
    for solution in [Solution::Smp, Solution::RsFd, Solution::RsFdNull] {
        let oue = Multidim::new(solution, e, &d, UnaryEncoding::optimized).unwrap();
        check_asr(&format!("{solution:?} OUE"), &oue, n);
    }
    let sue = Multidim::new(
        Solution::RsFdNull,
        e,
        &d,
        builder::<UnaryEncoding>(Protocol::Sue),
    )
    .unwrap();
    check_asr("RsFdNull SUE", &sue, n);
    // RS+RFD under uniform items: the fakes' guesses are right w.p. 1/k whatever the prior.
    let priors = Priors::new(vec![
        vec![0.9, 0.1],
        vec![0.6, 0.3, 0.1],
        vec![0.7, 0.1, 0.1, 0.1],
    ])
    .unwrap();
    let grr = Multidim::with_priors(e, priors.clone(), Grr::new).unwrap();
    check_asr("RsRfd GRR", &grr, n);
    let oue = Multidim::with_priors(e, priors, UnaryEncoding::optimized).unwrap();
    check_asr("RsRfd OUE", &oue, n);
}

/// Exactly one RS+ report is genuine: the product of the per-attribute ASRs is rejected.
#[test]
fn the_product_of_marginals_is_not_the_joint_asr() {
    let client = Multidim::new(Solution::RsFd, eps(3.0), &domains(&[2, 3]), Grr::new).unwrap();
    let c = Collection::of(&client);
    let (_, joint) = measure_asr(&client, 40_000, None, 22);
    within(
        "RS+FD GRR joint",
        &joint,
        c.asr_joint(LhAsr::Exact).unwrap(),
    );
    let product = c.asr_joint_product(LhAsr::Exact).unwrap();
    println!(
        "product of marginals {product:.4}: z = {:+.1}",
        joint.z(product)
    );
    assert!(joint.z(product).abs() > 10.0);
}

/// RS+RFD on skewed data: the fakes' guesses favour the prior's items, so the success
/// depends on the data (prior close to the truth, and far from it).
#[test]
fn rsrfd_asr_depends_on_the_data() {
    let ks = [4u32, 3, 5];
    let n = 6000;
    let (users, freqs) = users(&ks, n);
    let close = Priors::new(freqs.clone()).unwrap();
    let far = Priors::new(
        freqs
            .iter()
            .map(|f| f.iter().rev().copied().collect())
            .collect(),
    )
    .unwrap();
    for (name, priors) in [("close", close), ("far", far)] {
        for family in ["GRR", "OUE"] {
            let label = format!("RS+RFD {family}, prior {name}");
            let (each, joint, c) = if family == "GRR" {
                let m = Multidim::with_priors(eps(2.0), priors.clone(), Grr::new).unwrap();
                let (e, j) = measure_asr(&m, 10 * n, Some(&users), 23);
                (e, j, Collection::of(&m))
            } else {
                let m = Multidim::with_priors(eps(2.0), priors.clone(), UnaryEncoding::optimized)
                    .unwrap();
                let (e, j) = measure_asr(&m, 10 * n, Some(&users), 24);
                (e, j, Collection::of(&m))
            };
            for (j, s) in each.iter().enumerate() {
                let closed = c.asr_for(j, &freqs[j], LhAsr::Exact).unwrap();
                within(&format!("{label} attribute {j}"), s, closed);
            }
            let closed = c.asr_joint_for(&users, LhAsr::Exact).unwrap();
            within(&format!("{label} joint"), &joint, closed);
        }
    }
}

/// Profiling over S SMP surveys, both samplings, both treatments of an unreported
/// attribute, measured on simulated users.
#[test]
fn profile_matches_simulation() {
    let ks = [3u32, 4, 2];
    let n = 30_000;
    let grr = Multidim::new(Solution::Smp, eps(1.5), &domains(&ks), Grr::new).unwrap();
    let oue = Multidim::new(
        Solution::Smp,
        eps(1.5),
        &domains(&ks),
        UnaryEncoding::optimized,
    )
    .unwrap();
    for surveys in [1u32, 2, 3, 5] {
        for sampling in [Sampling::WithoutRepetition, Sampling::WithRepetition] {
            for unreported in [
                Unreported::Missing,
                Unreported::Guessed,
                Unreported::Ignored,
            ] {
                let seed = 100 + u64::from(surveys);
                let label = format!("S = {surveys} {sampling:?} {unreported:?}");
                check_profile(
                    &format!("GRR {label}"),
                    &grr,
                    surveys,
                    sampling,
                    unreported,
                    n,
                    seed,
                );
                check_profile(
                    &format!("OUE {label}"),
                    &oue,
                    surveys,
                    sampling,
                    unreported,
                    n,
                    seed,
                );
            }
        }
    }
}

fn check_profile<M: AttackSurface>(
    label: &str,
    client: &Multidim<M>,
    surveys: u32,
    sampling: Sampling,
    unreported: Unreported,
    n: usize,
    seed: u64,
) {
    let d = client.dimensions();
    let mut rng = stream_rng(seed, 0, Role::Genuine, 0);
    let mut arng = stream_rng(seed, 0, Role::Attacker, 0);
    let (mut all, mut count) = (Stat::default(), Stat::default());
    for _ in 0..n {
        let items: Vec<u32> = client
            .domains()
            .iter()
            .map(|k| rng.random_range(0..k.get()))
            .collect();
        let mut profile: Vec<Option<u32>> = vec![None; d];
        for _ in 0..surveys {
            match sampling {
                Sampling::WithRepetition => {
                    let report = client.perturb(&items, &mut rng).unwrap();
                    let MultidimReport::Sampled { attribute, report } = report else {
                        panic!("SMP names its attribute");
                    };
                    let j = attribute as usize;
                    // Memoized: a repeated attribute is the same report, the same guess.
                    if profile[j].is_none() {
                        profile[j] = Some(client.attributes()[j].guess(&report, &mut arng));
                    }
                }
                Sampling::WithoutRepetition => {
                    let open: Vec<usize> = (0..d).filter(|&j| profile[j].is_none()).collect();
                    if open.is_empty() {
                        break;
                    }
                    let j = open[rng.random_range(0..open.len())];
                    let m = &client.attributes()[j];
                    let report = m.perturb(items[j], &mut rng).unwrap();
                    profile[j] = Some(m.guess(&report, &mut arng));
                }
            }
        }
        let right: Vec<bool> = (0..d)
            .map(|j| {
                if profile[j].is_none() && unreported == Unreported::Ignored {
                    return true;
                }
                let guess = profile[j].or(match unreported {
                    Unreported::Missing | Unreported::Ignored => None,
                    Unreported::Guessed => {
                        Some(arng.random_range(0..client.attributes()[j].domain_size().get()))
                    }
                });
                guess == Some(items[j])
            })
            .collect();
        all.push(f64::from(u8::from(right.iter().all(|&r| r))));
        count.push(right.iter().filter(|&&r| r).count() as f64);
    }
    let closed = Collection::of(client)
        .profile(surveys, sampling, unreported, LhAsr::Exact)
        .unwrap();
    if closed.all_correct == 0.0 {
        assert_eq!(all.sum, 0.0, "{label}: all correct");
    } else {
        within(&format!("{label} all correct"), &all, closed.all_correct);
    }
    within(
        &format!("{label} expected correct"),
        &count,
        closed.expected_correct,
    );
}
