//! The package's own thread pool, one per process. A child made by `fork` (the default
//! start method of `multiprocessing` on Linux up to Python 3.13) inherits the parent's
//! memory but none of its threads: a pool the parent used has no workers there, and work
//! sent to it waits forever. So the pool is keyed by process id and built again, on first
//! use, in each process; every parallel step of the package runs inside [`install`]
//! (through [`InPool::detach_in_pool`] where it releases the interpreter).

use std::sync::{Arc, Mutex};

use pyo3::Python;

/// The pool and the process that built it.
static POOL: Mutex<Option<(u32, Arc<rayon::ThreadPool>)>> = Mutex::new(None);

/// This process's pool, built on first use.
fn pool() -> Arc<rayon::ThreadPool> {
    let pid = std::process::id();
    let mut slot = POOL.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((owner, pool)) = &*slot
        && *owner == pid
    {
        return Arc::clone(pool);
    }
    // A forked child: the parent's pool has no threads here. Dropping it would signal
    // workers that do not exist, so it is left alone.
    if let Some(stale) = slot.take() {
        std::mem::forget(stale);
    }
    let pool = Arc::new(
        rayon::ThreadPoolBuilder::new()
            .thread_name(|i| format!("ldp-{i}"))
            .build()
            .expect("the operating system starts threads"),
    );
    *slot = Some((pid, Arc::clone(&pool)));
    pool
}

/// Runs `f` on this process's pool: its parallel iterators use the pool's threads.
pub(crate) fn install<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    pool().install(f)
}

/// `Python::detach` on this process's pool.
pub(crate) trait InPool {
    /// Releases the interpreter and runs `f` on this process's pool.
    fn detach_in_pool<T: Send, F: FnOnce() -> T + Send>(self, f: F) -> T;
}

impl InPool for Python<'_> {
    fn detach_in_pool<T: Send, F: FnOnce() -> T + Send>(self, f: F) -> T {
        self.detach(|| install(f))
    }
}
