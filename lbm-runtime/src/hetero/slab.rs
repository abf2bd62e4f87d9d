//! [`SplitSlab`]: a rank's slab of the ring split between its host and its device (Calore et
//! al. 2019, Fig. 6–7, the production system: every rank runs its slab on its CPU and its GPU at once).
//!
//! The slab's `W` columns are cut into three parts, each an ordinary rank-local slab
//! ([`SlabBackend`]): a left border `[0, M)` on the host ([`Slab`]), the bulk `[M, W − M)` on
//! the device ([`GpuSlab`]) and a right border `[W − M, W)` on the host. The parts form a
//! chain: the inner halos (between host and device) are copied between the parts on this
//! rank, the outer ones come from the ring's neighbours. `M = 0` is the device alone and
//! `2M = W` the host alone (one part); between them each part must be at least a halo wide,
//! `M ≥ H` and `W − 2M ≥ H` ([`admissible`]), so that it fills its siblings' halos from its
//! own columns. A rank's block cut along y or z too is split the same way along x: each part
//! is a block of its columns with the block's ghost lines ([`crate::domain::Frame`]), and the
//! block's border and ghost lines along y and z are its parts' side by side, exchanged part by
//! part ([`SlabBackend::borders`]).
//!
//! # One step (Calore et al. 2019, Fig. 7)
//! ```text
//! ring       borders of the outer parts → neighbours                 (DistLattice)
//! update_bulk, first call:
//!   inner exchange      each part's edge columns → its siblings' inner halos
//!   device              the whole bulk part submitted, not awaited (its halos are inner)
//! update_bulk           the host parts' bulk columns, while the ring's halos travel
//! set_ghosts(0, …)      the neighbours' borders → the outer halos of the end parts
//! update_borders_and_finish
//!   host parts          their border columns; the step ends on every part
//!   in place, pull      what each part pushed into an inner halo → its sibling's border
//! ```
//! So the host's own work and the MPI exchange (`T_host + T_mpi` of eq. 4) run under the
//! device's bulk (`T_acc`), and the host↔device copy of `2H` columns a side is the `T_swap`.
//! Both schemes run: in place, the pull half-step's pushed halos are folded between the parts
//! as between ranks ([`SlabBackend::fold`]), the local half-step exchanges nothing.

use std::ops::Range;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use super::{check_columns, choose_columns, SplitChoice, SplitModel, StepTimes};
use crate::blocks::Blocks;
use crate::domain::{Frame, GlobalSpec, Slab, LEFT, RIGHT};
use crate::error::check_values;
use crate::gpu::{poisoned, GpuContext, GpuError, GpuSlab};
use crate::metrics::median;
use crate::slab_backend::wrap_through;
use crate::solver::Placement;
use crate::{
    Block, BoundarySpec, Error, Layout, LayoutKind, LbmError, Model, Real, Scheme, SlabBackend,
};

/// A host part of a split: a host slab ([`Slab`]) in the layout of its [`HostLayout`], the
/// layout erased so that the split's own code is compiled once per model and precision.
type Host<M, T> = Box<dyn SlabBackend<Model = M, Real = T>>;

/// What makes a host part of a lattice, the global sites `block`, at rest.
type MakePart<M, T> = fn(&GlobalSpec<M>, &[Range<usize>; 3], Scheme) -> Result<Host<M, T>, Error>;

/// The host's layout in a split, as a value: the layout's kind, and how the host's parts are
/// made in it. The split, its calibration and its ring take this value, so that they are
/// compiled once per model and precision; only the maker is compiled per layout
/// ([`HostLayout::of`]).
pub struct HostLayout<M: Model, T: Real> {
    /// The layout.
    pub kind: LayoutKind,
    /// A host part.
    part: MakePart<M, T>,
}

impl<M: Model, T: Real> Clone for HostLayout<M, T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<M: Model, T: Real> Copy for HostLayout<M, T> {}

impl<M: Model, T: Real> HostLayout<M, T> {
    /// The host's sites in layout `L`.
    pub fn of<L: Layout>() -> Self {
        Self {
            kind: L::KIND,
            part: |spec, block, scheme| Ok(Box::new(Slab::<M, L, T>::block(spec, block, scheme)?)),
        }
    }
}

