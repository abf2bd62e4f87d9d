//! Models declared with the `lbm_model!` DSL: each is a few lines of declaration; the macro
//! checks it and generates its kernels.

// Generated code names the runtime through the facade path `::lbm::…`; inside this crate the
// runtime itself plays that part.
extern crate lbm_runtime as lbm;

mod d2q37;
mod d2q9;

pub use d2q37::{D2Q37Params, D2Q37};
pub use d2q9::{D2Q9Bgk, D2Q9BgkParams, D2Q9Mrt, D2Q9MrtParams, D2Q9Trt, D2Q9TrtParams};
