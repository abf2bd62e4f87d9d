//! The device's limits, measured in the run that reports against them (wgpu reports neither
//! a peak bandwidth nor a peak flop rate): the streaming bandwidth of a copy kernel
//! ([`copy_gbps`]) and the rate of fused multiply-adds ([`fma_gflops`]). Both are compute
//! shaders dispatched `k` times in one submission and waited for once, in [`BATCHES`]
//! batches of at least [`BATCH_SECONDS`] after a warm-up batch ([`batched`], which the
//! benchmarks of [`super::bench`] time their steps with too): the best batch is the figure, the spread of the others says
//! whether the device was busy ([`Probe::is_unstable`]).

use std::time::Instant;

use super::shader::arithmetic;
use super::{GpuContext, GpuError};
use crate::metrics::{repeated_rate, Probe};
use crate::Real;

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
/// least `least`, at most `MAX_BATCH` unless `least` is more), units per second as a
/// [`Probe`], and the units per batch.
pub fn batched(
    least: u64,
    run: impl FnMut(u64) -> Result<f64, GpuError>,
) -> Result<(Probe, u64), GpuError> {
    repeated_rate(least, MAX_BATCH, BATCH_SECONDS, BATCHES, run)
}

/// Threads per workgroup of the probes.
const WORKGROUP: u64 = 256;

/// The device's streaming bandwidth in GB/s: a compute shader copies a `bytes`-byte buffer
/// into another (`b[t] = a[t]` over `vec4<u32>`, one element per thread), each copy counted
/// as `2 · bytes` moved — the STREAM copy of a kernel, the bound a fused step can approach.
/// Not `copy_buffer_to_buffer`: a driver may run that on a copy engine well below what
/// kernels stream (on an H100 it moved 212 GB/s, a fused D2Q9 step 1.2 TB/s). The buffers
/// are at most what the device binds ([`GpuContext::binding_limit`]; lavapipe binds 128 MiB).
pub fn copy_gbps(ctx: &GpuContext, bytes: u64) -> Result<Probe, GpuError> {
    let bytes = bytes.min(ctx.binding_limit());
    let n = (bytes / 16).clamp(1, u32::MAX as u64);
    let bytes = 16 * n;
    let (wx, wy) = grid(ctx, n.div_ceil(WORKGROUP));
    let source = format!(
        "@group(0) @binding(0) var<storage, read> a: array<vec4<u32>>;\n\
         @group(0) @binding(1) var<storage, read_write> b: array<vec4<u32>>;\n\
         @compute @workgroup_size({WORKGROUP})\n\
         fn probe(@builtin(global_invocation_id) gid: vec3<u32>) {{\n\
         \x20   let t = gid.x + gid.y * {row}u;\n    if (t < {n}u) {{ b[t] = a[t]; }}\n}}\n",
        row = wx * WORKGROUP
    );
    // Without runtime checks, as the lattice's kernels run: the reference is the best copy.
    // SAFETY: the contract of `Dispatch::new_unchecked` holds: both bindings are whole buffers of
    // `bytes = 16·n` bytes, `n` elements of `vec4<u32>`, and thread `t` reads `a[t]` and writes
    // `b[t]` only under `t < n` (`n ≤ u32::MAX`, so the literal is exact), whatever the grid and
    // even where `t`'s `u32` arithmetic wraps; the shader has no loop and no division.
    let probe =
        unsafe { Dispatch::new_unchecked(ctx, "copy-probe", &source, [bytes, bytes], (wx, wy)) }?;
    probe.rate(2.0 * bytes as f64 / 1e9)
}

/// Independent FMA chains per thread of [`fma_gflops`] (`vec4`s: 32 scalar chains), enough
/// to hide the FMA latency with a few warps per scheduler.
pub const FMA_CHAINS: usize = 8;

/// Rounds of the chains per thread of [`fma_gflops`].
pub const FMA_ROUNDS: u32 = 512;

