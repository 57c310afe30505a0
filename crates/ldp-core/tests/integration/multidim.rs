//! Several attributes: the solutions' estimates against simulation for every family, their
//! likelihoods against exhaustive enumeration and sampling, their exact privacy ratios,
//! and bad input.

use ldp_core::estimate::{FitOptions, support_estimate};
use ldp_core::multidim::{Multidim, MultidimError, MultidimReport, Priors, Solution};
use ldp_core::simulation::Role;
use ldp_core::{
    AggregateError, Aggregator, DomainSize, Epsilon, Estimator, FamilyMechanism, Grr, Mechanism,
    OnesReport, ParamError, Protocol, PureProtocol, Spec, UnaryEncoding, dispatch,
};

use crate::common::{ALPHA, chi_square_p};
use ldp_core::simulation::stream_rng;

fn domains(ks: &[u32]) -> Vec<DomainSize> {
    ks.iter().map(|&k| DomainSize::new(k).unwrap()).collect()
}

fn eps(e: f64) -> Epsilon {
    Epsilon::new(e).unwrap()
}

/// A skewed distribution over `0..k`: item v has weight v + 1, item 1 none.
fn truth(k: u32) -> Vec<f64> {
    let w: Vec<f64> = (0..k)
        .map(|v| if v == 1 { 0.0 } else { (v + 1) as f64 })
        .collect();
    let total: f64 = w.iter().sum();
    w.into_iter().map(|x| x / total).collect()
}

/// Users whose attribute j follows `truth(k_j)` exactly (each attribute's column is a
/// deterministic quota, shuffled against the others by a per-attribute stride).
fn users(ks: &[u32], n: usize) -> Vec<Vec<u32>> {
    let columns: Vec<Vec<u32>> = ks
        .iter()
        .enumerate()
        .map(|(j, &k)| {
            let f = truth(k);
            let mut column = Vec::with_capacity(n);
            for (v, fv) in f.iter().enumerate() {
                column.extend(std::iter::repeat_n(
                    v as u32,
                    (fv * n as f64).round() as usize,
                ));
            }
            column.resize(n, 0);
            let stride = [1usize, 7919, 104_729][j % 3];
            (0..n).map(|i| column[(i * stride) % n]).collect()
        })
        .collect();
    (0..n)
        .map(|i| columns.iter().map(|c| c[i]).collect())
        .collect()
}

/// Mean and standard error over `runs` independent collections of each attribute's
/// estimate; asserts each coordinate within 5 SE of the users' true frequency.
fn check_unbiased<M: Mechanism>(mech: &Multidim<M>, estimator: Estimator, runs: u64, n: usize) {
    let ks: Vec<u32> = mech.domains().iter().map(|k| k.get()).collect();
    let data = users(&ks, n);
    let mut sum: Vec<Vec<f64>> = ks.iter().map(|&k| vec![0.0; k as usize]).collect();
    let mut sum_sq = sum.clone();
    for run in 0..runs {
        let mut rng = stream_rng(41, run, Role::Genuine, 0);
        let mut server = mech.aggregator();
        for items in &data {
            server.add(&mech.perturb(items, &mut rng).unwrap()).unwrap();
        }
        let est = server.estimate(estimator).unwrap();
        for (j, attribute) in est.iter().enumerate() {
            for (v, &x) in attribute.iter().enumerate() {
                sum[j][v] += x;
                sum_sq[j][v] += x * x;
            }
        }
    }
    let r = runs as f64;
    for (j, &k) in ks.iter().enumerate() {
        let f = truth(k);
        for v in 0..k as usize {
            let mean = sum[j][v] / r;
            let var = (sum_sq[j][v] / r - mean * mean).max(0.0) * r / (r - 1.0);
            let se = (var / r).sqrt();
            assert!(
                (mean - f[v]).abs() <= 5.0 * se + 1e-12,
                "{:?} {:?}, attribute {j} item {v}: mean {mean} vs {} (SE {se})",
                mech.solution(),
                mech.attributes()[0].spec(),
                f[v]
            );
        }
    }
}

