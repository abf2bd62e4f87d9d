//! Criterion benches of what a body costs before the first step: a closed triangle mesh of
//! 100,000 triangles (a torus, so that rays cross it up to four times) voxelised into a 256³
//! lattice, and the links of D3Q19 it cuts, with the wall's distance along each, found.
//! Each prints, once, the solid volume against the torus's `2π²Rr²` (the mesh's facets lie
//! inside the smooth torus, so its volume is slightly smaller), so that a fast wrong answer
//! shows.
//!
//! ```text
//! cargo bench -p lbm-geometry --bench voxelize
//! ```

use std::f64::consts::PI;

use criterion::{Criterion, criterion_group, criterion_main};
use lbm_geometry::{Body, TriMesh};

/// The lattice's side.
const N: usize = 256;
/// The torus's ring radius in lattice units.
const R: f64 = 0.3 * N as f64;
/// The torus's tube radius in lattice units.
const RT: f64 = 0.12 * N as f64;

/// A torus of `ring × tube × 2` triangles centred in the lattice, its axis along z.
fn torus(ring: usize, tube: usize) -> TriMesh {
    let c = N as f64 / 2.0;
    let vertex = |i: usize, j: usize| {
        let (u, v) = (
            2.0 * PI * (i % ring) as f64 / ring as f64,
            2.0 * PI * (j % tube) as f64 / tube as f64,
        );
        let w = R + RT * v.cos();
        [c + w * u.cos(), c + w * u.sin(), c + RT * v.sin()]
    };
    let vertices = (0..ring)
        .flat_map(|i| (0..tube).map(move |j| (i, j)))
        .map(|(i, j)| vertex(i, j))
        .collect();
    let at = |i: usize, j: usize| (i % ring) * tube + j % tube;
    let triangles = (0..ring)
        .flat_map(|i| (0..tube).map(move |j| (i, j)))
        .flat_map(|(i, j)| {
            [
                [at(i, j), at(i + 1, j), at(i + 1, j + 1)],
                [at(i, j), at(i + 1, j + 1), at(i, j + 1)],
            ]
        })
        .collect();
    TriMesh::new(vertices, triangles).expect("a closed torus")
}

/// The 19 velocities of D3Q19.
fn d3q19() -> Vec<[i32; 3]> {
    let mut c = vec![[0, 0, 0]];
    for a in 0..3 {
        for s in [1, -1] {
            let mut v = [0; 3];
            v[a] = s;
            c.push(v);
        }
    }
    for (a, b) in [(0, 1), (0, 2), (1, 2)] {
        for (sa, sb) in [(1, 1), (1, -1), (-1, 1), (-1, -1)] {
            let mut v = [0; 3];
            v[a] = sa;
            v[b] = sb;
            c.push(v);
        }
    }
    c
}

fn voxelize(c: &mut Criterion) {
    let mesh = torus(250, 200);
    assert_eq!(mesh.len(), 100_000);
    let body = Body::mesh(mesh);
    let size = [N; 3];
    let solid = body.voxelize(size, 0..N);
    let volume = solid.iter().filter(|&&s| s).count() as f64;
    let exact = 2.0 * PI * PI * R * RT * RT;
    println!(
        "torus of {} triangles in {N}³: {volume} solid sites, {:+.3} % from 2π²Rr² = {exact:.0}",
        100_000,
        100.0 * (volume / exact - 1.0)
    );
    let cuts = body.cut_links(&d3q19(), size, [false; 3], 0..N);
    println!(
        "{} cut links of D3Q19, {} without a wall found along them",
        cuts.links.len(),
        cuts.unresolved
    );
    let mut g = c.benchmark_group("torus of 10⁵ triangles, 256³");
    g.sample_size(10);
    g.bench_function("voxelize", |b| b.iter(|| body.voxelize(size, 0..N)));
    g.bench_function("cut links (D3Q19)", |b| {
        b.iter(|| body.cut_links(&d3q19(), size, [false; 3], 0..N))
    });
    g.finish();
}

criterion_group!(benches, voxelize);
criterion_main!(benches);
