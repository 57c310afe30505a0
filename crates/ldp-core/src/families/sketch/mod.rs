//! Apple's count-mean sketches (Apple Differential Privacy Team, "Learning with Privacy
//! at Scale", 2017): [`cms`] sends a perturbed one-hot row of the sketch, [`hcms`] one
//! Hadamard coefficient of it. What they share is here: the hashes, the parameters, and
//! the server's last step from the debiased sketch to the estimates.
//!
//! The sketch has h rows of m columns. Row j hashes item v to column
//! `h_j(v) = XXH32(decimal(v), j) mod m`, local hashing's hash with seed j
//! ([`crate::families::local_hash::hash_item`]), so that a report is meaningful to any
//! server that knows (h, m, eps). A client picks a row uniformly; the server debiases
//! each row into `S_j[v]`, an unbiased count of the users whose item row j hashes to v
//! (scaled by h), and estimates item x's count as
//! `(m / (m - 1)) ((1/h) sum_j S_j[h_j(x)] - n/m)`, the published estimator. It is exact
//! in expectation for an ideal hash; with the h fixed hashes it carries
//! [`collision_bias`](crate::families::local_hash::collision_bias) with g = m and h seeds.

pub mod cms;
pub mod hcms;

pub use cms::CountMeanSketch;
pub use hcms::HadamardCountMeanSketch;

use std::ops::ControlFlow;

use crate::error::ParamError;
use crate::families::local_hash::{hash_item, scan};

/// The preset number of hash functions (rows), h = 256.
pub const PRESET_HASHES: u32 = 256;

/// The preset width (columns), m = 1024.
pub const PRESET_WIDTH: u32 = 1024;

/// The most cells a sketch server counts: 2^26, half a gigabyte of counters.
pub const MAX_CELLS: u64 = 1 << 26;

/// The preset `(h, m)`.
pub fn preset() -> (u32, u32) {
    (PRESET_HASHES, PRESET_WIDTH)
}

/// The (h, m) grid the practitioner's choice compares beside the preset
/// ([`FamilyMechanism::alternatives`](crate::families::FamilyMechanism::alternatives)):
/// h in {16, 64, 256}, m in {16, 64, 256, 1024, 4096}. m trades the collision bias
/// against bits (CMS) or barely anything (HCMS); h the bias of the fixed hashes against
/// the server's cost. CMS's exact ASR costs up to `h m ln m` hashes, hence the short axes
/// (about 30 ms for the whole grid at k = 100,000, once per k: ldp-analytic keeps the
/// per-row counts for the other budgets and heights).
pub(crate) fn shape_grid(fits: impl Fn((u32, u32)) -> bool) -> Vec<(u32, u32)> {
    [16, 64, 256]
        .into_iter()
        .flat_map(|h| [16, 64, 256, 1024, 4096].map(|m| (h, m)))
        .filter(|&shape| fits(shape))
        .collect()
}

/// Row j's column of `item`.
#[inline]
pub fn column(item: u32, row: u32, width: u32) -> u32 {
    hash_item(item, row, width)
}

/// Row j's columns of the items `0..n`, a block of consecutive items at a time in
/// increasing order: `visit(base, columns)` with `columns[i] == column(base + i, row,
/// width)`, until `visit` breaks. The blocks share the hashes' work between consecutive
/// items (local hashing's domain scan, in SIMD lanes), many times faster than [`column()`]
/// item by item: the count-mean sketch's exact ASR counts the columns each row gives the
/// domain.
///
/// ```
/// use std::ops::ControlFlow;
/// use ldp_core::families::sketch::{column, for_each_column_block};
/// let mut columns = Vec::new();
/// for_each_column_block(1000, 3, 1024, |_, block| {
///     columns.extend_from_slice(block);
///     ControlFlow::Continue(())
/// });
/// assert!(columns.iter().enumerate().all(|(v, &c)| c == column(v as u32, 3, 1024)));
/// assert_eq!(columns.len(), 1000);
/// ```
pub fn for_each_column_block(
    n: u32,
    row: u32,
    width: u32,
    visit: impl FnMut(u32, &[u32]) -> ControlFlow<()>,
) {
    scan::for_each_hash(n, width, row, visit);
}

/// h at least 1; m at least 2 (a power of two when `power_of_two`); and the server's
/// `h m cells_per_column` counters at most [`MAX_CELLS`].
pub(crate) fn check_shape(
    hashes: u32,
    width: u32,
    cells_per_column: u64,
    power_of_two: bool,
) -> Result<(), ParamError> {
    if width < 2 || (power_of_two && !width.is_power_of_two()) {
        return Err(ParamError::Parameter {
            name: "width",
            description: "the sketch width m",
            requirement: if power_of_two {
                "be a power of two, at least 2".into()
            } else {
                "be at least 2".into()
            },
            value: f64::from(width),
        });
    }
    let most = MAX_CELLS / (u64::from(width) * cells_per_column);
    if hashes == 0 || u64::from(hashes) > most {
        return Err(ParamError::Parameter {
            name: "hashes",
            description: "the number of sketch rows h",
            requirement: format!("lie in [1, {}] (h m counters at most 2^26)", most.max(1)),
            value: f64::from(hashes),
        });
    }
    Ok(())
}

/// Every item's estimated frequency from the debiased sketch rows (`h` rows of `width`,
/// row-major) of `n` reports: `(m / (m - 1)) ((1/h) sum_j S_j[h_j(x)] / n - 1/m)`. O(h k)
/// hashes, on every core with the `parallel` feature, items split among threads and each
/// item's sum taken row by row, so that the result does not depend on the thread count.
pub(crate) fn estimate_from_sketch(
    sketch: &[f64],
    hashes: u32,
    width: u32,
    k: u32,
    n: u64,
) -> Vec<f64> {
    let (h, m, n) = (f64::from(hashes), f64::from(width), n as f64);
    let scale = m / (m - 1.0);
    // A row no report chose is all zeros and adds nothing: skipping it keeps the sums
    // bit for bit and makes a few reports cost O(k), not O(h k), at a huge domain.
    let rows: Vec<u32> = (0..hashes)
        .filter(|&j| {
            let start = (j * width) as usize;
            sketch[start..start + width as usize]
                .iter()
                .any(|&v| v != 0.0)
        })
        .collect();
    let one = |item: u32| -> f64 {
        let total: f64 = rows
            .iter()
            .map(|&j| sketch[(j * width + column(item, j, width)) as usize])
            .sum();
        scale * (total / (h * n) - 1.0 / m)
    };
    crate::parallel::map(k as usize, |item| one(item as u32))
}
