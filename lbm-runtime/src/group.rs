//! The processes of a run and how they meet: the exchange of ghost layers between the
//! neighbouring blocks of a [`Blocks`](crate::blocks::Blocks) cut, and the few reductions a
//! run needs. A member of a group (a process, or a thread) holds one block; every member calls each method in the same order
//! (they are collective). One process is a [`Group`] of one ([`OneProcess`]): its ghost
//! layers travel to itself, which is the periodic wrap. Over MPI ranks, `Ranks` (feature
//! `mpi`); among the threads of one process, each holding a block on its own device (the
//! host/device split), [`Threads`]; several blocks a rank, on threads within MPI ranks,
//! `RankThreads` (feature `mpi`).
//!
//! [`Group`] holds what every run agrees on (reductions, the root's word, the first failure);
//! [`Transfers`] adds the values of a precision that travel between processes: the ghost
//! layers swapped between neighbours, the pieces gathered on the root.

use std::any::Any;
use std::fmt::Display;
use std::ops::Range;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

use crate::blocks::Peers;
use crate::{Error, Real};

#[cfg(feature = "mpi")]
mod rank_threads;
#[cfg(feature = "mpi")]
pub use rank_threads::RankThreads;

/// How a process meets the others of its run. Every process calls each method in the same
/// order (they are collective) and gets the same answer.
pub trait Group {
    /// This process's place in the group, from 0: the block it holds.
    fn rank(&self) -> usize;
    /// The processes in the group.
    fn ranks(&self) -> usize;
    /// The largest of each value over the processes.
    fn max(&self, values: Vec<f64>) -> Vec<f64>;
    /// The sum of each value over the processes.
    fn sum(&self, values: Vec<f64>) -> Vec<f64>;
    /// The largest of each count over the processes (exact, unlike [`Group::max`] past 2⁵³),
    /// for counts below 2⁶³: MPI libraries may compare 64-bit integers as signed ones.
    fn max_counts(&self, values: Vec<u64>) -> Vec<u64>;
    /// The smallest of each count over the processes, as [`Group::max_counts`].
    fn min_counts(&self, values: Vec<u64>) -> Vec<u64>;
    /// Every process's `value` (a count below 2⁶³, as [`Group::max_counts`]), in rank order.
    fn each(&self, value: u64) -> Vec<u64>;
    /// The operating-system processes the group runs in: its members, but where a process
    /// runs several (`RankThreads`, feature `mpi`).
    fn processes(&self) -> usize {
        self.ranks()
    }
    /// Each operating-system process's `value` (its first member's), in order: what a
    /// process measures of itself, such as its peak memory, told once.
    fn each_process(&self, value: u64) -> Vec<u64> {
        self.each(value)
    }
    /// The first process's `ok`, told to every process: an outcome only it knows (a file
    /// written) shared so that all stop or go on together.
    fn root_says(&self, ok: bool) -> bool;
    /// One outcome for all: `None` where no process failed, else the lowest process that
    /// failed and its message (`failure` is this process's), so none goes on to wait for one
    /// that stopped.
    fn first_failure(&self, failure: Option<String>) -> Option<(usize, String)>;
    /// Waits for every process (before a timing starts).
    fn barrier(&self);
    /// The processes in words: "2 MPI ranks", "3 threads", "one process".
    fn describe(&self) -> String;

    /// Whether this process is the group's first (it prints and writes the outputs).
    fn is_root(&self) -> bool {
        self.rank() == 0
    }
    /// The processes before and after this one in the ring of the group in rank order
    /// (wrapping around; on one process, itself twice): the neighbours of a cut along one
    /// axis, as [`Blocks::neighbours`](crate::blocks::Blocks::neighbours) gives them.
    fn ring_neighbours(&self) -> Peers {
        let (rank, ranks) = (self.rank(), self.ranks());
        [Some((rank + ranks - 1) % ranks), Some((rank + 1) % ranks)]
    }
    /// Whether `flag` is set on any process.
    fn any(&self, flag: bool) -> bool {
        self.max_counts(vec![u64::from(flag)])[0] != 0
    }
    /// The smallest `value` over the processes (below 2⁶³, as [`Group::max_counts`]).
    fn min(&self, value: u64) -> u64 {
        self.min_counts(vec![value])[0]
    }
    /// The next chunk of a run's steps and whether to stop, agreed: the shortest `chunk` and
    /// the largest `request` over the processes.
    fn agree_chunk(&self, chunk: u64, request: u64) -> (u64, u64) {
        (self.min(chunk), self.max_counts(vec![request])[0])
    }
}

