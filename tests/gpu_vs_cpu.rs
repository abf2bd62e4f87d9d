//! The GPU and the CPU agree after 100 steps: every model, every layout, both precisions, both
//! streaming schemes (the in-place one also after an odd step, in its other state), with
//! periodic and wall boundaries (f64 to 1e-12 relative, f32 to 1e-5), and the seeds' separate
//! kernels (propagate, bc, collide) agree with the fused step on the GPU.
//!
//! Run with `cargo test --release --test gpu_vs_cpu`; on a machine without a GPU the tests run
//! on Mesa's lavapipe (see `gpu_support`).

mod gpu_support;

use std::f64::consts::PI;

use lbm::gpu::GpuLattice;
use lbm::models::*;
use lbm::{Aos, BoundarySpec, CAoSoa, CSoa, Lattice, Layout, Model, Real, Scheme, Soa, Wall};

const STEPS: u64 = 100;

/// A smooth, non-uniform initial state: a density bump, a shear wave and (thermal models) a
/// temperature wave.
fn initial<M: Model>(lx: usize, ly: usize) -> impl Fn(usize, usize) -> Vec<f64> + Sync {
    move |x, y| {
        let (sx, sy) = (
            2.0 * PI * x as f64 / lx as f64,
            2.0 * PI * y as f64 / ly as f64,
        );
        M::MOMENT_NAMES
            .iter()
            .map(|n| match *n {
                "rho" => 1.0 + 0.05 * sx.sin() * sy.cos(),
                "ux" => 0.04 * sy.sin(),
                "uy" => 0.03 * sx.cos(),
                "T" => 1.0 + 0.02 * (sx + sy).sin(),
                _ => 0.0,
            })
            .collect()
    }
}

/// Relative tolerance of a precision: round-off differences (the device may contract
/// `a·b + c` into an FMA where the CPU does not) accumulate over the ~100 steps compared, so
/// f32 is held to about 170 ε (ε = 1.2e-7) and f64 to 1e-12.
fn tolerance<T: Real>() -> f64 {
    if T::BYTES == 8 {
        1e-12
    } else {
        2e-5
    }
}

/// Runs `M × L × T` in `scheme` on the CPU and on the GPU for [`STEPS`] steps from the same
/// state and compares every population and the density and velocity fields; in place, once
/// more after one more step (the odd state keeps the populations elsewhere).
fn compare<M: Model, L: Layout, T: Real>(
    lx: usize,
    ly: usize,
    params: M::Params,
    spec: &BoundarySpec,
    scheme: Scheme,
) {
    let Some(ctx) = gpu_support::context() else {
        return;
    };
    let what = format!(
        "{} × {} × {} {} ({spec:?})",
        M::NAME,
        L::NAME,
        T::NAME,
        scheme.name()
    );
    let mut cpu = Lattice::<M, L, T>::new(lx, ly, params.clone(), scheme, spec).unwrap();
    let mut gpu = GpuLattice::<M, L, T>::new(&ctx, lx, ly, params, scheme, spec)
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    cpu.set_equilibrium(initial::<M>(lx, ly)).unwrap();
    gpu.set_equilibrium(initial::<M>(lx, ly)).unwrap();
    let mut steps = STEPS;
    for _ in 0..STEPS {
        cpu.step();
    }
    gpu.steps(STEPS);
    same_state(&cpu, &gpu, &format!("{what}, step {steps}"));
    if scheme == Scheme::InPlace {
        cpu.step();
        gpu.step();
        steps += 1;
        same_state(&cpu, &gpu, &format!("{what}, step {steps}"));
    }
}

/// The GPU's populations and density and velocity fields equal the CPU's to the precision's
/// tolerance.
fn same_state<M: Model, L: Layout, T: Real>(
    cpu: &Lattice<M, L, T>,
    gpu: &GpuLattice<M, L, T>,
    what: &str,
) {
    let (lx, ly) = (cpu.dims().lx, cpu.dims().ly);
    let g: Vec<f64> = gpu
        .read_populations()
        .unwrap()
        .iter()
        .map(|v| v.to_f64())
        .collect();
    let mut c = Vec::with_capacity(g.len());
    let mut f = vec![T::default(); M::Q];
    for x in 0..lx {
        for y in 0..ly {
            cpu.populations(x, y, &mut f).unwrap();
            c.extend(f.iter().map(|v| v.to_f64()));
        }
    }
    // Population i relative to its own scale max_x |f_i(x)| (the weights span three decades
    // in D2Q37).
    let d = (0..M::Q)
        .map(|i| {
            let (gi, ci): (Vec<f64>, Vec<f64>) = g.iter().zip(&c).skip(i).step_by(M::Q).unzip();
            let scale = ci.iter().fold(0.0f64, |m, v| m.max(v.abs()));
            gpu_support::max_rel_diff(&gi, &ci, scale)
        })
        .fold(0.0, f64::max);
    assert!(
        d <= tolerance::<T>(),
        "{what}: populations differ by {d:e} (relative)"
    );
    // ρ relative to its largest value; u in units of the sound speed (a velocity is a
    // difference of populations: its error is absolute, at the scale of ρ·ε).
    for (name, scale) in [("rho", 0.0), ("ux", M::CS2.sqrt())] {
        let (gm, cm) = (
            gpu.moment_field(name).unwrap(),
            cpu.moment_field(name).unwrap(),
        );
        let scale = cm.iter().fold(scale, |m, v| m.max(v.abs()));
        let d = gpu_support::max_rel_diff(&gm, &cm, scale);
        assert!(d <= tolerance::<T>(), "{what}: {name} differs by {d:e}");
    }
}

