//! Closed triangle meshes: read from STL (binary or ASCII), checked to be closed, and asked
//! whether a point is inside — by the winding number of the surface along rays parallel to
//! the three axes (nonzero: inside, so overlapping closed surfaces are their union), the
//! majority of the three deciding (a ray that grazes an edge or a
//! vertex in one direction is outvoted by the other two) — and where a segment first crosses
//! the surface (Möller & Trumbore 1997).
//!
//! Both questions look only at the triangles near the ray or the segment: for each axis, the
//! triangles are binned by their bounding boxes on a grid over the mesh's projection on the
//! plane across that axis.

use std::collections::HashMap;

use crate::GeometryError;
use crate::vec3::{self, V3};

/// A closed, consistently oriented triangle mesh.
#[derive(Debug, Clone)]
pub struct TriMesh {
    vertices: Vec<V3>,
    triangles: Vec<[usize; 3]>,
    /// The bins of the rays along each axis.
    grids: [Grid; 3],
}

impl TriMesh {
    /// The mesh of `triangles` (indices into `vertices`, counter-clockwise seen from outside),
    /// refused unless every edge joins exactly two triangles that run along it in opposite
    /// directions (closed, without holes, orientable), with the place it leaks.
    pub fn new(vertices: Vec<V3>, triangles: Vec<[usize; 3]>) -> Result<Self, GeometryError> {
        if let Some(v) = vertices.iter().find(|v| !v.iter().all(|c| c.is_finite())) {
            return Err(GeometryError::Invalid(format!(
                "a vertex at {v:?}: finite coordinates are expected"
            )));
        }
        if let Some(t) = triangles
            .iter()
            .find(|t| t.iter().any(|&i| i >= vertices.len()))
        {
            return Err(GeometryError::Invalid(format!(
                "a triangle {t:?} names a vertex beyond the {} given",
                vertices.len()
            )));
        }
        closed(&vertices, &triangles)?;
        let grids = [0, 1, 2].map(|axis| Grid::new(axis, &vertices, &triangles));
        Ok(Self {
            vertices,
            triangles,
            grids,
        })
    }

    /// The vertices.
    pub fn vertices(&self) -> &[V3] {
        &self.vertices
    }

    /// The triangles, as indices into [`TriMesh::vertices`].
    pub fn triangles(&self) -> &[[usize; 3]] {
        &self.triangles
    }

    /// The corners of triangle `k`.
    pub fn triangle(&self, k: usize) -> [V3; 3] {
        self.triangles[k].map(|i| self.vertices[i])
    }

    /// The number of triangles.
    pub fn len(&self) -> usize {
        self.triangles.len()
    }

    /// Whether the mesh has no triangle (never: a closed mesh has four at least).
    pub fn is_empty(&self) -> bool {
        self.triangles.is_empty()
    }

    /// The corners of the box that bounds the mesh.
    pub fn bounds(&self) -> (V3, V3) {
        let mut lo = [f64::INFINITY; 3];
        let mut hi = [f64::NEG_INFINITY; 3];
        for v in &self.vertices {
            for a in 0..3 {
                lo[a] = lo[a].min(v[a]);
                hi[a] = hi[a].max(v[a]);
            }
        }
        (lo, hi)
    }

    /// Whether `p` lies inside: the majority, over rays along `+x`, `+y` and `+z` from `p`, of
    /// a nonzero winding number (the crossings counted +1 where the surface faces along the
    /// ray, −1 where it faces against it). Closed surfaces that overlap or nest in one mesh
    /// are so their union, not a pocket of fluid sealed where they overlap; a surface turned
    /// inward inside another is a cavity.
    pub fn contains(&self, p: V3) -> bool {
        let inside = self
            .grids
            .iter()
            .filter(|g| g.winding(p, &self.vertices, &self.triangles) != 0)
            .count();
        inside >= 2
    }

    /// The smallest `t ∈ [0, 1]` where `o + t d` meets a triangle.
    pub fn first_crossing(&self, o: V3, d: V3) -> Option<f64> {
        // The grid across the segment's longest direction: it projects on the fewest bins.
        let axis = (0..3)
            .max_by(|&a, &b| d[a].abs().total_cmp(&d[b].abs()))
            .unwrap_or(0);
        let mut candidates = self.grids[axis].near_segment(o, vec3::add(o, d));
        candidates.sort_unstable();
        candidates.dedup();
        candidates
            .into_iter()
            .filter_map(|t| {
                let [a, b, c] = self.triangles[t as usize].map(|i| self.vertices[i]);
                segment_triangle(o, d, a, b, c)
            })
            .min_by(f64::total_cmp)
    }
}

