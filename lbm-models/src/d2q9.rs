//! D2Q9: the isothermal nine-velocity lattice (Qian, d'Humières & Lallemand 1992), with the
//! second-order equilibrium, and BGK, TRT and MRT collisions (Szőke et al. 2017 use BGK and MRT for
//! the lid-driven cavity). Every model carries a body force (ax, ay), applied by the
//! exact-difference method, for force-driven flows such as Poiseuille's; with a = 0 it costs
//! nothing.

use lbm_macros::lbm_model;

lbm_model! {
    /// D2Q9 with the single-relaxation-time (BGK) collision, `ν = cs²(τ − ½)`.
    pub model D2Q9Bgk {
        dim = 2;
        velocities = [(0, 0), (1, 0), (0, 1), (-1, 0), (0, -1), (1, 1), (-1, 1), (-1, -1), (1, -1)];
        weights = [4/9, 1/9, 1/9, 1/9, 1/9, 1/36, 1/36, 1/36, 1/36];
        cs2 = 1/3;
        params { tau: real, ax: real, ay: real }
        moments { rho = sum(f); u = sum(f * c) / rho; }
        equilibrium = w * rho * (1 + dot(c, u) / cs2 + dot(c, u)^2 / (2 * cs2^2) - norm2(u) / (2 * cs2));
        collision = bgk(tau = tau);
        force = (ax, ay);
    }
}

lbm_model! {
    /// D2Q9 with the two-relaxation-time (TRT) collision (Ginzburg, Verhaeghe & d'Humières
    /// 2008): τ sets the viscosity, the magic parameter Λ the odd rate; Λ = 3/16 puts half-way
    /// bounce-back walls exactly half-way for Poiseuille flow.
    pub model D2Q9Trt {
        dim = 2;
        velocities = shells![(0, 0), (1, 0), (1, 1)];
        weights = [4/9, 1/9, 1/36];
        cs2 = 1/3;
        params { tau: real, magic: real, ax: real, ay: real }
        moments { rho = sum(f); u = sum(f * c) / rho; }
        equilibrium = hermite(order = 2);
        collision = trt(tau = tau, magic = magic);
        force = (ax, ay);
    }
}

lbm_model! {
    /// D2Q9 with the multiple-relaxation-time (MRT) collision in the orthogonal moment basis of
    /// Lallemand & Luo (2000): (ρ, e, ε, j_x, q_x, j_y, q_y, p_xx, p_xy). The stress moments relax
    /// with 1/τ (viscosity `cs²(τ − ½)`); `s_e`, `s_eps`, `s_q` are the energy, energy-square and
    /// heat-flux rates.
    pub model D2Q9Mrt {
        dim = 2;
        velocities = [(0, 0), (1, 0), (0, 1), (-1, 0), (0, -1), (1, 1), (-1, 1), (-1, -1), (1, -1)];
        weights = [4/9, 1/9, 1/9, 1/9, 1/9, 1/36, 1/36, 1/36, 1/36];
        cs2 = 1/3;
        params { tau: real, s_e: real, s_eps: real, s_q: real, ax: real, ay: real }
        moments { rho = sum(f); u = sum(f * c) / rho; }
        equilibrium = hermite(order = 2);
        collision = mrt(
            basis = [
                1,
                -4 + 3 * dot(c, c),
                4 - 21/2 * dot(c, c) + 9/2 * dot(c, c)^2,
                cx,
                (-5 + 3 * dot(c, c)) * cx,
                cy,
                (-5 + 3 * dot(c, c)) * cy,
                cx^2 - cy^2,
                cx * cy
            ],
            rates = [0, s_e, s_eps, 0, s_q, 0, s_q, 1 / tau, 1 / tau]
        );
        force = (ax, ay);
    }
}
