//! Checkpoints: the whole state of a run — a lattice's populations or a finite-difference
//! grid's unknowns, however many processes hold it — written as a set of shards and a
//! manifest, atomic as a set, and read back only when whole and belonging to the model (or
//! scheme), size and precision asked for, on any number of processes and any cut.
//!
//! # Format (version 5)
//! A checkpoint `<path>` is a manifest and one shard per block of the run that wrote it (a
//! process's slab, or its block of a cut along 1, 2 or 3 axes, [`crate::blocks`]), the shards
//! beside the manifest, named `<path>.<run>-<rank>of<ranks>`:
//!
//! ```text
//! manifest  LBM-CHECKPOINT 5\n <n> <crc>\n <TOML, n bytes>: model (or scheme), U values per node,
//!           LX, LY, LZ, precision, step, parameters, the fields stored, the run's token, per
//!           shard: file, its box of nodes, payload size and CRC-32; for a finite-difference
//!           run also its spacing, sides, unknowns and time (`fd`)
//! shard     LBM-SHARD 5\n <n> <crc>\n <TOML, n bytes>: model, U, LX, the plane's LY·LZ, precision,
//!           step, the fields stored, the run's token, its box, payload size, CRC-32
//!           <payload>: per plane x of its box, x0..x1, the U values at each of its sites in
//!           the plane order (y fastest, then z) — a lattice's post-collision populations
//!           f_i, a grid's unknowns — little-endian values of the precision; then, when the
//!           run had per-site fields, each field's values at those sites, little-endian f64
//! ```
//!
//! A shard's box is `[x0, x1) × [y0, y1) × [z0, z1)` (`yz` absent: whole planes, as a slab
//! of lattice planes holds); the boxes tile the whole domain. The fields ([`Model::FIELDS`])
//! are stored when the user gave them values per site ([`crate::Block::set_local_field`]):
//! every field of the model then, so a restart continues with the same per-site parameters.
//! `<crc>` is the CRC-32 of the TOML text, in hexadecimal: with the payloads' CRC-32, every byte
//! a resume trusts is checked. Versions 2 (no fields), 3 (shards of whole planes alone) and 4
//! (headers without their CRC-32) are read as version 5.
//!
//! # Atomic as a set
//! Every process writes its shard under a name no earlier checkpoint used (the run's token is
//! new at every checkpoint) through a temporary file, synced and renamed; once every shard is
//! on disk the root keeps the manifest it replaces as `<path>.previous`, writes the new one the
//! same way, and only then removes the shards of the checkpoints before those two. A crash at
//! any point leaves the previous manifest and its shards, or the new ones: a checkpoint is read
//! through its manifest, so shards without a complete, matching manifest are never resumed.
//! When the newest is found damaged later, [`fall_back`] resumes the previous one.
//!
//! # Reading on any number of processes
//! [`read_checkpoint`] reads the manifest and every shard's header (not the values): a
//! missing or truncated shard, or one of another checkpoint, is refused before any work.
//! [`Checkpoint::columns`] then reads the planes a process needs (a block, its box), from the
//! shards that hold them (each checked whole against its CRC-32 as it streams by), so a run
//! checkpointed on `n` processes resumes on `m` and on one, cut another way. The values are
//! independent of the layout and streaming scheme, so the continued run is bitwise identical
//! to an uninterrupted one.

use std::collections::BTreeMap;
use std::fs::{self, File};
use std::io::{self, BufRead, BufReader, Read};
use std::marker::PhantomData;
use std::ops::Range;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

mod previous;
mod set;

pub use previous::{
    damaged_checkpoint, fall_back, previous_checkpoint, verify_checkpoint, Fallback,
};
pub(crate) use set::{part_path, publish_set};
pub use set::{read_set, CheckpointSet, SetPart};

use crate::io::write_atomically;
use crate::{BoundarySpec, Lattice, Layout, LbmError, Model, Real, Scheme};

