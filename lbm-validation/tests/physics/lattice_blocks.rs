//! Three-dimensional lattices cut into blocks ([`lbm::blocks`]) along 1, 2 and 3 axes, each
//! block a thread of a [`Threads`] group (MPI ranks run the same code through
//! `lbm::group::Ranks`: `tests/mpi_ring.rs`): on 1, 2, 3, 4, 6 and 8 processes, both
//! streaming schemes, every cut gives the single lattice's bits — walls on every side but the
//! periodic x, a lid moving in x and z, a sphere across a block corner, a body force — and a
//! checkpoint written on 8 processes cut 2 × 2 × 2 resumes on 3 cut 1 × 1 × 3, bitwise.

use lbm::blocks::Cut;
use lbm::distributed::DistLattice;
use lbm::domain::GlobalSpec;
use lbm::group::Threads;
use lbm::models::D3Q19Trt;

use super::d3_lattice::{structured, trt};
use lbm::{
    Block, BoundarySpec, CAoSoa, Layout, Model, Obstacles, Scheme, Soa, Solver, Wall,
    read_checkpoint,
};

/// 12 × 16 × 10 sites: room for three blocks along every axis.
const SIZE: [usize; 3] = [12, 16, 10];

/// Walls below and above in y and z, a lid moving in x and z, x periodic; a sphere whose
/// centre is the corner of the blocks of a 2 × 2 × 2 cut.
fn spec() -> GlobalSpec<D3Q19Trt> {
    let c = SIZE.map(|n| n as f64 / 2.0);
    GlobalSpec {
        lx: SIZE[0],
        ly: SIZE[1],
        lz: SIZE[2],
        params: trt(),
        boundaries: BoundarySpec {
            top: Some(Wall::BounceBack {
                velocity: [0.02, 0.0, 0.01],
            }),
            bottom: Some(Wall::NO_SLIP),
            back: Some(Wall::NO_SLIP),
            front: Some(Wall::NO_SLIP),
            solid: Some(Obstacles::voxels(move |x, y, z| {
                let d = [x, y, z].map(|v| v as f64);
                (0..3).map(|a| (d[a] - c[a] + 0.5).powi(2)).sum::<f64>() < 6.0
            })),
            ..BoundarySpec::periodic()
        },
    }
}

/// A state with structure along every axis.
fn initial(x: usize, s: usize) -> Vec<f64> {
    structured(SIZE)(x, s)
}

/// Every site's post-collision populations as bits, gathered from the lattice cut `cut`
/// after `steps` steps in `scheme` (the first thread's), and the moment fields every thread
/// writes ([`Solver::output_moments`]: a block's read in place, moved to an even share of
/// the planes), joined in the order of the planes.
fn cut_run<L: Layout>(cut: Cut, scheme: Scheme, steps: u64) -> (Vec<u64>, Vec<u64>) {
    let runs = Threads::run(cut.blocks(), |t| {
        let mut lat =
            DistLattice::<D3Q19Trt, L, f64>::new(Box::new(t), spec(), cut, scheme).unwrap();
        lat.set_equilibrium_at(&initial).unwrap();
        lat.advance(steps).unwrap();
        lat.check().unwrap();
        let moments = (lat.output_planes(), lat.output_moments().unwrap());
        let all = lat.gather().unwrap();
        (all.map(|g| bits(&g.local_populations().unwrap())), moments)
    });
    let mut planes = 0;
    let moments = (0..D3Q19Trt::MOMENT_NAMES.len())
        .flat_map(|j| {
            runs.iter()
                .flat_map(move |(_, (_, m))| bits(&m[j]))
                .collect::<Vec<_>>()
        })
        .collect();
    for (_, (xs, _)) in &runs {
        assert_eq!(xs.start, planes, "cut {cut}: the planes written in order");
        planes = xs.end;
    }
    let populations = runs.into_iter().next().and_then(|r| r.0);
    (populations.expect("the first thread gathers"), moments)
}

pub(super) fn bits(f: &[f64]) -> Vec<u64> {
    f.iter().map(|v| v.to_bits()).collect()
}

