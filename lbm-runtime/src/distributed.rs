//! A lattice cut into blocks over the processes of a [`Group`](crate::group::Group)
//! ([`crate::blocks`]): MPI ranks (`lbm::group::Ranks`, feature `mpi`), the threads of one
//! process ([`crate::group::Threads`]), or one process alone ([`crate::group::OneProcess`],
//! whose blocks' neighbours are themselves). Cut along x alone, the blocks are slabs in a
//! periodic ring (Calore et al. 2016 §4, 2019 §5); cut along y or z too, they are blocks with
//! ghost lines ([`crate::domain::Frame`]).
//!
//! Each process owns one block of [`cut_blocks`], run on any process-local backend
//! ([`SlabBackend`]: the host's [`Slab`], a GPU's `crate::gpu::GpuSlab`, both at once
//! `crate::hetero::SplitSlab`, its block cut along x into host and device parts). A step first
//! swaps the ghost lines along z, then y, where the lattice is cut there, then reads the block's
//! border planes, posts the non-blocking halo exchange along x with both neighbours, updates
//! the bulk, waits, stores the halos and updates the borders (Calore et al. 2016, Fig. 5; see
//! [`crate::slab_backend`]). In the in-place (AA) scheme the pull half-step is such a step
//! followed by a second exchange of what it pushed across the cuts, along x, then y, then z,
//! and the local half-step exchanges nothing ([`crate::domain`]). Ghost layers travel as packed
//! buffers in logical order, so processes need not share a storage order.
//!
//! The bulk is updated in `BULK_CHUNKS` (8) parts beside the exchange
//! ([`Transfers::swap_during`]), so that MPI progresses large messages between them.
//!
//! Every process must call the collective methods (construction, [`DistLattice::step`],
//! [`DistLattice::gather`], the collective methods of [`Solver`]) in the same order; an error
//! on one process is agreed on by all ([`agree`]), so none waits for one that stopped. Under
//! MPI, drop a `DistLattice` before the `mpi::environment::Universe` (its group frees its
//! communicator).

use std::marker::PhantomData;
use std::ops::Range;
use std::time::Instant;

use crate::blocks::{Blocks, Cut, Decomposition, Peers};
use crate::domain::{cut_blocks, export_block, import_block, sparse_blocks, GlobalSpec, Slab};
use crate::group::{agree, Carrier, Halo, Transfers};
use crate::metrics::median;
use crate::solver::{Extent, Placement, ReadMoments};
use crate::{Block, Error, Lattice, Layout, LbmError, Model, Real, Scheme, SlabBackend, Solver};

/// Parts of the bulk update between which the halo transfers may progress: MPICH (as most MPI
/// libraries) advances a large (rendezvous) message only inside MPI calls.
const BULK_CHUNKS: usize = 8;

/// Rounds of [`DistLattice::bench`], each timing a step with the exchange, one without and
/// the exchange alone.
const BENCH_ROUNDS: usize = 5;

/// Halo exchanges timed to tune the processes' host/device splits (`T_mpi`, Calore et al. 2019,
/// eq. 7).
pub const EXCHANGE_PROBES: usize = 9;

/// A lattice distributed over the processes of a group: this process's slab, on the
/// process-local backend `P` (the host's [`Slab`] by default, a GPU's
/// [`crate::gpu::GpuSlab`], a host/device split [`crate::hetero::SplitSlab`]), and the ring.
pub struct DistLattice<M: Model, L: Layout, T: Real, P = Slab<M, L, T>> {
    group: Box<dyn Carrier<T>>,
    dec: Blocks,
    rank: usize,
    /// This process's block of global sites.
    block: [Range<usize>; 3],
    /// Messages and values sent to other processes by the exchanges so far.
    sent: [usize; 2],
    /// The buffers of the exchanges along each axis, kept from step to step.
    halos: [Halo<T>; 3],
    spec: GlobalSpec<M>,
    slab: P,
    _l: PhantomData<(L, T)>,
}

