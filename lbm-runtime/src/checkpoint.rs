//! Checkpoints: the whole state of a lattice — however many processes hold it — written as a
//! set of shards and a manifest, atomic as a set, and read back only when whole and belonging
//! to the model, size and precision asked for, on any number of processes.
//!
//! # Format (version 3)
//! A checkpoint `<path>` is a manifest and one shard per process that wrote it, the shards
//! beside the manifest, named `<path>.<run>-<rank>of<ranks>`:
//!
//! ```text
//! manifest  LBM-CHECKPOINT 3\n <n>\n <TOML, n bytes>: model, Q, LX, LY, precision, step,
//!           parameters, the fields stored, the run's token, and per shard: file,
//!           columns [x0, x1), payload size and CRC-32
//! shard     LBM-SHARD 3\n <n>\n <TOML, n bytes>: model, Q, LX, LY, precision, step, the
//!           fields stored, the run's token, columns, payload size, CRC-32
//!           <payload>: per column x of x0..x1, the post-collision populations f_i(x, y) in
//!           the layout-independent order y, then i, little-endian values of the precision;
//!           then, when the run had per-site fields, each field's values v_j(x, y) in the
//!           order j, then y, little-endian f64
//! ```
//!
//! The fields ([`Model::FIELDS`]) are stored when the user gave them values per site
//! ([`crate::Solver::set_local_field`]): every field of the model then, so a restart continues
//! with the same per-site parameters. Version 2 is version 3 without fields and is read as
//! such.
//!
//! # Atomic as a set
//! Every process writes its shard under a name no earlier checkpoint used (the run's token is
//! new at every checkpoint) through a temporary file, synced and renamed; once every shard is
//! on disk the root writes the manifest the same way, and only then removes the shards of the
//! checkpoint it replaces. A crash at any point leaves the previous manifest and its shards, or
//! the new ones: a checkpoint is read through its manifest, so shards without a complete,
//! matching manifest are never resumed.
//!
//! # Reading on any number of processes
//! [`read_checkpoint`] reads the manifest and every shard's header (not the populations): a
//! missing or truncated shard, or one of another checkpoint, is refused before any work.
//! [`Checkpoint::columns`] then reads the columns a process needs, from the shards that hold
//! them (each checked whole against its CRC-32 as it streams by), so a run checkpointed on
//! `n` processes resumes on `m` and on one. The populations are independent of the layout and
//! streaming scheme, so the continued run is bitwise identical to an uninterrupted one.

use std::collections::BTreeMap;
use std::fs::{self, File};
use std::io::{self, BufRead, BufReader, Read};
use std::marker::PhantomData;
use std::ops::Range;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::io::write_atomically;
use crate::{BoundarySpec, Lattice, Layout, LbmError, Model, Real, Scheme};

const MAGIC: &str = "LBM-CHECKPOINT 3";
const SHARD_MAGIC: &str = "LBM-SHARD 3";
/// The magics of the earlier version still read (version 2: no fields).
const MAGIC_V2: [&str; 2] = ["LBM-CHECKPOINT 2", "LBM-SHARD 2"];
/// Largest header accepted (a corrupted length must not make us allocate gigabytes).
const MAX_HEADER: usize = 1 << 20;

/// What can go wrong with a checkpoint.
#[derive(Debug, thiserror::Error)]
pub enum CheckpointError {
    /// Reading or writing the file failed.
    #[error("checkpoint {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The system error.
        source: io::Error,
    },
    /// The file is not a checkpoint, is truncated, or its contents do not match its checksum.
    #[error(
        "checkpoint {path} is damaged: {reason}; it cannot be resumed (use an earlier checkpoint)"
    )]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// The checkpoint is whole but was written by another model, size or precision.
    #[error("checkpoint {path} does not fit this run: {reason}")]
    Mismatch {
        /// The file.
        path: PathBuf,
        /// What differs.
        reason: String,
    },
    /// The restored lattice could not be built.
    #[error(transparent)]
    Lattice(#[from] LbmError),
}

