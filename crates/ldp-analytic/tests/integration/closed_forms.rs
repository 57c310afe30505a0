//! Every closed form against an independent computation: the paper's printed equation,
//! a series summed in log space, a special case, a limit, or ldp-core's mechanisms.

use approx::assert_relative_eq;
use ldp_analytic::{asr, epg, grr, local_hash, map, subset, summation, threshold, unary};
use ldp_core::{
    DomainSize, Epsilon, FamilyParams, LocalHashing, Mechanism, PureProtocol, Spec,
    SubsetSelection, ThresholdHistogram, UnaryEncoding,
};
use statrs::function::gamma::ln_gamma;

fn k(v: u32) -> DomainSize {
    DomainSize::new(v).unwrap()
}
fn eps(v: f64) -> Epsilon {
    Epsilon::new(v).unwrap()
}

const EPSILONS: [f64; 7] = [0.01, 0.1, 0.5, 1.0, 2.0, 4.0, 10.0];

/// Appendix Eq. "exp_asr_ue_sum": `(1-p)(1-q)^(k-1)/k + sum_m p/m C(k-1,m-1) q^(m-1) (1-q)^(k-m)`,
/// summed in log space (log-sum-exp) so that no term underflows.
fn event_sum(kv: u32, p: f64, q: f64) -> f64 {
    let kf = f64::from(kv);
    let ln_terms: Vec<f64> = (1..=kv)
        .map(|m| {
            let m = f64::from(m);
            let ln_choose = ln_gamma(kf) - ln_gamma(m) - ln_gamma(kf - m + 1.0);
            p.ln() - m.ln() + ln_choose + (m - 1.0) * q.ln() + (kf - m) * (-q).ln_1p()
        })
        .collect();
    let max = ln_terms.iter().cloned().fold(f64::MIN, f64::max);
    let sum: f64 = ln_terms.iter().map(|l| (l - max).exp()).sum();
    (1.0 - p) * ((kf - 1.0) * (-q).ln_1p()).exp() / kf + max.exp() * sum
}

#[test]
fn ue_and_the_closed_form_equals_the_appendix_event_sum() {
    for kv in [2, 3, 10, 100, 1000, 10_000] {
        for e in EPSILONS {
            for p in [0.5, 0.7, 0.95] {
                let (p, q) = unary::probabilities(eps(e), p);
                assert_relative_eq!(
                    asr::ones(k(kv), p, q),
                    event_sum(kv, p, q),
                    max_relative = 1e-9
                );
            }
            for theta in [0.5, 0.8, 1.0] {
                let (p, q) = threshold::probabilities(eps(e), theta);
                assert_relative_eq!(
                    asr::ones(k(kv), p, q),
                    event_sum(kv, p, q),
                    max_relative = 1e-9
                );
            }
        }
    }
}

#[test]
fn ones_asr_tends_to_its_q_to_zero_limit() {
    // The report is then the true bit alone: p + (1 - p) / k (the appendix's "tends to p"
    // is about the second term).
    assert_relative_eq!(
        asr::ones(k(1000), 0.7, 1e-300),
        0.7 + 0.3 / 1000.0,
        max_relative = 1e-12
    );
    assert_relative_eq!(
        asr::ones(k(1000), 0.7, 0.0),
        0.7 + 0.3 / 1000.0,
        max_relative = 1e-12
    );
}

#[test]
fn subset_selection_with_one_item_is_grr() {
    for kv in [2, 5, 100, 10_000] {
        for e in EPSILONS {
            let (kk, ee) = (k(kv), eps(e));
            let (pg, qg) = grr::probabilities(kk, ee);
            let (ps, qs) = subset::probabilities(kk, ee, 1);
            assert_relative_eq!(pg, ps, max_relative = 1e-12);
            assert_relative_eq!(qg, qs, max_relative = 1e-12);
            assert_relative_eq!(
                subset::variance(kk, ee, 1),
                grr::variance(kk, ee),
                max_relative = 1e-12
            );
            assert_relative_eq!(
                subset::asr(kk, ee, 1),
                grr::asr(kk, ee),
                max_relative = 1e-12
            );
            for r in [1, 2] {
                let attack = epg::Poisoning::new(0.05, r, 0.01).unwrap();
                let grr = Spec::new(kk, ee, FamilyParams::Grr).unwrap();
                let ss = Spec::new(kk, ee, FamilyParams::SubsetSelection { omega: 1 }).unwrap();
                assert_relative_eq!(
                    epg::expected(&grr, &attack).unwrap().finite().unwrap(),
                    epg::expected(&ss, &attack).unwrap().finite().unwrap(),
                    max_relative = 1e-12
                );
            }
        }
    }
}

