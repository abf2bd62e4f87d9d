//! Finite-difference schemes on the GPU ([`GpuFdGrid`]): the CPU grid's padded arrays and its
//! operations, as compute kernels composed around the scheme's generated WGSL
//! ([`FdScheme::WGSL`]).
//!
//! Per stage of the integrator:
//! - `rates_k`: one thread per updated node gathers the scheme's reads ([`FdScheme::LOADS`],
//!   offsets baked in), calls `rates` and writes the register, `reg ← φ + Δt R` (forward
//!   Euler, after which the two buffers trade roles) or `reg ← a_k reg + Δt R`;
//! - `accumulate_k` (Runge–Kutta): `φ ← φ + b_k reg`;
//! - `fill_x`, `fill_y` (, `fill_z`): the sides, axis after axis, as the CPU grid sets them:
//!   one thread per (line, set) runs one of the affine sets of [`crate::fd`]'s walls, read
//!   from a table, so a wall rule has one home for both.
//!
//! Every kernel addresses unknown `u` of node `i` through `addr(u, i)`, the host grid's
//! layout written as WGSL ([`FdLayout`]: SoA, AoS or clustered), so the device runs the
//! layout the host would, with the same arithmetic.
//!
//! In a group of several processes ([`GpuFdGrid::on_blocks`]: MPI ranks, or the threads of
//! the host/device split) the grid is a block of a cut ([`crate::blocks`]). Its stages are
//! then submitted one at a time: after each, along every axis in turn, the fill of an axis
//! that is not cut, or for one that is, the block's first and last layers packed by a kernel
//! (`pack_a`, from a table of their nodes) and read back, traded with its neighbours, written
//! into its ghost layers (`unpack_a`) and the walls it holds applied — the CPU block's very
//! operations, its values in the CPU block's order whatever the layout.
//!
//! The grid keeps a host copy ([`FdGrid`]) that sets the initial values, checks, measures
//! the rates and reads fields: it is refreshed from the device when one of those is asked.

use std::sync::Arc;

use super::shader::arithmetic;
use super::{GpuContext, GpuError};
use crate::blocks::Blocks;
use crate::fd::{FdError, FdGrid, FdLayout, FdRun, FdScheme, Integrator, Side};
use crate::group::{OneProcess, Transfers};
use crate::{Error, Real};

/// Threads per workgroup of every kernel.
const WG: u32 = 64;
/// Steps recorded in one command buffer.
const STEPS_PER_SUBMIT: u64 = 64;

/// A finite-difference grid on a GPU: [`FdGrid`]'s grid, its unknowns on the device.
pub struct GpuFdGrid<S: FdScheme, T: Real> {
    host: FdGrid<S, T>,
    ctx: Arc<GpuContext>,
    bufs: [wgpu::Buffer; 2],
    ctl: wgpu::Buffer,
    /// Bind groups with `φ` in buffer 0 and in buffer 1.
    groups: [wgpu::BindGroup; 2],
    /// Which buffer holds `φ`.
    current: usize,
    rates: Vec<wgpu::ComputePipeline>,
    accumulate: Vec<wgpu::ComputePipeline>,
    /// Per axis: the fill kernel and its threads.
    fills: Vec<(wgpu::ComputePipeline, u32)>,
    /// Per axis the grid is cut along (`None` for the others): how its layers are traded.
    cuts: [Option<Trade>; 3],
    /// The layers traded along one axis, on the device: the block's first and last layers
    /// packed, then the neighbours' for its ghost layers.
    edge: wgpu::Buffer,
    /// Threads of the node kernels (the updated nodes).
    nodes: u32,
    /// Threads in a row of the dispatch grid.
    row: u32,
    /// The host copy is older than the device's.
    stale: bool,
}

/// The trade of a block's layers along an axis the grid is cut along: `pack` gathers its
/// first and last layers into the edge buffer (every unknown's first layer, then every
/// unknown's last, node by node in [`FdGrid`]'s order), `staging` takes them to the host,
/// and `unpack` writes the neighbours' layers from the edge buffer into its ghost layers
/// (those where no wall of the grid is); one thread per value, `values` of them.
struct Trade {
    pack: wgpu::ComputePipeline,
    unpack: wgpu::ComputePipeline,
    staging: wgpu::Buffer,
    values: u32,
}

