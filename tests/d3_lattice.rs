//! Three-dimensional lattices with the generated 3-D models (D3Q19 BGK/TRT/MRT, D3Q27, D3Q15,
//! D3Q7): layouts and streaming schemes bitwise identical, mass conserved to round-off in a
//! closed box, and the shear-wave viscosity `ν = cs²(τ − ½)` along every axis within 1 %.
//!
//! A shear wave `u_a(b) = U sin(k b)` (velocity along axis `a`, varying along axis `b ≠ a`,
//! `k = 2π/N`) decays as `exp(−ν k² t)` (the linearised Navier–Stokes equations); its
//! amplitude is measured by projecting the velocity field on `sin(k b)`.

use std::f64::consts::PI;

use lbm::models::{
    D3Q15Bgk, D3Q15BgkParams, D3Q19Bgk, D3Q19BgkParams, D3Q19Mrt, D3Q19MrtParams, D3Q19Trt,
    D3Q19TrtParams, D3Q27Bgk, D3Q27BgkParams, D3Q7Bgk, D3Q7BgkParams,
};
use lbm::{
    Aos, BoundarySpec, CAoSoa, CSoa, Lattice, Layout, Model, Obstacles, Real, Scheme, Soa, Wall,
};

/// All stored populations in logical order, as bit patterns.
fn state_bits<M: Model, L: Layout, T: Real>(lat: &Lattice<M, L, T>) -> Vec<u64> {
    let d = lat.dims();
    let mut f = vec![T::default(); M::Q];
    let mut out = Vec::with_capacity(d.sites() * M::Q);
    for x in 0..d.lx {
        for s in 0..d.plane() {
            lat.populations(x, s, &mut f).unwrap();
            out.extend(f.iter().map(|v| v.to_f64().to_bits()));
        }
    }
    out
}

/// A state with structure along every axis: density bumps and a velocity field that varies
/// in x, y and z.
fn structured(size: [usize; 3]) -> impl Fn(usize, usize) -> Vec<f64> + Sync {
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

fn trt() -> D3Q19TrtParams {
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
    let zou_he = build(BoundarySpec {
        left: Some(Wall::ZouHeVelocity {
            velocity: [0.01, 0.0],
        }),
        right: Some(Wall::ZouHePressure { density: 1.0 }),
        ..BoundarySpec::periodic()
    });
    assert!(zou_he.contains("2-D D2Q9-like"), "{zou_he}");
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

/// A 3-D lattice cut along x into 2 and 3 slabs (the halo planes copied between them, as MPI
/// ranks exchange them) runs bitwise as the whole lattice, in both schemes: periodic, and a
/// closed box with a moving lid and a sphere straddling a cut.
#[test]
fn slabs_of_a_3d_lattice_are_bitwise_the_whole_lattice() {
    use lbm::domain::{GlobalSpec, SlabRing};
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
        let mut single = g.lattice::<CAoSoa<8>, f64>().unwrap();
        single.set_equilibrium(structured(size)).unwrap();
        for _ in 0..7 {
            single.step();
        }
        for (ranks, scheme) in [
            (2, Scheme::InPlace),
            (3, Scheme::TwoCopy),
            (3, Scheme::InPlace),
        ] {
            let mut ring =
                SlabRing::<D3Q19Trt, CAoSoa<8>, f64>::new(g.clone(), ranks, scheme).unwrap();
            ring.set_equilibrium(structured(size)).unwrap();
            for _ in 0..7 {
                ring.step().unwrap();
            }
            assert_eq!(
                state_bits(&single),
                state_bits(&ring.gather().unwrap()),
                "{ranks} slabs, {}",
                scheme.name()
            );
        }
    }
}
