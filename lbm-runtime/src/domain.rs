//! Domain decomposition (seed 003 §4, seed 000 §5): the global `LX × LY` lattice is cut along
//! x into one slab per rank, the ranks forming a periodic ring; each slab is an ordinary
//! two-copy [`Lattice`] whose `H = M::HALO` halo columns on each side hold copies of the first
//! (last) `H` columns of its right (left) neighbour.
//!
//! # One step of a slab (seed 003 Fig. 5)
//! ```text
//! post halo exchange      recv halo [−H, 0) ← left,  recv halo [lx, lx+H) ← right
//!                         send border [0, H) → left, send border [lx−H, lx) → right
//! update the bulk         x ∈ [H, lx − H): pulls from x − c_x ∈ [0, lx), no halo needed
//! wait for the exchange
//! update the borders      x ∈ [0, H) ∪ [lx − H, lx)
//! ```
//! Every site computes the very same arithmetic as in a single lattice, so a decomposed run
//! is bitwise identical to the single-process one. The bulk only reads what the exchange
//! reads (the border columns) and never what it writes (the halos), which is what lets the
//! exchange run under the bulk update.
//!
//! Column-major storage makes a block of halo columns one contiguous run of memory for AoS
//! and CAoSoA, and `Q` runs (one per population) for SoA and CSoA: a [`Runs`] list describes
//! it, and the MPI ring (`crate::mpi_ring`, feature `mpi`) sends it without packing, as an
//! MPI indexed datatype. [`SlabRing`] runs the same decomposition in one process (the halos
//! copied between slabs), which tests the decomposition without MPI and measures the
//! bulk/border split for the performance model ([`crate::scaling`]).
//!
//! Boundaries are compiled once for the global lattice and sliced, so walls (x walls
//! included: the first and last slabs' outer halos are then never read) and obstacles act
//! exactly as in a single lattice. Only the two-copy scheme is supported: the in-place AA
//! scheme writes into the halos in its pull half-step, which would need a second exchange.

use std::ops::Range;

use crate::boundary::{Boundaries, BoundarySpec, Site};
use crate::layout::{Dims, Layout};
use crate::{Lattice, LbmError, Model, Real, Scheme};

/// Why a decomposed lattice cannot be built or run.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum DomainError {
    /// No ranks to split over.
    #[error("cannot split a lattice over 0 ranks")]
    NoRanks,
    /// A slab would be narrower than the halo it must fill on its neighbours.
    #[error(
        "a lattice of width LX = {lx} cannot be split over {ranks} ranks with model {model}: \
         each slab needs at least {min_width} columns (the halo width), so run on at most \
         {max_ranks} ranks or widen the lattice"
    )]
    TooManyRanks {
        /// The global lattice width.
        lx: usize,
        /// The requested number of ranks.
        ranks: usize,
        /// The model's name.
        model: &'static str,
        /// The narrowest admissible slab.
        min_width: usize,
        /// The most ranks this lattice supports.
        max_ranks: usize,
    },
    /// The in-place scheme is not supported distributed.
    #[error(
        "distributed runs support the two-copy scheme only: the in-place (AA) scheme writes \
         into the halo columns in its pull half-step, which would need a second exchange per \
         step; use Scheme::TwoCopy"
    )]
    InPlace,
    /// A rank outside the ring.
    #[error("rank {rank} is outside the ring of {ranks} ranks")]
    NoSuchRank {
        /// The rank asked for.
        rank: usize,
        /// The ring's size.
        ranks: usize,
    },
    /// A halo region too large to describe with MPI's `int` counts.
    #[error("the halo region spans {0} values, more than an MPI count can describe (2³¹ − 1)")]
    TooLarge(usize),
    /// An MPI call failed or MPI could not be initialised.
    #[error("MPI: {0}")]
    Mpi(String),
    /// The slab or the global lattice could not be built.
    #[error(transparent)]
    Lattice(#[from] LbmError),
}

/// The cut of `LX` columns into slabs over a ring of ranks: rank `r` owns the global columns
/// [`Decomposition::slab`]`(r)`; widths differ by at most one column (the first `LX mod n`
/// ranks take one more).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decomposition {
    lx: usize,
    ranks: usize,
}

