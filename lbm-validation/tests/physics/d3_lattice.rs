//! Three-dimensional lattices with the generated 3-D models (D3Q19 BGK/TRT/MRT/regularized,
//! D3Q27 BGK and central-moment MRT, D3Q15, D3Q7): layouts and streaming schemes bitwise identical, mass conserved to round-off in a
//! closed box, and the shear-wave viscosity `ν = cs²(τ − ½)` along every axis within 1 %.
//!
//! A shear wave `u_a(b) = U sin(k b)` (velocity along axis `a`, varying along axis `b ≠ a`,
//! `k = 2π/N`) decays as `exp(−ν k² t)` (the linearised Navier–Stokes equations); its
//! amplitude is measured by projecting the velocity field on `sin(k b)`.

use crate::lattice_support;

use std::f64::consts::PI;

use lattice_support::state_bits;
use lbm::models::{
    D3Q7Bgk, D3Q7BgkParams, D3Q15Bgk, D3Q15BgkParams, D3Q19Bgk, D3Q19BgkParams, D3Q19Mrt,
    D3Q19MrtParams, D3Q19Regularized, D3Q19RegularizedParams, D3Q19Trt, D3Q19TrtParams, D3Q27Bgk,
    D3Q27BgkParams, D3Q27CentralMrt, D3Q27CentralMrtParams,
};
use lbm::{Aos, BoundarySpec, CAoSoa, CSoa, Lattice, Layout, Model, Obstacles, Scheme, Soa, Wall};

/// A state with structure along every axis: density bumps and a velocity field that varies
/// in x, y and z.
pub(super) fn structured(size: [usize; 3]) -> impl Fn(usize, usize) -> Vec<f64> + Sync {
    move |x, s| {
        let (y, z) = (s % size[1], s / size[1]);
        let (xf, yf, zf) = (x as f64, y as f64, z as f64);
        vec![
            1.0 + 0.02 * (0.7 * xf).sin() * (0.5 * yf).cos() + 0.01 * (0.9 * zf).sin(),
            0.03 * (0.4 * yf + 0.3 * zf).sin(),
            0.02 * (0.6 * zf).cos() * (0.2 * xf).sin(),
            0.025 * (0.5 * xf + 0.8 * yf).cos(),
        ]
    }
}

const SIZE: [usize; 3] = [6, 16, 5];

pub(super) fn trt() -> D3Q19TrtParams {
    D3Q19TrtParams {
        tau: 0.7,
        magic: 0.25,
        ax: 1e-5,
        ay: -2e-5,
        az: 3e-5,
    }
}

fn run<L: Layout>(spec: &BoundarySpec, scheme: Scheme, steps: usize) -> Vec<u64> {
    let mut lat = Lattice::<D3Q19Trt, L, f64>::with_size(SIZE, trt(), scheme, spec).unwrap();
    lat.set_equilibrium(structured(SIZE)).unwrap();
    for _ in 0..steps {
        lat.step();
    }
    state_bits(&lat)
}

/// A closed box: no-slip walls on five sides, a lid at the top moving in x and z.
fn walls() -> BoundarySpec {
    BoundarySpec {
        top: Some(Wall::BounceBack {
            velocity: [0.02, 0.0, 0.01],
        }),
        ..BoundarySpec::cavity_3d(0.0)
    }
}

/// A duct along x with a sphere of voxels in it.
fn sphere_in_duct() -> BoundarySpec {
    let [lx, ly, lz] = SIZE;
    let c = [lx as f64 / 2.0, ly as f64 / 2.0, lz as f64 / 2.0];
    BoundarySpec {
        solid: Some(Obstacles::voxels(move |x, y, z| {
            let r = [x as f64 - c[0], y as f64 - c[1], z as f64 - c[2]];
            r.iter().map(|r| r * r).sum::<f64>() < 6.0
        })),
        ..BoundarySpec::duct()
    }
}

