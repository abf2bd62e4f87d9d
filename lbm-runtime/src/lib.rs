//! Runtime of the `lbm` framework: the [`Model`] trait that generated models implement, and the
//! machinery that runs them on lattices.

mod model;
mod real;

pub use model::{Model, ParamError};
pub use real::Real;
