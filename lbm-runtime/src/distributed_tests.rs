//! The ring on the threads of one process ([`Threads`]) and on one process alone
//! ([`OneProcess`]): the same code path as over MPI ranks, bit for bit the single lattice, in
//! every layout, both schemes, binary16 storage, and with the boundaries that reach across the
//! cuts (obstacles, curved walls, outflows); and blocks cut along y as well.

use super::*;
use crate::boundary::BoundarySpec;
use crate::group::{OneProcess, Threads};
use crate::testing::{initial, TestD2Q9, P};
use crate::{Aos, CAoSoa, CSoa, F16s, Interpolation, Soa, Wall};

fn spec_of(lx: usize, ly: usize, boundaries: BoundarySpec) -> GlobalSpec<TestD2Q9> {
    GlobalSpec {
        lx,
        ly,
        lz: 1,
        params: P,
        boundaries,
    }
}

/// 13 × 12 with an obstacle across the cut between the first two of three slabs (5, 4, 4
/// columns).
fn spec() -> GlobalSpec<TestD2Q9> {
    let mut boundaries = BoundarySpec::cavity(0.05);
    boundaries.solid = Some(crate::Obstacles::new(|x, y| {
        (3..7).contains(&x) && (4..7).contains(&y)
    }));
    spec_of(13, 12, boundaries)
}

/// A cavity with an obstacle straddling the slab edges of every cut tried below.
fn obstacle_cavity() -> BoundarySpec {
    let mut spec = BoundarySpec::cavity(0.05);
    spec.solid = Some(crate::Obstacles::new(|x, y| {
        (4..9).contains(&x) && (5..8).contains(&y)
    }));
    spec
}

/// Wall distances spread over `[lo, hi]` from link to link, in ten steps.
fn spread(lo: f64, hi: f64) -> impl Fn([usize; 3], [i32; 3]) -> Option<f64> + Clone {
    move |[x, y, _], c| {
        let k = (x * 7 + y * 3) as i32 + c[0] * 5 + c[1] * 11;
        Some(lo + (hi - lo) * f64::from(k.rem_euclid(10)) / 9.0)
    }
}

type Ring = DistLattice<TestD2Q9, CSoa<4>, f64>;
type Single = Lattice<TestD2Q9, CSoa<4>, f64>;

/// The single two-copy lattice `g` after `steps` steps from [`initial`].
fn single<L: Layout, T: Real>(g: &GlobalSpec<TestD2Q9>, steps: u64) -> Lattice<TestD2Q9, L, T> {
    let mut single = g.lattice::<L, T>(Scheme::TwoCopy).unwrap();
    single.set_equilibrium(initial).unwrap();
    for _ in 0..steps {
        single.step();
    }
    single
}

/// Every site's populations, in logical order, as bits.
fn bits<L: Layout, T: Real>(lat: &Lattice<TestD2Q9, L, T>) -> Vec<u64> {
    let d = lat.dims();
    let mut f = [T::default(); 9];
    let mut out = Vec::new();
    for x in 0..d.lx {
        for y in 0..d.ly {
            lat.populations(x, y, &mut f).unwrap();
            out.extend(f.iter().map(|v| v.to_f64().to_bits()));
        }
    }
    out
}

fn moment_bits(m: &[Vec<f64>]) -> Vec<Vec<u64>> {
    m.iter()
        .map(|f| f.iter().map(|v| v.to_bits()).collect())
        .collect()
}

/// The ring of `ranks` threads in `scheme` equals the single two-copy lattice: see
/// [`cut_matches_single`].
fn ring_matches_single<L: Layout, T: Real>(g: &GlobalSpec<TestD2Q9>, ranks: usize, scheme: Scheme) {
    cut_matches_single::<L, T>(g, Cut::along(0, ranks), scheme);
}

