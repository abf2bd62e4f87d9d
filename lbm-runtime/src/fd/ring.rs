//! The processes that share a finite-difference run. The grid is cut along its outermost axis
//! (y in 2-D, z in 3-D) into slabs of whole planes, one per process, joined in a ring: after
//! each stage a slab sends its first and last `REACH` planes to the slabs below and above and
//! takes theirs into its ghost planes, so every process computes the single-process grid's
//! very operations on its planes (the results are bitwise the same for any number of
//! processes). One process is a ring of one: its planes travel to itself, which is the
//! periodic wrap ([`OneProcess`]). Over MPI ranks, [`Ranks`] (feature `mpi`); among the
//! threads of one process, each holding a part of the grid on its own device, [`Threads`].

use std::any::Any;
use std::ops::Range;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

use super::FdError;
use crate::Real;

/// How a slab meets the others: the exchange of planes around the ring, and the few
/// reductions a run needs. Every process calls each method in the same order (they are
/// collective).
pub trait FdRing<T: Real> {
    /// This process's place in the ring, from 0 (the lowest planes).
    fn rank(&self) -> usize;
    /// The processes in the ring.
    fn ranks(&self) -> usize;
    /// This process's planes of the `n` planes of the outermost axis: by default the even cut,
    /// the first `n mod ranks` slabs one plane thicker.
    fn planes(&self, n: usize) -> Range<usize> {
        let (rank, ranks) = (self.rank(), self.ranks());
        let (base, extra) = (n / ranks, n % ranks);
        let start = rank * base + rank.min(extra);
        start..start + base + usize::from(rank < extra)
    }
    /// Sends `to[0]` to the process below and `to[1]` to the one above (the ring closes: the
    /// last process's above is the first) and returns what they sent this way:
    /// `[from below, from above]`.
    fn swap(&self, to: [Vec<T>; 2]) -> [Vec<T>; 2];
    /// The largest of each value over the processes.
    fn max(&self, values: Vec<f64>) -> Vec<f64>;
    /// Every process's `local` concatenated in ring order: `Some` on the first process,
    /// `None` elsewhere.
    fn gather(&self, local: Vec<f64>) -> Option<Vec<f64>>;
    /// One outcome for all: `Ok` where every process succeeded, else on each the error of the
    /// lowest process that failed, so none goes on to wait for one that stopped.
    fn agree(&self, local: Result<(), FdError>) -> Result<(), FdError>;
}

/// A run in one process: the ring closes on itself.
#[derive(Clone, Copy, Debug, Default)]
pub struct OneProcess;

impl<T: Real> FdRing<T> for OneProcess {
    fn rank(&self) -> usize {
        0
    }
    fn ranks(&self) -> usize {
        1
    }
    fn swap(&self, [below, above]: [Vec<T>; 2]) -> [Vec<T>; 2] {
        [above, below]
    }
    fn max(&self, values: Vec<f64>) -> Vec<f64> {
        values
    }
    fn gather(&self, local: Vec<f64>) -> Option<Vec<f64>> {
        Some(local)
    }
    fn agree(&self, local: Result<(), FdError>) -> Result<(), FdError> {
        local
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
    /// The ring of `comm`'s ranks (a duplicate of it, so the run's messages meet no others).
    pub fn new(comm: &mpi::topology::SimpleCommunicator) -> Self {
        use mpi::topology::Communicator;
        let comm = comm.duplicate();
        let rank = usize::try_from(comm.rank()).expect("a rank is not negative");
        let ranks = usize::try_from(comm.size()).expect("a size is not negative");
        Self { comm, rank, ranks }
    }
}

#[cfg(feature = "mpi")]
impl<T: Real> FdRing<T> for Ranks {
    fn rank(&self) -> usize {
        self.rank
    }
    fn ranks(&self) -> usize {
        self.ranks
    }
    fn swap(&self, to: [Vec<T>; 2]) -> [Vec<T>; 2] {
        let n = self.ranks;
        let around = ((self.rank + n - 1) % n, (self.rank + 1) % n);
        crate::mpi_ring::ring_swap(&self.comm, around, to, 0, |_, _| Ok(()))
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
    fn agree(&self, local: Result<(), FdError>) -> Result<(), FdError> {
        match crate::mpi_ring::agree(&self.comm, local.map_err(crate::Error::from)) {
            Ok(()) => Ok(()),
            Err(crate::Error::Fd(e)) => Err(e),
            Err(e) => Err(FdError::OtherRank(e.to_string())),
        }
    }
}

/// The threads of one process, each running a part of the grid (the host/device split:
/// [`crate::hetero::HeteroFdGrid`]), in a ring of parts of the planes given. Each collective
/// call meets the others at a barrier; a thread that panics breaks it ([`Threads::guard`]),
/// and the others then panic too instead of waiting for it for ever.
pub struct Threads {
    rank: usize,
    cut: Arc<Vec<usize>>,
    meeting: Arc<Meeting>,
}

/// Where the threads of a ring meet: each call's values, and the barrier.
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
    /// If another thread of the ring panicked.
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
        assert!(!s.broken, "another thread of the ring stopped");
    }
}

