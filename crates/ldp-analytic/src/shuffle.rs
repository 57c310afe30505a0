//! Privacy amplification by shuffling: the central (eps, delta) guarantee of n shuffled
//! reports of any eps0-LDP randomizer, and the inverse, the largest eps0 that a target
//! central eps allows.
//!
//! A shuffler hides *who* sent each report from the analyst who sees the shuffled batch.
//! It hides nothing from a party that sees reports with identities (the collector before
//! the shuffler, or anyone who links reports to users), and nothing of what one report
//! says: against that party the per-report reconstruction rate ([`crate::asr`]) and the
//! rate after t linked reports ([`crate::longitudinal`]) stand as they are.
//!
//! The bounds are those of Feldman, McMillan and Talwar, "Hiding Among the Clones: A
//! Simple and Nearly Optimal Analysis of Privacy Amplification by Shuffling" (FOCS 2021),
//! which hold for every eps0-LDP randomizer, and one protocol-specific bound:
//!
//! - [`Shuffle::closed_form`], their closed-form bound, valid when
//!   eps0 <= ln(n / (16 ln(4/delta))), computed as their reference code
//!   (apple/ml-shuffling-amplification, `closedformanalysis`) does.
//! - [`Shuffle::central_eps`], their numerical bound. Each other user's report is a
//!   "clone" of the first user's with probability e^-eps0, so that the clone count is
//!   C ~ Bin(n-1, e^-eps0), and the shuffled output reduces to a pair of distributions P,
//!   Q over the split of C + 1 reports; the central delta at eps is the hockey-stick
//!   divergence of P and Q. The reference code bounds that divergence on intervals of c of
//!   width `step` by their end points (and, in its upper bound, takes the q-side maximum
//!   of one end twice); this module evaluates it at every c exactly, in O(1) per c by
//!   recurrences on the binomial tails, so that its lower and upper bounds on delta differ
//!   only by the mass of C left outside the window summed (the counts below 1e-40 of the
//!   mode's probability and below delta times 1e-12), and the bracket on eps is the
//!   bisection's tolerance wide.
//!
//! - [`Shuffle::randomized_response`]: for k-ary randomized response (GRR, and SS with
//!   omega = 1, whose reports are GRR's), the same clone reduction on k-RR's exact
//!   decomposition, as Balle, Bell, Gascón and Nissim's privacy blanket ("The Privacy
//!   Blanket of the Shuffle Model", CRYPTO 2019) writes it and Koskela, Heikkilä and
//!   Honkela ("Tight Accounting in the Shuffle Model of Differential Privacy", 2021)
//!   account it. With q = 1/(e^eps0 + k - 1), k-RR reports each item other than the true
//!   one with probability q, so each other user is a clone of the first user's report on
//!   x0 or on x1 with probability q each: C ~ Bin(n-1, 2q), not Bin(n-1, e^-eps0). The
//!   first user's report is x0 or x1 with probability (e^eps0 + 1) q under either
//!   input, and then x0 with probability e^eps0 / (e^eps0 + 1), the generic pair's; any
//!   other report says nothing of which input it came from. Revealing which of the two
//!   happened only helps the analyst, so the central delta is at most (e^eps0 + 1) q
//!   times the clone divergence with C ~ Bin(n-1, 2q). Both bounds hold for k-RR; the
//!   accountant takes the smaller delta at each eps. The k-RR bound is the smaller when
//!   e^eps0 > k - 1 (more clones) and can be at any k through its factor.
//!
//! Shuffling never weakens the local guarantee: every eps reported is at most eps0.
//!
//! ```
//! use ldp_analytic::shuffle::Shuffle;
//! // The reference code's example: n = 10^5, eps0 = 4, delta = 10^-6.
//! let shuffle = Shuffle::new(100_000, 1e-6)?;
//! let closed = shuffle.closed_form(4.0)?.expect("eps0 = 4 is in the closed form's range");
//! assert!((closed - 0.5378040242374512).abs() < 1e-12);
//! let central = shuffle.central_eps(4.0)?;
//! // Inside the reference code's bracket [0.16754, 0.17279], and far narrower.
//! assert!(central.lower >= 0.1675385583317841 && central.upper <= 0.172790550755978);
//! assert!(central.upper - central.lower < 1e-9);
//! // The largest eps0 whose shuffled reports are (0.5, 10^-6)-DP.
//! let eps0 = shuffle.max_local_eps(0.5)?;
//! assert!(eps0 > 5.0 && shuffle.central_delta(eps0, 0.5)?.upper <= 1e-6);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::f64::consts::PI;

