//! The engine's blocks: a box of nodes cut into blocks on a Cartesian grid along 1, 2 or 3
//! axes, one block per process of a run ([`crate::group`]), after waLBerla's block forest and
//! OpenLB's cuboids.
//!
//! A block holds its own nodes plus ghost layers as deep as the kernels reach on every side;
//! the ghosts are refilled after each update by one exchange **axis after axis**: along x
//! each block sends its first and last layers of nodes to its neighbours below and above and
//! takes theirs into its ghosts, then along y over the whole padded extent in x (the x ghosts
//! included), then along z over the padded extents of x and y. The second and third exchanges
//! carry what the first brought, so edges and corners arrive with two (three) messages a
//! block instead of the 8 (26) of a neighbour-by-neighbour exchange. Along an axis that is
//! not cut, the one block is its own neighbour below and above: its periodic wrap.
//!
//! ```text
//!   y ▲  ┌─────────┬─────────┐   blocks [2, 2, 1] of an 8 × 6 box; rank = bx + 2·by
//!     │  │ rank 2  │ rank 3  │   (x fastest). Each block holds 4 × 3 nodes and g ghost
//!     │  │         │         │   layers on every side (ghosts of x first, then of y,
//!     │  ├─────────┼─────────┤   which carry the corners).
//!     │  │ rank 0  │ rank 1  │
//!     │  │         │         │
//!        └─────────┴─────────┘ ─▶ x
//! ```
//!
//! Every node of a block computes the very arithmetic of the whole box in one process, so a
//! run on any cut is bitwise the single process on the CPU.

use std::fmt;
use std::ops::Range;
use std::str::FromStr;

/// How a run's box is cut into blocks, one per process: every block of a grid
/// ([`Decomposition::Cut`]), or the blocks of a given size that hold fluid
/// ([`Decomposition::Sparse`], [`Blocks::sparse`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decomposition {
    /// Every block of the cut.
    Cut(Cut),
    /// Blocks of about these sites per axis, those that hold no fluid left out: a sparse
    /// domain (`crate::domain::sparse_blocks`).
    Sparse([usize; 3]),
}

impl Decomposition {
    /// The grid of blocks a box of `nodes` is cut into (a sparse domain keeps some of them):
    /// the cut, or `⌈n/size⌉` blocks along each axis of `n` nodes.
    pub fn grid(&self, nodes: [usize; 3]) -> Cut {
        match self {
            Self::Cut(cut) => *cut,
            Self::Sparse(size) => Cut([0, 1, 2].map(|a| nodes[a].div_ceil(size[a].max(1)).max(1))),
        }
    }

    /// The nodes per axis of the largest block of a box of `nodes` ([`even_bounds`] along
    /// each axis of [`Decomposition::grid`]): what a process holds at most, before its ghost
    /// layers.
    pub fn largest_block(&self, nodes: [usize; 3]) -> [usize; 3] {
        let grid = self.grid(nodes);
        [0, 1, 2].map(|a| nodes[a].div_ceil(grid.0[a].max(1)))
    }
}

impl From<Cut> for Decomposition {
    fn from(cut: Cut) -> Self {
        Self::Cut(cut)
    }
}

impl fmt::Display for Decomposition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Cut(cut) => write!(f, "{cut}"),
            Self::Sparse(block) => write!(f, "in blocks of {} that hold fluid", Cut(*block)),
        }
    }
}

/// Blocks per axis, x first (`[bx, by, bz]`; `bz = 1` in 2-D): written `AxBxC` (`AxB` in 2-D).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Cut(pub [usize; 3]);

impl Cut {
    /// One block: the whole box.
    pub const WHOLE: Cut = Cut([1, 1, 1]);

    /// `n` blocks along `axis` alone (the seeds' ring is `Cut::along(outer, n)`).
    pub fn along(axis: usize, n: usize) -> Self {
        let mut c = [1; 3];
        c[axis] = n;
        Cut(c)
    }

