//! Errors of the GPU backend: each says what went wrong and what to do instead.

use crate::LbmError;

/// Everything that can go wrong when choosing an adapter, building shaders or running a
/// [`super::GpuLattice`].
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
    /// be transcribed into WGSL by [`super::layout::AffineLayout`].
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
pub(crate) fn sides([lx, ly, lz]: [usize; 3]) -> String {
    if lz == 1 {
        format!("{lx}×{ly}")
    } else {
        format!("{lx}×{ly}×{lz}")
    }
}

/// A square (`lz = 1`) or cubic lattice of at most `max_sites` sites.
fn example(max_sites: u64, lz: usize) -> String {
    let n = if lz == 1 { 2 } else { 3 };
    let side = (max_sites as f64).powf(1.0 / n as f64) as usize;
    sides([side, side, if n == 2 { 1 } else { side }])
}