/// The lattice cut `cut` over as many threads, in `scheme`, equals the single two-copy
/// lattice after 25 steps (an odd count: the in-place ring ends in its odd state) and after
/// 26: the gathered populations, and each thread's moments on its sites (read in place, its
/// halos and ghost lines filled by the neighbours), and those it writes.
fn cut_matches_single<L: Layout, T: Real>(g: &GlobalSpec<TestD2Q9>, cut: Cut, scheme: Scheme) {
    let what = format!("{} {} {} cut {cut}", L::NAME, T::NAME, scheme.name());
    let mut want = single::<L, T>(g, 25);
    let runs = Threads::run(cut.blocks(), |t| {
        let mut ring =
            DistLattice::<TestD2Q9, L, T>::new(Box::new(t), g.clone(), cut, scheme).unwrap();
        ring.set_equilibrium_at(&initial).unwrap();
        ring.advance(25).unwrap();
        ring.check().unwrap();
        let moments = (ring.local_box(), ring.local_moments().unwrap());
        let output = (ring.output_planes(), ring.output_moments().unwrap());
        let at_25 = ring.gather().unwrap();
        ring.advance(1).unwrap();
        (moments, at_25, ring.gather().unwrap(), output)
    });
    let whole = moment_bits(&Solver::local_moments(&mut want).unwrap());
    // The outputs' planes: an even share along x, each with the single lattice's moments.
    let mut next = 0;
    for (.., (xs, moments)) in &runs {
        assert_eq!(xs.start, next, "{what}");
        next = xs.end;
        let mine: Vec<Vec<u64>> = (whole.iter())
            .map(|f| f[xs.start * g.ly..xs.end * g.ly].to_vec())
            .collect();
        assert_eq!(
            moment_bits(moments),
            mine,
            "output moments of {xs:?}, {what}"
        );
    }
    assert_eq!(next, g.lx, "{what}");
    let mut covered = 0;
    for (([xs, ys, _], moments), ..) in &runs {
        let sites: Vec<usize> = (xs.clone())
            .flat_map(|x| ys.clone().map(move |y| x * g.ly + y))
            .collect();
        let mine: Vec<Vec<u64>> = (whole.iter())
            .map(|f| sites.iter().map(|&k| f[k]).collect())
            .collect();
        assert_eq!(
            moment_bits(moments),
            mine,
            "moments of {xs:?} × {ys:?}, {what}"
        );
        covered += sites.len();
    }
    assert_eq!(covered, g.lx * g.ly, "{what}");
    let (_, at_25, at_26, _) = runs.into_iter().next().unwrap();
    let (at_25, at_26) = (at_25.unwrap(), at_26.unwrap());
    assert_eq!(bits(&at_25), bits(&want), "{what}");
    assert_eq!(at_25.steps_done(), 25);
    assert_eq!(
        at_25.moment_field("ux").unwrap(),
        want.moment_field("ux").unwrap()
    );
    assert_eq!(
        bits(&at_26),
        bits(&single::<L, T>(g, 26)),
        "{what}, step 26"
    );
}

fn in_both_schemes<L: Layout>(g: &GlobalSpec<TestD2Q9>, ranks: usize) {
    for scheme in [Scheme::TwoCopy, Scheme::InPlace] {
        ring_matches_single::<L, f64>(g, ranks, scheme);
    }
}

/// Periodic and walled lattices, widths divisible or not, 1 to 4 slabs, three layouts:
/// bitwise identical.
#[test]
fn a_ring_of_threads_is_the_single_lattice_bit_for_bit() {
    for ranks in 1..=4 {
        in_both_schemes::<Soa>(&spec_of(13, 12, BoundarySpec::channel()), ranks);
        in_both_schemes::<CAoSoa<4>>(&spec_of(16, 16, BoundarySpec::periodic()), ranks);
        in_both_schemes::<Aos>(&spec_of(14, 12, obstacle_cavity()), ranks);
    }
    in_both_schemes::<CSoa<4>>(&spec(), 1);
    in_both_schemes::<CSoa<4>>(&spec(), 3);
}