/// Every layout and scheme for one model, boundary set and precision.
fn every_layout<M: Model, T: Real>(lx: usize, ly: usize, params: &M::Params, spec: &BoundarySpec) {
    for scheme in [Scheme::TwoCopy, Scheme::InPlace] {
        compare::<M, Aos, T>(lx, ly, params.clone(), spec, scheme);
        compare::<M, Soa, T>(lx, ly, params.clone(), spec, scheme);
        compare::<M, CSoa<8>, T>(lx, ly, params.clone(), spec, scheme);
        compare::<M, CAoSoa<8>, T>(lx, ly, params.clone(), spec, scheme);
    }
}

fn both_precisions<M: Model>(lx: usize, ly: usize, params: &M::Params, spec: &BoundarySpec) {
    every_layout::<M, f64>(lx, ly, params, spec);
    every_layout::<M, f32>(lx, ly, params, spec);
}

/// A channel with a Zou–He velocity inlet, a Zou–He pressure outlet and no-slip walls.
fn zou_he_channel() -> BoundarySpec {
    BoundarySpec {
        left: Some(Wall::ZouHeVelocity {
            velocity: [0.03, 0.0],
        }),
        right: Some(Wall::ZouHePressure { density: 1.0 }),
        ..BoundarySpec::channel()
    }
}

/// Periodic with a small square obstacle (solid sites, bounce-back on its surface).
fn obstacle(lx: usize, ly: usize) -> BoundarySpec {
    let solid = (0..lx * ly)
        .map(|s| (5..8).contains(&(s / ly)) && (6..10).contains(&(s % ly)))
        .collect();
    BoundarySpec {
        solid: Some(lbm::Obstacles::mask(ly, solid)),
        ..BoundarySpec::periodic()
    }
}

#[test]
fn d2q9_bgk_matches_cpu() {
    let p = D2Q9BgkParams {
        tau: 0.8,
        ax: 1e-5,
        ay: 0.0,
    };
    both_precisions::<D2Q9Bgk>(16, 16, &p, &BoundarySpec::periodic());
    both_precisions::<D2Q9Bgk>(16, 16, &p, &BoundarySpec::cavity(0.05));
    both_precisions::<D2Q9Bgk>(16, 16, &p, &BoundarySpec::channel());
    both_precisions::<D2Q9Bgk>(16, 16, &p, &zou_he_channel());
    both_precisions::<D2Q9Bgk>(16, 16, &p, &obstacle(16, 16));
}

#[test]
fn d2q9_trt_and_mrt_match_cpu() {
    let trt = D2Q9TrtParams {
        tau: 0.7,
        magic: 3.0 / 16.0,
        ax: 1e-5,
        ay: 0.0,
    };
    both_precisions::<D2Q9Trt>(16, 16, &trt, &BoundarySpec::cavity(0.05));
    let mrt = D2Q9MrtParams {
        tau: 0.7,
        s_e: 1.1,
        s_eps: 1.2,
        s_q: 1.3,
        ax: 0.0,
        ay: 1e-5,
    };
    both_precisions::<D2Q9Mrt>(16, 16, &mrt, &BoundarySpec::cavity(0.05));
}

#[test]
fn d2q37_matches_cpu() {
    let p = D2Q37Params { tau: 0.8, g: 1e-5 };
    both_precisions::<D2Q37>(12, 32, &p, &BoundarySpec::periodic());
    let walls = BoundarySpec {
        bottom: Some(Wall::Thermal { temperature: 1.02 }),
        top: Some(Wall::Thermal { temperature: 0.98 }),
        ..BoundarySpec::default()
    };
    both_precisions::<D2Q37>(12, 32, &p, &walls);
}

/// The separate kernels (propagate, bc, collide) reproduce the fused step on the GPU.
#[test]
fn split_kernels_match_fused_step() {
    let Some(ctx) = gpu_support::context() else {
        return;
    };
    let p = D2Q9BgkParams {
        tau: 0.8,
        ax: 1e-5,
        ay: 0.0,
    };
    for spec in [
        BoundarySpec::periodic(),
        BoundarySpec::cavity(0.05),
        zou_he_channel(),
    ] {
        let mk = || {
            let mut l =
                GpuLattice::<D2Q9Bgk, CAoSoa<8>, f64>::new(&ctx, 16, 16, p, Scheme::TwoCopy, &spec)
                    .unwrap();
            l.set_equilibrium(initial::<D2Q9Bgk>(16, 16)).unwrap();
            l
        };
        let (mut fused, mut split) = (mk(), mk());
        fused.steps(20);
        for _ in 0..20 {
            split.step_split().unwrap();
        }
        let (a, b) = (
            fused.read_populations().unwrap(),
            split.read_populations().unwrap(),
        );
        let a: Vec<f64> = a.to_vec();
        let d = gpu_support::max_rel_diff(&b, &a, 1e-3);
        assert!(
            d <= 1e-14,
            "{spec:?}: split kernels differ from the fused step by {d:e}"
        );
    }
}
