//! Finite-difference grids cut into blocks ([`lbm::blocks`]), each block a thread of a
//! [`Threads`] group (the MPI ranks run the same code through `lbm::group::Ranks`, where
//! `tests/mpi_ring.rs` cuts a 3-D grid along 1, 2 and 3 axes and resumes its checkpoint on
//! another cut): every cut computes the single grid's bits — walls, periodic axes closed
//! across blocks, stencils that reach the corners — and bad cuts are refused.

use std::f64::consts::PI;

use lbm::backend::Backend;
use lbm::blocks::{Blocks, Cut, halo_nodes};
use lbm::fd::{FdGrid, FdLayout, FdScheme, Side};
use lbm::fd_cavity::{FdCavity, Scheme};
use lbm::group::{Threads, Transfers};

use super::fd::{AdvectRk3, AdvectRk3Params};

/// What a grid's run leaves: every unknown at every node of the whole grid.
type Fields = Vec<Vec<f64>>;

/// Runs `run` on each block of `blocks`, each in a thread of a group, and returns the fields
/// gathered on the first (`build` makes a block's grid from its group handle and the cut).
fn on_blocks<S: FdScheme>(
    blocks: &Blocks,
    build: impl Fn(Box<dyn Transfers<f64>>, Blocks) -> FdGrid<S, f64> + Send + Sync + Copy + 'static,
    run: impl Fn(&mut FdGrid<S, f64>) + Send + Sync + Copy + 'static,
) -> Fields {
    let threads: Vec<_> = Threads::group(blocks.count())
        .into_iter()
        .map(|t| {
            let blocks = blocks.clone();
            std::thread::spawn(move || {
                let _guard = t.guard();
                let mut g = build(Box::new(t), blocks);
                run(&mut g);
                (0..S::UNKNOWNS.len())
                    .map(|u| g.gather(u))
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let mut all: Vec<_> = threads.into_iter().map(|t| t.join().unwrap()).collect();
    let root = all.remove(0);
    assert!(
        all.iter().flatten().all(Option::is_none),
        "the fields are gathered on the first block only"
    );
    root.into_iter().map(Option::unwrap).collect()
}

/// The cavity (forward Euler, its 19-point stencil reaching the corners, walls extrapolating
/// the pressure) on cuts along x, y and both is the single grid bit for bit, each block
/// trading the engine's count of halo nodes for its cut; so is the Runge–Kutta advection
/// periodic along both axes across blocks. (A 3-D grid cut along one, two and three axes, and
/// a checkpoint of one cut resumed on another: `tests/mpi_ring.rs`, on MPI's ranks.)
#[test]
fn every_cut_gives_the_single_grids_bits() {
    let c = FdCavity::new(23, 100.0);
    let cavity = |cut: [usize; 3]| {
        on_blocks(
            &Blocks::even(c.nodes(), Cut(cut)),
            move |group, blocks| {
                let s = c.spec().unwrap();
                let g = FdGrid::<Scheme, f64>::on_blocks(
                    s.nodes, s.h, s.params, s.sides, group, blocks,
                );
                let mut g = g.unwrap();
                g.set(0, |_| 0.0);
                g
            },
            move |g| {
                g.advance(200, c.time_step()).unwrap();
                let l = g.block().map(|r| r.len());
                // A 2-D grid has no ghost layers along z.
                let want = halo_nodes(l, g.blocks().cut(), Scheme::REACH, [true, true, false]);
                assert_eq!(g.halo_nodes(), want, "block {:?}", g.block());
            },
        )
    };
    let whole = cavity([1, 1, 1]);
    for cut in [[3, 1, 1], [1, 3, 1], [2, 2, 1], [2, 3, 1]] {
        assert!(cavity(cut) == whole, "cavity cut {}", Cut(cut));
    }

    let rk = |cut: [usize; 3]| {
        on_blocks(
            &Blocks::even([21, 12, 1], Cut(cut)),
            |group, blocks| {
                let p = AdvectRk3Params { a: 1.0 };
                let sides = vec![Side::Periodic; 4];
                let mut g = FdGrid::<AdvectRk3, f64>::on_blocks(
                    [21, 12, 1],
                    1.0 / 21.0,
                    p,
                    sides,
                    group,
                    blocks,
                )
                .unwrap();
                g.set(0, |x| (2.0 * PI * x[0]).sin() * (2.0 * PI * x[1]).cos());
                g
            },
            |g| g.advance(40, 0.01).unwrap(),
        )
    };
    let whole = rk([1, 1, 1]);
    assert!(rk([3, 2, 1]) == whole, "rk3 cut 3x2");
}

/// A cut is refused, by every block and before any work, where a block would be thinner than
/// the stencils need, where it has another number of blocks than the group has processes,
/// and where it cuts an axis the grid does not have.
#[test]
fn bad_cuts_are_refused_by_every_block() {
    let refusal = |nodes: [usize; 3], cut: [usize; 3], parts: usize| {
        let c = FdCavity::new(nodes[0], 100.0);
        let threads: Vec<_> = Threads::group(parts)
            .into_iter()
            .map(|t| {
                std::thread::spawn(move || {
                    let _guard = t.guard();
                    let blocks = Blocks::even(c.nodes(), Cut(cut));
                    c.build::<f64>(Box::new(t), blocks, FdLayout::Soa, &Backend::Host)
                        .err()
                        .map(|e| e.to_string())
                })
            })
            .collect();
        let all: Vec<_> = threads.into_iter().map(|t| t.join().unwrap()).collect();
        assert!(all.iter().all(Option::is_some), "every block refuses");
        all[0].clone().unwrap()
    };
    let e = refusal([11, 11, 1], [4, 1, 1], 4);
    assert!(e.contains("along x cannot be cut into 4 blocks"), "{e}");
    assert!(e.contains("at most 3 blocks"), "{e}");
    let e = refusal([11, 11, 1], [2, 2, 1], 3);
    assert!(
        e.contains("makes 4 blocks, but the run has 3 processes"),
        "{e}"
    );
    let e = refusal([11, 11, 1], [1, 1, 2], 2);
    assert!(e.contains("along z cannot be cut"), "{e}");
}
