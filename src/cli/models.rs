//! `lbm models`: the shipped models and their compile-time facts.

use lbm::models::{D2Q9Bgk, D2Q9Mrt, D2Q9Trt, D2Q37};
use lbm::Model;

/// One table row from a model's constants.
fn row<M: Model>() -> String {
    format!(
        "{:<10} {:>3} {:>5} {:>9} {:>12} {:>10} {:>11}   {}",
        M::NAME,
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
    println!(
        "{:<10} {:>3} {:>5} {:>9} {:>12} {:>10} {:>11}   description",
        "model", "Q", "halo", "isotropy", "equilibrium", "flops/site", "with force"
    );
    for r in [
        row::<D2Q9Bgk>(),
        row::<D2Q9Trt>(),
        row::<D2Q9Mrt>(),
        row::<D2Q37>(),
    ] {
        println!("{r}");
    }
}
