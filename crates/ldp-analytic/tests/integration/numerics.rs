//! Numerical robustness across the whole parameter range, and a pinned table of values.

use std::collections::BTreeMap;

use ldp_analytic::{LhAsr, Options, evaluate};
use ldp_core::{DomainSize, Epsilon, FamilyParams, Protocol, Spec};

const KS: [u32; 8] = [2, 3, 10, 100, 10_000, 1_000_000, 100_000_000, 1_000_000_000];
const EPSILONS: [f64; 11] = [
    1e-3, 0.01, 0.1, 0.5, 1.0, 4.0, 10.0, 25.0, 50.0, 300.0, 1000.0,
];

fn specs(k: DomainSize, eps: Epsilon) -> Vec<Spec> {
    let mut out: Vec<Spec> = Protocol::CLASSIC
        .into_iter()
        .map(|p| Spec::classic(p, k, eps).unwrap())
        .collect();
    let kv = k.get();
    let extra = [
        FamilyParams::SubsetSelection { omega: kv - 1 },
        FamilyParams::SubsetSelection {
            omega: (kv / 2).max(1),
        },
        FamilyParams::UnaryEncoding { p: 0.999_999 },
        FamilyParams::LocalHashing { g: kv },
        FamilyParams::LocalHashing { g: u32::MAX },
        FamilyParams::ThresholdHistogram { theta: 0.5 },
        FamilyParams::ThresholdHistogram { theta: 1.0 },
    ];
    out.extend(extra.into_iter().map(|f| Spec::new(k, eps, f).unwrap()));
    out
}

#[test]
fn objectives_stay_in_range_at_the_extremes() {
    for kv in KS {
        for e in EPSILONS {
            let (k, eps) = (DomainSize::new(kv).unwrap(), Epsilon::new(e).unwrap());
            for spec in specs(k, eps) {
                for lh_asr in [LhAsr::Paper, LhAsr::Exact] {
                    let options = Options {
                        lh_asr,
                        ..Options::default()
                    };
                    let m = evaluate(&spec, &options).unwrap();
                    assert!((0.0..=1.0).contains(&m.asr), "{spec:?}: ASR {}", m.asr);
                    assert!(m.asr > 0.0, "{spec:?}: ASR {}", m.asr);
                    assert!(
                        // Beyond eps of about 700, e^-eps (and so the MSE) underflows to 0.
                        m.mse.is_finite() && (m.mse > 0.0 || e > 700.0),
                        "{spec:?}: MSE {}",
                        m.mse
                    );
                    if let Some(g) = m.epg.finite() {
                        assert!(g.is_finite() && g > 0.0, "{spec:?}: EPG {g}");
                    } else {
                        assert_eq!(spec.params(), FamilyParams::SummationHistogram);
                    }
                }
            }
        }
    }
}

/// Ten significant digits: stable across platforms and libm implementations.
fn round(v: f64) -> String {
    format!("{v:.9e}")
}

#[test]
fn classic_protocols_value_table() {
    let mut table = BTreeMap::new();
    for (kv, e) in [(100, 1.0), (100, 4.0), (1000, 2.0), (10_000, 8.0)] {
        let (k, eps) = (DomainSize::new(kv).unwrap(), Epsilon::new(e).unwrap());
        // The paper's eight (each later family pins its own values beside its tests).
        for p in Protocol::PAPER.into_iter().filter(|p| !p.is_adaptive()) {
            let spec = Spec::classic(p, k, eps).unwrap();
            let m = evaluate(&spec, &Options::default()).unwrap();
            let row = format!(
                "param={} asr={} mse={} epg={}",
                spec.params().value().map_or("-".into(), round),
                round(m.asr),
                round(m.mse),
                m.epg.finite().map_or("unbounded".into(), round),
            );
            table.insert(format!("k={kv:>5} eps={e:>4} {:>4}", p.label()), row);
        }
    }
    insta::assert_debug_snapshot!(table);
}

/// SHE's ASR at budgets where e^(-eps/2) underflows: 1, as its limit is, not NaN (issue 24,
/// item 4: `ldp analyze --protocol she --k 100 --eps 1500` printed NaN after 11.5 s).
#[test]
fn she_asr_reaches_one_at_huge_budgets() {
    let k = DomainSize::new(100).unwrap();
    let mut last = 0.0;
    for e in [10.0, 40.0, 100.0, 1500.0, 1e6, 1e300] {
        let a = ldp_analytic::summation::asr(k, Epsilon::new(e).unwrap());
        assert!(
            a.is_finite() && a <= 1.0 && a >= last - 1e-12,
            "eps {e}: {a}"
        );
        last = a;
    }
    assert_eq!(last, 1.0);
}