impl Decomposition {
    /// Splits `lx` columns over `ranks` ranks for model `M`; fails when a slab would be
    /// narrower than `max(M::HALO, 1)` columns (every rank computes the same answer, so a bad
    /// rank count fails everywhere with the same message, without communication).
    pub fn new<M: Model>(lx: usize, ranks: usize) -> Result<Self, DomainError> {
        if ranks == 0 {
            return Err(DomainError::NoRanks);
        }
        let min_width = M::HALO.max(1);
        if lx / ranks < min_width {
            return Err(DomainError::TooManyRanks {
                lx,
                ranks,
                model: M::NAME,
                min_width,
                max_ranks: lx / min_width,
            });
        }
        Ok(Self { lx, ranks })
    }

    /// The global lattice width.
    pub fn lx(&self) -> usize {
        self.lx
    }

    /// Number of ranks in the ring.
    pub fn ranks(&self) -> usize {
        self.ranks
    }

    /// The global columns of rank `rank`'s slab.
    pub fn slab(&self, rank: usize) -> Result<Range<usize>, DomainError> {
        self.check(rank)?;
        let (base, extra) = (self.lx / self.ranks, self.lx % self.ranks);
        let start = rank * base + rank.min(extra);
        Ok(start..start + base + usize::from(rank < extra))
    }

    /// The left neighbour in the ring (`rank − 1 mod n`).
    pub fn left(&self, rank: usize) -> usize {
        (rank + self.ranks - 1) % self.ranks
    }

    /// The right neighbour in the ring (`rank + 1 mod n`).
    pub fn right(&self, rank: usize) -> usize {
        (rank + 1) % self.ranks
    }

    fn check(&self, rank: usize) -> Result<(), DomainError> {
        if rank >= self.ranks {
            return Err(DomainError::NoSuchRank {
                rank,
                ranks: self.ranks,
            });
        }
        Ok(())
    }
}

/// A contiguous run of storage: `len` values from index `start`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Run {
    /// First index.
    pub start: usize,
    /// Number of values.
    pub len: usize,
}

/// The storage runs of a block of columns (all populations, all rows), in memory order.
/// Memory order is the same on every slab whatever its width (the width only scales the
/// strides), so the `j`-th value of a sender's runs is the `j`-th value of the receiver's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Runs(pub Vec<Run>);

impl Runs {
    /// The runs of site columns `xs` (which may lie in the halos) of a lattice of shape `d`.
    pub fn of_columns<L: Layout>(d: &Dims, xs: Range<isize>) -> Self {
        let mut idx: Vec<usize> = xs
            .flat_map(|x| (0..d.q).flat_map(move |i| (0..d.ly).map(move |y| (i, x, y))))
            .map(|(i, x, y)| L::index(d, i, d.col(x), y))
            .collect();
        idx.sort_unstable();
        let mut runs: Vec<Run> = Vec::new();
        for i in idx {
            match runs.last_mut() {
                Some(r) if r.start + r.len == i => r.len += 1,
                _ => runs.push(Run { start: i, len: 1 }),
            }
        }
        Self(runs)
    }

    /// Total number of values.
    pub fn len(&self) -> usize {
        self.0.iter().map(|r| r.len).sum()
    }

    /// Whether the runs hold no value.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The values at the runs, in order.
    pub fn pack<T: Copy>(&self, src: &[T]) -> Vec<T> {
        self.0
            .iter()
            .flat_map(|r| src[r.start..r.start + r.len].iter().copied())
            .collect()
    }

    /// Writes `values` (as produced by [`Runs::pack`] on the sender) at the runs.
    pub fn unpack<T: Copy>(&self, values: &[T], dst: &mut [T]) {
        let mut at = 0;
        for r in &self.0 {
            dst[r.start..r.start + r.len].copy_from_slice(&values[at..at + r.len]);
            at += r.len;
        }
    }
}

/// Side of a slab: index 0 is left (towards `x = 0`), 1 is right.
pub const LEFT: usize = 0;
/// See [`LEFT`].
pub const RIGHT: usize = 1;

/// The storage runs a slab sends and receives: `send[s]` are the `H` border columns on side
/// `s` (for the neighbour on that side), `recv[s]` the `H` halo columns on side `s`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HaloPlan {
    /// Border columns `[0, H)` and `[lx − H, lx)`.
    pub send: [Runs; 2],
    /// Halo columns `[−H, 0)` and `[lx, lx + H)`.
    pub recv: [Runs; 2],
}

