//! The `lbm` program: run cases, benchmark the kernels, list the models.
//!
//! ```text
//! lbm run cavity            # D2Q9 lid-driven cavity, Re = 100, to steady state, vs Ghia et al.
//! lbm bench                 # seed 000 Table-2-style benchmark: every layout and precision
//! lbm models                # the shipped models: Q, isotropy, equilibrium order, flops
//! ```

mod cli;

use clap::Parser;

fn main() -> std::process::ExitCode {
    let args = cli::Cli::parse();
    match cli::run(args) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
