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

/// A reader of the moment fields of a process's columns `cols` ([`crate::Solver::with_moments`]).
pub type Columns<'a> = &'a mut dyn FnMut(Range<usize>) -> Vec<Vec<f64>>;

/// The most bytes [`to_planes`] moves in one message (at least one plane): a few planes at a
/// time, so that a process holds its share of the planes and little beside its block.
const MESSAGE_BYTES: usize = 1 << 20;

/// `count` per-site fields of this process's sites `boxes[rank]`, read a few columns at a
/// time by `fields(cols)` (the box's columns `cols`, `x − x0`; each field indexed
/// `[(x − x0 − cols.start)·P + s]`, `P` the box's sites per plane, `s = (z − z0)·ny + y − y0`),
/// moved to the processes' planes `planes` (each field then indexed `[(x − x0)·LY·LZ + z·LY +
/// y]` over `planes[rank]`), in a lattice of `size` sites (collective: each process sends
/// every other the part of its box on their planes, one pair of processes after another, a
/// few planes a message).
pub fn to_planes(
    group: &dyn Transfers<f64>,
    (boxes, planes): (&[[Range<usize>; 3]], &[Range<usize>]),
    size: [usize; 3],
    (count, fields): (usize, Columns<'_>),
) -> Vec<Vec<f64>> {
    moved(group, (boxes, planes), size, (count, fields), MESSAGE_BYTES)
}

/// [`to_planes`] in messages of at most `message_bytes` (at least one plane each).
fn moved(
    group: &dyn Transfers<f64>,
    (boxes, planes): (&[[Range<usize>; 3]], &[Range<usize>]),
    size: [usize; 3],
    (count, fields): (usize, Columns<'_>),
    message_bytes: usize,
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
    // Planes per message, the same on every process.
    let widest = boxes.iter().map(per_plane).max().unwrap_or(0);
    let chunk = (message_bytes / (widest * count * 8).max(1)).max(1);
    // The `i`-th message's planes of those `from` sends `to`.
    let part = |from: usize, to: usize, i: usize| {
        let xs = on(from, to);
        let a = (xs.start + i * chunk).min(xs.end);
        a..(a + chunk).min(xs.end)
    };
    // Each field's values on the planes `xs` of this process's box.
    let mut pack = |xs: Range<usize>| -> Vec<f64> {
        if xs.is_empty() {
            return Vec::new();
        }
        let x0 = boxes[me][0].start;
        fields(xs.start - x0..xs.end - x0).concat()
    };
    let mut out = vec![vec![0.0; planes[me].len() * plane]; count];
    let mut unpack = |from: usize, xs: Range<usize>, values: &[f64]| {
        let b = &boxes[from];
        let (ny, per) = (b[1].len(), per_plane(b));
        let len = xs.len() * per;
        for (f, values) in out.iter_mut().zip(values.chunks(len.max(1))) {
            for (k, &v) in values.iter().take(len).enumerate() {
                let (x, s) = (xs.start + k / per, k % per);
                let (y, z) = (b[1].start + s % ny, b[2].start + s / ny);
                f[(x - planes[me].start) * plane + z * ly + y] = v;
            }
        }
    };
    for i in 0..on(me, me).len().div_ceil(chunk) {
        let xs = part(me, me, i);
        unpack(me, xs.clone(), &pack(xs));
    }
    for k in 1..n {
        let (to, from) = ((me + k) % n, (me + n - k) % n);
        let messages = (0..n)
            .map(|r| on(r, (r + k) % n).len().div_ceil(chunk))
            .max()
            .unwrap_or(0);
        for i in 0..messages {
            // Every message padded to the longest of its round, which every process knows:
            // a receive is sized by what goes the other way.
            let longest = (0..n)
                .map(|r| part(r, (r + k) % n, i).len() * per_plane(&boxes[r]) * count)
                .max()
                .unwrap_or(0);
            let mut mine = pack(part(me, to, i));
            mine.resize(longest, 0.0);
            let [got, _] = group.swap([Some(from), Some(to)], [Vec::new(), mine]);
            unpack(from, part(from, me, i), &got);
        }
    }
    out
}

#[cfg(test)]
#[path = "planes_tests.rs"]
mod tests;