impl HaloPlan {
    /// The plan of a slab of shape `d` in layout `L`.
    pub fn new<L: Layout>(d: &Dims) -> Self {
        let (lx, h) = (d.lx as isize, d.halo as isize);
        Self {
            send: [
                Runs::of_columns::<L>(d, 0..h),
                Runs::of_columns::<L>(d, lx - h..lx),
            ],
            recv: [
                Runs::of_columns::<L>(d, -h..0),
                Runs::of_columns::<L>(d, lx..lx + h),
            ],
        }
    }
}

/// The bulk columns of a slab `lx` wide with halo `h`: `[h, lx − h)`, those whose update reads
/// no halo column (empty when `lx < 2h`).
pub fn bulk_columns(lx: usize, h: usize) -> Range<usize> {
    h..lx.saturating_sub(h).max(h)
}

/// The border columns `[0, h)` and `[lx − h, lx)` (clipped so that, with the bulk, they cover
/// every column exactly once).
pub fn border_columns(lx: usize, h: usize) -> [Range<usize>; 2] {
    let bulk = bulk_columns(lx, h);
    [0..bulk.start.min(lx), bulk.end.min(lx)..lx]
}

/// `cols` cut into `n` consecutive parts of equal width but the last (none when `n` is 0).
pub fn split_columns(cols: Range<usize>, n: usize) -> impl Iterator<Item = Range<usize>> {
    let width = cols.len().div_ceil(n.max(1)).max(1);
    let end = if n == 0 { cols.start } else { cols.end };
    (cols.start..end)
        .step_by(width)
        .map(move |a| a..(a + width).min(end))
}

/// The slice of the global boundaries `g` (of a lattice `ly` high) over the global column
/// ranges `parts`, laid side by side and renumbered from 0 (a hetero host strip is the right
/// border followed by the left one, [`crate::hetero`]). The slice keeps `g`'s x periodicity.
pub(crate) fn slice_boundaries<T: Real>(
    g: &Boundaries<T>,
    ly: usize,
    parts: &[Range<usize>],
) -> Boundaries<T> {
    let mut out = Boundaries {
        sites: Vec::new(),
        col_start: vec![0],
        corr: g.corr.clone(),
        x_periodic: g.x_periodic,
        solid: Vec::new(),
    };
    let mut x0 = 0;
    for xs in parts {
        let (lo, hi) = (g.col_start[xs.start], g.col_start[xs.end]);
        let base = out.sites.len();
        out.sites.extend(g.sites[lo..hi].iter().map(|s| Site {
            x: s.x - xs.start + x0,
            ..*s
        }));
        out.col_start.extend(
            g.col_start[xs.start + 1..=xs.end]
                .iter()
                .map(|c| c - lo + base),
        );
        if !g.solid.is_empty() {
            out.solid
                .extend_from_slice(&g.solid[xs.start * ly..xs.end * ly]);
        }
        x0 += xs.len();
    }
    out
}

/// What defines the global lattice: size, parameters and boundaries (every rank holds the
/// same, so every rank validates it identically).
#[derive(Debug)]
pub struct GlobalSpec<M: Model> {
    /// Global width.
    pub lx: usize,
    /// Height.
    pub ly: usize,
    /// Model parameters.
    pub params: M::Params,
    /// Boundary conditions of the global lattice.
    pub boundaries: BoundarySpec,
}

impl<M: Model> Clone for GlobalSpec<M> {
    fn clone(&self) -> Self {
        Self {
            params: self.params.clone(),
            boundaries: self.boundaries.clone(),
            ..*self
        }
    }
}

impl<M: Model> GlobalSpec<M> {
    /// The global lattice at rest (two-copy scheme): where gathered slabs are assembled.
    pub fn lattice<L: Layout, T: Real>(&self) -> Result<Lattice<M, L, T>, LbmError> {
        Lattice::new(
            self.lx,
            self.ly,
            self.params.clone(),
            Scheme::TwoCopy,
            &self.boundaries,
        )
    }
}

/// One rank's slab: its lattice, where it sits, and its halo plan.
pub struct Slab<M: Model, L: Layout, T: Real> {
    lattice: Lattice<M, L, T>,
    x0: usize,
    plan: HaloPlan,
}

