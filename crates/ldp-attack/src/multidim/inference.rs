//! Attribute inference on the RS+ solutions: which attribute did the user truly sample?
//!
//! An RS+FD report carries one genuine report among `d - 1` fakes and does not say which.
//! The attacker knows the client ([`Multidim`]) and believes each attribute's items follow
//! some distribution `b_j` (the server's own estimate, or one learnt from users whose
//! sampled attribute is known). A genuine report of attribute `j` then has the law
//! `G_j(r) = sum_v b_j(v) M_j(r | v)` and a fake the law `F_j(r)`
//! ([`Multidim::fake_log_likelihood`]), so by Bayes with the uniform sampling prior
//!
//! ```text
//! P[J = j | r] = (G_j(r_j) / F_j(r_j)) / sum_i (G_i(r_i) / F_i(r_i))
//! ```
//!
//! and the guess maximising it is Bayes-optimal for the attacker's belief: no classifier
//! trained on the same knowledge does better in expectation (the anchors train XGBoost).

use ldp_core::attack_surface::argmax_uniform;
use ldp_core::multidim::{
    Multidim, MultidimAggregator, MultidimError, MultidimReport, log_sum_exp,
};
use ldp_core::{Estimator, Mechanism};
use rand::Rng;

/// What went wrong building or running the attribute-inference attacker.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum InferenceError {
    /// The solution hides no attribute: SPL samples none, and SMP names it.
    #[error(
        "{0} reports hide no sampled attribute: attribute inference applies to RS+FD and RS+RFD"
    )]
    NothingHidden(&'static str),
    /// Beliefs that do not match the attributes.
    #[error("belief of attribute {attribute}: {reason}")]
    Belief {
        /// The attribute.
        attribute: usize,
        /// Why.
        reason: String,
    },
    /// The client or the report was refused.
    #[error(transparent)]
    Multidim(#[from] MultidimError),
}

/// The Bayes-optimal attribute-inference attacker of one RS+ client.
#[derive(Debug, Clone)]
pub struct AttributeInference<'a, M> {
    mechanism: &'a Multidim<M>,
    /// `ln b_j(v)` per attribute.
    log_beliefs: Vec<Vec<f64>>,
}

impl<'a, M: Mechanism> AttributeInference<'a, M> {
    /// The attacker who believes attribute `j`'s items follow `beliefs[j]` (non-negative
    /// weights, normalised here).
    pub fn new(mechanism: &'a Multidim<M>, beliefs: Vec<Vec<f64>>) -> Result<Self, InferenceError> {
        if !mechanism.solution().fakes() {
            return Err(InferenceError::NothingHidden(mechanism.solution().label()));
        }
        let domains = mechanism.domains();
        if beliefs.len() != domains.len() {
            return Err(InferenceError::Belief {
                attribute: beliefs.len().min(domains.len()),
                reason: format!("{} beliefs for {} attributes", beliefs.len(), domains.len()),
            });
        }
        let log_beliefs = beliefs
            .into_iter()
            .zip(&domains)
            .enumerate()
            .map(|(j, (b, k))| {
                let bad = |reason: String| InferenceError::Belief {
                    attribute: j,
                    reason,
                };
                if b.len() != k.as_usize() {
                    return Err(bad(format!("{} weights for {} items", b.len(), k.get())));
                }
                if b.iter().any(|w| !w.is_finite() || *w < 0.0) {
                    return Err(bad("a weight is negative or not finite".into()));
                }
                let total: f64 = b.iter().sum();
                if total <= 0.0 {
                    return Err(bad("the weights sum to zero".into()));
                }
                Ok(b.iter().map(|w| (w / total).ln()).collect())
            })
            .collect::<Result<_, _>>()?;
        Ok(Self {
            mechanism,
            log_beliefs,
        })
    }

    /// The attacker without side knowledge: the server's own estimate of every attribute,
    /// projected onto the simplex (the anchors' "no knowledge" model).
    pub fn from_estimates(
        mechanism: &'a Multidim<M>,
        server: &MultidimAggregator<M>,
    ) -> Result<Self, InferenceError> {
        let beliefs = server.estimate(Estimator::Simplex)?;
        Self::new(mechanism, beliefs)
    }

