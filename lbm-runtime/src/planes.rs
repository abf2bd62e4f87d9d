//! The planes outputs are written by: the sites of a lattice's moments as the outputs take
//! them (VTK pieces, images, diagnostics, derivatives across the processes' edges), one range
//! of x-planes per process in rank order. A process holding whole planes (one process, a slab
//! of a ring) writes its own; where the lattice is cut along y or z, the moments of the
//! blocks are moved to an even share of the planes per process ([`to_planes`]), as a ring of
//! that many processes would hold them, so that every output is written once for both.

use std::ops::Range;

use crate::blocks::{Blocks, Cut};
use crate::group::Transfers;

/// The x-planes process `rank` of `ranks` writes the outputs of, holding the sites `local` of
/// a lattice of `size` sites: its own planes where `local` is whole planes, otherwise its
/// even share ([`Blocks::even`] along x).
pub fn output_planes(
    local: &[Range<usize>; 3],
    size: [usize; 3],
    (rank, ranks): (usize, usize),
) -> Range<usize> {
    if whole_planes(local, size) {
        return local[0].clone();
    }
    Blocks::even(size, Cut::along(0, ranks)).range(rank, 0)
}

/// Whether the sites `local` are whole planes of a lattice of `size` sites.
pub fn whole_planes(local: &[Range<usize>; 3], size: [usize; 3]) -> bool {
    local[1] == (0..size[1]) && local[2] == (0..size[2])
}

/// Per-site `fields` of this process's sites `boxes[rank]` (each indexed
/// `[(x − x0)·P + s]`, `P` the box's sites per plane, `s = (z − z0)·ny + y − y0`) moved to the
/// processes' planes `planes` (each field then indexed `[(x − x0)·LY·LZ + z·LY + y]` over
/// `planes[rank]`), in a lattice of `size` sites (collective: each process sends every
/// other the part of its box on their planes, one pair of processes after another).
pub fn to_planes(
    group: &dyn Transfers<f64>,
    (boxes, planes): (&[[Range<usize>; 3]], &[Range<usize>]),
    size: [usize; 3],
    fields: &[Vec<f64>],
) -> Vec<Vec<f64>> {
    let (me, n) = (group.rank(), group.ranks());
    let (ly, plane) = (size[1], size[1] * size[2]);
    // The planes of `from`'s box that are `to`'s (empty, at the box's start, if none).
    let on = |from: usize, to: usize| {
        let (xs, p) = (&boxes[from][0], &planes[to]);
        let (a, b) = (xs.start.max(p.start), xs.end.min(p.end));
        if a < b {
            a..b
        } else {
            xs.start..xs.start
        }
    };
    let per_plane = |b: &[Range<usize>; 3]| b[1].len() * b[2].len();
    // What `from` sends `to`: each field's values on the planes they share.
    let pack = |to: usize| -> Vec<f64> {
        let (xs, b) = (on(me, to), &boxes[me]);
        let (x0, per) = (b[0].start, per_plane(b));
        (fields.iter())
            .flat_map(|f| &f[(xs.start - x0) * per..(xs.end - x0) * per])
            .copied()
            .collect()
    };
    let mut out = vec![vec![0.0; planes[me].len() * plane]; fields.len()];
    let mut unpack = |from: usize, values: &[f64]| {
        let (xs, b) = (on(from, me), &boxes[from]);
        let (ny, per) = (b[1].len(), per_plane(b));
        let count = xs.len() * per;
        for (f, values) in out.iter_mut().zip(values.chunks(count.max(1))) {
            for (k, &v) in values.iter().take(count).enumerate() {
                let (x, s) = (xs.start + k / per, k % per);
                let (y, z) = (b[1].start + s % ny, b[2].start + s / ny);
                f[(x - planes[me].start) * plane + z * ly + y] = v;
            }
        }
    };
    unpack(me, &pack(me));
    for k in 1..n {
        let (to, from) = ((me + k) % n, (me + n - k) % n);
        // Every message of this round padded to the longest, which every process knows: a
        // receive is sized by what goes the other way.
        let longest = (0..n)
            .map(|r| on(r, (r + k) % n).len() * per_plane(&boxes[r]) * fields.len())
            .max()
            .unwrap_or(0);
        let mut mine = pack(to);
        mine.resize(longest, 0.0);
        let [got, _] = group.swap((from, to), [Vec::new(), mine]);
        unpack(from, &got);
    }
    out
}
