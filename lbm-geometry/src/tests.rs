//! The bodies against their exact shapes: volumes, wall distances on every cut link, meshes
//! against the analytic shapes they approximate, STL files, and the meshes refused.

use crate::vec3::{self, V3};
use crate::{Body, GeometryError, TriMesh};

/// The 27 velocities of D3Q27 (every link of the cube around a site).
fn d3q27() -> Vec<[i32; 3]> {
    let mut v = Vec::new();
    for z in -1..=1 {
        for y in -1..=1 {
            for x in -1..=1 {
                v.push([x, y, z]);
            }
        }
    }
    v
}

fn point(s: [usize; 3]) -> V3 {
    s.map(|v| v as f64)
}

/// The point where cut link `l` meets the wall.
fn wall_point(l: &crate::CutLink, velocities: &[[i32; 3]]) -> V3 {
    let c = velocities[l.i].map(f64::from);
    vec3::add(point(l.site), vec3::scale(c, l.q))
}

#[test]
fn a_sphere_has_its_volume_and_every_cut_link_ends_on_its_surface() {
    let (centre, r) = ([20.3, 19.7, 20.1], 9.5);
    let sphere = Body::sphere(centre, r).unwrap();
    let size = [41, 40, 41];
    let solid = sphere.voxelize(size, 0..41).iter().filter(|&&s| s).count() as f64;
    let exact = 4.0 / 3.0 * std::f64::consts::PI * r * r * r;
    assert!((solid / exact - 1.0).abs() < 0.01, "{solid} sites, {exact}");
    let v = d3q27();
    let cuts = sphere.cut_links(&v, size, [false; 3], 0..41);
    assert_eq!(cuts.unresolved, 0);
    assert!(cuts.links.len() > 1000, "{}", cuts.links.len());
    for l in &cuts.links {
        assert!(l.q > 0.0 && l.q <= 1.0, "{l:?}");
        let d = vec3::norm(vec3::sub(wall_point(l, &v), centre));
        assert!((d - r).abs() < 1e-12, "{l:?}: at {d} from the centre");
        assert!(!sphere.solid(l.site));
    }
}

#[test]
fn a_circle_cuts_the_d2q9_links_on_its_rim() {
    let v = [
        [0, 0, 0],
        [1, 0, 0],
        [0, 1, 0],
        [-1, 0, 0],
        [0, -1, 0],
        [1, 1, 0],
        [-1, 1, 0],
        [-1, -1, 0],
        [1, -1, 0],
    ];
    let circle = Body::circle([30.5, 20.25], 7.3).unwrap();
    let cuts = circle.cut_links(&v, [60, 40, 1], [false; 3], 0..60);
    assert_eq!(cuts.unresolved, 0);
    for l in &cuts.links {
        let p = wall_point(l, &v);
        let d = ((p[0] - 30.5).powi(2) + (p[1] - 20.25).powi(2)).sqrt();
        assert!((d - 7.3).abs() < 1e-12, "{l:?}");
    }
    // Every fluid site next to the disc has a cut link; none farther away.
    for l in &cuts.links {
        let d = ((l.site[0] as f64 - 30.5).powi(2) + (l.site[1] as f64 - 20.25).powi(2)).sqrt();
        assert!(d > 7.3 && d < 7.3 + 2f64.sqrt(), "{l:?}");
    }
}

#[test]
fn a_cylinder_is_cut_on_its_side_and_on_its_ends() {
    // Along x, 10 long, radius 3, its centre at (10, 10, 10).
    let c = Body::cylinder([10.0, 10.0, 10.0], [2.0, 0.0, 0.0], 3.0, 10.0).unwrap();
    assert!(c.solid([5, 10, 10]) && c.solid([15, 10, 10]) && !c.solid([16, 10, 10]));
    assert!(c.solid([10, 13, 10]) && !c.solid([10, 14, 10]));
    // From (16.5, 10, 10) towards −x: the end at x = 15 is 1.5 away.
    assert_eq!(c.entry([16.5, 10.0, 10.0], [14.5, 10.0, 10.0]), Some(0.75));
    // From (10, 14, 10) down: the side at y = 13.
    assert_eq!(c.entry([10.0, 14.0, 10.0], [10.0, 12.0, 10.0]), Some(0.5));
    // Parallel to the axis outside the radius: never.
    assert_eq!(c.entry([0.0, 14.0, 10.0], [20.0, 14.0, 10.0]), None);
}

