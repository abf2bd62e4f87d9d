//! Host and device together (seed 000 §5–6): the lattice split between the host CPU and a GPU
//! that update it concurrently, the split balanced by the model of eq. 4–8 ([`SplitModel`]).
//!
//! # The split (seed 000 Fig. 6)
//! The `LX` columns are cut into a left border `[0, M)`, the bulk `[M, LX − M)` and a right
//! border `[LX − M, LX)`. The bulk lives on the device (a [`GpuLattice`] `LX − 2M` wide); the
//! two borders live on the host, side by side in one two-copy [`Lattice`] `2M` wide, the
//! *strip*: the right border then the left one, which are neighbours across `x = LX` when x is
//! periodic. Each part has `H = M::HALO` halo columns on each side holding copies of the
//! other part's edge columns: the strip's left halo is the bulk's last `H` columns, its right
//! halo the bulk's first `H`; the bulk's halos are the strip's last and first `H` columns.
//! With x walls the strip's junction is never read across (the links crossing a wall are
//! bounced), as the outer halos of the first and last slabs of [`crate::domain`].
//!
//! # One step (seed 000 Fig. 7)
//! ```text
//! device   propagate + bc + collide on the bulk, submitted without waiting
//! host     [MPI halos: not wired yet]  propagate + bc + collide on the strip (rayon)
//! swap     bulk edge columns → strip halos; strip edge columns → bulk halos
//! ```
//! Every site computes the arithmetic of a single lattice, on the host in Rust and on the
//! device in WGSL, so a split run matches a single-backend run to the GPU-vs-CPU tolerance.
//!
//! Boundaries are compiled once for the global lattice and sliced ([`crate::domain`]), so
//! walls, obstacles and thermal walls act as in one lattice. `M = 0` runs the whole lattice
//! on the device and `2M = LX` on the host (no swap). Between them a split must give each
//! part at least a halo's width, `2M ≥ H` and `LX − 2M ≥ H` ([`admissible`]): a part
//! narrower than the halo could not fill the other's halo from its own columns. Only the
//! two-copy scheme is supported: the in-place (AA) scheme writes into the halos in its pull
//! half-step, which would need a second swap per step.
//!
//! Not yet wired: MPI. Over several ranks a rank's two borders are no longer neighbours, so
//! the strip becomes two host lattices whose outer halos come from the ring's exchange
//! ([`crate::domain::HaloPlan`], overlapped with the device's bulk as seed 000 Fig. 7 shows)
//! and whose inner halos come from the device; the model's `T_mpi = LY·t_c` then enters the
//! balance.
//!
//! The split is fixed by the user ([`SplitChoice::Columns`], [`SplitChoice::HostShare`]) or
//! chosen at start-up ([`SplitChoice::Auto`]): [`calibrate`] times a probe split and each
//! side alone, and [`SplitModel::optimal_m`] picks `M*`.

mod model;

use std::ops::Range;
use std::sync::Arc;
use std::time::Instant;

pub use model::{calibrate, SplitModel};

use crate::domain::{
    export_columns, import_slab, read_storage_columns, slice_boundaries, write_storage_columns,
    GlobalSpec,
};
use crate::gpu::{ColumnBlocks, GpuContext, GpuError, GpuLattice};
use crate::layout::Layout;
use crate::solver::{Extent, Placement};
use crate::{BoundarySpec, Error, Lattice, LbmError, Model, Real, Scheme, Solver};

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
        "M = {m} host border columns cannot split a lattice of width LX = {lx} with model \
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
    /// The in-place scheme is not supported.
    #[error(
        "the host/device split supports the two-copy scheme only: the in-place (AA) scheme \
         writes into the halo columns in its pull half-step, which would need a second swap \
         per step; use Scheme::TwoCopy"
    )]
    InPlace,
    /// The device, the lattice, or a divergence.
    #[error(transparent)]
    Gpu(#[from] GpuError),
}