/// A shuffled batch: how many reports, and the central delta to guarantee; optionally,
/// that the reports are k-ary randomized response's ([`Shuffle::randomized_response`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Shuffle {
    users: u64,
    delta: f64,
    /// k of k-ary randomized response, when the reports are known to be its.
    rr_domain: Option<u64>,
}

/// A central eps and how far it is known: `lower <= eps <= upper`. `upper` is the
/// guarantee (the shuffled reports are (upper, delta)-DP); `lower` is the least eps this
/// analysis could certify, so their gap is the numerical slack.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Bracket {
    /// Below the least eps this analysis certifies.
    pub lower: f64,
    /// Certified: the shuffled reports are (upper, delta)-DP.
    pub upper: f64,
}

/// A setting the accountant refuses, named.
#[derive(Debug, Clone, Copy, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ShuffleError {
    /// Fewer than two reports: there is nothing to hide among.
    #[error("a shuffle needs at least 2 reports, got {0}")]
    TooFewUsers(u64),
    /// More than [`MAX_USERS`] reports.
    #[error("at most {MAX_USERS} shuffled reports (more people than live on Earth), got {0}")]
    TooManyUsers(u64),
    /// Delta outside (0, 1).
    #[error("delta must lie strictly between 0 and 1, got {0}")]
    Delta(f64),
    /// A local eps that is not positive and finite.
    #[error("the local epsilon eps0 must be positive and finite, got {0}")]
    LocalEps(f64),
    /// A target central eps that is not positive and finite.
    #[error("the target central epsilon must be positive and finite, got {0}")]
    CentralEps(f64),
    /// A randomized response over fewer than 2 items.
    #[error("randomized response needs a domain of at least 2 items, got k = {0}")]
    Domain(u64),
}

/// The bisections stop when their interval is this narrow, relative to its upper end.
const TOLERANCE: f64 = 1e-12;

/// The clone counts summed: those whose probability is at least this fraction of the
/// most likely count's (and of delta times 1e-12); the rest is bounded and added to the
/// upper bound on delta.
const WINDOW: f64 = 1e-40;

/// The most reports one shuffle may hold: the window of clone counts grows as their
/// square root (about 1.4 million counts here at delta >= 1e-28, a few million at the
/// smallest delta).
pub const MAX_USERS: u64 = 10_000_000_000;

impl Shuffle {
    /// `users` shuffled reports (2 to [`MAX_USERS`]), guaranteeing central `delta` in
    /// (0, 1).
    ///
    /// # Errors
    /// [`ShuffleError::TooFewUsers`], [`ShuffleError::TooManyUsers`],
    /// [`ShuffleError::Delta`].
    pub fn new(users: u64, delta: f64) -> Result<Self, ShuffleError> {
        if users < 2 {
            return Err(ShuffleError::TooFewUsers(users));
        }
        if users > MAX_USERS {
            return Err(ShuffleError::TooManyUsers(users));
        }
        if !(delta > 0.0 && delta < 1.0) {
            return Err(ShuffleError::Delta(delta));
        }
        Ok(Self {
            users,
            delta,
            rr_domain: None,
        })
    }

