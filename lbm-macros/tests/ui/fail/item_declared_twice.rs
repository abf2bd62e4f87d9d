// Rule: each item is declared once.
// Mistake: a second `params` block for the force instead of one block.

use lbm_macros::lbm_model;

lbm_model! {
    /// D2Q9 BGK driven by a body force (ax, ay).
    pub model D2Q9Bgk {
        dim = 2;
        velocities = [(0, 0), (1, 0), (0, 1), (-1, 0), (0, -1), (1, 1), (-1, 1), (-1, -1), (1, -1)];
        weights = [4/9, 1/9, 1/9, 1/9, 1/9, 1/36, 1/36, 1/36, 1/36];
        cs2 = 1/3;
        params { tau: real }
        params { ax: real, ay: real }
        moments { rho = sum(f); u = sum(f * c) / rho; }
        equilibrium = w * rho * (1 + dot(c, u) / cs2 + dot(c, u)^2 / (2 * cs2^2) - dot(u, u) / (2 * cs2));
        collision = bgk(tau = tau);
        force = (ax, ay);
    }
}

fn main() {}
