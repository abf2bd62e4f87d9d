//! The GPU and the CPU agree after 100 steps: every model, 2-D and 3-D, both precisions (D2Q9
//! BGK in every layout, D2Q37 in two, the others in the default one: see [`ONE`]), both
//! streaming schemes (the in-place one also after an odd step, in its other
//! state), with periodic and wall boundaries (f64 to 1e-12 relative, f32 to 2e-5), and the
//! separate kernels of Calore et al. 2019 (propagate, bc, collide) agree with the fused step on the GPU.
//! Every GPU lattice here runs shaders without runtime bounds checks, its indexing proven in
//! range (`lbm::gpu::bounds`), and equals one whose shaders keep them, bit for bit.
//!
//! Run with `cargo test --release -p lbm-validation --test gpu vs_cpu::`; on a machine without a
//! GPU the tests run on Mesa's lavapipe (see `gpu_support`).

use crate::gpu_support;

use std::sync::Arc;

use lbm::backend::{Backend, Gpu, build};
use lbm::blocks::Cut;
use lbm::gpu::{GpuContext, GpuLattice};
use lbm::group::OneProcess;
use lbm::models::*;
use lbm::{
    BoundarySpec, CAoSoa, F16s, Lattice, Layout, LayoutKind, Model, Real, Role, Scheme, Soa, Wall,
};

const STEPS: u64 = 100;

/// Relative tolerance of a precision: round-off differences (the device may contract
/// `a·b + c` into an FMA where the CPU does not) accumulate over the ~100 steps compared, so
/// f32 is held to about 170 ε (ε = 1.2e-7) and f64 to 1e-12.
fn tolerance<T: Real>() -> f64 {
    if T::COMPACT {
        F16S_TOLERANCE
    } else if T::BYTES == 8 {
        1e-12
    } else {
        2e-5
    }
}

/// f16s: both sides compute in f32 and store `f − w` in binary16; where their f32 results
/// differ by an ulp (a contracted FMA), the stored elements can round one binary16 unit apart,
/// `2⁻¹¹ |f − w|`, which the following steps carry.
const F16S_TOLERANCE: f64 = 1e-3;

/// The layouts every model is compared in on the GPU.
const LAYOUTS: [LayoutKind; 4] = [
    LayoutKind::Aos,
    LayoutKind::Soa,
    LayoutKind::CSoa(8),
    LayoutKind::CAoSoa(8),
];

/// Runs `M × T` in `scheme` on the GPU in each of `layouts` and on the CPU for [`STEPS`]
/// steps from the same state and compares every population and the density and velocity
/// fields; in place, once more after one more step (the odd state keeps the populations
/// elsewhere). The CPU reference runs in SoA: the CPU layouts give the same bits as each
/// other (`lattice_tests::layouts_are_bitwise_identical` in the runtime, `d3_lattice::layouts_and_schemes_are_bitwise_identical_in_3d`), so one reference per
/// model and precision stands for all of them.
fn compare<M: Model, T: Real>(
    layouts: &[LayoutKind],
    size: [usize; 3],
    params: M::Params,
    spec: &BoundarySpec,
    scheme: Scheme,
) {
    let Some(ctx) = gpu_support::context() else {
        return;
    };
    let what = |l: LayoutKind| {
        format!(
            "{} × {l} × {} {} ({spec:?})",
            M::NAME,
            T::NAME,
            scheme.name()
        )
    };
    let mut cpu = Lattice::<M, Soa, T>::with_size(size, params.clone(), scheme, spec).unwrap();
    cpu.set_equilibrium(gpu_support::initial::<M>(size))
        .unwrap();
    let mut gpus: Vec<GpuLattice<M, T>> = layouts
        .iter()
        .map(|&l| {
            let mut gpu =
                GpuLattice::<M, T>::with_size(&ctx, l, size, params.clone(), scheme, spec)
                    .unwrap_or_else(|e| panic!("{}: {e}", what(l)));
            assert_eq!(
                gpu.bounds_checks(),
                None,
                "{}: indices not proven in range",
                what(l)
            );
            gpu.set_equilibrium(gpu_support::initial::<M>(size))
                .unwrap();
            gpu
        })
        .collect();
    for _ in 0..STEPS {
        cpu.step();
    }
    for gpu in &mut gpus {
        gpu.steps(STEPS);
        same_state(&cpu, gpu, &format!("{}, step {STEPS}", what(gpu.layout())));
    }
    if scheme == Scheme::InPlace {
        cpu.step();
        for gpu in &mut gpus {
            gpu.step();
            let step = STEPS + 1;
            same_state(&cpu, gpu, &format!("{}, step {step}", what(gpu.layout())));
        }
    }
}

