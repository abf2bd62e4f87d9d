// Rule: the collision is bgk, trt or mrt.
// Mistake: `srt`, another name for BGK, which the DSL does not know.

use lbm_macros::lbm_model;

lbm_model! {
    pub model D2Q9Bgk {
        dim = 2;
        velocities = [(0, 0), (1, 0), (0, 1), (-1, 0), (0, -1), (1, 1), (-1, 1), (-1, -1), (1, -1)];
        weights = [4/9, 1/9, 1/9, 1/9, 1/9, 1/36, 1/36, 1/36, 1/36];
        cs2 = 1/3;
        params { tau: real }
        moments { rho = sum(f); u = sum(f * c) / rho; }
        equilibrium = w * rho * (1 + dot(c, u) / cs2 + dot(c, u)^2 / (2 * cs2^2) - dot(u, u) / (2 * cs2));
        collision = srt(tau = tau);
    }
}

fn main() {}
