//! Domain decomposition (Calore et al. 2016 §4, 2019 §5): the global `LX × LY` (`× LZ`)
//! lattice is cut into one block per rank ([`cut_blocks`]); along x into slabs, the ranks
//! forming a periodic ring, each slab an ordinary [`Lattice`] whose `H = M::HALO` halo columns
//! on each side hold copies of the first (last) `H` columns of its right (left) neighbour;
//! along y and z too into blocks whose lattices store `H` ghost lines on each side of a cut
//! axis as ordinary lines ([`Frame`]), refilled by the exchange along that axis before the
//! one along x (see [`crate::distributed`]).
//!
//! # One step of a slab (Calore et al. 2016, Fig. 5)
//! ```text
//! post halo exchange      recv halo [−H, 0) ← left,  recv halo [lx, lx+H) ← right
//!                         send border [0, H) → left, send border [lx−H, lx) → right
//! update the bulk         x ∈ [H, lx − H): pulls from x − c_x ∈ [0, lx), no halo needed
//! wait for the exchange
//! update the borders      x ∈ [0, H) ∪ [lx − H, lx)
//! ```
//! Every site computes the very same arithmetic as in a single lattice, so a decomposed run
//! is bitwise identical to the single-process one. The bulk only reads what the exchange
//! reads (the border columns) and never what it writes (the halos), which is what lets the
//! exchange run under the bulk update.
//!
//! The halo columns travel between slabs in logical order ([`crate::slab_backend`]), whatever
//! the backend that runs a slab. The ring itself is [`crate::distributed::DistLattice`], on MPI
//! ranks, on the threads of one process, or on one process alone (its halos its own borders).
//!
//! Each block compiles the global boundaries for its own columns and its stored lines, a ghost
//! line as the global line it copies (`GlobalSpec::slab_boundaries`), so walls (x walls
//! included: the first and last slabs' outer halos are then never read) and obstacles act
//! exactly as in a single lattice, and no rank builds anything of the global lattice's size.
//!
//! # The in-place (AA) scheme on slabs
//! The pull half-step reads the halos like a two-copy step (the same exchange before it) and
//! pushes the populations that leave the slab into them; a second exchange sends those back
//! ([`crate::SlabBackend::pushed`]) and the neighbour writes them into its border columns
//! (`folded`), as the fold of a periodic lattice does with its own halos; a block cut along y
//! or z then folds its ghost lines along y, then z, the same way. The local half-step reads
//! only its own sites: no exchange. Two exchanges per two steps, as two-copy.

use std::ops::Range;

use crate::blocks::{Blocks, Cut, Decomposition, Extent};
use crate::boundary::{check_spec, Boundaries, BoundarySpec, Interpolation};
use crate::lattice::check_size;
use crate::layout::{Dims, Layout, LayoutKind};
use crate::{Block, Error, Lattice, LbmError, Model, Real, Scheme};

pub use crate::lattice::{export_block, import_block};
pub use crate::runtime_error::DomainError;

/// The cut of the global lattice of `nodes` into slabs over a ring of `ranks` ranks: the
/// [`Blocks`] of [`Cut::along`] x, rank `r` owning the global columns
/// `blocks.range(r, 0)`, widths differing by at most one column (the first `LX mod n` ranks
/// take one more: [`crate::blocks::even_bounds`]); rank `r`'s neighbours in the ring are
/// `blocks.neighbours(r, 0)`. Fails when a slab would be narrower than `max(M::HALO, 1)`
/// columns (every rank computes the same answer, so a bad rank count fails everywhere with
/// the same message, without communication).
pub fn ring_blocks<M: Model>(nodes: [usize; 3], ranks: usize) -> Result<Blocks, DomainError> {
    if ranks == 0 {
        return Err(DomainError::NoRanks);
    }
    let (lx, min_width) = (nodes[0], M::HALO.max(1));
    if lx / ranks < min_width {
        return Err(DomainError::TooManyRanks {
            lx,
            ranks,
            model: M::NAME,
            min_width,
            max_ranks: lx / min_width,
        });
    }
    Ok(Blocks::even(nodes, Cut::along(0, ranks)))
}