    /// `ranks` blocks over the first `dim` axes of a box of `nodes`, balanced as
    /// `MPI_Dims_create` does (the factors of `ranks` as close to each other as the prime
    /// factors allow: each prime, largest first, multiplies the axis whose count is the
    /// smallest so far), the largest count on the axis with the most nodes (ties: the
    /// `outermost` axis of the storage, whose faces are contiguous — x for a lattice's planes,
    /// the last axis for a finite-difference grid —, then the others from the last).
    pub fn balanced(ranks: usize, dim: usize, nodes: [usize; 3], outermost: usize) -> Self {
        let dim = dim.clamp(1, 3);
        let mut counts = vec![1usize; dim];
        for p in prime_factors(ranks.max(1)).into_iter().rev() {
            let least = (0..dim).min_by_key(|&a| counts[a]).unwrap_or(0);
            counts[least] *= p;
        }
        counts.sort_unstable_by(|a, b| b.cmp(a));
        let mut axes: Vec<usize> = (0..dim).collect();
        axes.sort_by(|&a, &b| {
            let key = |x: usize| (nodes[x], x == outermost, x);
            key(b).cmp(&key(a))
        });
        let mut c = [1; 3];
        for (&axis, &count) in axes.iter().zip(&counts) {
            c[axis] = count;
        }
        Cut(c)
    }

    /// The number of blocks.
    pub fn blocks(&self) -> usize {
        self.0.iter().product()
    }

    /// The axes cut into more than one block.
    pub fn cut_axes(&self) -> impl Iterator<Item = usize> + '_ {
        (0..3).filter(|&a| self.0[a] > 1)
    }
}

impl fmt::Display for Cut {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let [x, y, z] = self.0;
        write!(f, "{x}x{y}x{z}")
    }
}

impl FromStr for Cut {
    type Err = String;

    /// `A`, `AxB` or `AxBxC`: blocks along x, y, z (the others 1), each a whole number ≥ 1.
    fn from_str(s: &str) -> Result<Self, String> {
        let parts: Vec<&str> = s.trim().split(['x', 'X', '×']).collect();
        if parts.is_empty() || parts.len() > 3 {
            return Err(format!(
                "`{s}` is not a cut: give blocks per axis as AxB (2-D) or AxBxC (3-D), e.g. 2x2x2"
            ));
        }
        let mut c = [1; 3];
        for (a, p) in parts.iter().enumerate() {
            c[a] = match p.trim().parse::<usize>() {
                Ok(n) if n >= 1 => n,
                _ => {
                    return Err(format!(
                        "`{s}` is not a cut: `{p}` is not a whole number ≥ 1 of blocks (give AxB or AxBxC, e.g. 2x2x2)"
                    ))
                }
            };
        }
        Ok(Cut(c))
    }
}

/// The prime factors of `n`, smallest first.
fn prime_factors(mut n: usize) -> Vec<usize> {
    let mut out = Vec::new();
    let mut p = 2;
    while p * p <= n {
        while n.is_multiple_of(p) {
            out.push(p);
            n /= p;
        }
        p += 1;
    }
    if n > 1 {
        out.push(n);
    }
    out
}

/// `n` nodes cut into `parts` consecutive ranges whose lengths differ by at most one (the
/// first `n mod parts` one longer): their bounds, `parts + 1` of them from 0 to `n`.
pub fn even_bounds(n: usize, parts: usize) -> Vec<usize> {
    let parts = parts.max(1);
    let (base, extra) = (n / parts, n % parts);
    (0..=parts).map(|r| r * base + r.min(extra)).collect()
}

/// The nodes a block of `l` nodes per axis sends in one exchange of ghost layers `g` deep along
/// the axes `cut` cuts, axis after axis as the engine exchanges ([module docs](self)): along
/// each cut axis `a`, two messages of `g` layers whose extent along every other axis `b` is
/// `l_b`, plus `2g` where the block has ghost layers along `b` (`ghosts[b]`: what carries the
/// edges and corners),
///
/// ```text
/// halo = Σ_{a cut} 2 g Π_{b ≠ a} (l_b + 2 g [ghosts_b])
/// ```
///
/// (`l_z = 1` and no ghosts along z in 2-D). A 1-D cut along x of a lattice whose y and z have
/// no ghost layers sends `2 g L_y L_z`; a cube of side `l` cut along all three axes, with
/// ghosts along each, `6 g (l + 2g)²`.
pub fn halo_nodes(l: [usize; 3], cut: Cut, g: usize, ghosts: [bool; 3]) -> usize {
    cut.cut_axes()
        .map(|a| {
            let across: usize = (0..3)
                .filter(|&b| b != a)
                .map(|b| l[b] + if ghosts[b] { 2 * g } else { 0 })
                .product();
            2 * g * across
        })
        .sum()
}

