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

/// The icosahedron subdivided `levels` times, its vertices on the unit sphere.
fn icosphere(levels: usize) -> TriMesh {
    let g = (1.0 + 5f64.sqrt()) / 2.0;
    let mut v: Vec<V3> = vec![
        [-1.0, g, 0.0],
        [1.0, g, 0.0],
        [-1.0, -g, 0.0],
        [1.0, -g, 0.0],
        [0.0, -1.0, g],
        [0.0, 1.0, g],
        [0.0, -1.0, -g],
        [0.0, 1.0, -g],
        [g, 0.0, -1.0],
        [g, 0.0, 1.0],
        [-g, 0.0, -1.0],
        [-g, 0.0, 1.0],
    ];
    let mut t: Vec<[usize; 3]> = vec![
        [0, 11, 5],
        [0, 5, 1],
        [0, 1, 7],
        [0, 7, 10],
        [0, 10, 11],
        [1, 5, 9],
        [5, 11, 4],
        [11, 10, 2],
        [10, 7, 6],
        [7, 1, 8],
        [3, 9, 4],
        [3, 4, 2],
        [3, 2, 6],
        [3, 6, 8],
        [3, 8, 9],
        [4, 9, 5],
        [2, 4, 11],
        [6, 2, 10],
        [8, 6, 7],
        [9, 8, 1],
    ];
    for p in &mut v {
        *p = vec3::scale(*p, 1.0 / vec3::norm(*p));
    }
    for _ in 0..levels {
        let mut mid = std::collections::HashMap::new();
        let mut next = Vec::new();
        for tri in &t {
            let m: [usize; 3] = std::array::from_fn(|k| {
                let (a, b) = (tri[k], tri[(k + 1) % 3]);
                *mid.entry((a.min(b), a.max(b))).or_insert_with(|| {
                    let p = vec3::scale(vec3::add(v[a], v[b]), 0.5);
                    v.push(vec3::scale(p, 1.0 / vec3::norm(p)));
                    v.len() - 1
                })
            });
            next.extend([
                [tri[0], m[0], m[2]],
                [tri[1], m[1], m[0]],
                [tri[2], m[2], m[1]],
                [m[0], m[1], m[2]],
            ]);
        }
        t = next;
    }
    TriMesh::new(v, t).unwrap()
}

#[test]
fn a_sphere_mesh_differs_from_the_sphere_only_within_its_chords() {
    let mesh = icosphere(4); // 5120 triangles, edges about 0.08 of the radius
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
    let mesh = icosphere(2);
    let triangles: Vec<stl_io::Triangle> = (0..mesh.len())
        .map(|k| {
            let [a, b, c] = mesh.triangle(k);
            let n = vec3::cross(vec3::sub(b, a), vec3::sub(c, a));
            let f = |p: V3| stl_io::Vertex::new(p.map(|x| x as f32));
            stl_io::Triangle {
                normal: stl_io::Normal::new(n.map(|x| x as f32)),
                vertices: [f(a), f(b), f(c)],
            }
        })
        .collect();
    let binary = dir.path().join("sphere.stl");
    let mut file = std::fs::File::create(&binary).unwrap();
    stl_io::write_stl(&mut file, triangles.iter()).unwrap();
    drop(file);
    let mut ascii = String::from("solid sphere\n");
    for t in &triangles {
        ascii += &format!(
            "facet normal {} {} {}\nouter loop\n",
            t.normal[0], t.normal[1], t.normal[2]
        );
        for v in &t.vertices {
            ascii += &format!("vertex {:e} {:e} {:e}\n", v[0], v[1], v[2]);
        }
        ascii += "endloop\nendfacet\n";
    }
    ascii += "endsolid sphere\n";
    let text = dir.path().join("sphere-ascii.stl");
    std::fs::write(&text, ascii).unwrap();
    let place = |m: TriMesh| Body::mesh(m).scaled(6.0).unwrap().moved([8.2, 8.1, 7.9]);
    let (a, b) = (
        place(TriMesh::read_stl(&binary).unwrap()),
        place(TriMesh::read_stl(&text).unwrap()),
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
    // Files: a missing one, a directory, text that is no STL.
    let dir = tempfile::tempdir().unwrap();
    for path in [dir.path().join("missing.stl"), dir.path().to_path_buf()] {
        let e = TriMesh::read_stl(&path).unwrap_err().to_string();
        assert!(e.starts_with("STL file "), "{e}");
    }
    let junk = dir.path().join("junk.stl");
    std::fs::write(&junk, "solid x\nfacet nonsense\n").unwrap();
    assert!(TriMesh::read_stl(&junk).is_err());
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