/// Where the slab's columns run.
#[allow(clippy::large_enum_variant)]
enum Parts<M: Model, T: Real> {
    /// `M = 0`.
    Device(GpuSlab<M, T>),
    /// `2M = W`.
    Host(Host<M, T>),
    /// The borders on the host, the bulk on the device.
    Split {
        left: Host<M, T>,
        bulk: GpuSlab<M, T>,
        right: Host<M, T>,
    },
}

/// A rank's slab split between host and device (see the module documentation).
pub struct SplitSlab<M: Model, T: Real> {
    parts: Parts<M, T>,
    /// Host border columns per side.
    m: usize,
    /// The model `M` was tuned by ([`SplitChoice::Auto`]).
    model: Option<SplitModel>,
    /// Own sites per column (`LY·LZ` where the lattice is cut along x alone).
    plane: usize,
    /// The host's layout.
    layout: LayoutKind,
    ctx: Arc<GpuContext>,
    /// Whether this step's inner exchange and device submission are done.
    started: bool,
    /// What the three parts read for their exchange with each other (borders, or what a
    /// half-step pushed), kept from step to step.
    inner: [[Vec<T>; 2]; 3],
    /// What one part reads of a face the block sends (read through `&self`), kept likewise.
    face: Mutex<[Vec<T>; 2]>,
}

impl<M: Model, T: Real> SplitSlab<M, T> {
    /// Rank `rank`'s slab of the global lattice `spec` cut by `dec`, split between the host
    /// (in the layout `host`) and the device of `ctx` as `choice` says, at rest, run in
    /// `scheme`. [`SplitChoice::Auto`] tunes `M` for this rank: [`super::calibrate`] on a
    /// lattice of the block's stored lines, with `t_c`, the exchange of the block's cut faces
    /// per stored row of its planes (Calore et al. 2019, eq. 7), in the balance (eq. 8).
    /// Validates the global lattice first, so every rank fails alike.
    pub fn new(
        ctx: &Arc<GpuContext>,
        (spec, host): (&GlobalSpec<M>, HostLayout<M, T>),
        (dec, rank): (&Blocks, usize),
        scheme: Scheme,
        (choice, t_c): (SplitChoice, f64),
    ) -> Result<Self, Error> {
        spec.validate(host.kind)?;
        let block = dec.block(rank);
        // Timed on a lattice of the lines the block stores (its ghost lines included, rounded
        // up to the host layout's clusters: any height of a block cut along y is one).
        let stored = Frame::of::<M>(spec.size(), &block, host.kind.vl()).stored;
        let local = GlobalSpec {
            lx: block[0].len(),
            ly: stored[1],
            lz: stored[2],
            boundaries: BoundarySpec::periodic(),
            ..spec.clone()
        };
        let (m, model) = choose_columns(ctx, (&local, host), choice, t_c)?;
        let mut slab = Self::cut(ctx, (spec, host), block, scheme, m)?;
        slab.model = model;
        Ok(slab)
    }

    /// Rank `rank`'s slab of the global lattice `spec` cut by `dec`, with `m` border columns
    /// on each side on the host (in the layout `host`) and the bulk on the device of `ctx`,
    /// at rest, run in `scheme`; `model` is the calibration that chose `m`, if one did.
    /// Validates the global lattice first (size, parameters, boundaries), so every rank fails
    /// alike; an inadmissible `m` is refused with the admissible values.
    pub fn with_columns(
        ctx: &Arc<GpuContext>,
        (spec, host): (&GlobalSpec<M>, HostLayout<M, T>),
        (dec, rank): (&Blocks, usize),
        scheme: Scheme,
        (m, model): (usize, Option<SplitModel>),
    ) -> Result<Self, Error> {
        spec.validate(host.kind)?;
        let mut slab = Self::cut(ctx, (spec, host), dec.block(rank), scheme, m)?;
        slab.model = model;
        Ok(slab)
    }

