//! Regularized BGK (Latt & Chopard 2006, Math. Comput. Simul. 72, 165): before relaxing, the
//! non-equilibrium part is projected on the second-order Hermite polynomials,
//!
//! ```text
//! f'_i = f_eq_i + (1 − 1/τ) w_i/(2 cs⁴) (c_iα c_iβ − cs² δ_αβ) Π⁽¹⁾_αβ,   Π⁽¹⁾ = Σ_i c_i c_i (f_i − f_eq_i),
//! ```
//!
//! which filters the ghost (non-hydrodynamic) modes that BGK carries along: the viscosity is
//! BGK's `cs²(τ − ½)`, with better stability at small τ.

use lbm_macros::lbm_model;

lbm_model! {
    /// D2Q9 with the regularized BGK collision, `ν = cs²(τ − ½)`.
    pub model D2Q9Regularized {
        dim = 2;
        velocities = shells![(0, 0), (1, 0), (1, 1)];
        weights = [4/9, 1/9, 1/36];
        cs2 = 1/3;
        params { tau: real, ax: real, ay: real }
        moments { rho = sum(f); u = sum(f * c) / rho; }
        equilibrium = hermite(order = 2);
        collision = regularized(tau = tau);
        force = (ax, ay);
    }
}

lbm_model! {
    /// D3Q19 with the regularized BGK collision, `ν = cs²(τ − ½)`.
    pub model D3Q19Regularized {
        dim = 3;
        velocities = shells![(0, 0, 0), (1, 0, 0), (1, 1, 0)];
        weights = [1/3, 1/18, 1/36];
        cs2 = 1/3;
        params { tau: real, ax: real, ay: real, az: real }
        moments { rho = sum(f); u = sum(f * c) / rho; }
        equilibrium = hermite(order = 2);
        collision = regularized(tau = tau);
        force = (ax, ay, az);
    }
}
