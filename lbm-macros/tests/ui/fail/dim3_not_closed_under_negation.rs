// Rule: the velocity set is closed under negation, in 3-D too.
// Mistake: a D3Q15 list with (-1, -1, -1) left out.

use lbm_macros::lbm_model;

lbm_model! {
    pub model D3Q15Bgk {
        dim = 3;
        velocities = [(0, 0, 0), (1, 0, 0), (-1, 0, 0), (0, 1, 0), (0, -1, 0), (0, 0, 1), (0, 0, -1),
                      (1, 1, 1), (-1, 1, 1), (1, -1, 1), (1, 1, -1), (-1, -1, 1), (-1, 1, -1), (1, -1, -1)];
        weights = [2/9, 1/9, 1/9, 1/9, 1/9, 1/9, 1/9, 1/72, 1/72, 1/72, 1/72, 1/72, 1/72, 1/72];
        cs2 = 1/3;
        params { tau: real }
        moments { rho = sum(f); u = sum(f * c) / rho; }
        equilibrium = hermite(order = 2);
        collision = bgk(tau = tau);
    }
}

fn main() {}
