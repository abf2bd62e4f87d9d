//! Host and device together (Calore et al. 2019 §5–6): the lattice split between the host CPU and a GPU
//! that update it concurrently, the split balanced by the model of eq. 4–8 ([`SplitModel`]).
//!
//! # The split (Calore et al. 2019, Fig. 6)
//! The `LX` columns are cut into a left border `[0, M)`, the bulk `[M, LX − M)` and a right
//! border `[LX − M, LX)`: the borders on the host, the bulk on the device. The same split
//! runs a rank's slab in the MPI ring ([`SplitSlab`]: the parts form a chain whose inner halos
//! are copied between host and device and whose outer halos come from the ring); in one
//! process a [`HeteroLattice`] is that slab closed on itself, a ring of one, whose outer halos
//! are its own opposite borders (neighbours across `x = LX` when x is periodic; with x walls
//! never read across, as the outer halos of the first and last slabs of [`crate::domain`]).
//!
//! # One step (Calore et al. 2019, Fig. 7)
//! ```text
//! swap     edge columns of each part → the other parts' inner halos
//! device   propagate + bc + collide on the bulk, submitted without waiting
//! host     [MPI halos overlapped, on ranks]  propagate + bc + collide on the borders (rayon)
//! ```
//! Every site computes the arithmetic of a single lattice, on the host in Rust and on the
//! device in WGSL, so a split run matches a single-backend run to the GPU-vs-CPU tolerance.
//! Both streaming schemes run: in place (AA), what the pull half-step pushes into an inner
//! halo is folded into the sibling part's border as between ranks ([`crate::domain`]).
//!
//! Boundaries are compiled once for the global lattice and sliced ([`crate::domain`]), so
//! walls, obstacles and thermal walls act as in one lattice. `M = 0` runs the whole lattice
//! on the device and `2M = LX` on the host (no swap). Between them each part must be at
//! least a halo wide, `M ≥ H` and `LX − 2M ≥ H` ([`admissible`]): a part narrower than the
//! halo could not fill the others' halos from its own columns.
//!
//! The split is fixed by the user ([`SplitChoice::Columns`], [`SplitChoice::HostShare`]) or
//! chosen at start-up ([`SplitChoice::Auto`]): [`calibrate`] times a probe split and each
//! side alone, and [`SplitModel::optimal_m`] picks `M*`.

mod fd;
mod model;
mod slab;

use std::ops::Range;
use std::sync::Arc;

pub use fd::HeteroFdGrid;
pub use model::{calibrate, SplitModel};
pub use slab::SplitSlab;

use crate::distributed::DistLattice;
use crate::domain::{export_columns, import_slab, GlobalSpec};
use crate::gpu::{GpuContext, GpuError, GpuLattice};
use crate::group::OneProcess;
use crate::layout::Layout;
use crate::solver::{Extent, Placement};
use crate::{Block, Error, Lattice, LbmError, Model, Real, Scheme, SlabBackend, Solver};

/// Steps of the start-up calibration of [`SplitChoice::Auto`].
pub const CALIBRATION_STEPS: u64 = 9;

/// How the columns are shared between host and device.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SplitChoice {
    /// Calibrate at start-up and take the model's optimum ([`SplitModel::optimal_m`]).
    Auto,
    /// `M` border columns on each side on the host (must be [`admissible`]).
    Columns(usize),
    /// The host's share of the columns, `2M/LX` in `[0, 1]`, rounded to the nearest
    /// admissible `M`.
    HostShare(f64),
}

