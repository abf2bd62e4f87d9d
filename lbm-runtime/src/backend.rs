//! One way to build a lattice, whatever runs it: a [`GlobalSpec`] (size, parameters,
//! boundaries), a streaming [`Scheme`], the processes of a group and a [`Backend`] — the host,
//! a GPU, or the host/device split of Calore et al. (2019, §5–6) — make the [`Solver`] that
//! runs it ([`build`]): a [`crate::distributed::DistLattice`] of the blocks of the processes,
//! each on that backend and its own device (the GPUs of a node taken in turn by its
//! processes, [`GpuOptions::node_rank`]). One process runs one block, the whole lattice, which
//! exchanges nothing and steps as a whole lattice does
//! ([`crate::SlabBackend::steps_alone`]).
//!
//! The finite-difference grids are built the same way ([`build_fd`]): a [`FdSpec`], the blocks
//! of the processes and a backend make the `Box<dyn FdRun>` that marches it; their host/device
//! split is a placement, each block three members of the group ([`fd_parts`]).
//!
//! The lattice comes as a `Box<dyn Solver>`: what drives it (the time loop, outputs,
//! checkpoints) is compiled once per model and precision, not once per backend and layout.

use crate::blocks::{Blocks, Decomposition};
use crate::distributed::DistLattice;
use crate::domain::GlobalSpec;
use crate::fd::{FdGrid, FdLayout, FdRun, FdScheme, FdSpec};
use crate::group::{Carrier, Transfers};
use crate::{Error, Layout, Model, Real, Scheme, SlabBackend, Solver};
#[cfg(feature = "gpu")]
use {
    crate::blocks::Cut,
    crate::distributed::{exchange_seconds, EXCHANGE_PROBES},
    crate::fd::FdError,
    crate::gpu::{GpuContext, GpuOptions},
    crate::hetero::SplitChoice,
    crate::LayoutKind,
    std::sync::Arc,
};

/// A lattice run by some backend, as [`build`] makes it.
pub type BoxedSolver<M, T> = Box<dyn Solver<Model = M, Real = T>>;

/// This process's GPU: opened once, before anything is allocated, so that what it is (a CPU
/// adapter shares the host's memory) is known to the memory check; where it did not open,
/// opened again when a lattice is built, so that the error reaches every process of the
/// group together (their construction agrees on errors).
#[cfg(feature = "gpu")]
#[derive(Clone)]
pub struct Gpu(Result<Arc<GpuContext>, GpuOptions>);

#[cfg(feature = "gpu")]
impl Gpu {
    /// The adapter `options` choose, opened if it can be.
    pub fn open(options: GpuOptions) -> Self {
        match GpuContext::new(&options) {
            Ok(ctx) => Self(Ok(Arc::new(ctx))),
            Err(_) => Self(Err(options)),
        }
    }

    /// The device, or the error of opening it.
    pub fn context(&self) -> Result<Arc<GpuContext>, Error> {
        match &self.0 {
            Ok(ctx) => Ok(ctx.clone()),
            Err(options) => Ok(Arc::new(GpuContext::new(options)?)),
        }
    }

    /// Whether its copies live in the host's memory (a CPU adapter such as lavapipe).
    pub fn in_host_memory(&self) -> bool {
        self.0.as_ref().is_ok_and(|ctx| ctx.is_cpu())
    }
}

/// A device opened before.
#[cfg(feature = "gpu")]
impl From<Arc<GpuContext>> for Gpu {
    fn from(ctx: Arc<GpuContext>) -> Self {
        Self(Ok(ctx))
    }
}

/// What updates the sites of each process.
#[derive(Clone)]
pub enum Backend {
    /// The host's cores, in the layout of [`build`]'s `L`.
    Host,
    /// The GPU, its populations in `layout`.
    #[cfg(feature = "gpu")]
    Device {
        /// The device.
        gpu: Gpu,
        /// The populations' layout on the device.
        layout: LayoutKind,
    },
    /// The border columns on the host (layout `L`), the bulk on the GPU, split as `choice`
    /// says; [`SplitChoice::Auto`] puts the group's halo exchange in the balance.
    #[cfg(feature = "gpu")]
    Split {
        /// The device.
        gpu: Gpu,
        /// How many columns the host takes.
        choice: SplitChoice,
    },
}

