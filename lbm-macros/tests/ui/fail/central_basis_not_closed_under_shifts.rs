// Rule: a central-moment basis spans a space of polynomials closed under the shift c → c − u,
// so that the raw moments come back from the central ones exactly.
// Mistake: cx^4 * cy^4 typed for cx^2 * cy^2. On the D2Q9 velocities they take the same values
// (so the basis is invertible), but the shifted cx^4 cy^4 has cx^3 cy^4 terms no row spans.

use lbm_macros::lbm_model;

lbm_model! {
    pub model D2Q9Cm {
        dim = 2;
        velocities = [(0, 0), (1, 0), (0, 1), (-1, 0), (0, -1), (1, 1), (-1, 1), (-1, -1), (1, -1)];
        weights = [4/9, 1/9, 1/9, 1/9, 1/9, 1/36, 1/36, 1/36, 1/36];
        cs2 = 1/3;
        params { tau: real }
        moments { rho = sum(f); u = sum(f * c) / rho; }
        equilibrium = hermite(order = 2);
        collision = central_mrt(
            basis = [1, cx, cy, cx^2 + cy^2, cx^2 - cy^2, cx * cy, cx^2 * cy, cx * cy^2, cx^4 * cy^4],
            rates = [0, 0, 0, 1, 1 / tau, 1 / tau, 1, 1, 1]
        );
    }
}

fn main() {}
