//! Parallel loops whose thread machinery is compiled once, in this crate.
//!
//! Every simulation is generic over its mechanism, and the front ends dispatch it over
//! every registered family: a rayon iterator written inside such code is instantiated
//! (job, join and bridge code, each optimised) once per family and per caller. Here the
//! one rayon loop, [`for_each_index`], takes a `&dyn Fn`; [`map`], [`map_chunks`],
//! [`map_init`], [`map_vec`] and [`fold`] cut their work into a few shares per thread
//! and run the shares through it, so that what a caller instantiates is its own loop
//! body and nothing of rayon's. Rayon's code was about two thirds of what the compiler
//! saw of `ldp-attack`, and a third of the `ldp` tool.
//!
//! The results do not depend on the number of threads: the shares are cut by index and
//! their results put back in index order ([`fold`]'s merge is exact). State made by
//! `init` is scratch, as in rayon's `map_init`: a body must not let it change a result.
//! Without the `parallel` feature (a WebAssembly page, which parallelizes with workers
//! instead) every loop runs in order on the calling thread, with the same results.
//!
//! ```
//! use ldp_core::parallel;
//! let squares = parallel::map(5, |i| i * i);
//! assert_eq!(squares, [0, 1, 4, 9, 16]);
//! let sum = parallel::fold(1000, || 0u64, |acc, i| *acc += i as u64, |acc, more| *acc += more);
//! assert_eq!(sum, Some(499_500));
//! ```

use std::ops::Range;
use std::sync::{Mutex, PoisonError};

/// Shares of the work per thread: enough for threads that finish early to take over the
/// rest of a slow share's neighbours, few enough that each share's state stays cheap.
const SHARES_PER_THREAD: usize = 8;

/// Runs `f(i)` for every `i` in `0..n`, on every core with the `parallel` feature (in no
/// set order), else in order on this thread. The one place this crate's loops reach
/// rayon.
pub fn for_each_index(n: usize, f: &(dyn Fn(usize) + Sync)) {
    #[cfg(feature = "parallel")]
    {
        use rayon::prelude::*;
        (0..n).into_par_iter().for_each(f);
    }
    #[cfg(not(feature = "parallel"))]
    (0..n).for_each(f);
}

/// `f(i)` for every `i` in `0..n`, in index order.
pub fn map<T: Send>(n: usize, f: impl Fn(usize) -> T + Sync) -> Vec<T> {
    map_init(n, || (), |(), i| f(i))
}

/// `f(c, chunk)` for every chunk `c` of `items` cut into chunks of `size` (the last one
/// shorter; no chunk of 0 items), in order: the pattern of rayon's `par_chunks`.
pub fn map_chunks<I: Sync, T: Send>(
    items: &[I],
    size: usize,
    f: impl Fn(usize, &[I]) -> T + Sync,
) -> Vec<T> {
    let size = size.max(1);
    map(items.len().div_ceil(size), |c| {
        f(c, &items[c * size..items.len().min((c + 1) * size)])
    })
}

/// `f(item)` for every item of `items`, in order, each item moved into its call (a
/// generator that continues a stream, a partial server): for a few items with much work
/// each.
pub fn map_vec<I: Send, T: Send>(items: Vec<I>, f: impl Fn(I) -> T + Sync) -> Vec<T> {
    let slots: Vec<Mutex<Option<I>>> = items.into_iter().map(|i| Mutex::new(Some(i))).collect();
    map(slots.len(), |i| {
        let item = slots[i]
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        f(item.expect("each index runs once"))
    })
}

/// `f(state, i)` for every `i` in `0..n`, in index order, with one `state` made by `init`
/// per share of the work (a scratch buffer reused across the share's items).
pub fn map_init<S, T: Send>(
    n: usize,
    init: impl Fn() -> S + Sync,
    f: impl Fn(&mut S, usize) -> T + Sync,
) -> Vec<T> {
    let shares = share_count(n);
    let slots: Vec<Mutex<Vec<T>>> = (0..shares).map(|_| Mutex::new(Vec::new())).collect();
    for_each_index(shares, &|share| {
        let mut state = init();
        let part: Vec<T> = share_range(n, shares, share)
            .map(|i| f(&mut state, i))
            .collect();
        *slots[share].lock().unwrap_or_else(PoisonError::into_inner) = part;
    });
    let mut out = Vec::with_capacity(n);
    for slot in slots {
        out.extend(slot.into_inner().unwrap_or_else(PoisonError::into_inner));
    }
    out
}

