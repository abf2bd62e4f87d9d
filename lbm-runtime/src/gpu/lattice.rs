//! [`GpuLattice`]: a lattice whose populations live on the device, with the API of the CPU
//! [`crate::Lattice`] (initialise, step, read populations and moments back).
//!
//! The GPU runs either scheme of the CPU. Two-copy (A-B) pull, Calore et al. 2019 §4: the state between
//! steps is the post-collision populations `f*` in one copy, in the layout chosen at run time — the same
//! index formula as the CPU ([`super::layout`]), halo columns included, so border columns can
//! be exchanged with a host part of the slab ([`GpuLattice::read_column`],
//! [`GpuLattice::write_column`]); a step is `halo` (x periodic) then `fused` (or `propagate`,
//! `bc`, `collide`). In place (AA), in half the memory: even steps are `halo`, `aa_pull`,
//! `fold`, odd steps `aa_local`, and the logical view of the odd state follows the CPU's map
//! ([`crate::lattice::stored_slot`]). Steps are recorded into command buffers and submitted
//! without waiting; only reads wait.

mod lines;

pub use lines::SiteBoxes;

use crate::parallel;
use std::collections::HashMap;
use std::marker::PhantomData;
use std::sync::{Arc, OnceLock};
use std::time::Instant;

use super::bc::{self, BcTables};
use super::bounds::{self, Bound};
use super::layout::AffineLayout;
use super::shader::{self, Entry, ShaderSpec, Window};
use super::workgroup::{Grid, Workgroups, FIXED, ROUND_STEPS};
use super::{GpuContext, GpuError};
use crate::boundary::{Boundaries, BoundarySpec};
use crate::domain::GlobalSpec;
use crate::lattice::{check_size, stored_slot};
use crate::layout::{Dims, LayoutKind};
use crate::model::{divergence, moment_named};
use crate::{default_max_mach, storage, Kernel, LbmError, Model, Real, Scheme};

/// Steps recorded per command buffer.
const STEPS_PER_SUBMIT: u64 = 128;
/// Bytes read back per staging buffer.
const STAGING_BYTES: u64 = 64 << 20;
/// Storage bindings besides the populations: consts, tables, moments output.
const EXTRA_STORAGE: u32 = 3;

/// A lattice of model `M` and precision `T` on a GPU, in a layout chosen at run time
/// ([`LayoutKind`]: the shaders are generated for it, so nothing here is compiled per layout).
pub struct GpuLattice<M: Model, T: Real> {
    ctx: Arc<GpuContext>,
    d: Dims,
    params: M::Params,
    bc: Boundaries<T>,
    spec: ShaderSpec,
    source: String,
    /// The copies of the populations (two, or one in place), each split across bindings.
    copies: Vec<Vec<wgpu::Buffer>>,
    mout: wgpu::Buffer,
    mout_cols: usize,
    /// Values `mout` holds.
    mout_len: usize,
    /// Parameters, boundary values and the fields' per-site values ([`ShaderSpec::fields`]).
    consts: wgpu::Buffer,
    /// The fields' per-site values, as uploaded: `[j·sites + x·PLANE + s]`.
    fields: Vec<f64>,
    /// Whether the fields were given values per site ([`GpuLattice::set_field`]).
    site_fields: bool,
    ctl: wgpu::Buffer,
    /// One bind group per copy holding the state.
    groups: Vec<wgpu::BindGroup>,
    /// The pipeline of each entry point of the scheme, by entry, window and workgroup size
    /// (the site kernels' at each size tried so far, the others' at [`FIXED`]).
    pipelines: HashMap<(Entry, Window, u32), wgpu::ComputePipeline>,
    /// The module and layout the pipelines are created from.
    kernels: Kernels,
    /// The dispatch grid and the workgroup sizes it allows.
    grid: Grid,
    /// The tuning of the site kernels' workgroup size ([`super::workgroup`]).
    workgroups: Workgroups,
    /// The site kernels' workgroup size in use (its pipelines exist).
    size: u32,
    /// Why the shader keeps its runtime bounds checks (`None`: proven in range, dropped).
    bounds_checks: Option<String>,
    /// The layout's affine index, to find the population of a storage index.
    lay: AffineLayout,
    /// The kernels moving boxes of sites ([`SiteBoxes`]), made with the first plan.
    lines: OnceLock<lines::LineKernels>,
    /// The rest populations `w_i`, the shifts of a compact precision's stored elements.
    rest: Vec<T>,
    /// The copy holding the state.
    cur: usize,
    /// In-place scheme: the last half-step was a pull (the state is "odd").
    odd: bool,
    step: u64,
    max_mach: f64,
    _m: PhantomData<M>,
}

impl<M: Model, T: Real> std::fmt::Debug for GpuLattice<M, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "GpuLattice({}, {}×{}×{}, {}, step {}, {} binding(s) per copy, on {})",
            what::<M, T>(self.lay.kind),
            self.d.lx,
            self.d.ly,
            self.d.lz,
            self.spec.scheme.name(),
            self.step,
            self.spec.chunks,
            self.ctx.describe()
        )
    }
}

/// Sizes derived from the lattice and the device limits.
struct Plan {
    chunk: u64,
    chunks: usize,
    grid: Grid,
    mout_cols: usize,
}

impl<M: Model, T: Real> GpuLattice<M, T> {
    /// A lattice of `lx × ly` sites of a 2-D model at rest on the device of `ctx`, its
    /// populations stored in `layout`.
    ///
    /// Fails before touching the device when the size does not fit the layout or the model
    /// (as [`crate::Lattice::new`]), the parameters or boundaries are invalid, `T` is `f64` on
    /// an adapter without `SHADER_F64`, or the lattice exceeds the device's limits (one copy
    /// of the populations in place, two for the two-copy scheme).
    pub fn new(
        ctx: &Arc<GpuContext>,
        layout: LayoutKind,
        lx: usize,
        ly: usize,
        params: M::Params,
        scheme: Scheme,
        boundaries: &BoundarySpec,
    ) -> Result<Self, GpuError> {
        if M::D != 2 {
            return Err(LbmError::Shape(format!(
                "model {} is three-dimensional: give its third side with \
                 GpuLattice::with_size(ctx, layout, [lx, ly, lz], …)",
                M::NAME
            ))
            .into());
        }
        Self::with_size(ctx, layout, [lx, ly, 1], params, scheme, boundaries)
    }

    /// The global lattice of `spec` at rest on the device of `ctx`, in `layout`, run in
    /// `scheme`; fails as [`GpuLattice::new`].
    pub fn of_spec(
        ctx: &Arc<GpuContext>,
        layout: LayoutKind,
        spec: &GlobalSpec<M>,
        scheme: Scheme,
    ) -> Result<Self, GpuError> {
        let params = spec.params.clone();
        Self::with_size(ctx, layout, spec.size(), params, scheme, &spec.boundaries)
    }

    /// A lattice of `size = [LX, LY, LZ]` sites at rest on the device of `ctx` (`LZ = 1` for
    /// a 2-D model); fails as [`GpuLattice::new`].
    pub fn with_size(
        ctx: &Arc<GpuContext>,
        layout: LayoutKind,
        size: [usize; 3],
        params: M::Params,
        scheme: Scheme,
        boundaries: &BoundarySpec,
    ) -> Result<Self, GpuError> {
        Self::with_boundaries(ctx, layout, size, params, scheme, false, |d, lay| {
            Boundaries::compile_with::<M>(boundaries, d, &|d, y| lay.cluster_lane(d, y))
        })
    }

