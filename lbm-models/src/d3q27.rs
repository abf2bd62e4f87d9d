//! D3Q27: the tensor product of three D1Q3 lattices, isotropic through fifth order like D3Q19,
//! with the second-order Hermite equilibrium (the highest order its isotropy supports in full:
//! a third-order equilibrium needs sixth-order isotropy, Shan, Yuan & Chen 2006) and the BGK
//! collision. It is the velocity set of the cumulant and central-moment methods.

use lbm_macros::lbm_model;

lbm_model! {
    /// D3Q27 with the single-relaxation-time (BGK) collision, `ν = cs²(τ − ½)`.
    pub model D3Q27Bgk {
        dim = 3;
        velocities = shells![(0, 0, 0), (1, 0, 0), (1, 1, 0), (1, 1, 1)];
        weights = [8/27, 2/27, 1/54, 1/216];
        cs2 = 1/3;
        params { tau: real, ax: real, ay: real, az: real }
        moments { rho = sum(f); u = sum(f * c) / rho; }
        equilibrium = hermite(order = 2);
        collision = bgk(tau = tau);
        force = (ax, ay, az);
    }
}