/// The values of precision `T` that travel between the processes of a [`Group`].
pub trait Transfers<T: Real>: Group {
    /// Sends `halo.to[0]` to the process `peers[0]` (the neighbour below along an axis) and
    /// `halo.to[1]` to `peers[1]` (the one above), and puts what they sent this way into
    /// `halo.from`: `[from below, from above]` (the neighbour below sent its `to[1]`, the one
    /// above its `to[0]`). A process that is its own neighbour gets its own values back,
    /// crossed; a side with no process (a block a sparse box leaves out, whose nodes no fluid
    /// node reads) sends nothing and gets back what it would have sent, uncrossed. Runs
    /// `work(parts, chunks)` over the parts `0..chunks` while the values travel (the interior
    /// updated under the messages): a part at a time while messages are in flight, letting them
    /// progress between the parts, the parts left in one call once they have arrived (a part
    /// costs a sweep's start); the first error of `work` is returned once the transfers are
    /// done. The buffers of `halo` are reused where they hold enough (its `to` may come back
    /// with other buffers than it went with): kept from one step to the next, a message is not
    /// allocated afresh at every step ([`Halo`]).
    fn swap_during(
        &self,
        peers: Peers,
        halo: &mut Halo<T>,
        chunks: usize,
        work: &mut dyn FnMut(Range<usize>, usize) -> Result<(), Error>,
    ) -> Result<(), Error>;
    /// Every process's `local` concatenated in rank order: `Some` on the first process,
    /// `None` elsewhere.
    fn gather(&self, local: Vec<T>) -> Option<Vec<T>>;
    /// Each process's piece of what the first process holds: `piece(r)` for process `r`,
    /// called on the first process only, one piece at a time.
    fn scatter(&self, piece: &mut dyn FnMut(usize) -> Vec<T>) -> Vec<T>;

    /// [`Transfers::swap_during`] of `to` with nothing to do meanwhile: what the neighbours
    /// sent this way, `[from below, from above]`.
    fn swap(&self, peers: Peers, to: [Vec<T>; 2]) -> [Vec<T>; 2] {
        let mut halo = Halo {
            to,
            from: Default::default(),
        };
        self.swap_during(peers, &mut halo, 0, &mut |_, _| Ok(()))
            .unwrap_or_else(|_| unreachable!("no work that can fail runs beside this exchange"));
        halo.from
    }
}

/// The values of an exchange of ghost layers along an axis ([`Transfers::swap_during`]): to
/// the neighbours below and above, and from them. A run keeps one a cut axis from step to
/// step, so that its messages reuse their memory: a message larger than the allocator's
/// mapping threshold (32 MiB with [`crate::memory::keep_freed_pages`]) would otherwise be
/// mapped afresh, and its pages faulted in, at every step.
#[derive(Debug, Clone, PartialEq)]
pub struct Halo<T> {
    /// `[to the neighbour below, to the one above]`.
    pub to: [Vec<T>; 2],
    /// `[from the neighbour below, from the one above]`.
    pub from: [Vec<T>; 2],
}

impl<T> Default for Halo<T> {
    fn default() -> Self {
        Self {
            to: [Vec::new(), Vec::new()],
            from: [Vec::new(), Vec::new()],
        }
    }
}

/// A group that carries a lattice's values: its populations, of precision `T`, and its
/// moments and fields, of `f64` ([`Carrier::values`]).
pub trait Carrier<T: Real>: Transfers<T> {
    /// The same group, carrying values of `f64`.
    fn values(&self) -> &dyn Transfers<f64>;
}

impl<T: Real, G: Transfers<T> + Transfers<f64>> Carrier<T> for G {
    fn values(&self) -> &dyn Transfers<f64> {
        self
    }
}

/// An error that says another process failed, with that process's message.
pub trait FromOtherRank {
    /// The error of a process told that process `rank` failed with `message`.
    fn from_other_rank(rank: usize, message: String) -> Self;
}

