//! Two lattices declared by the user and coupled both ways: a D2Q9 flow pushed by the buoyancy
//! of a concentration `s` (a solute) that a D2Q5 lattice carries with the flow's velocity — natural
//! convection in the Boussinesq approximation. Each model reads the other through a parameter
//! declared `field` (a value per site); [`lbm::Coupled`] fills those fields from the other
//! lattice's moments before each step.
//!
//! The run is Rayleigh–Bénard convection at Ra = 10⁴, Pr = 0.71 on a layer of 32 sites (the
//! geometry and units of `lbm::cases::RayleighBenard`), and the example checks the Nusselt
//! number `1 + ⟨u_y s⟩ H / (κ Δs)` against Clever & Busse's 2.661 (J. Fluid Mech. 65, 625,
//! 1974) within 1.5 %, on the CPU, and exits with code 1 when it misses.
//!
//! `cargo run --release --example natural_convection` (ten seconds).

use std::process::ExitCode;

use lbm::cases::{CLEVER_BUSSE_NUSSELT, DELTA_T, RayleighBenard};
use lbm::{CAoSoa, Coupled, Error, Lattice, Scheme, lbm_model};

lbm_model! {
    /// D2Q9 BGK flow with the buoyancy `(0, gβ s)` of the concentration field `s`.
    pub model D2Q9Buoyant {
        dim = 2;
        velocities = shells![(0, 0), (1, 0), (1, 1)];
        weights = [4/9, 1/9, 1/36];
        cs2 = 1/3;
        params { tau: real, g_beta: real, s: field }
        moments { rho = sum(f); u = sum(f * c) / rho; }
        equilibrium = hermite(order = 2);
        collision = bgk(tau = tau);
        force = (0, g_beta * s);
    }
}

lbm_model! {
    /// D2Q5 concentration carried by the velocity field `(ux, uy)`, `κ = cs²(τ − ½)`.
    pub model D2Q5Carried {
        dim = 2;
        velocities = shells![(0, 0), (1, 0)];
        weights = [1/3, 1/6];
        cs2 = 1/3;
        params { tau: real, ux: field, uy: field }
        moments { s: scalar = sum(f); }
        equilibrium = w * s * (1 + (cx * ux + cy * uy) / cs2);
        collision = bgk(tau = tau);
    }
}

fn main() -> ExitCode {
    match run() {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<bool, Error> {
    let case = RayleighBenard {
        perturbation: 1e-2,
        ..RayleighBenard::new(32, 1e4)
    };
    let ((lx, ly), h) = (case.size(), case.height as f64);
    let flow_params = D2Q9BuoyantParams {
        tau: case.flow_params().tau,
        g_beta: case.flow_params().g_beta,
        s: 0.0,
    };
    let heat_params = D2Q5CarriedParams {
        tau: case.heat_params().tau,
        ux: 0.0,
        uy: 0.0,
    };
    let scheme = Scheme::InPlace;
    let flow = Lattice::<D2Q9Buoyant, CAoSoa<8>, f64>::new(
        lx,
        ly,
        flow_params,
        scheme,
        &case.flow_boundaries(),
    )?;
    let mut heat = Lattice::<D2Q5Carried, CAoSoa<8>, f64>::new(
        lx,
        ly,
        heat_params,
        scheme,
        &case.heat_boundaries(),
    )?;
    heat.set_equilibrium(|x, y| vec![case.initial_temperature(x, y)])?;
    let mut pair = Coupled::new(flow, heat)?
        .first_reads("s", "s")?
        .second_reads("ux", "ux")?
        .second_reads("uy", "uy")?;
    pair.advance((1.25 * case.diffusion_time()) as u64)?;
    pair.check()?;

    let [u, s] = pair.output_moments()?;
    let flux = u[2].iter().zip(&s[0]).map(|(v, s)| v * s).sum::<f64>() / (lx * ly) as f64;
    let nusselt = 1.0 + flux * h / (case.diffusivity() * DELTA_T);
    let (_, published) = CLEVER_BUSSE_NUSSELT[2];
    let off = nusselt / published - 1.0;
    println!(
        "natural convection, Ra = 1e4, Pr = 0.71, {lx} × {ly}, {} steps: Nu = {nusselt:.4} \
         (Clever & Busse 1974: {published}; {:+.2} %)",
        pair.steps_done(),
        off * 100.0
    );
    Ok(off.abs() < 0.015)
}