/// Every layout and both schemes give the same bits in 3-D, periodic (halo planes, the AA
/// fold, the z-wrap) and with walls (bounced links in every line, a moving wall), after an
/// even and an odd number of steps; the separate kernels give the fused step's bits.
#[test]
fn layouts_and_schemes_are_bitwise_identical_in_3d() {
    for spec in [
        BoundarySpec::periodic(),
        BoundarySpec::channel(),
        walls(),
        sphere_in_duct(),
    ] {
        for steps in [4, 5] {
            let reference = run::<Aos>(&spec, Scheme::TwoCopy, steps);
            assert_eq!(reference, run::<Soa>(&spec, Scheme::TwoCopy, steps));
            assert_eq!(reference, run::<CSoa<8>>(&spec, Scheme::TwoCopy, steps));
            assert_eq!(reference, run::<CAoSoa<8>>(&spec, Scheme::TwoCopy, steps));
            assert_eq!(reference, run::<Aos>(&spec, Scheme::InPlace, steps));
            assert_eq!(reference, run::<CSoa<4>>(&spec, Scheme::InPlace, steps));
            assert_eq!(reference, run::<CAoSoa<8>>(&spec, Scheme::InPlace, steps));
        }
        let mut split =
            Lattice::<D3Q19Trt, CAoSoa<8>, f64>::with_size(SIZE, trt(), Scheme::TwoCopy, &spec)
                .unwrap();
        split.set_equilibrium(structured(SIZE)).unwrap();
        for _ in 0..4 {
            split.step_split().unwrap();
        }
        assert_eq!(
            run::<CAoSoa<8>>(&spec, Scheme::TwoCopy, 4),
            state_bits(&split)
        );
    }
}

/// Steps swept in pairs are bitwise the steps one by one in 3-D (a column is a plane of
/// lines; a ring holds planes), in both schemes.
#[test]
fn paired_steps_are_bitwise_the_separate_ones_in_3d() {
    const WIDE: [usize; 3] = [24, 16, 3];
    for spec in [BoundarySpec::periodic(), walls(), sphere_in_duct()] {
        for scheme in [Scheme::InPlace, Scheme::TwoCopy] {
            let lattice = || {
                let mut lat =
                    Lattice::<D3Q19Trt, CAoSoa<8>, f64>::with_size(WIDE, trt(), scheme, &spec)
                        .unwrap();
                lat.set_equilibrium(structured(WIDE)).unwrap();
                lat
            };
            lattice_support::assert_pairs_match(lattice, 7, &format!("{scheme:?} {spec:?}"));
        }
    }
}

/// A closed box (no-slip walls on all six sides, a sphere inside) conserves mass to
/// round-off with every 3-D collision, in both schemes.
#[test]
fn mass_is_conserved_in_a_closed_box() {
    fn check<M: Model>(p: M::Params) {
        let spec = BoundarySpec {
            left: Some(Wall::NO_SLIP),
            right: Some(Wall::NO_SLIP),
            ..sphere_in_duct()
        };
        for scheme in [Scheme::TwoCopy, Scheme::InPlace] {
            let mut lat =
                Lattice::<M, CAoSoa<8>, f64>::with_size(SIZE, p.clone(), scheme, &spec).unwrap();
            let init = structured(SIZE);
            lat.set_equilibrium(|x, s| init(x, s)[..M::MOMENT_NAMES.len()].to_vec())
                .unwrap();
            let m0 = lat.mass();
            lat.run(60, 0).unwrap();
            let dm = (lat.mass() - m0).abs() / m0;
            assert!(dm < 1e-13, "{}: relative mass change {dm:e}", M::NAME);
        }
    }
    check::<D3Q19Bgk>(D3Q19BgkParams {
        tau: 0.8,
        ax: 0.0,
        ay: 0.0,
        az: 0.0,
    });
    check::<D3Q19Trt>(D3Q19TrtParams {
        ax: 0.0,
        ay: 0.0,
        az: 0.0,
        ..trt()
    });
    check::<D3Q19Mrt>(D3Q19MrtParams::with_tau(0.8));
    check::<D3Q27Bgk>(D3Q27BgkParams {
        tau: 0.8,
        ax: 0.0,
        ay: 0.0,
        az: 0.0,
    });
    check::<D3Q15Bgk>(D3Q15BgkParams { tau: 0.8 });
    check::<D3Q19Regularized>(D3Q19RegularizedParams {
        tau: 0.8,
        ax: 0.0,
        ay: 0.0,
        az: 0.0,
    });
    check::<D3Q27CentralMrt>(D3Q27CentralMrtParams::with_tau(0.8));
}

