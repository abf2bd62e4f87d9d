//! Runtime invariants with the generated models: results do not depend on the layout or on the
//! streaming scheme (bitwise), and closed domains conserve mass to round-off.

use lbm::models::{D2Q9Mrt, D2Q9MrtParams, D2Q9Trt, D2Q9TrtParams, D2Q37, D2Q37Params};
use lbm::{Aos, BoundarySpec, CAoSoa, CSoa, Lattice, Layout, Model, Real, Scheme, Soa, Wall};

/// All stored populations in logical order, as bit patterns.
fn state_bits<M: Model, L: Layout, T: Real>(lat: &Lattice<M, L, T>) -> Vec<u64> {
    let d = lat.dims();
    let mut f = vec![T::default(); M::Q];
    let mut out = Vec::with_capacity(d.lx * d.ly * M::Q);
    for x in 0..d.lx {
        for y in 0..d.ly {
            lat.populations(x, y, &mut f).unwrap();
            out.extend(f.iter().map(|v| v.to_f64().to_bits()));
        }
    }
    out
}

/// A thermal state with structure everywhere: a warm blob and a shear.
fn thermal_state(x: usize, y: usize) -> Vec<f64> {
    let (xf, yf) = (x as f64, y as f64);
    vec![
        1.0 + 0.02 * (0.3 * xf).sin() * (0.2 * yf).cos(),
        0.02 * (0.25 * yf).sin(),
        0.01 * (0.4 * xf).cos(),
        1.0 + 0.03 * (0.35 * xf + 0.15 * yf).sin(),
    ]
}

fn d2q37_run<L: Layout>(spec: &BoundarySpec, scheme: Scheme, steps: usize) -> Vec<u64> {
    let p = D2Q37Params { tau: 0.9, g: 1e-4 };
    let mut lat = Lattice::<D2Q37, L, f64>::new(10, 48, p, scheme, spec).unwrap();
    lat.set_equilibrium(thermal_state).unwrap();
    for _ in 0..steps {
        lat.step();
    }
    state_bits(&lat)
}

fn thermal_walls() -> BoundarySpec {
    BoundarySpec {
        bottom: Some(Wall::Thermal { temperature: 1.05 }),
        top: Some(Wall::Thermal { temperature: 0.95 }),
        ..BoundarySpec::default()
    }
}

/// D2Q37 (halo 3): every layout and both schemes give the same bits, with periodic x (halo
/// exchange and the AA fold over three columns) and with the thermal walls of Calore et al. 2019 §5.
#[test]
fn d2q37_is_bitwise_identical_across_layouts_and_schemes() {
    for spec in [BoundarySpec::periodic(), thermal_walls()] {
        for steps in [5, 6] {
            let reference = d2q37_run::<Aos>(&spec, Scheme::TwoCopy, steps);
            assert_eq!(reference, d2q37_run::<Soa>(&spec, Scheme::TwoCopy, steps));
            assert_eq!(
                reference,
                d2q37_run::<CSoa<8>>(&spec, Scheme::TwoCopy, steps)
            );
            assert_eq!(
                reference,
                d2q37_run::<CAoSoa<8>>(&spec, Scheme::TwoCopy, steps)
            );
            assert_eq!(
                reference,
                d2q37_run::<CAoSoa<8>>(&spec, Scheme::InPlace, steps)
            );
            assert_eq!(
                reference,
                d2q37_run::<CSoa<4>>(&spec, Scheme::InPlace, steps)
            );
        }
    }
}

fn mrt() -> D2Q9MrtParams {
    D2Q9MrtParams {
        tau: 0.7,
        s_e: 1.64,
        s_eps: 1.54,
        s_q: 1.7,
        ax: 2e-6,
        ay: -1e-6,
    }
}

fn shear(x: usize, y: usize) -> Vec<f64> {
    let (xf, yf) = (x as f64, y as f64);
    vec![
        1.0 + 0.01 * (0.3 * xf + 0.2 * yf).sin(),
        0.04 * (0.3 * yf).sin(),
        0.02 * (0.2 * xf).cos(),
    ]
}

fn mrt_run<L: Layout, T: Real>(scheme: Scheme, steps: usize) -> Vec<u64> {
    let mut lat =
        Lattice::<D2Q9Mrt, L, T>::new(12, 32, mrt(), scheme, &BoundarySpec::cavity(0.05)).unwrap();
    lat.set_equilibrium(shear).unwrap();
    for _ in 0..steps {
        lat.step();
    }
    state_bits(&lat)
}

/// D2Q9 MRT in a cavity: layouts and schemes agree bitwise, in both precisions.
#[test]
fn d2q9_mrt_is_bitwise_identical_across_layouts_and_schemes() {
    let r64 = mrt_run::<Aos, f64>(Scheme::TwoCopy, 9);
    assert_eq!(r64, mrt_run::<Soa, f64>(Scheme::InPlace, 9));
    assert_eq!(r64, mrt_run::<CSoa<8>, f64>(Scheme::TwoCopy, 9));
    assert_eq!(r64, mrt_run::<CAoSoa<8>, f64>(Scheme::InPlace, 9));
    let r32 = mrt_run::<Aos, f32>(Scheme::TwoCopy, 9);
    assert_eq!(r32, mrt_run::<CSoa<16>, f32>(Scheme::InPlace, 9));
    assert_eq!(r32, mrt_run::<CAoSoa<16>, f32>(Scheme::TwoCopy, 9));
}

fn relative_mass_drift<M: Model>(
    params: M::Params,
    spec: &BoundarySpec,
    init: fn(usize, usize) -> Vec<f64>,
) -> f64 {
    let mut worst: f64 = 0.0;
    for scheme in [Scheme::TwoCopy, Scheme::InPlace] {
        let mut lat =
            Lattice::<M, CAoSoa<8>, f64>::new(16, 32, params.clone(), scheme, spec).unwrap();
        lat.set_equilibrium(init).unwrap();
        let m0 = lat.mass();
        lat.run(500, 100).unwrap();
        worst = worst.max((lat.mass() - m0).abs() / m0);
    }
    worst
}

/// Closed domains (periodic, channel, cavity with a moving lid, an obstacle) conserve mass to
/// round-off with every collision operator.
#[test]
fn mass_is_conserved_to_round_off() {
    let mut obstacle = BoundarySpec::channel();
    obstacle.solid = Some(lbm::Obstacles::new(|x, y| {
        (5..8).contains(&x) && (10..14).contains(&y)
    }));
    let trt = D2Q9TrtParams {
        tau: 0.7,
        magic: 3.0 / 16.0,
        ax: 1e-6,
        ay: 0.0,
    };
    for spec in [
        BoundarySpec::periodic(),
        BoundarySpec::channel(),
        BoundarySpec::cavity(0.05),
        obstacle,
    ] {
        let drift = relative_mass_drift::<D2Q9Mrt>(mrt(), &spec, shear);
        assert!(drift < 1e-13, "MRT {spec:?}: {drift:e}");
        let drift = relative_mass_drift::<D2Q9Trt>(trt, &spec, shear);
        assert!(drift < 1e-13, "TRT {spec:?}: {drift:e}");
    }
    let p = D2Q37Params { tau: 0.9, g: 0.0 };
    let drift = relative_mass_drift::<D2Q37>(p, &BoundarySpec::periodic(), thermal_state);
    assert!(drift < 1e-13, "D2Q37 periodic: {drift:e}");
}