/// Blocks cut along y, and along x and y, on 2 to 6 threads, both schemes: the lattice
/// gathered after 25 and 26 steps and the blocks' moments are the single lattice's, bit for
/// bit, in the layouts whose clusters pad the ghost lines (CSoA⟨4⟩, CAoSoA⟨4⟩) and those that
/// need none, with walls along y cut by the blocks and an obstacle across a block corner.
#[test]
fn blocks_cut_along_y_are_the_single_lattice_bit_for_bit() {
    for cut in [
        Cut([1, 2, 1]),
        Cut([2, 2, 1]),
        Cut([1, 3, 1]),
        Cut([3, 2, 1]),
    ] {
        for scheme in [Scheme::TwoCopy, Scheme::InPlace] {
            cut_matches_single::<Soa, f64>(&spec_of(14, 12, obstacle_cavity()), cut, scheme);
            cut_matches_single::<CSoa<4>, f64>(&spec(), cut, scheme);
            let periodic = spec_of(16, 16, BoundarySpec::periodic());
            cut_matches_single::<CAoSoa<4>, f64>(&periodic, cut, scheme);
            let channel = spec_of(13, 12, BoundarySpec::channel());
            cut_matches_single::<Aos, f64>(&channel, cut, scheme);
        }
    }
}

/// What cannot be cut is refused on every thread alike, saying what to do: blocks thinner
/// than the halo, a block count that is not the process count, z of a 2-D lattice.
#[test]
fn cuts_along_y_refuse_what_they_cannot_run() {
    let refusals = |cut: Cut, ranks: usize, scheme: Scheme| {
        Threads::run(ranks, |t| {
            Ring::new(Box::new(t), spec(), cut, scheme)
                .err()
                .map(|e| e.to_string())
                .expect("refused")
        })
    };
    for why in refusals(Cut([1, 13, 1]), 13, Scheme::TwoCopy) {
        assert!(
            why.contains("along y") && why.contains("at most 12 blocks"),
            "{why}"
        );
    }
    for why in refusals(Cut([2, 2, 1]), 3, Scheme::TwoCopy) {
        assert!(why.contains("4 blocks: give one per process"), "{why}");
    }
    for why in refusals(Cut([1, 1, 2]), 2, Scheme::TwoCopy) {
        assert!(why.contains("two-dimensional"), "{why}");
    }
}

/// Binary16 storage on slabs: the halos travel as the values of the stored elements and are
/// stored back to the same elements, so the ring stays bitwise the single lattice.
#[test]
fn a_ring_in_f16s_is_the_single_lattice_bit_for_bit() {
    for ranks in [2, 3] {
        for scheme in [Scheme::TwoCopy, Scheme::InPlace] {
            let channel = spec_of(13, 32, BoundarySpec::channel());
            ring_matches_single::<CSoa<16>, F16s>(&channel, ranks, scheme);
            let cavity = spec_of(32, 32, obstacle_cavity());
            ring_matches_single::<CAoSoa<16>, F16s>(&cavity, ranks, scheme);
        }
    }
}

/// Slabs with obstacles across the cuts, both schemes: the moments of every slab, read in
/// place, are the single lattice's.
#[test]
fn moments_in_place_are_the_single_lattices() {
    let mut boundaries = BoundarySpec::cavity(0.05);
    boundaries.solid = Some(crate::Obstacles::new(|x, y| {
        (60..70).contains(&x) && (3..6).contains(&y) || (140..160).contains(&x) && y == 7
    }));
    let g = spec_of(300, 12, boundaries);
    for scheme in [Scheme::TwoCopy, Scheme::InPlace] {
        let want = moment_bits(&Solver::local_moments(&mut single::<CSoa<4>, f64>(&g, 7)).unwrap());
        let got = Threads::run(3, |t| {
            let mut ring = Ring::new(Box::new(t), g.clone(), Cut::along(0, 3), scheme).unwrap();
            ring.set_equilibrium_at(&initial).unwrap();
            ring.advance(7).unwrap();
            moment_bits(&ring.local_moments().unwrap())
        });
        let joined: Vec<Vec<u64>> = (0..want.len())
            .map(|j| got.iter().flat_map(|m| m[j].clone()).collect())
            .collect();
        assert_eq!(joined, want, "{}", scheme.name());
    }
}