/// Wave length of the shear waves.
const N: usize = 48;
/// Amplitude of the shear waves.
const U: f64 = 1e-3;

/// The viscosity measured from a shear wave of velocity along axis `a` varying along axis `b`,
/// over `steps` steps, on an `N`-long axis `b` (the other axes 8 sites).
fn shear_viscosity<M: Model>(p: M::Params, a: usize, b: usize, steps: u64) -> f64 {
    let mut size = [8, 8, 8];
    size[b] = N;
    let mut lat = Lattice::<M, CAoSoa<8>, f64>::with_size(
        size,
        p,
        Scheme::InPlace,
        &BoundarySpec::periodic(),
    )
    .unwrap();
    let k = 2.0 * PI / N as f64;
    let coord = move |x: usize, s: usize| [x, s % size[1], s / size[1]];
    lat.set_equilibrium(|x, s| {
        let mut m = vec![0.0; M::MOMENT_NAMES.len()];
        m[0] = 1.0;
        m[1 + a] = U * (k * coord(x, s)[b] as f64).sin();
        m
    })
    .unwrap();
    let amplitude = |lat: &Lattice<M, CAoSoa<8>, f64>| {
        let u = lat.moment_field(["ux", "uy", "uz"][a]).unwrap();
        let d = lat.dims();
        let mut sum = 0.0;
        for x in 0..d.lx {
            for s in 0..d.plane() {
                sum += u[x * d.plane() + s] * (k * coord(x, s)[b] as f64).sin();
            }
        }
        2.0 * sum / d.sites() as f64
    };
    let a0 = amplitude(&lat);
    lat.run(steps, 0).unwrap();
    let a1 = amplitude(&lat);
    -(a1 / a0).ln() / (k * k * steps as f64)
}

fn assert_viscosity<M: Model>(p: M::Params, tau: f64) {
    let want = (tau - 0.5) / 3.0;
    for (a, b) in [(0, 2), (2, 1), (1, 0)] {
        let nu = shear_viscosity::<M>(p.clone(), a, b, 400);
        let err = (nu / want - 1.0).abs();
        assert!(
            err < 0.01,
            "{}: u_{a}(x_{b}) gives ν = {nu:.6}, cs²(τ − ½) = {want:.6} (error {:.2} %)",
            M::NAME,
            100.0 * err
        );
    }
}

/// Shear waves along every pair of axes decay with `ν = cs²(τ − ½)` within 1 %.
#[test]
fn shear_wave_viscosity_along_every_axis() {
    assert_viscosity::<D3Q19Bgk>(
        D3Q19BgkParams {
            tau: 0.8,
            ax: 0.0,
            ay: 0.0,
            az: 0.0,
        },
        0.8,
    );
    assert_viscosity::<D3Q19Trt>(
        D3Q19TrtParams {
            tau: 0.6,
            ax: 0.0,
            ay: 0.0,
            az: 0.0,
            ..trt()
        },
        0.6,
    );
    assert_viscosity::<D3Q19Mrt>(D3Q19MrtParams::with_tau(0.9), 0.9);
    assert_viscosity::<D3Q27Bgk>(
        D3Q27BgkParams {
            tau: 0.7,
            ax: 0.0,
            ay: 0.0,
            az: 0.0,
        },
        0.7,
    );
    assert_viscosity::<D3Q15Bgk>(D3Q15BgkParams { tau: 0.75 }, 0.75);
    assert_viscosity::<D3Q19Regularized>(
        D3Q19RegularizedParams {
            tau: 0.6,
            ax: 0.0,
            ay: 0.0,
            az: 0.0,
        },
        0.6,
    );
    assert_viscosity::<D3Q27CentralMrt>(D3Q27CentralMrtParams::with_tau(0.7), 0.7);
}