/// The 12 triangles of the box between `lo` and `hi`, counter-clockwise from outside.
fn box_mesh(lo: V3, hi: V3) -> TriMesh {
    let v: Vec<V3> = (0..8)
        .map(|k| {
            [
                if k & 1 == 0 { lo[0] } else { hi[0] },
                if k & 2 == 0 { lo[1] } else { hi[1] },
                if k & 4 == 0 { lo[2] } else { hi[2] },
            ]
        })
        .collect();
    let quads = [
        [0, 2, 3, 1], // z = lo
        [4, 5, 7, 6], // z = hi
        [0, 1, 5, 4], // y = lo
        [2, 6, 7, 3], // y = hi
        [0, 4, 6, 2], // x = lo
        [1, 3, 7, 5], // x = hi
    ];
    let t = quads
        .iter()
        .flat_map(|q| [[q[0], q[1], q[2]], [q[0], q[2], q[3]]])
        .collect();
    TriMesh::new(v, t).unwrap()
}

#[test]
fn a_box_mesh_is_the_box_placed_the_same_way() {
    let (lo, hi) = ([-5.3, -3.7, -4.1], [5.3, 3.7, 4.1]);
    let place = |b: Body| {
        b.rotated([0.0, 0.0, 1.0], 30.0)
            .and_then(|b| b.rotated([1.0, 1.0, 0.0], 20.0))
            .and_then(|b| b.scaled(1.5))
            .map(|b| b.moved([16.2, 15.9, 16.1]))
            .unwrap()
    };
    let mesh = place(Body::mesh(box_mesh(lo, hi)));
    let cuboid = place(Body::cuboid(lo, hi).unwrap());
    let size = [33, 32, 33];
    let (a, b) = (mesh.voxelize(size, 0..33), cuboid.voxelize(size, 0..33));
    let differ = a.iter().zip(&b).filter(|(x, y)| x != y).count();
    assert_eq!(
        differ,
        0,
        "of {} solid sites",
        b.iter().filter(|&&s| s).count()
    );
    let v = d3q27();
    let (m, c) = (
        mesh.cut_links(&v, size, [false; 3], 0..33),
        cuboid.cut_links(&v, size, [false; 3], 0..33),
    );
    assert_eq!((m.unresolved, c.unresolved), (0, 0));
    assert_eq!(m.links.len(), c.links.len());
    for (x, y) in m.links.iter().zip(&c.links) {
        assert_eq!((x.site, x.i), (y.site, y.i));
        assert!((x.q - y.q).abs() < 1e-9, "{x:?} vs {y:?}");
    }
}

#[test]
fn a_sphere_mesh_differs_from_the_sphere_only_within_its_chords() {
    let mesh = TriMesh::icosphere(4); // 5120 triangles, edges about 0.08 of the radius
    let (centre, r) = ([16.3, 15.8, 16.2], 10.0);
    let body = Body::mesh(mesh).scaled(r).unwrap().moved(centre);
    let sphere = Body::sphere(centre, r).unwrap();
    let size = [33, 32, 33];
    // The chords lie within r (1 − cos(edge/2r)) ≈ 0.01 of the sphere, inside it.
    let sag = 0.01 * r;
    let (a, b) = (body.voxelize(size, 0..33), sphere.voxelize(size, 0..33));
    let mut differ = 0;
    for x in 0..33 {
        for z in 0..33 {
            for y in 0..32 {
                let k = (x * 33 + z) * 32 + y;
                if a[k] != b[k] {
                    differ += 1;
                    let d = vec3::norm(vec3::sub(point([x, y, z]), centre));
                    assert!(d > r - sag && d <= r, "({x}, {y}, {z}) at {d}");
                }
            }
        }
    }
    let solid = b.iter().filter(|&&s| s).count();
    assert!(differ < solid / 100, "{differ} of {solid}");
    let v = d3q27();
    let cuts = body.cut_links(&v, size, [false; 3], 0..33);
    assert_eq!(cuts.unresolved, 0);
    for l in &cuts.links {
        let d = vec3::norm(vec3::sub(wall_point(l, &v), centre));
        assert!(d > r - sag && d < r + 1e-9, "{l:?} at {d}");
    }
}