    /// The same batch, known to hold k-ary randomized response's reports (GRR over `k`
    /// items, or SS with omega = 1): [`Shuffle::central_eps`], [`Shuffle::central_delta`]
    /// and [`Shuffle::max_local_eps`] then take the smaller delta of the generic bound and
    /// k-RR's own (see the module's documentation), never a larger one.
    /// [`Shuffle::closed_form`] stays the generic closed form.
    ///
    /// ```
    /// use ldp_analytic::shuffle::Shuffle;
    /// let any = Shuffle::new(100_000, 1e-6)?;
    /// let grr = any.randomized_response(2)?;
    /// // Binary randomized response at eps0 = 4: more clones, a smaller central eps.
    /// let (generic, specific) = (any.central_eps(4.0)?.upper, grr.central_eps(4.0)?.upper);
    /// assert!(specific < 0.8 * generic);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// [`ShuffleError::Domain`] for k < 2.
    pub fn randomized_response(self, k: u64) -> Result<Self, ShuffleError> {
        if k < 2 {
            return Err(ShuffleError::Domain(k));
        }
        Ok(Self {
            rr_domain: Some(k),
            ..self
        })
    }

    /// The same batch for reports of `spec`'s mechanism: [`Shuffle::randomized_response`]
    /// over its k where its reports are k-ary randomized response's (every report
    /// supports exactly one item, with pure probabilities p* = e^eps q*: GRR, and SS at
    /// omega = 1), unchanged otherwise.
    ///
    /// ```
    /// use ldp_analytic::shuffle::Shuffle;
    /// use ldp_core::{DomainSize, Epsilon, Protocol, Spec};
    /// let (k, eps) = (DomainSize::new(10)?, Epsilon::new(4.0)?);
    /// let batch = Shuffle::new(100_000, 1e-6)?;
    /// let grr = Spec::classic(Protocol::Grr, k, eps)?;
    /// let oue = Spec::classic(Protocol::Oue, k, eps)?;
    /// assert_eq!(batch.for_spec(&grr).randomized_response_domain(), Some(10));
    /// assert_eq!(batch.for_spec(&oue), batch);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn for_spec(self, spec: &ldp_core::Spec) -> Self {
        let one_item = spec.support_size_range() == Some((1, 1));
        if one_item && spec.pure_probabilities().is_some() {
            let k = u64::from(spec.k().get());
            self.randomized_response(k).unwrap_or(self)
        } else {
            self
        }
    }

    /// k of k-ary randomized response, when [`Shuffle::randomized_response`] set it.
    #[must_use]
    pub fn randomized_response_domain(&self) -> Option<u64> {
        self.rr_domain
    }

    /// The number of shuffled reports.
    #[must_use]
    pub fn users(&self) -> u64 {
        self.users
    }

    /// The central delta.
    #[must_use]
    pub fn delta(&self) -> f64 {
        self.delta
    }

    /// The closed-form central eps (Feldman, McMillan and Talwar, Theorem 3.1), or `None`
    /// where it does not apply: eps0 above [`Shuffle::closed_form_max_local_eps`].
    ///
    /// # Errors
    /// [`ShuffleError::LocalEps`].
    pub fn closed_form(&self, eps0: f64) -> Result<Option<f64>, ShuffleError> {
        check_local(eps0)?;
        if eps0 > self.closed_form_max_local_eps() {
            return Ok(None);
        }
        let n = self.users as f64;
        let a = 8.0 * (eps0.exp() * (4.0 / self.delta).ln()).sqrt() / n.sqrt();
        let c = 8.0 * eps0.exp() / n;
        let e = (a + c).ln_1p();
        let b = -(-eps0).exp_m1();
        let d = 1.0 + (-eps0 - e).exp();
        Ok(Some((b / d * (a + c)).ln_1p().min(eps0)))
    }

    /// The largest eps0 the closed form applies to, ln(n / (16 ln(4/delta))) (negative
    /// when n is too small for it to apply at all).
    #[must_use]
    pub fn closed_form_max_local_eps(&self) -> f64 {
        (self.users as f64 / (16.0 * (4.0 / self.delta).ln())).ln()
    }

    /// The numerical central eps of shuffled eps0-LDP reports, bracketed to about 1e-12
    /// relative (see the module's documentation).
    ///
    /// # Errors
    /// [`ShuffleError::LocalEps`].
    pub fn central_eps(&self, eps0: f64) -> Result<Bracket, ShuffleError> {
        check_local(eps0)?;
        let clones = self.bound(eps0);
        if clones.delta(0.0).upper <= self.delta {
            // delta covers the total variation distance: eps = 0 is certified.
            return Ok(Bracket {
                lower: 0.0,
                upper: 0.0,
            });
        }
        // At eps0 itself the hockey-stick divergence is 0: every search starts certified.
        let upper = bisect(0.0, eps0, |eps| clones.delta(eps).upper <= self.delta).1;
        // The lower end's threshold is the upper's but for the window's tail (far below
        // delta): look just below it first.
        let below = |eps: f64| clones.delta(eps).lower <= self.delta;
        let near = upper * (1.0 - 1e-9);
        let start = if below(near) { 0.0 } else { near };
        let lower = bisect(start, upper, below).0;
        Ok(Bracket { lower, upper })
    }

    /// The central delta of shuffled eps0-LDP reports at central `eps`, bracketed: its
    /// lower end leaves out the clone counts outside the window summed, its upper end adds
    /// a bound on their mass.
    ///
    /// # Errors
    /// [`ShuffleError::LocalEps`], or [`ShuffleError::CentralEps`] for a negative or
    /// non-finite `eps` (0 is allowed).
    pub fn central_delta(&self, eps0: f64, eps: f64) -> Result<Bracket, ShuffleError> {
        check_local(eps0)?;
        if !(eps >= 0.0 && eps.is_finite()) {
            return Err(ShuffleError::CentralEps(eps));
        }
        Ok(self.bound(eps0).delta(eps))
    }

    /// The largest eps0 whose shuffled reports are (`central`, delta)-DP: the central
    /// delta at `central` ([`Shuffle::central_delta`]'s upper end) is at most delta there
    /// and above it beyond, to about 1e-12 relative. ([`Shuffle::central_eps`] at that
    /// eps0 is `central` up to its own bisection's 1e-12.) It is never below `central`
    /// itself: shuffling never weakens a guarantee, so every positive target is reachable.
    /// Infinite only where delta is so near 1 that an eps0 a million above the target
    /// still meets it.
    ///
    /// # Errors
    /// [`ShuffleError::CentralEps`].
    pub fn max_local_eps(&self, central: f64) -> Result<f64, ShuffleError> {
        if !(central > 0.0 && central.is_finite()) {
            return Err(ShuffleError::CentralEps(central));
        }
        let meets = |eps0: f64| self.bound(eps0).delta(central).upper <= self.delta;
        // Above central + ln(n) + 5 fewer than e^-5 clones are expected: the first user's
        // report then stands alone with probability above 0.99 and its eps0 shows, unless
        // delta is about as large; then further out.
        let mut gap = (self.users as f64).ln() + 5.0;
        while meets(central + gap) {
            gap *= 2.0;
            if gap > 1e6 {
                return Ok(f64::INFINITY);
            }
        }
        Ok(bisect(central, central + gap, |eps0| !meets(eps0)).0)
    }
}