/// The global lattice of `nodes` cut `cut` over `ranks` processes (rank `r` owning
/// `blocks.block(r)`, x fastest): the ring of [`ring_blocks`] when `cut` is along x alone,
/// otherwise blocks along y and z too (the host's blocks, [`Frame`]). Fails when the
/// cut's block count is not `ranks`, when it cuts z of a 2-D lattice, or when a block would
/// be thinner than `max(M::HALO, 1)` sites along a cut axis (its neighbours' ghosts come
/// from it alone); every rank computes the same answer.
pub fn cut_blocks<M: Model>(
    nodes: [usize; 3],
    cut: Cut,
    ranks: usize,
) -> Result<Blocks, DomainError> {
    if cut == Cut::along(0, cut.0[0]) {
        return ring_blocks::<M>(nodes, ranks).and_then(|b| {
            (cut.blocks() == ranks).then_some(b).ok_or(bad_cut::<M>(
                nodes,
                cut.to_string(),
                ranks,
                format!("it has {} blocks: give one per process", cut.blocks()),
            ))
        });
    }
    let reason = if cut.blocks() != ranks {
        Some(format!(
            "it has {} blocks: give one per process",
            cut.blocks()
        ))
    } else if M::D == 2 && cut.0[2] > 1 {
        Some("the model is two-dimensional: cut along x and y (AxB)".to_string())
    } else {
        thinner_than_halo::<M>(nodes, cut).map(|(a, least)| {
            format!(
                "its blocks along {} would hold fewer than {least} sites (the halo): cut that \
                 axis into at most {} blocks, or give a larger lattice",
                ["x", "y", "z"][a],
                nodes[a] / least
            )
        })
    };
    match reason {
        Some(reason) => Err(bad_cut::<M>(nodes, cut.to_string(), ranks, reason)),
        None => Ok(Blocks::even(nodes, cut)),
    }
}

/// The global lattice `g` cut into blocks of about `block` sites per axis, those that hold
/// no fluid site left out ([`Blocks::sparse`] within the model's reach: a sparse domain),
/// block `r` for process `r`. A 2-D lattice's blocks span its one plane. Fails when a block
/// would be thinner than `max(M::HALO, 1)` sites along an axis cut, or when no block holds
/// fluid; with `ranks`, when the blocks kept are not one per process (the message says how
/// many processes to run on). Every rank computes the same answer.
pub fn sparse_blocks<M: Model>(
    g: &GlobalSpec<M>,
    block: [usize; 3],
    ranks: Option<usize>,
) -> Result<Blocks, DomainError> {
    let nodes = g.size();
    let block = [0, 1, 2].map(|a| block[a].clamp(1, nodes[a]));
    let grid = Decomposition::Sparse(block).grid(nodes);
    let fail = |reason| sparse_refusal::<M>(nodes, block, ranks.unwrap_or(1), reason);
    if let Some((a, least)) = thinner_than_halo::<M>(nodes, grid) {
        return Err(fail(format!(
            "its blocks along {} would hold fewer than {least} sites (the halo): give blocks \
             of at least {least} sites",
            ["x", "y", "z"][a]
        )));
    }
    let solid = g.boundaries.solid.as_ref();
    let fluid = |[x, y, z]: [usize; 3]| solid.is_none_or(|o| !o.is_solid(x, y, z));
    let blocks = Blocks::sparse(nodes, block, M::HALO.max(1), &fluid)
        .ok_or_else(|| fail("no block holds a fluid site".into()))?;
    match (blocks.count(), ranks) {
        (n, Some(r)) if n != r => Err(fail(format!(
            "of its {grid} blocks, {n} hold fluid: run it on {n} processes"
        ))),
        _ => Ok(blocks),
    }
}

/// How many blocks of the sparse domain of [`sparse_blocks`] each of `ranks` processes runs
/// (several a process on threads: `lbm::group::RankThreads` (feature `mpi`)): the blocks that hold fluid
/// spread as evenly as they go, rank after rank, the first `kept % ranks` ranks one more. Fails
/// as [`sparse_blocks`] does, and where fewer blocks hold fluid than there are processes (the
/// message says how many may run it).
pub fn sparse_spread<M: Model>(
    g: &GlobalSpec<M>,
    block: [usize; 3],
    ranks: usize,
) -> Result<Vec<usize>, DomainError> {
    let blocks = sparse_blocks(g, block, None)?;
    let (kept, ranks) = (blocks.count(), ranks.max(1));
    if kept < ranks {
        let grid = blocks.cut();
        let reason =
            format!("of its {grid} blocks, {kept} hold fluid: run it on at most {kept} processes");
        return Err(sparse_refusal::<M>(g.size(), block, ranks, reason));
    }
    Ok((0..ranks)
        .map(|r| kept / ranks + usize::from(r < kept % ranks))
        .collect())
}

