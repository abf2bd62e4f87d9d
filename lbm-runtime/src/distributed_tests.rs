//! The ring on the threads of one process ([`Threads`]) and on one process alone
//! ([`OneProcess`]): the same code path as over MPI ranks, bit for bit the single lattice.

use super::*;
use crate::boundary::BoundarySpec;
use crate::group::{OneProcess, Threads};
use crate::testing::{initial, TestD2Q9, P};
use crate::CSoa;

fn spec() -> GlobalSpec<TestD2Q9> {
    let mut boundaries = BoundarySpec::cavity(0.05);
    // An obstacle across the cut between the first two of three slabs (13 columns: 5, 4, 4).
    boundaries.solid = Some(crate::Obstacles::new(|x, y| {
        (3..7).contains(&x) && (4..7).contains(&y)
    }));
    GlobalSpec {
        lx: 13,
        ly: 12,
        lz: 1,
        params: P,
        boundaries,
    }
}

type Ring = DistLattice<TestD2Q9, CSoa<4>, f64>;
type Single = Lattice<TestD2Q9, CSoa<4>, f64>;

/// `steps` steps of the ring in `scheme` on each of `parts` threads; the first thread's
/// gathered lattice and the moments of every thread.
fn on_threads(parts: usize, scheme: Scheme, steps: u64) -> (Single, Vec<Vec<Vec<f64>>>) {
    let threads: Vec<_> = Threads::group(parts)
        .into_iter()
        .map(|t| {
            std::thread::spawn(move || {
                let _guard = t.guard();
                let mut ring = Ring::new(Box::new(t), spec(), scheme).unwrap();
                ring.set_equilibrium_at(initial).unwrap();
                ring.advance(steps).unwrap();
                ring.check().unwrap();
                (ring.gather().unwrap(), ring.local_moments().unwrap())
            })
        })
        .collect();
    let mut gathered = None;
    let mut moments = Vec::new();
    for t in threads {
        let (g, m) = t.join().unwrap();
        gathered = gathered.or(g);
        moments.push(m);
    }
    (gathered.unwrap(), moments)
}

fn single(steps: u64) -> Single {
    let mut single = spec().lattice::<CSoa<4>, f64>().unwrap();
    single.set_equilibrium(initial).unwrap();
    for _ in 0..steps {
        single.step();
    }
    single
}

fn bits(lat: &Single) -> Vec<u64> {
    Solver::local_populations(lat)
        .unwrap()
        .iter()
        .map(|v| v.to_bits())
        .collect()
}

#[test]
fn a_ring_of_threads_is_the_single_lattice_bit_for_bit() {
    // 25 steps: the in-place ring ends in its odd state.
    let want = single(25);
    for scheme in [Scheme::TwoCopy, Scheme::InPlace] {
        for parts in [1, 3] {
            let (got, moments) = on_threads(parts, scheme, 25);
            assert_eq!(
                bits(&got),
                bits(&want),
                "{parts} threads, {}",
                scheme.name()
            );
            assert_eq!(got.steps_done(), 25);
            // Each thread's moments are the single lattice's on its columns.
            let whole = Solver::local_moments(&want).unwrap();
            let mut x0 = 0;
            for m in &moments {
                let len = m[0].len();
                assert_eq!(m[0], whole[0][x0..x0 + len], "density, {parts} threads");
                x0 += len;
            }
            assert_eq!(x0, whole[0].len());
        }
    }
}

#[test]
fn a_ring_of_one_process_resumes_from_a_scattered_lattice() {
    let half = single(10);
    let mut ring = Ring::new(Box::new(OneProcess), spec(), Scheme::InPlace).unwrap();
    ring.scatter(Some(&half)).unwrap();
    assert!(
        ring.describe().starts_with("one process in a ring"),
        "{}",
        ring.describe()
    );
    assert_eq!(ring.steps_done(), 10);
    ring.advance(15).unwrap();
    assert_eq!(bits(&ring.gather().unwrap().unwrap()), bits(&single(25)));
    // A lattice of another size is refused, not cut.
    let other = GlobalSpec { lx: 12, ..spec() }
        .lattice::<CSoa<4>, f64>()
        .unwrap();
    let refused = ring.scatter(Some(&other)).unwrap_err().to_string();
    assert!(refused.contains("13×12"), "{refused}");
}

#[test]
fn a_thread_whose_slab_cannot_be_built_fails_every_thread_with_its_message() {
    // 13 columns cannot be cut into 14 slabs: every thread says so, none hangs.
    let threads: Vec<_> = Threads::group(14)
        .into_iter()
        .map(|t| {
            std::thread::spawn(move || {
                let _guard = t.guard();
                Ring::new(Box::new(t), spec(), Scheme::TwoCopy)
                    .err()
                    .map(|e| e.to_string())
            })
        })
        .collect();
    for t in threads {
        let message = t.join().unwrap().expect("refused");
        assert!(message.contains("14"), "{message}");
    }
}
