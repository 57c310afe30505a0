//! Parquet bytes per report for every family and set encoding, as printed in docs/report-format.md:
//! `cargo run --release -p ldp-arrow --example report_sizes`.

use ldp_arrow::{ReportWriter, SetEncoding};
use ldp_core::simulation::{Role, perturb_all};
use ldp_core::{DomainSize, Epsilon, Protocol, Spec, dispatch};

fn bytes(spec: &Spec, encoding: SetEncoding, n: u32) -> f64 {
    let k = spec.k().get();
    let items: Vec<u32> = (0..n).map(|i| (i.wrapping_mul(7919)) % k).collect();
    let path = std::env::temp_dir().join(format!("ldp-sizes-{}.parquet", std::process::id()));
    dispatch!(&spec.build().unwrap(), m => {
        let reports = perturb_all(m, &items, 1, 0, Role::Genuine).unwrap();
        let mut w = ReportWriter::create(&path, m.clone(), Some(encoding)).unwrap();
        for chunk in reports.chunks(65_536) {
            w.write(chunk).unwrap();
        }
        w.finish().unwrap();
    });
    let size = std::fs::metadata(&path).unwrap().len() as f64;
    std::fs::remove_file(&path).ok();
    size / f64::from(n)
}

fn main() {
    println!("protocol,k,eps,list_bytes,bitmap_bytes,chosen");
    for k in [100u32, 1000, 10_000] {
        for eps in [1.0, 4.0] {
            for p in Protocol::CLASSIC {
                let spec =
                    Spec::classic(p, DomainSize::new(k).unwrap(), Epsilon::new(eps).unwrap())
                        .unwrap();
                let n = if p == Protocol::She {
                    20_000_000 / k
                } else {
                    100_000_000 / k.max(1000)
                };
                let n = n.min(200_000);
                let list = bytes(&spec, SetEncoding::List, n);
                let set_valued = matches!(
                    p,
                    Protocol::Ss | Protocol::Sue | Protocol::Oue | Protocol::The
                );
                let bitmap = if set_valued {
                    format!("{:.1}", bytes(&spec, SetEncoding::Bitmap, n))
                } else {
                    String::new()
                };
                let chosen = if set_valued {
                    SetEncoding::smaller_for(&spec).name()
                } else {
                    ""
                };
                println!("{},{k},{eps},{list:.1},{bitmap},{chosen}", p.name());
            }
        }
    }
}
