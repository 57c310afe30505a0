//! The module's JavaScript surface, run under Node by wasm-bindgen's test runner
//! (`cargo test` in this folder): results against the libraries it wraps, and every
//! kind of bad input refused by name.

use ldp_analytic::{LhAsr, Poisoning};
use ldp_core::simulation::{Role, perturb_all, stream_rng};
use ldp_core::{DomainSize, Epsilon, Protocol, Spec, dispatch};
use ldp_jsonl::JsonReport;
use ldp_optimize::{Bounds, choose_protocol};
use ldp_wasm::{Client, analyze, choose, frontier, tune};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_test::wasm_bindgen_test;

/// The property `key` of a JavaScript object.
fn get(object: &JsValue, key: &str) -> JsValue {
    js_sys::Reflect::get(object, &JsValue::from_str(key)).expect("an object")
}

fn num(object: &JsValue, key: &str) -> f64 {
    get(object, key)
        .as_f64()
        .unwrap_or_else(|| panic!("{key} is a number"))
}

fn options(json: &str) -> JsValue {
    js_sys::JSON::parse(json).expect("valid JSON")
}

/// The `name` and `message` of a thrown JavaScript error.
fn thrown(e: JsValue) -> (String, String) {
    let e: js_sys::Error = e.dyn_into().expect("an Error");
    (e.name().into(), e.message().into())
}

/// The seeded streams are rand_chacha's ChaCha8, word for word, in every way of drawing.
/// Built with `simd128` (as `cargo xtask web --test` builds these tests, and the measuring
/// workers' module), ldp-core computes the blocks itself, one per SIMD lane; without it,
/// the stream is rand_chacha's own.
#[wasm_bindgen_test]
fn seeded_streams_are_chacha8_word_for_word() {
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;
    let roles = [
        (Role::Genuine, 1u64),
        (Role::Attacker, 3),
        (Role::Other(5), (1 << 32) | 5),
    ];
    for ((seed, run, batch), (role, code)) in [(0, 0, 0), (7, 3, 1), (u64::MAX, 19, u64::MAX)]
        .into_iter()
        .zip(roles)
    {
        let mut ours = stream_rng(seed, run, role, batch);
        let mut key = [0u8; 32];
        key[..8].copy_from_slice(&u64::to_le_bytes(seed));
        key[8..16].copy_from_slice(&u64::to_le_bytes(run));
        key[16..24].copy_from_slice(&u64::to_le_bytes(code));
        let mut theirs = ChaCha8Rng::from_seed(key);
        theirs.set_stream(batch);
        // 300 rounds of 1 + 2 + 4 words: over 30 refills of 64 words, at every offset.
        for i in 0..300 {
            assert_eq!(ours.next_u32(), theirs.next_u32(), "word {i}");
            assert_eq!(ours.next_u64(), theirs.next_u64(), "u64 {i}");
            let (mut a, mut b) = ([0u8; 13], [0u8; 13]);
            ours.fill_bytes(&mut a);
            theirs.fill_bytes(&mut b);
            assert_eq!(a, b, "bytes {i}");
        }
    }
}

#[wasm_bindgen_test]
fn every_protocol_perturbs_into_valid_reports() {
    for p in Protocol::ALL {
        let mut client = Client::new(p.name(), 64.0, 2.0, None).expect("a protocol");
        assert_eq!(client.protocol(), p.name());
        let spec: Spec = serde_json::from_str(&client.spec()).expect("a spec");
        let m = spec.build().expect("builds");
        let lines = client
            .perturb_batch(&[0.0, 17.0, 63.0])
            .expect("items in range");
        assert_eq!(lines.lines().count(), 3, "{}", p.name());
        dispatch!(&m, m => {
            for line in lines.lines().chain([client.perturb(5.0).unwrap().as_str()]) {
                let report = ldp_core::Mechanism::validate(
                    m,
                    &JsonReport::parse_json(line.as_bytes()).expect("parses"),
                );
                assert!(report.is_ok(), "{}: {line}", p.name());
            }
        });
    }
}

#[wasm_bindgen_test]
fn seeded_reports_are_ldp_cores_seeded_streams() {
    let client = Client::new("olh", 100.0, 1.0, None).unwrap();
    let items: Vec<f64> = (0..5000).map(|i| f64::from(i % 100)).collect();
    let lines = client
        .perturb_seeded(&items, JsValue::from_f64(42.0))
        .unwrap();
    let m = Spec::classic(
        Protocol::Olh,
        DomainSize::new(100).unwrap(),
        Epsilon::new(1.0).unwrap(),
    )
    .unwrap()
    .build()
    .unwrap();
    let xs: Vec<u32> = items.iter().map(|&v| v as u32).collect();
    let expected = dispatch!(&m, m => {
        let mut out = Vec::new();
        for r in perturb_all(m, &xs, 42, 0, Role::Genuine).unwrap() {
            r.write_json(&mut out);
            out.push(b'\n');
        }
        String::from_utf8(out).unwrap()
    });
    assert_eq!(lines, expected);
    // A BigInt seed is the same seed.
    let big = client
        .perturb_seeded(&items, js_sys::BigInt::from(42u64).into())
        .unwrap();
    assert_eq!(big, expected);
}

