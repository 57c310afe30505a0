//! How much memory a request needs, checked by the front ends before they allocate: a
//! request that cannot fit is refused with a typed error saying how much would, instead
//! of aborting the process (or the Python interpreter) in the allocator.

use std::fmt;

/// Bytes of memory available to this process: `MemAvailable` of `/proc/meminfo` on
/// Linux; `None` where that cannot be read.
pub fn available() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

/// A request needs more memory than is available.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutOfMemory {
    /// How many items the request holds.
    pub count: u64,
    /// Bytes each item takes.
    pub bytes_each: u64,
    /// Bytes available (`None` where the platform does not say; then only what cannot be
    /// addressed at all is refused).
    pub available: Option<u64>,
}

impl OutOfMemory {
    /// The most items that fit.
    pub fn fits(&self) -> u64 {
        let free = self.available.unwrap_or(isize::MAX as u64);
        free / self.bytes_each.max(1)
    }
}

impl fmt::Display for OutOfMemory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let needed = u128::from(self.count) * u128::from(self.bytes_each);
        match self.available {
            Some(free) => write!(
                f,
                "needs {} of memory ({} bytes each), but {} is available; at most {} fit",
                human(needed),
                self.bytes_each,
                human(u128::from(free)),
                self.fits()
            ),
            None => write!(f, "needs {needed} bytes, more than can be addressed"),
        }
    }
}

impl std::error::Error for OutOfMemory {}

/// Whether `count` items of `bytes_each` bytes fit in the memory available.
///
/// ```
/// let huge = ldp_core::memory::check(1 << 40, 1 << 20).unwrap_err();
/// assert!(huge.to_string().starts_with("needs "));
/// assert!(ldp_core::memory::check(10, 8).is_ok());
/// ```
pub fn check(count: u64, bytes_each: u64) -> Result<(), OutOfMemory> {
    let needed = u128::from(count) * u128::from(bytes_each);
    let available = available();
    let limit = available.map_or(isize::MAX as u128, u128::from);
    if needed > limit {
        return Err(OutOfMemory {
            count,
            bytes_each,
            available,
        });
    }
    Ok(())
}

fn human(bytes: u128) -> String {
    let gib = bytes as f64 / f64::from(1u32 << 30);
    if gib >= 1.0 {
        format!("{gib:.1} GiB")
    } else {
        format!("{:.1} MiB", bytes as f64 / f64::from(1u32 << 20))
    }
}