impl<M: Model, L: Layout, T: Real> DistLattice<M, L, T> {
    /// This process's block of the global lattice `spec` cut as `blocks` says on the host, at
    /// rest (collective over `group`): a [`Cut`] (`Cut::along(0, n)` is the ring of slabs, a
    /// cut along y or z gives blocks with ghost lines, [`crate::domain::Frame`]), or
    /// [`Decomposition::Sparse`] blocks, only those holding fluid allocated
    /// ([`crate::domain::sparse_blocks`]): their fluid sites compute what the whole lattice's
    /// do, bit for bit; the blocks left out hold solid sites alone, which read as at rest
    /// (populations `w_i`, moments 0) in the gathered lattice, the outputs and a checkpoint.
    ///
    /// Every check (the blocks against the process count, the sizes against the halo, layout
    /// against `LY`, parameters, boundaries, scheme) fails on every process with the same
    /// message and none waits for another.
    pub fn new(
        group: Box<dyn Carrier<T>>,
        spec: GlobalSpec<M>,
        blocks: impl Into<Decomposition>,
        scheme: Scheme,
    ) -> Result<Self, Error> {
        let blocks = blocks.into();
        Self::on_blocks(group, spec, blocks, |spec, dec, rank| {
            Ok(Slab::new(spec, dec, rank, scheme)?)
        })
    }
}

impl<M: Model, L: Layout, T: Real, P: SlabBackend<Model = M, Real = T>> DistLattice<M, L, T, P> {
    /// This process's block of the global lattice `spec` cut as `blocks` says (a [`Cut`] or
    /// a sparse domain), built by `make` (given the specification, the decomposition and the
    /// rank) on a process-local backend, at rest (collective over `group`). Whatever fails on
    /// one process — a process count the lattice cannot hold, an adapter missing on one node —
    /// fails on every one, with the failing one's message.
    pub fn on_blocks(
        group: Box<dyn Carrier<T>>,
        spec: GlobalSpec<M>,
        blocks: Decomposition,
        make: impl FnOnce(&GlobalSpec<M>, &Blocks, usize) -> Result<P, Error>,
    ) -> Result<Self, Error> {
        let rank = group.rank();
        let built = (|| -> Result<_, Error> {
            let dec = match blocks {
                Decomposition::Cut(cut) => cut_blocks::<M>(spec.size(), cut, group.ranks())?,
                Decomposition::Sparse(size) => sparse_blocks(&spec, size, Some(group.ranks()))?,
            };
            let slab = make(&spec, &dec, rank)?;
            Ok((dec, slab))
        })();
        let (dec, slab) = agree(&*group, built)?;
        let block = dec.block(rank);
        Ok(Self {
            group,
            rank,
            sent: [0, 0],
            halos: Default::default(),
            block,
            dec,
            spec,
            slab,
            _l: PhantomData,
        })
    }

    /// The global lattice `global`, held by the first process (`None` elsewhere), cut over
    /// the processes of this lattice (collective): a run resumed on another number of
    /// processes, from a lattice read on the first. It first tells every process whether
    /// `global` fits the specification, so a missing or mismatched lattice is an error on
    /// every process, not a hang. The slabs continue from the step count of `global`.
    pub fn scatter(&mut self, global: Option<&Lattice<M, L, T>>) -> Result<(), Error> {
        let size = global.map(|g| {
            let d = g.dims();
            [d.lx, d.ly, d.lz]
        });
        let fits = match self.rank {
            0 => self.spec.holds(size).map_err(Error::from),
            _ => Ok(()),
        };
        agree(&*self.group, fits)?;
        let step = self.group.each(global.map_or(0, Lattice::steps_done))[0];
        self.slab.set_steps_done(step);
        // A piece the root cannot cut reaches its process empty (refused there) and fails the
        // root too: the outcome is agreed below.
        let (dec, mut failed) = (&self.dec, None);
        let mine = self.group.scatter(
            &mut |r| match global.map(|g| export_block(g, &dec.block(r))) {
                Some(Ok(values)) => values,
                Some(Err(e)) => {
                    failed.get_or_insert(e);
                    Vec::new()
                }
                None => Vec::new(),
            },
        );
        let set = match failed {
            Some(e) => Err(e.into()),
            None => self.slab.set_local_populations(&mine),
        };
        agree(&*self.group, set)
    }

    /// The decomposition.
    pub fn decomposition(&self) -> &Blocks {
        &self.dec
    }

