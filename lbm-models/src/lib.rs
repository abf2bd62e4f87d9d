//! Models declared with the `lbm_model!` DSL, and finite-difference schemes declared with
//! `fd_scheme!`: each is a few lines of declaration; the macro checks it and generates its
//! kernels.

// Generated code names the runtime through the facade path `::lbm::…`; inside this crate the
// runtime itself plays that part.
extern crate lbm_runtime as lbm;

mod artificial_compressibility;
mod boussinesq;
mod central;
mod d2q37;
mod d2q9;
mod d3q15;
mod d3q19;
mod d3q27;
mod les;
mod regularized;
mod scalar;

pub use artificial_compressibility::{
    ArtificialCompressibility2, ArtificialCompressibility2Params, ArtificialCompressibility3,
    ArtificialCompressibility3Params,
};
pub use boussinesq::{D2Q9Boussinesq, D2Q9BoussinesqParams};
pub use central::{D2Q9CentralMrt, D2Q9CentralMrtParams, D3Q27CentralMrt, D3Q27CentralMrtParams};
pub use d2q37::{D2Q37Params, D2Q37};
pub use d2q9::{D2Q9Bgk, D2Q9BgkParams, D2Q9Mrt, D2Q9MrtParams, D2Q9Trt, D2Q9TrtParams};
pub use d3q15::{D3Q15Bgk, D3Q15BgkParams, D3Q7Bgk, D3Q7BgkParams};
pub use d3q19::{D3Q19Bgk, D3Q19BgkParams, D3Q19Mrt, D3Q19MrtParams, D3Q19Trt, D3Q19TrtParams};
pub use d3q27::{D3Q27Bgk, D3Q27BgkParams};
pub use les::{
    D2Q9Smagorinsky, D2Q9SmagorinskyParams, D3Q19MrtSmagorinsky, D3Q19MrtSmagorinskyParams,
};
pub use regularized::{
    D2Q9Regularized, D2Q9RegularizedParams, D3Q19Regularized, D3Q19RegularizedParams,
};
pub use scalar::{
    D2Q5AdvectionDiffusion, D2Q5AdvectionDiffusionParams, D3Q7AdvectionDiffusion,
    D3Q7AdvectionDiffusionParams,
};