/// The manifest's magic, then those of the earlier versions still read (4: headers without
/// their CRC-32; 3: shards of whole planes alone; 2: no fields either).
const MAGICS: [&str; 4] = [
    "LBM-CHECKPOINT 5",
    "LBM-CHECKPOINT 4",
    "LBM-CHECKPOINT 3",
    "LBM-CHECKPOINT 2",
];
/// The shards' magics, in the same order.
const SHARD_MAGICS: [&str; 4] = ["LBM-SHARD 5", "LBM-SHARD 4", "LBM-SHARD 3", "LBM-SHARD 2"];
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
    /// The path names a directory, a device or a pipe, not a file.
    #[error("{path} cannot be read as a checkpoint: {reason}")]
    NotAFile {
        /// The path.
        path: PathBuf,
        /// What it is, and what to give instead.
        reason: String,
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
    /// The model's name ([`Model::NAME`]), or the finite-difference scheme's.
    pub model: String,
    /// Values per node: a lattice's populations Q, a grid's unknowns.
    pub q: usize,
    /// Nodes along x.
    pub lx: usize,
    /// Nodes along y.
    pub ly: usize,
    /// Nodes along z (1 in 2-D; absent from 2-D manifests).
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub lz: usize,
    /// `"f32"` or `"f64"`.
    pub precision: String,
    /// Steps completed when the checkpoint was written.
    pub step: u64,
    /// The model's parameters, in declaration order.
    pub params: Vec<ParamValue>,
    /// The fields stored per site after the populations of each plane (all of
    /// [`Model::FIELDS`], or none while they were uniform).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fields: Vec<String>,
    /// Order of the payload.
    pub order: String,
    /// The token of this checkpoint, in every shard's name and header.
    pub run: String,
    /// The shards, whose boxes tile the domain (but for the blocks a sparse one leaves out).
    pub shards: Vec<Shard>,
    /// Whether the shards leave out blocks of solid nodes alone (a sparse domain,
    /// [`crate::blocks::Blocks::sparse`]): the nodes no shard holds read as solid, at rest.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub sparse: bool,
    /// What a finite-difference run says beyond a lattice (absent from a lattice's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fd: Option<FdFacts>,
    /// What the application says of the run that wrote it (the `lbm` program: the case and
    /// its settings, so that another case of the same model and size cannot resume it),
    /// stored and read back untouched; empty when it said nothing.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub about: BTreeMap<String, String>,
}

/// What the manifest of a finite-difference run's checkpoint says of the run beyond its
/// scheme, nodes, precision, parameters and steps.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FdFacts {
    /// The grid spacing.
    pub h: f64,
    /// The sides x−, x+, y−, y+ (, z−, z+), as the grid describes them.
    pub sides: Vec<String>,
    /// The unknowns, in the order of each node's values.
    pub unknowns: Vec<String>,
    /// The time reached, `Σ Δt`.
    pub time: f64,
}

fn one() -> usize {
    1
}

fn is_one(v: &usize) -> bool {
    *v == 1
}

impl CheckpointHeader {
    /// The domain's nodes, `[LX, LY, LZ]` (`LZ = 1` in 2-D).
    pub fn size(&self) -> [usize; 3] {
        [self.lx, self.ly, self.lz]
    }

    /// Sites per plane of constant x: `LY·LZ` (saturating: a damaged manifest's sizes are
    /// refused by the checks, never wrapped around).
    pub fn plane(&self) -> usize {
        self.ly.saturating_mul(self.lz)
    }

    /// Bytes per site of the payload: its `q` values of `bytes` each, then its fields; `None`
    /// when that cannot be addressed (a damaged manifest).
    fn site_bytes(&self, bytes: usize) -> Option<usize> {
        self.fields
            .len()
            .checked_mul(8)?
            .checked_add(self.q.checked_mul(bytes)?)
    }
}

/// A shard as the manifest lists it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Shard {
    /// Its file name, beside the manifest.
    pub file: String,
    /// The first plane of constant x it holds.
    pub x0: usize,
    /// One past the last.
    pub x1: usize,
    /// Its nodes along y and z, `[[y0, y1], [z0, z1]]`; absent where it holds whole planes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub yz: Option<[[usize; 2]; 2]>,
    /// Payload size in bytes.
    pub payload_bytes: u64,
    /// CRC-32 of the payload.
    pub crc32: u32,
}

