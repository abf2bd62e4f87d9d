// Rule: the MRT basis is invertible, in 3-D too.
// Mistake: the d'Humières D3Q19 basis with m_z written as m_x.

use lbm_macros::lbm_model;

lbm_model! {
    pub model D3Q19Bgk {
        dim = 3;
        velocities = shells![(0, 0, 0), (1, 0, 0), (1, 1, 0)];
        weights = [1/3, 1/18, 1/36];
        cs2 = 1/3;
        params { tau: real }
        moments { rho = sum(f); u = sum(f * c) / rho; }
        equilibrium = hermite(order = 2);
        collision = mrt(
            basis = [
                1, 19 * dot(c, c) - 30, (21 * dot(c, c)^2 - 53 * dot(c, c) + 24) / 2,
                cx, (5 * dot(c, c) - 9) * cx, cy, (5 * dot(c, c) - 9) * cy, cz, (5 * dot(c, c) - 9) * cz,
                3 * cx^2 - dot(c, c), (3 * dot(c, c) - 5) * (3 * cx^2 - dot(c, c)),
                cy^2 - cz^2, (3 * dot(c, c) - 5) * (cy^2 - cz^2),
                cx * cy, cy * cz, cx * cz,
                (cy^2 - cz^2) * cx, (cz^2 - cx^2) * cy, (cy^2 - cz^2) * cx
            ],
            rates = [0, 1, 1, 0, 1, 0, 1, 0, 1, 1 / tau, 1, 1 / tau, 1, 1 / tau, 1 / tau, 1 / tau, 1, 1, 1]
        );
    }
}

fn main() {}
