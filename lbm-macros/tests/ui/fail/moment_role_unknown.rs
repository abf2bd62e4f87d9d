// Rule: a role is one of density, velocity, temperature, scalar, vector.
// Mistake: a concentration given the role `concentration`.

use lbm_macros::lbm_model;

lbm_model! {
    pub model D2Q5Scalar {
        dim = 2;
        velocities = shells![(0, 0), (1, 0)];
        weights = [1/3, 1/6];
        cs2 = 1/3;
        params { tau: real }
        moments { c0: concentration = sum(f); }
        equilibrium = w * c0;
        collision = bgk(tau = tau);
    }
}

fn main() {}
