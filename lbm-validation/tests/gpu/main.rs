//! The GPU backend and the host/device split, in one test binary: shaders, limits, physics on
//! the device, the device against the host, the split against both, the GPU benchmark,
//! finite-difference grids on the device against the host, and the guide's table of what runs
//! where (every rule on every backend in both schemes; with the `mpi` feature, whose ranks it
//! checks on threads). On a
//! machine without a GPU the tests run on Mesa's lavapipe (see `gpu_support`).
//!
//! Run with `cargo test --release -p lbm-validation --test gpu` (a filter such as `vs_cpu::` picks
//! one module).

mod gpu_support;

mod bench;
mod fd;
mod hetero;
mod limits;
#[cfg(feature = "mpi")]
mod matrix;
mod physics;
mod shaders;
mod vs_cpu;
