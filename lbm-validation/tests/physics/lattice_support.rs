//! Shared by the lattice tests: a lattice's state as bits, and the steps swept in pairs against
//! the steps one by one.

use lbm::{Lattice, Layout, Model, Real};

/// All stored populations in logical order, as bit patterns.
pub fn state_bits<M: Model, L: Layout, T: Real>(lat: &Lattice<M, L, T>) -> Vec<u64> {
    let d = lat.dims();
    let mut f = vec![T::default(); M::Q];
    let mut out = Vec::with_capacity(d.sites() * M::Q);
    for x in 0..d.lx {
        for s in 0..d.plane() {
            lat.populations(x, s, &mut f).unwrap();
            out.extend(f.iter().map(|v| v.to_f64().to_bits()));
        }
    }
    out
}

/// Asserts that `steps` steps of a fresh `lattice()` (either scheme) give the same bits swept
/// in pairs (`Lattice::steps` after `set_paired(true)`, which it checks took) as with `step`
/// after `step`, on 1, 2 and 3 workers (as many chunks, which meet inside the lattice).
pub fn assert_pairs_match<M: Model, L: Layout, T: Real>(
    lattice: impl Fn() -> Lattice<M, L, T> + Sync,
    steps: u64,
    what: &str,
) {
    for threads in [1, 2, 3] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| {
            let mut separate = lattice();
            (0..steps).for_each(|_| separate.step());
            let mut paired = lattice();
            paired.set_paired(true);
            assert_eq!(paired.paired(), Some(true), "{what}");
            paired.steps(steps);
            let bits = state_bits(&separate);
            assert_eq!(bits, state_bits(&paired), "{what}, {threads} workers");
        });
    }
}