impl<M: Model, L: Layout, T: Real> Slab<M, L, T> {
    /// Rank `rank`'s slab of the global lattice `g` cut by `dec`, at rest. Validates the
    /// global lattice first (size, parameters, boundaries), so every rank fails alike.
    pub fn new(
        g: &GlobalSpec<M>,
        dec: &Decomposition,
        rank: usize,
        scheme: Scheme,
    ) -> Result<Self, DomainError> {
        if scheme != Scheme::TwoCopy {
            return Err(DomainError::InPlace);
        }
        let xs = dec.slab(rank)?;
        let global_bc = g.lattice::<L, T>()?.boundaries().clone();
        let mut lattice = Lattice::new(
            xs.len(),
            g.ly,
            g.params.clone(),
            Scheme::TwoCopy,
            &BoundarySpec::periodic(),
        )?;
        lattice.replace_boundaries(slice_boundaries(
            &global_bc,
            g.ly,
            std::slice::from_ref(&xs),
        ));
        let plan = HaloPlan::new::<L>(&lattice.dims());
        Ok(Self {
            lattice,
            x0: xs.start,
            plan,
        })
    }

    /// The slab's lattice (its sites are the global columns `x0 ..`; halos and the
    /// pre-collision accessors near the slab's edges are not meaningful on their own: gather
    /// the global lattice to read moments).
    pub fn lattice(&self) -> &Lattice<M, L, T> {
        &self.lattice
    }

    /// The first global column of the slab.
    pub fn x0(&self) -> usize {
        self.x0
    }

    /// The slab's halo plan.
    pub fn plan(&self) -> &HaloPlan {
        &self.plan
    }

    /// Sets every site to the equilibrium of `moments(x, y)`, `x` a *global* column.
    pub fn set_equilibrium<F>(&mut self, moments: F) -> Result<(), LbmError>
    where
        F: Fn(usize, usize) -> Vec<f64> + Sync,
    {
        let x0 = self.x0;
        self.lattice.set_equilibrium(|x, y| moments(x + x0, y))
    }

    /// Updates the bulk columns (those that need no halo).
    pub fn update_bulk(&mut self) {
        let d = self.lattice.dims();
        self.update_columns(bulk_columns(d.lx, d.halo));
    }

    /// Updates the site columns `cols` (a part of the bulk, or of the borders once the halos
    /// arrived), without ending the step.
    pub fn update_columns(&mut self, cols: Range<usize>) {
        self.lattice.fused_columns(cols);
    }

    /// Updates the border columns (after the halos arrived) and ends the step.
    pub fn update_borders_and_finish(&mut self) {
        let d = self.lattice.dims();
        for cols in border_columns(d.lx, d.halo) {
            self.lattice.fused_columns(cols);
        }
        self.lattice.finish_step();
    }

    /// Sets the step counter (a slab cut from a lattice restored from a checkpoint).
    #[cfg(feature = "mpi")]
    pub(crate) fn set_steps_done(&mut self, step: u64) {
        self.lattice.set_steps_done(step);
    }

    /// The values this slab sends to its neighbour on `side`.
    pub fn pack_border(&self, side: usize) -> Vec<T> {
        self.plan.send[side].pack(self.lattice.state())
    }

    /// Stores what the neighbour on `side` sent into the halo on that side.
    pub fn unpack_halo(&mut self, side: usize, values: &[T]) {
        let runs = self.plan.recv[side].clone();
        runs.unpack(values, self.lattice.state_mut());
    }

    /// Base pointer of the current population copy (for zero-copy MPI transfers).
    #[cfg(feature = "mpi")]
    pub(crate) fn state_ptr(&mut self) -> *mut T {
        self.lattice.state_mut().as_mut_ptr()
    }

    /// The post-collision populations of every site of the slab, `[(x·LY + y)·Q + i]`.
    pub fn export(&self) -> Vec<T> {
        export_columns(&self.lattice, 0..self.lattice.dims().lx).expect("the slab's own columns")
    }

    /// Sets the slab's populations from values laid out as [`Slab::export`]'s (a slab cut
    /// from a global lattice with [`export_columns`]: resuming on another number of ranks).
    pub fn import(&mut self, values: &[T]) -> Result<(), LbmError> {
        let d = self.lattice.dims();
        if values.len() != d.lx * d.ly * M::Q {
            return Err(LbmError::Shape(format!(
                "slab of {}×{} sites: got {} populations, expected {}",
                d.lx,
                d.ly,
                values.len(),
                d.lx * d.ly * M::Q
            )));
        }
        import_slab(&mut self.lattice, 0, values)
    }
}

