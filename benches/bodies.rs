//! What a body costs: the step of Schäfer & Turek's 2D-1 channel (`lbm::cases::Cylinder` at its
//! default resolution, D = 40 sites, 881 × 164; D2Q9 MRT, SoA, two-copy, f64) with its cylinder
//! — curved walls on the links that cut it, the Zou–He inlet and outlet — against the same
//! channel without the cylinder, on the CPU and on the GPU (the adapter `GpuContext::new`
//! picks; lavapipe where there is no GPU, labelled as not a GPU figure), and the load on the
//! cylinder by momentum exchange, read on each backend. Throughput is in lattice sites:
//! criterion's elements/s are lattice updates per second of the whole channel.
//!
//! `cargo bench --bench bodies`; its figures are in `docs/performance.md`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use lbm::backend::{Backend, Gpu, build};
use lbm::blocks::Cut;
use lbm::cases::{Case, Cylinder};
use lbm::domain::GlobalSpec;
use lbm::geometry::MomentumExchange;
use lbm::gpu::{AdapterChoice, GpuContext, GpuLattice, GpuOptions};
use lbm::group::OneProcess;
use lbm::models::D2Q9Mrt;
use lbm::{BoundarySpec, Lattice, LayoutKind, Scheme, Soa};

/// The default cylinder case, its boundaries with the cylinder and without it.
fn channel() -> (
    Cylinder<D2Q9Mrt>,
    [usize; 3],
    [(&'static str, BoundarySpec); 2],
) {
    let case = Cylinder::<D2Q9Mrt>::new(40, 20.0, 0.05);
    let (lx, ly) = case.size();
    let with = case.boundaries();
    let without = BoundarySpec {
        solid: None,
        ..with.clone()
    };
    (case, [lx, ly, 1], [("cylinder", with), ("empty", without)])
}

fn cpu(c: &mut Criterion) {
    let (case, size, specs) = channel();
    let mut g = c.benchmark_group("cpu-channel");
    g.throughput(Throughput::Elements((size[0] * size[1]) as u64));
    for (name, spec) in &specs {
        let mut lat =
            Lattice::<D2Q9Mrt, Soa, f64>::with_size(size, case.params(), Scheme::TwoCopy, spec)
                .expect("the channel is valid");
        lat.set_equilibrium(case.initial()).expect("finite");
        g.bench_function(*name, |b| b.iter(|| lat.step()));
    }
    let (body, centre) = case.bodies().remove(0);
    let exchange = MomentumExchange::new::<D2Q9Mrt>(&body, &specs[0].1, size, centre);
    let mut lat =
        Lattice::<D2Q9Mrt, Soa, f64>::with_size(size, case.params(), Scheme::TwoCopy, &specs[0].1)
            .expect("the channel is valid");
    lat.set_equilibrium(case.initial()).expect("finite");
    g.throughput(Throughput::Elements(exchange.len() as u64));
    g.bench_function("load", |b| b.iter(|| exchange.on(&lat).expect("read")));
    g.finish();
}

fn gpu(c: &mut Criterion) {
    let ctx = match GpuContext::new(&GpuOptions {
        adapter: AdapterChoice::from_env(),
        ..GpuOptions::default()
    }) {
        Ok(ctx) => Arc::new(ctx),
        Err(e) => return eprintln!("GPU benches skipped: {e}"),
    };
    println!("GPU adapter: {}", ctx.describe());
    let (case, size, specs) = channel();
    let mut g = c.benchmark_group("gpu-channel");
    g.throughput(Throughput::Elements((size[0] * size[1]) as u64));
    let lattice = |spec: &BoundarySpec| {
        let mut lat = GpuLattice::<D2Q9Mrt, f64>::with_size(
            &ctx,
            LayoutKind::Soa,
            size,
            case.params(),
            Scheme::TwoCopy,
            spec,
        )
        .expect("the channel fits the device");
        lat.set_equilibrium(case.initial()).expect("finite");
        lat.tune_workgroup();
        lat
    };
    for (name, spec) in &specs {
        let mut lat = lattice(spec);
        g.bench_function(*name, |b| {
            b.iter_custom(|n| {
                let t0 = Instant::now();
                lat.steps(n);
                lat.finish().expect("the device runs the steps");
                t0.elapsed()
            })
        });
    }
    let (body, centre) = case.bodies().remove(0);
    let exchange = MomentumExchange::new::<D2Q9Mrt>(&body, &specs[0].1, size, centre);
    // The loads are read through the solver a run drives (the engine's block of the whole
    // lattice on the device).
    let spec = GlobalSpec {
        lx: size[0],
        ly: size[1],
        lz: size[2],
        params: case.params(),
        boundaries: specs[0].1.clone(),
    };
    let on_gpu = Backend::Device {
        gpu: Gpu::from(ctx.clone()),
        layout: LayoutKind::Soa,
    };
    let whole = Cut::WHOLE.into();
    let mut lat =
        build::<D2Q9Mrt, Soa, f64>(Box::new(OneProcess), spec, whole, Scheme::TwoCopy, &on_gpu)
            .expect("the channel fits the device");
    lat.set_equilibrium_at(&case.initial()).expect("finite");
    g.throughput(Throughput::Elements(exchange.len() as u64));
    g.bench_function("load", |b| b.iter(|| exchange.of(&mut *lat).expect("read")));
    g.finish();
}

fn config() -> Criterion {
    Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(5))
}

criterion_group! {
    name = benches;
    config = config();
    targets = cpu, gpu
}
criterion_main!(benches);
