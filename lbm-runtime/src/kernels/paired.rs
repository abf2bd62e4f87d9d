//! The in-place scheme's two half-steps in one sweep: an AA local half-step (odd → even) and
//! the pull half-step after it (even → odd), column by column, so that each column comes from
//! memory once per two time steps instead of twice (temporal blocking by a wavefront; Wellein
//! et al. 2006 for the idea; Bailey et al. 2009 for the AA pattern of seed 000 §4).
//!
//! The pull half-step of site column `x` reads and writes elements of columns `x − H ..= x + H`
//! (`H` the model's halo), and needs them after the local half-step. So each worker walks a
//! contiguous chunk of columns, taking the local half-step of column `x + H` just before the
//! pull of column `x`: the columns a pull touches are those the local half-step has just
//! left in the caches. Chunks meet at *seams*: the `H` columns each side of a chunk's first
//! column (and of column 0, where x wraps) are touched by the pulls of two workers, so their
//! local half-step is taken first, for all seams at once, before any pull; then, with
//! periodic x, the halo is filled from them, as before a pull half-step. No element is then
//! read or written by two sites of one half-step (the race-freedom argument of the AA
//! pattern, `crate::kernels`), and each pull finds every column it touches already past its
//! local half-step: the results are bitwise those of the two half-steps swept one after the
//! other (`lattice_tests::paired_half_steps_are_bitwise_the_separate_ones`).
//!
//! Measured against the two separate sweeps (D2Q9 4096², two Zen 4 cores, alternated in
//! one process, MLUPS, the memory in its slow state, read-modify-write ≈ 53 GB/s): CAoSoA⟨8⟩
//! f64 334–351 → 500–563, CAoSoA⟨16⟩ f32 677–689 → 1078–1092; in the fast state (≈ 100 GB/s)
//! 543–558 → 595–606 and 669–1047 → 937–1214. D2Q37 f64 1024×2048 (compute-bound): 35–37 →
//! 37–42. Whether it pays on a given machine and lattice (a column larger than the caches
//! gains nothing) is timed while the lattice runs ([`crate::Lattice::paired`]).

use rayon::prelude::*;

use super::{fill_halo, line, Job, Line, Offsets, Pass, Scratch};
use crate::layout::{Layout, WithVl};
use crate::{Model, Real};

/// The two half-steps to sweep together: `local` (odd → even) then `pull` (even → odd), over
/// all columns, on one array (`src` = `dst`).
pub(crate) struct PairedSweep<'a, M: Model, L: Layout, T: Real> {
    pub local: Job<'a, M, L, T>,
    pub pull: Job<'a, M, L, T>,
    /// Whether x is periodic: the halo is filled between the seams and the sweep (the caller
    /// folds it after, as after a pull half-step).
    pub periodic: bool,
}

impl<M: Model, L: Layout, T: Real> WithVl for PairedSweep<'_, M, L, T> {
    type Output = ();

    fn run<const VL: usize>(self) {
        let (local, pull) = (&self.local, &self.pull);
        debug_assert_eq!((local.pass, pull.pass), (Pass::AaLocal, Pass::AaPull));
        debug_assert_eq!(
            (local.cols.clone(), pull.cols.clone()),
            (0..local.d.lx, 0..local.d.lx)
        );
        let d = local.d;
        let offsets = |job: &Job<M, L, T>| -> Vec<Offsets> {
            (0..d.lz)
                .map(|z| Offsets::new::<M, L, T>(&d, z, job.pass, job.prefetch_bytes))
                .collect()
        };
        let (lo, po) = (offsets(local), offsets(pull));
        let column = |job: &Job<M, L, T>, o: &[Offsets], x: usize, s: &mut Scratch<T, VL>| {
            for (z, o) in o.iter().enumerate() {
                line::<M, L, T, VL>(job, o, Line { x, z }, s);
            }
        };
        let chunks = Chunks::new(d.lx, d.halo, rayon::current_num_threads());
        let scratch = || Scratch::<T, VL>::new(M::Q, M::MOMENT_NAMES.len(), M::FIELDS.len());
        let seams: Vec<usize> = (0..d.lx).filter(|&x| chunks.seam(x)).collect();
        seams
            .into_par_iter()
            .for_each_init(scratch, |s, x| column(local, &lo, x, s));
        if self.periodic {
            fill_halo::<L, _>(&local.src.raw, &d);
        }
        (0..chunks.n).into_par_iter().for_each(|c| {
            let mut s = scratch();
            let cols = chunks.cols(c);
            for x in cols.clone() {
                let ahead = x + d.halo;
                if ahead < cols.end && !chunks.seam(ahead) {
                    column(local, &lo, ahead, &mut s);
                }
                column(pull, &po, x, &mut s);
            }
        });
    }
}

/// The columns `0..lx` cut into `n` contiguous chunks, one per worker, each long enough that
/// its seams (`halo` columns each side of its first column) leave a wave between them.
#[derive(Debug)]
struct Chunks {
    lx: usize,
    halo: usize,
    n: usize,
}

impl Chunks {
    fn new(lx: usize, halo: usize, workers: usize) -> Self {
        let n = workers.min(lx / (4 * halo + 4)).max(1);
        Self { lx, halo, n }
    }

    /// The columns of chunk `c`.
    fn cols(&self, c: usize) -> std::ops::Range<usize> {
        c * self.lx / self.n..(c + 1) * self.lx / self.n
    }

    /// Whether column `x` lies within `halo` columns of a chunk's first column (either side,
    /// x wrapping), where the pulls of two workers meet.
    fn seam(&self, x: usize) -> bool {
        (0..self.n).any(|c| {
            let dx = (x + self.lx - self.cols(c).start) % self.lx;
            dx < self.halo || dx + self.halo >= self.lx
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Chunks cover the columns once, in order; seams are the `halo` columns each side of
    /// every chunk's start, wrapping at 0; short lattices get fewer chunks than workers.
    #[test]
    fn chunks_and_seams() {
        let c = Chunks::new(40, 1, 2);
        assert_eq!((c.cols(0), c.cols(1)), (0..20, 20..40));
        let seams: Vec<usize> = (0..40).filter(|&x| c.seam(x)).collect();
        assert_eq!(seams, [0, 19, 20, 39]);
        let c = Chunks::new(40, 3, 2);
        let seams: Vec<usize> = (0..40).filter(|&x| c.seam(x)).collect();
        assert_eq!(seams, [0, 1, 2, 17, 18, 19, 20, 21, 22, 37, 38, 39]);
        assert_eq!(
            Chunks::new(40, 3, 8).n,
            2,
            "chunks of at least 4H + 4 columns"
        );
        assert_eq!(Chunks::new(5, 3, 8).n, 1);
        let c = Chunks::new(5, 3, 8);
        assert!(
            (0..5).all(|x| c.seam(x)),
            "a lattice narrower than its seams is all seam"
        );
    }
}
