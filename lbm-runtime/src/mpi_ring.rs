//! The lattice distributed over MPI ranks in a periodic ring (Calore et al. 2016 §4, 2019 §5;
//! feature `mpi`, rsmpi over the system MPI).
//!
//! Each rank owns one slab of the [`ring_blocks`], run on any rank-local backend
//! ([`SlabBackend`]: the host's [`Slab`], a GPU's `crate::gpu::GpuSlab`, both at once
//! `crate::hetero::SplitSlab`); a step reads the slab's border columns, posts the non-blocking
//! halo exchange with both neighbours, updates the bulk, waits, stores the halos and updates
//! the borders (Calore et al. 2016, Fig. 5; see
//! [`crate::slab_backend`]). In the in-place (AA) scheme the pull half-step is such a step
//! followed by a second exchange of what it pushed across the cuts, and the local half-step
//! exchanges nothing ([`crate::domain`]). Halos travel as packed buffers in logical order
//! (`H·LY·Q` values a side, small beside the slab), so ranks need not share a storage order.
//! With one rank the ring closes on itself and the same code path runs (the rank sends to
//! itself).
//!
//! MPICH (as most MPI libraries) progresses a large (rendezvous) message only inside MPI calls,
//! so the bulk is updated in `BULK_CHUNKS` (8) parts with an `MPI_Test` of the transfers between
//! them; small halos (eager protocol) travel entirely under the first part.
//!
//! Every rank must call the collective methods (construction, [`DistLattice::step`],
//! [`DistLattice::gather`], the collective methods of [`Solver`]) in the same order; an error
//! on one rank is agreed on by all ([`agree`]), so none waits for one that stopped. Drop a
//! `DistLattice` before the [`mpi::environment::Universe`] (it frees its communicator).

use std::marker::PhantomData;
use std::ops::Range;
use std::time::Instant;

pub use mpi;
use mpi::collective::SystemOperation;
use mpi::point_to_point::{Destination, Source};
use mpi::request::{Request, Scope};
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi::traits::{CommunicatorCollectives, Root};
use mpi::Tag;

use crate::blocks::Blocks;
use crate::domain::{
    export_columns, import_slab, moments_by_window, ring_blocks, DomainError, GlobalSpec, Slab,
};
use crate::solver::{Extent, Placement};
use crate::{Error, Lattice, Layout, LbmError, Model, Real, Scheme, SlabBackend, Solver};

/// Parts of the bulk update between which MPI may progress the halo transfers: MPICH (as most
/// MPI libraries) advances a large (rendezvous) message only inside MPI calls.
const BULK_CHUNKS: usize = 8;

/// Lets MPI progress a transfer still in flight (`MPI_Test`), keeping it while not done.
fn poke<'a, D: ?Sized, S: Scope<'a>>(slot: &mut Option<Request<'a, D, S>>) {
    if let Some(r) = slot.take() {
        *slot = r.test().err();
    }
}

/// Tag of the halo travelling to the right neighbour (into its left halo).
const RIGHTWARD: Tag = 1;
/// Tag of the halo travelling to the left neighbour (into its right halo).
const LEFTWARD: Tag = 2;
/// Tag of the slabs gathered on rank 0.
const GATHER: Tag = 3;
/// Tag of the slabs sent from rank 0.
const SCATTER: Tag = 4;

/// Initialises MPI (once per process), or says why it cannot.
pub fn init() -> Result<mpi::environment::Universe, DomainError> {
    mpi::initialize().ok_or_else(|| {
        DomainError::Mpi("MPI is already initialised in this process (call init() once)".into())
    })
}

/// This process's rank among the ranks of `comm` that share its node (collective: a
/// shared-memory split, `MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)`, keyed by the rank in
/// `comm`): what spreads the ranks of a node over its GPUs ([`crate::gpu::GpuOptions`]'s
/// `node_rank`).
pub fn node_rank(comm: &SimpleCommunicator) -> usize {
    let node = comm.split_shared(comm.rank());
    usize::try_from(node.rank()).expect("a rank is not negative")
}

