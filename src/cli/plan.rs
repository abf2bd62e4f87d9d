//! The plan of a run: the settings every case shares, resolved from the command line and
//! the case file (`run`), and what the driver, the distributed and the coupled runs need of
//! it — the output directory prepared, the GPU's options, the checkpoint to resume from.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use lbm::backend::{Backend, Gpu};
use lbm::blocks::{Cut, Decomposition};
use lbm::gpu::{AdapterChoice, GpuOptions};
use lbm::hetero::SplitChoice;
use lbm::memory::Need;
use lbm::{Checkpoint, LayoutKind, Scheme};

use super::say::note;
use super::settings::BackendArg;
use super::world::World;
use super::{CliError, LayoutArg, Precision, layout_kind};

/// The resolved settings that every case shares.
#[derive(Debug, Clone)]
pub struct Plan {
    /// Steps in total.
    pub steps: u64,
    /// Precision.
    pub precision: Precision,
    /// Layout.
    pub layout: LayoutArg,
    /// Cluster width.
    pub vl: usize,
    /// Streaming scheme.
    pub scheme: Scheme,
    /// Backend.
    pub backend: BackendArg,
    /// GPU adapter.
    pub adapter: AdapterChoice,
    /// The host/device split of backend hetero.
    pub split: SplitChoice,
    /// How the box is cut into blocks under mpiexec, `--cut` or `--block` (`None`:
    /// [`Plan::decomposition`]'s default).
    pub blocks: Option<Decomposition>,
    /// Divergence checks every this many steps.
    pub check_every: u64,
    /// Steady-state tolerance.
    pub until_steady: Option<f64>,
    /// Output directory.
    pub out: PathBuf,
    /// Output interval (0: first and last step only).
    pub output_every: u64,
    /// A diagnostics row every N steps besides the outputs (0: only with them).
    pub diagnostics_every: u64,
    /// The plane of a 3-D lattice drawn as images, as asked: an axis (0, 1, 2 for x, y, z)
    /// and a position (`None`: the case's, [`lbm::cases::Case::slice`]).
    pub slice: Option<(usize, usize)>,
    /// Fields drawn as images (`None`: the case's).
    pub images: Option<Vec<String>>,
    /// Write VTK files.
    pub vtk: bool,
    /// Compress them with zlib.
    pub vtk_zlib: bool,
    /// Checkpoint interval (0: none).
    pub checkpoint_every: u64,
    /// The checkpoint to resume from.
    pub resume: Option<PathBuf>,
    /// Overwrite earlier outputs.
    pub force: bool,
    /// What this process is estimated to hold (set by the memory check before the run).
    pub memory: Need,
    /// The token of the run whose outputs the directory holds (set with the directory): in
    /// the stamp and in the checkpoints' `about`.
    pub run: String,
}

impl Plan {
    /// How a lattice of `size` sites in `dim` dimensions is cut over `ranks` processes: as
    /// asked (a cut, or a sparse domain's blocks), else the ranks balanced over the axes (as
    /// `MPI_Dims_create` does).
    pub fn decomposition(&self, ranks: usize, size: [usize; 3], dim: usize) -> Decomposition {
        (self.blocks).unwrap_or_else(|| Cut::balanced(ranks, dim, size, 0).into())
    }

    /// When the run does what: its last step and its intervals.
    pub fn schedule(&self) -> lbm::driver::Schedule {
        lbm::driver::Schedule {
            steps: self.steps,
            output_every: self.output_every,
            diagnostics_every: self.diagnostics_every,
            checkpoint_every: self.checkpoint_every,
            check_every: self.check_every,
        }
    }
}

/// Refuses to resume from the checkpoint at `path` a run of another case or settings than
/// `name` with `settings` (its Debug form), by what the checkpoint says of the run that wrote
/// it (`about`; a checkpoint the library wrote without it is checked by model, size and
/// parameters alone).
pub(super) fn check_about(
    path: &Path,
    about: &BTreeMap<String, String>,
    name: &str,
    settings: &str,
) -> Result<(), CliError> {
    match (about.get("case"), about.get("settings")) {
        (Some(theirs), Some(how)) if theirs != name || how != settings => Err(CliError::Resume {
            path: path.display().to_string(),
            what: format!(
                "it was written by a {theirs} run ({how}); this run is {name} ({settings})"
            ),
        }),
        _ => Ok(()),
    }
}

/// The checkpoint a run resumes when asked for `path`: `path`, or the previous complete
/// checkpoint kept beside it when the one at `path` is not whole (damaged, truncated, a part
/// missing), said on standard error with why ([`lbm::fall_back`]). The first process reads
/// the checkpoints and decides for all (collective).
pub(super) fn resume_path(world: &World, path: &Path) -> PathBuf {
    let fallback = if world.group().is_root() {
        lbm::fall_back(path)
    } else {
        None
    };
    if let Some(f) = &fallback {
        let aside = f.set_aside.as_ref().map_or_else(String::new, |to| {
            format!("; the newest's manifest is moved to {}", to.display())
        });
        note(&format!(
            "lbm: the newest checkpoint cannot be resumed: {}\nlbm: resuming from the previous \
             complete one, {} (step {}){aside}\n",
            f.why,
            f.previous.display(),
            f.step
        ));
    }
    if world.group().any(fallback.is_some()) {
        lbm::previous_checkpoint(path)
    } else {
        path.to_path_buf()
    }
}

/// The backend the plan asks for ([`open_backend`]).
pub(super) fn backend(world: &World, plan: &Plan) -> Result<Backend, CliError> {
    let layout = layout_kind(plan.layout, plan.vl);
    open_backend(
        world,
        plan.backend,
        plan.adapter.clone(),
        layout,
        plan.split,
    )
}

/// The backend `arg`: a GPU's populations in `layout`, a split as `split` says. Its GPU (the
/// node's adapters taken in turn by its processes, unless `adapter` names one) is opened
/// before the memory check, which counts a CPU adapter's copies as the host's memory; one
/// process fails here when it does not open, a process of several reports why when its
/// block is built, with the others (their construction agrees on errors).
pub(super) fn open_backend(
    world: &World,
    arg: BackendArg,
    adapter: AdapterChoice,
    layout: LayoutKind,
    split: SplitChoice,
) -> Result<Backend, CliError> {
    let gpu = || -> Result<Gpu, CliError> {
        let gpu = Gpu::open(GpuOptions {
            adapter: adapter.clone(),
            node_rank: world.node_rank(),
            ..GpuOptions::default()
        });
        if world.group().ranks() == 1 {
            gpu.context()?;
        }
        Ok(gpu)
    };
    Ok(match arg {
        BackendArg::Cpu => Backend::Host,
        BackendArg::Gpu => Backend::Device {
            gpu: gpu()?,
            layout,
        },
        BackendArg::Hetero => Backend::Split {
            gpu: gpu()?,
            choice: split,
        },
    })
}

/// A checkpoint to resume from, with its path.
pub(super) type Resume<'a, M, T> = Option<(&'a PathBuf, Checkpoint<M, T>)>;