    /// As [`GpuLattice::new`], with the boundaries compiled by `compile` once the size is
    /// checked (a part of a larger lattice takes its slice of the global boundaries, see
    /// [`crate::hetero`]); a `slab` (whose halos the host fills) can also submit a step as its
    /// bulk and its border ([`GpuLattice::submit_window`], when `lx ≥ 2H`) and fold in place
    /// what its neighbours pushed ([`GpuLattice::fold_in`]).
    pub(crate) fn with_boundaries(
        ctx: &Arc<GpuContext>,
        layout: LayoutKind,
        size: [usize; 3],
        params: M::Params,
        scheme: Scheme,
        slab: bool,
        compile: impl FnOnce(&Dims, &AffineLayout) -> Result<Boundaries<T>, LbmError>,
    ) -> Result<Self, GpuError> {
        check_size::<M>(size, layout)?;
        M::validate(&params).map_err(LbmError::from)?;
        if size_of::<T>() == 8 && !ctx.supports_f64() {
            return Err(GpuError::NoF64 {
                adapter: ctx.info().name.clone(),
            });
        }
        let d = Dims::of::<M>(size);
        let lay = AffineLayout::of(layout, &d)?;
        let copies = match scheme {
            Scheme::TwoCopy => 2,
            Scheme::InPlace => 1,
        };
        let cap = capacity::<M, T>(ctx, &d, copies)?;
        let bc = compile(&d, &lay)?;
        let mut tables = bc::pack::<M, T>(&d, &bc, &params);
        // The fields, uniform until set: their values in the parameters.
        let fields: Vec<f64> = crate::lattice::uniform_fields::<M>(&params)
            .into_iter()
            .flat_map(|v| std::iter::repeat_n(v, d.sites()))
            .collect();
        let fields_at = (!fields.is_empty()).then_some(tables.consts.len());
        tables.consts.extend(fields.iter().map(|&v| T::from_f64(v)));
        let plan = plan::<M, T>(ctx, &d, &tables, &cap)?;
        // Columns of moments, and at least one site's pre-collision populations; past them,
        // in place, the populations held before each half-step.
        let mout_vals = (plan.mout_cols * d.plane() * M::MOMENT_NAMES.len()).max(M::Q);
        let held = if scheme == Scheme::InPlace {
            tables.held
        } else {
            0
        };
        let spec = ShaderSpec {
            dims: d,
            params: bc::param_count::<M>(&params),
            chunk: plan.chunk,
            chunks: plan.chunks,
            row: plan.grid.row,
            bc: tables.shape,
            scheme,
            slab,
            fields: fields_at,
            packed_f16: !ctx.supports_f16(),
            held_at: mout_vals,
        };
        let source = shader::compose::<M, T>(&spec, &lay);
        shader::validate(&source, size_of::<T>() == 8, &what::<M, T>(layout))?;
        let dev = Device { ctx, spec: &spec };
        let copies: Vec<_> = (0..copies).map(|_| dev.population_copy::<T>()).collect();
        let consts = dev.init_buffer("consts", bytemuck::cast_slice(&tables.consts), false);
        let tables_buf = dev.init_buffer("tables", bytemuck::cast_slice(&tables.tables), false);
        let mout_bytes = ((mout_vals + held) * size_of::<T>()) as u64;
        let bound = Bound {
            chunk: plan.chunk,
            copy: d.len() as u64,
            mout: mout_vals as u64,
            mout_cols: plan.mout_cols as u64,
            held: held as u64,
        };
        let rest = storage::rest_values::<T>(M::WEIGHTS);
        let bounds_checks = match bounds::prove::<M, T>(&spec, &lay, &tables, &bound) {
            Err(why) => Some(why),
            Ok(()) if ctx.keeps_bounds_checks() => Some("kept on request".into()),
            Ok(()) => None,
        };
        let mout = dev.buffer("moments", mout_bytes, wgpu::BufferUsages::COPY_SRC);
        let ctl = dev.init_buffer("ctl", &[0u8; 16], true);
        let layout = dev.bind_group_layout();
        // Group `p` binds the copy holding the state as A (and the other one as B).
        let groups = (0..copies.len())
            .map(|p| {
                let pops: Vec<&wgpu::Buffer> =
                    copies[p..].iter().chain(&copies[..p]).flatten().collect();
                dev.bind_group(&layout, &pops, [&consts, &tables_buf, &mout], &ctl)
            })
            .collect();
        let kernels = if bounds_checks.is_some() {
            dev.kernels(&layout, &source)
        } else {
            // SAFETY: the contract of `kernels_unchecked` holds. `bounds_checks` is `None` only
            // when `bounds::prove` accepted, above, `spec` and `lay` (of which `source` is
            // composed) with `tables` and `bound`, and the context does not keep the checks.
            // The bindings of `groups` are what `bound` describes: each copy is
            // `population_copy`'s `spec.chunks` buffers of `spec.chunk` values but the last
            // (`spec.chunk == bound.chunk` and `d.len() == bound.copy` are checked by `prove`),
            // `consts` and `tables_buf` hold `tables.consts` and `tables.tables`, `mout` holds
            // `mout_vals == bound.mout` values. Afterwards `tables` is never rewritten,
            // `consts` only in place (`set_field`), and `ctl.y` stays within `mout_cols`
            // (`moment_pass`'s assertion) or, for the records of `pre_collision_pass`,
            // within `mout_vals / Q` and `ctl.x + ctl.y` within the records (its assertion).
            unsafe { dev.kernels_unchecked(&layout, &source) }
        };
        let pipelines = spec
            .entry_points()
            .into_iter()
            .map(|(e, w)| ((e, w, FIXED), kernels.pipeline(ctx, e, w, FIXED)))
            .collect();
        let workgroups = Workgroups::new(&plan.grid);
        let lat = Self {
            ctx: ctx.clone(),
            d,
            params,
            bc,
            spec,
            source,
            copies,
            mout,
            mout_cols: plan.mout_cols,
            mout_len: mout_vals,
            consts,
            fields,
            site_fields: false,
            ctl,
            groups,
            pipelines,
            kernels,
            grid: plan.grid,
            workgroups,
            size: FIXED,
            bounds_checks,
            lay,
            lines: OnceLock::new(),
            rest,
            cur: 0,
            odd: false,
            step: 0,
            max_mach: default_max_mach::<M>(),
            _m: PhantomData,
        };
        let rest = lat.rest_state();
        for copy in 0..lat.copies.len() {
            lat.upload(copy, 0, &rest)?;
        }
        lat.ctx.wait()?;
        Ok(lat)
    }

    /// Gives field `name` (a parameter the model declares `field`) a value per site, indexed as
    /// [`GpuLattice::moment_field`], as [`crate::Lattice::set_field`] does on the host; the
    /// values are uploaded at once. Fails before changing anything on an unknown name, a wrong
    /// length or a non-finite value.
    pub fn set_field(&mut self, name: &str, values: &[f64]) -> Result<(), GpuError> {
        let j = crate::lattice::checked_field::<M>(name, values, (self.d.lx, self.d.plane()))?;
        let n = self.d.sites();
        self.fields[j * n..(j + 1) * n].copy_from_slice(values);
        self.site_fields = true;
        let at = self
            .spec
            .fields
            .expect("a model with fields has a field region")
            + j * n;
        let vals: Vec<T> = values.iter().map(|&v| T::from_f64(v)).collect();
        self.ctx.queue.write_buffer(
            &self.consts,
            (at * size_of::<T>()) as u64,
            bytemuck::cast_slice(&vals),
        );
        Ok(())
    }

    /// The values of field `name` per site, as [`GpuLattice::set_field`] takes them.
    pub fn field(&self, name: &str) -> Result<Vec<f64>, GpuError> {
        let j = crate::lattice::field_index::<M>(name)?;
        let n = self.d.sites();
        Ok(self.fields[j * n..(j + 1) * n].to_vec())
    }

    /// Whether the fields were given values per site ([`GpuLattice::set_field`]).
    pub fn has_site_fields(&self) -> bool {
        self.site_fields
    }

    /// The parameters of site `(x, s)`, with the site's field values.
    fn site_params(&self, x: usize, s: usize) -> M::Params {
        if M::FIELDS.is_empty() {
            return self.params.clone();
        }
        let (n, at) = (self.d.sites(), x * self.d.plane() + s);
        let own: Vec<f64> = (0..M::FIELDS.len())
            .map(|j| self.fields[j * n + at])
            .collect();
        M::with_fields(&self.params, &own)
    }

    /// The lattice's shape.
    pub fn dims(&self) -> Dims {
        self.d
    }

    /// The model parameters.
    pub fn params(&self) -> &M::Params {
        &self.params
    }