    /// The block `[xs, ys, zs]` of `spec`, with `m` border columns a side on the host (each
    /// part a block of its own columns, which compiles their boundaries and stores the
    /// block's ghost lines along y and z).
    fn cut(
        ctx: &Arc<GpuContext>,
        (spec, host): (&GlobalSpec<M>, HostLayout<M, T>),
        [xs, ys, zs]: [Range<usize>; 3],
        scheme: Scheme,
        m: usize,
    ) -> Result<Self, Error> {
        let w = xs.len();
        check_columns::<M>(w, m)?;
        let plane = ys.len() * zs.len();
        let part = |cols: Range<usize>| [cols, ys.clone(), zs.clone()];
        let host_part = |cols: Range<usize>| (host.part)(spec, &part(cols), scheme);
        let device = |cols| GpuSlab::block(ctx, host.kind, spec, &part(cols), scheme);
        let (a, b) = (xs.start + m, xs.end - m);
        let parts = if m == 0 {
            Parts::Device(device(xs)?)
        } else if 2 * m == w {
            Parts::Host(host_part(xs)?)
        } else {
            Parts::Split {
                left: host_part(xs.start..a)?,
                bulk: device(a..b)?,
                right: host_part(b..xs.end)?,
            }
        };
        Ok(Self {
            parts,
            m,
            model: None,
            plane,
            layout: host.kind,
            ctx: ctx.clone(),
            started: false,
            inner: Default::default(),
            face: Mutex::default(),
        })
    }

    /// Host border columns per side, `M`.
    pub fn border_columns(&self) -> usize {
        self.m
    }

    /// The model calibrated for this rank ([`SplitChoice::Auto`] only).
    pub fn split_model(&self) -> Option<&SplitModel> {
        self.model.as_ref()
    }

    /// The slab on one backend, unsplit.
    fn whole_mut(&mut self) -> Option<&mut dyn SlabBackend<Model = M, Real = T>> {
        match &mut self.parts {
            Parts::Device(s) => Some(s),
            Parts::Host(s) => Some(&mut **s),
            Parts::Split { .. } => None,
        }
    }

    /// The part holding the local column `x`, with its first local column (the leftmost part
    /// for `x = 0`: the one every part agrees with on scheme, steps and state).
    fn part_at(&self, x: usize) -> (&dyn SlabBackend<Model = M, Real = T>, usize) {
        match &self.parts {
            Parts::Device(s) => (s, 0),
            Parts::Host(s) => (&**s, 0),
            Parts::Split { left, .. } if x < self.m => (&**left, 0),
            Parts::Split { bulk, .. } if x < self.m + bulk.width() => (bulk, self.m),
            Parts::Split { bulk, right, .. } => (&**right, self.m + bulk.width()),
        }
    }

    /// The leftmost part.
    fn first(&self) -> &dyn SlabBackend<Model = M, Real = T> {
        self.part_at(0).0
    }

    /// The parts from left to right with their first local column.
    fn parts(&self) -> Vec<(&dyn SlabBackend<Model = M, Real = T>, usize)> {
        match &self.parts {
            Parts::Device(s) => vec![(s as &dyn SlabBackend<Model = M, Real = T>, 0)],
            Parts::Host(s) => vec![(&**s as &dyn SlabBackend<Model = M, Real = T>, 0)],
            Parts::Split { left, bulk, right } => vec![
                (&**left as &dyn SlabBackend<Model = M, Real = T>, 0),
                (bulk, self.m),
                (&**right, self.m + bulk.width()),
            ],
        }
    }

    /// The parts from left to right with their first local column, mutable.
    fn parts_mut(&mut self) -> Vec<(&mut dyn SlabBackend<Model = M, Real = T>, usize)> {
        match &mut self.parts {
            Parts::Device(s) => vec![(s as &mut dyn SlabBackend<Model = M, Real = T>, 0)],
            Parts::Host(s) => vec![(&mut **s as &mut dyn SlabBackend<Model = M, Real = T>, 0)],
            Parts::Split { left, bulk, right } => {
                let mid = self.m + bulk.width();
                vec![
                    (&mut **left as &mut dyn SlabBackend<Model = M, Real = T>, 0),
                    (bulk, self.m),
                    (&mut **right, mid),
                ]
            }
        }
    }