#[test]
fn binary_and_ascii_stl_files_give_the_same_body() {
    let dir = tempfile::tempdir().unwrap();
    let mesh = TriMesh::icosphere(2);
    let binary = dir.path().join("sphere.stl");
    mesh.write_stl(&mut std::fs::File::create(&binary).unwrap())
        .unwrap();
    assert_eq!(
        std::fs::metadata(&binary).unwrap().len(),
        84 + 50 * mesh.len() as u64
    );
    // The corners as the binary file holds them (single precision), written as CAD tools
    // write ASCII: a byte-order mark, a bare `solid`, upper-case keywords.
    let mut ascii = String::from("\u{feff}solid\n");
    for k in 0..mesh.len() {
        ascii += "  FACET NORMAL 0 0 0\n    OUTER LOOP\n";
        for v in mesh.triangle(k) {
            let v = v.map(|c| c as f32);
            ascii += &format!("      VERTEX {:e} {:e} {:e}\n", v[0], v[1], v[2]);
        }
        ascii += "    ENDLOOP\n  ENDFACET\n";
    }
    ascii += "ENDSOLID\n";
    let text = dir.path().join("sphere-ascii.stl");
    std::fs::write(&text, ascii).unwrap();
    let place = |m: TriMesh| Body::mesh(m).scaled(6.0).unwrap().moved([8.2, 8.1, 7.9]);
    let (a, b) = (
        place(TriMesh::parse_stl(&std::fs::read(&binary).unwrap(), "binary").unwrap()),
        place(TriMesh::parse_stl(&std::fs::read(&text).unwrap(), "text").unwrap()),
    );
    let (va, vb) = (
        a.voxelize([17, 17, 17], 0..17),
        b.voxelize([17, 17, 17], 0..17),
    );
    assert_eq!(va, vb);
    assert!(va.iter().filter(|&&s| s).count() > 500);
}

#[test]
fn meshes_that_are_not_closed_are_refused_with_where_they_leak() {
    let closed = box_mesh([0.0; 3], [1.0; 3]);
    let (v, mut t) = (closed.vertices().to_vec(), closed.triangles().to_vec());
    t.pop();
    let e = TriMesh::new(v.clone(), t.clone()).unwrap_err();
    let GeometryError::NotClosed(m) = &e else {
        panic!("{e}")
    };
    assert!(m.contains("3 edge(s) bound one triangle only") && m.contains("e.g. the edge from ["));
    // A triangle turned inside out.
    let mut turned = closed.triangles().to_vec();
    turned[0].swap(1, 2);
    let e = TriMesh::new(v.clone(), turned).unwrap_err().to_string();
    assert!(
        e.contains("the mesh is not closed") && e.contains("repair it"),
        "{e}"
    );
    // Text that is no STL.
    let e = TriMesh::parse_stl(b"solid x\nfacet nonsense\n", "junk.stl").unwrap_err();
    assert!(e.to_string().starts_with("STL file junk.stl"), "{e}");
}

/// The STL reader says what is wrong with a file: empty, shorter than a header, a header whose
/// count the file's length belies (at once, allocating nothing for it), a bad token's line.
#[test]
fn stl_files_are_refused_with_what_is_wrong() {
    let e = |bytes: &[u8]| TriMesh::parse_stl(bytes, "f.stl").unwrap_err().to_string();
    assert!(e(b"").contains("the file is empty"), "{}", e(b""));
    assert!(
        e(&[1u8; 40]).contains("fewer than the 84"),
        "{}",
        e(&[1u8; 40])
    );
    let mut lying = vec![0u8; 84];
    lying[80..84].copy_from_slice(&50_000_000u32.to_le_bytes());
    let m = e(&lying);
    assert!(
        m.contains("counts 50000000 triangles, 2500000084 bytes") && m.contains("has 84 bytes"),
        "{m}"
    );
    let mut sphere = Vec::new();
    TriMesh::icosphere(1).write_stl(&mut sphere).unwrap();
    let m = e(&sphere[..sphere.len() - 7]);
    assert!(m.contains("truncated"), "{m}");
    // A binary file whose header starts with `solid`, as some exporters write: binary still.
    sphere[..11].copy_from_slice(b"solid part1");
    assert_eq!(TriMesh::parse_stl(&sphere, "f.stl").unwrap().len(), 80);
    let bad = "solid a\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1 0 x\n";
    let m = e(bad.as_bytes());
    assert!(
        m.contains("line 5: `x` where a finite number was expected"),
        "{m}"
    );
    let m = e(b"solid a\nfacet normal 0 0 1\nouter loop\n");
    assert!(
        m.contains("ends after line 3 where `vertex` was expected"),
        "{m}"
    );
    let m = e(b"solid a\nfacets\n");
    assert!(
        m.contains("line 2: `facets` where `facet` or `endsolid`"),
        "{m}"
    );
    assert!(e(b"solid a\nendsolid a\n").contains("no facet"));
}

