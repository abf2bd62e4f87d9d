//! MPI for the runs over ranks (feature `mpi`, rsmpi over the system MPI): its start, and
//! where a rank sits on its node. The ranks themselves are a [`crate::group::Ranks`], the
//! group a lattice's ring ([`crate::distributed::DistLattice`]) or a finite-difference grid
//! runs on. Drop every group before the [`mpi::environment::Universe`] (each frees its
//! communicator).

pub use mpi;
use mpi::topology::{Communicator, SimpleCommunicator};

use crate::domain::DomainError;

/// Initialises MPI (once per process), or says why it cannot.
pub fn init() -> Result<mpi::environment::Universe, DomainError> {
    // Threads that call MPI at once: several blocks a rank ([`crate::group::RankThreads`]).
    let threads = mpi::environment::initialize_with_threading(mpi::Threading::Multiple);
    threads.map(|(universe, _)| universe).ok_or_else(|| {
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
