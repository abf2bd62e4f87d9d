//! The lattice distributed over MPI ranks in a periodic ring (seed 003 §4, seed 000 §5;
//! feature `mpi`, rsmpi over the system MPI).
//!
//! Each rank owns one [`Slab`] of the [`Decomposition`]; a step posts the non-blocking halo
//! exchange with both neighbours, updates the bulk, waits, and updates the borders (seed 003
//! Fig. 5; see [`crate::domain`]). The halo blocks are sent straight from the population
//! array, described by MPI indexed datatypes built from the slab's [`Runs`] (one block for
//! AoS and CAoSoA, one per population for SoA and CSoA): nothing is packed. With one rank the
//! ring closes on itself and the same code path runs (the rank sends to itself).
//!
//! MPICH (as most MPI libraries) progresses a large (rendezvous) message only inside MPI calls,
//! so the bulk is updated in `BULK_CHUNKS` (8) parts with an `MPI_Test` of the transfers between
//! them; small halos (eager protocol) travel entirely under the first part.
//!
//! Every rank must call the collective methods ([`DistLattice::new`],
//! [`DistLattice::step`], [`DistLattice::gather`], [`DistLattice::mass`]) in the same order.
//! Drop a `DistLattice` before the [`mpi::environment::Universe`] (it frees its communicator
//! and datatypes).

use std::time::Instant;

pub use mpi;
use mpi::collective::SystemOperation;
use mpi::datatype::{DynBuffer, DynBufferMut, Equivalence, UserDatatype};
use mpi::point_to_point::{Destination, Source};
use mpi::request::{Request, Scope};
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi::traits::{CommunicatorCollectives, Root};
use mpi::Tag;

use crate::domain::{
    bulk_columns, export_columns, import_slab, split_columns, Decomposition, DomainError,
    GlobalSpec, Runs, Slab, LEFT, RIGHT,
};
use crate::{Lattice, Layout, LbmError, Model, Real, Scheme};

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

/// A halo block as an MPI datatype: the first index of the block and the indexed type of its
/// runs, displacements relative to that index.
struct Block {
    start: usize,
    ty: UserDatatype,
}

impl Block {
    fn new<T: Equivalence>(runs: &Runs) -> Result<Self, DomainError> {
        let start = runs.0.first().map_or(0, |r| r.start);
        let count = |v: usize| i32::try_from(v).map_err(|_| DomainError::TooLarge(v));
        let lens = runs
            .0
            .iter()
            .map(|r| count(r.len))
            .collect::<Result<Vec<_>, _>>()?;
        count(runs.0.last().map_or(0, |r| r.start + r.len - start))?;
        let disp = runs
            .0
            .iter()
            .map(|r| count(r.start - start))
            .collect::<Result<Vec<_>, _>>()?;
        let ty = UserDatatype::indexed(&lens, &disp, &T::equivalent_datatype());
        Ok(Self { start, ty })
    }

    /// The block of the array at `base`, to send.
    ///
    /// # Safety
    /// `base` must point to an array holding every index of the block's runs, alive and not
    /// written while the returned view is in use.
    unsafe fn read<T>(&self, base: *mut T) -> DynBuffer<'_> {
        DynBuffer::from_raw(base.add(self.start) as *const T, 1, self.ty.as_ref())
    }

    /// The block of the array at `base`, to receive into.
    ///
    /// # Safety
    /// As for [`Block::read`], and no element of the block may be touched by anything else
    /// while the returned view is in use.
    unsafe fn write<T>(&self, base: *mut T) -> DynBufferMut<'_> {
        DynBufferMut::from_raw(base.add(self.start), 1, self.ty.as_ref())
    }
}

/// The four halo blocks of a slab: `send[s]`, `recv[s]` for the sides `s` ∈ {LEFT, RIGHT}.
struct HaloTypes {
    send: [Block; 2],
    recv: [Block; 2],
}

/// A lattice distributed over the ranks of a communicator: this rank's slab and the ring.
pub struct DistLattice<M: Model, L: Layout, T: Real> {
    comm: SimpleCommunicator,
    dec: Decomposition,
    rank: usize,
    spec: GlobalSpec<M>,
    slab: Slab<M, L, T>,
    types: HaloTypes,
}