/// D3Q7 with its first-order equilibrium conserves mass and momentum and carries nothing of
/// the momentum flux: its long waves are sound waves of speed `cs = 1/2`. A standing density
/// wave `ρ' ∝ sin(kz)` released at rest crosses zero first at `t = π / (2 cs k)`.
#[test]
fn d3q7_carries_sound_at_cs() {
    const NZ: usize = 128;
    let mut lat = Lattice::<D3Q7Bgk, CAoSoa<8>, f64>::with_size(
        [8, 8, NZ],
        D3Q7BgkParams { tau: 0.6 },
        Scheme::TwoCopy,
        &BoundarySpec::periodic(),
    )
    .unwrap();
    let k = 2.0 * PI / NZ as f64;
    lat.set_equilibrium(|_, s| vec![1.0 + 1e-4 * (k * (s / 8) as f64).sin(), 0.0, 0.0, 0.0])
        .unwrap();
    let amplitude = |lat: &Lattice<D3Q7Bgk, CAoSoa<8>, f64>| {
        let rho = lat.moment_field("rho").unwrap();
        let sum: f64 = (0..rho.len())
            .map(|j| (rho[j] - 1.0) * (k * (j % (8 * NZ) / 8) as f64).sin())
            .sum();
        2.0 * sum / rho.len() as f64
    };
    let mut before = amplitude(&lat);
    let mut t = 0.0;
    for step in 1..=200 {
        lat.step();
        let now = amplitude(&lat);
        if now <= 0.0 {
            // The moments are those of the streamed populations: time `step + 1`.
            t = (step + 1) as f64 - now / (now - before);
            break;
        }
        before = now;
    }
    let cs = PI / (2.0 * k * t);
    println!("D3Q7: first zero at t = {t:.3}, cs = {cs:.5}");
    assert!((cs / 0.5 - 1.0).abs() < 0.01, "cs = {cs}, want 1/2");
}

/// A 3-D model needs a third side, a 2-D one refuses it; both say so before any work.
#[test]
fn sizes_are_checked_for_the_dimension() {
    let p = D3Q19BgkParams {
        tau: 0.8,
        ax: 0.0,
        ay: 0.0,
        az: 0.0,
    };
    let spec = BoundarySpec::periodic();
    let err = Lattice::<D3Q19Bgk, Aos, f64>::new(8, 8, p, Scheme::TwoCopy, &spec)
        .err()
        .expect("a 3-D model on a 2-D lattice");
    assert!(err.to_string().contains("three-dimensional"), "{err}");
    let p2 = lbm::models::D2Q9BgkParams {
        tau: 0.8,
        ax: 0.0,
        ay: 0.0,
    };
    let err =
        Lattice::<lbm::models::D2Q9Bgk, Aos, f64>::with_size([8, 8, 4], p2, Scheme::TwoCopy, &spec)
            .err()
            .expect("a 2-D model on a 3-D lattice");
    assert!(err.to_string().contains("two-dimensional"), "{err}");
    let err = Lattice::<lbm::models::D2Q9Bgk, Aos, f64>::new(
        8,
        8,
        p2,
        Scheme::TwoCopy,
        &BoundarySpec::duct(),
    )
    .err()
    .expect("z walls on a 2-D lattice");
    assert!(err.to_string().contains("leave them out"), "{err}");
}

/// Boundary specifications a 3-D lattice cannot honour are refused with what to do.
#[test]
fn bad_3d_boundaries_are_refused() {
    let p = D3Q19BgkParams {
        tau: 0.8,
        ax: 0.0,
        ay: 0.0,
        az: 0.0,
    };
    let build = |spec: BoundarySpec| {
        Lattice::<D3Q19Bgk, Aos, f64>::with_size([4, 6, 5], p, Scheme::TwoCopy, &spec)
            .err()
            .expect("refused")
            .to_string()
    };
    let one_sided = build(BoundarySpec {
        front: None,
        ..BoundarySpec::duct()
    });
    assert!(one_sided.contains("`back` and `front`"), "{one_sided}");
    let mask = build(BoundarySpec {
        solid: Some(Obstacles::voxel_mask(6, 4, vec![false; 4 * 6 * 4])),
        ..BoundarySpec::periodic()
    });
    assert!(mask.contains("4×6×5 = 120 sites"), "{mask}");
    let d3q7 = Lattice::<D3Q7Bgk, Aos, f64>::with_size(
        [4, 6, 5],
        D3Q7BgkParams { tau: 0.8 },
        Scheme::TwoCopy,
        &BoundarySpec {
            back: Some(Wall::ZouHeVelocity {
                velocity: [0.0, 0.0, 0.01],
            }),
            front: Some(Wall::ZouHePressure { density: 1.0 }),
            ..BoundarySpec::periodic()
        },
    )
    .err()
    .expect("Zou–He on D3Q7")
    .to_string();
    assert!(
        d3q7.contains("D3Q7Bgk has none along [1, 0, 0]") && d3q7.contains("bounce-back"),
        "{d3q7}"
    );
}

