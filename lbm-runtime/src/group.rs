//! The processes of a run and how they meet: the exchange of ghost layers between the
//! neighbouring blocks of a [`Blocks`](crate::blocks::Blocks) cut, and the few reductions a
//! run needs. A process holds one block; every process calls each method in the same order
//! (they are collective). One process is a [`Group`] of one ([`OneProcess`]): its ghost
//! layers travel to itself, which is the periodic wrap. Over MPI ranks, [`Ranks`] (feature
//! `mpi`); among the threads of one process, each holding a block on its own device (the
//! host/device split), [`Threads`].

use std::any::Any;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

use crate::Real;

/// How a process meets the others of its run. Every process calls each method in the same
/// order (they are collective).
pub trait Group<T: Real> {
    /// This process's place in the group, from 0: the block it holds.
    fn rank(&self) -> usize;
    /// The processes in the group.
    fn ranks(&self) -> usize;
    /// Sends `to[0]` to the process `peers.0` (the neighbour below along an axis) and `to[1]`
    /// to `peers.1` (the one above), and returns what they sent this way: `[from below, from
    /// above]` (the neighbour below sent its `to[1]`, the one above its `to[0]`). A process
    /// that is its own neighbour gets its own values back, crossed.
    fn swap(&self, peers: (usize, usize), to: [Vec<T>; 2]) -> [Vec<T>; 2];
    /// The largest of each value over the processes.
    fn max(&self, values: Vec<f64>) -> Vec<f64>;
    /// Every process's `local` concatenated in rank order: `Some` on the first process,
    /// `None` elsewhere.
    fn gather(&self, local: Vec<f64>) -> Option<Vec<f64>>;
    /// One outcome for all: `None` where no process failed, else on every process the message
    /// of the lowest one that failed (`failure` is this process's), so none goes on to wait
    /// for one that stopped.
    fn first_failure(&self, failure: Option<String>) -> Option<String>;
}

/// A run in one process: its one block is its own neighbour along every axis.
#[derive(Clone, Copy, Debug, Default)]
pub struct OneProcess;

impl<T: Real> Group<T> for OneProcess {
    fn rank(&self) -> usize {
        0
    }
    fn ranks(&self) -> usize {
        1
    }
    fn swap(&self, _: (usize, usize), [below, above]: [Vec<T>; 2]) -> [Vec<T>; 2] {
        [above, below]
    }
    fn max(&self, values: Vec<f64>) -> Vec<f64> {
        values
    }
    fn gather(&self, local: Vec<f64>) -> Option<Vec<f64>> {
        Some(local)
    }
    fn first_failure(&self, failure: Option<String>) -> Option<String> {
        failure
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
}

#[cfg(feature = "mpi")]
impl<T: Real> Group<T> for Ranks {
    fn rank(&self) -> usize {
        self.rank
    }
    fn ranks(&self) -> usize {
        self.ranks
    }
    fn swap(&self, peers: (usize, usize), to: [Vec<T>; 2]) -> [Vec<T>; 2] {
        crate::mpi_ring::ring_swap(&self.comm, peers, to, 0, |_, _| Ok(()))
            .unwrap_or_else(|_| unreachable!("no work that can fail runs beside this exchange"))
    }
    fn max(&self, values: Vec<f64>) -> Vec<f64> {
        use mpi::collective::{CommunicatorCollectives, SystemOperation};
        let mut out = vec![0.0; values.len()];
        self.comm
            .all_reduce_into(&values[..], &mut out[..], SystemOperation::max());
        out
    }
    fn gather(&self, local: Vec<f64>) -> Option<Vec<f64>> {
        crate::mpi_ring::gather_to_root(&self.comm, self.rank, self.ranks, local)
    }
    fn first_failure(&self, failure: Option<String>) -> Option<String> {
        let local = match &failure {
            // Told to the others as it is (a bare message).
            Some(message) => Err(crate::LbmError::Shape(message.clone()).into()),
            None => Ok(()),
        };
        match crate::mpi_ring::agree(&self.comm, local) {
            Ok(()) => None,
            Err(e) => failure.or(Some(e.to_string())),
        }
    }
}

/// The threads of one process, each running a block (the host/device split:
/// [`crate::hetero::HeteroFdGrid`]). Each collective
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

impl<T: Real> Group<T> for Threads {
    fn rank(&self) -> usize {
        self.rank
    }
    fn ranks(&self) -> usize {
        self.ranks
    }
    fn swap(&self, (below, above): (usize, usize), to: [Vec<T>; 2]) -> [Vec<T>; 2] {
        let all = self.all(to);
        [all[below][1].clone(), all[above][0].clone()]
    }
    fn max(&self, values: Vec<f64>) -> Vec<f64> {
        let all = self.all(values);
        let mut out = all[0].clone();
        for v in &all[1..] {
            for (o, x) in out.iter_mut().zip(v) {
                *o = o.max(*x);
            }
        }
        out
    }
    fn gather(&self, local: Vec<f64>) -> Option<Vec<f64>> {
        let all = self.all(local);
        (self.rank == 0).then(|| all.concat())
    }
    fn first_failure(&self, failure: Option<String>) -> Option<String> {
        let all = self.all(failure.clone());
        failure.or_else(|| all.into_iter().flatten().next())
    }
}

#[cfg(test)]
#[path = "group_tests.rs"]
mod tests;
