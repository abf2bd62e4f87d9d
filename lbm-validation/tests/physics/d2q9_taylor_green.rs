//! Taylor–Green vortex (D2Q9 BGK, periodic): the measured viscosity matches `cs² (τ − ½)`,
//! and the velocity error falls at second order when the resolution doubles.
//!
//! `u = −U cos(kx) sin(ky)`, `v = U sin(kx) cos(ky)`, `ρ = 1 − U²/(4 cs²) (cos 2kx + cos 2ky)`,
//! decaying as `exp(−2 ν k² t)` with `k = 2π/N`.

use std::f64::consts::PI;

use lbm::models::{D2Q9Bgk, D2Q9BgkParams};
use lbm::{BoundarySpec, CAoSoa, Lattice, Scheme};

const TAU: f64 = 0.8;
const NU: f64 = (TAU - 0.5) / 3.0;

fn vortex(n: usize, u0: f64) -> Lattice<D2Q9Bgk, CAoSoa<8>, f64> {
    let p = D2Q9BgkParams {
        tau: TAU,
        ax: 0.0,
        ay: 0.0,
    };
    let mut lat = Lattice::new(n, n, p, Scheme::InPlace, &BoundarySpec::periodic()).unwrap();
    let k = 2.0 * PI / n as f64;
    lat.set_equilibrium(|x, y| {
        let (kx, ky) = (k * x as f64, k * y as f64);
        vec![
            1.0 - 3.0 * u0 * u0 / 4.0 * ((2.0 * kx).cos() + (2.0 * ky).cos()),
            -u0 * kx.cos() * ky.sin(),
            u0 * kx.sin() * ky.cos(),
        ]
    })
    .unwrap();
    lat
}

/// The shape of `ux`: `−cos(kx) sin(ky)` on the lattice.
fn mode(n: usize) -> Vec<f64> {
    let k = 2.0 * PI / n as f64;
    (0..n * n)
        .map(|i| -(k * (i / n) as f64).cos() * (k * (i % n) as f64).sin())
        .collect()
}

/// Amplitude of the vortex: the projection of `ux` on its mode.
fn amplitude(lat: &Lattice<D2Q9Bgk, CAoSoa<8>, f64>, shape: &[f64]) -> f64 {
    let ux = lat.moment_field("ux").unwrap();
    let num: f64 = ux.iter().zip(shape).map(|(u, s)| u * s).sum();
    num / shape.iter().map(|s| s * s).sum::<f64>()
}

#[test]
fn viscosity_within_one_percent() {
    let n = 64;
    let k = 2.0 * PI / n as f64;
    let shape = mode(n);
    let mut lat = vortex(n, 0.01);
    lat.run(100, 0).unwrap();
    let a1 = amplitude(&lat, &shape);
    let span = 500;
    lat.run(span, 0).unwrap();
    let a2 = amplitude(&lat, &shape);
    let nu = (a1 / a2).ln() / (2.0 * k * k * span as f64);
    assert!(
        (nu / NU - 1.0).abs() < 0.01,
        "measured ν = {nu}, expected {NU}"
    );
}

/// Relative L2 error of `ux` against the decaying analytic vortex after `N²/8` steps, with
/// diffusive scaling (`U ∝ 1/N`, so the Mach number falls with the lattice spacing).
fn error_at(n: usize) -> f64 {
    let u0 = 0.04 * 16.0 / n as f64;
    let k = 2.0 * PI / n as f64;
    let steps = (n * n / 8) as u64;
    let mut lat = vortex(n, u0);
    lat.run(steps, 0).unwrap();
    // The stored state after `steps` steps streams into the populations of time `steps + 1`.
    let exact = u0 * (-2.0 * NU * k * k * (steps + 1) as f64).exp();
    let ux = lat.moment_field("ux").unwrap();
    let (mut num, mut den) = (0.0, 0.0);
    for (u, s) in ux.iter().zip(mode(n)) {
        num += (u - exact * s).powi(2);
        den += (exact * s).powi(2);
    }
    (num / den).sqrt()
}

#[test]
fn second_order_convergence() {
    let e: Vec<f64> = [16, 32, 64].into_iter().map(error_at).collect();
    for w in e.windows(2) {
        let order = (w[0] / w[1]).log2();
        assert!(order > 1.7, "errors {e:?}: observed order {order:.2}");
    }
}
