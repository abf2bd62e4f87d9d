//! The plan of a run: the settings every case shares, resolved from the command line and
//! the case file (`run`), and what the driver, the distributed and the coupled runs need of
//! it — the output directory prepared, the GPU's options, the checkpoint to resume from.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

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
    /// The token of the run whose outputs the directory holds (set with the directory): in
    /// the stamp and in the checkpoints' `about`.
    pub run: String,
}

impl Plan {
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

/// The file in the output directory that says which run its outputs of case `name` belong to
/// (its token, the case and its settings): a resumed run appends only to its own outputs.
pub(super) fn stamp_path(plan: &Plan, name: &str) -> PathBuf {
    plan.out.join(format!("{name}_run.toml"))
}

/// The stamp's contents.
#[derive(Debug, Serialize, Deserialize)]
struct Stamp {
    /// The run's token, also in the `about` of its checkpoints.
    run: String,
    /// The case.
    case: String,
    /// The case's settings, as the checkpoints' `about` has them.
    settings: String,
}

/// Writes the stamp of the run (the root, as the run starts): its token, case and settings.
pub(super) fn write_stamp(plan: &Plan, name: &str, settings: &str) -> Result<(), CliError> {
    let stamp = Stamp {
        run: plan.run.clone(),
        case: name.into(),
        settings: settings.into(),
    };
    let text = toml::to_string(&stamp).unwrap_or_default();
    let path = stamp_path(plan, name);
    lbm::io::write_atomically(&path, &[text.as_bytes()])
        .map_err(|source| lbm::output::OutputError::Io { path, source }.into())
}

/// The token of the run whose outputs the directory holds, from its stamp (`None`: no stamp,
/// or one that cannot be read).
fn stamped_run(plan: &Plan, name: &str) -> Option<String> {
    let mut text = String::new();
    std::fs::File::open(stamp_path(plan, name))
        .ok()?
        .take(1 << 16)
        .read_to_string(&mut text)
        .ok()?;
    toml::from_str::<Stamp>(&text).ok().map(|s| s.run)
}

/// A new run's token: different for every start.
fn new_token() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    format!("{:016x}", nanos ^ (u64::from(std::process::id()) << 40))
}

/// Creates the output directory and checks that it can be written; refuses to write through a
/// symbolic link planted among the case's outputs, to overwrite the outputs of an earlier run
/// of the case unless `--force` (which removes them first, on the root), and to resume into a
/// directory that holds another run's outputs (`resumed`: what the checkpoint says of its
/// run). Returns the token of the run whose outputs the directory will hold.
pub(super) fn prepare_out_dir(
    plan: &Plan,
    name: &str,
    resumed: Option<&BTreeMap<String, String>>,
    root: bool,
) -> Result<String, CliError> {
    let dir = &plan.out;
    let fail = |reason: String| CliError::OutDir {
        path: dir.display().to_string(),
        reason,
    };
    if dir.exists() && !dir.is_dir() {
        return Err(fail(
            "it is a file, not a directory: give --out a directory".into(),
        ));
    }
    std::fs::create_dir_all(dir).map_err(|e| {
        fail(format!(
            "it cannot be created ({e}): give --out a directory you can write, e.g. out/{name}"
        ))
    })?;
    let probe = dir.join(format!(".lbm-write-test-{}", std::process::id()));
    std::fs::write(&probe, b"").map_err(|e| {
        fail(format!(
            "it cannot be written ({e}): give --out a directory you can write"
        ))
    })?;
    let _ = std::fs::remove_file(&probe);
    let outputs = outputs_of(dir, name).map_err(|e| fail(e.to_string()))?;
    if let Some(link) = outputs.iter().find(|(_, link)| *link) {
        return Err(fail(format!(
            "{} is a symbolic link: outputs are never written through links; remove it, or \
             give --out another directory",
            link.0.display()
        )));
    }
    let earlier: Vec<&PathBuf> = outputs
        .iter()
        .map(|(p, _)| p)
        .filter(|p| {
            let f = p
                .file_name()
                .map(|f| f.to_string_lossy())
                .unwrap_or_default();
            !f.contains("_checkpoint.lbm") && *f != *format!("{name}_run.toml")
        })
        .collect();
    let theirs = resumed.and_then(|a| a.get("run").cloned());
    let own = match (&theirs, stamped_run(plan, name)) {
        (Some(t), Some(s)) => *t == s,
        _ => false,
    };
    let mixes = !earlier.is_empty() && (resumed.is_none() || !own);
    if mixes && !plan.force {
        let first = earlier[0].strip_prefix(dir).unwrap_or(earlier[0]);
        let what = format!(
            "it holds outputs of {} {name} run ({} and {} more)",
            if resumed.is_none() {
                "an earlier"
            } else {
                "another"
            },
            first.display(),
            earlier.len() - 1
        );
        return Err(fail(match resumed {
            None => format!(
                "{what}; pass --force to replace them, --out to choose another directory, or \
                 --resume to continue that run"
            ),
            Some(_) => format!(
                "{what}, not of the run that wrote the checkpoint; resume into that run's \
                 directory, give --out a new directory, or pass --force to replace them"
            ),
        }));
    }
    if mixes && root {
        for p in earlier {
            if let Err(e) = std::fs::remove_file(p)
                && e.kind() != std::io::ErrorKind::NotFound
            {
                return Err(fail(format!(
                    "{} of the earlier run cannot be removed ({e})",
                    p.display()
                )));
            }
        }
    }
    Ok(theirs.unwrap_or_else(new_token))
}

/// The entries of `dir` (and of its `<name>_pieces` directory) that are outputs of case `name`
/// (named after it), each with whether it is a symbolic link (never followed).
fn outputs_of(dir: &Path, name: &str) -> std::io::Result<Vec<(PathBuf, bool)>> {
    let ours = |f: &str| f.starts_with(&format!("{name}_")) || f == format!("{name}.pvd");
    let mut found = Vec::new();
    for e in std::fs::read_dir(dir)? {
        let e = e?;
        let f = e.file_name().to_string_lossy().into_owned();
        if !ours(&f) {
            continue;
        }
        let kind = e.file_type()?;
        if kind.is_dir() && f == format!("{name}_pieces") {
            for p in std::fs::read_dir(e.path())? {
                let p = p?;
                let pf = p.file_name().to_string_lossy().into_owned();
                if ours(&pf) {
                    found.push((p.path(), p.file_type()?.is_symlink()));
                }
            }
        } else if !kind.is_dir() || kind.is_symlink() {
            found.push((e.path(), kind.is_symlink()));
        }
    }
    found.sort();
    Ok(found)
}

/// The directories from `out` up to the first that exists now: those a run creates, and
/// removes again if it fails before writing anything in them.
pub(super) fn missing_dirs(out: &Path) -> Vec<PathBuf> {
    out.ancestors()
        .take_while(|d| !d.as_os_str().is_empty() && !d.exists())
        .map(Path::to_path_buf)
        .collect()
}

/// Removes `dirs` (deepest first) where they are empty: what a refused run created.
pub(super) fn remove_if_empty(dirs: &[PathBuf]) {
    for d in dirs {
        if std::fs::remove_dir(d).is_err() {
            break;
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

/// The GPU options of the plan.
pub(super) fn gpu_options(plan: &Plan) -> GpuOptions {
    GpuOptions {
        adapter: plan.adapter.clone(),
        ..GpuOptions::default()
    }
}

/// A checkpoint to resume from, with its path.
pub(super) type Resume<'a, M, T> = Option<(&'a PathBuf, Checkpoint<M, T>)>;
