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