    /// The start of a split slab's step, once per step: the inner swap, then the device's
    /// whole step submitted.
    fn start(&mut self) -> Result<(), Error> {
        if std::mem::replace(&mut self.started, true) {
            return Ok(());
        }
        self.swap()?;
        self.submit()
    }

    /// The parts' edge columns into each other's inner halos, when the step reads halos
    /// (reading the bulk's edges waits for the device's previous step).
    fn swap(&mut self) -> Result<(), Error> {
        let Self { parts, inner, .. } = self;
        let Parts::Split { left, bulk, right } = parts else {
            return Ok(());
        };
        if bulk.needs_halos() {
            let [edges, from_l, from_r] = inner;
            bulk.borders(0, edges)?;
            left.borders(0, from_l)?;
            right.borders(0, from_r)?;
            bulk.set_ghosts(0, [&from_l[RIGHT], &from_r[LEFT]])?;
            left.set_ghosts(0, [&[], &edges[LEFT]])?;
            right.set_ghosts(0, [&edges[RIGHT], &[]])?;
        }
        Ok(())
    }

    /// The device's whole step submitted, not awaited (its halos are all inner).
    fn submit(&mut self) -> Result<(), Error> {
        let Parts::Split { bulk, .. } = &mut self.parts else {
            return Ok(());
        };
        bulk.update_bulk(0..1, 1)?;
        bulk.update_borders_and_finish()
    }

    /// One two-copy step of a split slab whose outer halos are in place, its phases timed: the
    /// swap, then from the device's submission the device's completion (awaited on a second
    /// thread) and the host's borders (calibration, Calore et al. 2019 §6.1).
    pub(super) fn probe_step(&mut self) -> Result<StepTimes, Error> {
        let ctx = self.ctx.clone();
        let t_swap = Instant::now();
        self.swap()?;
        let swap = t_swap.elapsed().as_secs_f64();
        let t0 = Instant::now();
        self.submit()?;
        self.started = true;
        let (device, host) = std::thread::scope(|s| {
            let waiter = s.spawn(|| ctx.wait().map(|()| t0.elapsed().as_secs_f64()));
            let host = self
                .update_bulk(0..1, 1)
                .and_then(|()| self.update_borders_and_finish())
                .map(|()| t0.elapsed().as_secs_f64());
            let device = waiter.join().unwrap_or_else(|_| {
                Err(GpuError::Device(
                    "the thread waiting for the device panicked".into(),
                ))
            });
            (device, host)
        });
        Ok(StepTimes {
            device: device?,
            host: host?,
            swap,
        })
    }

    /// The median seconds per step of the device's bulk alone and of the host's borders alone
    /// over `steps` steps each (calibration; the halos go stale, the state is scratch).
    pub(super) fn probe_alone(&mut self, steps: u64) -> Result<(f64, f64), Error> {
        let Parts::Split { left, bulk, right } = &mut self.parts else {
            return Err(LbmError::Shape("only a split slab times its parts".into()).into());
        };
        let (mut dev, mut host) = (Vec::new(), Vec::new());
        for _ in 0..steps {
            let t0 = Instant::now();
            bulk.update_bulk(0..1, 1)?;
            bulk.update_borders_and_finish()?;
            bulk.finish()?;
            dev.push(t0.elapsed().as_secs_f64());
            let t1 = Instant::now();
            for s in [&mut *left, &mut *right] {
                s.update_bulk(0..1, 1)?;
                s.update_borders_and_finish()?;
            }
            host.push(t1.elapsed().as_secs_f64());
        }
        Ok((median(&mut dev), median(&mut host)))
    }

