//! The previous complete checkpoint: kept beside the newest, and resumed when the newest is
//! not whole.
//!
//! Writing a checkpoint or a set at `<path>` first keeps the manifest it replaces as
//! `<path>.previous` (a copy written atomically, like every manifest), and the shards and
//! parts of both stay on disk; those of older checkpoints are removed. So a disk holds two
//! checkpoints of a run, the newest and the one before it, and when the newest turns out
//! damaged, truncated or incomplete (a shard lost, a disk that filled up, a file copied in
//! part), [`fall_back`] finds the previous one whole and moves the newest's manifest aside
//! to `<path>.damaged`: never resumed, and not kept as the previous one by the run's next
//! checkpoint (which removes its shards with the older ones).
//!
//! Whole means every byte a resume would trust checks out: the manifest's frame and CRC-32,
//! the shards' boxes tiling the domain, each shard's header, size and payload CRC-32, and for
//! a set each part's file against the CRC-32 the set gives it and each part whole in turn.

use std::fs;
use std::io::{self, BufReader, Read};
use std::path::{Path, PathBuf};

use super::{corrupt, io_err, open, open_regular, read_manifest, read_set, CheckpointError};
use crate::io::write_atomically;

/// Where the checkpoint (or set) that the one at `path` replaced is kept: `<path>.previous`.
pub fn previous_checkpoint(path: &Path) -> PathBuf {
    with_suffix(path, "previous")
}

/// Where a damaged newest checkpoint is set aside by [`fall_back`]: `<path>.damaged`.
pub fn damaged_checkpoint(path: &Path) -> PathBuf {
    with_suffix(path, "damaged")
}

fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".");
    name.push(suffix);
    path.with_file_name(name)
}

/// Before the manifest at `path` is replaced: keeps it as [`previous_checkpoint`] when its frame reads
/// (a manifest already damaged is not kept, so the previous one stays). Atomic: a crash
/// leaves the old previous manifest or the new one.
pub(crate) fn keep_previous(
    path: &Path,
    read: impl Fn(&Path) -> bool,
) -> Result<(), CheckpointError> {
    if !read(path) {
        return Ok(());
    }
    let bytes =
        crate::io::read_bounded(path, 2 * super::MAX_HEADER as u64).map_err(io_err(path))?;
    let to = previous_checkpoint(path);
    write_atomically(&to, &[&bytes]).map_err(io_err(&to))
}

/// The manifest files of the checkpoints at `path` that are kept: the newest and the previous.
pub(crate) fn kept_manifests(path: &Path) -> [PathBuf; 2] {
    [path.to_path_buf(), previous_checkpoint(path)]
}

/// Checks that the checkpoint or set at `path` is whole (see the module's docs), reading every
/// byte of it once; returns its step.
pub fn verify_checkpoint(path: &Path) -> Result<u64, CheckpointError> {
    match read_set(path) {
        Ok(set) => {
            for p in &set.parts {
                let part = set.part(path, &p.name)?;
                let step = verify_one(&part)?;
                if step != set.step {
                    return Err(corrupt(
                        path,
                        format!(
                            "its part {} is at step {step}, the set at step {}",
                            p.name, set.step
                        ),
                    ));
                }
            }
            Ok(set.step)
        }
        // Not a set: the checkpoint of one lattice or grid, or what `verify_one` says it is.
        Err(CheckpointError::Mismatch { .. }) => verify_one(path),
        Err(e) => Err(e),
    }
}

/// Checks that the checkpoint of one lattice or grid at `path` is whole; returns its step.
fn verify_one(path: &Path) -> Result<u64, CheckpointError> {
    let header = read_manifest(path)?;
    let bytes = match header.precision.as_str() {
        "f64" => 8,
        "f32" => 4,
        "f16s" => 2,
        other => return Err(corrupt(path, format!("it names the precision `{other}`"))),
    };
    let (header, shards) = open(path, bytes, |_| Ok(()))?;
    for (s, &at) in header.shards.iter().zip(&shards.payload_at) {
        let file = shards.dir.join(&s.file);
        let mut r = BufReader::new(open_regular(&file)?);
        io::copy(&mut (&mut r).take(at), &mut io::sink()).map_err(io_err(&file))?;
        let mut crc = crc32fast::Hasher::new();
        let mut buf = vec![0u8; 1 << 16];
        loop {
            let n = r.read(&mut buf).map_err(io_err(&file))?;
            if n == 0 {
                break;
            }
            crc.update(&buf[..n]);
        }
        if crc.finalize() != s.crc32 {
            return Err(corrupt(
                &file,
                "the values do not match their CRC-32 checksum",
            ));
        }
    }
    Ok(header.step)
}

/// The newest checkpoint at `path` was not whole, and the previous one is.
#[derive(Debug)]
pub struct Fallback {
    /// Why the newest cannot be resumed.
    pub why: CheckpointError,
    /// The previous complete checkpoint, to resume instead.
    pub previous: PathBuf,
    /// Its step.
    pub step: u64,
    /// Where the newest was set aside (`None`: there was no file to set aside).
    pub set_aside: Option<PathBuf>,
}

/// What a resume of `path` should read: `None` when the checkpoint there is whole, or when it
/// is not and no whole previous one is kept (the resume then reports what is wrong with it),
/// or when it is whole but of another run (a mismatch is the user's to fix, not a fallback's).
/// Otherwise the previous complete checkpoint, and the newest is moved to [`damaged_checkpoint`] so that
/// the run's next checkpoint does not keep it as its previous one. Reads the checkpoints
/// whole: call it on one process.
pub fn fall_back(path: &Path) -> Option<Fallback> {
    let why = match verify_checkpoint(path) {
        Ok(_) | Err(CheckpointError::Mismatch { .. } | CheckpointError::Lattice(_)) => return None,
        Err(e) => e,
    };
    let previous = previous_checkpoint(path);
    let step = verify_checkpoint(&previous).ok()?;
    let regular = fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_file());
    let set_aside = regular
        .then(|| damaged_checkpoint(path))
        .filter(|to| fs::rename(path, to).is_ok());
    Some(Fallback {
        why,
        previous,
        step,
        set_aside,
    })
}