impl FromOtherRank for Error {
    fn from_other_rank(rank: usize, message: String) -> Self {
        crate::runtime_error::DomainError::OtherRank { rank, message }.into()
    }
}

/// `local` on every process of `group` made one outcome (collective): `Ok` where every
/// process succeeded, else this process's own error where it failed, and elsewhere an error
/// naming the lowest process that failed, with its message.
pub fn agree<R, E: Display + FromOtherRank>(
    group: &dyn Group,
    local: Result<R, E>,
) -> Result<R, E> {
    let first = group.first_failure(local.as_ref().err().map(ToString::to_string));
    match (local, first) {
        (Err(e), _) => Err(e),
        (Ok(_), Some((rank, message))) => Err(E::from_other_rank(rank, message)),
        (Ok(r), None) => Ok(r),
    }
}

/// A run in one process: its one block is its own neighbour along every axis.
#[derive(Clone, Copy, Debug, Default)]
pub struct OneProcess;

impl Group for OneProcess {
    fn rank(&self) -> usize {
        0
    }
    fn ranks(&self) -> usize {
        1
    }
    fn max(&self, values: Vec<f64>) -> Vec<f64> {
        values
    }
    fn sum(&self, values: Vec<f64>) -> Vec<f64> {
        values
    }
    fn max_counts(&self, values: Vec<u64>) -> Vec<u64> {
        values
    }
    fn min_counts(&self, values: Vec<u64>) -> Vec<u64> {
        values
    }
    fn each(&self, value: u64) -> Vec<u64> {
        vec![value]
    }
    fn root_says(&self, ok: bool) -> bool {
        ok
    }
    fn first_failure(&self, failure: Option<String>) -> Option<(usize, String)> {
        failure.map(|message| (0, message))
    }
    fn barrier(&self) {}
    fn describe(&self) -> String {
        "one process".into()
    }
}

impl<T: Real> Transfers<T> for OneProcess {
    fn swap_during(
        &self,
        peers: Peers,
        halo: &mut Halo<T>,
        chunks: usize,
        work: &mut dyn FnMut(Range<usize>, usize) -> Result<(), Error>,
    ) -> Result<(), Error> {
        work_at_once(chunks, work)?;
        // Its own neighbour sends it the other side's values; no neighbour, its own. The
        // buffers trade places, nothing is copied but for a side that takes the other's.
        let Halo { to, from } = halo;
        match peers {
            [Some(_), Some(_)] => {
                std::mem::swap(&mut from[0], &mut to[1]);
                std::mem::swap(&mut from[1], &mut to[0]);
            }
            [None, None] => std::mem::swap(from, to),
            [None, Some(_)] => {
                from[0].clone_from(&to[0]);
                std::mem::swap(&mut from[1], &mut to[0]);
            }
            [Some(_), None] => {
                from[1].clone_from(&to[1]);
                std::mem::swap(&mut from[0], &mut to[1]);
            }
        }
        Ok(())
    }
    fn gather(&self, local: Vec<T>) -> Option<Vec<T>> {
        Some(local)
    }
    fn scatter(&self, piece: &mut dyn FnMut(usize) -> Vec<T>) -> Vec<T> {
        piece(0)
    }
}

/// `work` over the parts `0..chunks` in one call (none where `chunks` is 0): a group whose
/// values travel without messages has nothing to progress between the parts.
fn work_at_once(
    chunks: usize,
    work: &mut dyn FnMut(Range<usize>, usize) -> Result<(), Error>,
) -> Result<(), Error> {
    match chunks {
        0 => Ok(()),
        n => work(0..n, n),
    }
}

/// The ranks of an MPI communicator, in rank order (feature `mpi`).
#[cfg(feature = "mpi")]
pub struct Ranks {
    comm: mpi::topology::SimpleCommunicator,
    rank: usize,
    ranks: usize,
}

#[cfg(feature = "mpi")]
impl Ranks {
    /// The ranks of `comm` (a duplicate of it, so the run's messages meet no others).
    pub fn new(comm: &mpi::topology::SimpleCommunicator) -> Self {
        use mpi::topology::Communicator;
        let comm = comm.duplicate();
        let rank = usize::try_from(comm.rank()).expect("a rank is not negative");
        let ranks = usize::try_from(comm.size()).expect("a size is not negative");
        Self { comm, rank, ranks }
    }

