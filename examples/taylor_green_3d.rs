//! The 3-D Taylor–Green vortex at Re = 1600 ([`lbm::cases::TaylorGreen3d`]) on the GPU with
//! each collision the library offers for it — d'Humières' MRT and the regularized BGK on
//! D3Q19, the central-moment MRT on D3Q27, BGK — its peak dissipation rate against the DNS of
//! van Rees et al. (2011).
//!
//! ```text
//! cargo run --release --example taylor_green_3d -- [COLLISION] [N] [U0] [PRECISION]
//! ```
//!
//! `COLLISION` is `mrt` (the default), `central-mrt`, `regularized` or `bgk`; `N` the cube's
//! side (64); `U0` the amplitude (0.05; the Mach number is `U0·√3`); `PRECISION` `f64` (the
//! default) or `f32`. `lbm run taylor-green-3d` runs the MRT (and its Smagorinsky variant) with
//! outputs, checkpoints, MPI ranks and the CPU; this example compares the collisions, on the
//! adapter `LBM_GPU_ADAPTER` names (the best one otherwise). Each run takes the vortex to `t* = 10`
//! with a row of diagnostics every `0.5 t*`, every `0.1 t*` from `t* = 8` around the DNS's peak
//! (each row reads the lattice back), prints each row as it goes and the case's report.

use std::error::Error;
use std::sync::Arc;
use std::time::Instant;

use lbm::backend::{Backend, build};
use lbm::blocks::{Cut, Decomposition};
use lbm::cases::{Case, TaylorGreen3d};
use lbm::domain::GlobalSpec;
use lbm::gpu::{AdapterChoice, GpuContext, GpuOptions};
use lbm::group::OneProcess;
use lbm::output::Fields;
use lbm::{LayoutKind, Model, Real, Scheme, Soa, Solver};

/// The convective time of the run's end, past the DNS's peak at `t* ≈ 9`.
const END: f64 = 10.0;
/// Where the fine rows start, the spacing of the rows before and from there (in `t*`).
const FINE: (f64, f64, f64) = (8.0, 0.5, 0.1);

fn main() -> Result<(), Box<dyn Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |i: usize, default: &str| args.get(i).cloned().unwrap_or(default.into());
    let collision = arg(0, "mrt");
    let n: usize = arg(1, "64").parse()?;
    let u0: f64 = arg(2, "0.05").parse()?;
    let precision = arg(3, "f64");
    if !(u0 > 0.0 && u0 <= 0.25) {
        return Err(format!("U0 = {u0}: give an amplitude in (0, 0.25]").into());
    }
    let ctx = Arc::new(GpuContext::new(&GpuOptions {
        adapter: AdapterChoice::from_env(),
        ..GpuOptions::default()
    })?);
    let re = 1600.0;
    match (collision.as_str(), precision.as_str()) {
        ("mrt", "f64") => run::<_, f64>(&ctx, TaylorGreen3d::new(n, re, u0)),
        ("mrt", "f32") => run::<_, f32>(&ctx, TaylorGreen3d::new(n, re, u0)),
        ("central-mrt", "f64") => run::<_, f64>(&ctx, TaylorGreen3d::central_mrt(n, re, u0)),
        ("central-mrt", "f32") => run::<_, f32>(&ctx, TaylorGreen3d::central_mrt(n, re, u0)),
        ("regularized", "f64") => run::<_, f64>(&ctx, TaylorGreen3d::regularized(n, re, u0)),
        ("regularized", "f32") => run::<_, f32>(&ctx, TaylorGreen3d::regularized(n, re, u0)),
        ("bgk", "f64") => run::<_, f64>(&ctx, TaylorGreen3d::bgk(n, re, u0)),
        ("bgk", "f32") => run::<_, f32>(&ctx, TaylorGreen3d::bgk(n, re, u0)),
        (c, p) => Err(format!(
            "collision {c:?} with precision {p:?}: give mrt, central-mrt, regularized or bgk, \
             and f64 or f32"
        )
        .into()),
    }
}

/// Runs `case` to `t* = END` on a structure-of-arrays lattice (the GPU's fastest layout for
/// the 3-D models), a row of diagnostics every `0.1 t*`, and prints its report.
fn run<M: Model, T: Real>(
    ctx: &Arc<GpuContext>,
    case: TaylorGreen3d<M>,
) -> Result<(), Box<dyn Error>> {
    let n = case.n;
    let spec = GlobalSpec {
        lx: n,
        ly: n,
        lz: n,
        params: case.params(),
        boundaries: case.boundaries(),
    };
    let on_gpu = Backend::Device {
        gpu: ctx.clone().into(),
        layout: LayoutKind::Soa,
    };
    let whole = Decomposition::Cut(Cut::WHOLE);
    let mut lat = build::<M, Soa, T>(Box::new(OneProcess), spec, whole, Scheme::TwoCopy, &on_gpu)?;
    lat.set_equilibrium_at(&case.initial())?;
    let per = case.steps_per_time();
    let steps = (END * per).ceil() as u64;
    let (fine_from, coarse, fine) = FINE;
    println!(
        "{} on {} ({}), {n}³, U₀ = {}, τ = {:.6}: {steps} steps, diagnostics every {coarse} t*, \
         every {fine} t* from t* = {fine_from}",
        M::NAME,
        ctx.info().name,
        std::any::type_name::<T>(),
        case.u0,
        case.tau(),
    );
    let (mut stepping, mut diagnostics) = (0.0, 0.0);
    let mut sums = Vec::new();
    let mut step = 0;
    for row in 1.. {
        if step >= steps {
            break;
        }
        let t = step as f64 / per;
        let every = if t + 1e-9 < fine_from { coarse } else { fine };
        let k = ((every * per).round().max(1.0) as u64).min(steps - step);
        let start = Instant::now();
        lat.advance(k)?;
        step += k;
        stepping += start.elapsed().as_secs_f64();
        let start = Instant::now();
        // The state's check (NaN, Mach) reads the lattice back as the diagnostics do: every
        // tenth row, and at the end.
        if row % 10 == 0 || step == steps {
            lat.check()?;
        }
        let fields = Fields::piece::<M>([n, n, n], [0..n, 0..n, 0..n], step, lat.local_moments()?)?;
        sums = case.sums(&fields);
        let diagnostics_row = case.extra_diagnostics(step, &sums);
        diagnostics += start.elapsed().as_secs_f64();
        let values: Vec<String> = diagnostics_row
            .iter()
            .map(|(k, v)| format!("{k} = {v:.6}"))
            .collect();
        println!(
            "  t* = {:.2}: {} ({stepping:.1} s stepping, {diagnostics:.1} s diagnostics)",
            step as f64 / per,
            values.join(", ")
        );
    }
    println!(
        "{stepping:.1} s stepping ({:.0} MLUPS), {diagnostics:.1} s reading the diagnostics back",
        (n * n * n) as f64 * steps as f64 / stepping / 1e6
    );
    for line in case.report(step, &sums) {
        println!("{line}");
    }
    Ok(())
}
