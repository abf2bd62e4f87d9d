//! Command-line interface (clap derive) and the dispatch from run-time choices (layout,
//! precision) to the generic lattice types.

#[macro_use]
pub mod say;
mod bench;
mod bench_args;
mod bench_csv;
mod case_settings;
mod coupled;
mod fd_run;
mod lattice_run;
mod loads;
mod memory;
mod models;
mod out_dir;
mod plan;
#[cfg(feature = "mpi")]
mod ranks;
mod run;
mod settings;
mod solver;
mod split;
mod world;

pub use world::World;

use clap::{Parser, Subcommand, ValueEnum};
use lbm::output::OutputError;
use lbm::{
    Aos, CAoSoa, CSoa, CheckpointError, F16s, Layout, LayoutKind, LbmError, Real, Scheme, Soa,
};
use serde::{Deserialize, Serialize};

/// Lattice Boltzmann solvers declared with a DSL, run on CPUs, GPUs or both, over MPI ranks.
#[derive(Debug, Parser)]
#[command(name = "lbm", version, about)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run a case — rayleigh-taylor (D2Q37), cavity, poiseuille, taylor-green,
    /// rayleigh-benard (D2Q9), advection-diffusion (D2Q5), taylor-green-3d, duct, cavity-3d
    /// (D3Q19) — with images, VTK files, diagnostics, checkpoints and a performance summary.
    Run(Box<run::RunArgs>),
    /// Benchmark propagate, bc, collide and the fused step for every layout and precision
    /// (Calore et al. 2019, Table 2), with the machine's bandwidth measured in the same run; with
    /// `--split`, sweep the host/device split (Calore et al. 2019, Fig. 8).
    Bench(Box<bench_args::BenchArgs>),
    /// List the shipped models.
    Models,
}

