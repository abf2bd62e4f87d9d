//! Finite-difference grids on the device ([`GpuFdGrid`]) against the same grids on the host
//! ([`FdGrid`]): the seed's cavity (forward Euler, walls of every kind along both axes), an
//! advection–diffusion scheme in three Runge–Kutta stages (periodic along x and y, the wrap
//! done by the fill kernels) and a 3-D heat scheme (Neumann and Dirichlet walls); f64 within
//! 1e-12 and f32 within 1e-5 of the host's values at every node; the same grids in every
//! layout, in blocks on the device cut along two axes and split between the host and the
//! device (three parts a block, each on a thread: [`lbm::backend::build_fd`]) within 1e-12;
//! checkpoints across both.

use std::sync::Arc;

use lbm::backend::{Backend, Gpu, build_fd};
use lbm::blocks::{Blocks, Cut};
use lbm::fd::{FdGrid, FdLayout, FdRun, FdScheme, FdSpec, Rule, Side};
use lbm::fd_cavity::FdCavity;
use lbm::fd_scheme;
use lbm::gpu::{GpuContext, GpuFdGrid};
use lbm::group::{OneProcess, Threads, Transfers};
use lbm::hetero::SplitChoice;
use lbm::{LayoutKind, Real};

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

/// The host grid's values of every unknown.
fn fields<S: FdScheme, T: Real>(cpu: &FdGrid<S, T>) -> Vec<Vec<f64>> {
    (0..S::UNKNOWNS.len()).map(|u| cpu.field(u)).collect()
}

/// The largest difference between the host grid's values of every unknown and `run`'s
/// (gathered), relative to the largest host value (collective; 0 but on the group's first
/// member).
fn worst<S: FdScheme, T: Real>(cpu: &FdGrid<S, T>, run: &mut dyn FdRun) -> f64 {
    worst_of(&fields(cpu), run)
}

/// [`worst`] against the values `host` of every unknown.
fn worst_of(host: &[Vec<f64>], run: &mut dyn FdRun) -> f64 {
    let mut worst: f64 = 0.0;
    for (u, a) in host.iter().enumerate() {
        let Some(b) = run.gather(u).unwrap() else {
            continue;
        };
        let scale = a.iter().fold(1e-300_f64, |m, v| m.max(v.abs()));
        for (x, y) in a.iter().zip(&b) {
            worst = worst.max((x - y).abs() / scale);
        }
    }
    worst
}

/// The device of `ctx`, storing the unknowns in SoA.
fn device(ctx: Arc<GpuContext>) -> Backend {
    Backend::Device {
        gpu: Gpu::from(ctx),
        layout: LayoutKind::Soa,
    }
}

/// The host/device split of `ctx` with `rows` host planes at each end of the cut axis.
fn split_rows(ctx: &Arc<GpuContext>, rows: usize) -> Backend {
    Backend::Split {
        gpu: Gpu::from(ctx.clone()),
        choice: SplitChoice::Columns(rows),
    }
}

/// One process alone.
fn one<T: Real>() -> Box<dyn lbm::group::Transfers<T>> {
    Box::new(OneProcess)
}

/// The cavity `c` in one process on `backend`, built by the library ([`FdCavity::build`]).
fn cavity_on<T: Real>(c: &FdCavity, backend: Backend) -> Box<dyn FdRun> {
    let whole = Blocks::whole(c.nodes());
    c.build::<T>(one(), whole, FdLayout::Soa, &backend).unwrap()
}

/// A grid of scheme `S` to run on the host and elsewhere from the same start.
struct Setup<S: FdScheme> {
    n: [usize; 3],
    h: f64,
    params: S::Params,
    sides: Vec<Side>,
    start: fn([f64; 3]) -> f64,
    dt: f64,
}

impl<S: FdScheme> Setup<S> {
    /// The largest difference, relative, between the host grid and `other` (set to the same
    /// start) after `steps` steps of each.
    fn against(&self, other: &mut dyn FdRun, steps: u64) -> f64 {
        let host = self.host_after(steps);
        other.advance(steps, self.dt).unwrap();
        worst_of(&host, other)
    }

