//! The flow half of the double-distribution Boussinesq model of thermal convection (Krüger et
//! al. 2017, *The Lattice Boltzmann Method*, §8.4): an isothermal D2Q9 flow driven by the
//! buoyancy of a temperature `T` that a second lattice carries,
//!
//! ```text
//! ∂t u + u·∇u = −∇p/ρ + ν ∇²u + g β (T − T_ref) ŷ,        ∂t T + u·∇T = κ ∇²T,
//! ```
//!
//! gravity pointing along −y. `T` is a `field`: per site, the temperature moment of the
//! coupled lattice ([`lbm::Coupled`]; the temperature lattice is a
//! [`crate::D2Q5AdvectionDiffusion`] whose velocity field is this lattice's `u`). The force is
//! applied by the exact-difference method, so the velocity the temperature reads is the
//! physical `Σ f c / ρ + a/2`. The Rayleigh and Prandtl numbers of a layer of height `H` are
//! `Ra = g β ΔT H³ / (ν κ)` and `Pr = ν / κ`.

use lbm_macros::lbm_model;

lbm_model! {
    /// D2Q9 flow with the Boussinesq buoyancy `a = (0, gβ (T − T_ref))` of the temperature
    /// field `T`, TRT collision (`ν = cs²(τ − ½)`; `magic = 3/16` puts bounce-back walls
    /// exactly half-way).
    pub model D2Q9Boussinesq {
        dim = 2;
        velocities = shells![(0, 0), (1, 0), (1, 1)];
        weights = [4/9, 1/9, 1/36];
        cs2 = 1/3;
        params { tau: real, magic: real, g_beta: real, t_ref: real, T: field }
        moments { rho = sum(f); u = sum(f * c) / rho; }
        equilibrium = hermite(order = 2);
        collision = trt(tau = tau, magic = magic);
        force = (0, g_beta * (T - t_ref));
    }
}