fn priors(ks: &[u32]) -> Priors {
    // Deliberately not the truth: the estimate must not depend on the prior being right.
    Priors::new(
        ks.iter()
            .map(|&k| {
                let w: Vec<f64> = (0..k).map(|v| 1.0 + (v % 3) as f64).collect();
                let t: f64 = w.iter().sum();
                w.into_iter().map(|x| x / t).collect()
            })
            .collect(),
    )
    .unwrap()
}

/// `build(k, eps)` for a classic protocol of family `M`.
fn builder<M: FamilyMechanism>(
    protocol: Protocol,
) -> impl FnMut(DomainSize, Epsilon) -> Result<M, ParamError> {
    move |k, e| {
        let spec = Spec::classic(protocol, k, e).map_err(|_| ParamError::Parameter {
            name: "protocol",
            description: "the protocol",
            requirement: "be classic".into(),
            value: f64::NAN,
        })?;
        M::build(k, e, M::param_of(&spec.params()).expect("the same family"))
    }
}

/// Checks every solution `protocol` admits; returns how many ran.
fn every_solution<M: FamilyMechanism>(
    _: &M,
    protocol: Protocol,
    ks: &[u32],
    total: Epsilon,
) -> usize {
    let mut covered = 0;
    for solution in [
        Solution::Spl,
        Solution::Smp,
        Solution::RsFd,
        Solution::RsFdNull,
    ] {
        match Multidim::new(solution, total, &domains(ks), builder::<M>(protocol)) {
            Ok(m) => {
                check_unbiased(&m, Estimator::Unbiased, 12, 3000);
                covered += 1;
            }
            Err(MultidimError::NoNullInput { .. }) if solution == Solution::RsFdNull => {}
            // Some large-domain oracles refuse these small domains or budgets.
            Err(MultidimError::Param { .. }) => {}
            Err(e) => panic!("{protocol}: {solution:?}: {e}"),
        }
    }
    if let Ok(m) = Multidim::with_priors(total, priors(ks), builder::<M>(protocol)) {
        check_unbiased(&m, Estimator::Unbiased, 12, 3000);
        covered += 1;
    }
    covered
}

/// Every classic protocol's family under every solution it admits: the unbiased estimate
/// is unbiased, fakes and all.
#[test]
fn every_solution_is_unbiased_for_every_family() {
    let ks = [6u32, 3, 4];
    let total = eps(2.0);
    let mut covered = 0;
    for protocol in Protocol::ALL {
        // A spec at some budget: only to know the family and whether it is classic.
        let Ok(probe) = Spec::classic(protocol, DomainSize::new(6).unwrap(), total) else {
            continue;
        };
        let Ok(mech) = probe.build() else { continue };
        covered += dispatch!(mech, first => every_solution(&first, protocol, &ks, total));
    }
    // The paper's eight families at least: SPL, SMP, RS+FD, RS+RFD each, RS+FD-z for UE, THE.
    assert!(covered >= 8 * 4 + 2, "only {covered} combinations ran");
}

