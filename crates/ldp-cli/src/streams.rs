//! Randomness of the client-side commands, batch by batch, and their parallel processing.
//!
//! The n-th item of the input (counting from 0) belongs to batch `n / 4096` and draws
//! from that batch's stream, exactly as ldp-core's simulations do: with `--seed S`,
//! `ldp perturb` writes the reports of `ldp_core::simulation::perturb_all(m, items, S, 0,
//! Genuine)` (and the Python package's `perturb(items, seed=S)`), whatever the number of
//! threads and however the input arrives. Without a seed, batch b draws from ChaCha20
//! keyed by the operating system with stream id b. Which generator batch b gets is
//! ldp-core's rule (`ldp_core::simulation::BatchStreams`, run with
//! `ldp_core::with_batch_rng!`), shared with the Python package; this module keeps a
//! batch's generator across chunks of input.

use rand::Rng;

use ldp_core::parallel;
use ldp_core::simulation::USERS_PER_STREAM;

/// Keeps the generators of the streams consistent across chunks of input.
pub(crate) struct Batches<R> {
    /// Global index of the next item.
    next: u64,
    /// The generator of the batch in progress, if one is.
    open: Option<(u64, R)>,
}

impl<R: Rng + Send> Batches<R> {
    pub(crate) fn new() -> Self {
        Self {
            next: 0,
            open: None,
        }
    }

    /// `work` on the next `items`, cut at batch boundaries, each piece with its batch's
    /// generator (continuing the batch in progress where one is); pieces run in parallel
    /// and their outputs come back in order.
    pub(crate) fn run<I: Sync, T: Send>(
        &mut self,
        items: &[I],
        make: &(impl Fn(u64) -> R + Sync),
        work: &(impl Fn(&mut R, &[I]) -> T + Sync),
    ) -> Vec<T> {
        let per = USERS_PER_STREAM as u64;
        let mut pieces: Vec<(std::ops::Range<usize>, Option<R>, u64)> = Vec::new();
        let mut at = 0usize;
        while at < items.len() {
            let global = self.next + at as u64;
            let batch = global / per;
            let room = (per - global % per) as usize;
            let end = items.len().min(at + room);
            let rng = match self.open.take() {
                Some((b, rng)) if b == batch => Some(rng),
                _ => None,
            };
            pieces.push((at..end, rng, batch));
            at = end;
        }
        let results: Vec<(T, R, u64)> = parallel::map_vec(pieces, |(range, rng, batch)| {
            let mut rng = rng.unwrap_or_else(|| make(batch));
            (work(&mut rng, &items[range]), rng, batch)
        });
        self.next += items.len() as u64;
        let mut out = Vec::with_capacity(results.len());
        for (t, rng, batch) in results {
            // A batch not finished yet continues in the next call.
            if self.next % per != 0 && self.next / per == batch {
                self.open = Some((batch, rng));
            }
            out.push(t);
        }
        out
    }
}

/// At most this many lines per chunk: sixteen batches, enough to keep every core busy
/// and little enough to bound memory.
pub(crate) const CHUNK_LINES: usize = 16 * USERS_PER_STREAM;

/// Lines per chunk so that a chunk's output stays near 32 MiB when each line's output is
/// up to `line_bytes`.
pub(crate) fn chunk_lines(line_bytes: usize) -> usize {
    (32usize << 20)
        .checked_div(line_bytes.max(1))
        .unwrap_or(1)
        .clamp(1, CHUNK_LINES)
}
