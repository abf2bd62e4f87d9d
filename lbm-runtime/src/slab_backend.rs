//! [`SlabBackend`]: what one rank of the ring runs its slab on — the host ([`Slab`]), a GPU
//! (`crate::gpu::GpuSlab`), both (`crate::hetero::SplitSlab`) — so that the ring
//! ([`crate::distributed::DistLattice`], over any group of processes) is written once for every
//! rank-local backend.
//!
//! # One step of a rank (Calore et al. 2016, Fig. 5; Calore et al. 2019, Fig. 7)
//! ```text
//! if needs_halos():         (every two-copy step; the AA pull half-step)
//!   along z, y (if cut):    borders(axis) to the neighbours, set_ghosts(axis, theirs)
//!   along x:                borders(0), post the exchange (alone along x: wrap_x)
//! update_bulk(parts, n)     parts of 0..n: the work that reads no halo column, while the
//!                           messages along x travel (the host's bulk columns; a device
//!                           submits its step here when it needs no halo from the ring)
//! wait, set_ghosts(0, …)    the neighbours' borders into the halo columns
//! update_borders_and_finish the rest of the step; the new state becomes the current one
//! if pushes():              (after an AA pull half-step, see `crate::domain`)
//!   along x, y, z (if cut): pushed(axis) to the neighbours, fold(axis, theirs) into the
//!                           border layers (alone along x: wrap_x)
//! ```
//! A lattice of one block exchanges nothing and steps its own way (`steps_alone`).
//! One exchange serves every face: the ghost layers along an axis are boxes of the block's
//! storage (`Frame::boxes`, [`crate::domain::Frame`]) that travel in logical order, so the ranks'
//! layouts and backends need not agree on storage order.

use std::ops::Range;

use crate::domain::{bulk_columns, split_columns, Slab, BORDERS, HALOS};
use crate::solver::Placement;
use crate::{Block, Error, Layout, Model, Real, Scheme};

/// A rank's slab on some backend (see the module documentation): a [`Block`] whose sites are
/// the slab's (`x` local) and which updates them in the phases of a step of the ring.
pub trait SlabBackend: Block + Send {
    /// The slab's width in site columns.
    fn width(&self) -> usize;

    /// The block's border layers along `axis`, below and above, for the neighbours' ghost
    /// layers: along x the `H` border columns (whole stored planes), along y or z — an axis
    /// the block is cut along — its `H` border lines over its own columns and every stored line
    /// across (the ghost lines of the axes exchanged before included); in logical order,
    /// `[((c·nz + z)·ny + y)·Q + i]` from the box's corner, into `into` (its memory reused:
    /// [`crate::group::Halo`]; waits for the step in flight).
    fn borders(&self, axis: usize, into: &mut [Vec<Self::Real>; 2]) -> Result<(), Error>;

    /// Stores the neighbours' borders along `axis` ([`SlabBackend::borders`]: the one below's
    /// upper, the one above's lower) into the ghost layers below and above; a side given no
    /// values is left as it is (a part of a split slab next to its sibling).
    fn set_ghosts(&mut self, axis: usize, from: [&[Self::Real]; 2]) -> Result<(), Error>;

    /// The parts `parts` of `n` of the work that reads no halo column, in one sweep.
    fn update_bulk(&mut self, parts: Range<usize>, n: usize) -> Result<(), Error>;

    /// The rest of the step, the halos being in place; ends the step.
    fn update_borders_and_finish(&mut self) -> Result<(), Error>;

    /// Whether the next step pulls from the halo columns (which must then hold the
    /// neighbours' borders): every two-copy step, and the AA pull half-step.
    fn needs_halos(&self) -> bool;

    /// Whether the step just made was an AA pull half-step: it pushed the populations that
    /// cross the cuts into the ghost layers, which [`SlabBackend::pushed`] and
    /// [`SlabBackend::fold`] then hand to the neighbours.
    fn pushes(&self) -> bool;

    /// After an AA pull half-step, the ghost layers along `axis` below and above, in the order
    /// of [`SlabBackend::borders`], into `into`: they hold the populations pushed across the
    /// cuts, for the neighbours.
    fn pushed(&self, axis: usize, into: &mut [Vec<Self::Real>; 2]) -> Result<(), Error>;

