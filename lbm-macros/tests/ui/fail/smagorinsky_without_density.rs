// Rule: smagorinsky(…) divides the stress by the density, which the model must declare.
// Mistake: a scalar model asking for it.

use lbm_macros::lbm_model;

lbm_model! {
    pub model D2Q5Les {
        dim = 2;
        velocities = shells![(0, 0), (1, 0)];
        weights = [1/3, 1/6];
        cs2 = 1/3;
        params { tau: real }
        moments { phi: scalar = sum(f); }
        equilibrium = w * phi;
        collision = bgk(tau = smagorinsky(tau = tau, c = 0.1));
    }
}

fn main() {}