    /// The attacker who knows the sampled attribute of some users (the anchors' "partial
    /// knowledge"): each attribute's belief is the family's estimate from the genuine
    /// reports of the users known to have sampled it, projected onto the simplex (uniform
    /// for an attribute nobody known sampled).
    pub fn from_labelled<'r>(
        mechanism: &'a Multidim<M>,
        labelled: impl IntoIterator<Item = (&'r MultidimReport<M::Report>, usize)>,
    ) -> Result<Self, InferenceError>
    where
        M::Report: 'r,
    {
        let mut servers: Vec<M::Aggregator> =
            mechanism.attributes().iter().map(M::aggregator).collect();
        for (report, sampled) in labelled {
            mechanism.validate(report)?;
            let (Some(server), Some(genuine)) = (servers.get_mut(sampled), report.of(sampled))
            else {
                return Err(InferenceError::Belief {
                    attribute: sampled,
                    reason: "a labelled user's attribute is out of range".into(),
                });
            };
            ldp_core::Aggregator::add(server, genuine).map_err(|e| MultidimError::Aggregate {
                attribute: Some(sampled as u32),
                source: e,
            })?;
        }
        let beliefs = servers
            .iter()
            .zip(mechanism.domains())
            .map(|(server, k)| {
                if ldp_core::Aggregator::count(server) == 0 {
                    Ok(vec![1.0; k.as_usize()])
                } else {
                    ldp_core::Aggregator::estimate(server, Estimator::Simplex)
                }
            })
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| MultidimError::Aggregate {
                attribute: None,
                source: e,
            })?;
        Self::new(mechanism, beliefs)
    }

    /// `ln P[J = j | report]` for every attribute j (normalised). The report must be one
    /// of this client's (validated).
    pub fn log_posterior(
        &self,
        report: &MultidimReport<M::Report>,
    ) -> Result<Vec<f64>, InferenceError> {
        self.mechanism.validate(report)?;
        let MultidimReport::Every(reports) = report else {
            return Err(InferenceError::NothingHidden("SMP"));
        };
        let mut each = Vec::new();
        let scores: Vec<f64> = reports
            .iter()
            .enumerate()
            .map(|(j, r)| {
                self.mechanism.attributes()[j].log_likelihoods(r, &mut each);
                for (ll, lb) in each.iter_mut().zip(&self.log_beliefs[j]) {
                    *ll += lb;
                }
                let genuine = log_sum_exp(&each);
                genuine - self.mechanism.fake_log_likelihood(j, r)
            })
            .collect();
        let total = log_sum_exp(&scores);
        Ok(scores.into_iter().map(|s| s - total).collect())
    }

    /// The most probable sampled attribute, ties broken uniformly.
    pub fn guess<R: Rng + ?Sized>(
        &self,
        report: &MultidimReport<M::Report>,
        rng: &mut R,
    ) -> Result<usize, InferenceError> {
        let posterior = self.log_posterior(report)?;
        Ok(argmax_uniform(posterior, rng) as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ldp_core::multidim::{Priors, Solution};
    use ldp_core::simulation::{Role, stream_rng};
    use ldp_core::{DomainSize, Epsilon, Grr, GrrReport, UnaryEncoding};

    fn domains(ks: &[u32]) -> Vec<DomainSize> {
        ks.iter().map(|&k| DomainSize::new(k).unwrap()).collect()
    }

    /// Monte Carlo accuracy of the attacker against the exact expected accuracy, summed
    /// over every report of a small RS+FD[GRR] client: within 4 SE.
    #[test]
    fn measured_accuracy_is_the_exact_expectation() {
        let m = Multidim::new(
            Solution::RsFd,
            Epsilon::new(3.0).unwrap(),
            &domains(&[2, 3]),
            Grr::new,
        )
        .unwrap();
        let beliefs = vec![vec![0.8, 0.2], vec![0.1, 0.3, 0.6]];
        let attacker = AttributeInference::new(&m, beliefs).unwrap();
        let items = [0u32, 2];
        // Exact: sum over sampled j and reports r of P[j] P[r | x, j] 1{guess(r) = j}.
        let mut exact = 0.0;
        for y0 in 0..2 {
            for y1 in 0..3 {
                let r = MultidimReport::Every(vec![GrrReport { y: y0 }, GrrReport { y: y1 }]);
                let post = attacker.log_posterior(&r).unwrap();
                let total: f64 = post.iter().map(|l| l.exp()).sum();
                assert!((total - 1.0).abs() < 1e-12);
                let guess = if post[0] > post[1] { 0 } else { 1 };
                assert_ne!(post[0], post[1], "no ties in this instance");
                // P[r, J = guess | x]: the genuine report of `guess`, a uniform fake of the other.
                let reports = [y0, y1];
                let genuine = m.attributes()[guess]
                    .log_likelihood(&GrrReport { y: reports[guess] }, items[guess]);
                let other = 1 - guess;
                let fake = m.fake_log_likelihood(other, &GrrReport { y: reports[other] });
                exact += 0.5 * (genuine + fake).exp();
            }
        }
        let mut rng = stream_rng(9, 0, Role::Genuine, 0);
        let trials = 40_000;
        let mut hits = 0;
        for _ in 0..trials {
            let (r, sampled) = m.perturb_tracked(&items, &mut rng).unwrap();
            hits += usize::from(attacker.guess(&r, &mut rng).unwrap() == sampled.unwrap());
        }
        let measured = hits as f64 / trials as f64;
        let se = (exact * (1.0 - exact) / trials as f64).sqrt();
        assert!((measured - exact).abs() < 4.0 * se, "{measured} vs {exact}");
        assert!(exact > 0.5, "better than the 1/2 baseline: {exact}");
    }

    /// The anchors' ordering at eps = 10 over 18 attributes: SUE-z is found almost always,
    /// UE-r far less often (ACSEmployment: about 100% against at most about 25%).
    #[test]
    fn zero_fakes_betray_the_sampled_attribute() {
        let ks = vec![4u32; 18];
        let eps = Epsilon::new(10.0).unwrap();
        let accuracy = |solution| {
            let m = Multidim::new(solution, eps, &domains(&ks), UnaryEncoding::symmetric).unwrap();
            let mut rng = stream_rng(10, 0, Role::Genuine, 0);
            let mut server = m.aggregator();
            let users: Vec<Vec<u32>> = (0..3000u32)
                .map(|i| (0..18).map(|j| (i + j) % 4 / 3).collect())
                .collect();
            let reports: Vec<_> = users
                .iter()
                .map(|x| m.perturb_tracked(x, &mut rng).unwrap())
                .collect();
            for (r, _) in &reports {
                server.add(r).unwrap();
            }
            let attacker = AttributeInference::from_estimates(&m, &server).unwrap();
            let hits = reports
                .iter()
                .filter(|(r, j)| attacker.guess(r, &mut rng).unwrap() == j.unwrap())
                .count();
            hits as f64 / reports.len() as f64
        };
        let zero = accuracy(Solution::RsFdNull);
        let uniform = accuracy(Solution::RsFd);
        assert!(zero > 0.95, "SUE-z: {zero}");
        assert!(uniform < 0.5 && uniform > 1.0 / 18.0, "SUE-r: {uniform}");
    }

    #[test]
    fn partial_knowledge_learns_beliefs_from_labelled_users() {
        let m = Multidim::with_priors(
            Epsilon::new(2.0).unwrap(),
            Priors::new(vec![vec![0.5, 0.5], vec![0.2, 0.3, 0.5]]).unwrap(),
            Grr::new,
        )
        .unwrap();
        let mut rng = stream_rng(11, 0, Role::Genuine, 0);
        let labelled: Vec<_> = (0..500)
            .map(|_| m.perturb_tracked(&[1, 0], &mut rng).unwrap())
            .collect();
        let attacker =
            AttributeInference::from_labelled(&m, labelled.iter().map(|(r, j)| (r, j.unwrap())))
                .unwrap();
        let post = attacker.log_posterior(&labelled[0].0).unwrap();
        assert_eq!(post.len(), 2);
        // The learnt beliefs find the sampled attribute better than a coin.
        let hits = labelled
            .iter()
            .filter(|(r, j)| attacker.guess(r, &mut rng).unwrap() == j.unwrap())
            .count();
        assert!(hits as f64 / labelled.len() as f64 > 0.6, "{hits} of 500");
        // The learnt beliefs find the sampled attribute better than a coin.
        let hits = labelled
            .iter()
            .filter(|(r, j)| attacker.guess(r, &mut rng).unwrap() == j.unwrap())
            .count();
        assert!(hits as f64 / labelled.len() as f64 > 0.6, "{hits} of 500");
        // SPL hides nothing; beliefs must match the attributes.
        let spl = Multidim::new(
            Solution::Spl,
            Epsilon::new(1.0).unwrap(),
            &domains(&[2, 3]),
            Grr::new,
        )
        .unwrap();
        assert!(matches!(
            AttributeInference::new(&spl, vec![]),
            Err(InferenceError::NothingHidden(_))
        ));
        assert!(matches!(
            AttributeInference::new(&m, vec![vec![1.0, 1.0]]),
            Err(InferenceError::Belief { .. })
        ));
        assert!(matches!(
            AttributeInference::new(&m, vec![vec![1.0, 1.0], vec![1.0, -1.0, 1.0]]),
            Err(InferenceError::Belief { attribute: 1, .. })
        ));
    }
}