/// The number of ranks of `comm` that share this rank's node (collective), which share its
/// memory.
pub fn node_size(comm: &SimpleCommunicator) -> usize {
    let node = comm.split_shared(comm.rank());
    usize::try_from(node.size()).expect("a size is not negative")
}

/// `local` on every rank of `comm` made one outcome (collective): `Ok` where every rank
/// succeeded, else on every rank the error of the lowest rank that failed, told by it to the
/// others, so no rank goes on to wait for one that stopped.
pub fn agree<R>(comm: &SimpleCommunicator, local: Result<R, Error>) -> Result<R, Error> {
    let rank = comm.rank();
    let mine = if local.is_err() { rank } else { i32::MAX };
    let mut first = i32::MAX;
    comm.all_reduce_into(&mine, &mut first, SystemOperation::min());
    if first == i32::MAX {
        return local;
    }
    let mut text = match &local {
        Err(e) => e.to_string().into_bytes(),
        Ok(_) => Vec::new(),
    };
    let root = comm.process_at_rank(first);
    let mut len = text.len() as u64;
    root.broadcast_into(&mut len);
    text.resize(len as usize, 0);
    root.broadcast_into(&mut text[..]);
    match local {
        Err(e) => Err(e),
        Ok(_) => Err(DomainError::OtherRank {
            rank: first as usize,
            message: String::from_utf8_lossy(&text).into_owned(),
        }
        .into()),
    }
}

/// A lattice distributed over the ranks of a communicator: this rank's slab, on the
/// rank-local backend `P` (the host's [`Slab`] by default, a GPU's
/// [`crate::gpu::GpuSlab`], a host/device split [`crate::hetero::SplitSlab`]), and the ring.
pub struct DistLattice<M: Model, L: Layout, T: Real, P = Slab<M, L, T>> {
    comm: SimpleCommunicator,
    dec: Blocks,
    rank: usize,
    x0: usize,
    spec: GlobalSpec<M>,
    slab: P,
    _l: PhantomData<(L, T)>,
}

impl<M: Model, L: Layout, T: Real> DistLattice<M, L, T> {
    /// Rank `comm.rank()`'s slab of the global lattice `spec` on the host, at rest
    /// (collective).
    ///
    /// Every check (rank count against `LX` and the halo, layout against `LY`, parameters,
    /// boundaries, scheme) fails on every rank with the same message and no rank waits for
    /// another.
    pub fn new(
        comm: &SimpleCommunicator,
        spec: GlobalSpec<M>,
        scheme: Scheme,
    ) -> Result<Self, Error> {
        Self::with_slab(comm, spec, |spec, dec, rank| {
            Ok(Slab::new(spec, dec, rank, scheme)?)
        })
    }
}

impl<M: Model, L: Layout, T: Real, P: SlabBackend<Model = M, Real = T>> DistLattice<M, L, T, P> {
    /// Rank `comm.rank()`'s slab of the global lattice `spec`, built by `make` (given the
    /// specification, the decomposition and the rank) on a rank-local backend, at rest
    /// (collective). Whatever fails on one rank — a rank count the lattice cannot hold, an
    /// adapter missing on one node — fails on every rank, with the failing rank's message.
    pub fn with_slab(
        comm: &SimpleCommunicator,
        spec: GlobalSpec<M>,
        make: impl FnOnce(&GlobalSpec<M>, &Blocks, usize) -> Result<P, Error>,
    ) -> Result<Self, Error> {
        let comm = comm.duplicate();
        let built = (|| {
            let ranks =
                usize::try_from(comm.size()).map_err(|e| DomainError::Mpi(e.to_string()))?;
            let rank = usize::try_from(comm.rank()).map_err(|e| DomainError::Mpi(e.to_string()))?;
            let dec = ring_blocks::<M>(spec.size(), ranks)?;
            let x0 = dec.range(rank, 0).start;
            let slab = make(&spec, &dec, rank)?;
            Ok((dec, rank, x0, slab))
        })();
        let (dec, rank, x0, slab) = agree(&comm, built)?;
        Ok(Self {
            comm,
            dec,
            rank,
            x0,
            spec,
            slab,
            _l: PhantomData,
        })
    }