/// A Zou–He side imposes its velocity (normal and tangential) or its density exactly, on each
/// of the six sides, for every 3-D velocity set it applies to (D3Q15, D3Q19, D3Q27): after
/// the run, the moments of the face's sites are the target to round-off (BGK conserves them).
#[test]
fn zou_he_sides_impose_velocity_and_density_in_3d() {
    zou_he_exact::<D3Q19Bgk>(D3Q19BgkParams {
        tau: 0.8,
        ax: 0.0,
        ay: 0.0,
        az: 0.0,
    });
    zou_he_exact::<D3Q27Bgk>(D3Q27BgkParams {
        tau: 0.8,
        ax: 0.0,
        ay: 0.0,
        az: 0.0,
    });
    zou_he_exact::<D3Q15Bgk>(D3Q15BgkParams { tau: 0.8 });
}

fn zou_he_exact<M: Model>(p: M::Params) {
    const N: usize = 8;
    for axis in 0..3 {
        for inlet_low in [true, false] {
            let sign = if inlet_low { 1.0 } else { -1.0 };
            // Inward normal velocity 0.03 plus tangential components.
            let mut u = [0.01, -0.02, 0.015];
            u[axis] = 0.03 * sign;
            let inlet = Wall::ZouHeVelocity { velocity: u };
            let outlet = Wall::ZouHePressure { density: 1.0 };
            let (low, high) = if inlet_low {
                (inlet, outlet)
            } else {
                (outlet, inlet)
            };
            let mut spec = BoundarySpec::periodic();
            let sides = [
                (&mut spec.left, &mut spec.right),
                (&mut spec.bottom, &mut spec.top),
                (&mut spec.back, &mut spec.front),
            ];
            for (a, (l, h)) in sides.into_iter().enumerate() {
                if a == axis {
                    (*l, *h) = (Some(low), Some(high));
                }
            }
            let mut lat =
                Lattice::<M, Soa, f64>::with_size([N; 3], p.clone(), Scheme::InPlace, &spec)
                    .unwrap();
            lat.run(101, 0).unwrap();
            let mut m = vec![0.0; M::MOMENT_NAMES.len()];
            let (at_inlet, at_outlet) = if inlet_low { (0, N - 1) } else { (N - 1, 0) };
            for (face, i) in [(at_inlet, true), (at_outlet, false)] {
                for (a, b) in (0..N).flat_map(|a| (0..N).map(move |b| (a, b))) {
                    let site = match axis {
                        0 => [face, a, b],
                        1 => [a, face, b],
                        _ => [a, b, face],
                    };
                    lat.moments(site[0], site[2] * N + site[1], &mut m).unwrap();
                    let want = if i {
                        u
                    } else {
                        let mut v = [0.0; 3];
                        v[axis] = m[1 + axis];
                        v
                    };
                    let worst = (0..3)
                        .map(|k| (m[1 + k] - want[k]).abs())
                        .fold(0.0, f64::max);
                    let rho = if i { 0.0 } else { (m[0] - 1.0).abs() };
                    assert!(
                        worst < 1e-13 && rho < 1e-13,
                        "{} axis {axis}, inlet {}: site {site:?} has rho {}, u {:?}",
                        M::NAME,
                        if inlet_low { "low" } else { "high" },
                        m[0],
                        &m[1..4]
                    );
                }
            }
        }
    }
}