    /// The communicator of the ranks (their own duplicate).
    pub fn comm(&self) -> &mpi::topology::SimpleCommunicator {
        &self.comm
    }

    /// The element-wise reduction `op` of `values` over the ranks.
    fn reduce<V: mpi::traits::Equivalence + Default + Clone>(
        &self,
        values: &[V],
        op: mpi::collective::SystemOperation,
    ) -> Vec<V> {
        use mpi::collective::CommunicatorCollectives;
        let mut out = vec![V::default(); values.len()];
        self.comm.all_reduce_into(values, &mut out[..], op);
        out
    }
}

/// The MPI rank of `rank` (it came from a communicator, so it fits).
#[cfg(feature = "mpi")]
fn peer(rank: usize) -> i32 {
    i32::try_from(rank).expect("rank came from an MPI communicator")
}

/// Tags of the messages: a halo travelling up (into the upper neighbour's lower halo), down,
/// a piece gathered on the root, a piece sent from it.
#[cfg(feature = "mpi")]
const UPWARD: mpi::Tag = 1;
#[cfg(feature = "mpi")]
const DOWNWARD: mpi::Tag = 2;
#[cfg(feature = "mpi")]
const GATHER: mpi::Tag = 3;
#[cfg(feature = "mpi")]
const SCATTER: mpi::Tag = 4;

#[cfg(feature = "mpi")]
impl Group for Ranks {
    fn rank(&self) -> usize {
        self.rank
    }
    fn ranks(&self) -> usize {
        self.ranks
    }
    fn max(&self, values: Vec<f64>) -> Vec<f64> {
        self.reduce(&values, mpi::collective::SystemOperation::max())
    }
    fn sum(&self, values: Vec<f64>) -> Vec<f64> {
        self.reduce(&values, mpi::collective::SystemOperation::sum())
    }
    fn max_counts(&self, values: Vec<u64>) -> Vec<u64> {
        self.reduce(&values, mpi::collective::SystemOperation::max())
    }
    fn min_counts(&self, values: Vec<u64>) -> Vec<u64> {
        self.reduce(&values, mpi::collective::SystemOperation::min())
    }
    fn each(&self, value: u64) -> Vec<u64> {
        use mpi::collective::CommunicatorCollectives;
        let mut out = vec![0; self.ranks];
        self.comm.all_gather_into(&value, &mut out[..]);
        out
    }
    fn root_says(&self, ok: bool) -> bool {
        use mpi::topology::Communicator;
        use mpi::traits::Root;
        let mut v = u8::from(ok);
        self.comm.process_at_rank(0).broadcast_into(&mut v);
        v != 0
    }
    fn first_failure(&self, failure: Option<String>) -> Option<(usize, String)> {
        use mpi::topology::Communicator;
        use mpi::traits::Root;
        // No process failed where the smallest is the count of processes.
        let none = self.ranks as u64;
        let first = Group::min(self, failure.as_ref().map_or(none, |_| self.rank as u64));
        if first == none {
            return None;
        }
        let first = usize::try_from(first).expect("a failing rank is a rank");
        let mut text = failure.unwrap_or_default().into_bytes();
        let root = self.comm.process_at_rank(peer(first));
        let mut len = text.len() as u64;
        root.broadcast_into(&mut len);
        text.resize(usize::try_from(len).expect("a message fits in memory"), 0);
        root.broadcast_into(&mut text[..]);
        Some((first, String::from_utf8_lossy(&text).into_owned()))
    }
    fn barrier(&self) {
        use mpi::collective::CommunicatorCollectives;
        self.comm.barrier();
    }
    fn describe(&self) -> String {
        format!("{} MPI ranks", self.ranks)
    }
}

/// Lets MPI progress a transfer still in flight (`MPI_Test`), keeping it while not done.
#[cfg(feature = "mpi")]
fn poke<'a, D: ?Sized, S: mpi::request::Scope<'a>>(
    slot: &mut Option<mpi::request::Request<'a, D, S>>,
) {
    if let Some(r) = slot.take() {
        *slot = r.test().err();
    }
}

/// A side's peer in a trade: its rank and the tag of the message.
#[cfg(feature = "mpi")]
type Leg = Option<(usize, mpi::Tag)>;

