//! How much memory a request needs, checked before anything is allocated.

use anyhow::{Result, bail};

/// Bytes of memory available to this process: `MemAvailable` of `/proc/meminfo` on
/// Linux; `None` where that cannot be read.
fn available() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

/// Fails, naming `flag` and the largest value that fits, when `count` items of
/// `bytes_each` bytes do not fit in the memory available.
pub(crate) fn check(flag: &str, count: u64, bytes_each: u64) -> Result<()> {
    let needed = u128::from(count) * u128::from(bytes_each);
    let Some(free) = available() else {
        // Without a reading, only what cannot be addressed at all is refused.
        if needed > isize::MAX as u128 {
            bail!("{flag} {count}: needs {needed} bytes, more than can be addressed");
        }
        return Ok(());
    };
    if needed > u128::from(free) {
        bail!(
            "{flag} {count}: needs {} of memory ({bytes_each} bytes each), but {} is available; at most {} fits",
            human(needed),
            human(u128::from(free)),
            free / bytes_each.max(1)
        );
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
