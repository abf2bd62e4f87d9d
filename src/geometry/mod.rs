//! Bodies in a flow (from `lbm-geometry`): analytic shapes and closed STL meshes, placed in a
//! lattice, as its obstacles and as the links they cut with the wall's distance along each;
//! the force and torque on each by momentum exchange ([`MomentumExchange`]). Their walls lie
//! half-way along the links they cut ([`obstacles`]: staircases, first order on a curved
//! surface) or where the surface crosses each ([`curved_obstacles`]: interpolated
//! bounce-back, second order, linear or quadratic, in both schemes on every backend; quadratic
//! walls not across a cut between ranks or host and device).
//!
//! ```
//! use lbm::geometry::{Body, obstacles};
//! use lbm::models::{D2Q9Bgk, D2Q9BgkParams};
//! use lbm::{BoundarySpec, Lattice, Scheme, Soa};
//!
//! // A disc of radius 5 in a channel 64 × 32: its sites are the lattice's obstacles.
//! let disc = Body::circle([20.0, 16.0], 5.0).unwrap();
//! let spec = BoundarySpec { solid: Some(obstacles(disc.clone())), ..BoundarySpec::channel() };
//! assert!(spec.solid.as_ref().unwrap().is_solid(20, 21, 0) && !disc.solid([20, 22, 0]));
//! let params = D2Q9BgkParams { tau: 0.8, ax: 0.0, ay: 0.0 };
//! let lattice = Lattice::<D2Q9Bgk, Soa, f64>::with_size([64, 32, 1], params, Scheme::TwoCopy, &spec);
//! assert!(lattice.is_ok());
//! ```

mod force;

pub use force::{Load, MomentumExchange};
pub use lbm_geometry::*;

use crate::Obstacles;

/// The sites of `body` as a lattice's obstacles: asked site by site for the planes a lattice
/// holds (a rank of a distributed run only for its own), solid where the site's point lies
/// inside the body or on its surface.
pub fn obstacles(body: Body) -> Obstacles {
    Obstacles::voxels(move |x, y, z| body.solid([x, y, z]))
}

/// As [`obstacles`], with each wall where the body's surface crosses the link (from the exact
/// shape: ray–sphere, ray–cylinder, ray–box, ray–triangle), for interpolated bounce-back
/// ([`Obstacles::with_wall_distance`]: second-order walls that are not staircases). A link
/// whose crossing is not found (a mesh's grazing edge) is bounced half-way.
pub fn curved_obstacles(body: Body) -> Obstacles {
    curved_obstacles_and(body, |_| false)
}

/// As [`curved_obstacles`], with the sites where `also(site)` holds solid too, their walls
/// half-way (where the body's surface does not cross the link first): a channel's walls
/// beyond the rows that pad it to a layout's cluster width, say.
pub fn curved_obstacles_and(
    body: Body,
    also: impl Fn([usize; 3]) -> bool + Send + Sync + 'static,
) -> Obstacles {
    let shape = body.clone();
    Obstacles::voxels(move |x, y, z| also([x, y, z]) || body.solid([x, y, z])).with_wall_distance(
        move |site, c| {
            let from = site.map(|v| v as f64);
            let to = std::array::from_fn(|a| from[a] + f64::from(c[a]));
            shape.entry(from, to).filter(|&q| q > 0.0)
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Model;

    /// A placed body's obstacles are its solid sites, on a lattice's every site.
    #[test]
    fn obstacles_are_the_bodys_solid_sites() {
        let body = Body::sphere([6.2, 5.9, 6.1], 3.7).unwrap();
        let o = obstacles(body.clone());
        for x in 0..12 {
            for y in 0..12 {
                for z in 0..12 {
                    let d2 = (x as f64 - 6.2).powi(2)
                        + (y as f64 - 5.9).powi(2)
                        + (z as f64 - 6.1).powi(2);
                    assert_eq!(o.is_solid(x, y, z), d2 <= 3.7 * 3.7, "({x}, {y}, {z})");
                }
            }
        }
    }

    /// A curved body's walls lie on its exact surface: for every fluid site and every D3Q19
    /// link that ends inside the sphere, the point at `q` along the link is on the sphere.
    #[test]
    fn curved_obstacles_put_each_links_wall_on_the_surface() {
        let (centre, r) = ([6.2, 5.9, 6.1], 3.7);
        let o = curved_obstacles(Body::sphere(centre, r).unwrap());
        assert!(o.is_curved());
        let mut links = 0;
        for site in (0..13).flat_map(|x| (0..13).flat_map(move |y| (0..13).map(move |z| [x, y, z])))
        {
            if o.is_solid(site[0], site[1], site[2]) {
                continue;
            }
            for &c in crate::models::D3Q19Bgk::VELOCITIES {
                let [x, y, z] = std::array::from_fn(|a| site[a] as i64 + i64::from(c[a]));
                if x < 0 || y < 0 || z < 0 || !o.is_solid(x as usize, y as usize, z as usize) {
                    continue;
                }
                let q = o
                    .wall_distance(site, c)
                    .expect("a link into the sphere crosses it");
                assert!(q > 0.0 && q <= 1.0, "q = {q} at {site:?} along {c:?}");
                let d2: f64 = (0..3)
                    .map(|a| (site[a] as f64 + q * f64::from(c[a]) - centre[a]).powi(2))
                    .sum();
                assert!(
                    (d2.sqrt() - r).abs() < 1e-9,
                    "{site:?} along {c:?}: at {}",
                    d2.sqrt()
                );
                links += 1;
            }
        }
        assert!(links > 300, "{links} links cut");
    }
}
