//! Throughput of the fused step on the GPU, for the `lbm bench` command.
//!
//! A fused step (Calore et al. 2019 §4, pull) reads and writes every population once, so it moves
//! `2 · Q · sizeof(real)` bytes per site; the figures are
//!
//! ```text
//! MLUPS = LX · LY · steps / t / 10⁶,      GB/s = MLUPS · 2 · Q · sizeof(real) / 10³
//! ```
//!
//! and its arithmetic `GFLOP/s = MLUPS · Model::collide_flops / 10³`. The references are the
//! device's copy bandwidth, measured in the same run on buffers of one population copy's size
//! (a copy kernel, read + write counted, [`copy_gbps`]), and its FMA peak in the step's
//! arithmetic ([`super::probe::fma_gflops`], measured once per table by the caller), since
//! wgpu reports neither.
//!
//! Both figures are the best of [`super::probe::BATCHES`] timed batches, each submitted at once and waited
//! for once, and each long enough that the submission's round trip is
//! small against it ([`super::probe::BATCH_SECONDS`]); the spread of the batches says whether the figure is steady
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

use super::probe::{batched, copy_gbps, BATCHES};
use super::{GpuContext, GpuError, GpuLattice};
use crate::boundary::BoundarySpec;
use crate::metrics::Probe;
use crate::{LayoutKind, Model, Real, Scheme};

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
    /// Floating-point operations of one site's collision (`Model::collide_flops`).
    pub flops_per_site: u64,
    /// The step's flop rate, GFLOP/s, in the fastest batch.
    pub gflops: f64,
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

    /// The share of a peak flop rate `peak_gflops` ([`super::probe::fma_gflops`]) reached.
    pub fn share_of_peak(&self, peak_gflops: f64) -> f64 {
        self.gflops / peak_gflops
    }
}

impl fmt::Display for GpuBench {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "GPU fused step {} {} {} {} {}: {:.3} ms/step, {:.1} MLUPS (best of {BATCHES} \
             batches of {} steps, spread {:.0}%), {:.2} GB/s ({:.0}% of the measured copy \
             bandwidth {:.2} GB/s, {}), {:.1} GFLOP/s ({} flops/site) on {}",
            self.model,
            self.layout,
            self.precision,
            self.scheme.name(),
            crate::runtime_error::sides(self.size),
            self.ms_per_step(),
            self.mlups,
            self.steps,
            100.0 * self.spread,
            self.gbps,
            100.0 * self.share_of_copy(),
            self.copy.best,
            self.copy.how(),
            self.gflops,
            self.flops_per_site,
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

/// Times fused steps in `scheme` of a periodic lattice of `size = [LX, LY, LZ]` sites at rest
/// (`LZ = 1` in 2-D): the lattice first tunes its workgroup size ([`super::workgroup`]), then
/// runs a batch of `steps` steps (the warm-up, which also sizes the batches), then [`BATCHES`]
/// timed batches of at least `steps` steps and [`super::probe::BATCH_SECONDS`], each submitted without
/// waiting and waited for once; the fastest batch is the figure.
pub fn fused_mlups<M: Model, T: Real>(
    ctx: &Arc<GpuContext>,
    layout: LayoutKind,
    size: [usize; 3],
    params: M::Params,
    scheme: Scheme,
    steps: u64,
) -> Result<GpuBench, GpuError> {
    let spec = BoundarySpec::periodic();
    let mut lat = GpuLattice::<M, T>::with_size(ctx, layout, size, params, scheme, &spec)?;
    let workgroup = lat.tune_workgroup();
    lat.finish()?;
    let (rate, steps) = batched(steps, |n| {
        let t0 = Instant::now();
        lat.steps(n);
        lat.finish()?;
        Ok(t0.elapsed().as_secs_f64())
    })?;
    let mlups = lat.dims().sites() as f64 * rate.best / 1e6;
    let flops_per_site = M::collide_flops(lat.params());
    let copy_bytes = (lat.dims().len() * T::BYTES) as u64;
    let bounds_checks = lat.bounds_checks().map(str::to_string);
    let workgroup_candidates = lat.workgroup_candidates().to_vec();
    drop(lat);
    Ok(GpuBench {
        model: M::NAME,
        layout: layout.name(),
        precision: T::NAME,
        scheme,
        size,
        steps,
        seconds: steps as f64 / rate.best,
        spread: rate.spread,
        mlups,
        gbps: mlups * (2 * M::Q * T::BYTES) as f64 / 1e3,
        copy: copy_gbps(ctx, copy_bytes.min(ctx.binding_limit()))?,
        flops_per_site,
        gflops: mlups * flops_per_site as f64 / 1e3,
        adapter: ctx.describe(),
        cpu_adapter: ctx.is_cpu(),
        bounds_checks,
        workgroup,
        workgroup_candidates,
    })
}
