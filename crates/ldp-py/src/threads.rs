//! The package's own thread pool, one per process. A child made by `fork` (the default
//! start method of `multiprocessing` on Linux up to Python 3.13) inherits the parent's
//! memory but none of its threads: a pool the parent used has no workers there, and work
//! sent to it waits forever. So the pool is keyed by process id and built again, on first
//! use, in each process; every parallel step of the package runs inside [`install`]
//! (through [`InPool::detach_in_pool`] where it releases the interpreter).
//!
//! A long call runs through [`InPool::detach_interruptibly`]: the calling thread, where
//! Python handles signals, watches for them while the pool works, so that Ctrl-C raises
//! `KeyboardInterrupt` once the pieces under way end (16,384 reports each for
//! `Aggregator.add`: seconds for LH at a large k) instead of when the call returns.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{RecvTimeoutError, channel};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use pyo3::prelude::*;

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

/// Whether the work was asked to stop (Ctrl-C): checked between batches, after which the
/// work returns at once; what it returns then is dropped.
pub(crate) type Stop<'a> = &'a (dyn Fn() -> bool + Sync);

/// How often the calling thread looks for signals while the pool works.
const WATCH: Duration = Duration::from_millis(50);

/// What work that was asked to stop returns as its error: a placeholder, since
/// [`InPool::detach_interruptibly`] raises the signal's own exception instead.
pub(crate) fn stopped() -> PyErr {
    pyo3::exceptions::PyKeyboardInterrupt::new_err("stopped")
}

/// `Python::detach` on this process's pool.
pub(crate) trait InPool {
    /// Releases the interpreter and runs `f` on this process's pool.
    fn detach_in_pool<T: Send, F: FnOnce() -> T + Send>(self, f: F) -> T;

    /// [`InPool::detach_in_pool`], and Ctrl-C stops it: while `f` runs on the pool, the
    /// calling thread checks for signals every 50 ms; once a handler raises (SIGINT's:
    /// `KeyboardInterrupt`), `stop()` turns true for `f`, which returns early, and the
    /// call raises that exception, dropping what `f` returned. A call that finishes first
    /// returns at once.
    fn detach_interruptibly<T: Send, F: FnOnce(Stop<'_>) -> T + Send>(self, f: F) -> PyResult<T>;
}

impl InPool for Python<'_> {
    fn detach_in_pool<T: Send, F: FnOnce() -> T + Send>(self, f: F) -> T {
        self.detach(|| install(f))
    }

    fn detach_interruptibly<T: Send, F: FnOnce(Stop<'_>) -> T + Send>(self, f: F) -> PyResult<T> {
        let stop = AtomicBool::new(false);
        let mut interrupt: Option<PyErr> = None;
        let mut outcome = None;
        self.detach(|| {
            let (done, finished) = channel::<()>();
            pool().in_place_scope(|s| {
                let (stop, outcome) = (&stop, &mut outcome);
                s.spawn(move |_| {
                    *outcome = Some(f(&|| stop.load(Ordering::Relaxed)));
                    // The watch ends when this is sent (or dropped by a panic, which the
                    // scope raises here).
                    let _ = done.send(());
                });
                // The watch stays on this thread, where Python handles signals.
                while let Err(RecvTimeoutError::Timeout) = finished.recv_timeout(WATCH) {
                    if interrupt.is_none()
                        && let Err(e) = Python::attach(|py| py.check_signals())
                    {
                        interrupt = Some(e);
                        stop.store(true, Ordering::Relaxed);
                    }
                }
            });
        });
        match interrupt {
            Some(e) => Err(e),
            None => Ok(outcome.expect("the work ran")),
        }
    }
}