/// Rounds written out in one pass of the probe's loop, so that the loop's own instructions
/// (counter, compare, branch) do not take the issue slots the FMAs need: on an H100, 8 chains
/// in a loop of one round reached 42.5 TFLOP/s in f32, unrolled 4 times 54, 16 times 60 (of
/// the 67 its 132 SMs issue at 1980 MHz).
const FMA_UNROLL: u32 = 16;

/// Threads of one [`fma_gflops`] dispatch: 2²² fill the largest GPUs many times over (an H100
/// holds 2¹⁸ resident threads; at 2²⁰ the last, partial wave cost it 5–8 %); a CPU adapter,
/// which runs a workgroup per core at a time, 2¹⁴.
fn fma_threads(ctx: &GpuContext) -> u64 {
    if ctx.is_cpu() {
        1 << 14
    } else {
        1 << 22
    }
}

/// The multiplier `x = 1 − 2⁻¹⁰` and addend `y = 2(1 − x)` of the chains `a ← a·x + y`
/// (exact in binary16 and up): a fixed point at 2, which chains starting in `[0, 1)` approach
/// slowly, so every round changes every chain and no value overflows or falls subnormal.
pub const FMA_XY: (f64, f64) = (1.0 - 1.0 / 1024.0, 2.0 / 1024.0);

/// Where chain `c` of thread `t`, lane `l`, starts: in `[0, 1)`, every chain of a thread
/// apart (no two chains the compiler could merge).
pub fn fma_start(t: u64, c: usize, l: usize) -> f64 {
    ((t % 16) as f64 + (4 * c + l) as f64 / (4 * FMA_CHAINS) as f64) / 16.0
}

/// The device's peak rate of fused multiply-adds in the arithmetic of precision `T` (f32 for
/// f32 and f16s, which computes in f32; f64), GFLOP/s, an FMA counting two: every thread runs
/// [`FMA_CHAINS`] independent `vec4` chains `a ← fma(a, x, y)` for [`FMA_ROUNDS`] rounds
/// (`FMA_UNROLL` to a pass of its loop), `x` and `y` read from a buffer (no constant to
/// fold), and stores their sum (no chain is dead), so a dispatch of `N` threads does
/// `2 · 4 · FMA_CHAINS · FMA_ROUNDS · N` flops. The arithmetic a
/// site kernel does is the model's collision (`Model::collide_flops`), compared with this.
pub fn fma_gflops<T: Real>(ctx: &GpuContext) -> Result<Probe, GpuError> {
    let (probe, threads) = fma_dispatch::<T>(ctx)?;
    probe.rate((2 * 4 * FMA_CHAINS as u64 * FMA_ROUNDS as u64 * threads) as f64 / 1e9)
}

/// The FMA probe's kernel on `ctx` in the arithmetic of `T`, its `x`, `y` written, and the
/// threads of a dispatch.
fn fma_dispatch<T: Real>(ctx: &GpuContext) -> Result<(Dispatch<'_>, u64), GpuError> {
    let real = arithmetic::<T>();
    if real == "f64" && !ctx.supports_f64() {
        return Err(GpuError::NoF64 {
            adapter: ctx.info().name.clone(),
        });
    }
    let size = 4 * lane_bytes::<T>();
    // As many threads as the output (a `vec4` each) may hold in one binding.
    let most = (ctx.binding_limit() / size / WORKGROUP).max(1);
    let (wx, wy) = grid(ctx, (fma_threads(ctx) / WORKGROUP).min(most));
    // Every thread of the grid runs and stores: the flops and the output are of all of them.
    let threads = wx * wy * WORKGROUP;
    let lanes = |c: usize| {
        let l = |l| format!("{:?}", (4 * c + l) as f64 / (4 * FMA_CHAINS) as f64);
        format!("({}, {}, {}, {})", l(0), l(1), l(2), l(3))
    };
    let starts: String = (0..FMA_CHAINS)
        .map(|c| format!("    var a{c} = (s + vec4<r>{}) / 16.0;\n", lanes(c)))
        .collect();
    let rounds: String = (0..FMA_UNROLL)
        .flat_map(|_| (0..FMA_CHAINS).map(|c| format!("        a{c} = fma(a{c}, x, y);\n")))
        .collect();
    let sum = (0..FMA_CHAINS)
        .map(|c| format!("a{c}"))
        .collect::<Vec<_>>()
        .join(" + ");
    let source = format!(
        "alias r = {real};\n\
         @group(0) @binding(0) var<storage, read> k: array<vec4<r>, 2>;\n\
         @group(0) @binding(1) var<storage, read_write> out: array<vec4<r>>;\n\
         @compute @workgroup_size({WORKGROUP})\n\
         fn probe(@builtin(global_invocation_id) gid: vec3<u32>) {{\n\
         \x20   let t = gid.x + gid.y * {row}u;\n\
         \x20   let x = k[0];\n    let y = k[1];\n\
         \x20   let s = vec4<r>(r(t % 16u));\n{starts}\
         \x20   for (var i = 0u; i < {passes}u; i++) {{\n{rounds}    }}\n\
         \x20   out[t] = {sum};\n}}\n",
        row = wx * WORKGROUP,
        passes = FMA_ROUNDS / FMA_UNROLL
    );
    let probe = Dispatch::new(
        ctx,
        "fma-probe",
        &source,
        [2 * size, threads * size],
        (wx, wy),
    )?;
    let (x, y) = FMA_XY;
    let xy: Vec<u8> = [[x; 4], [y; 4]]
        .iter()
        .flatten()
        .flat_map(|&v| match lane_bytes::<T>() {
            8 => v.to_le_bytes().to_vec(),
            _ => (v as f32).to_le_bytes().to_vec(),
        })
        .collect();
    ctx.queue.write_buffer(&probe.buffers[0], 0, &xy);
    Ok((probe, threads))
}

