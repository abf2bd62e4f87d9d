//! The output directory of a run: owned by one run at a time (an advisory lock), holding the
//! outputs of one run of a case (its stamp), never written through links.

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use super::CliError;
use super::plan::Plan;

/// The lock file in an output directory: locked (`flock`) by the run that writes there, and
/// naming it for a second run that is refused.
const LOCK: &str = ".lbm-lock";

/// The output directories this process has locked, with their lock files: held open, so
/// locked, until the process ends (the system releases the locks of a process that dies).
static HELD: Mutex<Vec<(PathBuf, File)>> = Mutex::new(Vec::new());

/// Creates the output directory `dir`, checks that it can be written, and (on the `root`
/// process) takes its lock for the rest of the process: a second run into the directory is
/// refused, before it does any work, with the process that holds it named. `name` is the
/// case, for the messages.
pub(super) fn claim(dir: &Path, name: &str, root: bool) -> Result<(), CliError> {
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
    if root {
        lock(dir).map_err(fail)
    } else {
        Ok(())
    }
}

/// Takes the lock of `dir` for the rest of the process (once: a directory this process holds
/// is its own), or says who holds it.
fn lock(dir: &Path) -> Result<(), String> {
    let key = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    let mut held = HELD.lock().unwrap_or_else(|e| e.into_inner());
    if held.iter().any(|(d, _)| *d == key) {
        return Ok(());
    }
    let path = dir.join(LOCK);
    let mut file = locked(&path)?;
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
    let command: Vec<String> = std::env::args().collect();
    let command: String = command.join(" ").chars().take(300).collect();
    let holder = format!(
        "process {} on {}: {command}\n",
        std::process::id(),
        host.trim()
    );
    // Written after the lock is held: a reader sees the holder's line or an empty file.
    let _ = file
        .set_len(0)
        .and_then(|()| file.write_all(holder.as_bytes()));
    held.push((key, file));
    Ok(())
}

/// The lock file at `path`, created if need be, locked by this process; or who holds it. A
/// file locked but no longer at `path` (removed by its holder as it ended, between our opening
/// and our locking it) is let go and the new one taken.
fn locked(path: &Path) -> Result<File, String> {
    use std::os::unix::fs::MetadataExt;
    loop {
        lbm::io::check_replaceable(path).map_err(|e| e.to_string())?;
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .map_err(|e| format!("its lock {} cannot be opened ({e})", path.display()))?;
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                let mut holder = String::new();
                let _ = (&mut file).take(4096).read_to_string(&mut holder);
                let holder = holder.trim();
                return Err(format!(
                    "another run writes there ({}): wait for it to end, or give --out another \
                     directory",
                    if holder.is_empty() {
                        "its process is starting"
                    } else {
                        holder
                    }
                ));
            }
            Err(TryLockError::Error(e)) => {
                return Err(format!("its lock {} cannot be taken ({e})", path.display()));
            }
        }
        let inode = |m: std::fs::Metadata| (m.dev(), m.ino());
        let ours = file.metadata().map(inode).ok();
        if ours.is_some() && std::fs::metadata(path).map(inode).ok() == ours {
            return Ok(file);
        }
    }
}

/// Releases every lock this process holds and removes their files: at the end of the program,
/// and before a refused run removes the directories it created.
pub(super) fn release_all() {
    let mut held = HELD.lock().unwrap_or_else(|e| e.into_inner());
    for (dir, _) in held.drain(..) {
        let _ = std::fs::remove_file(dir.join(LOCK));
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
    let bytes = lbm::io::read_bounded(&stamp_path(plan, name), 1 << 16).ok()?;
    toml::from_str::<Stamp>(std::str::from_utf8(&bytes).ok()?)
        .ok()
        .map(|s| s.run)
}

/// A new run's token: different for every start.
fn new_token() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    format!("{:016x}", nanos ^ (u64::from(std::process::id()) << 40))
}

/// Claims the output directory ([`claim`]); refuses to write through a
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
    claim(dir, name, root)?;
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

/// Removes `dirs` (deepest first) where they are empty but for this run's lock: what a refused
/// run created.
pub(super) fn remove_if_empty(dirs: &[PathBuf]) {
    release_all();
    for d in dirs {
        if std::fs::remove_dir(d).is_err() {
            break;
        }
    }
}