    /// This rank's slab.
    pub fn slab(&self) -> &P {
        &self.slab
    }

    /// This rank's slab, mutable (its phases timed: the host/device split's calibration).
    #[cfg(feature = "gpu")]
    pub(crate) fn slab_mut(&mut self) -> &mut P {
        &mut self.slab
    }

    /// One time step (collective with the neighbours): the ghost layers along z and y first
    /// where the lattice is cut there, then post the exchange along x, update the bulk, wait,
    /// update the borders (Calore et al. 2016, Fig. 5); after an AA pull half-step, hand what
    /// it pushed across the cuts to the neighbours, along x, then y, then z. Where the lattice
    /// is not cut along x the block is alone there, its own neighbour: it wraps itself
    /// ([`SlabBackend::wrap_x`]) and its bulk and borders follow.
    pub fn step(&mut self) -> Result<(), Error> {
        if self.slab.needs_halos() {
            self.exchange_during(BULK_CHUNKS)?;
        } else {
            self.slab.update_bulk(0..1, 1)?;
        }
        self.slab.update_borders_and_finish()?;
        if self.slab.pushes() {
            for axis in [0, 1, 2] {
                if self.dec.is_cut(axis) {
                    self.trade(axis, 0, (P::pushed, P::fold))?;
                } else if axis == 0 {
                    self.slab.wrap_x(true, &mut self.halos[0].to)?;
                }
            }
        }
        Ok(())
    }

    /// One step without the halo exchange (the halos keep stale values: benchmarks only, the
    /// compute part of the performance model).
    fn step_without_exchange(&mut self) -> Result<(), Error> {
        self.slab.update_bulk(0..1, 1)?;
        self.slab.update_borders_and_finish()
    }

    /// The halo exchange alone, nothing computed under it (benchmarks: the `T_MPI` of the
    /// performance model).
    pub fn exchange(&mut self) -> Result<(), Error> {
        self.exchange_during(0)
    }

    /// Along z, then y, where the lattice is cut there, then x: the block's border layers to
    /// the neighbours below and above, theirs into its ghost layers, the bulk updated in
    /// `chunks` parts (none: `0`) while the messages along x travel. A layer along y or z
    /// spans the block's columns and every stored line across, so the exchange along y
    /// carries what came along z (the edges) and the one along x, whole planes, the corners
    /// ([`crate::blocks`]). A block alone along x wraps itself there, whole planes as well,
    /// and then updates its bulk.
    fn exchange_during(&mut self, chunks: usize) -> Result<(), Error> {
        for axis in [2, 1, 0] {
            if self.dec.is_cut(axis) {
                let work = if axis == 0 { chunks } else { 0 };
                self.trade(axis, work, (P::borders, P::set_ghosts))?;
            } else if axis == 0 {
                self.slab.wrap_x(false, &mut self.halos[0].to)?;
                if chunks > 0 {
                    self.slab.update_bulk(0..1, 1)?;
                }
            }
        }
        Ok(())
    }

    /// One trade along `axis` through its kept buffers: `read` the block's layers into them,
    /// swap them with the neighbours (the bulk updated in `chunks` parts meanwhile), `write`
    /// what came back.
    fn trade(
        &mut self,
        axis: usize,
        chunks: usize,
        (read, write): (Read<P, T>, Write<P, T>),
    ) -> Result<(), Error> {
        let mut halo = std::mem::take(&mut self.halos[axis]);
        read(&self.slab, axis, &mut halo.to)?;
        self.swap(axis, &mut halo, chunks)?;
        write(&mut self.slab, axis, [&halo.from[0], &halo.from[1]])?;
        self.halos[axis] = halo;
        Ok(())
    }

    /// Counts the values of `to` bound for other processes than this one.
    fn count(&mut self, peers: Peers, to: &[Vec<T>; 2]) {
        for (peer, values) in peers.into_iter().zip(to) {
            if peer.is_some_and(|p| p != self.rank) {
                self.sent[0] += 1;
                self.sent[1] += values.len();
            }
        }
    }

