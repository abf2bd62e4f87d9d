//! Explicit finite-difference schemes on structured grids: the trait that `fd_scheme!`
//! implements, and the grid that runs it ([`FdGrid`]).
//!
//! A scheme gives the rates `∂t φ = R(φ)` of its unknowns at a node from the unknowns at the
//! node and its neighbours (the difference operators are inside `R`, generated and proved by
//! the macro). The grid is node-centred: `n` nodes along an axis of spacing `h`, the first and
//! last on the walls where the axis is bounded ([`Side::Wall`]), or `n` nodes of a period
//! `n h` ([`Side::Periodic`]). Walls set their nodes by rules ([`Rule`]) instead of the rates,
//! and fill the ghost layers that the stencils reach beyond them; the integrator advances the
//! others ([`Integrator`]). A run over several processes cuts the grid into blocks along 1, 2 or 3
//! axes ([`crate::blocks`]), one a process of a [`crate::group::Group`], with the single
//! process's results bit for bit; the host/device split is such a group of threads, its
//! blocks cut along the outermost axis. A run stops and continues
//! through checkpoints (in the format of every run, a shard per block), on any processes, cut and
//! backend.

mod checkpoint;
mod grid;
mod store;
mod walls;

pub use grid::FdGrid;
pub use store::FdLayout;
pub use walls::{Rule, Side};

use crate::Real;

/// How the grid advances `∂t φ = R(φ)` by a step `Δt`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Integrator {
    /// Forward Euler: `φ ← φ + Δt R(φ)`; first order in time, what steady-state
    /// pseudo-time marching needs.
    Euler,
    /// Williamson's (1980) low-storage third-order Runge–Kutta scheme (two registers per
    /// unknown): for stages `k = 1, 2, 3`, `q ← a_k q + Δt R(φ)`, `φ ← φ + b_k q`, with
    /// `a = (0, −5/9, −153/128)`, `b = (1/3, 15/16, 8/15)`. Its stability region holds a stretch
    /// of the imaginary axis (|λΔt| ≤ √3), which central differences of advection need.
    /// J. H. Williamson, *Low-storage Runge–Kutta schemes*, J. Comput. Phys. 35 (1980) 48–56.
    Rk3,
}

impl Integrator {
    /// The stages' `(a_k, b_k)`.
    pub fn stages(self) -> &'static [(f64, f64)] {
        match self {
            Integrator::Euler => &[(0.0, 1.0)],
            Integrator::Rk3 => &[
                (0.0, 1.0 / 3.0),
                (-5.0 / 9.0, 15.0 / 16.0),
                (-153.0 / 128.0, 8.0 / 15.0),
            ],
        }
    }
}

/// An explicit finite-difference scheme; implemented by `fd_scheme!`.
pub trait FdScheme: Send + Sync + 'static {
    /// The run-time parameters (`f64` fields named as declared).
    type Params: Clone + Copy + std::fmt::Debug + Send + Sync;
    const NAME: &'static str;
    /// 2 or 3.
    const DIM: usize;
    /// The scalar unknowns: scalar fields, and the components `ux`, `uy`, … of vector fields.
    const UNKNOWNS: &'static [&'static str];
    /// Each vector field: its name and the index of its first component in [`Self::UNKNOWNS`].
    const VECTORS: &'static [(&'static str, usize)];
    /// The parameters' names, in the order of [`FdScheme::param_values`].
    const PARAMS: &'static [&'static str];
    /// The reads of one node's rates: `(unknown, offset)`; `load(k)` in [`FdScheme::rates`]
    /// is the `k`-th.
    const LOADS: &'static [(usize, [i32; 3])];
    /// The farthest offset of a read: the ghost layers the grid keeps.
    const REACH: usize;
    /// Floating-point operations of one node's rates.
    const FLOPS: u64;
    const INTEGRATOR: Integrator;
    /// The difference operators, one line each, with their proved orders.
    const OPERATORS: &'static [&'static str];
    /// The rates as a WGSL function `rates(inp, prm)`, inputs in the order of
    /// [`Self::LOADS`], parameters `[h, params…]`.
    const WGSL: &'static str;
    /// The parameters' values in declaration order.
    fn param_values(p: &Self::Params) -> Vec<f64>;
    /// `out[u] = R_u` at one node: `load(k)` reads [`Self::LOADS`]`[k]`, `prm` is
    /// `[h, params…]`.
    fn rates<T: Real>(load: impl Fn(usize) -> T, prm: &[T], out: &mut [T]);
    /// [`FdScheme::rates`] at `VL` consecutive nodes along x at once (straight-line code over
    /// lanes, which vectorises): `inp[k][l]` is [`Self::LOADS`]`[k]` at node `l`, `out[u][l]`
    /// the rate of unknown `u` there.
    fn rates_lanes<T: Real, const VL: usize>(inp: &[[T; VL]], prm: &[T], out: &mut [[T; VL]]);
}