/// Why a split lattice cannot be built or run.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum HeteroError {
    /// `M` leaves a part narrower than the halo, or exceeds half the lattice.
    #[error(
        "M = {m} host border columns cannot split a lattice (or a rank's slab) of width \
         LX = {lx} with model \
         {model} (halo H = {halo}): M must be 0 (device only), LX/2 (host only, LX even), or \
         leave both parts at least H wide (2M ≥ H and LX − 2M ≥ H); admissible M: {admissible}"
    )]
    BadColumns {
        /// The requested border width.
        m: usize,
        /// The lattice width.
        lx: usize,
        /// The model's name.
        model: &'static str,
        /// The model's halo width.
        halo: usize,
        /// The admissible values, as ranges.
        admissible: String,
    },
    /// A host share outside `[0, 1]`.
    #[error("host share {0} is not a fraction in [0, 1]: give 2M/LX, e.g. 0.25")]
    BadShare(f64),
    /// The device, the lattice, or a divergence.
    #[error(transparent)]
    Gpu(#[from] GpuError),
}

impl From<LbmError> for HeteroError {
    fn from(e: LbmError) -> Self {
        Self::Gpu(e.into())
    }
}

/// Whether `M` border columns per side split a lattice (or a rank's slab) `lx` wide with halo
/// `halo`: `M = 0`, `2M = LX`, or every part at least `max(H, 1)` wide — each host border
/// (`M ≥ H`) and the device's bulk (`LX − 2M ≥ H`).
pub fn admissible(lx: usize, halo: usize, m: usize) -> bool {
    let h = halo.max(1);
    m == 0 || 2 * m == lx || (m >= h && 2 * m < lx && lx - 2 * m >= h)
}

/// The admissible `M` nearest `want` (the smaller on a tie).
pub fn nearest_admissible(lx: usize, halo: usize, want: f64) -> usize {
    (0..=lx / 2)
        .filter(|&m| admissible(lx, halo, m))
        .min_by(|&a, &b| {
            let d = |m: usize| (m as f64 - want).abs();
            d(a).total_cmp(&d(b))
        })
        .unwrap_or(0)
}

/// `M` as `choice` says for a lattice (or a rank's slab) `spec`, with the model it was tuned by
/// ([`SplitChoice::Auto`]: [`calibrate`] on `spec`, then the balance of eq. 8 with `t_c`, the
/// ring's halo exchange per row, 0 in one process).
fn choose_columns<M: Model, L: Layout, T: Real>(
    ctx: &Arc<GpuContext>,
    spec: &GlobalSpec<M>,
    choice: SplitChoice,
    t_c: f64,
) -> Result<(usize, Option<SplitModel>), Error> {
    Ok(match choice {
        SplitChoice::Columns(m) => (m, None),
        SplitChoice::HostShare(s) => (share_columns(spec.lx, M::HALO, s)?, None),
        SplitChoice::Auto => {
            let model = SplitModel {
                t_c,
                ..calibrate::<M, L, T>(ctx, spec, CALIBRATION_STEPS)?
            };
            (model.optimal_m(), Some(model))
        }
    })
}

/// The admissible `M` nearest the host share `share = 2M/LX` of a lattice (or a rank's slab)
/// `lx` wide; refuses a share outside `[0, 1]`.
fn share_columns(lx: usize, halo: usize, share: f64) -> Result<usize, HeteroError> {
    if !(0.0..=1.0).contains(&share) {
        return Err(HeteroError::BadShare(share));
    }
    Ok(nearest_admissible(lx, halo, share * lx as f64 / 2.0))
}

/// The admissible `M` for `lx` and `halo`, as ranges (for messages).
/// Refuses `m` host columns a side on a lattice (or slab) `lx` wide unless [`admissible`],
/// naming the admissible values.
pub(crate) fn check_columns<M: Model>(lx: usize, m: usize) -> Result<(), HeteroError> {
    if admissible(lx, M::HALO, m) {
        return Ok(());
    }
    Err(HeteroError::BadColumns {
        m,
        lx,
        model: M::NAME,
        halo: M::HALO,
        admissible: admissible_list(lx, M::HALO),
    })
}

fn admissible_list(lx: usize, halo: usize) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut run: Option<(usize, usize)> = None;
    for m in (0..=lx / 2).filter(|&m| admissible(lx, halo, m)) {
        run = match run {
            Some((a, b)) if b + 1 == m => Some((a, m)),
            Some((a, b)) => {
                out.push(range_text(a, b));
                Some((m, m))
            }
            None => Some((m, m)),
        };
    }
    out.extend(run.map(|(a, b)| range_text(a, b)));
    out.join(", ")
}

