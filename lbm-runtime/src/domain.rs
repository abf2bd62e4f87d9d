//! Domain decomposition (Calore et al. 2016 §4, 2019 §5): the global `LX × LY` (`× LZ`)
//! lattice is cut along x into one slab per rank, the ranks forming a periodic ring; each slab
//! is an ordinary two-copy [`Lattice`] whose `H = M::HALO` halo columns on each side hold
//! copies of the first (last) `H` columns of its right (left) neighbour.
//!
//! # One step of a slab (Calore et al. 2016, Fig. 5)
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
//! The halo columns travel between slabs in logical order ([`crate::slab_backend`]), whatever
//! the backend that runs a slab. The ring itself is [`crate::distributed::DistLattice`], on MPI
//! ranks, on the threads of one process, or on one process alone (its halos its own borders).
//!
//! Each slab compiles the global boundaries for its own columns (`GlobalSpec::slab_boundaries`),
//! so walls (x walls included: the first and last slabs' outer halos are then never read) and
//! obstacles act exactly as in a single lattice, and no rank builds anything of the global
//! lattice's size.
//!
//! # The in-place (AA) scheme on slabs
//! The pull half-step reads the halos like a two-copy step (the same exchange before it) and
//! pushes the populations that leave the slab into them; a second exchange sends those back
//! ([`crate::SlabBackend::pushed`]) and the neighbour writes them into its border columns
//! (`folded`), as the fold of a periodic lattice does with its own halos. The local
//! half-step reads only its own sites: no exchange. Two exchanges per two steps, as two-copy.

use std::ops::Range;

use crate::blocks::{Blocks, Cut, Extent};
use crate::boundary::{check_spec, Boundaries, BoundarySpec, Interpolation};
use crate::error::check_values;
use crate::lattice::check_size;
use crate::layout::{Dims, Layout, LayoutKind};
use crate::{Error, Lattice, LbmError, Model, Real, Scheme};

pub use crate::lattice::{export_columns, import_slab};
pub use crate::runtime_error::DomainError;

/// The cut of the global lattice of `nodes` into slabs over a ring of `ranks` ranks: the
/// [`Blocks`] of [`Cut::along`] x, rank `r` owning the global columns
/// `blocks.range(r, 0)`, widths differing by at most one column (the first `LX mod n` ranks
/// take one more: [`crate::blocks::even_bounds`]); rank `r`'s neighbours in the ring are
/// `blocks.neighbours(r, 0)`. Fails when a slab would be narrower than `max(M::HALO, 1)`
/// columns (every rank computes the same answer, so a bad rank count fails everywhere with
/// the same message, without communication).
pub fn ring_blocks<M: Model>(nodes: [usize; 3], ranks: usize) -> Result<Blocks, DomainError> {
    if ranks == 0 {
        return Err(DomainError::NoRanks);
    }
    let (lx, min_width) = (nodes[0], M::HALO.max(1));
    if lx / ranks < min_width {
        return Err(DomainError::TooManyRanks {
            lx,
            ranks,
            model: M::NAME,
            min_width,
            max_ranks: lx / min_width,
        });
    }
    Ok(Blocks::even(nodes, Cut::along(0, ranks)))
}

/// Side of a slab: index 0 is left (towards `x = 0`), 1 is right.
pub const LEFT: usize = 0;
/// See [`LEFT`].
pub const RIGHT: usize = 1;

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

/// Site columns a window of [`moments_by_window`] aims at: small beside a slab, wide beside
/// the halo.
const WINDOW_COLUMNS: usize = 64;