/// The paper's printed Eq. "var_ss", kept only to document the erratum.
fn printed_var_ss(k: f64, w: f64, e: f64) -> f64 {
    let d = w * (-k + w + (k - 1.0) * e - (w - 1.0) * e).powi(2);
    ((k - 1.0) * (k + 2.0 * w * e - w)
        + (k - w + (w - 1.0) * e) * (-w * (k - w) - w * (w - 1.0) * e))
        / d
}

#[test]
fn printed_ss_variance_is_an_erratum() {
    let (kv, e) = (100u32, 2f64);
    let grr = grr::variance(k(kv), eps(e));
    let printed = printed_var_ss(f64::from(kv), 1.0, e.exp());
    assert!(
        (printed - grr).abs() / grr > 0.5,
        "printed {printed} vs GRR {grr}"
    );
}

fn pure_variance(p: f64, q: f64) -> f64 {
    q * (1.0 - q) / (p - q).powi(2)
}

#[test]
fn every_variance_matches_the_pure_formula_and_the_printed_equation() {
    for kv in [2, 10, 100, 5000] {
        for e in EPSILONS {
            let (kk, ee, ex) = (k(kv), eps(e), e.exp());
            let kf = f64::from(kv);
            // GRR, Eq. "var_grr".
            let (p, q) = grr::probabilities(kk, ee);
            assert_relative_eq!(
                grr::variance(kk, ee),
                pure_variance(p, q),
                max_relative = 1e-8
            );
            assert_relative_eq!(
                grr::variance(kk, ee),
                (ex + kf - 2.0) / (ex - 1.0).powi(2),
                max_relative = 1e-9
            );
            // SS: the simplified closed form.
            for omega in [1, kv / 2, kv - 1]
                .into_iter()
                .filter(|&w| w >= 1 && w < kv)
            {
                let (p, q) = subset::probabilities(kk, ee, omega);
                let w = f64::from(omega);
                let design = (w * ex - ex + kf - w) * (w * ex + kf - w - 1.0)
                    / (w * (ex - 1.0).powi(2) * (kf - w));
                assert_relative_eq!(
                    subset::variance(kk, ee, omega),
                    pure_variance(p, q),
                    max_relative = 1e-7
                );
                assert_relative_eq!(subset::variance(kk, ee, omega), design, max_relative = 1e-9);
            }
            // UE, Eq. "var_ue", for SUE, OUE and any p.
            for p in [0.5, ex.sqrt() / (ex.sqrt() + 1.0), 0.818, 0.99] {
                let (p, q) = unary::probabilities(ee, p);
                let printed = ((ex - 1.0) * q + 1.0).powi(2) / ((ex - 1.0).powi(2) * (1.0 - q) * q);
                assert_relative_eq!(unary::variance(ee, p), printed, max_relative = 1e-8);
                assert_relative_eq!(
                    unary::variance(ee, p),
                    pure_variance(p, q),
                    max_relative = 1e-8
                );
            }
            // LH, Eq. "var_lh".
            for g in [2, 3, 13, 56, 1000] {
                let (p, q) = local_hash::probabilities(ee, g);
                let gf = f64::from(g);
                let printed = (ex - 1.0 + gf).powi(2) / ((ex - 1.0).powi(2) * (gf - 1.0));
                assert_relative_eq!(local_hash::variance(ee, g), printed, max_relative = 1e-8);
                assert_relative_eq!(
                    local_hash::variance(ee, g),
                    pure_variance(p, q),
                    max_relative = 1e-8
                );
            }
            // THE, Eq. "var_the".
            for theta in [0.5, 0.783, 0.9, 1.0] {
                let printed = (2.0 * (e * theta / 2.0).exp() - 1.0)
                    / (1.0 + (e * (theta - 0.5)).exp() - 2.0 * (e * theta / 2.0).exp()).powi(2);
                assert_relative_eq!(threshold::variance(ee, theta), printed, max_relative = 1e-8);
            }
            // SHE: Laplace(2/eps) has variance 2 (2/eps)^2.
            assert_relative_eq!(
                summation::variance(ee),
                2.0 * (2.0 / e).powi(2),
                max_relative = 1e-12
            );
        }
    }
}

