//! [`GpuSlab`]: a rank's slab of the ring run on a GPU. The slab is an ordinary
//! [`GpuLattice`] `w` columns wide whose x-halos are not filled periodically on the device
//! but from the host, with the neighbours' border columns the ring exchanged; its border
//! columns are read back for the neighbours after each step (Calore et al. 2016 §4: the halo columns
//! pass through the host). A step is two submissions (Calore et al. 2019 §6, the exchange overlapped
//! with the bulk): the bulk columns `[H, w − H)`, which read no halo, are submitted as soon
//! as the ring has posted its messages ([`SlabBackend::update_bulk`]) and run on the device
//! while the halos travel; the border columns once the halos are in
//! ([`SlabBackend::update_borders_and_finish`]). A slab narrower than `2H` is submitted
//! whole with its halos. In place (AA), the pull half-step's halos are read back for the
//! neighbours, and what they pushed is written into the halo columns and moved into the border
//! columns on the device ([`SlabBackend::fold`], the fold of a periodic lattice fed with the
//! neighbours' halos).

use std::ops::Range;
use std::sync::{Arc, Mutex, PoisonError};

use super::shader::Window;
use super::{ColumnBlocks, GpuContext, GpuLattice};
use crate::blocks::Blocks;
use crate::domain::{Frame, GlobalSpec, LEFT, RIGHT};
use crate::slab_backend::SlabBackend;
use crate::solver::Placement;
use crate::{Block, Error, LayoutKind, Model, Real, Scheme};

/// A rank's slab on a GPU (see the module documentation).
pub struct GpuSlab<M: Model, T: Real> {
    lattice: GpuLattice<M, T>,
    /// The storage columns of the two borders, `[H, 2H)` and `[w, w + H)`.
    borders: ColumnBlocks,
    /// The storage columns of the two halos, `[0, H)` and `[w + H, w + 2H)`.
    halos: ColumnBlocks,
    /// Each halo alone: where a fold writes what a neighbour pushed.
    halo_sides: [ColumnBlocks; 2],
    /// What the last AA pull half-step pushed into the halos ([`SlabBackend::pushed`]): the
    /// odd state keeps it there (the border sites' populations that crossed the cuts), so a
    /// fold, which passes the neighbours' pushes through the halo columns, puts it back.
    own_pushed: Mutex<Option<[Vec<T>; 2]>>,
    /// The bulk of the step under way is submitted.
    bulk_submitted: bool,
}

impl<M: Model, T: Real> GpuSlab<M, T> {
    /// Rank `rank`'s slab of the global lattice `spec` cut by `dec`, at rest, on the device of
    /// `ctx`, in `layout`, run in `scheme`. Validates the global lattice first (size, parameters,
    /// boundaries), so every rank fails alike.
    pub fn new(
        ctx: &Arc<GpuContext>,
        layout: LayoutKind,
        spec: &GlobalSpec<M>,
        dec: &Blocks,
        rank: usize,
        scheme: Scheme,
    ) -> Result<Self, Error> {
        spec.validate(layout)?;
        Self::cut(ctx, layout, spec, dec.range(rank, 0), scheme)
    }

    /// The slab of the global columns `xs` of `spec`, its boundaries compiled for those
    /// columns alone, at rest on the device of `ctx` (a rank's slab, or the bulk of a
    /// [`crate::hetero::SplitSlab`]).
    pub(crate) fn cut(
        ctx: &Arc<GpuContext>,
        layout: LayoutKind,
        spec: &GlobalSpec<M>,
        xs: Range<usize>,
        scheme: Scheme,
    ) -> Result<Self, Error> {
        let (w, h) = (xs.len(), M::HALO);
        let lattice = GpuLattice::with_boundaries(
            ctx,
            layout,
            [w, spec.ly, spec.lz],
            spec.params.clone(),
            scheme,
            true,
            |_, lay| {
                let planes = Frame::of::<M>(spec.size(), &spec.dims().planes(xs.clone()), 1);
                spec.slab_boundaries(xs.clone(), &planes, &|d, y| lay.cluster_lane(d, y))
            },
        )?;
        let borders = lattice.column_blocks(&[h..2 * h, w..w + h])?;
        let halos = lattice.column_blocks(&[0..h, w + h..w + 2 * h])?;
        let halo_sides = [
            lattice.column_blocks(std::slice::from_ref(&(0..h)))?,
            lattice.column_blocks(std::slice::from_ref(&(w + h..w + 2 * h)))?,
        ];
        Ok(Self {
            lattice,
            borders,
            halos,
            halo_sides,
            own_pushed: Mutex::new(None),
            bulk_submitted: false,
        })
    }

