// Rule: the MRT basis has Q rows.
// Mistake: the p_xy row left out (8 rows for Q = 9).

use lbm_macros::lbm_model;

lbm_model! {
    pub model D2Q9Mrt {
        dim = 2;
        velocities = [(0, 0), (1, 0), (0, 1), (-1, 0), (0, -1), (1, 1), (-1, 1), (-1, -1), (1, -1)];
        weights = [4/9, 1/9, 1/9, 1/9, 1/9, 1/36, 1/36, 1/36, 1/36];
        cs2 = 1/3;
        params { tau: real, s_e: real, s_eps: real, s_q: real }
        moments { rho = sum(f); u = sum(f * c) / rho; }
        equilibrium = hermite(order = 2);
        collision = mrt(
            basis = [
                1,
                -4 + 3 * dot(c, c),
                4 - 21/2 * dot(c, c) + 9/2 * dot(c, c)^2,
                cx,
                (-5 + 3 * dot(c, c)) * cx,
                cy,
                (-5 + 3 * dot(c, c)) * cy,
                cx^2 - cy^2
            ],
            rates = [0, s_e, s_eps, 0, s_q, 0, s_q, 1 / tau, 1 / tau]
        );
    }
}

fn main() {}
