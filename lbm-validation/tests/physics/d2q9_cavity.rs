//! Lid-driven cavity (D2Q9: BGK, MRT, central-moment MRT, regularized BGK, each with the
//! parameters of its `lbm::cases::Cavity` constructor) against Ghia, Ghia & Shin (1982): the
//! centre-line velocity profiles lie within 0.02 (lid units) of the tables at Re = 100 and 400.

use lbm::cases::Cavity;
use lbm::cavity::{compare, ghia, run_to_steady};
use lbm::{BoundarySpec, CAoSoa, Lattice, Model};

const LID: f64 = 0.1;

/// Runs `case` (its parameters from the library's constructor) to steady state and returns
/// the largest deviation from Ghia's table.
fn deviation<M: Model>(case: Cavity<M>) -> f64 {
    let (n, spec) = (case.n, BoundarySpec::cavity(case.lid));
    let mut lat =
        Lattice::<M, CAoSoa<8>, f64>::new(n, n, case.params, lbm::Scheme::InPlace, &spec).unwrap();
    run_to_steady(&mut lat, case.lid, 1000, 1e-5, 200_000).unwrap();
    let (ux, uy) = (
        lat.moment_field("ux").unwrap(),
        lat.moment_field("uy").unwrap(),
    );
    compare(&ux, &uy, n, case.lid, &ghia(case.re as u32).unwrap()).max()
}

#[test]
fn bgk_re100() {
    let d = deviation(Cavity::bgk(96, 100.0, LID));
    assert!(d < 0.02, "max deviation {d}");
}

#[test]
fn mrt_re100() {
    let d = deviation(Cavity::mrt(96, 100.0, LID));
    assert!(d < 0.02, "max deviation {d}");
}

#[test]
fn bgk_re400() {
    let d = deviation(Cavity::bgk(128, 400.0, LID));
    assert!(d < 0.02, "max deviation {d}");
}

#[test]
fn mrt_re400() {
    let d = deviation(Cavity::mrt(128, 400.0, LID));
    assert!(d < 0.02, "max deviation {d}");
}

#[test]
fn central_mrt_re400() {
    let d = deviation(Cavity::central_mrt(128, 400.0, LID));
    assert!(d < 0.02, "max deviation {d}");
}

#[test]
fn regularized_re400() {
    let d = deviation(Cavity::regularized(128, 400.0, LID));
    assert!(d < 0.02, "max deviation {d}");
}