    /// What `f` reads of the parts along `axis` into `into`: along x the outer parts' outer
    /// sides (a split's outer borders or halos); along y and z each part's, side by side along
    /// x (the block's border or ghost lines, whose boxes are the parts' one after the other); a
    /// slab not split reads its own.
    fn outer_or_joined(
        &self,
        axis: usize,
        into: &mut [Vec<T>; 2],
        f: impl Fn(&dyn SlabBackend<Model = M, Real = T>, &mut [Vec<T>; 2]) -> Result<(), Error>,
    ) -> Result<(), Error> {
        let mut part = self.face.lock().map_err(poisoned)?;
        match (&self.parts, axis) {
            (Parts::Split { left, right, .. }, 0) => {
                f(&**left, into)?;
                f(&**right, &mut part)?;
                std::mem::swap(&mut into[RIGHT], &mut part[RIGHT]);
            }
            (Parts::Split { .. }, _) => {
                into.iter_mut().for_each(Vec::clear);
                for (p, _) in self.parts() {
                    f(p, &mut part)?;
                    for (all, own) in into.iter_mut().zip(part.iter()) {
                        all.extend_from_slice(own);
                    }
                }
            }
            _ => f(self.first(), into)?,
        }
        Ok(())
    }

    /// `f` on the parts for what the neighbours along `axis` sent, `from`: along x the left
    /// part takes the left side and the right part the right side (a split's outer halos);
    /// along y and z each part its columns' share ([`SplitSlab::shared`]); a slab not split
    /// takes the whole.
    fn outer_or_shared(
        &mut self,
        axis: usize,
        from: [&[T]; 2],
        f: impl Fn(&mut dyn SlabBackend<Model = M, Real = T>, [&[T]; 2]) -> Result<(), Error>,
    ) -> Result<(), Error> {
        match (&mut self.parts, axis) {
            (Parts::Split { left, right, .. }, 0) => {
                f(&mut **left, [from[LEFT], &[]])?;
                f(&mut **right, [&[], from[RIGHT]])
            }
            (Parts::Split { .. }, _) => self.shared(from, f),
            (Parts::Device(s), _) => f(s, from),
            (Parts::Host(s), _) => f(&mut **s, from),
        }
    }

    /// `f` on each part with its columns' share of `from`, values over the block's columns
    /// side by side along x (as [`SplitSlab::outer_or_joined`] gives them).
    fn shared(
        &mut self,
        from: [&[T]; 2],
        f: impl Fn(&mut dyn SlabBackend<Model = M, Real = T>, [&[T]; 2]) -> Result<(), Error>,
    ) -> Result<(), Error> {
        let per = from.map(|v| v.len() / self.width().max(1));
        for (part, first) in self.parts_mut() {
            let cols = first..first + part.width();
            let share = [0, 1].map(|k| &from[k][cols.start * per[k]..cols.end * per[k]]);
            f(part, share)?;
        }
        Ok(())
    }

    /// After an AA pull half-step, what each part pushed into an inner halo written into its
    /// sibling's border columns.
    fn fold_inner(&mut self) -> Result<(), Error> {
        let Self { parts, inner, .. } = self;
        let Parts::Split { left, bulk, right } = parts else {
            return Ok(());
        };
        if !bulk.pushes() {
            return Ok(());
        }
        let [pl, pb, pr] = inner;
        left.pushed(0, pl)?;
        bulk.pushed(0, pb)?;
        right.pushed(0, pr)?;
        left.fold(0, [&[], &pb[LEFT]])?;
        bulk.fold(0, [&pl[RIGHT], &pr[LEFT]])?;
        right.fold(0, [&pb[RIGHT], &[]])
    }
}

impl<M: Model, T: Real> Block for SplitSlab<M, T> {
    type Model = M;
    type Real = T;