/// The sums of each thread's chains after one dispatch of the FMA probe, for its first `n`
/// threads, as `f64` lanes: the proof that every chain ran every round (tests).
pub fn fma_sums<T: Real>(ctx: &GpuContext, n: usize) -> Result<Vec<[f64; 4]>, GpuError> {
    let (probe, _) = fma_dispatch::<T>(ctx)?;
    probe.time(1)?;
    let bytes = 4 * n as u64 * lane_bytes::<T>();
    let lanes: Vec<f64> = if lane_bytes::<T>() == 8 {
        ctx.read_buffer(&probe.buffers[1], bytes)?
    } else {
        let v: Vec<f32> = ctx.read_buffer(&probe.buffers[1], bytes)?;
        v.into_iter().map(f64::from).collect()
    };
    Ok(lanes
        .chunks_exact(4)
        .map(|v| [v[0], v[1], v[2], v[3]])
        .collect())
}

/// Bytes of one lane of the arithmetic of `T` ([`arithmetic`]).
fn lane_bytes<T: Real>() -> u64 {
    if arithmetic::<T>() == "f64" {
        8
    } else {
        4
    }
}

/// `wg` workgroups as a grid `(wx, wy)` within the device's per-dimension limit.
fn grid(ctx: &GpuContext, wg: u64) -> (u64, u64) {
    let wx = wg.min(ctx.workgroup_limit() as u64).max(1);
    (wx, wg.div_ceil(wx))
}

/// A probe's compute pipeline (entry point `probe`) over two storage buffers, dispatched on
/// one grid.
struct Dispatch<'a> {
    ctx: &'a GpuContext,
    pipeline: wgpu::ComputePipeline,
    group: wgpu::BindGroup,
    buffers: [wgpu::Buffer; 2],
    grid: (u32, u32),
}

impl<'a> Dispatch<'a> {
    /// The pipeline of `source` with buffers of `sizes` bytes at bindings 0 and 1, dispatched
    /// on a grid of `(wx, wy)` workgroups, with wgpu's runtime checks.
    fn new(
        ctx: &'a GpuContext,
        label: &str,
        source: &str,
        sizes: [u64; 2],
        grid: (u64, u64),
    ) -> Result<Self, GpuError> {
        let module = ctx
            .device
            .create_shader_module(Self::descriptor(label, source));
        Self::with_module(ctx, label, &module, sizes, grid)
    }

