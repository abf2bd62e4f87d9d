//! Unit tests of the decomposition with the hand-written D2Q9 of [`crate::testing`].

use super::*;
use crate::testing::{initial, TestD2Q9, P};
use crate::{Aos, CAoSoa, CSoa, F16s, Soa, Wall};

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

/// A cavity with an obstacle straddling the slab edges of every split tried below.
fn obstacle_cavity(lx: usize, ly: usize) -> BoundarySpec {
    let mut spec = BoundarySpec::cavity(0.05);
    let _ = (lx, ly);
    spec.solid = Some(crate::Obstacles::new(|x, y| {
        (4..9).contains(&x) && (5..8).contains(&y)
    }));
    spec
}

#[test]
fn slabs_cover_the_lattice_and_differ_by_at_most_one_column() {
    let dec = ring_blocks::<TestD2Q9>([23, 4, 1], 5).unwrap();
    let slabs: Vec<_> = (0..5).map(|r| dec.range(r, 0)).collect();
    assert_eq!(slabs[0].start, 0);
    assert_eq!(slabs[4].end, 23);
    for w in slabs.windows(2) {
        assert_eq!(w[0].end, w[1].start);
    }
    let widths: Vec<_> = slabs.iter().map(|s| s.len()).collect();
    assert_eq!(widths, [5, 5, 5, 4, 4]);
    assert_eq!((dec.neighbours(0, 0).0, dec.neighbours(4, 0).1), (4, 0));
    assert_eq!(dec.block(2)[1..], [0..4, 0..1]);
}

#[test]
fn too_many_ranks_is_a_clear_error() {
    let e = ring_blocks::<TestD2Q9>([3, 4, 1], 4).unwrap_err();
    assert_eq!(
        e,
        DomainError::TooManyRanks {
            lx: 3,
            ranks: 4,
            model: TestD2Q9::NAME,
            min_width: 1,
            max_ranks: 3
        }
    );
    assert!(e.to_string().contains("at most 3 ranks"), "{e}");
    assert_eq!(
        ring_blocks::<TestD2Q9>([3, 4, 1], 0).unwrap_err(),
        DomainError::NoRanks
    );
}

#[test]
fn bulk_and_borders_cover_each_column_once() {
    for lx in 1..12 {
        for h in 1..4 {
            let mut seen = vec![0; lx];
            let [a, b] = border_columns(lx, h);
            for x in bulk_columns(lx, h).chain(a).chain(b) {
                seen[x] += 1;
            }
            assert!(seen.iter().all(|&n| n == 1), "lx {lx} h {h}: {seen:?}");
        }
    }
}

#[test]
fn split_columns_covers_the_range_in_order() {
    let parts: Vec<_> = split_columns(3..20, 4).collect();
    assert_eq!(parts, [3..8, 8..13, 13..18, 18..20]);
    assert_eq!(split_columns(3..5, 8).collect::<Vec<_>>(), [3..4, 4..5]);
    assert_eq!(split_columns(3..20, 0).count(), 0);
    assert_eq!(split_columns(3..3, 8).count(), 0);
}

fn ring_matches_single<L: Layout>(lx: usize, ly: usize, spec: BoundarySpec, ranks: usize) {
    for scheme in [Scheme::TwoCopy, Scheme::InPlace] {
        ring_in_scheme_matches_single::<L, f64>(lx, ly, spec.clone(), ranks, scheme);
    }
}

/// The ring in `scheme` equals the single two-copy lattice after 25 steps (an odd count: the
/// AA ring ends in its odd state) and after 26.
fn ring_in_scheme_matches_single<L: Layout, T: Real>(
    lx: usize,
    ly: usize,
    spec: BoundarySpec,
    ranks: usize,
    scheme: Scheme,
) {
    let g = GlobalSpec::<TestD2Q9> {
        lx,
        ly,
        lz: 1,
        params: P,
        boundaries: spec,
    };
    let mut single = g.lattice::<L, T>().unwrap();
    single.set_equilibrium(initial).unwrap();
    let mut ring = SlabRing::<TestD2Q9, L, T>::new(g, ranks, scheme).unwrap();
    ring.set_equilibrium(initial).unwrap();
    for _ in 0..25 {
        single.step();
        ring.step().unwrap();
    }
    moments_match(&ring, &single);
    let gathered = ring.gather().unwrap();
    assert_eq!(
        bits(&single),
        bits(&gathered),
        "{} {} {} on {ranks} slabs",
        L::NAME,
        T::NAME,
        scheme.name()
    );
    assert_eq!(
        single.moment_field("ux").unwrap(),
        gathered.moment_field("ux").unwrap()
    );
    single.step();
    ring.step().unwrap();
    assert_eq!(
        bits(&single),
        bits(&ring.gather().unwrap()),
        "{} {} on {ranks} slabs, step 26",
        L::NAME,
        scheme.name()
    );
}