/// A named parameter value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ParamValue {
    /// The parameter's name.
    pub name: String,
    /// Its value.
    pub value: f64,
}

/// The manifest of a checkpoint.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckpointHeader {
    /// The model's name ([`Model::NAME`]).
    pub model: String,
    /// Number of populations per site.
    pub q: usize,
    /// Lattice width.
    pub lx: usize,
    /// Lattice height.
    pub ly: usize,
    /// Lattice depth (1 in 2-D; absent from 2-D manifests).
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub lz: usize,
    /// `"f32"` or `"f64"`.
    pub precision: String,
    /// Steps completed when the checkpoint was written.
    pub step: u64,
    /// The model's parameters, in declaration order.
    pub params: Vec<ParamValue>,
    /// The fields stored per site after the populations of each column (all of
    /// [`Model::FIELDS`], or none while they were uniform).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fields: Vec<String>,
    /// Order of the payload.
    pub order: String,
    /// The token of this checkpoint, in every shard's name and header.
    pub run: String,
    /// The shards, in column order.
    pub shards: Vec<Shard>,
    /// What the application says of the run that wrote it (the `lbm` program: the case and
    /// its settings, so that another case of the same model and size cannot resume it),
    /// stored and read back untouched; empty when it said nothing.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub about: BTreeMap<String, String>,
}

fn one() -> usize {
    1
}

fn is_one(v: &usize) -> bool {
    *v == 1
}

impl CheckpointHeader {
    /// The lattice's size, `[LX, LY, LZ]` (`LZ = 1` in 2-D).
    pub fn size(&self) -> [usize; 3] {
        [self.lx, self.ly, self.lz]
    }

    /// Sites per plane of constant x: `LY·LZ` (saturating: a damaged manifest's sizes are
    /// refused by the checks, never wrapped around).
    pub fn plane(&self) -> usize {
        self.ly.saturating_mul(self.lz)
    }

    /// Bytes per column of the payload: its populations of `bytes` each, then its fields;
    /// `None` when that cannot be addressed (a damaged manifest).
    fn column_bytes(&self, q: usize, bytes: usize) -> Option<usize> {
        let per_site = self.fields.len().checked_mul(8)?.checked_add(q * bytes)?;
        self.ly.checked_mul(self.lz)?.checked_mul(per_site)
    }
}

/// A shard as the manifest lists it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Shard {
    /// Its file name, beside the manifest.
    pub file: String,
    /// The first column it holds.
    pub x0: usize,
    /// One past the last.
    pub x1: usize,
    /// Payload size in bytes.
    pub payload_bytes: u64,
    /// CRC-32 of the payload.
    pub crc32: u32,
}

/// The header of a shard: what the manifest says of it, and what it belongs to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct ShardHeader {
    model: String,
    q: usize,
    lx: usize,
    ly: usize,
    precision: String,
    step: u64,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    fields: Vec<String>,
    run: String,
    x0: usize,
    x1: usize,
    payload_bytes: u64,
    crc32: u32,
}

/// The state of some columns, as a checkpoint holds it.
#[derive(Debug, Clone, PartialEq)]
pub struct Columns<T> {
    /// The populations, `[((x − x0)·LY + y)·Q + i]`.
    pub populations: Vec<T>,
    /// Each stored field's name and values, `[(x − x0)·LY + y]` (none when the fields were
    /// uniform, their values in the parameters).
    pub fields: Vec<(String, Vec<f64>)>,
}

/// A checkpoint whose manifest and shard headers were read and verified, ready to give the
/// populations of any columns.
pub struct Checkpoint<M: Model, T: Real> {
    /// Its manifest.
    pub header: CheckpointHeader,
    /// The parameters, rebuilt from the manifest.
    pub params: M::Params,
    dir: PathBuf,
    /// Where each shard's payload starts in its file.
    payload_at: Vec<u64>,
    _t: PhantomData<T>,
}

pub(crate) fn io_err(path: &Path) -> impl Fn(io::Error) -> CheckpointError + '_ {
    move |source| CheckpointError::Io {
        path: path.to_path_buf(),
        source,
    }
}