impl Shuffle {
    /// The clone divergences this batch's randomizer admits at eps0.
    fn bound(&self, eps0: f64) -> Bound {
        let generic = Clones::new(self.users, eps0, self.delta, Pair::generic(eps0));
        let specific = self.rr_domain.map(|k| {
            Clones::new(
                self.users,
                eps0,
                self.delta,
                Pair::randomized_response(eps0, k),
            )
        });
        Bound { generic, specific }
    }
}

/// The generic clone bound and, for k-RR, its own: a delta bound is the smaller of theirs.
struct Bound {
    generic: Clones,
    specific: Option<Clones>,
}

impl Bound {
    fn delta(&self, eps: f64) -> Bracket {
        let generic = self.generic.delta(eps);
        match &self.specific {
            None => generic,
            Some(specific) => {
                let specific = specific.delta(eps);
                // Each analysis's own value lies in its bracket, so their minimum lies
                // between the minima of the ends.
                Bracket {
                    lower: generic.lower.min(specific.lower),
                    upper: generic.upper.min(specific.upper),
                }
            }
        }
    }
}

/// How a randomizer splits into clones: each other user's report is a clone (of the first
/// user's report on x0 or on x1, equally likely) with probability `clone` (and `1 - clone`
/// as `rest`, kept apart for accuracy near 1); the first user's report takes part in the
/// pair with probability `weight`, and otherwise says nothing of its input.
#[derive(Debug, Clone, Copy)]
struct Pair {
    clone: f64,
    rest: f64,
    weight: f64,
}