impl Shard {
    /// The box of nodes it holds, in a domain of `[LX, LY, LZ]` nodes.
    pub fn nodes(&self, [_, ly, lz]: [usize; 3]) -> [Range<usize>; 3] {
        match self.yz {
            Some([[y0, y1], [z0, z1]]) => [self.x0..self.x1, y0..y1, z0..z1],
            None => [self.x0..self.x1, 0..ly, 0..lz],
        }
    }
}

/// The header of a shard: what the manifest says of it, and what it belongs to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct ShardHeader {
    pub(crate) model: String,
    pub(crate) q: usize,
    pub(crate) lx: usize,
    /// The whole domain's sites per plane, `LY·LZ`.
    pub(crate) ly: usize,
    pub(crate) precision: String,
    pub(crate) step: u64,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) fields: Vec<String>,
    pub(crate) run: String,
    pub(crate) x0: usize,
    pub(crate) x1: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) yz: Option<[[usize; 2]; 2]>,
    pub(crate) payload_bytes: u64,
    pub(crate) crc32: u32,
}

impl ShardHeader {
    /// The header of the shard holding `nodes` of the checkpoint `m` (its run set), its
    /// payload's entries unset.
    pub(crate) fn of(m: &CheckpointHeader, [xs, ys, zs]: [Range<usize>; 3]) -> Self {
        let whole = ys == (0..m.ly) && zs == (0..m.lz);
        ShardHeader {
            model: m.model.clone(),
            q: m.q,
            lx: m.lx,
            ly: m.plane(),
            precision: m.precision.clone(),
            step: m.step,
            fields: m.fields.clone(),
            run: m.run.clone(),
            x0: xs.start,
            x1: xs.end,
            yz: (!whole).then_some([[ys.start, ys.end], [zs.start, zs.end]]),
            payload_bytes: 0,
            crc32: 0,
        }
    }

    /// The manifest's entry for this shard, stored in `file`.
    pub(crate) fn entry(&self, file: String) -> Shard {
        Shard {
            file,
            x0: self.x0,
            x1: self.x1,
            yz: self.yz,
            payload_bytes: self.payload_bytes,
            crc32: self.crc32,
        }
    }
}

/// The state of a box of sites, as a checkpoint holds it.
#[derive(Debug, Clone, PartialEq)]
pub struct Columns<T> {
    /// The populations, `[((x − x0)·P + s)·Q + i]` (`P` sites per plane of the box,
    /// `s = (z − z0)·ny + y − y0`: for whole planes the plane's site `y + LY·z`).
    pub populations: Vec<T>,
    /// Each stored field's name and values, `[(x − x0)·P + s]` (none when the fields
    /// were uniform, their values in the parameters).
    pub fields: Vec<(String, Vec<f64>)>,
}

/// Where the shards of a checkpoint whose headers were verified are, and where each one's
/// payload starts in its file.
pub(crate) struct Shards {
    dir: PathBuf,
    payload_at: Vec<u64>,
}