    /// The global lattice `global`, held by rank 0 (`None` elsewhere), cut over the ranks of
    /// this lattice (collective): a run resumed on another number of ranks, from a lattice
    /// read on rank 0. Rank 0 first tells every rank whether `global` fits the
    /// specification, so a missing or mismatched lattice is an error on every rank, not a
    /// hang. The slabs continue from the step count of `global`.
    pub fn scatter(&mut self, global: Option<&Lattice<M, L, T>>) -> Result<(), Error> {
        let fits = global.is_some_and(|g| {
            let d = g.dims();
            [d.lx, d.ly, d.lz] == self.spec.size()
        });
        let fits = if self.rank == 0 && !fits {
            Err(Error::from(DomainError::Mpi(format!(
                "scatter: rank 0 needs the global {} lattice to cut into slabs",
                Extent::of_size(self.spec.size())
            ))))
        } else {
            Ok(())
        };
        agree(&self.comm, fits)?;
        let mut step = global.map_or(0, Lattice::steps_done);
        self.comm.process_at_rank(0).broadcast_into(&mut step);
        self.slab.set_steps_done(step);
        let mine = match global.filter(|_| self.rank == 0) {
            Some(g) => {
                for r in 1..self.dec.count() {
                    let values = export_columns(g, self.dec.range(r, 0))?;
                    self.comm
                        .process_at_rank(peer(r))
                        .send_with_tag(&values[..], SCATTER);
                }
                export_columns(g, self.dec.range(0, 0))?
            }
            None => {
                self.comm
                    .process_at_rank(0)
                    .receive_vec_with_tag::<T>(SCATTER)
                    .0
            }
        };
        let set = self.slab.set_populations(&mine);
        agree(&self.comm, set)
    }

    /// The decomposition.
    pub fn decomposition(&self) -> &Blocks {
        &self.dec
    }

    /// This rank's slab.
    pub fn slab(&self) -> &P {
        &self.slab
    }

    /// One time step (collective with the two neighbours): post the halo exchange, update the bulk,
    /// wait, update the borders (Calore et al. 2016, Fig. 5); after an AA pull half-step, hand what
    /// it pushed across the cuts to the neighbours.
    pub fn step(&mut self) -> Result<(), Error> {
        if self.slab.needs_halos() {
            self.exchange_around(BULK_CHUNKS)?;
        } else {
            self.slab.update_bulk(0, 1)?;
        }
        self.slab.update_borders_and_finish()?;
        if let Some(pushed) = self.slab.pushed()? {
            let [from_left, from_right] = self.swap(pushed, 0)?;
            self.slab.fold([&from_left, &from_right])?;
        }
        Ok(())
    }

    /// One step without the halo exchange (the halos keep stale values: benchmarks only, the
    /// compute part of the performance model).
    pub fn step_without_exchange(&mut self) -> Result<(), Error> {
        self.slab.update_bulk(0, 1)?;
        self.slab.update_borders_and_finish()
    }

    /// The halo exchange alone, nothing computed under it (benchmarks: the `T_MPI` of the
    /// performance model).
    pub fn exchange(&mut self) -> Result<(), Error> {
        self.exchange_around(0)
    }

    /// Reads the borders, swaps them with the neighbours while updating the bulk in `chunks`
    /// parts (none: `0`), and stores the halos.
    fn exchange_around(&mut self, chunks: usize) -> Result<(), Error> {
        let borders = self.slab.borders()?;
        let [from_left, from_right] = self.swap(borders, chunks)?;
        self.slab.set_halos([&from_left, &from_right])
    }