    /// The host grid's values of every unknown after `steps` steps.
    fn host_after(&self, steps: u64) -> Vec<Vec<f64>> {
        let mut cpu: FdGrid<S, f64> =
            FdGrid::new(self.n, self.h, self.params, self.sides.clone()).unwrap();
        cpu.set(0, self.start);
        cpu.advance(steps, self.dt).unwrap();
        fields(&cpu)
    }

    /// [`Setup::against`] on the host/device split of `ctx` (3 planes at each end on the
    /// host), its three parts on threads of their own, the unknowns stored in `layout`.
    fn against_split(&self, ctx: &Arc<GpuContext>, steps: u64, layout: FdLayout) -> f64 {
        let host = self.host_after(steps);
        let split = split_rows(ctx, 3);
        let parts = Threads::run(3, |t| {
            let whole = (Blocks::whole(self.n), layout);
            let mut g = self.part(Box::new(t), whole, &split).unwrap();
            g.advance(steps, self.dt).unwrap();
            worst_of(&host, &mut *g)
        });
        parts.into_iter().fold(0.0, f64::max)
    }

    /// The block of `blocks` (or a part of the split of one) that `group`'s member holds on
    /// `backend`, its unknowns in `layout`, set to the start (collective).
    fn part(
        &self,
        group: Box<dyn Transfers<f64>>,
        (blocks, layout): (Blocks, FdLayout),
        backend: &Backend,
    ) -> Result<Box<dyn FdRun>, lbm::Error> {
        let spec = FdSpec {
            nodes: self.n,
            h: self.h,
            params: self.params,
            sides: self.sides.clone(),
        };
        let mut g = build_fd::<S, f64>(group, spec, blocks, layout, backend)?;
        g.set_unknown(0, &|x| (self.start)(x))?;
        Ok(g)
    }
}

/// Advection–diffusion in three Runge–Kutta stages, periodic along x and y.
fn drift() -> Setup<Drift2> {
    let h = 1.0 / 24.0;
    Setup {
        n: [37, 24, 1],
        h,
        params: Drift2Params {
            ax: 1.0,
            ay: -0.5,
            nu: 0.01,
        },
        sides: vec![Side::Periodic; 4],
        start: |x| {
            let pi2 = 2.0 * std::f64::consts::PI;
            (pi2 * x[0] * 24.0 / 37.0).sin() * (pi2 * x[1]).cos() + 0.3 * (pi2 * 2.0 * x[1]).sin()
        },
        dt: 0.2 * h,
    }
}

/// The 3-D heat equation between Neumann and Dirichlet walls along x and z, periodic along y.
fn heat() -> Setup<Heat3d> {
    let h = 0.1;
    Setup {
        n: [9, 11, 13],
        h,
        params: Heat3dParams { alpha: 1.0 },
        sides: vec![
            Side::Wall(vec![Rule::ZeroGradient]),
            Side::Wall(vec![Rule::Value(1.0)]),
            Side::Periodic,
            Side::Periodic,
            Side::Wall(vec![Rule::Value(-0.5)]),
            Side::Wall(vec![Rule::ZeroGradient]),
        ],
        start: |x| x[0] * x[0] - x[1] + 3.0 * x[2] * x[0],
        dt: 0.1 * h * h,
    }
}

/// `s`'s grid on the device of `ctx`, set to its start.
fn on_device<S: FdScheme>(ctx: Arc<GpuContext>, s: &Setup<S>) -> GpuFdGrid<S, f64> {
    let mut g = GpuFdGrid::new(ctx, s.n, s.h, s.params, s.sides.clone()).unwrap();
    g.set(0, s.start).unwrap();
    g
}

fn cavity<T: Real>(bound: f64) {
    let Some(ctx) = context() else { return };
    let c = FdCavity::new(41, 100.0);
    let mut cpu = c.grid::<T>().unwrap();
    let mut gpu = cavity_on::<T>(&c, device(ctx));
    let dt = c.time_step();
    for _ in 0..3 {
        cpu.advance(200, dt).unwrap();
        gpu.advance(200, dt).unwrap();
        let w = worst(&cpu, &mut *gpu);
        assert!(w <= bound, "{}: {w:e} after {} steps", T::NAME, cpu.steps());
    }
    assert_eq!(gpu.steps(), 600);
    let (a, b) = (cpu.max_rates(), gpu.max_rates().unwrap());
    assert!(a[1] > 1e-3, "the flow is still developing: {a:?}");
    assert!(
        (a[1] - b[1]).abs() <= bound.max(1e-9) * a[1].max(1.0),
        "{a:?} {b:?}"
    );
}

