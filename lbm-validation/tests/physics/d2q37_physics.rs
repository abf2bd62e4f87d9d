//! D2Q37 physics on real lattices: rest and conservation to round-off, the kinematic viscosity
//! from the decay of a shear wave, the thermal diffusivity from the decay of an isobaric
//! temperature wave (both `cs²(τ − ½)`: BGK gives Prandtl number 1), and a hydrostatic
//! column under gravity between thermal walls that stays at rest (the `bc` of Calore et al. 2019 §5); the
//! in-place half-steps swept in pairs bitwise equal to the half-steps one by one (a model whose
//! pulls reach three columns: seams of three).

use crate::lattice_support;

use std::f64::consts::PI;

use lbm::models::{D2Q37, D2Q37Params};
use lbm::{BoundarySpec, CAoSoa, Lattice, Model, Scheme, Soa, Wall};

type L37 = Lattice<D2Q37, Soa, f64>;

fn periodic(lx: usize, ly: usize, tau: f64, init: impl Fn(usize, usize) -> Vec<f64> + Sync) -> L37 {
    let mut lat = L37::new(
        lx,
        ly,
        D2Q37Params { tau, g: 0.0 },
        Scheme::TwoCopy,
        &BoundarySpec::periodic(),
    )
    .unwrap();
    lat.set_equilibrium(init).unwrap();
    lat
}

/// Amplitude of the mode `sin(2π y / LY)` of a field, averaged over x.
fn sine_amplitude(field: &[f64], lx: usize, ly: usize, offset: f64) -> f64 {
    let k = 2.0 * PI / ly as f64;
    let sum: f64 = (0..lx)
        .flat_map(|x| (0..ly).map(move |y| (x, y)))
        .map(|(x, y)| (field[x * ly + y] - offset) * (k * y as f64).sin())
        .sum();
    2.0 * sum / (lx * ly) as f64
}

/// Σ over the lattice of Σ_i f_i φ(c_i), from the populations.
fn total(lat: &L37, phi: impl Fn([i32; 3]) -> f64) -> f64 {
    let d = lat.dims();
    let mut f = vec![0.0; D2Q37::Q];
    let mut s = 0.0;
    for x in 0..d.lx {
        for y in 0..d.ly {
            lat.populations(x, y, &mut f).unwrap();
            s += f
                .iter()
                .zip(D2Q37::VELOCITIES)
                .map(|(f, &c)| f * phi(c))
                .sum::<f64>();
        }
    }
    s
}

#[test]
fn uniform_rest_state_stays_at_rest() {
    let mut lat = periodic(8, 16, 0.8, |_, _| vec![1.3, 0.0, 0.0, 1.1]);
    lat.run(200, 0).unwrap();
    for name in ["ux", "uy"] {
        let max = lat
            .moment_field(name)
            .unwrap()
            .iter()
            .fold(0.0f64, |m, v| m.max(v.abs()));
        assert!(max < 1e-15, "{name} = {max:e}");
    }
    let t = lat.moment_field("T").unwrap();
    assert!(t.iter().all(|v| (v - 1.1).abs() < 1e-14));
}

#[test]
fn mass_momentum_energy_are_conserved_on_a_periodic_lattice() {
    let (lx, ly) = (16, 16);
    let mut lat = periodic(lx, ly, 0.7, |x, y| {
        let (a, b) = (
            2.0 * PI * x as f64 / lx as f64,
            2.0 * PI * y as f64 / ly as f64,
        );
        vec![
            1.0 + 0.05 * a.sin() * b.cos(),
            0.03 * b.sin(),
            -0.02 * a.cos(),
            1.0 + 0.04 * (a + b).sin(),
        ]
    });
    let invariants: [&dyn Fn([i32; 3]) -> f64; 4] =
        [&|_| 1.0, &|c| f64::from(c[0]), &|c| f64::from(c[1]), &|c| {
            f64::from(c[0] * c[0] + c[1] * c[1])
        }];
    let before: Vec<f64> = invariants.iter().map(|p| total(&lat, p)).collect();
    lat.run(300, 100).unwrap();
    let scale = before[0];
    for (k, p) in invariants.iter().enumerate() {
        let after = total(&lat, p);
        assert!(
            (after - before[k]).abs() < 1e-12 * scale,
            "invariant {k}: {} → {after}",
            before[k]
        );
    }
}

/// The diffusivity `D` of a mode `sin(k y)` that decays as `exp(−D k² t)`: its amplitude (by
/// `measure`) after 50 steps of settling and after `steps` more.
fn diffusivity(lat: &mut L37, k: f64, steps: u64, measure: impl Fn(&L37) -> f64) -> f64 {
    lat.run(50, 0).unwrap();
    let a1 = measure(lat);
    lat.run(steps, 0).unwrap();
    let a2 = measure(lat);
    (a1 / a2).ln() / (k * k * steps as f64)
}

/// `u_x = U sin(k y)` decays as `exp(−ν k² t)`; ν must be `cs²(τ − ½)` within 1%.
#[test]
fn shear_wave_decay_gives_the_viscosity() {
    let (lx, ly, tau) = (8, 64, 0.8);
    let k = 2.0 * PI / ly as f64;
    let mut lat = periodic(lx, ly, tau, |_, y| {
        vec![1.0, 0.01 * (k * y as f64).sin(), 0.0, 1.0]
    });
    let ux = |lat: &L37| sine_amplitude(&lat.moment_field("ux").unwrap(), lx, ly, 0.0);
    let nu = diffusivity(&mut lat, k, 400, ux);
    let want = D2Q37::CS2 * (tau - 0.5);
    assert!(
        (nu / want - 1.0).abs() < 0.01,
        "ν = {nu}, cs²(τ − ½) = {want}"
    );
}

