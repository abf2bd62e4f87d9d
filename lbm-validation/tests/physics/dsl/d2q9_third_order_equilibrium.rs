//! A D2Q9 equilibrium with the third-order Hermite terms the lattice carries: with both
//! third-order terms the u_x³ parts cancel on the axis velocities, and what is left (u_x² u_y,
//! u_x u_y²) lies in the lattice's own Hermite space, so the tensor-product quadrature gives
//! the Maxwellian's third moments exactly: Σ f c_x² c_y = ρ (cs² u_y + u_x² u_y).

use lbm::{Model, lbm_model};

lbm_model! {
    /// D2Q9 BGK with the equilibrium extended by its supported third-order terms.
    pub model D2Q9Third {
        dim = 2;
        velocities = [(0, 0), (1, 0), (0, 1), (-1, 0), (0, -1), (1, 1), (-1, 1), (-1, -1), (1, -1)];
        weights = [4/9, 1/9, 1/9, 1/9, 1/9, 1/36, 1/36, 1/36, 1/36];
        cs2 = 1/3;
        params { tau: real }
        moments { rho = sum(f); u = sum(f * c) / rho; }
        equilibrium = w * rho * (1 + dot(c, u) / cs2 + dot(c, u)^2 / (2 * cs2^2) - dot(u, u) / (2 * cs2)
            + dot(c, u)^3 / (6 * cs2^3) - dot(c, u) * dot(u, u) / (2 * cs2^2));
        collision = bgk(tau = tau);
    }
}

#[test]
fn compiles_and_runs() {
    // Isotropic through the second order only: the Mach limits of a second-order model hold.
    assert_eq!(D2Q9Third::EQUILIBRIUM_ORDER, 2);
    let (rho, ux, uy) = (1.2_f64, 0.08, -0.05);
    let p = D2Q9ThirdParams { tau: 0.8 };
    let mut feq = [0.0; 9];
    D2Q9Third::equilibrium(&[rho, ux, uy], &p, &mut feq);
    let moment = |a: i32, b: i32| -> f64 {
        D2Q9Third::VELOCITIES
            .iter()
            .zip(&feq)
            .map(|(c, f)| f * f64::from(c[0].pow(a as u32) * c[1].pow(b as u32)))
            .sum()
    };
    let cs2 = 1.0 / 3.0;
    for (got, want) in [
        (moment(2, 1), rho * (cs2 * uy + ux * ux * uy)),
        (moment(1, 2), rho * (cs2 * ux + ux * uy * uy)),
        (moment(1, 1), rho * ux * uy),
    ] {
        assert!((got - want).abs() < 1e-15, "{got} instead of {want}");
    }
}