/// A UV sphere written with sin and cos, as scripts write it, meets itself at its seam and
/// its poles only to within round-off (2·10⁻¹⁶ here): its vertices are welded, the triangles
/// at the poles that so lose a corner are dropped, and the sphere is closed.
#[test]
fn a_sphere_whose_seam_meets_within_round_off_is_closed() {
    let (nlat, nlon) = (12, 24);
    let at = |i: usize, j: usize| {
        let (t, p) = (
            std::f64::consts::PI * i as f64 / nlat as f64,
            2.0 * std::f64::consts::PI * j as f64 / nlon as f64,
        );
        [t.sin() * p.cos(), t.sin() * p.sin(), t.cos()]
    };
    assert_ne!(
        at(3, 0),
        at(3, nlon),
        "the seam meets within round-off only"
    );
    let mut text = String::from("solid uv\n");
    for i in 0..nlat {
        for j in 0..nlon {
            let (a, b, c, d) = (at(i, j), at(i + 1, j), at(i + 1, j + 1), at(i, j + 1));
            for t in [[a, b, c], [a, c, d]] {
                text += "facet normal 0 0 0\nouter loop\n";
                for v in t {
                    text += &format!("vertex {:e} {:e} {:e}\n", v[0], v[1], v[2]);
                }
                text += "endloop\nendfacet\n";
            }
        }
    }
    text += "endsolid uv\n";
    let mesh = TriMesh::parse_stl(text.as_bytes(), "uv.stl").unwrap();
    assert_eq!(mesh.vertices().len(), (nlat - 1) * nlon + 2);
    assert_eq!(mesh.len(), 2 * nlon * (nlat - 1));
    assert!(mesh.contains([0.1, 0.2, 0.3]) && !mesh.contains([0.9, 0.5, 0.0]));
}

/// Two closed surfaces in one mesh, overlapping or one inside the other, are their union: no
/// pocket of fluid is sealed where they overlap. A surface turned inward inside another is a
/// cavity.
#[test]
fn overlapping_and_nested_surfaces_are_a_union() {
    let join = |meshes: &[TriMesh]| {
        let (mut v, mut t) = (Vec::new(), Vec::new());
        for m in meshes {
            let base = v.len();
            v.extend_from_slice(m.vertices());
            t.extend(m.triangles().iter().map(|tri| tri.map(|i| i + base)));
        }
        (v, t)
    };
    let (v, t) = join(&[
        box_mesh([0.0; 3], [2.0; 3]),
        box_mesh([1.0, 0.5, 0.5], [3.0, 1.5, 1.5]),
    ]);
    let overlap = TriMesh::new(v, t).unwrap();
    for p in [[0.5, 1.0, 1.0], [1.5, 1.0, 1.0], [2.5, 1.0, 1.0]] {
        assert!(overlap.contains(p), "{p:?}");
    }
    assert!(!overlap.contains([2.5, 1.8, 1.0]));
    let (v, t) = join(&[box_mesh([0.0; 3], [4.0; 3]), box_mesh([1.0; 3], [2.0; 3])]);
    assert!(
        TriMesh::new(v.clone(), t.clone())
            .unwrap()
            .contains([1.5; 3])
    );
    let inner = 12..;
    let mut cavity = t;
    for tri in &mut cavity[inner] {
        tri.swap(1, 2);
    }
    let hollow = TriMesh::new(v, cavity).unwrap();
    assert!(!hollow.contains([1.5; 3]) && hollow.contains([3.0; 3]));
}

