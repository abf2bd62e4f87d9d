//! Bodies: analytic shapes (sphere, cylinder, box), triangle meshes and unions of them, each
//! placed in the lattice, with the two questions a lattice asks of a wall — is this site
//! inside, and where along this link does the wall cross it.

use std::sync::Arc;

use crate::GeometryError;
use crate::mesh::TriMesh;
use crate::placement::Placement;
use crate::vec3::{self, V3};

/// What a body is, in its own coordinates.
#[derive(Debug, Clone)]
enum Shape {
    /// The ball `|p| ≤ radius`.
    Sphere { radius: f64 },
    /// The cylinder `x² + y² ≤ radius²`, `|z| ≤ half_length` (infinite: a circle in 2-D).
    Cylinder { radius: f64, half_length: f64 },
    /// The box `|p_a| ≤ half[a]`.
    Cuboid { half: V3 },
    /// The inside of a closed triangle mesh.
    Mesh(Arc<TriMesh>),
    /// Every point inside one of the bodies.
    Union(Vec<Body>),
}

/// A body in the lattice: a shape and its placement. Coordinates are lattice units, the
/// site `(x, y, z)` at the point `(x, y, z)`; a site is solid when its point lies inside the
/// body or on its surface.
#[derive(Debug, Clone)]
pub struct Body {
    shape: Shape,
    place: Placement,
}

/// `value` if it is finite and positive, else the error for `what`.
fn positive(what: &str, value: f64) -> Result<f64, GeometryError> {
    if value > 0.0 && value.is_finite() {
        Ok(value)
    } else {
        Err(GeometryError::Invalid(format!(
            "{what} = {value}: a finite positive number is expected"
        )))
    }
}

/// `p` if every coordinate is finite, else the error for `what`.
fn finite(what: &str, p: V3) -> Result<V3, GeometryError> {
    if p.iter().all(|v| v.is_finite()) {
        Ok(p)
    } else {
        Err(GeometryError::Invalid(format!(
            "{what} = {p:?}: finite coordinates are expected"
        )))
    }
}

impl Body {
    fn placed(shape: Shape) -> Self {
        Self {
            shape,
            place: Placement::default(),
        }
    }

    /// The ball of `radius` about `centre`.
    pub fn sphere(centre: V3, radius: f64) -> Result<Self, GeometryError> {
        let radius = positive("the sphere's radius", radius)?;
        Ok(Self::placed(Shape::Sphere { radius }).moved(finite("its centre", centre)?))
    }

    /// The disc of `radius` about `(x, y)` of a 2-D lattice (a cylinder along z without end).
    pub fn circle([x, y]: [f64; 2], radius: f64) -> Result<Self, GeometryError> {
        let radius = positive("the circle's radius", radius)?;
        let shape = Shape::Cylinder {
            radius,
            half_length: f64::INFINITY,
        };
        Ok(Self::placed(shape).moved(finite("its centre", [x, y, 0.0])?))
    }

    /// The cylinder of `radius` and `length` about `centre`, its axis along `axis`.
    pub fn cylinder(centre: V3, axis: V3, radius: f64, length: f64) -> Result<Self, GeometryError> {
        let shape = Shape::Cylinder {
            radius: positive("the cylinder's radius", radius)?,
            half_length: positive("its length", length)? / 2.0,
        };
        let to_axis = vec3::z_to(finite("its axis", axis)?).ok_or_else(|| {
            GeometryError::Invalid("the cylinder's axis is the zero vector".into())
        })?;
        let place = Placement::default().rotated(&to_axis);
        Ok(Self { shape, place }.moved(finite("its centre", centre)?))
    }

    /// The box between the corners `min` and `max` (edges along the axes; rotate it after).
    pub fn cuboid(min: V3, max: V3) -> Result<Self, GeometryError> {
        let (min, max) = (finite("the box's corner", min)?, finite("its corner", max)?);
        let half: V3 = std::array::from_fn(|a| (max[a] - min[a]) / 2.0);
        for (a, h) in half.iter().enumerate() {
            positive(
                &format!("the box's side along {}", ["x", "y", "z"][a]),
                2.0 * h,
            )?;
        }
        let centre = std::array::from_fn(|a| (max[a] + min[a]) / 2.0);
        Ok(Self::placed(Shape::Cuboid { half }).moved(centre))
    }

