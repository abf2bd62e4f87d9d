//! Two time steps in one sweep, column by column, so that each column comes from memory once
//! per two time steps instead of twice (temporal blocking by a wavefront; Wellein et al. 2006
//! for the idea): in place, an AA local half-step and the pull half-step after it
//! ([`PairedSweep`]; Bailey et al. 2009 for the AA pattern, as used by Calore et al. 2019 §4);
//! with two copies, two fused steps, the first one's columns passing through a ring of planes
//! per worker ([`PairedCopy`]).
//!
//! # In place
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
//! other (`lattice_tests::paired_steps_are_bitwise_the_separate_ones`).
//!
//! Against the two separate sweeps it gains most where the step is bound by memory (D2Q9, the
//! more so when the memory is slow) and a little on a compute-bound model (D2Q37); see
//! docs/performance.md for the figures. Whether it pays on a given machine and lattice (a
//! column larger than the caches gains nothing) is timed while the lattice runs
//! ([`crate::Lattice::paired`]).
//!
//! # Two copies
//! Two fused two-copy steps cannot share one sweep over the two arrays: the first step would
//! have to write the whole second array, whose lines then come from memory for the stores
//! (write-allocate) and go back later, which costs what the reuse saves (measured slower than
//! the separate steps). So the first step writes into a *ring* of `w ≥ 2H + 1` planes
//! ([`Dims::ring`]) that each worker keeps to itself and that stays in the caches, and the
//! second pulls from the ring, `H` planes behind, into the other array: per two steps one
//! array is read and the other written once, as in a single step ([`PairedCopy`]).
//!
//! It makes the two-copy step faster for D2Q9 and D2Q37, bringing D2Q37's two-copy step level
//! with its in-place one (figures: docs/performance.md). Whether it pays is timed while the
//! lattice runs, as in place, among the lattices whose rings fit in half the last-level cache
//! ([`super::ring_budget`]): larger rings gained nothing measurable, and the bound keeps their
//! memory small.

use crate::parallel;

use super::{copy_column, fill_halo, line, Job, Line, Offsets, Pass, Scratch, Stores};
use crate::layout::{Dims, Layout, WithVl};
use crate::storage::RawBuf;
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
                .map(|z| Offsets::new(job, super::Line { x: 0, z }))
                .collect()
        };
        let (lo, po) = (offsets(local), offsets(pull));
        let column = |job: &Job<M, L, T>, o: &[Offsets], x: usize, s: &mut Scratch<T, VL>| {
            for (z, o) in o.iter().enumerate() {
                line::<M, L, T, VL>(job, o, Line { x, z }, s);
            }
        };
        let chunks = Chunks::new(d.lx, d.halo, rayon::current_num_threads());
        let scratch = || Scratch::<T, VL>::new(M::Q, M::FIELDS.len());
        let seams: Vec<usize> = (0..d.lx).filter(|&x| chunks.seam(x)).collect();
        parallel::for_each_init(0..seams.len(), &scratch, &|s, k| {
            column(local, &lo, seams[k], s)
        });
        if self.periodic {
            fill_halo::<L, _>(&local.src.raw, &d);
        }
        parallel::for_each(0..chunks.n, &|c| {
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

/// Two fused two-copy steps in one sweep, `src → ring → dst`: the first step (`first`, from
/// the lattice's current array) writes each column into a small ring of planes that stays in
/// the caches ([`Dims::ring`]), and the second step (`second`, into the lattice's other
/// array) pulls from that ring, `H` columns behind. Each worker walks its
/// chunk of columns with a ring of its own, taking the first step of the `H` columns each side
/// of its chunk as well (they belong to its neighbours, who take them too): nothing is
/// written that another worker reads, so there are no seams. The current array is read once
/// and the other written once per two steps instead of twice.
///
/// Where a chunk's first step reaches beyond the lattice's edges in x, a periodic lattice takes
/// it at the periodic image (its halo filled before, as before any two-copy step; site `x` and
/// `x ± LX` share a ring plane since the ring's width divides `LX`), and a lattice with walls
/// copies the other array's halo plane into the ring instead (what the second step would pull
/// from there one step at a time). The results are bitwise those of two steps
/// (`lattice_tests::paired_steps_are_bitwise_the_separate_ones`).
pub(crate) struct PairedCopy<'a, M: Model, L: Layout, T: Real> {
    /// The first step: the lattice's current array to the rings (its `dst` is replaced).
    pub first: Job<'a, M, L, T>,
    /// The second step: the rings to the lattice's other array (its `src` is replaced).
    pub second: Job<'a, M, L, T>,
    /// One ring per chunk ([`PairedCopy::chunks`]), each of `ring.len()` elements.
    pub rings: Vec<RawBuf<'a, T::Stored>>,
    /// The rings' addressing ([`PairedCopy::ring`]).
    pub ring: Dims,
    /// Whether x is periodic.
    pub periodic: bool,
}

impl<M: Model, L: Layout, T: Real> PairedCopy<'_, M, L, T> {
    /// The ring of planes a paired two-copy sweep of a lattice of shape `d` pulls through: the
    /// fewest planes that hold the `2H + 1` a pull reads and, with periodic x, divide `LX`.
    /// `None` where no ring would stay in the caches, which is what the pairing gains by: where
    /// that takes more than `4(2H + 1)` planes (a periodic `LX` with no small divisor), or
    /// where the rings of all chunks ([`PairedCopy::chunks`] on the current rayon pool) would
    /// take more than [`super::ring_budget`]. That bound also keeps the rings' memory, which
    /// the lattice's storage figures leave out, below the cache's size.
    pub(crate) fn ring(d: &Dims, periodic: bool) -> Option<Dims> {
        let least = 2 * d.halo + 1;
        let ring = (least..=(4 * least).min(d.lx))
            .find(|&w| !periodic || d.lx.is_multiple_of(w))
            .map(|w| d.ring_of(w))?;
        let bytes = Self::chunks(d) * ring.len() * std::mem::size_of::<T::Stored>();
        super::ring_budget()
            .is_none_or(|budget| bytes <= budget)
            .then_some(ring)
    }

    /// How many chunks (and rings) a sweep of a lattice of shape `d` takes on the current
    /// rayon pool.
    pub(crate) fn chunks(d: &Dims) -> usize {
        Chunks::new(d.lx, d.halo, rayon::current_num_threads()).n
    }
}

