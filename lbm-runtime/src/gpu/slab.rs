//! [`GpuSlab`]: a rank's block of the lattice run on a GPU. The block is an ordinary
//! [`GpuLattice`] `w` columns wide whose x-halos are not filled periodically on the device
//! but from the host, with the neighbours' border columns the ring exchanged; its border
//! columns are read back for the neighbours after each step (Calore et al. 2016 §4: the halo
//! columns pass through the host). A block cut along y or z stores ghost lines there as the
//! host's does ([`Frame`]): its border lines are read back and the neighbours' written into
//! its ghost lines before the step, through plans of where those boxes lie in the device's
//! copies ([`SiteBoxes`]). A step is two submissions (Calore et al. 2019 §6, the exchange
//! overlapped with the bulk): the bulk columns `[H, w − H)`, which read no halo, are submitted
//! as soon as the ring has posted its messages ([`SlabBackend::update_bulk`]) and run on the
//! device while the halos travel; the border columns once the halos are in
//! ([`SlabBackend::update_borders_and_finish`]). A slab narrower than `2H` is submitted whole
//! with its halos. In place (AA), the pull half-step's halos are read back for the neighbours,
//! and what they pushed is written into the halo columns and moved into the border columns on
//! the device ([`SlabBackend::fold`], the fold of a periodic lattice fed with the neighbours'
//! halos); along y and z the border lines are read back, folded on the host
//! ([`crate::domain::folded`]) and written again.

use std::ops::Range;
use std::sync::{Arc, Mutex, PoisonError};

use super::shader::Window;
use super::{GpuContext, GpuLattice, SiteBoxes};
use crate::blocks::Blocks;
use crate::domain::{folded, Folded, Frame, GlobalSpec, BORDERS, HALOS};
use crate::error::check_values;
use crate::slab_backend::SlabBackend;
use crate::solver::Placement;
use crate::{Block, Error, LayoutKind, Model, Real, Scheme};

/// A rank's slab on a GPU (see the module documentation).
pub struct GpuSlab<M: Model, T: Real> {
    lattice: GpuLattice<M, T>,
    /// Where the block lies in the global lattice and which lines it stores.
    frame: Frame,
    /// Along each axis the block exchanges (x always; y and z where it is cut), its border
    /// layers and its ghost layers, below and above ([`Frame::boxes`]): along x the storage
    /// columns `[H, 2H)`, `[w, w + H)` and the halo columns `[0, H)`, `[w + H, w + 2H)`.
    faces: [Option<[SiteBoxes; 2]>; 3],
    /// Each halo column box alone: where a fold along x writes what a neighbour pushed.
    halo_sides: [SiteBoxes; 2],
    /// What the last AA pull half-step pushed into the halos ([`SlabBackend::pushed`]): the
    /// odd state keeps it there (the border sites' populations that crossed the cuts), so a
    /// fold, which passes the neighbours' pushes through the halo columns, puts it back.
    /// Whether a copy waits there; its memory is kept from step to step.
    own_pushed: Mutex<(bool, [Vec<T>; 2])>,
    /// The border lines a fold along y or z reads back and writes again, kept.
    folding: [Vec<T>; 2],
    /// The bulk of the step under way is submitted.
    bulk_submitted: bool,
}

impl<M: Model, T: Real> GpuSlab<M, T> {
    /// Rank `rank`'s block of the global lattice `spec` cut by `dec`, at rest, on the device
    /// of `ctx`, in `layout`, run in `scheme`. Validates the global lattice first (size,
    /// parameters, boundaries), so every rank fails alike.
    pub fn new(
        ctx: &Arc<GpuContext>,
        layout: LayoutKind,
        spec: &GlobalSpec<M>,
        dec: &Blocks,
        rank: usize,
        scheme: Scheme,
    ) -> Result<Self, Error> {
        spec.validate(layout)?;
        Self::block(ctx, layout, spec, &dec.block(rank), scheme)
    }