    /// As [`Dispatch::new`], without the runtime checks ([`wgpu::ShaderRuntimeChecks`]) unless
    /// the context keeps them ([`GpuContext::keeps_bounds_checks`]).
    ///
    /// # Safety
    /// Every invocation of `source`'s entry point `probe`, on this grid, with whole buffers of
    /// `sizes` bytes at bindings 0 and 1, must index inside those bindings, run no loop
    /// without bound, divide by no zero and overflow no signed division (what the checks that
    /// `unchecked()` drops would otherwise catch; undefined behaviour on the GPU if not).
    unsafe fn new_unchecked(
        ctx: &'a GpuContext,
        label: &str,
        source: &str,
        sizes: [u64; 2],
        grid: (u64, u64),
    ) -> Result<Self, GpuError> {
        if ctx.keeps_bounds_checks() {
            return Self::new(ctx, label, source, sizes, grid);
        }
        let desc = Self::descriptor(label, source);
        // SAFETY: the function's contract is the one `create_shader_module_trusted` asks of
        // a module without the checks of `ShaderRuntimeChecks::unchecked()`, and the buffers
        // bound below are those of the contract (whole buffers of `sizes` bytes).
        let module = unsafe {
            ctx.device
                .create_shader_module_trusted(desc, wgpu::ShaderRuntimeChecks::unchecked())
        };
        Self::with_module(ctx, label, &module, sizes, grid)
    }

    fn descriptor<'s>(label: &'s str, source: &'s str) -> wgpu::ShaderModuleDescriptor<'s> {
        wgpu::ShaderModuleDescriptor {
            label: Some(label),
            source: wgpu::ShaderSource::Wgsl(source.into()),
        }
    }

    /// The pipeline of `module`'s entry point `probe` over new buffers of `sizes` bytes.
    fn with_module(
        ctx: &'a GpuContext,
        label: &str,
        module: &wgpu::ShaderModule,
        sizes: [u64; 2],
        (wx, wy): (u64, u64),
    ) -> Result<Self, GpuError> {
        let dev = &ctx.device;
        let pipeline = dev.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some(label),
            layout: None,
            module,
            entry_point: Some("probe"),
            compilation_options: Default::default(),
            cache: None,
        });
        let usage = wgpu::BufferUsages::STORAGE
            | wgpu::BufferUsages::COPY_DST
            | wgpu::BufferUsages::COPY_SRC;
        let buffers = sizes.map(|size| {
            dev.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size,
                usage,
                mapped_at_creation: false,
            })
        });
        let group = dev.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some(label),
            layout: &pipeline.get_bind_group_layout(0),
            entries: &[
                wgpu::BindGroupEntry {
                    binding: 0,
                    resource: buffers[0].as_entire_binding(),
                },
                wgpu::BindGroupEntry {
                    binding: 1,
                    resource: buffers[1].as_entire_binding(),
                },
            ],
        });
        let grid = (
            u32::try_from(wx).unwrap_or(u32::MAX),
            u32::try_from(wy).unwrap_or(u32::MAX),
        );
        ctx.take_error()?;
        Ok(Self {
            ctx,
            pipeline,
            group,
            buffers,
            grid,
        })
    }

    /// The rate of dispatches, each counted as `units` (GB, GFLOP), over the batches of
    /// [`batched`].
    fn rate(&self, units: f64) -> Result<Probe, GpuError> {
        let (rate, _) = batched(1, |k| self.time(k))?;
        Ok(rate.scaled(units))
    }

    /// Seconds for `k` dispatches submitted at once and waited for once.
    fn time(&self, k: u64) -> Result<f64, GpuError> {
        let t0 = Instant::now();
        let mut enc = self.ctx.device.create_command_encoder(&Default::default());
        for _ in 0..k {
            let mut pass = enc.begin_compute_pass(&Default::default());
            pass.set_pipeline(&self.pipeline);
            pass.set_bind_group(0, &self.group, &[]);
            pass.dispatch_workgroups(self.grid.0, self.grid.1, 1);
        }
        self.ctx.queue.submit([enc.finish()]);
        self.ctx.wait()?;
        Ok(t0.elapsed().as_secs_f64())
    }
}

#[cfg(test)]
#[path = "probe_tests.rs"]
mod tests;
