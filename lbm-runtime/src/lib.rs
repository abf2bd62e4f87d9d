//! Runtime of the `lbm` framework: the [`Model`] trait that generated models implement, and the
//! machinery that runs them on lattices: the four data layouts of seed 000 §4 ([`layout`]),
//! the [`Lattice`] with its streaming schemes, the CPU kernels, boundary conditions
//! ([`boundary`]) and the benchmark probes ([`metrics`]); the GPU backend ([`gpu`]) and the
//! host/device split of a lattice ([`hetero`], seed 000 §5–6).

pub mod boundary;
pub mod cavity;
mod checkpoint;
mod coupled;
pub mod domain;
mod error;
#[cfg(feature = "gpu")]
pub mod gpu;
#[cfg(feature = "gpu")]
pub mod hetero;
pub mod io;
mod kernels;
mod lattice;
pub mod layout;
pub mod memory;
pub mod metrics;
mod model;
#[cfg(feature = "mpi")]
pub mod mpi_ring;
mod prefetch;
mod real;
pub mod scaling;
pub mod slab_backend;
pub mod solver;
mod storage;
#[cfg(test)]
mod testing;
mod tuner;

pub use boundary::{Boundaries, BoundarySpec, Obstacles, Wall};
pub use checkpoint::{
    read_checkpoint, Checkpoint, CheckpointError, CheckpointHeader, Columns, ParamValue, Shard,
};
pub use coupled::Coupled;
pub use error::{Error, LbmError};
pub use kernels::Stores;
pub use lattice::{default_max_mach, Kernel, Lattice, Scheme};
pub use layout::{Aos, CAoSoa, CSoa, Dims, Layout, Soa, WithVl};
pub use model::{moment_index, ClusterAccess, Model, ParamError, Role};
pub use prefetch::{Choice, CANDIDATES as PREFETCH_DISTANCES};
pub use real::{F16s, Real, Transferable};
pub use slab_backend::SlabBackend;
pub use solver::{Extent, Placement, Solver, Totals};
pub use storage::ALIGN;
#[cfg(test)]
mod lattice_tests;
