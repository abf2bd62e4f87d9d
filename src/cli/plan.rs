//! The plan of a run: the settings every case shares, resolved from the command line and
//! the case file (`run`), and what the driver, the distributed and the coupled runs need of
//! it — the output directory prepared, the GPU's options, the checkpoint to resume from.

use std::path::PathBuf;

use lbm::gpu::{AdapterChoice, GpuOptions};
use lbm::hetero::SplitChoice;
use lbm::memory::Need;
use lbm::{Checkpoint, Scheme};

use super::settings::BackendArg;
use super::{CliError, LayoutArg, Precision};

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
    /// The plane of a 3-D lattice drawn as images: an axis (0, 1, 2 for x, y, z) and a
    /// position (`None`: the middle of the axis); a plane of constant z by default.
    pub slice: (usize, Option<usize>),
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
}

/// Creates the output directory, checks that it can be written, and refuses to overwrite the
/// outputs of an earlier run of the case unless `--force` (or `--resume`, which continues it).
pub(super) fn prepare_out_dir(plan: &Plan, name: &str) -> Result<(), CliError> {
    let dir = &plan.out;
    let fail = |reason: String| CliError::OutDir {
        path: dir.display().to_string(),
        reason,
    };
    std::fs::create_dir_all(dir).map_err(|e| fail(e.to_string()))?;
    let probe = dir.join(format!(".lbm-write-test-{}", std::process::id()));
    std::fs::write(&probe, b"").map_err(|e| fail(e.to_string()))?;
    let _ = std::fs::remove_file(&probe);
    if plan.force || plan.resume.is_some() {
        return Ok(());
    }
    let prefix = format!("{name}_");
    let mut existing: Vec<String> = std::fs::read_dir(dir)
        .map_err(|e| fail(e.to_string()))?
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|f| f.starts_with(&prefix) || *f == format!("{name}.pvd"))
        .collect();
    existing.sort();
    if let Some(first) = existing.first() {
        return Err(fail(format!(
            "it holds outputs of an earlier {name} run ({first} and {} more); pass --force to \
             overwrite them, --out to choose another directory, or --resume to continue that run",
            existing.len() - 1
        )));
    }
    Ok(())
}

/// The GPU options of the plan.
pub(super) fn gpu_options(plan: &Plan) -> GpuOptions {
    GpuOptions {
        adapter: plan.adapter.clone(),
        ..GpuOptions::default()
    }
}

/// A checkpoint to resume from, with its path.
pub(super) type Resume<'a, M, T> = Option<(&'a PathBuf, Checkpoint<M, T>)>;