impl Pair {
    /// Any eps0-LDP randomizer: clones with probability e^-eps0, the first user always in.
    fn generic(eps0: f64) -> Self {
        Self {
            clone: (-eps0).exp(),
            rest: -(-eps0).exp_m1(),
            weight: 1.0,
        }
    }

    /// k-RR: clones with probability 2 / (e^eps0 + k - 1), the first user in with
    /// probability (e^eps0 + 1) / (e^eps0 + k - 1). In terms of e^-eps0 (which stays
    /// finite where e^eps0 overflows).
    fn randomized_response(eps0: f64, k: u64) -> Self {
        let s = (-eps0).exp(); // e^-eps0
        let others = (k - 1) as f64 * s; // (k - 1) e^-eps0
        let scale = 1.0 + others; // (e^eps0 + k - 1) e^-eps0
        Self {
            clone: 2.0 * s / scale,
            // (e^eps0 + k - 3) / (e^eps0 + k - 1), with e^eps0 - 1 = -expm1(-eps0) e^eps0.
            rest: (-(-eps0).exp_m1() + (k as f64 - 2.0) * s) / scale,
            weight: (1.0 + s) / scale,
        }
    }
}

fn check_local(eps0: f64) -> Result<(), ShuffleError> {
    if eps0 > 0.0 && eps0.is_finite() {
        Ok(())
    } else {
        Err(ShuffleError::LocalEps(eps0))
    }
}