impl Backend {
    /// Whether the device's copies live in the host's memory (a CPU adapter), where the
    /// memory a run needs counts them as the host's.
    pub fn in_host_memory(&self) -> bool {
        match self {
            Self::Host => false,
            #[cfg(feature = "gpu")]
            Self::Device { gpu, .. } | Self::Split { gpu, .. } => gpu.in_host_memory(),
        }
    }
}

/// The lattice `spec` over the processes of `group` cut as `blocks` says (one block per
/// process: `Cut::along(0, n)` the ring of slabs, [`Cut::balanced`] blocks along every axis,
/// [`Decomposition::Sparse`] the blocks that hold fluid), at rest,
/// run in `scheme` by `backend` (collective over `group`: every check fails on every process
/// alike). The host's populations, and the host part of a split, are laid out in `L`; a GPU's
/// layout is data ([`Backend::Device`]).
///
/// A group of several processes needs the `mpi` feature: a build without it runs one process,
/// one block.
pub fn build<M: Model, L: Layout, T: Real>(
    group: Box<dyn Carrier<T>>,
    spec: GlobalSpec<M>,
    blocks: Decomposition,
    scheme: Scheme,
    backend: &Backend,
) -> Result<BoxedSolver<M, T>, Error> {
    #[cfg(not(feature = "mpi"))]
    if group.ranks() > 1 || matches!(blocks, Decomposition::Sparse(_)) {
        return Err(without_mpi(&spec, group.ranks(), blocks));
    }
    /// The job that boxes the ring.
    struct Boxed;
    impl<M: Model, T: Real> RingJob<M, T> for Boxed {
        type Output = BoxedSolver<M, T>;
        fn run<L: Layout, P: SlabBackend<Model = M, Real = T> + 'static>(
            self,
            ring: DistLattice<M, L, T, P>,
        ) -> Result<Self::Output, Error> {
            Ok(Box::new(ring))
        }
    }
    on_ring::<M, L, T, _>(group, spec, blocks, scheme, backend, Boxed)
}

/// What is done with a lattice over processes, whatever its slabs run on ([`on_ring`]): the
/// builder boxes it, a benchmark times its step with and without the exchange
/// ([`DistLattice::bench`]), a test checks it.
pub trait RingJob<M: Model, T: Real> {
    /// What the job gives.
    type Output;
    /// Does the job on `ring`, its slabs on `P` (the host's sites in `L`).
    fn run<L: Layout, P: SlabBackend<Model = M, Real = T> + 'static>(
        self,
        ring: DistLattice<M, L, T, P>,
    ) -> Result<Self::Output, Error>;
}