/// The moment fields of the global columns `xs` (a rank's slab; order of
/// [`Model::MOMENT_NAMES`], each `[(x − xs.start)·LY + y]`) from their post-collision
/// populations, read by `read(cols)` for local columns `cols` (logical order), and from the
/// `H` columns on each side of them, `around` (the neighbours' borders), and with the slab's
/// per-site `fields` where it has them (laid out as [`Lattice::set_field`] takes them, `x`
/// local): a forced model's velocity is read with each site's own force.
///
/// The moments are those of the populations streamed once more (as
/// [`Lattice::moment_field`]), so a site next to the cut pulls from the neighbour's columns.
/// The columns are taken a window of about [`WINDOW_COLUMNS`] at a time: each window is a
/// two-copy slab of those columns, its boundaries compiled for them alone and its halos
/// filled from the columns beside it, so the moments are the single lattice's, bit for bit,
/// and no more than a window is held beside the slab.
pub(crate) fn moments_by_window<M: Model, L: Layout, T: Real>(
    g: &GlobalSpec<M>,
    xs: Range<usize>,
    around: [Vec<T>; 2],
    fields: Option<&[Vec<f64>]>,
    read: impl Fn(Range<usize>) -> Result<Vec<T>, Error>,
) -> Result<Vec<Vec<f64>>, Error> {
    let (w, h) = (xs.len(), M::HALO);
    let windows = (w / WINDOW_COLUMNS.max(h)).max(1);
    let mut out = vec![Vec::with_capacity(w * g.plane()); M::MOMENT_NAMES.len()];
    for k in 0..windows {
        // Every window is at least `H` wide, so its halos lie in its neighbour windows.
        let (a, b) = (k * w / windows, (k + 1) * w / windows);
        let mut window = Slab::<M, L, T>::cut(g, xs.start + a..xs.start + b, Scheme::TwoCopy)?;
        window.import(&read(a..b)?)?;
        for (name, values) in M::FIELDS.iter().zip(fields.unwrap_or_default()) {
            let own = &values[a * g.plane()..b * g.plane()];
            window.lattice_mut().set_field(name, own)?;
        }
        let left = if a == 0 {
            around[LEFT].clone()
        } else {
            read(a - h..a)?
        };
        let right = if b == w {
            around[RIGHT].clone()
        } else {
            read(b..b + h)?
        };
        window.set_halo(LEFT, &left);
        window.set_halo(RIGHT, &right);
        for (field, window) in out.iter_mut().zip(window.lattice().moment_fields()) {
            field.extend(window);
        }
    }
    Ok(out)
}

/// What defines the global lattice: size, parameters and boundaries (every rank holds the
/// same, so every rank validates it identically).
#[derive(Debug)]
pub struct GlobalSpec<M: Model> {
    /// Global width.
    pub lx: usize,
    /// Height.
    pub ly: usize,
    /// Depth (1 for a 2-D model).
    pub lz: usize,
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
    /// The global lattice's size, parameters and boundaries checked as [`Lattice::new`] does,
    /// without allocating anything of the lattice's size: every rank checks the same, so
    /// every rank fails alike.
    pub(crate) fn validate(&self, layout: LayoutKind) -> Result<(), LbmError> {
        check_size::<M>(self.size(), layout)?;
        M::validate(&self.params)?;
        check_spec::<M>(&self.boundaries, &self.dims())
    }

    /// `[LX, LY, LZ]`.
    pub fn size(&self) -> [usize; 3] {
        [self.lx, self.ly, self.lz]
    }

    /// Sites per plane of constant x, `LY·LZ`.
    pub fn plane(&self) -> usize {
        self.ly * self.lz
    }

    /// The global lattice's shape.
    pub(crate) fn dims(&self) -> Dims {
        Dims::of::<M>(self.size())
    }

    /// The boundaries of the global columns `xs` alone, renumbered from 0 and not periodic in x
    /// (a slab's halos come from its neighbours, never from its own periodic image; walls in
    /// x bounce the links that would read the outer halos of the first and last slabs).
    /// Refuses quadratic curved walls on a slab that is not the whole lattice: their links
    /// read two sites along them, beyond a halo at a cut. Every slab of a cut lattice refuses
    /// alike, so no rank waits for another that failed.
    pub(crate) fn slab_boundaries<T: Real>(
        &self,
        xs: Range<usize>,
        lanes: &dyn Fn(&Dims, usize) -> (usize, usize),
    ) -> Result<Boundaries<T>, LbmError> {
        let quadratic = (self.boundaries.solid.as_ref())
            .is_some_and(|o| o.is_curved() && o.interpolation() == Interpolation::Quadratic);
        if quadratic && xs.len() < self.lx {
            return Err(LbmError::Boundary(
                "the obstacles' curved walls are interpolated quadratically \
                 (Interpolation::Quadratic), whose links read two sites along them, beyond the \
                 halo of a slab's cut: run on one process and one device (--backend cpu or gpu), \
                 or use the linear interpolation (Interpolation::Linear; `lbm run` takes \
                 --walls linear), second-order as well"
                    .into(),
            ));
        }
        let bc = Boundaries::compile_columns::<M>(&self.boundaries, &self.dims(), xs, false, lanes);
        Ok(bc)
    }

