//! Throughput of the fused step on the GPU, for the `lbm bench` command.
//!
//! A fused step (seed 000 §4, pull) reads and writes every population once, so it moves
//! `2 · Q · sizeof(real)` bytes per site; the figures are
//!
//! ```text
//! MLUPS = LX · LY · steps / t / 10⁶,      GB/s = MLUPS · 2 · Q · sizeof(real) / 10³
//! ```
//!
//! The reference is the device's copy bandwidth, measured in the same run on buffers of one
//! population copy's size (`copy_buffer_to_buffer`, read + write counted), since wgpu does
//! not report a peak bandwidth.
//!
//! On a CPU adapter (lavapipe) the figures are those of a software rasteriser on the host
//! cores, not GPU figures; [`GpuBench`] says so when printed.

use std::fmt;
use std::sync::Arc;
use std::time::Instant;

use super::{GpuContext, GpuError, GpuLattice};
use crate::boundary::BoundarySpec;
use crate::{Layout, Model, Real, Scheme};

/// The result of [`fused_mlups`].
#[derive(Debug, Clone, PartialEq)]
pub struct GpuBench {
    /// Model name.
    pub model: &'static str,
    /// Layout name.
    pub layout: &'static str,
    /// `f32` or `f64`.
    pub precision: &'static str,
    /// The streaming scheme.
    pub scheme: Scheme,
    /// The lattice's sides `[LX, LY, LZ]` (`LZ = 1` in 2-D).
    pub size: [usize; 3],
    /// Timed steps.
    pub steps: u64,
    /// Wall time of the timed steps, in seconds.
    pub seconds: f64,
    /// Million lattice-site updates per second.
    pub mlups: f64,
    /// Bytes moved per second (one read and one write per population), in GB/s.
    pub gbps: f64,
    /// The device's copy bandwidth measured in the same run ([`copy_gbps`]), in GB/s.
    pub copy_gbps: f64,
    /// The adapter ([`GpuContext::describe`]).
    pub adapter: String,
    /// Whether the adapter is a CPU (the figures are then not GPU figures).
    pub cpu_adapter: bool,
    /// Why the step's shader kept its runtime bounds checks (`None`: proven in range and
    /// created without them, [`super::bounds`]).
    pub bounds_checks: Option<String>,
    /// The site kernels' workgroup size the lattice chose ([`super::workgroup`]).
    pub workgroup: u32,
    /// The sizes it tried.
    pub workgroup_candidates: Vec<u32>,
}

impl GpuBench {
    /// Milliseconds per step.
    pub fn ms_per_step(&self) -> f64 {
        1e3 * self.seconds / self.steps as f64
    }

    /// The share of a peak bandwidth `peak_gbps` (the device's, where known) reached.
    pub fn share_of(&self, peak_gbps: f64) -> f64 {
        self.gbps / peak_gbps
    }

    /// The share of the measured copy bandwidth reached.
    pub fn share_of_copy(&self) -> f64 {
        self.share_of(self.copy_gbps)
    }
}

impl fmt::Display for GpuBench {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "GPU fused step {} {} {} {} {}: {:.3} ms/step, {:.1} MLUPS, {:.2} GB/s \
             ({:.0}% of the measured copy bandwidth {:.2} GB/s) on {}",
            self.model,
            self.layout,
            self.precision,
            self.scheme.name(),
            super::error::sides(self.size),
            self.ms_per_step(),
            self.mlups,
            self.gbps,
            100.0 * self.share_of_copy(),
            self.copy_gbps,
            self.adapter
        )?;
        write!(
            f,
            ", workgroups of {} (fastest of {:?})",
            self.workgroup, self.workgroup_candidates
        )?;
        match &self.bounds_checks {
            None => write!(f, ", no runtime bounds checks (indices proven in range)")?,
            Some(why) => write!(f, ", runtime bounds checks kept ({why})")?,
        }
        if self.cpu_adapter {
            write!(f, " [CPU adapter (software Vulkan): not a GPU figure]")?;
        }
        Ok(())
    }
}

/// Times `steps` fused steps in `scheme` of a periodic lattice of `size = [LX, LY, LZ]` sites
/// at rest (`LZ = 1` in 2-D), submitted without waiting, and waits once at the end; before
/// them, the lattice tunes its workgroup size ([`super::workgroup`]) and runs
/// `steps / 10 + 1` warm-up steps at the size it chose.
pub fn fused_mlups<M: Model, L: Layout, T: Real>(
    ctx: &Arc<GpuContext>,
    size: [usize; 3],
    params: M::Params,
    scheme: Scheme,
    steps: u64,
) -> Result<GpuBench, GpuError> {
    let spec = BoundarySpec::periodic();
    let mut lat = GpuLattice::<M, L, T>::with_size(ctx, size, params, scheme, &spec)?;
    let workgroup = lat.tune_workgroup();
    lat.steps(steps / 10 + 1);
    lat.finish()?;
    let t0 = Instant::now();
    lat.steps(steps);
    lat.finish()?;
    let seconds = t0.elapsed().as_secs_f64();
    let mlups = lat.dims().sites() as f64 * steps as f64 / seconds / 1e6;
    let copy_bytes = (lat.dims().len() * T::BYTES) as u64;
    let bounds_checks = lat.bounds_checks().map(str::to_string);
    let workgroup_candidates = lat.workgroup_candidates().to_vec();
    drop(lat);
    Ok(GpuBench {
        model: M::NAME,
        layout: L::NAME,
        precision: T::NAME,
        scheme,
        size,
        steps,
        seconds,
        mlups,
        gbps: mlups * (2 * M::Q * T::BYTES) as f64 / 1e3,
        copy_gbps: copy_gbps(ctx, copy_bytes.min(ctx.binding_limit()), 10)?,
        adapter: ctx.describe(),
        cpu_adapter: ctx.is_cpu(),
        bounds_checks,
        workgroup,
        workgroup_candidates,
    })
}

