// Rule: the equilibrium conserves every moment declared conserved, whatever its role.
// Mistake: a stray `+ ux` in the advection term, so that Σ f_eq = φ (1 + ux).

use lbm_macros::lbm_model;

lbm_model! {
    pub model D2Q5Scalar {
        dim = 2;
        velocities = shells![(0, 0), (1, 0)];
        weights = [1/3, 1/6];
        cs2 = 1/3;
        params { tau: real, ux: real, uy: real }
        moments { phi: scalar = sum(f); }
        equilibrium = w * phi * (1 + (cx * ux + cy * uy) / cs2 + ux);
        collision = bgk(tau = tau);
    }
}

fn main() {}