    /// Writes the populations the neighbours along `axis` pushed across the cuts (their
    /// [`SlabBackend::pushed`] layers: the one below's upper, the one above's lower) into the
    /// border layers (`folded`); a side given no values writes nothing there.
    fn fold(&mut self, axis: usize, from: [&[Self::Real]; 2]) -> Result<(), Error>;

    /// Along x where the block is alone (one block across the lattice: its own neighbour
    /// there), what the exchange would do with itself, done where the block lies: its halo
    /// columns filled from its own opposite borders (`fold` false, in place of
    /// [`SlabBackend::borders`] and [`SlabBackend::set_ghosts`]), or what an AA pull half-step
    /// pushed into them folded into the opposite borders (`fold` true, in place of
    /// [`SlabBackend::pushed`] and [`SlabBackend::fold`]). A lattice walled in x reads no
    /// halo: a block that wraps itself leaves them. By default the block's borders pass
    /// through `buffers`, read and written back as its neighbours' (a split block, whose
    /// outer parts hold its x borders and halos); the host's and a GPU's block wrap
    /// themselves (on the device: nothing read back).
    fn wrap_x(&mut self, fold: bool, buffers: &mut [Vec<Self::Real>; 2]) -> Result<(), Error> {
        wrap_through(self, fold, buffers)
    }

    /// `n` steps of a block alone along every axis (the lattice's one block), nothing to
    /// exchange; whether it took them. The host's and a GPU's block step as a whole lattice
    /// does ([`crate::Lattice::steps`], two at a time where that is faster;
    /// [`crate::gpu::GpuLattice::steps`], many to a submission); by default a block leaves
    /// them to the ring's steps (`false`: a split block, whose parts trade every step).
    fn steps_alone(&mut self, n: u64) -> Result<bool, Error> {
        let _ = n;
        Ok(false)
    }

    /// The moments of the slab's own sites in its columns `cols` ([`crate::Solver::with_moments`]),
    /// computed where they lie, its halos and ghost lines holding the neighbours' values (the
    /// ring exchanges them first).
    fn own_moments(&mut self, cols: std::ops::Range<usize>) -> Result<Vec<Vec<f64>>, Error>;

    /// Waits for the work in flight (a device's step).
    fn finish(&self) -> Result<(), Error> {
        Ok(())
    }

    /// Sets every site of the slab — its first global column `x0` — to the equilibrium of
    /// `moments(x, s)` (`x` global, `s` the global plane site), with each site's own fields.
    fn set_equilibrium_at(
        &mut self,
        x0: usize,
        moments: &(dyn Fn(usize, usize) -> Vec<f64> + Sync),
    ) -> Result<(), Error>;

    /// [`crate::Solver::exchanged`] of the slab's sites `sites` (`[x, y, z]`, `x` local), its
    /// halos holding the neighbours' borders; backends that cannot read them refuse.
    fn exchanged(&mut self, sites: &[[usize; 3]]) -> Result<Vec<Self::Real>, Error> {
        let _ = sites;
        Err(crate::solver::cannot_exchange::<Self::Model>(&self.describe()).into())
    }

    /// The divergence check of the slab's sites (site columns local: the ring adds `x0`).
    fn check(&self) -> Result<(), Error>;
}

/// [`SlabBackend::wrap_x`] through `buffers`: the block's x borders (or what it pushed) read
/// into them and given back to it as its neighbours', the lower to the upper side.
pub(crate) fn wrap_through<S: SlabBackend + ?Sized>(
    slab: &mut S,
    fold: bool,
    buffers: &mut [Vec<S::Real>; 2],
) -> Result<(), Error> {
    if fold {
        slab.pushed(0, buffers)?;
    } else {
        slab.borders(0, buffers)?;
    }
    let [lower, upper] = buffers;
    let from = [&upper[..], &lower[..]];
    if fold {
        slab.fold(0, from)
    } else {
        slab.set_ghosts(0, from)
    }
}

impl<M: Model, L: Layout, T: Real> Block for Slab<M, L, T> {
    type Model = M;
    type Real = T;

    fn params(&self) -> &M::Params {
        self.lattice().params()
    }

    fn scheme(&self) -> Scheme {
        self.lattice().scheme()
    }