    /// Sends `[to_left, to_right]` to the neighbours and receives what they send this way
    /// (`[from_left, from_right]`), updating the bulk in `chunks` parts (none: `0`) while the
    /// four transfers travel.
    fn swap(&mut self, to: [Vec<T>; 2], chunks: usize) -> Result<[Vec<T>; 2], Error> {
        let (left, right) = self.dec.neighbours(self.rank, 0);
        let slab = &mut self.slab;
        ring_swap(&self.comm, (left, right), to, chunks, |k, n| {
            slab.update_bulk(k, n)
        })
    }

    /// Checks every rank's slab for divergence (collective): every rank gets the same answer,
    /// the error of the lowest rank whose slab diverged, with the site in global coordinates.
    pub fn check(&self) -> Result<(), Error> {
        let local = self.slab.check().map_err(|e| match e.as_lattice() {
            Some(LbmError::Diverged { step, x, y, reason }) => Error::from(LbmError::Diverged {
                step: *step,
                x: x + self.x0,
                y: *y,
                reason: format!("{reason} (on rank {})", self.rank),
            }),
            _ => e,
        });
        agree(&self.comm, local)
    }

    /// Every rank's `local` (its planes' values, in rank order) concatenated on rank 0:
    /// `Some` there, `None` elsewhere (collective).
    fn gather_values<V: Real>(&self, local: Vec<V>) -> Result<Option<Vec<V>>, Error> {
        Ok(gather_to_root(
            &self.comm,
            self.rank,
            self.dec.count(),
            local,
        ))
    }

    /// The whole lattice, assembled on rank 0 from every slab's populations (collective):
    /// `Some` on rank 0, `None` elsewhere. The assembled lattice is an ordinary two-copy
    /// lattice, so its moment fields ([`Lattice::moment_field`]) are the single-process ones;
    /// it has done the slabs' steps.
    pub fn gather(&self) -> Result<Option<Lattice<M, L, T>>, Error> {
        let Some(all) = self.gather_values(self.slab.populations()?)? else {
            return Ok(None);
        };
        let mut global = self.spec.lattice::<L, T>()?;
        global.set_steps_done(self.slab.steps_done());
        import_slab(&mut global, 0, &all)?;
        Ok(Some(global))
    }

    /// Seconds per step of `f` run `steps` times, the slowest rank's (collective: barriers
    /// before and after, the device's work awaited, and a max over the ranks).
    pub fn time_per_step(
        &mut self,
        steps: usize,
        mut f: impl FnMut(&mut Self) -> Result<(), Error>,
    ) -> Result<f64, Error> {
        self.comm.barrier();
        let t0 = Instant::now();
        let ran = (0..steps)
            .try_for_each(|_| f(self))
            .and_then(|()| self.slab.finish());
        agree(&self.comm, ran)?;
        let local = t0.elapsed().as_secs_f64() / steps.max(1) as f64;
        let mut slowest = 0.0;
        self.comm
            .all_reduce_into(&local, &mut slowest, SystemOperation::max());
        Ok(slowest)
    }
}

/// Sends `[to_left, to_right]` to the ranks `left` and `right` of `comm` and receives what they
/// send this way (`[from_left, from_right]`), running `work(k, chunks)` for `k` in
/// `0..chunks` while the four transfers travel and letting MPI progress them between the parts
/// (collective with the two neighbours).
pub(crate) fn ring_swap<T: Real>(
    comm: &SimpleCommunicator,
    (left, right): (usize, usize),
    [to_left, to_right]: [Vec<T>; 2],
    chunks: usize,
    mut work: impl FnMut(usize, usize) -> Result<(), Error>,
) -> Result<[Vec<T>; 2], Error> {
    let mut from_left = vec![T::default(); to_right.len()];
    let mut from_right = vec![T::default(); to_left.len()];
    let (left, right) = (
        comm.process_at_rank(peer(left)),
        comm.process_at_rank(peer(right)),
    );
    let done = mpi::request::scope(|scope| {
        let mut done = Ok(());
        let recv_l = left.immediate_receive_into_with_tag(scope, &mut from_left[..], RIGHTWARD);
        let recv_r = right.immediate_receive_into_with_tag(scope, &mut from_right[..], LEFTWARD);
        let send_r = right.immediate_send_with_tag(scope, &to_right[..], RIGHTWARD);
        let send_l = left.immediate_send_with_tag(scope, &to_left[..], LEFTWARD);
        let mut recvs = [Some(recv_l), Some(recv_r)];
        let mut sends = [Some(send_r), Some(send_l)];
        for k in 0..chunks {
            done = done.and_then(|()| work(k, chunks));
            recvs.iter_mut().for_each(poke);
            sends.iter_mut().for_each(poke);
        }
        recvs.into_iter().flatten().for_each(|r| {
            r.wait();
        });
        sends.into_iter().flatten().for_each(|r| {
            r.wait();
        });
        done
    });
    done?;
    Ok([from_left, from_right])
}