    /// Sends `halo.to` to the neighbours along `axis` and puts what they send this way into
    /// `halo.from` ([`Transfers::swap_during`]), counting what leaves this process, updating
    /// the bulk in `chunks` parts (none: `0`) while the transfers travel.
    fn swap(&mut self, axis: usize, halo: &mut Halo<T>, chunks: usize) -> Result<(), Error> {
        let peers = self.dec.neighbours(self.rank, axis);
        self.count(peers, &halo.to);
        let slab = &mut self.slab;
        self.group
            .swap_during(peers, halo, chunks, &mut |parts, n| {
                slab.update_bulk(parts, n)
            })
    }

    /// Checks every rank's slab for divergence (collective): every rank gets the same answer,
    /// the error of the lowest rank whose slab diverged, with the site in global coordinates.
    pub fn check(&self) -> Result<(), Error> {
        let local = self.slab.check().map_err(|e| match e.as_lattice() {
            // The block's check names the global plane site already.
            Some(LbmError::Diverged { step, x, y, reason }) => Error::from(LbmError::Diverged {
                step: *step,
                x: x + self.block[0].start,
                y: *y,
                reason: format!("{reason} (on rank {})", self.rank),
            }),
            _ => e,
        });
        agree(&*self.group, local)
    }

    /// The whole lattice, assembled on rank 0 from every slab's populations (collective):
    /// `Some` on rank 0, `None` elsewhere. The assembled lattice is an ordinary two-copy
    /// lattice, so its moment fields ([`Lattice::moment_field`]) are the single-process ones;
    /// it has done the slabs' steps.
    pub fn gather(&self) -> Result<Option<Lattice<M, L, T>>, Error> {
        let mine = agree(&*self.group, self.slab.local_populations())?;
        let Some(all) = self.group.gather(mine) else {
            return Ok(None);
        };
        let mut global = self.spec.lattice::<L, T>(Scheme::TwoCopy)?;
        global.set_steps_done(self.slab.steps_done());
        let mut rest = &all[..];
        for r in 0..self.dec.count() {
            let block = self.dec.block(r);
            let (mine, others) =
                rest.split_at(block.iter().map(Range::len).product::<usize>() * M::Q);
            import_block(&mut global, &block, mine)?;
            rest = others;
        }
        Ok(Some(global))
    }

    /// Measures a step with and without the halo exchange, and the exchange alone, `steps`
    /// steps each after a warm-up, in up to five rounds that alternate the three, each
    /// the median of its rounds: a machine whose speed drifts during the timing moves all
    /// three alike, so that their differences (the share of the exchange the interior hides)
    /// mean something (collective; every process gets the same answer; built for any backend
    /// by [`crate::backend::on_ring`]).
    pub fn bench(&mut self, steps: usize) -> Result<RankTimes, Error> {
        self.time_per_step(steps.div_ceil(4), Self::step)?;
        let rounds = BENCH_ROUNDS.min(steps.max(1));
        let per_round = steps.div_ceil(rounds);
        let mut sent = [0, 0];
        let mut times: [Vec<f64>; 3] = Default::default();
        for _ in 0..rounds {
            let before = self.sent;
            times[0].push(self.time_per_step(per_round, Self::step)?);
            sent = [0, 1].map(|k| sent[k] + self.sent[k] - before[k]);
            times[1].push(self.time_per_step(per_round, Self::step_without_exchange)?);
            times[2].push(self.time_per_step(per_round, Self::exchange)?);
        }
        let [with_exchange, without_exchange, exchange_only] = times.map(|mut t| median(&mut t));
        let [messages, values] = sent;
        let bytes = values * std::mem::size_of::<T>();
        Ok(RankTimes {
            ranks: self.dec.count(),
            cut: self.dec.cut(),
            with_exchange,
            without_exchange,
            exchange_only,
            // One process alone sends nothing: the message a ring's slab would send.
            halo_bytes: match messages {
                0 => M::HALO * self.spec.plane() * M::Q * std::mem::size_of::<T>(),
                m => bytes / m,
            },
            sent_bytes: bytes / (rounds * per_round).max(1),
            backend: self.slab.describe(),
        })
    }

