//! [`SlabBackend`]: what one rank of the ring runs its slab on — the host ([`Slab`]), a GPU
//! (`crate::gpu::GpuSlab`), both (`crate::hetero::SplitSlab`) — so that the ring
//! ([`crate::distributed::DistLattice`], over any group of processes) is written once for every
//! rank-local backend.
//!
//! # One step of a rank (Calore et al. 2016, Fig. 5; Calore et al. 2019, Fig. 7)
//! ```text
//! if needs_halos():         (every two-copy step; the AA pull half-step)
//!   borders()               the H border columns on each side, for the neighbours
//!   post the halo exchange
//! update_bulk(parts, n)     parts of 0..n: the work that reads no halo, while the halos travel
//!                           (the host's bulk columns; a device submits its step here when
//!                           it needs no halo from the ring)
//! wait, set_halos(…)        the neighbours' borders into the halo columns
//! update_borders_and_finish the rest of the step; the new state becomes the current one
//! if pushed() is Some:      (after an AA pull half-step, see `crate::domain`)
//!   exchange, fold(…)       what crossed the cuts, into the neighbours' border columns
//! ```
//! Border and halo columns travel in logical order, `[(c·LY + y)·Q + i]` for the `H` columns
//! `c` of a side, so the ranks' layouts and backends need not agree on storage order.

use std::ops::Range;

use crate::domain::{bulk_columns, split_columns, Slab, LEFT, RIGHT};
use crate::solver::Placement;
use crate::{Block, Error, Layout, Model, Real, Scheme};

/// A rank's slab on some backend (see the module documentation): a [`Block`] whose sites are
/// the slab's (`x` local) and which updates them in the phases of a step of the ring.
pub trait SlabBackend: Block + Send {
    /// The slab's width in site columns.
    fn width(&self) -> usize;

    /// The `H` border columns on the left and on the right, in logical order (waits for the
    /// step in flight).
    fn borders(&self) -> Result<[Vec<Self::Real>; 2], Error>;

    /// Stores the neighbours' borders into the halo columns on the left and on the right.
    fn set_halos(&mut self, halos: [&[Self::Real]; 2]) -> Result<(), Error>;

    /// The parts `parts` of `n` of the work that reads no halo column, in one sweep.
    fn update_bulk(&mut self, parts: Range<usize>, n: usize) -> Result<(), Error>;

    /// The rest of the step, the halos being in place; ends the step.
    fn update_borders_and_finish(&mut self) -> Result<(), Error>;

    /// Whether the next step pulls from the halo columns (which must then hold the
    /// neighbours' borders): every two-copy step, and the AA pull half-step.
    fn needs_halos(&self) -> bool;

    /// After an AA pull half-step, the halo columns on the left and on the right in logical
    /// order: they hold the populations pushed across the cuts, for the neighbours; `None`
    /// after any other step.
    fn pushed(&self) -> Result<Option<[Vec<Self::Real>; 2]>, Error>;

    /// Writes the populations the neighbours pushed across the cuts (their
    /// [`SlabBackend::pushed`] halos: the left neighbour's right one, the right neighbour's
    /// left one) into the border columns (`folded`); an empty side writes nothing there.
    fn fold(&mut self, from: [&[Self::Real]; 2]) -> Result<(), Error>;

    /// A block cut along `axis` (1: y, 2: z): its border lines below and above, for the
    /// neighbours' ghost lines (`Slab::border_lines`), over its own columns and every stored
    /// line across, in the order of `Lattice::read_lines`.
    fn border_lines(&self, axis: usize) -> Result<[Vec<Self::Real>; 2], Error>;

    /// A block cut along `axis`: stores the neighbours' border lines into its ghost lines
    /// (`Slab::set_ghost_lines`); see [`SlabBackend::border_lines`].
    fn set_ghost_lines(&mut self, axis: usize, from: [&[Self::Real]; 2]) -> Result<(), Error>;

    /// A block cut along `axis`, after an AA pull half-step: its ghost lines below and above,
    /// which hold the populations pushed across the cuts, for the neighbours
    /// (`Slab::pushed_along`); see [`SlabBackend::border_lines`].
    fn pushed_lines(&self, axis: usize) -> Result<[Vec<Self::Real>; 2], Error>;

    /// A block cut along `axis`: writes what the neighbours pushed across the cuts into its
    /// border lines (`Slab::fold_along`); see [`SlabBackend::border_lines`].
    fn fold_lines(&mut self, axis: usize, from: [&[Self::Real]; 2]) -> Result<(), Error>;

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
        let f = self.frame();
        let (x, s) = (s / f.plane(), f.stored_site(s % f.plane()));
        self.lattice()
            .local_solid(x * f.stored[1] * f.stored[2] + s)
    }

    /// A ghost line takes the values of the nearest own line (`domain::Frame::stored_from_own`).
    fn set_local_field(&mut self, name: &str, values: &[f64]) -> Result<(), Error> {
        let f = *self.frame();
        if !f.has_ghosts() {
            return self.lattice_mut().set_local_field(name, values);
        }
        crate::lattice::checked_field::<M>(name, values, (f.owned[0], f.plane()))?;
        self.lattice_mut()
            .set_local_field(name, &f.stored_from_own(values, 1))
    }

    fn local_fields(&self) -> Result<Option<Vec<Vec<f64>>>, Error> {
        let f = *self.frame();
        let all = self.lattice().local_fields()?;
        Ok(all.map(|fields| fields.iter().map(|v| f.own_from_stored(v, 1)).collect()))
    }

    fn placement(&self) -> Placement {
        Placement::Host
    }

    fn describe(&self) -> String {
        format!("cpu × {} threads", rayon::current_num_threads())
    }
}

impl<M: Model, L: Layout, T: Real> SlabBackend for Slab<M, L, T> {
    fn width(&self) -> usize {
        self.lattice().dims().lx
    }

    fn borders(&self) -> Result<[Vec<T>; 2], Error> {
        let (lat, w, h) = (self.lattice(), self.width(), M::HALO);
        Ok([lat.read_columns(h..2 * h), lat.read_columns(w..w + h)])
    }

    fn set_halos(&mut self, halos: [&[T]; 2]) -> Result<(), Error> {
        self.set_halo(LEFT, halos[LEFT]);
        self.set_halo(RIGHT, halos[RIGHT]);
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

    fn border_lines(&self, axis: usize) -> Result<[Vec<T>; 2], Error> {
        Ok(Slab::border_lines(self, axis))
    }

    fn set_ghost_lines(&mut self, axis: usize, from: [&[T]; 2]) -> Result<(), Error> {
        Slab::set_ghost_lines(self, axis, from);
        Ok(())
    }

    fn needs_halos(&self) -> bool {
        let lat = self.lattice();
        lat.scheme().pulls(lat.is_odd())
    }

    fn pushed(&self) -> Result<Option<[Vec<T>; 2]>, Error> {
        let lat = self.lattice();
        Ok((lat.scheme().pushed(lat.is_odd())).then(|| self.pushed_along(0)))
    }

    fn fold(&mut self, from: [&[T]; 2]) -> Result<(), Error> {
        self.fold_along(0, from);
        Ok(())
    }

    fn pushed_lines(&self, axis: usize) -> Result<[Vec<T>; 2], Error> {
        Ok(self.pushed_along(axis))
    }

    fn fold_lines(&mut self, axis: usize, from: [&[T]; 2]) -> Result<(), Error> {
        self.fold_along(axis, from);
        Ok(())
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
