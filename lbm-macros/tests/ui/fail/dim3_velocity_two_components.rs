// Rule: in 3-D every velocity has three components.
// Mistake: a D2Q9 velocity list under `dim = 3`.

use lbm_macros::lbm_model;

lbm_model! {
    pub model D3Q19Bgk {
        dim = 3;
        velocities = [(0, 0), (1, 0), (0, 1), (-1, 0), (0, -1), (1, 1), (-1, 1), (-1, -1), (1, -1)];
        weights = [4/9, 1/9, 1/9, 1/9, 1/9, 1/36, 1/36, 1/36, 1/36];
        cs2 = 1/3;
        params { tau: real }
        moments { rho = sum(f); u = sum(f * c) / rho; }
        equilibrium = hermite(order = 2);
        collision = bgk(tau = tau);
    }
}

fn main() {}
