//! Checkpoint sets: the state of several lattices stepped together ([`crate::Coupled`]) as one
//! checkpoint, atomic as a whole, so that a run killed while checkpointing can always be
//! resumed from a state of all its lattices at one step.
//!
//! # Format (version 2)
//! ```text
//! set manifest  LBM-CHECKPOINT-SET 2\n <n> <crc>\n <TOML, n bytes>: step, the set's token, what the
//!               application says of the run (`about`), per part: its name, model, file and
//!               the CRC-32 of that file
//! part          a checkpoint of one lattice (the format of the parent module), at
//!               `<path>.<token>.<name>`, with its shards beside it
//! ```
//!
//! `<crc>` is the CRC-32 of the TOML text, in hexadecimal; version 1, without it, is still read.
//!
//! Each part is written under a name no earlier set used (the token is new at every set);
//! once every part is on disk the root writes the set's manifest through a temporary file,
//! synced and renamed (keeping the one it replaces as `<path>.previous`), and only then removes
//! the parts of the sets before those two. A crash at any point leaves the previous set whole,
//! or the new one; a set found damaged later falls back to the previous one
//! ([`super::fall_back`]).

use std::collections::BTreeMap;
use std::fs;
use std::io::BufReader;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::CheckpointError;
use super::{corrupt, framed, io_err, mismatch, open_regular, read_framed, read_manifest};
use crate::io::write_atomically;

/// The set manifest's magic, then that of the earlier version still read (1: no CRC-32 of
/// the header).
const MAGICS: [&str; 2] = ["LBM-CHECKPOINT-SET 2", "LBM-CHECKPOINT-SET 1"];

/// The manifest of a checkpoint set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckpointSet {
    /// Steps completed by every part.
    pub step: u64,
    /// The set's token, in its parts' names.
    pub run: String,
    /// The lattices' checkpoints.
    pub parts: Vec<SetPart>,
    /// What the application says of the run that wrote it, stored and read back untouched.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub about: BTreeMap<String, String>,
}

/// One lattice's checkpoint in a set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SetPart {
    /// Its name in the set (`first`, `second`).
    pub name: String,
    /// The lattice's model.
    pub model: String,
    /// The file of its checkpoint's manifest, beside the set's.
    pub file: String,
    /// The CRC-32 of that file.
    pub crc32: u32,
}

impl CheckpointSet {
    /// The manifest of part `name` of the set `path`, checked against its CRC-32.
    pub fn part(&self, path: &Path, name: &str) -> Result<PathBuf, CheckpointError> {
        let part = (self.parts.iter().find(|p| p.name == name))
            .ok_or_else(|| corrupt(path, format!("it has no part `{name}`")))?;
        let file = path.with_file_name(&part.file);
        let bytes = read_regular(&file)?;
        if crc32fast::hash(&bytes) != part.crc32 {
            return Err(corrupt(
                path,
                format!("its part {} does not match its CRC-32", file.display()),
            ));
        }
        Ok(file)
    }
}

/// The file of part `name` of the set `path` written as `run`.
pub(crate) fn part_path(path: &Path, run: &str, name: &str) -> PathBuf {
    path.with_file_name(format!("{}.{run}.{name}", file_name(path)))
}

/// Writes the manifest of the set `path` naming `parts` (name, model), whose checkpoints are
/// written, then removes the parts of earlier sets at `path`.
pub(crate) fn publish_set(
    path: &Path,
    (step, run): (u64, &str),
    parts: &[(&str, &str)],
    about: &BTreeMap<String, String>,
) -> Result<(), CheckpointError> {
    let parts = parts
        .iter()
        .map(|&(name, model)| {
            let file = part_path(path, run, name);
            Ok(SetPart {
                name: name.to_string(),
                model: model.to_string(),
                crc32: crc32fast::hash(&read_regular(&file)?),
                file: file_name(&file),
            })
        })
        .collect::<Result<_, CheckpointError>>()?;
    let set = CheckpointSet {
        step,
        run: run.to_string(),
        parts,
        about: about.clone(),
    };
    super::previous::keep_previous(path, |p| read_set(p).is_ok())?;
    let text = toml::to_string(&set).expect("the manifest is plain data");
    write_atomically(path, &[framed(MAGICS[0], &text).as_bytes()]).map_err(io_err(path))?;
    remove_earlier_parts(path);
    Ok(())
}

/// Reads the manifest of the set `path` (its parts unread). A lattice's checkpoint is refused
/// by name.
pub fn read_set(path: &Path) -> Result<CheckpointSet, CheckpointError> {
    let mut r = BufReader::new(open_regular(path)?);
    match read_framed::<CheckpointSet>(&mut r, &MAGICS, path) {
        Ok((set, _)) => Ok(set),
        Err(e) => match read_manifest(path) {
            Ok(one) => Err(mismatch(
                path,
                format!(
                    "it is the checkpoint of one lattice (the model {}), not of coupled \
                     lattices; give the coupled run's checkpoint, <out>/<case>_checkpoint.lbm \
                     (the pairs of files of earlier versions are not read)",
                    one.model
                ),
            )),
            Err(_) => Err(e),
        },
    }
}

/// The whole regular file `path`: a part's manifest, a header and its frame.
fn read_regular(path: &Path) -> Result<Vec<u8>, CheckpointError> {
    open_regular(path)?;
    crate::io::read_bounded(path, 2 * super::MAX_HEADER as u64).map_err(io_err(path))
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
}

/// Removes the parts (and their shards) of the sets at `path` other than the newest's and the
/// previous one's. Best effort: a part left behind is never read, since no set names it.
fn remove_earlier_parts(path: &Path) {
    let kept: Vec<String> = super::previous::kept_manifests(path)
        .iter()
        .filter_map(|m| read_set(m).ok())
        .map(|s| s.run)
        .collect();
    let Some(dir) = path.parent() else {
        return;
    };
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    let prefix = format!("{}.", file_name(path));
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let file = e.file_name().to_string_lossy().into_owned();
        let earlier = file.strip_prefix(&prefix).is_some_and(|rest| {
            rest.split_once('.').is_some_and(|(token, _)| {
                token.len() == 16
                    && token.chars().all(|c| c.is_ascii_hexdigit())
                    && !kept.iter().any(|k| k == token)
            })
        });
        if earlier {
            let _ = fs::remove_file(e.path());
        }
    }
}