    /// Seconds per step of `f` run `steps` times, the slowest rank's (collective: barriers
    /// before and after, the device's work awaited, and a max over the ranks).
    fn time_per_step(
        &mut self,
        steps: usize,
        mut f: impl FnMut(&mut Self) -> Result<(), Error>,
    ) -> Result<f64, Error> {
        self.group.barrier();
        let t0 = Instant::now();
        let ran = (0..steps)
            .try_for_each(|_| f(self))
            .and_then(|()| self.slab.finish());
        agree(&*self.group, ran)?;
        let local = t0.elapsed().as_secs_f64() / steps.max(1) as f64;
        Ok(self.group.max(vec![local])[0])
    }
}

/// The median seconds of a halo exchange around the ring of `group` with messages of `len`
/// values of `T` each way, over `reps` exchanges after one for warm-up, the slowest process's
/// (collective): the `T_mpi` of Calore et al. 2019, eq. 7, measured before the slabs exist,
/// to tune a process's host/device split.
pub fn exchange_seconds<T: Real>(group: &dyn Transfers<T>, len: usize, reps: usize) -> f64 {
    let around = group.ring_neighbours();
    let mut times = Vec::with_capacity(reps);
    // The buffers kept from one exchange to the next, as the ring keeps them.
    let mut halo = Halo::default();
    for k in 0..=reps {
        halo.to.iter_mut().for_each(|v| v.resize(len, T::default()));
        group.barrier();
        let t0 = Instant::now();
        (group.swap_during(around, &mut halo, 0, &mut |_, _| Ok(())))
            .unwrap_or_else(|_| unreachable!("nothing runs beside this exchange"));
        if k > 0 {
            times.push(t0.elapsed().as_secs_f64());
        }
    }
    group.max(vec![median(&mut times)])[0]
}

/// A backend's read of its layers along an axis into a pair of buffers
/// ([`SlabBackend::borders`], [`SlabBackend::pushed`]).
type Read<P, T> = fn(&P, usize, &mut [Vec<T>; 2]) -> Result<(), Error>;

/// A backend's write of what its neighbours along an axis sent
/// ([`SlabBackend::set_ghosts`], [`SlabBackend::fold`]).
type Write<P, T> = fn(&mut P, usize, [&[T]; 2]) -> Result<(), Error>;

/// Step times measured on the processes of a group, seconds (the slowest one's).
#[derive(Debug, Clone, PartialEq)]
pub struct RankTimes {
    /// Processes that ran.
    pub ranks: usize,
    /// Their cut.
    pub cut: Cut,
    /// A full step: exchange overlapped with the bulk, then the borders.
    pub with_exchange: f64,
    /// The same step without the exchange (compute only).
    pub without_exchange: f64,
    /// The exchange alone.
    pub exchange_only: f64,
    /// Bytes of one halo message, on average over those the first process sent.
    pub halo_bytes: usize,
    /// Bytes the first process sent the others per step (every message of its exchange,
    /// counted as it ran).
    pub sent_bytes: usize,
    /// The first process's backend in words ([`Block::describe`]).
    pub backend: String,
}

impl<M: Model, L: Layout, T: Real, P: SlabBackend<Model = M, Real = T>> Block
    for DistLattice<M, L, T, P>
{
    type Model = M;
    type Real = T;

    fn params(&self) -> &M::Params {
        &self.spec.params
    }

    fn scheme(&self) -> Scheme {
        self.slab.scheme()
    }

    fn layout_name(&self) -> &'static str {
        self.slab.layout_name()
    }

    fn steps_done(&self) -> u64 {
        self.slab.steps_done()
    }

    fn set_steps_done(&mut self, step: u64) {
        self.slab.set_steps_done(step);
    }

    fn local_populations(&self) -> Result<Vec<T>, Error> {
        self.slab.local_populations()
    }

    fn set_local_populations(&mut self, values: &[T]) -> Result<(), Error> {
        let set = self.slab.set_local_populations(values);
        agree(&*self.group, set)
    }

    fn local_solid(&self, s: usize) -> bool {
        self.slab.local_solid(s)
    }

    /// Each slab its own sites' values; a refusal on one rank is every rank's.
    fn set_local_field(&mut self, name: &str, values: &[f64]) -> Result<(), Error> {
        let set = self.slab.set_local_field(name, values);
        agree(&*self.group, set)
    }

    fn local_fields(&self) -> Result<Option<Vec<Vec<f64>>>, Error> {
        self.slab.local_fields()
    }

    fn placement(&self) -> Placement {
        self.slab.placement()
    }

    fn describe(&self) -> String {
        let d = &self.dec;
        if d.count() == 1 && !d.is_sparse() {
            return self.slab.describe();
        }
        if d.cut() != Cut::along(0, d.count()) {
            let kept = match d.is_sparse() {
                true => format!(", the {} that hold fluid (a sparse domain)", d.count()),
                false => String::new(),
            };
            let thinnest = [0, 1, 2].map(|a| d.thinnest(a));
            return format!(
                "{} in blocks cut {}{kept} (the smallest {thinnest:?} sites), each on its own \
                 backend; the first: {}",
                self.group.describe(),
                d.cut(),
                self.slab.describe()
            );
        }
        let widths: Vec<usize> = (0..d.count()).map(|r| d.range(r, 0).len()).collect();
        format!(
            "{} in a ring (slab widths {widths:?}), each on its own backend; the first: {}",
            self.group.describe(),
            self.slab.describe()
        )
    }
}