pub(crate) fn corrupt(path: &Path, reason: impl Into<String>) -> CheckpointError {
    CheckpointError::Corrupt {
        path: path.to_path_buf(),
        reason: reason.into(),
    }
}

pub(crate) fn mismatch(path: &Path, reason: impl Into<String>) -> CheckpointError {
    CheckpointError::Mismatch {
        path: path.to_path_buf(),
        reason: reason.into(),
    }
}

/// A token no earlier checkpoint of this process used (the clock and the process id).
pub(crate) fn new_run() -> u64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    nanos ^ (u64::from(std::process::id()) << 40)
}

/// The file of shard `rank` of `ranks` of the checkpoint `path` written as `run`.
pub(crate) fn shard_name(path: &Path, run: &str, rank: usize, ranks: usize) -> String {
    let name = path
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    format!("{name}.{run}-{rank}of{ranks}")
}

/// The token of run `run`, as names and headers write it.
pub(crate) fn run_name(run: u64) -> String {
    format!("{run:016x}")
}

/// A header framed as `magic\n<len>\n<text>`.
pub(crate) fn framed(magic: &str, text: &str) -> String {
    format!("{magic}\n{}\n{text}", text.len())
}

/// Reads a header framed by [`framed`] with `magic`, returning it and its length in bytes.
/// Version 2's header of the same kind (`old`) is read too.
pub(crate) fn read_framed<H: serde::de::DeserializeOwned>(
    r: &mut impl BufRead,
    [magic, old]: [&str; 2],
    path: &Path,
) -> Result<(H, u64), CheckpointError> {
    // The two lines before the header are read with a bound: a file that is not a checkpoint
    // (binary data, a device such as /dev/zero) is refused after a few bytes.
    let line = bounded_line(r, path)?;
    if line.trim_end() != magic && line.trim_end() != old {
        let why = if line.starts_with("LBM-CHECKPOINT 1") {
            "it is a checkpoint of the single-file format of earlier versions; rerun from the \
             start or resume with the version that wrote it"
                .to_string()
        } else {
            format!("it does not start with `{magic}` (not an lbm checkpoint, or another format version)")
        };
        return Err(corrupt(path, why));
    }
    let len_line = bounded_line(r, path)?;
    let len: usize = len_line
        .trim_end()
        .parse()
        .ok()
        .filter(|n| *n <= MAX_HEADER)
        .ok_or_else(|| corrupt(path, "the header length is unreadable"))?;
    let mut text = vec![0u8; len];
    r.read_exact(&mut text)
        .map_err(|_| corrupt(path, "the file ends inside the header (truncated)"))?;
    let text = String::from_utf8(text).map_err(|_| corrupt(path, "the header is not text"))?;
    let header = toml::from_str(&text)
        .map_err(|e| corrupt(path, format!("the header is unreadable: {e}")))?;
    Ok((header, (line.len() + len_line.len() + len) as u64))
}

/// The longest line before a header: the magic or the header's length.
const MAX_LINE: u64 = 64;

/// A line of at most [`MAX_LINE`] bytes of text (with its newline), or why the file is not a
/// checkpoint.
fn bounded_line(r: &mut impl BufRead, path: &Path) -> Result<String, CheckpointError> {
    let mut bytes = Vec::new();
    r.take(MAX_LINE)
        .read_until(b'\n', &mut bytes)
        .map_err(io_err(path))?;
    if !bytes.ends_with(b"\n") && bytes.len() as u64 == MAX_LINE {
        return Err(corrupt(
            path,
            "it does not start with a checkpoint's header (not an lbm checkpoint)",
        ));
    }
    String::from_utf8(bytes).map_err(|_| {
        corrupt(
            path,
            "it starts with binary data, not a checkpoint's header (not an lbm checkpoint)",
        )
    })
}

