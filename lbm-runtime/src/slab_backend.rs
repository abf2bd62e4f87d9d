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
//! update_bulk(k, n)         k = 0..n: the work that reads no halo, while the halos travel
//!                           (the host's bulk columns; a device submits its step here when
//!                           it needs no halo from the ring)
//! wait, set_halos(…)        the neighbours' borders into the halo columns
//! update_borders_and_finish the rest of the step; the new state becomes the current one
//! if pushed() is Some:      (after an AA pull half-step, see `crate::domain`)
//!   exchange, fold(…)       what crossed the cuts, into the neighbours' border columns
//! ```
//! Border and halo columns travel in logical order, `[(c·LY + y)·Q + i]` for the `H` columns
//! `c` of a side, so the ranks' layouts and backends need not agree on storage order.

use crate::domain::{bulk_columns, export_columns, folded, split_columns, Slab, LEFT, RIGHT};
use crate::solver::{equilibria, Placement};
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

    /// Part `k` of `n` of the work that reads no halo column.
    fn update_bulk(&mut self, k: usize, n: usize) -> Result<(), Error>;

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

    /// Waits for the work in flight (a device's step).
    fn finish(&self) -> Result<(), Error> {
        Ok(())
    }

    /// The post-collision populations of the slab's columns `cols` alone, laid out as
    /// [`Block::local_populations`]' (by default a slice of them; a backend that can read part
    /// of its state in place does so).
    fn populations_of(&self, cols: std::ops::Range<usize>) -> Result<Vec<Self::Real>, Error> {
        let all = self.local_populations()?;
        let per_col = all.len() / self.width().max(1);
        Ok(all[cols.start * per_col..cols.end * per_col].to_vec())
    }

    /// Sets every site of the slab — its first global column `x0`, `ly` sites per plane
    /// (`LY·LZ`) — to the equilibrium of `moments(x, s)` (`x` global, `s` the plane site); by
    /// default built in one array and set with [`Block::set_local_populations`].
    fn set_equilibrium_at(
        &mut self,
        (x0, ly): (usize, usize),
        moments: &(dyn Fn(usize, usize) -> Vec<f64> + Sync),
    ) -> Result<(), Error> {
        let f = equilibria::<Self::Model, Self::Real>(
            x0..x0 + self.width(),
            ly,
            self.params(),
            moments,
        )?;
        self.set_local_populations(&f)
    }

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
        self.lattice().local_solid(s)
    }

    fn set_local_field(&mut self, name: &str, values: &[f64]) -> Result<(), Error> {
        self.lattice_mut().set_local_field(name, values)
    }

    fn local_fields(&self) -> Result<Option<Vec<Vec<f64>>>, Error> {
        self.lattice().local_fields()
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

    fn update_bulk(&mut self, k: usize, n: usize) -> Result<(), Error> {
        if let Some(cols) = split_columns(bulk_columns(self.width(), M::HALO), n).nth(k) {
            self.update_columns(cols);
        }
        Ok(())
    }

    fn update_borders_and_finish(&mut self) -> Result<(), Error> {
        Slab::update_borders_and_finish(self);
        Ok(())
    }

    fn exchanged(&mut self, sites: &[[usize; 3]]) -> Result<Vec<T>, Error> {
        Ok(self.lattice().exchanged(sites)?)
    }

    fn needs_halos(&self) -> bool {
        let lat = self.lattice();
        lat.scheme().pulls(lat.is_odd())
    }

    fn pushed(&self) -> Result<Option<[Vec<T>; 2]>, Error> {
        let (lat, w, h) = (self.lattice(), self.width(), M::HALO);
        Ok(lat
            .scheme()
            .pushed(lat.is_odd())
            .then(|| [lat.read_columns(0..h), lat.read_columns(w + h..w + 2 * h)]))
    }

    fn fold(&mut self, from: [&[T]; 2]) -> Result<(), Error> {
        let lat = self.lattice();
        let d = lat.dims();
        let writes: Vec<_> = folded::<M, L, T>(&d, lat.boundaries(), from).collect();
        let lat = self.lattice_mut();
        for (x, y, p, v) in writes {
            lat.set_stored_value(L::index(&d, p, d.col(x as isize), y), p, v);
        }
        Ok(())
    }

    fn populations_of(&self, cols: std::ops::Range<usize>) -> Result<Vec<T>, Error> {
        Ok(export_columns(self.lattice(), cols)?)
    }

    /// In place, site by site.
    fn set_equilibrium_at(
        &mut self,
        _: (usize, usize),
        moments: &(dyn Fn(usize, usize) -> Vec<f64> + Sync),
    ) -> Result<(), Error> {
        Ok(self.set_equilibrium(moments)?)
    }

    fn check(&self) -> Result<(), Error> {
        Ok(self.lattice().check()?)
    }
}
