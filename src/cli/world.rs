//! The processes of a run: this process alone, or — built with the `mpi` feature and started
//! under `mpiexec -n N` — the N ranks of MPI's world, which cut the lattice into slabs
//! (Calore et al. 2016 §4) or blocks, each on the backend asked for
//! ([`lbm::backend::build`]); where a sparse domain's blocks outnumber the ranks, a rank runs
//! several, each on a thread of its own. Only the first block prints and writes the shared
//! outputs; every decision that changes the sequence of collective calls (chunk length, stop,
//! a failed write) is agreed by all, so none waits for another that has left.

use lbm::blocks::Decomposition;
use lbm::domain::GlobalSpec;
use lbm::group::{Carrier, Transfers};
use lbm::{Model, Real};

use super::CliError;
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
    pub fn all_ok<T>(&self, result: Result<T, CliError>, other: &str) -> Result<T, CliError> {
        if self.group().any(result.is_err()) {
            result.and_then(|_| Err(CliError::OtherRank(other.into())))
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

    /// How many blocks each process runs, in rank order: one, but on a sparse domain
    /// (`--block`, under MPI) the blocks that hold fluid of `spec`'s box spread over the
    /// processes ([`lbm::domain::sparse_spread`]), several a process where they outnumber them
    /// (every process computes the same).
    pub fn spread<M: Model>(
        &self,
        spec: &GlobalSpec<M>,
        blocks: Decomposition,
    ) -> Result<Vec<usize>, CliError> {
        let ranks = self.group().ranks();
        // Without MPI the builder refuses a sparse domain (it runs one process, whole).
        #[cfg(not(feature = "mpi"))]
        let _ = spec;
        match blocks {
            #[cfg(feature = "mpi")]
            Decomposition::Sparse(size) => {
                Ok(lbm::domain::sparse_spread(spec, size, ranks).map_err(lbm::Error::from)?)
            }
            _ => Ok(vec![1; ranks]),
        }
    }

    /// Runs `job` for each of this process's blocks of `counts` ([`World::spread`], or the
    /// parts of a finite-difference split), given its groups for `N` lattices
    /// ([`World::carrier`]): on this thread where every process runs one block, else each
    /// block on a thread of its own ([`lbm::group::RankThreads`] under MPI,
    /// [`lbm::group::Threads`] in one process). Returns the first block's error (collective).
    pub fn on_blocks<T: Real, const N: usize>(
        &self,
        counts: &[usize],
        job: impl Fn([Box<dyn Carrier<T>>; N]) -> Result<(), CliError> + Sync,
    ) -> Result<(), CliError> {
        #[cfg(feature = "mpi")]
        if counts.iter().any(|&c| c > 1) {
            let each = |groups: [lbm::group::RankThreads; N]| {
                job(groups.map(|g| Box::new(g) as Box<dyn Carrier<T>>))
            };
            let runs = lbm::group::RankThreads::run(self.comm(), counts, each)?;
            return runs.into_iter().collect();
        }
        // One process: its blocks on threads of their own.
        #[cfg(not(feature = "mpi"))]
        if let &[blocks] = counts
            && blocks > 1
        {
            let each = |groups: [lbm::group::Threads; N]| {
                job(groups.map(|g| Box::new(g) as Box<dyn Carrier<T>>))
            };
            return lbm::group::Threads::run_groups(blocks, each)
                .into_iter()
                .collect();
        }
        job(std::array::from_fn(|_| self.carrier()))
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
