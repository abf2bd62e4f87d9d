//! `lbm bench`: the benchmark of Calore et al. 2019, Table 2 — propagate, bc, collide and the fused step
//! for every layout and precision, in ms per iteration, MLUPS, GB/s and GFLOP/s, each with its
//! share of the machine's limit measured in the same run; for the 2-D models (D2Q9, D2Q37)
//! and the 3-D ones (D3Q19, D3Q27).

use lbm::metrics::{
    Bandwidth, KernelTiming, Probe, measure_bandwidth, measure_peak_flops, time_in_turn,
    time_kernel,
};
use lbm::models::{
    D2Q9Bgk, D2Q9BgkParams, D2Q37, D2Q37Params, D3Q19Bgk, D3Q19BgkParams, D3Q27Bgk, D3Q27BgkParams,
};
use std::sync::Arc;

use lbm::gpu::probe::{BATCH_SECONDS, BATCHES};
use lbm::gpu::{self, GpuContext};
use lbm::{BoundarySpec, F16s, Kernel, Lattice, Layout, LayoutKind, Model, Real, Scheme, Wall};

use super::bench_args::{Backend, BenchArgs, Which, lattices_fit, open_context};
use super::bench_csv::{Row, Rows, check_csv_path};
use super::settings::bad;
use super::{
    CliError, Generic, GenericReal, Precision, World, dispatch, dispatch_real, layout_kind,
};

/// Runs the benchmark.
pub fn run(a: &BenchArgs, world: &World) -> Result<(), CliError> {
    if a.csv.is_some() && (a.ranks.is_some() || a.split) {
        return Err(CliError::Config {
            key: "csv".into(),
            message: "--csv writes the rows of the kernel tables (`lbm bench` without --ranks \
                      or --split)"
                .into(),
        });
    }
    if let Some(path) = &a.csv {
        check_csv_path(path, a.force)?;
    }
    if let Some(ranks) = &a.ranks {
        return ranks_bench(a, ranks, world);
    }
    if a.split {
        return super::split::run(a);
    }
    if a.backend == Backend::Hetero {
        return Err(CliError::Config {
            key: "backend".into(),
            message: "hetero benchmarks the ranks of the MPI ring (`mpiexec -n N lbm bench \
                      --ranks --backend hetero`); the split in one process is `lbm bench \
                      --split`"
                .into(),
        });
    }
    if a.adapter.is_some() && a.backend == Backend::Cpu {
        return Err(bad(
            "adapter",
            "chooses the GPU; --backend cpu runs none: drop one of the two",
        ));
    }
    preflight(a)?;
    say!(
        "{} threads; before each table, bandwidth probes on {} MiB arrays and an FMA probe of \
         the table's precision at the kernels' vector width, on every thread",
        rayon::current_num_threads(),
        a.bw_mib,
    );
    let d2q9 = D2Q9BgkParams {
        tau: 0.8,
        ax: 0.0,
        ay: 0.0,
    };
    let d2q37 = D2Q37Params { tau: 0.8, g: 1e-5 };
    let thermal = BoundarySpec {
        bottom: Some(Wall::Thermal { temperature: 1.0 }),
        top: Some(Wall::Thermal { temperature: 1.0 }),
        ..BoundarySpec::default()
    };
    let d3q19 = D3Q19BgkParams {
        tau: 0.8,
        ax: 0.0,
        ay: 0.0,
        az: 0.0,
    };
    let d3q27 = D3Q27BgkParams {
        tau: 0.8,
        ax: 0.0,
        ay: 0.0,
        az: 0.0,
    };
    let rows = Rows::default();
    if a.model == Which::FdCavity {
        if a.backend == Backend::Hetero {
            return Err(bad(
                "backend",
                "fd-cavity is not benchmarked split between host and device (lbm run fd-cavity --backend hetero runs it): give cpu, gpu or all",
            ));
        }
        let mut devices = Vec::new();
        if matches!(a.backend, Backend::Cpu | Backend::All) {
            devices.push(None);
        }
        if matches!(a.backend, Backend::Gpu | Backend::All) {
            match open_context(a) {
                Ok(ctx) => devices.push(Some(ctx)),
                Err(e) if a.backend == Backend::All => say!("\nGPU: skipped ({e})"),
                Err(e) => return Err(e.into()),
            }
        }
        for ctx in &devices {
            for &p in &a.precision {
                match p {
                    Precision::F64 => fd_table::<f64>(a, &rows, ctx.as_ref())?,
                    Precision::F32 => fd_table::<f32>(a, &rows, ctx.as_ref())?,
                    Precision::F16s => {
                        say!("\nfd-cavity f16s not run: finite differences run in f64 or f32")
                    }
                }
            }
        }
        if let Some(path) = &a.csv {
            rows.write(path)?;
            say!("\nthe rows above in {}", path.display());
        }
        return Ok(());
    }
    if a.backend != Backend::Gpu {
        for &p in &a.precision {
            let table = Table { a, p, rows: &rows };
            if a.model.includes(Which::D2q9) {
                let spec = BoundarySpec::channel();
                table.run::<D2Q9Bgk>(plane(a.d2q9_size), &d2q9, &spec)?;
            }
            if a.model.includes(Which::D2q37) {
                table.run::<D2Q37>(plane(a.d2q37_size), &d2q37, &thermal)?;
            }
            // Periodic cubes, as lbmpy's 3-D benchmark that we compare with runs them.
            if a.model.includes(Which::D3q19) {
                let spec = BoundarySpec::periodic();
                table.run::<D3Q19Bgk>(a.d3q19_size, &d3q19, &spec)?;
            }
            if a.model.includes(Which::D3q27) {
                let spec = BoundarySpec::periodic();
                table.run::<D3Q27Bgk>(a.d3q27_size, &d3q27, &spec)?;
            }
        }
    }
    if a.backend != Backend::Cpu {
        gpu_tables(a, &rows, d2q9, d2q37, d3q19, d3q27)?;
    }
    if let Some(path) = &a.csv {
        rows.write(path)?;
        say!("\nthe rows above in {}", path.display());
    }
    Ok(())
}

