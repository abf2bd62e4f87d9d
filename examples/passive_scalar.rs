//! A passive scalar declared by the user: D2Q9 advection–diffusion with the second-order
//! equilibrium
//!
//! ```text
//! f_eq_i = w_i φ (1 + c_i·u / cs² + (c_i·u)² / (2 cs⁴) − u·u / (2 cs²)),    φ = Σ_i f_i,
//! ```
//!
//! the velocity `u` a parameter, only `φ` conserved. Its second moment carries `φ u u`, which
//! cancels the `−(τ − ½) u u` that the first-order equilibrium of the shipped D2Q5 model leaves
//! in the diffusivity: here `D = cs²(τ − ½)` along the flow as across it (D2Q9 is isotropic
//! through fifth order, so the macro accepts the second-order equilibrium; on D2Q5 it would
//! refuse it).
//!
//! The run is the `advection-diffusion` case's Gaussian pulse (`lbm::cases::AdvectionDiffusion`,
//! with an isotropic diffusivity) at `u = 0.1`, where D2Q5's diffusivity along the flow is 3 %
//! low; the example measures both diffusivities and the L2 distance from the exact solution,
//! on the CPU and, when a GPU adapter exists (lavapipe counts; `LBM_REQUIRE_GPU=1` makes it
//! required), on the GPU, and exits with code 1 when a figure misses its tolerance.
//!
//! `cargo run --release --example passive_scalar` (a second).

use std::process::ExitCode;

use lbm::cases::{AdvectionDiffusion, Case};
use lbm::gpu::{AdapterChoice, GpuContext, GpuError, GpuLattice, GpuOptions};
use lbm::output::Fields;
use lbm::{CAoSoa, Lattice, LbmError, Model, Real, Scheme, lbm_model};

lbm_model! {
    /// D2Q9 advection–diffusion of `φ` by the uniform velocity `(ux, uy)`, second-order
    /// equilibrium, BGK: `D = cs²(τ − ½)`, isotropic.
    pub model D2Q9Scalar {
        dim = 2;
        velocities = shells![(0, 0), (1, 0), (1, 1)];
        weights = [4/9, 1/9, 1/36];
        cs2 = 1/3;
        params { tau: real, ux: real, uy: real }
        moments { phi: scalar = sum(f); }
        equilibrium = w * phi * (1 + (cx * ux + cy * uy) / cs2
            + (cx * ux + cy * uy)^2 / (2 * cs2^2) - (ux^2 + uy^2) / (2 * cs2));
        collision = bgk(tau = tau);
    }
}

const CASE: AdvectionDiffusion = AdvectionDiffusion {
    n: 128,
    tau: 0.8,
    velocity: 0.1,
    isotropic: true,
};
const STEPS: u64 = 600;

fn params() -> D2Q9ScalarParams {
    D2Q9ScalarParams {
        tau: CASE.tau,
        ux: CASE.velocity,
        uy: 0.0,
    }
}

/// The field `phi` after [`STEPS`] steps on the GPU in precision `T`.
fn gpu_phi<T: Real>(ctx: &std::sync::Arc<GpuContext>) -> Result<Vec<f64>, GpuError> {
    let mut gpu = GpuLattice::<D2Q9Scalar, T>::new(
        ctx,
        lbm::LayoutKind::CAoSoa(8),
        CASE.n,
        CASE.n,
        params(),
        Scheme::InPlace,
        &CASE.boundaries(),
    )?;
    gpu.set_equilibrium(CASE.initial())?;
    gpu.steps(STEPS);
    gpu.moment_field("phi")
}

/// Checks the measured figures of the fields `phi` after [`STEPS`] (the diffusivities to the
/// relative tolerance `tol`); prints them.
fn check(backend: &str, phi: Vec<f64>, tol: f64) -> Result<bool, LbmError> {
    let n = CASE.n;
    let fields =
        Fields::collect::<D2Q9Scalar, _>((n, n), STEPS, |_| Ok::<_, LbmError>(phi.clone()))?;
    let m = CASE
        .measure(STEPS, &CASE.sums(&fields))
        .expect("the fields hold phi");
    let d = CASE.diffusivity();
    let [dx, dy] = m.diffusivity.map(|v| v / d - 1.0);
    println!(
        "{backend}: relative L2 {:.2e}; D_x/D − 1 = {dx:+.2e}, D_y/D − 1 = {dy:+.2e} \
         (D = cs²(τ − ½) = {d:.4}; D2Q5 would give {:+.2e} along the flow)",
        m.relative_l2,
        -CASE.velocity.powi(2) / D2Q9Scalar::CS2
    );
    Ok(m.relative_l2 < 2e-3 && dx.abs() < tol && dy.abs() < tol)
}

fn run() -> Result<bool, Box<dyn std::error::Error>> {
    let spec = CASE.boundaries();
    let mut cpu = Lattice::<D2Q9Scalar, CAoSoa<8>, f64>::new(
        CASE.n,
        CASE.n,
        params(),
        Scheme::InPlace,
        &spec,
    )?;
    cpu.set_equilibrium(CASE.initial())?;
    cpu.run(STEPS, 100)?;
    let mut ok = check("CPU, f64", cpu.moment_field("phi")?, 3e-3)?;
    let opts = GpuOptions {
        adapter: AdapterChoice::from_env(),
        ..GpuOptions::default()
    };
    match GpuContext::new(&opts) {
        Ok(ctx) => {
            let ctx = std::sync::Arc::new(ctx);
            let what = format!("GPU ({})", ctx.describe());
            // f32 rounds the pulse's variance on its background φ₀ = 1 to about 1e-2 of D.
            ok &= if ctx.supports_f64() {
                check(&format!("{what}, f64"), gpu_phi::<f64>(&ctx)?, 3e-3)?
            } else {
                check(&format!("{what}, f32"), gpu_phi::<f32>(&ctx)?, 1e-2)?
            };
        }
        Err(e @ GpuError::NoAdapter { .. })
            if std::env::var("LBM_REQUIRE_GPU").as_deref() != Ok("1") =>
        {
            println!("GPU: skipped, {e}");
        }
        Err(e) => return Err(e.into()),
    }
    Ok(ok)
}

fn main() -> ExitCode {
    match run() {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => {
            eprintln!("passive_scalar: a figure misses its tolerance (see above)");
            ExitCode::FAILURE
        }
        Err(e) => {
            eprintln!("passive_scalar: {e}");
            ExitCode::FAILURE
        }
    }
}