/// The estimators that read the channel get the shifted (p*, q*): the unbiased estimate
/// from the shifted channel is the affine map of the family's, and IBU converges near
/// the truth.
#[test]
fn rsfd_shifts_the_channel_consistently() {
    let ks = [5u32, 3];
    let m = Multidim::new(Solution::RsFd, eps(1.5), &domains(&ks), Grr::new).unwrap();
    let mut server = m.aggregator();
    let mut rng = stream_rng(42, 0, Role::Genuine, 0);
    for items in users(&ks, 40_000) {
        server.add(&m.perturb(&items, &mut rng).unwrap()).unwrap();
    }
    let affine = server.estimate(Estimator::Unbiased).unwrap();
    let grr = &m.attributes()[0];
    let (p, q) = (grr.p_star(), grr.q_star());
    let (d, k) = (2.0, 5.0);
    let s = q + (p - q) / k;
    let shifted = support_estimate(
        server.attribute(0).counts(),
        40_000,
        p / d + (d - 1.0) / d * s,
        q / d + (d - 1.0) / d * s,
    )
    .unwrap();
    for (a, b) in affine[0].iter().zip(&shifted) {
        assert!((a - b).abs() < 1e-9, "{a} vs {b}");
    }
    let ibu = server
        .fit(0, Estimator::Ibu, &FitOptions::default())
        .unwrap()
        .values;
    for (est, f) in ibu.iter().zip(truth(5)) {
        assert!((est - f).abs() < 0.03, "IBU {est} vs {f}");
    }
    // RS+RFD's fakes support each item with its own probability: no channel.
    let rfd = Multidim::with_priors(eps(1.5), priors(&ks), Grr::new).unwrap();
    let mut server = rfd.aggregator();
    server
        .add(&rfd.perturb(&[0, 0], &mut rng).unwrap())
        .unwrap();
    assert!(matches!(
        server.fit(0, Estimator::Ibu, &FitOptions::default()),
        Err(MultidimError::Aggregate {
            attribute: Some(0),
            source: AggregateError::NeedsChannel { .. }
        })
    ));
}

/// Every report of a small GRR or UE collection, with its attribute order.
fn all_reports<M: Mechanism>(
    m: &Multidim<M>,
    outputs: &dyn Fn(u32) -> Vec<M::Report>,
) -> Vec<MultidimReport<M::Report>> {
    let per: Vec<Vec<M::Report>> = m.domains().iter().map(|k| outputs(k.get())).collect();
    if m.solution().names_its_attribute() {
        return per
            .into_iter()
            .enumerate()
            .flat_map(|(j, reports)| {
                reports
                    .into_iter()
                    .map(move |report| MultidimReport::Sampled {
                        attribute: j as u32,
                        report,
                    })
            })
            .collect();
    }
    let mut tuples: Vec<Vec<M::Report>> = vec![Vec::new()];
    for reports in per {
        tuples = tuples
            .into_iter()
            .flat_map(|t| {
                reports.iter().map(move |r| {
                    let mut t = t.clone();
                    t.push(r.clone());
                    t
                })
            })
            .collect();
    }
    tuples.into_iter().map(MultidimReport::Every).collect()
}

fn all_items(ks: &[u32]) -> Vec<Vec<u32>> {
    let mut tuples = vec![Vec::new()];
    for &k in ks {
        tuples = tuples
            .into_iter()
            .flat_map(|t: Vec<u32>| {
                (0..k).map(move |v| {
                    let mut t = t.clone();
                    t.push(v);
                    t
                })
            })
            .collect();
    }
    tuples
}

fn grr_outputs(k: u32) -> Vec<ldp_core::GrrReport> {
    (0..k).map(|y| ldp_core::GrrReport { y }).collect()
}

fn ue_outputs(k: u32) -> Vec<OnesReport> {
    (0..1u32 << k)
        .map(|mask| OnesReport {
            ones: (0..k).filter(|i| mask >> i & 1 == 1).collect(),
        })
        .collect()
}

/// The largest likelihood ratio over all reports and all pairs of inputs: among pairs
/// differing in one attribute, and among all pairs. Also checks that each input's
/// probabilities sum to one.
fn exact_ratios<M: Mechanism>(
    m: &Multidim<M>,
    outputs: &dyn Fn(u32) -> Vec<M::Report>,
) -> (f64, f64) {
    let ks: Vec<u32> = m.domains().iter().map(|k| k.get()).collect();
    let reports = all_reports(m, outputs);
    let inputs = all_items(&ks);
    let table: Vec<Vec<f64>> = inputs
        .iter()
        .map(|x| {
            reports
                .iter()
                .map(|r| m.log_likelihood(r, x).unwrap())
                .collect()
        })
        .collect();
    for (x, row) in inputs.iter().zip(&table) {
        let total: f64 = row.iter().map(|l| l.exp()).sum();
        assert!((total - 1.0).abs() < 1e-9, "{x:?}: total {total}");
    }
    let (mut one, mut all) = (0f64, 0f64);
    for (a, x) in inputs.iter().enumerate() {
        for (b, y) in inputs.iter().enumerate() {
            let differ = x.iter().zip(y).filter(|(u, v)| u != v).count();
            let worst = table[a]
                .iter()
                .zip(&table[b])
                .map(|(la, lb)| la - lb)
                .fold(f64::NEG_INFINITY, f64::max);
            all = all.max(worst);
            if differ <= 1 {
                one = one.max(worst);
            }
        }
    }
    (one, all)
}