#[cfg(feature = "mpi")]
fn ranks_bench(a: &BenchArgs, ranks: &[usize], world: &World) -> Result<(), CliError> {
    super::ranks::run(a, ranks, world)
}

#[cfg(not(feature = "mpi"))]
fn ranks_bench(_: &BenchArgs, _: &[usize], _: &World) -> Result<(), CliError> {
    Err(CliError::Config {
        key: "ranks".into(),
        message: "this lbm was built without MPI: build it with `cargo build --release \
                  --features mpi` (needs MPICH: scripts/setup installs it) and run it under \
                  `mpiexec -n N target/release/lbm bench --ranks`"
            .into(),
    })
}

/// The GPU's fused step for every model, precision and layout, on the chosen adapter.
fn gpu_tables(
    a: &BenchArgs,
    rows: &Rows,
    d2q9: D2Q9BgkParams,
    d2q37: D2Q37Params,
    d3q19: D3Q19BgkParams,
    d3q27: D3Q27BgkParams,
) -> Result<(), CliError> {
    let ctx = match open_context(a) {
        Ok(ctx) => ctx,
        Err(e) if a.backend == Backend::All => {
            say!("\nGPU: skipped ({e})");
            return Ok(());
        }
        Err(e) => return Err(e.into()),
    };
    say!("\nGPU fused step on {}", ctx.describe());
    if ctx.is_cpu() {
        say!("(a CPU adapter, software Vulkan: these are not GPU figures)");
    }
    say!(
        "{:<12} {:<10} {:<5} {:<9} {:>9} {:>8} {:>26} {:>16}  {:>9}  bounds checks",
        "model",
        "layout",
        "prec",
        "scheme",
        "ms/step",
        "MLUPS",
        "GB/s (% of copy GB/s)",
        "GFLOP/s (% peak)",
        "workgroup"
    );
    say!(
        "(each row the fastest of {BATCHES} batches of at least {} steps and {BATCH_SECONDS} s; \
         the copy bandwidth likewise, the best of {BATCHES} batches; `!`: the batches of the step \
         or of the copy spread by more than {:.0}%, the device was busy)\n\
         (GFLOP/s: the collision's flops per site times the updates, against the FMA peak probed \
         once per precision, a compute shader of independent FMA chains)\n\
         (workgroup: the site kernels' size, the fastest of the sizes timed in the first steps)",
        a.gpu_steps,
        100.0 * Probe::UNSTABLE
    );
    for &p in &a.precision {
        if p == Precision::F64 && !ctx.supports_f64() {
            say!("f64: skipped, the adapter has no SHADER_F64");
            continue;
        }
        if p == Precision::F16s && !ctx.supports_f16() {
            say!("f16s: the adapter has no SHADER_F16; binary16 pairs packed in u32 words");
        }
        let (peak, arithmetic) = match p {
            Precision::F64 => fma_peak::<f64>(&ctx)?,
            Precision::F32 => fma_peak::<f32>(&ctx)?,
            Precision::F16s => fma_peak::<F16s>(&ctx)?,
        };
        say!(
            "{}: FMA peak {:.1} GFLOP/s in {arithmetic} arithmetic ({})",
            format!("{p:?}").to_lowercase(),
            peak.best,
            peak.how()
        );
        for (l, scheme) in a
            .layouts()
            .into_iter()
            .flat_map(|l| [(l, Scheme::TwoCopy), (l, Scheme::InPlace)])
        {
            let layout = layout_kind(l, p.default_vl());
            let job = |size| (&ctx, layout, size, scheme, a.gpu_steps, rows, peak);
            if a.model.includes(Which::D2q9) {
                dispatch_real(p, GpuJob::<D2Q9Bgk>::new(job(plane(a.d2q9_size)), d2q9));
            }
            if a.model.includes(Which::D2q37) {
                dispatch_real(p, GpuJob::<D2Q37>::new(job(plane(a.d2q37_size)), d2q37));
            }
            if a.model.includes(Which::D3q19) {
                dispatch_real(p, GpuJob::<D3Q19Bgk>::new(job(a.d3q19_size), d3q19));
            }
            if a.model.includes(Which::D3q27) {
                dispatch_real(p, GpuJob::<D3Q27Bgk>::new(job(a.d3q27_size), d3q27));
            }
        }
    }
    Ok(())
}

