//! Errors of the runtime: bad input is reported before any work is done, and a run that
//! diverges stops with the step and the site where it happened.

use crate::ParamError;

/// Everything that can go wrong when building or running a lattice.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LbmError {
    /// The lattice height is not a multiple of the layout's cluster width.
    #[error(
        "lattice height LY = {ly} is not a multiple of the cluster width VL = {vl} of layout \
         {layout}: choose LY as a multiple of {vl}, or a layout with a smaller VL"
    )]
    NotMultipleOfVl {
        /// The layout's name.
        layout: &'static str,
        /// The lattice height.
        ly: usize,
        /// The cluster width.
        vl: usize,
    },
    /// The lattice is too small for the model's stencil.
    #[error(
        "lattice {lx}×{ly} is too small for model {model} with halo {halo}: need LX ≥ {halo} \
         and LY/VL ≥ {halo} (LY ≥ {min_ly} with this layout)"
    )]
    TooSmall {
        /// The model's name.
        model: &'static str,
        /// Lattice width.
        lx: usize,
        /// Lattice height.
        ly: usize,
        /// The model's halo width.
        halo: usize,
        /// The smallest admissible height for this layout.
        min_ly: usize,
    },
    /// A model parameter is out of range (for example τ ≤ ½).
    #[error(transparent)]
    Param(#[from] ParamError),
    /// An initial value (or a value given to `set_*`) is NaN or infinite.
    #[error("initial state is not finite at site ({x}, {y}), {what}: {value}")]
    NonFinite {
        /// Site x.
        x: usize,
        /// Site y.
        y: usize,
        /// Which quantity (population index or moment name).
        what: String,
        /// The offending value.
        value: f64,
    },
    /// A site or array given by the caller has the wrong size or lies outside the lattice.
    #[error("{0}")]
    Shape(String),
    /// The boundary specification is inconsistent or does not fit the model.
    #[error("invalid boundary conditions: {0}")]
    Boundary(String),
    /// The run produced NaN or a velocity beyond the model's range.
    #[error(
        "the run diverged at step {step}, site ({x}, {y}): {reason}; reduce the velocity, \
         raise τ, or refine the lattice"
    )]
    Diverged {
        /// The step after which the check failed.
        step: u64,
        /// Site x.
        x: usize,
        /// Site y.
        y: usize,
        /// What was found.
        reason: String,
    },
}

impl LbmError {
    /// The error with the column of its site moved by `x0`: a slab's local column made the
    /// lattice's (the sites of [`LbmError::NonFinite`] and [`LbmError::Diverged`]).
    pub(crate) fn shifted(self, x0: usize) -> Self {
        match self {
            LbmError::NonFinite { x, y, what, value } => LbmError::NonFinite {
                x: x + x0,
                y,
                what,
                value,
            },
            LbmError::Diverged { step, x, y, reason } => LbmError::Diverged {
                step,
                x: x + x0,
                y,
                reason,
            },
            e => e,
        }
    }
}

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
    Gpu(#[from] crate::gpu::GpuError),
    /// The host/device split.
    #[cfg(feature = "gpu")]
    #[error(transparent)]
    Hetero(#[from] crate::hetero::HeteroError),
    /// The decomposition over ranks, or MPI.
    #[error(transparent)]
    Domain(#[from] crate::domain::DomainError),
    /// Writing or reading a checkpoint.
    #[error(transparent)]
    Checkpoint(#[from] crate::CheckpointError),
    /// More memory than the machine grants.
    #[error(transparent)]
    Memory(#[from] crate::memory::MemoryError),
    /// A finite-difference grid: its size, walls, parameters or divergence.
    #[error(transparent)]
    Fd(#[from] crate::fd::FdError),
}

impl Error {
    /// The lattice-level error inside, wherever it came from (a divergence reported by the
    /// device, say).
    pub fn as_lattice(&self) -> Option<&LbmError> {
        match self {
            Error::Lattice(e) => Some(e),
            #[cfg(feature = "gpu")]
            Error::Gpu(crate::gpu::GpuError::Lbm(e)) => Some(e),
            #[cfg(feature = "gpu")]
            Error::Hetero(crate::hetero::HeteroError::Gpu(crate::gpu::GpuError::Lbm(e))) => Some(e),
            Error::Domain(crate::domain::DomainError::Lattice(e)) => Some(e),
            Error::Checkpoint(crate::CheckpointError::Lattice(e)) => Some(e),
            _ => None,
        }
    }

    /// [`LbmError::shifted`] of the lattice-level error inside; any other error as it is.
    pub(crate) fn shifted(self, x0: usize) -> Self {
        match self.as_lattice() {
            Some(e) if x0 > 0 => Error::from(e.clone().shifted(x0)),
            _ => self,
        }
    }
}

/// Refuses an array of `what` of the wrong size.
pub(crate) fn check_values(got: usize, want: usize, what: &str) -> Result<(), LbmError> {
    if got != want {
        return Err(LbmError::Shape(format!(
            "{what}: got {got} values, expected {want}"
        )));
    }
    Ok(())
}
