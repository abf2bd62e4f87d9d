//! D2Q5, which no shipped model uses: isotropic only through 3rd order, so it carries a
//! first-order equilibrium; BGK given by its rate ω.

use lbm::{Model, lbm_model};

lbm_model! {
    /// D2Q5 with a linear equilibrium and BGK collision.
    pub model D2Q5 {
        dim = 2;
        velocities = shells![(0, 0), (1, 0)];
        weights = [1/3, 1/6];
        cs2 = 1/3;
        params { omega: real }
        moments { rho = sum(f); u = sum(f * c) / rho; }
        equilibrium = w * rho * (1 + dot(c, u) / cs2);
        collision = bgk(omega = omega);
    }
}

#[test]
fn compiles_and_runs() {
    assert_eq!(D2Q5::Q, 5);
    assert_eq!(
        D2Q5::VELOCITIES,
        &[[0, 0, 0], [1, 0, 0], [0, 1, 0], [-1, 0, 0], [0, -1, 0]]
    );
    assert_eq!(D2Q5::OPPOSITE, &[0, 3, 4, 1, 2]);
    assert_eq!(D2Q5::EQUILIBRIUM_ORDER, 1);
    assert_eq!(D2Q5::ISOTROPY_ORDER, 3);
    let params = D2Q5Params { omega: 1.5 };
    D2Q5::validate(&params).expect("ω in (0, 2)");
    assert!(D2Q5::validate(&D2Q5Params { omega: 2.5 }).is_err());

    let mut feq = [0.0_f64; 5];
    D2Q5::equilibrium(&[0.9, 0.1, -0.05], &params, &mut feq);
    let mut f = feq;
    f[1] += 0.02;
    f[3] -= 0.01;
    f[0] -= 0.01;
    let mut before = [0.0; 3];
    D2Q5::moments(&f, &params, &mut before);
    D2Q5::collide(&mut f, &params);
    let mut after = [0.0; 3];
    D2Q5::moments(&f, &params, &mut after);
    for (a, b) in before.iter().zip(&after) {
        assert!(
            (a - b).abs() < 1e-14,
            "collide changed the moments: {before:?} → {after:?}"
        );
    }
    let mass: f64 = f.iter().sum();
    assert!((mass - 0.9).abs() < 1e-14, "mass {mass}");
}
