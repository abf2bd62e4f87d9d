//! The grid that runs a finite-difference scheme on the CPU: the unknowns in a layout
//! ([`FdLayout`]), padded by the scheme's reach in ghost layers on every side, and a second
//! register for the integrator; in a run over several processes, one block of a cut along 1, 2
//! or 3 axes ([`crate::blocks`]), its ghosts refilled by the exchange with its neighbours.

use std::marker::PhantomData;
use std::ops::Range;
use std::path::Path;

use super::checkpoint;
use super::store::{at_in, piece_at, FdLayout, Store, AOS, CLUSTERED, LANES, SOA};
use super::walls::{apply, line_sets, Rule, Set, Side};
use super::{FdError, FdRun, FdScheme, Integrator};
use crate::blocks::Blocks;
use crate::checkpoint::{CheckpointHeader, FdFacts, ParamValue, ORDER};
use crate::group::{agree, Halo, OneProcess, Transfers};
use crate::memory::{self, Need};
use crate::parallel;
use crate::Real;

/// A node-centred grid of `n_x × n_y (× n_z)` nodes of spacing `h` carrying the unknowns of
/// the scheme `S` in precision `T`: the whole grid in one process, or this process's block of
/// a cut of it among a group of processes.
pub struct FdGrid<S: FdScheme, T: Real> {
    /// The whole grid's nodes per axis.
    pub(crate) n: [usize; 3],
    /// This block's nodes per axis.
    pub(crate) m: [usize; 3],
    /// This block's nodes along each axis, in the whole grid's numbering.
    block: [Range<usize>; 3],
    /// The cut of the whole grid into the group's blocks.
    blocks: Blocks,
    group: Box<dyn Transfers<T>>,
    /// Ghost layers along each axis (0 along z in 2-D).
    pub(crate) g: [usize; 3],
    /// Padded extents (of the block) and strides.
    pub(crate) p: [usize; 3],
    pub(crate) stride: [usize; 3],
    h: f64,
    params: S::Params,
    pub(crate) prm: Vec<T>,
    sides: Vec<Side>,
    pub(crate) phi: Store<T>,
    reg: Store<T>,
    /// `LOADS[k]`'s offset from the node, in the padded arrays.
    pub(crate) offsets: Vec<isize>,
    pub(crate) steps: u64,
    pub(crate) time: f64,
    /// The buffers of the exchanges along each axis, kept from step to step.
    halos: [Halo<T>; 3],
    _scheme: PhantomData<S>,
}

fn setup(msg: String) -> FdError {
    FdError::Setup(msg)
}

impl<S: FdScheme, T: Real> FdGrid<S, T> {
    /// A grid of `n` nodes per axis (`n[2]` is 1 in 2-D) at spacing `h`, its sides in the order
    /// x−, x+, y−, y+ (, z−, z+), the unknowns zero, in this process alone. Refuses, before
    /// allocating, sizes the stencils do not fit in, walls with a rule per unknown missing,
    /// non-finite values, and a grid larger than the memory.
    pub fn new(
        n: [usize; 3],
        h: f64,
        params: S::Params,
        sides: Vec<Side>,
    ) -> Result<Self, FdError> {
        Self::on_blocks(n, h, params, sides, Box::new(OneProcess), Blocks::whole(n))
    }

    /// [`FdGrid::new`]'s grid cut into `blocks` among the processes of `group`, one block
    /// each: this process's block (collective). Along each axis it is cut, every block must
    /// hold more nodes than the stencils reach (and at least 3), or every process refuses with
    /// the most blocks that fit.
    pub fn on_blocks(
        n: [usize; 3],
        h: f64,
        params: S::Params,
        sides: Vec<Side>,
        group: Box<dyn Transfers<T>>,
        blocks: Blocks,
    ) -> Result<Self, FdError> {
        Self::on_blocks_with(n, h, params, sides, (group, blocks), Ok(()))
    }

