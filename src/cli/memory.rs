//! The memory check of `lbm run`: before anything is allocated, each rank compares what it
//! will hold ([`lbm::memory`]) times the ranks that share its node with what the node grants,
//! and every rank fails together, within a second, when it does not fit.
//!
//! Besides the solver's parts (its block: the largest of the cut, or of a sparse domain), a
//! rank holds (`N_m` moments, `S` sites of its block, `S_o` of its slab of outputs, whole
//! planes of constant x):
//!
//! ```text
//! program      what the process holds already (VmRSS when the estimate is made)
//! outputs      (2 N_m + 2) · S_o · 8          the moments of its S_o sites as f64 and their
//!                                             VTK piece (scalars, the velocity as a 3-vector)
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
/// `counts`: the blocks each process runs ([`World::spread`]).
pub fn check<C: Case, T: Real>(
    world: &World,
    (plan, counts): (&Plan, &[usize]),
    case: &C,
    device_in_host_memory: bool,
) -> Result<Need, CliError> {
    let (blocks, first, here) = place(world, counts);
    let block = |b| need::<C, T>((blocks, b), plan, case, device_in_host_memory);
    fits(
        world,
        plan,
        on_process(block(first), block(first + 1), here),
    )
}

/// The blocks of the run, the first of this process's, and how many it runs, by `counts`.
fn place(world: &World, counts: &[usize]) -> (usize, usize, usize) {
    let rank = world.group().rank();
    (
        counts.iter().sum(),
        counts[..rank].iter().sum(),
        counts[rank],
    )
}

/// What a process running `here` blocks holds: what it holds now, the `first` block's need and
/// `other`'s for each of the others (the first block alone draws the run's images).
fn on_process(first: Need, other: Need, here: usize) -> Need {
    let now = Need::new().with("program", memory::resident().unwrap_or(0));
    let others = here.saturating_sub(1) as u64;
    (first.parts().iter().zip(other.parts())).fold(now, |need, (&(name, a), &(_, b))| {
        need.with(name, a.saturating_add(b.saturating_mul(others)))
    })
}

/// `need`, refused when it, times the ranks on this node, exceeds what the node has available
/// (collective under MPI: every rank fails together).
fn fits(world: &World, plan: &Plan, need: Need) -> Result<Need, CliError> {
    let local = memory::check(&need, ranks_on_node(world), memory::available())
        .map_err(|e| lbm::Error::from(e.with_remedy(remedy(plan))));
    #[cfg(feature = "mpi")]
    let local = if world.group().ranks() > 1 {
        lbm::group::agree(world.group(), local)
    } else {
        local
    };
    local?;
    Ok(need)
}

/// As [`check`], for two coupled lattices of models `A` and `B`, each of `lx × ly` sites
/// without obstacles, whose outputs are the moments of both and (on the root) the images of
/// one field; each rank holds its block of both (and a slab of their outputs).
pub fn check_coupled<A: Model, B: Model, T: Real>(
    world: &World,
    (plan, counts): (&Plan, &[usize]),
    (lx, ly): (usize, usize),
    device_in_host_memory: bool,
) -> Result<Need, CliError> {
    let (blocks, first, here) = place(world, counts);
    let need = |b| coupled::<A, B, T>((blocks, b), plan, (lx, ly), device_in_host_memory);
    fits(world, plan, on_process(need(first), need(first + 1), here))
}

/// What block `block` of `blocks` of two coupled lattices holds: its block of both, their
/// boundaries, its slab of their outputs (block 0: also the images) and its checkpoint shards.
fn coupled<A: Model, B: Model, T: Real>(
    (blocks, block): (usize, usize),
    plan: &Plan,
    (lx, ly): (usize, usize),
    device_in_host_memory: bool,
) -> Need {
    let largest = (plan.decomposition(blocks, [lx, ly, 1], 2)).largest_block([lx, ly, 1]);
    let (width, plane) = (largest[0], largest[1]);
    let one = |name| Lattice {
        name,
        width,
        plane,
        obstacles: false,
        device_in_host_memory,
    };
    let need = one(["flow populations", "flow device copies", "flow boundaries"])
        .parts::<A, T>(Need::new(), plan);
    let need = one([
        "second populations",
        "second device copies",
        "second boundaries",
    ])
    .parts::<B, T>(need, plan);
    let sites = memory::product(&[width, plane]);
    let slab = memory::product(&[lx.div_ceil(blocks.max(1)), ly]);
    let images = block == 0 && plan.images.as_ref().is_none_or(|i| !i.is_empty());
    need.with(
        "outputs",
        outputs::<A>(slab, (lx, ly), false).saturating_add(outputs::<B>(slab, (lx, ly), images)),
    )
    .with(
        "checkpoints",
        checkpoint::<A, T>(plan, sites).saturating_add(checkpoint::<B, T>(plan, sites)),
    )
}

