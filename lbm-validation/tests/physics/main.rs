//! The physics and the runtime on the host, in one test binary (its kernels compiled once):
//! validations against analytic solutions and published data, conservation, the models'
//! compile-time facts, checkpoints and fields, the layouts and schemes against each other.
//!
//! Run with `cargo test --release -p lbm-validation --test physics` (a filter such as
//! `d2q9_cavity::` picks one module).

mod lattice_support;

mod bodies;
mod checkpoint;
mod d2q37_physics;
mod d2q37_rayleigh_taylor;
mod d2q9_cavity;
mod d2q9_poiseuille;
mod d2q9_taylor_green;
mod d3_lattice;
mod dsl;
mod f16s;
mod fd;
mod fd_blocks;
mod fields;
mod lattice_blocks;
mod model_reference;
mod moment_space;
mod rayleigh_benard;
mod runtime_invariants;
mod scalar_transport;
mod smagorinsky;
mod sparse;
mod user_model;
