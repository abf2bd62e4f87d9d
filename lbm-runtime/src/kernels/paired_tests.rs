use super::*;
use crate::testing::TestD2Q9;
use crate::CAoSoa;

/// A ring holds the `2H + 1` planes a pull reads; with periodic x it divides `LX`, and no
/// ring is wider than `4(2H + 1)` planes or the lattice.
#[test]
fn rings_fit_the_pull_and_the_periodic_wrap() {
    let ring = |lx: usize, halo: usize, periodic: bool| {
        let d = Dims {
            halo,
            ..Dims::of::<TestD2Q9>([lx, 64, 1])
        };
        let r = PairedCopy::<TestD2Q9, CAoSoa<8>, f64>::ring(&d, periodic);
        r.map(|r| {
            (
                r.ncols(),
                r.len() / r.ncols(),
                r.col(-1),
                r.col(lx as isize),
            )
        })
    };
    let plane = 64 * 9;
    assert_eq!(ring(40, 1, true), Some((4, plane, 3, 0)));
    assert_eq!(ring(40, 1, false), Some((3, plane, 2, 1)));
    assert_eq!(ring(50, 3, true), Some((10, plane, 9, 0)));
    assert_eq!(ring(37, 1, true), None, "37 is prime");
    assert_eq!(ring(37, 1, false).map(|r| r.0), Some(3));
    assert_eq!(ring(5, 3, false), None, "narrower than a pull");
}

/// Chunks cover the columns once, in order; seams are the `halo` columns each side of
/// every chunk's start, wrapping at 0; short lattices get fewer chunks than workers.
#[test]
fn chunks_and_seams() {
    let c = Chunks::new(40, 1, 2);
    assert_eq!((c.cols(0), c.cols(1)), (0..20, 20..40));
    let seams: Vec<usize> = (0..40).filter(|&x| c.seam(x)).collect();
    assert_eq!(seams, [0, 19, 20, 39]);
    let c = Chunks::new(40, 3, 2);
    let seams: Vec<usize> = (0..40).filter(|&x| c.seam(x)).collect();
    assert_eq!(seams, [0, 1, 2, 17, 18, 19, 20, 21, 22, 37, 38, 39]);
    assert_eq!(
        Chunks::new(40, 3, 8).n,
        2,
        "chunks of at least 4H + 4 columns"
    );
    assert_eq!(Chunks::new(5, 3, 8).n, 1);
    let c = Chunks::new(5, 3, 8);
    assert!(
        (0..5).all(|x| c.seam(x)),
        "a lattice narrower than its seams is all seam"
    );
}