impl<M: Model, L: Layout, T: Real> DistLattice<M, L, T> {
    /// Rank `comm.rank()`'s slab of the global lattice `spec`, at rest (collective).
    ///
    /// Every check (rank count against `LX` and the halo, layout against `LY`, parameters,
    /// boundaries, scheme) depends only on arguments every rank shares, so a bad input fails
    /// on every rank with the same message and no rank waits for another.
    pub fn new(
        comm: &SimpleCommunicator,
        spec: GlobalSpec<M>,
        scheme: Scheme,
    ) -> Result<Self, DomainError> {
        let ranks = usize::try_from(comm.size()).map_err(|e| DomainError::Mpi(e.to_string()))?;
        let rank = usize::try_from(comm.rank()).map_err(|e| DomainError::Mpi(e.to_string()))?;
        let dec = Decomposition::new::<M>(spec.lx, ranks)?;
        let slab = Slab::new(&spec, &dec, rank, scheme)?;
        let plan = slab.plan();
        let types = HaloTypes {
            send: [
                Block::new::<T>(&plan.send[LEFT])?,
                Block::new::<T>(&plan.send[RIGHT])?,
            ],
            recv: [
                Block::new::<T>(&plan.recv[LEFT])?,
                Block::new::<T>(&plan.recv[RIGHT])?,
            ],
        };
        Ok(Self {
            comm: comm.duplicate(),
            dec,
            rank,
            spec,
            slab,
            types,
        })
    }

    /// The global lattice `global`, held by rank 0 (`None` elsewhere), cut over the ranks of
    /// `comm` (collective): a run resumed on another number of ranks, from a checkpoint read
    /// on rank 0. Rank 0 first tells every rank whether `global` fits `spec`, so a missing or
    /// mismatched lattice is an error on every rank, not a hang. The slabs continue from the
    /// step count of `global`.
    pub fn scatter(
        comm: &SimpleCommunicator,
        spec: GlobalSpec<M>,
        global: Option<&Lattice<M, L, T>>,
    ) -> Result<Self, DomainError> {
        let mut lat = Self::new(comm, spec, Scheme::TwoCopy)?;
        let fits = global.is_some_and(|g| {
            let d = g.dims();
            (d.lx, d.ly) == (lat.spec.lx, lat.spec.ly)
        });
        let mut ok = u8::from(lat.rank != 0 || fits);
        lat.comm.process_at_rank(0).broadcast_into(&mut ok);
        if ok == 0 {
            return Err(DomainError::Mpi(format!(
                "scatter: rank 0 needs the global {}×{} lattice to cut into slabs",
                lat.spec.lx, lat.spec.ly
            )));
        }
        let mut step = global.map_or(0, Lattice::steps_done);
        lat.comm.process_at_rank(0).broadcast_into(&mut step);
        lat.slab.set_steps_done(step);
        match global.filter(|_| lat.rank == 0) {
            Some(g) => lat.send_slabs(g)?,
            None => {
                let (values, _) = lat
                    .comm
                    .process_at_rank(0)
                    .receive_vec_with_tag::<T>(SCATTER);
                lat.slab.import(&values)?;
            }
        }
        Ok(lat)
    }

    /// Rank 0's part of [`DistLattice::scatter`]: every other rank's columns, then its own.
    fn send_slabs(&mut self, global: &Lattice<M, L, T>) -> Result<(), DomainError> {
        for r in 1..self.dec.ranks() {
            let values = export_columns(global, self.dec.slab(r)?)?;
            self.comm
                .process_at_rank(self.peer(r))
                .send_with_tag(&values[..], SCATTER);
        }
        let own = export_columns(global, self.dec.slab(0)?)?;
        Ok(self.slab.import(&own)?)
    }

    /// The decomposition.
    pub fn decomposition(&self) -> &Decomposition {
        &self.dec
    }

    /// This rank.
    pub fn rank(&self) -> usize {
        self.rank
    }

    /// This rank's slab.
    pub fn slab(&self) -> &Slab<M, L, T> {
        &self.slab
    }

    /// Sets every site to the equilibrium of `moments(x, y)` (global coordinates; local, no
    /// communication).
    pub fn set_equilibrium<F>(&mut self, moments: F) -> Result<(), LbmError>
    where
        F: Fn(usize, usize) -> Vec<f64> + Sync,
    {
        self.slab.set_equilibrium(moments)
    }

    /// One time step (collective with the two neighbours): post the halo exchange, update the
    /// bulk, wait, update the borders (seed 003 Fig. 5).
    pub fn step(&mut self) {
        self.exchange_around(BULK_CHUNKS);
        self.slab.update_borders_and_finish();
    }