/// Errors of the program.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// From the runtime.
    #[error(transparent)]
    Lbm(#[from] LbmError),
    /// From a solver of the runtime (any backend).
    #[error(transparent)]
    Runtime(#[from] lbm::Error),
    /// From the GPU backend.
    #[error(transparent)]
    Gpu(#[from] lbm::gpu::GpuError),
    /// From the host/device split.
    #[error(transparent)]
    Hetero(#[from] lbm::hetero::HeteroError),
    /// Reading a file failed.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// Writing an output failed.
    #[error(transparent)]
    Output(#[from] OutputError),
    /// A checkpoint could not be written or read.
    #[error(transparent)]
    Checkpoint(#[from] CheckpointError),
    /// A setting is invalid.
    #[error("setting `{key}`: {message}")]
    Config {
        /// The key (the option's name without `--`).
        key: String,
        /// What is wrong and what is allowed.
        message: String,
    },
    /// A case file is invalid.
    #[error("case file {path}: {message}")]
    ConfigFile {
        /// The file.
        path: String,
        /// The parser's message, with the line and the key.
        message: String,
    },
    /// The output directory cannot be used.
    #[error("output directory {path}: {reason}")]
    OutDir {
        /// The directory.
        path: String,
        /// Why.
        reason: String,
    },
    /// A checkpoint does not belong to the run that resumes it.
    #[error("cannot resume from {path}: {what}; give the settings of the run that wrote it")]
    Resume {
        /// The checkpoint.
        path: String,
        /// What differs.
        what: String,
    },
    /// A result the run printed is not a finite number.
    #[error(
        "a result is not a finite number (\"{0}\"): the settings ask for more than the \
         precision resolves (an amplitude, a rate or a ratio extremely small or large); choose \
         values nearer the case's defaults, or --precision f64"
    )]
    NotFinite(String),
    /// Another rank failed (its message is printed by that rank).
    #[error("{0}")]
    OtherRank(String),
    /// MPI could not start, or a distributed run could not be set up.
    #[cfg(feature = "mpi")]
    #[error(transparent)]
    Domain(#[from] lbm::domain::DomainError),
    /// Several independent settings are invalid: each on a line of its own.
    #[error("{}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n"))]
    Several(Vec<CliError>),
    /// The run was stopped by a signal (Ctrl-C, `kill`, a batch scheduler).
    #[error("{}", interrupted_message(*.signal, *.step, .checkpoint.as_deref()))]
    Interrupted {
        /// The signal.
        signal: lbm::driver::Signal,
        /// The last step done.
        step: u64,
        /// The checkpoint written, if checkpoints are on.
        checkpoint: Option<std::path::PathBuf>,
    },
}

impl CliError {
    /// How a run the library's loop drove ends for the program: an error when a signal stopped
    /// it, naming `checkpoint` (the checkpoint written, when checkpoints are on).
    pub fn unless_stopped(
        o: &lbm::driver::Outcome,
        checkpoint: Option<std::path::PathBuf>,
    ) -> Result<(), CliError> {
        match o.ended.signal() {
            Some(signal) => Err(CliError::Interrupted {
                signal,
                step: o.step,
                checkpoint,
            }),
            None => Ok(()),
        }
    }

    /// The process's exit status for this error: 128 + the signal's number for a run a
    /// signal stopped (as a shell reports a process the signal killed), else 1.
    pub fn exit_status(&self) -> u8 {
        match self {
            CliError::Interrupted { signal, .. } => signal.exit_status(),
            _ => 1,
        }
    }
}

fn interrupted_message(
    signal: lbm::driver::Signal,
    step: u64,
    checkpoint: Option<&std::path::Path>,
) -> String {
    let signal = signal.name();
    match checkpoint {
        Some(p) => format!(
            "stopped by {signal} at step {step}; the state is in {}: continue with the same \
             options and --resume {}",
            p.display(),
            p.display()
        ),
        None => format!(
            "stopped by {signal} at step {step}; no checkpoint was written (checkpoints are \
             off: use --checkpoint-every N)"
        ),
    }
}

/// The signals that stop a run cleanly, caught from now on (a note on stderr where they
/// cannot be: the run then ends at once on them, without a checkpoint).
fn signals() -> lbm::driver::Signals {
    match lbm::driver::Signals::catch() {
        Ok(s) => {
            say::run_stops_on_pipe();
            s
        }
        Err(e) => {
            say::note(&format!(
                "note: signals cannot be caught ({e}); Ctrl-C or SIGTERM will stop the run \
                 without a checkpoint\n"
            ));
            lbm::driver::Signals::none()
        }
    }
}

/// Runs the parsed command line in `world`.
pub fn run(cli: Cli, world: &World) -> Result<(), CliError> {
    let result = match cli.command {
        Command::Run(a) => run::run(&a, world),
        Command::Bench(a) => bench::run(&a, world),
        Command::Models => {
            models::print();
            Ok(())
        }
    };
    out_dir::release_all();
    result.and_then(|()| match say::not_finite() {
        Some(line) => Err(CliError::NotFinite(line.trim().to_string())),
        None => Ok(()),
    })
}

/// Data layout, chosen at run time. The clustered layouts use `VL` = one 64-byte vector of the
/// arithmetic: 8 lanes in f64, 16 in f32 and f16s.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LayoutArg {
    /// Array of structures.
    Aos,
    /// Structure of arrays.
    Soa,
    /// Cluster structure of arrays.
    Csoa,
    /// Clustered array of structure of arrays.
    Caosoa,
}

/// Floating-point precision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Precision {
    /// Single precision.
    F32,
    /// Double precision.
    F64,
    /// Populations stored in binary16 (as their deviation from rest), computed in single
    /// precision: half the memory traffic of f32 (CPU and GPU backends).
    F16s,
}

/// Streaming scheme.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SchemeArg {
    /// Two copies, pull streaming (A-B).
    TwoCopy,
    /// One copy, AA pattern.
    InPlace,
}

impl From<SchemeArg> for Scheme {
    fn from(s: SchemeArg) -> Self {
        match s {
            SchemeArg::TwoCopy => Scheme::TwoCopy,
            SchemeArg::InPlace => Scheme::InPlace,
        }
    }
}

/// A computation generic over layout and precision.
pub trait Generic {
    /// Its result.
    type Output;
    /// Runs it with layout `L` and precision `T`.
    fn run<L: Layout, T: Real>(self) -> Self::Output;
}

impl Precision {
    /// Bytes of one stored population.
    pub fn bytes(self) -> usize {
        match self {
            Self::F32 => 4,
            Self::F64 => 8,
            Self::F16s => 2,
        }
    }

    /// The cluster width of one 64-byte vector of the arithmetic: 8 lanes in f64, 16 in f32
    /// and f16s.
    pub fn default_vl(self) -> usize {
        match self {
            Self::F64 => 8,
            Self::F32 | Self::F16s => 16,
        }
    }
}

/// `$job.run` in precision `$p`, with the layout type `$l64` in f64 and `$l32` in f32 and
/// f16s (a clustered layout's one 64-byte vector holds 8 lanes of f64, 16 of the others).
macro_rules! by_precision {
    ($job:ident, $p:expr, $l64:ty, $l32:ty) => {
        match $p {
            Precision::F64 => $job.run::<$l64, f64>(),
            Precision::F32 => $job.run::<$l32, f32>(),
            Precision::F16s => $job.run::<$l32, F16s>(),
        }
    };
}

/// Runs `job` with the layout and precision chosen at run time, the clustered layouts with
/// one 64-byte vector per cluster: every layout (`lbm bench`'s kernels).
pub fn dispatch<G: Generic>(layout: LayoutArg, precision: Precision, job: G) -> G::Output {
    match layout {
        LayoutArg::Aos => by_precision!(job, precision, Aos, Aos),
        LayoutArg::Soa => by_precision!(job, precision, Soa, Soa),
        LayoutArg::Csoa => by_precision!(job, precision, CSoa<8>, CSoa<16>),
        LayoutArg::Caosoa => by_precision!(job, precision, CAoSoa<8>, CAoSoa<16>),
    }
}

/// A computation generic over precision alone: what runs on the GPU, which takes the layout
/// as run-time data ([`lbm::LayoutKind`]).
pub trait GenericReal {
    /// Its result.
    type Output;
    /// Runs it with precision `T`.
    fn run<T: Real>(self) -> Self::Output;
}

/// Runs `job` with the precision chosen at run time.
pub fn dispatch_real<G: GenericReal>(precision: Precision, job: G) -> G::Output {
    match precision {
        Precision::F64 => job.run::<f64>(),
        Precision::F32 => job.run::<f32>(),
        Precision::F16s => job.run::<F16s>(),
    }
}

/// The layout of `layout` with `vl` lanes per cluster, as a run-time value.
pub fn layout_kind(layout: LayoutArg, vl: usize) -> LayoutKind {
    match layout {
        LayoutArg::Aos => LayoutKind::Aos,
        LayoutArg::Soa => LayoutKind::Soa,
        LayoutArg::Csoa => LayoutKind::CSoa(vl),
        LayoutArg::Caosoa => LayoutKind::CAoSoa(vl),
    }
}

/// Whether the CPU kernels of this build run clustered layouts `vl` lanes wide in
/// `precision`: one 64-byte vector ([`Precision::default_vl`]) always, 4, 8 and 16 lanes in
/// a build with the `widths` feature (each width compiles every kernel of every case once
/// more).
pub fn cpu_width_built(precision: Precision, vl: usize) -> bool {
    vl == precision.default_vl() || (cfg!(feature = "widths") && VL_CHOICES.contains(&vl))
}

/// Whether this build runs the cases (`lbm run`) on the CPU in `layout`: SoA and CAoSoA
/// always (the host's side of a GPU run, and the CPU's fastest), AoS and CSoA in a build with
/// the `layouts` feature (each compiles every case's kernels once more; `lbm bench` times
/// every layout in any build).
pub fn cpu_layout_built(layout: LayoutArg) -> bool {
    matches!(layout, LayoutArg::Soa | LayoutArg::Caosoa) || cfg!(feature = "layouts")
}

/// The cluster widths `--vl` offers (the GPU runs each; the CPU, one 64-byte vector unless
/// built with the `widths` feature).
pub const VL_CHOICES: [usize; 3] = [4, 8, 16];

/// Runs a case's `job` with the layout, cluster width and precision chosen at run time: the
/// layout and width must be ones the build has ([`cpu_layout_built`], [`cpu_width_built`];
/// the plan refuses others before any work).
pub fn dispatch_vl<G: Generic>(
    layout: LayoutArg,
    vl: usize,
    precision: Precision,
    job: G,
) -> G::Output {
    #[cfg(feature = "widths")]
    if vl != precision.default_vl() && matches!(layout, LayoutArg::Csoa | LayoutArg::Caosoa) {
        return widths::dispatch(layout, vl, precision, job);
    }
    debug_assert!(cpu_width_built(precision, vl), "refused by the plan");
    #[cfg(feature = "layouts")]
    return dispatch(layout, precision, job);
    #[cfg(not(feature = "layouts"))]
    match layout {
        LayoutArg::Soa => by_precision!(job, precision, Soa, Soa),
        LayoutArg::Caosoa => by_precision!(job, precision, CAoSoa<8>, CAoSoa<16>),
        LayoutArg::Aos | LayoutArg::Csoa => {
            unreachable!("the plan refuses a layout this build does not run (cpu_layout_built)")
        }
    }
}

/// The clustered layouts at the widths other than one 64-byte vector (feature `widths`).
#[cfg(feature = "widths")]
mod widths {
    use super::{Generic, LayoutArg, Precision};
    use lbm::{CAoSoa, CSoa, F16s};

    /// Runs `job` with a clustered `layout` of `vl` lanes (4, 8 or 16).
    pub fn dispatch<G: Generic>(
        layout: LayoutArg,
        vl: usize,
        precision: Precision,
        job: G,
    ) -> G::Output {
        macro_rules! by_vl {
            ($t:ty) => {
                match (layout, vl) {
                    (LayoutArg::Csoa, 4) => job.run::<CSoa<4>, $t>(),
                    (LayoutArg::Csoa, 8) => job.run::<CSoa<8>, $t>(),
                    (LayoutArg::Csoa, _) => job.run::<CSoa<16>, $t>(),
                    (_, 4) => job.run::<CAoSoa<4>, $t>(),
                    (_, 8) => job.run::<CAoSoa<8>, $t>(),
                    _ => job.run::<CAoSoa<16>, $t>(),
                }
            };
        }
        match precision {
            Precision::F64 => by_vl!(f64),
            Precision::F32 => by_vl!(f32),
            Precision::F16s => by_vl!(F16s),
        }
    }
}
