//! How much memory a request needs, checked by the front ends before they allocate: a
//! request that cannot fit is refused with a typed error saying how much would, instead
//! of aborting the process (or the Python interpreter) in the allocator.

use std::fmt;

/// Bytes of memory available to this process: the least of `MemAvailable` in
/// `/proc/meminfo` and, under an address-space limit (`ulimit -v`, `RLIMIT_AS`), what is
/// left of that limit after the address space already mapped (`VmSize`). A request that
/// fits the free RAM but not the limit would abort in the allocator, not fail cleanly.
/// `None` where neither can be read (not Linux).
pub fn available() -> Option<u64> {
    let ram = mem_available();
    let left = address_space_left();
    match (ram, left) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

fn mem_available() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    kib_field(&text, "MemAvailable:")
}

/// The soft `RLIMIT_AS` less the current `VmSize`; `None` when unlimited or unreadable.
fn address_space_left() -> Option<u64> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    let limit = parse_address_limit(&limits)?;
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let mapped = kib_field(&status, "VmSize:")?;
    Some(limit.saturating_sub(mapped))
}

/// The soft limit of the `Max address space` line of `/proc/self/limits`, in bytes.
fn parse_address_limit(limits: &str) -> Option<u64> {
    let line = limits
        .lines()
        .find(|l| l.starts_with("Max address space"))?;
    let soft = line["Max address space".len()..]
        .split_whitespace()
        .next()?;
    soft.parse().ok()
}

/// A `Name:   N kB` field of a `/proc` file, in bytes.
fn kib_field(text: &str, name: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with(name))?;
    let kib: u64 = line[name.len()..].split_whitespace().next()?.parse().ok()?;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_soft_address_space_limit() {
        let limits = "Limit                     Soft Limit           Hard Limit           Units     \n\
                      Max cpu time              unlimited            unlimited            seconds   \n\
                      Max address space         2560000000           unlimited            bytes     \n";
        assert_eq!(parse_address_limit(limits), Some(2_560_000_000));
        let unlimited = limits.replace("2560000000          ", "unlimited           ");
        assert_eq!(parse_address_limit(&unlimited), None);
    }

    #[test]
    fn reads_kib_fields_in_bytes() {
        let status = "Name:\tldp\nVmPeak:\t  9000 kB\nVmSize:\t    1234 kB\n";
        assert_eq!(kib_field(status, "VmSize:"), Some(1234 * 1024));
        assert_eq!(kib_field(status, "VmRSS:"), None);
    }
}