    fn params(&self) -> &M::Params {
        self.first().params()
    }
    fn scheme(&self) -> Scheme {
        self.first().scheme()
    }
    fn layout_name(&self) -> &'static str {
        self.layout.name()
    }
    fn steps_done(&self) -> u64 {
        self.first().steps_done()
    }
    fn set_steps_done(&mut self, step: u64) {
        match &mut self.parts {
            Parts::Device(s) => s.set_steps_done(step),
            Parts::Host(s) => s.set_steps_done(step),
            Parts::Split { left, bulk, right } => {
                left.set_steps_done(step);
                bulk.set_steps_done(step);
                right.set_steps_done(step);
            }
        }
    }
    fn local_populations(&self) -> Result<Vec<T>, Error> {
        let mut all = Vec::new();
        for (p, _) in self.parts() {
            all.extend(p.local_populations()?);
        }
        Ok(all)
    }
    fn set_local_populations(&mut self, values: &[T]) -> Result<(), Error> {
        let per_col = self.plane * M::Q;
        check_values(values.len(), self.width() * per_col, "slab populations")?;
        let Parts::Split { left, bulk, right } = &mut self.parts else {
            return self
                .whole_mut()
                .map_or(Ok(()), |s| s.set_local_populations(values));
        };
        let (l, rest) = values.split_at(left.width() * per_col);
        let (b, r) = rest.split_at(bulk.width() * per_col);
        left.set_local_populations(l)?;
        bulk.set_local_populations(b)?;
        right.set_local_populations(r)
    }
    /// Each part its own columns' values, after the whole slab's are checked (so that a
    /// refusal changes no part).
    fn set_local_field(&mut self, name: &str, values: &[f64]) -> Result<(), Error> {
        let plane = self.plane;
        crate::lattice::checked_field::<M>(name, values, (self.width(), plane))?;
        for (part, first) in self.parts_mut() {
            let cols = first * plane..(first + part.width()) * plane;
            part.set_local_field(name, &values[cols])?;
        }
        Ok(())
    }
    /// The parts' fields side by side (the parts take their fields together: all have them
    /// per site, or none).
    fn local_fields(&self) -> Result<Option<Vec<Vec<f64>>>, Error> {
        let mut out = vec![Vec::new(); M::FIELDS.len()];
        for (part, _) in self.parts() {
            let Some(fields) = part.local_fields()? else {
                return Ok(None);
            };
            for (all, own) in out.iter_mut().zip(fields) {
                all.extend(own);
            }
        }
        Ok(Some(out))
    }
    fn local_solid(&self, s: usize) -> bool {
        let (part, x0) = self.part_at(s / self.plane);
        part.local_solid(s - x0 * self.plane)
    }
    fn describe(&self) -> String {
        let how = if self.model.is_some() {
            "tuned at start-up"
        } else {
            "fixed"
        };
        let bulk = match self.parts {
            Parts::Host(_) => "no bulk on the device".to_string(),
            _ => format!("the bulk on {}", self.ctx.describe()),
        };
        format!(
            "hetero, M = {} border columns a side on the host ({:.0}% of the slab's, {how}), \
             {bulk}",
            self.m,
            100.0 * (2 * self.m) as f64 / self.width() as f64,
        )
    }
    fn placement(&self) -> Placement {
        match &self.parts {
            Parts::Host(_) => Placement::Host,
            Parts::Device(_) => Placement::Device(self.ctx.clone()),
            Parts::Split { .. } => Placement::Split(self.ctx.clone()),
        }
    }
}