/// Each slab's moments, computed window by window from its own columns and its neighbours'
/// borders ([`moments_by_window`]), are the single lattice's, bit for bit.
fn moments_match<L: Layout, T: Real>(
    ring: &SlabRing<TestD2Q9, L, T>,
    single: &Lattice<TestD2Q9, L, T>,
) {
    let (n, h, ly) = (ring.slabs.len(), TestD2Q9::HALO, single.dims().ly);
    for (r, s) in ring.slabs.iter().enumerate() {
        let (left, right) = (&ring.slabs[(r + n - 1) % n], &ring.slabs[(r + 1) % n]);
        let lw = SlabBackend::width(left);
        let around = [
            left.populations_of(lw - h..lw).unwrap(),
            right.populations_of(0..h).unwrap(),
        ];
        let xs = ring.dec.range(r, 0);
        let m = moments_by_window::<TestD2Q9, L, T>(&ring.spec, xs.clone(), around, None, |c| {
            s.populations_of(c)
        })
        .unwrap();
        for (j, field) in m.iter().enumerate() {
            let want = &single.moment_field_at(j)[xs.start * ly..xs.end * ly];
            assert!(
                field
                    .iter()
                    .zip(want)
                    .all(|(a, b)| a.to_bits() == b.to_bits()),
                "moment {j} of slab {r} of {n} ({})",
                L::NAME
            );
        }
    }
}

/// Slabs wider than a window (several windows each, obstacles across their seams and across
/// the cuts), both schemes: the moments of every slab are the single lattice's.
#[test]
fn moments_by_window_are_the_single_lattices() {
    let (lx, ly) = (300, 12);
    for scheme in [Scheme::TwoCopy, Scheme::InPlace] {
        let mut spec = BoundarySpec::cavity(0.05);
        spec.solid = Some(crate::Obstacles::new(|x, y| {
            (60..70).contains(&x) && (3..6).contains(&y) || (140..160).contains(&x) && y == 7
        }));
        let g = GlobalSpec::<TestD2Q9> {
            lx,
            ly,
            lz: 1,
            params: P,
            boundaries: spec,
        };
        let mut single = g.lattice::<CSoa<4>, f64>().unwrap();
        single.set_equilibrium(initial).unwrap();
        let mut ring = SlabRing::<TestD2Q9, CSoa<4>, f64>::new(g, 2, scheme).unwrap();
        ring.set_equilibrium(initial).unwrap();
        for _ in 0..7 {
            single.step();
            ring.step().unwrap();
        }
        moments_match(&ring, &single);
    }
}

/// A run stopped on one lattice and resumed on 3 slabs ends as if never cut.
#[test]
fn a_run_resumes_on_slabs() {
    let g = GlobalSpec::<TestD2Q9> {
        lx: 13,
        ly: 12,
        lz: 1,
        params: P,
        boundaries: BoundarySpec::channel(),
    };
    let mut single = g.lattice::<CSoa<4>, f64>().unwrap();
    single.set_equilibrium(initial).unwrap();
    for _ in 0..10 {
        single.step();
    }
    let mut ring = SlabRing::scatter(g, 3, Scheme::InPlace, &single).unwrap();
    for _ in 0..10 {
        single.step();
        ring.step().unwrap();
    }
    assert_eq!(bits(&single), bits(&ring.gather().unwrap()));
    let wrong = ring.slabs()[0].export();
    let mut slab = SlabRing::<TestD2Q9, CSoa<4>, f64>::new(
        GlobalSpec {
            lx: 13,
            ly: 12,
            lz: 1,
            params: P,
            boundaries: BoundarySpec::channel(),
        },
        2,
        Scheme::TwoCopy,
    )
    .unwrap();
    assert!(matches!(
        slab.slabs[0].import(&wrong),
        Err(LbmError::Shape(m)) if m.contains("expected")
    ));
}

