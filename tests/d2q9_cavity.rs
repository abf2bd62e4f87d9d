//! Lid-driven cavity (D2Q9: BGK, MRT, central-moment MRT, regularized BGK) against Ghia, Ghia & Shin (1982): the centre-line
//! velocity profiles lie within 0.02 (lid units) of the tables at Re = 100 and Re = 400.

use lbm::cavity::{compare, ghia, run_to_steady};
use lbm::models::{
    D2Q9Bgk, D2Q9BgkParams, D2Q9CentralMrt, D2Q9CentralMrtParams, D2Q9Mrt, D2Q9MrtParams,
    D2Q9Regularized, D2Q9RegularizedParams,
};
use lbm::{BoundarySpec, CAoSoa, Lattice, Model};

const LID: f64 = 0.1;

/// `ν = U N / Re`, `τ = 3ν + ½`.
fn tau(re: f64, n: usize) -> f64 {
    3.0 * LID * n as f64 / re + 0.5
}

/// Runs the cavity to steady state and returns the largest deviation from Ghia's table.
fn deviation<M: Model>(params: M::Params, n: usize, re: u32) -> f64 {
    let spec = BoundarySpec::cavity(LID);
    let mut lat =
        Lattice::<M, CAoSoa<8>, f64>::new(n, n, params, lbm::Scheme::InPlace, &spec).unwrap();
    run_to_steady(&mut lat, LID, 1000, 1e-5, 200_000).unwrap();
    let (ux, uy) = (
        lat.moment_field("ux").unwrap(),
        lat.moment_field("uy").unwrap(),
    );
    compare(&ux, &uy, n, LID, &ghia(re).unwrap()).max()
}

/// Lallemand & Luo's rates, with `s_q = 8(2 − s_ν)/(8 − s_ν)` for exact half-way walls.
fn mrt(tau: f64) -> D2Q9MrtParams {
    let s = 1.0 / tau;
    D2Q9MrtParams {
        tau,
        s_e: 1.64,
        s_eps: 1.54,
        s_q: 8.0 * (2.0 - s) / (8.0 - s),
        ax: 0.0,
        ay: 0.0,
    }
}

#[test]
fn bgk_re100() {
    let n = 96;
    let d = deviation::<D2Q9Bgk>(
        D2Q9BgkParams {
            tau: tau(100.0, n),
            ax: 0.0,
            ay: 0.0,
        },
        n,
        100,
    );
    assert!(d < 0.02, "max deviation {d}");
}

#[test]
fn mrt_re100() {
    let n = 96;
    let d = deviation::<D2Q9Mrt>(mrt(tau(100.0, n)), n, 100);
    assert!(d < 0.02, "max deviation {d}");
}

#[test]
fn bgk_re400() {
    let n = 128;
    let d = deviation::<D2Q9Bgk>(
        D2Q9BgkParams {
            tau: tau(400.0, n),
            ax: 0.0,
            ay: 0.0,
        },
        n,
        400,
    );
    assert!(d < 0.02, "max deviation {d}");
}

#[test]
fn mrt_re400() {
    let n = 128;
    let d = deviation::<D2Q9Mrt>(mrt(tau(400.0, n)), n, 400);
    assert!(d < 0.02, "max deviation {d}");
}

#[test]
fn central_mrt_re400() {
    let n = 128;
    let d = deviation::<D2Q9CentralMrt>(D2Q9CentralMrtParams::with_tau(tau(400.0, n)), n, 400);
    assert!(d < 0.02, "max deviation {d}");
}

#[test]
fn regularized_re400() {
    let n = 128;
    let d = deviation::<D2Q9Regularized>(
        D2Q9RegularizedParams {
            tau: tau(400.0, n),
            ax: 0.0,
            ay: 0.0,
        },
        n,
        400,
    );
    assert!(d < 0.02, "max deviation {d}");
}
