//! Command-line interface (clap derive) and the dispatch from run-time choices (layout,
//! precision) to the generic lattice types.

mod bench;
mod cavity;
mod models;
mod png;
mod split;

use clap::{Parser, Subcommand, ValueEnum};
use lbm::{Aos, CAoSoa, CSoa, Layout, LbmError, Real, Scheme, Soa};

/// Lattice Boltzmann solvers declared with a DSL, run on the CPU.
#[derive(Debug, Parser)]
#[command(name = "lbm", version, about)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run a case.
    Run {
        #[command(subcommand)]
        case: Case,
    },
    /// Benchmark propagate, bc, collide and the fused step for every layout and precision
    /// (seed 000 Table 2), with the machine's bandwidth measured in the same run; with
    /// `--split`, sweep the host/device split (seed 000 Fig. 8).
    Bench(bench::BenchArgs),
    /// List the shipped models.
    Models,
}

#[derive(Debug, Subcommand)]
enum Case {
    /// D2Q9 lid-driven cavity to steady state, compared with Ghia et al. (1982).
    Cavity(cavity::CavityArgs),
}

/// Errors of the program.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// From the runtime.
    #[error(transparent)]
    Lbm(#[from] LbmError),
    /// From the GPU backend.
    #[error(transparent)]
    Gpu(#[from] lbm::gpu::GpuError),
    /// From the host/device split.
    #[error(transparent)]
    Hetero(#[from] lbm::hetero::HeteroError),
    /// Writing an output file failed.
    #[error("cannot write {path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// Encoding an image failed.
    #[error("cannot write image {path}: {source}")]
    Image {
        /// The file.
        path: String,
        /// Why.
        source: image::ImageError,
    },
}

/// Runs the parsed command line.
pub fn run(cli: Cli) -> Result<(), CliError> {
    match cli.command {
        Command::Run {
            case: Case::Cavity(a),
        } => cavity::run(&a),
        Command::Bench(a) => bench::run(&a),
        Command::Models => {
            models::print();
            Ok(())
        }
    }
}

/// Data layout, chosen at run time. The clustered layouts use `VL` = one 64-byte vector:
/// 8 lanes in f64, 16 in f32.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Precision {
    /// Single precision.
    F32,
    /// Double precision.
    F64,
}

/// Streaming scheme.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
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

/// Runs `job` with the layout and precision chosen at run time.
pub fn dispatch<G: Generic>(layout: LayoutArg, precision: Precision, job: G) -> G::Output {
    match (layout, precision) {
        (LayoutArg::Aos, Precision::F64) => job.run::<Aos, f64>(),
        (LayoutArg::Soa, Precision::F64) => job.run::<Soa, f64>(),
        (LayoutArg::Csoa, Precision::F64) => job.run::<CSoa<8>, f64>(),
        (LayoutArg::Caosoa, Precision::F64) => job.run::<CAoSoa<8>, f64>(),
        (LayoutArg::Aos, Precision::F32) => job.run::<Aos, f32>(),
        (LayoutArg::Soa, Precision::F32) => job.run::<Soa, f32>(),
        (LayoutArg::Csoa, Precision::F32) => job.run::<CSoa<16>, f32>(),
        (LayoutArg::Caosoa, Precision::F32) => job.run::<CAoSoa<16>, f32>(),
    }
}