/// The Zou–He sides of D3Q19 on a lattice one site deep are D2Q9's (summed over the
/// velocities that differ only along the flat axis, Hecht & Harting's closure is Zou & He's):
/// a channel with a velocity inlet and a pressure outlet, walls on the other two sides, with
/// the inlet on each of the three axes, matches the D2Q9 channel to round-off.
#[test]
fn a_flat_3d_zou_he_channel_is_the_2d_channel() {
    const STEPS: u64 = 300;
    let (lx, ly, u0) = (24, 12, 0.04);
    let d2 = lbm::models::D2Q9BgkParams {
        tau: 0.7,
        ax: 0.0,
        ay: 0.0,
    };
    let p = D3Q19BgkParams {
        tau: 0.7,
        ax: 0.0,
        ay: 0.0,
        az: 0.0,
    };
    let inlet = |axis: usize| {
        let mut u = [0.0; 3];
        u[axis] = u0;
        Some(Wall::ZouHeVelocity { velocity: u })
    };
    let outlet = Some(Wall::ZouHePressure { density: 1.0 });
    // The 2-D channels: along x (walls at the bottom and top) and along y (walls left, right).
    let along_x = BoundarySpec {
        left: inlet(0),
        right: outlet,
        ..BoundarySpec::channel()
    };
    let along_y = |axis| BoundarySpec {
        bottom: inlet(axis),
        top: outlet,
        left: Some(Wall::NO_SLIP),
        right: Some(Wall::NO_SLIP),
        ..BoundarySpec::periodic()
    };
    let flat = |spec: &BoundarySpec, size: [usize; 2]| {
        let mut lat = Lattice::<lbm::models::D2Q9Bgk, Aos, f64>::new(
            size[0],
            size[1],
            d2,
            Scheme::TwoCopy,
            spec,
        )
        .unwrap();
        lat.run(STEPS, 0).unwrap();
        ["rho", "ux", "uy"].map(|m| lat.moment_field(m).unwrap())
    };
    let x_channel = flat(&along_x, [lx, ly]);
    let y_channel = flat(&along_y(1), [ly, lx]);
    // (size, boundaries, the 2-D result, the moments playing 2-D's ρ, u_x, u_y)
    let cases = [
        (
            [lx, ly, 1],
            along_x.clone(),
            &x_channel,
            ["rho", "ux", "uy"],
        ),
        (
            [lx, 1, ly],
            BoundarySpec {
                left: inlet(0),
                right: outlet,
                back: Some(Wall::NO_SLIP),
                front: Some(Wall::NO_SLIP),
                ..BoundarySpec::periodic()
            },
            &x_channel,
            ["rho", "ux", "uz"],
        ),
        ([ly, lx, 1], along_y(1), &y_channel, ["rho", "ux", "uy"]),
        (
            [ly, 1, lx],
            BoundarySpec {
                back: inlet(2),
                front: outlet,
                left: Some(Wall::NO_SLIP),
                right: Some(Wall::NO_SLIP),
                ..BoundarySpec::periodic()
            },
            &y_channel,
            ["rho", "ux", "uz"],
        ),
    ];
    for (size, spec, want, names) in cases {
        let mut lat =
            Lattice::<D3Q19Bgk, Aos, f64>::with_size(size, p, Scheme::InPlace, &spec).unwrap();
        lat.run(STEPS, 0).unwrap();
        for (name, want) in names.iter().zip(want) {
            let got = lat.moment_field(name).unwrap();
            let worst = got
                .iter()
                .zip(want)
                .map(|(a, b)| (a - b).abs())
                .fold(0.0, f64::max);
            assert!(
                worst < 1e-13,
                "{size:?} {name}: largest difference {worst:e}"
            );
        }
        let flow = want[1]
            .iter()
            .chain(&want[2])
            .map(|u| u.abs())
            .fold(0.0, f64::max);
        assert!(flow > 0.5 * u0, "the inlet drives the flow: max |u| {flow}");
    }
}