/// The lattice `spec` over the processes of `group` cut `cut` ([`DistLattice`]), at rest, run
/// in `scheme`, this process's block on `backend` (collective over `group`), handed to `job`:
/// the one place that makes each kind of slab. The blocks may be cut along any axis or be a
/// sparse domain's, on every backend (a split's block is cut along x into its host and device
/// parts). A GPU's and a split's rings gather into SoA whatever the device's layout,
/// and a split's host parts are made by [`crate::hetero::HostLayout::of`] in `L`: the ring and
/// the split are compiled once per model and precision. A split's balance
/// ([`SplitChoice::Auto`]) takes the exchange of the largest block's cut faces per row of its
/// planes, `T_mpi` of Calore et al. (2019, eq. 7), timed here.
pub fn on_ring<M: Model, L: Layout, T: Real, J: RingJob<M, T>>(
    group: Box<dyn Carrier<T>>,
    spec: GlobalSpec<M>,
    blocks: Decomposition,
    scheme: Scheme,
    backend: &Backend,
    job: J,
) -> Result<J::Output, Error> {
    match backend {
        Backend::Host => job.run(DistLattice::<M, L, T>::new(group, spec, blocks, scheme)?),
        #[cfg(feature = "gpu")]
        Backend::Device { gpu, layout } => job.run(DistLattice::<M, crate::Soa, T, _>::on_blocks(
            group,
            spec,
            blocks,
            |s, d, r| crate::gpu::GpuSlab::new(&gpu.context()?, *layout, s, d, r, scheme),
        )?),
        #[cfg(feature = "gpu")]
        Backend::Split { gpu, choice } => {
            // `T_mpi` of eq. 7 per stored row of a block's planes (the rows its split is
            // timed on): an exchange of as many values as the largest block sends a step
            // across its cut faces, timed around the ring.
            // A lattice of one block exchanges nothing.
            let t_c = match choice {
                SplitChoice::Auto => {
                    let size = spec.size();
                    let l = blocks.largest_block(size);
                    let frame = crate::domain::Frame::of::<M>(size, &l.map(|n| 0..n), L::VL);
                    let values = frame.halo_nodes::<M>(blocks.grid(size)) * M::Q;
                    let rows = (frame.stored[1] * frame.stored[2]).max(1) as f64;
                    match values {
                        0 => 0.0,
                        _ => exchange_seconds(&*group, values.div_ceil(2), EXCHANGE_PROBES) / rows,
                    }
                }
                _ => 0.0,
            };
            let host = crate::hetero::HostLayout::of::<L>();
            job.run(DistLattice::<M, crate::Soa, T, _>::on_blocks(
                group,
                spec,
                blocks,
                |s, d, r| {
                    let ctx = gpu.context()?;
                    crate::hetero::SplitSlab::new(&ctx, (s, host), (d, r), scheme, (*choice, t_c))
                },
            )?)
        }
    }
}

/// Without the `mpi` feature a process is alone: the refusal of a group of `ranks`, or of a
/// sparse domain (whose own refusal, the processes it needs, comes first).
#[cfg(not(feature = "mpi"))]
fn without_mpi<M: Model>(spec: &GlobalSpec<M>, ranks: usize, blocks: Decomposition) -> Error {
    let what = match blocks {
        Decomposition::Sparse(size) => {
            match crate::domain::sparse_blocks(spec, size, Some(ranks)) {
                Err(e) => return e.into(),
                Ok(_) => "a sparse domain's block".to_string(),
            }
        }
        Decomposition::Cut(_) => format!("a lattice over {ranks} processes"),
    };
    crate::LbmError::Shape(format!(
        "{what} needs the runtime's `mpi` feature; this build runs one process, whole (build \
         with `--features mpi` and run under mpiexec)"
    ))
    .into()
}

/// The grid `spec` of the finite-difference scheme `S` cut into `blocks` among the processes
/// of `group`: this process's block on `backend`, its unknowns zero (collective over `group`:
/// every check fails on every process alike), its unknowns stored in `layout` on the host and
/// on a GPU alike.
///
/// The host/device split is a placement of blocks: each of the `blocks` (cut along the
/// outermost axis alone) runs as three members of `group` in turn — its first planes along
/// that axis on the host, its bulk on the device, its last planes on the host ([`fd_parts`]
/// members a block, each on a thread of its own: [`crate::group::Threads`] in one process,
/// `lbm::group::RankThreads` (feature `mpi`) over MPI ranks), [`fd_host_planes`] planes at each end.
pub fn build_fd<S: FdScheme, T: Real>(
    group: Box<dyn Transfers<T>>,
    spec: FdSpec<S>,
    blocks: Blocks,
    layout: FdLayout,
    backend: &Backend,
) -> Result<Box<dyn FdRun>, Error> {
    let FdSpec {
        nodes,
        h,
        params,
        sides,
    } = spec;
    Ok(match backend {
        Backend::Host => Box::new(
            FdGrid::<S, T>::on_blocks(nodes, h, params, sides, group, blocks)?.with_layout(layout),
        ),
        #[cfg(feature = "gpu")]
        Backend::Device { gpu, .. } => {
            // Every process opens its device, or none goes on.
            let ctx = crate::group::agree(&*group, gpu.context())?;
            Box::new(crate::gpu::GpuFdGrid::<S, T>::on_blocks(
                ctx,
                nodes,
                h,
                params,
                sides,
                (group, blocks),
                layout,
            )?)
        }
        #[cfg(feature = "gpu")]
        Backend::Split { gpu, choice } => {
            let parts = split_parts::<S, T>(nodes, &blocks, group.ranks(), *choice)?;
            // The device's part of each block opens the device, or none goes on.
            let on_device = group.rank() % SPLIT_PARTS == 1;
            let ctx = crate::group::agree(&*group, on_device.then(|| gpu.context()).transpose())?;
            match ctx {
                Some(ctx) => Box::new(crate::gpu::GpuFdGrid::<S, T>::on_blocks(
                    ctx,
                    nodes,
                    h,
                    params,
                    sides,
                    (group, parts),
                    layout,
                )?),
                None => Box::new(
                    FdGrid::<S, T>::on_blocks(nodes, h, params, sides, group, parts)?
                        .with_layout(layout),
                ),
            }
        }
    })
}