/// Why a box of `nodes` cannot run in blocks of `block` on `ranks` processes.
fn sparse_refusal<M: Model>(
    nodes: [usize; 3],
    block: [usize; 3],
    ranks: usize,
    reason: String,
) -> DomainError {
    bad_cut::<M>(nodes, format!("in blocks of {}", Cut(block)), ranks, reason)
}

/// The first axis along which `cut`'s blocks of a box of `nodes` would hold fewer sites than
/// the halo, `max(M::HALO, 1)` (their neighbours' ghosts come from them alone), with that
/// least.
fn thinner_than_halo<M: Model>(nodes: [usize; 3], cut: Cut) -> Option<(usize, usize)> {
    let least = M::HALO.max(1);
    let a = cut.cut_axes().find(|&a| nodes[a] / cut.0[a] < least)?;
    Some((a, least))
}

fn bad_cut<M: Model>(nodes: [usize; 3], cut: String, ranks: usize, reason: String) -> DomainError {
    DomainError::BadCut {
        nodes,
        cut,
        ranks,
        model: M::NAME,
        reason,
    }
}

/// Which lines of a block [`Slab`]'s boxes are: its own next to a cut, or its halo beyond it.
pub(crate) const BORDERS: usize = 0;
pub(crate) const HALOS: usize = 1;

/// Side of a slab: index 0 is left (towards `x = 0`), 1 is right.
pub const LEFT: usize = 0;
/// See [`LEFT`].
pub const RIGHT: usize = 1;

/// The bulk columns of a slab `lx` wide with halo `h`: `[h, lx − h)`, those whose update reads
/// no halo column (empty when `lx < 2h`).
pub fn bulk_columns(lx: usize, h: usize) -> Range<usize> {
    h..lx.saturating_sub(h).max(h)
}

/// The border columns `[0, h)` and `[lx − h, lx)` (clipped so that, with the bulk, they cover
/// every column exactly once).
pub fn border_columns(lx: usize, h: usize) -> [Range<usize>; 2] {
    let bulk = bulk_columns(lx, h);
    [0..bulk.start.min(lx), bulk.end.min(lx)..lx]
}

/// `cols` cut into `n` consecutive parts of equal width but the last (none when `n` is 0).
pub fn split_columns(cols: Range<usize>, n: usize) -> impl Iterator<Item = Range<usize>> {
    let width = cols.len().div_ceil(n.max(1)).max(1);
    let end = if n == 0 { cols.start } else { cols.end };
    (cols.start..end)
        .step_by(width)
        .map(move |a| a..(a + width).min(end))
}

/// What defines the global lattice: size, parameters and boundaries (every rank holds the
/// same, so every rank validates it identically).
#[derive(Debug)]
pub struct GlobalSpec<M: Model> {
    /// Global width.
    pub lx: usize,
    /// Height.
    pub ly: usize,
    /// Depth (1 for a 2-D model).
    pub lz: usize,
    /// Model parameters.
    pub params: M::Params,
    /// Boundary conditions of the global lattice.
    pub boundaries: BoundarySpec,
}

impl<M: Model> Clone for GlobalSpec<M> {
    fn clone(&self) -> Self {
        Self {
            params: self.params.clone(),
            boundaries: self.boundaries.clone(),
            ..*self
        }
    }
}

impl<M: Model> GlobalSpec<M> {
    /// The global lattice's size, parameters and boundaries checked as [`Lattice::new`] does,
    /// without allocating anything of the lattice's size: every rank checks the same, so
    /// every rank fails alike.
    pub(crate) fn validate(&self, layout: LayoutKind) -> Result<(), LbmError> {
        check_size::<M>(self.size(), layout)?;
        M::validate(&self.params)?;
        check_spec::<M>(&self.boundaries, &self.dims())
    }

    /// `[LX, LY, LZ]`.
    pub fn size(&self) -> [usize; 3] {
        [self.lx, self.ly, self.lz]
    }

    /// Sites per plane of constant x, `LY·LZ`.
    pub fn plane(&self) -> usize {
        self.ly * self.lz
    }

    /// The global lattice's shape.
    pub(crate) fn dims(&self) -> Dims {
        Dims::of::<M>(self.size())
    }

