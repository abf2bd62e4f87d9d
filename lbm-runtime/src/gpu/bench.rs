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
//! population copy's size (a copy kernel, read + write counted, [`copy_gbps`]), since wgpu
//! does not report a peak bandwidth.
//!
//! Both figures are the best of [`BATCHES`] timed batches, each submitted at once and waited
//! for once, and each long enough ([`BATCH_SECONDS`]) that the submission's round trip is
//! small against it; the spread of the batches says whether the figure is steady
//! ([`Probe::is_unstable`]). On an H100 a step of a 4096² D2Q9 lattice takes under half a
//! millisecond: ten steps timed as one batch, as this module timed them before, read between
//! a quarter and two thirds of what these batches read, and a copy probe sized from its first
//! copy wandered between 1.3 and 2.9 TB/s.
//!
//! On a CPU adapter (lavapipe) the figures are those of a software rasteriser on the host
//! cores, not GPU figures; [`GpuBench`] says so when printed.

use std::fmt;
use std::sync::Arc;
use std::time::Instant;

use super::{GpuContext, GpuError, GpuLattice};
use crate::boundary::BoundarySpec;
use crate::metrics::{repeated_rate, Probe};
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
    /// Steps per timed batch.
    pub steps: u64,
    /// Wall time of the fastest batch, in seconds.
    pub seconds: f64,
    /// `(fastest − slowest) / fastest` rate over the [`BATCHES`] batches.
    pub spread: f64,
    /// Million lattice-site updates per second, in the fastest batch.
    pub mlups: f64,
    /// Bytes moved per second (one read and one write per population), in GB/s.
    pub gbps: f64,
    /// The device's copy bandwidth measured in the same run ([`copy_gbps`]), in GB/s.
    pub copy: Probe,
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
        self.share_of(self.copy.best)
    }
}

impl fmt::Display for GpuBench {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "GPU fused step {} {} {} {} {}: {:.3} ms/step, {:.1} MLUPS (best of {BATCHES} \
             batches of {} steps, spread {:.0}%), {:.2} GB/s ({:.0}% of the measured copy \
             bandwidth {:.2} GB/s, {}) on {}",
            self.model,
            self.layout,
            self.precision,
            self.scheme.name(),
            super::error::sides(self.size),
            self.ms_per_step(),
            self.mlups,
            self.steps,
            100.0 * self.spread,
            self.gbps,
            100.0 * self.share_of_copy(),
            self.copy.best,
            self.copy.how(),
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

/// Timed batches of each measurement: the fastest is the figure, the others its spread.
pub const BATCHES: usize = 3;

/// The shortest timed batch, in seconds: each batch is one submission waited for once, and
/// the round trip of a submission (near a millisecond on a discrete GPU) is small against it.
pub const BATCH_SECONDS: f64 = 0.1;

/// The most units of work in one batch: a probe of a tiny buffer stays a bounded command
/// buffer (its figure is then the submission's, as on such a buffer it is).
const MAX_BATCH: u64 = 4096;

/// The rate of `run(k)`, which submits `k` units of work at once, waits for them and returns
/// the seconds they took ([`repeated_rate`]): a first batch of `least` units, then
/// [`BATCHES`] batches of as many units as that batch's rate fills [`BATCH_SECONDS`] with (at
/// least `least`, at most [`MAX_BATCH`] unless `least` is more), units per second as a
/// [`Probe`], and the units per batch.
fn batched(
    least: u64,
    run: impl FnMut(u64) -> Result<f64, GpuError>,
) -> Result<(Probe, u64), GpuError> {
    repeated_rate(least, MAX_BATCH, BATCH_SECONDS, BATCHES, run)
}

/// Times fused steps in `scheme` of a periodic lattice of `size = [LX, LY, LZ]` sites at rest
/// (`LZ = 1` in 2-D): the lattice first tunes its workgroup size ([`super::workgroup`]), then
/// runs a batch of `steps` steps (the warm-up, which also sizes the batches), then [`BATCHES`]
/// timed batches of at least `steps` steps and [`BATCH_SECONDS`], each submitted without
/// waiting and waited for once; the fastest batch is the figure.
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
    lat.finish()?;
    let (rate, steps) = batched(steps, |n| {
        let t0 = Instant::now();
        lat.steps(n);
        lat.finish()?;
        Ok(t0.elapsed().as_secs_f64())
    })?;
    let mlups = lat.dims().sites() as f64 * rate.best / 1e6;
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
        seconds: steps as f64 / rate.best,
        spread: rate.spread,
        mlups,
        gbps: mlups * (2 * M::Q * T::BYTES) as f64 / 1e3,
        copy: copy_gbps(ctx, copy_bytes.min(ctx.binding_limit()))?,
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
/// into another (`b[t] = a[t]` over `vec4<u32>`, one element per thread), each copy counted
/// as `2 · bytes` moved — the STREAM copy of a kernel, the bound a fused step can approach —
/// in [`BATCHES`] batches of copies after a warm-up batch ([`batched`]: a short batch times
/// the submission, not the memory); the best batch, and the spread of the others. Not
/// `copy_buffer_to_buffer`: a driver may run that on a copy engine well below what kernels
/// stream (on an H100 it moved 212 GB/s, a fused D2Q9 step 1.2 TB/s).
pub fn copy_gbps(ctx: &GpuContext, bytes: u64) -> Result<Probe, GpuError> {
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
    let copies = |k: u64| {
        let t0 = Instant::now();
        let mut enc = dev.create_command_encoder(&Default::default());
        for _ in 0..k {
            let mut pass = enc.begin_compute_pass(&Default::default());
            pass.set_pipeline(&pipeline);
            pass.set_bind_group(0, &group, &[]);
            pass.dispatch_workgroups(wx as u32, wy as u32, 1);
        }
        ctx.queue.submit([enc.finish()]);
        ctx.wait()?;
        Ok(t0.elapsed().as_secs_f64())
    };
    let (rate, _) = batched(1, copies)?;
    let gb = 2.0 * bytes as f64 / 1e9;
    Ok(Probe {
        best: rate.best * gb,
        ..rate
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_fill_their_time_from_the_first_batch_rate() {
        // 1 ms per unit: a first batch of 4 units sizes the batches to 100 ms of units.
        let mut calls = Vec::new();
        let (rate, units) = batched(4, |k| {
            calls.push(k);
            Ok(k as f64 * 1e-3)
        })
        .unwrap();
        assert_eq!(units, (BATCH_SECONDS * 1e3).ceil() as u64);
        assert_eq!(calls, [vec![4], vec![units; BATCHES]].concat());
        assert!(
            (rate.best - 1e3).abs() < 1e-6 && rate.spread < 1e-9,
            "{rate:?}"
        );
    }

    #[test]
    fn batches_keep_at_least_the_asked_units_and_at_most_the_cap() {
        // Slower than the batch time: the asked units; far faster: the cap.
        assert_eq!(batched(7, |k| Ok(k as f64)).unwrap().1, 7);
        assert_eq!(batched(1, |k| Ok(k as f64 * 1e-9)).unwrap().1, MAX_BATCH);
        assert_eq!(
            batched(MAX_BATCH + 1, |k| Ok(k as f64 * 1e-9)).unwrap().1,
            MAX_BATCH + 1
        );
    }
}