impl From<LbmError> for HeteroError {
    fn from(e: LbmError) -> Self {
        Self::Gpu(e.into())
    }
}

/// Whether `M` border columns per side split a lattice `lx` wide with halo `halo`: `M = 0`,
/// `2M = LX`, or both parts at least `max(H, 1)` wide.
pub fn admissible(lx: usize, halo: usize, m: usize) -> bool {
    let h = halo.max(1);
    m == 0 || 2 * m == lx || (2 * m >= h && 2 * m < lx && lx - 2 * m >= h)
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

/// The admissible `M` for `lx` and `halo`, as ranges (for messages).
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

/// The wall times of one split step's phases, in seconds (from the device submission).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StepTimes {
    /// Until the device finished the bulk.
    pub device: f64,
    /// Until the host finished the strip.
    pub host: f64,
    /// The swap of border and halo columns.
    pub swap: f64,
}

/// The device columns the swap reads (the bulk's first and last `H`) and writes (its left and
/// right halos), located once.
struct SwapPlan {
    edges: ColumnBlocks,
    halos: ColumnBlocks,
}

/// Where the columns live (one per lattice, never moved in a loop: the variants' sizes do not
/// matter).
#[allow(clippy::large_enum_variant)]
enum Parts<M: Model, L: Layout, T: Real> {
    /// `M = 0`: the whole lattice on the device.
    Device(GpuLattice<M, L, T>),
    /// `2M = LX`: the whole lattice on the host.
    Host(Lattice<M, L, T>),
    /// The borders on the host (the strip), the bulk on the device.
    Split {
        host: Lattice<M, L, T>,
        device: GpuLattice<M, L, T>,
        swap: SwapPlan,
    },
}

/// A lattice of model `M`, layout `L`, precision `T` whose border columns run on the host and
/// whose bulk runs on a device, concurrently (see the module documentation).
pub struct HeteroLattice<M: Model, L: Layout, T: Real> {
    spec: GlobalSpec<M>,
    m: usize,
    parts: Parts<M, L, T>,
    model: Option<SplitModel>,
    step: u64,
}

impl<M: Model, L: Layout, T: Real> HeteroLattice<M, L, T> {
    /// The lattice `spec` at rest, split as `choice` says between the host and the device of
    /// `ctx`. [`SplitChoice::Auto`] first calibrates the model ([`calibrate`], a few steps of
    /// a scratch lattice). Fails on the in-place scheme, an inadmissible `M`, a share outside
    /// `[0, 1]`, or whatever [`Lattice::new`] and [`GpuLattice::new`] refuse.
    pub fn new(
        ctx: &Arc<GpuContext>,
        spec: GlobalSpec<M>,
        scheme: Scheme,
        choice: SplitChoice,
    ) -> Result<Self, HeteroError> {
        if scheme != Scheme::TwoCopy {
            return Err(HeteroError::InPlace);
        }
        spec.boundaries_of::<L, T>()?;
        let (lx, halo) = (spec.lx, M::HALO);
        let (m, model) = match choice {
            SplitChoice::Columns(m) => (m, None),
            SplitChoice::HostShare(s) => {
                if !(0.0..=1.0).contains(&s) {
                    return Err(HeteroError::BadShare(s));
                }
                (nearest_admissible(lx, halo, s * lx as f64 / 2.0), None)
            }
            SplitChoice::Auto => {
                let model = calibrate::<M, L, T>(ctx, &spec, CALIBRATION_STEPS)?;
                (model.optimal_m(), Some(model))
            }
        };
        let mut lat = Self::with_columns(ctx, spec, m)?;
        lat.model = model;
        Ok(lat)
    }

