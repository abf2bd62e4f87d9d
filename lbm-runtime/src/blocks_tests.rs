use super::*;

#[test]
fn cuts_are_balanced_as_mpi_dims_create_does() {
    let cube = [64, 64, 64];
    let cases = [
        (1, 3, [1, 1, 1]),
        (2, 3, [1, 1, 2]),
        (4, 3, [1, 2, 2]),
        (6, 3, [1, 2, 3]),
        (8, 3, [2, 2, 2]),
        (12, 3, [2, 2, 3]),
        (16, 3, [2, 2, 4]),
        (7, 3, [1, 1, 7]),
        (4, 2, [2, 2, 1]),
        (6, 2, [2, 3, 1]),
        (36, 2, [6, 6, 1]),
        (3, 1, [3, 1, 1]),
    ];
    for (ranks, dim, want) in cases {
        let c = Cut::balanced(ranks, dim, cube, dim - 1);
        assert_eq!(c, Cut(want), "{ranks} ranks in {dim}-D");
        assert_eq!(c.blocks(), ranks);
    }
    // The largest count goes to the longest axis.
    assert_eq!(Cut::balanced(6, 3, [96, 32, 64], 2), Cut([3, 1, 2]));
    assert_eq!(Cut::balanced(2, 2, [144, 96, 1], 1), Cut([2, 1, 1]));
    // Ties go to the outermost axis first (a lattice's x), then from the last.
    assert_eq!(Cut::balanced(2, 3, [32; 3], 0), Cut([2, 1, 1]));
    assert_eq!(Cut::balanced(4, 3, [32; 3], 0), Cut([2, 1, 2]));
    assert_eq!(Cut::balanced(12, 3, [32; 3], 0), Cut([3, 2, 2]));
}

#[test]
fn cuts_are_read_and_written_as_axb_and_axbxc() {
    assert_eq!("2x3".parse::<Cut>(), Ok(Cut([2, 3, 1])));
    assert_eq!("2x2x2".parse::<Cut>(), Ok(Cut([2, 2, 2])));
    assert_eq!(Cut([1, 1, 3]).to_string(), "1x1x3");
    for bad in ["", "0x2", "2x", "2x2x2x2", "ax2", "-1"] {
        let e = bad.parse::<Cut>().unwrap_err();
        assert!(e.contains("AxB"), "{bad}: {e}");
    }
}

#[test]
fn blocks_tile_the_box_and_know_their_neighbours() {
    let b = Blocks::even([10, 7, 5], Cut([3, 2, 2]));
    assert_eq!(b.count(), 12);
    assert_eq!(b.nodes(), [10, 7, 5]);
    let mut seen = vec![0u8; 10 * 7 * 5];
    for r in 0..b.count() {
        assert_eq!(b.rank_at(b.coords(r)), Some(r));
        let [xs, ys, zs] = b.block(r);
        for k in zs {
            for j in ys.clone() {
                for i in xs.clone() {
                    seen[i + 10 * (j + 7 * k)] += 1;
                }
            }
        }
    }
    assert!(seen.iter().all(|&n| n == 1), "every node in one block");
    // Rank 4 sits at (1, 1, 0): x neighbours 3 and 5, y neighbours 1 and 1, z 10 and 10.
    assert_eq!(b.coords(4), [1, 1, 0]);
    assert_eq!(b.neighbours(4, 0), [Some(3), Some(5)]);
    assert_eq!(b.neighbours(4, 1), [Some(1), Some(1)]);
    assert_eq!(b.neighbours(4, 2), [Some(10), Some(10)]);
    assert_eq!(b.neighbours(0, 0), [Some(2), Some(1)], "the row closes");
    assert_eq!(b.block(0), [0..4, 0..4, 0..3]);
    assert_eq!(b.thinnest(0), 3);
    assert!(b.is_cut(2) && !Blocks::whole([4, 4, 1]).is_cut(0));
    let split = Blocks::along([8, 9, 1], 1, vec![0, 3, 6, 9]);
    assert_eq!(split.cut(), Cut([1, 3, 1]));
    assert_eq!(split.block(2), [0..8, 6..9, 0..1]);
    assert_eq!(even_bounds(10, 3), vec![0, 4, 7, 10]);
}

