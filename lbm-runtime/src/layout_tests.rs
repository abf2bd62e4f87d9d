use super::*;

const D: Dims = Dims {
    lx: 3,
    ly: 16,
    lz: 1,
    halo: 1,
    q: 5,
    ring: None,
};

/// Every (i, col, s) gets a distinct index inside the array, in 2-D and in 3-D: the
/// layouts are bijections.
fn check_bijection<L: Layout>() {
    for d in [D, Dims { lz: 3, ..D }] {
        let mut seen = vec![false; d.len()];
        for i in 0..d.q {
            for col in 0..d.ncols() {
                for s in 0..d.plane() {
                    let idx = L::index(&d, i, col, s);
                    assert!(!seen[idx], "{}: index {idx} used twice", L::NAME);
                    seen[idx] = true;
                    let (y, z) = d.yz(s);
                    assert_eq!(d.plane_site(y, z), s);
                    let (k, l) = L::cluster_lane(&d, y);
                    assert_eq!(L::site_y(&d, k, l), y);
                }
            }
        }
        assert!(seen.iter().all(|&s| s), "{}: not onto", L::NAME);
    }
}

/// `shifted` agrees with per-site addressing of `y + dy` for every cluster and lane.
fn check_shift<L: Layout>() {
    for dy in -3isize..=3 {
        for k in 0..L::clusters(&D) {
            for l in 0..L::VL {
                let target = L::index(&D, 2, 1, D.wrap_y(L::site_y(&D, k, l), dy));
                match L::shifted(&D, 2, 1, k, dy) {
                    Shifted::Contiguous { base, rotate } => {
                        let lane = (l as isize + rotate).rem_euclid(L::VL as isize) as usize;
                        assert_eq!(base + lane, target, "{} k={k} l={l} dy={dy}", L::NAME);
                    }
                    Shifted::PerLane => {}
                }
            }
        }
    }
}

/// On the interior, every shift is a plain cluster at a constant offset.
fn check_interior<L: Layout>() {
    let d = Dims {
        halo: 3,
        ly: 64,
        ..D
    };
    let r = L::interior(&d);
    assert!(!r.is_empty(), "{}", L::NAME);
    for dy in -3isize..=3 {
        let off = |k: usize, col: usize| match L::shifted(&d, 2, col, k, dy) {
            Shifted::Contiguous { base, rotate: 0 } => {
                base as isize - L::cluster_base(&d, 2, col, k) as isize
            }
            other => panic!("{}: k={k} dy={dy} gives {other:?}", L::NAME),
        };
        let o = off(r.start, 0);
        for k in r.clone() {
            for col in 0..d.ncols() {
                assert_eq!(off(k, col), o, "{} k={k} col={col} dy={dy}", L::NAME);
            }
        }
    }
}

#[test]
fn interior_shifts_have_constant_offsets() {
    check_interior::<Aos>();
    check_interior::<Soa>();
    check_interior::<CSoa<4>>();
    check_interior::<CAoSoa<4>>();
}

#[test]
fn layouts_are_bijections() {
    check_bijection::<Aos>();
    check_bijection::<Soa>();
    check_bijection::<CSoa<4>>();
    check_bijection::<CAoSoa<4>>();
}

#[test]
fn shifted_clusters_match_site_addressing() {
    check_shift::<Aos>();
    check_shift::<Soa>();
    check_shift::<CSoa<4>>();
    check_shift::<CAoSoa<4>>();
}

#[test]
fn caosoa_packs_partitions() {
    // LY = 16, VL = 4: partitions of 4 sites; cluster 1 holds y = 1, 5, 9, 13.
    let ys: Vec<usize> = (0..4).map(|l| CAoSoa::<4>::site_y(&D, 1, l)).collect();
    assert_eq!(ys, [1, 5, 9, 13]);
    // The Q clusters of one k follow each other.
    assert_eq!(
        CAoSoa::<4>::cluster_base(&D, 1, 0, 0),
        CAoSoa::<4>::cluster_base(&D, 0, 0, 0) + 4
    );
}