/// The median seconds of a halo exchange around the ring of `comm` with messages of `len` values of
/// `T` each way, over `reps` exchanges after one for warm-up, the slowest rank's (collective): the
/// `T_mpi` of Calore et al. 2019, eq. 7, measured before the slabs exist, to tune a rank's
/// host/device split.
pub fn exchange_seconds<T: Real>(
    comm: &SimpleCommunicator,
    len: usize,
    reps: usize,
) -> Result<f64, Error> {
    let ranks = usize::try_from(comm.size()).map_err(|e| DomainError::Mpi(e.to_string()))?;
    let rank = usize::try_from(comm.rank()).map_err(|e| DomainError::Mpi(e.to_string()))?;
    let around = ((rank + ranks - 1) % ranks, (rank + 1) % ranks);
    let mut times = Vec::with_capacity(reps);
    for k in 0..=reps {
        let to = [vec![T::default(); len], vec![T::default(); len]];
        comm.barrier();
        let t0 = Instant::now();
        ring_swap(comm, around, to, 0, |_, _| Ok(()))?;
        if k > 0 {
            times.push(t0.elapsed().as_secs_f64());
        }
    }
    times.sort_by(f64::total_cmp);
    let local = times.get(times.len() / 2).copied().unwrap_or(0.0);
    let mut slowest = 0.0;
    comm.all_reduce_into(&local, &mut slowest, SystemOperation::max());
    Ok(slowest)
}

/// Every rank's `local` concatenated in rank order on rank 0: `Some` there, `None` elsewhere
/// (collective; `rank` and `ranks` are `comm`'s).
pub(crate) fn gather_to_root<V: Real>(
    comm: &SimpleCommunicator,
    rank: usize,
    ranks: usize,
    local: Vec<V>,
) -> Option<Vec<V>> {
    if rank != 0 {
        comm.process_at_rank(0).send_with_tag(&local[..], GATHER);
        return None;
    }
    let mut all = local;
    for r in 1..ranks {
        let (values, _) = comm
            .process_at_rank(peer(r))
            .receive_vec_with_tag::<V>(GATHER);
        all.extend(values);
    }
    Some(all)
}

/// A rank as MPI counts it.
fn peer(rank: usize) -> i32 {
    i32::try_from(rank).expect("rank came from an MPI communicator")
}

/// Step times measured on the ranks of a communicator, seconds (the slowest rank's).
#[derive(Debug, Clone, PartialEq)]
pub struct RankTimes {
    /// Ranks that ran.
    pub ranks: usize,
    /// A full step: exchange overlapped with the bulk, then the borders.
    pub with_exchange: f64,
    /// The same step without the exchange (compute only).
    pub without_exchange: f64,
    /// The exchange alone.
    pub exchange_only: f64,
    /// Bytes of one halo message (`H` columns).
    pub halo_bytes: usize,
    /// Rank 0's backend in words ([`SlabBackend::describe`]).
    pub backend: String,
}

