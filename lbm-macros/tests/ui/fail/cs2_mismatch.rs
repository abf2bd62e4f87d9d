// Rule: cs2 agrees with the lattice, sum(w c c) = cs2 I.
// Mistake: cs2 = 1/2 on D2Q9, whose sound speed is cs2 = 1/3.

use lbm_macros::lbm_model;

lbm_model! {
    pub model D2Q9Bgk {
        dim = 2;
        velocities = [(0, 0), (1, 0), (0, 1), (-1, 0), (0, -1), (1, 1), (-1, 1), (-1, -1), (1, -1)];
        weights = [4/9, 1/9, 1/9, 1/9, 1/9, 1/36, 1/36, 1/36, 1/36];
        cs2 = 1/2;
        params { tau: real }
        moments { rho = sum(f); u = sum(f * c) / rho; }
        equilibrium = w * rho * (1 + dot(c, u) / cs2 + dot(c, u)^2 / (2 * cs2^2) - dot(u, u) / (2 * cs2));
        collision = bgk(tau = tau);
    }
}

fn main() {}