    /// Refuses a lattice (of size `[LX, LY, LZ]`, `None`: none at hand) that is not of this
    /// specification's size, before it is cut into slabs or parts.
    pub(crate) fn holds(&self, size: Option<[usize; 3]>) -> Result<(), LbmError> {
        let want = Extent::of_size(self.size());
        match size {
            Some(size) if size == self.size() => Ok(()),
            Some(size) => Err(LbmError::Shape(format!(
                "a {} lattice cannot be cut as the {want} lattice of the specification",
                Extent::of_size(size)
            ))),
            None => Err(LbmError::Shape(format!(
                "the first process holds no lattice to cut as the {want} lattice of the \
                 specification"
            ))),
        }
    }

    /// The global lattice at rest on the host, run in `scheme` (gathered slabs are assembled
    /// in a two-copy one).
    pub fn lattice<L: Layout, T: Real>(
        &self,
        scheme: Scheme,
    ) -> Result<Lattice<M, L, T>, LbmError> {
        Lattice::with_size(self.size(), self.params.clone(), scheme, &self.boundaries)
    }
}

/// One rank's slab on the host: its lattice and where it sits.
pub struct Slab<M: Model, L: Layout, T: Real> {
    lattice: Lattice<M, L, T>,
    x0: usize,
}

impl<M: Model, L: Layout, T: Real> Slab<M, L, T> {
    /// Rank `rank`'s slab of the global lattice `g` cut by `dec`, at rest. Validates the
    /// global lattice first (size, parameters, boundaries), so every rank fails alike.
    pub fn new(
        g: &GlobalSpec<M>,
        dec: &Blocks,
        rank: usize,
        scheme: Scheme,
    ) -> Result<Self, DomainError> {
        let xs = dec.range(rank, 0);
        g.validate(L::KIND)?;
        Ok(Self::cut(g, xs, scheme)?)
    }