fn range_text(a: usize, b: usize) -> String {
    if a == b {
        a.to_string()
    } else {
        format!("{a}..={b}")
    }
}

/// The wall times of one split step's phases, in seconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StepTimes {
    /// From the device's submission until it finished the bulk.
    pub device: f64,
    /// From the device's submission until the host finished its borders.
    pub host: f64,
    /// The swap of edge and halo columns between host and device, before the submission.
    pub swap: f64,
}

/// Where the columns live (one per lattice, never moved in a loop: the variants' sizes do not
/// matter).
#[allow(clippy::large_enum_variant)]
enum Parts<M: Model, L: Layout, T: Real> {
    /// `M = 0`: the whole lattice on the device.
    Device(GpuLattice<M, T>),
    /// `2M = LX`: the whole lattice on the host.
    Host(Lattice<M, L, T>),
    /// The borders on the host, the bulk on the device: one [`SplitSlab`] whose outer halos
    /// come from its own opposite borders (a ring of one process).
    Split(DistLattice<M, L, T, SplitSlab<M, L, T>>),
}

/// A lattice of model `M`, layout `L`, precision `T` whose border columns run on the host and
/// whose bulk runs on a device, concurrently (see the module documentation).
pub struct HeteroLattice<M: Model, L: Layout, T: Real> {
    spec: GlobalSpec<M>,
    m: usize,
    scheme: Scheme,
    parts: Parts<M, L, T>,
    model: Option<SplitModel>,
    step: u64,
}

impl<M: Model, L: Layout, T: Real> HeteroLattice<M, L, T> {
    /// The lattice `spec` at rest, run in `scheme`, split as `choice` says between the host
    /// and the device of `ctx`. [`SplitChoice::Auto`] first calibrates the model
    /// ([`calibrate`], a few steps of a scratch lattice). Fails on an inadmissible `M`, a share
    /// outside `[0, 1]`, or whatever [`Lattice::new`] and [`GpuLattice::new`] refuse.
    pub fn new(
        ctx: &Arc<GpuContext>,
        spec: GlobalSpec<M>,
        scheme: Scheme,
        choice: SplitChoice,
    ) -> Result<Self, Error> {
        spec.validate(L::KIND)?;
        let (m, model) = choose_columns::<M, L, T>(ctx, &spec, choice, 0.0)?;
        let mut lat = Self::with_columns(ctx, spec, m, scheme)?;
        lat.model = model;
        Ok(lat)
    }

    /// The lattice `spec` at rest with `m` border columns per side on the host.
    pub(crate) fn with_columns(
        ctx: &Arc<GpuContext>,
        spec: GlobalSpec<M>,
        m: usize,
        scheme: Scheme,
    ) -> Result<Self, Error> {
        let lx = spec.lx;
        check_columns::<M>(lx, m)?;
        let parts = if m == 0 {
            Parts::Device(GpuLattice::with_size(
                ctx,
                L::KIND,
                spec.size(),
                spec.params.clone(),
                scheme,
                &spec.boundaries,
            )?)
        } else if 2 * m == lx {
            Parts::Host(Lattice::with_size(
                spec.size(),
                spec.params.clone(),
                scheme,
                &spec.boundaries,
            )?)
        } else {
            Parts::Split(DistLattice::with_slab(
                Box::new(OneProcess),
                spec.clone(),
                |g, dec, r| SplitSlab::with_columns(ctx, g, dec, r, scheme, m),
            )?)
        };
        Ok(Self {
            spec,
            m,
            scheme,
            parts,
            model: None,
            step: 0,
        })
    }