/// The device's FMA peak in the arithmetic of precision `T`, and that arithmetic's name.
fn fma_peak<T: Real>(ctx: &GpuContext) -> Result<(Probe, &'static str), gpu::GpuError> {
    Ok((
        gpu::probe::fma_gflops::<T>(ctx)?,
        gpu::shader::arithmetic::<T>(),
    ))
}

/// `[LX, LY, 1]`: a 2-D lattice's size.
fn plane((lx, ly): (usize, usize)) -> [usize; 3] {
    [lx, ly, 1]
}

/// One row of the GPU table; a configuration the device cannot run (too large) is reported in
/// its row and the others still run.
struct GpuJob<'a, M: Model> {
    ctx: &'a Arc<GpuContext>,
    layout: LayoutKind,
    size: [usize; 3],
    params: M::Params,
    scheme: Scheme,
    steps: u64,
    rows: &'a Rows,
    /// The device's FMA peak in the step's arithmetic.
    peak: Probe,
}

/// What every row of a GPU table shares: the device, the layout, the size, the scheme, the
/// steps asked, the rows kept and the FMA peak.
type GpuRowOf<'a> = (
    &'a Arc<GpuContext>,
    LayoutKind,
    [usize; 3],
    Scheme,
    u64,
    &'a Rows,
    Probe,
);

impl<'a, M: Model> GpuJob<'a, M> {
    fn new(
        (ctx, layout, size, scheme, steps, rows, peak): GpuRowOf<'a>,
        params: M::Params,
    ) -> Self {
        Self {
            ctx,
            layout,
            size,
            params,
            scheme,
            steps,
            rows,
            peak,
        }
    }
}