#[test]
fn a_union_is_solid_where_a_member_is_and_is_entered_at_the_first_member() {
    let a = Body::sphere([5.0, 5.0, 5.0], 2.0).unwrap();
    let b = Body::cuboid([8.0, 3.0, 3.0], [10.0, 7.0, 7.0]).unwrap();
    let u = Body::union(vec![a.clone(), b.clone()]);
    for s in [[5, 5, 5], [9, 5, 5], [7, 5, 5], [0, 0, 0]] {
        assert_eq!(u.solid(s), a.solid(s) || b.solid(s), "{s:?}");
    }
    // From x = 0 to 12 along y = z = 5: the sphere first, at x = 3.
    assert_eq!(u.entry([0.0, 5.0, 5.0], [12.0, 5.0, 5.0]), Some(0.25));
    // From x = 7.5 towards +x: the box, at x = 8.
    assert_eq!(u.entry([7.5, 5.0, 5.0], [9.5, 5.0, 5.0]), Some(0.25));
}

#[test]
fn sizes_and_angles_that_are_not_numbers_are_refused() {
    assert!(Body::sphere([0.0; 3], 0.0).is_err());
    assert!(Body::sphere([f64::NAN, 0.0, 0.0], 1.0).is_err());
    assert!(Body::circle([0.0, 0.0], -1.0).is_err());
    assert!(Body::cylinder([0.0; 3], [0.0; 3], 1.0, 1.0).is_err());
    assert!(Body::cuboid([0.0; 3], [1.0, 0.0, 1.0]).is_err());
    let s = Body::sphere([0.0; 3], 1.0).unwrap();
    assert!(s.clone().scaled(f64::INFINITY).is_err());
    assert!(s.rotated([0.0; 3], 10.0).is_err());
}

#[test]
fn bounds_hold_each_shape_where_it_is_placed() {
    let close = |(lo, hi): (V3, V3), (elo, ehi): (V3, V3)| {
        for a in 0..3 {
            assert!(
                (lo[a] - elo[a]).abs() < 1e-9 && (hi[a] - ehi[a]).abs() < 1e-9,
                "{lo:?} {hi:?}"
            );
        }
    };
    let sphere = Body::sphere([1.0, 2.0, 3.0], 2.0)
        .unwrap()
        .scaled(2.0)
        .unwrap();
    close(sphere.bounds(), ([-2.0, 0.0, 2.0], [6.0, 8.0, 10.0]));
    let mesh = Body::mesh(TriMesh::icosphere(3))
        .rotated([1.0, 1.0, 0.0], 37.0)
        .unwrap()
        .scaled(5.0)
        .unwrap()
        .moved([10.0, 20.0, 30.0]);
    let (lo, hi) = mesh.bounds();
    for a in 0..3 {
        assert!(lo[a] >= [5.0, 15.0, 25.0][a] - 1e-9 && lo[a] < [5.0, 15.0, 25.0][a] + 0.1);
        assert!(hi[a] <= [15.0, 25.0, 35.0][a] + 1e-9 && hi[a] > [15.0, 25.0, 35.0][a] - 0.1);
    }
    let cube = Body::cuboid([0.0; 3], [2.0; 3])
        .unwrap()
        .rotated([0.0, 0.0, 1.0], 45.0)
        .unwrap();
    let d = 2f64.sqrt();
    close(cube.bounds(), ([-d, 0.0, 0.0], [d, 2.0 * d, 2.0]));
    let circle = Body::circle([4.0, 5.0], 1.5).unwrap();
    let (lo, hi) = circle.bounds();
    assert_eq!((lo[0], hi[0], lo[1], hi[1]), (2.5, 5.5, 3.5, 6.5));
    assert!(lo[2] == f64::NEG_INFINITY && hi[2] == f64::INFINITY);
    let both = Body::union(vec![sphere, circle]);
    let (lo, hi) = both.bounds();
    assert_eq!((lo[0], hi[1]), (-2.0, 8.0));
}