/// What block `block` of `blocks` holds: its populations (the largest block of the cut or
/// the sparse domain) and the boundaries of its columns, the fields of its outputs (a slab of
/// whole planes of constant x, whatever the blocks; block 0: also the sampled fields of the
/// images) and its shard of a checkpoint when checkpoints are on.
fn need<C: Case, T: Real>(
    (ranks, rank): (usize, usize),
    plan: &Plan,
    case: &C,
    device_in_host_memory: bool,
) -> Need {
    let (lx, ly) = case.size();
    let size = [lx, ly, case.depth()];
    let block = (plan.decomposition(ranks, size, C::Model::D)).largest_block(size);
    // Planes of constant x, and the sites of one (a column in 2-D).
    let (width, plane) = (block[0], block[1].saturating_mul(block[2]));
    let lattice = Lattice {
        name: ["populations", "device", "boundaries"],
        width,
        plane,
        obstacles: case.boundaries().solid.is_some(),
        device_in_host_memory,
    };
    let need = Need::new();
    let sites = memory::product(&[width, plane]);
    let slab = memory::product(&[lx.div_ceil(ranks.max(1)), ly, case.depth()]);
    let images = rank == 0 && plan.images.as_ref().is_some_and(|i| !i.is_empty());
    lattice
        .parts::<C::Model, T>(need, plan)
        .with("outputs", outputs::<C::Model>(slab, (lx, ly), images))
        .with("checkpoint", checkpoint::<C::Model, T>(plan, sites))
}

/// The moments of `sites` sites of model `M` as f64 and their VTK piece (scalars, the velocity
/// as a 3-vector), and where `images` (on the root) the fields of the images of an `lx × ly`
/// lattice, sampled to at most 2048² pixels, gathered and drawn.
fn outputs<M: Model>(sites: u64, (lx, ly): (usize, usize), images: bool) -> u64 {
    let side = |n: usize| n.div_ceil(lbm::output::png::sampling(lx, ly)) as u64;
    let pixels = if images { side(lx) * side(ly) } else { 0 };
    let nm = M::MOMENT_NAMES.len() as u64;
    sites
        .saturating_mul(2 * nm + 2)
        .saturating_add((2 * nm).saturating_mul(pixels))
        .saturating_mul(8)
}

/// A checkpoint's shard of `sites` sites, its populations in logical order (none when
/// checkpoints are off).
fn checkpoint<M: Model, T: Real>(plan: &Plan, sites: u64) -> u64 {
    match plan.checkpoint_every {
        0 => 0,
        _ => sites.saturating_mul((M::Q * T::BYTES) as u64),
    }
}

/// One lattice of a process: `width` planes of `plane` sites.
struct Lattice {
    /// The names of its parts: populations, the device's copies (on a CPU adapter), boundaries.
    name: [&'static str; 3],
    width: usize,
    plane: usize,
    obstacles: bool,
    /// The GPU of the run is a CPU adapter: the device's copies are in the host's memory.
    device_in_host_memory: bool,
}

impl Lattice {
    /// `need` with this lattice's populations (two while a GPU's are uploaded or read back),
    /// the device's copies where they are the host's, and its boundaries.
    fn parts<M: Model, T: Real>(&self, need: Need, plan: &Plan) -> Need {
        let [populations, device, boundaries] = self.name;
        let (width, plane) = (self.width, self.plane);
        let gpu = plan.backend == BackendArg::Gpu;
        let need = need.with(
            populations,
            memory::populations::<M, T>(width, plane, plan.scheme, gpu),
        );
        let need = match self.device_in_host_memory {
            true => need.with(
                device,
                memory::populations::<M, T>(width, plane, plan.scheme, false),
            ),
            false => need,
        };
        need.with(
            boundaries,
            memory::boundaries::<M, T>(width, plane, self.obstacles),
        )
    }
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
    if world.group().ranks() > 1 {
        return lbm::mpi_ring::node_size(world.comm());
    }
    let _ = world;
    1
}
