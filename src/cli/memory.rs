//! The memory check of `lbm run`: before anything is allocated, each rank compares what it
//! will hold ([`lbm::memory`]) times the ranks that share its node with what the node grants,
//! and every rank fails together, within a second, when it does not fit.

use lbm::cases::Case;
use lbm::memory::{self, Need};
use lbm::{Model, Real};

use super::CliError;
use super::plan::Plan;
use super::settings::BackendArg;
use super::world::World;

/// What this process will hold for the run of `case` planned by `plan` in precision `T`;
/// refused when that, times the ranks on this node, exceeds what the node has available
/// (collective under MPI).
pub fn check<C: Case, T: Real>(world: &World, plan: &Plan, case: &C) -> Result<Need, CliError> {
    let need = need::<C, T>(world.ranks(), world.rank(), plan, case);
    let local =
        memory::check(need, ranks_on_node(world), memory::available()).map_err(lbm::Error::from);
    #[cfg(feature = "mpi")]
    let local = if world.ranks() > 1 {
        lbm::mpi_ring::agree(world.comm(), local)
    } else {
        local
    };
    local?;
    Ok(need)
}

/// What rank `rank` of `ranks` holds: what it holds now, its slab (the widest) and the
/// boundaries of its columns, the fields of its outputs (rank 0: also the sampled fields of the
/// images) and its shard of a checkpoint when checkpoints are on.
fn need<C: Case, T: Real>(ranks: usize, rank: usize, plan: &Plan, case: &C) -> Need {
    let (lx, ly) = case.size();
    // Sites per plane of constant x (a column in 2-D).
    let plane = ly * case.depth();
    let width = lx.div_ceil(ranks.max(1));
    let obstacles = case.boundaries().solid.is_some();
    let sites = width * plane;
    let side = |n: usize| n.div_ceil(lbm::output::png::sampling(lx, ly));
    let images = plan.images.as_ref().is_some_and(|i| !i.is_empty());
    let pixels = if rank == 0 && images {
        side(lx) * side(ly)
    } else {
        0
    };
    Need {
        program: memory::resident().unwrap_or(0),
        populations: memory::populations::<C::Model, T>(
            width,
            plane,
            plan.scheme,
            plan.backend == BackendArg::Gpu,
        ),
        boundaries: memory::boundaries::<C::Model, T>(width, plane, obstacles),
        outputs: memory::outputs::<C::Model>(sites, pixels),
        checkpoint: if plan.checkpoint_every > 0 {
            (sites * C::Model::Q * T::BYTES) as u64
        } else {
            0
        },
    }
}

/// The ranks sharing this process's node (and its memory).
fn ranks_on_node(world: &World) -> usize {
    #[cfg(feature = "mpi")]
    if world.ranks() > 1 {
        return lbm::mpi_ring::node_size(world.comm());
    }
    let _ = world;
    1
}