/// Measures a step of the lattice `spec` on the ranks of `comm`, each rank's slab built by
/// `make` (as [`DistLattice::with_slab`]), with and without the halo exchange, and the
/// exchange alone, `steps` steps each after a warm-up (collective; every rank gets the same
/// answer).
pub fn bench_ranks<M: Model, L: Layout, T: Real, P: SlabBackend<Model = M, Real = T>>(
    comm: &SimpleCommunicator,
    spec: GlobalSpec<M>,
    steps: usize,
    make: impl FnOnce(&GlobalSpec<M>, &Blocks, usize) -> Result<P, Error>,
) -> Result<RankTimes, Error> {
    let plane = spec.plane();
    let mut lat = DistLattice::<M, L, T, P>::with_slab(comm, spec, make)?;
    lat.time_per_step(steps.div_ceil(4), DistLattice::step)?;
    Ok(RankTimes {
        ranks: lat.dec.count(),
        with_exchange: lat.time_per_step(steps, DistLattice::step)?,
        without_exchange: lat.time_per_step(steps, DistLattice::step_without_exchange)?,
        exchange_only: lat.time_per_step(steps, DistLattice::exchange)?,
        halo_bytes: M::HALO * plane * M::Q * std::mem::size_of::<T>(),
        backend: lat.slab.describe(),
    })
}

