//! `lbm run` under `mpiexec -n N` (feature `mpi`): the lattice cut into slabs over the ranks
//! in a ring ([`lbm::mpi_ring::DistLattice`], seed 003 §4–5), each rank running its slab on the
//! rank-local backend asked for — the host (`cpu`), its GPU (`gpu`, the halo columns passing
//! through the host) or both (`hetero`: the slab's borders on the host, its bulk on the GPU,
//! the split tuned per rank with the ring's exchange in the balance) — and driven by the same
//! loop as a single process. Rank 0 gathers the
//! fields for outputs and the populations for checkpoints (which hold the whole lattice, so
//! they resume on any number of ranks); every decision that changes the sequence of
//! collective calls (chunk length, stop, a failed write) is agreed by all ranks, so no rank
//! waits for another that has left.

use std::sync::Arc;

use lbm::cases::{global_spec, Case};
use lbm::domain::Slab;
use lbm::gpu::{GpuContext, GpuOptions, GpuSlab};
use lbm::hetero::{SplitChoice, SplitSlab};
use lbm::mpi_ring::{self, DistLattice};
use lbm::{Layout, Model, Real};

use super::run::{start_and_drive, Plan, Resume};
use super::settings::BackendArg;
use super::world::World;
use super::CliError;

/// Runs `case` over the ranks of `world` on the plan's rank-local backend, from `checkpoint`
/// when given.
pub fn run<C: Case, L: Layout, T: Real>(
    world: &World,
    plan: &Plan,
    case: &C,
    opts: &GpuOptions,
    checkpoint: Resume<'_, C::Model, T>,
) -> Result<(), CliError> {
    let spec = global_spec(case);
    match plan.backend {
        BackendArg::Cpu => {
            let lat = DistLattice::<C::Model, L, T>::with_slab(world.comm(), spec, |s, d, r| {
                Ok(Slab::new(s, d, r, plan.scheme)?)
            })?;
            start_and_drive(plan, case, lat, checkpoint)
        }
        BackendArg::Gpu => {
            let opts = node_options(world, opts);
            let lat = DistLattice::<C::Model, L, T, GpuSlab<C::Model, L, T>>::with_slab(
                world.comm(),
                spec,
                |s, d, r| {
                    let ctx = Arc::new(GpuContext::new(&opts)?);
                    GpuSlab::new(&ctx, s, d, r, plan.scheme)
                },
            )?;
            start_and_drive(plan, case, lat, checkpoint)
        }
        BackendArg::Hetero => {
            let opts = node_options(world, opts);
            let t_c = match plan.split {
                SplitChoice::Auto => {
                    let len = C::Model::HALO * spec.plane() * C::Model::Q;
                    mpi_ring::exchange_seconds::<T>(world.comm(), len, EXCHANGE_PROBES)?
                        / spec.plane() as f64
                }
                _ => 0.0,
            };
            let lat = DistLattice::<C::Model, L, T, SplitSlab<C::Model, L, T>>::with_slab(
                world.comm(),
                spec,
                |s, d, r| {
                    let ctx = Arc::new(GpuContext::new(&opts)?);
                    SplitSlab::new(&ctx, s, d, r, plan.scheme, (plan.split, t_c))
                },
            )?;
            start_and_drive(plan, case, lat, checkpoint)
        }
    }
}

/// Halo exchanges timed to tune the ranks' host/device splits (`T_mpi`, seed 000 eq. 7).
pub(super) const EXCHANGE_PROBES: usize = 9;

/// The GPU options of this rank: the node's adapters taken in turn by its ranks.
fn node_options(world: &World, opts: &GpuOptions) -> GpuOptions {
    GpuOptions {
        node_rank: mpi_ring::node_rank(world.comm()),
        ..opts.clone()
    }
}