/// The post-collision populations of the columns `xs` of `lattice`, `[((x − x0)·LY + y)·Q + i]`.
pub fn export_columns<M: Model, L: Layout, T: Real>(
    lattice: &Lattice<M, L, T>,
    xs: Range<usize>,
) -> Result<Vec<T>, LbmError> {
    let ly = lattice.dims().ly;
    let mut out = vec![T::default(); xs.len() * ly * M::Q];
    for (s, chunk) in out.chunks_mut(M::Q).enumerate() {
        lattice.populations(xs.start + s / ly, s % ly, chunk)?;
    }
    Ok(out)
}

/// Writes populations laid out as [`export_columns`]'s into the columns from `x0` on.
pub fn import_slab<M: Model, L: Layout, T: Real>(
    lattice: &mut Lattice<M, L, T>,
    x0: usize,
    values: &[T],
) -> Result<(), LbmError> {
    let ly = lattice.dims().ly;
    for (s, f) in values.chunks(M::Q).enumerate() {
        lattice.set_populations(x0 + s / ly, s % ly, f)?;
    }
    Ok(())
}

/// The decomposition run in one process: `n` slabs whose halos are copied from their
/// neighbours, then bulk and borders updated, as each rank of the MPI ring does. Bitwise
/// identical to the single lattice; the loopback reference of the performance model.
pub struct SlabRing<M: Model, L: Layout, T: Real> {
    spec: GlobalSpec<M>,
    dec: Decomposition,
    slabs: Vec<Slab<M, L, T>>,
}

impl<M: Model, L: Layout, T: Real> SlabRing<M, L, T> {
    /// The global lattice `spec` cut into `ranks` slabs, at rest.
    pub fn new(spec: GlobalSpec<M>, ranks: usize, scheme: Scheme) -> Result<Self, DomainError> {
        let dec = Decomposition::new::<M>(spec.lx, ranks)?;
        let slabs = (0..ranks)
            .map(|r| Slab::new(&spec, &dec, r, scheme))
            .collect::<Result<_, _>>()?;
        Ok(Self { spec, dec, slabs })
    }

    /// The global lattice `global` (of the same specification) cut into `ranks` slabs: a run
    /// resumed on another number of slabs.
    pub fn scatter(
        spec: GlobalSpec<M>,
        ranks: usize,
        global: &Lattice<M, L, T>,
    ) -> Result<Self, DomainError> {
        let mut ring = Self::new(spec, ranks, Scheme::TwoCopy)?;
        for s in &mut ring.slabs {
            let xs = s.x0()..s.x0() + s.lattice().dims().lx;
            s.import(&export_columns(global, xs)?)?;
        }
        Ok(ring)
    }

    /// The slabs.
    pub fn slabs(&self) -> &[Slab<M, L, T>] {
        &self.slabs
    }

    /// Sets every site to the equilibrium of `moments(x, y)` (global coordinates).
    pub fn set_equilibrium<F>(&mut self, moments: F) -> Result<(), LbmError>
    where
        F: Fn(usize, usize) -> Vec<f64> + Sync,
    {
        self.slabs
            .iter_mut()
            .try_for_each(|s| s.set_equilibrium(&moments))
    }

    /// Copies every slab's borders into its neighbours' halos.
    pub fn exchange(&mut self) {
        for r in 0..self.dec.ranks() {
            let to_right = self.slabs[r].pack_border(RIGHT);
            let to_left = self.slabs[r].pack_border(LEFT);
            let (right, left) = (self.dec.right(r), self.dec.left(r));
            self.slabs[right].unpack_halo(LEFT, &to_right);
            self.slabs[left].unpack_halo(RIGHT, &to_left);
        }
    }

    /// One time step: exchange, bulk, borders.
    pub fn step(&mut self) {
        self.exchange();
        for s in &mut self.slabs {
            s.update_bulk();
            s.update_borders_and_finish();
        }
    }

    /// Updates the border columns of every slab and ends the step, nothing else (benchmarks:
    /// the `T_border` of the performance model).
    pub fn update_borders(&mut self) {
        for s in &mut self.slabs {
            s.update_borders_and_finish();
        }
    }

    /// The whole lattice assembled from the slabs.
    pub fn gather(&self) -> Result<Lattice<M, L, T>, LbmError> {
        let mut global = self.spec.lattice::<L, T>()?;
        for s in &self.slabs {
            import_slab(&mut global, s.x0(), &s.export())?;
        }
        Ok(global)
    }
}

#[cfg(test)]
#[path = "domain_tests.rs"]
mod tests;