    /// Steps done so far.
    pub fn steps_done(&self) -> u64 {
        self.step
    }

    /// The streaming scheme.
    pub fn scheme(&self) -> Scheme {
        self.spec.scheme
    }

    /// In the AA scheme, whether the state is the odd one (after a pull half-step).
    pub(crate) fn is_odd(&self) -> bool {
        self.odd
    }

    /// The compiled boundary conditions.
    pub fn boundaries(&self) -> &Boundaries<T> {
        &self.bc
    }

    /// The device context.
    pub fn context(&self) -> &Arc<GpuContext> {
        &self.ctx
    }

    /// The dispatch grid of the site kernels over all sites at their workgroup size in use:
    /// workgroups in x and in y.
    pub fn site_grid(&self) -> (u32, u32) {
        self.grid.dispatch(self.d.sites(), self.size)
    }

    /// The site kernels' workgroup size in use: the tuned one once
    /// [`GpuLattice::workgroup_tuned`], until then that of the last timed round (64 before
    /// the first; [`super::workgroup`]).
    pub fn workgroup_size(&self) -> u32 {
        self.size
    }

    /// Whether the site kernels' workgroup size has been chosen by timing.
    pub fn workgroup_tuned(&self) -> bool {
        self.workgroups.chosen().is_some()
    }

    /// Steps in timed rounds until the site kernels' workgroup size is chosen, and returns
    /// it: at most three rounds of [`ROUND_STEPS`] steps per candidate, each a real step of
    /// the run ([`GpuLattice::steps_done`] counts them). What a benchmark calls before it
    /// times; a run tunes in its first calls of [`GpuLattice::steps`] anyway.
    pub fn tune_workgroup(&mut self) -> u32 {
        while !self.workgroup_tuned() {
            self.steps(ROUND_STEPS);
        }
        self.size
    }

    /// The workgroup sizes the tuning tries on this lattice.
    pub fn workgroup_candidates(&self) -> &[u32] {
        self.workgroups.sizes()
    }

    /// Storage bindings each copy of the populations is split across.
    pub fn bindings_per_copy(&self) -> usize {
        self.spec.chunks
    }

    /// Why this lattice's shader keeps its runtime bounds checks: `None` when [`bounds::prove`]
    /// showed its indexing in range and the module was created without them.
    pub fn bounds_checks(&self) -> Option<&str> {
        self.bounds_checks.as_deref()
    }

    /// The composed WGSL source of this lattice's kernels.
    pub fn shader_source(&self) -> &str {
        &self.source
    }

    /// The layout of the populations.
    pub fn layout(&self) -> LayoutKind {
        self.lay.kind
    }

    /// Bytes of population storage on the device (both copies, or the one in place).
    pub fn storage_bytes(&self) -> usize {
        self.copies.len() * self.d.len() * T::BYTES
    }

    /// Sets the Mach number beyond which [`GpuLattice::check`] reports divergence.
    pub fn set_max_mach(&mut self, mach: f64) {
        self.max_mach = mach;
    }

    /// Every value at rest, `f_i = w_i`, in storage order.
    fn rest_state(&self) -> Vec<T> {
        let d = &self.d;
        let mut v = vec![T::default(); d.len()];
        for line in 0..d.nlines() {
            for y in 0..d.ly {
                for (i, w) in M::WEIGHTS.iter().enumerate() {
                    v[self.lay.line_index(d, i, line, y)] = T::from_f64(*w);
                }
            }
        }
        v
    }

    // ---------------------------------------------------------------- stepping

    /// Records and submits one time step (does not wait).
    pub fn step(&mut self) {
        self.steps(1);
    }

    /// Records and submits `n` time steps, 128 per command buffer, without waiting for the
    /// device — except while the site kernels' workgroup size is tuned: then runs of
    /// [`ROUND_STEPS`] steps are each timed at a candidate size, waiting before and after
    /// ([`super::workgroup`]; the results do not depend on the size).
    pub fn steps(&mut self, n: u64) {
        let mut left = n;
        while left > 0 {
            let timed = self.workgroups.tuning() && left >= ROUND_STEPS;
            let batch = if timed {
                self.use_size(self.workgroups.current());
                if !self.ctx.drain() {
                    self.give_up_tuning();
                }
                ROUND_STEPS
            } else {
                left.min(STEPS_PER_SUBMIT)
            };
            let t0 = Instant::now();
            self.submit_steps(batch);
            if timed && self.workgroups.tuning() {
                if self.ctx.drain() {
                    self.workgroups.record(batch, t0.elapsed().as_secs_f64());
                    if let Some(size) = self.workgroups.chosen() {
                        self.size = size;
                    }
                } else {
                    self.give_up_tuning();
                }
            }
            left -= batch;
        }
        self.step += n;
    }

    /// Records and submits `n ≤ STEPS_PER_SUBMIT` steps in one command buffer.
    fn submit_steps(&mut self, n: u64) {
        let mut enc = self.encoder();
        {
            let mut pass = enc.begin_compute_pass(&Default::default());
            for _ in 0..n {
                self.record_step(&mut pass);
            }
        }
        self.ctx.queue.submit([enc.finish()]);
    }

    /// Ends the workgroup tuning at the first candidate, whose pipelines exist (the device
    /// could not be polled; its error reaches the next read).
    fn give_up_tuning(&mut self) {
        self.workgroups.give_up();
        self.size = FIXED;
    }

    /// Runs the site kernels at workgroup `size` from now on, creating their pipelines the
    /// first time.
    fn use_size(&mut self, size: u32) {
        for (e, w) in self.spec.entry_points() {
            if e.is_site_kernel() && !self.pipelines.contains_key(&(e, w, size)) {
                let p = self.kernels.pipeline(&self.ctx, e, w, size);
                self.pipelines.insert((e, w, size), p);
            }
        }
        self.size = size;
    }

    /// Records one step and moves to the state after it.
    fn record_step(&mut self, pass: &mut wgpu::ComputePass<'_>) {
        let periodic = self.bc.x_periodic();
        let site = self.site_kernel();
        if periodic && site != Entry::AaLocal {
            self.dispatch(pass, Entry::Halo);
        }
        self.hold(pass, false);
        self.dispatch(pass, site);
        if periodic && site == Entry::AaPull {
            self.dispatch(pass, Entry::Fold);
        }
        self.advance();
    }

    /// The site kernel of the next step: the fused step, or the AA half-step due.
    fn site_kernel(&self) -> Entry {
        match self.spec.scheme {
            Scheme::TwoCopy => Entry::Fused,
            Scheme::InPlace if !self.odd => Entry::AaPull,
            Scheme::InPlace => Entry::AaLocal,
        }
    }

    /// Moves to the state after a step: the other copy, or the other AA parity.
    fn advance(&mut self) {
        match self.spec.scheme {
            Scheme::TwoCopy => self.cur = 1 - self.cur,
            Scheme::InPlace => self.odd = !self.odd,
        }
    }

    /// Whether a step can be submitted as its bulk and its border
    /// ([`GpuLattice::submit_window`]).
    pub(crate) fn has_windows(&self) -> bool {
        self.spec.has_windows()
    }

    /// Submits the next step's site kernel over the sites of `w` without waiting and without
    /// ending the step ([`GpuLattice::end_step`] does, once every site is submitted). For a
    /// lattice whose halo columns the host fills (a slab): no periodic halo or fold is
    /// dispatched, and without windows ([`GpuLattice::has_windows`]) only
    /// [`Window::All`] is valid.
    pub(crate) fn submit_window(&self, w: Window) {
        let e = self.site_kernel();
        let d = &self.d;
        let cols = match w {
            Window::All => d.lx,
            Window::Bulk => d.lx - 2 * d.halo,
            Window::Border => 2 * d.halo,
        };
        let mut enc = self.encoder();
        {
            let mut pass = enc.begin_compute_pass(&Default::default());
            // The border window follows the bulk's, which held the populations: only those
            // in the halos, which have come since, are held again.
            self.hold(&mut pass, w == Window::Border);
            self.dispatch_window(&mut pass, e, w, cols * d.plane());
        }
        self.ctx.queue.submit([enc.finish()]);
    }

