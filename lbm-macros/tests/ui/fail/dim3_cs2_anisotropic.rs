// Rule: Σ w c c = cs2·I along every axis.
// Mistake: D3Q19 with the z faces weighted as the edges (the rest weight making up the sum), so Σ w c_z² = 5/18 differs from Σ w c_x² = 1/3.

use lbm_macros::lbm_model;

lbm_model! {
    pub model D3Q19Bgk {
        dim = 3;
        velocities = [(0, 0, 0), (1, 0, 0), (-1, 0, 0), (0, 1, 0), (0, -1, 0), (0, 0, 1), (0, 0, -1),
                      (1, 1, 0), (1, -1, 0), (-1, 1, 0), (-1, -1, 0), (0, 1, 1), (0, 1, -1), (0, -1, 1), (0, -1, -1),
                      (1, 0, 1), (-1, 0, 1), (1, 0, -1), (-1, 0, -1)];
        weights = [7/18, 1/18, 1/18, 1/18, 1/18, 1/36, 1/36,
                   1/36, 1/36, 1/36, 1/36, 1/36, 1/36, 1/36, 1/36, 1/36, 1/36, 1/36, 1/36];
        cs2 = 1/3;
        params { tau: real }
        moments { rho = sum(f); u = sum(f * c) / rho; }
        equilibrium = hermite(order = 2);
        collision = bgk(tau = tau);
    }
}

fn main() {}
