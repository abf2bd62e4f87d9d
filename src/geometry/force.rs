//! The force and torque the fluid exerts on a body, by momentum exchange (Ladd 1994): each
//! step, a population `f*_i(x_f)` that leaves a fluid site `x_f` along a link cut by a resting
//! wall comes back reversed, so the body receives `2 f*_i(x_f) c_i` through that link:
//!
//! ```text
//! F = Σ_links 2 f*_i(x_f) c_i,      T = Σ_links (x_f + c_i/2 − x_c) × 2 f*_i(x_f) c_i,
//! ```
//!
//! the wall being half-way along the link (bounce-back on the body's solid sites) and `x_c`
//! the point the torque is taken about. In lattice units (ρ₀ = 1, Δx = Δt = 1), per step.
//!
//! Where the flow meets a wall across it, the exchange alternates from one step to the next
//! about its mean, even at a steady state (the populations' staggered modes, which the
//! collision damps slowly): average two successive steps for a steady force. So averaged, the
//! force on every wall of a force-driven flow balances the body force on its fluid to
//! round-off (`lbm-validation/tests/physics/bodies.rs`).

use super::{Body, CutLink, V3};
use crate::{BoundarySpec, Lattice, Layout, LbmError, Model, Real};

/// What the fluid exerts on a body.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Load {
    /// The force, lattice units.
    pub force: V3,
    /// The torque about the body's reference point.
    pub torque: V3,
}

/// The links through which a body takes momentum from a lattice's fluid.
#[derive(Debug, Clone)]
pub struct MomentumExchange {
    links: Vec<CutLink>,
    centre: V3,
}

impl MomentumExchange {
    /// The links of `body` on a lattice of `size` sites for model `M` whose boundaries are
    /// `spec` (its obstacles hold the body; a link leaving the lattice wraps around where
    /// `spec` is periodic), from the sites that are fluid; torques about `centre`.
    pub fn new<M: Model>(body: &Body, spec: &BoundarySpec, size: [usize; 3], centre: V3) -> Self {
        let periodic = [
            spec.left.is_none() && spec.right.is_none(),
            spec.bottom.is_none() && spec.top.is_none(),
            spec.back.is_none() && spec.front.is_none(),
        ];
        let mut links = body
            .cut_links(M::VELOCITIES, size, periodic, 0..size[0])
            .links;
        if let Some(solid) = &spec.solid {
            links.retain(|l| !solid.is_solid(l.site[0], l.site[1], l.site[2]));
        }
        Self { links, centre }
    }

    /// The number of links.
    pub fn len(&self) -> usize {
        self.links.len()
    }

    /// Whether the body cuts no link (it lies outside the lattice, or inside another).
    pub fn is_empty(&self) -> bool {
        self.links.is_empty()
    }

    /// The load on the body in the state of `lat` (its post-collision populations).
    pub fn on<M: Model, L: Layout, T: Real>(
        &self,
        lat: &Lattice<M, L, T>,
    ) -> Result<Load, LbmError> {
        let ly = lat.dims().ly;
        let mut f = vec![T::default(); M::Q];
        let mut load = Load::default();
        let mut site = None;
        for l in &self.links {
            let [x, y, z] = l.site;
            if site != Some(l.site) {
                lat.populations(x, z * ly + y, &mut f)?;
                site = Some(l.site);
            }
            let c = M::VELOCITIES[l.i].map(f64::from);
            let dp = c.map(|c| 2.0 * f[l.i].to_f64() * c);
            let arm: V3 = std::array::from_fn(|a| l.site[a] as f64 + c[a] / 2.0 - self.centre[a]);
            for (f, d) in load.force.iter_mut().zip(dp) {
                *f += d;
            }
            for (m, d) in load.torque.iter_mut().zip(cross(arm, dp)) {
                *m += d;
            }
        }
        Ok(load)
    }
}

fn cross(a: V3, b: V3) -> V3 {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}