impl<S: FdScheme, T: Real> GpuFdGrid<S, T> {
    /// [`FdGrid::new`]'s grid on the device of `ctx`, its unknowns zero and stored in SoA.
    /// Refuses f64 on an adapter without it, the binary16 storage (populations only), and a
    /// grid whose arrays do not fit one binding.
    pub fn new(
        ctx: Arc<GpuContext>,
        n: [usize; 3],
        h: f64,
        params: S::Params,
        sides: Vec<Side>,
    ) -> Result<Self, Error> {
        let one = (
            Box::new(OneProcess) as Box<dyn Transfers<T>>,
            Blocks::whole(n),
        );
        Self::on_blocks(ctx, n, h, params, sides, one, FdLayout::Soa)
    }

    /// [`FdGrid::on_blocks`]'s block of `group`'s member on the device of `ctx`, its unknowns
    /// stored in `layout` (collective): what the device refuses is refused by every process
    /// of the group.
    pub fn on_blocks(
        ctx: Arc<GpuContext>,
        n: [usize; 3],
        h: f64,
        params: S::Params,
        sides: Vec<Side>,
        (group, blocks): (Box<dyn Transfers<T>>, Blocks),
        layout: FdLayout,
    ) -> Result<Self, Error> {
        let nu = S::UNKNOWNS.len();
        // The block's padded length, as the grid will pad it (a cut of another group size is
        // refused by the grid).
        let m = blocks
            .block(group.rank().min(blocks.count() - 1))
            .map(|r| r.len());
        let len: usize = FdGrid::<S, T>::padded(m).iter().product();
        let bytes = (nu * len * std::mem::size_of::<T>()) as u64;
        let device = Self::check_device(&ctx, bytes);
        let local = match &device {
            Ok(()) => Ok(()),
            Err(e) => Err(FdError::Setup(e.to_string())),
        };
        let built = FdGrid::<S, T>::on_blocks_with(n, h, params, sides, (group, blocks), local);
        device?;
        let host = built?.with_layout(layout);
        debug_assert_eq!(len, host.phi.nodes);
        let dev = &ctx.device;
        let storage = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST;
        let buffer = |label: &str, size: u64, extra| {
            dev.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size: size.max(16).next_multiple_of(16),
                usage: storage | extra,
                mapped_at_creation: false,
            })
        };
        let bufs = [0, 1].map(|_| buffer("fd registers", bytes, wgpu::BufferUsages::COPY_SRC));
        let prm = buffer(
            "fd parameters",
            bytes_of(&host.prm).len() as u64,
            wgpu::BufferUsages::empty(),
        );
        ctx.queue
            .write_buffer(&prm, 0, &padded(bytes_of(&host.prm)));
        let ctl = buffer(
            "fd step",
            (7 * std::mem::size_of::<T>()) as u64,
            wgpu::BufferUsages::empty(),
        );
        // The sides' sets of every axis, one table: (unknown, to, from, from) and (c0, c1, c2).
        let mut at: Vec<u32> = Vec::new();
        let mut coef: Vec<T> = Vec::new();
        let mut axes = Vec::new();
        for a in 0..S::DIM {
            let first = at.len() / 4;
            // A block wraps its periodic axes itself where the grid is not cut (the exchange
            // fills those ghosts otherwise).
            for (u, sets) in host.sets_along(a).iter().enumerate() {
                for s in sets {
                    at.extend([u as u32, s.to as u32, s.from[0] as u32, s.from[1] as u32]);
                    coef.extend(s.c.map(T::from_f64));
                }
            }
            let count = at.len() / 4 - first;
            let lines = host.lines_along(a).count();
            axes.push((first, count, lines));
        }
        // After the sets, per axis the grid is cut along: its first and last layers and its
        // ghost layers below and above, node by node (where they start, and their nodes).
        let faces = [0, 1, 2].map(|a| {
            host.blocks().is_cut(a).then(|| {
                let (g, m) = (host.g[a], host.m[a]);
                let start = at.len();
                for first in [g, m, 0, m + g] {
                    let runs = host.face(a, first).into_iter();
                    at.extend(runs.flat_map(|(i, n)| i as u32..(i + n) as u32));
                }
                (start, (at.len() - start) / 4)
            })
        });
        let tables = buffer(
            "fd tables",
            4 * at.len() as u64,
            wgpu::BufferUsages::empty(),
        );
        ctx.queue
            .write_buffer(&tables, 0, &padded(bytemuck::cast_slice(&at)));
        let most = faces.iter().flatten().map(|&(_, f)| f).max().unwrap_or(0);
        let edge = buffer(
            "fd edges",
            (2 * nu * most * std::mem::size_of::<T>()) as u64,
            wgpu::BufferUsages::COPY_SRC,
        );
        let sets_c = buffer(
            "fd side coefficients",
            bytes_of(&coef).len() as u64,
            wgpu::BufferUsages::empty(),
        );
        ctx.queue.write_buffer(&sets_c, 0, &padded(bytes_of(&coef)));

        let row = WG * ctx.workgroup_limit();
        let updated: Vec<std::ops::Range<usize>> = (0..3).map(|a| host.updated(a)).collect();
        let nodes: usize = updated.iter().map(|r| r.len()).product();
        let source = shader::<S, T>(&host, (&updated, row), &axes, &faces);
        let module = dev.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some(S::NAME),
            source: wgpu::ShaderSource::Wgsl(source.into()),
        });
        let entry = |i: u32, read_only: bool| wgpu::BindGroupLayoutEntry {
            binding: i,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::Buffer {
                ty: wgpu::BufferBindingType::Storage { read_only },
                has_dynamic_offset: false,
                min_binding_size: None,
            },
            count: None,
        };
        let layout = dev.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("fd"),
            entries: &[
                entry(0, false),
                entry(1, false),
                entry(2, true),
                entry(3, true),
                entry(4, true),
                entry(5, true),
                entry(6, false),
            ],
        });
        let groups = [0, 1].map(|c| {
            let bound = [&bufs[c], &bufs[1 - c], &prm, &ctl, &tables, &sets_c, &edge];
            let entries: Vec<wgpu::BindGroupEntry> = bound
                .iter()
                .enumerate()
                .map(|(i, b)| wgpu::BindGroupEntry {
                    binding: i as u32,
                    resource: b.as_entire_binding(),
                })
                .collect();
            dev.create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some("fd"),
                layout: &layout,
                entries: &entries,
            })
        });
        let pipeline_layout = dev.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("fd"),
            bind_group_layouts: &[Some(&layout)],
            immediate_size: 0,
        });
        let pipeline = |name: String| {
            dev.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some(&name),
                layout: Some(&pipeline_layout),
                module: &module,
                entry_point: Some(&name),
                compilation_options: Default::default(),
                cache: None,
            })
        };
        let stages = S::INTEGRATOR.stages().len();
        let rates = (0..stages)
            .map(|k| pipeline(format!("rates_{k}")))
            .collect();
        let accumulate = match S::INTEGRATOR {
            Integrator::Euler => Vec::new(),
            _ => (0..stages)
                .map(|k| pipeline(format!("accumulate_{k}")))
                .collect(),
        };
        let fills = axes
            .iter()
            .enumerate()
            .map(|(a, &(_, count, lines))| (pipeline(format!("fill_{a}")), (count * lines) as u32))
            .collect();
        let cuts = [0, 1, 2].map(|a| {
            faces[a].map(|(_, face)| Trade {
                pack: pipeline(format!("pack_{a}")),
                unpack: pipeline(format!("unpack_{a}")),
                staging: ctx.staging((2 * nu * face * std::mem::size_of::<T>()) as u64),
                values: (2 * nu * face) as u32,
            })
        });
        let mut grid = Self {
            cuts,
            edge,
            host,
            ctx,
            bufs,
            ctl,
            groups,
            current: 0,
            rates,
            accumulate,
            fills,
            nodes: nodes as u32,
            row,
            stale: false,
        };
        grid.upload();
        grid.ctx.wait()?;
        Ok(grid)
    }

    /// What the device refuses: binary16 storage (populations only), f64 on an adapter
    /// without it, unknowns of `bytes` beyond one binding.
    fn check_device(ctx: &GpuContext, bytes: u64) -> Result<(), Error> {
        if T::COMPACT {
            return Err(FdError::Setup(format!(
                "{}: finite-difference grids run in f64 or f32, not {}",
                S::NAME,
                T::NAME
            ))
            .into());
        }
        if std::mem::size_of::<T>() == 8 && !ctx.supports_f64() {
            return Err(GpuError::NoF64 {
                adapter: ctx.info().name.clone(),
            }
            .into());
        }
        if bytes > ctx.binding_limit() {
            return Err(FdError::Setup(format!(
                "{}: the grid's unknowns take {bytes} bytes, more than the {} bytes adapter `{}` binds at once: give fewer nodes, or f32",
                S::NAME,
                ctx.binding_limit(),
                ctx.info().name
            ))
            .into());
        }
        Ok(())
    }

    /// Sets unknown `u` at every node to `f(x)` and applies the walls (on the host copy, then
    /// sent to the device).
    pub fn set(&mut self, u: usize, f: impl Fn([f64; 3]) -> f64) -> Result<(), Error> {
        self.refresh()?;
        self.host.set(u, f);
        self.upload();
        Ok(self.ctx.wait()?)
    }

    /// Sets unknown `u` from its values at every node of the whole grid ([`FdGrid::set_whole`];
    /// collective).
    pub fn set_whole(&mut self, u: usize, values: &[f64]) -> Result<(), Error> {
        self.refresh()?;
        self.host.set_whole(u, values);
        self.upload();
        Ok(self.ctx.wait()?)
    }

    /// Unknown `u` at every node of this slab (the whole grid in one process), x fastest.
    pub fn field(&mut self, u: usize) -> Result<Vec<f64>, Error> {
        self.refresh()?;
        Ok(self.host.field(u))
    }

    /// `max |R_u|` over the updated nodes, per unknown.
    pub fn max_rates(&mut self) -> Result<Vec<f64>, Error> {
        self.refresh()?;
        Ok(self.host.max_rates())
    }

    /// Advances `steps` steps of `dt` on the device; fails if an unknown is no longer finite
    /// at the end.
    pub fn advance(&mut self, steps: u64, dt: f64) -> Result<(), Error> {
        // A device error is agreed with the ring's other parts, which wait for this one.
        let device = self.time_steps(steps, dt).and_then(|_| self.refresh());
        let local = match &device {
            Ok(()) => Ok(()),
            Err(e) => Err(FdError::Setup(e.to_string())),
        };
        let agreed = self.host.check_with(dt, local);
        device?;
        Ok(agreed?)
    }

    /// Advances `steps` steps of `dt` on the device and returns the seconds from their
    /// submission to their end, without reading anything back or checking the values (what
    /// a benchmark times).
    pub fn time_steps(&mut self, steps: u64, dt: f64) -> Result<f64, Error> {
        if !(dt.is_finite() && dt > 0.0) {
            return Err(FdError::Setup(format!(
                "{}: the time step must be positive and finite (got {dt})",
                S::NAME
            ))
            .into());
        }
        let start = std::time::Instant::now();
        let mut ctl = vec![T::from_f64(dt)];
        for &(a, b) in S::INTEGRATOR.stages() {
            ctl.extend([T::from_f64(a), T::from_f64(b)]);
        }
        ctl.resize(7, T::default());
        self.ctx.queue.write_buffer(&self.ctl, 0, bytes_of(&ctl));
        let cut = self.cuts.iter().any(Option::is_some);
        if cut {
            // Every stage trades with the neighbours even after a device error (the others
            // wait for this block); the first error is reported at the end.
            let mut failed = Ok(());
            for _ in 0..steps {
                for k in 0..self.rates.len() {
                    let stage = self.ring_stage(k);
                    failed = failed.and(stage);
                }
            }
            failed?;
        }
        let mut left = if cut { 0 } else { steps };
        while left > 0 {
            let now = left.min(STEPS_PER_SUBMIT);
            let mut enc = self.ctx.device.create_command_encoder(&Default::default());
            {
                let mut pass = enc.begin_compute_pass(&Default::default());
                for _ in 0..now {
                    for k in 0..self.rates.len() {
                        self.record_stage(&mut pass, k, self.fills.len());
                    }
                }
            }
            self.ctx.queue.submit([enc.finish()]);
            left -= now;
        }
        self.host.steps += steps;
        self.host.time += steps as f64 * dt;
        self.stale = true;
        self.ctx.wait()?;
        Ok(start.elapsed().as_secs_f64())
    }

    /// Stage `k`'s dispatches: the rates, the accumulation (or the registers' trade), and the
    /// fills of the first `axes` axes.
    fn record_stage(&mut self, pass: &mut wgpu::ComputePass, k: usize, axes: usize) {
        pass.set_bind_group(0, &self.groups[self.current], &[]);
        pass.set_pipeline(&self.rates[k]);
        dispatch(pass, self.nodes, self.row);
        match self.accumulate.get(k) {
            Some(acc) => {
                pass.set_pipeline(acc);
                dispatch(pass, self.nodes, self.row);
            }
            None => {
                self.current = 1 - self.current;
                pass.set_bind_group(0, &self.groups[self.current], &[]);
            }
        }
        for (fill, threads) in &self.fills[..axes] {
            pass.set_pipeline(fill);
            dispatch(pass, *threads, self.row);
        }
    }

    /// Stage `k` of a block of a cut: the stage, then axis after axis the fill of an axis that
    /// is not cut, or the block's first and last layers packed and read back, traded with the
    /// neighbours, unpacked into the ghost layers where no wall of the grid is, and the walls
    /// it holds applied (collective; as [`FdGrid`]'s `fill`).
    fn ring_stage(&mut self, k: usize) -> Result<(), Error> {
        let mut enc = self.ctx.device.create_command_encoder(&Default::default());
        {
            let mut pass = enc.begin_compute_pass(&Default::default());
            self.record_stage(&mut pass, k, 0);
        }
        let mut read = Ok(());
        for a in 0..S::DIM {
            if let Some(trade) = &self.cuts[a] {
                let values = trade.values as usize;
                let run = |enc: &mut wgpu::CommandEncoder, kernel| {
                    let mut pass = enc.begin_compute_pass(&Default::default());
                    pass.set_bind_group(0, &self.groups[self.current], &[]);
                    pass.set_pipeline(kernel);
                    dispatch(&mut pass, trade.values, self.row);
                };
                run(&mut enc, &trade.pack);
                let bytes = (values * std::mem::size_of::<T>()) as u64;
                enc.copy_buffer_to_buffer(&self.edge, 0, &trade.staging, 0, bytes);
                self.ctx.queue.submit([enc.finish()]);
                enc = self.ctx.device.create_command_encoder(&Default::default());
                let mut below = match self.ctx.map_read::<T>(&trade.staging) {
                    Ok(edges) => edges,
                    Err(e) => {
                        read = read.and(Err(e));
                        vec![T::default(); values]
                    }
                };
                let above = below.split_off(values / 2);
                let peers = self.host.blocks().neighbours(self.host.group().rank(), a);
                let [below, above] = self.host.group().swap(peers, [below, above]);
                let incoming = [below, above].concat();
                self.ctx
                    .queue
                    .write_buffer(&self.edge, 0, bytes_of(&incoming));
                run(&mut enc, &trade.unpack);
            }
            let (fill, threads) = &self.fills[a];
            if *threads > 0 {
                let mut pass = enc.begin_compute_pass(&Default::default());
                pass.set_bind_group(0, &self.groups[self.current], &[]);
                pass.set_pipeline(fill);
                dispatch(&mut pass, *threads, self.row);
            }
        }
        self.ctx.queue.submit([enc.finish()]);
        Ok(read?)
    }

    /// Sends the host copy's unknowns to the device's `φ`.
    fn upload(&mut self) {
        // The device's layout, what the host grid is built in.
        let all: &[T] = &self.host.phi.data;
        self.ctx
            .queue
            .write_buffer(&self.bufs[self.current], 0, bytes_of(all));
        self.stale = false;
    }

    /// Reads the device's `φ` into the host copy, if it is newer.
    fn refresh(&mut self) -> Result<(), Error> {
        if !self.stale {
            return Ok(());
        }
        let bytes = std::mem::size_of_val(&self.host.phi.data[..]) as u64;
        let all: Vec<T> = self.ctx.read_buffer(&self.bufs[self.current], bytes)?;
        self.host.phi.data.copy_from_slice(&all);
        self.stale = false;
        Ok(())
    }
}