impl<M: Model, L: Layout, T: Real, P: SlabBackend<Model = M, Real = T>> Solver
    for DistLattice<M, L, T, P>
{
    type Model = M;
    type Real = T;

    fn extent(&self) -> Extent {
        Extent::of_size(self.spec.size())
    }

    fn params(&self) -> &M::Params {
        &self.spec.params
    }

    fn scheme(&self) -> Scheme {
        self.slab.scheme()
    }

    fn layout_name(&self) -> &'static str {
        self.slab.layout().name()
    }

    fn schemes() -> &'static [Scheme] {
        &[Scheme::TwoCopy, Scheme::InPlace]
    }

    fn steps_done(&self) -> u64 {
        self.slab.steps_done()
    }

    fn set_steps_done(&mut self, step: u64) {
        self.slab.set_steps_done(step);
    }

    fn advance(&mut self, n: u64) -> Result<(), Error> {
        let ran = (0..n)
            .try_for_each(|_| self.step())
            .and_then(|()| self.slab.finish());
        agree(&self.comm, ran)
    }

    fn local_planes(&self) -> Range<usize> {
        self.x0..self.x0 + self.slab.width()
    }

    /// Each slab sets its own sites (in place on the host); a refusal on one rank is every
    /// rank's.
    fn set_equilibrium_at<F>(&mut self, moments: F) -> Result<(), Error>
    where
        F: Fn(usize, usize) -> Vec<f64> + Sync,
    {
        let set = self
            .slab
            .set_equilibrium_at((self.x0, self.spec.plane()), &moments);
        agree(&self.comm, set)
    }

    fn local_populations(&self) -> Result<Vec<T>, Error> {
        self.slab.populations()
    }

    fn set_local_populations(&mut self, values: &[T]) -> Result<(), Error> {
        let set = self.slab.set_populations(values);
        agree(&self.comm, set)
    }

    fn local_solid(&self, s: usize) -> bool {
        self.slab.is_solid(s)
    }

    /// Each slab its own sites' values; a refusal on one rank is every rank's.
    fn set_local_field(&mut self, name: &str, values: &[f64]) -> Result<(), Error> {
        let set = self.slab.set_field(name, values);
        agree(&self.comm, set)
    }

    fn local_fields(&self) -> Result<Option<Vec<Vec<f64>>>, Error> {
        self.slab.fields()
    }

    /// The moments of the slab, window by window ([`moments_by_window`]): the neighbours'
    /// border planes swapped around the ring once, no rank holding more than its slab.
    fn local_moments(&self) -> Result<Vec<Vec<f64>>, Error> {
        let w = self.slab.width();
        let per_col = self.spec.plane() * M::Q;
        // A host slab reads its columns where they lie; other backends read back once.
        let whole = match self.slab.placement() {
            Placement::Host => Ok(None),
            _ => self.slab.populations().map(Some),
        };
        let read = |cols: Range<usize>| match &whole {
            Ok(Some(all)) => Ok(all[cols.start * per_col..cols.end * per_col].to_vec()),
            Ok(None) => self.slab.populations_of(cols),
            Err(e) => Err(LbmError::Shape(format!("reading the slab back: {e}")).into()),
        };
        let h = M::HALO;
        // A rank that cannot read its borders or fields stops every rank before the swap.
        let (borders, fields) = agree(
            &self.comm,
            (|| Ok(([read(0..h)?, read(w - h..w)?], self.slab.fields()?)))(),
        )?;
        let (left, right) = self.dec.neighbours(self.rank, 0);
        let swapped = ring_swap(&self.comm, (left, right), borders, 0, |_, _| Ok(()));
        let moments = swapped.and_then(|around| {
            let (xs, fields) = (self.local_planes(), fields.as_deref());
            moments_by_window::<M, L, T>(&self.spec, xs, around, fields, read)
        });
        agree(&self.comm, moments)
    }

    /// The halos refreshed first where the next step pulls across the cuts (the same exchange
    /// it starts with): the pre-collision populations of a border site are its neighbours'.
    fn exchanged(&mut self, sites: &[[usize; 3]]) -> Result<Vec<T>, Error> {
        if self.slab.needs_halos() {
            self.exchange()?;
        }
        let local: Vec<[usize; 3]> = sites.iter().map(|&[x, y, z]| [x - self.x0, y, z]).collect();
        let read = self.slab.exchanged(&local);
        agree(&self.comm, read)
    }

    fn check(&self) -> Result<(), Error> {
        DistLattice::check(self)
    }

    fn placement(&self) -> Placement {
        self.slab.placement()
    }

    fn describe(&self) -> String {
        let d = &self.dec;
        let widths: Vec<usize> = (0..d.count()).map(|r| d.range(r, 0).len()).collect();
        format!(
            "{} MPI ranks in a ring (slab widths {widths:?}), each on its own backend; rank \
             0: {}",
            d.count(),
            self.slab.describe()
        )
    }

    fn rank(&self) -> usize {
        self.rank
    }

    fn ranks(&self) -> usize {
        self.dec.count()
    }

    fn min_over_ranks(&self, value: u64) -> u64 {
        let mut out = 0;
        self.comm
            .all_reduce_into(&value, &mut out, SystemOperation::min());
        out
    }

    fn any_rank(&self, flag: bool) -> bool {
        let mut out = 0u8;
        self.comm
            .all_reduce_into(&u8::from(flag), &mut out, SystemOperation::max());
        out != 0
    }

    fn root_says(&self, ok: bool) -> bool {
        let mut v = u8::from(ok);
        self.comm.process_at_rank(0).broadcast_into(&mut v);
        v != 0
    }

    fn sum_over_ranks(&self, values: Vec<f64>) -> Vec<f64> {
        let mut out = vec![0.0; values.len()];
        self.comm
            .all_reduce_into(&values[..], &mut out[..], SystemOperation::sum());
        out
    }

    fn max_over_ranks(&self, values: Vec<f64>) -> Vec<f64> {
        let mut out = vec![0.0; values.len()];
        self.comm
            .all_reduce_into(&values[..], &mut out[..], SystemOperation::max());
        out
    }

    fn neighbour_columns(&self, ends: [Vec<f64>; 2]) -> Result<[Vec<f64>; 2], Error> {
        let (left, right) = self.dec.neighbours(self.rank, 0);
        ring_swap(&self.comm, (left, right), ends, 0, |_, _| Ok(()))
    }

    fn each_rank(&self, value: u64) -> Vec<u64> {
        let mut out = vec![0; self.dec.count()];
        self.comm.all_gather_into(&value, &mut out[..]);
        out
    }

    fn gather_planes(&self, local: Vec<f64>) -> Result<Option<Vec<f64>>, Error> {
        self.gather_values(local)
    }
}
