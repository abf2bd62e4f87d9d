//! The memory check of `lbm run`: before anything is allocated, each rank compares what it
//! will hold ([`lbm::memory`]) times the ranks that share its node with what the node grants,
//! and every rank fails together, within a second, when it does not fit.
//!
//! Besides the solver's parts, a rank holds (`N_m` moments, `S` sites):
//!
//! ```text
//! program      what the process holds already (VmRSS when the estimate is made)
//! outputs      (2 N_m + 2) · S · 8            the moments of its S sites as f64 and their VTK
//!                                             piece (scalars, the velocity as a 3-vector)
//!              + 2 · N_m · P · 8              on the root: the fields of the images, sampled
//!                                             to P ≤ 2048² pixels, gathered and drawn
//! checkpoint   S · Q · b                      its populations in logical order, for its shard
//!                                             (when checkpoints are on)
//! ```

use lbm::cases::Case;
use lbm::memory::{self, Need};
use lbm::{Model, Real};

use super::plan::Plan;
use super::settings::BackendArg;
use super::world::World;
use super::{CliError, Precision};

/// What this process will hold for the run of `case` planned by `plan` in precision `T`;
/// refused when that, times the ranks on this node, exceeds what the node has available
/// (collective under MPI).
///
/// `device_in_host_memory`: the GPU of the run is a CPU adapter (lavapipe), whose device
/// memory is the host's.
pub fn check<C: Case, T: Real>(
    world: &World,
    plan: &Plan,
    case: &C,
    device_in_host_memory: bool,
) -> Result<Need, CliError> {
    let need = need::<C, T>(
        (world.ranks(), world.rank()),
        plan,
        case,
        device_in_host_memory,
    );
    let local = memory::check(&need, ranks_on_node(world), memory::available())
        .map_err(|e| lbm::Error::from(e.with_remedy(remedy(plan))));
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
fn need<C: Case, T: Real>(
    (ranks, rank): (usize, usize),
    plan: &Plan,
    case: &C,
    device_in_host_memory: bool,
) -> Need {
    let (lx, ly) = case.size();
    // Sites per plane of constant x (a column in 2-D).
    let plane = ly.saturating_mul(case.depth());
    let width = lx.div_ceil(ranks.max(1));
    let obstacles = case.boundaries().solid.is_some();
    let sites = memory::product(&[width, plane]);
    let side = |n: usize| n.div_ceil(lbm::output::png::sampling(lx, ly));
    let images = plan.images.as_ref().is_some_and(|i| !i.is_empty());
    let pixels = if rank == 0 && images {
        side(lx) * side(ly)
    } else {
        0
    };
    let nm = <C::Model as Model>::MOMENT_NAMES.len() as u64;
    let outputs = sites
        .saturating_mul(2 * nm + 2)
        .saturating_add((2 * nm).saturating_mul(pixels as u64))
        .saturating_mul(8);
    let checkpoint = if plan.checkpoint_every > 0 {
        sites.saturating_mul((C::Model::Q * T::BYTES) as u64)
    } else {
        0
    };
    let need = Need::new()
        .with("program", memory::resident().unwrap_or(0))
        .with(
            "populations",
            memory::populations::<C::Model, T>(
                width,
                plane,
                plan.scheme,
                plan.backend == BackendArg::Gpu,
            ),
        );
    // A CPU adapter's device memory is the host's: the lattice's copies on the device.
    let need = match device_in_host_memory {
        true => need.with(
            "device",
            memory::populations::<C::Model, T>(width, plane, plan.scheme, false),
        ),
        false => need,
    };
    need.with(
        "boundaries",
        memory::boundaries::<C::Model, T>(width, plane, obstacles),
    )
    .with("outputs", outputs)
    .with("checkpoint", checkpoint)
}

/// What would make the run fit, of what this build and this plan leave: a smaller lattice
/// always; more ranks where the program takes MPI; f32 or f16s below f64; the in-place scheme
/// where the run is two-copy on the host.
fn remedy(plan: &Plan) -> String {
    let mut ways = vec!["a smaller lattice (--lx, --ly)".to_string()];
    if cfg!(feature = "mpi") {
        ways.push("more ranks on more nodes (mpiexec -n N)".into());
    }
    match plan.precision {
        Precision::F64 => ways.push("--precision f32 (or f16s)".into()),
        Precision::F32 => ways.push("--precision f16s".into()),
        Precision::F16s => {}
    }
    if plan.scheme == lbm::Scheme::TwoCopy && plan.backend != BackendArg::Gpu {
        ways.push("--scheme in-place".into());
    }
    if plan.checkpoint_every > 0 {
        ways.push("no checkpoints (--checkpoint-every 0)".into());
    }
    format!("try {}", ways.join(", or "))
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