    /// After an AA pull half-step of a slab, moves what the neighbours pushed across the cuts
    /// into the border columns: `pushed[LEFT]`, the left neighbour's pushed right halo, and
    /// `pushed[RIGHT]`, the right neighbour's left halo, in the layout of `halos` (blocks
    /// `[left halo, right halo]`), are written into the opposite halo columns and
    /// [`Entry::FoldIn`] moves them (an empty side is left alone). A slab in place only.
    pub(crate) fn fold_in(
        &mut self,
        halos: &[SiteBoxes; 2],
        pushed: [&[T]; 2],
    ) -> Result<(), GpuError> {
        let [left, right] = pushed;
        if !left.is_empty() {
            self.write_blocks(&halos[1], &[left])?;
        }
        if !right.is_empty() {
            self.write_blocks(&halos[0], &[right])?;
        }
        let sides = u32::from(!left.is_empty()) | u32::from(!right.is_empty()) << 1;
        self.ctx
            .queue
            .write_buffer(&self.ctl, 0, bytemuck::cast_slice(&[0, 0, sides, 0u32]));
        let mut enc = self.encoder();
        {
            let mut pass = enc.begin_compute_pass(&Default::default());
            self.dispatch(&mut pass, Entry::FoldIn);
        }
        self.ctx.queue.submit([enc.finish()]);
        Ok(())
    }

    /// Periodic in x, the lattice is its own neighbour there: submits the fill of its halo
    /// columns from its opposite borders (`fold` false), or the move of what an AA pull
    /// half-step pushed into them to the opposite borders (`fold` true), as a step does
    /// ([`Entry::Halo`], [`Entry::Fold`]). With walls in x, nothing: no link reads across.
    pub(crate) fn wrap_x(&self, fold: bool) {
        if !self.bc.x_periodic() {
            return;
        }
        let mut enc = self.encoder();
        {
            let mut pass = enc.begin_compute_pass(&Default::default());
            self.dispatch(&mut pass, if fold { Entry::Fold } else { Entry::Halo });
        }
        self.ctx.queue.submit([enc.finish()]);
    }

    /// Ends a step submitted by windows.
    pub(crate) fn end_step(&mut self) {
        self.advance();
        self.step += 1;
    }

    /// Runs `steps` steps, checking for divergence every `check_every` steps (0: only at the
    /// end) and at the end (each check reads the moments back).
    pub fn run(&mut self, steps: u64, check_every: u64) -> Result<(), GpuError> {
        let every = if check_every == 0 { steps } else { check_every };
        let mut done = 0;
        while done < steps {
            let n = every.min(steps - done);
            self.steps(n);
            done += n;
            if done < steps {
                self.check()?;
            }
        }
        self.check()
    }

    /// One time step as Calore et al.'s separate kernels: propagate, bc, collide (two-copy scheme
    /// only).
    pub fn step_split(&mut self) -> Result<(), GpuError> {
        for k in [Kernel::Propagate, Kernel::Bc, Kernel::Collide] {
            self.run_kernel(k)?;
        }
        self.cur = 1 - self.cur;
        self.step += 1;
        Ok(())
    }

    /// Submits one kernel of the two-copy pipeline without finishing the step (benchmarks;
    /// `Fused` is a whole [`GpuLattice::step`]). The separate kernels need the two-copy scheme.
    pub fn run_kernel(&mut self, k: Kernel) -> Result<(), GpuError> {
        if k == Kernel::Fused {
            self.step();
            return Ok(());
        }
        if self.spec.scheme != Scheme::TwoCopy {
            return Err(LbmError::Shape(
                "the separate propagate/bc/collide kernels need the two-copy scheme".into(),
            )
            .into());
        }
        let entries: &[Entry] = match k {
            Kernel::Fused => unreachable!("handled above"),
            Kernel::Propagate if self.bc.x_periodic() => &[Entry::Halo, Entry::Propagate],
            Kernel::Propagate => &[Entry::Propagate],
            Kernel::Bc => &[Entry::Bc],
            Kernel::Collide => &[Entry::Collide],
        };
        let mut enc = self.encoder();
        {
            let mut pass = enc.begin_compute_pass(&Default::default());
            for e in entries {
                self.dispatch(&mut pass, *e);
            }
        }
        self.ctx.queue.submit([enc.finish()]);
        Ok(())
    }

    /// Waits until the device has finished all submitted work.
    pub fn finish(&self) -> Result<(), GpuError> {
        self.ctx.wait()
    }

    fn encoder(&self) -> wgpu::CommandEncoder {
        self.ctx.device.create_command_encoder(&Default::default())
    }

    /// Threads an entry point runs (`n`: the columns of a moments pass, the records of a
    /// pre-collision pass).
    fn threads(&self, e: Entry, n: usize) -> usize {
        let d = &self.d;
        match e {
            Entry::Halo | Entry::Fold | Entry::FoldIn => 2 * d.halo * d.plane(),
            Entry::Bc => self.spec.bc.sites,
            Entry::Moments | Entry::MomentsOdd => n * d.plane(),
            Entry::PreCollision | Entry::PreCollisionOdd => n,
            Entry::HoldEven | Entry::HoldOdd => self.spec.bc.holds,
            Entry::HoldHaloEven => self.spec.bc.halo_holds[0],
            Entry::HoldHaloOdd => self.spec.bc.halo_holds[1],
            Entry::Propagate | Entry::Collide | Entry::Fused | Entry::AaPull | Entry::AaLocal => {
                d.sites()
            }
        }
    }

    fn dispatch(&self, pass: &mut wgpu::ComputePass<'_>, e: Entry) {
        self.dispatch_n(pass, e, self.threads(e, 0));
    }

    /// In place, before what reads the state's interpolated links (a half-step, or a pass of
    /// moments or pre-collision populations): holds the populations they read beyond their
    /// sites' own slots, from the current state — or only those in halo columns (`halos`:
    /// before a slab's border, once its halos came).
    fn hold(&self, pass: &mut wgpu::ComputePass<'_>, halos: bool) {
        if self.spec.scheme == Scheme::InPlace && self.spec.bc.holds > 0 {
            let e = match (halos, self.odd) {
                (false, false) => Entry::HoldEven,
                (false, true) => Entry::HoldOdd,
                (true, false) => Entry::HoldHaloEven,
                (true, true) => Entry::HoldHaloOdd,
            };
            self.dispatch(pass, e);
        }
    }

    /// Dispatches `n` threads of `e` on the current copy (see [`GpuLattice::dispatch_window`]).
    fn dispatch_n(&self, pass: &mut wgpu::ComputePass<'_>, e: Entry, n: usize) {
        self.dispatch_window(pass, e, Window::All, n);
    }

    /// Dispatches `n` threads of window `w` of `e` on the current copy, as a 2-D grid of rows
    /// of `spec.row` threads (`max_compute_workgroups_per_dimension` is respected by the plan),
    /// in workgroups of the size in use for a site kernel and of [`FIXED`] otherwise.
    fn dispatch_window(&self, pass: &mut wgpu::ComputePass<'_>, e: Entry, w: Window, n: usize) {
        let size = if e.is_site_kernel() { self.size } else { FIXED };
        let (gx, gy) = self.grid.dispatch(n, size);
        if gx == 0 {
            return;
        }
        let pipeline = self
            .pipelines
            .get(&(e, w, size))
            .expect("the shader of the lattice's scheme has every entry it dispatches");
        pass.set_pipeline(pipeline);
        pass.set_bind_group(0, &self.groups[self.cur], &[]);
        pass.dispatch_workgroups(gx, gy, 1);
    }

    // ---------------------------------------------------------------- transfers

    /// Stored elements per 4-byte word: buffer copies and writes move whole words
    /// (`wgpu::COPY_BUFFER_ALIGNMENT`), so a compact precision's transfers widen to them.
    const WORD: u64 = if T::BYTES < 4 { 4 / T::BYTES as u64 } else { 1 };

    /// `[start, start + len)` widened to whole words: `(aligned start, aligned length)`.
    fn widened(start: u64, len: u64) -> (u64, u64) {
        let s0 = start - start % Self::WORD;
        (s0, (start + len).next_multiple_of(Self::WORD) - s0)
    }

