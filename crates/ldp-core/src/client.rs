//! The deployment entry point: a client that perturbs with a cryptographically secure
//! generator.
//!
//! An LDP guarantee holds only if the server cannot predict the client's coins. Simulations
//! use seeded, reproducible streams ([`crate::simulation`]); a deployed client must not.
//! [`Client`] accepts only generators marked [`CryptoRng`] and, by default, seeds ChaCha20
//! from the operating system.

use rand::{CryptoRng, SeedableRng};
use rand_chacha::ChaCha20Rng;

use crate::error::ItemOutOfRange;
use crate::mechanism::Mechanism;

/// A mechanism bound to a cryptographically secure generator: what runs on a device.
///
/// ```
/// use ldp_core::{Client, DomainSize, Epsilon, LocalHashing};
/// let olh = LocalHashing::optimized(DomainSize::new(100)?, Epsilon::new(4.0)?)?;
/// let mut client = Client::from_os_rng(olh)?; // ChaCha20 seeded by the OS
/// let report = client.report(42)?;            // send this to the server
/// assert!(report.y < 56);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct Client<M, R = ChaCha20Rng> {
    mechanism: M,
    rng: R,
}

impl<M: Mechanism> Client<M, ChaCha20Rng> {
    /// A client whose ChaCha20 generator is seeded by the operating system. Fails only
    /// when the operating system cannot supply entropy.
    pub fn from_os_rng(mechanism: M) -> Result<Self, rand::rngs::SysError> {
        Ok(Self {
            mechanism,
            rng: ChaCha20Rng::try_from_rng(&mut rand::rngs::SysRng)?,
        })
    }
}

impl<M: Mechanism, R: CryptoRng> Client<M, R> {
    /// A client drawing from `rng`, which must be a cryptographically secure generator.
    pub fn with_rng(mechanism: M, rng: R) -> Self {
        Self { mechanism, rng }
    }

    /// One report of `item`; fails only when `item` is outside `0..k`.
    pub fn report(&mut self, item: u32) -> Result<M::Report, ItemOutOfRange> {
        self.mechanism.perturb(item, &mut self.rng)
    }

    /// The mechanism.
    pub fn mechanism(&self) -> &M {
        &self.mechanism
    }
}
