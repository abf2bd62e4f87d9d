//! The `lbm` program: run cases, benchmark the kernels, list the models.
//!
//! ```text
//! lbm run rayleigh-taylor   # D2Q37 Rayleigh–Taylor instability (Calore et al.'s main case)
//! lbm run cavity            # D2Q9 lid-driven cavity, Re = 100, to steady state, vs Ghia et al.
//! lbm run --help            # every case, option and case-file key
//! lbm bench                 # the benchmark of Calore et al. 2019, Table 2: every layout and
//!                           # precision
//! lbm bench --ranks         # under mpiexec -n N (feature mpi): the ring with and without the
//!                           # halo exchange, and the predicted strong and weak scaling
//! lbm models                # the shipped models: Q, isotropy, equilibrium order, flops
//! ```

mod cli;

use std::io::Write;
use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let args = cli::Cli::parse();
    lbm::memory::keep_freed_pages();
    #[cfg(feature = "mpi")]
    let universe = match lbm::mpi_ring::init() {
        Ok(u) => u,
        Err(e) => return fail(&format!("error: {e}\n"), 1),
    };
    #[cfg(feature = "mpi")]
    let world = cli::World::new(&universe);
    #[cfg(not(feature = "mpi"))]
    let world = cli::World::new();
    let result = cli::run(args, &world);
    match (result, cli::say::failure()) {
        (Ok(()), None) => ExitCode::SUCCESS,
        // A closed pipe on standard output: quietly, as a program that SIGPIPE ended.
        (Ok(()), Some(None)) => ExitCode::from(cli::say::PIPE_STATUS),
        (Ok(()), Some(Some(e))) => fail(
            &format!(
                "error: the standard output could not be written ({e}); what the run wrote to files is whole\n"
            ),
            1,
        ),
        (Err(e), _) if world.group().ranks() > 1 => fail(
            &format!(
                "rank {} of {}: error: {e}\n",
                world.group().rank(),
                world.group().ranks()
            ),
            e.exit_status(),
        ),
        (Err(e), _) => fail(&format!("error: {e}\n"), e.exit_status()),
    }
}

/// Prints `message` with one write (the lines of several ranks do not interleave) and
/// returns the exit code `status`.
fn fail(message: &str, status: u8) -> ExitCode {
    // Nothing better to do if stderr itself fails: the exit code still says it.
    let _ = std::io::stderr().write_all(message.as_bytes());
    ExitCode::from(status)
}
