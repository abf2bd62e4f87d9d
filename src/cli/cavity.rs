//! `lbm run cavity`: the D2Q9 lid-driven cavity (seed 004) to steady state, compared with
//! Ghia, Ghia & Shin (1982), with the velocity magnitude written as a PNG.

use std::path::PathBuf;
use std::time::Instant;

use clap::{Args, ValueEnum};
use lbm::cavity::{compare, ghia, run_to_steady};
use lbm::models::{D2Q9Bgk, D2Q9BgkParams, D2Q9Mrt, D2Q9MrtParams};
use lbm::{BoundarySpec, Lattice, Layout, Model, Real};

use super::{dispatch, png, CliError, Generic, LayoutArg, Precision, SchemeArg};

/// Options of the cavity case.
#[derive(Debug, Clone, Args)]
pub struct CavityArgs {
    /// Reynolds number `U N / ν` (Ghia's table has 100 and 400).
    #[arg(long, default_value_t = 100)]
    pub re: u32,
    /// Lattice size N (N × N sites; a multiple of the layout's VL).
    #[arg(long, default_value_t = 128)]
    pub n: usize,
    /// Lid speed U in lattice units (Mach = U / cs).
    #[arg(long, default_value_t = 0.1)]
    pub lid: f64,
    /// Collision operator.
    #[arg(long, value_enum, default_value_t = Collision::Bgk)]
    pub collision: Collision,
    /// Data layout.
    #[arg(long, value_enum, default_value_t = LayoutArg::Caosoa)]
    pub layout: LayoutArg,
    /// Precision.
    #[arg(long, value_enum, default_value_t = Precision::F64)]
    pub precision: Precision,
    /// Streaming scheme.
    #[arg(long, value_enum, default_value_t = SchemeArg::InPlace)]
    pub scheme: SchemeArg,
    /// Steady when the velocity changes by less than tol·U over 1000 steps.
    #[arg(long, default_value_t = 1e-6)]
    pub tol: f64,
    /// Give up after this many steps.
    #[arg(long, default_value_t = 400_000)]
    pub max_steps: u64,
    /// Output directory for the image.
    #[arg(long, default_value = "out")]
    pub out: PathBuf,
}

/// Collision operator of the cavity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Collision {
    /// Single relaxation time.
    Bgk,
    /// Multiple relaxation times (Lallemand & Luo 2000).
    Mrt,
}

/// Relaxation time for Reynolds number `re` on an `n`-site cavity with lid speed `lid`:
/// `ν = U N / Re`, `τ = ν / cs² + ½`.
pub fn tau_for(re: f64, n: usize, lid: f64) -> f64 {
    3.0 * lid * n as f64 / re + 0.5
}

/// MRT rates for the cavity: Lallemand & Luo's `s_e = 1.64`, `s_ε = 1.54`, and
/// `s_q = 8(2 − s_ν)/(8 − s_ν)`, which makes bounce-back walls lie exactly half-way.
pub fn mrt_params(tau: f64) -> D2Q9MrtParams {
    let s_nu = 1.0 / tau;
    D2Q9MrtParams {
        tau,
        s_e: 1.64,
        s_eps: 1.54,
        s_q: 8.0 * (2.0 - s_nu) / (8.0 - s_nu),
        ax: 0.0,
        ay: 0.0,
    }
}

/// Runs the case.
pub fn run(a: &CavityArgs) -> Result<(), CliError> {
    let tau = tau_for(a.re as f64, a.n, a.lid);
    match a.collision {
        Collision::Bgk => {
            let p = D2Q9BgkParams {
                tau,
                ax: 0.0,
                ay: 0.0,
            };
            dispatch(a.layout, a.precision, Job::<D2Q9Bgk> { a, p })
        }
        Collision::Mrt => dispatch(
            a.layout,
            a.precision,
            Job::<D2Q9Mrt> {
                a,
                p: mrt_params(tau),
            },
        ),
    }
}

struct Job<'a, M: Model> {
    a: &'a CavityArgs,
    p: M::Params,
}

impl<M: Model> Generic for Job<'_, M> {
    type Output = Result<(), CliError>;
    fn run<L: Layout, T: Real>(self) -> Self::Output {
        let a = self.a;
        let reference = ghia(a.re)?;
        std::fs::create_dir_all(&a.out).map_err(|source| CliError::Io {
            path: a.out.display().to_string(),
            source,
        })?;
        let spec = BoundarySpec::cavity(a.lid);
        let mut lat = Lattice::<M, L, T>::new(a.n, a.n, self.p, a.scheme.into(), &spec)?;
        println!(
            "cavity Re = {}: {} {}×{}, layout {}, {}, {}, lid U = {}",
            a.re,
            M::NAME,
            a.n,
            a.n,
            L::NAME,
            T::NAME,
            lat.scheme().name(),
            a.lid
        );
        let t0 = Instant::now();
        let steps = run_to_steady(&mut lat, a.lid, 1000, a.tol, a.max_steps)?;
        let secs = t0.elapsed().as_secs_f64();
        let (ux, uy) = (lat.moment_field("ux")?, lat.moment_field("uy")?);
        let dev = compare(&ux, &uy, a.n, a.lid, &reference);
        let mlups = (a.n * a.n) as f64 * steps as f64 / secs / 1e6;
        println!("steps {steps}, wall time {secs:.2} s, {mlups:.1} MLUPS");
        println!(
            "max deviation from Ghia et al. (lid units): u(y) {:.4}, v(x) {:.4}, max {:.4}",
            dev.u,
            dev.v,
            dev.max()
        );
        if let Some((p, val)) = dev.worst {
            println!(
                "largest at {:?} coordinate {}: computed {val:.5}, reference {:.5}",
                p.profile, p.coord, p.value
            );
        }
        let speed: Vec<f64> = ux
            .iter()
            .zip(&uy)
            .map(|(u, v)| u.hypot(*v) / a.lid)
            .collect();
        let path = a.out.join(format!("cavity_re{}_velocity.png", a.re));
        png::write_field(&path, &speed, a.n, a.n, (0.0, 1.0))?;
        println!(
            "velocity magnitude |u|/U (0 to 1) written to {}",
            path.display()
        );
        Ok(())
    }
}
