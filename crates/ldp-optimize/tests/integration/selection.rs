//! Selection strategies on hand-made frontiers whose answer is known, including the
//! degenerate ones, and frontier properties.

use ldp_core::FamilyParams;
use ldp_optimize::{
    Candidate, Objective, ObjectiveSet, Objectives, Scale, Strategy, Weights, frontier,
    frontier_in, select,
};
use proptest::prelude::{prop, prop_assert, prop_assert_eq, proptest};
use proptest::strategy::Strategy as _;

fn c(omega: u32, asr: f64, mse: f64) -> Candidate {
    Candidate {
        params: FamilyParams::SubsetSelection { omega },
        objectives: Objectives {
            asr,
            mse,
            epg: 0.0,
            bits: 0.0,
        },
    }
}

fn pick(front: &[Candidate], s: Strategy) -> (usize, bool) {
    let sel = select(front, s, &Weights::default(), Scale::Raw).unwrap();
    (sel.index, sel.fell_back)
}

/// A convex frontier with a clear knee at index 2.
fn knee() -> Vec<Candidate> {
    vec![
        c(1, 0.0, 1.0),
        c(2, 0.05, 0.5),
        c(3, 0.1, 0.1),
        c(4, 0.5, 0.05),
        c(5, 1.0, 0.0),
    ]
}

#[test]
fn known_answers() {
    let f = knee();
    assert_eq!(frontier(&f), f);
    // Weighted 0.5/0.5: sums 0.5, 0.275, 0.1, 0.275, 0.5.
    assert_eq!(pick(&f, Strategy::Weighted), (2, false));
    // Utopia: distances 1, 0.502, 0.141, 0.502, 1.
    assert_eq!(pick(&f, Strategy::Utopia), (2, false));
    // Elbow: the chord is asr + mse = 1; the knee is farthest from it.
    assert_eq!(pick(&f, Strategy::Elbow), (2, false));
    // Epsilon-constraint: ASR <= 0.1 leaves indices 0..=2; lowest MSE is index 2.
    assert_eq!(pick(&f, Strategy::eps_constraint(0.1).unwrap()), (2, false));
    assert_eq!(
        pick(&f, Strategy::eps_constraint(0.07).unwrap()),
        (1, false)
    );
    // Hypervolume w.r.t. (1, 1): contributions 0.05*0, 0.05*0.5, 0.4*0.4, 0.5*0.05, 0*0.05.
    assert_eq!(
        pick(&f, Strategy::hypervolume([1.0, 1.0]).unwrap()),
        (2, false)
    );
    assert_eq!(pick(&f, Strategy::tchebycheff(1e-6).unwrap()), (2, false));
}

#[test]
fn weights_steer_the_weighted_and_tchebycheff_choices() {
    let f = knee();
    let privacy = Weights::new(0.95, 0.05).unwrap();
    let utility = Weights::new(0.05, 0.95).unwrap();
    let weighted = Strategy::Weighted;
    assert_eq!(select(&f, weighted, &privacy, Scale::Raw).unwrap().index, 0);
    assert_eq!(select(&f, weighted, &utility, Scale::Raw).unwrap().index, 4);
    // Tchebycheff with (0.95, 0.05): max terms 0.05, 0.0475, 0.095, ... -> index 1;
    // with (0.05, 0.95): ..., 0.095, 0.0475, 0.05 -> index 3.
    let tcheby = Strategy::tchebycheff(1e-6).unwrap();
    assert_eq!(select(&f, tcheby, &privacy, Scale::Raw).unwrap().index, 1);
    assert_eq!(select(&f, tcheby, &utility, Scale::Raw).unwrap().index, 3);
}

#[test]
fn degenerate_frontiers() {
    let one = vec![c(7, 0.3, 0.2)];
    for s in Strategy::PAPER {
        let (i, fell) = pick(&one, s);
        assert_eq!(i, 0, "{s:?}");
        // ASR 0.3 > 0.1: infeasible, and the fallback is reported.
        assert_eq!(fell, matches!(s, Strategy::EpsConstraint(_)), "{s:?}");
    }
    // All points equal: the frontier keeps the first one only.
    let same = vec![c(1, 0.2, 0.2), c(2, 0.2, 0.2), c(3, 0.2, 0.2)];
    let front = frontier(&same);
    assert_eq!(front.len(), 1);
    assert_eq!(front[0].param(), 1.0);
    // Nothing feasible: fall back to the utopia point, and say so.
    let f = knee();
    let none = select(
        &f[1..],
        Strategy::eps_constraint(0.01).unwrap(),
        &Weights::default(),
        Scale::Raw,
    )
    .unwrap();
    assert!(none.fell_back);
    assert_eq!(none.index, pick(&f[1..], Strategy::Utopia).0);
    // Outside the hypervolume reference box every contribution is zero: the first point.
    let far = vec![c(1, 0.1, 50.0), c(2, 0.2, 20.0)];
    assert_eq!(pick(&far, Strategy::hypervolume([1.0, 1.0]).unwrap()).0, 0);
    // ... but normalizing brings them inside.
    let sel = select(
        &far,
        Strategy::Utopia,
        &Weights::default(),
        Scale::Normalized,
    )
    .unwrap();
    assert!(sel.index < 2);
    assert!(select(&[], Strategy::Utopia, &Weights::default(), Scale::Raw).is_err());
}

fn point() -> impl proptest::strategy::Strategy<Value = (f64, f64, f64)> {
    (0u8..10, 0u8..10, 0u8..10)
        .prop_map(|(a, b, c)| (f64::from(a) / 10.0, f64::from(b), f64::from(c)))
}

proptest! {
    #[test]
    fn frontiers_hold_exactly_the_non_dominated_points(pts in prop::collection::vec(point(), 1..40)) {
        let cands: Vec<Candidate> = pts.iter().enumerate().map(|(i, &(a, m, e))| Candidate {
            params: FamilyParams::LocalHashing { g: i as u32 + 2 },
            objectives: Objectives {
                asr: a,
                mse: m,
                epg: e,
                bits: 0.0,
            },
        }).collect();
        for (front, dims) in [(frontier(&cands), 2), (frontier_in(
            &cands,
            ObjectiveSet::of(&[Objective::Asr, Objective::Mse, Objective::Epg]),
        ), 3)] {
            let dominated = |x: &Objectives, y: &Objectives| {
                let le = x.asr <= y.asr && x.mse <= y.mse && (dims == 2 || x.epg <= y.epg);
                let lt = x.asr < y.asr || x.mse < y.mse || (dims == 3 && x.epg < y.epg);
                le && lt
            };
            let same = |x: &Objectives, y: &Objectives| x.asr == y.asr && x.mse == y.mse && (dims == 2 || x.epg == y.epg);
            for f in &front {
                prop_assert!(!cands.iter().any(|c| dominated(&c.objectives, &f.objectives)));
                prop_assert_eq!(front.iter().filter(|g| same(&g.objectives, &f.objectives)).count(), 1);
            }
            for c in &cands {
                let kept_or_covered = front.iter().any(|f| same(&f.objectives, &c.objectives) || dominated(&f.objectives, &c.objectives));
                prop_assert!(kept_or_covered);
            }
            prop_assert!(front.windows(2).all(|w| w[0].objectives.asr <= w[1].objectives.asr));
        }
    }
}