#[wasm_bindgen_test]
fn unseeded_reports_differ_between_clients() {
    // Two clients keyed by the CSPRNG: 64 GRR reports at k = 1000 agree by chance with
    // probability about 1e-120.
    let items: Vec<f64> = vec![3.0; 64];
    let a = Client::new("grr", 1000.0, 0.5, None)
        .unwrap()
        .perturb_batch(&items);
    let b = Client::new("grr", 1000.0, 0.5, None)
        .unwrap()
        .perturb_batch(&items);
    assert_ne!(a.unwrap(), b.unwrap());
}

#[wasm_bindgen_test]
fn the_attack_is_measured_beside_its_closed_form() {
    let mut client = Client::new("grr", 10.0, 2.0, None).unwrap();
    let m = client.attack(4.0, 20_000.0).unwrap();
    let expected = 2f64.exp() / (2f64.exp() + 9.0);
    assert!((num(&m, "expected") - expected).abs() < 1e-15);
    // 5 SE: a seeded test cannot be had (the CSPRNG), so the bound is loose.
    assert!((num(&m, "asr") - expected).abs() < 5.0 * num(&m, "se"));
    let report = client.perturb(4.0).unwrap();
    assert!(client.guess(&report).unwrap() < 10);
    let (name, message) = thrown(client.guess(r#"{"y":10}"#).unwrap_err());
    assert_eq!(name, "InputError");
    assert!(message.contains("report"), "{message}");
}

#[wasm_bindgen_test]
fn analyze_gives_the_libraries_numbers_under_the_clis_columns() {
    let rows = analyze("all", 100.0, 1.0, JsValue::UNDEFINED).unwrap();
    let rows: js_sys::Array = rows.dyn_into().unwrap();
    assert_eq!(rows.length() as usize, Protocol::ALL.len());
    let (k, eps) = (DomainSize::new(100).unwrap(), Epsilon::new(1.0).unwrap());
    let oue = rows
        .iter()
        .find(|r| get(r, "protocol").as_string().as_deref() == Some("oue"))
        .unwrap();
    let spec = Spec::classic(Protocol::Oue, k, eps).unwrap();
    assert_eq!(
        num(&oue, "mse"),
        ldp_analytic::variance::approx_per_user(&spec)
    );
    assert_eq!(
        num(&oue, "asr"),
        ldp_analytic::asr::expected(&spec, LhAsr::Paper)
    );
    assert_eq!(num(&oue, "k"), 100.0);
    // SHE's EPG is unbounded: null, as the CLI leaves its cell empty.
    let she = rows
        .iter()
        .find(|r| get(r, "protocol").as_string().as_deref() == Some("she"))
        .unwrap();
    assert!(get(&she, "epg").is_null());
}

#[wasm_bindgen_test]
fn choose_is_the_libraries_choice() {
    let pick = choose(100.0, 4.0, options(r#"{"asr_max":0.05,"bits_max":64}"#)).unwrap();
    let (k, eps) = (DomainSize::new(100).unwrap(), Epsilon::new(4.0).unwrap());
    let bounds = Bounds::asr(0.05).unwrap().with_bits(64.0).unwrap();
    let want = choose_protocol(k, eps, &bounds, LhAsr::Paper, &Poisoning::default()).unwrap();
    assert_eq!(
        get(&pick, "protocol").as_string().unwrap(),
        want.protocol.name()
    );
    assert_eq!(num(&pick, "mse"), want.objectives.mse);
    assert_eq!(num(&pick, "asr"), want.objectives.asr);
    // The spec it returns makes a client of exactly that instance.
    let spec = js_sys::JSON::stringify(&get(&pick, "spec")).unwrap();
    let client = Client::from_spec(&String::from(spec)).unwrap();
    let built: Spec = serde_json::from_str(&client.spec()).unwrap();
    assert_eq!(built, want.spec);
    // Unreachable bounds say what is reachable.
    let (name, message) = thrown(choose(100.0, 1.0, options(r#"{"asr_max":1e-9}"#)).unwrap_err());
    assert_eq!(name, "TuningError");
    assert!(message.contains("lowest asr"), "{message}");
}

#[wasm_bindgen_test]
fn tune_and_frontier_answer_as_the_cli() {
    let t = tune("aue", 100.0, 4.0, JsValue::UNDEFINED).unwrap();
    assert!((num(&t, "param") - 0.818).abs() < 1e-3, "the appendix's p");
    let front = frontier("ass", 100.0, 1.0, None, JsValue::UNDEFINED, None).unwrap();
    let front: js_sys::Array = front.dyn_into().unwrap();
    assert!(front.length() > 2);
    // Thinned for a plot: evenly by position, both ends kept, at most the points asked.
    let params = |a: &js_sys::Array| a.iter().map(|c| num(&c, "param")).collect::<Vec<_>>();
    let all = params(&front);
    for m in [2, 5, 7] {
        let thin = frontier("ass", 100.0, 1.0, None, JsValue::UNDEFINED, Some(m as f64)).unwrap();
        let thin = params(&thin.dyn_into().unwrap());
        let step = (all.len() - 1) as f64 / (m - 1) as f64;
        let expected: Vec<f64> = (0..m)
            .map(|i| all[(i as f64 * step).round() as usize])
            .collect();
        assert_eq!(thin, expected, "{m} points");
        assert_eq!((thin[0], thin[m - 1]), (all[0], all[all.len() - 1]));
    }
    let many = frontier("ass", 100.0, 1.0, None, JsValue::UNDEFINED, Some(1e6)).unwrap();
    assert_eq!(params(&many.dyn_into().unwrap()), all);
    // A frontier: MSE falls as ASR rises.
    let points: Vec<(f64, f64)> = front
        .iter()
        .map(|c| (num(&c, "asr"), num(&c, "mse")))
        .collect();
    let mut sorted = points.clone();
    sorted.sort_by(|a, b| a.0.total_cmp(&b.0));
    assert!(sorted.windows(2).all(|w| w[1].1 <= w[0].1), "{points:?}");
}

#[wasm_bindgen_test]
fn bad_input_is_refused_by_name() {
    let cases: Vec<(Result<(), JsValue>, &str, &str)> = vec![
        (
            Client::new("xyz", 10.0, 1.0, None).map(drop),
            "ParamError",
            "protocol",
        ),
        (
            Client::new("grr", 10.5, 1.0, None).map(drop),
            "ParamError",
            "k:",
        ),
        (
            Client::new("grr", -1.0, 1.0, None).map(drop),
            "ParamError",
            "k:",
        ),
        (
            Client::new("grr", 10.0, f64::NAN, None).map(drop),
            "ParamError",
            "eps",
        ),
        (
            Client::new("oue", 10.0, 1.0, Some("0.6".into())).map(drop),
            "ParamError",
            "param",
        ),
        (
            Client::from_spec("{\"k\":4}").map(drop),
            "ParamError",
            "spec",
        ),
        (
            Client::new("grr", 10.0, 1.0, None)
                .unwrap()
                .perturb(10.0)
                .map(drop),
            "InputError",
            "from 0 to 9",
        ),
        (
            Client::new("grr", 10.0, 1.0, None)
                .unwrap()
                .perturb_batch(&[1.0, 2.5])
                .map(drop),
            "InputError",
            "items[1] = 2.5",
        ),
        (
            Client::new("grr", 10.0, 1.0, None)
                .unwrap()
                .perturb_seeded(&[1.0], JsValue::from_f64(-1.0))
                .map(drop),
            "ParamError",
            "seed",
        ),
        (
            analyze("all", 100.0, 1.0, options(r#"{"w_asr":2}"#)).map(drop),
            "ParamError",
            "w_asr",
        ),
        (
            analyze("all", 100.0, 1.0, options(r#"{"wasr":0.5}"#)).map(drop),
            "ParamError",
            "wasr",
        ),
        (
            analyze("all", 100.0, 1.0, options(r#"{"asr_max":0.1}"#)).map(drop),
            "ParamError",
            "asr_max",
        ),
        (
            choose(100.0, 1.0, JsValue::UNDEFINED).map(drop),
            "ParamError",
            "bound",
        ),
        (
            // JSON would turn NaN into null, "no bound": refused instead.
            choose(100.0, 1.0, {
                let o = js_sys::Object::new();
                js_sys::Reflect::set(&o, &"asr_max".into(), &JsValue::from_f64(f64::NAN)).unwrap();
                o.into()
            })
            .map(drop),
            "ParamError",
            "asr_max: expected a finite number",
        ),
        (
            Client::new("grr", 10.0, 1.0, None)
                .unwrap()
                .attack(1.0, -1.0)
                .map(drop),
            "ParamError",
            "draws",
        ),
        (
            Client::new("grr", 10.0, 1.0, None)
                .unwrap()
                .attack(1.0, 2.5)
                .map(drop),
            "ParamError",
            "draws",
        ),
        (
            frontier("grr", 100.0, 1.0, None, JsValue::UNDEFINED, None).map(drop),
            "ParamError",
            "protocol",
        ),
        (
            frontier("ass", 100.0, 1.0, None, JsValue::UNDEFINED, Some(1.0)).map(drop),
            "ParamError",
            "maxPoints: at least 2",
        ),
    ];
    for (i, (result, name, needle)) in cases.into_iter().enumerate() {
        let (got, message) = thrown(result.expect_err("refused"));
        assert_eq!(got, name, "case {i}: {message}");
        assert!(
            message.contains(needle),
            "case {i}: `{message}` lacks `{needle}`"
        );
    }
}