/// Folds every `i` in `0..n` into accumulators made by `init` (one per share of the
/// work) with `add`; each share, once done, is merged into the total with `merge`.
/// `None` when `n` is 0. The shares merge as they finish, in no set order, so that at
/// most one accumulator per thread is alive beside the total (an accumulator may be
/// large: a server's counts over a huge domain): `merge` must be exact, commutative and
/// associative (integer counts), and the result is then that of one accumulator folding
/// `0..n` in order.
pub fn fold<T: Send>(
    n: usize,
    init: impl Fn() -> T + Sync,
    add: impl Fn(&mut T, usize) + Sync,
    merge: impl Fn(&mut T, T) + Sync,
) -> Option<T> {
    let shares = share_count(n);
    let total: Mutex<Option<T>> = Mutex::new(None);
    for_each_index(shares, &|share| {
        let mut acc = init();
        for i in share_range(n, shares, share) {
            add(&mut acc, i);
        }
        let mut total = total.lock().unwrap_or_else(PoisonError::into_inner);
        match total.as_mut() {
            Some(sum) => merge(sum, acc),
            None => *total = Some(acc),
        }
    });
    total.into_inner().unwrap_or_else(PoisonError::into_inner)
}

/// Shares for `n` items: a few per thread, at most one per item.
fn share_count(n: usize) -> usize {
    n.min(threads().saturating_mul(SHARES_PER_THREAD))
}

/// Threads the loops run on: rayon's.
#[cfg(feature = "parallel")]
fn threads() -> usize {
    rayon::current_num_threads()
}

/// Threads the loops run on: this one.
#[cfg(not(feature = "parallel"))]
fn threads() -> usize {
    1
}

/// Share `s` of `shares` nearly equal contiguous shares of `0..n`.
fn share_range(n: usize, shares: usize, s: usize) -> Range<usize> {
    let (size, extra) = (n / shares, n % shares);
    let start = s * size + s.min(extra);
    start..start + size + usize::from(s < extra)
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    #[test]
    fn shares_cover_every_index_once_in_order() {
        for n in [1, 2, 7, 16, 17, 1000] {
            for shares in 1..=n.min(40) {
                let all: Vec<usize> = (0..shares)
                    .flat_map(|s| share_range(n, shares, s))
                    .collect();
                assert_eq!(all, (0..n).collect::<Vec<_>>(), "n {n}, shares {shares}");
            }
        }
    }

    #[test]
    fn map_keeps_index_order_and_handles_no_items() {
        assert_eq!(map(0, |i| i), Vec::<usize>::new());
        let n = 10_007;
        assert_eq!(map(n, |i| 3 * i), (0..n).map(|i| 3 * i).collect::<Vec<_>>());
    }

    #[test]
    fn map_chunks_cuts_like_slice_chunks() {
        let items: Vec<u32> = (0..1000).collect();
        for size in [0, 1, 7, 1000, 4096] {
            let ours = map_chunks(&items, size, |c, chunk| (c, chunk.to_vec()));
            let std: Vec<(usize, Vec<u32>)> = items
                .chunks(size.max(1))
                .map(<[u32]>::to_vec)
                .enumerate()
                .collect();
            assert_eq!(ours, std, "size {size}");
        }
        assert!(map_chunks(&[] as &[u8], 3, |_, c| c.len()).is_empty());
    }

    #[test]
    fn map_vec_moves_each_item_into_one_call_in_order() {
        let items: Vec<String> = (0..100).map(|i| i.to_string()).collect();
        assert_eq!(map_vec(items.clone(), |s| s), items);
        assert!(map_vec(Vec::<u8>::new(), |x| x).is_empty());
    }

    #[test]
    fn map_init_makes_one_state_per_share_and_results_per_item() {
        let n = 5000;
        let inits = AtomicUsize::new(0);
        let out = map_init(n, || inits.fetch_add(1, Ordering::Relaxed), |_, i| i + 1);
        assert_eq!(out, (1..=n).collect::<Vec<_>>());
        assert_eq!(inits.into_inner(), share_count(n));
    }

    #[test]
    fn fold_counts_every_index_once() {
        let count = |n| fold(n, || vec![0u64; n], |c, i| c[i] += 1, |a, b| add(a, &b));
        assert_eq!(count(0), None);
        for n in [1, 2, 17, 3001] {
            assert_eq!(count(n), Some(vec![1; n]), "n {n}");
        }
    }

    #[test]
    fn fold_keeps_at_most_one_accumulator_per_thread_beside_the_total() {
        struct Acc<'a>(u64, &'a AtomicUsize);
        impl Drop for Acc<'_> {
            fn drop(&mut self) {
                self.1.fetch_sub(1, Ordering::Relaxed);
            }
        }
        let (alive, most, made) = (
            AtomicUsize::new(0),
            AtomicUsize::new(0),
            AtomicUsize::new(0),
        );
        let n = 10_000;
        let total = fold(
            n,
            || {
                made.fetch_add(1, Ordering::Relaxed);
                let now = alive.fetch_add(1, Ordering::Relaxed) + 1;
                most.fetch_max(now, Ordering::Relaxed);
                Acc(0, &alive)
            },
            |acc, i| acc.0 += i as u64,
            |sum, more| sum.0 += more.0,
        )
        .map(|acc| acc.0);
        assert_eq!(total, Some((0..n as u64).sum()));
        assert_eq!(made.into_inner(), share_count(n));
        assert!(most.into_inner() <= threads() + 1);
    }

    fn add(a: &mut [u64], b: &[u64]) {
        a.iter_mut().zip(b).for_each(|(a, b)| *a += b);
    }
}