impl<M: Model, L: Layout, T: Real, P: SlabBackend<Model = M, Real = T>> Solver
    for DistLattice<M, L, T, P>
{
    fn extent(&self) -> Extent {
        Extent::of_size(self.spec.size())
    }

    /// The lattice's one block steps as a whole lattice does where it can
    /// ([`SlabBackend::steps_alone`]); blocks step through the ring.
    fn advance(&mut self, n: u64) -> Result<(), Error> {
        let mut ran = || {
            if self.dec.count() == 1 && self.slab.steps_alone(n)? {
                return Ok(());
            }
            (0..n).try_for_each(|_| self.step())
        };
        let ran = ran().and_then(|()| self.slab.finish());
        agree(&*self.group, ran)
    }

    fn local_box(&self) -> [Range<usize>; 3] {
        self.block.clone()
    }

    /// Each slab sets its own sites (in place on the host); a refusal on one rank is every
    /// rank's.
    fn set_equilibrium_at(
        &mut self,
        moments: &(dyn Fn(usize, usize) -> Vec<f64> + Sync),
    ) -> Result<(), Error> {
        let set = self.slab.set_equilibrium_at(self.block[0].start, moments);
        agree(&*self.group, set)
    }

    /// Every block's columns' moments computed where they lie as `read` asks for them, after
    /// the exchange the next step starts with (which it then repeats unchanged).
    fn with_moments(&mut self, read: ReadMoments<'_>) -> Result<Vec<Vec<f64>>, Error> {
        if self.slab.needs_halos() {
            self.exchange()?;
        }
        // A device that fails to compute them gives zeros, so that the other processes,
        // which may be moving these values, finish; then every process fails alike.
        let plane = self.block[1].len() * self.block[2].len();
        let (slab, mut failed) = (&mut self.slab, None);
        let out = read(self.group.values(), &mut |cols| {
            slab.own_moments(cols.clone()).unwrap_or_else(|e| {
                failed.get_or_insert(e);
                vec![vec![0.0; cols.len() * plane]; M::MOMENT_NAMES.len()]
            })
        });
        agree(&*self.group, failed.map_or(Ok(()), Err))?;
        Ok(out)
    }

    /// The halos refreshed first where the next step pulls across the cuts (the same exchange
    /// it starts with): the pre-collision populations of a border site are its neighbours'.
    fn exchanged(&mut self, sites: &[[usize; 3]]) -> Result<Vec<T>, Error> {
        if self.slab.needs_halos() {
            self.exchange()?;
        }
        let local: Vec<[usize; 3]> = sites
            .iter()
            .map(|&[x, y, z]| [x - self.block[0].start, y, z])
            .collect();
        let read = self.slab.exchanged(&local);
        agree(&*self.group, read)
    }

    fn check(&self) -> Result<(), Error> {
        DistLattice::check(self)
    }

    fn group(&self) -> &dyn Transfers<f64> {
        self.group.values()
    }
}

#[cfg(test)]
#[path = "distributed_tests.rs"]
mod tests;