    /// [`FdGrid::on_blocks`], refused on every process also where `local` (what the process
    /// found of its own device) is an error.
    pub(crate) fn on_blocks_with(
        n: [usize; 3],
        h: f64,
        params: S::Params,
        sides: Vec<Side>,
        (group, blocks): (Box<dyn Transfers<T>>, Blocks),
        local: Result<(), FdError>,
    ) -> Result<Self, FdError> {
        let checked = local
            .and_then(|()| Self::check_setup(n, h, &params, &sides, (group.as_ref(), &blocks)));
        let block = checked.as_ref().map_or([0..0, 0..0, 0..0], Clone::clone);
        agree(group.as_ref(), checked.map(|_| ()))?;
        let dim = S::DIM;
        let halo = S::REACH.max(1);
        let m = block.clone().map(|r| r.len());
        let mut g = [0; 3];
        for g in &mut g[..dim] {
            *g = halo;
        }
        let p = Self::padded(m);
        let stride = [1, p[0], p[0] * p[1]];
        let len = p[0] * p[1] * p[2];
        let offsets = S::LOADS
            .iter()
            .map(|(_, o)| (0..3).map(|a| o[a] as isize * stride[a] as isize).sum())
            .collect();
        let values = S::param_values(&params);
        let mut prm = vec![T::from_f64(h)];
        prm.extend(values.iter().map(|&v| T::from_f64(v)));
        Ok(Self {
            n,
            m,
            block,
            blocks,
            group,
            g,
            p,
            stride,
            h,
            params,
            prm,
            sides,
            phi: Store::new(FdLayout::Soa, len, S::UNKNOWNS.len()),
            reg: Store::new(FdLayout::Soa, len, S::UNKNOWNS.len()),
            offsets,
            steps: 0,
            time: 0.0,
            halos: Default::default(),
            _scheme: PhantomData,
        })
    }

    /// The checks of [`FdGrid::on_blocks`] on this process; its block's nodes when they pass.
    fn check_setup(
        n: [usize; 3],
        h: f64,
        params: &S::Params,
        sides: &[Side],
        (group, blocks): (&dyn Transfers<T>, &Blocks),
    ) -> Result<[Range<usize>; 3], FdError> {
        let dim = S::DIM;
        let name = S::NAME;
        let halo = S::REACH.max(1);
        if dim == 2 && n[2] != 1 {
            return Err(setup(format!(
                "{name} is a 2-D scheme: give n_z = 1 (got {})",
                n[2]
            )));
        }
        for a in 0..dim {
            let least = (2 * halo + 1).max(3);
            if n[a] < least {
                return Err(setup(format!(
                    "{name}: {} nodes along {} are too few: its stencils reach {halo} node(s), so it needs at least {least}",
                    n[a],
                    ["x", "y", "z"][a]
                )));
            }
        }
        if !(h.is_finite() && h > 0.0) {
            return Err(setup(format!(
                "{name}: the grid spacing h must be positive and finite (got {h})"
            )));
        }
        let values = S::param_values(params);
        for (v, p) in values.iter().zip(S::PARAMS) {
            if !v.is_finite() {
                return Err(setup(format!(
                    "{name}: parameter `{p}` is not finite ({v})"
                )));
            }
        }
        if sides.len() != 2 * dim {
            return Err(setup(format!(
                "{name}: give {} sides (x−, x+, y−, y+{}), got {}",
                2 * dim,
                if dim == 3 { ", z−, z+" } else { "" },
                sides.len()
            )));
        }
        for a in 0..dim {
            let (lo, hi) = (&sides[2 * a], &sides[2 * a + 1]);
            if (*lo == Side::Periodic) != (*hi == Side::Periodic) {
                return Err(setup(format!(
                    "{name}: along {} one side is periodic and the other is not: make both periodic, or both walls",
                    ["x", "y", "z"][a]
                )));
            }
        }
        for (k, side) in sides.iter().enumerate() {
            if let Side::Wall(rules) = side {
                let which = ["x−", "x+", "y−", "y+", "z−", "z+"][k];
                if rules.len() != S::UNKNOWNS.len() {
                    return Err(setup(format!(
                        "{name}: the {which} wall gives {} rule(s), but the scheme has {} unknowns ({}): one rule each",
                        rules.len(),
                        S::UNKNOWNS.len(),
                        S::UNKNOWNS.join(", ")
                    )));
                }
                for (r, u) in rules.iter().zip(S::UNKNOWNS) {
                    if let Rule::Value(v) = r {
                        if !v.is_finite() {
                            return Err(setup(format!(
                                "{name}: the {which} wall's value of {u} is not finite ({v})"
                            )));
                        }
                    }
                }
            }
        }
        // The block of this process.
        let cut = blocks.cut();
        if blocks.nodes() != n {
            return Err(setup(format!(
                "{name}: the cut {cut} is of a grid of {:?} nodes, not of this one's {n:?}",
                blocks.nodes()
            )));
        }
        if blocks.count() != group.ranks() {
            return Err(setup(format!(
                "{name}: the cut {cut} makes {} blocks, but the run has {} processes: give a cut of {} blocks (one a process)",
                blocks.count(),
                group.ranks(),
                group.ranks()
            )));
        }
        let least = Self::least_planes();
        for a in cut.cut_axes() {
            if a >= dim || blocks.thinnest(a) < least {
                let most = if a >= dim { 1 } else { (n[a] / least).max(1) };
                return Err(setup(format!(
                    "{name}: {} nodes along {} cannot be cut into {} blocks of at least {least} nodes (its stencils reach {halo}): cut that axis into at most {most} blocks",
                    n[a],
                    ["x", "y", "z"][a],
                    cut.0[a]
                )));
            }
        }
        let block = blocks.block(group.rank());
        let m = block.clone().map(|r| r.len());
        let p = Self::padded(m);
        let bytes = memory::product(&[p[0], p[1], p[2], 2 * S::UNKNOWNS.len(), T::BYTES]);
        memory::check(
            &Need::new().with("finite-difference grid", bytes),
            1,
            memory::available(),
        )
        .map_err(|e| {
            let e = e.with_remedy("give fewer nodes, or single precision");
            setup(format!("{name}: {e}"))
        })?;
        Ok(block)
    }

