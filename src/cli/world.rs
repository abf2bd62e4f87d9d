//! The processes of a run: this process alone, or — built with the `mpi` feature and started
//! under `mpiexec -n N` — the N ranks of MPI's world, which cut the lattice into slabs
//! (Calore et al. 2016 §4). Only rank 0 prints and writes outputs.

#[cfg(feature = "mpi")]
use lbm::mpi_ring::mpi::topology::{Communicator, SimpleCommunicator};

/// The processes of the run.
pub struct World {
    #[cfg(feature = "mpi")]
    comm: SimpleCommunicator,
}

impl World {
    /// The world of this process: MPI's when built with the `mpi` feature.
    #[cfg(feature = "mpi")]
    pub fn new(universe: &lbm::mpi_ring::mpi::environment::Universe) -> Self {
        Self {
            comm: universe.world(),
        }
    }

    /// The world of this process alone.
    #[cfg(not(feature = "mpi"))]
    pub fn new() -> Self {
        Self {}
    }

    /// The number of processes.
    pub fn ranks(&self) -> usize {
        #[cfg(feature = "mpi")]
        return usize::try_from(self.comm.size()).unwrap_or(1);
        #[cfg(not(feature = "mpi"))]
        1
    }

    /// This process's rank.
    pub fn rank(&self) -> usize {
        #[cfg(feature = "mpi")]
        return usize::try_from(self.comm.rank()).unwrap_or(0);
        #[cfg(not(feature = "mpi"))]
        0
    }

    /// This process's rank among those of its node (0 without MPI): which of the node's GPUs
    /// it takes.
    pub fn node_rank(&self) -> usize {
        #[cfg(feature = "mpi")]
        return lbm::mpi_ring::node_rank(&self.comm);
        #[cfg(not(feature = "mpi"))]
        0
    }

    /// Whether `flag` holds on any process (collective).
    pub fn any(&self, flag: bool) -> bool {
        #[cfg(feature = "mpi")]
        {
            use lbm::mpi_ring::mpi::collective::{CommunicatorCollectives, SystemOperation};
            let mut out = 0u8;
            self.comm
                .all_reduce_into(&u8::from(flag), &mut out, SystemOperation::max());
            out == 1
        }
        #[cfg(not(feature = "mpi"))]
        flag
    }

    /// `result` on every process: this process's own where it failed, an error naming what
    /// `other` process failed at where another did, and `result` where all succeeded
    /// (collective).
    pub fn all_ok<T>(
        &self,
        result: Result<T, super::CliError>,
        other: &str,
    ) -> Result<T, super::CliError> {
        if self.any(result.is_err()) {
            result.and_then(|_| Err(super::CliError::OtherRank(other.into())))
        } else {
            result
        }
    }

    /// The next chunk's length and whether to stop, agreed by every process: the shortest
    /// chunk, and the largest request ([`lbm::driver::Ended::request`]; collective: one
    /// reduction).
    pub fn agree(&self, chunk: u64, request: u64) -> (u64, u64) {
        #[cfg(feature = "mpi")]
        {
            use lbm::mpi_ring::mpi::collective::{CommunicatorCollectives, SystemOperation};
            let mine = [u64::MAX - chunk, request];
            let mut out = [0u64; 2];
            self.comm
                .all_reduce_into(&mine[..], &mut out[..], SystemOperation::max());
            (u64::MAX - out[0], out[1])
        }
        #[cfg(not(feature = "mpi"))]
        (chunk, request)
    }

    /// MPI's world communicator.
    #[cfg(feature = "mpi")]
    pub fn comm(&self) -> &SimpleCommunicator {
        &self.comm
    }
}
