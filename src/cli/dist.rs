//! `lbm run` under `mpiexec -n N` (feature `mpi`): the lattice cut into slabs over the ranks
//! in a ring ([`lbm::distributed::DistLattice`], Calore et al. 2016 §4–5), each rank running its slab on the
//! rank-local backend asked for — the host (`cpu`), its GPU (`gpu`, the halo columns passing
//! through the host) or both (`hetero`: the slab's borders on the host, its bulk on the GPU,
//! the split tuned per rank with the ring's exchange in the balance) — and driven by the same
//! loop as a single process. Rank 0 gathers the
//! fields for outputs and the populations for checkpoints (which hold the whole lattice, so
//! they resume on any number of ranks); every decision that changes the sequence of
//! collective calls (chunk length, stop, a failed write) is agreed by all ranks, so no rank
//! waits for another that has left.

use std::sync::Arc;

use lbm::cases::{Case, global_spec};
use lbm::distributed::{DistLattice, exchange_seconds};
use lbm::domain::{GlobalSpec, Slab};
use lbm::gpu::{GpuContext, GpuOptions, GpuSlab};
use lbm::hetero::{SplitChoice, SplitSlab};
use lbm::{Layout, LayoutKind, Model, Real, Soa};

use super::CliError;
use super::lattice_run::start_and_drive;
use super::plan::{Plan, Resume, gpu_options};
use super::settings::BackendArg;
use super::world::World;

/// Runs `case` over the ranks of `world`, each rank's slab on its host (`cpu`) or split
/// between its host and its GPU (`hetero`), from `checkpoint` when given.
pub fn run_host<C: Case, L: Layout, T: Real>(
    world: &World,
    plan: &Plan,
    case: &C,
    device: Option<Arc<GpuContext>>,
    checkpoint: Resume<'_, C::Model, T>,
) -> Result<(), CliError> {
    let spec = global_spec(case);
    if plan.backend != BackendArg::Hetero {
        let lat = host_ring::<C::Model, L, T>(world, plan, spec)?;
        return start_and_drive(plan, case, lat, checkpoint);
    }
    let lat = split_ring::<C::Model, L, T>(world, plan, spec, &device)?;
    start_and_drive(plan, case, lat, checkpoint)
}

/// The lattice `spec` over the ranks of `world`, each rank's slab on its host.
pub fn host_ring<M: Model, L: Layout, T: Real>(
    world: &World,
    plan: &Plan,
    spec: GlobalSpec<M>,
) -> Result<DistLattice<M, L, T>, CliError> {
    Ok(DistLattice::with_slab(world.carrier(), spec, |s, d, r| {
        Ok(Slab::new(s, d, r, plan.scheme)?)
    })?)
}

/// A lattice over MPI ranks, each rank's slab split between its host and its GPU.
pub type SplitRing<M, L, T> = DistLattice<M, L, T, SplitSlab<M, L, T>>;

/// The lattice `spec` over the ranks of `world`, each rank's slab split between its host and
/// its GPU (`device`, or the node's adapter opened again) as `plan.split` says; tuned per rank
/// with the ring's halo exchange in the balance.
pub fn split_ring<M: Model, L: Layout, T: Real>(
    world: &World,
    plan: &Plan,
    spec: GlobalSpec<M>,
    device: &Option<Arc<GpuContext>>,
) -> Result<SplitRing<M, L, T>, CliError> {
    let opts = node_options(world, &gpu_options(plan));
    let t_c = match plan.split {
        SplitChoice::Auto => {
            let len = M::HALO * spec.plane() * M::Q;
            exchange_seconds(&*world.carrier::<T>(), len, EXCHANGE_PROBES) / spec.plane() as f64
        }
        _ => 0.0,
    };
    Ok(DistLattice::with_slab(world.carrier(), spec, |s, d, r| {
        let ctx = opened(device, &opts)?;
        SplitSlab::new(&ctx, s, d, r, plan.scheme, (plan.split, t_c))
    })?)
}

/// Runs `case` over the ranks of `world`, each rank's slab on its GPU in `layout` (the halo
/// columns passing through the host), from `checkpoint` when given.
pub fn run_gpu<C: Case, T: Real>(
    world: &World,
    plan: &Plan,
    case: &C,
    layout: LayoutKind,
    device: Option<Arc<GpuContext>>,
    checkpoint: Resume<'_, C::Model, T>,
) -> Result<(), CliError> {
    let lat = gpu_ring::<C::Model, T>(world, plan, global_spec(case), layout, &device)?;
    start_and_drive(plan, case, lat, checkpoint)
}

/// The lattice `spec` over the ranks of `world`, each rank's slab on its GPU (`device`, or the
/// node's adapter opened again) in `layout`.
pub fn gpu_ring<M: Model, T: Real>(
    world: &World,
    plan: &Plan,
    spec: GlobalSpec<M>,
    layout: LayoutKind,
    device: &Option<Arc<GpuContext>>,
) -> Result<DistLattice<M, Soa, T, GpuSlab<M, T>>, CliError> {
    let opts = node_options(world, &gpu_options(plan));
    // The ring's host-side windows (moments read back by windows) use SoA, whatever the
    // device's layout: one instantiation per model and precision.
    Ok(DistLattice::with_slab(world.carrier(), spec, |s, d, r| {
        let ctx = opened(device, &opts)?;
        GpuSlab::new(&ctx, layout, s, d, r, plan.scheme)
    })?)
}

/// Halo exchanges timed to tune the ranks' host/device splits (`T_mpi`, Calore et al. 2019, eq. 7).
pub(super) const EXCHANGE_PROBES: usize = 9;

/// This rank's GPU (the node's adapters taken in turn by its ranks), opened before the memory
/// check so that a CPU adapter's copies are counted as the host's; `None` when it does not
/// open (the slab's construction then reports why, agreed by the ring).
pub fn open_gpu(world: &World, plan: &Plan) -> Option<Arc<GpuContext>> {
    GpuContext::new(&node_options(world, &gpu_options(plan)))
        .ok()
        .map(Arc::new)
}

/// The GPU opened before, or the error of opening it again.
fn opened(
    device: &Option<Arc<GpuContext>>,
    opts: &GpuOptions,
) -> Result<Arc<GpuContext>, lbm::Error> {
    match device {
        Some(ctx) => Ok(ctx.clone()),
        None => Ok(Arc::new(GpuContext::new(opts)?)),
    }
}

/// The GPU options of this rank: the node's adapters taken in turn by its ranks.
fn node_options(world: &World, opts: &GpuOptions) -> GpuOptions {
    GpuOptions {
        node_rank: world.node_rank(),
        ..opts.clone()
    }
}