/// p* and q* (which the mechanisms and the closed forms share) against the paper's
/// printed expressions, evaluated directly in e^eps.
#[test]
fn probabilities_match_the_papers_expressions() {
    for kv in [2, 7, 100] {
        for e in EPSILONS {
            let (kk, ee, ex, kf) = (k(kv), eps(e), e.exp(), f64::from(kv));
            let close = |got: (f64, f64), want: (f64, f64)| {
                assert_relative_eq!(got.0, want.0, max_relative = 1e-12);
                assert_relative_eq!(got.1, want.1, max_relative = 1e-12);
            };
            // Eq. "grr".
            close(
                grr::probabilities(kk, ee),
                (ex / (ex + kf - 1.0), 1.0 / (ex + kf - 1.0)),
            );
            // Section "SS".
            for omega in (1..kv).take(3) {
                let w = f64::from(omega);
                let d = w * ex + kf - w;
                close(
                    subset::probabilities(kk, ee, omega),
                    (
                        w * ex / d,
                        (w * ex * (w - 1.0) + (kf - w) * w) / ((kf - 1.0) * d),
                    ),
                );
            }
            // Eq. "ue_parameters" with SUE's and OUE's (p, q), and any p under the
            // constraint of Eq. "optimization_aue".
            let h = (e / 2.0).exp();
            close(
                unary::probabilities(ee, h / (h + 1.0)),
                (h / (h + 1.0), 1.0 / (h + 1.0)),
            );
            close(unary::probabilities(ee, 0.5), (0.5, 1.0 / (ex + 1.0)));
            close(
                unary::probabilities(ee, 0.75),
                (0.75, 0.75 / (ex * 0.25 + 0.75)),
            );
            // Section "LH".
            close(local_hash::probabilities(ee, 5), (ex / (ex + 4.0), 0.2));
            // Eq. "the_parameters".
            close(
                threshold::probabilities(ee, 0.7),
                (
                    1.0 - 0.5 * (e / 2.0 * (0.7 - 1.0)).exp(),
                    0.5 * (-e / 2.0 * 0.7).exp(),
                ),
            );
        }
    }
}

/// The appendix integral of Eq. "full_exp_asr_she", integrated directly over z on
/// pieces split at the kinks (independent of the substitution used by the crate).
fn she_asr_direct(kv: u32, e: f64) -> f64 {
    let b = 2.0 / e;
    let f = |z: f64| (-(z.abs()) / b).exp() / (2.0 * b);
    let cdf = |z: f64| {
        if z <= 0.0 {
            0.5 * (z / b).exp()
        } else {
            1.0 - 0.5 * (-z / b).exp()
        }
    };
    let integrand = |z: f64| f(z) * cdf(z + 1.0).powi(kv as i32 - 1);
    let span = 60.0 * b + 10.0 * f64::from(kv).ln() * b;
    let pieces = [(-span, -1.0), (-1.0, 0.0), (0.0, span)];
    pieces
        .iter()
        .map(|&(a, c)| {
            // Composite Simpson on a fine grid: plenty for these smooth pieces.
            let n = 200_000;
            let h = (c - a) / n as f64;
            (0..=n)
                .map(|i| {
                    let w = if i == 0 || i == n {
                        1.0
                    } else if i % 2 == 1 {
                        4.0
                    } else {
                        2.0
                    };
                    w * integrand(a + i as f64 * h)
                })
                .sum::<f64>()
                * h
                / 3.0
        })
        .sum()
}

#[test]
fn she_asr_matches_direct_integration_of_the_appendix_integral() {
    for kv in [2, 3, 10, 100, 1000] {
        for e in [0.1, 1.0, 4.0, 10.0] {
            let ours = summation::asr(k(kv), eps(e));
            let direct = she_asr_direct(kv, e);
            assert!(
                (ours - direct).abs() < 1e-9,
                "k={kv} eps={e}: {ours} vs {direct}"
            );
        }
    }
}

#[test]
fn she_asr_reaches_its_limits() {
    // k = 2 at eps -> 0: a coin flip. Large k: k ASR -> e^(eps/2).
    assert_relative_eq!(summation::asr(k(2), eps(1e-6)), 0.5, max_relative = 1e-5);
    for e in [0.5, 1.0, 4.0] {
        let big = 1_000_000_000u32;
        let scaled = f64::from(big) * summation::asr(k(big), eps(e));
        assert_relative_eq!(scaled, (e / 2.0).exp(), max_relative = 1e-6);
    }
}

