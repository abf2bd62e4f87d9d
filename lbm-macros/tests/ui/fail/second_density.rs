// Rule: a model has at most one density, one velocity and one temperature (the runtime finds
// them by role). Mistake: a second species declared as a density.

use lbm_macros::lbm_model;

lbm_model! {
    pub model D2Q5TwoDensities {
        dim = 2;
        velocities = shells![(0, 0), (1, 0)];
        weights = [1/3, 1/6];
        cs2 = 1/3;
        params { tau: real }
        moments { rho = sum(f); n: density = sum(f * w); }
        equilibrium = w * rho;
        collision = bgk(tau = tau);
    }
}

fn main() {}