impl<M: Model> GenericReal for GpuJob<'_, M> {
    type Output = ();
    fn run<T: Real>(self) {
        let layout = self.layout.name();
        let head = format!(
            "{:<12} {:<10} {:<5} {:<9}",
            M::NAME,
            layout,
            T::NAME,
            self.scheme.name()
        );
        let bench = gpu::bench::fused_mlups::<M, T>;
        match bench(
            self.ctx,
            self.layout,
            self.size,
            self.params,
            self.scheme,
            self.steps,
        ) {
            Ok(b) => {
                say!(
                    "{head} {:>9.3} {:>8.1} {:>12.2} ({:>3.0}% of {:.1}{}) {:>9.1} ({:>3.0}%)  {:>9}  {}",
                    b.ms_per_step(),
                    b.mlups,
                    b.gbps,
                    100.0 * b.share_of_copy(),
                    b.copy.best,
                    if b.copy.is_unstable() || b.spread > Probe::UNSTABLE {
                        "!"
                    } else {
                        ""
                    },
                    b.gflops,
                    100.0 * b.share_of_peak(self.peak.best),
                    b.workgroup,
                    b.bounds_checks
                        .as_deref()
                        .map_or("off (proven)".into(), |why| format!("on: {why}"))
                );
                self.rows.push(Row {
                    backend: "gpu",
                    model: M::NAME,
                    precision: T::NAME,
                    layout,
                    kernel: "fused".into(),
                    scheme: self.scheme.name(),
                    sites: self.size.iter().product(),
                    ms_per_iter: b.ms_per_step(),
                    mlups: b.mlups,
                    gb_per_s: Some(b.gbps),
                    bandwidth_gb_per_s: Some(b.copy.best),
                    bandwidth_pattern: "device copy",
                    bandwidth_spread: Some(b.copy.spread),
                    gflop_per_s: Some(b.gflops),
                    peak_gflop_per_s: Some(self.peak.best),
                    peak_spread: Some(self.peak.spread),
                    workgroup: Some(b.workgroup),
                    tuned: "-".into(),
                });
            }
            Err(e) => say!("{head} not run: {e}"),
        }
    }
}

/// Refuses, before the probes, a lattice of the selected models that a chosen layout cannot
/// run (too small, not a multiple of the cluster width) or whose two-copy populations do not
/// fit in the memory available, and bandwidth probes or a finite-difference grid that do not
/// fit either.
fn preflight(a: &BenchArgs) -> Result<(), CliError> {
    let fits = |key: &str, what: &'static str, bytes: u64| {
        let need = lbm::memory::Need::new().with(what, bytes);
        lbm::memory::check(&need, 1, lbm::memory::available()).map_err(|e| {
            bad(
                key,
                e.with_remedy(format!("give a smaller --{key}")).to_string(),
            )
        })
    };
    fits(
        "bw-mib",
        "bandwidth probe arrays",
        2 * probe_bytes(a) as u64,
    )?;
    if a.model.includes(Which::FdCavity) {
        let (nx, ny) = a.fd_size;
        // Three unknowns in two copies, in the widest precision asked for.
        let bytes = a.precision.iter().map(|p| p.bytes()).max().unwrap_or(8);
        let grid = lbm::memory::product(&[nx, ny, 6 * bytes]);
        fits("fd-size", "the grid's unknowns", grid)?;
    }
    let all = [Which::D2q9, Which::D2q37, Which::D3q19, Which::D3q27];
    lattices_fit(a, &all, (&a.layouts(), &a.precision), |size| size)?;
    Ok(())
}

/// The bytes of each array of the bandwidth probes (`--bw-mib`), saturated rather than
/// wrapped (the memory check then refuses it).
fn probe_bytes(a: &BenchArgs) -> usize {
    a.bw_mib.saturating_mul(1 << 20)
}

/// The CPU tables of one precision, each row also kept in `rows`.
struct Table<'a> {
    a: &'a BenchArgs,
    p: Precision,
    rows: &'a Rows,
}

