//! Several blocks a process: the blocks of a run on threads within MPI ranks (feature `mpi`),
//! as waLBerla and OpenLB give a process several blocks — what a sparse domain with more
//! blocks than processes needs. The group's members are the blocks, numbered rank after rank:
//! rank `r`'s threads hold blocks `first(r) .. first(r) + counts[r]`.
//!
//! Ghost layers between two threads of one rank pass through their meeting (as between
//! [`Threads`]); between ranks through MPI, each thread sending and receiving its own while it
//! updates its interior (`MPI_THREAD_MULTIPLE`), tagged by the receiving thread and the
//! direction. A reduction combines the threads of each rank, then the ranks, thread 0 of each
//! rank speaking for it.

use std::ops::Range;
use std::sync::Arc;

use mpi::point_to_point::{Destination, Source};
use mpi::topology::{Communicator, SimpleCommunicator};

use super::{by_thread, peer, run_guarded, trade, Group, Halo, Ranks, Threads, Transfers, SCATTER};
use crate::blocks::Peers;
use crate::runtime_error::DomainError;
use crate::{Error, Real};

/// The first tag of the ghost layers between ranks: `SWAPS + 2 t + d` for a layer into
/// thread `t` of the receiving rank travelling up (`d = 0`) or down (`d = 1`).
const SWAPS: mpi::Tag = 16;

/// A block of a run on a thread of an MPI rank: the handle of one thread.
pub struct RankThreads {
    /// This rank's communicator (its own duplicate), shared by its threads.
    ranks: Arc<Ranks>,
    /// This thread among its rank's.
    threads: Threads,
    /// The first block of each rank, then the count of blocks.
    firsts: Arc<[usize]>,
}

impl RankThreads {
    /// The handles of this rank's `counts[rank]` threads, in order, of a group of
    /// `counts.iter().sum()` blocks over the ranks of `comm` (collective). Fails where `counts`
    /// does not give every rank at least one block, or where a rank runs several threads and
    /// the MPI library does not take calls from several threads at once.
    pub fn group(comm: &SimpleCommunicator, counts: &[usize]) -> Result<Vec<Self>, Error> {
        let size = usize::try_from(comm.size()).expect("a size is not negative");
        if counts.len() != size || counts.contains(&0) {
            return Err(DomainError::Mpi(format!(
                "{counts:?} blocks for {size} ranks: give each rank at least one"
            ))
            .into());
        }
        let ranks = Ranks::new(comm);
        let here = counts[ranks.rank()];
        if here > 1 && mpi::environment::threading_support() != mpi::Threading::Multiple {
            return Err(DomainError::Mpi(format!(
                "{here} blocks on one rank need an MPI library that takes calls from several \
                 threads at once (MPI_THREAD_MULTIPLE), and this one does not: run on {} \
                 processes, one block each",
                counts.iter().sum::<usize>()
            ))
            .into());
        }
        let firsts: Arc<[usize]> = std::iter::once(0)
            .chain(counts.iter().scan(0, |sum, c| {
                *sum += c;
                Some(*sum)
            }))
            .collect();
        let ranks = Arc::new(ranks);
        Ok(Threads::group(here)
            .into_iter()
            .map(|threads| Self {
                ranks: ranks.clone(),
                threads,
                firsts: firsts.clone(),
            })
            .collect())
    }

    /// Runs `job` on each of this rank's threads, given its handles of `N` groups of
    /// [`RankThreads::group`] (one for each lattice it holds, whose messages meet no other's),
    /// guarded as [`Threads::run`] guards its threads, and returns what each returned, in order
    /// (collective).
    ///
    /// # Panics
    /// Where a thread panicked (after every thread of this rank has ended).
    pub fn run<const N: usize, R: Send>(
        comm: &SimpleCommunicator,
        counts: &[usize],
        job: impl Fn([Self; N]) -> R + Sync,
    ) -> Result<Vec<R>, Error> {
        let mut groups: [Vec<Self>; N] = std::array::from_fn(|_| Vec::new());
        for g in &mut groups {
            *g = Self::group(comm, counts)?;
        }
        let guards = |h: &[Self; N]| h.each_ref().map(|t| t.threads.guard());
        Ok(run_guarded(by_thread(groups), guards, job))
    }

    /// The rank holding `block`, and the thread of that rank.
    fn place(&self, block: usize) -> (usize, usize) {
        let rank = self.firsts.partition_point(|&f| f <= block) - 1;
        (rank, block - self.firsts[rank])
    }

    /// The blocks of this rank.
    fn here(&self) -> usize {
        self.threads.ranks()
    }

    /// `local`, the same on every thread of this rank, combined over the ranks by `f` on
    /// thread 0, whose outcome is told to the others (collective).
    fn across<X, Y: Clone + Send + 'static>(&self, local: X, f: impl FnOnce(&Ranks, X) -> Y) -> Y {
        let mine = (self.threads.rank() == 0).then(|| f(&self.ranks, local));
        let mut all = self.threads.all(mine);
        all.swap_remove(0).expect("thread 0 combines for its rank")
    }
}

