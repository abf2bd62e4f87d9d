//! A relaxation rate that the user writes as an expression of the moments and of the
//! non-equilibrium stress: `neq(φ) = Σ φ(c) (f − f_eq)` and `sqrt`, here a Smagorinsky-like
//! time `τ = τ₀ + k |Π| / ρ` with `|Π| = √(Σ_αβ Π_αβ²)`, checked against a hand computation.

use lbm::{Model, lbm_model};

lbm_model! {
    pub model D2Q9StressRate {
        dim = 2;
        velocities = shells![(0, 0), (1, 0), (1, 1)];
        weights = [4/9, 1/9, 1/36];
        cs2 = 1/3;
        params { tau: real, k: real }
        moments { rho = sum(f); u = sum(f * c) / rho; }
        equilibrium = hermite(order = 2);
        collision = bgk(tau = tau + k * sqrt(neq(cx * cx)^2 + 2 * neq(cx * cy)^2 + neq(cy * cy)^2) / rho);
    }
}

#[test]
fn compiles_and_runs() {
    let p = D2Q9StressRateParams { tau: 0.7, k: 3.0 };
    D2Q9StressRate::validate(&p).expect("τ₀ = 0.7 at rest");
    assert!(D2Q9StressRate::validate(&D2Q9StressRateParams { tau: 0.4, k: 3.0 }).is_err());
    let mut f = [0.0_f64; 9];
    D2Q9StressRate::equilibrium(&[1.1, 0.04, -0.02], &p, &mut f);
    f[5] += 0.003;
    f[7] += 0.003;
    f[1] -= 0.002;
    f[3] -= 0.002;
    // By hand: moments, equilibrium, Π^neq, τ, then BGK.
    let mut m = [0.0; 3];
    D2Q9StressRate::moments(&f, &p, &mut m);
    let mut feq = [0.0; 9];
    D2Q9StressRate::equilibrium(&m, &p, &mut feq);
    let pi = |a: usize, b: usize| -> f64 {
        (0..9)
            .map(|i| {
                let c = D2Q9StressRate::VELOCITIES[i];
                f64::from(c[a] * c[b]) * (f[i] - feq[i])
            })
            .sum()
    };
    let norm = (pi(0, 0).powi(2) + 2.0 * pi(0, 1).powi(2) + pi(1, 1).powi(2)).sqrt();
    assert!(norm > 1e-3, "a stressed state: |Π| = {norm}");
    let tau = p.tau + p.k * norm / m[0];
    let want: Vec<f64> = (0..9).map(|i| f[i] + (feq[i] - f[i]) / tau).collect();
    D2Q9StressRate::collide(&mut f, &p);
    for (a, b) in f.iter().zip(&want) {
        assert!((a - b).abs() < 1e-15, "{f:?} vs {want:?}");
    }
}