    /// The boundaries of the global columns `xs` alone, renumbered from 0, on the lines of
    /// `frame` (a block's, its ghost lines included: [`Frame`]). Periodic in x where the
    /// lattice is and `xs` are all its columns: a block alone along x is its own neighbour
    /// there, and fills its halos from its own borders in place
    /// ([`crate::SlabBackend::wrap_x`]); otherwise a slab's halos come from its neighbours,
    /// never from its own periodic image (walls in x bounce the links that would read the
    /// outer halos of the first and last slabs).
    /// Refuses quadratic curved walls on a block that is not the whole lattice: their links
    /// read two sites along them, beyond a halo at a cut. Every block of a cut lattice refuses
    /// alike, so no rank waits for another that failed.
    pub(crate) fn slab_boundaries<T: Real>(
        &self,
        xs: Range<usize>,
        frame: &Frame,
        lanes: &dyn Fn(&Dims, usize) -> (usize, usize),
    ) -> Result<Boundaries<T>, LbmError> {
        let quadratic = (self.boundaries.solid.as_ref())
            .is_some_and(|o| o.is_curved() && o.interpolation() == Interpolation::Quadratic);
        if quadratic && (xs.len() < self.lx || frame.has_ghosts()) {
            return Err(LbmError::Boundary(
                "the obstacles' curved walls are interpolated quadratically \
                 (Interpolation::Quadratic), whose links read two sites along them, beyond the \
                 halo of a slab's cut: run on one process and one device (--backend cpu or gpu), \
                 or use the linear interpolation (Interpolation::Linear; `lbm run` takes \
                 --walls linear), second-order as well"
                    .into(),
            ));
        }
        let window = Dims::of::<M>([xs.len(), frame.stored[1], frame.stored[2]]);
        let x_periodic = self.boundaries.left.is_none() && xs.len() == self.lx;
        let bc = Boundaries::compile_block::<M>(
            &self.boundaries,
            &self.dims(),
            (xs, &window, frame.lattice_origin()),
            x_periodic,
            lanes,
        );
        Ok(bc)
    }

    /// Refuses a lattice (of size `[LX, LY, LZ]`, `None`: none at hand) that is not of this
    /// specification's size, before it is cut into slabs or parts.
    pub(crate) fn holds(&self, size: Option<[usize; 3]>) -> Result<(), LbmError> {
        let want = Extent::of_size(self.size());
        match size {
            Some(size) if size == self.size() => Ok(()),
            Some(size) => Err(LbmError::Shape(format!(
                "a {} lattice cannot be cut as the {want} lattice of the specification",
                Extent::of_size(size)
            ))),
            None => Err(LbmError::Shape(format!(
                "the first process holds no lattice to cut as the {want} lattice of the \
                 specification"
            ))),
        }
    }

    /// The global lattice at rest on the host, run in `scheme` (gathered slabs are assembled
    /// in a two-copy one).
    pub fn lattice<L: Layout, T: Real>(
        &self,
        scheme: Scheme,
    ) -> Result<Lattice<M, L, T>, LbmError> {
        Lattice::with_size(self.size(), self.params.clone(), scheme, &self.boundaries)
    }
}

/// Where a block's lattice lies in the global one ([`crate::blocks`]): the block's first
/// global site and its own sites per axis, and the lines it stores along y and z — its own,
/// `H = M::HALO` ghost lines on each side along an axis that is cut (copies of the
/// neighbours' border lines, refilled by the exchange), and along y as many more as the
/// layout's cluster width asks (stored, updated, never read by an own site). Along x the
/// lattice's own halo columns are the ghosts. A slab of whole planes has no ghost line.
///
/// The kernels update ghost lines with everything else, periodically within the block's
/// lattice: what they compute there is never read, the exchange overwriting it before the
/// next step reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Frame {
    /// The global lattice's sites per axis.
    pub size: [usize; 3],
    /// The global coordinates of the block's first own site.
    pub origin: [usize; 3],
    /// Own sites per axis.
    pub owned: [usize; 3],
    /// Ghost lines on each side per axis (0 along x and along an axis that is not cut).
    pub ghosts: [usize; 3],
    /// Stored sites per axis: `owned + 2·ghosts`, y rounded up to the layout's clusters.
    pub stored: [usize; 3],
}

