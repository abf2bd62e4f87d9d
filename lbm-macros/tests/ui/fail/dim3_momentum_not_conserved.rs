// Rule: the equilibrium conserves every component of the momentum.
// Mistake: a first-order term switched off on every link with c_z ≠ 0.

use lbm_macros::lbm_model;

lbm_model! {
    pub model D3Q19Bgk {
        dim = 3;
        velocities = shells![(0, 0, 0), (1, 0, 0), (1, 1, 0)];
        weights = [1/3, 1/18, 1/36];
        cs2 = 1/3;
        params { tau: real }
        moments { rho = sum(f); u = sum(f * c) / rho; }
        equilibrium = w * rho * (1 + dot(c, u) * (1 - cz^2) / cs2);
        collision = bgk(tau = tau);
    }
}

fn main() {}