    /// Writes `vals` at storage index `start` of copy `copy`, split at binding boundaries (as
    /// the stored elements of the slots' populations, [`storage::stored`]). Where `vals` does
    /// not fill its first or last word, the other half is read first and written back as it
    /// was.
    fn upload(&self, copy: usize, start: u64, vals: &[T]) -> Result<(), GpuError> {
        let len = vals.len() as u64;
        let (s0, l0) = Self::widened(start, len);
        let mut elems = Vec::with_capacity(l0 as usize);
        if s0 < start {
            elems.extend(self.read_stored(copy, &[(s0, start - s0)])?);
        }
        elems.extend(
            vals.iter()
                .zip(start..)
                .map(|(&v, g)| storage::stored(v, &self.rest, self.lay.population(g, M::Q))),
        );
        if s0 + l0 > start + len {
            elems.extend(self.read_stored(copy, &[(start + len, s0 + l0 - start - len)])?);
        }
        for (c, off, range) in self.pieces(s0, l0) {
            let bytes: &[u8] = bytemuck::cast_slice(&elems[range]);
            self.ctx
                .queue
                .write_buffer(&self.copies[copy][c], off * T::BYTES as u64, bytes);
        }
        Ok(())
    }

    /// Splits `[start, start + len)` at binding boundaries: `(binding, offset in it, range of
    /// the caller's slice)`.
    fn pieces(&self, start: u64, len: u64) -> Vec<(usize, u64, std::ops::Range<usize>)> {
        let chunk = self.spec.chunk;
        let mut out = Vec::new();
        let mut at = start;
        while at < start + len {
            let c = at / chunk;
            let off = at % chunk;
            let n = (chunk - off).min(start + len - at);
            let r = (at - start) as usize..(at - start + n) as usize;
            out.push((c as usize, off, r));
            at += n;
        }
        out
    }

    /// Reads the storage ranges `(start, len)` of the current copy, concatenated, as values
    /// ([`storage::value`] of each slot's population).
    fn download(&self, ranges: &[(u64, u64)]) -> Result<Vec<T>, GpuError> {
        let elems = self.read_stored(self.cur, ranges)?;
        let slots = ranges.iter().flat_map(|&(start, len)| start..start + len);
        Ok(elems
            .into_iter()
            .zip(slots)
            .map(|(e, g)| storage::value(e, &self.rest, self.lay.population(g, M::Q)))
            .collect())
    }

    /// The stored elements of the storage ranges `(start, len)` of copy `copy`, concatenated
    /// (each read as whole words, [`GpuLattice::widened`], and cut back).
    fn read_stored(&self, copy: usize, ranges: &[(u64, u64)]) -> Result<Vec<T::Stored>, GpuError> {
        let wide: Vec<(u64, u64)> = ranges.iter().map(|&(s, l)| Self::widened(s, l)).collect();
        let elems = self.read_words(copy, &wide)?;
        let mut out = Vec::with_capacity(ranges.iter().map(|r| r.1 as usize).sum());
        let mut at = 0;
        for (&(start, len), &(s0, l0)) in ranges.iter().zip(&wide) {
            let skip = (start - s0) as usize;
            out.extend_from_slice(&elems[at + skip..at + skip + len as usize]);
            at += l0 as usize;
        }
        Ok(out)
    }

    /// The stored elements of the word-aligned storage ranges `(start, len)` of copy `copy`.
    fn read_words(&self, copy: usize, ranges: &[(u64, u64)]) -> Result<Vec<T::Stored>, GpuError> {
        let mut pieces = Vec::new();
        for &(start, len) in ranges {
            pieces.extend(
                self.pieces(start, len)
                    .into_iter()
                    .map(|(c, off, r)| (c, off, r.len() as u64)),
            );
        }
        let mut out = Vec::new();
        let mut group = Vec::new();
        let mut bytes = 0;
        for p in pieces {
            let b = p.2 * T::BYTES as u64;
            if bytes + b > STAGING_BYTES && !group.is_empty() {
                out.extend(self.read_group(copy, &group, bytes)?);
                group.clear();
                bytes = 0;
            }
            group.push(p);
            bytes += b;
        }
        if !group.is_empty() {
            out.extend(self.read_group(copy, &group, bytes)?);
        }
        Ok(out)
    }

    /// Copies the pieces `(binding, offset, len)` of copy `copy` into one staging buffer and
    /// maps it.
    fn read_group(
        &self,
        copy: usize,
        group: &[(usize, u64, u64)],
        bytes: u64,
    ) -> Result<Vec<T::Stored>, GpuError> {
        let staging = self.ctx.staging(bytes);
        let mut enc = self.encoder();
        let mut at = 0;
        let sz = T::BYTES as u64;
        for &(c, off, len) in group {
            enc.copy_buffer_to_buffer(&self.copies[copy][c], off * sz, &staging, at, len * sz);
            at += len * sz;
        }
        self.ctx.queue.submit([enc.finish()]);
        self.ctx.map_read(&staging)
    }

    // ---------------------------------------------------------------- populations

    /// Checks that `(x, s)` is a site: `x < LX`, the plane site `s = z·LY + y < LY·LZ`.
    /// The populations' layout, as the shaders index it.
    pub(crate) fn affine_layout(&self) -> &AffineLayout {
        &self.lay
    }

    fn check_site(&self, x: usize, s: usize) -> Result<(), GpuError> {
        let d = &self.d;
        if x >= d.lx || s >= d.plane() {
            let (y, z) = d.yz(s);
            return Err(LbmError::Shape(format!(
                "site ({x}, {y}, {z}) outside the {}×{}×{} lattice",
                d.lx, d.ly, d.lz
            ))
            .into());
        }
        Ok(())
    }