impl Frame {
    /// The frame of the block `block` of a global lattice of `size` sites, for model `M` in
    /// a layout of `vl` lanes per cluster.
    pub fn of<M: Model>(size: [usize; 3], block: &[Range<usize>; 3], vl: usize) -> Self {
        let owned = block.clone().map(|r| r.len());
        let ghosts = std::array::from_fn(|a| {
            if a > 0 && owned[a] < size[a] {
                M::HALO.max(1)
            } else {
                0
            }
        });
        let mut stored: [usize; 3] = std::array::from_fn(|a| owned[a] + 2 * ghosts[a]);
        if ghosts[1] > 0 {
            stored[1] = stored[1].next_multiple_of(vl).max(vl * M::HALO.max(1));
        }
        Self {
            size,
            origin: block.clone().map(|r| r.start),
            owned,
            ghosts,
            stored,
        }
    }

    /// The sites this block sends in one exchange of a lattice of model `M` cut `cut`
    /// ([`crate::blocks::halo_nodes`] of its own sites, its lines along y as many as it
    /// stores, its ghost lines carrying the edges and corners).
    pub fn halo_nodes<M: Model>(&self, cut: crate::blocks::Cut) -> usize {
        let lines = [
            self.owned[0],
            self.stored[1] - 2 * self.ghosts[1],
            self.owned[2],
        ];
        let ghosts = [false, self.ghosts[1] > 0, self.ghosts[2] > 0];
        crate::blocks::halo_nodes(lines, cut, M::HALO, ghosts)
    }

    /// Whether the block stores ghost lines along y or z (it is cut along one of them).
    pub fn has_ghosts(&self) -> bool {
        self.ghosts[1] + self.ghosts[2] > 0
    }

    /// The global `[y, z]` of the block's stored line `(0, 0)`.
    pub fn lattice_origin(&self) -> [usize; 2] {
        [1, 2].map(|a| (self.origin[a] + self.size[a] - self.ghosts[a]) % self.size[a])
    }

    /// The block's own sites in its lattice: `[0..lx, g_y..g_y + ly, g_z..g_z + lz]`.
    pub fn own_box(&self) -> [Range<usize>; 3] {
        std::array::from_fn(|a| self.ghosts[a]..self.ghosts[a] + self.owned[a])
    }

    /// Own sites per plane of constant x.
    pub fn plane(&self) -> usize {
        self.owned[1] * self.owned[2]
    }

    /// The stored plane site of own plane site `s = z·ly + y` (`ly` own lines).
    pub fn stored_site(&self, s: usize) -> usize {
        let (y, z) = (s % self.owned[1], s / self.owned[1]);
        (z + self.ghosts[2]) * self.stored[1] + y + self.ghosts[1]
    }

    /// The own plane site of stored plane site `s`, if it is one of the block's own.
    pub fn own_site(&self, s: usize) -> Option<usize> {
        let (y, z) = (s % self.stored[1], s / self.stored[1]);
        let y = y
            .checked_sub(self.ghosts[1])
            .filter(|&y| y < self.owned[1])?;
        let z = z
            .checked_sub(self.ghosts[2])
            .filter(|&z| z < self.owned[2])?;
        Some(z * self.owned[1] + y)
    }

    /// The global plane site of stored plane site `s` (a ghost's: the global site it copies).
    pub fn global_site(&self, s: usize) -> usize {
        let [y0, z0] = self.lattice_origin();
        let (y, z) = (s % self.stored[1], s / self.stored[1]);
        (z0 + z) % self.size[2] * self.size[1] + (y0 + y) % self.size[1]
    }

    /// The own plane site nearest to stored plane site `s` (itself where it is one).
    pub fn nearest_own(&self, s: usize) -> usize {
        let (y, z) = (s % self.stored[1], s / self.stored[1]);
        let near = |v: usize, a: usize| v.saturating_sub(self.ghosts[a]).min(self.owned[a] - 1);
        near(z, 2) * self.owned[1] + near(y, 1)
    }

    /// Values of the block's own sites, `per` a site laid out `[(x·P + s)·per + k]` (`P` own
    /// sites per plane), spread over its stored sites, `[(x·S + t)·per + k]` (`S` stored sites
    /// per plane): a ghost line takes the values of the nearest own line (what it computes
    /// there is never read).
    pub(crate) fn stored_from_own<V: Copy>(&self, values: &[V], per: usize) -> Vec<V> {
        let stored = self.stored[1] * self.stored[2];
        (0..self.owned[0] * stored)
            .flat_map(|k| {
                let own = k / stored * self.plane() + self.nearest_own(k % stored);
                values[own * per..(own + 1) * per].iter().copied()
            })
            .collect()
    }