/// A run stopped on one lattice and resumed on one process and on 3 threads ends as if never
/// cut; a lattice of another size is refused, not cut.
#[test]
fn a_ring_resumes_from_a_scattered_lattice() {
    let (half, whole): (Single, Single) = (single(&spec(), 10), single(&spec(), 25));
    let mut ring = Ring::new(Box::new(OneProcess), spec(), Cut::WHOLE, Scheme::InPlace).unwrap();
    ring.scatter(Some(&half)).unwrap();
    // One block: the whole lattice, described as its backend.
    assert!(ring.describe().starts_with("cpu, "), "{}", ring.describe());
    assert_eq!(ring.steps_done(), 10);
    ring.advance(15).unwrap();
    assert_eq!(bits(&ring.gather().unwrap().unwrap()), bits(&whole));
    let other = spec_of(12, 12, BoundarySpec::channel())
        .lattice::<CSoa<4>, f64>(Scheme::TwoCopy)
        .unwrap();
    let refused = ring.scatter(Some(&other)).unwrap_err().to_string();
    assert!(
        refused.contains("a 12×12 lattice") && refused.contains("the 13×12 lattice"),
        "{refused}"
    );
    let gathered = Threads::run(3, |t| {
        let mut ring = Ring::new(Box::new(t), spec(), Cut::along(0, 3), Scheme::InPlace).unwrap();
        ring.scatter(ring.group().is_root().then_some(&half))
            .unwrap();
        ring.advance(15).unwrap();
        ring.gather().unwrap()
    });
    assert_eq!(bits(gathered[0].as_ref().unwrap()), bits(&whole));
    let refused = Threads::run(3, |t| {
        let mut ring = Ring::new(Box::new(t), spec(), Cut::along(0, 3), Scheme::TwoCopy).unwrap();
        ring.scatter(None).unwrap_err().to_string()
    });
    for message in refused {
        assert!(message.contains("the 13×12 lattice"), "{message}");
    }
}

#[test]
fn a_thread_whose_slab_cannot_be_built_fails_every_thread_with_its_message() {
    // 13 columns cannot be cut into 14 slabs: every thread says so, none hangs.
    let refused = Threads::run(14, |t| {
        Ring::new(Box::new(t), spec(), Cut::along(0, 14), Scheme::TwoCopy)
            .err()
            .map(|e| e.to_string())
    });
    for message in refused {
        let message = message.expect("refused");
        assert!(
            message.contains("14 ranks") && message.contains("at most 13 ranks"),
            "{message}"
        );
    }
}

/// Quadratic curved walls (`Interpolation::Quadratic`) run on a ring of one slab as on the
/// single lattice, bit for bit: the slab is the whole lattice, and a disc across the periodic
/// edge x = 0 has links that read two sites along them, across it, from the slab's own
/// columns. A ring of two slabs refuses them, every slab alike, saying what to do.
#[test]
fn quadratic_walls_run_on_one_slab_and_are_refused_on_two() {
    let disc = |x: usize, y: usize| {
        let dx = (x as f64 - 0.4).abs().min((x as f64 - 16.4).abs());
        dx.hypot(y as f64 - 6.0) < 2.7
    };
    let g = spec_of(
        16,
        12,
        BoundarySpec {
            solid: Some(
                crate::Obstacles::new(disc)
                    .with_wall_distance(spread(0.1, 0.9))
                    .with_interpolation(Interpolation::Quadratic),
            ),
            ..BoundarySpec::periodic()
        },
    );
    ring_matches_single::<Soa, f64>(&g, 1, Scheme::TwoCopy);
    let refused = Threads::run(2, |t| {
        DistLattice::<TestD2Q9, Soa, f64>::new(
            Box::new(t),
            g.clone(),
            Cut::along(0, 2),
            Scheme::TwoCopy,
        )
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default()
    });
    for message in refused {
        assert!(
            message.contains("Interpolation::Quadratic")
                && message.contains("Interpolation::Linear"),
            "{message}"
        );
    }
}