    /// Storage indices of `f*_i(x, y)` in the current state (either scheme), `i` in order.
    fn slots(&self, x: usize, y: usize) -> impl Iterator<Item = usize> + '_ {
        let lay = &self.lay;
        let slot = stored_slot::<M, T>(
            (&self.d, &self.bc),
            |d, i, line, y| lay.line_index(d, i, line, y),
            |d, y| lay.cluster_lane(d, y),
            self.odd,
            (x as isize, y),
        );
        (0..M::Q).map(move |i| slot(i).0)
    }

    fn site_ranges(&self, x: usize, y: usize) -> Vec<(u64, u64)> {
        self.slots(x, y).map(|e| (e as u64, 1)).collect()
    }

    /// The post-collision populations `f*_i(x, y)` of the stored state (order of
    /// `M::VELOCITIES`).
    pub fn populations(&self, x: usize, y: usize, out: &mut [T]) -> Result<(), GpuError> {
        self.check_site(x, y)?;
        check_len(out.len(), M::Q, "populations")?;
        let v = self.download(&self.site_ranges(x, y))?;
        out.copy_from_slice(&v);
        Ok(())
    }

    /// Sets the stored populations of site `(x, y)`; refuses non-finite values.
    pub fn set_populations(&mut self, x: usize, y: usize, f: &[T]) -> Result<(), GpuError> {
        self.check_site(x, y)?;
        check_len(f.len(), M::Q, "populations")?;
        if let Some((i, v)) = f.iter().enumerate().find(|(_, v)| !v.is_finite()) {
            return Err(non_finite(x, y, format!("population {i}"), v.to_f64()));
        }
        for (v, e) in f.iter().zip(self.slots(x, y)) {
            self.upload(self.cur, e as u64, std::slice::from_ref(v))?;
        }
        Ok(())
    }

    /// Sets every site to the equilibrium of the moments `moments(x, y)` (order of
    /// `M::MOMENT_NAMES`), computed on the host by `M::equilibrium` and uploaded at once (the
    /// state is then the even one of the AA scheme); refuses non-finite moments before
    /// changing anything.
    pub fn set_equilibrium<F>(&mut self, moments: F) -> Result<(), GpuError>
    where
        F: Fn(usize, usize) -> Vec<f64> + Sync,
    {
        let d = self.d;
        let nm = M::MOMENT_NAMES.len();
        let mut state = self.rest_state();
        self.odd = false;
        // The equilibria of a batch of columns in parallel (about 2²⁴ values, a column per
        // thread at least), then placed in the layout.
        let plane = d.plane();
        let batch = ((1 << 24) / (plane * M::Q).max(1)).max(rayon::current_num_threads());
        let this = &*self;
        for first in (0..d.lx).step_by(batch) {
            let columns = first..(first + batch).min(d.lx);
            let feqs = parallel::map(columns.clone(), &|x| {
                let (mut mt, mut feq) = (vec![T::default(); nm], vec![T::default(); M::Q]);
                let mut column = Vec::with_capacity(plane * M::Q);
                for y in 0..plane {
                    let m = moments(x, y);
                    check_len(m.len(), nm, "moments")?;
                    if let Some((j, v)) = m.iter().enumerate().find(|(_, v)| !v.is_finite()) {
                        return Err(non_finite(x, y, M::MOMENT_NAMES[j].to_string(), *v));
                    }
                    for (a, b) in mt.iter_mut().zip(m) {
                        *a = T::from_f64(b);
                    }
                    M::equilibrium(&mt, &this.site_params(x, y), &mut feq);
                    column.extend_from_slice(&feq);
                }
                Ok(column)
            })
            .into_iter()
            .collect::<Result<Vec<_>, GpuError>>()?;
            for (x, column) in columns.zip(feqs) {
                for (y, feq) in column.chunks_exact(M::Q).enumerate() {
                    for (v, e) in feq.iter().zip(this.slots(x, y)) {
                        state[e] = *v;
                    }
                }
            }
        }
        self.upload(self.cur, 0, &state)?;
        Ok(())
    }

    /// All post-collision populations, indexed `[(x·LY·LZ + s)·Q + i]` with the plane site
    /// `s = z·LY + y` (one read of the device).
    pub fn read_populations(&self) -> Result<Vec<T>, GpuError> {
        let d = self.d;
        let raw = self.download(&[(0, d.len() as u64)])?;
        let mut out = vec![T::default(); d.sites() * d.q];
        for x in 0..d.lx {
            for y in 0..d.plane() {
                let at = (x * d.plane() + y) * d.q;
                for (o, e) in out[at..at + d.q].iter_mut().zip(self.slots(x, y)) {
                    *o = raw[e];
                }
            }
        }
        Ok(out)
    }

    /// Sets all populations from values indexed `[(x·LY·LZ + s)·Q + i]` (the order of
    /// [`GpuLattice::read_populations`] and of checkpoints), in one upload (the state is then
    /// the even one of the AA scheme); refuses non-finite values before changing anything.
    pub fn write_populations(&mut self, f: &[T]) -> Result<(), GpuError> {
        let d = self.d;
        check_len(f.len(), d.sites() * d.q, "populations")?;
        if let Some((n, v)) = f.iter().enumerate().find(|(_, v)| !v.is_finite()) {
            let s = n / d.q;
            return Err(non_finite(
                s / d.plane(),
                s % d.plane(),
                format!("population {}", n % d.q),
                v.to_f64(),
            ));
        }
        let mut state = self.rest_state();
        self.odd = false;
        for (s, site) in f.chunks_exact(d.q).enumerate() {
            let (x, y) = (s / d.plane(), s % d.plane());
            for (v, e) in site.iter().zip(self.slots(x, y)) {
                state[e] = *v;
            }
        }
        self.upload(self.cur, 0, &state)?;
        Ok(())
    }

    /// Sets the step counter (a lattice restored from a checkpoint).
    pub(crate) fn set_steps_done(&mut self, step: u64) {
        self.step = step;
    }

    /// Total mass `Σ_x Σ_i f*_i(x)` over the fluid sites, accumulated in `f64`.
    pub fn mass(&self) -> Result<f64, GpuError> {
        let d = self.d;
        let f = self.read_populations()?;
        let mut s = 0.0;
        for x in 0..d.lx {
            for y in (0..d.plane()).filter(|&y| !self.bc.is_solid(&d, x, y)) {
                s += f[(x * d.plane() + y) * d.q..][..d.q]
                    .iter()
                    .map(|v| v.to_f64())
                    .sum::<f64>();
            }
        }
        Ok(s)
    }

    // ---------------------------------------------------------------- moments

    /// The moments of columns `x0 .. x0 + nx`, indexed `[((x − x0)·LY·LZ + s)·NM + j]` (`s` the
    /// plane site), computed
    /// on the device from the pre-collision populations (pull, boundary links and rules),
    /// like [`crate::Lattice::moments`].
    pub fn moment_columns(&self, x0: usize, nx: usize) -> Result<Vec<T>, GpuError> {
        if x0 + nx > self.d.lx {
            return Err(
                LbmError::Shape(format!("columns {x0}..{} outside the lattice", x0 + nx)).into(),
            );
        }
        let nm = M::MOMENT_NAMES.len();
        let mut out = Vec::with_capacity(nx * self.d.plane() * nm);
        let mut x = x0;
        while x < x0 + nx {
            let n = self.mout_cols.min(x0 + nx - x);
            out.extend(self.moment_pass(x, n)?);
            x += n;
        }
        Ok(out)
    }

    fn moment_pass(&self, x0: usize, n: usize) -> Result<Vec<T>, GpuError> {
        // The moments kernel writes `mout` for `ctl.y = n` columns from `ctl.x = x0` and, when
        // proven in range ([`GpuLattice::bounds_checks`]), runs without bounds checks: more
        // columns than `mout` holds would write past it on the device. One check per pass.
        assert!(
            n <= self.mout_cols && x0 + n <= self.d.lx,
            "moment pass of columns {x0}..{} beyond the lattice ({}) or the output ({} columns)",
            x0 + n,
            self.d.lx,
            self.mout_cols
        );
        let vals = n * self.d.plane() * M::MOMENT_NAMES.len();
        self.mout_pass([Entry::Moments, Entry::MomentsOdd], [x0, n], vals)
    }

    /// The pre-collision populations of the boundary records `r0 .. r0 + n` (order of
    /// [`bc::pack`]), `Q` a record, computed on the device.
    fn pre_collision_pass(&self, r0: usize, n: usize) -> Result<Vec<T>, GpuError> {
        // As for `moment_pass`: the kernel reads records `ctl.x .. ctl.x + ctl.y` and writes
        // `Q` values of `mout` for each, without bounds checks when proven.
        assert!(
            r0 + n <= self.spec.bc.sites && n * M::Q <= self.mout_len,
            "pre-collision pass of records {r0}..{} beyond the records ({}) or the output ({} \
             values)",
            r0 + n,
            self.spec.bc.sites,
            self.mout_len
        );
        self.mout_pass(
            [Entry::PreCollision, Entry::PreCollisionOdd],
            [r0, n],
            n * M::Q,
        )
    }

    /// Runs entry `even` (`odd` in the odd AA state) with `ctl = [from, n, 0, 0]` over
    /// [`GpuLattice::threads`] threads, after filling the periodic halos of the even state,
    /// and reads the first `vals` values of `mout` back.
    fn mout_pass(
        &self,
        [even, odd]: [Entry; 2],
        [from, n]: [usize; 2],
        vals: usize,
    ) -> Result<Vec<T>, GpuError> {
        let ctl = [from as u32, n as u32, 0, 0];
        self.ctx
            .queue
            .write_buffer(&self.ctl, 0, bytemuck::cast_slice(&ctl));
        let bytes = (vals * size_of::<T>()) as u64;
        let staging = self.ctx.staging(bytes);
        let mut enc = self.encoder();
        {
            let mut pass = enc.begin_compute_pass(&Default::default());
            let entry = if self.odd {
                odd
            } else {
                if self.bc.x_periodic() {
                    self.dispatch(&mut pass, Entry::Halo);
                }
                even
            };
            self.hold(&mut pass, false);
            self.dispatch_n(&mut pass, entry, self.threads(entry, n));
        }
        enc.copy_buffer_to_buffer(&self.mout, 0, &staging, 0, bytes);
        self.ctx.queue.submit([enc.finish()]);
        self.ctx.map_read(&staging)
    }

    /// For each site `[x, y, z]` of `sites`, its post-collision populations followed by its
    /// pre-collision ones at the next step, `2Q` values a site, as
    /// [`crate::Lattice::exchanged`] gives them (what momentum exchange measures the loads on
    /// bodies from): the first read from the stored state, the others computed on the device
    /// over the sites' boundary records, in passes of as many records as `mout` holds. Every
    /// site must be a boundary site (the sites whose links a body cuts are); others are
    /// refused.
    pub fn exchanged(&self, sites: &[[usize; 3]]) -> Result<Vec<T>, GpuError> {
        let (d, q) = (self.d, M::Q);
        let mut records = Vec::with_capacity(sites.len());
        let mut slots = Vec::with_capacity(sites.len() * q);
        for &[x, y, z] in sites {
            let s = if y < d.ly && z < d.lz {
                d.plane_site(y, z)
            } else {
                d.plane()
            };
            self.check_site(x, s)?;
            let r = bc::record(&self.bc, &d, [x, y, z]).ok_or_else(|| {
                LbmError::Boundary(format!(
                    "site ({x}, {y}, {z}) is not a boundary site: the device reads the \
                     populations a wall sends back at boundary sites only"
                ))
            })?;
            records.push(r);
            slots.extend(self.site_ranges(x, s));
        }
        let post = self.download(&slots)?;
        // The records' pre-collision populations, in passes over the sorted records.
        let mut wanted = records.clone();
        wanted.sort_unstable();
        wanted.dedup();
        let per_pass = self.mout_len / q;
        let mut pre = HashMap::with_capacity(wanted.len());
        let mut k = 0;
        while k < wanted.len() {
            let r0 = wanted[k];
            let end = wanted[k..].partition_point(|&r| r < r0 + per_pass) + k;
            let n = wanted[end - 1] - r0 + 1;
            let vals = self.pre_collision_pass(r0, n)?;
            for &r in &wanted[k..end] {
                pre.insert(r, vals[(r - r0) * q..(r - r0 + 1) * q].to_vec());
            }
            k = end;
        }
        let mut out = Vec::with_capacity(2 * q * sites.len());
        for (j, r) in records.iter().enumerate() {
            out.extend_from_slice(&post[j * q..(j + 1) * q]);
            out.extend_from_slice(&pre[r]);
        }
        Ok(out)
    }

    /// The macroscopic moments of site `(x, y)` (`y` the plane site `z·LY + y` in 3-D; order of
    /// `M::MOMENT_NAMES`).
    pub fn moments(&self, x: usize, y: usize, m: &mut [T]) -> Result<(), GpuError> {
        self.check_site(x, y)?;
        let nm = M::MOMENT_NAMES.len();
        check_len(m.len(), nm, "moments")?;
        let col = self.moment_columns(x, 1)?;
        m.copy_from_slice(&col[y * nm..(y + 1) * nm]);
        Ok(())
    }

    /// The field of moment `name` as `f64`, indexed `[x·LY·LZ + s]` (solid sites hold 0).
    pub fn moment_field(&self, name: &str) -> Result<Vec<f64>, GpuError> {
        let j = moment_named::<M>(name)?;
        Ok(self.moment_fields()?.swap_remove(j))
    }

    /// Every moment field (order of `M::MOMENT_NAMES`), as [`GpuLattice::moment_field`], in
    /// one read of the device.
    pub(crate) fn moment_fields(&self) -> Result<Vec<Vec<f64>>, GpuError> {
        let plane: Vec<usize> = (0..self.d.plane()).collect();
        self.moment_fields_at(0..self.d.lx, &plane)
    }

    /// The moment fields of the plane sites `plane` of the site columns `cols`, each indexed
    /// `[(x − cols.start)·plane.len() + j]` (solid sites hold 0), computed on the device (a
    /// slab's halos, and a block's ghost lines, holding its neighbours' values).
    pub(crate) fn moment_fields_at(
        &self,
        cols: std::ops::Range<usize>,
        plane: &[usize],
    ) -> Result<Vec<Vec<f64>>, GpuError> {
        let (d, nm) = (self.d, M::MOMENT_NAMES.len());
        let all = self.moment_columns(cols.start, cols.len())?;
        Ok((0..nm)
            .map(|j| {
                let columns = parallel::map(cols.clone(), &|x| {
                    let at = (x - cols.start) * d.plane();
                    (plane.iter())
                        .map(|&y| match self.bc.is_solid(&d, x, y) {
                            true => 0.0,
                            false => all[(at + y) * nm + j].to_f64(),
                        })
                        .collect::<Vec<f64>>()
                });
                columns.concat()
            })
            .collect())
    }

    /// Checks every fluid site for NaN and for a Mach number `|u| / (cs √T)` beyond the limit
    /// (as [`crate::Lattice::check`]); reads the moments back.
    pub fn check(&self) -> Result<(), GpuError> {
        self.check_where(&|_| true)
    }

    /// [`GpuLattice::check`] of the sites whose plane site `s` is `checked(s)` (a block's own).
    pub(crate) fn check_where(
        &self,
        checked: &(dyn Fn(usize) -> bool + Sync),
    ) -> Result<(), GpuError> {
        let d = self.d;
        let nm = M::MOMENT_NAMES.len();
        let all = self.moment_columns(0, d.lx)?;
        let plane = d.plane();
        let found = parallel::find_first(0..d.lx, &|x| {
            (0..plane).find_map(|y| {
                let m = &all[(x * plane + y) * nm..][..nm];
                (checked(y) && !self.bc.is_solid(&d, x, y))
                    .then(|| divergence::<M, T>(m, self.max_mach))
                    .flatten()
                    .map(|r| (x, y, r))
            })
        });
        match found {
            Some((x, y, reason)) => Err(LbmError::Diverged {
                step: self.step,
                x,
                y,
                reason,
            }
            .into()),
            None => Ok(()),
        }
    }
}