/// A box of nodes cut into blocks: along each axis the bounds of the blocks' ranges (the same
/// for every block of a row, a tensor grid), block `rank` at coordinates
/// [`Blocks::coords`]`(rank)`, x fastest. A sparse box ([`Blocks::sparse`]) keeps only the
/// blocks of the grid that hold fluid: `rank` then numbers those, in the grid's order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Blocks {
    bounds: [Vec<usize>; 3],
    /// The grid indices of the blocks kept, increasing; `None`: every block of the grid.
    kept: Option<Vec<usize>>,
}

/// The processes a block exchanges ghost layers with along an axis, `[below, above]`: `None`
/// where the neighbour is a block of a sparse box that is not kept (it holds no fluid, and
/// no fluid node reads its nodes: [`Blocks::sparse`]).
pub type Peers = [Option<usize>; 2];

impl Blocks {
    /// The box of `nodes` in one block.
    pub fn whole(nodes: [usize; 3]) -> Self {
        Self::even(nodes, Cut::WHOLE)
    }

    /// The box of `nodes` cut evenly ([`even_bounds`]) into `cut`'s blocks.
    pub fn even(nodes: [usize; 3], cut: Cut) -> Self {
        Self {
            bounds: [0, 1, 2].map(|a| even_bounds(nodes[a], cut.0[a])),
            kept: None,
        }
    }

    /// The box of `nodes` cut into blocks of about `size` nodes per axis (`⌈n / size⌉` blocks
    /// along an axis of `n`, [`even_bounds`]), keeping those whose nodes, widened by `reach`
    /// on every side (around the box's periodic wrap), include one where `fluid([x, y, z])`
    /// holds: waLBerla's and lbmpy's sparse domains, the blocks of solid alone never
    /// allocated. With `reach` the kernels' (the halo), no fluid node reads a node of a block
    /// that is not kept, nor any node its exchange would relay: the edges and corners
    /// between two kept blocks travel through kept blocks only, so the fluid of a sparse box
    /// computes what the whole box's does. `None` where no block holds fluid.
    pub fn sparse(
        nodes: [usize; 3],
        size: [usize; 3],
        reach: usize,
        fluid: &(dyn Fn([usize; 3]) -> bool + Sync),
    ) -> Option<Self> {
        let cut = Decomposition::Sparse(size).grid(nodes);
        let grid = Self::even(nodes, cut);
        let widened = |g: usize| -> [Vec<usize>; 3] {
            let c = grid.grid_coords(g);
            [0, 1, 2].map(|a| {
                let (lo, hi, n) = (grid.bounds[a][c[a]], grid.bounds[a][c[a] + 1], nodes[a]);
                if hi - lo + 2 * reach >= n {
                    return (0..n).collect();
                }
                (lo + n - reach..hi + n + reach).map(|v| v % n).collect()
            })
        };
        let holds_fluid = |g: usize| {
            let [xs, ys, zs] = widened(g);
            xs.iter()
                .any(|&x| zs.iter().any(|&z| ys.iter().any(|&y| fluid([x, y, z]))))
        };
        let kept: Vec<usize> = crate::parallel::filter(0..cut.blocks(), &holds_fluid);
        (!kept.is_empty()).then_some(Self {
            kept: Some(kept),
            ..grid
        })
    }

    /// The box of `nodes` cut along `axis` at the given `bounds` (from 0 to `nodes[axis]`,
    /// increasing), whole along the others.
    ///
    /// # Panics
    /// If the bounds do not run from 0 to `nodes[axis]` in increasing order.
    pub fn along(nodes: [usize; 3], axis: usize, bounds: Vec<usize>) -> Self {
        assert!(
            bounds.first() == Some(&0)
                && bounds.last() == Some(&nodes[axis])
                && bounds.windows(2).all(|w| w[0] < w[1]),
            "block bounds {bounds:?} do not cut 0..{} in order",
            nodes[axis]
        );
        let mut b = Self::whole(nodes);
        b.bounds[axis] = bounds;
        b
    }

    /// Blocks per axis of the grid (a sparse box keeps some of them).
    pub fn cut(&self) -> Cut {
        Cut(self.bounds.clone().map(|b| b.len() - 1))
    }

    /// The number of blocks (those kept, in a sparse box).
    pub fn count(&self) -> usize {
        self.kept.as_ref().map_or(self.cut().blocks(), Vec::len)
    }

    /// Whether blocks of the grid are left out (they hold no fluid: [`Blocks::sparse`]).
    pub fn is_sparse(&self) -> bool {
        self.count() < self.cut().blocks()
    }

    /// The whole box's nodes per axis.
    pub fn nodes(&self) -> [usize; 3] {
        [0, 1, 2].map(|a| *self.bounds[a].last().expect("bounds hold at least 0"))
    }