    /// The lattice `spec` at rest with `m` border columns per side on the host.
    pub(crate) fn with_columns(
        ctx: &Arc<GpuContext>,
        spec: GlobalSpec<M>,
        m: usize,
    ) -> Result<Self, HeteroError> {
        let (lx, ly, halo) = (spec.lx, spec.ly, M::HALO);
        if !admissible(lx, halo, m) || 2 * m > lx {
            return Err(HeteroError::BadColumns {
                m,
                lx,
                model: M::NAME,
                halo,
                admissible: admissible_list(lx, halo),
            });
        }
        let parts = if m == 0 {
            Parts::Device(GpuLattice::new(
                ctx,
                lx,
                ly,
                spec.params.clone(),
                Scheme::TwoCopy,
                &spec.boundaries,
            )?)
        } else if 2 * m == lx {
            Parts::Host(spec.lattice()?)
        } else {
            let bc = &spec.boundaries_of::<L, T>()?;
            let mut host = Lattice::new(
                2 * m,
                ly,
                spec.params.clone(),
                Scheme::TwoCopy,
                &BoundarySpec::periodic(),
            )?;
            host.replace_boundaries(slice_boundaries(bc, ly, &[lx - m..lx, 0..m]));
            let mut bulk_bc = slice_boundaries(bc, ly, std::slice::from_ref(&(m..lx - m)));
            bulk_bc.x_periodic = false;
            let device = GpuLattice::with_boundaries(
                ctx,
                lx - 2 * m,
                ly,
                spec.params.clone(),
                Scheme::TwoCopy,
                |_| Ok(bulk_bc),
            )?;
            let (h, b) = (halo, lx - 2 * m);
            let swap = SwapPlan {
                edges: device.column_blocks(&[h..2 * h, b..b + h])?,
                halos: device.column_blocks(&[0..h, b + h..b + 2 * h])?,
            };
            Parts::Split { host, device, swap }
        };
        let mut lat = Self {
            spec,
            m,
            parts,
            model: None,
            step: 0,
        };
        lat.swap()?;
        Ok(lat)
    }

    /// The global lattice `global` (of specification `spec`) split as `choice` says: a run
    /// resumed from a checkpoint or moved from a CPU lattice.
    pub fn scatter(
        ctx: &Arc<GpuContext>,
        spec: GlobalSpec<M>,
        choice: SplitChoice,
        global: &Lattice<M, L, T>,
    ) -> Result<Self, HeteroError> {
        let (lx, ly) = (spec.lx, spec.ly);
        let d = global.dims();
        if (d.lx, d.ly) != (lx, ly) || global.scheme() != Scheme::TwoCopy {
            return Err(LbmError::Shape(format!(
                "a {}×{} {} lattice cannot be scattered as the {lx}×{ly} two-copy lattice of \
                 the specification",
                d.lx,
                d.ly,
                global.scheme().name()
            ))
            .into());
        }
        let mut lat = Self::new(ctx, spec, Scheme::TwoCopy, choice)?;
        lat.write_all(&export_columns(global, 0..lx)?)?;
        lat.step = global.steps_done();
        Ok(lat)
    }

    /// The post-collision populations of every site, `[(x·LY + y)·Q + i]`, read from both
    /// parts.
    fn read_all(&self) -> Result<Vec<T>, HeteroError> {
        let (lx, m) = (self.spec.lx, self.m);
        Ok(match &self.parts {
            Parts::Device(d) => d.read_populations()?,
            Parts::Host(h) => export_columns(h, 0..lx)?,
            Parts::Split { host, device, .. } => {
                let mut all = export_columns(host, m..2 * m)?;
                all.extend(device.read_populations()?);
                all.extend(export_columns(host, 0..m)?);
                all
            }
        })
    }

