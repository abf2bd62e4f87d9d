//! The moment-space collisions declared with `central_mrt(…)` and `regularized(…)` (D2Q9;
//! the 3-D ones are in `d3_lattice.rs`, their cavity runs in `d2q9_cavity.rs`): the
//! Taylor–Green vortex decays with `ν = cs²(τ − ½)` within 1 %, and the central-moment collision
//! runs a double periodic shear layer at `τ − ½ = 5·10⁻⁴` (Re = 7.7·10⁴ on 128²) with its kinetic
//! energy bounded, where BGK diverges.
//!
//! Taylor–Green: `u = U(−cos(kx) sin(ky), sin(kx) cos(ky))` decays as `exp(−2νk²t)`,
//! `k = 2π/N`; its amplitude is the velocity's projection on the mode.

use std::f64::consts::PI;

use lbm::models::{
    D2Q9Bgk, D2Q9BgkParams, D2Q9CentralMrt, D2Q9CentralMrtParams, D2Q9Regularized,
    D2Q9RegularizedParams,
};
use lbm::{BoundarySpec, CAoSoa, Lattice, Model, Scheme};

const N: usize = 64;

/// A periodic `N × N` lattice of `M` at the velocity `v(x, y)` (ρ = 1 + the vortex's pressure).
fn lattice<M: Model>(
    p: M::Params,
    v: impl Fn(f64, f64) -> [f64; 2] + Sync,
) -> Lattice<M, CAoSoa<8>, f64> {
    let mut lat = Lattice::new(N, N, p, Scheme::InPlace, &BoundarySpec::periodic()).unwrap();
    lat.set_equilibrium(|x, y| {
        let [ux, uy] = v(x as f64, y as f64);
        vec![1.0, ux, uy]
    })
    .unwrap();
    lat
}

/// The projection of `ux` on `−cos(kx) sin(ky)`.
fn amplitude<M: Model>(lat: &Lattice<M, CAoSoa<8>, f64>) -> f64 {
    let ux = lat.moment_field("ux").unwrap();
    let k = 2.0 * PI / N as f64;
    let shape = |i: usize| -(k * (i / N) as f64).cos() * (k * (i % N) as f64).sin();
    let num: f64 = ux.iter().enumerate().map(|(i, u)| u * shape(i)).sum();
    num / (0..N * N).map(|i| shape(i) * shape(i)).sum::<f64>()
}

/// The viscosity from the vortex's decay over 600 steps.
fn viscosity<M: Model>(p: M::Params) -> f64 {
    let (u0, k) = (0.01, 2.0 * PI / N as f64);
    let mut lat = lattice::<M>(p, |x, y| {
        [
            -u0 * (k * x).cos() * (k * y).sin(),
            u0 * (k * x).sin() * (k * y).cos(),
        ]
    });
    lat.run(100, 0).unwrap();
    let a1 = amplitude(&lat);
    lat.run(600, 0).unwrap();
    let a2 = amplitude(&lat);
    (a1 / a2).ln() / (2.0 * k * k * 600.0)
}

fn assert_viscosity<M: Model>(p: M::Params, tau: f64) {
    let want = (tau - 0.5) / 3.0;
    let nu = viscosity::<M>(p);
    let err = nu / want - 1.0;
    println!("{} τ = {tau}: ν = {nu:.6} ({:+.3} %)", M::NAME, 100.0 * err);
    assert!(
        err.abs() < 0.01,
        "{}: ν = {nu} against cs²(τ − ½) = {want}",
        M::NAME
    );
}

#[test]
fn taylor_green_decays_with_the_viscosity_of_tau() {
    for tau in [0.55, 0.6, 0.9] {
        assert_viscosity::<D2Q9CentralMrt>(D2Q9CentralMrtParams::with_tau(tau), tau);
        assert_viscosity::<D2Q9Regularized>(
            D2Q9RegularizedParams {
                tau,
                ax: 0.0,
                ay: 0.0,
            },
            tau,
        );
    }
}

/// The double periodic shear layer of Minion & Brown (1997): `u_x = U tanh(80(y − ¼))` below
/// the middle, `U tanh(80(¾ − y))` above, `u_y = 0.05 U sin(2π(x + ¼))`, lengths in units of
/// the side. At `τ = 0.5005` on 128² BGK's run diverges (the runtime reports it); the
/// central-moment collision's stays bounded and loses kinetic energy.
#[test]
fn central_moments_run_the_shear_layer_where_bgk_diverges() {
    let (n, u0, tau) = (128, 0.1, 0.5005);
    let layer = move |x: usize, y: usize| {
        let (x, y) = (x as f64 / n as f64, y as f64 / n as f64);
        let ux = if y <= 0.5 {
            (80.0 * (y - 0.25)).tanh()
        } else {
            (80.0 * (0.75 - y)).tanh()
        };
        vec![1.0, u0 * ux, 0.05 * u0 * (2.0 * PI * (x + 0.25)).sin()]
    };
    fn start<M: Model>(
        p: M::Params,
        n: usize,
        layer: impl Fn(usize, usize) -> Vec<f64> + Sync,
    ) -> Lattice<M, CAoSoa<8>, f64> {
        let mut lat = Lattice::new(n, n, p, Scheme::InPlace, &BoundarySpec::periodic()).unwrap();
        lat.set_equilibrium(layer).unwrap();
        lat
    }
    let mut bgk = start::<D2Q9Bgk>(
        D2Q9BgkParams {
            tau,
            ax: 0.0,
            ay: 0.0,
        },
        n,
        layer,
    );
    let err = bgk.run(4000, 0).expect_err("BGK at τ = 0.5005 diverges");
    assert!(err.to_string().contains("diverged"), "{err}");

    let mut cm = start::<D2Q9CentralMrt>(D2Q9CentralMrtParams::with_tau(tau), n, layer);
    let energy = |lat: &Lattice<D2Q9CentralMrt, CAoSoa<8>, f64>| {
        let (ux, uy) = (
            lat.moment_field("ux").unwrap(),
            lat.moment_field("uy").unwrap(),
        );
        ux.iter().zip(&uy).map(|(a, b)| a * a + b * b).sum::<f64>() / 2.0
    };
    let e0 = energy(&cm);
    for _ in 0..8 {
        cm.run(500, 0).unwrap();
        let e = energy(&cm);
        println!("E/E0 = {:.6}", e / e0);
        assert!(
            e.is_finite() && e <= e0 * 1.001,
            "kinetic energy {e} from {e0}"
        );
    }
}