    /// The slab's device lattice.
    pub fn lattice(&self) -> &GpuLattice<M, T> {
        &self.lattice
    }
}

impl<M: Model, T: Real> Block for GpuSlab<M, T> {
    type Model = M;
    type Real = T;

    fn params(&self) -> &M::Params {
        self.lattice.params()
    }

    fn scheme(&self) -> Scheme {
        self.lattice.scheme()
    }

    fn layout_name(&self) -> &'static str {
        self.lattice.layout_name()
    }

    fn steps_done(&self) -> u64 {
        self.lattice.steps_done()
    }

    fn set_steps_done(&mut self, step: u64) {
        self.lattice.set_steps_done(step);
    }

    fn local_populations(&self) -> Result<Vec<T>, Error> {
        self.lattice.local_populations()
    }

    fn set_local_populations(&mut self, values: &[T]) -> Result<(), Error> {
        self.lattice.set_local_populations(values)
    }

    fn local_solid(&self, s: usize) -> bool {
        self.lattice.local_solid(s)
    }

    fn set_local_field(&mut self, name: &str, values: &[f64]) -> Result<(), Error> {
        self.lattice.set_local_field(name, values)
    }

    fn local_fields(&self) -> Result<Option<Vec<Vec<f64>>>, Error> {
        self.lattice.local_fields()
    }

    fn placement(&self) -> Placement {
        self.lattice.placement()
    }

    fn describe(&self) -> String {
        format!("gpu {}", self.lattice.context().describe())
    }
}

impl<M: Model, T: Real> SlabBackend for GpuSlab<M, T> {
    fn width(&self) -> usize {
        self.lattice.dims().lx
    }

    fn borders(&self) -> Result<[Vec<T>; 2], Error> {
        let mut b = self.lattice.read_blocks(&self.borders)?;
        let right = b.pop().unwrap_or_default();
        let left = b.pop().unwrap_or_default();
        Ok([left, right])
    }

    fn set_halos(&mut self, halos: [&[T]; 2]) -> Result<(), Error> {
        Ok(self
            .lattice
            .write_blocks(&self.halos, &[halos[LEFT], halos[RIGHT]])?)
    }

    fn update_bulk(&mut self, k: usize, _n: usize) -> Result<(), Error> {
        if k == 0 && self.lattice.has_windows() && !self.bulk_submitted {
            self.lattice.submit_window(Window::Bulk);
            self.bulk_submitted = true;
        }
        Ok(())
    }

    fn update_borders_and_finish(&mut self) -> Result<(), Error> {
        if self.bulk_submitted {
            self.lattice.submit_window(Window::Border);
        } else {
            self.lattice.submit_window(Window::All);
        }
        self.bulk_submitted = false;
        self.lattice.end_step();
        Ok(())
    }

    fn needs_halos(&self) -> bool {
        self.lattice.scheme().pulls(self.lattice.is_odd())
    }

    fn pushed(&self) -> Result<Option<[Vec<T>; 2]>, Error> {
        if !self.lattice.scheme().pushed(self.lattice.is_odd()) {
            return Ok(None);
        }
        let mut h = self.lattice.read_blocks(&self.halos)?;
        let right = h.pop().unwrap_or_default();
        let left = h.pop().unwrap_or_default();
        *self.own_pushed.lock().map_err(poisoned)? = Some([left.clone(), right.clone()]);
        Ok(Some([left, right]))
    }

    fn fold(&mut self, from: [&[T]; 2]) -> Result<(), Error> {
        self.lattice.fold_in(&self.halo_sides, from)?;
        let own = self.own_pushed.get_mut().map_err(poisoned)?.take();
        if let Some([left, right]) = own {
            self.lattice.write_blocks(&self.halos, &[&left, &right])?;
        }
        Ok(())
    }

    fn finish(&self) -> Result<(), Error> {
        Ok(self.lattice.finish()?)
    }

    fn exchanged(&mut self, sites: &[[usize; 3]]) -> Result<Vec<T>, Error> {
        Ok(self.lattice.exchanged(sites)?)
    }

    fn set_equilibrium_at(
        &mut self,
        x0: usize,
        moments: &(dyn Fn(usize, usize) -> Vec<f64> + Sync),
    ) -> Result<(), Error> {
        let set = self.lattice.set_equilibrium(|x, s| moments(x0 + x, s));
        set.map_err(|e| Error::from(e).shifted(x0))
    }

    fn check(&self) -> Result<(), Error> {
        Ok(self.lattice.check()?)
    }
}

fn poisoned<G>(e: PoisonError<G>) -> Error {
    Error::from(super::GpuError::Device(e.to_string()))
}
