//! Central-moment MRT (Geier, Greiner & Korvink 2006, Phys. Rev. E 73, 066705; De Rosis 2017,
//! Phys. Rev. E 95, 013310): the moments are taken in the frame moving with the fluid,
//! `κ_k = Σ_i P_k(c_i − u) f_i`, relaxed there with one rate each, and shifted back. The basis
//! is the lattice's raw monomials `c_x^a c_y^b (c_z^c)`, `a, b, c ≤ 2`, a set closed under the
//! shift `c → c − u`. The stress moments relax with 1/τ (viscosity `cs²(τ − ½)`), the trace with
//! `s_bulk` (bulk viscosity `cs²(1/s_bulk − ½)(2/D)`), the third- and higher-order moments with
//! `s3`, `s4`, … (1 takes them to equilibrium in one step). With every rate 1/τ the collision is
//! BGK's with the same equilibrium.
//!
//! The equilibrium is the product form `w ρ Π_α (1 + c_α u_α/cs² + (c_α²/cs² − 1) u_α²/(2cs²))`
//! (Geier et al. 2015; De Rosis 2017): the second-order Hermite equilibrium plus the higher
//! terms the tensor-product lattice carries exactly, so that every central moment of the
//! equilibrium is the Maxwellian's (ρ, 0, ρcs², ρcs⁴, …) whatever u. This is what makes the
//! relaxation Galilean invariant: the viscosity of a flow carried at u does not fall as
//! `1 − 3u²` as with the second-order equilibrium.

use lbm_macros::lbm_model;

lbm_model! {
    /// D2Q9 with the central-moment MRT collision in the raw-monomial basis
    /// (1, cx, cy, cx² + cy², cx² − cy², cx cy, cx² cy, cx cy², cx² cy²).
    pub model D2Q9CentralMrt {
        dim = 2;
        velocities = shells![(0, 0), (1, 0), (1, 1)];
        weights = [4/9, 1/9, 1/36];
        cs2 = 1/3;
        params { tau: real, s_bulk: real, s3: real, s4: real, ax: real, ay: real }
        moments { rho = sum(f); u = sum(f * c) / rho; }
        equilibrium = w * rho
            * (1 + cx * ux / cs2 + (cx^2 / cs2 - 1) * ux^2 / (2 * cs2))
            * (1 + cy * uy / cs2 + (cy^2 / cs2 - 1) * uy^2 / (2 * cs2));
        collision = central_mrt(
            basis = [1, cx, cy, cx^2 + cy^2, cx^2 - cy^2, cx * cy, cx^2 * cy, cx * cy^2, cx^2 * cy^2],
            rates = [0, 0, 0, s_bulk, 1 / tau, 1 / tau, s3, s3, s4]
        );
        force = (ax, ay);
    }
}

impl D2Q9CentralMrtParams {
    /// Relaxation time `tau` of the stress (viscosity `cs²(τ − ½)`), every other moment taken
    /// to equilibrium in one step (`s_bulk = s3 = s4 = 1`), no force.
    pub fn with_tau(tau: f64) -> Self {
        Self {
            tau,
            s_bulk: 1.0,
            s3: 1.0,
            s4: 1.0,
            ax: 0.0,
            ay: 0.0,
        }
    }
}

lbm_model! {
    /// D3Q27 with the central-moment MRT collision in the raw-monomial basis: ρ, j, the five
    /// deviatoric stresses (cx cy, cx cz, cy cz, cx² − cy², cx² − cz²), the trace, then the
    /// moments of orders 3 to 6.
    pub model D3Q27CentralMrt {
        dim = 3;
        velocities = shells![(0, 0, 0), (1, 0, 0), (1, 1, 0), (1, 1, 1)];
        weights = [8/27, 2/27, 1/54, 1/216];
        cs2 = 1/3;
        params { tau: real, s_bulk: real, s3: real, s4: real, s5: real, s6: real, ax: real, ay: real, az: real }
        moments { rho = sum(f); u = sum(f * c) / rho; }
        equilibrium = w * rho
            * (1 + cx * ux / cs2 + (cx^2 / cs2 - 1) * ux^2 / (2 * cs2))
            * (1 + cy * uy / cs2 + (cy^2 / cs2 - 1) * uy^2 / (2 * cs2))
            * (1 + cz * uz / cs2 + (cz^2 / cs2 - 1) * uz^2 / (2 * cs2));
        collision = central_mrt(
            basis = [
                1, cx, cy, cz,
                cx * cy, cx * cz, cy * cz, cx^2 - cy^2, cx^2 - cz^2,
                cx^2 + cy^2 + cz^2,
                cx * cy^2, cx * cz^2, cy * cx^2, cy * cz^2, cz * cx^2, cz * cy^2, cx * cy * cz,
                cx^2 * cy^2, cx^2 * cz^2, cy^2 * cz^2, cx * cy * cz^2, cx * cz * cy^2, cy * cz * cx^2,
                cx^2 * cy^2 * cz, cx^2 * cz^2 * cy, cy^2 * cz^2 * cx,
                cx^2 * cy^2 * cz^2
            ],
            rates = [
                0, 0, 0, 0,
                1 / tau, 1 / tau, 1 / tau, 1 / tau, 1 / tau,
                s_bulk,
                s3, s3, s3, s3, s3, s3, s3,
                s4, s4, s4, s4, s4, s4,
                s5, s5, s5,
                s6
            ]
        );
        force = (ax, ay, az);
    }
}

impl D3Q27CentralMrtParams {
    /// Relaxation time `tau` of the stress (viscosity `cs²(τ − ½)`), every other moment taken
    /// to equilibrium in one step, no force.
    pub fn with_tau(tau: f64) -> Self {
        Self {
            tau,
            s_bulk: 1.0,
            s3: 1.0,
            s4: 1.0,
            s5: 1.0,
            s6: 1.0,
            ax: 0.0,
            ay: 0.0,
            az: 0.0,
        }
    }
}
