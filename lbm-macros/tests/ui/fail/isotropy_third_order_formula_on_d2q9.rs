// Rule: the lattice is isotropic up to the order the equilibrium needs (2N for order N).
// Mistake: the third-order term (c·u)³/(6cs⁶) added by hand to the D2Q9 equilibrium without
// its partner −(c·u)|u|²/(2cs⁴): what remains has u_x³ on the axis velocities, which alias on
// D2Q9 (c_x³ = c_x). With both terms the u_x³ parts cancel and the equilibrium is accepted: the
// u_x² u_y terms left are the lattice's own Hermite polynomials (see ui/pass).

use lbm_macros::lbm_model;

lbm_model! {
    pub model D2Q9Bgk {
        dim = 2;
        velocities = [(0, 0), (1, 0), (0, 1), (-1, 0), (0, -1), (1, 1), (-1, 1), (-1, -1), (1, -1)];
        weights = [4/9, 1/9, 1/9, 1/9, 1/9, 1/36, 1/36, 1/36, 1/36];
        cs2 = 1/3;
        params { tau: real }
        moments { rho = sum(f); u = sum(f * c) / rho; }
        equilibrium = w * rho * (1 + dot(c, u) / cs2 + dot(c, u)^2 / (2 * cs2^2) - dot(u, u) / (2 * cs2)
            + dot(c, u)^3 / (6 * cs2^3));
        collision = bgk(tau = tau);
    }
}

fn main() {}
