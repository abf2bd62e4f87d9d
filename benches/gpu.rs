//! Criterion benches of the GPU fused step (and the separate propagate and collide kernels)
//! per layout × precision, on the adapter `GpuContext::new` picks (set `LBM_GPU_ADAPTER` to a
//! name, `discrete`, `integrated` or `cpu` to choose). Throughput is in lattice sites, so
//! criterion's "elements/s" are lattice updates per second; each configuration also prints
//! one [`lbm::gpu::bench::GpuBench`] line with MLUPS, GB/s and GFLOP/s (beside the device's f32
//! FMA peak, printed once), labelled as not a GPU figure
//! when the adapter is a CPU (lavapipe). Without any adapter the bench prints why and exits.

use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, Criterion, Throughput, criterion_group, criterion_main};
use lbm::gpu::probe::fma_gflops;
use lbm::gpu::{AdapterChoice, GpuContext, GpuLattice, GpuOptions, bench::fused_mlups};
use lbm::models::{D2Q9Bgk, D2Q9BgkParams, D2Q37, D2Q37Params};
use lbm::{Aos, BoundarySpec, CAoSoa, CSoa, Kernel, Layout, Model, Real, Scheme, Soa};

fn context() -> Option<Arc<GpuContext>> {
    let adapter = AdapterChoice::from_env();
    match GpuContext::new(&GpuOptions {
        adapter,
        ..GpuOptions::default()
    }) {
        Ok(c) => Some(Arc::new(c)),
        Err(e) => {
            eprintln!("GPU benches skipped: {e}");
            None
        }
    }
}

/// Times `iters` submissions of kernel `k` and waits once.
fn timed<M: Model, T: Real>(lat: &mut GpuLattice<M, T>, k: Kernel, iters: u64) -> Duration {
    let t0 = Instant::now();
    for _ in 0..iters {
        lat.run_kernel(k)
            .expect("the two-copy scheme runs every kernel");
    }
    lat.finish().expect("device runs the kernels");
    t0.elapsed()
}

/// Benches `kernels` of a periodic `lx × ly` lattice of `M × L × T`, and prints the summary
/// line of [`fused_mlups`].
fn bench<M: Model, L: Layout, T: Real>(
    g: &mut BenchmarkGroup<WallTime>,
    ctx: &Arc<GpuContext>,
    (lx, ly): (usize, usize),
    params: &M::Params,
    kernels: &[Kernel],
) {
    if T::BYTES == 8 && !ctx.supports_f64() {
        eprintln!("{} {}: skipped, the adapter has no f64", L::NAME, T::NAME);
        return;
    }
    let spec = BoundarySpec::periodic();
    let mut lat =
        GpuLattice::<M, T>::new(ctx, L::KIND, lx, ly, params.clone(), Scheme::TwoCopy, &spec)
            .expect("benchmark lattice fits");
    // Kernels are timed a step at a time, which does not tune: the fused step's workgroup
    // size is chosen first.
    lat.tune_workgroup();
    for &k in kernels {
        let name = format!("{}/{}/{:?}", L::NAME, T::NAME, k);
        g.bench_function(name, |b| b.iter_custom(|iters| timed(&mut lat, k, iters)));
    }
    match fused_mlups::<M, T>(
        ctx,
        L::KIND,
        [lx, ly, 1],
        params.clone(),
        Scheme::TwoCopy,
        50,
    ) {
        Ok(r) => println!("{r}"),
        Err(e) => println!("{} {} {}: {e}", M::NAME, L::NAME, T::NAME),
    }
}

fn d2q9(c: &mut Criterion) {
    let Some(ctx) = context() else { return };
    println!("GPU adapter: {}", ctx.describe());
    let f32_peak = fma_gflops::<f32>(&ctx).map(|p| format!("{:.1} GFLOP/s ({})", p.best, p.how()));
    println!(
        "FMA peak, f32 arithmetic: {}",
        f32_peak.unwrap_or_else(|e| e.to_string())
    );
    let size = (512, 512);
    let p = D2Q9BgkParams {
        tau: 0.8,
        ax: 0.0,
        ay: 0.0,
    };
    let mut g = c.benchmark_group("gpu-d2q9");
    g.throughput(Throughput::Elements((size.0 * size.1) as u64));
    let all = [Kernel::Propagate, Kernel::Collide, Kernel::Fused];
    bench::<D2Q9Bgk, Aos, f64>(&mut g, &ctx, size, &p, &[Kernel::Fused]);
    bench::<D2Q9Bgk, Soa, f64>(&mut g, &ctx, size, &p, &all);
    bench::<D2Q9Bgk, CSoa<8>, f64>(&mut g, &ctx, size, &p, &[Kernel::Fused]);
    bench::<D2Q9Bgk, CAoSoa<8>, f64>(&mut g, &ctx, size, &p, &all);
    bench::<D2Q9Bgk, Soa, f32>(&mut g, &ctx, size, &p, &[Kernel::Fused]);
    bench::<D2Q9Bgk, CAoSoa<16>, f32>(&mut g, &ctx, size, &p, &[Kernel::Fused]);
    g.finish();
}

fn d2q37(c: &mut Criterion) {
    let Some(ctx) = context() else { return };
    let size = (128, 256);
    let p = D2Q37Params { tau: 0.8, g: 1e-5 };
    let mut g = c.benchmark_group("gpu-d2q37");
    g.throughput(Throughput::Elements((size.0 * size.1) as u64));
    let both = [Kernel::Propagate, Kernel::Collide, Kernel::Fused];
    bench::<D2Q37, Soa, f64>(&mut g, &ctx, size, &p, &both);
    bench::<D2Q37, CAoSoa<8>, f64>(&mut g, &ctx, size, &p, &both);
    g.finish();
}

fn config() -> Criterion {
    Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
}

criterion_group! {
    name = benches;
    config = config();
    targets = d2q9, d2q37
}
criterion_main!(benches);