#[test]
fn she_asr_matches_a_seeded_monte_carlo() {
    use ldp_core::simulation::{Role, stream_rng};
    for (kv, e) in [(10u32, 1.0), (100, 4.0), (50, 8.0)] {
        let she = ldp_core::SummationHistogram::new(k(kv), eps(e)).unwrap();
        let draws = 100_000;
        let mut rng = stream_rng(404, 0, Role::Other(0), u64::from(kv));
        let hits = (0..draws)
            .filter(|_| {
                let y = she.perturb(0, &mut rng).unwrap().y;
                y.iter().skip(1).all(|&v| v < y[0])
            })
            .count();
        let est = hits as f64 / draws as f64;
        let se = (est * (1.0 - est) / draws as f64).sqrt();
        let exact = summation::asr(k(kv), eps(e));
        assert!(
            (est - exact).abs() < 4.0 * se,
            "k={kv} eps={e}: MC {est} vs {exact} (se {se})"
        );
    }
}

/// The uniform-over-support attack on real OLH reports (xxh32 hashing), counted exactly:
/// a report contributes 1/|support| when it supports the truth, 1/k when the support
/// is empty, which is the attack's success probability given the report.
fn lh_attack_monte_carlo(kv: u32, e: f64, g: u32, users: u32) -> (f64, f64) {
    let lh = LocalHashing::new(k(kv), eps(e), g).unwrap();
    let items: Vec<u32> = (0..users).map(|u| u % kv).collect();
    let reports =
        ldp_core::simulation::perturb_all(&lh, &items, 8, 0, ldp_core::simulation::Role::Genuine)
            .unwrap();
    let success: Vec<f64> = reports
        .iter()
        .zip(&items)
        .map(|(r, &x)| {
            let support = ldp_core::Support::support(&lh, r);
            if support.is_empty() {
                1.0 / f64::from(kv)
            } else if support.contains(&x) {
                1.0 / support.len() as f64
            } else {
                0.0
            }
        })
        .collect();
    let n = success.len() as f64;
    let mean = success.iter().sum::<f64>() / n;
    let var = success.iter().map(|s| (s - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean, (var / n).sqrt())
}

#[test]
fn exact_lh_asr_matches_real_xxh32_hashing_and_the_paper_form_does_not() {
    for (kv, e, g) in [
        (100, 4.0, 56),
        (100, 1.0, 2),
        (100, 4.0, 13),
        (1000, 2.0, 8),
    ] {
        let (mean, se) = lh_attack_monte_carlo(kv, e, g, 200_000);
        let exact = local_hash::asr_exact(k(kv), eps(e), g);
        assert!(
            (mean - exact).abs() < 4.0 * se,
            "k={kv} eps={e} g={g}: MC {mean} vs exact {exact} (se {se})"
        );
    }
    let (mean, se) = lh_attack_monte_carlo(100, 4.0, 56, 200_000);
    let paper = local_hash::asr_paper(k(100), eps(4.0), 56);
    assert!(
        (paper - mean) > 20.0 * se,
        "paper {paper} should overestimate {mean}"
    );
    assert!(
        (paper / mean - 1.19).abs() < 0.02,
        "overestimate {}",
        paper / mean
    );
}

/// EPG from the estimator itself: genuine support counts in expectation, plus the real
/// support of a real fake report of each family, through Eq. "estimator".
#[test]
fn epg_matches_the_expectation_over_the_estimator() {
    let (kv, e, beta, f_t) = (50u32, 2.0, 0.1, 0.03);
    for r in [1u32, 3] {
        let attack = epg::Poisoning::new(beta, r, f_t).unwrap();
        let targets: Vec<u32> = (0..r).collect();
        let direct = |p: f64, q: f64, support: &[u32]| {
            let s = targets.iter().filter(|t| support.contains(t)).count() as f64;
            // E[f~_T] = sum_t [(1-beta)(f_t (p-q) + q) + beta 1{t supported} - q] / (p - q)
            let expect = ((1.0 - beta) * (f_t * (p - q) + f64::from(r) * q) + beta * s
                - f64::from(r) * q)
                / (p - q);
            expect - f_t
        };
        let (kk, ee) = (k(kv), eps(e));
        let grr = ldp_core::Grr::new(kk, ee).unwrap();
        let ss = SubsetSelection::new(kk, ee, 2).unwrap();
        let ue = UnaryEncoding::new(kk, ee, 0.7).unwrap();
        let the = ThresholdHistogram::new(kk, ee, 0.8).unwrap();
        let lh = LocalHashing::new(kk, ee, 6).unwrap();
        // Real fake reports: GRR reports one target; SS holds min(r, omega) targets, padded.
        let grr_fake = ldp_core::GrrReport { y: 0 };
        let mut ss_items: Vec<u32> = targets.iter().copied().take(2).collect();
        ss_items.extend((40..).take(2 - ss_items.len()));
        let ss_fake = ldp_core::SubsetReport { subset: ss_items };
        let ones = ldp_core::OnesReport {
            ones: targets.clone(),
        };
        let seed = (0u32..)
            .find(|&s| {
                targets
                    .iter()
                    .all(|&t| lh.supports(&ldp_core::LhReport { seed: s, y: 0 }, t))
            })
            .unwrap();
        let lh_fake = ldp_core::LhReport { seed, y: 0 };
        use ldp_core::Support;
        let cases = [
            (
                Spec::new(kk, ee, FamilyParams::Grr).unwrap(),
                direct(grr.p_star(), grr.q_star(), &grr.support(&grr_fake)),
            ),
            (
                Spec::new(kk, ee, FamilyParams::SubsetSelection { omega: 2 }).unwrap(),
                direct(ss.p_star(), ss.q_star(), &ss.support(&ss_fake)),
            ),
            (
                Spec::new(kk, ee, FamilyParams::UnaryEncoding { p: 0.7 }).unwrap(),
                direct(ue.p_star(), ue.q_star(), &ue.support(&ones)),
            ),
            (
                Spec::new(kk, ee, FamilyParams::ThresholdHistogram { theta: 0.8 }).unwrap(),
                direct(the.p_star(), the.q_star(), &the.support(&ones)),
            ),
            (
                Spec::new(kk, ee, FamilyParams::LocalHashing { g: 6 }).unwrap(),
                direct(lh.p_star(), lh.q_star(), &lh.support(&lh_fake)),
            ),
        ];
        for (spec, want) in cases {
            let got = epg::expected(&spec, &attack).unwrap().finite().unwrap();
            assert_relative_eq!(got, want, max_relative = 1e-9);
        }
    }
}

#[test]
fn poisoning_parameters_are_validated() {
    use epg::PoisoningError;
    assert_eq!(
        epg::Poisoning::new(1.0, 1, 0.0),
        Err(PoisoningError::Param(ldp_core::ParamError::FakeFraction {
            value: 1.0
        }))
    );
    assert_eq!(
        epg::Poisoning::new(0.1, 0, 0.0),
        Err(PoisoningError::NoTargets)
    );
    assert_eq!(
        epg::Poisoning::new(0.1, 1, 1.5),
        Err(PoisoningError::TargetMass(1.5))
    );
    let spec = Spec::new(k(5), eps(1.0), FamilyParams::Grr).unwrap();
    let too_many = epg::Poisoning::new(0.1, 6, 0.0).unwrap();
    assert_eq!(
        epg::expected(&spec, &too_many),
        Err(PoisoningError::TooManyTargets { targets: 6, k: 5 })
    );
}

#[test]
fn exact_map_with_a_uniform_prior_is_the_papers_asr() {
    // With a uniform prior every supported item is a maximizer: the paper's attack.
    let (k, e) = (DomainSize::new(50).unwrap(), eps(2.0));
    let uniform = vec![1.0 / 50.0; 50];
    let exact = |spec: &Spec| map::asr_exact(spec, &uniform).unwrap().unwrap();
    let ex = 2f64.exp();
    let grr = Spec::new(k, e, FamilyParams::Grr).unwrap();
    assert!((exact(&grr) - ex / (ex + 49.0)).abs() < 1e-12);
    let ss = Spec::new(k, e, FamilyParams::SubsetSelection { omega: 5 }).unwrap();
    assert!((exact(&ss) - ex / (5.0 * ex + 45.0)).abs() < 1e-12);
    let (p, q) = (0.5, 1.0 / (ex + 1.0));
    let ue_closed = ((1.0 - p) * (1.0 - q).powi(49) + p / q * (1.0 - (1.0 - q).powi(50))) / 50.0;
    let oue = Spec::new(k, e, FamilyParams::UnaryEncoding { p }).unwrap();
    assert!((exact(&oue) - ue_closed).abs() < 1e-12);
}