/// The exact privacy of each solution. SPL and SMP: eps for the whole tuple. The RS+
/// solutions: eps' for the whole tuple; for one attribute, eps with UE-z, and with GRR
/// over equal domains only; above eps with GRR over unequal domains and with UE-r.
#[test]
fn exact_privacy_of_each_solution() {
    let (ks, e) = ([2u32, 3], 1.0);
    let d = domains(&ks);
    let amplified = Solution::RsFd.report_epsilon(eps(e), 2).unwrap().get();
    let close = |a: f64, b: f64| (a - b).abs() < 1e-9;

    let grr = |s| Multidim::new(s, eps(e), &d, Grr::new).unwrap();
    // SPL spends eps / 2 on each attribute; SMP spends eps on the one it samples.
    let (one, all) = exact_ratios(&grr(Solution::Spl), &grr_outputs);
    assert!(close(one, e / 2.0) && close(all, e), "SPL: {one} {all}");
    let (one, all) = exact_ratios(&grr(Solution::Smp), &grr_outputs);
    assert!(close(one, e) && close(all, e), "SMP: {one} {all}");
    // RS+FD[GRR] over unequal domains: a fake of attribute i that does not match scores
    // L = k_i q_i against the uniform fake, lower for the larger domain, so one attribute's
    // change is not bounded by e^eps. With d = 2 the worst pair is
    // (k_j p_j + k_i q_i) / (k_j q_j + k_i q_i), over j and its partner i.
    let (one, all) = exact_ratios(&grr(Solution::RsFd), &grr_outputs);
    let pq = |k: f64| {
        let z = amplified.exp() + k - 1.0;
        (amplified.exp() / z, 1.0 / z)
    };
    let (k0, k1) = (2.0, 3.0);
    let ((p0, q0), (p1, q1)) = (pq(k0), pq(k1));
    let worst = f64::max(
        (k0 * p0 + k1 * q1) / (k0 * q0 + k1 * q1),
        (k1 * p1 + k0 * q0) / (k1 * q1 + k0 * q0),
    )
    .ln();
    assert!(
        close(one, worst) && one > e + 0.05,
        "RS+FD[GRR] one attribute: {one} vs {worst}"
    );
    assert!(
        close(all, amplified),
        "RS+FD[GRR] all attributes: {all} vs {amplified}"
    );
    // Over equal domains the anchors' bound is exact: e^eps for one attribute.
    let equal = Multidim::new(Solution::RsFd, eps(e), &domains(&[3, 3]), Grr::new).unwrap();
    let (one, all) = exact_ratios(&equal, &grr_outputs);
    assert!(
        close(one, e) && close(all, amplified),
        "RS+FD[GRR] k = 3, 3: {one} {all}"
    );

    let oue = |s| Multidim::new(s, eps(e), &d, UnaryEncoding::optimized).unwrap();
    let (one, all) = exact_ratios(&oue(Solution::RsFdNull), &ue_outputs);
    assert!(close(one, e), "RS+FD[OUE-z] one attribute: {one}");
    assert!(close(all, amplified), "RS+FD[OUE-z] all: {all}");
    let (one, _) = exact_ratios(&oue(Solution::RsFd), &ue_outputs);
    assert!(
        one > e + 1e-3,
        "RS+FD[OUE-r] one attribute: {one} should exceed {e}"
    );
    let (one, all) = exact_ratios(&oue(Solution::Spl), &ue_outputs);
    assert!(one <= e + 1e-9 && all <= e + 1e-9, "SPL[OUE]: {one} {all}");
}