/// Opens `path` for reading, refusing anything but a regular file (a directory, a device such
/// as /dev/zero, a pipe): a checkpoint is a file of known length.
pub(crate) fn open_regular(path: &Path) -> Result<File, CheckpointError> {
    let f = File::open(path).map_err(io_err(path))?;
    let meta = f.metadata().map_err(io_err(path))?;
    if !meta.is_file() {
        return Err(corrupt(
            path,
            "it is not a regular file (a directory, a device or a pipe); give the checkpoint's \
             manifest, <out>/<case>_checkpoint.lbm",
        ));
    }
    Ok(f)
}

/// Writes this process's shard of the checkpoint `path` (token `run`, process `rank` of
/// `ranks`): the populations `payload` of the columns `planes` of an `lx × ly` lattice of
/// model `M` after `step` steps, in the layout-independent order `[((x − x0)·LY + y)·Q + i]`,
/// and the per-site `fields` (none, or one per [`Model::FIELDS`], each `[(x − x0)·LY + y]`),
/// atomically. Returns the manifest's entry for it.
pub(crate) fn write_shard<M: Model, T: Real>(
    path: &Path,
    (run, rank, ranks): (&str, usize, usize),
    (lx, ly): (usize, usize),
    planes: Range<usize>,
    step: u64,
    (payload, fields): (&[T], &[Vec<f64>]),
) -> Result<Shard, CheckpointError> {
    let sites = planes.len() * ly;
    let shape_error = |what: String| {
        Err(LbmError::Shape(format!(
            "a shard of {} columns of {ly} sites needs {what}",
            planes.len()
        ))
        .into())
    };
    if payload.len() != sites * M::Q {
        return shape_error(format!(
            "{} populations, got {}",
            sites * M::Q,
            payload.len()
        ));
    }
    if !fields.is_empty()
        && (fields.len() != M::FIELDS.len() || fields.iter().any(|v| v.len() != sites))
    {
        return shape_error(format!(
            "{} values of each of the fields {:?}",
            sites,
            M::FIELDS
        ));
    }
    // Per column: its populations, then each field's values.
    let pops: &[u8] = bytemuck::cast_slice(payload);
    let (pc, fc) = (ly * M::Q * std::mem::size_of::<T>(), ly * 8);
    let parts: Vec<&[u8]> = (0..planes.len())
        .flat_map(|x| {
            std::iter::once(&pops[x * pc..(x + 1) * pc]).chain(
                fields
                    .iter()
                    .map(move |v| &bytemuck::cast_slice::<f64, u8>(v)[x * fc..(x + 1) * fc]),
            )
        })
        .collect();
    let mut crc = crc32fast::Hasher::new();
    parts.iter().for_each(|p| crc.update(p));
    let header = ShardHeader {
        model: M::NAME.into(),
        q: M::Q,
        lx,
        ly,
        precision: T::NAME.into(),
        step,
        fields: field_names::<M>(!fields.is_empty()),
        run: run.into(),
        x0: planes.start,
        x1: planes.end,
        payload_bytes: parts.iter().map(|p| p.len() as u64).sum(),
        crc32: crc.finalize(),
    };
    let file = shard_name(path, run, rank, ranks);
    let target = path.with_file_name(&file);
    let text = toml::to_string(&header).expect("the header is plain data");
    let framed = framed(SHARD_MAGIC, &text);
    let all: Vec<&[u8]> = std::iter::once(framed.as_bytes()).chain(parts).collect();
    write_atomically(&target, &all).map_err(io_err(&target))?;
    Ok(Shard {
        file,
        x0: header.x0,
        x1: header.x1,
        payload_bytes: header.payload_bytes,
        crc32: header.crc32,
    })
}

/// The names of the fields a checkpoint stores: all of the model's `with` them, else none.
fn field_names<M: Model>(with: bool) -> Vec<String> {
    if with {
        M::FIELDS.iter().map(|f| f.to_string()).collect()
    } else {
        Vec::new()
    }
}