/// The name of a shader, for messages.
pub(crate) fn what<M: Model, T: Real>(layout: LayoutKind) -> String {
    format!("{} × {layout} × {}", M::NAME, T::NAME)
}

/// How the populations of one copy split across storage bindings on this device.
struct Capacity {
    /// Values per binding.
    chunk: u64,
    /// The most values one copy may hold.
    max_vals: u64,
}

/// The error for a lattice beyond the device's limits, with the size that fits.
fn too_large<M: Model, T: Real>(
    ctx: &GpuContext,
    d: &Dims,
    max_vals: u64,
    reason: String,
) -> GpuError {
    GpuError::TooLarge {
        model: M::NAME,
        precision: T::NAME,
        size: [d.lx, d.ly, d.lz],
        adapter: ctx.info().name.clone(),
        reason,
        max_sites: max_vals / d.q as u64,
    }
}

/// Checks that one copy of the populations fits its share (of `copies`) of
/// `max_storage_buffers_per_shader_stage` bindings of `binding_limit` bytes (beside
/// [`EXTRA_STORAGE`] others) with 32-bit indices;
/// checked before anything proportional to the lattice is built.
fn capacity<M: Model, T: Real>(
    ctx: &GpuContext,
    d: &Dims,
    copies: u32,
) -> Result<Capacity, GpuError> {
    let binding = ctx.binding_limit();
    let chunk = (binding / T::BYTES as u64) / 64 * 64;
    let max_bufs = ctx
        .limits()
        .max_storage_buffers_per_shader_stage
        .saturating_sub(EXTRA_STORAGE)
        / copies;
    let max_vals = (max_bufs as u64 * chunk).min(u32::MAX as u64);
    let len = d.len() as u64;
    if chunk == 0 || len > max_vals {
        return Err(too_large::<M, T>(
            ctx,
            d,
            max_vals,
            format!(
                "one copy holds {len} values, the device allows {max_vals} ({max_bufs} bindings \
                 of {binding} bytes per copy, 32-bit indices)"
            ),
        ));
    }
    Ok(Capacity { chunk, max_vals })
}

