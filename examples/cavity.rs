//! The lid-driven cavity with the library API: build a D2Q9 MRT lattice with a moving lid, run
//! it to steady state and compare the centre-lines with Ghia et al. (1982).
//!
//! `cargo run --release --example cavity` (the `lbm run cavity` command does the same with
//! options, timing and an image).

use lbm::cavity::{compare, ghia, run_to_steady};
use lbm::models::{D2Q9Mrt, D2Q9MrtParams};
use lbm::{BoundarySpec, CAoSoa, Lattice, LbmError, Scheme};

fn main() -> Result<(), LbmError> {
    let (n, re, lid) = (64, 100.0, 0.1);
    // Re = U N / ν and ν = cs² (τ − ½), cs² = 1/3.
    let tau = 3.0 * lid * n as f64 / re + 0.5;
    let s_nu = 1.0 / tau;
    let params = D2Q9MrtParams {
        tau,
        s_e: 1.64,
        s_eps: 1.54,
        s_q: 8.0 * (2.0 - s_nu) / (8.0 - s_nu),
        ax: 0.0,
        ay: 0.0,
    };
    let spec = BoundarySpec::cavity(lid);
    let mut lat = Lattice::<D2Q9Mrt, CAoSoa<8>, f64>::new(n, n, params, Scheme::InPlace, &spec)?;
    let steps = run_to_steady(&mut lat, lid, 1000, 1e-6, 200_000)?;
    let (ux, uy) = (lat.moment_field("ux")?, lat.moment_field("uy")?);
    let dev = compare(&ux, &uy, n, lid, &ghia(100)?);
    println!(
        "{n}×{n} cavity, Re = {re}: steady after {steps} steps; deviation from Ghia et al.: u {:.4}, v {:.4}",
        dev.u, dev.v
    );
    Ok(())
}