impl<M: Model, L: Layout, T: Real> WithVl for PairedCopy<'_, M, L, T> {
    type Output = ();

    fn run<const VL: usize>(self) {
        let (first, second) = (&self.first, &self.second);
        debug_assert_eq!((first.pass, second.pass), (Pass::Fused, Pass::Fused));
        let (d, ring) = (first.d, self.ring);
        let chunks = Chunks::new(d.lx, d.halo, self.rings.len());
        debug_assert_eq!(chunks.n, self.rings.len());
        let (lx, h) = (d.lx as isize, d.halo as isize);
        parallel::for_each(0..chunks.n, &|c| {
            let buf = self.rings[c];
            let first = Job {
                dst: first.dst.with_raw(buf),
                dst_d: ring,
                stores: Stores::Plain,
                cols: 0..0,
                ..*first
            };
            let second = Job {
                src: second.src.with_raw(buf),
                src_d: ring,
                cols: 0..0,
                ..*second
            };
            // The first step's offsets are those of any column; the second's depend on where
            // in the ring its column lies.
            let at = |x: usize| (0..d.lz).map(move |z| Line { x, z });
            let o1: Vec<Offsets> = at(0).map(|l| Offsets::new(&first, l)).collect();
            let o2: Vec<Vec<Offsets>> = (0..ring.ncols())
                .map(|slot| at(slot).map(|l| Offsets::new(&second, l)).collect())
                .collect();
            let mut s = Scratch::<T, VL>::new(M::Q, M::FIELDS.len());
            let step1 = |x: isize, s: &mut Scratch<T, VL>| {
                if (0..lx).contains(&x) || self.periodic {
                    let x = x.rem_euclid(lx) as usize;
                    at(x).zip(&o1).for_each(|(l, o)| line(&first, o, l, s));
                } else {
                    let other = (&self.second.dst.raw, &d, d.col(x));
                    (0..d.q)
                        .for_each(|i| copy_column::<L, _>(other, (&buf, &ring, ring.col(x)), i));
                }
            };
            let cols = chunks.cols(c);
            let (start, end) = (cols.start as isize, cols.end as isize);
            (start - h..start + h).for_each(|x| step1(x, &mut s));
            for x in start..end {
                step1(x + h, &mut s);
                let o = &o2[ring.col(x)];
                at(x as usize)
                    .zip(o)
                    .for_each(|(l, o)| line(&second, o, l, &mut s));
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
#[path = "paired_tests.rs"]
mod tests;