    /// The global lattice `global` (of specification `spec`) split as `choice` says, in its
    /// scheme: a run resumed from a checkpoint or moved from a CPU lattice.
    pub fn scatter(
        ctx: &Arc<GpuContext>,
        spec: GlobalSpec<M>,
        choice: SplitChoice,
        global: &Lattice<M, L, T>,
    ) -> Result<Self, Error> {
        let d = global.dims();
        spec.holds(Some([d.lx, d.ly, d.lz]))?;
        let lx = spec.lx;
        let mut lat = Self::new(ctx, spec, global.scheme(), choice)?;
        lat.write_all(&export_columns(global, 0..lx)?)?;
        lat.step = global.steps_done();
        Ok(lat)
    }

    /// The post-collision populations of every site, `[(x·LY·LZ + s)·Q + i]` (`s` the plane
    /// site), read from both
    /// parts.
    fn read_all(&self) -> Result<Vec<T>, Error> {
        Ok(match &self.parts {
            Parts::Device(d) => d.read_populations()?,
            Parts::Host(h) => export_columns(h, 0..self.spec.lx)?,
            Parts::Split(ring) => ring.local_populations()?,
        })
    }

    /// Sets every site from values laid out as [`HeteroLattice::read_all`]'s (the even state
    /// of the in-place scheme).
    fn write_all(&mut self, f: &[T]) -> Result<(), Error> {
        let sites = self.spec.lx * self.spec.plane();
        crate::error::check_values(f.len(), sites * M::Q, "populations")?;
        match &mut self.parts {
            Parts::Device(dev) => dev.write_populations(f)?,
            Parts::Host(host) => {
                host.set_even();
                import_slab(host, 0, f)?;
            }
            Parts::Split(ring) => ring.set_local_populations(f)?,
        }
        Ok(())
    }

    /// Host border columns per side, `M`.
    pub fn border_columns(&self) -> usize {
        self.m
    }

    /// The host's share of the columns, `2M/LX`.
    pub fn host_share(&self) -> f64 {
        (2 * self.m) as f64 / self.spec.lx as f64
    }

    /// The model calibrated at start-up ([`SplitChoice::Auto`] only).
    pub fn split_model(&self) -> Option<&SplitModel> {
        self.model.as_ref()
    }

    /// The global lattice's specification.
    pub fn spec(&self) -> &GlobalSpec<M> {
        &self.spec
    }

    /// Steps done so far.
    pub fn steps_done(&self) -> u64 {
        self.step
    }

    /// Sets every site to the equilibrium of `moments(x, y)` (global coordinates; see
    /// [`Solver::set_equilibrium_at`]).
    pub fn set_equilibrium<F>(&mut self, moments: F) -> Result<(), Error>
    where
        F: Fn(usize, usize) -> Vec<f64> + Sync,
    {
        self.set_equilibrium_at(&moments)
    }

    /// The post-collision populations of site `(x, y)` (`y` the plane site `z·LY + y` in
    /// 3-D; order of `M::VELOCITIES`).
    pub fn populations(&self, x: usize, y: usize, out: &mut [T]) -> Result<(), Error> {
        let (lx, plane) = (self.spec.lx, self.spec.plane());
        if x >= lx || y >= plane {
            return Err(LbmError::Shape(format!(
                "site ({x}, {y}) outside the {lx}×{plane} columns × plane sites of the lattice"
            ))
            .into());
        }
        crate::error::check_values(out.len(), M::Q, "populations of a site")?;
        match &self.parts {
            Parts::Device(d) => d.populations(x, y, out)?,
            Parts::Host(h) => h.populations(x, y, out)?,
            Parts::Split(_) => {
                let s = (x * plane + y) * M::Q;
                out.copy_from_slice(&self.read_all()?[s..s + M::Q]);
            }
        }
        Ok(())
    }

    /// Total mass over the fluid sites, accumulated in `f64`.
    pub fn mass(&self) -> Result<f64, Error> {
        Ok(self.totals()?.mass)
    }

    /// The whole lattice gathered into a two-copy CPU [`Lattice`] (outputs, checkpoints,
    /// moments).
    pub fn to_lattice(&self) -> Result<Lattice<M, L, T>, Error> {
        let mut global = self.spec.lattice::<L, T>()?;
        import_slab(&mut global, 0, &self.read_all()?)?;
        for (name, values) in M::FIELDS
            .iter()
            .zip(self.local_fields()?.unwrap_or_default())
        {
            global.set_field(name, &values)?;
        }
        global.set_steps_done(self.step);
        Ok(global)
    }