/// What runs a scheme: the host's grid ([`FdGrid`]) or a device's
/// ([`crate::gpu::GpuFdGrid`]), either as blocks of a group of processes, or both at once
/// (the split: [`crate::backend::build_fd`]). The methods are collective over the group's
/// members.
pub trait FdRun {
    /// The whole grid's nodes per axis.
    fn nodes(&self) -> [usize; 3];
    /// Steps taken.
    fn steps(&self) -> u64;
    /// The time reached, `Σ Δt`.
    fn time(&self) -> f64;
    /// Advances `steps` steps of `dt`; fails if an unknown is no longer finite.
    fn advance(&mut self, steps: u64, dt: f64) -> Result<(), crate::Error>;
    /// `max |R_u|` over the updated nodes of the whole grid, per unknown.
    fn max_rates(&mut self) -> Result<Vec<f64>, crate::Error>;
    /// Unknown `u` at every node of the whole grid (x fastest) on the first process, `None`
    /// on the others.
    fn gather(&mut self, u: usize) -> Result<Option<Vec<f64>>, crate::Error>;
    /// Bytes a step moves per node at least ([`FdGrid::bytes_per_node`]).
    fn bytes_per_node(&self) -> usize;
    /// Writes the state to the checkpoint `path` ([`FdGrid::checkpoint`]).
    fn checkpoint(&mut self, path: &std::path::Path) -> Result<(), crate::Error>;
    /// Continues from the checkpoint `path`, written by a run of the same scheme, grid and
    /// setup on any processes and backend ([`FdGrid::resume`]).
    fn resume(&mut self, path: &std::path::Path) -> Result<(), crate::Error>;
    /// Sets unknown `u` at every node to `f(x)`, `x = (i h, j h, k h)`, then applies the
    /// walls ([`FdGrid::set`]).
    fn set_unknown(&mut self, u: usize, f: &dyn Fn([f64; 3]) -> f64) -> Result<(), crate::Error>;
    /// The backend in words: the host's layout, the device.
    fn describe(&self) -> String;
    /// The group of the grid's blocks (who prints, how they agree).
    fn group(&self) -> &dyn crate::group::Group;
}

/// What defines a grid of the scheme `S`: its nodes per axis, spacing, parameters and sides
/// (every process holds the same, so every process checks it alike).
pub struct FdSpec<S: FdScheme> {
    /// Nodes per axis.
    pub nodes: [usize; 3],
    /// The spacing `h`.
    pub h: f64,
    /// The scheme's parameters.
    pub params: S::Params,
    /// The sides' walls.
    pub sides: Vec<Side>,
}

pub use crate::runtime_error::FdError;

impl crate::group::FromOtherRank for FdError {
    /// The failing process's message as it is: each process prints its own.
    fn from_other_rank(_: usize, message: String) -> Self {
        FdError::OtherRank(message)
    }
}