/// A checkpoint whose manifest and shard headers were read and verified, ready to give the
/// populations of any columns.
pub struct Checkpoint<M: Model, T: Real> {
    /// Its manifest.
    pub header: CheckpointHeader,
    /// The parameters, rebuilt from the manifest.
    pub params: M::Params,
    shards: Shards,
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

/// A header framed as `magic\n<len> <crc>\n<text>`, `<crc>` the CRC-32 of `text` in
/// hexadecimal.
pub(crate) fn framed(magic: &str, text: &str) -> String {
    format!(
        "{magic}\n{} {:08x}\n{text}",
        text.len(),
        crc32fast::hash(text.as_bytes())
    )
}

/// Reads a header framed by [`framed`] with one of `magics` (this version's first, whose
/// header carries its CRC-32 and is checked against it, then the earlier versions' still
/// read, whose headers do not), returning it and its length in bytes.
fn read_framed<H: serde::de::DeserializeOwned>(
    r: &mut impl BufRead,
    magics: &[&str],
    path: &Path,
) -> Result<(H, u64), CheckpointError> {
    let magic = magics[0];
    // The two lines before the header are read with a bound: a file that is not a checkpoint
    // (binary data, a device such as /dev/zero) is refused after a few bytes.
    let line = bounded_line(r, path)?;
    if !magics.contains(&line.trim_end()) {
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
    let current = line.trim_end() == magic;
    let (len, crc) = match len_line.trim_end().split_once(' ') {
        Some((len, crc)) if current => (len, u32::from_str_radix(crc, 16).ok()),
        None if !current => (len_line.trim_end(), None),
        _ => ("", None),
    };
    let len: usize = len
        .parse()
        .ok()
        .filter(|n| *n <= MAX_HEADER && (crc.is_some() || !current))
        .ok_or_else(|| corrupt(path, "the header's length or checksum is unreadable"))?;
    let mut text = vec![0u8; len];
    r.read_exact(&mut text)
        .map_err(|_| corrupt(path, "the file ends inside the header (truncated)"))?;
    if crc.is_some_and(|c| c != crc32fast::hash(&text)) {
        return Err(corrupt(path, "the header does not match its CRC-32"));
    }
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
/// as /dev/zero, a pipe, which is not waited on): a checkpoint is a file of known length.
pub(crate) fn open_regular(path: &Path) -> Result<File, CheckpointError> {
    crate::io::open_regular(path).map_err(|e| match e.kind() {
        io::ErrorKind::InvalidInput => CheckpointError::NotAFile {
            path: path.to_path_buf(),
            reason: format!("{e}; give the checkpoint's manifest, <out>/<case>_checkpoint.lbm"),
        },
        _ => io_err(path)(e),
    })
}

/// Writes this process's shard of the checkpoint `path` (token `run`, process `rank` of
/// `ranks`): the populations `payload` of the sites `nodes` (`[xs, ys, zs]`) of a lattice of
/// `size` sites of model `M` after `step` steps, in the layout-independent order
/// `[((x − x0)·P + s)·Q + i]` (`P` sites per plane of the box, `s = (z − z0)·ny + y − y0`),
/// and the per-site `fields` (none, or one per [`Model::FIELDS`], each `[(x − x0)·P + s]`),
/// atomically. Returns the manifest's entry for it.
pub(crate) fn write_shard<M: Model, T: Real>(
    path: &Path,
    (run, rank, ranks): (&str, usize, usize),
    (size, nodes): ([usize; 3], &[Range<usize>; 3]),
    step: u64,
    (payload, fields): (&[T], &[Vec<f64>]),
) -> Result<Shard, CheckpointError> {
    let [xs, ys, zs] = nodes.clone();
    let plane = ys.len() * zs.len();
    let sites = xs.len() * plane;
    let shape_error = |what: String| {
        Err(LbmError::Shape(format!(
            "a shard of {} planes of {plane} sites needs {what}",
            xs.len()
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
    // Per plane: its populations, then each field's values.
    let pops: &[u8] = bytemuck::cast_slice(payload);
    let (pc, fc) = (plane * M::Q * std::mem::size_of::<T>(), plane * 8);
    let parts: Vec<&[u8]> = (0..xs.len())
        .flat_map(|x| {
            std::iter::once(&pops[x * pc..(x + 1) * pc]).chain(
                fields
                    .iter()
                    .map(move |v| &bytemuck::cast_slice::<f64, u8>(v)[x * fc..(x + 1) * fc]),
            )
        })
        .collect();
    let whole = ys == (0..size[1]) && zs == (0..size[2]);
    let header = ShardHeader {
        model: M::NAME.into(),
        q: M::Q,
        lx: size[0],
        ly: size[1] * size[2],
        precision: T::NAME.into(),
        step,
        fields: field_names::<M>(!fields.is_empty()),
        run: run.into(),
        x0: xs.start,
        x1: xs.end,
        yz: (!whole).then_some([[ys.start, ys.end], [zs.start, zs.end]]),
        payload_bytes: 0,
        crc32: 0,
    };
    write_shard_parts(path, (rank, ranks), header, &parts)
}

/// Writes the shard of process `rank` of `ranks` of the checkpoint `path`: `header` (its
/// payload's size and CRC-32 set here) and the payload, the concatenation of `parts`,
/// atomically. Returns the manifest's entry for it.
pub(crate) fn write_shard_parts(
    path: &Path,
    (rank, ranks): (usize, usize),
    mut header: ShardHeader,
    parts: &[&[u8]],
) -> Result<Shard, CheckpointError> {
    let mut crc = crc32fast::Hasher::new();
    parts.iter().for_each(|p| crc.update(p));
    header.payload_bytes = parts.iter().map(|p| p.len() as u64).sum();
    header.crc32 = crc.finalize();
    let file = shard_name(path, &header.run, rank, ranks);
    let target = path.with_file_name(&file);
    let text = toml::to_string(&header).expect("the header is plain data");
    let framed = framed(SHARD_MAGICS[0], &text);
    let all: Vec<&[u8]> = std::iter::once(framed.as_bytes())
        .chain(parts.iter().copied())
        .collect();
    write_atomically(&target, &all).map_err(io_err(&target))?;
    Ok(header.entry(file))
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
        order: ORDER.into(),
        run: run.into(),
        sparse: (shards.iter())
            .map(|s| {
                s.nodes([lx, ly, lz])
                    .iter()
                    .map(Range::len)
                    .product::<usize>()
            })
            .sum::<usize>()
            < lx * ly * lz,
        shards,
        fd: None,
        about: about.clone(),
    };
    publish(path, &header)
}

/// The payload's order, as manifests say it.
pub(crate) const ORDER: &str = "per plane x of each shard's box, its sites (y fastest, then z), \
                                each site's values; then each field's values at those sites \
                                (little-endian)";

/// Writes the manifest `header` of the checkpoint `path`, whose shards are written and
/// synced, atomically — the moment the checkpoint comes to exist — after keeping the one it
/// replaces as the previous checkpoint ([`previous_checkpoint`]), then removes the shards of the older
/// ones.
pub(crate) fn publish(path: &Path, header: &CheckpointHeader) -> Result<(), CheckpointError> {
    previous::keep_previous(path, |p| read_manifest(p).is_ok())?;
    let text = toml::to_string(header).expect("the manifest is plain data");
    write_atomically(path, &[framed(MAGICS[0], &text).as_bytes()]).map_err(io_err(path))?;
    remove_stale_shards(path);
    Ok(())
}

/// Removes the shards of older checkpoints at `path`: those that neither the newest manifest
/// nor the previous one lists. Best effort: a shard left behind is never read, since no
/// manifest names it.
fn remove_stale_shards(path: &Path) {
    let kept: Vec<String> = previous::kept_manifests(path)
        .iter()
        .filter_map(|m| read_manifest(m).ok())
        .flat_map(|m| m.shards.into_iter().map(|s| s.file))
        .collect();
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
        if is_shard && !kept.contains(&file) {
            let _ = fs::remove_file(e.path());
        }
    }
}

/// Reads the manifest of the checkpoint `path` alone, of any model (its shards unread): what
/// an application checks before it knows the model's type, such as what the run that wrote it
/// said of itself ([`CheckpointHeader::about`]).
pub fn read_manifest(path: &Path) -> Result<CheckpointHeader, CheckpointError> {
    let mut r = BufReader::new(open_regular(path)?);
    Ok(read_framed::<CheckpointHeader>(&mut r, &MAGICS, path)?.0)
}

/// Reads and verifies the manifest of a checkpoint of model `M` in precision `T`, and the
/// header of every shard it lists: each must exist, be whole, and belong to this checkpoint.
/// The populations are read by [`Checkpoint::columns`].
pub fn read_checkpoint<M: Model, T: Real>(
    path: &Path,
) -> Result<Checkpoint<M, T>, CheckpointError> {
    let (header, shards) = open(path, std::mem::size_of::<T>(), |h| {
        check_fits::<M, T>(h, path)
    })?;
    let params = M::params_from_values(&header.params.iter().map(|p| p.value).collect::<Vec<_>>())
        .ok_or_else(|| mismatch(path, "its parameters do not match the model's"))?;
    Ok(Checkpoint {
        header,
        params,
        shards,
        _t: PhantomData,
    })
}

/// Reads the manifest of the checkpoint `path`, asks `fits` whether it is of the run that
/// reads it, and verifies that its shards tile the domain and that each one's header is there,
/// whole and of this checkpoint, its values of `bytes` each.
pub(crate) fn open(
    path: &Path,
    bytes: usize,
    fits: impl FnOnce(&CheckpointHeader) -> Result<(), CheckpointError>,
) -> Result<(CheckpointHeader, Shards), CheckpointError> {
    let header = read_manifest(path)?;
    fits(&header)?;
    check_tiling(&header, path)?;
    let dir = path.parent().unwrap_or(Path::new("")).to_path_buf();
    let payload_at = header
        .shards
        .iter()
        .map(|s| check_shard(&dir.join(&s.file), s, (&header, bytes), path))
        .collect::<Result<_, _>>()?;
    Ok((header, Shards { dir, payload_at }))
}

/// Refuses shards whose boxes leave the domain, overlap, or leave part of it uncovered
/// (where the manifest does not say it is sparse).
fn check_tiling(h: &CheckpointHeader, path: &Path) -> Result<(), CheckpointError> {
    let size = h.size();
    let boxes: Vec<[Range<usize>; 3]> = h.shards.iter().map(|s| s.nodes(size)).collect();
    let mut covered: u128 = 0;
    for (s, b) in h.shards.iter().zip(&boxes) {
        if let Some(a) = (0..3).find(|&a| b[a].start > b[a].end || b[a].end > size[a]) {
            return Err(corrupt(
                path,
                format!(
                    "its shard {} holds nodes {:?} along {}, outside the {} there are",
                    s.file,
                    b[a],
                    ["x", "y", "z"][a],
                    size[a]
                ),
            ));
        }
        covered += b.iter().map(|r| r.len() as u128).product::<u128>();
    }
    for (i, a) in boxes.iter().enumerate() {
        for (j, b) in boxes.iter().enumerate().skip(i + 1) {
            if (0..3).all(|k| a[k].start.max(b[k].start) < a[k].end.min(b[k].end)) {
                return Err(corrupt(
                    path,
                    format!(
                        "its shards {} and {} hold the same nodes",
                        h.shards[i].file, h.shards[j].file
                    ),
                ));
            }
        }
    }
    let total = size.iter().map(|&n| n as u128).product::<u128>();
    if covered != total && !(h.sparse && covered < total) {
        return Err(corrupt(
            path,
            format!("its shards cover {covered} of the {total} nodes"),
        ));
    }
    Ok(())
}

/// Checks the shard at `file` against its entry `s` in the manifest `m` (at `manifest`),
/// whose values are of `bytes` each: present, of this checkpoint, of the size announced.
/// Returns where its payload starts.
fn check_shard(
    file: &Path,
    s: &Shard,
    (m, bytes): (&CheckpointHeader, usize),
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
    let (h, at) = read_framed::<ShardHeader>(&mut BufReader::new(f), &SHARD_MAGICS, file)?;
    let expected = m
        .site_bytes(bytes)
        .and_then(|b| {
            s.nodes(m.size())
                .iter()
                .try_fold(b, |n, r| n.checked_mul(r.len()))
        })
        .ok_or_else(|| corrupt(manifest, "its domain is too large to address"))?;
    // A shard's `ly` is the domain's plane, the manifest's `LY·LZ`.
    let ours = (&h.model, h.lx, h.ly, h.step, &h.run, &h.fields)
        == (&m.model, m.lx, m.plane(), m.step, &m.run, &m.fields);
    if !ours || (h.x0, h.x1, h.yz, h.crc32) != (s.x0, s.x1, s.yz, s.crc32) {
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
                "the shard announces {} bytes of values and fields, its nodes need {expected}",
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

impl Shards {
    /// The values (of `bytes` each) at the nodes of the box `want` of the checkpoint `h`, into
    /// `values` in the payload's order (`[((x − x0)·W_z + z − z0)·W_y + y − y0]`, the box's
    /// widths `W`, each node's `q` values together), and each stored field's into `fields`,
    /// read from the shards that hold them. Each of those shards is read through once and
    /// checked whole against its CRC-32 (a damaged one is refused, whichever nodes were
    /// asked for); no more than a plane of a shard is held besides what was asked for.
    pub(crate) fn read_box(
        &self,
        h: &CheckpointHeader,
        (want, bytes): ([Range<usize>; 3], usize),
        values: &mut [u8],
        fields: &mut [Vec<f64>],
    ) -> Result<(), CheckpointError> {
        let unit = h.q * bytes;
        let [wx, wy, wz] = want.clone();
        let nodes = wx.len() * wy.len() * wz.len();
        assert!(
            values.len() == nodes * unit
                && fields.len() == h.fields.len()
                && fields.iter().all(|f| f.len() == nodes),
            "room for the values and fields of {want:?}"
        );
        for (s, &at) in h.shards.iter().zip(&self.payload_at) {
            let [sx, sy, sz] = s.nodes(h.size());
            let meet = |a: &Range<usize>, b: &Range<usize>| a.start.max(b.start)..a.end.min(b.end);
            let (mx, my, mz) = (meet(&sx, &wx), meet(&sy, &wy), meet(&sz, &wz));
            if mx.is_empty() || my.is_empty() || mz.is_empty() {
                continue;
            }
            let path = self.dir.join(&s.file);
            let mut r = BufReader::new(open_regular(&path)?);
            io::copy(&mut (&mut r).take(at), &mut io::sink()).map_err(io_err(&path))?;
            let mut crc = crc32fast::Hasher::new();
            let plane = sy.len() * sz.len();
            let mut col = vec![0u8; plane * (unit + 8 * h.fields.len())];
            for x in sx {
                r.read_exact(&mut col)
                    .map_err(|_| corrupt(&path, "the file ends inside the values (truncated)"))?;
                crc.update(&col);
                if !mx.contains(&x) {
                    continue;
                }
                for z in mz.clone() {
                    // The run along y of this row that is asked for: where it is in the
                    // shard's plane, and where it goes.
                    let from = (z - sz.start) * sy.len() + my.start - sy.start;
                    let to =
                        ((x - wx.start) * wz.len() + z - wz.start) * wy.len() + my.start - wy.start;
                    let n = my.len();
                    values[to * unit..(to + n) * unit]
                        .copy_from_slice(&col[from * unit..(from + n) * unit]);
                    for (j, f) in fields.iter_mut().enumerate() {
                        let o = plane * unit + j * plane * 8;
                        bytemuck::cast_slice_mut::<f64, u8>(&mut f[to..to + n])
                            .copy_from_slice(&col[o + from * 8..o + (from + n) * 8]);
                    }
                }
            }
            if crc.finalize() != s.crc32 {
                return Err(corrupt(
                    &path,
                    "the values do not match their CRC-32 checksum",
                ));
            }
        }
        Ok(())
    }
}

fn check_fits<M: Model, T: Real>(h: &CheckpointHeader, path: &Path) -> Result<(), CheckpointError> {
    if h.fd.is_some() {
        return Err(mismatch(
            path,
            format!(
                "it is a checkpoint of a finite-difference run (the scheme {}), not of a lattice",
                h.model
            ),
        ));
    }
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
    /// read from the shards that hold them (see [`Checkpoint::read_box`]).
    pub fn columns(&self, xs: Range<usize>) -> Result<Vec<T>, CheckpointError> {
        let h = &self.header;
        Ok(self.read_box(&[xs, 0..h.ly, 0..h.lz])?.populations)
    }

    /// The populations and the per-site fields of the sites `nodes` (`[xs, ys, zs]`, in the
    /// order of a shard's payload), read from the shards that hold them, whatever
    /// their boxes. Each of those shards is read through once and checked whole against its
    /// CRC-32 (a damaged one is refused, whichever sites were asked for); no more than the
    /// sites asked for is kept.
    pub fn read_box(&self, nodes: &[Range<usize>; 3]) -> Result<Columns<T>, CheckpointError> {
        let h = &self.header;
        let sites = nodes.iter().map(Range::len).product::<usize>();
        // At rest where no shard holds a node (the solid blocks a sparse domain left out).
        let rest: Vec<T> = M::WEIGHTS.iter().map(|&w| T::from_f64(w)).collect();
        let mut populations = rest.repeat(sites);
        let mut fields = vec![vec![0.0; sites]; h.fields.len()];
        self.shards.read_box(
            h,
            (nodes.clone(), std::mem::size_of::<T>()),
            bytemuck::cast_slice_mut(&mut populations),
            &mut fields,
        )?;
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
        let h = &self.header;
        let c = self.read_box(&[0..h.lx, 0..h.ly, 0..h.lz])?;
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