/// The sampler draws what the likelihood says: every report of a small RS+RFD[GRR] and
/// RS+FD-z[SUE] collection, counted over many draws from one input.
#[test]
fn reports_follow_the_likelihood() {
    let d = domains(&[2, 3]);
    let rfd = Multidim::with_priors(
        eps(1.0),
        Priors::new(vec![vec![0.9, 0.1], vec![0.2, 0.0, 0.8]]).unwrap(),
        Grr::new,
    )
    .unwrap();
    let zero = Multidim::new(Solution::RsFdNull, eps(1.0), &d, UnaryEncoding::symmetric).unwrap();
    let smp = Multidim::new(Solution::Smp, eps(1.0), &d, Grr::new).unwrap();
    fn fit<M: Mechanism>(m: &Multidim<M>, outputs: &dyn Fn(u32) -> Vec<M::Report>, seed: u64) {
        let reports = all_reports(m, outputs);
        let items = [1u32, 2];
        let probs: Vec<f64> = reports
            .iter()
            .map(|r| m.log_likelihood(r, &items).unwrap().exp())
            .collect();
        let mut counts = vec![0u64; reports.len()];
        let mut rng = stream_rng(seed, 0, Role::Genuine, 0);
        for _ in 0..60_000 {
            let r = m.perturb(&items, &mut rng).unwrap();
            counts[reports.iter().position(|x| *x == r).unwrap()] += 1;
        }
        let p = chi_square_p(&counts, &probs);
        assert!(p > ALPHA, "{:?}: p = {p}", m.solution());
    }
    fit(&rfd, &grr_outputs, 1);
    fit(&zero, &ue_outputs, 2);
    fit(&smp, &grr_outputs, 3);
}

#[test]
fn bad_input_is_named_and_adds_nothing() {
    let d = domains(&[4, 3]);
    let m = Multidim::new(Solution::Spl, eps(1.0), &d, Grr::new).unwrap();
    let mut rng = stream_rng(43, 0, Role::Genuine, 0);
    assert_eq!(
        m.perturb(&[1], &mut rng),
        Err(MultidimError::Arity {
            expected: 2,
            found: 1
        })
    );
    assert!(matches!(
        m.perturb(&[1, 3], &mut rng),
        Err(MultidimError::Item { attribute: 1, .. })
    ));
    assert_eq!(
        Multidim::new(Solution::Spl, eps(1.0), &[], Grr::new),
        Err(MultidimError::NoAttributes)
    );
    assert!(matches!(
        Multidim::new(Solution::RsFdNull, eps(1.0), &d, Grr::new),
        Err(MultidimError::NoNullInput { .. })
    ));
    assert!(matches!(
        Multidim::new(Solution::RsRfd, eps(1.0), &d, Grr::new),
        Err(MultidimError::Priors(_))
    ));
    // A builder that ignores the budget it is given.
    assert!(matches!(
        Multidim::new(Solution::Spl, eps(1.0), &d, |k, _| Grr::new(k, eps(1.0))),
        Err(MultidimError::Param { attribute: 0, .. })
    ));
    for bad in [
        vec![vec![0.5, 0.6]],
        vec![vec![1.0]],
        vec![vec![f64::NAN, 1.0]],
        vec![vec![1.5, -0.5]],
    ] {
        assert!(matches!(
            Priors::new(bad),
            Err(MultidimError::Prior { attribute: 0, .. })
        ));
    }
    let mut server = m.aggregator();
    let wrong_shape = MultidimReport::Sampled {
        attribute: 0,
        report: ldp_core::GrrReport { y: 0 },
    };
    assert!(matches!(
        server.add(&wrong_shape),
        Err(MultidimError::Report {
            attribute: None,
            ..
        })
    ));
    let bad_second = MultidimReport::Every(vec![
        ldp_core::GrrReport { y: 0 },
        ldp_core::GrrReport { y: 3 },
    ]);
    assert!(matches!(
        server.add(&bad_second),
        Err(MultidimError::Report {
            attribute: Some(1),
            ..
        })
    ));
    assert_eq!(server.count(), 0);
    assert_eq!(
        server.attribute(0).count(),
        0,
        "nothing of a bad report is added"
    );
    let smp = Multidim::new(Solution::Smp, eps(1.0), &d, Grr::new).unwrap();
    let no_such = MultidimReport::Sampled {
        attribute: 2,
        report: ldp_core::GrrReport { y: 0 },
    };
    assert!(matches!(
        smp.aggregator().add(&no_such),
        Err(MultidimError::Report {
            attribute: None,
            ..
        })
    ));
}