#[test]
fn the_halo_is_the_faces_of_the_cut_axes() {
    // A slab of a lattice without ghosts along y and z: 2 g Ly Lz.
    assert_eq!(
        halo_nodes([4, 6, 5], Cut([3, 1, 1]), 2, [true, false, false]),
        2 * 2 * 30
    );
    // A cube cut along every axis, ghosts along each: 6g (l + 2g)².
    let (l, g) = (8, 1);
    let cube = 6 * g * (l + 2 * g) * (l + 2 * g);
    assert_eq!(halo_nodes([l, l, l], Cut([2, 2, 2]), g, [true; 3]), cube);
    // Ghosts along every axis of a 2-D grid cut along y only: 2g (lx + 2g).
    assert_eq!(
        halo_nodes([10, 7, 1], Cut([1, 3, 1]), 2, [true, true, false]),
        2 * 2 * 14
    );
    assert_eq!(halo_nodes([10, 7, 1], Cut::WHOLE, 2, [true; 3]), 0);
}

#[test]
fn a_decomposition_gives_its_grid_and_its_largest_block() {
    let cut = Decomposition::from(Cut([3, 1, 1]));
    assert_eq!(cut.grid([10, 4, 1]), Cut([3, 1, 1]));
    assert_eq!(cut.largest_block([10, 4, 1]), [4, 4, 1]);
    // Blocks of about 16: 32 in two of 16, 50 in four of 13 or 12, one site in one block.
    let sparse = Decomposition::Sparse([16, 16, 16]);
    assert_eq!(sparse.grid([32, 50, 1]), Cut([2, 4, 1]));
    assert_eq!(sparse.largest_block([32, 50, 1]), [16, 13, 1]);
    let grid = Blocks::even([32, 50, 1], sparse.grid([32, 50, 1]));
    let widest = (0..grid.count()).map(|b| grid.range(b, 1).len()).max();
    assert_eq!(widest, Some(13));
}

#[test]
fn a_sparse_box_keeps_the_blocks_within_reach_of_fluid() {
    // A 12 × 8 box in blocks of 4 × 4 (3 × 2 of them); fluid at (5, 1) alone, in block 1.
    let fluid = |[x, y, _]: [usize; 3]| [x, y] == [5, 1];
    let b = Blocks::sparse([12, 8, 1], [4, 4, 1], 1, &fluid).unwrap();
    assert_eq!(b.cut(), Cut([3, 2, 1]));
    // Only block 1 (x 4..8, y 0..4) comes within a site of it: block 0 widened reaches x 4,
    // block 4 above (y 4..8) widened reaches y 3 (and 0 around the wrap).
    assert_eq!(b.count(), 1);
    assert!(b.is_sparse());
    assert_eq!(b.block(0), [4..8, 0..4, 0..1]);
    assert_eq!(b.neighbours(0, 0), [None, None]);
    assert_eq!(b.neighbours(0, 1), [None, None]);
    // Fluid on a block's face: its neighbour across the face reads it, so is kept too.
    let fluid = |[x, y, _]: [usize; 3]| [x, y] == [4, 1];
    let b = Blocks::sparse([12, 8, 1], [4, 4, 1], 1, &fluid).unwrap();
    assert_eq!(b.count(), 2);
    assert_eq!(
        (b.block(0), b.block(1)),
        ([0..4, 0..4, 0..1], [4..8, 0..4, 0..1])
    );
    assert_eq!(b.rank_at([1, 0, 0]), Some(1));
    assert_eq!(b.rank_at([2, 0, 0]), None);
    assert_eq!(b.neighbours(1, 0), [Some(0), None]);
    assert_eq!(b.neighbours(0, 0), [None, Some(1)]);
    // Across the periodic wrap: fluid at x = 0 keeps the last block of the row.
    let fluid = |[x, y, _]: [usize; 3]| [x, y] == [0, 6];
    let b = Blocks::sparse([12, 8, 1], [4, 4, 1], 1, &fluid).unwrap();
    assert_eq!(b.count(), 2);
    assert_eq!(b.coords(0), [0, 1, 0]);
    assert_eq!(b.coords(1), [2, 1, 0]);
    assert_eq!(b.neighbours(0, 0), [Some(1), None]);
    // Two fluid sites that meet across a block corner: the blocks beside the corner are kept
    // too, as the exchange relays the corner through them (axis after axis).
    let fluid = |[x, y, _]: [usize; 3]| [x, y] == [3, 3] || [x, y] == [4, 4];
    let b = Blocks::sparse([12, 8, 1], [4, 4, 1], 1, &fluid).unwrap();
    assert_eq!(b.count(), 4);
    assert!((0..4).all(|r| b.coords(r)[0] < 2));
    // Fluid everywhere keeps the whole grid; none keeps nothing.
    let all = Blocks::sparse([12, 8, 1], [4, 4, 1], 1, &|_| true).unwrap();
    let grid = Blocks::even([12, 8, 1], Cut([3, 2, 1]));
    assert!(!all.is_sparse() && all.count() == 6);
    assert!((0..6).all(|r| all.block(r) == grid.block(r)));
    assert!(Blocks::sparse([12, 8, 1], [4, 4, 1], 1, &|_| false).is_none());
}