/// Receives `from[s]` from and sends `to[s]` to the rank and with the tag of each side `s`
/// that has one, running `work` over the parts `0..chunks` while they travel; returns
/// `work`'s first error once every message is done.
///
/// MPICH (as most MPI libraries) progresses a large (rendezvous) message only inside MPI
/// calls, so the work runs a part at a time with an `MPI_Test` of the transfers between
/// them, and the parts left in one call once every transfer is done (each call of `work`
/// starts a sweep afresh, which costs); small halos (eager protocol) travel entirely under
/// the first part.
#[cfg(feature = "mpi")]
fn trade<T: Real>(
    comm: &mpi::topology::SimpleCommunicator,
    (recv, from): ([Leg; 2], [&mut Vec<T>; 2]),
    (send, to): ([Leg; 2], [&Vec<T>; 2]),
    chunks: usize,
    work: &mut dyn FnMut(Range<usize>, usize) -> Result<(), Error>,
) -> Result<(), Error> {
    use mpi::point_to_point::{Destination, Source};
    use mpi::topology::Communicator;
    let at = |rank: usize| comm.process_at_rank(peer(rank));
    mpi::request::scope(|scope| {
        let mut done = Ok(());
        let [below, above] = from;
        let mut recvs = [(recv[0], below), (recv[1], above)].map(|(leg, buffer)| {
            leg.map(|(r, tag)| at(r).immediate_receive_into_with_tag(scope, &mut buffer[..], tag))
        });
        let mut sends = [0, 1]
            .map(|s| send[s].map(|(r, tag)| at(r).immediate_send_with_tag(scope, &to[s][..], tag)));
        let mut k = 0;
        while k < chunks {
            recvs.iter_mut().for_each(poke);
            sends.iter_mut().for_each(poke);
            let in_flight = recvs.iter().chain(&sends).any(Option::is_some);
            let next = if in_flight { k + 1 } else { chunks };
            done = done.and_then(|()| work(k..next, chunks));
            k = next;
        }
        recvs.into_iter().flatten().for_each(|r| {
            r.wait();
        });
        sends.into_iter().flatten().for_each(|r| {
            r.wait();
        });
        done
    })
}

/// The ranks trade their halos under the work (`trade`).
#[cfg(feature = "mpi")]
impl<T: Real> Transfers<T> for Ranks {
    fn swap_during(
        &self,
        [below, above]: Peers,
        halo: &mut Halo<T>,
        chunks: usize,
        work: &mut dyn FnMut(Range<usize>, usize) -> Result<(), Error>,
    ) -> Result<(), Error> {
        // What comes from below is as long as what goes up, and the other way round; a side
        // with no process sends nothing and gets back what it would have sent.
        let Halo { to, from } = halo;
        for (side, peer) in [below, above].into_iter().enumerate() {
            match peer {
                Some(_) => from[side].resize(to[1 - side].len(), T::default()),
                None => std::mem::swap(&mut from[side], &mut to[side]),
            }
        }
        let recv = [below.map(|r| (r, UPWARD)), above.map(|r| (r, DOWNWARD))];
        let send = [below.map(|r| (r, DOWNWARD)), above.map(|r| (r, UPWARD))];
        let [from_below, from_above] = from;
        trade(
            &self.comm,
            (recv, [from_below, from_above]),
            (send, [&to[0], &to[1]]),
            chunks,
            work,
        )
    }

    fn gather(&self, local: Vec<T>) -> Option<Vec<T>> {
        use mpi::point_to_point::{Destination, Source};
        use mpi::topology::Communicator;
        if self.rank != 0 {
            self.comm
                .process_at_rank(0)
                .send_with_tag(&local[..], GATHER);
            return None;
        }
        let mut all = local;
        for r in 1..self.ranks {
            let (values, _) = self
                .comm
                .process_at_rank(peer(r))
                .receive_vec_with_tag::<T>(GATHER);
            all.extend(values);
        }
        Some(all)
    }

    fn scatter(&self, piece: &mut dyn FnMut(usize) -> Vec<T>) -> Vec<T> {
        use mpi::point_to_point::{Destination, Source};
        use mpi::topology::Communicator;
        if self.rank != 0 {
            return self
                .comm
                .process_at_rank(0)
                .receive_vec_with_tag::<T>(SCATTER)
                .0;
        }
        for r in 1..self.ranks {
            self.comm
                .process_at_rank(peer(r))
                .send_with_tag(&piece(r)[..], SCATTER);
        }
        piece(0)
    }
}

