//! A model with no run-time parameters at all: D2Q9, the built-in 2nd-order Hermite equilibrium,
//! and BGK with a fixed rate ω = 3/2, so its parameter struct is empty.

use lbm::{Model, lbm_model};

lbm_model! {
    /// D2Q9 BGK with the rate fixed at compile time.
    pub model D2Q9Fixed {
        dim = 2;
        velocities = shells![(0, 0), (1, 0), (1, 1)];
        weights = [4/9, 1/9, 1/36];
        cs2 = 1/3;
        moments { rho = sum(f); u = sum(f * c) / rho; }
        equilibrium = hermite(order = 2);
        collision = bgk(omega = 3/2);
    }
}

#[test]
fn compiles_and_runs() {
    let params = D2Q9FixedParams {};
    assert!(D2Q9Fixed::param_values(&params).is_empty());
    D2Q9Fixed::validate(&params).expect("ω = 3/2 is in (0, 2)");

    let mut f = [0.0_f64; 9];
    D2Q9Fixed::equilibrium(&[1.0, 0.08, 0.03], &params, &mut f);
    f[1] += 0.01;
    f[6] -= 0.004;
    let mut before = [0.0; 3];
    D2Q9Fixed::moments(&f, &params, &mut before);

    // Four sites of one cluster, the CSoA / CAoSoA unit, each a copy of `f`.
    let mut cluster = [[0.0_f64; 4]; 9];
    for (lanes, x) in cluster.iter_mut().zip(&f) {
        *lanes = [*x; 4];
    }
    D2Q9Fixed::collide(&mut f, &params);
    D2Q9Fixed::collide_cluster(&mut cluster, &params, None);

    let mut after = [0.0; 3];
    D2Q9Fixed::moments(&f, &params, &mut after);
    for (a, b) in before.iter().zip(&after) {
        assert!(
            (a - b).abs() < 1e-14,
            "collide changed the moments: {before:?} → {after:?}"
        );
    }
    for (lanes, x) in cluster.iter().zip(&f) {
        for y in lanes {
            assert!(
                (x - y).abs() < 1e-15,
                "cluster lane {y} differs from the site {x}"
            );
        }
    }
}