/// Breaks the ring's barrier if its thread panics ([`Threads::guard`]).
pub struct RingGuard(Arc<Meeting>);

impl Drop for RingGuard {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.lock().broken = true;
            self.0.turn.notify_all();
        }
    }
}

impl Threads {
    /// The ring of `cut.len() − 1` threads, thread `r` holding the planes
    /// `cut[r]..cut[r + 1]`: one handle per thread, in ring order.
    pub fn ring(cut: Vec<usize>) -> Vec<Self> {
        let parts = cut.len().saturating_sub(1);
        let cut = Arc::new(cut);
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
                cut: cut.clone(),
                meeting: meeting.clone(),
            })
            .collect()
    }

    /// A guard for the thread that uses this handle: kept while it runs, it breaks the ring
    /// if the thread panics.
    pub fn guard(&self) -> RingGuard {
        RingGuard(self.meeting.clone())
    }

    /// Every thread's `mine`, in ring order (collective).
    fn all<X: Clone + Send + 'static>(&self, mine: X) -> Vec<X> {
        let parts = self.cut.len() - 1;
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
                    .expect("every thread of the ring made the same call")
                    .clone()
            })
            .collect();
        // Nobody writes the next call's value before everyone has read this one's.
        self.meeting.wait(parts);
        all
    }
}

impl<T: Real> FdRing<T> for Threads {
    fn rank(&self) -> usize {
        self.rank
    }
    fn ranks(&self) -> usize {
        self.cut.len() - 1
    }
    fn planes(&self, _n: usize) -> Range<usize> {
        self.cut[self.rank]..self.cut[self.rank + 1]
    }
    fn swap(&self, to: [Vec<T>; 2]) -> [Vec<T>; 2] {
        let n = FdRing::<T>::ranks(self);
        let all = self.all(to);
        let (below, above) = ((self.rank + n - 1) % n, (self.rank + 1) % n);
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
    fn agree(&self, local: Result<(), FdError>) -> Result<(), FdError> {
        let all = self.all(local.as_ref().err().map(ToString::to_string));
        match (local, all.into_iter().flatten().next()) {
            (Err(e), _) => Err(e),
            (Ok(()), Some(first)) => Err(FdError::OtherRank(first)),
            (Ok(()), None) => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs `body` on each thread of a ring of three parts and returns what each gave, or
    /// `None` where it panicked.
    fn on_ring<R: Send + 'static>(
        body: impl Fn(&Threads) -> R + Send + Sync + Copy + 'static,
    ) -> Vec<Option<R>> {
        let threads: Vec<_> = Threads::ring(vec![0, 3, 7, 9])
            .into_iter()
            .map(|ring| {
                std::thread::spawn(move || {
                    let _guard = ring.guard();
                    body(&ring)
                })
            })
            .collect();
        threads.into_iter().map(|t| t.join().ok()).collect()
    }

    #[test]
    fn the_threads_trade_planes_around_the_ring_and_reduce() {
        let got = on_ring(|r| {
            let planes = FdRing::<f64>::planes(r, 9);
            let [below, above] = r.swap([vec![r.rank as f64], vec![10.0 + r.rank as f64]]);
            let max = FdRing::<f64>::max(r, vec![r.rank as f64, -(r.rank as f64)]);
            let all = FdRing::<f64>::gather(r, vec![r.rank as f64; r.rank + 1]);
            (planes, below[0], above[0], max, all)
        });
        let got: Vec<_> = got.into_iter().map(Option::unwrap).collect();
        assert_eq!(got[0].0, 0..3);
        assert_eq!(got[2].0, 7..9);
        // Part 0 hears from part 2 below it (the ring closes) and from part 1 above it.
        assert_eq!((got[0].1, got[0].2), (12.0, 1.0));
        assert_eq!((got[1].1, got[1].2), (10.0, 2.0));
        assert_eq!(got[1].3, [2.0, 0.0]);
        assert_eq!(got[0].4, Some(vec![0.0, 1.0, 1.0, 2.0, 2.0, 2.0]));
        assert_eq!(got[1].4, None);
    }

    #[test]
    fn a_thread_that_panics_stops_the_others_instead_of_hanging_them() {
        let got = on_ring(|r| {
            assert!(r.rank != 1, "part 1 fails");
            FdRing::<f64>::max(r, vec![1.0])
        });
        assert!(got.iter().all(Option::is_none), "every part stopped");
    }

    #[test]
    fn an_error_is_agreed_by_every_thread() {
        let got = on_ring(|r| {
            let local = if r.rank == 2 {
                Err(FdError::Setup("part 2's device".into()))
            } else {
                Ok(())
            };
            FdRing::<f64>::agree(r, local).unwrap_err().to_string()
        });
        assert!(got.iter().all(|e| e.as_deref() == Some("part 2's device")));
    }
}
