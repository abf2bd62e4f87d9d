//! Large-eddy simulation with Smagorinsky's eddy viscosity `ν_t = (C Δ)² |S|`, the relaxation
//! time read from each site's non-equilibrium stress (Hou, Sterling, Chen & Doolen 1996,
//! J. Comput. Phys. 118, 329):
//!
//! ```text
//! τ = ½ (τ₀ + √(τ₀² + 2 C² |Q| / (ρ cs⁴))),    |Q| = √(2 Σ_αβ Π_αβ²),    Π_αβ = Σ_i c_iα c_iβ (f_i − f_eq_i),
//! ```
//!
//! the DSL's `smagorinsky(tau = τ₀, c = C)` (lattice spacing Δ = 1). The stress is local, so
//! no velocity gradient is differenced and the model runs on every backend as the plain
//! collision does. With `C = 0` the models are their BGK and MRT parents.

use lbm_macros::lbm_model;

lbm_model! {
    /// D2Q9 BGK with Smagorinsky's eddy viscosity: `ν = cs²(τ − ½)`, τ from the local stress;
    /// `c_smag` is the Smagorinsky constant `C` (0.1–0.2 for LES).
    pub model D2Q9Smagorinsky {
        dim = 2;
        velocities = shells![(0, 0), (1, 0), (1, 1)];
        weights = [4/9, 1/9, 1/36];
        cs2 = 1/3;
        params { tau: real, c_smag: real, ax: real, ay: real }
        moments { rho = sum(f); u = sum(f * c) / rho; }
        equilibrium = hermite(order = 2);
        collision = bgk(tau = smagorinsky(tau = tau, c = c_smag));
        force = (ax, ay);
    }
}

crate::d3q19::d3q19_mrt! {
    /// D3Q19 MRT (the basis and rates of [`crate::D3Q19Mrt`]) whose five stress moments relax
    /// with Smagorinsky's local relaxation time; `c_smag` is the Smagorinsky constant `C`.
    D3Q19MrtSmagorinsky { c_smag } stress = 1 / smagorinsky(tau = tau, c = c_smag)
}

impl D3Q19MrtSmagorinskyParams {
    /// Relaxation time `tau` of the stress moments without the model, the Smagorinsky
    /// constant `c_smag`, no force, and the other rates of
    /// [`crate::D3Q19MrtParams::with_tau`].
    pub fn with_tau(tau: f64, c_smag: f64) -> Self {
        let crate::D3Q19MrtParams {
            s_e,
            s_eps,
            s_q,
            s_pi,
            s_m,
            ax,
            ay,
            az,
            ..
        } = crate::D3Q19MrtParams::with_tau(tau);
        Self {
            tau,
            c_smag,
            s_e,
            s_eps,
            s_q,
            s_pi,
            s_m,
            ax,
            ay,
            az,
        }
    }
}
