// Rule: the force has dim components.
// Mistake: a 2-D force on a 3-D model.

use lbm_macros::lbm_model;

lbm_model! {
    pub model D3Q19Bgk {
        dim = 3;
        velocities = shells![(0, 0, 0), (1, 0, 0), (1, 1, 0)];
        weights = [1/3, 1/18, 1/36];
        cs2 = 1/3;
        params { tau: real, ax: real, ay: real }
        moments { rho = sum(f); u = sum(f * c) / rho; }
        equilibrium = hermite(order = 2);
        collision = bgk(tau = tau);
        force = (ax, ay);
    }
}

fn main() {}
