//! How much memory a request needs, checked before anything is allocated
//! ([`ldp_core::memory`]), named by its flag.

use anyhow::{Result, anyhow};

/// Fails, naming `flag` and the largest value that fits, when `count` items of
/// `bytes_each` bytes do not fit in the memory available.
pub(crate) fn check(flag: &str, count: u64, bytes_each: u64) -> Result<()> {
    ldp_core::memory::check(count, bytes_each).map_err(|e| anyhow!("{flag} {count}: {e}"))
}
