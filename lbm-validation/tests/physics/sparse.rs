//! Sparse domains ([`lbm::blocks::Blocks::sparse`]): a vessel in a box cut into blocks, only
//! those that hold fluid allocated, each block a thread of a [`Threads`] group (MPI ranks run
//! the same code through `lbm::group::Ranks`). A ring of pipe (a torus, whose blocks meet
//! along x, y and z and across the corners of blocks left out) computes the whole box's
//! fluid bit for bit in both schemes, and its checkpoint resumes on one process; a straight
//! pipe in a tenth of the box's blocks holds under 0.45 of the whole box's populations and
//! carries Hagen–Poiseuille flow.

use lbm::blocks::Decomposition::Sparse;
use lbm::distributed::DistLattice;
use lbm::domain::{GlobalSpec, sparse_blocks};
use lbm::group::Threads;
use lbm::models::{D3Q19Trt, D3Q19TrtParams};

use super::d3_lattice::structured;
use super::lattice_blocks::{bits, single_run};
use lbm::{
    Block, BoundarySpec, CAoSoa, Layout, Model, Obstacles, Scheme, Soa, Solver, read_checkpoint,
};

/// The torus's box, 48 × 48 × 16 sites, in blocks of 12 × 12 × 8 (4 × 4 × 2 of them).
const TORUS: [usize; 3] = [48, 48, 16];
const TORUS_BLOCK: [usize; 3] = [12, 12, 8];

fn torus_solid(x: usize, y: usize, z: usize) -> bool {
    let (c, big, small) = (23.5, 12.0, 3.2);
    let ring = (x as f64 - c).hypot(y as f64 - c) - big;
    ring.hypot(z as f64 - 7.5) > small
}

/// A ring of pipe in a periodic box, driven along x and y by a body force.
fn torus() -> GlobalSpec<D3Q19Trt> {
    GlobalSpec {
        lx: TORUS[0],
        ly: TORUS[1],
        lz: TORUS[2],
        params: D3Q19TrtParams {
            tau: 0.7,
            magic: 0.25,
            ax: 2e-5,
            ay: -1e-5,
            az: 0.0,
        },
        boundaries: BoundarySpec {
            solid: Some(Obstacles::voxels(torus_solid)),
            ..BoundarySpec::periodic()
        },
    }
}

/// The populations at the fluid sites (site-major, `Q` a site) of a lattice's whole box.
fn fluid_bits(populations: &[f64], size: [usize; 3]) -> Vec<u64> {
    let q = D3Q19Trt::Q;
    let fluid = |s: usize| {
        let (x, s) = (s / (size[1] * size[2]), s % (size[1] * size[2]));
        !torus_solid(x, s % size[1], s / size[1])
    };
    (populations.chunks_exact(q).enumerate())
        .filter(|&(s, _)| fluid(s))
        .flat_map(|(_, f)| bits(f))
        .collect()
}

/// The torus's blocks kept: those within a site of its fluid.
fn torus_blocks() -> usize {
    sparse_blocks(&torus(), TORUS_BLOCK, None).unwrap().count()
}

/// The fluid's populations and every site's moments (solid: 0) of the sparse torus after
/// `steps` steps in `scheme`, gathered on the first thread.
fn sparse_run<L: Layout>(scheme: Scheme, steps: u64) -> (Vec<u64>, Vec<u64>) {
    let runs = Threads::run(torus_blocks(), |t| {
        let mut lat =
            DistLattice::<D3Q19Trt, L, f64>::new(Box::new(t), torus(), Sparse(TORUS_BLOCK), scheme)
                .unwrap();
        lat.set_equilibrium_at(&structured(TORUS)).unwrap();
        lat.advance(steps).unwrap();
        lat.check().unwrap();
        let moments = lat.output_moments().unwrap();
        let all = lat.gather().unwrap();
        (all.map(|g| g.local_populations().unwrap()), moments)
    });
    let moments = (0..D3Q19Trt::MOMENT_NAMES.len())
        .flat_map(|j| {
            runs.iter()
                .flat_map(move |(_, m)| bits(&m[j]))
                .collect::<Vec<_>>()
        })
        .collect();
    let populations = runs.into_iter().next().and_then(|r| r.0).unwrap();
    (fluid_bits(&populations, TORUS), moments)
}

