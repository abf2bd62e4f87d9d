//! Unit tests of the decomposition with the hand-written D2Q9 of [`crate::testing`] (the ring
//! that runs it: `distributed_tests.rs`).

use super::*;
use crate::testing::{TestD2Q9, P};
use crate::CSoa;

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
    assert_eq!(
        (dec.neighbours(0, 0)[0], dec.neighbours(4, 0)[1]),
        (Some(4), Some(0))
    );
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

/// A slab refuses populations cut for another slab's width, saying what it expected.
#[test]
fn a_slab_refuses_the_populations_of_another_width() {
    let g = GlobalSpec::<TestD2Q9> {
        lx: 13,
        ly: 12,
        lz: 1,
        params: P,
        boundaries: BoundarySpec::channel(),
    };
    let slab = |ranks| {
        let dec = ring_blocks::<TestD2Q9>(g.size(), ranks).unwrap();
        Slab::<TestD2Q9, CSoa<4>, f64>::new(&g, &dec, 0, Scheme::TwoCopy).unwrap()
    };
    let wrong = slab(3).export();
    assert!(matches!(
        slab(2).import(&wrong),
        Err(LbmError::Shape(m)) if m.contains("expected")
    ));
}

/// A sparse domain's blocks spread over processes as evenly as they go, the first ones one
/// more; more processes than blocks are refused, saying how many may run it. A box of 4 × 4
/// blocks of 4 × 4 sites whose fluid is a channel along x through the second row of blocks
/// (within a site of it, only that row): 4 blocks kept.
#[test]
fn a_sparse_domain_spreads_its_blocks_over_the_processes() {
    let spec = GlobalSpec::<TestD2Q9> {
        lx: 16,
        ly: 16,
        lz: 1,
        params: P,
        boundaries: crate::BoundarySpec {
            solid: Some(crate::Obstacles::new(|_, y| !(5..7).contains(&y))),
            ..crate::BoundarySpec::periodic()
        },
    };
    let spread = |ranks| sparse_spread(&spec, [4, 4, 1], ranks);
    assert_eq!(spread(1).unwrap(), [4]);
    assert_eq!(spread(3).unwrap(), [2, 1, 1]);
    assert_eq!(spread(4).unwrap(), [1, 1, 1, 1]);
    let e = spread(5).unwrap_err().to_string();
    assert!(
        e.contains("of its 4x4x1 blocks, 4 hold fluid: run it on at most 4 processes"),
        "{e}"
    );
}