/// The single two-copy lattice after `steps` steps: its populations and moments, as
/// [`cut_run`] gives them.
fn single<L: Layout>(steps: u64) -> (Vec<u64>, Vec<u64>) {
    let (populations, moments) = single_run::<L>(spec(), &initial, steps);
    (bits(&populations), moments)
}

/// The single two-copy lattice of `spec` from the moments `initial` after `steps` steps: its
/// populations, and its moments as bits.
pub(super) fn single_run<L: Layout>(
    spec: GlobalSpec<D3Q19Trt>,
    initial: &(dyn Fn(usize, usize) -> Vec<f64> + Sync),
    steps: u64,
) -> (Vec<f64>, Vec<u64>) {
    let mut lat = spec.lattice::<L, f64>(Scheme::TwoCopy).unwrap();
    lat.set_equilibrium(initial).unwrap();
    lat.advance(steps).unwrap();
    let moments = lat
        .local_moments()
        .unwrap()
        .iter()
        .flat_map(|m| bits(m))
        .collect();
    (lat.local_populations().unwrap(), moments)
}

/// Cuts along one, two and three axes on 1, 2, 3, 4, 6 and 8 processes, in SoA and in
/// CAoSoA⟨4⟩ (whose blocks pad their ghost lines along y to its clusters), both schemes
/// (an odd step count: the in-place blocks end in their odd state): the single lattice's
/// populations and moments.
#[test]
fn blocks_along_one_two_and_three_axes_are_the_single_lattice_bit_for_bit() {
    let cuts = [
        [1, 1, 1],
        [2, 1, 1],
        [1, 1, 2],
        [1, 3, 1],
        [2, 2, 1],
        [1, 2, 2],
        [3, 1, 2],
        [2, 2, 2],
    ];
    let want = single::<Soa>(9);
    for cut in cuts.map(Cut) {
        for scheme in [Scheme::TwoCopy, Scheme::InPlace] {
            let got = cut_run::<Soa>(cut, scheme, 9);
            assert!(got == want, "SoA cut {cut}, {}", scheme.name());
        }
    }
    let want = single::<CAoSoa<4>>(9);
    for cut in [[1, 2, 1], [2, 2, 2]].map(Cut) {
        for scheme in [Scheme::TwoCopy, Scheme::InPlace] {
            let got = cut_run::<CAoSoa<4>>(cut, scheme, 9);
            assert!(got == want, "CAoSoA⟨4⟩ cut {cut}, {}", scheme.name());
        }
    }
}

/// A checkpoint written by 8 processes cut 2 × 2 × 2 (a shard per block) resumes on 3
/// processes cut 1 × 1 × 3 and on one, and their runs end as the uncut run does, bitwise.
#[test]
fn a_checkpoint_of_eight_blocks_resumes_on_three_bitwise() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("blocks.lbm");
    Threads::run(8, |t| {
        let cut = Cut([2, 2, 2]);
        let mut lat =
            DistLattice::<D3Q19Trt, Soa, f64>::new(Box::new(t), spec(), cut, Scheme::InPlace)
                .unwrap();
        lat.set_equilibrium_at(&initial).unwrap();
        lat.advance(5).unwrap();
        lat.write_checkpoint(&path).unwrap();
    });
    let want = single::<Soa>(12).0;
    let checkpoint = read_checkpoint::<D3Q19Trt, f64>(&path).unwrap();
    let mut runs = Threads::run(3, |t| {
        let cut = Cut([1, 1, 3]);
        let mut lat =
            DistLattice::<D3Q19Trt, Soa, f64>::new(Box::new(t), spec(), cut, Scheme::TwoCopy)
                .unwrap();
        lat.restore(&checkpoint, &path).unwrap();
        assert_eq!(lat.steps_done(), 5);
        lat.advance(7).unwrap();
        lat.gather()
            .unwrap()
            .map(|g| bits(&g.local_populations().unwrap()))
    });
    assert!(runs.swap_remove(0).unwrap() == want, "resumed on 1 × 1 × 3");
    let mut one = spec().lattice::<Soa, f64>(Scheme::TwoCopy).unwrap();
    one.restore(&checkpoint, &path).unwrap();
    one.advance(7).unwrap();
    assert!(
        bits(&one.local_populations().unwrap()) == want,
        "resumed on one process"
    );
}
