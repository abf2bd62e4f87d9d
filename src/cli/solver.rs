//! The driver's view of a lattice: the runtime's [`lbm::Solver`] — implemented by every
//! backend, the MPI ring included — plus what the program prints about it. Nothing here steps,
//! checks or checkpoints: that is the runtime's.

use lbm::metrics::{measure_bandwidth, step_pattern};
use lbm::output::Fields;
use lbm::{Model, Placement, Real, Scheme, Solver};

use super::CliError;

/// The largest array of the bandwidth probe after a run.
const PROBE_BYTES: usize = 256 << 20;

/// The smallest (a timing of fewer bytes says little).
const PROBE_FLOOR_BYTES: usize = 1 << 20;

/// The largest buffer of the device's copy probe after a run (two are allocated once the
/// lattice is dropped): one population copy up to this (a probe much smaller than the lattice under-reads
/// what a large GPU streams).
const DEVICE_PROBE_BYTES: u64 = 1 << 30;

/// What the driver needs of a lattice beyond [`lbm::Solver`]; every solver has it.
pub trait Driven: Solver {
    /// The moment fields of the planes whose outputs this process writes (collective:
    /// [`Solver::output_moments`]).
    fn fields(&mut self) -> Result<Fields, CliError> {
        let [_, ly, lz] = self.extent().size();
        let cells = [self.output_planes(), 0..ly, 0..lz];
        self.fields_of(cells, Self::output_moments)
    }

    /// The moment fields of this process's own sites, its block ([`Solver::local_box`];
    /// collective: [`Solver::local_moments`]): what its VTK piece holds.
    fn block_fields(&mut self) -> Result<Fields, CliError> {
        self.fields_of(self.local_box(), Self::local_moments)
    }

    /// The moment fields of the planes whose outputs this process writes, moved there from
    /// the fields of this process's block, `block` ([`Driven::block_fields`]; collective:
    /// [`Solver::planes_of`]): [`Driven::fields`] without computing the moments again.
    fn fields_from_blocks(&self, block: &Fields) -> Result<Fields, CliError> {
        let [_, ly, lz] = self.extent().size();
        let cells = [self.output_planes(), 0..ly, 0..lz];
        let moved = self.planes_of(block.data());
        Ok(Fields::piece::<Self::Model>(
            self.extent().size(),
            cells,
            self.steps_done(),
            moved,
        )?)
    }

    /// The fields of the box `cells` whose moments `moments` reads (collective).
    fn fields_of(
        &mut self,
        cells: [std::ops::Range<usize>; 3],
        moments: fn(&mut Self) -> Result<Vec<Vec<f64>>, lbm::Error>,
    ) -> Result<Fields, CliError> {
        let (size, step) = (self.extent().size(), self.steps_done());
        let data = moments(self)?;
        Ok(Fields::piece::<Self::Model>(size, cells, step, data)?)
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

    /// What the summary's probes need of the lattice, taken before it is dropped: they run
    /// after it, so that they never raise the run's peak memory.
    fn probes(&self) -> Probes {
        let per_site = <Self::Model as Model>::Q * <Self::Real as Real>::BYTES;
        let local: usize = self.local_box().iter().map(|r| r.len()).product();
        Probes {
            placement: self.placement(),
            scheme: self.scheme(),
            local_bytes: local * per_site,
            global_bytes: self.extent().sites() * per_site,
            ranks: self.group().processes(),
        }
    }
}

/// What the probes of the run's summary measure against (see [`Driven::probes`]).
pub struct Probes {
    /// Where the sites were updated.
    pub placement: Placement,
    scheme: Scheme,
    /// One copy of this process's populations, bytes.
    local_bytes: usize,
    /// One copy of the whole lattice's populations, bytes.
    global_bytes: usize,
    /// Processes of the run.
    pub ranks: usize,
}

impl Probes {
    /// The bandwidth the step's memory traffic is compared with, GB/s, and what it is,
    /// measured now where the sites were updated.
    pub fn bandwidth(&self) -> Result<(f64, String), CliError> {
        match &self.placement {
            Placement::Device(ctx) => {
                let bytes = (self.global_bytes as u64).min(DEVICE_PROBE_BYTES);
                let p = lbm::gpu::probe::copy_gbps(ctx, bytes)?;
                Ok((p.best, format!("device copy bandwidth ({})", p.how())))
            }
            // This process's sites: what its kernels sweep, and whether they stream.
            _ => cpu_bandwidth(self.scheme, self.local_bytes),
        }
    }
}

impl<S: Solver + ?Sized> Driven for S {}

/// The host's bandwidth for the memory pattern of the step of `scheme` on `lattice` bytes of
/// populations per copy ([`step_pattern`]), measured now: read-modify-write for the in-place
/// scheme, a copy for two-copy (with non-temporal stores where the step makes them). Each of
/// the probe's two arrays is half a copy of the populations (within [1, 256] MiB): the probe
/// sweeps as many bytes as the step, so it meets the caches the step meets (a lattice that
/// fits in the last-level cache is compared with the cache's bandwidth), and, run after the
/// lattice is dropped, it holds no more than the lattice did and does not raise the peak
/// memory of any process.
pub fn cpu_bandwidth(scheme: Scheme, lattice: usize) -> Result<(f64, String), CliError> {
    let bw = measure_bandwidth((lattice / 2).clamp(PROBE_FLOOR_BYTES, PROBE_BYTES), 5);
    let pattern = step_pattern(scheme, lattice);
    let p = bw.for_pattern(pattern);
    Ok((
        p.best,
        format!("{} bandwidth ({})", pattern.name(), p.how()),
    ))
}
