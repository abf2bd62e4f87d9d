// Rule: `cz` exists only in 3-D.
// Mistake: an MRT basis row of a 2-D model written with `cz`.

use lbm_macros::lbm_model;

lbm_model! {
    pub model D2Q9Mrt {
        dim = 2;
        velocities = [(0, 0), (1, 0), (0, 1), (-1, 0), (0, -1), (1, 1), (-1, 1), (-1, -1), (1, -1)];
        weights = [4/9, 1/9, 1/9, 1/9, 1/9, 1/36, 1/36, 1/36, 1/36];
        cs2 = 1/3;
        params { tau: real }
        moments { rho = sum(f); u = sum(f * c) / rho; }
        equilibrium = hermite(order = 2);
        collision = mrt(
            basis = [1, dot(c, c), dot(c, c)^2, cx, cx * dot(c, c), cy, cy * dot(c, c), cx^2 - cz^2, cx * cy],
            rates = [0, 1, 1, 0, 1, 0, 1, 1 / tau, 1 / tau]
        );
    }
}

fn main() {}
