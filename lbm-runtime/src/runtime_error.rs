//! The runtime's one error type, [`Error`], returned by every [`crate::Solver`], and the errors
//! of the parts it carries: the decomposition over processes ([`DomainError`]), the
//! finite-difference grids ([`FdError`]), the GPU backend ([`GpuError`]) and the host/device
//! split ([`HeteroError`]). Each says what went wrong and what to do instead. The lattice's own
//! errors ([`LbmError`]) are below every module; these are above the modules that return them.

use crate::{CheckpointError, LbmError};

/// The runtime's one error type, returned by every [`crate::Solver`]: a lattice-level error,
/// or one of a backend's, kept as its source.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Size, parameters, boundaries, initial state or divergence.
    #[error(transparent)]
    Lattice(#[from] LbmError),
    /// The GPU backend: adapter, shaders, device.
    #[cfg(feature = "gpu")]
    #[error(transparent)]
    Gpu(#[from] GpuError),
    /// The host/device split.
    #[cfg(feature = "gpu")]
    #[error(transparent)]
    Hetero(#[from] HeteroError),
    /// The decomposition over ranks, or MPI.
    #[error(transparent)]
    Domain(#[from] DomainError),
    /// Writing or reading a checkpoint.
    #[error(transparent)]
    Checkpoint(#[from] CheckpointError),
    /// More memory than the machine grants.
    #[error(transparent)]
    Memory(#[from] crate::memory::MemoryError),
    /// A finite-difference grid: its size, walls, parameters or divergence.
    #[error(transparent)]
    Fd(#[from] FdError),
}

impl Error {
    /// The lattice-level error inside, wherever it came from (a divergence reported by the
    /// device, say).
    pub fn as_lattice(&self) -> Option<&LbmError> {
        match self {
            Error::Lattice(e) => Some(e),
            #[cfg(feature = "gpu")]
            Error::Gpu(GpuError::Lbm(e)) => Some(e),
            #[cfg(feature = "gpu")]
            Error::Hetero(HeteroError::Gpu(GpuError::Lbm(e))) => Some(e),
            Error::Domain(DomainError::Lattice(e)) => Some(e),
            Error::Checkpoint(CheckpointError::Lattice(e)) => Some(e),
            _ => None,
        }
    }

    /// [`LbmError::shifted`] of the lattice-level error inside; any other error as it is.
    #[cfg(feature = "gpu")]
    pub(crate) fn shifted(self, x0: usize) -> Self {
        match self.as_lattice() {
            Some(e) if x0 > 0 => Error::from(e.clone().shifted(x0, |s| s)),
            _ => self,
        }
    }
}

/// Why a decomposed lattice cannot be built or run.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum DomainError {
    /// No ranks to split over.
    #[error("cannot split a lattice over 0 ranks")]
    NoRanks,
    /// A slab would be narrower than the halo it must fill on its neighbours.
    #[error(
        "a lattice of width LX = {lx} cannot be split over {ranks} ranks with model {model}: \
         each slab needs at least {min_width} columns (the halo width), so run on at most \
         {max_ranks} ranks or widen the lattice"
    )]
    TooManyRanks {
        /// The global lattice width.
        lx: usize,
        /// The requested number of ranks.
        ranks: usize,
        /// The model's name.
        model: &'static str,
        /// The narrowest admissible slab.
        min_width: usize,
        /// The most ranks this lattice supports.
        max_ranks: usize,
    },
    /// A cut whose block count is not the process count, or whose blocks would be thinner
    /// than the halo along a cut axis (or that cuts an axis a 2-D lattice does not have).
    #[error(
        "a lattice of {nodes:?} sites cannot be cut {cut} over {ranks} process{} with model \
         {model}: {reason}",
        if *.ranks == 1 { "" } else { "es" }
    )]
    BadCut {
        /// The global lattice's sites per axis.
        nodes: [usize; 3],
        /// The cut asked for (`AxBxC`).
        cut: String,
        /// The processes.
        ranks: usize,
        /// The model's name.
        model: &'static str,
        /// What is wrong, and what to do.
        reason: String,
    },
    /// Another rank failed (building its slab, a check): every rank stops with its message.
    #[error("rank {rank} failed: {message}")]
    OtherRank {
        /// The lowest rank that failed.
        rank: usize,
        /// Its error.
        message: String,
    },
    /// An MPI call failed or MPI could not be initialised.
    #[error("MPI: {0}")]
    Mpi(String),
    /// The slab or the global lattice could not be built.
    #[error(transparent)]
    Lattice(#[from] LbmError),
}

/// What is wrong with a grid, its walls or its parameters, or that the run diverged.
#[derive(Debug, thiserror::Error)]
pub enum FdError {
    #[error("{0}")]
    Setup(String),
    #[error("the {scheme} scheme diverged before step {step}: {unknown} is not finite at node {node:?}; reduce the time step (it is {dt})")]
    Diverged {
        scheme: &'static str,
        step: u64,
        unknown: &'static str,
        node: [usize; 3],
        dt: f64,
    },
    /// A checkpoint could not be written, or cannot be resumed.
    #[error(transparent)]
    Checkpoint(#[from] crate::CheckpointError),
    /// Another process of the run failed (its message), or the exchange between them did.
    #[error("{0}")]
    OtherRank(String),
}

/// Why a split lattice cannot be built or run.
#[cfg(feature = "gpu")]
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum HeteroError {
    /// `M` leaves a part narrower than the halo, or exceeds half the lattice.
    #[error(
        "M = {m} host border columns cannot split a lattice (or a rank's slab) of width \
         LX = {lx} with model \
         {model} (halo H = {halo}): M must be 0 (device only), LX/2 (host only, LX even), or \
         leave both parts at least H wide (2M ≥ H and LX − 2M ≥ H); admissible M: {admissible}"
    )]
    BadColumns {
        /// The requested border width.
        m: usize,
        /// The lattice width.
        lx: usize,
        /// The model's name.
        model: &'static str,
        /// The model's halo width.
        halo: usize,
        /// The admissible values, as ranges.
        admissible: String,
    },
    /// A host share outside `[0, 1]`.
    #[error("host share {0} is not a fraction in [0, 1]: give 2M/LX, e.g. 0.25")]
    BadShare(f64),
    /// The device, the lattice, or a divergence.
    #[error(transparent)]
    Gpu(#[from] GpuError),
}

#[cfg(feature = "gpu")]
impl From<LbmError> for HeteroError {
    fn from(e: LbmError) -> Self {
        Self::Gpu(e.into())
    }
}

/// Everything that can go wrong when choosing an adapter, building shaders or running a
/// [`crate::gpu::GpuLattice`].
#[cfg(feature = "gpu")]
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum GpuError {
    /// No adapter at all (no Vulkan, Metal or DX12 driver).
    #[error(
        "no GPU adapter found (backends tried: {backends}); install a Vulkan driver — on a \
         machine without a GPU, Mesa's lavapipe (Debian package mesa-vulkan-drivers) is a \
         software Vulkan device"
    )]
    NoAdapter {
        /// The backends that were enumerated.
        backends: String,
    },
    /// An adapter was asked for by name or type and none matches.
    #[error("no adapter matches {wanted}; available: {available}")]
    AdapterNotFound {
        /// What was asked for.
        wanted: String,
        /// The adapters that exist, described.
        available: String,
    },
    /// f64 was requested on an adapter that cannot run f64 shaders.
    #[error(
        "adapter `{adapter}` has no SHADER_F64 feature: f64 lattices cannot run on it; use f32, \
         or choose an adapter with f64 support (lavapipe has it)"
    )]
    NoF64 {
        /// The adapter's name.
        adapter: String,
    },
    /// The lattice does not fit the device's limits.
    #[error(
        "lattice {} of {model} ({precision}) is too large for adapter `{adapter}`: \
         {reason}; at most about {max_sites} sites fit (e.g. {})",
        sides(*.size),
        example(*.max_sites, .size[2])
    )]
    TooLarge {
        /// The model's name.
        model: &'static str,
        /// `f32` or `f64`.
        precision: &'static str,
        /// The lattice's sides `[LX, LY, LZ]` (`LZ = 1` in 2-D).
        size: [usize; 3],
        /// The adapter's name.
        adapter: String,
        /// Which limit is exceeded.
        reason: String,
        /// The largest number of sites that fits.
        max_sites: u64,
    },
    /// The layout's addressing is not affine in (population, column, cluster), so it cannot
    /// be transcribed into WGSL by [`crate::gpu::layout::AffineLayout`].
    #[error("layout {layout} cannot be transcribed to WGSL: {reason}")]
    Layout {
        /// The layout's name.
        layout: &'static str,
        /// What the probe found.
        reason: String,
    },
    /// A composed shader failed naga's parser or validator (a bug of the composer; the message
    /// carries naga's diagnostic with the offending line).
    #[error("composed WGSL shader ({what}) is invalid:\n{message}")]
    Shader {
        /// Which shader (model, layout, precision).
        what: String,
        /// naga's diagnostic.
        message: String,
    },
    /// The device refused a request (device creation, out of memory, a lost device, a failed
    /// buffer mapping).
    #[error("GPU device error: {0}")]
    Device(String),
    /// Writing or restoring a checkpoint failed (the message of the
    /// [`crate::CheckpointError`]).
    #[error("{0}")]
    Checkpoint(String),
    /// A lattice-level error (bad size, parameters, boundaries, divergence).
    #[error(transparent)]
    Lbm(#[from] LbmError),
}

/// `LX×LY`, or `LX×LY×LZ` in 3-D.
#[cfg(feature = "gpu")]
pub(crate) fn sides([lx, ly, lz]: [usize; 3]) -> String {
    if lz == 1 {
        format!("{lx}×{ly}")
    } else {
        format!("{lx}×{ly}×{lz}")
    }
}

/// A square (`lz = 1`) or cubic lattice of at most `max_sites` sites.
#[cfg(feature = "gpu")]
fn example(max_sites: u64, lz: usize) -> String {
    let n = if lz == 1 { 2 } else { 3 };
    let side = (max_sites as f64).powf(1.0 / n as f64) as usize;
    sides([side, side, if n == 2 { 1 } else { side }])
}
