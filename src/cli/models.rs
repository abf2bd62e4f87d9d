//! `lbm models`: the shipped models and their compile-time facts.

use lbm::Model;
use lbm::models::{
    D2Q5AdvectionDiffusion, D2Q9Boussinesq, D2Q9CentralMrt, D2Q9Regularized, D2Q9Smagorinsky,
    D3Q7AdvectionDiffusion, D3Q19MrtSmagorinsky, D3Q19Regularized, D3Q27CentralMrt,
};
use lbm::models::{
    D2Q9Bgk, D2Q9Mrt, D2Q9Trt, D2Q37, D3Q7Bgk, D3Q15Bgk, D3Q19Bgk, D3Q19Mrt, D3Q19Trt, D3Q27Bgk,
};

/// One table row from a model's constants.
fn row<M: Model>() -> String {
    format!(
        "{:<23} {:>3} {:>3} {:>5} {:>9} {:>12} {:>10} {:>11}   {}",
        M::NAME,
        M::D,
        M::Q,
        M::HALO,
        M::ISOTROPY_ORDER,
        M::EQUILIBRIUM_ORDER,
        M::COLLIDE_FLOPS,
        M::COLLIDE_FLOPS_FORCED,
        M::DESCRIPTION
    )
}

/// Prints the table of shipped models.
pub fn print() {
    say!(
        "{:<23} {:>3} {:>3} {:>5} {:>9} {:>12} {:>10} {:>11}   description",
        "model",
        "D",
        "Q",
        "halo",
        "isotropy",
        "equilibrium",
        "flops/site",
        "with force"
    );
    for r in [
        row::<D2Q9Bgk>(),
        row::<D2Q9Trt>(),
        row::<D2Q9Mrt>(),
        row::<D2Q9CentralMrt>(),
        row::<D2Q9Regularized>(),
        row::<D2Q9Smagorinsky>(),
        row::<D2Q9Boussinesq>(),
        row::<D2Q37>(),
        row::<D2Q5AdvectionDiffusion>(),
        row::<D3Q7Bgk>(),
        row::<D3Q7AdvectionDiffusion>(),
        row::<D3Q15Bgk>(),
        row::<D3Q19Bgk>(),
        row::<D3Q19Trt>(),
        row::<D3Q19Mrt>(),
        row::<D3Q19MrtSmagorinsky>(),
        row::<D3Q19Regularized>(),
        row::<D3Q27Bgk>(),
        row::<D3Q27CentralMrt>(),
    ] {
        say!("{r}");
    }
}