    /// Sets every site from values laid out as [`HeteroLattice::read_all`]'s, then swaps the
    /// parts' edges into each other's halos.
    fn write_all(&mut self, f: &[T]) -> Result<(), HeteroError> {
        let (lx, ly, m) = (self.spec.lx, self.spec.ly, self.m);
        let per_col = ly * M::Q;
        crate::solver::check_values(f.len(), lx * per_col, "populations")?;
        let halo = M::HALO;
        match &mut self.parts {
            Parts::Device(dev) => dev.write_columns(halo, f)?,
            Parts::Host(host) => import_slab(host, 0, f)?,
            Parts::Split { host, device, .. } => {
                let (left, rest) = f.split_at(m * per_col);
                let (bulk, right) = rest.split_at((lx - 2 * m) * per_col);
                import_slab(host, 0, right)?;
                import_slab(host, m, left)?;
                device.write_columns(halo, bulk)?;
            }
        }
        self.swap()
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

    /// The part and local column of global column `x`: `(on the host, local x)`.
    fn locate(&self, x: usize) -> (bool, usize) {
        let (lx, m) = (self.spec.lx, self.m);
        match &self.parts {
            Parts::Device(_) => (false, x),
            Parts::Host(_) => (true, x),
            Parts::Split { .. } if x < m => (true, x + m),
            Parts::Split { .. } if x >= lx - m => (true, x + m - lx),
            Parts::Split { .. } => (false, x - m),
        }
    }

    /// Sets every site to the equilibrium of `moments(x, y)` (global coordinates; see
    /// [`Lattice::set_equilibrium`]). Non-finite moments are refused part by part: after such
    /// an error the host's part may be set already, so set the lattice again.
    pub fn set_equilibrium<F>(&mut self, moments: F) -> Result<(), HeteroError>
    where
        F: Fn(usize, usize) -> Vec<f64> + Sync,
    {
        let (lx, m) = (self.spec.lx, self.m);
        match &mut self.parts {
            Parts::Device(dev) => dev.set_equilibrium(moments)?,
            Parts::Host(host) => host.set_equilibrium(moments)?,
            Parts::Split { host, device, .. } => {
                host.set_equilibrium(|p, y| moments((p + lx - m) % lx, y))?;
                device.set_equilibrium(|q, y| moments(q + m, y))?;
            }
        }
        self.swap()
    }

    /// The post-collision populations of site `(x, y)` (order of `M::VELOCITIES`).
    pub fn populations(&self, x: usize, y: usize, out: &mut [T]) -> Result<(), HeteroError> {
        if x >= self.spec.lx || y >= self.spec.ly {
            return Err(LbmError::Shape(format!(
                "site ({x}, {y}) outside the {}×{} lattice",
                self.spec.lx, self.spec.ly
            ))
            .into());
        }
        let (on_host, lx) = self.locate(x);
        match (&self.parts, on_host) {
            (Parts::Host(h), _) | (Parts::Split { host: h, .. }, true) => {
                Ok(h.populations(lx, y, out)?)
            }
            (Parts::Device(d), _) | (Parts::Split { device: d, .. }, false) => {
                Ok(d.populations(lx, y, out)?)
            }
        }
    }

    /// Total mass over the fluid sites, accumulated in `f64`.
    pub fn mass(&self) -> Result<f64, HeteroError> {
        Ok(match &self.parts {
            Parts::Device(d) => d.mass()?,
            Parts::Host(h) => h.mass(),
            Parts::Split { host, device, .. } => host.mass() + device.mass()?,
        })
    }

    /// The whole lattice gathered into a CPU [`Lattice`] (outputs, checkpoints, moments).
    pub fn to_lattice(&self) -> Result<Lattice<M, L, T>, HeteroError> {
        let mut global = self.spec.lattice::<L, T>()?;
        import_slab(&mut global, 0, &self.read_all()?)?;
        global.set_steps_done(self.step);
        Ok(global)
    }

    /// The field of moment `name` as `f64`, indexed `[x·LY + y]` (gathered: see
    /// [`Lattice::moment_field`]).
    pub fn moment_field(&self, name: &str) -> Result<Vec<f64>, HeteroError> {
        Ok(self.to_lattice()?.moment_field(name)?)
    }

    /// Checks every fluid site for NaN and an excessive Mach number (gathered: see
    /// [`Lattice::check`]).
    pub fn check(&self) -> Result<(), HeteroError> {
        Ok(self.to_lattice()?.check()?)
    }

    /// One time step: the device's bulk submitted, the host's strip updated meanwhile, then
    /// the swap.
    pub fn step(&mut self) -> Result<(), HeteroError> {
        match &mut self.parts {
            Parts::Device(d) => d.step(),
            Parts::Host(h) => h.step(),
            Parts::Split { host, device, .. } => {
                device.step();
                update_strip(host);
                self.swap()?;
            }
        }
        self.step += 1;
        Ok(())
    }

    /// `n` time steps without checks (on the device alone, recorded 128 per submission as
    /// [`GpuLattice::steps`]; the device may still be running when this returns, see
    /// [`HeteroLattice::finish`]).
    pub fn steps(&mut self, n: u64) -> Result<(), HeteroError> {
        if let Parts::Device(d) = &mut self.parts {
            d.steps(n);
            self.step += n;
            return Ok(());
        }
        (0..n).try_for_each(|_| self.step())
    }

    /// Runs `steps` steps, checking for divergence every `check_every` steps (0: only at the
    /// end) and at the end (each check gathers the lattice, see [`HeteroLattice::check`]).
    pub fn run(&mut self, steps: u64, check_every: u64) -> Result<(), HeteroError> {
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
    pub fn finish(&self) -> Result<(), HeteroError> {
        match &self.parts {
            Parts::Device(d) | Parts::Split { device: d, .. } => Ok(d.finish()?),
            Parts::Host(_) => Ok(()),
        }
    }

    /// One split step with its phases timed: the device's completion is awaited on a second
    /// thread while the host runs its strip (calibration).
    pub(crate) fn probe_step(&mut self) -> Result<StepTimes, HeteroError> {
        let Parts::Split { host, device, .. } = &mut self.parts else {
            return Err(LbmError::Shape("only a split lattice times its phases".into()).into());
        };
        let ctx = device.context().clone();
        let t0 = Instant::now();
        device.step();
        let (dev, host_s) = std::thread::scope(|s| {
            let waiter = s.spawn(|| ctx.wait().map(|()| t0.elapsed().as_secs_f64()));
            update_strip(host);
            let h = t0.elapsed().as_secs_f64();
            let dev = waiter.join().unwrap_or_else(|_| {
                Err(GpuError::Device(
                    "the thread waiting for the device panicked".into(),
                ))
            });
            (dev, h)
        });
        let t1 = Instant::now();
        self.swap()?;
        self.step += 1;
        Ok(StepTimes {
            device: dev?,
            host: host_s,
            swap: t1.elapsed().as_secs_f64(),
        })
    }

    /// The median seconds per step of the device's bulk alone and of the host's strip alone
    /// over `steps` steps each (calibration; the parts' halos go stale, so the state is
    /// scratch afterwards).
    pub(crate) fn probe_alone(&mut self, steps: u64) -> Result<(f64, f64), HeteroError> {
        let Parts::Split { host, device, .. } = &mut self.parts else {
            return Err(LbmError::Shape("only a split lattice times its parts".into()).into());
        };
        let (mut dev, mut hst) = (Vec::new(), Vec::new());
        for _ in 0..steps {
            let t0 = Instant::now();
            device.step();
            device.finish()?;
            dev.push(t0.elapsed().as_secs_f64());
            let t1 = Instant::now();
            update_strip(host);
            hst.push(t1.elapsed().as_secs_f64());
        }
        Ok((model::median(&mut dev), model::median(&mut hst)))
    }

    /// Copies each part's edge columns into the other's halos (nothing to do unsplit). Reading
    /// the bulk's edges waits for the device's step.
    fn swap(&mut self) -> Result<(), HeteroError> {
        let Parts::Split { host, device, swap } = &mut self.parts else {
            return Ok(());
        };
        let h = M::HALO;
        let w = host.dims().lx;
        let edges = device.read_blocks(&swap.edges)?;
        write_storage_columns(host, w + h, &edges[0]);
        write_storage_columns(host, 0, &edges[1]);
        let (left, right) = (
            read_storage_columns(host, w..w + h),
            read_storage_columns(host, h..2 * h),
        );
        device.write_blocks(&swap.halos, &[&left, &right])?;
        Ok(())
    }
}

/// The fused step on every column of the strip (its halos filled by the swap).
fn update_strip<M: Model, L: Layout, T: Real>(host: &mut Lattice<M, L, T>) {
    host.update_columns(0..host.dims().lx);
    host.finish_step();
}

impl<M: Model, L: Layout, T: Real> Solver for HeteroLattice<M, L, T> {
    type Model = M;
    type Real = T;

    fn extent(&self) -> Extent {
        Extent::new(&[self.spec.lx, self.spec.ly])
    }

    fn params(&self) -> &M::Params {
        &self.spec.params
    }

    fn scheme(&self) -> Scheme {
        Scheme::TwoCopy
    }

    fn layout_name(&self) -> &'static str {
        L::NAME
    }

    fn schemes() -> &'static [Scheme] {
        &[Scheme::TwoCopy]
    }