impl Table<'_> {
    /// One table: the bandwidth and the flop rate measured now (the machine may be shared,
    /// so each table gets its own reference), then every layout.
    fn run<M: Model>(
        &self,
        size: [usize; 3],
        params: &M::Params,
        spec: &BoundarySpec,
    ) -> Result<(), CliError> {
        let a = self.a;
        let peak = match self.p {
            Precision::F64 => measure_peak_flops::<f64>(5),
            Precision::F32 => measure_peak_flops::<f32>(5),
            Precision::F16s => measure_peak_flops::<F16s>(5),
        };
        let bw = &measure_bandwidth(probe_bytes(a), 5);
        let shape = lbm::Extent::of_size(size);
        say!(
            "\n{} {:?}, {shape} sites, {} flops/site in collide; measured now: read-modify-write \
             {:.1} GB/s ({}), copy {:.1} GB/s ({}), non-temporal copy {:.1} GB/s ({}), FMA peak \
             {:.1} GFLOP/s ({})",
            M::NAME,
            self.p,
            M::collide_flops(params),
            bw.rmw.best,
            bw.rmw.how(),
            bw.copy.best,
            bw.copy.how(),
            bw.streamed_copy.best,
            bw.streamed_copy.how(),
            peak.best,
            peak.how()
        );
        say!(
            "(tuned: the prefetch distance each pass kept, timed in its first sweeps, and the \
             two-copy step's kind of store; in place: its pull / local half-steps; then whether \
             the fused step runs paired, two steps in one sweep; fused rows per time step)"
        );
        say!(
            "{:<10} {:<18} {:>9} {:>8} {:>16} {:>18}  tuned",
            "layout",
            "kernel",
            "ms/iter",
            "MLUPS",
            "GB/s (% BW)",
            "GFLOP/s (% peak)"
        );
        for l in a.layouts() {
            let job = LayoutJob::<M> {
                a,
                limits: Limits { bw, peak },
                rows: self.rows,
                size,
                params,
                spec,
            };
            dispatch(l, self.p, job)?;
        }
        Ok(())
    }
}

/// The limits measured beside a table.
#[derive(Clone, Copy)]
struct Limits<'a> {
    bw: &'a Bandwidth,
    peak: Probe,
}

struct LayoutJob<'a, M: Model> {
    a: &'a BenchArgs,
    limits: Limits<'a>,
    rows: &'a Rows,
    size: [usize; 3],
    params: &'a M::Params,
    spec: &'a BoundarySpec,
}

impl<M: Model> LayoutJob<'_, M> {
    /// Prints the row of `t` and keeps it for the CSV.
    fn row<L: Layout, T: Real>(&self, t: &KernelTiming) {
        print_row(L::NAME, t, self.limits);
        let Limits { bw, peak } = self.limits;
        let moves = t.kernel != Kernel::Bc;
        let computes = t.flops_per_site > 0;
        let pattern = bw.for_pattern(t.pattern);
        self.rows.push(Row {
            backend: "cpu",
            model: M::NAME,
            precision: T::NAME,
            layout: L::NAME,
            kernel: format!("{:?}", t.kernel).to_lowercase(),
            scheme: t.scheme.name(),
            sites: t.sites,
            ms_per_iter: t.ms(),
            mlups: t.mlups(),
            gb_per_s: moves.then(|| t.gbs()),
            bandwidth_gb_per_s: moves.then_some(pattern.best),
            bandwidth_pattern: if moves { t.pattern.name() } else { "" },
            bandwidth_spread: moves.then_some(pattern.spread),
            gflop_per_s: computes.then(|| t.gflops()),
            peak_gflop_per_s: computes.then_some(peak.best),
            peak_spread: computes.then_some(peak.spread),
            workgroup: None,
            tuned: tuned(t),
        });
    }
}