/// Refuses a mesh with an edge that does not join exactly two triangles running along it in
/// opposite directions, saying where.
fn closed(vertices: &[V3], triangles: &[[usize; 3]]) -> Result<(), GeometryError> {
    if triangles.len() < 4 {
        return Err(GeometryError::NotClosed(format!(
            "{} triangle(s): a closed surface has four at least",
            triangles.len()
        )));
    }
    let mut edges: HashMap<(usize, usize), u32> = HashMap::with_capacity(3 * triangles.len());
    for t in triangles {
        for k in 0..3 {
            *edges.entry((t[k], t[(k + 1) % 3])).or_default() += 1;
        }
    }
    let at = |(a, b): (usize, usize)| format!("{:?} to {:?}", vertices[a], vertices[b]);
    let mut open: Vec<(usize, usize)> = edges
        .keys()
        .filter(|&&(a, b)| !edges.contains_key(&(b, a)))
        .copied()
        .collect();
    open.sort_unstable();
    if let Some(&first) = open.first() {
        return Err(GeometryError::NotClosed(format!(
            "{} edge(s) bound one triangle only (a hole, or vertices that do not meet), e.g. \
             the edge from {}",
            open.len(),
            at(first)
        )));
    }
    let mut shared: Vec<(usize, usize)> = edges
        .iter()
        .filter(|&(_, &n)| n > 1)
        .map(|(&e, _)| e)
        .collect();
    shared.sort_unstable();
    if let Some(&first) = shared.first() {
        return Err(GeometryError::NotClosed(format!(
            "{} edge(s) are run along in the same direction by two triangles (triangles \
             turned inside out, or more than two at an edge), e.g. the edge from {}",
            shared.len(),
            at(first)
        )));
    }
    Ok(())
}

/// The triangles binned by their projection on the plane across `axis`.
#[derive(Debug, Clone)]
struct Grid {
    axis: usize,
    /// The plane's two axes.
    uv: [usize; 2],
    lo: [f64; 2],
    cell: [f64; 2],
    n: usize,
    bins: Vec<Vec<u32>>,
}

impl Grid {
    fn new(axis: usize, vertices: &[V3], triangles: &[[usize; 3]]) -> Self {
        let uv = [(axis + 1) % 3, (axis + 2) % 3];
        let mut lo = [f64::INFINITY; 2];
        let mut hi = [f64::NEG_INFINITY; 2];
        for v in vertices {
            for k in 0..2 {
                lo[k] = lo[k].min(v[uv[k]]);
                hi[k] = hi[k].max(v[uv[k]]);
            }
        }
        // About one triangle per bin along each side of a closed surface.
        let n = ((triangles.len() as f64).sqrt().ceil() as usize).clamp(1, 1024);
        let cell = [0, 1].map(|k| ((hi[k] - lo[k]) / n as f64).max(f64::MIN_POSITIVE));
        let mut grid = Self {
            axis,
            uv,
            lo,
            cell,
            n,
            bins: vec![Vec::new(); n * n],
        };
        for (t, tri) in triangles.iter().enumerate() {
            let pts = tri.map(|i| grid.project(vertices[i]));
            let (a, b) = grid.range(
                [0, 1].map(|k| pts.iter().map(|p| p[k]).fold(f64::INFINITY, f64::min)),
                [0, 1].map(|k| pts.iter().map(|p| p[k]).fold(f64::NEG_INFINITY, f64::max)),
            );
            for i in a[0]..=b[0] {
                for j in a[1]..=b[1] {
                    grid.bins[i * n + j].push(t as u32);
                }
            }
        }
        grid
    }

    fn project(&self, p: V3) -> [f64; 2] {
        [p[self.uv[0]], p[self.uv[1]]]
    }

    /// The bins `lo..=hi` (per plane axis) that the box between `lo` and `hi` overlaps,
    /// clamped to the grid.
    fn range(&self, lo: [f64; 2], hi: [f64; 2]) -> ([usize; 2], [usize; 2]) {
        let bin = |k: usize, x: f64| {
            ((x - self.lo[k]) / self.cell[k])
                .floor()
                .clamp(0.0, (self.n - 1) as f64) as usize
        };
        (
            [bin(0, lo[0]), bin(1, lo[1])],
            [bin(0, hi[0]), bin(1, hi[1])],
        )
    }

