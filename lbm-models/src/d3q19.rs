//! D3Q19: the isothermal nineteen-velocity lattice (Qian, d'Humières & Lallemand 1992), with the
//! second-order equilibrium, and BGK, TRT and MRT collisions. The MRT basis is the orthogonal one
//! of d'Humières, Ginzburg, Krafczyk, Lallemand & Luo (2002), "Multiple-relaxation-time lattice
//! Boltzmann models in three dimensions", Phil. Trans. R. Soc. A 360, 437, eq. (2.3)–(2.5).
//! Every model carries a body force (ax, ay, az), applied by the exact-difference method.

use lbm_macros::lbm_model;

lbm_model! {
    /// D3Q19 with the single-relaxation-time (BGK) collision, `ν = cs²(τ − ½)`.
    pub model D3Q19Bgk {
        dim = 3;
        velocities = shells![(0, 0, 0), (1, 0, 0), (1, 1, 0)];
        weights = [1/3, 1/18, 1/36];
        cs2 = 1/3;
        params { tau: real, ax: real, ay: real, az: real }
        moments { rho = sum(f); u = sum(f * c) / rho; }
        equilibrium = hermite(order = 2);
        collision = bgk(tau = tau);
        force = (ax, ay, az);
    }
}

lbm_model! {
    /// D3Q19 with the two-relaxation-time (TRT) collision (Ginzburg, Verhaeghe & d'Humières
    /// 2008): τ sets the viscosity, the magic parameter Λ the odd rate (Λ = 3/16 puts half-way
    /// bounce-back walls exactly half-way for Poiseuille flow, Λ = 1/4 is the most stable).
    pub model D3Q19Trt {
        dim = 3;
        velocities = shells![(0, 0, 0), (1, 0, 0), (1, 1, 0)];
        weights = [1/3, 1/18, 1/36];
        cs2 = 1/3;
        params { tau: real, magic: real, ax: real, ay: real, az: real }
        moments { rho = sum(f); u = sum(f * c) / rho; }
        equilibrium = hermite(order = 2);
        collision = trt(tau = tau, magic = magic);
        force = (ax, ay, az);
    }
}

/// The D3Q19 MRT declaration in the orthogonal basis of d'Humières et al. (2002), with the
/// extra parameters `$extra` and the stress moments relaxing at the rate `$stress` (tokens of
/// the DSL): one home for the basis that [`D3Q19Mrt`] and [`crate::D3Q19MrtSmagorinsky`] share.
macro_rules! d3q19_mrt {
    ($(#[$doc:meta])* $name:ident { $($extra:ident),* } stress = $($stress:tt)+) => {
        lbm_macros::lbm_model! {
            $(#[$doc])*
            pub model $name {
                dim = 3;
                velocities = shells![(0, 0, 0), (1, 0, 0), (1, 1, 0)];
                weights = [1/3, 1/18, 1/36];
                cs2 = 1/3;
                params { tau: real, $($extra: real,)* s_e: real, s_eps: real, s_q: real, s_pi: real, s_m: real, ax: real, ay: real, az: real }
                moments { rho = sum(f); u = sum(f * c) / rho; }
                equilibrium = hermite(order = 2);
                collision = mrt(
                    basis = [
                        1,
                        19 * dot(c, c) - 30,
                        (21 * dot(c, c)^2 - 53 * dot(c, c) + 24) / 2,
                        cx,
                        (5 * dot(c, c) - 9) * cx,
                        cy,
                        (5 * dot(c, c) - 9) * cy,
                        cz,
                        (5 * dot(c, c) - 9) * cz,
                        3 * cx^2 - dot(c, c),
                        (3 * dot(c, c) - 5) * (3 * cx^2 - dot(c, c)),
                        cy^2 - cz^2,
                        (3 * dot(c, c) - 5) * (cy^2 - cz^2),
                        cx * cy,
                        cy * cz,
                        cx * cz,
                        (cy^2 - cz^2) * cx,
                        (cz^2 - cx^2) * cy,
                        (cx^2 - cy^2) * cz
                    ],
                    rates = [
                        0, s_e, s_eps, 0, s_q, 0, s_q, 0, s_q,
                        $($stress)+, s_pi, $($stress)+, s_pi, $($stress)+, $($stress)+, $($stress)+,
                        s_m, s_m, s_m
                    ]
                );
                force = (ax, ay, az);
            }
        }
    };
}
pub(crate) use d3q19_mrt;

d3q19_mrt! {
    /// D3Q19 with the multiple-relaxation-time (MRT) collision in the orthogonal basis of
    /// d'Humières et al. (2002): (ρ, e, ε, j_x, q_x, j_y, q_y, j_z, q_z, 3p_xx, 3π_xx, p_ww,
    /// π_ww, p_xy, p_yz, p_xz, m_x, m_y, m_z). The stress moments relax with 1/τ (viscosity
    /// `cs²(τ − ½)`); `s_e` sets the bulk viscosity, `s_eps`, `s_q`, `s_pi` and `s_m` the
    /// energy-square, heat-flux, fourth-order stress and third-order moments.
    D3Q19Mrt {} stress = 1 / tau
}

impl D3Q19MrtParams {
    /// Relaxation time `tau` of the stress moments (viscosity `cs²(τ − ½)`), no force, and the
    /// rates d'Humières et al. (2002) recommend for the others: `s_e = 1.19`,
    /// `s_eps = s_pi = 1.4`, `s_q = 1.2`, `s_m = 1.98`.
    pub fn with_tau(tau: f64) -> Self {
        Self {
            tau,
            s_e: 1.19,
            s_eps: 1.4,
            s_q: 1.2,
            s_pi: 1.4,
            s_m: 1.98,
            ax: 0.0,
            ay: 0.0,
            az: 0.0,
        }
    }
}