    fn steps_done(&self) -> u64 {
        self.step
    }

    fn set_steps_done(&mut self, step: u64) {
        self.step = step;
    }

    fn advance(&mut self, n: u64) -> Result<(), Error> {
        self.steps(n)?;
        Ok(self.finish()?)
    }

    fn local_planes(&self) -> Range<usize> {
        0..self.spec.lx
    }

    fn local_populations(&self) -> Result<Vec<T>, Error> {
        Ok(self.read_all()?)
    }

    fn set_local_populations(&mut self, values: &[T]) -> Result<(), Error> {
        Ok(self.write_all(values)?)
    }

    fn local_solid(&self, s: usize) -> bool {
        let ly = self.spec.ly;
        let (on_host, x) = self.locate(s / ly);
        match (&self.parts, on_host) {
            (Parts::Host(h), _) | (Parts::Split { host: h, .. }, true) => {
                h.boundaries().is_solid(&h.dims(), x, s % ly)
            }
            (Parts::Device(d), _) | (Parts::Split { device: d, .. }, false) => {
                d.boundaries().is_solid(&d.dims(), x, s % ly)
            }
        }
    }

    fn moment_field(&self, j: usize) -> Result<Option<Vec<f64>>, Error> {
        Ok(Some(self.to_lattice()?.moment_field_at(j)))
    }

    fn moment_fields(&self) -> Result<Option<Vec<Vec<f64>>>, Error> {
        Ok(Some(self.to_lattice()?).map(|g| {
            (0..M::MOMENT_NAMES.len())
                .map(|j| g.moment_field_at(j))
                .collect()
        }))
    }

    fn check(&self) -> Result<(), Error> {
        Ok(HeteroLattice::check(self)?)
    }

    fn placement(&self) -> Placement {
        match &self.parts {
            Parts::Host(_) => Placement::Host,
            Parts::Device(d) => Placement::Device(d.context().clone()),
            Parts::Split { device, .. } => Placement::Split(device.context().clone()),
        }
    }

    fn describe(&self) -> String {
        let how = if self.model.is_some() {
            "tuned at start-up"
        } else {
            "fixed"
        };
        let device = match &self.parts {
            Parts::Device(d) | Parts::Split { device: d, .. } => d.context().describe(),
            Parts::Host(_) => "no device (host only)".into(),
        };
        format!(
            "hetero: M = {} border columns on each side on the host ({:.0}% of the columns, \
             {how}), the bulk on {device}",
            self.m,
            100.0 * self.host_share(),
        )
    }
}
