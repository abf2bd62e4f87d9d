//! The driver's view of a lattice: the runtime's [`lbm::Solver`] — implemented by every
//! backend, the MPI ring included — plus what the program prints about it. Nothing here steps,
//! checks or checkpoints: that is the runtime's.

use lbm::metrics::{measure_bandwidth, step_pattern};
use lbm::output::Fields;
use lbm::{Model, Placement, Real, Scheme, Solver};

use super::CliError;

/// The largest array of the bandwidth probe after a run.
const PROBE_BYTES: usize = 256 << 20;

/// The smallest: four last-level caches, or this where the cache size cannot be read.
const PROBE_FLOOR_BYTES: usize = 64 << 20;

/// The largest buffer of the device's copy probe after a run (two are allocated beside the
/// lattice): one population copy up to this (a probe much smaller than the lattice under-reads
/// what a large GPU streams).
const DEVICE_PROBE_BYTES: u64 = 1 << 30;

/// What the driver needs of a lattice beyond [`lbm::Solver`]; every solver has it.
pub trait Driven: Solver {
    /// The moment fields of the planes whose outputs this process writes (collective:
    /// [`Solver::output_moments`]).
    fn fields(&self) -> Result<Fields, CliError> {
        let e = self.extent();
        Ok(Fields::piece::<Self::Model>(
            e.size(),
            self.output_planes(),
            self.steps_done(),
            self.output_moments()?,
        )?)
    }

    /// Layout, precision and scheme, in words.
    fn storage(&self) -> String {
        let scheme = match self.scheme() {
            Scheme::TwoCopy => "two-copy (A-B)",
            Scheme::InPlace => "in-place (AA)",
        };
        format!(
            "{}, {}, {scheme}",
            self.layout_name(),
            <Self::Real as Real>::NAME
        )
    }

    /// The bandwidth the step's memory traffic is compared with, GB/s, and what it is,
    /// measured now where the sites are updated.
    fn reference_bandwidth(&self) -> Result<(f64, String), CliError> {
        match self.placement() {
            Placement::Device(ctx) => {
                let e = self.extent();
                let bytes =
                    (e.sites() * <Self::Model as Model>::Q * <Self::Real as Real>::BYTES) as u64;
                let p = lbm::gpu::probe::copy_gbps(&ctx, bytes.min(DEVICE_PROBE_BYTES))?;
                Ok((p.best, format!("device copy bandwidth ({})", p.how())))
            }
            _ => {
                // This process's sites: what its kernels sweep, and whether they stream.
                let sites: usize = self.local_box().iter().map(|r| r.len()).product();
                let slab = sites * <Self::Model as Model>::Q * <Self::Real as Real>::BYTES;
                cpu_bandwidth(self.scheme(), slab)
            }
        }
    }
}

impl<S: Solver + ?Sized> Driven for S {}

/// The host's bandwidth for the memory pattern of the step of `scheme` on `lattice` bytes of
/// populations per copy ([`step_pattern`]), measured now: read-modify-write for the in-place
/// scheme, a copy for two-copy (with non-temporal stores where the step makes them). Each of
/// the probe's two arrays is half a copy of the populations, so the probe holds no more than
/// the lattice did and does not raise the run's peak memory, within [four last-level caches,
/// 256 MiB].
pub fn cpu_bandwidth(scheme: Scheme, lattice: usize) -> Result<(f64, String), CliError> {
    let floor = lbm::machine::last_level_cache().map_or(PROBE_FLOOR_BYTES, |c| 4 * c);
    let bw = measure_bandwidth((lattice / 2).clamp(floor.min(PROBE_BYTES), PROBE_BYTES), 5);
    let pattern = step_pattern(scheme, lattice);
    let p = bw.for_pattern(pattern);
    Ok((
        p.best,
        format!("{} bandwidth ({})", pattern.name(), p.how()),
    ))
}
