//! The deployment path: what a device runs, with neither serde nor rayon (CI builds and
//! runs this file with `--no-default-features`).

use ldp_core::{
    Aggregator, Client, DomainSize, Epsilon, Estimator, Grr, LocalHashing, Mechanism,
    SubsetSelection, SummationHistogram, ThresholdHistogram, UnaryEncoding,
};
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;

fn k() -> DomainSize {
    DomainSize::new(8).unwrap()
}
fn eps() -> Epsilon {
    Epsilon::new(3.0).unwrap()
}

/// Reports from OS-seeded clients aggregate to the population's distribution.
fn clients_estimate_the_distribution<M: Mechanism>(m: M) {
    let mut client = Client::from_os_rng(m.clone()).unwrap();
    let mut server = m.aggregator();
    let n = 40_000u32;
    for user in 0..n {
        // Item 0 for half the users, the rest spread evenly.
        let item = if user % 2 == 0 { 0 } else { 1 + user % 7 };
        let report = client.report(item).unwrap();
        m.validate(&report).unwrap();
        server.add(&report).unwrap();
    }
    let f = server.estimate(Estimator::Unbiased).unwrap();
    // Far wider than the standard error at n = 40,000 for every family here.
    assert!((f[0] - 0.5).abs() < 0.06, "{m:?}: {f:?}");
    assert!(client.report(8).is_err());
}

#[test]
fn every_family_runs_on_a_client() {
    clients_estimate_the_distribution(Grr::new(k(), eps()).unwrap());
    clients_estimate_the_distribution(SubsetSelection::optimized(k(), eps()).unwrap());
    clients_estimate_the_distribution(UnaryEncoding::optimized(k(), eps()).unwrap());
    clients_estimate_the_distribution(LocalHashing::optimized(k(), eps()).unwrap());
    clients_estimate_the_distribution(SummationHistogram::new(k(), eps()).unwrap());
    clients_estimate_the_distribution(ThresholdHistogram::optimized(k(), eps()).unwrap());
}

#[test]
fn a_client_takes_any_cryptographically_secure_generator() {
    let olh = LocalHashing::optimized(k(), eps()).unwrap();
    let mut a = Client::with_rng(olh.clone(), ChaCha20Rng::seed_from_u64(9));
    let mut b = Client::with_rng(olh, ChaCha20Rng::seed_from_u64(9));
    assert_eq!(a.report(3).unwrap(), b.report(3).unwrap());
    assert_eq!(a.mechanism().domain_size(), k());
}