    /// The slab of the global columns `xs` of `g`, at rest, its boundaries compiled for those
    /// columns alone (a rank's slab, or a part of it: [`crate::hetero::SplitSlab`]).
    pub(crate) fn cut(
        g: &GlobalSpec<M>,
        xs: Range<usize>,
        scheme: Scheme,
    ) -> Result<Self, LbmError> {
        let mut lattice = Lattice::with_size(
            [xs.len(), g.ly, g.lz],
            g.params.clone(),
            scheme,
            &BoundarySpec::periodic(),
        )?;
        let bc = g.slab_boundaries(xs.clone(), &L::cluster_lane)?;
        bc.runs_on(scheme)?;
        lattice.replace_boundaries(bc);
        Ok(Self {
            lattice,
            x0: xs.start,
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

    /// Sets every site to the equilibrium of `moments(x, y)`, `x` a *global* column (as is
    /// the column of a refusal).
    pub fn set_equilibrium<F>(&mut self, moments: F) -> Result<(), LbmError>
    where
        F: Fn(usize, usize) -> Vec<f64> + Sync,
    {
        let x0 = self.x0;
        self.lattice
            .set_equilibrium(|x, y| moments(x + x0, y))
            .map_err(|e| e.shifted(x0))
    }

    /// Updates the bulk columns (those that read and write no halo).
    pub fn update_bulk(&mut self) {
        let d = self.lattice.dims();
        self.update_columns(bulk_columns(d.lx, d.halo));
    }

    /// Updates the site columns `cols` (a part of the bulk, or of the borders once the halos
    /// arrived), without ending the step.
    pub fn update_columns(&mut self, cols: Range<usize>) {
        self.lattice.update_columns(cols);
    }

    /// Updates the border columns (after the halos arrived) and ends the step.
    pub fn update_borders_and_finish(&mut self) {
        let d = self.lattice.dims();
        for cols in border_columns(d.lx, d.halo) {
            self.lattice.update_columns(cols);
        }
        self.lattice.finish_step();
    }

    /// Writes the neighbour's border columns, laid out as [`Lattice::read_columns`]' values, into
    /// the halo on `side` ([`LEFT`] or [`RIGHT`]).
    pub(crate) fn set_halo(&mut self, side: usize, values: &[T]) {
        let (w, h) = (self.lattice.dims().lx, M::HALO);
        let first = if side == LEFT { 0 } else { w + h };
        self.lattice.write_columns(first, values);
    }

    /// The slab's lattice, mutable (halos written by the ring).
    pub(crate) fn lattice_mut(&mut self) -> &mut Lattice<M, L, T> {
        &mut self.lattice
    }

    /// Sets the step counter (a slab cut from a lattice restored from a checkpoint).
    pub(crate) fn set_steps_done(&mut self, step: u64) {
        self.lattice.set_steps_done(step);
    }

    /// The post-collision populations of every site of the slab, `[(x·LY + y)·Q + i]`.
    pub fn export(&self) -> Vec<T> {
        export_columns(&self.lattice, 0..self.lattice.dims().lx).expect("the slab's own columns")
    }

    /// Sets the slab's populations from values laid out as [`Slab::export`]'s (a slab cut
    /// from a global lattice with [`export_columns`]: resuming on another number of ranks).
    /// The slab is left in the even AA state, which holds every population on the slab.
    pub fn import(&mut self, values: &[T]) -> Result<(), LbmError> {
        let d = self.lattice.dims();
        check_values(values.len(), d.sites() * M::Q, "slab populations")?;
        self.lattice.set_even();
        import_slab(&mut self.lattice, 0, values)
    }
}

/// The populations the neighbours pushed across the cuts in an AA pull half-step, as
/// `(site column, row, population, value)` of a slab of shape `d` with boundaries `bc`:
/// `from[LEFT]` is the left neighbour's right halo (this slab's columns `c < H`, where the
/// populations with `c_x < −c` arrived), `from[RIGHT]` the right neighbour's left halo
/// (columns `w − H + c`, populations with `c_x > H − 1 − c`); both in logical order
/// `[(c·LY + y)·Q + i]`. The other values of those halos are stale copies and are skipped, as
/// is population `p` of a site whose link `p̄` is bounced: the wall sent nothing across, the
/// site redirected its own population there (the masks are symmetric, [`crate::boundary`]).
pub(crate) fn folded<'a, M: Model, L: Layout, T: Real>(
    d: &'a Dims,
    bc: &'a Boundaries<T>,
    from: [&'a [T]; 2],
) -> impl Iterator<Item = (usize, usize, usize, T)> + 'a {
    let (h, ly) = (M::HALO, d.plane());
    let crossed = move |side: usize, c: usize, p: usize| {
        let cx = M::VELOCITIES[p][0] as isize;
        if side == LEFT {
            cx < -(c as isize)
        } else {
            cx > (h - 1 - c) as isize
        }
    };
    let redirected = move |x: usize, y: usize, p: usize| {
        bc.site::<L>(d, x, y)
            .is_some_and(|s| s.bounced(M::OPPOSITE[p]))
    };
    [LEFT, RIGHT].into_iter().flat_map(move |side| {
        from[side].iter().enumerate().filter_map(move |(k, &v)| {
            let (c, y, p) = (k / (ly * M::Q), k / M::Q % ly, k % M::Q);
            let x = if side == LEFT { c } else { d.lx - h + c };
            (crossed(side, c, p) && !redirected(x, y, p)).then_some((x, y, p, v))
        })
    })
}

#[cfg(test)]
#[path = "domain_tests.rs"]
mod tests;