    /// The values of the block's own sites among values of its stored sites, the inverse of
    /// [`Frame::stored_from_own`].
    pub(crate) fn own_from_stored<V: Copy>(&self, values: &[V], per: usize) -> Vec<V> {
        let stored = self.stored[1] * self.stored[2];
        (0..self.owned[0] * self.plane())
            .flat_map(|k| {
                let at = k / self.plane() * stored + self.stored_site(k % self.plane());
                values[at * per..(at + 1) * per].iter().copied()
            })
            .collect()
    }

    /// Whether the block's own site `s` (`x·P + s`, `P` own sites per plane) is solid in
    /// `store`, the block's whole storage (a [`Block`] over its stored sites).
    pub(crate) fn own_solid(&self, store: &impl Block, s: usize) -> bool {
        let (x, s) = (s / self.plane(), self.stored_site(s % self.plane()));
        store.local_solid(x * self.stored[1] * self.stored[2] + s)
    }

    /// Sets the field `name` of the block's own sites in `store` (its whole storage): a ghost
    /// line takes the values of the nearest own line ([`Frame::stored_from_own`]).
    pub(crate) fn set_own_field<B: Block>(
        &self,
        store: &mut B,
        name: &str,
        values: &[f64],
    ) -> Result<(), Error> {
        crate::lattice::checked_field::<B::Model>(name, values, (self.owned[0], self.plane()))?;
        store.set_local_field(name, &self.stored_from_own(values, 1))
    }

    /// The per-site fields of the block's own sites in `store` (its whole storage).
    pub(crate) fn own_fields(&self, store: &impl Block) -> Result<Option<Vec<Vec<f64>>>, Error> {
        let all = store.local_fields()?;
        Ok(all.map(|fields| fields.iter().map(|v| self.own_from_stored(v, 1)).collect()))
    }

    /// The storage boxes of the border ([`BORDERS`]) or of the halos ([`HALOS`]) along
    /// `axis`, below and above, of a block of model `M`: the whole planes of the columns
    /// along x; along y and z the lines over the block's own columns and every stored line
    /// across.
    pub(crate) fn boxes<M: Model>(&self, axis: usize, which: usize) -> [[Range<usize>; 3]; 2] {
        let h = M::HALO;
        let (g, n) = if axis == 0 {
            (h, self.owned[0])
        } else {
            (self.ghosts[axis], self.owned[axis])
        };
        let lines = if which == BORDERS {
            [g..2 * g, n..n + g]
        } else {
            [0..g, n + g..n + 2 * g]
        };
        lines.map(|lines| {
            let mut b = [h..h + self.owned[0], 0..self.stored[1], 0..self.stored[2]];
            b[axis] = lines;
            b
        })
    }

    /// The stored `[y, z]` of the global line `[y, z]`, one of the block's own.
    pub fn stored_line(&self, [y, z]: [usize; 2]) -> [usize; 2] {
        [
            y - self.origin[1] + self.ghosts[1],
            z - self.origin[2] + self.ghosts[2],
        ]
    }
}

/// One rank's block on the host: its lattice and where it sits ([`Frame`]); a slab of whole
/// planes, or a block cut along y and z too.
pub struct Slab<M: Model, L: Layout, T: Real> {
    lattice: Lattice<M, L, T>,
    frame: Frame,
}

impl<M: Model, L: Layout, T: Real> Slab<M, L, T> {
    /// Rank `rank`'s block of the global lattice `g` cut by `dec`, at rest. Validates the
    /// global lattice first (size, parameters, boundaries), so every rank fails alike.
    pub fn new(
        g: &GlobalSpec<M>,
        dec: &Blocks,
        rank: usize,
        scheme: Scheme,
    ) -> Result<Self, DomainError> {
        g.validate(L::KIND)?;
        Ok(Self::block(g, &dec.block(rank), scheme)?)
    }

    /// The block `block` of `g`, at rest, its boundaries compiled for its sites and ghost
    /// lines alone.
    pub(crate) fn block(
        g: &GlobalSpec<M>,
        block: &[Range<usize>; 3],
        scheme: Scheme,
    ) -> Result<Self, LbmError> {
        let frame = Frame::of::<M>(g.size(), block, L::VL);
        let mut lattice = Lattice::with_size(
            [frame.owned[0], frame.stored[1], frame.stored[2]],
            g.params.clone(),
            scheme,
            &BoundarySpec::periodic(),
        )?;
        let bc = g.slab_boundaries(block[0].clone(), &frame, &L::cluster_lane)?;
        lattice.replace_boundaries(bc);
        Ok(Self { lattice, frame })
    }