    /// The triangles whose bins the segment from `a` to `b` overlaps (with repeats).
    fn near_segment(&self, a: V3, b: V3) -> Vec<u32> {
        let (pa, pb) = (self.project(a), self.project(b));
        let (lo, hi) = self.range(
            [pa[0].min(pb[0]), pa[1].min(pb[1])],
            [pa[0].max(pb[0]), pa[1].max(pb[1])],
        );
        let mut out = Vec::new();
        for i in lo[0]..=hi[0] {
            for j in lo[1]..=hi[1] {
                out.extend_from_slice(&self.bins[i * self.n + j]);
            }
        }
        out
    }

    /// The winding number of the surface about `p` along `+axis`: the triangles the ray from
    /// `p` crosses (at or after `p`), each +1 where its normal has a positive `axis`
    /// component (the ray leaves the body there) and −1 where negative.
    fn winding(&self, p: V3, vertices: &[V3], triangles: &[[usize; 3]]) -> i64 {
        let q = self.project(p);
        let outside =
            (0..2).any(|k| q[k] < self.lo[k] || q[k] > self.lo[k] + self.cell[k] * self.n as f64);
        if outside {
            return 0;
        }
        let (bin, _) = self.range(q, q);
        self.bins[bin[0] * self.n + bin[1]]
            .iter()
            .filter_map(|&t| self.covers(q, triangles[t as usize], vertices))
            .filter(|&(along, _)| along >= p[self.axis])
            .map(|(_, facing)| facing)
            .sum()
    }

    /// Where the line through `q` along the axis meets triangle `tri`, if its projection
    /// covers `q`, and the sign of its normal's component along the axis. A point on an edge shared by two triangles is covered by exactly one of
    /// them (the edges' functions are computed from their lower-numbered vertex, so both
    /// triangles see the same value, and the edge belongs to the triangle on one side only).
    fn covers(&self, q: [f64; 2], tri: [usize; 3], vertices: &[V3]) -> Option<(f64, i64)> {
        let pts = tri.map(|i| self.project(vertices[i]));
        let area = cross2(sub2(pts[1], pts[0]), sub2(pts[2], pts[0]));
        if area == 0.0 {
            return None;
        }
        for k in 0..3 {
            let (i, j) = (tri[k], tri[(k + 1) % 3]);
            let (a, b) = (self.project(vertices[i]), self.project(vertices[j]));
            // The edge from its lower-numbered vertex, then turned to run from i to j.
            let (e, d) = if i < j {
                (cross2(sub2(b, a), sub2(q, a)), sub2(b, a))
            } else {
                let e = cross2(sub2(a, b), sub2(q, b));
                (-e, sub2(b, a))
            };
            // Inside: on the side of the interior (the sign of the area).
            let e = e * area.signum();
            let d = [d[0] * area.signum(), d[1] * area.signum()];
            let owns_edge = d[1] < 0.0 || (d[1] == 0.0 && d[0] > 0.0);
            if e < 0.0 || (e == 0.0 && !owns_edge) {
                return None;
            }
        }
        // The plane of the triangle: n · (x − v₀) = 0, solved for the axis' coordinate.
        let [v0, v1, v2] = tri.map(|i| vertices[i]);
        let n = vec3::cross(vec3::sub(v1, v0), vec3::sub(v2, v0));
        let (u, v, w) = (self.uv[0], self.uv[1], self.axis);
        if n[w] == 0.0 {
            return None;
        }
        let along = v0[w] - (n[u] * (q[0] - v0[u]) + n[v] * (q[1] - v0[v])) / n[w];
        Some((along, if n[w] > 0.0 { 1 } else { -1 }))
    }
}

fn sub2(a: [f64; 2], b: [f64; 2]) -> [f64; 2] {
    [a[0] - b[0], a[1] - b[1]]
}

fn cross2(a: [f64; 2], b: [f64; 2]) -> f64 {
    a[0] * b[1] - a[1] * b[0]
}

/// The `t ∈ [0, 1]` where `o + t d` meets the triangle `abc` (Möller & Trumbore 1997), edges
/// included.
fn segment_triangle(o: V3, d: V3, a: V3, b: V3, c: V3) -> Option<f64> {
    let (e1, e2) = (vec3::sub(b, a), vec3::sub(c, a));
    let p = vec3::cross(d, e2);
    let det = vec3::dot(e1, p);
    if det == 0.0 {
        return None;
    }
    let s = vec3::sub(o, a);
    let u = vec3::dot(s, p) / det;
    let q = vec3::cross(s, e1);
    let v = vec3::dot(d, q) / det;
    let t = vec3::dot(e2, q) / det;
    (u >= 0.0 && v >= 0.0 && u + v <= 1.0 && (0.0..=1.0).contains(&t)).then_some(t)
}
