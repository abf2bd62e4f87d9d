// Rule: an equilibrium of Hermite order N needs isotropy through order 2N.
// Mistake: a third-order equilibrium on D3Q19 (isotropic through fifth order).

use lbm_macros::lbm_model;

lbm_model! {
    pub model D3Q19Bgk {
        dim = 3;
        velocities = shells![(0, 0, 0), (1, 0, 0), (1, 1, 0)];
        weights = [1/3, 1/18, 1/36];
        cs2 = 1/3;
        params { tau: real }
        moments { rho = sum(f); u = sum(f * c) / rho; }
        equilibrium = hermite(order = 3);
        collision = bgk(tau = tau);
    }
}

fn main() {}