/// The whole box on one lattice, as [`sparse_run`] gives it.
fn dense_run<L: Layout>(steps: u64) -> (Vec<u64>, Vec<u64>) {
    let (populations, moments) = single_run::<L>(torus(), &structured(TORUS), steps);
    (fluid_bits(&populations, TORUS), moments)
}

/// 24 of the 32 blocks hold fluid (the four corner columns of blocks are solid): in both
/// schemes and in SoA and CAoSoA⟨4⟩ the fluid's populations and every site's moments are the
/// whole box's, bit for bit; so are they from a checkpoint the blocks wrote, resumed on one
/// process.
#[test]
fn a_sparse_domain_is_the_whole_box_bit_for_bit_and_resumes_dense() {
    assert_eq!(torus_blocks(), 24);
    let want = dense_run::<Soa>(9);
    for scheme in [Scheme::TwoCopy, Scheme::InPlace] {
        let got = sparse_run::<Soa>(scheme, 9);
        assert!(
            got.0 == want.0,
            "{}: the fluid's populations",
            scheme.name()
        );
        assert!(got.1 == want.1, "{}: the moments", scheme.name());
    }
    // In CAoSoA⟨4⟩, whose blocks pad their ghost lines along y to its clusters.
    let want = dense_run::<CAoSoa<4>>(9);
    let got = sparse_run::<CAoSoa<4>>(Scheme::InPlace, 9);
    assert!(got == want, "CAoSoA⟨4⟩ in place");

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sparse.lbm");
    Threads::run(torus_blocks(), |t| {
        let mut lat = DistLattice::<D3Q19Trt, Soa, f64>::new(
            Box::new(t),
            torus(),
            Sparse(TORUS_BLOCK),
            Scheme::InPlace,
        )
        .unwrap();
        lat.set_equilibrium_at(&structured(TORUS)).unwrap();
        lat.advance(4).unwrap();
        lat.write_checkpoint(&path).unwrap();
    });
    let checkpoint = read_checkpoint::<D3Q19Trt, f64>(&path).unwrap();
    assert!(checkpoint.header.sparse && checkpoint.header.shards.len() == 24);
    let mut one = torus().lattice::<Soa, f64>(Scheme::TwoCopy).unwrap();
    one.restore(&checkpoint, &path).unwrap();
    one.advance(5).unwrap();
    let resumed = fluid_bits(&one.local_populations().unwrap(), TORUS);
    assert!(resumed == want.0, "resumed on one process");
}

/// A refusal that says how many processes the blocks kept need.
#[test]
fn a_sparse_domain_on_the_wrong_process_count_says_how_many_it_needs() {
    let refused = Threads::run(2, |t| {
        DistLattice::<D3Q19Trt, Soa, f64>::new(
            Box::new(t),
            torus(),
            Sparse(TORUS_BLOCK),
            Scheme::TwoCopy,
        )
        .err()
        .map(|e| e.to_string())
    });
    for e in refused {
        let e = e.expect("refused");
        assert!(e.contains("24 hold fluid: run it on 24 processes"), "{e}");
    }
}

/// The straight pipe's box, 64 × 48 × 48 sites, in blocks of 16 (4 × 3 × 3 of them).
const PIPE: [usize; 3] = [64, 48, 48];
const PIPE_BLOCK: [usize; 3] = [16, 16, 16];
const RADIUS: f64 = 6.0;
const AXIS: f64 = 23.5;

/// The pipe's radius at `(y, z)`.
fn from_axis(y: f64, z: f64) -> f64 {
    (y - AXIS).hypot(z - AXIS)
}

