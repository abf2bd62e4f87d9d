//! Runtime of the `lbm` framework: the [`Model`] trait that generated models implement, and the
//! machinery that runs them on lattices: the four data layouts of Calore et al. 2019 §4
//! ([`layout`]), the [`Lattice`] with its streaming schemes, the CPU kernels, boundary conditions
//! ([`boundary`]) and the benchmark probes ([`metrics`]); the GPU backend ([`gpu`]) and the
//! host/device split of a lattice ([`hetero`], Calore et al. 2019 §5–6).
//!
//! # References
//! The documentation cites these papers by first author and year:
//! - Calore et al. 2016: E. Calore et al., *Performance and portability of accelerated lattice
//!   Boltzmann applications with OpenACC*, Concurrency and Computation: Practice and Experience
//!   28 (2016) 3485–3502 (the ring decomposition, §4, and its performance model, §5).
//! - Calore et al. 2018: E. Calore et al., *Early experience on using Knights Landing processors
//!   for lattice Boltzmann applications*, PPAM 2017 (2018).
//! - Calore et al. 2019: E. Calore et al., *Optimization of lattice Boltzmann simulations on
//!   heterogeneous computers*, Int. J. High Performance Computing Applications (2019) (the
//!   D2Q37 production case, §3; the data layouts and the benchmark of Table 2, §4; the
//!   host/device split and its workload model, §5–6).
//! - Szőke et al. 2017: M. Szőke et al., *Performance evaluation of a two-dimensional lattice
//!   Boltzmann solver using CUDA and PGAS UPC based parallelisation*, ACM Transactions on
//!   Mathematical Software (2017) (the D2Q9 lid-driven cavity, bounce-back walls, §2).
//!
//! Measured performance, dated and with the commands that reproduce it, is in the repository's
//! `docs/performance.md`.

pub mod backend;
pub mod blocks;
pub mod boundary;
mod checkpoint;
mod coupled;
#[cfg(feature = "gpu")]
mod device;
pub mod distributed;
pub mod domain;
mod error;
pub mod fd;
#[cfg(feature = "gpu")]
pub mod gpu;
pub mod group;
#[cfg(feature = "gpu")]
pub mod hetero;
pub mod io;
mod kernels;
mod lattice;
pub mod layout;
pub mod machine;
pub mod memory;
pub mod metrics;
mod model;
#[cfg(feature = "mpi")]
pub mod mpi_ring;
mod parallel;
pub mod planes;
mod prefetch;
mod real;
mod runtime_error;
pub mod scaling;
mod scheme;
pub mod slab_backend;
pub mod solver;
mod storage;
#[cfg(test)]
mod testing;
mod tuner;

pub use blocks::Extent;
pub use boundary::{Boundaries, BoundarySpec, InflowProfile, Interpolation, Obstacles, Wall};
pub use checkpoint::{
    damaged_checkpoint, fall_back, previous_checkpoint, read_checkpoint, read_manifest, read_set,
    verify_checkpoint, Checkpoint, CheckpointError, CheckpointHeader, CheckpointSet, Columns,
    Fallback, FdFacts, ParamValue, SetPart, Shard,
};
pub use coupled::Coupled;
pub use error::{LbmError, ParamError};
pub use kernels::{Pattern, Stores};
pub use lattice::{check_size, default_max_mach, Kernel, Lattice};
pub use layout::{Aos, CAoSoa, CSoa, Dims, Layout, LayoutKind, Soa, WithLayout, WithVl};
pub use model::{moment_index, ClusterAccess, Model, Role};
pub use prefetch::{Choice, CANDIDATES as PREFETCH_DISTANCES};
pub use real::{F16s, Real, Transferable};
pub use runtime_error::Error;
pub use scheme::Scheme;
pub use slab_backend::SlabBackend;
pub use solver::{Block, Placement, ReadMoments, Solver, Totals};
pub use storage::ALIGN;
#[cfg(test)]
mod lattice_tests;
#[cfg(test)]
mod module_graph_tests;