impl<M: Model, T: Real> SlabBackend for SplitSlab<M, T> {
    fn width(&self) -> usize {
        self.parts().iter().map(|(p, _)| p.width()).sum()
    }
    /// Along x the outer parts' outer borders; along y and z the parts' side by side.
    fn borders(&self, axis: usize, into: &mut [Vec<T>; 2]) -> Result<(), Error> {
        self.outer_or_joined(axis, into, |p, v| p.borders(axis, v))
    }
    fn set_ghosts(&mut self, axis: usize, from: [&[T]; 2]) -> Result<(), Error> {
        self.outer_or_shared(axis, from, |p, side| p.set_ghosts(axis, side))
    }
    fn update_bulk(&mut self, parts: Range<usize>, n: usize) -> Result<(), Error> {
        if let Some(s) = self.whole_mut() {
            return s.update_bulk(parts, n);
        }
        self.start()?;
        if let Parts::Split { left, right, .. } = &mut self.parts {
            left.update_bulk(parts.clone(), n)?;
            right.update_bulk(parts, n)?;
        }
        Ok(())
    }
    fn update_borders_and_finish(&mut self) -> Result<(), Error> {
        if let Some(s) = self.whole_mut() {
            return s.update_borders_and_finish();
        }
        self.start()?;
        self.started = false;
        if let Parts::Split { left, right, .. } = &mut self.parts {
            left.update_borders_and_finish()?;
            right.update_borders_and_finish()?;
        }
        self.fold_inner()
    }
    fn needs_halos(&self) -> bool {
        self.first().needs_halos()
    }
    fn pushes(&self) -> bool {
        self.first().pushes()
    }
    fn pushed(&self, axis: usize, into: &mut [Vec<T>; 2]) -> Result<(), Error> {
        self.outer_or_joined(axis, into, |p, v| p.pushed(axis, v))
    }
    fn fold(&mut self, axis: usize, from: [&[T]; 2]) -> Result<(), Error> {
        self.outer_or_shared(axis, from, |p, side| p.fold(axis, side))
    }
    /// A whole block as its backend does; split, through `buffers` (its outer parts, on the
    /// host, hold the block's x borders and halos).
    fn wrap_x(&mut self, fold: bool, buffers: &mut [Vec<T>; 2]) -> Result<(), Error> {
        match self.whole_mut() {
            Some(s) => s.wrap_x(fold, buffers),
            None => wrap_through(self, fold, buffers),
        }
    }
    /// A whole block as its backend does; a split one through the ring's steps.
    fn steps_alone(&mut self, n: u64) -> Result<bool, Error> {
        match self.whole_mut() {
            Some(s) => s.steps_alone(n),
            None => Ok(false),
        }
    }
    fn finish(&self) -> Result<(), Error> {
        self.parts().iter().try_for_each(|(p, _)| p.finish())
    }
    /// Each part's columns from that part, its inner halos first refreshed from its siblings
    /// (the swap the next step starts with).
    fn own_moments(&mut self, cols: Range<usize>) -> Result<Vec<Vec<f64>>, Error> {
        self.swap()?;
        let mut out = vec![Vec::new(); M::MOMENT_NAMES.len()];
        for (part, first) in self.parts_mut() {
            let mine = cols.start.max(first)..cols.end.min(first + part.width());
            if mine.is_empty() {
                continue;
            }
            let fields = part.own_moments(mine.start - first..mine.end - first)?;
            for (all, part) in out.iter_mut().zip(fields) {
                all.extend(part);
            }
        }
        Ok(out)
    }

    /// Each part's sites from that part, its inner halos first refreshed from its siblings
    /// (the swap the next step starts with, which reads them where the two-copy scheme pulls).
    fn exchanged(&mut self, sites: &[[usize; 3]]) -> Result<Vec<T>, Error> {
        if let Some(s) = self.whole_mut() {
            return s.exchanged(sites);
        }
        self.swap()?;
        let Parts::Split { left, bulk, right } = &mut self.parts else {
            unreachable!("a slab not split is whole");
        };
        let (m, mid) = (self.m, self.m + bulk.width());
        let mut at: [Vec<(usize, [usize; 3])>; 3] = Default::default();
        for (j, &[x, y, z]) in sites.iter().enumerate() {
            match x {
                x if x < m => at[0].push((j, [x, y, z])),
                x if x < mid => at[1].push((j, [x - m, y, z])),
                x => at[2].push((j, [x - mid, y, z])),
            }
        }
        let parts: [&mut dyn SlabBackend<Model = M, Real = T>; 3] =
            [&mut **left, bulk, &mut **right];
        let per = 2 * M::Q;
        let mut out = vec![T::default(); per * sites.len()];
        for (part, at) in parts.into_iter().zip(&at) {
            let local: Vec<[usize; 3]> = at.iter().map(|&(_, s)| s).collect();
            let values = part.exchanged(&local)?;
            for (&(j, _), v) in at.iter().zip(values.chunks_exact(per)) {
                out[j * per..(j + 1) * per].copy_from_slice(v);
            }
        }
        Ok(out)
    }
    /// Each part its own sites, with their own fields.
    fn set_equilibrium_at(
        &mut self,
        x0: usize,
        moments: &(dyn Fn(usize, usize) -> Vec<f64> + Sync),
    ) -> Result<(), Error> {
        for (part, first) in self.parts_mut() {
            part.set_equilibrium_at(x0 + first, moments)?;
        }
        Ok(())
    }
    fn check(&self) -> Result<(), Error> {
        for (p, x0) in self.parts() {
            p.check().map_err(|e| e.shifted(x0))?;
        }
        Ok(())
    }
}