    /// One step without the halo exchange (the halos keep stale values: benchmarks only, the
    /// compute part of the performance model).
    pub fn step_without_exchange(&mut self) {
        self.slab.update_bulk();
        self.slab.update_borders_and_finish();
    }

    /// The halo exchange alone, nothing computed under it (benchmarks: the `T_MPI` of the
    /// performance model).
    pub fn exchange(&mut self) {
        self.exchange_around(0);
    }

    /// Posts the four halo transfers, updates the bulk in `chunks` parts while they travel
    /// (none: `0`), letting MPI progress them between the parts, and waits for them.
    fn exchange_around(&mut self, chunks: usize) {
        let base = self.slab.state_ptr();
        let (t, comm) = (&self.types, &self.comm);
        // SAFETY: every block lies inside the current population array (its runs come from
        // the slab's own index function) and the array outlives the transfers, which all
        // complete before this function returns. During the transfers the bulk update
        // reads only the site columns [0, lx) of this array and writes only the other copy;
        // MPI writes only the halo columns (`recv`, disjoint from [0, lx)) and reads the
        // border columns (`send`), so no element is written by one side and touched by the
        // other, and no Rust reference to the array exists meanwhile (the kernels go through
        // raw pointers).
        let (send, mut recv) = unsafe {
            (
                [t.send[LEFT].read(base), t.send[RIGHT].read(base)],
                [t.recv[LEFT].write(base), t.recv[RIGHT].write(base)],
            )
        };
        let (left, right) = (
            self.peer(self.dec.left(self.rank)),
            self.peer(self.dec.right(self.rank)),
        );
        let slab = &mut self.slab;
        let d = slab.lattice().dims();
        let bulk = bulk_columns(d.lx, d.halo);
        mpi::request::scope(|scope| {
            let [recv_l, recv_r] = &mut recv;
            let from_left = comm
                .process_at_rank(left)
                .immediate_receive_into_with_tag(scope, recv_l, RIGHTWARD);
            let from_right = comm
                .process_at_rank(right)
                .immediate_receive_into_with_tag(scope, recv_r, LEFTWARD);
            let to_right =
                comm.process_at_rank(right)
                    .immediate_send_with_tag(scope, &send[RIGHT], RIGHTWARD);
            let to_left =
                comm.process_at_rank(left)
                    .immediate_send_with_tag(scope, &send[LEFT], LEFTWARD);
            let mut recvs = [Some(from_left), Some(from_right)];
            let mut sends = [Some(to_right), Some(to_left)];
            for cols in split_columns(bulk, chunks) {
                slab.update_columns(cols);
                recvs.iter_mut().for_each(poke);
                sends.iter_mut().for_each(poke);
            }
            recvs.into_iter().flatten().for_each(|r| {
                r.wait();
            });
            sends.into_iter().flatten().for_each(|r| {
                r.wait();
            });
        });
    }

    fn peer(&self, rank: usize) -> i32 {
        i32::try_from(rank).expect("rank came from an MPI communicator")
    }

    /// Checks every rank's slab for divergence (collective): every rank gets the same answer,
    /// the error of the lowest rank whose slab diverged, with the site in global coordinates.
    pub fn check(&self) -> Result<(), LbmError> {
        let local = self.slab.lattice().check();
        let mine = if local.is_err() {
            self.rank as u64
        } else {
            u64::MAX
        };
        let mut first = u64::MAX;
        self.comm
            .all_reduce_into(&mine, &mut first, SystemOperation::min());
        if first == u64::MAX {
            return Ok(());
        }
        // The diverged rank tells the others what it found.
        let x0 = self.slab.x0();
        let mut report = match local {
            Err(LbmError::Diverged { step, x, y, reason }) => {
                format!("{step}\n{}\n{y}\n{reason}", x + x0).into_bytes()
            }
            Err(e) => format!("0\n0\n0\n{e}").into_bytes(),
            Ok(()) => Vec::new(),
        };
        let root = self.comm.process_at_rank(self.peer(first as usize));
        let mut len = report.len() as u64;
        root.broadcast_into(&mut len);
        report.resize(len as usize, 0);
        root.broadcast_into(&mut report[..]);
        let text = String::from_utf8_lossy(&report);
        let mut parts = text.splitn(4, '\n');
        let mut num = || parts.next().and_then(|v| v.parse().ok()).unwrap_or(0);
        let (step, x, y) = (num(), num() as usize, num() as usize);
        Err(LbmError::Diverged {
            step,
            x,
            y,
            reason: format!("{} (on rank {first})", parts.next().unwrap_or("")),
        })
    }

