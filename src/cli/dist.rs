//! `lbm run` under `mpiexec -n N` (feature `mpi`): the lattice cut into slabs over the ranks
//! in a ring ([`lbm::mpi_ring::DistLattice`], seed 003 §4–5), driven by the same loop as a
//! single process. Rank 0 gathers the fields for outputs and the populations for checkpoints
//! (which hold the whole lattice, so they resume on any number of ranks); every decision that
//! changes the sequence of collective calls (chunk length, stop, a failed write) is agreed by
//! all ranks, so no rank waits for another that has left.

use std::path::Path;

use lbm::cases::{global_spec, Case};
use lbm::mpi_ring::DistLattice;
use lbm::output::Fields;
use lbm::{Checkpoint, Layout, Model, Real, Scheme};

use super::driver::drive;
use super::run::Plan;
use super::solver::Solver;
use super::world::World;
use super::CliError;

/// Runs `case` over the ranks of `world`, from `checkpoint` when given.
pub fn run<C: Case, L: Layout, T: Real>(
    world: &World,
    plan: &Plan,
    case: &C,
    checkpoint: Option<Checkpoint<C::Model, T>>,
) -> Result<(), CliError> {
    let spec = global_spec(case);
    let lat = match checkpoint {
        Some(c) => {
            let global = match world.rank() {
                0 => Some(c.into_lattice::<L>(Scheme::TwoCopy, &case.boundaries())?),
                _ => None,
            };
            DistLattice::scatter(world.comm(), spec, global.as_ref())?
        }
        None => {
            let mut lat = DistLattice::new(world.comm(), spec, Scheme::TwoCopy)?;
            lat.set_equilibrium(case.initial())?;
            lat
        }
    };
    drive(plan, case, &mut DistSolver { lat })
}

/// The distributed lattice, as the driver sees it.
struct DistSolver<M: Model, L: Layout, T: Real> {
    lat: DistLattice<M, L, T>,
}

impl<M: Model, L: Layout, T: Real> Solver for DistSolver<M, L, T> {
    type Model = M;

    fn steps_done(&self) -> u64 {
        self.lat.slab().lattice().steps_done()
    }

    fn advance(&mut self, n: u64) -> Result<(), CliError> {
        for _ in 0..n {
            self.lat.step();
        }
        Ok(())
    }

    fn check(&self) -> Result<(), CliError> {
        Ok(self.lat.check()?)
    }

    fn fields(&self) -> Result<Option<Fields>, CliError> {
        let Some(global) = self.lat.gather()? else {
            return Ok(None);
        };
        let d = global.dims();
        let f = Fields::collect::<M, _>((d.lx, d.ly), global.steps_done(), |n| {
            global.moment_field(n)
        })?;
        Ok(Some(f))
    }

    fn write_checkpoint(&self, path: &Path) -> Result<(), CliError> {
        let written = match self.lat.gather()? {
            Some(global) => global.write_checkpoint(path).map_err(CliError::from),
            None => Ok(()),
        };
        if self.lat.root_says(written.is_ok()) {
            written
        } else {
            written.and(Err(CliError::OtherRank(
                "rank 0 could not write the checkpoint".into(),
            )))
        }
    }

    fn is_root(&self) -> bool {
        self.lat.rank() == 0
    }

    fn agree(&self, chunk: u64, stop: bool) -> (u64, bool) {
        (self.lat.min_over_ranks(chunk), self.lat.any_rank(stop))
    }

    fn root_ok(&self, ok: bool) -> bool {
        self.lat.root_says(ok)
    }

    fn layout(&self) -> String {
        format!("{}, {}, two-copy (A-B)", L::NAME, T::NAME)
    }

    fn backend(&self) -> String {
        let d = self.lat.decomposition();
        let widths: Vec<usize> = (0..d.ranks())
            .filter_map(|r| d.slab(r).ok().map(|s| s.len()))
            .collect();
        format!(
            "cpu, {} MPI ranks in a ring (slab widths {widths:?}) × {} threads",
            d.ranks(),
            rayon::current_num_threads()
        )
    }

    fn reference_bandwidth(&self) -> Result<(f64, String), CliError> {
        super::solver::cpu_bandwidth(Scheme::TwoCopy)
    }
}
