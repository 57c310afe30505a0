//! Every protocol's (param, ASR, MSE, EPG) at a few (k, eps), pinned: the paper's twelve
//! and the families added since.

use std::collections::BTreeMap;

use ldp_core::{DomainSize, Epsilon, Protocol};
use ldp_optimize::{TuneOptions, objectives, protocol_spec};

/// Ten significant digits: stable across platforms.
fn round(v: f64) -> String {
    if v.is_finite() {
        format!("{v:.9e}")
    } else {
        "unbounded".into()
    }
}

#[test]
fn protocol_value_table() {
    let o = TuneOptions::default();
    let mut table = BTreeMap::new();
    for (kv, e) in [(25, 0.5), (100, 4.0), (1000, 2.0), (10_000, 8.0)] {
        let (k, eps) = (DomainSize::new(kv).unwrap(), Epsilon::new(e).unwrap());
        for p in Protocol::ALL {
            let spec = protocol_spec(p, k, eps, &o).unwrap();
            let m = objectives(&spec, o.lh_asr, &o.poisoning).unwrap();
            let named = spec.params().named_values();
            let param = match named.as_slice() {
                [] => "-".to_owned(),
                [(_, v)] => round(*v),
                several => several
                    .iter()
                    .map(|(n, v)| format!("{n}:{}", round(*v)))
                    .collect::<Vec<_>>()
                    .join(","),
            };
            table.insert(
                format!("k={kv:>5} eps={e:>3} {:>4}", p.label()),
                format!(
                    "param={param} asr={} mse={} epg={}",
                    round(m.asr),
                    round(m.mse),
                    round(m.epg)
                ),
            );
        }
    }
    insta::assert_debug_snapshot!(table);
}