    /// Every rank's `value` combined (collective): the minimum over the ranks.
    pub fn min_over_ranks(&self, value: u64) -> u64 {
        let mut out = 0;
        self.comm
            .all_reduce_into(&value, &mut out, SystemOperation::min());
        out
    }

    /// Whether `flag` is set on any rank (collective).
    pub fn any_rank(&self, flag: bool) -> bool {
        let mut out = 0u8;
        self.comm
            .all_reduce_into(&u8::from(flag), &mut out, SystemOperation::max());
        out != 0
    }

    /// Rank 0's `ok` told to every rank (collective): an outcome only rank 0 knows, such as
    /// writing a file, shared so that all ranks stop or go on together.
    pub fn root_says(&self, ok: bool) -> bool {
        let mut v = u8::from(ok);
        self.comm.process_at_rank(0).broadcast_into(&mut v);
        v != 0
    }

    /// The number of ranks.
    pub fn ranks(&self) -> usize {
        self.dec.ranks()
    }

    /// Total mass of the global lattice (collective: a sum over the ranks).
    pub fn mass(&self) -> f64 {
        let local = self.slab.lattice().mass();
        let mut total = 0.0;
        self.comm
            .all_reduce_into(&local, &mut total, SystemOperation::sum());
        total
    }

    /// The whole lattice, assembled on rank 0 from every slab's populations (collective):
    /// `Some` on rank 0, `None` elsewhere. The assembled lattice is an ordinary two-copy
    /// lattice, so its moment fields ([`Lattice::moment_field`]) are the single-process ones;
    /// it has done the slabs' steps.
    pub fn gather(&self) -> Result<Option<Lattice<M, L, T>>, LbmError> {
        let mine = self.slab.export();
        if self.rank != 0 {
            self.comm
                .process_at_rank(0)
                .send_with_tag(&mine[..], GATHER);
            return Ok(None);
        }
        let mut global = self.spec.lattice::<L, T>()?;
        global.set_steps_done(self.slab.lattice().steps_done());
        import_slab(&mut global, self.slab.x0(), &mine)?;
        for r in 1..self.dec.ranks() {
            let (values, _) = self
                .comm
                .process_at_rank(self.peer(r))
                .receive_vec_with_tag::<T>(GATHER);
            let x0 = self
                .dec
                .slab(r)
                .map_err(|e| LbmError::Shape(e.to_string()))?
                .start;
            import_slab(&mut global, x0, &values)?;
        }
        Ok(Some(global))
    }

    /// Seconds per step of `f` run `steps` times, the slowest rank's (collective: barriers
    /// before and after, and a max over the ranks).
    pub fn time_per_step(&mut self, steps: usize, mut f: impl FnMut(&mut Self)) -> f64 {
        self.comm.barrier();
        let t0 = Instant::now();
        for _ in 0..steps {
            f(self);
        }
        self.comm.barrier();
        let local = t0.elapsed().as_secs_f64() / steps.max(1) as f64;
        let mut slowest = 0.0;
        self.comm
            .all_reduce_into(&local, &mut slowest, SystemOperation::max());
        slowest
    }
}

/// Step times measured on the ranks of a communicator, seconds (the slowest rank's).
#[derive(Debug, Clone, Copy, PartialEq)]
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
}

/// Measures a step of the lattice `spec` on the ranks of `comm` with and without the halo
/// exchange, and the exchange alone, `steps` steps each after a warm-up (collective; every
/// rank gets the same answer).
pub fn bench_ranks<M: Model, L: Layout, T: Real>(
    comm: &SimpleCommunicator,
    spec: GlobalSpec<M>,
    steps: usize,
) -> Result<RankTimes, DomainError> {
    let ly = spec.ly;
    let mut lat = DistLattice::<M, L, T>::new(comm, spec, Scheme::TwoCopy)?;
    lat.time_per_step(steps.div_ceil(4), DistLattice::step);
    Ok(RankTimes {
        ranks: lat.dec.ranks(),
        with_exchange: lat.time_per_step(steps, DistLattice::step),
        without_exchange: lat.time_per_step(steps, DistLattice::step_without_exchange),
        exchange_only: lat.time_per_step(steps, DistLattice::exchange),
        halo_bytes: M::HALO * ly * M::Q * T::BYTES,
    })
}
