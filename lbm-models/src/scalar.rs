//! Passive scalars carried by a flow: the advection–diffusion models of a concentration or a
//! temperature `φ`,
//!
//! ```text
//! ∂t φ + ∇·(φ u) = ∇·(D ∇φ),        D = cs² (τ − ½),
//! ```
//!
//! with the linear equilibrium `f_eq_i = w_i φ (1 + c_i·u / cs²)` (Krüger et al. 2017,
//! *The Lattice Boltzmann Method*, §8.3) on the smallest lattices that carry it, D2Q5 and D3Q7.
//! Only `φ` is conserved; its flux `Σ f c` relaxes toward `φ u`. The velocity `u` is a
//! `field`: uniform (its value in the parameters), as in the `advection-diffusion` case, or
//! given per site — by the user ([`lbm::Lattice::set_field`]) or by a flow lattice coupled to
//! this one ([`lbm::Coupled`], the temperature of the `rayleigh-benard` case).
//!
//! The first-order equilibrium has no `φ u u` in its second moment, so the Chapman–Enskog
//! expansion gives the anisotropic diffusivity `D_αβ = (τ − ½)(cs² δ_αβ − u_α u_β)`: along the
//! flow the scalar diffuses `u²/cs²` less than across it (0.75 % at u = 0.05 on D2Q5). The
//! second-order equilibrium that would cancel it needs a lattice isotropic through fourth
//! order, which D2Q5 is not (the macro refuses it).

use lbm_macros::lbm_model;

lbm_model! {
    /// D2Q5 advection–diffusion of a scalar `φ` by the velocity field `(ux, uy)`, BGK,
    /// `D = cs²(τ − ½)` with `cs² = 1/3`.
    pub model D2Q5AdvectionDiffusion {
        dim = 2;
        velocities = shells![(0, 0), (1, 0)];
        weights = [1/3, 1/6];
        cs2 = 1/3;
        params { tau: real, ux: field, uy: field }
        moments { phi: scalar = sum(f); }
        equilibrium = w * phi * (1 + (cx * ux + cy * uy) / cs2);
        collision = bgk(tau = tau);
    }
}

lbm_model! {
    /// D3Q7 advection–diffusion of a scalar `φ` by the velocity field `(ux, uy, uz)`, BGK,
    /// `D = cs²(τ − ½)` with `cs² = 1/4`.
    pub model D3Q7AdvectionDiffusion {
        dim = 3;
        velocities = shells![(0, 0, 0), (1, 0, 0)];
        weights = [1/4, 1/8];
        cs2 = 1/4;
        params { tau: real, ux: field, uy: field, uz: field }
        moments { phi: scalar = sum(f); }
        equilibrium = w * phi * (1 + (cx * ux + cy * uy + cz * uz) / cs2);
        collision = bgk(tau = tau);
    }
}
