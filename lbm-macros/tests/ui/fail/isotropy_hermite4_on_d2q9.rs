// Rule: the lattice is isotropic up to the order the equilibrium needs (2N for Hermite order N).
// Mistake: a 4th-order Hermite equilibrium on D2Q9, which carries only 2nd order.

use lbm_macros::lbm_model;

lbm_model! {
    pub model D2Q9Bgk {
        dim = 2;
        velocities = [(0, 0), (1, 0), (0, 1), (-1, 0), (0, -1), (1, 1), (-1, 1), (-1, -1), (1, -1)];
        weights = [4/9, 1/9, 1/9, 1/9, 1/9, 1/36, 1/36, 1/36, 1/36];
        cs2 = 1/3;
        params { tau: real }
        moments { rho = sum(f); u = sum(f * c) / rho; }
        equilibrium = hermite(order = 4);
        collision = bgk(tau = tau);
    }
}

fn main() {}