/// The GPU's populations and density and velocity fields equal the CPU's to the precision's
/// tolerance.
fn same_state<M: Model, L: Layout, T: Real>(
    cpu: &Lattice<M, L, T>,
    gpu: &GpuLattice<M, T>,
    what: &str,
) {
    let (lx, plane) = (cpu.dims().lx, cpu.dims().plane());
    let g: Vec<f64> = gpu
        .read_populations()
        .unwrap()
        .iter()
        .map(|v| v.to_f64())
        .collect();
    let mut c = Vec::with_capacity(g.len());
    let mut f = vec![T::default(); M::Q];
    for x in 0..lx {
        for s in 0..plane {
            cpu.populations(x, s, &mut f).unwrap();
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
    let c = M::CS2.sqrt();
    for (name, role) in M::MOMENT_NAMES.iter().zip(M::MOMENT_ROLES) {
        let scale = match role {
            Role::Velocity(_) => c,
            _ => 0.0,
        };
        let (gm, cm) = (
            gpu.moment_field(name).unwrap(),
            cpu.moment_field(name).unwrap(),
        );
        let scale = cm.iter().fold(scale, |m, v| m.max(v.abs()));
        let d = gpu_support::max_rel_diff(&gm, &cm, scale);
        assert!(d <= tolerance::<T>(), "{what}: {name} differs by {d:e}");
    }
    // What momentum exchange reads at every boundary site: the post-collision populations and
    // the pre-collision ones the walls and rules give (relative to the largest).
    let sites = gpu.boundaries().sites(&gpu.dims());
    if !sites.is_empty() {
        let values = |v: Vec<T>| v.iter().map(|v| v.to_f64()).collect::<Vec<f64>>();
        let (ge, ce) = (
            values(gpu.exchanged(&sites).unwrap()),
            values(cpu.exchanged(&sites).unwrap()),
        );
        let scale = ce.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        let d = gpu_support::max_rel_diff(&ge, &ce, scale);
        assert!(
            d <= tolerance::<T>(),
            "{what}: the exchanged populations of the {} boundary sites differ by {d:e}",
            sites.len()
        );
    }
}

/// The layouts a model other than D2Q9 BGK is compared in. A layout enters a shader only
/// through its index functions (`fn idx`, `site_y`, written from the strides of
/// `gpu::layout::AffineLayout`, which its unit tests check against every CPU layout's
/// `Layout::index` and `cluster_lane`), whatever the model: D2Q9 BGK runs in every layout
/// with every kind of boundary record ([`d2q9_bgk_matches_cpu`]), D2Q37 (a halo of 3, shifts
/// across clusters) in two, the other models in the default one.
const ONE: [LayoutKind; 1] = [LayoutKind::CAoSoa(8)];

/// D2Q37's layouts: the two whose clusters are furthest apart.
const D2Q37_LAYOUTS: [LayoutKind; 2] = [LayoutKind::Aos, LayoutKind::CAoSoa(8)];

/// Both schemes in each of `layouts` for one model, boundary set and precision.
fn in_layouts<M: Model, T: Real>(
    layouts: &[LayoutKind],
    size: [usize; 3],
    params: &M::Params,
    spec: &BoundarySpec,
) {
    for scheme in [Scheme::TwoCopy, Scheme::InPlace] {
        compare::<M, T>(layouts, size, params.clone(), spec, scheme);
    }
}

/// f64 and f32, in `layouts`.
fn both_precisions<M: Model>(
    layouts: &[LayoutKind],
    size: [usize; 3],
    params: &M::Params,
    spec: &BoundarySpec,
) {
    in_layouts::<M, f64>(layouts, size, params, spec);
    in_layouts::<M, f32>(layouts, size, params, spec);
}

/// f64, f32 and f16s (binary16 storage on the device, `SHADER_F16`), in `layouts`.
fn three_precisions<M: Model>(
    layouts: &[LayoutKind],
    size: [usize; 3],
    params: &M::Params,
    spec: &BoundarySpec,
) {
    both_precisions::<M>(layouts, size, params, spec);
    in_layouts::<M, F16s>(layouts, size, params, spec);
}

/// A 2-D lattice of `lx × ly` sites.
const fn plane(lx: usize, ly: usize) -> [usize; 3] {
    [lx, ly, 1]
}

/// A channel with a Zou–He velocity inlet, a Zou–He pressure outlet and no-slip walls.
fn zou_he_channel() -> BoundarySpec {
    BoundarySpec {
        left: Some(Wall::ZouHeVelocity {
            velocity: [0.03, 0.0, 0.0],
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

/// Dropping the runtime bounds checks changes nothing: the shaders of a lattice with every
/// kind of boundary record (moving lid, Zou–He inlet and outlet, solid obstacle), in each
/// layout and scheme, give the same bits with the checks kept as without.
#[test]
fn unchecked_shaders_equal_checked_ones() {
    let (Some(fast), Some(checked)) = (gpu_support::context(), gpu_support::checked_context())
    else {
        return;
    };
    let ctxs = [fast, checked];
    for layout in LAYOUTS {
        checked_vs_unchecked(layout, &ctxs);
    }
}

fn checked_vs_unchecked(layout: LayoutKind, ctxs: &[Arc<GpuContext>; 2]) {
    let size = plane(16, 16);
    let p = D2Q9BgkParams {
        tau: 0.7,
        ax: 1e-5,
        ay: 0.0,
    };
    for spec in [
        BoundarySpec::cavity(0.05),
        zou_he_channel(),
        obstacle(16, 16),
    ] {
        for scheme in [Scheme::TwoCopy, Scheme::InPlace] {
            let [(why_fast, fast), (why_checked, checked)] = ctxs.each_ref().map(|ctx| {
                let mut g =
                    GpuLattice::<D2Q9Bgk, f32>::with_size(ctx, layout, size, p, scheme, &spec)
                        .unwrap();
                g.set_equilibrium(gpu_support::initial::<D2Q9Bgk>(size))
                    .unwrap();
                g.steps(41);
                let bits: Vec<u32> = g
                    .read_populations()
                    .unwrap()
                    .iter()
                    .map(|v| v.to_bits())
                    .collect();
                (g.bounds_checks().map(str::to_string), bits)
            });
            let what = format!("{layout} {} {spec:?}", scheme.name());
            assert_eq!(why_fast, None, "{what}");
            assert_eq!(why_checked.as_deref(), Some("kept on request"), "{what}");
            assert!(
                fast == checked,
                "{what}: checked and unchecked shaders differ"
            );
        }
    }
}

/// Binary16 elements travel between host and device in whole 4-byte words: a single site's
/// populations or a column of an odd height are written without touching the other half of
/// their first and last words, and read back as the CPU's f16s lattice stores them (SoA,
/// `LY = 15`, so that sites and columns start mid-word).
#[test]
fn f16s_transfers_of_single_sites_and_columns_keep_their_neighbours() {
    let Some(ctx) = gpu_support::context() else {
        return;
    };
    let size = plane(8, 15);
    let p = D2Q9BgkParams {
        tau: 0.8,
        ax: 0.0,
        ay: 0.0,
    };
    for scheme in [Scheme::TwoCopy, Scheme::InPlace] {
        let spec = BoundarySpec::periodic();
        let mut cpu = Lattice::<D2Q9Bgk, Soa, F16s>::with_size(size, p, scheme, &spec).unwrap();
        let mut gpu =
            GpuLattice::<D2Q9Bgk, F16s>::with_size(&ctx, LayoutKind::Soa, size, p, scheme, &spec)
                .unwrap();
        cpu.set_equilibrium(gpu_support::initial::<D2Q9Bgk>(size))
            .unwrap();
        gpu.set_equilibrium(gpu_support::initial::<D2Q9Bgk>(size))
            .unwrap();
        if scheme == Scheme::InPlace {
            // The odd state, whose slots are the AA map's.
            cpu.step();
            gpu.step();
        }
        let bits = |v: &[F16s]| v.iter().map(|x| x.0.to_bits()).collect::<Vec<_>>();
        let mut want = gpu.read_populations().unwrap();
        for (x, y) in [(0, 0), (3, 7), (7, 14), (5, 8)] {
            let f: Vec<F16s> = (0..9)
                .map(|i| {
                    F16s::from_f64(D2Q9Bgk::WEIGHTS[i] * (1.0 + 0.01 * (x + 3 * y + i) as f64))
                })
                .collect();
            cpu.set_populations(x, y, &f).unwrap();
            gpu.set_populations(x, y, &f).unwrap();
            // The value the CPU's storage keeps (rounded to binary16 in its slot's shift).
            let at = (x * size[1] + y) * 9;
            cpu.populations(x, y, &mut want[at..at + 9]).unwrap();
        }
        assert_eq!(
            bits(&gpu.read_populations().unwrap()),
            bits(&want),
            "{scheme:?}: the sites set or their neighbours differ"
        );
        // A column of 15 rows: copy storage column 3 into 6 and back; 5 and 7 stay.
        let (c3, c5, c7) = (
            gpu.read_column(3).unwrap(),
            gpu.read_column(5).unwrap(),
            gpu.read_column(7).unwrap(),
        );
        gpu.write_column(6, &c3).unwrap();
        assert_eq!(bits(&gpu.read_column(6).unwrap()), bits(&c3));
        assert_eq!(bits(&gpu.read_column(5).unwrap()), bits(&c5));
        assert_eq!(bits(&gpu.read_column(7).unwrap()), bits(&c7));
    }
}

#[test]
fn d2q9_bgk_matches_cpu() {
    let p = D2Q9BgkParams {
        tau: 0.8,
        ax: 1e-5,
        ay: 0.0,
    };
    three_precisions::<D2Q9Bgk>(&LAYOUTS, plane(16, 16), &p, &BoundarySpec::periodic());
    three_precisions::<D2Q9Bgk>(&LAYOUTS, plane(16, 16), &p, &BoundarySpec::cavity(0.05));
    three_precisions::<D2Q9Bgk>(&LAYOUTS, plane(16, 16), &p, &BoundarySpec::channel());
    three_precisions::<D2Q9Bgk>(&LAYOUTS, plane(16, 16), &p, &zou_he_channel());
    let half_channel = BoundarySpec {
        top: Some(Wall::FreeSlip),
        ..BoundarySpec::channel()
    };
    three_precisions::<D2Q9Bgk>(&LAYOUTS, plane(16, 16), &p, &half_channel);
    three_precisions::<D2Q9Bgk>(&LAYOUTS, plane(16, 16), &p, &obstacle(16, 16));
}

#[test]
fn d2q9_trt_and_mrt_match_cpu() {
    let trt = D2Q9TrtParams {
        tau: 0.7,
        magic: 3.0 / 16.0,
        ax: 1e-5,
        ay: 0.0,
    };
    both_precisions::<D2Q9Trt>(&ONE, plane(16, 16), &trt, &BoundarySpec::cavity(0.05));
    let mrt = D2Q9MrtParams {
        tau: 0.7,
        s_e: 1.1,
        s_eps: 1.2,
        s_q: 1.3,
        ax: 0.0,
        ay: 1e-5,
    };
    both_precisions::<D2Q9Mrt>(&ONE, plane(16, 16), &mrt, &BoundarySpec::cavity(0.05));
}

/// The moment-space collisions: central moments (D2Q9, D3Q27) and the regularized BGK (D2Q9,
/// D3Q19), with a moving lid and a body force.
#[test]
fn central_moment_and_regularized_models_match_cpu() {
    let cm = D2Q9CentralMrtParams {
        tau: 0.6,
        s_bulk: 1.1,
        s3: 1.2,
        s4: 1.3,
        ax: 1e-5,
        ay: 0.0,
    };
    both_precisions::<D2Q9CentralMrt>(&ONE, plane(16, 16), &cm, &BoundarySpec::cavity(0.05));
    let reg = D2Q9RegularizedParams {
        tau: 0.6,
        ax: 0.0,
        ay: 1e-5,
    };
    both_precisions::<D2Q9Regularized>(&ONE, plane(16, 16), &reg, &BoundarySpec::cavity(0.05));
    let p = D3Q27CentralMrtParams::with_tau(0.7);
    both_precisions::<D3Q27CentralMrt>(&ONE, [8, 8, 8], &p, &BoundarySpec::periodic());
    let p = D3Q19RegularizedParams {
        tau: 0.7,
        ax: 1e-5,
        ay: 0.0,
        az: 0.0,
    };
    both_precisions::<D3Q19Regularized>(&ONE, [8, 8, 8], &p, &BoundarySpec::periodic());
}

/// The passive-scalar models (only the scalar conserved, the advecting velocity a parameter
/// inside the equilibrium) in 2-D and 3-D, periodic, between resting walls (zero flux) and
/// around an obstacle.
#[test]
fn scalar_models_match_cpu() {
    let p = D2Q5AdvectionDiffusionParams {
        tau: 0.7,
        ux: 0.05,
        uy: -0.03,
    };
    both_precisions::<D2Q5AdvectionDiffusion>(&ONE, plane(16, 16), &p, &BoundarySpec::periodic());
    both_precisions::<D2Q5AdvectionDiffusion>(&ONE, plane(16, 16), &p, &BoundarySpec::channel());
    both_precisions::<D2Q5AdvectionDiffusion>(&ONE, plane(16, 16), &p, &obstacle(16, 16));
    let p = D3Q7AdvectionDiffusionParams {
        tau: 0.7,
        ux: 0.04,
        uy: 0.0,
        uz: -0.02,
    };
    both_precisions::<D3Q7AdvectionDiffusion>(&ONE, [8, 8, 8], &p, &BoundarySpec::periodic());
    both_precisions::<D3Q7AdvectionDiffusion>(&ONE, [8, 8, 8], &p, &BoundarySpec::channel());
}

/// Relaxation times from the local stress (Smagorinsky's model: a square root per site) in
/// 2-D (BGK, with a moving lid) and 3-D (MRT).
#[test]
fn smagorinsky_models_match_cpu() {
    let p = D2Q9SmagorinskyParams {
        tau: 0.6,
        c_smag: 0.17,
        ax: 1e-5,
        ay: 0.0,
    };
    both_precisions::<D2Q9Smagorinsky>(&ONE, plane(16, 16), &p, &BoundarySpec::periodic());
    both_precisions::<D2Q9Smagorinsky>(&ONE, plane(16, 16), &p, &BoundarySpec::cavity(0.05));
    let p = D3Q19MrtSmagorinskyParams::with_tau(0.6, 0.17);
    both_precisions::<D3Q19MrtSmagorinsky>(&ONE, [8, 8, 8], &p, &BoundarySpec::periodic());
}

#[test]
fn d2q37_matches_cpu() {
    let p = D2Q37Params { tau: 0.8, g: 1e-5 };
    both_precisions::<D2Q37>(&D2Q37_LAYOUTS, plane(12, 32), &p, &BoundarySpec::periodic());
    let walls = BoundarySpec {
        bottom: Some(Wall::Thermal { temperature: 1.02 }),
        top: Some(Wall::Thermal { temperature: 0.98 }),
        ..BoundarySpec::default()
    };
    three_precisions::<D2Q37>(&D2Q37_LAYOUTS, plane(12, 32), &p, &walls);
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
            let mut l = GpuLattice::<D2Q9Bgk, f64>::new(
                &ctx,
                LAYOUTS[3],
                16,
                16,
                p,
                Scheme::TwoCopy,
                &spec,
            )
            .unwrap();
            l.set_equilibrium(gpu_support::initial::<D2Q9Bgk>(plane(16, 16)))
                .unwrap();
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

/// A 3-D lattice: 16 sites in y (two clusters of 8 lanes), odd sides in x and z.
const CUBE: [usize; 3] = [7, 16, 5];

/// A closed box (walls on all six sides, the top one moving in x and z) holding a sphere of
/// voxels: bounced links on every axis, edges and corners, a moving wall, solid sites.
fn box_with_sphere() -> BoundarySpec {
    let [lx, ly, lz] = CUBE;
    let c = [lx as f64 / 2.0, ly as f64 / 2.0, lz as f64 / 2.0];
    BoundarySpec {
        top: Some(Wall::BounceBack {
            velocity: [0.03, 0.0, 0.02],
        }),
        solid: Some(lbm::Obstacles::voxels(move |x, y, z| {
            let r = [x as f64 - c[0], y as f64 - c[1], z as f64 - c[2]];
            r.iter().map(|r| r * r).sum::<f64>() < 3.0
        })),
        ..BoundarySpec::cavity_3d(0.0)
    }
}

/// Zou–He sides on all six faces, over two lattices: a duct along x with a parabolic inlet
/// (Schäfer & Turek's product profile over the section, tangential components too: each site
/// its own velocity), a pressure outlet and free-slip back and front; and inlets and outlets on
/// the y and z faces together (edges where they meet, the bottom and top taking precedence),
/// the back's inflow a profile given as a function (`Wall::Inflow`).
fn zou_he_faces() -> [BoundarySpec; 2] {
    let outlet = Some(Wall::ZouHePressure { density: 1.0 });
    [
        BoundarySpec {
            left: Some(Wall::ParabolicInflow {
                peak: [0.03, 0.01, -0.01],
            }),
            right: outlet,
            back: Some(Wall::FreeSlip),
            front: Some(Wall::FreeSlip),
            ..BoundarySpec::duct()
        },
        BoundarySpec {
            bottom: outlet,
            top: Some(Wall::ZouHeVelocity {
                velocity: [0.01, -0.03, 0.0],
            }),
            back: Some(Wall::Inflow),
            front: outlet,
            inflow: Some(lbm::InflowProfile::new(|[x, y, _]| {
                [0.002 * (x % 3) as f64, 0.01, 0.02 - 0.001 * (y % 4) as f64]
            })),
            ..BoundarySpec::periodic()
        },
    ]
}

/// D3Q19 in every layout, scheme and precision, periodic (with a body force) and in the
/// closed box; TRT, MRT, D3Q27, D3Q15 and D3Q7 in the box in one layout; Zou–He faces with
/// D3Q19, D3Q27 and D3Q15.
#[test]
fn three_d_models_match_cpu() {
    let bgk = D3Q19BgkParams {
        tau: 0.8,
        ax: 1e-5,
        ay: -2e-5,
        az: 3e-5,
    };
    both_precisions::<D3Q19Bgk>(&ONE, CUBE, &bgk, &BoundarySpec::periodic());
    both_precisions::<D3Q19Bgk>(&ONE, CUBE, &bgk, &box_with_sphere());
    let trt = D3Q19TrtParams {
        tau: 0.7,
        magic: 3.0 / 16.0,
        ax: 0.0,
        ay: 0.0,
        az: 1e-5,
    };
    let spec = box_with_sphere();
    for scheme in [Scheme::TwoCopy, Scheme::InPlace] {
        compare::<D3Q19Trt, f64>(&[LayoutKind::CAoSoa(8)], CUBE, trt, &spec, scheme);
        compare::<D3Q19Mrt, f64>(
            &[LayoutKind::CSoa(8)],
            CUBE,
            D3Q19MrtParams::with_tau(0.8),
            &spec,
            scheme,
        );
        let d3q27 = D3Q27BgkParams {
            tau: 0.9,
            ax: 1e-5,
            ay: 0.0,
            az: 0.0,
        };
        compare::<D3Q27Bgk, f64>(&[LayoutKind::Soa], CUBE, d3q27, &spec, scheme);
        compare::<D3Q27Bgk, f32>(&[LayoutKind::CAoSoa(8)], CUBE, d3q27, &spec, scheme);
        compare::<D3Q15Bgk, f64>(
            &[LayoutKind::Aos],
            CUBE,
            D3Q15BgkParams { tau: 0.8 },
            &spec,
            scheme,
        );
        compare::<D3Q7Bgk, f64>(
            &[LayoutKind::CSoa(8)],
            CUBE,
            D3Q7BgkParams { tau: 0.8 },
            &spec,
            scheme,
        );
        for spec in zou_he_faces() {
            compare::<D3Q19Trt, f64>(&[LayoutKind::CAoSoa(8)], CUBE, trt, &spec, scheme);
            compare::<D3Q19Trt, f32>(&[LayoutKind::Soa], CUBE, trt, &spec, scheme);
            compare::<D3Q27Bgk, f64>(&[LayoutKind::CSoa(8)], CUBE, d3q27, &spec, scheme);
            compare::<D3Q15Bgk, f64>(
                &[LayoutKind::Aos],
                CUBE,
                D3Q15BgkParams { tau: 0.8 },
                &spec,
                scheme,
            );
        }
    }
}

/// Two coupled lattices (Rayleigh–Bénard: the flow's force from the temperature field, the
/// temperature advected by the flow's velocity field, Dirichlet walls) on the GPU against the
/// same pair on the CPU, in two layouts, both schemes and both precisions.
#[test]
fn coupled_lattices_match_cpu() {
    coupled::<Soa, f64>();
    coupled::<CAoSoa<8>, f64>();
    coupled::<Soa, f32>();
    coupled::<CAoSoa<8>, f32>();
}

fn coupled<L: Layout, T: Real>() {
    use lbm::cases::RayleighBenard;
    let Some(ctx) = gpu_support::context() else {
        return;
    };
    let case = RayleighBenard {
        perturbation: 0.05,
        ..RayleighBenard::new(16, 5e3)
    };
    for scheme in [Scheme::TwoCopy, Scheme::InPlace] {
        let what = format!("{} {} {}", L::NAME, T::NAME, scheme.name());
        let mut cpu = case.lattices::<L, T>(scheme).unwrap();
        let (flow, heat) = case.specs();
        let on_gpu = Backend::Device {
            gpu: Gpu::from(ctx.clone()),
            layout: L::KIND,
        };
        let whole = Cut::WHOLE.into();
        let flow = build::<_, L, T>(Box::new(OneProcess), flow, whole, scheme, &on_gpu).unwrap();
        let heat = build::<_, L, T>(Box::new(OneProcess), heat, whole, scheme, &on_gpu).unwrap();
        let mut gpu = case.couple(flow, heat).unwrap();
        cpu.advance(STEPS + 1).unwrap();
        gpu.advance(STEPS + 1).unwrap();
        let (on_cpu, on_gpu) = (cpu.output_moments().unwrap(), gpu.output_moments().unwrap());
        for (c, g) in on_cpu.into_iter().zip(on_gpu) {
            for (mc, mg) in c.iter().zip(&g) {
                let d = gpu_support::max_rel_diff(mg, mc, 1e-3);
                assert!(d < 20.0 * tolerance::<T>(), "{what}: {d:e}");
            }
        }
        let (a, b) = (
            case.measure(&mut cpu).unwrap(),
            case.measure(&mut gpu).unwrap(),
        );
        assert!((a.nusselt - b.nusselt).abs() < 1e-4, "{what}: {a:?} {b:?}");
    }
}

/// A wall distance for each link that crosses an obstacle's surface, spread over `(0, 1]` so
/// that every branch of the interpolation runs (`q < ½` with its second fluid site or falling
/// back to half-way, `q ≥ ½`).
fn spread_q([x, y, z]: [usize; 3], c: [i32; 3]) -> Option<f64> {
    let k = (x * 7 + y * 3 + z * 5) as i32 + c[0] * 5 + c[1] * 11 + c[2] * 13;
    Some(0.1 + 0.9 * f64::from(k.rem_euclid(10)) / 9.0)
}

/// Curved walls (interpolated bounce-back, `Obstacles::with_wall_distance`) on the GPU: a disc
/// in a forced channel (D2Q9, every layout, three precisions) and a sphere turning about its
/// z axis in the closed box (D3Q19 TRT, every layout) give the CPU's state, with the linear
/// interpolation and the quadratic one, in both schemes (in place, the populations the links
/// read beyond their sites' own slots held before each half-step, both parities compared).
#[test]
fn curved_walls_match_cpu() {
    let p = D2Q9BgkParams {
        tau: 0.8,
        ax: 1e-5,
        ay: 0.0,
    };
    let disc = lbm::Obstacles::new(|x, y| (x as f64 - 7.5).hypot(y as f64 - 8.0) < 3.2)
        .with_wall_distance(spread_q);
    let channel = BoundarySpec {
        solid: Some(disc),
        ..BoundarySpec::channel()
    };
    let size = plane(16, 16);
    compare::<D2Q9Bgk, f64>(&LAYOUTS, size, p, &channel, Scheme::TwoCopy);
    compare::<D2Q9Bgk, f32>(&LAYOUTS, size, p, &channel, Scheme::TwoCopy);
    compare::<D2Q9Bgk, F16s>(&LAYOUTS, size, p, &channel, Scheme::TwoCopy);
    compare::<D2Q9Bgk, f64>(&LAYOUTS, size, p, &channel, Scheme::InPlace);
    compare::<D2Q9Bgk, f32>(&LAYOUTS, size, p, &channel, Scheme::InPlace);
    compare::<D2Q9Bgk, F16s>(&ONE, size, p, &channel, Scheme::InPlace);
    let trt = D3Q19TrtParams {
        tau: 0.7,
        magic: 3.0 / 16.0,
        ax: 0.0,
        ay: 0.0,
        az: 0.0,
    };
    let mut spec = box_with_sphere();
    spec.solid = spec.solid.map(|o| {
        o.with_wall_distance(spread_q)
            .with_wall_velocity(|p| [-0.02 * (p[1] - 8.0), 0.02 * (p[0] - 3.5), 0.0])
    });
    compare::<D3Q19Trt, f64>(&LAYOUTS, CUBE, trt, &spec, Scheme::TwoCopy);
    compare::<D3Q19Trt, f64>(&LAYOUTS, CUBE, trt, &spec, Scheme::InPlace);
    // Quadratic interpolation (`Interpolation::Quadratic`): the disc, and one across the
    // periodic edge x = 0, whose links read two sites along them across it; the turning
    // sphere.
    let quadratic = |o: lbm::Obstacles| Some(o.with_interpolation(lbm::Interpolation::Quadratic));
    let discs = lbm::Obstacles::new(|x, y| {
        let edge = (x as f64 - 0.4).abs().min((x as f64 - 16.4).abs());
        (x as f64 - 7.5).hypot(y as f64 - 8.0) < 3.2 || edge.hypot(y as f64 - 4.0) < 2.6
    })
    .with_wall_distance(spread_q);
    let channel = BoundarySpec {
        solid: quadratic(discs),
        ..BoundarySpec::channel()
    };
    compare::<D2Q9Bgk, f64>(&LAYOUTS, size, p, &channel, Scheme::TwoCopy);
    compare::<D2Q9Bgk, f32>(&LAYOUTS, size, p, &channel, Scheme::TwoCopy);
    compare::<D2Q9Bgk, f64>(&LAYOUTS, size, p, &channel, Scheme::InPlace);
    spec.solid = spec.solid.and_then(quadratic);
    compare::<D3Q19Trt, f64>(&LAYOUTS, CUBE, trt, &spec, Scheme::TwoCopy);
    compare::<D3Q19Trt, f64>(&ONE, CUBE, trt, &spec, Scheme::InPlace);
}

/// Extrapolated outflows (`Wall::Outflow`) give the CPU's state in both schemes: the right
/// side of a D2Q9 channel with a parabolic inlet, every layout; the top and right sides of a
/// D3Q19 lattice open on both (the flat term along y reads the neighbouring columns, their
/// edge bounces its diagonal links back), and its front beside a periodic x.
#[test]
fn outflows_match_cpu() {
    let p = D2Q9BgkParams {
        tau: 0.8,
        ax: 1e-5,
        ay: 0.0,
    };
    let channel = BoundarySpec {
        left: Some(Wall::ParabolicInflow {
            peak: [0.04, 0.0, 0.0],
        }),
        right: Some(Wall::Outflow),
        ..BoundarySpec::channel()
    };
    compare::<D2Q9Bgk, f64>(&LAYOUTS, plane(16, 16), p, &channel, Scheme::TwoCopy);
    compare::<D2Q9Bgk, f32>(&ONE, plane(16, 16), p, &channel, Scheme::TwoCopy);
    compare::<D2Q9Bgk, f64>(&LAYOUTS, plane(16, 16), p, &channel, Scheme::InPlace);
    let trt = D3Q19TrtParams {
        tau: 0.7,
        magic: 3.0 / 16.0,
        ax: 0.0,
        ay: 0.0,
        az: 1e-5,
    };
    let open = BoundarySpec {
        back: Some(Wall::Outflow),
        front: Some(Wall::Outflow),
        ..gpu_support::open_box()
    };
    compare::<D3Q19Trt, f64>(&ONE, CUBE, trt, &open, Scheme::TwoCopy);
    compare::<D3Q19Trt, f64>(&ONE, CUBE, trt, &open, Scheme::InPlace);
    let front = BoundarySpec {
        back: Some(Wall::ZouHeVelocity {
            velocity: [0.0, 0.01, 0.03],
        }),
        front: Some(Wall::Outflow),
        ..BoundarySpec::periodic()
    };
    compare::<D3Q19Trt, f64>(&ONE, CUBE, trt, &front, Scheme::TwoCopy);
    compare::<D3Q19Trt, f64>(&ONE, CUBE, trt, &front, Scheme::InPlace);
}
