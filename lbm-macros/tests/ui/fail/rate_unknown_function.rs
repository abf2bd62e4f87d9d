// Rule: a relaxation rate may use sqrt, neq(φ) and smagorinsky(…) besides arithmetic.
// Mistake: an exponential.

use lbm_macros::lbm_model;

lbm_model! {
    pub model D2Q9ExpRate {
        dim = 2;
        velocities = shells![(0, 0), (1, 0), (1, 1)];
        weights = [4/9, 1/9, 1/36];
        cs2 = 1/3;
        params { tau: real }
        moments { rho = sum(f); u = sum(f * c) / rho; }
        equilibrium = hermite(order = 2);
        collision = bgk(tau = tau * exp(neq(cx * cy)));
    }
}

fn main() {}