/// The library's builder makes the cavity on the device and split (three parts of a group of
/// threads: host, device, host), in every layout, each within 1e-12 of the host grid and
/// saying where it runs; it refuses a split of a group that is not three members a block,
/// before any work.
#[test]
fn the_builder_makes_every_backend_of_the_cavity() {
    let Some(ctx) = context() else { return };
    let c = FdCavity::new(41, 100.0);
    let dt = c.time_step();
    let mut cpu = c.grid::<f64>().unwrap();
    cpu.advance(200, dt).unwrap();
    let host = fields(&cpu);
    let gpu = Gpu::from(ctx);
    let whole = || Blocks::whole(c.nodes());
    let device = Backend::Device {
        gpu: gpu.clone(),
        layout: LayoutKind::Soa,
    };
    let split = Backend::Split {
        gpu,
        choice: SplitChoice::Columns(4),
    };
    for layout in [FdLayout::Soa, FdLayout::Aos, FdLayout::Clustered] {
        let mut g = c
            .build::<f64>(Box::new(OneProcess), whole(), layout, &device)
            .unwrap();
        assert!(g.describe().starts_with("on "), "{}", g.describe());
        g.advance(200, dt).unwrap();
        let w = worst_of(&host, &mut *g);
        assert!(w <= 1e-12, "{} in {layout:?}: {w:e}", g.describe());
        let parts = Threads::run(3, |t| {
            let mut g = (c.build::<f64>(Box::new(t), whole(), layout, &split)).unwrap();
            g.advance(200, dt).unwrap();
            (g.describe(), worst_of(&host, &mut *g))
        });
        let said: Vec<&str> = parts.iter().map(|(d, _)| &d[..3]).collect();
        assert_eq!(said, ["cpu", "on ", "cpu"], "{parts:?}");
        assert!(parts[0].1 <= 1e-12, "split in {layout:?}: {:e}", parts[0].1);
    }
    for (members, cut) in [(2, Cut([1, 1, 1])), (6, Cut([2, 1, 1]))] {
        let refusals = Threads::run(members, |t| {
            let blocks = Blocks::even(c.nodes(), cut);
            c.build::<f64>(Box::new(t), blocks, FdLayout::Soa, &split)
                .err()
                .map(|e| e.to_string())
        });
        for why in refusals {
            let why = why.expect("a split of another group or cut is refused");
            assert!(
                why.contains(&format!("blocks cut {cut} need a cut along y alone")),
                "{why}"
            );
        }
    }
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
    let s = drift();
    let w = s.against(&mut on_device(ctx, &s), 300);
    assert!(w <= 1e-12, "{w:e}");
}

#[test]
fn a_3d_grid_with_neumann_and_dirichlet_walls_on_the_device_is_the_host_grid() {
    let Some(ctx) = context() else { return };
    let s = heat();
    let w = s.against(&mut on_device(ctx, &s), 100);
    assert!(w <= 1e-12, "{w:e}");
}