/// Chunking, dispatch grid and moment passes for `d` on the device of `ctx`, or the limit it
/// exceeds.
fn plan<M: Model, T: Real>(
    ctx: &GpuContext,
    d: &Dims,
    tables: &BcTables<T>,
    cap: &Capacity,
) -> Result<Plan, GpuError> {
    let binding = ctx.binding_limit();
    let nm = M::MOMENT_NAMES.len() as u64;
    let col_bytes = d.plane() as u64 * nm * size_of::<T>() as u64;
    let tables_bytes = 4 * tables.tables.len() as u64;
    let fail = |reason| Err(too_large::<M, T>(ctx, d, cap.max_vals, reason));
    if col_bytes > binding || tables_bytes > binding {
        return fail(format!(
            "a plane of moments ({col_bytes} B) or the boundary tables ({tables_bytes} B) \
             exceed one binding ({binding} B)"
        ));
    }
    let threads = d
        .sites()
        .max(2 * d.halo * d.plane())
        .max(tables.shape.sites) as u64;
    let max_dim = ctx.workgroup_limit();
    let Some(grid) = Grid::plan(threads, max_dim) else {
        let wg = threads.div_ceil(u64::from(FIXED));
        return fail(format!(
            "{wg} workgroups exceed the {max_dim}×{max_dim} grid"
        ));
    };
    Ok(Plan {
        chunk: cap.chunk,
        chunks: (d.len() as u64).div_ceil(cap.chunk) as usize,
        grid,
        mout_cols: ((binding / col_bytes) as usize).clamp(1, d.lx),
    })
}

/// Resource creation for one lattice.
struct Device<'a> {
    ctx: &'a GpuContext,
    spec: &'a ShaderSpec,
}

impl Device<'_> {
    fn buffer(&self, label: &str, size: u64, extra: wgpu::BufferUsages) -> wgpu::Buffer {
        self.ctx.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(label),
            size: size.max(4),
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST | extra,
            mapped_at_creation: false,
        })
    }

    /// A buffer holding `data` (storage, or uniform when `uniform`).
    fn init_buffer(&self, label: &str, data: &[u8], uniform: bool) -> wgpu::Buffer {
        let usage = if uniform {
            wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST
        } else {
            wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST
        };
        let buf = self.ctx.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(label),
            size: (data.len() as u64).max(4).next_multiple_of(4),
            usage,
            mapped_at_creation: false,
        });
        let mut padded = data.to_vec();
        padded.resize(buf.size() as usize, 0);
        self.ctx.queue.write_buffer(&buf, 0, &padded);
        buf
    }

    /// The bindings of one copy of the populations.
    fn population_copy<T: Real>(&self) -> Vec<wgpu::Buffer> {
        let len = self.spec.dims.len() as u64;
        (0..self.spec.chunks as u64)
            .map(|c| {
                let n = self.spec.chunk.min(len - c * self.spec.chunk);
                // Whole words, so that transfers of the last element move a whole word.
                self.buffer(
                    "populations",
                    (n * T::BYTES as u64).next_multiple_of(4),
                    wgpu::BufferUsages::COPY_SRC,
                )
            })
            .collect()
    }

    fn bind_group_layout(&self) -> wgpu::BindGroupLayout {
        let storage = |read_only| wgpu::BindingType::Buffer {
            ty: wgpu::BufferBindingType::Storage { read_only },
            has_dynamic_offset: false,
            min_binding_size: None,
        };
        let nb = self.spec.binding_consts();
        let mut types: Vec<wgpu::BindingType> = (0..nb).map(|_| storage(false)).collect();
        types.extend([storage(true), storage(true), storage(false)]);
        types.push(wgpu::BindingType::Buffer {
            ty: wgpu::BufferBindingType::Uniform,
            has_dynamic_offset: false,
            min_binding_size: None,
        });
        let entries: Vec<_> = types
            .into_iter()
            .enumerate()
            .map(|(b, ty)| wgpu::BindGroupLayoutEntry {
                binding: b as u32,
                visibility: wgpu::ShaderStages::COMPUTE,
                ty,
                count: None,
            })
            .collect();
        self.ctx
            .device
            .create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
                label: Some("lbm"),
                entries: &entries,
            })
    }

    fn bind_group(
        &self,
        layout: &wgpu::BindGroupLayout,
        pops: &[&wgpu::Buffer],
        storage: [&wgpu::Buffer; 3],
        ctl: &wgpu::Buffer,
    ) -> wgpu::BindGroup {
        let bufs: Vec<&wgpu::Buffer> = pops.iter().copied().chain(storage).chain([ctl]).collect();
        let entries: Vec<_> = bufs
            .iter()
            .enumerate()
            .map(|(b, buf)| wgpu::BindGroupEntry {
                binding: b as u32,
                resource: buf.as_entire_binding(),
            })
            .collect();
        self.ctx
            .device
            .create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some("lbm"),
                layout,
                entries: &entries,
            })
    }

    /// The module of `source`, with wgpu's runtime checks, and the pipeline layout of
    /// `layout`.
    fn kernels(&self, layout: &wgpu::BindGroupLayout, source: &str) -> Kernels {
        let module = self.ctx.device.create_shader_module(shader_module(source));
        self.kernels_of(layout, module)
    }

    /// As [`Device::kernels`], without the runtime checks of
    /// [`wgpu::ShaderRuntimeChecks::unchecked`] (no clamp around each of the shader's loads and
    /// stores).
    ///
    /// # Safety
    /// `source` must be the shader composed ([`shader::compose`]) of `self.spec` and a layout
    /// that [`bounds::prove`] accepted with the boundary tables and the [`Bound`] of the
    /// buffers that every bind group of `layout` binds, and the host must keep the inputs the
    /// proof assumes (the tables' words, `ctl.y ≤ mout_cols`). Then every index of the shader,
    /// at every workgroup size (its guards are on the thread index, not on the size), lies in
    /// its binding, its loops are bounded and its divisors non-zero constants ([`bounds`]),
    /// which is what `create_shader_module_trusted` asks of a module without these checks.
    unsafe fn kernels_unchecked(&self, layout: &wgpu::BindGroupLayout, source: &str) -> Kernels {
        // SAFETY: the function's contract (above).
        let module = unsafe {
            self.ctx.device.create_shader_module_trusted(
                shader_module(source),
                wgpu::ShaderRuntimeChecks::unchecked(),
            )
        };
        self.kernels_of(layout, module)
    }

    /// `module` and the pipeline layout of `layout`.
    fn kernels_of(&self, layout: &wgpu::BindGroupLayout, module: wgpu::ShaderModule) -> Kernels {
        let dev = &self.ctx.device;
        let layout = dev.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("lbm"),
            bind_group_layouts: &[Some(layout)],
            immediate_size: 0,
        });
        Kernels { module, layout }
    }
}

/// The descriptor of the lattice's shader module of WGSL `source`.
fn shader_module(source: &str) -> wgpu::ShaderModuleDescriptor<'_> {
    wgpu::ShaderModuleDescriptor {
        label: Some("lbm"),
        source: wgpu::ShaderSource::Wgsl(source.into()),
    }
}

/// A lattice's shader module and pipeline layout, from which its pipelines are created.
struct Kernels {
    module: wgpu::ShaderModule,
    layout: wgpu::PipelineLayout,
}

impl Kernels {
    /// The pipeline of window `w` of entry point `e`, in workgroups of `size` threads for a
    /// site kernel ([`shader::entry_name`]).
    fn pipeline(&self, ctx: &GpuContext, e: Entry, w: Window, size: u32) -> wgpu::ComputePipeline {
        let name = shader::entry_name(e, w, size);
        ctx.device
            .create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some(&name),
                layout: Some(&self.layout),
                module: &self.module,
                entry_point: Some(&name),
                compilation_options: Default::default(),
                cache: None,
            })
    }
}

fn check_len(got: usize, want: usize, what: &str) -> Result<(), GpuError> {
    if got != want {
        return Err(LbmError::Shape(format!("{what}: got {got} values, expected {want}")).into());
    }
    Ok(())
}

fn non_finite(x: usize, y: usize, what: String, value: f64) -> GpuError {
    LbmError::NonFinite { x, y, what, value }.into()
}
