// Rule: the regularized collision keeps only the second-order part of f − f_eq, so it needs a
// flow (a velocity moment).
// Mistake: a passive scalar regularized: its diffusive flux is first order and would be lost.

use lbm_macros::lbm_model;

lbm_model! {
    pub model D2Q5Scalar {
        dim = 2;
        velocities = [(0, 0), (1, 0), (0, 1), (-1, 0), (0, -1)];
        weights = [1/3, 1/6, 1/6, 1/6, 1/6];
        cs2 = 1/3;
        params { tau: real, ux: field, uy: field }
        moments { phi: scalar = sum(f); }
        equilibrium = w * phi * (1 + (cx * ux + cy * uy) / cs2);
        collision = regularized(tau = tau);
    }
}

fn main() {}