/// A pipe of radius 6 along x, its wall where the circle crosses the links, the flow driven
/// by the body force `a` along x (TRT, τ = 0.8, Λ = 3/16).
fn pipe(a: f64) -> GlobalSpec<D3Q19Trt> {
    let wall = Obstacles::voxels(|_, y, z| from_axis(y as f64, z as f64) >= RADIUS)
        .with_wall_distance(|[_, y, z], c| {
            // From the fluid site `p` along `c`: where `|p + q c|` meets the circle.
            let (py, pz) = (y as f64 - AXIS, z as f64 - AXIS);
            let (cy, cz) = (f64::from(c[1]), f64::from(c[2]));
            let (aa, b) = (cy * cy + cz * cz, py * cy + pz * cz);
            let disc = b * b - aa * (py * py + pz * pz - RADIUS * RADIUS);
            (aa > 0.0 && disc >= 0.0)
                .then(|| (-b + disc.sqrt()) / aa)
                .filter(|&q| q > 0.0 && q <= 1.0)
        });
    GlobalSpec {
        lx: PIPE[0],
        ly: PIPE[1],
        lz: PIPE[2],
        params: D3Q19TrtParams {
            tau: 0.8,
            magic: 3.0 / 16.0,
            ax: a,
            ay: 0.0,
            az: 0.0,
        },
        boundaries: BoundarySpec {
            solid: Some(wall),
            ..BoundarySpec::periodic()
        },
    }
}

/// Four of the pipe's 36 blocks hold fluid (5 % of the box's sites): their populations,
/// ghost layers included, are 0.15 of the whole box's (at most 0.45 asked of a domain of at
/// most 30 % fluid). Driven by a body force `a`, the steady flow is Hagen–Poiseuille's,
/// `u(r) = a (R² − r²) / 4ν` (Hagen 1839, Poiseuille 1840; e.g. White, *Viscous Fluid Flow*,
/// 3rd ed., §3-3.4), its flow rate `π a R⁴ / 8ν`: every fluid site within 2 % of `u_max`.
#[test]
fn a_pipe_in_a_tenth_of_its_blocks_holds_a_sixth_of_the_memory_and_carries_poiseuille_flow() {
    let a = 1e-6;
    let blocks = sparse_blocks(&pipe(a), PIPE_BLOCK, None).unwrap();
    assert_eq!((blocks.count(), blocks.cut().blocks()), (4, 36));
    let h = D3Q19Trt::HALO;
    let runs = Threads::run(blocks.count(), |t| {
        let mut lat = DistLattice::<D3Q19Trt, Soa, f64>::new(
            Box::new(t),
            pipe(a),
            Sparse(PIPE_BLOCK),
            Scheme::InPlace,
        )
        .unwrap();
        lat.set_equilibrium_at(&|_, _| vec![1.0, 0.0, 0.0, 0.0])
            .unwrap();
        lat.advance(800).unwrap();
        let stored = lat.slab().frame().stored;
        let sites = (stored[0] + 2 * h) * stored[1] * stored[2];
        let u = lat.output_moments().unwrap();
        (sites, lat.output_planes(), u)
    });
    let sparse: usize = runs.iter().map(|r| r.0).sum();
    let dense = (PIPE[0] + 2 * h) * PIPE[1] * PIPE[2];
    let share = sparse as f64 / dense as f64;
    assert!(
        share < 0.16,
        "the blocks kept hold {share:.3} of the box's populations"
    );

    let nu = (0.8 - 0.5) / 3.0;
    let u_max = a * RADIUS * RADIUS / (4.0 * nu);
    let ux = D3Q19Trt::MOMENT_NAMES
        .iter()
        .position(|&n| n == "ux")
        .unwrap();
    let (mut worst, mut flow) = (0.0f64, 0.0);
    let (xs, u) = (&runs[0].1, &runs[0].2[ux]);
    assert_eq!(xs.start, 0);
    for z in 0..PIPE[2] {
        for y in 0..PIPE[1] {
            let r = from_axis(y as f64, z as f64);
            if r < RADIUS {
                let got = u[z * PIPE[1] + y];
                let want = a * (RADIUS * RADIUS - r * r) / (4.0 * nu);
                worst = worst.max((got - want).abs() / u_max);
                flow += got;
            }
        }
    }
    let exact_flow = std::f64::consts::PI * a * RADIUS.powi(4) / (8.0 * nu);
    eprintln!(
        "pipe: worst {worst:.4} of u_max, flow {flow:.4e} against {exact_flow:.4e}, share {share:.3}"
    );
    assert!(worst < 0.02, "the profile is off by {worst:.4} of u_max");
    assert!(
        (flow / exact_flow - 1.0).abs() < 0.03,
        "flow rate {flow:e} against {exact_flow:e}"
    );
}
