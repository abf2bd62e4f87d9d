//! Chorin's (1967) artificial-compressibility method for the steady incompressible
//! Navier–Stokes equations, as the finite-difference code of Kamil (2014, the OpenACC port of
//! an INS code; the scheme is Roy et al.'s) solves them: pseudo-time marching of
//!
//! ```text
//! ∂p/∂t = −β² ∇·u − C₄ h³ Σ_a λ_a ∂⁴p/∂x_a⁴,        β² = max(|u|², κ U_ref²),
//! ∂u/∂t = −(u·∇)u − ∇p + ν ∇²u,                     λ_a = (|u_a| + √(u_a² + 4β²)) / 2,
//! ```
//!
//! with `p` the kinematic pressure (pressure over the constant density). The artificial
//! compressibility `β²` is local, from the velocity, bounded below by `κ U_ref²`; the fourth
//! derivative of the pressure, scaled by the largest eigenvalue `λ_a` of the pseudo-time system
//! along each axis, damps the odd–even decoupling of central differences (it is O(h³), so the
//! scheme stays second order). Every derivative is a second-order central difference; at steady
//! state `∇·u = 0` up to the damping. References: A. J. Chorin, *A numerical method for
//! solving incompressible viscous flow problems*, J. Comput. Phys. 2 (1967) 12–26; the walls
//! set the velocity and extrapolate the pressure linearly ([`lbm::fd::Rule`]).

use lbm_macros::fd_scheme;

fd_scheme! {
    /// The 2-D artificial-compressibility scheme: unknowns `p`, `ux`, `uy`; parameters the
    /// viscosity `nu`, `kappa` and `u_ref` of the artificial compressibility, and the damping
    /// constant `c4`.
    pub scheme ArtificialCompressibility2 {
        dim = 2;
        fields { p, u: vector }
        params { nu: real, kappa: real, u_ref: real, c4: real }
        operators {
            d = derivative(1, order = 2, stencil = [-1/2, 0, 1/2]);
            d4 = derivative(4, order = 2, stencil = [1, -4, 6, -4, 1]);
            lap = laplacian(order = 2, stencil = [1, -2, 1]);
        }
        let beta2 = max(norm2(u), kappa * u_ref^2);
        let lx = (abs(ux) + sqrt(ux^2 + 4 * beta2)) / 2;
        let ly = (abs(uy) + sqrt(uy^2 + 4 * beta2)) / 2;
        rates {
            p = -beta2 * (d(ux, x) + d(uy, y)) - c4 * h^3 * (lx * d4(p, x) + ly * d4(p, y));
            u = -(ux * d(u, x) + uy * d(u, y)) - d(p) + nu * lap(u);
        }
        integrator = euler;
    }
}

fd_scheme! {
    /// The 3-D artificial-compressibility scheme, the same declaration along three axes:
    /// unknowns `p`, `ux`, `uy`, `uz`.
    pub scheme ArtificialCompressibility3 {
        dim = 3;
        fields { p, u: vector }
        params { nu: real, kappa: real, u_ref: real, c4: real }
        operators {
            d = derivative(1, order = 2, stencil = [-1/2, 0, 1/2]);
            d4 = derivative(4, order = 2, stencil = [1, -4, 6, -4, 1]);
            lap = laplacian(order = 2, stencil = [1, -2, 1]);
        }
        let beta2 = max(norm2(u), kappa * u_ref^2);
        let lx = (abs(ux) + sqrt(ux^2 + 4 * beta2)) / 2;
        let ly = (abs(uy) + sqrt(uy^2 + 4 * beta2)) / 2;
        let lz = (abs(uz) + sqrt(uz^2 + 4 * beta2)) / 2;
        rates {
            p = -beta2 * (d(ux, x) + d(uy, y) + d(uz, z))
                - c4 * h^3 * (lx * d4(p, x) + ly * d4(p, y) + lz * d4(p, z));
            u = -(ux * d(u, x) + uy * d(u, y) + uz * d(u, z)) - d(p) + nu * lap(u);
        }
        integrator = euler;
    }
}