    /// The slab's lattice (its sites are the global columns `x0 ..`; halos, ghost lines and
    /// the pre-collision accessors near the block's edges are not meaningful on their own:
    /// gather the global lattice to read moments).
    pub fn lattice(&self) -> &Lattice<M, L, T> {
        &self.lattice
    }

    /// Where the block lies in the global lattice.
    pub fn frame(&self) -> &Frame {
        &self.frame
    }

    /// The first global column of the slab.
    pub fn x0(&self) -> usize {
        self.frame.origin[0]
    }

    /// Sets every site to the equilibrium of `moments(x, s)`, `x` a *global* column and `s` a
    /// global plane site (as are those of a refusal; a ghost takes the global site's).
    pub fn set_equilibrium<F>(&mut self, moments: F) -> Result<(), LbmError>
    where
        F: Fn(usize, usize) -> Vec<f64> + Sync,
    {
        let (x0, frame) = (self.x0(), self.frame);
        self.lattice
            .set_equilibrium(|x, s| moments(x + x0, frame.global_site(s)))
            .map_err(|e| e.shifted(x0, |s| frame.global_site(s)))
    }

    /// Updates the bulk columns (those that read and write no halo).
    pub fn update_bulk(&mut self) {
        let d = self.lattice.dims();
        self.update_columns(bulk_columns(d.lx, d.halo));
    }

    /// Updates the site columns `cols` (a part of the bulk, or of the borders once the halos
    /// arrived), without ending the step.
    pub fn update_columns(&mut self, cols: Range<usize>) {
        self.lattice.update_columns(cols);
    }

    /// Updates the border columns (after the halos arrived) and ends the step.
    pub fn update_borders_and_finish(&mut self) {
        let d = self.lattice.dims();
        for cols in border_columns(d.lx, d.halo) {
            self.lattice.update_columns(cols);
        }
        self.lattice.finish_step();
    }

    /// Writes what the neighbours along `axis` pushed across the cuts (their
    /// [`crate::SlabBackend::pushed`] layers: the one below's upper halo, the one above's lower)
    /// into the border (`folded`).
    pub(crate) fn fold_along(&mut self, axis: usize, from: [&[T]; 2]) {
        let d = self.lattice.dims();
        let into = self.boxes(axis, BORDERS);
        let lanes = &L::cluster_lane;
        let writes = folded::<M, T>((&d, self.lattice.boundaries(), lanes), axis, into, from);
        for Folded {
            at: (col, s), p, v, ..
        } in writes
        {
            self.lattice.set_stored_value(L::index(&d, p, col, s), p, v);
        }
    }

    /// The values of the storage boxes of the border or of the halos along `axis`, below and
    /// above, into `into` ([`Lattice::read_lines`]).
    pub(crate) fn read_boxes(&self, axis: usize, which: usize, into: &mut [Vec<T>; 2]) {
        for (b, out) in self.boxes(axis, which).into_iter().zip(into) {
            self.lattice.read_lines(b, out);
        }
    }

    /// The storage boxes of the border or of the halos along `axis` ([`Frame::boxes`]).
    pub(crate) fn boxes(&self, axis: usize, which: usize) -> [[Range<usize>; 3]; 2] {
        self.frame.boxes::<M>(axis, which)
    }

    /// The slab's lattice, mutable (halos written by the ring).
    pub(crate) fn lattice_mut(&mut self) -> &mut Lattice<M, L, T> {
        &mut self.lattice
    }

    /// Sets the step counter (a slab cut from a lattice restored from a checkpoint).
    pub(crate) fn set_steps_done(&mut self, step: u64) {
        self.lattice.set_steps_done(step);
    }

    /// The post-collision populations of the block's own sites, `[(x·P + s)·Q + i]` (`P`
    /// own sites per plane, `s = z·ly + y` over its own lines).
    pub fn export(&self) -> Vec<T> {
        export_block(&self.lattice, &self.frame.own_box()).expect("the block's own sites")
    }

