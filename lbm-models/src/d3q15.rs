//! The smaller 3-D velocity sets a model can be built on: D3Q15 (rest, the six faces and the
//! eight corners; isotropic through fifth order, so it carries the second-order equilibrium of
//! Navier–Stokes) and D3Q7 (rest and faces, `cs² = 1/4`; isotropic through third order, so at
//! most a first-order equilibrium: the lattice of advection–diffusion models, see `scalar`).

use lbm_macros::lbm_model;

lbm_model! {
    /// D3Q15 with the single-relaxation-time (BGK) collision, `ν = cs²(τ − ½)`.
    pub model D3Q15Bgk {
        dim = 3;
        velocities = shells![(0, 0, 0), (1, 0, 0), (1, 1, 1)];
        weights = [2/9, 1/9, 1/72];
        cs2 = 1/3;
        params { tau: real }
        moments { rho = sum(f); u = sum(f * c) / rho; }
        equilibrium = hermite(order = 2);
        collision = bgk(tau = tau);
    }
}

lbm_model! {
    /// D3Q7 with the first-order equilibrium `w ρ (1 + c·u / cs²)` and BGK. It conserves mass
    /// and momentum but its equilibrium has no `ρuu`: its long waves are sound waves of speed
    /// `cs = 1/2`, not Navier–Stokes flow. It is the velocity set of the scalar model
    /// [`crate::D3Q7AdvectionDiffusion`], which conserves its scalar alone.
    pub model D3Q7Bgk {
        dim = 3;
        velocities = shells![(0, 0, 0), (1, 0, 0)];
        weights = [1/4, 1/8];
        cs2 = 1/4;
        params { tau: real }
        moments { rho = sum(f); u = sum(f * c) / rho; }
        equilibrium = hermite(order = 1);
        collision = bgk(tau = tau);
    }
}