#[cfg(feature = "serde")]
#[test]
fn clients_and_servers_round_trip_through_json_and_merge() {
    let m = Multidim::with_priors(
        eps(2.0),
        Priors::new(vec![vec![0.25; 4], vec![0.5, 0.25, 0.25], vec![0.5, 0.5]]).unwrap(),
        UnaryEncoding::optimized,
    )
    .unwrap();
    let json = serde_json::to_string(&m).unwrap();
    let back: Multidim<UnaryEncoding> = serde_json::from_str(&json).unwrap();
    assert_eq!(back, m);
    let mut rng = stream_rng(44, 0, Role::Genuine, 0);
    let (mut a, mut b, mut whole) = (m.aggregator(), m.aggregator(), m.aggregator());
    for i in 0..300u32 {
        let r = m.perturb(&[i % 4, i % 3, i % 2], &mut rng).unwrap();
        let line = serde_json::to_string(&r).unwrap();
        let r: MultidimReport<OnesReport> = serde_json::from_str(&line).unwrap();
        whole.add(&r).unwrap();
        if i % 2 == 0 { a.add(&r) } else { b.add(&r) }.unwrap();
    }
    a.merge(&b).unwrap();
    assert_eq!(a, whole);
    let state = serde_json::to_string(&whole).unwrap();
    let restored: ldp_core::multidim::MultidimAggregator<UnaryEncoding> =
        serde_json::from_str(&state).unwrap();
    assert_eq!(restored, whole);
    // A state whose counts disagree with its users is refused.
    let corrupt = state.replacen("\"n\":300", "\"n\":299", 1);
    assert!(
        serde_json::from_str::<ldp_core::multidim::MultidimAggregator<UnaryEncoding>>(&corrupt)
            .is_err()
    );
    // A stored mechanism at another budget than the solution's is refused.
    let tampered = json.replacen("\"eps\":2.0", "\"eps\":3.0", 1);
    assert!(serde_json::from_str::<Multidim<UnaryEncoding>>(&tampered).is_err());
}

/// Front ends name a client by solution and protocol: every classic protocol builds
/// through `dispatch_multidim!` into the client its family's constructor gives.
#[test]
fn specs_build_the_typed_client_of_every_classic_protocol() {
    use ldp_core::dispatch_multidim;
    use ldp_core::multidim::MultidimSpec;
    let d = domains(&[6, 3]);
    let mut built = 0;
    for protocol in Protocol::ALL {
        let spec = MultidimSpec::classic(Solution::Smp, protocol, eps(2.0), &d, None);
        if protocol.is_adaptive() {
            assert!(
                matches!(spec, Err(MultidimError::NotClassic(_))),
                "{protocol}"
            );
            continue;
        }
        let Ok(spec) = spec else { continue };
        let mut rng = stream_rng(45, 0, Role::Genuine, 0);
        let k = dispatch_multidim!(&spec, m => {
            let report = m.perturb(&[5, 2], &mut rng).unwrap();
            m.validate(&report).unwrap();
            m.domains()
        })
        .unwrap();
        assert_eq!(k, d);
        built += 1;
    }
    assert!(built >= 8, "{built}");
    // Attributes of different families are refused.
    let mixed = MultidimSpec::new(Solution::Spl, eps(1.0), &d, None, |k, e| {
        let protocol = if k.get() == 6 {
            Protocol::Grr
        } else {
            Protocol::Oue
        };
        Ok(Spec::classic(protocol, k, e).unwrap())
    });
    assert!(matches!(
        mixed,
        Err(MultidimError::Family { attribute: 1, .. })
    ));
}
