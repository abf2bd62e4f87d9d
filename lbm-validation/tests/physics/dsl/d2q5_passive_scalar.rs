//! A passive scalar on D2Q5 (advection–diffusion): the user's own moment names with roles, the
//! advecting velocity as parameters inside the equilibrium, only the scalar conserved, and its
//! flux declared as a non-conserved vector that relaxes to φu.

use lbm::{Model, Role, lbm_model};

lbm_model! {
    /// D2Q5 advection–diffusion: f_eq = w φ (1 + c·u / cs²), D = cs² (τ − ½).
    pub model D2Q5Scalar {
        dim = 2;
        velocities = shells![(0, 0), (1, 0)];
        weights = [1/3, 1/6];
        cs2 = 1/3;
        params { tau: real, ux: real, uy: real }
        moments { phi: scalar = sum(f); j: vector = sum(f * c); }
        conserved = [phi];
        equilibrium = w * phi * (1 + (cx * ux + cy * uy) / cs2);
        collision = bgk(tau = tau);
    }
}

#[test]
fn compiles_and_runs() {
    assert_eq!(D2Q5Scalar::MOMENT_NAMES, &["phi", "jx", "jy"]);
    assert_eq!(
        D2Q5Scalar::MOMENT_ROLES,
        &[Role::Scalar, Role::Vector(0), Role::Vector(1)]
    );
    let p = D2Q5ScalarParams {
        tau: 0.8,
        ux: 0.05,
        uy: -0.02,
    };
    D2Q5Scalar::validate(&p).expect("τ > ½");
    let mut feq = [0.0_f64; 5];
    D2Q5Scalar::equilibrium(&[2.0, 0.0, 0.0], &p, &mut feq);
    let mut m = [0.0; 3];
    D2Q5Scalar::moments(&feq, &p, &mut m);
    // The equilibrium's flux is φu whatever flux it was asked for.
    for (got, want) in m.iter().zip([2.0, 2.0 * 0.05, -2.0 * 0.02]) {
        assert!((got - want).abs() < 1e-15, "{m:?}");
    }
    // Collide conserves φ and relaxes the flux toward φu at the rate 1/τ.
    let mut f = [0.5_f64, 0.3, 0.2, 0.1, 0.4];
    let mut before = [0.0; 3];
    D2Q5Scalar::moments(&f, &p, &mut before);
    D2Q5Scalar::collide(&mut f, &p);
    let mut after = [0.0; 3];
    D2Q5Scalar::moments(&f, &p, &mut after);
    assert!((after[0] - before[0]).abs() < 1e-15);
    for (a, u) in [(1, p.ux), (2, p.uy)] {
        let want = before[a] + (before[0] * u - before[a]) / p.tau;
        assert!((after[a] - want).abs() < 1e-15, "{before:?} → {after:?}");
    }
}
