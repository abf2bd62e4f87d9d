//! A D2Q9 the shipped models don't cover: the second-order equilibrium written out by hand with
//! cs² = 1/3 folded into its coefficients, and TRT given by its two rates ω⁺ and ω⁻ directly.

use lbm::{Model, lbm_model};

lbm_model! {
    /// D2Q9, user-written 2nd-order equilibrium, TRT with explicit ω⁺ and ω⁻.
    pub model D2Q9TrtRates {
        dim = 2;
        velocities = [(0, 0), (1, 0), (0, 1), (-1, 0), (0, -1), (1, 1), (-1, 1), (-1, -1), (1, -1)];
        weights = [4/9, 1/9, 1/9, 1/9, 1/9, 1/36, 1/36, 1/36, 1/36];
        cs2 = 1/3;
        params { omega_p: real, omega_m: real }
        moments { rho = sum(f); u = sum(f * c) / rho; }
        equilibrium = w * rho * (1 + 3 * dot(c, u) + 9/2 * dot(c, u)^2 - 3/2 * dot(u, u));
        collision = trt(omega_plus = omega_p, omega_minus = omega_m);
    }
}

#[test]
fn compiles_and_runs() {
    assert_eq!(D2Q9TrtRates::Q, 9);
    assert_eq!(D2Q9TrtRates::EQUILIBRIUM_ORDER, 2);
    let params = D2Q9TrtRates::params_from_values(&[1.2, 0.8]).expect("two parameters");
    assert_eq!(
        params,
        D2Q9TrtRatesParams {
            omega_p: 1.2,
            omega_m: 0.8
        }
    );
    D2Q9TrtRates::validate(&params).expect("rates in (0, 2)");

    // The equilibrium of (ρ, u) has moments (ρ, u).
    let m = [1.3_f64, 0.05, -0.02];
    let mut feq = [0.0; 9];
    D2Q9TrtRates::equilibrium(&m, &params, &mut feq);
    let mut back = [0.0; 3];
    D2Q9TrtRates::moments(&feq, &params, &mut back);
    for (a, b) in m.iter().zip(&back) {
        assert!(
            (a - b).abs() < 1e-14,
            "moments of f_eq: {back:?} instead of {m:?}"
        );
    }

    // Collide conserves mass and momentum on an off-equilibrium state.
    let mut f = feq;
    for (i, x) in f.iter_mut().enumerate() {
        *x += 0.01 * (i as f64 - 4.0) * if i % 2 == 0 { 1.0 } else { -0.5 };
    }
    let mut before = [0.0; 3];
    D2Q9TrtRates::moments(&f, &params, &mut before);
    D2Q9TrtRates::collide(&mut f, &params);
    let mut after = [0.0; 3];
    D2Q9TrtRates::moments(&f, &params, &mut after);
    for (a, b) in before.iter().zip(&after) {
        assert!(
            (a - b).abs() < 1e-14,
            "collide changed the moments: {before:?} → {after:?}"
        );
    }
    let mass: f64 = f.iter().sum();
    assert!((mass - before[0]).abs() < 1e-14);
}