impl Group for RankThreads {
    fn rank(&self) -> usize {
        self.firsts[self.ranks.rank()] + self.threads.rank()
    }
    fn ranks(&self) -> usize {
        self.firsts[self.firsts.len() - 1]
    }
    fn max(&self, values: Vec<f64>) -> Vec<f64> {
        self.across(self.threads.max(values), |r, v| r.max(v))
    }
    fn sum(&self, values: Vec<f64>) -> Vec<f64> {
        self.across(self.threads.sum(values), |r, v| r.sum(v))
    }
    fn max_counts(&self, values: Vec<u64>) -> Vec<u64> {
        self.across(self.threads.max_counts(values), |r, v| r.max_counts(v))
    }
    fn min_counts(&self, values: Vec<u64>) -> Vec<u64> {
        self.across(self.threads.min_counts(values), |r, v| r.min_counts(v))
    }
    /// Each block's value at its place, zeros elsewhere, the largest taken: one reduction
    /// (the values are counts below 2⁶³, as [`Group::max_counts`] takes).
    fn each(&self, value: u64) -> Vec<u64> {
        let mut mine = vec![0; Group::ranks(self)];
        mine[Group::rank(self)] = value;
        self.max_counts(mine)
    }
    fn processes(&self) -> usize {
        self.ranks.ranks()
    }
    /// As `each`, each rank's thread 0 placing its value.
    fn each_process(&self, value: u64) -> Vec<u64> {
        let mut mine = vec![0; self.processes()];
        if self.threads.rank() == 0 {
            mine[self.ranks.rank()] = value;
        }
        self.max_counts(mine)
    }
    fn root_says(&self, ok: bool) -> bool {
        self.across(self.threads.root_says(ok), |r, v| r.root_says(v))
    }
    fn first_failure(&self, failure: Option<String>) -> Option<(usize, String)> {
        let first = self.firsts[self.ranks.rank()];
        let local = self.threads.first_failure(failure);
        let none = Group::ranks(self) as u64;
        self.across(local, move |r, local| {
            // The lowest failing rank holds the lowest failing block.
            let block = Group::min(r, local.as_ref().map_or(none, |(t, _)| (first + t) as u64));
            let (_, message) = r.first_failure(local.map(|(_, m)| m))?;
            Some((
                usize::try_from(block).expect("a failing block is a block"),
                message,
            ))
        })
    }
    fn barrier(&self) {
        self.across((), |r, ()| r.barrier());
    }
    fn describe(&self) -> String {
        let ranks = self.ranks.ranks();
        let s = if ranks == 1 { "" } else { "s" };
        format!("{} threads on {ranks} MPI rank{s}", Group::ranks(self))
    }
}

impl<T: Real> Transfers<T> for RankThreads {
    fn swap_during(
        &self,
        peers: Peers,
        halo: &mut Halo<T>,
        chunks: usize,
        work: &mut dyn FnMut(Range<usize>, usize) -> Result<(), Error>,
    ) -> Result<(), Error> {
        let here = self.ranks.rank();
        let remote = peers.map(|p| p.map(|p| self.place(p)).filter(|&(r, _)| r != here));
        // What comes from below is as long as what goes up, and the other way round.
        let Halo { to, from } = halo;
        for side in [0, 1] {
            let len = remote[side].map_or(0, |_| to[1 - side].len());
            from[side].resize(len, T::default());
        }
        let me = self.threads.rank();
        let tag = |thread: usize, down: bool| {
            SWAPS + mpi::Tag::try_from(2 * thread + usize::from(down)).expect("a tag fits")
        };
        let recv = [
            remote[0].map(|(r, _)| (r, tag(me, false))),
            remote[1].map(|(r, _)| (r, tag(me, true))),
        ];
        let send = [
            remote[0].map(|(r, t)| (r, tag(t, true))),
            remote[1].map(|(r, t)| (r, tag(t, false))),
        ];
        let [from_below, from_above] = &mut *from;
        let done = trade(
            self.ranks.comm(),
            (recv, [from_below, from_above]),
            (send, [&to[0], &to[1]]),
            chunks,
            work,
        );
        // The threads of this rank meet after their own messages, so that none sends the next
        // exchange's before every thread here has received this one's.
        let all = self.threads.all(Arc::new(std::mem::take(to)));
        done?;
        let first = self.firsts[here];
        for side in [0, 1] {
            match (peers[side], remote[side]) {
                (Some(_), Some(_)) => {}
                (Some(p), None) => from[side].clone_from(&all[p - first][1 - side]),
                (None, _) => from[side].clone_from(&all[me][side]),
            }
        }
        Ok(())
    }

    fn gather(&self, local: Vec<T>) -> Option<Vec<T>> {
        let rank = Transfers::<T>::gather(&self.threads, local)?;
        Transfers::<T>::gather(&*self.ranks, rank)
    }

    fn scatter(&self, piece: &mut dyn FnMut(usize) -> Vec<T>) -> Vec<T> {
        let (here, me) = (self.ranks.rank(), self.threads.rank());
        let comm = self.ranks.comm();
        let mine: Vec<Vec<T>> = match (here, me) {
            (_, 1..) => Vec::new(),
            (0, 0) => {
                let local = (0..self.here()).map(&mut *piece).collect();
                for block in self.firsts[1]..Group::ranks(self) {
                    let (rank, _) = self.place(block);
                    (comm.process_at_rank(peer(rank))).send_with_tag(&piece(block)[..], SCATTER);
                }
                local
            }
            _ => (0..self.here())
                .map(|_| comm.process_at_rank(0).receive_vec_with_tag::<T>(SCATTER).0)
                .collect(),
        };
        let all = self.threads.all(Arc::new(mine));
        all[0][me].clone()
    }
}