    /// The whole grid's nodes per axis.
    pub fn nodes(&self) -> [usize; 3] {
        self.n
    }
    /// This process's block: its nodes along each axis (all of them in one process).
    pub fn block(&self) -> [Range<usize>; 3] {
        self.block.clone()
    }
    /// The cut of the whole grid into the group's blocks.
    pub fn blocks(&self) -> &Blocks {
        &self.blocks
    }
    /// The grid spacing.
    pub fn h(&self) -> f64 {
        self.h
    }
    pub fn params(&self) -> &S::Params {
        &self.params
    }
    /// Steps taken.
    pub fn steps(&self) -> u64 {
        self.steps
    }
    /// The time reached, `Σ Δt`.
    pub fn time(&self) -> f64 {
        self.time
    }

    /// The fewest nodes a block may hold along an axis it is cut along: one more than the
    /// stencils reach, and 3 (a wall's rules read two nodes inside it).
    pub fn least_planes() -> usize {
        (S::REACH.max(1) + 1).max(3)
    }

    /// The padded extents of a block of `m` nodes per axis: the ghost layers each side, and x
    /// rounded up to whole clusters of [`LANES`] nodes (so that every plane starts a cluster
    /// in the clustered layout; the nodes beyond the ghosts are never read).
    pub(crate) fn padded(m: [usize; 3]) -> [usize; 3] {
        let halo = S::REACH.max(1);
        let mut p = [1; 3];
        for a in 0..S::DIM {
            p[a] = m[a] + 2 * halo;
        }
        p[0] = p[0].next_multiple_of(LANES);
        p
    }

    /// This grid in `layout`: the same values, stored anew (collective only in name: nothing
    /// is exchanged).
    pub fn with_layout(mut self, layout: FdLayout) -> Self {
        for store in [&mut self.phi, &mut self.reg] {
            let mut new = Store::new(layout, store.nodes, store.unknowns);
            for u in 0..store.unknowns {
                for i in 0..store.nodes {
                    new.set(u, i, store.get(u, i));
                }
            }
            *store = new;
        }
        self
    }

    /// How the unknowns are stored.
    pub fn layout(&self) -> FdLayout {
        self.phi.layout
    }

    /// The padded index of a node of this block (whole-grid coordinates).
    fn index(&self, node: [usize; 3]) -> usize {
        (0..3)
            .map(|a| (node[a] - self.block[a].start + self.g[a]) * self.stride[a])
            .sum()
    }