/// Outflow sides (`Wall::Outflow`) on rings of 1, 2 and 3 slabs, and on blocks cut along y,
/// in both schemes, give the single lattice's bits: the right side on the last slab, and a
/// top side cut by the slabs, whose links read the neighbouring columns across the cuts (in
/// place, held once the halos came).
#[test]
fn outflows_on_slabs_match_the_single_lattice() {
    let g = spec_of(
        18,
        12,
        BoundarySpec {
            left: Some(Wall::ZouHeVelocity {
                velocity: [0.03, 0.01, 0.0],
            }),
            right: Some(Wall::Outflow),
            bottom: Some(Wall::NO_SLIP),
            top: Some(Wall::Outflow),
            ..BoundarySpec::periodic()
        },
    );
    for ranks in [1, 2, 3] {
        ring_matches_single::<Soa, f64>(&g, ranks, Scheme::TwoCopy);
        ring_matches_single::<Soa, f64>(&g, ranks, Scheme::InPlace);
    }
    for cut in [Cut([1, 2, 1]), Cut([2, 3, 1])] {
        cut_matches_single::<Soa, f64>(&g, cut, Scheme::TwoCopy);
        cut_matches_single::<Soa, f64>(&g, cut, Scheme::InPlace);
    }
}

/// Linear curved walls in place on rings of 1, 2 and 3 slabs (and in both schemes on blocks
/// cut along y) give the single two-copy lattice's bits: a disc across the periodic edge and the slabs' cuts, whose links hold
/// their own leaving populations where the pull half-step pushed them into a halo.
#[test]
fn curved_walls_in_place_on_slabs_match_the_single_lattice() {
    let disc = |x: usize, y: usize| {
        let dx = (x as f64 - 0.4).abs().min((x as f64 - 18.4).abs());
        dx.hypot(y as f64 - 6.0) < 2.7 || (x as f64 - 9.5).hypot(y as f64 - 5.0) < 2.4
    };
    let g = spec_of(
        18,
        12,
        BoundarySpec {
            solid: Some(crate::Obstacles::new(disc).with_wall_distance(spread(0.05, 1.0))),
            ..BoundarySpec::periodic()
        },
    );
    for ranks in [1, 2, 3] {
        ring_matches_single::<Soa, f64>(&g, ranks, Scheme::InPlace);
    }
    // On blocks cut along y too, both schemes: the discs across their corners.
    for cut in [Cut([2, 2, 1]), Cut([3, 2, 1])] {
        cut_matches_single::<Soa, f64>(&g, cut, Scheme::TwoCopy);
        cut_matches_single::<Soa, f64>(&g, cut, Scheme::InPlace);
    }
}

/// A lattice cut along y alone: each block is alone along x, its own neighbour there, and
/// wraps itself in place — nothing passes through the exchange's buffers along x — bitwise
/// the single lattice, both schemes (x periodic, an obstacle across the cut and across the
/// periodic edge in x).
#[test]
fn blocks_alone_along_x_wrap_themselves_in_place() {
    let mut boundaries = BoundarySpec::channel();
    boundaries.solid = Some(crate::Obstacles::new(|x, y| {
        (x < 2 || x > 10) && (4..8).contains(&y)
    }));
    let g = spec_of(13, 16, boundaries);
    let cut = Cut([1, 2, 1]);
    for scheme in [Scheme::TwoCopy, Scheme::InPlace] {
        cut_matches_single::<CSoa<4>, f64>(&g, cut, scheme);
        let untouched = Threads::run(2, |t| {
            let mut ring = Ring::new(Box::new(t), g.clone(), cut, scheme).unwrap();
            ring.set_equilibrium_at(&initial).unwrap();
            for _ in 0..5 {
                ring.step().unwrap();
            }
            let x = &ring.halos[0];
            x.to.iter().chain(&x.from).all(Vec::is_empty)
        });
        assert_eq!(untouched, [true, true], "{}", scheme.name());
    }
}
