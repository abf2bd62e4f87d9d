//! The lattice distributed over MPI ranks in a ring (seed 003 §4–5). Run with
//! `cargo run --release --features mpi --example mpi_ring -- …` under `mpiexec -n N`:
//!
//! ```text
//! mpi_ring check MODEL LAYOUT LX LY STEPS   distributed run vs the single-process run on rank 0:
//!                                           bitwise comparison of populations and moment fields
//! mpi_ring resume MODEL LAYOUT LX LY STEPS  the same, the first half of the steps run on one
//!                                           lattice on rank 0 and scattered over the ranks
//! ```
//! MODEL: `d2q9` (BGK, channel with a body force) or `d2q37` (thermal walls, gravity);
//! LAYOUT: `aos`, `soa`, `csoa8`, `caosoa4`, `caosoa8`. Errors are printed by every rank
//! (exit code 2). The benchmark of the ring and the scaling model is `lbm bench --ranks`.

use std::io::Write;
use std::process::ExitCode;

use lbm::domain::{DomainError, GlobalSpec};
use lbm::models::{D2Q37Params, D2Q9Bgk, D2Q9BgkParams, D2Q37};
use lbm::mpi_ring::mpi::topology::{Communicator, SimpleCommunicator};
use lbm::mpi_ring::{self, DistLattice};
use lbm::{Aos, BoundarySpec, CAoSoa, CSoa, Lattice, Layout, Model, Real, Scheme, Soa, Wall};

/// A test case: the global lattice and an initial state with structure everywhere.
trait Case: Model + Sized {
    fn spec(lx: usize, ly: usize) -> GlobalSpec<Self>;
    fn initial(x: usize, y: usize) -> Vec<f64>;
}

impl Case for D2Q9Bgk {
    fn spec(lx: usize, ly: usize) -> GlobalSpec<Self> {
        GlobalSpec {
            lx,
            ly,
            params: D2Q9BgkParams {
                tau: 0.8,
                ax: 1e-5,
                ay: 0.0,
            },
            boundaries: BoundarySpec::channel(),
        }
    }
    fn initial(x: usize, y: usize) -> Vec<f64> {
        let (xf, yf) = (x as f64, y as f64);
        vec![
            1.0 + 0.01 * (0.3 * xf + 0.2 * yf).sin(),
            0.05 * (0.4 * yf).sin(),
            0.03 * (0.5 * xf + 0.1 * yf).cos(),
        ]
    }
}

impl Case for D2Q37 {
    fn spec(lx: usize, ly: usize) -> GlobalSpec<Self> {
        GlobalSpec {
            lx,
            ly,
            params: D2Q37Params { tau: 0.9, g: 1e-4 },
            boundaries: BoundarySpec {
                bottom: Some(Wall::Thermal { temperature: 1.05 }),
                top: Some(Wall::Thermal { temperature: 0.95 }),
                ..BoundarySpec::default()
            },
        }
    }
    fn initial(x: usize, y: usize) -> Vec<f64> {
        let (xf, yf) = (x as f64, y as f64);
        vec![
            1.0 + 0.02 * (0.3 * xf).sin() * (0.2 * yf).cos(),
            0.02 * (0.25 * yf).sin(),
            0.01 * (0.4 * xf).cos(),
            1.0 + 0.03 * (0.35 * xf + 0.15 * yf).sin(),
        ]
    }
}

/// The parsed command line.
struct Args {
    command: String,
    model: String,
    layout: String,
    lx: usize,
    ly: usize,
    steps: usize,
}

fn parse() -> Result<Args, String> {
    let a: Vec<String> = std::env::args().skip(1).collect();
    if a.len() < 6 {
        return Err("usage: mpi_ring check|resume MODEL LAYOUT LX LY STEPS".into());
    }
    let num = |s: &String| s.parse::<usize>().map_err(|e| format!("`{s}`: {e}"));
    Ok(Args {
        command: a[0].clone(),
        model: a[1].clone(),
        layout: a[2].clone(),
        lx: num(&a[3])?,
        ly: num(&a[4])?,
        steps: num(&a[5])?,
    })
}

type Outcome = Result<bool, String>;

fn main() -> ExitCode {
    let code = match mpi_ring::init() {
        Ok(universe) => {
            let world = universe.world();
            let code = report(&world, parse().and_then(|a| by_layout(&world, &a)));
            drop(universe);
            code
        }
        Err(e) => report_error(0, 1, &e.to_string()),
    };
    ExitCode::from(code)
}

fn report(world: &SimpleCommunicator, outcome: Outcome) -> u8 {
    match outcome {
        Ok(true) => 0,
        Ok(false) => 1,
        Err(e) => report_error(world.rank(), world.size(), &e),
    }
}

/// Prints the error with one write, so that the lines of several ranks do not interleave.
fn report_error(rank: i32, size: i32, e: &str) -> u8 {
    let line = format!("rank {rank} of {size}: error: {e}\n");
    // Nothing better to do if stderr itself fails: the exit code still says it.
    let _ = std::io::stderr().write_all(line.as_bytes());
    2
}