    /// The whole grid's coordinates of this block's nodes, x fastest.
    fn local_nodes(&self) -> impl Iterator<Item = [usize; 3]> + '_ {
        let [xs, ys, zs] = self.block.clone();
        zs.flat_map(move |k| {
            let xs = xs.clone();
            ys.clone()
                .flat_map(move |j| xs.clone().map(move |i| [i, j, k]))
        })
    }

    /// The index of unknown `name`.
    pub fn unknown(&self, name: &str) -> Option<usize> {
        S::UNKNOWNS.iter().position(|u| *u == name)
    }

    /// Sets unknown `u` at every node (of this block) to `f(x)`, `x = (i h, j h, k h)`, then
    /// applies the walls (collective).
    pub fn set(&mut self, u: usize, f: impl Fn([f64; 3]) -> f64) {
        let nodes: Vec<[usize; 3]> = self.local_nodes().collect();
        for node in nodes {
            let x = node.map(|c| c as f64 * self.h);
            let idx = self.index(node);
            self.phi.set(u, idx, T::from_f64(f(x)));
        }
        self.fill();
    }

    /// Sets unknown `u` at this block's nodes from its `values` at every node of the whole grid
    /// (x fastest), then applies the walls (collective).
    ///
    /// # Panics
    /// If `values` does not hold a value per node of the whole grid.
    pub fn set_whole(&mut self, u: usize, values: &[f64]) {
        let [nx, ny, nz] = self.n;
        assert_eq!(
            values.len(),
            nx * ny * nz,
            "a value per node of the whole grid"
        );
        // (padded index here, index in the whole grid) of each node of this block.
        let at: Vec<(usize, usize)> = self
            .local_nodes()
            .map(|node @ [i, j, k]| (self.index(node), i + nx * (j + ny * k)))
            .collect();
        for (here, whole) in at {
            self.phi.set(u, here, T::from_f64(values[whole]));
        }
        self.fill();
    }

    /// Unknown `u` at a node of this process's slab (any node in one process).
    ///
    /// # Panics
    /// If the node is not on this block ([`FdGrid::block`]).
    pub fn value(&self, u: usize, node: [usize; 3]) -> f64 {
        assert!(
            (0..3).all(|a| self.block[a].contains(&node[a])),
            "node {node:?} is not on this process's block {:?}",
            self.block
        );
        self.phi.get(u, self.index(node)).to_f64()
    }

    /// Unknown `u` at every node of this block, x fastest, then y, then z (the whole grid in
    /// one process).
    pub fn field(&self, u: usize) -> Vec<f64> {
        self.local_nodes()
            .step_by(self.m[0])
            .flat_map(|row| {
                let start = self.index(row);
                self.phi.run(u, start, self.m[0]).map(|v| v.to_f64())
            })
            .collect()
    }

    /// Unknown `u` at every node of the whole grid, on the first process (`None` on the
    /// others; collective).
    pub fn gather(&self, u: usize) -> Option<Vec<f64>> {
        // Values of `T` travel as they are (what `field` gives back converts exactly).
        let mine = self.field(u).into_iter().map(T::from_f64).collect();
        let all: Vec<f64> = self
            .group
            .gather(mine)?
            .into_iter()
            .map(|v| v.to_f64())
            .collect();
        if !self.blocks.is_cut(0) && !self.blocks.is_cut(1) {
            // Blocks of whole planes: rank order is node order.
            return Some(all);
        }
        let [nx, ny, nz] = self.n;
        let mut whole = vec![0.0; nx * ny * nz];
        let mut at = 0;
        for r in 0..self.blocks.count() {
            let [xs, ys, zs] = self.blocks.block(r);
            for k in zs {
                for j in ys.clone() {
                    let row = nx * (j + ny * k);
                    whole[row + xs.start..row + xs.end].copy_from_slice(&all[at..at + xs.len()]);
                    at += xs.len();
                }
            }
        }
        Some(whole)
    }

    /// The group this block's process is in.
    #[cfg(feature = "gpu")]
    pub(crate) fn group(&self) -> &dyn Transfers<T> {
        self.group.as_ref()
    }

    /// Whether this block holds the whole grid's low (`high = false`) or high end along `a`.
    fn holds_end(&self, a: usize, high: bool) -> bool {
        if high {
            self.block[a].end == self.n[a]
        } else {
            self.block[a].start == 0
        }
    }

    /// Whether the side of axis `a` at its low or high end is a wall of this block.
    pub(crate) fn wall_here(&self, a: usize, high: bool) -> bool {
        matches!(self.sides[2 * a + usize::from(high)], Side::Wall(_)) && self.holds_end(a, high)
    }

    /// The nodes the rates update along axis `a`: all of the slab's but the walls' (padded
    /// coordinates).
    pub(crate) fn updated(&self, a: usize) -> Range<usize> {
        if a >= S::DIM {
            return 0..1;
        }
        let (lo, hi) = (self.wall_here(a, false), self.wall_here(a, true));
        self.g[a] + usize::from(lo)..self.g[a] + self.m[a] - usize::from(hi)
    }

    /// Applies the sides and refills the ghosts, axis by axis, each over the whole padded
    /// extent of the others ([`crate::blocks`]): along an axis the grid is cut along, the
    /// ghosts come from the neighbouring blocks (the periodic wrap closes the row) and the
    /// walls this block holds then set theirs; along the others, the block's own periodic wrap
    /// or its walls.
    fn fill(&mut self) {
        for a in 0..S::DIM {
            if self.blocks.is_cut(a) {
                self.exchange(a);
            }
            self.sides_along(a);
        }
    }

    /// The contiguous runs `(first padded index, length)` of the `g` layers along axis `a`
    /// from padded coordinate `first`, over the nodes and ghosts of the other axes (not the
    /// padding of x past its ghosts), in index order: one run per line of the face, merged
    /// where lines follow each other in memory. They hold
    /// [`halo_nodes`](crate::blocks::halo_nodes)`/2` nodes, summed over the cut axes.
    pub(crate) fn face(&self, a: usize, first: usize) -> Vec<(usize, usize)> {
        let ext = |b: usize| {
            if b == a {
                first..first + self.g[a]
            } else {
                0..self.m[b] + 2 * self.g[b]
            }
        };
        let xs = ext(0);
        let mut runs: Vec<(usize, usize)> = Vec::new();
        for k in ext(2) {
            for j in ext(1) {
                let i = xs.start + j * self.stride[1] + k * self.stride[2];
                match runs.last_mut() {
                    Some((start, len)) if *start + *len == i => *len += xs.len(),
                    _ => runs.push((i, xs.len())),
                }
            }
        }
        runs
    }

    /// The nodes this block sends in one exchange of its ghost layers (per unknown; 0 in one
    /// block): its faces along each axis the grid is cut along.
    pub fn halo_nodes(&self) -> usize {
        (0..S::DIM)
            .filter(|&a| self.blocks.is_cut(a))
            .flat_map(|a| [self.face(a, self.g[a]), self.face(a, self.m[a])])
            .flatten()
            .map(|(_, len)| len)
            .sum()
    }

    /// Sends the block's first and last layers along axis `a` to its neighbours below and
    /// above and stores what comes back in its ghost layers, except at the grid's walls.
    fn exchange(&mut self, a: usize) {
        let (g, m) = (self.g[a], self.m[a]);
        // Per unknown, the layers' values in node order (the same on the wire in any layout).
        let nu = S::UNKNOWNS.len();
        let mut halo = std::mem::take(&mut self.halos[a]);
        for (out, first) in halo.to.iter_mut().zip([g, m]) {
            let runs = self.face(a, first);
            out.clear();
            for u in 0..nu {
                for &(i, len) in &runs {
                    out.extend(self.phi.run(u, i, len));
                }
            }
        }
        let peers = self.blocks.neighbours(self.group.rank(), a);
        (self
            .group
            .swap_during(peers, &mut halo, 0, &mut |_, _| Ok(())))
        .unwrap_or_else(|_| unreachable!("no work that can fail runs beside this exchange"));
        for (high, from, first) in [(false, &halo.from[0], 0), (true, &halo.from[1], m + g)] {
            if self.wall_here(a, high) {
                continue;
            }
            let runs = self.face(a, first);
            let mut values = from.iter().copied();
            for u in 0..nu {
                for &(start, len) in &runs {
                    for i in start..start + len {
                        let v = values.next().expect("a neighbour sends as many values");
                        self.phi.set(u, i, v);
                    }
                }
            }
        }
        self.halos[a] = halo;
    }

    /// The sets of the sides along axis `a` on this block, per unknown: the periodic wrap
    /// where the grid is not cut along `a` (the exchange fills those ghosts otherwise), the
    /// walls it holds.
    pub(crate) fn sets_along(&self, a: usize) -> Vec<Vec<Set>> {
        let side = |high: bool| {
            let s = &self.sides[2 * a + usize::from(high)];
            self.holds_end(a, high).then_some(s)
        };
        (0..S::UNKNOWNS.len())
            .map(|u| {
                line_sets(
                    (side(false), side(true)),
                    u,
                    (self.g[a], self.m[a]),
                    !self.blocks.is_cut(a),
                )
            })
            .collect()
    }

    /// The lines along axis `a`: their first padded index, over the padded extents of the
    /// other axes.
    pub(crate) fn lines_along(&self, a: usize) -> impl Iterator<Item = usize> + '_ {
        let (b, c) = ((a + 1) % 3, (a + 2) % 3);
        (0..self.p[b]).flat_map(move |tb| {
            (0..self.p[c]).map(move |tc| tb * self.stride[b] + tc * self.stride[c])
        })
    }

    /// Applies the sides along axis `a` on this block ([`FdGrid::sets_along`]).
    fn sides_along(&mut self, a: usize) {
        let sets = self.sets_along(a);
        let lines: Vec<usize> = self.lines_along(a).collect();
        let stride = self.stride[a];
        for (u, sets) in sets.iter().enumerate() {
            for &base in &lines {
                apply(&mut self.phi, u, (base, stride), sets);
            }
        }
    }

    /// One pass of the rates over the updated nodes: `reg ← a·reg + Δt R(φ)`, or for Euler
    /// (`a = None`) `reg ← φ + Δt R(φ)`.
    fn rates_pass(&mut self, a: Option<T>, dt: T) {
        match self.reg.layout {
            FdLayout::Soa => self.rates_pass_in::<SOA>(a, dt),
            FdLayout::Aos => self.rates_pass_in::<AOS>(a, dt),
            FdLayout::Clustered => self.rates_pass_in::<CLUSTERED>(a, dt),
        }
    }

    /// [`FdGrid::rates_pass`] compiled for the layout of code `L` (the grid's).
    fn rates_pass_in<const L: u8>(&mut self, a: Option<T>, dt: T) {
        let outer = S::DIM - 1;
        let plane = self.stride[outer];
        let nu = S::UNKNOWNS.len();
        let updated = self.updated(outer);
        let rows: Vec<[usize; 2]> = if S::DIM == 3 {
            self.updated(1).map(|j| [j, 0]).collect()
        } else {
            vec![[0, 0]]
        };
        let xs = self.updated(0);
        // One item per plane of the outermost axis: that plane's part of the register.
        let planes = self.reg.planes_mut(plane);
        let (phi, prm, offsets, stride) = (&self.phi, &self.prm, &self.offsets, self.stride);
        let body = |t: usize, mut regs: Vec<&mut [T]>| {
            if !updated.contains(&t) {
                return;
            }
            // The register's new value from its value `r`, the unknown's `now` and its rate.
            let next = |r: T, now: T, rate: T| match a {
                None => now + dt * rate,
                Some(a) => T::mul_add(a, r, dt * rate),
            };
            // Unknown `u` of the plane's node `local` in the register.
            let update = |regs: &mut [&mut [T]], u: usize, local: usize, now: T, rate: T| {
                let (piece, at) = piece_at::<L>((plane, nu), u, local);
                let r = &mut regs[piece][at];
                *r = next(*r, now, rate);
            };
            let mut out = vec![T::default(); nu];
            let mut inp = vec![[T::default(); LANES]; S::LOADS.len()];
            let mut lanes = vec![[T::default(); LANES]; nu];
            for &[j, _] in &rows {
                let row = j * stride[1];
                // Groups of LANES nodes along x, then the rest one by one.
                let mut i = xs.start;
                while i + LANES <= xs.end {
                    let local = row + i;
                    let idx = t * plane + local;
                    for (k, v) in inp.iter_mut().enumerate() {
                        phi.lanes_in::<L>(S::LOADS[k].0, (idx as isize + offsets[k]) as usize, v);
                    }
                    S::rates_lanes(&inp, prm, &mut lanes);
                    for (u, rates) in lanes.iter().enumerate() {
                        if L == SOA {
                            // Whole runs of lanes, which vectorise.
                            let mut now = [T::default(); LANES];
                            phi.lanes_in::<L>(u, idx, &mut now);
                            let (piece, at) = piece_at::<L>((plane, nu), u, local);
                            let r = &mut regs[piece][at..at + LANES];
                            for l in 0..LANES {
                                r[l] = next(r[l], now[l], rates[l]);
                            }
                        } else {
                            for (l, &rate) in rates.iter().enumerate() {
                                update(&mut regs, u, local + l, phi.get_in::<L>(u, idx + l), rate);
                            }
                        }
                    }
                    i += LANES;
                }
                for i in i..xs.end {
                    let local = row + i;
                    let idx = t * plane + local;
                    S::rates(
                        |k| {
                            let (u, _) = S::LOADS[k];
                            // The reads stay inside the padded array: `idx` is an updated
                            // node and the ghost layers are as deep as the stencils reach.
                            phi.get_in::<L>(u, (idx as isize + offsets[k]) as usize)
                        },
                        prm,
                        &mut out,
                    );
                    for (u, &rate) in out.iter().enumerate() {
                        update(&mut regs, u, local, phi.get_in::<L>(u, idx), rate);
                    }
                }
            }
        };
        parallel::for_each_owned(planes, &body);
    }

    /// `φ ← φ + b·reg` over the updated nodes.
    fn accumulate(&mut self, b: T) {
        match self.phi.layout {
            FdLayout::Soa => self.accumulate_in::<SOA>(b),
            FdLayout::Aos => self.accumulate_in::<AOS>(b),
            FdLayout::Clustered => self.accumulate_in::<CLUSTERED>(b),
        }
    }

    /// [`FdGrid::accumulate`] compiled for the layout of code `L` (the grid's; the register's
    /// is the same, so a node's unknown lies at the same place in both).
    fn accumulate_in<const L: u8>(&mut self, b: T) {
        let (xs, ys, zs) = (self.updated(0), self.updated(1), self.updated(2));
        let dims = (self.phi.nodes, self.phi.unknowns);
        let (phi, reg) = (&mut self.phi.data, &self.reg.data);
        for u in 0..S::UNKNOWNS.len() {
            for k in zs.clone() {
                for j in ys.clone() {
                    let row = j * self.stride[1] + k * self.stride[2];
                    for i in xs.clone() {
                        let at = at_in::<L>(dims, u, row + i);
                        phi[at] = T::mul_add(b, reg[at], phi[at]);
                    }
                }
            }
        }
    }

    /// Advances `steps` steps of `dt` with the scheme's integrator; fails if an unknown is
    /// no longer finite at the end.
    pub fn advance(&mut self, steps: u64, dt: f64) -> Result<(), FdError> {
        if !(dt.is_finite() && dt > 0.0) {
            return Err(setup(format!(
                "{}: the time step must be positive and finite (got {dt})",
                S::NAME
            )));
        }
        let t = T::from_f64;
        for _ in 0..steps {
            match S::INTEGRATOR {
                Integrator::Euler => {
                    self.rates_pass(None, t(dt));
                    std::mem::swap(&mut self.phi, &mut self.reg);
                    self.fill();
                }
                rk => {
                    for &(a, b) in rk.stages() {
                        self.rates_pass(Some(t(a)), t(dt));
                        self.accumulate(t(b));
                        self.fill();
                    }
                }
            }
            self.steps += 1;
            self.time += dt;
        }
        self.check(dt)
    }

    /// Fails on every process if an unknown is not finite at a node of any (collective).
    pub(crate) fn check(&self, dt: f64) -> Result<(), FdError> {
        self.check_with(dt, Ok(()))
    }

    /// [`FdGrid::check`], failing also where `local` (what the process found of its own
    /// device) is an error (collective).
    pub(crate) fn check_with(&self, dt: f64, local: Result<(), FdError>) -> Result<(), FdError> {
        // Every stored value finite (the ghosts are the nodes' affine images) is the common
        // case, read at the memory's pace; the nodes are searched only otherwise.
        let all_finite = self.phi.data.iter().all(|v| v.is_finite());
        let bad = (0..S::UNKNOWNS.len())
            .filter(|_| !all_finite)
            .find_map(|u| {
                self.local_nodes()
                    .find(|&node| !self.phi.get(u, self.index(node)).is_finite())
                    .map(|node| (u, node))
            });
        agree(
            self.group.as_ref(),
            match (local, bad) {
                (Err(e), _) => Err(e),
                (Ok(()), None) => Ok(()),
                (Ok(()), Some((u, node))) => Err(FdError::Diverged {
                    scheme: S::NAME,
                    step: self.steps,
                    unknown: S::UNKNOWNS[u],
                    node,
                    dt,
                }),
            },
        )
    }

    /// `max |R_u|` over the updated nodes of the whole grid, per unknown: how far from a
    /// steady state (collective).
    pub fn max_rates(&self) -> Vec<f64> {
        let nu = S::UNKNOWNS.len();
        let mut out = vec![T::default(); nu];
        let mut max = vec![0.0f64; nu];
        for k in self.updated(2) {
            for j in self.updated(1) {
                for i in self.updated(0) {
                    let idx = i + j * self.stride[1] + k * self.stride[2];
                    S::rates(
                        |l| {
                            let at = (idx as isize + self.offsets[l]) as usize;
                            self.phi.get(S::LOADS[l].0, at)
                        },
                        &self.prm,
                        &mut out,
                    );
                    for (m, r) in max.iter_mut().zip(&out) {
                        *m = m.max(r.to_f64().abs());
                    }
                }
            }
        }
        self.group.max(max)
    }

    /// The manifest of a checkpoint of this run ([`super::checkpoint`]), its run and shards
    /// unset.
    fn manifest(&self) -> CheckpointHeader {
        let [lx, ly, lz] = self.n;
        CheckpointHeader {
            model: S::NAME.into(),
            q: S::UNKNOWNS.len(),
            lx,
            ly,
            lz,
            precision: T::NAME.into(),
            step: self.steps,
            params: S::PARAMS
                .iter()
                .zip(S::param_values(&self.params))
                .map(|(name, value)| ParamValue {
                    name: name.to_string(),
                    value,
                })
                .collect(),
            fields: Vec::new(),
            order: ORDER.into(),
            run: String::new(),
            shards: Vec::new(),
            sparse: false,
            fd: Some(FdFacts {
                h: self.h,
                sides: self.sides.iter().map(|s| format!("{s:?}")).collect(),
                unknowns: S::UNKNOWNS.iter().map(|u| u.to_string()).collect(),
                time: self.time,
            }),
            about: Default::default(),
        }
    }

    /// The padded index of each node of this block in a checkpoint's order: planes of
    /// constant x in turn, y fastest within them.
    fn checkpoint_order(&self) -> Vec<usize> {
        let [xs, ys, zs] = self.block.clone();
        xs.flat_map(|i| {
            let ys = ys.clone();
            zs.clone()
                .flat_map(move |k| ys.clone().map(move |j| [i, j, k]))
        })
        .map(|node| self.index(node))
        .collect()
    }

    /// Writes the run's state to the checkpoint `path`: this block's unknowns as its shard,
    /// then the manifest on the first process, atomic as a set; its outcome is every
    /// process's (collective).
    pub fn checkpoint(&self, path: &Path) -> Result<(), FdError> {
        let nu = S::UNKNOWNS.len();
        let values: Vec<T> = self
            .checkpoint_order()
            .into_iter()
            .flat_map(|at| (0..nu).map(move |u| self.phi.get(u, at)))
            .collect();
        checkpoint::write(
            self.group.as_ref(),
            path,
            self.manifest(),
            (&self.blocks, &values),
        )
    }

    /// Continues from the checkpoint `path`, written on any cut: its unknowns at this block's
    /// nodes, its steps and time, the sides applied. Refuses, on every process and before
    /// changing anything, a checkpoint that is not whole, and one of another scheme, grid,
    /// spacing, precision, parameters or sides (collective).
    pub fn resume(&mut self, path: &Path) -> Result<(), FdError> {
        let read = checkpoint::read::<T>(path, &self.manifest(), self.block());
        let (header, values) = match read {
            Ok(state) => {
                agree::<_, FdError>(self.group.as_ref(), Ok(()))?;
                state
            }
            Err(e) => {
                return Err(agree::<(), FdError>(self.group.as_ref(), Err(e.into())).unwrap_err())
            }
        };
        let nu = S::UNKNOWNS.len();
        for (at, node) in self
            .checkpoint_order()
            .into_iter()
            .zip(values.chunks_exact(nu))
        {
            for (u, &v) in node.iter().enumerate() {
                self.phi.set(u, at, v);
            }
        }
        self.steps = header.step;
        self.time = header.fd.map_or(0.0, |f| f.time);
        self.fill();
        Ok(())
    }

    /// Bytes a step moves per node in the best case: each unknown read once and written once
    /// per pass (forward Euler: one pass; the three-stage scheme: three passes and three
    /// accumulations).
    pub fn bytes_per_node(&self) -> usize {
        let passes = match S::INTEGRATOR {
            Integrator::Euler => 2,
            Integrator::Rk3 => 3 * (3 + 3),
        };
        passes * S::UNKNOWNS.len() * T::BYTES
    }
}