impl<M: Model> Generic for LayoutJob<'_, M> {
    type Output = Result<(), CliError>;
    fn run<L: Layout, T: Real>(self) -> Self::Output {
        let s = &self;
        let mut two =
            Lattice::<M, L, T>::with_size(s.size, s.params.clone(), Scheme::TwoCopy, s.spec)?;
        for k in [Kernel::Propagate, Kernel::Bc, Kernel::Collide] {
            s.row::<L, T>(&time_kernel(&mut two, k, s.a.iters)?);
        }
        let in_place =
            || Lattice::<M, L, T>::with_size(s.size, s.params.clone(), Scheme::InPlace, s.spec);
        // The two fused steps in turn, iteration by iteration, where the in-place lattice fits
        // beside the two-copy one: their ratio is then of one state of a shared machine.
        let [lx, ly, lz] = s.size;
        let need = lbm::memory::populations::<M, T>(lx, ly * lz, Scheme::InPlace, false);
        let with_room = lbm::memory::Need::new().with("populations", need.saturating_mul(2));
        match lbm::memory::check(&with_room, 1, lbm::memory::available()) {
            Ok(()) => {
                let mut aa = in_place()?;
                for t in time_in_turn([&mut two, &mut aa], Kernel::Fused, s.a.iters)? {
                    s.row::<L, T>(&t);
                }
            }
            Err(short) => {
                s.row::<L, T>(&time_kernel(&mut two, Kernel::Fused, s.a.iters)?);
                drop(two);
                say!(
                    "{:<10} (the fused steps timed one after the other: the in-place lattice's \
                     {:.1} GiB would leave less than as much again of the {:.1} GiB available \
                     ({}) beside the two-copy one)",
                    L::NAME,
                    lbm::memory::in_gib(need),
                    lbm::memory::in_gib(short.available),
                    short.source
                );
                let mut aa = in_place()?;
                s.row::<L, T>(&time_kernel(&mut aa, Kernel::Fused, s.a.iters)?);
            }
        }
        Ok(())
    }
}

fn kernel_name(t: &KernelTiming) -> String {
    match (t.kernel, t.scheme) {
        (Kernel::Fused, s) => format!("fused ({})", s.name()),
        (k, _) => format!("{k:?}").to_lowercase(),
    }
}

fn print_row(layout: &str, t: &KernelTiming, Limits { bw, peak }: Limits) {
    let peak = peak.best;
    let mem = match t.kernel {
        Kernel::Bc => "-".to_string(),
        _ => format!(
            "{:.1} ({:.0}%)",
            t.gbs(),
            100.0 * t.mlups() / t.mlups_limit(bw)
        ),
    };
    let flops = match t.flops_per_site {
        0 => "-".to_string(),
        _ => format!("{:.1} ({:.0}%)", t.gflops(), 100.0 * t.gflops() / peak),
    };
    say!(
        "{:<10} {:<18} {:>9.2} {:>8.1} {:>16} {:>18}  {}",
        layout,
        kernel_name(t),
        t.ms(),
        t.mlups(),
        mem,
        flops,
        tuned(t)
    );
}

/// What the lattice's tuning kept for the timed kernel, pass by pass (`-`: not tuned), and for
/// the fused step whether it swept two steps at once (`, paired` or `, separate`).
fn tuned(t: &KernelTiming) -> String {
    let pairing = match t.paired {
        Some(true) => ", paired",
        Some(false) => ", separate",
        None => "",
    };
    match t.tuned.as_slice() {
        [] => "-".into(),
        passes => {
            let passes: Vec<String> = passes.iter().map(ToString::to_string).collect();
            passes.join(" / ") + pairing
        }
    }
}

