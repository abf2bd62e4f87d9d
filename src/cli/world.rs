//! The processes of a run: this process alone, or — built with the `mpi` feature and started
//! under `mpiexec -n N` — the N ranks of MPI's world, which cut the lattice into slabs
//! (Calore et al. 2016 §4), each rank's slab on the backend asked for
//! ([`lbm::backend::build`]). Only rank 0 prints and writes outputs; every decision that
//! changes the sequence of collective calls (chunk length, stop, a failed write) is agreed by
//! all ranks, so no rank waits for another that has left.

use lbm::Real;
use lbm::group::{Carrier, Transfers};
#[cfg(feature = "mpi")]
use lbm::mpi_ring::mpi::topology::SimpleCommunicator;

/// The processes of the run: a [`lbm::group::Group`] ([`World::group`]), and under MPI the
/// world's communicator the lattices' rings are built on.
pub struct World {
    #[cfg(feature = "mpi")]
    ranks: lbm::group::Ranks,
}

impl World {
    /// The world of this process: MPI's when built with the `mpi` feature.
    #[cfg(feature = "mpi")]
    pub fn new(universe: &lbm::mpi_ring::mpi::environment::Universe) -> Self {
        Self {
            ranks: lbm::group::Ranks::new(&universe.world()),
        }
    }

    /// The world of this process alone.
    #[cfg(not(feature = "mpi"))]
    pub fn new() -> Self {
        Self {}
    }

    /// This process's rank among those of its node (0 without MPI): which of the node's GPUs
    /// it takes.
    pub fn node_rank(&self) -> usize {
        #[cfg(feature = "mpi")]
        return lbm::mpi_ring::node_rank(self.comm());
        #[cfg(not(feature = "mpi"))]
        0
    }

    /// `result` on every process: this process's own where it failed, an error naming what
    /// `other` process failed at where another did, and `result` where all succeeded
    /// (collective).
    pub fn all_ok<T>(
        &self,
        result: Result<T, super::CliError>,
        other: &str,
    ) -> Result<T, super::CliError> {
        if self.group().any(result.is_err()) {
            result.and_then(|_| Err(super::CliError::OtherRank(other.into())))
        } else {
            result
        }
    }

    /// The world's processes for one lattice or grid, on a communicator of their own (their
    /// messages meet no other's; collective).
    pub fn carrier<T: Real>(&self) -> Box<dyn Carrier<T>> {
        #[cfg(feature = "mpi")]
        return Box::new(lbm::group::Ranks::new(self.comm()));
        #[cfg(not(feature = "mpi"))]
        Box::new(lbm::group::OneProcess)
    }

    /// The processes of the run and how they meet (their reductions and agreements).
    pub fn group(&self) -> &dyn Transfers<f64> {
        #[cfg(feature = "mpi")]
        return &self.ranks;
        #[cfg(not(feature = "mpi"))]
        &lbm::group::OneProcess
    }

    /// MPI's world communicator (a duplicate of it, the run's own).
    #[cfg(feature = "mpi")]
    pub fn comm(&self) -> &SimpleCommunicator {
        self.ranks.comm()
    }
}
