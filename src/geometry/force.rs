//! The force and torque the fluid exerts on a body, by momentum exchange (Ladd 1994; Mei, Yu,
//! Shyy & Luo 2002 for interpolated walls; the Galilean-invariant form of Wen, Zhang, Tu, Wang
//! & Fang 2014 for moving ones): each step, the population `f*_i(x_f)` that leaves a fluid site
//! `x_f` along a link cut by the body's surface is replaced by the population `f_ī(x_f)` the
//! wall sends back, and the body receives the momentum the fluid loses through the link,
//! measured in the frame of the wall's velocity `u_w` where the link crosses it:
//!
//! ```text
//! F = Σ_links f*_i(x_f) (c_i − u_w) − f_ī(x_f) (c_ī − u_w),
//! T = Σ_links (x_f + q c_i − x_c) × [f*_i(x_f) (c_i − u_w) − f_ī(x_f) (c_ī − u_w)],
//! ```
//!
//! with `q` the wall's distance along the link (½ for half-way bounce-back, where `f_ī(x_f) =
//! f*_i(x_f)` on a resting wall and a link gives `2 f*_i c_i`) and `x_c` the point the torque
//! is taken about. In lattice units (ρ₀ = 1, Δx = Δt = 1), per step.
//!
//! Where the flow meets a wall across it, the exchange alternates from one step to the next
//! about its mean, even at a steady state (the populations' staggered modes, which the
//! collision damps slowly): average two successive steps for a steady force. So averaged, the
//! force on every wall of a force-driven flow balances the body force on its fluid to
//! round-off, with half-way and with interpolated walls; the torque on a turning cylinder
//! is that of circular Couette flow (`lbm-validation/tests/physics/bodies.rs`).

use super::{Body, CutLink, V3};
use std::ops::Range;

use crate::{BoundarySpec, Error, Lattice, Layout, LbmError, Model, Real, Solver};

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
    /// The fluid sites the links leave from, each once, and the index of each link's among them.
    sites: Vec<[usize; 3]>,
    site_of: Vec<usize>,
    /// The wall's velocity where each link crosses it.
    wall: Vec<V3>,
    centre: V3,
}

impl MomentumExchange {
    /// The links of `body` on a lattice of `size` sites for model `M` whose boundaries are
    /// `spec` (its obstacles hold the body; a link leaving the lattice wraps around where
    /// `spec` is periodic), from the sites that are fluid; torques about `centre`. Each wall
    /// lies where the lattice puts it: at the obstacles' wall distance
    /// ([`crate::Obstacles::wall_distance`]) where they have one, else half-way.
    pub fn new<M: Model>(body: &Body, spec: &BoundarySpec, size: [usize; 3], centre: V3) -> Self {
        Self::on_box::<M>(
            body,
            spec,
            size,
            centre,
            &[0..size[0], 0..size[1], 0..size[2]],
        )
    }

    /// As [`MomentumExchange::new`], for the links from the sites of the box `nodes`
    /// (`[xs, ys, zs]`) alone: what one process of a distributed run holds
    /// ([`Solver::local_box`]); the loads of the processes add up to the body's.
    pub fn on_box<M: Model>(
        body: &Body,
        spec: &BoundarySpec,
        size: [usize; 3],
        centre: V3,
        nodes: &[Range<usize>; 3],
    ) -> Self {
        let periodic = [
            spec.left.is_none() && spec.right.is_none(),
            spec.bottom.is_none() && spec.top.is_none(),
            spec.back.is_none() && spec.front.is_none(),
        ];
        let mut links = (body.cut_links(M::VELOCITIES, size, periodic, nodes[0].clone())).links;
        links.retain(|l| nodes[1].contains(&l.site[1]) && nodes[2].contains(&l.site[2]));
        let mut wall = Vec::new();
        if let Some(solid) = &spec.solid {
            links.retain(|l| !solid.is_solid(l.site[0], l.site[1], l.site[2]));
            for l in &mut links {
                l.q = solid
                    .wall_distance(l.site, M::VELOCITIES[l.i])
                    .unwrap_or(0.5);
                let at = crossing(l, M::VELOCITIES[l.i]);
                wall.push(solid.wall_velocity(at).unwrap_or_default());
            }
        }
        wall.resize(links.len(), V3::default());
        let mut sites: Vec<[usize; 3]> = links.iter().map(|l| l.site).collect();
        sites.sort_unstable();
        sites.dedup();
        let site_of = links
            .iter()
            .map(|l| sites.binary_search(&l.site).unwrap_or_default())
            .collect();
        Self {
            links,
            sites,
            site_of,
            wall,
            centre,
        }
    }

    /// The number of links.
    pub fn len(&self) -> usize {
        self.links.len()
    }

    /// Whether the body cuts no link (it lies outside the lattice, or inside another).
    pub fn is_empty(&self) -> bool {
        self.links.is_empty()
    }

    /// The load on the body in the state of `lat`: from its post-collision populations and
    /// those its walls send back into the fluid at the next step.
    pub fn on<M: Model, L: Layout, T: Real>(
        &self,
        lat: &Lattice<M, L, T>,
    ) -> Result<Load, LbmError> {
        Ok(self.load::<M, T>(&lat.exchanged(&self.sites)?))
    }

    /// The load on the body's part on this process's planes in the state of `solver`
    /// (collective: every process of a distributed run calls it, and the sum of their loads
    /// is the body's); refused by the backends that cannot read the populations yet.
    pub fn of<M: Model, T: Real>(
        &self,
        solver: &mut dyn Solver<Model = M, Real = T>,
    ) -> Result<Load, Error> {
        Ok(self.load::<M, T>(&solver.exchanged(&self.sites)?))
    }

    /// The load from the populations of [`MomentumExchange::sites`], `2Q` a site
    /// ([`Lattice::exchanged`]).
    fn load<M: Model, T: Real>(&self, values: &[T]) -> Load {
        let mut load = Load::default();
        for ((l, u), &s) in self.links.iter().zip(&self.wall).zip(&self.site_of) {
            let f = &values[2 * M::Q * s..2 * M::Q * (s + 1)];
            let c = M::VELOCITIES[l.i].map(f64::from);
            let (leaving, returning) = (f[l.i].to_f64(), f[M::Q + M::OPPOSITE[l.i]].to_f64());
            let dp: V3 =
                std::array::from_fn(|a| leaving * (c[a] - u[a]) - returning * (-c[a] - u[a]));
            let at = crossing(l, M::VELOCITIES[l.i]);
            let arm: V3 = std::array::from_fn(|a| at[a] - self.centre[a]);
            for (f, d) in load.force.iter_mut().zip(dp) {
                *f += d;
            }
            for (m, d) in load.torque.iter_mut().zip(cross(arm, dp)) {
                *m += d;
            }
        }
        load
    }
}

/// Where link `l` (velocity `c`) crosses the wall: `x_f + q c`.
fn crossing(l: &CutLink, c: [i32; 3]) -> V3 {
    std::array::from_fn(|a| l.site[a] as f64 + l.q * f64::from(c[a]))
}

fn cross(a: V3, b: V3) -> V3 {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}