/// Writes the manifest of the checkpoint `path` (token `run`) of a lattice of `[LX, LY, LZ]`
/// sites of model `M` with `params` after `step` steps, whose shards (written, synced) are
/// `shards`, with the per-site fields if `with_fields` and the application's `about`,
/// atomically — the moment the checkpoint comes to exist — then removes the shards of the
/// checkpoint it replaced.
pub(crate) fn write_manifest<M: Model, T: Real>(
    path: &Path,
    [lx, ly, lz]: [usize; 3],
    (params, with_fields): (&M::Params, bool),
    step: u64,
    (run, about): (&str, &BTreeMap<String, String>),
    shards: Vec<Shard>,
) -> Result<(), CheckpointError> {
    let header = CheckpointHeader {
        model: M::NAME.into(),
        q: M::Q,
        lx,
        ly,
        lz,
        precision: T::NAME.into(),
        step,
        params: M::param_values(params)
            .into_iter()
            .map(|(n, v)| ParamValue {
                name: n.into(),
                value: v,
            })
            .collect(),
        fields: field_names::<M>(with_fields),
        order: "x, then y, i; then each field's y (little-endian)".into(),
        run: run.into(),
        shards,
        about: about.clone(),
    };
    let text = toml::to_string(&header).expect("the manifest is plain data");
    write_atomically(path, &[framed(MAGIC, &text).as_bytes()]).map_err(io_err(path))?;
    remove_stale_shards(path, &header);
    Ok(())
}

/// Removes the shards of earlier checkpoints at `path` (those the manifest `kept` does not
/// list). Best effort: a shard left behind is never read, since no manifest names it.
fn remove_stale_shards(path: &Path, kept: &CheckpointHeader) {
    let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
        return;
    };
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    let prefix = format!("{}.", name.to_string_lossy());
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let file = e.file_name().to_string_lossy().into_owned();
        let is_shard = file.strip_prefix(&prefix).is_some_and(|rest| {
            rest.split_once('-').is_some_and(|(run, of)| {
                run.len() == 16
                    && run.chars().all(|c| c.is_ascii_hexdigit())
                    && of.split_once("of").is_some_and(|(a, b)| {
                        a.parse::<usize>().is_ok() && b.parse::<usize>().is_ok()
                    })
            })
        });
        if is_shard && !kept.shards.iter().any(|s| s.file == file) {
            let _ = fs::remove_file(e.path());
        }
    }
}

/// Reads the manifest of the checkpoint `path` alone, of any model (its shards unread): what
/// an application checks before it knows the model's type, such as what the run that wrote it
/// said of itself ([`CheckpointHeader::about`]).
pub fn read_manifest(path: &Path) -> Result<CheckpointHeader, CheckpointError> {
    let mut r = BufReader::new(open_regular(path)?);
    Ok(read_framed::<CheckpointHeader>(&mut r, [MAGIC, MAGIC_V2[0]], path)?.0)
}

/// Reads and verifies the manifest of a checkpoint of model `M` in precision `T`, and the
/// header of every shard it lists: each must exist, be whole, and belong to this checkpoint.
/// The populations are read by [`Checkpoint::columns`].
pub fn read_checkpoint<M: Model, T: Real>(
    path: &Path,
) -> Result<Checkpoint<M, T>, CheckpointError> {
    let mut r = BufReader::new(open_regular(path)?);
    let (header, _) = read_framed::<CheckpointHeader>(&mut r, [MAGIC, MAGIC_V2[0]], path)?;
    check_fits::<M, T>(&header, path)?;
    let params = M::params_from_values(&header.params.iter().map(|p| p.value).collect::<Vec<_>>())
        .ok_or_else(|| mismatch(path, "its parameters do not match the model's"))?;
    let mut next = 0;
    for s in &header.shards {
        if s.x0 != next || s.x1 < s.x0 {
            return Err(corrupt(path, format!(
                "its shards do not cover the columns in order (shard {} holds {}..{}, column {next} comes next)",
                s.file, s.x0, s.x1
            )));
        }
        next = s.x1;
    }
    if next != header.lx {
        return Err(corrupt(
            path,
            format!("its shards cover {next} of the {} columns", header.lx),
        ));
    }
    let dir = path.parent().unwrap_or(Path::new("")).to_path_buf();
    let payload_at = header
        .shards
        .iter()
        .map(|s| check_shard::<M, T>(&dir.join(&s.file), s, &header, path))
        .collect::<Result<_, _>>()?;
    Ok(Checkpoint {
        header,
        params,
        dir,
        payload_at,
        _t: PhantomData,
    })
}

