// Rule: `conserved` lists moments. Mistake: a parameter listed among them.

use lbm_macros::lbm_model;

lbm_model! {
    pub model D2Q5Scalar {
        dim = 2;
        velocities = shells![(0, 0), (1, 0)];
        weights = [1/3, 1/6];
        cs2 = 1/3;
        params { tau: real, ux: real, uy: real }
        moments { phi: scalar = sum(f); }
        conserved = [phi, ux];
        equilibrium = w * phi * (1 + (cx * ux + cy * uy) / cs2);
        collision = bgk(tau = tau);
    }
}

fn main() {}
