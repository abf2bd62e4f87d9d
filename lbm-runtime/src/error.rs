//! The errors of a lattice: bad input is reported before any work is done, and a run that
//! diverges stops with the step and the site where it happened. Every module may return
//! them; the runtime's one error type, which also carries each backend's, is
//! [`crate::runtime_error::Error`].

/// A parameter value the collision cannot run with (for example τ ≤ ½).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("invalid parameter `{name}` = {value} of model {model}: {reason}")]
pub struct ParamError {
    /// The model the parameters were given to.
    pub model: &'static str,
    /// The parameter (or derived rate) that is out of range.
    pub name: String,
    /// Its value.
    pub value: f64,
    /// What is wrong and what to do instead.
    pub reason: String,
}

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
    /// The error with the column of its site moved by `x0` and its plane site mapped by
    /// `site`: a block's local site made the lattice's (the sites of [`LbmError::NonFinite`]
    /// and [`LbmError::Diverged`]).
    pub(crate) fn shifted(self, x0: usize, site: impl Fn(usize) -> usize) -> Self {
        match self {
            LbmError::NonFinite { x, y, what, value } => LbmError::NonFinite {
                x: x + x0,
                y: site(y),
                what,
                value,
            },
            LbmError::Diverged { step, x, y, reason } => LbmError::Diverged {
                step,
                x: x + x0,
                y: site(y),
                reason,
            },
            e => e,
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