/// Bisects [lo, hi] for the point where `above` turns true (false at lo, true at hi
/// assumed); returns the final (lo, hi).
fn bisect(mut lo: f64, mut hi: f64, above: impl Fn(f64) -> bool) -> (f64, f64) {
    while hi - lo > TOLERANCE * hi {
        let mid = 0.5 * (lo + hi);
        if mid <= lo || mid >= hi {
            break;
        }
        if above(mid) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    (lo, hi)
}

/// The clone count C ~ Bin(n - 1, clone probability) over the window summed, and the
/// weight of the first user's part.
struct Clones {
    eps0: f64,
    /// Pr[the first user's report takes part in the pair].
    weight: f64,
    /// The first count of the window.
    start: u64,
    /// Pr[C = start + i].
    weights: Vec<f64>,
    /// A bound on Pr[C outside the window].
    tail: f64,
}

impl Clones {
    fn new(users: u64, eps0: f64, delta: f64, pair: Pair) -> Self {
        let trials = users - 1;
        let (p, q) = (pair.clone, pair.rest);
        if p == 0.0 {
            // Below f64's range (eps0 > 745): Pr[C >= 1] <= n e^-eps0 < 1e-313.
            return Self {
                eps0,
                weight: pair.weight,
                start: 0,
                weights: vec![1.0],
                tail: 0.0,
            };
        }
        let mode = ((trials as f64 + 1.0) * p).floor().min(trials as f64) as u64;
        let at_mode = ln_binomial_pmf(mode, trials, p, q).exp();
        // Pr[C = c + 1] / Pr[C = c], decreasing in c.
        let ratio = |c: u64| (trials - c) as f64 / (c + 1) as f64 * (p / q);
        let floor = (at_mode * WINDOW.min(delta * 1e-12)).max(f64::MIN_POSITIVE);
        let (mut above, mut c, mut w) = (Vec::new(), mode, at_mode);
        let mut tail = 0.0;
        while c < trials {
            let r = ratio(c);
            let next = w * r;
            if next < floor {
                // Counts above c + 1 fall by at most r each: a geometric bound.
                tail += next / (1.0 - r);
                break;
            }
            c += 1;
            w = next;
            above.push(w);
        }
        let (mut below, mut c, mut w) = (Vec::new(), mode, at_mode);
        while c > 0 {
            let r = 1.0 / ratio(c - 1);
            let next = w * r;
            if next < floor {
                tail += next / (1.0 - r);
                break;
            }
            c -= 1;
            w = next;
            below.push(w);
        }
        let start = mode - below.len() as u64;
        below.reverse();
        below.push(at_mode);
        below.extend(above);
        Self {
            eps0,
            weight: pair.weight,
            start,
            weights: below,
            tail,
        }
    }

    /// The hockey-stick divergence of P and Q at eps, summed over the window (lower) and
    /// with the tail's mass added (upper). The divergence given c is the same in both
    /// directions (Q is P mirrored), so one sum serves both.
    fn delta(&self, eps: f64) -> Bracket {
        if eps >= self.eps0 {
            return Bracket {
                lower: 0.0,
                upper: 0.0,
            };
        }
        let eps0 = self.eps0;
        // Given c, P(a) / Q(a) falls in a: {P > e^eps Q} = {a < beta (c + 1)}, with beta
        // = (e^eps0 - e^eps) / ((e^eps0 - 1)(e^eps + 1)); on it the divergence is
        // F(m - 1) + weight * b(m) for P against e^eps times the same with 1 - alpha,
        // F and b Bin(c, 1/2)'s cdf and pmf, m = floor(beta (c + 1)).
        let beta = -(eps - eps0).exp_m1() / (-(-eps0).exp_m1() * (eps.exp() + 1.0));
        let own = -(eps - eps0).exp_m1() / (1.0 + (-eps0).exp()); // alpha - e^eps (1 - alpha)
        let grow = eps.exp_m1(); // e^eps - 1
        let mut tails = HalfTails::new(self.start, beta);
        let mut sum = 0.0;
        for &w in &self.weights {
            let (below, at) = tails.current();
            // below <= at * m / (c - m + 1): the product is 0, never inf * 0.
            let d = at * own - if below > 0.0 { below * grow } else { 0.0 };
            if d > 0.0 {
                sum += w * d;
            }
            tails.advance();
        }
        Bracket {
            lower: self.weight * sum,
            upper: self.weight * (sum + self.tail),
        }
    }
}

/// Bin(c, 1/2)'s F(m - 1) and b(m) at m = floor(beta (c + 1)) for c = start, start + 1,
/// ...: each step O(1), by the recurrences from c to c + 1 (m moves by 0 or 1, as beta
/// < 1/2), with no subtraction of nearly equal numbers.
struct HalfTails {
    c: u64,
    m: u64,
    beta: f64,
    /// F(m - 1) = Pr[Bin(c, 1/2) <= m - 1].
    below: f64,
    /// b(m) = Pr[Bin(c, 1/2) = m].
    at: f64,
}

impl HalfTails {
    fn new(c: u64, beta: f64) -> Self {
        let m = Self::cut(c, beta);
        let at = ln_binomial_pmf(m, c, 0.5, 0.5).exp();
        // F(m - 1) summed downwards from b(m - 1) until the terms stop counting.
        let mut below = 0.0;
        let (mut a, mut term) = (m, at);
        while a > 0 {
            term *= a as f64 / (c - a + 1) as f64; // b(a - 1) from b(a)
            a -= 1;
            below += term;
            if term <= below * 1e-18 {
                break;
            }
        }
        Self {
            c,
            m,
            beta,
            below,
            at,
        }
    }

    fn cut(c: u64, beta: f64) -> u64 {
        // beta < 1/2, so m <= c / 2 stays inside 0..=c.
        ((beta * (c + 1) as f64).floor() as u64).min(c)
    }

    fn current(&self) -> (f64, f64) {
        (self.below, self.at)
    }

    fn advance(&mut self) {
        let (c, m) = (self.c as f64, self.m as f64);
        let next = Self::cut(self.c + 1, self.beta);
        if next == self.m {
            // F_{c+1}(m - 1) = F_c(m - 1) - b_c(m - 1) / 2, b_c(m - 1) = b_c(m) m / (c - m + 1).
            self.below -= self.at * m / (2.0 * (c - m + 1.0));
            self.at *= (c + 1.0) / (2.0 * (c + 1.0 - m));
        } else {
            // F_{c+1}(m) = F_c(m) - b_c(m) / 2 = F_c(m - 1) + b_c(m) / 2.
            self.below += self.at / 2.0;
            self.at *= (c + 1.0) / (2.0 * (m + 1.0));
            self.m += 1;
        }
        self.below = self.below.max(0.0);
        self.c += 1;
    }
}

/// ln Pr[Bin(n, p) = x], q = 1 - p given as accurately as p, to about 1e-15 relative for
/// any n (Loader's saddle-point form, as R's `dbinom`): no difference of large log-gammas.
fn ln_binomial_pmf(x: u64, n: u64, p: f64, q: f64) -> f64 {
    if x == 0 {
        return n as f64 * q.ln();
    }
    if x == n {
        return n as f64 * p.ln();
    }
    let (xf, nf) = (x as f64, n as f64);
    let lc = stirling_error(nf)
        - stirling_error(xf)
        - stirling_error(nf - xf)
        - deviance(xf, nf * p)
        - deviance(nf - xf, nf * q);
    let lf = (2.0 * PI).ln() + xf.ln() + (-xf / nf).ln_1p();
    lc - 0.5 * lf
}

/// ln Gamma(n + 1) - (n + 1/2) ln n + n - ln sqrt(2 pi), for integer n >= 1.
fn stirling_error(n: f64) -> f64 {
    const S0: f64 = 1.0 / 12.0;
    const S1: f64 = 1.0 / 360.0;
    const S2: f64 = 1.0 / 1260.0;
    const S3: f64 = 1.0 / 1680.0;
    const S4: f64 = 1.0 / 1188.0;
    if n <= 15.0 {
        return libm::lgamma(n + 1.0) - (n + 0.5) * n.ln() + n - 0.5 * (2.0 * PI).ln();
    }
    let nn = n * n;
    if n > 500.0 {
        (S0 - S1 / nn) / n
    } else if n > 80.0 {
        (S0 - (S1 - S2 / nn) / nn) / n
    } else if n > 35.0 {
        (S0 - (S1 - (S2 - S3 / nn) / nn) / nn) / n
    } else {
        (S0 - (S1 - (S2 - (S3 - S4 / nn) / nn) / nn) / nn) / n
    }
}

/// x ln(x / m) + m - x, by its series where x is near m (where the direct form cancels).
fn deviance(x: f64, m: f64) -> f64 {
    if (x - m).abs() < 0.1 * (x + m) {
        let v = (x - m) / (x + m);
        let mut s = (x - m) * v;
        let mut ej = 2.0 * x * v;
        let v2 = v * v;
        for j in 1..1000 {
            ej *= v2;
            let next = s + ej / f64::from(2 * j + 1);
            if next == s {
                return next;
            }
            s = next;
        }
        s
    } else {
        x * (x / m).ln() + m - x
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pmf_sums_to_one_and_matches_small_cases() {
        // Bin(10, 0.3) at 3: C(10, 3) 0.3^3 0.7^7.
        let exact = 120.0 * 0.3f64.powi(3) * 0.7f64.powi(7);
        assert!((ln_binomial_pmf(3, 10, 0.3, 0.7).exp() - exact).abs() < 1e-15);
        let total: f64 = (0..=1000)
            .map(|x| ln_binomial_pmf(x, 1000, 0.37, 0.63).exp())
            .sum();
        assert!((total - 1.0).abs() < 1e-13, "{total}");
    }

    #[test]
    fn the_tails_follow_the_direct_sums() {
        let beta = 0.41;
        let mut tails = HalfTails::new(3, beta);
        for c in 3u64..400 {
            let m = ((beta * (c + 1) as f64).floor() as u64).min(c);
            let b = |a: u64| ln_binomial_pmf(a, c, 0.5, 0.5).exp();
            let below: f64 = (0..m).map(b).sum();
            let (got_below, got_at) = tails.current();
            // Rounding drifts by a few ulps a step: 1e-13 relative after 400 steps.
            assert!((got_below - below).abs() <= 1e-12 * below, "c {c}");
            assert!((got_at - b(m)).abs() <= 1e-13 * b(m), "c {c}");
            tails.advance();
        }
    }
}
