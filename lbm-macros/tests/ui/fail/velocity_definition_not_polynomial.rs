// Rule: each moment's definition, applied to f_eq, is a polynomial in the moments (the
// conservation check evaluates it exactly).
// Mistake: the incompressible equilibrium of He & Luo, whose momentum is u itself, declared
// with the usual `u = sum(f * c) / rho`, which would make the velocity u / rho.
use lbm_macros::lbm_model;

lbm_model! {
    pub model D2Q9Incompressible {
        dim = 2;
        velocities = shells![(0, 0), (1, 0), (1, 1)];
        weights = [4/9, 1/9, 1/36];
        cs2 = 1/3;
        params { tau: real }
        moments { rho = sum(f); u = sum(f * c) / rho; }
        equilibrium = w * (rho + dot(c, u) / cs2 + dot(c, u)^2 / (2 * cs2^2) - norm2(u) / (2 * cs2));
        collision = bgk(tau = tau);
    }
}

fn main() {}
