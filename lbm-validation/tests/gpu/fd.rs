//! Finite-difference grids on the device ([`GpuFdGrid`]) against the same grids on the host
//! ([`FdGrid`]): the seed's cavity (forward Euler, walls of every kind along both axes), an
//! advection–diffusion scheme in three Runge–Kutta stages (periodic along x and y, the wrap
//! done by the fill kernels) and a 3-D heat scheme (Neumann and Dirichlet walls); f64 within
//! 1e-12 and f32 within 1e-5 of the host's values at every node.

use lbm::Real;
use lbm::fd::{FdGrid, FdRun, FdScheme, Rule, Side};
use lbm::fd_cavity::FdCavity;
use lbm::fd_scheme;
use lbm::gpu::GpuFdGrid;

use super::gpu_support::context;

fd_scheme! {
    /// Advection–diffusion with a fourth derivative's damping, three Runge–Kutta stages.
    pub scheme Drift2 {
        dim = 2;
        fields { c }
        params { ax: real, ay: real, nu: real }
        operators {
            d = derivative(1, order = 2, stencil = [-1/2, 0, 1/2]);
            d4 = derivative(4, order = 2, stencil = [1, -4, 6, -4, 1]);
            lap = laplacian(order = 2, stencil = [1, -2, 1]);
        }
        rates { c = -(ax * d(c, x) + ay * d(c, y)) + nu * lap(c) - 0.01 * h^3 * d4(c, x); }
        integrator = rk3;
    }
}

fd_scheme! {
    /// The heat equation in 3-D.
    pub scheme Heat3d {
        dim = 3;
        fields { T }
        params { alpha: real }
        operators { lap = laplacian(order = 2, stencil = [1, -2, 1]); }
        rates { T = alpha * lap(T); }
    }
}

/// The largest difference between the host's and the device's values of every unknown,
/// relative to the largest host value.
fn worst<S: FdScheme, T: Real>(cpu: &FdGrid<S, T>, gpu: &mut GpuFdGrid<S, T>) -> f64 {
    let mut worst: f64 = 0.0;
    for u in 0..S::UNKNOWNS.len() {
        let (a, b) = (cpu.field(u), gpu.field(u).unwrap());
        let scale = a.iter().fold(1e-300_f64, |m, v| m.max(v.abs()));
        for (x, y) in a.iter().zip(&b) {
            worst = worst.max((x - y).abs() / scale);
        }
    }
    worst
}

fn cavity<T: Real>(bound: f64) {
    let Some(ctx) = context() else { return };
    let c = FdCavity::new(41, 100.0);
    let mut cpu = c.grid::<T>().unwrap();
    let mut gpu = c.gpu_grid::<T>(ctx).unwrap();
    let dt = c.time_step();
    for _ in 0..3 {
        cpu.advance(200, dt).unwrap();
        gpu.advance(200, dt).unwrap();
        let w = worst(&cpu, &mut gpu);
        assert!(w <= bound, "{}: {w:e} after {} steps", T::NAME, cpu.steps());
    }
    assert_eq!(gpu.steps(), 600);
    let (a, b) = (cpu.max_rates(), GpuFdGrid::max_rates(&mut gpu).unwrap());
    assert!(a[1] > 1e-3, "the flow is still developing: {a:?}");
    assert!(
        (a[1] - b[1]).abs() <= bound.max(1e-9) * a[1].max(1.0),
        "{a:?} {b:?}"
    );
}

#[test]
fn the_cavity_on_the_device_is_the_host_grid_in_f64() {
    cavity::<f64>(1e-12);
}

#[test]
fn the_cavity_on_the_device_is_the_host_grid_in_f32() {
    cavity::<f32>(1e-5);
}