/// The 3-D heat grid in four blocks cut along x and y, each on the device and on a thread of
/// its own, in every layout: the layers traded along both axes (packed and unpacked in the
/// layout, with the walls at the ends of x kept) stay within 1e-12 of the host grid.
#[test]
fn device_blocks_cut_along_two_axes_are_the_host_grid_in_every_layout() {
    let Some(ctx) = context() else { return };
    let s = heat();
    let host = s.host_after(100);
    for layout in [FdLayout::Soa, FdLayout::Aos, FdLayout::Clustered] {
        let blocks = Threads::run(4, |t| {
            let cut = (Blocks::even(s.n, Cut([2, 2, 1])), layout);
            let mut g = s.part(Box::new(t), cut, &device(ctx.clone())).unwrap();
            g.advance(100, s.dt).unwrap();
            worst_of(&host, &mut *g)
        });
        let w = blocks.into_iter().fold(0.0, f64::max);
        assert!(w <= 1e-12, "{layout:?}: {w:e}");
    }
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
    let mut gpu = cavity_on::<f64>(&c, device(ctx));
    gpu.resume(&host_ckpt).unwrap();
    assert_eq!((gpu.steps(), gpu.time()), (cpu.steps(), cpu.time()));
    cpu.advance(250, dt).unwrap();
    gpu.advance(250, dt).unwrap();
    let w = worst(&cpu, &mut *gpu);
    assert!(w <= 1e-12, "{w:e} after the host's checkpoint");
    gpu.checkpoint(&device_ckpt).unwrap();
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

/// The host/device split (border rows on the host, the bulk on the device, each part on a
/// thread of a group): the cavity, whose walls at both ends of the cut axis lie on the host
/// parts — in one block, and in two blocks along y (six parts: the two blocks' borders meet on
/// the host) —, the Runge–Kutta drift, whose periodic ring closes through the host borders
/// around the device's bulk, and the 3-D heat grid (cut along z) stay within 1e-12 of the host
/// grid; the split's checkpoint resumes on the host; parts thinner than the stencils reach are
/// refused.
#[test]
fn the_host_device_split_is_the_host_grid() {
    let Some(ctx) = context() else { return };
    let c = FdCavity::new(41, 100.0);
    let dt = c.time_step();
    let mut cpu = c.grid::<f64>().unwrap();
    cpu.advance(300, dt).unwrap();
    let (host, rates) = (fields(&cpu), cpu.max_rates());
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("split.lbm");
    let split = split_rows(&ctx, 4);
    for blocks in [1, 2] {
        let parts = Threads::run(3 * blocks, |t| {
            let cut = Blocks::even(c.nodes(), Cut([1, blocks, 1]));
            let mut g = (c.build::<f64>(Box::new(t), cut, FdLayout::Soa, &split)).unwrap();
            g.advance(300, dt).unwrap();
            let at = (g.steps(), g.time());
            let w = worst_of(&host, &mut *g);
            let r = g.max_rates().unwrap();
            g.checkpoint(&path).unwrap();
            (at, w, r)
        });
        // The first part (on the host, the group's root) says the run's steps and time; the
        // device sums its time steps its own way.
        assert_eq!(parts[0].0, (cpu.steps(), cpu.time()));
        for ((steps, time), w, r) in &parts {
            assert_eq!(*steps, cpu.steps());
            assert!((time - cpu.time()).abs() <= 1e-12 * cpu.time(), "{time}");
            assert!(*w <= 1e-12, "cavity in {blocks} blocks: {w:e}");
            assert!(
                (rates[1] - r[1]).abs() <= 1e-9 * rates[1],
                "{rates:?} {r:?}"
            );
        }
        let mut back = c.grid::<f64>().unwrap();
        back.resume(&path).unwrap();
        assert!(
            worst_of(&host, &mut back) <= 1e-12,
            "{blocks} blocks: the checkpoint resumed on the host"
        );
    }

    let w = drift().against_split(&ctx, 100, FdLayout::Aos);
    assert!(w <= 1e-12, "drift: {w:e}");
    let w = heat().against_split(&ctx, 100, FdLayout::Clustered);
    assert!(w <= 1e-12, "3-D heat: {w:e}");

    let refused = |s: &Setup<Drift2>, rows: usize| {
        Threads::run(3, |t| {
            let whole = (Blocks::whole(s.n), FdLayout::Soa);
            s.part(Box::new(t), whole, &split_rows(&ctx, rows)).err()
        })
        .into_iter()
        .map(|e| e.expect("refused").to_string())
        .collect::<Vec<_>>()
    };
    let wide = Setup {
        n: [8, 41, 1],
        ..drift()
    };
    for rows in [2, 20] {
        for e in refused(&wide, rows) {
            assert!(
                e.contains("give between 3 and 19 host planes"),
                "{rows}: {e}"
            );
        }
    }
    let thin = Setup {
        n: [37, 8, 1],
        ..drift()
    };
    for e in refused(&thin, 3) {
        assert!(e.contains("and more nodes"), "{e}");
    }
}