/// An isobaric temperature wave (ρT uniform, u = 0) decays by diffusion with `κ = cs²(τ − ½)`
/// (within 2%). The entropy mode is measured as `δT − (γ − 1)/γ · δp` with γ = (D + 2)/D = 2,
/// which the sound waves the initial state also excites do not carry.
#[test]
fn temperature_wave_decay_gives_the_thermal_diffusivity() {
    let (lx, ly, tau) = (8, 64, 0.8);
    let k = 2.0 * PI / ly as f64;
    let temp = |y: usize| 1.0 + 0.001 * (k * y as f64).sin();
    let mut lat = periodic(lx, ly, tau, |_, y| vec![1.0 / temp(y), 0.0, 0.0, temp(y)]);
    let entropy_mode = |lat: &L37| {
        let (t, rho) = (
            lat.moment_field("T").unwrap(),
            lat.moment_field("rho").unwrap(),
        );
        let s: Vec<f64> = t
            .iter()
            .zip(&rho)
            .map(|(t, r)| (t - 1.0) - 0.5 * (r * t - 1.0))
            .collect();
        sine_amplitude(&s, lx, ly, 0.0)
    };
    let kappa = diffusivity(&mut lat, k, 500, entropy_mode);
    let want = D2Q37::CS2 * (tau - 0.5);
    assert!(
        (kappa / want - 1.0).abs() < 0.02,
        "κ = {kappa}, cs²(τ − ½) = {want}"
    );
}

/// An isothermal column in hydrostatic balance, `T dρ/dy = −ρ g`, between walls at T = 1,
/// stays at rest: velocities of the fluid rows below 1e-6 of the sound speed over 10 000 steps
/// (the walls' own `HALO` rows are boundary nodes, reset to equilibrium every step).
#[test]
fn hydrostatic_column_stays_at_rest() {
    let (lx, ly, g) = (8, 64, 1e-5);
    let wall = Some(Wall::Thermal { temperature: 1.0 });
    let spec = BoundarySpec {
        bottom: wall,
        top: wall,
        ..BoundarySpec::periodic()
    };
    let mut lat = L37::new(lx, ly, D2Q37Params { tau: 0.8, g }, Scheme::TwoCopy, &spec).unwrap();
    // The velocity given to set_equilibrium is the bare Σfc/ρ: −a/2 = +g/2 makes the physical
    // velocity u + a/2 zero.
    lat.set_equilibrium(|_, y| vec![(-g * (y as f64 - ly as f64 / 2.0)).exp(), 0.0, g / 2.0, 1.0])
        .unwrap();
    let cs = D2Q37::CS2.sqrt();
    for _ in 0..10 {
        lat.run(1000, 0).unwrap();
        for name in ["ux", "uy"] {
            let field = lat.moment_field(name).unwrap();
            let fluid =
                (0..lx).flat_map(|x| (D2Q37::HALO..ly - D2Q37::HALO).map(move |y| x * ly + y));
            let max = fluid.map(|s| field[s].abs()).fold(0.0f64, f64::max);
            assert!(
                max < 1e-6 * cs,
                "after {} steps max |{name}| = {max:e}",
                lat.steps_done()
            );
        }
    }
}

/// Steps swept in pairs are bitwise the steps one by one, in both schemes (thermal walls with
/// gravity; periodic x, and walls in x).
#[test]
fn paired_steps_are_bitwise_the_separate_ones() {
    let wall = Some(Wall::Thermal { temperature: 1.2 });
    let periodic = BoundarySpec {
        bottom: wall,
        top: wall,
        ..BoundarySpec::periodic()
    };
    let boxed = BoundarySpec {
        left: wall,
        right: wall,
        ..periodic.clone()
    };
    for (spec, scheme) in [
        (&periodic, Scheme::InPlace),
        (&periodic, Scheme::TwoCopy),
        (&boxed, Scheme::TwoCopy),
    ] {
        let lattice = || {
            let p = D2Q37Params { tau: 0.8, g: 1e-4 };
            let mut lat = Lattice::<D2Q37, CAoSoa<8>, f64>::new(50, 32, p, scheme, spec).unwrap();
            lat.set_equilibrium(|x, y| {
                let (xf, yf) = (x as f64, y as f64);
                vec![
                    1.0 + 0.01 * (0.3 * xf).sin(),
                    0.02 * (0.2 * yf).sin(),
                    0.01 * (0.4 * xf).cos(),
                    1.0 + 0.02 * (0.5 * yf).cos(),
                ]
            })
            .unwrap();
            lat
        };
        lattice_support::assert_pairs_match(lattice, 9, &format!("D2Q37 {scheme:?} {spec:?}"));
    }
}

/// D2Q37's populations travel up to three sites: mirroring the outermost row's cannot make a
/// symmetry plane, so a free-slip wall is refused before any step, with what to use instead.
#[test]
fn a_free_slip_wall_is_refused_for_d2q37() {
    let spec = BoundarySpec {
        bottom: Some(Wall::NO_SLIP),
        top: Some(Wall::FreeSlip),
        ..BoundarySpec::periodic()
    };
    let params = D2Q37Params { tau: 0.8, g: 0.0 };
    let Err(e) = L37::new(8, 16, params, Scheme::TwoCopy, &spec) else {
        panic!("a free-slip wall on D2Q37 was accepted");
    };
    let e = e.to_string();
    assert!(
        e.contains("free-slip") && e.contains("D2Q37") && e.contains("bounce-back"),
        "{e}"
    );
}