fn by_layout(world: &SimpleCommunicator, a: &Args) -> Outcome {
    match a.layout.as_str() {
        "aos" => by_model::<Aos>(world, a),
        "soa" => by_model::<Soa>(world, a),
        "csoa8" => by_model::<CSoa<8>>(world, a),
        "caosoa4" => by_model::<CAoSoa<4>>(world, a),
        "caosoa8" => by_model::<CAoSoa<8>>(world, a),
        other => Err(format!(
            "unknown layout `{other}` (aos, soa, csoa8, caosoa4, caosoa8)"
        )),
    }
}

fn by_model<L: Layout>(world: &SimpleCommunicator, a: &Args) -> Outcome {
    match a.model.as_str() {
        "d2q9" => by_command::<D2Q9Bgk, L>(world, a),
        "d2q37" => by_command::<D2Q37, L>(world, a),
        other => Err(format!("unknown model `{other}` (d2q9, d2q37)")),
    }
}

fn by_command<M: Case, L: Layout>(world: &SimpleCommunicator, a: &Args) -> Outcome {
    match a.command.as_str() {
        "check" => check::<M, L, f64>(world, a).map_err(|e| e.to_string()),
        "resume" => resume::<M, L, f64>(world, a).map_err(|e| e.to_string()),
        other => Err(format!("unknown command `{other}` (check, resume)")),
    }
}

/// All populations in logical order as bit patterns, then every moment field.
fn state_bits<M: Model, L: Layout, T: Real>(
    lat: &Lattice<M, L, T>,
) -> Result<Vec<u64>, DomainError> {
    let d = lat.dims();
    let mut f = vec![T::default(); M::Q];
    let mut out = Vec::new();
    for x in 0..d.lx {
        for y in 0..d.ly {
            lat.populations(x, y, &mut f)?;
            out.extend(f.iter().map(|v| v.to_f64().to_bits()));
        }
    }
    for name in M::MOMENT_NAMES {
        out.extend(lat.moment_field(name)?.iter().map(|v| v.to_bits()));
    }
    Ok(out)
}

fn check<M: Case, L: Layout, T: Real>(
    world: &SimpleCommunicator,
    a: &Args,
) -> Result<bool, DomainError> {
    let mut dist = DistLattice::<M, L, T>::new(world, M::spec(a.lx, a.ly), Scheme::TwoCopy)?;
    dist.set_equilibrium(M::initial)?;
    for _ in 0..a.steps {
        dist.step();
    }
    compare(&dist, a)
}

/// Half the steps on one lattice (rank 0), the other half resumed on every rank.
fn resume<M: Case, L: Layout, T: Real>(
    world: &SimpleCommunicator,
    a: &Args,
) -> Result<bool, DomainError> {
    let half = a.steps / 2;
    let first = if world.rank() == 0 {
        Some(single_run::<M, L, T>(a, half)?)
    } else {
        None
    };
    let mut dist = DistLattice::scatter(world, M::spec(a.lx, a.ly), first.as_ref())?;
    for _ in half..a.steps {
        dist.step();
    }
    compare(&dist, a)
}

/// The single-process lattice after `steps` steps.
fn single_run<M: Case, L: Layout, T: Real>(
    a: &Args,
    steps: usize,
) -> Result<Lattice<M, L, T>, DomainError> {
    let mut single = M::spec(a.lx, a.ly).lattice::<L, T>()?;
    single.set_equilibrium(M::initial)?;
    for _ in 0..steps {
        single.step();
    }
    Ok(single)
}

/// Gathers `dist` on rank 0 and compares it bit by bit with the single-process run of
/// `a.steps` steps (collective; `true` on the other ranks).
fn compare<M: Case, L: Layout, T: Real>(
    dist: &DistLattice<M, L, T>,
    a: &Args,
) -> Result<bool, DomainError> {
    let mass = dist.mass();
    let Some(gathered) = dist.gather()? else {
        return Ok(true);
    };
    let single = single_run::<M, L, T>(a, a.steps)?;
    let (got, want) = (state_bits(&gathered)?, state_bits(&single)?);
    let differ = got.iter().zip(&want).filter(|(g, w)| g != w).count();
    let what = format!(
        "{} {} {}×{}, {} steps, {} ranks",
        M::NAME,
        L::NAME,
        a.lx,
        a.ly,
        a.steps,
        dist.decomposition().ranks()
    );
    if differ == 0 && got.len() == want.len() {
        println!(
            "bitwise identical: {what}: {} values (populations and moment fields); mass {mass} \
             (single process {})",
            got.len(),
            single.mass()
        );
        Ok(true)
    } else {
        println!(
            "DIFFERENT: {what}: {differ} of {} values differ",
            want.len()
        );
        Ok(false)
    }
}