/// Threads per workgroup of the copy probe.
const COPY_WORKGROUP: u64 = 256;

/// The device's streaming bandwidth in GB/s: a compute shader copies a `bytes`-byte buffer
/// into another (`b[t] = a[t]` over `vec4<u32>`, one element per thread), at least `reps`
/// times and for at least 200 ms after one timed warm-up copy (a short run measures the
/// submission, not the memory), each counted as `2 · bytes` moved — the STREAM copy of a kernel, the
/// bound a fused step can approach. Not `copy_buffer_to_buffer`: a driver may run that on a
/// copy engine well below what kernels stream (on an H100 it moved 212 GB/s, a fused D2Q9
/// step 1.2 TB/s).
pub fn copy_gbps(ctx: &GpuContext, bytes: u64, reps: u32) -> Result<f64, GpuError> {
    let n = (bytes / 16).clamp(1, u32::MAX as u64);
    let bytes = 16 * n;
    let wg = n.div_ceil(COPY_WORKGROUP);
    let wx = wg.min(ctx.workgroup_limit() as u64).max(1);
    let wy = wg.div_ceil(wx);
    let source = format!(
        "@group(0) @binding(0) var<storage, read> a: array<vec4<u32>>;\n\
         @group(0) @binding(1) var<storage, read_write> b: array<vec4<u32>>;\n\
         @compute @workgroup_size({COPY_WORKGROUP})\n\
         fn copy(@builtin(global_invocation_id) gid: vec3<u32>) {{\n\
         \x20   let t = gid.x + gid.y * {row}u;\n    if (t < {n}u) {{ b[t] = a[t]; }}\n}}\n",
        row = wx * COPY_WORKGROUP
    );
    let dev = &ctx.device;
    let desc = wgpu::ShaderModuleDescriptor {
        label: Some("copy-probe"),
        source: wgpu::ShaderSource::Wgsl(source.into()),
    };
    // Without runtime checks, as the lattice's kernels run: the reference is the best copy.
    let module = if ctx.keeps_bounds_checks() {
        dev.create_shader_module(desc)
    } else {
        // SAFETY: both buffers hold `n` elements and thread `t` touches element `t < n` only.
        unsafe { dev.create_shader_module_trusted(desc, wgpu::ShaderRuntimeChecks::unchecked()) }
    };
    let pipeline = dev.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some("copy-probe"),
        layout: None,
        module: &module,
        entry_point: Some("copy"),
        compilation_options: Default::default(),
        cache: None,
    });
    let mk = |label| {
        dev.create_buffer(&wgpu::BufferDescriptor {
            label: Some(label),
            size: bytes,
            usage: wgpu::BufferUsages::STORAGE,
            mapped_at_creation: false,
        })
    };
    let (a, b) = (mk("copy-src"), mk("copy-dst"));
    let group = dev.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some("copy-probe"),
        layout: &pipeline.get_bind_group_layout(0),
        entries: &[
            wgpu::BindGroupEntry {
                binding: 0,
                resource: a.as_entire_binding(),
            },
            wgpu::BindGroupEntry {
                binding: 1,
                resource: b.as_entire_binding(),
            },
        ],
    });
    let submit = |reps: u32| {
        let mut enc = dev.create_command_encoder(&Default::default());
        for _ in 0..reps {
            let mut pass = enc.begin_compute_pass(&Default::default());
            pass.set_pipeline(&pipeline);
            pass.set_bind_group(0, &group, &[]);
            pass.dispatch_workgroups(wx as u32, wy as u32, 1);
        }
        ctx.queue.submit([enc.finish()]);
    };
    let timed = |reps: u32| -> Result<f64, GpuError> {
        let t0 = Instant::now();
        submit(reps);
        ctx.wait()?;
        Ok(t0.elapsed().as_secs_f64())
    };
    let once = timed(1)?;
    let reps = reps.max((0.2 / once.max(1e-6)).ceil().min(1000.0) as u32);
    Ok(2.0 * bytes as f64 * reps as f64 / timed(reps)? / 1e9)
}