    /// The moment fields of the block's own sites in its columns `cols`, laid out as
    /// [`Slab::export`]'s sites, read in place: the sites next to a cut pull from the halos
    /// and ghost lines, which must hold the neighbours' values (the exchange the next step
    /// starts with).
    pub(crate) fn own_moments(&self, cols: Range<usize>) -> Vec<Vec<f64>> {
        let f = &self.frame;
        let plane: Vec<usize> = (0..f.plane()).map(|s| f.stored_site(s)).collect();
        self.lattice.moment_fields_at(cols, &plane)
    }

    /// Sets the block's own populations from values laid out as [`Slab::export`]'s (a block
    /// cut from a global lattice: resuming on another number of ranks). The block is left in
    /// the even AA state, which holds every population on the slab.
    pub fn import(&mut self, values: &[T]) -> Result<(), LbmError> {
        self.lattice.set_even();
        import_block(&mut self.lattice, &self.frame.own_box(), values)
    }
}

/// Where a row `y` of a block of shape `d` lies, `(cluster, lane)`: [`Layout::cluster_lane`],
/// or a run-time layout's.
pub(crate) type ClusterLane<'a> = &'a dyn Fn(&Dims, usize) -> (usize, usize);

/// A population that a neighbour pushed across a cut, for a border site of a block
/// ([`folded`]).
pub(crate) struct Folded<T> {
    /// The side it arrived from ([`LEFT`]: below, [`RIGHT`]: above).
    pub side: usize,
    /// The site's place in the border box of that side, in the order of
    /// [`Lattice::read_lines`].
    pub site: usize,
    /// The site's storage column and plane site.
    pub at: (usize, usize),
    /// The population.
    pub p: usize,
    /// Its value.
    pub v: T,
}

/// The populations the neighbours along `axis` pushed across the cuts in an AA pull
/// half-step ([`Folded`]), for a block of shape `d` with boundaries `bc` in a layout whose
/// rows lie in the (cluster, lane) `lanes(d, y)`: `from[LEFT]` is the neighbour below's upper
/// halo (along y and z: its upper ghost lines), which lands in this block's lower border, the
/// storage box `into[LEFT]` — at its line `c` along `axis` the populations with `c_axis < −c`
/// arrived —; `from[RIGHT]` the neighbour above's lower halo, into `into[RIGHT]` (populations
/// with `c_axis > H − 1 − c`); both in the order of [`Lattice::read_lines`] over those boxes.
/// The other values of those halos are stale copies and are skipped, as is population `p` of
/// a site whose link `p̄` is bounced: the wall sent nothing across, the site redirected its own
/// population there (the masks are symmetric, [`crate::boundary`]). Folded along x, then y,
/// then z, each fold carrying the halos of the one before, the populations pushed across an
/// edge or a corner reach the block that owns their site.
pub(crate) fn folded<M: Model, T: Real>(
    (d, bc, lanes): (&Dims, &Boundaries<T>, ClusterLane<'_>),
    axis: usize,
    into: [[Range<usize>; 3]; 2],
    from: [&[T]; 2],
) -> Vec<Folded<T>> {
    let mut out = Vec::new();
    // An empty side (a part of a split slab with no neighbour there) brings nothing.
    for side in [LEFT, RIGHT]
        .into_iter()
        .filter(|&side| !from[side].is_empty())
    {
        let [cols, ys, zs] = into[side].clone();
        let (first, h) = (into[side][axis].start, into[side][axis].len());
        let mut values = from[side].chunks_exact(M::Q).enumerate();
        for col in cols {
            for z in zs.clone() {
                for y in ys.clone() {
                    let (site, values) = values.next().expect("a halo site");
                    let s = d.plane_site(y, z);
                    let c = ([col, y, z][axis] - first) as isize;
                    let here = bc.site_at(d, col - d.halo, s, lanes);
                    for (p, &v) in values.iter().enumerate() {
                        let ca = M::VELOCITIES[p][axis] as isize;
                        let crossed = if side == LEFT {
                            ca < -c
                        } else {
                            ca > h as isize - 1 - c
                        };
                        if crossed && !here.is_some_and(|a| a.bounced(M::OPPOSITE[p])) {
                            let at = (col, s);
                            out.push(Folded {
                                side,
                                site,
                                at,
                                p,
                                v,
                            });
                        }
                    }
                }
            }
        }
    }
    out
}

#[cfg(test)]
#[path = "domain_tests.rs"]
mod tests;
