//! Data-parallel loops over index ranges on rayon's pool, their bodies taken as trait objects.
//!
//! A closure passed to rayon directly instantiates rayon's whole plumbing (splitting, job
//! stealing, joins) once per closure type. The lattices are generic over model, layout and
//! precision, each has about ten parallel loops, and the program offers more than a hundred
//! lattices: the plumbing's copies were a sixth of its compiled code. Through these functions
//! every loop shares one instantiation per item and result type. The body is still the
//! caller's own monomorphised code, called once per item (a column or a line of sites, each
//! thousands of site updates), so the indirect call costs nothing measurable.

use std::ops::Range;

use rayon::prelude::*;

/// `body(k)` for every `k` of `items`, in parallel.
pub(crate) fn for_each(items: Range<usize>, body: &(dyn Fn(usize) + Sync)) {
    items.into_par_iter().for_each(body);
}

/// `body(&mut s, k)` for every `k` of `items`, in parallel, each worker's `s` made by `init`
/// (scratch space reused across the items a worker takes).
pub(crate) fn for_each_init<S>(
    items: Range<usize>,
    init: &(dyn Fn() -> S + Sync),
    body: &(dyn Fn(&mut S, usize) + Sync),
) {
    items.into_par_iter().for_each_init(init, body);
}

/// `body(k, item)` for the `k`-th of `items`, in parallel: each item moves to the worker
/// that takes it (disjoint `&mut` slices of an output, for instance).
pub(crate) fn for_each_owned<I: Send>(items: Vec<I>, body: &(dyn Fn(usize, I) + Sync)) {
    items
        .into_par_iter()
        .enumerate()
        .for_each(|(k, item)| body(k, item));
}

/// `Σ_k body(k)` over `items`, the terms computed in parallel.
pub(crate) fn sum(items: Range<usize>, body: &(dyn Fn(usize) -> f64 + Sync)) -> f64 {
    items.into_par_iter().map(body).sum()
}

/// The `k` of `items` where `keep(k)` holds, in order, tested in parallel.
pub(crate) fn filter(items: Range<usize>, keep: &(dyn Fn(usize) -> bool + Sync)) -> Vec<usize> {
    items.into_par_iter().filter(|&k| keep(k)).collect()
}

/// `body(k)` for the first `k` of `items` (in their order) where it is `Some`, searched in
/// parallel.
pub(crate) fn find_first<R: Send>(
    items: Range<usize>,
    body: &(dyn Fn(usize) -> Option<R> + Sync),
) -> Option<R> {
    items.into_par_iter().find_map_first(body)
}

/// `[body(k) for k in items]`, computed in parallel.
#[cfg(any(feature = "gpu", test))]
pub(crate) fn map<R: Send>(items: Range<usize>, body: &(dyn Fn(usize) -> R + Sync)) -> Vec<R> {
    items.into_par_iter().map(body).collect()
}

#[cfg(test)]
#[path = "parallel_tests.rs"]
mod tests;