    /// The field of moment `name` as `f64`, indexed `[x·LY + y]` (gathered: see
    /// [`Lattice::moment_field`]).
    pub fn moment_field(&self, name: &str) -> Result<Vec<f64>, Error> {
        Ok(self.to_lattice()?.moment_field(name)?)
    }

    /// Checks every fluid site for NaN and an excessive Mach number (gathered: see
    /// [`Lattice::check`]).
    pub fn check(&self) -> Result<(), Error> {
        Ok(self.to_lattice()?.check()?)
    }

    /// One time step: the device's bulk submitted, the host's borders updated meanwhile
    /// ([`SplitSlab`]).
    pub fn step(&mut self) -> Result<(), Error> {
        match &mut self.parts {
            Parts::Device(d) => d.step(),
            Parts::Host(h) => h.step(),
            Parts::Split(ring) => ring.step()?,
        }
        self.step += 1;
        Ok(())
    }

    /// `n` time steps without checks (on the device alone, recorded 128 per submission as
    /// [`GpuLattice::steps`]; the device may still be running when this returns, see
    /// [`HeteroLattice::finish`]).
    pub fn steps(&mut self, n: u64) -> Result<(), Error> {
        if let Parts::Device(d) = &mut self.parts {
            d.steps(n);
            self.step += n;
            return Ok(());
        }
        (0..n).try_for_each(|_| self.step())
    }

    /// Tunes the device's workgroup size now where the whole lattice is on the device
    /// ([`GpuLattice::tune_workgroup`], real steps of the run) and returns it; `None` for a
    /// split lattice, whose bulk steps one step at a time at the default size, and for a host
    /// one. What a benchmark calls before it times a device-only run.
    pub fn tune_workgroup(&mut self) -> Option<u32> {
        let Parts::Device(d) = &mut self.parts else {
            return None;
        };
        let before = d.steps_done();
        let size = d.tune_workgroup();
        self.step += d.steps_done() - before;
        Some(size)
    }

    /// Runs `steps` steps, checking for divergence every `check_every` steps (0: only at the
    /// end) and at the end (each check gathers the lattice, see [`HeteroLattice::check`]).
    pub fn run(&mut self, steps: u64, check_every: u64) -> Result<(), Error> {
        let every = if check_every == 0 { steps } else { check_every };
        let mut done = 0;
        while done < steps {
            let n = every.min(steps - done);
            self.steps(n)?;
            done += n;
            if done < steps {
                self.check()?;
            }
        }
        self.check()
    }

    /// Waits until the device has finished the submitted work (timing a run).
    pub fn finish(&self) -> Result<(), Error> {
        match &self.parts {
            Parts::Device(d) => Ok(d.finish()?),
            Parts::Host(_) => Ok(()),
            Parts::Split(ring) => ring.slab().finish(),
        }
    }

    /// The split slab (calibration), with its outer halos filled from its own borders.
    fn split_for_probe(&mut self) -> Result<&mut SplitSlab<M, L, T>, Error> {
        let Parts::Split(ring) = &mut self.parts else {
            return Err(LbmError::Shape("only a split lattice times its parts".into()).into());
        };
        ring.exchange()?;
        Ok(ring.slab_mut())
    }

    /// One split step with its phases timed ([`SplitSlab::probe_step`]; two-copy).
    pub(crate) fn probe_step(&mut self) -> Result<StepTimes, Error> {
        let times = self.split_for_probe()?.probe_step()?;
        self.step += 1;
        Ok(times)
    }

    /// The median seconds per step of the device's bulk alone and of the host's borders alone
    /// over `steps` steps each (calibration; the state is scratch afterwards).
    pub(crate) fn probe_alone(&mut self, steps: u64) -> Result<(f64, f64), Error> {
        self.split_for_probe()?.probe_alone(steps)
    }
}

