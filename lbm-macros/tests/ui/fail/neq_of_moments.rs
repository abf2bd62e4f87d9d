// Rule: neq(φ) takes a polynomial in the velocity c only (a fixed moment of f − f_eq).
// Mistake: the weight depends on the velocity moment.

use lbm_macros::lbm_model;

lbm_model! {
    pub model D2Q9NeqOfU {
        dim = 2;
        velocities = shells![(0, 0), (1, 0), (1, 1)];
        weights = [4/9, 1/9, 1/36];
        cs2 = 1/3;
        params { tau: real }
        moments { rho = sum(f); u = sum(f * c) / rho; }
        equilibrium = hermite(order = 2);
        collision = bgk(tau = tau + neq(dot(c, u))^2);
    }
}

fn main() {}