/// The threads of one process, each running a block (the parts of a finite-difference
/// host/device split: [`crate::backend::build_fd`]). Each collective
/// call meets the others at a barrier; a thread that panics breaks it ([`Threads::guard`]),
/// and the others then panic too instead of waiting for it for ever.
pub struct Threads {
    rank: usize,
    ranks: usize,
    meeting: Arc<Meeting>,
}

/// Where the threads of a group meet: each call's values, and the barrier.
struct Meeting {
    state: Mutex<Rendezvous>,
    turn: Condvar,
}

struct Rendezvous {
    slots: Vec<Option<Box<dyn Any + Send>>>,
    /// Threads at the barrier now.
    arrived: usize,
    /// Barriers passed.
    passed: u64,
    /// A thread panicked.
    broken: bool,
}

impl Meeting {
    fn lock(&self) -> MutexGuard<'_, Rendezvous> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Waits for all `parts` threads.
    ///
    /// # Panics
    /// If another thread of the group panicked.
    fn wait(&self, parts: usize) {
        let mut s = self.lock();
        let passed = s.passed;
        s.arrived += 1;
        if s.arrived == parts {
            s.arrived = 0;
            s.passed += 1;
            self.turn.notify_all();
        }
        while s.passed == passed && !s.broken {
            s = self.turn.wait(s).unwrap_or_else(|e| e.into_inner());
        }
        assert!(!s.broken, "another thread of the group stopped");
    }
}

/// Breaks the group's barrier if its thread panics ([`Threads::guard`]).
pub struct GroupGuard(Arc<Meeting>);

impl Drop for GroupGuard {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.lock().broken = true;
            self.0.turn.notify_all();
        }
    }
}

impl Threads {
    /// The group of `parts` threads: one handle per thread, in rank order.
    pub fn group(parts: usize) -> Vec<Self> {
        let meeting = Arc::new(Meeting {
            state: Mutex::new(Rendezvous {
                slots: (0..parts).map(|_| None).collect(),
                arrived: 0,
                passed: 0,
                broken: false,
            }),
            turn: Condvar::new(),
        });
        (0..parts)
            .map(|rank| Self {
                rank,
                ranks: parts,
                meeting: meeting.clone(),
            })
            .collect()
    }

    /// Runs `job` on each of `parts` threads of a new group (each thread given its handle and
    /// guarded: a panic in one stops the others at their next meeting) and returns what each
    /// returned, in rank order: a lattice cut into slabs or blocks run in one process, each
    /// block on its thread, as MPI ranks run it.
    ///
    /// # Panics
    /// Where a thread panicked (after every thread has ended).
    pub fn run<R: Send>(parts: usize, job: impl Fn(Self) -> R + Sync) -> Vec<R> {
        run_guarded(Self::group(parts), Self::guard, job)
    }

    /// [`Threads::run`], each thread given its handles of `N` groups of `parts` threads (one
    /// for each lattice or grid it holds, whose messages meet no other's).
    ///
    /// # Panics
    /// Where a thread panicked (after every thread has ended).
    pub fn run_groups<const N: usize, R: Send>(
        parts: usize,
        job: impl Fn([Self; N]) -> R + Sync,
    ) -> Vec<R> {
        let each = by_thread(std::array::from_fn(|_| Self::group(parts)));
        run_guarded(each, |h| h.each_ref().map(Self::guard), job)
    }

    /// A guard for the thread that uses this handle: kept while it runs, it breaks the group
    /// if the thread panics.
    pub fn guard(&self) -> GroupGuard {
        GroupGuard(self.meeting.clone())
    }

    /// Every thread's `mine`, in rank order (collective).
    fn all<X: Clone + Send + 'static>(&self, mine: X) -> Vec<X> {
        let parts = self.ranks;
        self.meeting.lock().slots[self.rank] = Some(Box::new(mine));
        self.meeting.wait(parts);
        let all = self
            .meeting
            .lock()
            .slots
            .iter()
            .map(|slot| {
                slot.as_ref()
                    .and_then(|b| b.downcast_ref::<X>())
                    .expect("every thread of the group made the same call")
                    .clone()
            })
            .collect();
        // Nobody writes the next call's value before everyone has read this one's.
        self.meeting.wait(parts);
        all
    }
}

