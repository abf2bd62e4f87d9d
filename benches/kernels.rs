//! Criterion benches of the CPU kernels: every layout × precision (f64, f32, f16s) × scheme, with
//! the separate kernels of the two-copy pipeline (Calore et al. 2019, Table 2) and the fused steps
//! (the in-place one by half-steps, and both schemes' swept two steps at a time, paired).
//! Throughput is in lattice sites, so criterion's "elements/s" are lattice updates per second.
//! Lattices are kept moderate (D2Q9 1024², D2Q37 256×512) so that a regression shows in minutes;
//! `lbm bench` runs the full-size table with the machine's bandwidth measured alongside.

use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, Criterion, Throughput, criterion_group, criterion_main};
use lbm::models::{D2Q9Bgk, D2Q9BgkParams, D2Q37, D2Q37Params};
use lbm::{
    Aos, BoundarySpec, CAoSoa, CSoa, F16s, Kernel, Lattice, Layout, Model, Real, Scheme, Soa,
};

/// Benches `kernels` of a fresh `lx × ly` lattice of model `M`, layout `L`, precision `T`.
fn bench<M: Model, L: Layout, T: Real>(
    g: &mut BenchmarkGroup<WallTime>,
    (lx, ly): (usize, usize),
    params: &M::Params,
    scheme: Scheme,
    kernels: &[Kernel],
) {
    let spec = BoundarySpec::channel();
    let mut lat = Lattice::<M, L, T>::new(lx, ly, params.clone(), scheme, &spec)
        .expect("benchmark lattice is valid");
    for &k in kernels {
        let name = format!("{}/{}/{}/{:?}", L::NAME, T::NAME, scheme.name(), k);
        g.bench_function(name, |b| b.iter(|| lat.run_kernel(k).expect("kernel runs")));
    }
}

/// The fused step swept two steps at a time (`Lattice::set_paired`): an iteration is two time
/// steps (in place, a local half-step and the pull after it).
fn paired<M: Model, L: Layout, T: Real>(
    g: &mut BenchmarkGroup<WallTime>,
    (lx, ly): (usize, usize),
    params: &M::Params,
    scheme: Scheme,
) {
    let spec = BoundarySpec::channel();
    let mut lat = Lattice::<M, L, T>::new(lx, ly, params.clone(), scheme, &spec)
        .expect("benchmark lattice is valid");
    lat.set_paired(true);
    let name = format!("{}/{}/{}/Fused paired", L::NAME, T::NAME, scheme.name());
    if lat.paired() != Some(true) {
        // A two-copy lattice whose rings would not fit this machine's cache (`Lattice::paired`).
        eprintln!("{name}: not run, this lattice does not pair on this machine");
        return;
    }
    if scheme == Scheme::InPlace {
        lat.step();
    }
    g.throughput(Throughput::Elements(2 * (lx * ly) as u64));
    g.bench_function(name, |b| b.iter(|| lat.steps(2)));
    g.throughput(Throughput::Elements((lx * ly) as u64));
}

/// Every layout (the clustered ones with one 64-byte vector of the arithmetic per cluster) in
/// precision `T`, each with the two-copy kernels and the in-place step.
fn every_layout<M: Model, T: Real, const VL: usize>(
    g: &mut BenchmarkGroup<WallTime>,
    size: (usize, usize),
    params: &M::Params,
) {
    fn both_schemes<M: Model, L: Layout, T: Real>(
        g: &mut BenchmarkGroup<WallTime>,
        size: (usize, usize),
        params: &M::Params,
    ) {
        let two_copy = [Kernel::Propagate, Kernel::Collide, Kernel::Fused];
        bench::<M, L, T>(g, size, params, Scheme::TwoCopy, &two_copy);
        bench::<M, L, T>(g, size, params, Scheme::InPlace, &[Kernel::Fused]);
        paired::<M, L, T>(g, size, params, Scheme::TwoCopy);
        paired::<M, L, T>(g, size, params, Scheme::InPlace);
    }
    both_schemes::<M, Aos, T>(g, size, params);
    both_schemes::<M, Soa, T>(g, size, params);
    both_schemes::<M, CSoa<VL>, T>(g, size, params);
    both_schemes::<M, CAoSoa<VL>, T>(g, size, params);
}

/// Every layout, scheme and precision of model `M` in benchmark group `name`.
fn every_variant<M: Model>(c: &mut Criterion, name: &str, size: (usize, usize), p: &M::Params) {
    let mut g = c.benchmark_group(name);
    g.throughput(Throughput::Elements((size.0 * size.1) as u64));
    every_layout::<M, f64, 8>(&mut g, size, p);
    every_layout::<M, f32, 16>(&mut g, size, p);
    every_layout::<M, F16s, 16>(&mut g, size, p);
    g.finish();
}

fn d2q9(c: &mut Criterion) {
    let p = D2Q9BgkParams {
        tau: 0.8,
        ax: 0.0,
        ay: 0.0,
    };
    every_variant::<D2Q9Bgk>(c, "d2q9", (1024, 1024), &p);
}

fn d2q37(c: &mut Criterion) {
    let p = D2Q37Params { tau: 0.8, g: 1e-5 };
    every_variant::<D2Q37>(c, "d2q37", (256, 512), &p);
}

fn config() -> Criterion {
    Criterion::default()
        .sample_size(10)
        .warm_up_time(std::time::Duration::from_millis(500))
        .measurement_time(std::time::Duration::from_secs(2))
}

criterion_group! {
    name = benches;
    config = config();
    targets = d2q9, d2q37
}
criterion_main!(benches);
