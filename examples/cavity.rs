//! The lid-driven cavity with the library API: the shipped case ([`lbm::cases::Cavity`]) on a
//! D2Q9 MRT lattice, run to steady state and compared with Ghia et al. (1982).
//!
//! `cargo run --release --example cavity` (`lbm run cavity` does the same with options,
//! progress, images, VTK files and a performance summary).

use lbm::cases::{Case, Cavity};
use lbm::cavity::run_to_steady;
use lbm::models::D2Q9Mrt;
use lbm::output::Fields;
use lbm::{CAoSoa, Lattice, LbmError, Scheme};

fn main() -> Result<(), LbmError> {
    let case = Cavity::mrt(64, 100.0, 0.1);
    let (lx, ly) = case.size();
    let mut lat = Lattice::<D2Q9Mrt, CAoSoa<8>, f64>::new(
        lx,
        ly,
        case.params(),
        Scheme::InPlace,
        &case.boundaries(),
    )?;
    lat.set_equilibrium(case.initial())?;
    let steps = run_to_steady(&mut lat, case.lid, 1000, 1e-6, 200_000)?;
    let fields =
        Fields::collect::<lbm::models::D2Q9Mrt, _>((lx, ly), steps, |n| lat.moment_field(n))?;
    println!(
        "{lx}×{ly} cavity, Re = {}: steady after {steps} steps",
        case.re
    );
    for line in case.report_fields(&fields) {
        println!("{line}");
    }
    Ok(())
}