    /// Whether the box is cut into more than one block along `axis`.
    pub fn is_cut(&self, axis: usize) -> bool {
        self.bounds[axis].len() > 2
    }

    /// The block coordinates of block `rank` (x fastest).
    pub fn coords(&self, rank: usize) -> [usize; 3] {
        self.grid_coords(self.kept.as_ref().map_or(rank, |k| k[rank]))
    }

    /// The coordinates of the grid's block `g` (x fastest), kept or not.
    fn grid_coords(&self, g: usize) -> [usize; 3] {
        let [bx, by, _] = self.cut().0;
        [g % bx, (g / bx) % by, g / (bx * by)]
    }

    /// The block at block coordinates `c`: `None` where a sparse box does not keep it.
    pub fn rank_at(&self, c: [usize; 3]) -> Option<usize> {
        let [bx, by, _] = self.cut().0;
        let g = c[0] + bx * (c[1] + by * c[2]);
        match &self.kept {
            None => Some(g),
            Some(kept) => kept.binary_search(&g).ok(),
        }
    }

    /// The nodes of block `rank` along each axis, in the whole box's numbering.
    pub fn block(&self, rank: usize) -> [Range<usize>; 3] {
        let c = self.coords(rank);
        [0, 1, 2].map(|a| self.bounds[a][c[a]]..self.bounds[a][c[a] + 1])
    }

    /// The nodes of block `rank` along `axis`, in the whole box's numbering.
    pub fn range(&self, rank: usize, axis: usize) -> Range<usize> {
        let c = self.coords(rank)[axis];
        self.bounds[axis][c]..self.bounds[axis][c + 1]
    }

    /// Block `rank`'s neighbours below and above along `axis`, the row closing on itself (a
    /// block alone along an axis is its own neighbour both ways); `None` for a block a sparse
    /// box does not keep.
    pub fn neighbours(&self, rank: usize, axis: usize) -> Peers {
        let n = self.bounds[axis].len() - 1;
        let c = self.coords(rank);
        let at = |k: usize| {
            let mut c = c;
            c[axis] = k;
            self.rank_at(c)
        };
        [at((c[axis] + n - 1) % n), at((c[axis] + 1) % n)]
    }

    /// The thinnest block along `axis`.
    pub fn thinnest(&self, axis: usize) -> usize {
        self.bounds[axis]
            .windows(2)
            .map(|w| w[1] - w[0])
            .min()
            .unwrap_or(0)
    }
}

/// The global lattice's extent: sites along each axis, x (the axis cut over ranks) first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Extent {
    axes: [usize; 3],
    dim: usize,
}

impl Extent {
    /// The extent of a lattice of `axes.len()` (1 to 3) dimensions.
    ///
    /// # Panics
    /// If `axes` is empty or has more than three entries (a programming error).
    pub fn new(axes: &[usize]) -> Self {
        assert!((1..=3).contains(&axes.len()), "1 to 3 axes, got {axes:?}");
        let mut a = [1; 3];
        a[..axes.len()].copy_from_slice(axes);
        Self {
            axes: a,
            dim: axes.len(),
        }
    }

    /// Sites along each axis, x first.
    pub fn axes(&self) -> &[usize] {
        &self.axes[..self.dim]
    }

    /// The extent of a lattice of `[LX, LY, LZ]` sites: two-dimensional when `LZ = 1`.
    pub fn of_size(size: [usize; 3]) -> Self {
        match size {
            [lx, ly, 1] => Self::new(&[lx, ly]),
            _ => Self::new(&size),
        }
    }

    /// Sites along each axis, x first, three of them (`LZ = 1` in 2-D).
    pub fn size(&self) -> [usize; 3] {
        self.axes
    }

    /// The number of x-planes (the global width `LX`).
    pub fn planes(&self) -> usize {
        self.axes[0]
    }

    /// Sites in one x-plane (`LY` in 2-D, `LY·LZ` in 3-D).
    pub fn plane_sites(&self) -> usize {
        self.axes[1..self.dim].iter().product()
    }

    /// Sites in the whole lattice.
    pub fn sites(&self) -> usize {
        self.planes() * self.plane_sites()
    }
}

impl std::fmt::Display for Extent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let parts: Vec<String> = self.axes().iter().map(|a| a.to_string()).collect();
        f.write_str(&parts.join("×"))
    }
}

#[cfg(test)]
#[path = "blocks_tests.rs"]
mod tests;
