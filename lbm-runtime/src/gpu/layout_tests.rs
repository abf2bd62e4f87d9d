use super::*;
use crate::{Aos, CAoSoa, CSoa, Soa};

const D: Dims = Dims {
    lx: 5,
    ly: 24,
    lz: 1,
    halo: 3,
    q: 7,
    ring: None,
};

/// The affine model reproduces `Layout::index` for every population, column and row.
fn exhaustive<L: Layout>() {
    let a = AffineLayout::probe::<L>(&D).unwrap();
    assert_eq!(AffineLayout::of(L::KIND, &D).unwrap(), a, "{}", L::NAME);
    assert_eq!(L::KIND.name(), L::NAME);
    for i in 0..D.q {
        for col in 0..D.ncols() {
            for y in 0..D.ly {
                let (k, l) = a.lane_of(&D, y);
                let got = i as u64 * a.si + col as u64 * a.sc + k * a.sk + l;
                assert_eq!(
                    got,
                    L::index(&D, i, col, y) as u64,
                    "{} ({i},{col},{y})",
                    L::NAME
                );
                assert_eq!(a.index(&D, i, col, y), L::index(&D, i, col, y));
                assert_eq!(a.cluster_lane(&D, y), L::cluster_lane(&D, y));
                assert_eq!(a.population(got, D.q), i, "{} ({i},{col},{y})", L::NAME);
            }
        }
    }
}

#[test]
fn affine_model_matches_every_layout() {
    exhaustive::<Aos>();
    exhaustive::<Soa>();
    exhaustive::<CSoa<4>>();
    exhaustive::<CSoa<8>>();
    exhaustive::<CAoSoa<4>>();
    exhaustive::<CAoSoa<8>>();
}

#[test]
fn a_width_that_is_not_offered_is_refused() {
    let e = AffineLayout::of(LayoutKind::CSoa(3), &D).unwrap_err();
    assert!(e.to_string().contains("3 lanes"), "{e}");
}

#[test]
fn strides_are_those_of_seed_000() {
    let a = AffineLayout::probe::<CAoSoa<4>>(&D).unwrap();
    assert_eq!((a.si, a.sk, a.yk, a.yl), (4, 7 * 4, 1, 6));
    let s = AffineLayout::probe::<Soa>(&D).unwrap();
    assert_eq!((s.si, s.sc, s.sk), ((D.ncols() * D.ly) as u64, 24, 1));
}
