//! MPI for the runs over ranks (feature `mpi`, rsmpi over the system MPI): its start, and
//! where a rank sits on its node, and how many threads it runs. The ranks themselves are a [`crate::group::Ranks`], the
//! group a lattice's ring ([`crate::distributed::DistLattice`]) or a finite-difference grid
//! runs on. Drop every group before the [`mpi::environment::Universe`] (each frees its
//! communicator).

pub use mpi;
use mpi::topology::{Communicator, SimpleCommunicator};

use crate::domain::DomainError;

/// Initialises MPI (once per process), or says why it cannot, and shares the node's cores
/// among the ranks on it ([`share_node_cores`]).
pub fn init() -> Result<mpi::environment::Universe, DomainError> {
    // Threads that call MPI at once: several blocks a rank ([`crate::group::RankThreads`]).
    let threads = mpi::environment::initialize_with_threading(mpi::Threading::Multiple);
    let universe = threads.map(|(universe, _)| universe).ok_or_else(|| {
        DomainError::Mpi("MPI is already initialised in this process (call init() once)".into())
    })?;
    share_node_cores(&universe.world());
    Ok(universe)
}

/// Gives this rank's kernels (rayon's global pool) its share of the node's cores
/// (`threads_per_rank`), so that `mpiexec -n N` on one node runs as many threads as it
/// has cores rather than `N` times as many (collective). Nothing changes where
/// `RAYON_NUM_THREADS` chooses, where the launcher bound the rank to some cores (its
/// affinity mask is then its share), or where the pool already runs.
pub fn share_node_cores(comm: &SimpleCommunicator) {
    let [rank, ranks] = on_node(comm);
    if std::env::var_os("RAYON_NUM_THREADS").is_some() {
        return;
    }
    let usable = std::thread::available_parallelism().map_or(1, usize::from);
    // SAFETY: sysconf reads a constant of the system; a failure is a negative value.
    #[cfg(target_os = "linux")]
    let online = usize::try_from(unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) });
    #[cfg(not(target_os = "linux"))]
    let online: Result<usize, ()> = Ok(usable);
    let Some(threads) = threads_per_rank(online.unwrap_or(usable), usable, ranks, rank) else {
        return;
    };
    // Fails only where the pool was built already (by the caller, who chose): kept then.
    let _ = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build_global();
}

/// The threads of the rank `rank` of `ranks` on a node of `online` cores, of which it may
/// run on `usable` (its affinity mask): the node's cores shared out, the first `online mod
/// ranks` ranks taking one more, at least one each; `None` (keep the default, one a usable
/// core) where the launcher bound the rank to fewer cores than the node has.
fn threads_per_rank(online: usize, usable: usize, ranks: usize, rank: usize) -> Option<usize> {
    if usable < online || ranks <= 1 {
        return None;
    }
    Some((online / ranks + usize::from(rank < online % ranks)).max(1))
}

/// This process's rank among the ranks of `comm` that share its node (collective): what
/// spreads the ranks of a node over its GPUs ([`crate::gpu::GpuOptions`]'s
/// `node_rank`).
pub fn node_rank(comm: &SimpleCommunicator) -> usize {
    on_node(comm)[0]
}

/// The number of ranks of `comm` that share this rank's node (collective), which share its
/// memory.
pub fn node_size(comm: &SimpleCommunicator) -> usize {
    on_node(comm)[1]
}

/// This rank's place among the ranks of `comm` on its node and their number, `[rank, ranks]`
/// (collective: a shared-memory split, `MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)`, keyed by
/// the rank in `comm`).
fn on_node(comm: &SimpleCommunicator) -> [usize; 2] {
    let node = comm.split_shared(comm.rank());
    [node.rank(), node.size()].map(|v| usize::try_from(v).expect("a rank is not negative"))
}

#[cfg(test)]
#[path = "mpi_ring_tests.rs"]
mod tests;
