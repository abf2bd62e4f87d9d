//! Criterion benches of the CPU kernels per layout × precision × kernel (seed 000 Table 2).
//! Throughput is in lattice sites, so criterion's "elements/s" are lattice updates per second.
//! Lattices are kept moderate (D2Q9 1024², D2Q37 256×512) so that a regression shows in minutes;
//! `lbm bench` runs the full-size table with the machine's bandwidth measured alongside.

use criterion::measurement::WallTime;
use criterion::{criterion_group, criterion_main, BenchmarkGroup, Criterion, Throughput};
use lbm::models::{D2Q37Params, D2Q9Bgk, D2Q9BgkParams, D2Q37};
use lbm::{Aos, BoundarySpec, CAoSoa, CSoa, Kernel, Lattice, Layout, Model, Real, Scheme, Soa};

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

fn d2q9(c: &mut Criterion) {
    let size = (1024, 1024);
    let p = D2Q9BgkParams {
        tau: 0.8,
        ax: 0.0,
        ay: 0.0,
    };
    let mut g = c.benchmark_group("d2q9");
    g.throughput(Throughput::Elements((size.0 * size.1) as u64));
    let all = [Kernel::Propagate, Kernel::Collide, Kernel::Fused];
    bench::<D2Q9Bgk, Aos, f64>(&mut g, size, &p, Scheme::TwoCopy, &all);
    bench::<D2Q9Bgk, Soa, f64>(&mut g, size, &p, Scheme::TwoCopy, &all);
    bench::<D2Q9Bgk, CSoa<8>, f64>(&mut g, size, &p, Scheme::TwoCopy, &all);
    bench::<D2Q9Bgk, CAoSoa<8>, f64>(&mut g, size, &p, Scheme::TwoCopy, &all);
    bench::<D2Q9Bgk, CAoSoa<8>, f64>(&mut g, size, &p, Scheme::InPlace, &[Kernel::Fused]);
    bench::<D2Q9Bgk, CAoSoa<16>, f32>(&mut g, size, &p, Scheme::InPlace, &[Kernel::Fused]);
    g.finish();
}

fn d2q37(c: &mut Criterion) {
    let size = (256, 512);
    let p = D2Q37Params { tau: 0.8, g: 1e-5 };
    let mut g = c.benchmark_group("d2q37");
    g.throughput(Throughput::Elements((size.0 * size.1) as u64));
    let both = [Kernel::Propagate, Kernel::Collide];
    bench::<D2Q37, CSoa<8>, f64>(&mut g, size, &p, Scheme::TwoCopy, &both);
    bench::<D2Q37, CAoSoa<8>, f64>(&mut g, size, &p, Scheme::TwoCopy, &both);
    g.finish();
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