    /// The inside of the closed mesh `mesh`, in its file's coordinates (scale and place it).
    pub fn mesh(mesh: TriMesh) -> Self {
        Self::placed(Shape::Mesh(Arc::new(mesh)))
    }

    /// Every point inside one of `bodies`.
    pub fn union(bodies: Vec<Body>) -> Self {
        Self::placed(Shape::Union(bodies))
    }

    /// Scaled by `factor` about the lattice's origin.
    pub fn scaled(self, factor: f64) -> Result<Self, GeometryError> {
        let factor = positive("the scale factor", factor)?;
        Ok(Self {
            place: self.place.scaled(factor),
            ..self
        })
    }

    /// Rotated by `degrees` about `axis` through the lattice's origin (right-handed).
    pub fn rotated(self, axis: V3, degrees: f64) -> Result<Self, GeometryError> {
        let r = vec3::rotation(axis, degrees).ok_or_else(|| {
            GeometryError::Invalid(format!(
                "a rotation by {degrees}° about {axis:?}: a finite angle about a non-zero axis \
                 is expected"
            ))
        })?;
        Ok(Self {
            place: self.place.rotated(&r),
            ..self
        })
    }

    /// Moved by `by`.
    pub fn moved(self, by: V3) -> Self {
        Self {
            place: self.place.moved(by),
            ..self
        }
    }

    /// The corners `(lo, hi)` of a box, along the lattice's axes, that holds the body: the
    /// smallest for a sphere and a mesh, and for the others the box about their own box
    /// turned into place. Infinite along a circle's axis.
    pub fn bounds(&self) -> (V3, V3) {
        let corners = |half: V3| -> Vec<V3> {
            (0..8)
                .map(|k| std::array::from_fn(|a| if k >> a & 1 == 1 { half[a] } else { -half[a] }))
                .collect()
        };
        let local = match &self.shape {
            Shape::Sphere { radius } => {
                let c = self.place.to_lattice([0.0; 3]);
                let r = radius * self.place.scale();
                return (c.map(|v| v - r), c.map(|v| v + r));
            }
            // A circle's axis is infinite: its box is the middle disc's, stretched along the
            // axis below.
            Shape::Cylinder {
                radius,
                half_length,
            } => {
                let h = if half_length.is_finite() {
                    *half_length
                } else {
                    0.0
                };
                corners([*radius, *radius, h])
            }
            Shape::Cuboid { half } => corners(*half),
            Shape::Mesh(m) => m.vertices().to_vec(),
            Shape::Union(bodies) => {
                return bodies.iter().map(Body::bounds).fold(
                    ([f64::INFINITY; 3], [f64::NEG_INFINITY; 3]),
                    |(lo, hi), (a, b)| {
                        (
                            std::array::from_fn(|k| lo[k].min(a[k])),
                            std::array::from_fn(|k| hi[k].max(b[k])),
                        )
                    },
                );
            }
        };
        let mut lo = [f64::INFINITY; 3];
        let mut hi = [f64::NEG_INFINITY; 3];
        for p in local {
            let p = self.place.to_lattice(p);
            for a in 0..3 {
                lo[a] = lo[a].min(p[a]);
                hi[a] = hi[a].max(p[a]);
            }
        }
        if let Shape::Cylinder { half_length, .. } = self.shape
            && half_length.is_infinite()
        {
            let axis = vec3::sub(
                self.place.to_lattice([0.0, 0.0, 1.0]),
                self.place.to_lattice([0.0; 3]),
            );
            for a in (0..3).filter(|&a| axis[a] != 0.0) {
                (lo[a], hi[a]) = (f64::NEG_INFINITY, f64::INFINITY);
            }
        }
        (lo, hi)
    }