/// Checks the shard at `file` against its entry `s` in the manifest `m` (at `manifest`):
/// present, of this checkpoint, of the size announced. Returns where its payload starts.
fn check_shard<M: Model, T: Real>(
    file: &Path,
    s: &Shard,
    m: &CheckpointHeader,
    manifest: &Path,
) -> Result<u64, CheckpointError> {
    let f = open_regular(file).map_err(|e| {
        corrupt(
            manifest,
            format!(
                "its shard {} cannot be read ({e}): the checkpoint is incomplete",
                s.file
            ),
        )
    })?;
    let len = f.metadata().map_err(io_err(file))?.len();
    let (h, at) =
        read_framed::<ShardHeader>(&mut BufReader::new(f), [SHARD_MAGIC, MAGIC_V2[1]], file)?;
    let expected = m
        .column_bytes(M::Q, std::mem::size_of::<T>())
        .and_then(|c| c.checked_mul(s.x1 - s.x0))
        .ok_or_else(|| corrupt(manifest, "its lattice is too large to address"))?;
    // A shard's `ly` is its columns' sites, the manifest's plane.
    let ours = (&h.model, h.lx, h.ly, h.step, &h.run, &h.fields)
        == (&m.model, m.lx, m.plane(), m.step, &m.run, &m.fields);
    if !ours || (h.x0, h.x1, h.crc32) != (s.x0, s.x1, s.crc32) {
        return Err(mismatch(
            manifest,
            format!(
                "its shard {} belongs to another checkpoint (step {}, run {}, columns {}..{}; \
                 the manifest says step {}, run {}, columns {}..{})",
                s.file, h.step, h.run, h.x0, h.x1, m.step, m.run, s.x0, s.x1
            ),
        ));
    }
    if h.payload_bytes != expected as u64 || s.payload_bytes != expected as u64 {
        return Err(corrupt(
            file,
            format!(
                "the shard announces {} bytes of populations and fields, its columns need \
                 {expected}",
                h.payload_bytes
            ),
        ));
    }
    if len != at + expected as u64 {
        return Err(corrupt(
            file,
            format!(
                "the shard is {len} bytes long, {} expected (truncated or extended)",
                at + expected as u64
            ),
        ));
    }
    Ok(at)
}

fn check_fits<M: Model, T: Real>(h: &CheckpointHeader, path: &Path) -> Result<(), CheckpointError> {
    if h.model != M::NAME || h.q != M::Q {
        return Err(mismatch(
            path,
            format!(
                "it holds model {} (Q = {}), this run uses {} (Q = {})",
                h.model,
                h.q,
                M::NAME,
                M::Q
            ),
        ));
    }
    if h.precision != T::NAME {
        return Err(mismatch(
            path,
            format!(
                "it is in {}, this run in {}: resume with --precision {}",
                h.precision,
                T::NAME,
                h.precision
            ),
        ));
    }
    if !h.fields.is_empty() && h.fields.iter().ne(M::FIELDS.iter()) {
        return Err(mismatch(
            path,
            format!(
                "it stores the fields {:?}, the model's are {:?}",
                h.fields,
                M::FIELDS
            ),
        ));
    }
    let names: Vec<&str> = M::param_values(
        &M::params_from_values(&vec![0.0; h.params.len()])
            .ok_or_else(|| mismatch(path, "its parameters do not match the model's"))?,
    )
    .into_iter()
    .map(|(n, _)| n)
    .collect();
    if names.iter().ne(h
        .params
        .iter()
        .map(|p| p.name.as_str())
        .collect::<Vec<_>>()
        .iter())
    {
        return Err(mismatch(
            path,
            format!(
                "its parameters are {:?}, the model's are {names:?}",
                h.params.iter().map(|p| &p.name).collect::<Vec<_>>()
            ),
        ));
    }
    Ok(())
}

