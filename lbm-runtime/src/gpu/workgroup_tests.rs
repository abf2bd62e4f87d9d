use super::*;
use crate::tuner::ROUNDS;

/// A large lattice's rows fit every size; a small one's are one row of the largest size;
/// a device capped below `256 / 32` workgroups keeps the fixed size's rows.
#[test]
fn rows_fit_every_size_the_limit_allows() {
    let big = Grid::plan(1 << 24, 65535).unwrap();
    assert_eq!(big.row % 256, 0);
    assert!(big.row / 32 <= 65535);
    assert_eq!(big.sizes, SIZES);
    assert_eq!(Grid::plan(100, 65535).unwrap().row, 256);
    let capped = Grid::plan(256, 3).unwrap();
    assert_eq!((capped.row, capped.sizes.as_slice()), (192, &[64][..]));
    assert_eq!(capped.dispatch(256, 64), (3, 2));
    assert_eq!(Grid::plan(16, 8).unwrap().sizes, SIZES);
    assert!(Grid::plan(64 * 10, 3).is_none());
    // Rows of 256 would need 20 of them; rows of nine 64-thread workgroups need 9.
    assert_eq!(Grid::plan(5000, 9).unwrap().row, 576);
}

/// Every grid runs all `n` threads and no whole row more, at every size it offers.
#[test]
fn dispatch_covers_the_threads() {
    for (threads, limit) in [(1000, 65535), (1 << 16, 64), (300, 5), (5000, 9)] {
        let g = Grid::plan(threads, limit).unwrap();
        for &s in &g.sizes {
            let (x, y) = g.dispatch(threads as usize, s);
            assert!(x <= limit && y <= limit, "{threads} {limit} {s}");
            let rows = u64::from(y);
            assert!(rows * u64::from(g.row) >= threads);
            assert!((rows - 1) * u64::from(g.row) < threads);
            assert!(u64::from(x * s) <= u64::from(g.row));
        }
    }
}

/// The tuning keeps the size of the fastest round, after every size has had its rounds.
#[test]
fn keeps_the_fastest_size() {
    let mut w = Workgroups::new(&Grid::plan(1 << 20, 65535).unwrap());
    assert_eq!(w.current(), FIXED);
    for _ in 0..ROUNDS * SIZES.len() {
        assert!(w.tuning());
        let s = w.current();
        w.record(ROUND_STEPS, if s == 128 { 1.0 } else { 1.4 });
    }
    assert!(!w.tuning());
    assert_eq!((w.chosen(), w.current()), (Some(128), 128));
}