    /// Whether the point `p` lies inside the body or on its surface.
    pub fn contains(&self, p: V3) -> bool {
        let l = self.place.to_local(p);
        match &self.shape {
            Shape::Sphere { radius } => vec3::dot(l, l) <= radius * radius,
            Shape::Cylinder {
                radius,
                half_length,
            } => l[0] * l[0] + l[1] * l[1] <= radius * radius && l[2].abs() <= *half_length,
            Shape::Cuboid { half } => (0..3).all(|a| l[a].abs() <= half[a]),
            Shape::Mesh(m) => m.contains(l),
            Shape::Union(bodies) => bodies.iter().any(|b| b.contains(p)),
        }
    }

    /// Where the segment from `from` (outside the body) to `to` first enters it: the `t` in
    /// `[0, 1]` of the point `from + t (to − from)`, or `None` when it stays outside.
    pub fn entry(&self, from: V3, to: V3) -> Option<f64> {
        let o = self.place.to_local(from);
        let d = self.place.direction_to_local(vec3::sub(to, from));
        let t = match &self.shape {
            Shape::Sphere { radius } => {
                let (enter, exit) = quadratic(d, o, *radius, [true; 3])?;
                interval_entry(&[(enter, exit)])
            }
            Shape::Cylinder {
                radius,
                half_length,
            } => {
                let radial = match d[0] * d[0] + d[1] * d[1] {
                    0.0 if o[0] * o[0] + o[1] * o[1] <= radius * radius => {
                        (f64::NEG_INFINITY, f64::INFINITY)
                    }
                    0.0 => return None,
                    _ => quadratic(d, o, *radius, [true, true, false])?,
                };
                interval_entry(&[radial, slab(o[2], d[2], *half_length)?])
            }
            Shape::Cuboid { half } => interval_entry(&[
                slab(o[0], d[0], half[0])?,
                slab(o[1], d[1], half[1])?,
                slab(o[2], d[2], half[2])?,
            ]),
            Shape::Mesh(m) => m.first_crossing(o, d),
            Shape::Union(bodies) => bodies
                .iter()
                .filter_map(|b| b.entry(from, to))
                .min_by(f64::total_cmp),
        }?;
        (0.0..=1.0).contains(&t).then_some(t)
    }
}

/// The parameters `t` where the line `o + t d` meets `Σ_a (o_a + t d_a)² = r²` over the axes
/// `axes`, in order; `None` where it misses.
fn quadratic(d: V3, o: V3, r: f64, axes: [bool; 3]) -> Option<(f64, f64)> {
    let pick = |v: V3| -> V3 { std::array::from_fn(|a| if axes[a] { v[a] } else { 0.0 }) };
    let (d, o) = (pick(d), pick(o));
    let a = vec3::dot(d, d);
    if a == 0.0 {
        return None;
    }
    let b = vec3::dot(o, d);
    let c = vec3::dot(o, o) - r * r;
    let disc = b * b - a * c;
    if disc < 0.0 {
        return None;
    }
    // The root of larger magnitude first, the other from their product (no cancellation).
    let q = -(b + b.signum() * disc.sqrt());
    let (t1, t2) = if q == 0.0 { (0.0, 0.0) } else { (q / a, c / q) };
    Some((t1.min(t2), t1.max(t2)))
}

/// Where the line `o + t d` lies within `|x| ≤ half` along one axis.
fn slab(o: f64, d: f64, half: f64) -> Option<(f64, f64)> {
    if d == 0.0 {
        return (o.abs() <= half).then_some((f64::NEG_INFINITY, f64::INFINITY));
    }
    let (a, b) = ((-half - o) / d, (half - o) / d);
    Some((a.min(b), a.max(b)))
}

/// The entry of the intersection of the intervals, if it is not empty and not behind `t = 0`'s
/// exit.
fn interval_entry(intervals: &[(f64, f64)]) -> Option<f64> {
    let enter = intervals
        .iter()
        .map(|i| i.0)
        .fold(f64::NEG_INFINITY, f64::max);
    let exit = intervals.iter().map(|i| i.1).fold(f64::INFINITY, f64::min);
    (enter <= exit && exit >= 0.0).then_some(enter.max(0.0))
}