    /// The block `block` of `spec`, at rest on the device of `ctx`, its boundaries compiled
    /// for its sites and ghost lines alone (as a host's block, [`crate::domain::Slab`]; a
    /// rank's, or the bulk of a [`crate::hetero::SplitSlab`]).
    pub(crate) fn block(
        ctx: &Arc<GpuContext>,
        layout: LayoutKind,
        spec: &GlobalSpec<M>,
        block: &[Range<usize>; 3],
        scheme: Scheme,
    ) -> Result<Self, Error> {
        let frame = Frame::of::<M>(spec.size(), block, layout.vl());
        let (w, h) = (frame.owned[0], M::HALO);
        let lattice = GpuLattice::with_boundaries(
            ctx,
            layout,
            [w, frame.stored[1], frame.stored[2]],
            spec.params.clone(),
            scheme,
            true,
            |_, lay| {
                let lanes = |d: &_, y| lay.cluster_lane(d, y);
                spec.slab_boundaries(block[0].clone(), &frame, &lanes)
            },
        )?;
        let halo_sides = [
            lattice.column_blocks(std::slice::from_ref(&(0..h)))?,
            lattice.column_blocks(std::slice::from_ref(&(w + h..w + 2 * h)))?,
        ];
        let mut faces = [None, None, None];
        for axis in (0..3).filter(|&a| a == 0 || frame.ghosts[a] > 0) {
            let plan = |which| lattice.site_boxes(&frame.boxes::<M>(axis, which));
            faces[axis] = Some([plan(BORDERS)?, plan(HALOS)?]);
        }
        Ok(Self {
            lattice,
            frame,
            faces,
            halo_sides,
            own_pushed: Mutex::default(),
            folding: Default::default(),
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
        let all = self.lattice.local_populations()?;
        Ok(self.frame.own_from_stored(&all, M::Q))
    }

    /// The ghost lines take the nearest own sites' values until the next exchange.
    fn set_local_populations(&mut self, values: &[T]) -> Result<(), Error> {
        let f = self.frame;
        check_values(values.len(), f.owned[0] * f.plane() * M::Q, "populations")?;
        self.lattice
            .set_local_populations(&f.stored_from_own(values, M::Q))
    }

    fn local_solid(&self, s: usize) -> bool {
        self.frame.own_solid(&self.lattice, s)
    }

    fn set_local_field(&mut self, name: &str, values: &[f64]) -> Result<(), Error> {
        self.frame.set_own_field(&mut self.lattice, name, values)
    }

    fn local_fields(&self) -> Result<Option<Vec<Vec<f64>>>, Error> {
        self.frame.own_fields(&self.lattice)
    }

    fn placement(&self) -> Placement {
        self.lattice.placement()
    }

    fn describe(&self) -> String {
        Block::describe(&self.lattice)
    }
}

impl<M: Model, T: Real> SlabBackend for GpuSlab<M, T> {
    fn width(&self) -> usize {
        self.lattice.dims().lx
    }

    fn borders(&self, axis: usize, into: &mut [Vec<T>; 2]) -> Result<(), Error> {
        Ok((self.lattice).read_blocks_into(face(&self.faces, axis, BORDERS)?, into)?)
    }

    fn set_ghosts(&mut self, axis: usize, from: [&[T]; 2]) -> Result<(), Error> {
        let plan = face(&self.faces, axis, HALOS)?;
        let mut kept: [Vec<T>; 2] = Default::default();
        let from = match from {
            [below, above] if below.is_empty() || above.is_empty() => {
                self.lattice.read_blocks_into(plan, &mut kept)?;
                [0, 1].map(|k| {
                    if from[k].is_empty() {
                        &kept[k][..]
                    } else {
                        from[k]
                    }
                })
            }
            both => both,
        };
        Ok(self.lattice.write_blocks(plan, &from)?)
    }

    fn update_bulk(&mut self, parts: Range<usize>, _n: usize) -> Result<(), Error> {
        if parts.start == 0 && self.lattice.has_windows() && !self.bulk_submitted {
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

    fn pushes(&self) -> bool {
        self.lattice.scheme().pushed(self.lattice.is_odd())
    }

    /// Along x, a copy is kept: the fold that passes the neighbours' pushes through the halo
    /// columns puts it back.
    fn pushed(&self, axis: usize, into: &mut [Vec<T>; 2]) -> Result<(), Error> {
        (self.lattice).read_blocks_into(face(&self.faces, axis, HALOS)?, into)?;
        if axis == 0 {
            let mut own = self.own_pushed.lock().map_err(poisoned)?;
            own.0 = true;
            for (kept, pushed) in own.1.iter_mut().zip(into.iter()) {
                kept.clone_from(pushed);
            }
        }
        Ok(())
    }

    /// Along x on the device (`GpuLattice::fold_in`); along y and z the border lines read
    /// back, what the neighbours pushed across the cuts written into them (`domain::folded`),
    /// and written again.
    fn fold(&mut self, axis: usize, from: [&[T]; 2]) -> Result<(), Error> {
        if axis == 0 {
            self.lattice.fold_in(&self.halo_sides, from)?;
            let (waits, [left, right]) = self.own_pushed.get_mut().map_err(poisoned)?;
            if std::mem::take(waits) {
                let plan = face(&self.faces, 0, HALOS)?;
                self.lattice.write_blocks(plan, &[left, right])?;
            }
            return Ok(());
        }
        let plan = face(&self.faces, axis, BORDERS)?;
        let mut border = std::mem::take(&mut self.folding);
        self.lattice.read_blocks_into(plan, &mut border)?;
        let d = self.lattice.dims();
        let lay = self.lattice.affine_layout();
        let lanes = |d: &_, y| lay.cluster_lane(d, y);
        let into = self.frame.boxes::<M>(axis, BORDERS);
        for Folded {
            side, site, p, v, ..
        } in folded::<M, T>((&d, self.lattice.boundaries(), &lanes), axis, into, from)
        {
            border[side][site * M::Q + p] = v;
        }
        let [below, above] = &border;
        self.lattice.write_blocks(plan, &[below, above])?;
        self.folding = border;
        Ok(())
    }

    /// On the device, as a whole lattice's step does.
    fn wrap_x(&mut self, fold: bool, _: &mut [Vec<T>; 2]) -> Result<(), Error> {
        self.lattice.wrap_x(fold);
        Ok(())
    }

    fn steps_alone(&mut self, n: u64) -> Result<bool, Error> {
        self.lattice.steps(n);
        Ok(true)
    }

    /// Computed on the device over the block's own lines.
    fn own_moments(&mut self, cols: Range<usize>) -> Result<Vec<Vec<f64>>, Error> {
        let f = &self.frame;
        let plane: Vec<usize> = (0..f.plane()).map(|s| f.stored_site(s)).collect();
        Ok(self.lattice.moment_fields_at(cols, &plane)?)
    }

    fn finish(&self) -> Result<(), Error> {
        Ok(self.lattice.finish()?)
    }

    /// The sites' `y` and `z` are global: they are mapped onto the block's stored lines.
    fn exchanged(&mut self, sites: &[[usize; 3]]) -> Result<Vec<T>, Error> {
        let f = &self.frame;
        let local: Vec<[usize; 3]> = (sites.iter())
            .map(|&[x, y, z]| {
                let [y, z] = f.stored_line([y, z]);
                [x, y, z]
            })
            .collect();
        Ok(self.lattice.exchanged(&local)?)
    }

    /// A ghost takes the global site's equilibrium.
    fn set_equilibrium_at(
        &mut self,
        x0: usize,
        moments: &(dyn Fn(usize, usize) -> Vec<f64> + Sync),
    ) -> Result<(), Error> {
        let f = self.frame;
        let set = (self.lattice).set_equilibrium(|x, s| moments(x0 + x, f.global_site(s)));
        set.map_err(|e| globally(e.into(), x0, &f))
    }

    /// The block's own sites; a site of a refusal has its global plane site.
    fn check(&self) -> Result<(), Error> {
        let f = self.frame;
        let own = |s: usize| f.own_site(s).is_some();
        let checked = self.lattice.check_where(&own);
        checked.map_err(|e| globally(e.into(), 0, &f))
    }
}

/// A block's error at its site `(x, s)` (`s` a stored plane site) told at the global site
/// `(x0 + x, global s)`.
fn globally(e: Error, x0: usize, f: &Frame) -> Error {
    match e.as_lattice() {
        Some(l) => Error::from(l.clone().shifted(x0, |s| f.global_site(s))),
        None => e,
    }
}

/// The error of a block's buffer that a thread panicked holding (a GPU block's, a split
/// block's).
pub(crate) fn poisoned<G>(e: PoisonError<G>) -> Error {
    Error::from(super::GpuError::Device(e.to_string()))
}

/// The plans `faces` of a block's border (`BORDERS`) or ghost (`HALOS`) layers along `axis`.
fn face(
    faces: &[Option<[SiteBoxes; 2]>; 3],
    axis: usize,
    which: usize,
) -> Result<&SiteBoxes, Error> {
    match &faces[axis] {
        Some(plans) => Ok(&plans[which]),
        None => Err(crate::LbmError::Shape(format!(
            "the block is not cut along {}: it has no ghost lines there",
            ["x", "y", "z"][axis]
        ))
        .into()),
    }
}