    fn layout_name(&self) -> &'static str {
        L::NAME
    }

    fn steps_done(&self) -> u64 {
        self.lattice().steps_done()
    }

    fn set_steps_done(&mut self, step: u64) {
        Slab::set_steps_done(self, step);
    }

    fn local_populations(&self) -> Result<Vec<T>, Error> {
        Ok(self.export())
    }

    fn set_local_populations(&mut self, values: &[T]) -> Result<(), Error> {
        Ok(self.import(values)?)
    }

    fn local_solid(&self, s: usize) -> bool {
        self.frame().own_solid(self.lattice(), s)
    }

    fn set_local_field(&mut self, name: &str, values: &[f64]) -> Result<(), Error> {
        let f = *self.frame();
        f.set_own_field(self.lattice_mut(), name, values)
    }

    fn local_fields(&self) -> Result<Option<Vec<Vec<f64>>>, Error> {
        self.frame().own_fields(self.lattice())
    }

    fn placement(&self) -> Placement {
        Placement::Host
    }

    fn describe(&self) -> String {
        Block::describe(self.lattice())
    }
}

impl<M: Model, L: Layout, T: Real> SlabBackend for Slab<M, L, T> {
    fn width(&self) -> usize {
        self.lattice().dims().lx
    }

    fn borders(&self, axis: usize, into: &mut [Vec<T>; 2]) -> Result<(), Error> {
        self.read_boxes(axis, BORDERS, into);
        Ok(())
    }

    fn set_ghosts(&mut self, axis: usize, from: [&[T]; 2]) -> Result<(), Error> {
        for (b, values) in self.boxes(axis, HALOS).into_iter().zip(from) {
            if !values.is_empty() {
                self.lattice_mut().write_lines(b, values);
            }
        }
        Ok(())
    }

    fn update_bulk(&mut self, parts: Range<usize>, n: usize) -> Result<(), Error> {
        let bulk = bulk_columns(self.width(), M::HALO);
        let mut cols = split_columns(bulk, n).skip(parts.start).take(parts.len());
        if let Some(first) = cols.next() {
            let end = cols.last().map_or(first.end, |last| last.end);
            self.update_columns(first.start..end);
        }
        Ok(())
    }

    fn update_borders_and_finish(&mut self) -> Result<(), Error> {
        Slab::update_borders_and_finish(self);
        Ok(())
    }

    /// The sites' `y` and `z` are global: they are mapped onto the block's stored lines.
    fn exchanged(&mut self, sites: &[[usize; 3]]) -> Result<Vec<T>, Error> {
        let f = self.frame();
        let local: Vec<[usize; 3]> = (sites.iter())
            .map(|&[x, y, z]| {
                let [y, z] = f.stored_line([y, z]);
                [x, y, z]
            })
            .collect();
        Ok(self.lattice().exchanged(&local)?)
    }

    fn needs_halos(&self) -> bool {
        let lat = self.lattice();
        lat.scheme().pulls(lat.is_odd())
    }

    fn pushes(&self) -> bool {
        let lat = self.lattice();
        lat.scheme().pushed(lat.is_odd())
    }

    fn pushed(&self, axis: usize, into: &mut [Vec<T>; 2]) -> Result<(), Error> {
        self.read_boxes(axis, HALOS, into);
        Ok(())
    }

    fn fold(&mut self, axis: usize, from: [&[T]; 2]) -> Result<(), Error> {
        self.fold_along(axis, from);
        Ok(())
    }

    /// In place, as a whole lattice's step does.
    fn wrap_x(&mut self, fold: bool, _: &mut [Vec<T>; 2]) -> Result<(), Error> {
        self.lattice_mut().wrap_x(fold);
        Ok(())
    }

    fn steps_alone(&mut self, n: u64) -> Result<bool, Error> {
        self.lattice_mut().steps(n);
        Ok(true)
    }

    fn own_moments(&mut self, cols: std::ops::Range<usize>) -> Result<Vec<Vec<f64>>, Error> {
        Ok(Slab::own_moments(self, cols))
    }

    /// In place, site by site.
    fn set_equilibrium_at(
        &mut self,
        _: usize,
        moments: &(dyn Fn(usize, usize) -> Vec<f64> + Sync),
    ) -> Result<(), Error> {
        Ok(self.set_equilibrium(moments)?)
    }

    /// The block's own sites; a site of a refusal has its global plane site.
    fn check(&self) -> Result<(), Error> {
        let f = *self.frame();
        let own = |s: usize| f.own_site(s).is_some();
        Ok((self.lattice().check_where(&own)).map_err(|e| e.shifted(0, |s| f.global_site(s)))?)
    }
}