/// Periodic and walled lattices, widths divisible or not, 1 to 4 slabs: bitwise identical.
#[test]
fn slab_ring_is_bitwise_identical_to_one_lattice() {
    for ranks in 1..=4 {
        ring_matches_single::<Soa>(13, 12, BoundarySpec::channel(), ranks);
        ring_matches_single::<CAoSoa<4>>(16, 16, BoundarySpec::periodic(), ranks);
        ring_matches_single::<Aos>(14, 12, obstacle_cavity(14, 12), ranks);
    }
}

/// Binary16 storage on slabs: the halos travel as the values of the stored elements and are
/// stored back to the same elements, so the ring stays bitwise the single lattice.
#[test]
fn slab_ring_is_bitwise_identical_to_one_lattice_in_f16s() {
    for ranks in [2, 3] {
        for scheme in [Scheme::TwoCopy, Scheme::InPlace] {
            let (spec, cavity) = (BoundarySpec::channel(), obstacle_cavity(32, 32));
            ring_in_scheme_matches_single::<CSoa<16>, F16s>(13, 32, spec, ranks, scheme);
            ring_in_scheme_matches_single::<CAoSoa<16>, F16s>(32, 32, cavity, ranks, scheme);
        }
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
    let spread = |[x, y, _]: [usize; 3], c: [i32; 3]| {
        let k = (x * 7 + y * 3) as i32 + c[0] * 5 + c[1] * 11;
        Some(0.1 + 0.8 * f64::from(k.rem_euclid(10)) / 9.0)
    };
    let spec = BoundarySpec {
        solid: Some(
            crate::Obstacles::new(disc)
                .with_wall_distance(spread)
                .with_interpolation(Interpolation::Quadratic),
        ),
        ..BoundarySpec::periodic()
    };
    ring_in_scheme_matches_single::<Soa, f64>(16, 12, spec.clone(), 1, Scheme::TwoCopy);
    let g = GlobalSpec::<TestD2Q9> {
        lx: 16,
        ly: 12,
        lz: 1,
        params: P,
        boundaries: spec,
    };
    let refused = SlabRing::<TestD2Q9, Soa, f64>::new(g, 2, Scheme::TwoCopy);
    let message = refused.err().map(|e| e.to_string()).unwrap_or_default();
    assert!(
        message.contains("Interpolation::Quadratic") && message.contains("Interpolation::Linear"),
        "{message}"
    );
}

/// Outflow sides (`Wall::Outflow`) on rings of 1, 2 and 3 slabs give the single lattice's
/// bits: the right side on the last slab, and a top side cut by the slabs, whose links read
/// the neighbouring columns across the cuts.
#[test]
fn outflows_on_slabs_match_the_single_lattice() {
    let spec = BoundarySpec {
        left: Some(Wall::ZouHeVelocity {
            velocity: [0.03, 0.01, 0.0],
        }),
        right: Some(Wall::Outflow),
        bottom: Some(Wall::NO_SLIP),
        top: Some(Wall::Outflow),
        ..BoundarySpec::periodic()
    };
    for ranks in [1, 2, 3] {
        ring_in_scheme_matches_single::<Soa, f64>(18, 12, spec.clone(), ranks, Scheme::TwoCopy);
    }
}

/// Linear curved walls in place on rings of 1, 2 and 3 slabs give the single two-copy
/// lattice's bits: a disc across the periodic edge and the slabs' cuts, whose links hold
/// their own leaving populations where the pull half-step pushed them into a halo.
#[test]
fn curved_walls_in_place_on_slabs_match_the_single_lattice() {
    let disc = |x: usize, y: usize| {
        let dx = (x as f64 - 0.4).abs().min((x as f64 - 18.4).abs());
        dx.hypot(y as f64 - 6.0) < 2.7 || (x as f64 - 9.5).hypot(y as f64 - 5.0) < 2.4
    };
    let spread = |[x, y, _]: [usize; 3], c: [i32; 3]| {
        let k = (x * 7 + y * 3) as i32 + c[0] * 5 + c[1] * 11;
        Some(0.05 + 0.95 * f64::from(k.rem_euclid(10)) / 9.0)
    };
    let spec = BoundarySpec {
        solid: Some(crate::Obstacles::new(disc).with_wall_distance(spread)),
        ..BoundarySpec::periodic()
    };
    for ranks in [1, 2, 3] {
        ring_in_scheme_matches_single::<Soa, f64>(18, 12, spec.clone(), ranks, Scheme::InPlace);
    }
}