impl<S: FdScheme, T: Real> FdRun for FdGrid<S, T> {
    fn nodes(&self) -> [usize; 3] {
        self.n
    }
    fn steps(&self) -> u64 {
        self.steps
    }
    fn time(&self) -> f64 {
        self.time
    }
    fn advance(&mut self, steps: u64, dt: f64) -> Result<(), crate::Error> {
        Ok(FdGrid::advance(self, steps, dt)?)
    }
    fn max_rates(&mut self) -> Result<Vec<f64>, crate::Error> {
        Ok(FdGrid::max_rates(self))
    }
    fn gather(&mut self, u: usize) -> Result<Option<Vec<f64>>, crate::Error> {
        Ok(FdGrid::gather(self, u))
    }
    fn bytes_per_node(&self) -> usize {
        FdGrid::bytes_per_node(self)
    }
    fn checkpoint(&mut self, path: &Path) -> Result<(), crate::Error> {
        Ok(FdGrid::checkpoint(self, path)?)
    }
    fn resume(&mut self, path: &Path) -> Result<(), crate::Error> {
        Ok(FdGrid::resume(self, path)?)
    }
    fn set_unknown(&mut self, u: usize, f: &dyn Fn([f64; 3]) -> f64) -> Result<(), crate::Error> {
        self.set(u, f);
        Ok(())
    }
    fn describe(&self) -> String {
        format!("cpu, {}", self.layout().name())
    }
    fn group(&self) -> &dyn crate::group::Group {
        self.group.as_ref()
    }
}