/// Dispatches `threads` threads in workgroups of [`WG`], rows of `row` threads.
fn dispatch(pass: &mut wgpu::ComputePass, threads: u32, row: u32) {
    if threads == 0 {
        return;
    }
    let groups = threads.div_ceil(WG);
    let per_row = row / WG;
    pass.dispatch_workgroups(groups.min(per_row), groups.div_ceil(per_row), 1);
}

fn bytes_of<T: Real>(v: &[T]) -> &[u8] {
    bytemuck::cast_slice(v)
}

/// `b` padded with zeros to a multiple of 16 bytes (the buffers' sizes).
fn padded(b: &[u8]) -> Vec<u8> {
    let mut v = b.to_vec();
    v.resize(b.len().max(16).next_multiple_of(16), 0);
    v
}

/// `idx ± |o|` in WGSL.
fn shifted(o: isize) -> String {
    if o < 0 {
        format!("idx - {}u", -o)
    } else {
        format!("idx + {o}u")
    }
}

/// The grid's shader: the scheme's `rates`, its stages (over the `updated` nodes, rows of
/// `row` threads), the fill of each axis (`axes`: first set, sets and lines) and the trade of
/// the layers of each axis the grid is cut along (`faces`: where its nodes start in the
/// table, and how many a layer has), every unknown addressed in the host grid's layout.
fn shader<S: FdScheme, T: Real>(
    host: &FdGrid<S, T>,
    (updated, row): (&[std::ops::Range<usize>], u32),
    axes: &[(usize, usize, usize)],
    faces: &[Option<(usize, usize)>; 3],
) -> String {
    let len = host.phi.nodes;
    let (nin, nu, np) = (S::LOADS.len(), S::UNKNOWNS.len(), host.prm.len());
    let st = host.stride;
    let mut s = format!("alias real = {};\n{}\n", arithmetic::<T>(), S::WGSL);
    s += &host.layout().wgsl_addr((len, nu));
    s += &format!(
        "@group(0) @binding(0) var<storage, read_write> phi: array<real>;
@group(0) @binding(1) var<storage, read_write> reg: array<real>;
@group(0) @binding(2) var<storage, read> prm: array<real, {np}>;
@group(0) @binding(3) var<storage, read> ctl: array<real, 7>;
@group(0) @binding(4) var<storage, read> tables: array<u32>;
@group(0) @binding(5) var<storage, read> sets_c: array<real>;
@group(0) @binding(6) var<storage, read_write> edge: array<real>;
const ROW: u32 = {row}u;
const NODES: u32 = {nodes}u;

fn node(t: u32) -> u32 {{
    let i = t % {c0}u;
    let j = (t / {c0}u) % {c1}u;
    let k = t / ({c0}u * {c1}u);
    return ({l0}u + i) + ({l1}u + j) * {s1}u + ({l2}u + k) * {s2}u;
}}

fn rates_at(idx: u32) -> array<real, {nu}> {{
    var inp: array<real, {nin}>;
",
        nodes = updated.iter().map(|r| r.len()).product::<usize>(),
        c0 = updated[0].len(),
        c1 = updated[1].len(),
        l0 = updated[0].start,
        l1 = updated[1].start,
        l2 = updated[2].start,
        s1 = st[1],
        s2 = st[2],
    );
    for (k, (u, _)) in S::LOADS.iter().enumerate() {
        s += &format!(
            "    inp[{k}] = phi[addr({u}u, {})];\n",
            shifted(host.offsets[k])
        );
    }
    s += "    return rates(inp, prm);\n}\n";
    for k in 0..S::INTEGRATOR.stages().len() {
        let update = match S::INTEGRATOR {
            Integrator::Euler => "phi[at] + ctl[0] * r[u]".to_string(),
            _ => format!("fma(ctl[{}], reg[at], ctl[0] * r[u])", 1 + 2 * k),
        };
        s += &format!(
            "
@compute @workgroup_size({WG})
fn rates_{k}(@builtin(global_invocation_id) gid: vec3<u32>) {{
    let t = gid.x + gid.y * ROW;
    if (t >= NODES) {{ return; }}
    let idx = node(t);
    let r = rates_at(idx);
    for (var u = 0u; u < {nu}u; u++) {{
        let at = addr(u, idx);
        reg[at] = {update};
    }}
}}

@compute @workgroup_size({WG})
fn accumulate_{k}(@builtin(global_invocation_id) gid: vec3<u32>) {{
    let t = gid.x + gid.y * ROW;
    if (t >= NODES) {{ return; }}
    let idx = node(t);
    for (var u = 0u; u < {nu}u; u++) {{
        let at = addr(u, idx);
        phi[at] = fma(ctl[{b}], reg[at], phi[at]);
    }}
}}
",
            b = 2 + 2 * k
        );
    }
    for (a, &(first, count, lines)) in axes.iter().enumerate() {
        let (b, c) = ((a + 1) % 3, (a + 2) % 3);
        s += &format!(
            "
@compute @workgroup_size({WG})
fn fill_{a}(@builtin(global_invocation_id) gid: vec3<u32>) {{
    let t = gid.x + gid.y * ROW;
    if (t >= {threads}u) {{ return; }}
    let e = {first}u + t % {count}u;
    let line = t / {count}u;
    let base = (line / {pc}u) * {sb}u + (line % {pc}u) * {sc}u;
    let u = tables[4u * e];
    phi[addr(u, base + tables[4u * e + 1u] * {sa}u)] = sets_c[3u * e]
        + sets_c[3u * e + 1u] * phi[addr(u, base + tables[4u * e + 2u] * {sa}u)]
        + sets_c[3u * e + 2u] * phi[addr(u, base + tables[4u * e + 3u] * {sa}u)];
}}
",
            threads = count * lines,
            count = count.max(1),
            pc = host.p[c],
            sb = st[b],
            sc = st[c],
            sa = st[a],
        );
    }
    for (a, (start, face)) in faces
        .iter()
        .enumerate()
        .filter_map(|(a, f)| f.map(|f| (a, f)))
    {
        // The sides with a wall of the grid keep their ghost layers (the walls set them).
        let keep: String = [false, true]
            .iter()
            .enumerate()
            .filter(|&(_, &high)| host.wall_here(a, high))
            .map(|(side, _)| format!("    if (side == {side}u) {{ return; }}\n"))
            .collect();
        s += &format!(
            "
@compute @workgroup_size({WG})
fn pack_{a}(@builtin(global_invocation_id) gid: vec3<u32>) {{
    let t = gid.x + gid.y * ROW;
    if (t >= {values}u) {{ return; }}
    let side = t / {layer}u;
    let u = (t / {face}u) % {nu}u;
    edge[t] = phi[addr(u, tables[{start}u + side * {face}u + t % {face}u])];
}}

@compute @workgroup_size({WG})
fn unpack_{a}(@builtin(global_invocation_id) gid: vec3<u32>) {{
    let t = gid.x + gid.y * ROW;
    if (t >= {values}u) {{ return; }}
    let side = t / {layer}u;
{keep}    let u = (t / {face}u) % {nu}u;
    phi[addr(u, tables[{start}u + (2u + side) * {face}u + t % {face}u])] = edge[t];
}}
",
            layer = nu * face,
            values = 2 * nu * face,
        );
    }
    s
}

impl<S: FdScheme, T: Real> FdRun for GpuFdGrid<S, T> {
    fn nodes(&self) -> [usize; 3] {
        self.host.nodes()
    }
    fn steps(&self) -> u64 {
        self.host.steps()
    }
    fn time(&self) -> f64 {
        self.host.time()
    }
    fn advance(&mut self, steps: u64, dt: f64) -> Result<(), Error> {
        GpuFdGrid::advance(self, steps, dt)
    }
    fn max_rates(&mut self) -> Result<Vec<f64>, Error> {
        GpuFdGrid::max_rates(self)
    }
    fn gather(&mut self, u: usize) -> Result<Option<Vec<f64>>, Error> {
        self.refresh()?;
        Ok(self.host.gather(u))
    }
    fn bytes_per_node(&self) -> usize {
        self.host.bytes_per_node()
    }
    fn checkpoint(&mut self, path: &std::path::Path) -> Result<(), Error> {
        self.refresh()?;
        Ok(self.host.checkpoint(path)?)
    }
    fn resume(&mut self, path: &std::path::Path) -> Result<(), Error> {
        self.host.resume(path)?;
        self.upload();
        Ok(self.ctx.wait()?)
    }
    fn set_unknown(&mut self, u: usize, f: &dyn Fn([f64; 3]) -> f64) -> Result<(), Error> {
        self.set(u, f)
    }
    fn describe(&self) -> String {
        format!("on {}", self.ctx.describe())
    }
    fn group(&self) -> &dyn crate::group::Group {
        FdRun::group(&self.host)
    }
}
