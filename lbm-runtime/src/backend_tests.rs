//! The builder on the host: one process gets the lattice, a group of several (under `mpi`)
//! the ring, both bit for bit the lattice built by hand; without `mpi` a group of several is
//! refused. The GPU and the split are built in the GPU tests (`lbm-validation`, on lavapipe).

use super::*;
use crate::group::{OneProcess, Threads};
use crate::testing::{initial, TestD2Q9, P};
use crate::{BoundarySpec, Lattice, Obstacles, Placement, Soa};

/// 13 × 12, a cavity with an obstacle across the cuts of two and three slabs.
fn spec() -> GlobalSpec<TestD2Q9> {
    let mut boundaries = BoundarySpec::cavity(0.05);
    boundaries.solid = Some(Obstacles::new(|x, y| {
        (3..8).contains(&x) && (4..7).contains(&y)
    }));
    GlobalSpec {
        lx: 13,
        ly: 12,
        lz: 1,
        params: P,
        boundaries,
    }
}

/// The lattice of [`spec`] built by hand, after `steps` steps from [`initial`]: its
/// populations as bits.
fn by_hand(scheme: Scheme, steps: u64) -> Vec<u64> {
    let g = spec();
    let mut lat =
        Lattice::<TestD2Q9, Soa, f64>::with_size(g.size(), g.params, scheme, &g.boundaries)
            .unwrap();
    lat.set_equilibrium(initial).unwrap();
    lat.steps(steps);
    bits(&crate::Block::local_populations(&lat).unwrap())
}

fn bits(f: &[f64]) -> Vec<u64> {
    f.iter().map(|v| v.to_bits()).collect()
}

/// What [`build`] gives on `group` after `steps` steps: the planes it holds and their
/// populations as bits.
fn built(group: Box<dyn Carrier<f64>>, scheme: Scheme, steps: u64) -> (Range, Vec<u64>) {
    let ring = Cut::along(0, group.ranks());
    let mut lat =
        build::<TestD2Q9, Soa, f64>(group, spec(), ring.into(), scheme, &Backend::Host).unwrap();
    assert!(matches!(lat.placement(), Placement::Host));
    assert_eq!(lat.scheme(), scheme);
    lat.set_equilibrium_at(&initial).unwrap();
    lat.advance(steps).unwrap();
    assert_eq!(lat.steps_done(), steps);
    (
        lat.local_box()[0].clone(),
        bits(&lat.local_populations().unwrap()),
    )
}

type Range = std::ops::Range<usize>;

#[test]
fn one_process_on_the_host_is_the_lattice() {
    for scheme in [Scheme::TwoCopy, Scheme::InPlace] {
        let (planes, got) = built(Box::new(OneProcess), scheme, 9);
        assert_eq!(planes, 0..13);
        assert!(got == by_hand(scheme, 9), "{}", scheme.name());
    }
}

/// Two and three processes (threads) give the planes they hold of the single lattice, bit for
/// bit, in both schemes.
#[cfg(feature = "mpi")]
#[test]
fn several_processes_on_the_host_are_the_ring() {
    for (ranks, scheme) in [(2, Scheme::TwoCopy), (3, Scheme::InPlace)] {
        let want = by_hand(scheme, 9);
        let parts = Threads::run(ranks, |t| built(Box::new(t), scheme, 9));
        assert_eq!(parts.len(), ranks);
        let mut next = 0;
        for (planes, got) in parts {
            assert_eq!(planes.start, next);
            next = planes.end;
            let sites = 12 * 9;
            assert!(
                got[..] == want[planes.start * sites..planes.end * sites],
                "{ranks} processes, {}, planes {planes:?}",
                scheme.name()
            );
        }
        assert_eq!(next, 13);
    }
}

#[cfg(not(feature = "mpi"))]
#[test]
fn several_processes_without_mpi_are_refused() {
    let refusals = Threads::run(2, |t| {
        build::<TestD2Q9, Soa, f64>(
            Box::new(t),
            spec(),
            Cut::along(0, 2).into(),
            Scheme::TwoCopy,
            &Backend::Host,
        )
        .err()
        .map(|e| e.to_string())
    });
    for why in refusals {
        let why = why.expect("a group of two refused");
        assert!(
            why.contains("2 processes") && why.contains("`mpi` feature"),
            "{why}"
        );
    }
}

/// One process asked for a sparse domain whose one block holding fluid is less than the box
/// (a channel y ∈ [2, 5) of a periodic 13 × 12 box in blocks of 13 × 6: the upper one holds
/// no fluid within a site): under `mpi` that block alone, its exchanges along y skipped, its
/// fluid the whole box's bit for bit in both schemes; without `mpi`, refused. A channel that
/// reaches both blocks is refused on one process, saying it needs two.
#[test]
fn one_process_takes_a_sparse_domain_of_one_block() {
    let spec = |channel: std::ops::Range<usize>| GlobalSpec::<TestD2Q9> {
        lx: 13,
        ly: 12,
        lz: 1,
        params: P,
        boundaries: BoundarySpec {
            solid: Some(Obstacles::new(move |_, y| !channel.contains(&y))),
            ..BoundarySpec::periodic()
        },
    };
    let block = Decomposition::Sparse([13, 6, 1]);
    for scheme in [Scheme::TwoCopy, Scheme::InPlace] {
        let built = build::<TestD2Q9, Soa, f64>(
            Box::new(OneProcess),
            spec(2..5),
            block,
            scheme,
            &Backend::Host,
        );
        #[cfg(not(feature = "mpi"))]
        assert!(built.err().unwrap().to_string().contains("`mpi` feature"));
        #[cfg(feature = "mpi")]
        {
            let mut lat = built.unwrap();
            assert_eq!(lat.local_box(), [0..13, 0..6, 0..1]);
            lat.set_equilibrium_at(&initial).unwrap();
            lat.advance(9).unwrap();
            let g = spec(2..5);
            let mut whole =
                Lattice::<TestD2Q9, Soa, f64>::with_size(g.size(), P, scheme, &g.boundaries)
                    .unwrap();
            whole.set_equilibrium(initial).unwrap();
            whole.steps(9);
            let want = crate::Block::local_populations(&whole).unwrap();
            let got = lat.local_populations().unwrap();
            // The populations of the channel's sites, of columns `ly` sites high.
            let channel = |f: &[f64], ly: usize| -> Vec<u64> {
                (f.chunks_exact(TestD2Q9::Q).enumerate())
                    .filter(|&(s, _)| (2..5).contains(&(s % ly)))
                    .flat_map(|(_, f)| bits(f))
                    .collect()
            };
            assert!(channel(&got, 6) == channel(&want, 12), "{}", scheme.name());
        }
    }
    let refused = build::<TestD2Q9, Soa, f64>(
        Box::new(OneProcess),
        spec(2..8),
        block,
        Scheme::TwoCopy,
        &Backend::Host,
    );
    let e = refused.err().unwrap().to_string();
    assert!(e.contains("2 hold fluid: run it on 2 processes"), "{e}");
}