/// The handles of `N` groups, thread by thread: thread `t`'s handle of each group.
fn by_thread<G, const N: usize>(groups: [Vec<G>; N]) -> Vec<[G; N]> {
    let threads = groups.first().map_or(0, Vec::len);
    let mut groups = groups.map(Vec::into_iter);
    (0..threads)
        .map(|_| std::array::from_fn(|g| groups[g].next().expect("a handle for every thread")))
        .collect()
}

/// Runs `job` on a thread of its own for each handle of `group`, each keeping what `guard`
/// gives (its [`GroupGuard`]s) while it runs, and returns what each returned, in order.
///
/// # Panics
/// Where a thread panicked (after every thread has ended).
fn run_guarded<G: Send, K, R: Send>(
    group: Vec<G>,
    guard: impl Fn(&G) -> K + Sync,
    job: impl Fn(G) -> R + Sync,
) -> Vec<R> {
    std::thread::scope(|s| {
        let threads: Vec<_> = group
            .into_iter()
            .map(|t| {
                let (job, guard) = (&job, &guard);
                s.spawn(move || {
                    let _guard = guard(&t);
                    job(t)
                })
            })
            .collect();
        threads
            .into_iter()
            .map(|t| t.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect()
    })
}

impl Threads {
    /// Each value of every thread's `values`, folded over the threads in rank order by `f`.
    fn fold<V: Copy + Send + 'static>(&self, values: Vec<V>, f: impl Fn(V, V) -> V) -> Vec<V> {
        let all = self.all(values);
        let mut out = all[0].clone();
        for v in &all[1..] {
            for (o, x) in out.iter_mut().zip(v) {
                *o = f(*o, *x);
            }
        }
        out
    }
}

impl Group for Threads {
    fn rank(&self) -> usize {
        self.rank
    }
    fn ranks(&self) -> usize {
        self.ranks
    }
    fn max(&self, values: Vec<f64>) -> Vec<f64> {
        self.fold(values, f64::max)
    }
    fn sum(&self, values: Vec<f64>) -> Vec<f64> {
        self.fold(values, |a, b| a + b)
    }
    fn max_counts(&self, values: Vec<u64>) -> Vec<u64> {
        self.fold(values, u64::max)
    }
    fn min_counts(&self, values: Vec<u64>) -> Vec<u64> {
        self.fold(values, u64::min)
    }
    fn each(&self, value: u64) -> Vec<u64> {
        self.all(value)
    }
    fn root_says(&self, ok: bool) -> bool {
        self.all(ok)[0]
    }
    fn first_failure(&self, failure: Option<String>) -> Option<(usize, String)> {
        let all = self.all(failure);
        all.into_iter()
            .enumerate()
            .find_map(|(rank, f)| f.map(|message| (rank, message)))
    }
    fn barrier(&self) {
        self.meeting.wait(self.ranks);
    }
    fn describe(&self) -> String {
        format!("{} threads", self.ranks)
    }
}

impl<T: Real> Transfers<T> for Threads {
    fn swap_during(
        &self,
        peers: Peers,
        halo: &mut Halo<T>,
        chunks: usize,
        work: &mut dyn FnMut(Range<usize>, usize) -> Result<(), Error>,
    ) -> Result<(), Error> {
        let done = work_at_once(chunks, work);
        let all = self.all(std::mem::take(&mut halo.to));
        done?;
        for side in [0, 1] {
            halo.from[side].clone_from(match peers[side] {
                Some(p) => &all[p][1 - side],
                None => &all[self.rank][side],
            });
        }
        Ok(())
    }
    fn gather(&self, local: Vec<T>) -> Option<Vec<T>> {
        let all = self.all(local);
        (self.rank == 0).then(|| all.concat())
    }
    fn scatter(&self, piece: &mut dyn FnMut(usize) -> Vec<T>) -> Vec<T> {
        let pieces: Vec<Vec<T>> = match self.rank {
            0 => (0..self.ranks).map(piece).collect(),
            _ => Vec::new(),
        };
        let mut all = self.all(Arc::new(pieces));
        let root = all.swap_remove(0);
        root[self.rank].clone()
    }
}

#[cfg(test)]
#[path = "group_tests.rs"]
mod tests;
