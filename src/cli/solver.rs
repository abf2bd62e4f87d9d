//! What the run driver needs of a backend: step, check, read the fields, checkpoint. One
//! implementation per backend, so that the driver, its outputs and its summary are the same
//! whichever runs the steps.

use std::path::Path;
use std::sync::Arc;

use lbm::gpu::{GpuContext, GpuLattice};
use lbm::hetero::HeteroLattice;
use lbm::metrics::{measure_bandwidth, Pattern};
use lbm::output::Fields;
use lbm::{Lattice, Layout, Model, Real, Scheme};

use super::CliError;

/// A lattice on some backend, as the driver sees it.
pub trait Solver {
    /// The model.
    type Model: Model;
    /// Steps done.
    fn steps_done(&self) -> u64;
    /// Runs `n` steps and waits for them.
    fn advance(&mut self, n: u64) -> Result<(), CliError>;
    /// Fails with [`lbm::LbmError::Diverged`] where the state has diverged.
    fn check(&self) -> Result<(), CliError>;
    /// The moment fields (`None` on processes that do not hold the output).
    fn fields(&self) -> Result<Option<Fields>, CliError>;
    /// Writes the whole state to `path`, atomically.
    fn write_checkpoint(&self, path: &Path) -> Result<(), CliError>;
    /// Whether this process prints and writes outputs.
    fn is_root(&self) -> bool {
        true
    }
    /// The next chunk's length and whether to stop, agreed by every process: the shortest
    /// chunk, and stop if any process asks to (one process: its own).
    fn agree(&self, chunk: u64, stop: bool) -> (u64, bool) {
        (chunk, stop)
    }
    /// Whether the outputs written by the root succeeded, told to every process.
    fn root_ok(&self, ok: bool) -> bool {
        ok
    }
    /// Layout, precision and scheme.
    fn layout(&self) -> String;
    /// The backend: device and threads.
    fn backend(&self) -> String;
    /// The bandwidth the step's memory traffic is compared with, GB/s, and what it is,
    /// measured now.
    fn reference_bandwidth(&self) -> Result<(f64, String), CliError>;
}

/// The CPU lattice.
pub struct CpuSolver<M: Model, L: Layout, T: Real> {
    lat: Lattice<M, L, T>,
}

impl<M: Model, L: Layout, T: Real> CpuSolver<M, L, T> {
    /// Wraps `lat`.
    pub fn new(lat: Lattice<M, L, T>) -> Self {
        Self { lat }
    }
}

/// Arrays of the bandwidth probe (well above the last-level cache).
const PROBE_BYTES: usize = 256 << 20;

impl<M: Model, L: Layout, T: Real> Solver for CpuSolver<M, L, T> {
    type Model = M;

    fn steps_done(&self) -> u64 {
        self.lat.steps_done()
    }

    fn advance(&mut self, n: u64) -> Result<(), CliError> {
        for _ in 0..n {
            self.lat.step();
        }
        Ok(())
    }

    fn check(&self) -> Result<(), CliError> {
        Ok(self.lat.check()?)
    }

    fn fields(&self) -> Result<Option<Fields>, CliError> {
        let d = self.lat.dims();
        let f = Fields::collect::<M, _>((d.lx, d.ly), self.lat.steps_done(), |n| {
            self.lat.moment_field(n)
        })?;
        Ok(Some(f))
    }

    fn write_checkpoint(&self, path: &Path) -> Result<(), CliError> {
        Ok(self.lat.write_checkpoint(path)?)
    }

    fn layout(&self) -> String {
        format!("{}, {}, {}", L::NAME, T::NAME, self.lat.scheme().name())
    }

    fn backend(&self) -> String {
        format!("cpu, {} threads", rayon::current_num_threads())
    }

    fn reference_bandwidth(&self) -> Result<(f64, String), CliError> {
        cpu_bandwidth(self.lat.scheme())
    }
}

/// The host's bandwidth for the memory pattern of `scheme`, measured now: read-modify-write
/// for the in-place scheme, copy for two-copy.
pub fn cpu_bandwidth(scheme: Scheme) -> Result<(f64, String), CliError> {
    let bw = measure_bandwidth(PROBE_BYTES, 3);
    Ok(match scheme {
        Scheme::InPlace => (
            bw.for_pattern(Pattern::InPlace),
            "read-modify-write bandwidth".into(),
        ),
        Scheme::TwoCopy => (bw.for_pattern(Pattern::Copy), "copy bandwidth".into()),
    })
}