/// The fd-cavity step's table in precision `T`: nodes per second, the registers' traffic
/// against the copy bandwidth and the flop rate against the FMA peak, both measured now.
fn fd_table<T: Real>(
    a: &BenchArgs,
    rows: &Rows,
    ctx: Option<&Arc<GpuContext>>,
) -> Result<(), CliError> {
    use super::fd_run::fd_layout;
    use lbm::fd::{FdRun, FdScheme};
    use lbm::fd_cavity::{FdCavity, Scheme};
    let (nx, ny) = a.fd_size;
    if nx != ny || nx < 5 {
        return Err(bad(
            "fd-size",
            format!("{nx}x{ny}: the cavity is square with at least 5 nodes a side, e.g. 4097x4097"),
        ));
    }
    let cavity = FdCavity::new(nx, 100.0);
    let dt = cavity.time_step();
    // Seconds per step in each layout run (the median of the CPU's iterations of ten steps,
    // each ending with the divergence check; the best of the GPU's batches), the bytes per
    // node, the copy bandwidth and the FMA peak measured now, and where.
    let (times, bytes, bw, peak, backend) = match ctx {
        None => {
            let peak = measure_peak_flops::<T>(5);
            let bw = measure_bandwidth(probe_bytes(a), 5).copy;
            let mut times = Vec::new();
            let mut bytes = 0;
            for layout in a.layouts() {
                let Some(layout) = fd_layout(layout) else {
                    say!(
                        "\nfd-cavity csoa: the soa row (fd-cavity's soa runs in clusters of 8 nodes along x)"
                    );
                    continue;
                };
                let mut g = cavity
                    .grid::<T>()
                    .map_err(lbm::Error::from)?
                    .with_layout(layout);
                g.advance(1, dt).map_err(lbm::Error::from)?;
                let mut each = Vec::with_capacity(a.iters);
                for _ in 0..a.iters {
                    let t = std::time::Instant::now();
                    g.advance(10, dt).map_err(lbm::Error::from)?;
                    each.push(t.elapsed().as_secs_f64() / 10.0);
                }
                each.sort_by(f64::total_cmp);
                bytes = FdRun::bytes_per_node(&g);
                times.push((layout.name(), each[each.len() / 2]));
            }
            (times, bytes, bw, peak, "cpu")
        }
        Some(ctx) => {
            // The device's own grid (the unknowns zero, as the cavity starts), for its batched
            // timing.
            let s = cavity.spec().map_err(lbm::Error::from)?;
            let mut g =
                gpu::GpuFdGrid::<Scheme, T>::new(ctx.clone(), s.nodes, s.h, s.params, s.sides)?;
            g.advance(1, dt)?;
            let (rate, _) = gpu::probe::batched(1, |k| {
                g.time_steps(k, dt)
                    .map_err(|e| gpu::GpuError::Device(e.to_string()))
            })?;
            g.advance(1, dt)?;
            let bytes = FdRun::bytes_per_node(&g);
            let unknowns = (nx * ny * Scheme::UNKNOWNS.len() * std::mem::size_of::<T>()) as u64;
            let bw = gpu::probe::copy_gbps(ctx, unknowns)?;
            let (peak, _) = fma_peak::<T>(ctx)?;
            (vec![("soa", 1.0 / rate.best)], bytes, bw, peak, "gpu")
        }
    };
    // The rates' flops and one multiply-add per unknown for the update.
    let flops = Scheme::FLOPS + 2 * Scheme::UNKNOWNS.len() as u64;
    let on = ctx.map_or_else(String::new, |c| format!(" on {}", c.describe()));
    say!(
        "\nfd-cavity {}{on}, {nx}x{ny} nodes, {flops} flops and {} reads per node; measured now: \
         copy {:.1} GB/s ({}), FMA peak {:.1} GFLOP/s ({})",
        T::NAME,
        Scheme::LOADS.len(),
        bw.best,
        bw.how(),
        peak.best,
        peak.how()
    );
    say!(
        "{:<10} {:<18} {:>9} {:>8} {:>16} {:>18}",
        "layout",
        "kernel",
        "ms/iter",
        "MN/s",
        "GB/s (% BW)",
        "GFLOP/s (% peak)"
    );
    let nodes = (nx * ny) as f64;
    for (layout, seconds) in times {
        let mn = nodes / seconds / 1e6;
        let gbs = nodes * bytes as f64 / seconds / 1e9;
        let gflops = nodes * flops as f64 / seconds / 1e9;
        say!(
            "{:<10} {:<18} {:>9.2} {:>8.1} {:>16} {:>18}",
            layout,
            "euler step",
            seconds * 1e3,
            mn,
            format!("{gbs:.1} ({:.0}%)", 100.0 * gbs / bw.best),
            format!("{gflops:.1} ({:.0}%)", 100.0 * gflops / peak.best)
        );
        rows.push(Row {
            backend,
            model: "fd-cavity",
            precision: T::NAME,
            layout,
            kernel: "euler".into(),
            scheme: "two-copy",
            sites: nx * ny,
            ms_per_iter: seconds * 1e3,
            mlups: mn,
            gb_per_s: Some(gbs),
            bandwidth_gb_per_s: Some(bw.best),
            bandwidth_pattern: "copy",
            bandwidth_spread: Some(bw.spread),
            gflop_per_s: Some(gflops),
            peak_gflop_per_s: Some(peak.best),
            peak_spread: Some(peak.spread),
            workgroup: None,
            tuned: "-".into(),
        });
    }
    Ok(())
}
