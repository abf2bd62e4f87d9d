//! The Zou–He velocity and pressure boundary (Zou & He 1997) on any side of a 2-D or 3-D
//! lattice whose velocities have components in {−1, 0, 1}, in the general form of Hecht &
//! Harting 2010 (their D3Q19 closure, eq. 21–24, derived here for any such velocity set).
//!
//! At a site of the outermost row, column or plane with inward normal `n`, the populations
//! with `c·n > 0` come from beyond the side and are unknown. With `S0 = Σ_{c·n=0} f`,
//! `S− = Σ_{c·n<0} f` and, for each tangential axis `t`, `St = Σ_{c·n=0} f (c·t)`:
//!
//! ```text
//! ρ (1 − u·n) = S0 + 2 S−                                   (mass and normal momentum)
//! f_j = f_ĵ + 2 w_j ρ (c_j·u) / cs² − Σ_t (c_j·t) N_t        for every unknown j
//! N_t = [St + ρ (u·t) (2 W_t / cs² − 1)] / K_t
//! ```
//!
//! where `W_t = Σ_{c·n=1} w (c·t)²` and `K_t = #{j : c_j·n = 1, c_j·t ≠ 0}`. The imposed
//! density and momentum are then exact: `Σ_j 2 w_j c_j / cs² = n` (half of `Σ w c c = cs² I`)
//! gives the normal momentum, and `N_t` is what makes the tangential momentum `ρ (u·t)`. For
//! D2Q9 it is `½ St + ρ (u·t)(2 w_d/cs² − ½)` (Zou & He's), for D3Q19 `½ St − ρ (u·t)/3`
//! (Hecht & Harting's). A velocity target gives `ρ`; a density target gives `u = u_n n` with
//! `u_n = 1 − (S0 + 2 S−)/ρ`.
//!
//! The closure's coefficients are one value, [`Closure`]; its arithmetic is the site rule
//! `program::Kind::ZouHeVelocity` (and `ZouHeDensity`), which both targets are generated from.

use crate::{Model, Role};

/// What a Zou–He side imposes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Target {
    /// The velocity `u` (`u_z` ignored by 2-D models); the density follows.
    Velocity([f64; 3]),
    /// The density `ρ` (pressure `cs² ρ`), with no tangential velocity.
    Density(f64),
}

/// The Zou–He closure of model `M` at a side with inward normal `n` (a unit axis vector).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Closure {
    /// The tangential axes `t` (unit vectors), `D − 1` of them.
    pub tangents: [[i32; 3]; 2],
    /// How many of `tangents` there are.
    pub n_tangents: usize,
    /// Per tangent: `1 / K_t` and `(2 W_t / cs² − 1) / K_t`.
    pub coef: [[f64; 2]; 2],
}

/// `c · v`.
pub(crate) fn dot(c: &[i32; 3], v: [i32; 3]) -> i32 {
    c[0] * v[0] + c[1] * v[1] + c[2] * v[2]
}

impl Closure {
    /// Why model `M` cannot have a Zou–He side with inward normal `normal`, if it cannot: its
    /// velocities must have components in {−1, 0, 1}, its first moments must be `rho` and the
    /// velocity, and every tangential axis must have an unknown population along it (else the
    /// tangential velocity could not be imposed: D3Q7, D2Q5).
    pub fn check<M: Model>(normal: [i32; 3]) -> Result<(), String> {
        let fluid = M::MOMENT_ROLES.first() == Some(&Role::Density)
            && (0..M::D).all(|a| M::MOMENT_ROLES.get(1 + a) == Some(&Role::Velocity(a)));
        if !fluid || M::VELOCITIES.iter().any(|c| c.iter().any(|v| v.abs() > 1)) {
            return Err(format!(
                "Zou–He boundaries need a model whose velocities have components in {{−1, 0, 1}} \
                 and whose first moments are the density and the velocity; {} is not one: use \
                 bounce-back walls",
                M::NAME
            ));
        }
        let c = Self::new::<M>(normal);
        match c.coef[..c.n_tangents].iter().position(|k| k[0] == 0.0) {
            Some(a) => Err(format!(
                "Zou–He boundaries need unknown populations along each tangential axis; {} has \
                 none along {:?} at the side with inward normal {normal:?}: use bounce-back walls",
                M::NAME,
                c.tangents[a]
            )),
            None => Ok(()),
        }
    }

    /// The closure at the side with inward normal `normal` (a model that passed
    /// [`Closure::check`]).
    pub fn new<M: Model>(normal: [i32; 3]) -> Self {
        let axis = normal.iter().position(|&v| v != 0).unwrap_or(0);
        let mut out = Self {
            tangents: [[0; 3]; 2],
            n_tangents: 0,
            coef: [[0.0; 2]; 2],
        };
        for a in (0..M::D).filter(|&a| a != axis) {
            let mut t = [0; 3];
            t[a] = 1;
            let (mut k, mut w) = (0usize, 0.0);
            for (c, wi) in M::VELOCITIES.iter().zip(M::WEIGHTS) {
                if dot(c, normal) == 1 && dot(c, t) != 0 {
                    k += 1;
                    w += wi;
                }
            }
            out.tangents[out.n_tangents] = t;
            if k > 0 {
                let kf = k as f64;
                out.coef[out.n_tangents] = [1.0 / kf, (2.0 * w / M::CS2 - 1.0) / kf];
            }
            out.n_tangents += 1;
        }
        out
    }

    /// The tangential axes.
    pub fn tangents(&self) -> &[[i32; 3]] {
        &self.tangents[..self.n_tangents]
    }
}
