//! The `lbm` program end to end, in one test binary: every case, the options, the outputs,
//! checkpoints and resumes, refusals of bad input, the 3-D cases.
//!
//! Run with `cargo test --release --test program`.

mod cli_support;

mod body;
mod cases_3d;
mod cli_run;
mod cylinder;
mod fallback;
mod fd_cavity;
mod hostile;
mod taylor_green_3d;