impl<M: Model, L: Layout, T: Real> Block for HeteroLattice<M, L, T> {
    type Model = M;
    type Real = T;

    fn params(&self) -> &M::Params {
        &self.spec.params
    }

    fn scheme(&self) -> Scheme {
        self.scheme
    }

    fn layout_name(&self) -> &'static str {
        L::NAME
    }

    fn steps_done(&self) -> u64 {
        self.step
    }

    fn set_steps_done(&mut self, step: u64) {
        self.step = step;
    }

    fn local_populations(&self) -> Result<Vec<T>, Error> {
        self.read_all()
    }

    fn set_local_populations(&mut self, values: &[T]) -> Result<(), Error> {
        self.write_all(values)
    }

    fn local_solid(&self, s: usize) -> bool {
        match &self.parts {
            Parts::Host(h) => h.local_solid(s),
            Parts::Device(d) => d.local_solid(s),
            Parts::Split(ring) => ring.local_solid(s),
        }
    }

    fn set_local_field(&mut self, name: &str, values: &[f64]) -> Result<(), Error> {
        match &mut self.parts {
            Parts::Device(d) => d.set_local_field(name, values),
            Parts::Host(h) => h.set_local_field(name, values),
            Parts::Split(ring) => ring.set_local_field(name, values),
        }
    }

    fn local_fields(&self) -> Result<Option<Vec<Vec<f64>>>, Error> {
        match &self.parts {
            Parts::Device(d) => d.local_fields(),
            Parts::Host(h) => h.local_fields(),
            Parts::Split(ring) => ring.local_fields(),
        }
    }

    fn placement(&self) -> Placement {
        match &self.parts {
            Parts::Host(h) => h.placement(),
            Parts::Device(d) => d.placement(),
            Parts::Split(ring) => ring.placement(),
        }
    }

    fn describe(&self) -> String {
        let how = if self.model.is_some() {
            "tuned at start-up"
        } else {
            "fixed"
        };
        let device = match self.placement() {
            Placement::Device(ctx) | Placement::Split(ctx) => ctx.describe(),
            Placement::Host => "no device (host only)".into(),
        };
        format!(
            "hetero: M = {} border columns on each side on the host ({:.0}% of the columns, \
             {how}), the bulk on {device}",
            self.m,
            100.0 * self.host_share(),
        )
    }
}

impl<M: Model, L: Layout, T: Real> Solver for HeteroLattice<M, L, T> {
    fn extent(&self) -> Extent {
        Extent::of_size(self.spec.size())
    }

    fn advance(&mut self, n: u64) -> Result<(), Error> {
        self.steps(n)?;
        self.finish()
    }

    fn local_planes(&self) -> Range<usize> {
        0..self.spec.lx
    }

    fn local_moments(&self) -> Result<Vec<Vec<f64>>, Error> {
        self.to_lattice()?.local_moments()
    }

    /// Each part its own sites, with their own fields (the default would build the equilibria
    /// with the uniform ones).
    fn set_equilibrium_at(
        &mut self,
        moments: &(dyn Fn(usize, usize) -> Vec<f64> + Sync),
    ) -> Result<(), Error> {
        match &mut self.parts {
            Parts::Device(d) => d.set_equilibrium(moments)?,
            Parts::Host(h) => h.set_equilibrium(moments)?,
            Parts::Split(ring) => ring.set_equilibrium_at(moments)?,
        }
        Ok(())
    }

    /// On the part that holds each site; a split lattice's halos refreshed first where the
    /// next step pulls, as the MPI ring does.
    fn exchanged(&mut self, sites: &[[usize; 3]]) -> Result<Vec<T>, Error> {
        match &mut self.parts {
            Parts::Device(d) => Ok(d.exchanged(sites)?),
            Parts::Host(h) => Ok(h.exchanged(sites)?),
            Parts::Split(ring) => ring.exchanged(sites),
        }
    }

    fn check(&self) -> Result<(), Error> {
        HeteroLattice::check(self)
    }
}