/// A flow that does not depend on one axis runs on D3Q19 exactly as on D2Q9: summed over the
/// velocities that differ only along that axis, D3Q19's weights, equilibrium, bounce-back
/// links and moving-wall corrections are D2Q9's, and BGK is linear in the populations. So the
/// lid-driven cavity on a 3-D lattice one site deep — in the x–y plane (walls in x and y, the
/// lid at the top), and turned into the x–z plane (walls in x and z, the lid at the front,
/// periodic in y) — matches the 2-D cavity to round-off: the 3-D walls, corners and moving
/// wall on each axis against the validated 2-D ones.
#[test]
fn a_flat_3d_cavity_is_the_2d_cavity() {
    const N: usize = 24;
    const STEPS: usize = 400;
    let (tau, lid) = (0.6, 0.1);
    let mut flat = Lattice::<lbm::models::D2Q9Bgk, Aos, f64>::new(
        N,
        N,
        lbm::models::D2Q9BgkParams {
            tau,
            ax: 0.0,
            ay: 0.0,
        },
        Scheme::InPlace,
        &BoundarySpec::cavity(lid),
    )
    .unwrap();
    flat.set_equilibrium(|_, _| vec![1.0, 0.0, 0.0]).unwrap();
    flat.run(STEPS as u64, 0).unwrap();
    let [ux, uy] = ["ux", "uy"].map(|m| flat.moment_field(m).unwrap());
    let p = D3Q19BgkParams {
        tau,
        ax: 0.0,
        ay: 0.0,
        az: 0.0,
    };
    let front_lid = BoundarySpec {
        left: Some(Wall::NO_SLIP),
        right: Some(Wall::NO_SLIP),
        back: Some(Wall::NO_SLIP),
        front: Some(Wall::BounceBack {
            velocity: [lid, 0.0, 0.0],
        }),
        ..BoundarySpec::periodic()
    };
    // (size, boundaries, the moment playing 2-D's `uy`)
    let planes = [
        ([N, N, 1], BoundarySpec::cavity(lid), "uy"),
        ([N, 1, N], front_lid, "uz"),
    ];
    for (size, spec, normal) in planes {
        let mut lat =
            Lattice::<D3Q19Bgk, Aos, f64>::with_size(size, p, Scheme::InPlace, &spec).unwrap();
        lat.set_equilibrium(|_, _| vec![1.0, 0.0, 0.0, 0.0])
            .unwrap();
        lat.run(STEPS as u64, 0).unwrap();
        let [u, v] = ["ux", normal].map(|m| lat.moment_field(m).unwrap());
        let worst = u
            .iter()
            .zip(&ux)
            .chain(v.iter().zip(&uy))
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max);
        assert!(
            worst < 1e-13 * lid,
            "{size:?}: largest difference {worst:e}"
        );
        let moving = ux.iter().map(|u| u.abs()).fold(0.0, f64::max);
        assert!(
            moving > 0.3 * lid,
            "the lid drives the flow: max |u| {moving}"
        );
    }
}

/// A 3-D lattice cut along x into 2 and 3 slabs on as many threads (the ring that MPI ranks
/// run, its halo planes swapped between the threads) runs bitwise as the whole lattice, in
/// both schemes: periodic, and a closed box with a moving lid and a sphere straddling a cut.
#[test]
fn slabs_of_a_3d_lattice_are_bitwise_the_whole_lattice() {
    use lbm::Solver;
    use lbm::distributed::DistLattice;
    use lbm::domain::GlobalSpec;
    use lbm::group::Threads;
    let size = [9, 16, 5];
    let boxed = BoundarySpec {
        left: Some(Wall::NO_SLIP),
        right: Some(Wall::NO_SLIP),
        ..sphere_in_duct()
    };
    for spec in [BoundarySpec::periodic(), walls(), boxed] {
        let g = GlobalSpec::<D3Q19Trt> {
            lx: size[0],
            ly: size[1],
            lz: size[2],
            params: trt(),
            boundaries: spec,
        };
        let mut single = g.lattice::<CAoSoa<8>, f64>(Scheme::TwoCopy).unwrap();
        single.set_equilibrium(structured(size)).unwrap();
        for _ in 0..7 {
            single.step();
        }
        for (ranks, scheme) in [
            (2, Scheme::InPlace),
            (3, Scheme::TwoCopy),
            (3, Scheme::InPlace),
        ] {
            let gathered = Threads::run(ranks, |t| {
                let mut ring = DistLattice::<D3Q19Trt, CAoSoa<8>, f64>::new(
                    Box::new(t),
                    g.clone(),
                    lbm::blocks::Cut::along(0, ranks),
                    scheme,
                )
                .unwrap();
                ring.set_equilibrium_at(&structured(size)).unwrap();
                ring.advance(7).unwrap();
                ring.gather().unwrap()
            });
            let gathered = gathered[0].as_ref().expect("the first thread gathers");
            assert_eq!(
                state_bits(&single),
                state_bits(gathered),
                "{ranks} slabs, {}",
                scheme.name()
            );
        }
    }
}