impl<M: Model, T: Real> Checkpoint<M, T> {
    /// The populations of the columns `xs`, in the order `[((x − xs.start)·LY + y)·Q + i]`,
    /// read from the shards that hold them (see [`Checkpoint::read_columns`]).
    pub fn columns(&self, xs: Range<usize>) -> Result<Vec<T>, CheckpointError> {
        Ok(self.read_columns(xs)?.populations)
    }

    /// The populations and the per-site fields of the columns `xs`, read from the shards that
    /// hold them. Each of those shards is read through once and checked whole against its
    /// CRC-32 (a damaged one is refused, whichever columns were asked for); no more than the
    /// columns asked for is kept.
    pub fn read_columns(&self, xs: Range<usize>) -> Result<Columns<T>, CheckpointError> {
        let h = &self.header;
        let pop_bytes = h.plane() * M::Q * std::mem::size_of::<T>();
        let field_bytes = h.plane() * 8;
        let mut populations = vec![T::default(); xs.len() * h.plane() * M::Q];
        let mut fields = vec![vec![0.0; xs.len() * h.plane()]; h.fields.len()];
        let pops: &mut [u8] = bytemuck::cast_slice_mut(&mut populations);
        for (s, &at) in h.shards.iter().zip(&self.payload_at) {
            let (a, b) = (s.x0.max(xs.start), s.x1.min(xs.end));
            if a >= b {
                continue;
            }
            let path = self.dir.join(&s.file);
            let mut r = BufReader::new(File::open(&path).map_err(io_err(&path))?);
            io::copy(&mut (&mut r).take(at), &mut io::sink()).map_err(io_err(&path))?;
            let mut crc = crc32fast::Hasher::new();
            let column = h
                .column_bytes(M::Q, std::mem::size_of::<T>())
                .ok_or_else(|| corrupt(&path, "its lattice is too large to address"))?;
            let mut col = vec![0u8; column];
            for x in s.x0..s.x1 {
                r.read_exact(&mut col).map_err(|_| {
                    corrupt(&path, "the file ends inside the populations (truncated)")
                })?;
                crc.update(&col);
                if (a..b).contains(&x) {
                    let c = x - xs.start;
                    pops[c * pop_bytes..(c + 1) * pop_bytes].copy_from_slice(&col[..pop_bytes]);
                    for (j, v) in fields.iter_mut().enumerate() {
                        let o = pop_bytes + j * field_bytes;
                        bytemuck::cast_slice_mut::<f64, u8>(
                            &mut v[c * h.plane()..(c + 1) * h.plane()],
                        )
                        .copy_from_slice(&col[o..o + field_bytes]);
                    }
                }
            }
            if crc.finalize() != s.crc32 {
                return Err(corrupt(
                    &path,
                    "the populations do not match their CRC-32 checksum",
                ));
            }
        }
        Ok(Columns {
            populations,
            fields: h.fields.iter().cloned().zip(fields).collect(),
        })
    }

    /// The lattice the checkpoint was taken from, in layout `L` with `scheme` and the run's
    /// boundary conditions, ready to continue from step `header.step`.
    pub fn into_lattice<L: Layout>(
        self,
        scheme: Scheme,
        boundaries: &BoundarySpec,
    ) -> Result<Lattice<M, L, T>, CheckpointError> {
        let c = self.read_columns(0..self.header.lx)?;
        let h = &self.header;
        let size = [h.lx, h.ly, h.lz];
        let mut lat = Lattice::<M, L, T>::with_size(size, self.params, scheme, boundaries)?;
        for (name, values) in &c.fields {
            lat.set_field(name, values)?;
        }
        for (s, f) in c.populations.chunks_exact(M::Q).enumerate() {
            lat.set_populations(s / h.plane(), s % h.plane(), f)?;
        }
        lat.set_steps_done(h.step);
        Ok(lat)
    }
}