/// Members of a group a block of a finite-difference grid runs as, on `backend`: three on the
/// host/device split (its two borders and its bulk), else one.
pub fn fd_parts(backend: &Backend) -> usize {
    match backend {
        #[cfg(feature = "gpu")]
        Backend::Split { .. } => SPLIT_PARTS,
        _ => 1,
    }
}

/// The parts of a block of the finite-difference split: host, device, host.
#[cfg(feature = "gpu")]
const SPLIT_PARTS: usize = 3;

/// The planes at each end of a block of `planes` planes that the finite-difference split of
/// `S` puts on the host: [`SplitChoice::Columns`] of them, a [`SplitChoice::HostShare`] of
/// the block, or under [`SplitChoice::Auto`] the fewest its stencils allow.
#[cfg(feature = "gpu")]
pub fn fd_host_planes<S: FdScheme, T: Real>(choice: SplitChoice, planes: usize) -> usize {
    match choice {
        SplitChoice::Columns(m) => m,
        SplitChoice::HostShare(share) => (share * planes as f64 / 2.0).round() as usize,
        SplitChoice::Auto => FdGrid::<S, T>::least_planes(),
    }
}

/// The blocks of the split's parts, three for each of `blocks` along the outermost axis (a
/// group of `members`, three a block), or why it cannot be cut so.
#[cfg(feature = "gpu")]
fn split_parts<S: FdScheme, T: Real>(
    nodes: [usize; 3],
    blocks: &Blocks,
    members: usize,
    choice: SplitChoice,
) -> Result<Blocks, Error> {
    let outer = S::DIM - 1;
    let axis = ["x", "y", "z"][outer];
    let count = blocks.count();
    if members != SPLIT_PARTS * count || blocks.cut() != Cut::along(outer, count) {
        return Err(refused::<S>(format!(
            "the host/device split runs each block of a cut along {axis} as three members of \
             the group (its first and last planes on the host, its bulk on the device): {} \
             blocks cut {} need a cut along {axis} alone and {} members, not {members}",
            count,
            blocks.cut(),
            SPLIT_PARTS * count
        )));
    }
    let least = FdGrid::<S, T>::least_planes();
    let planes = (0..count)
        .map(|b| blocks.range(b, outer).len())
        .min()
        .unwrap_or(0);
    let host_planes = fd_host_planes::<S, T>(choice, planes);
    if host_planes < least || planes < 2 * host_planes + least {
        return Err(refused::<S>(format!(
            "the host/device split needs at least {least} planes along {axis} on the host at \
             each end of a block and {least} on the device (its stencils reach {}); {planes} \
             planes cannot be cut so with {host_planes} on the host: give between {least} and \
             {} host planes{}",
            S::REACH,
            planes.saturating_sub(least) / 2,
            if planes < 3 * least {
                ", and more nodes"
            } else {
                ""
            }
        )));
    }
    let bounds = std::iter::once(0)
        .chain((0..count).flat_map(|b| {
            let r = blocks.range(b, outer);
            [r.start + host_planes, r.end - host_planes, r.end]
        }))
        .collect();
    Ok(Blocks::along(nodes, outer, bounds))
}

/// A backend's refusal of a grid of `S`.
#[cfg(feature = "gpu")]
fn refused<S: FdScheme>(why: String) -> Error {
    FdError::Setup(format!("{}: {why}", S::NAME)).into()
}

#[cfg(test)]
#[path = "backend_tests.rs"]
mod tests;
