// Rule: hermite(order = N) is the equilibrium of a density and a velocity moment.
// Mistake: a scalar model asking for it.

use lbm_macros::lbm_model;

lbm_model! {
    pub model D2Q5Scalar {
        dim = 2;
        velocities = shells![(0, 0), (1, 0)];
        weights = [1/3, 1/6];
        cs2 = 1/3;
        params { tau: real }
        moments { phi: scalar = sum(f); }
        equilibrium = hermite(order = 1);
        collision = bgk(tau = tau);
    }
}

fn main() {}
