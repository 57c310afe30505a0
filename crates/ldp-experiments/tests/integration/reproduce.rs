//! The paper's configurations parse, their quick versions run, and their outputs are
//! pinned (rounded to 6 significant digits, in the order they are produced).

use std::path::Path;

use ldp_experiments::config::Experiment;
use ldp_experiments::runner::{self, load_configs};

fn configs() -> Vec<runner::ConfigFile> {
    load_configs(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../../configs/paper")).unwrap()
}

#[test]
fn every_paper_figure_has_a_config() {
    let names: Vec<String> = configs().into_iter().map(|c| c.experiment.figure).collect();
    for figure in [
        "asr_analysis",
        "mse_analysis_SS_vs_ASS",
        "mse_analysis_other_UE_LH_HE",
        "asr_mse_tradeoff_k100",
        "asr_vs_mse_analysis_high_priv_small_domain",
        "asr_vs_mse_analysis_high_priv_medium_domain",
        "asr_vs_mse_analysis_high_priv_large_domain",
        "asr_vs_mse_analysis_low_priv_small_domain",
        "asr_vs_mse_analysis_low_priv_medium_domain",
        "asr_vs_mse_analysis_low_priv_large_domain",
        "asr_mse_epg_3d",
        "appendix_optimization",
        "weights_impact",
        "parameter_analysis",
        "fig_asr_mse_analytical_vs_empirical",
    ] {
        assert!(names.iter().any(|n| n == figure), "no config for {figure}");
    }
    for c in configs() {
        let file = c.path.file_stem().unwrap().to_string_lossy().into_owned();
        assert_eq!(
            file, c.experiment.figure,
            "file name and figure label differ"
        );
    }
}

#[test]
fn quick_outputs_are_pinned() {
    for c in configs() {
        let (output, manifest) = runner::run(&c, true, "test").unwrap();
        assert!(manifest.rows > 0);
        // The SVG renders.
        let svg = ldp_experiments::plot::render_svg(&output.figure).unwrap();
        assert!(svg.starts_with("<svg"));
        insta::assert_snapshot!(c.experiment.figure.clone(), output.table.to_csv(Some(6)));
    }
}

#[test]
fn appendix_parameters_appear_in_the_data() {
    let c = configs()
        .into_iter()
        .find(|c| c.experiment.figure == "parameter_analysis")
        .unwrap();
    let (output, _) = runner::run(&c, false, "test").unwrap();
    let t = &output.table;
    let chosen = |p: &str| {
        t.rows
            .iter()
            .find(|r| t.text(r, "protocol") == p)
            .map(|r| t.num(r, "adaptive_param"))
            .unwrap()
    };
    assert!((chosen("AUE") - 0.818).abs() < 5e-4);
    assert_eq!(chosen("ALH"), 13.0);
    assert_eq!(chosen("ASS"), 7.0);
    assert!((chosen("ATHE") - 0.783).abs() < 5e-4);
}

#[test]
fn empirical_measurements_agree_with_the_closed_forms() {
    let c = configs()
        .into_iter()
        .find(|c| c.experiment.figure == "fig_asr_mse_analytical_vs_empirical")
        .unwrap();
    let (output, _) = runner::run(&c, true, "test").unwrap();
    let t = &output.table;
    for r in &t.rows {
        // Quick mode has 3 runs, too few to estimate an SE from their spread: use the
        // binomial SE of all 3 n guesses instead (each user's guess succeeds or not).
        let (asr, exact) = (t.num(r, "asr"), t.num(r, "asr_expected"));
        let se = (asr * (1.0 - asr) / (t.num(r, "users") * t.num(r, "runs"))).sqrt();
        let z = (asr - exact) / se;
        assert!(
            z.abs() < 4.0,
            "{} at eps {}: z = {z}",
            t.text(r, "protocol"),
            t.num(r, "eps")
        );
    }
}

#[test]
fn results_do_not_depend_on_the_thread_count() {
    // The two figures that measure: on the paper's data, and on the large domains (whose
    // sketch servers estimate on every core).
    for figure in ["fig_asr_mse_analytical_vs_empirical", "large_domain"] {
        let c = configs()
            .into_iter()
            .find(|c| c.experiment.figure == figure)
            .unwrap();
        let run = |threads| {
            rayon_pool(threads)
                .install(|| runner::run(&c, true, "test").unwrap().0.table.to_csv(None))
        };
        assert_eq!(run(1), run(2), "{figure}");
    }
}

fn rayon_pool(threads: usize) -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap()
}

#[test]
fn malformed_configs_are_rejected() {
    let ok = r#"(figure: "x", title: "t", kind: Objective(protocols: [aue], domain_size: 100, eps: 4.0))"#;
    assert!(Experiment::from_ron(ok).is_ok());
    let unknown_field = r#"(figure: "x", title: "t", colour: "red", kind: Objective(protocols: [aue], domain_size: 100, eps: 4.0))"#;
    assert!(
        Experiment::from_ron(unknown_field)
            .unwrap_err()
            .to_string()
            .contains("colour")
    );
    let bad_strategy = r#"(figure: "x", title: "t", tuning: (strategy: "best"), kind: Objective(protocols: [aue], domain_size: 100, eps: 4.0))"#;
    assert!(
        Experiment::from_ron(bad_strategy)
            .unwrap_err()
            .to_string()
            .contains("best")
    );
    let bad_range = r#"(figure: "x", title: "t", kind: AsrVsEps(protocols: [grr], domain_sizes: [10], eps: [(regime: "r", from: 2.0, to: 1.0, step: 0.1)]))"#;
    assert!(Experiment::from_ron(bad_range).is_err());
    let bad_weight = r#"(figure: "x", title: "t", tuning: (w_asr: 1.5), kind: Objective(protocols: [aue], domain_size: 100, eps: 4.0))"#;
    assert!(Experiment::from_ron(bad_weight).is_err());
    let frontier = |pairs: &str, users: &str| {
        format!(
            r#"(figure: "x", title: "t", kind: FrontierVsN(pairs: {pairs}, dataset: AdultAge, users: {users}, eps: [(regime: "r", from: 2.0, to: 4.0, step: 1.0)], runs: 2, seed: 1))"#
        )
    };
    assert!(Experiment::from_ron(&frontier("[(oue, aue)]", "[500]")).is_ok());
    for (pairs, users, says) in [
        ("[(oue, oue)]", "[500]", "(OUE, OUE) is not"),
        ("[(aue, oue)]", "[500]", "(AUE, OUE) is not"),
        ("[(sue, aue)]", "[500]", "(SUE, AUE) is not"),
        ("[(oue, aue)]", "[0]", "numbers of users >= 1"),
        ("[]", "[500]", "needs pairs"),
    ] {
        let e = Experiment::from_ron(&frontier(pairs, users)).unwrap_err();
        assert!(e.to_string().contains(says), "{pairs} {users}: {e}");
    }
}

#[test]
fn tick_labels_are_short() {
    use ldp_experiments::plot::tick;
    assert_eq!(tick(9.999999999999999e-6), "1e-5");
    assert_eq!(tick(0.25), "0.25");
    assert_eq!(tick(100.0), "100");
    assert_eq!(tick(2.5e4), "2.5e4");
}
