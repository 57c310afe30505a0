//! Rayon's parallel iterators, or, without the `parallel` feature (a WebAssembly page,
//! which parallelizes with workers instead), the same calls run in order on this thread.
//! Runs draw from their own seeded streams, so both give the same numbers.

#[cfg(feature = "parallel")]
pub(crate) use rayon::prelude::*;

#[cfg(not(feature = "parallel"))]
pub(crate) use sequential::*;

#[cfg(not(feature = "parallel"))]
mod sequential {
    /// `into_par_iter`: the iterator itself.
    pub(crate) trait IntoParallelIterator: IntoIterator + Sized {
        fn into_par_iter(self) -> Self::IntoIter {
            self.into_iter()
        }
    }
    impl<I: IntoIterator> IntoParallelIterator for I {}

    /// `par_iter`: the slice's iterator.
    pub(crate) trait ParallelSlice<T> {
        fn par_iter(&self) -> std::slice::Iter<'_, T>;
    }
    impl<T> ParallelSlice<T> for [T] {
        fn par_iter(&self) -> std::slice::Iter<'_, T> {
            self.iter()
        }
    }

    /// Rayon's adaptors that std's iterators lack.
    pub(crate) trait SequentialIterator: Iterator + Sized {
        /// `map_init`: one state, made once, for every item.
        fn map_init<S, R>(
            self,
            init: impl FnOnce() -> S,
            mut f: impl FnMut(&mut S, Self::Item) -> R,
        ) -> impl Iterator<Item = R> {
            let mut state = init();
            self.map(move |item| f(&mut state, item))
        }

        /// `collect_into_vec`: the items, in order, in place of `v`'s.
        fn collect_into_vec(self, v: &mut Vec<Self::Item>) {
            v.clear();
            v.extend(self);
        }
    }
    impl<I: Iterator> SequentialIterator for I {}
}
