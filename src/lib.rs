//! # lbm
//!
//! A lattice Boltzmann framework: declare a model in a few lines with [`lbm_model!`], get CPU
//! kernels for every data layout, and run it.

pub use lbm_macros::lbm_model;
pub use lbm_models as models;
pub use lbm_runtime::*;
