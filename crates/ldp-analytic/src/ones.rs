//! The closed forms shared by unary encoding and thresholding, whose reports are the
//! one-bits of independent bits: the true bit set with probability p, each other with q.

use ldp_core::DomainSize;

use crate::cost::{Encoding, index_bits};
use crate::support::SupportLaw;

/// Independent bits over `0..k` with probabilities p (true item) and q (others).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct OneBits {
    pub(crate) k: DomainSize,
    pub(crate) p: f64,
    pub(crate) q: f64,
}

impl OneBits {
    pub(crate) fn law(self) -> SupportLaw {
        SupportLaw::Independent {
            p: self.p,
            q: self.q,
        }
    }

    /// Expected number of one-bits.
    ///
    /// # Formula
    ///
    /// ```text
    /// E[ones] = p + (k - 1) q
    /// ```
    pub(crate) fn expected_ones(self) -> f64 {
        self.p + (self.k.as_f64() - 1.0) * self.q
    }

    /// Every target bit set, and no other.
    ///
    /// # Formula
    ///
    /// ```text
    /// gain = r (1 - q) / (p - q)
    /// ```
    ///
    /// Paper Eq. "epg_pq" without its `beta` and `f_T`.
    pub(crate) fn fake_report_gain(self, targets: u32) -> f64 {
        f64::from(targets) * (1.0 - self.q) / (self.p - self.q)
    }

    /// The k bits, and the count of one-bits followed by their indices, the smaller first.
    ///
    /// # Formula
    ///
    /// ```text
    /// dense  = k
    /// sparse = ceil(log2 (k + 1)) + E[ones] ceil(log2 k)
    /// ```
    pub(crate) fn encodings(self) -> Vec<(Encoding, f64)> {
        let mut out = vec![
            (Encoding::Dense, self.k.as_f64()),
            (Encoding::Sparse, self.sparse()),
        ];
        out.sort_by(|a, b| a.1.total_cmp(&b.1));
        out
    }

    /// The count of one-bits, then their indices: the `sparse` of
    /// [`OneBits::encodings`].
    fn sparse(self) -> f64 {
        let k = self.k.as_f64();
        index_bits(k + 1.0) + self.expected_ones() * index_bits(k)
    }

    pub(crate) fn bits(self) -> f64 {
        self.k.as_f64().min(self.sparse())
    }

    /// One counter increment per one-bit.
    ///
    /// # Formula
    ///
    /// ```text
    /// ops = E[ones] = p + (k - 1) q
    /// ```
    pub(crate) fn server_ops(self) -> f64 {
        self.expected_ones()
    }

    /// The true bit, one geometric gap per other one-bit, and the gap that ends each of
    /// the two ranges (below and above the item).
    ///
    /// # Formula
    ///
    /// ```text
    /// draws = 1 + (k - 1) q + 2
    /// ```
    pub(crate) fn client_draws(self) -> f64 {
        3.0 + (self.k.as_f64() - 1.0) * self.q
    }
}
