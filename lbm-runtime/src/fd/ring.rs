//! The processes that share a finite-difference run. The grid is cut along its outermost axis
//! (y in 2-D, z in 3-D) into slabs of whole planes, one per process, joined in a ring: after
//! each stage a slab sends its first and last `REACH` planes to the slabs below and above and
//! takes theirs into its ghost planes, so every process computes the single-process grid's
//! very operations on its planes (the results are bitwise the same for any number of
//! processes). One process is a ring of one: its planes travel to itself, which is the
//! periodic wrap ([`OneProcess`]). Over MPI ranks, [`Ranks`] (feature `mpi`).

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