#[test]
fn runge_kutta_stages_and_the_periodic_wrap_on_the_device_are_the_host_grid() {
    let Some(ctx) = context() else { return };
    let n = [37, 24, 1];
    let h = 1.0 / 24.0;
    let params = Drift2Params {
        ax: 1.0,
        ay: -0.5,
        nu: 0.01,
    };
    let start = |x: [f64; 3]| {
        let pi2 = 2.0 * std::f64::consts::PI;
        (pi2 * x[0] * 24.0 / 37.0).sin() * (pi2 * x[1]).cos() + 0.3 * (pi2 * 2.0 * x[1]).sin()
    };
    let mut cpu: FdGrid<Drift2, f64> = FdGrid::new(n, h, params, vec![Side::Periodic; 4]).unwrap();
    let mut gpu: GpuFdGrid<Drift2, f64> =
        GpuFdGrid::new(ctx, n, h, params, vec![Side::Periodic; 4]).unwrap();
    cpu.set(0, start);
    gpu.set(0, start).unwrap();
    cpu.advance(300, 0.2 * h).unwrap();
    gpu.advance(300, 0.2 * h).unwrap();
    let w = worst(&cpu, &mut gpu);
    assert!(w <= 1e-12, "{w:e}");
}

#[test]
fn a_3d_grid_with_neumann_and_dirichlet_walls_on_the_device_is_the_host_grid() {
    let Some(ctx) = context() else { return };
    let n = [9, 11, 13];
    let h = 0.1;
    let sides = vec![
        Side::Wall(vec![Rule::ZeroGradient]),
        Side::Wall(vec![Rule::Value(1.0)]),
        Side::Periodic,
        Side::Periodic,
        Side::Wall(vec![Rule::Value(-0.5)]),
        Side::Wall(vec![Rule::ZeroGradient]),
    ];
    let params = Heat3dParams { alpha: 1.0 };
    let start = |x: [f64; 3]| x[0] * x[0] - x[1] + 3.0 * x[2] * x[0];
    let mut cpu: FdGrid<Heat3d, f64> = FdGrid::new(n, h, params, sides.clone()).unwrap();
    let mut gpu: GpuFdGrid<Heat3d, f64> = GpuFdGrid::new(ctx, n, h, params, sides).unwrap();
    cpu.set(0, start);
    gpu.set(0, start).unwrap();
    cpu.advance(100, 0.1 * h * h).unwrap();
    gpu.advance(100, 0.1 * h * h).unwrap();
    let w = worst(&cpu, &mut gpu);
    assert!(w <= 1e-12, "{w:e}");
}

/// A host checkpoint continues on the device, and the device's on the host: the cavity
/// resumed either way stays within 1e-12 of the uninterrupted host run, at the same step and
/// time.
#[test]
fn checkpoints_move_between_the_host_and_the_device() {
    let Some(ctx) = context() else { return };
    let dir = tempfile::tempdir().unwrap();
    let (host_ckpt, device_ckpt) = (dir.path().join("host.lbm"), dir.path().join("device.lbm"));
    let c = FdCavity::new(33, 100.0);
    let dt = c.time_step();
    let mut cpu = c.grid::<f64>().unwrap();
    cpu.advance(250, dt).unwrap();
    cpu.checkpoint(&host_ckpt).unwrap();
    let mut gpu = c.gpu_grid::<f64>(ctx).unwrap();
    FdRun::resume(&mut gpu, &host_ckpt).unwrap();
    assert_eq!((gpu.steps(), gpu.time()), (cpu.steps(), cpu.time()));
    cpu.advance(250, dt).unwrap();
    gpu.advance(250, dt).unwrap();
    let w = worst(&cpu, &mut gpu);
    assert!(w <= 1e-12, "{w:e} after the host's checkpoint");
    FdRun::checkpoint(&mut gpu, &device_ckpt).unwrap();
    let mut back = c.grid::<f64>().unwrap();
    back.resume(&device_ckpt).unwrap();
    assert_eq!(back.steps(), 500);
    cpu.advance(250, dt).unwrap();
    back.advance(250, dt).unwrap();
    for u in 0..3 {
        let (a, b) = (cpu.field(u), back.field(u));
        let w = a
            .iter()
            .zip(&b)
            .map(|(x, y)| (x - y).abs())
            .fold(0.0, f64::max);
        assert!(
            w <= 1e-12,
            "unknown {u}: {w:e} after the device's checkpoint"
        );
    }
}
