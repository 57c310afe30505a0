//! Joint reconstruction (the paper's Example 1): the attacker reconstructs every attribute
//! of a user from one multidimensional report; re-identification needs them all.

use ldp_core::multidim::{Multidim, MultidimError, MultidimReport};
use ldp_core::simulation::{Role, USERS_PER_STREAM, stream_rng};
use ldp_core::{AttackSurface, parallel};
use rand::{Rng, RngExt};

/// Measured reconstruction success, per attribute and jointly.
#[derive(Debug, Clone, PartialEq)]
pub struct JointReconstruction {
    /// The fraction of users whose attribute j was reconstructed.
    pub per_attribute: Vec<f64>,
    /// The fraction of users whose every attribute was.
    pub joint: f64,
    /// The users.
    pub users: usize,
}

/// The attacker's guess of every attribute from one report: the family's reconstruction
/// attack on each attribute's report (a fake's included: the attacker cannot tell), and
/// a uniform guess of an attribute an SMP report does not carry.
pub fn guess_all<M: AttackSurface, R: Rng + ?Sized>(
    mechanism: &Multidim<M>,
    report: &MultidimReport<M::Report>,
    rng: &mut R,
) -> Vec<u32> {
    mechanism
        .attributes()
        .iter()
        .enumerate()
        .map(|(j, m)| match report.of(j) {
            Some(r) => m.guess(r, rng),
            None => rng.random_range(0..m.domain_size().get()),
        })
        .collect()
}

/// Perturbs every user of `rows` (row-major, one item per attribute) once and scores
/// [`guess_all`]. Seeded.
pub fn measure_joint<M: AttackSurface>(
    mechanism: &Multidim<M>,
    rows: &[u32],
    seed: u64,
) -> Result<JointReconstruction, MultidimError> {
    let d = mechanism.dimensions();
    if rows.len() % d != 0 {
        return Err(MultidimError::Arity {
            expected: d,
            found: rows.len() % d,
        });
    }
    let n = rows.len() / d;
    let parts = parallel::map(n.div_ceil(USERS_PER_STREAM), |batch| {
        let mut rng = stream_rng(seed, 0, Role::Genuine, batch as u64);
        let (mut hits, mut joint) = (vec![0u64; d], 0u64);
        let users = batch * USERS_PER_STREAM..((batch + 1) * USERS_PER_STREAM).min(n);
        for user in users {
            let items = &rows[user * d..(user + 1) * d];
            let report = mechanism.perturb(items, &mut rng)?;
            let guesses = guess_all(mechanism, &report, &mut rng);
            let mut all = true;
            for (j, (g, x)) in guesses.iter().zip(items).enumerate() {
                if g == x {
                    hits[j] += 1;
                } else {
                    all = false;
                }
            }
            joint += u64::from(all);
        }
        Ok((hits, joint))
    })
    .into_iter()
    .collect::<Result<Vec<_>, MultidimError>>()?;
    let (mut hits, mut joint) = (vec![0u64; d], 0u64);
    for (h, jn) in parts {
        for (t, x) in hits.iter_mut().zip(h) {
            *t += x;
        }
        joint += jn;
    }
    let share = |x: u64| x as f64 / n.max(1) as f64;
    Ok(JointReconstruction {
        per_attribute: hits.into_iter().map(share).collect(),
        joint: share(joint),
        users: n,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use ldp_core::multidim::Solution;
    use ldp_core::{DomainSize, Epsilon, Grr, PureProtocol};

    /// SPL[GRR]: attribute j is reconstructed w.p. p_j at eps / d, independently, so the
    /// joint rate is the product; measured within 4 SE of both.
    #[test]
    fn spl_joint_success_is_the_product_of_the_attributes() {
        let ks = [3u32, 5];
        let domains: Vec<DomainSize> = ks.iter().map(|&k| DomainSize::new(k).unwrap()).collect();
        let m = Multidim::new(
            Solution::Spl,
            Epsilon::new(4.0).unwrap(),
            &domains,
            Grr::new,
        )
        .unwrap();
        let n = 50_000;
        let rows: Vec<u32> = (0..n * 2).map(|i| (i as u32 / 2) % ks[i % 2]).collect();
        let got = measure_joint(&m, &rows, 3).unwrap();
        let p: Vec<f64> = m.attributes().iter().map(|g| g.p_star()).collect();
        let expected = [p[0], p[1], p[0] * p[1]];
        let measured = [got.per_attribute[0], got.per_attribute[1], got.joint];
        for (e, x) in expected.iter().zip(measured) {
            let se = (e * (1.0 - e) / n as f64).sqrt();
            assert!((x - e).abs() < 4.0 * se, "{x} vs {e}");
        }
    }

    /// SMP: the unreported attribute is guessed uniformly.
    #[test]
    fn smp_guesses_what_it_was_not_told() {
        let domains = [DomainSize::new(2).unwrap(), DomainSize::new(4).unwrap()];
        let m = Multidim::new(
            Solution::Smp,
            Epsilon::new(30.0).unwrap(),
            &domains,
            Grr::new,
        )
        .unwrap();
        let n = 40_000;
        let rows: Vec<u32> = (0..n * 2).map(|i| (i % 2) as u32).collect();
        let got = measure_joint(&m, &rows, 4).unwrap();
        // Truthful when sampled: attribute 0 found w.p. 1/2 + 1/2 * 1/2, attribute 1 w.p.
        // 1/2 + 1/2 * 1/4, both w.p. 1/2 (1/4) + 1/2 (1/2).
        for (x, e) in got
            .per_attribute
            .iter()
            .chain([&got.joint])
            .zip([0.75, 0.625, 0.375])
        {
            let se = (e * (1.0 - e) / n as f64).sqrt();
            assert!((x - e).abs() < 4.0 * se, "{x} vs {e}");
        }
    }
}