/// The GPU lattice.
pub struct GpuSolver<M: Model, L: Layout, T: Real> {
    lat: GpuLattice<M, L, T>,
    ctx: Arc<GpuContext>,
}

impl<M: Model, L: Layout, T: Real> GpuSolver<M, L, T> {
    /// Wraps `lat`, which runs on `ctx`.
    pub fn new(lat: GpuLattice<M, L, T>, ctx: Arc<GpuContext>) -> Self {
        Self { lat, ctx }
    }
}

impl<M: Model, L: Layout, T: Real> Solver for GpuSolver<M, L, T> {
    type Model = M;

    fn steps_done(&self) -> u64 {
        self.lat.steps_done()
    }

    fn advance(&mut self, n: u64) -> Result<(), CliError> {
        self.lat.steps(n);
        Ok(self.lat.finish()?)
    }

    fn check(&self) -> Result<(), CliError> {
        Ok(self.lat.check()?)
    }

    fn fields(&self) -> Result<Option<Fields>, CliError> {
        let d = self.lat.dims();
        let f = Fields::collect::<M, _>((d.lx, d.ly), self.lat.steps_done(), |n| {
            self.lat.moment_field(n)
        })?;
        Ok(Some(f))
    }

    fn write_checkpoint(&self, path: &Path) -> Result<(), CliError> {
        Ok(self.lat.write_checkpoint(path)?)
    }

    fn layout(&self) -> String {
        format!("{}, {}, two-copy (A-B)", L::NAME, T::NAME)
    }

    fn backend(&self) -> String {
        let note = if self.ctx.is_cpu() {
            " — a CPU adapter (software Vulkan): not GPU figures"
        } else {
            ""
        };
        format!("gpu, {}{note}", self.ctx.describe())
    }

    fn reference_bandwidth(&self) -> Result<(f64, String), CliError> {
        let bytes = self.lat.storage_bytes() as u64 / 2;
        let gbps = lbm::gpu::bench::copy_gbps(&self.ctx, bytes.min(256 << 20), 3)?;
        Ok((gbps, "device copy bandwidth".into()))
    }
}

/// The lattice split between host and device ([`lbm::hetero`]).
pub struct HeteroSolver<M: Model, L: Layout, T: Real> {
    lat: HeteroLattice<M, L, T>,
    ctx: Arc<GpuContext>,
}

impl<M: Model, L: Layout, T: Real> HeteroSolver<M, L, T> {
    /// Wraps `lat`, whose device part runs on `ctx`.
    pub fn new(lat: HeteroLattice<M, L, T>, ctx: Arc<GpuContext>) -> Self {
        Self { lat, ctx }
    }
}

impl<M: Model, L: Layout, T: Real> Solver for HeteroSolver<M, L, T> {
    type Model = M;

    fn steps_done(&self) -> u64 {
        self.lat.steps_done()
    }

    fn advance(&mut self, n: u64) -> Result<(), CliError> {
        self.lat.steps(n)?;
        Ok(self.lat.finish()?)
    }

    fn check(&self) -> Result<(), CliError> {
        Ok(self.lat.check()?)
    }

    fn fields(&self) -> Result<Option<Fields>, CliError> {
        let global = self.lat.to_lattice()?;
        CpuSolver::new(global).fields()
    }

    fn write_checkpoint(&self, path: &Path) -> Result<(), CliError> {
        Ok(self.lat.to_lattice()?.write_checkpoint(path)?)
    }

    fn layout(&self) -> String {
        format!("{}, {}, two-copy (A-B)", L::NAME, T::NAME)
    }

    fn backend(&self) -> String {
        let how = if self.lat.split_model().is_some() {
            "tuned at start-up"
        } else {
            "fixed"
        };
        format!(
            "hetero: M = {} border columns on each side on the host ({:.0}% of the columns, {how}), \
             the bulk on {}",
            self.lat.border_columns(),
            100.0 * self.lat.host_share(),
            self.ctx.describe()
        )
    }

    fn reference_bandwidth(&self) -> Result<(f64, String), CliError> {
        cpu_bandwidth(Scheme::TwoCopy)
    }
}
