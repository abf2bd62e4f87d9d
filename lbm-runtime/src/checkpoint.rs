//! Checkpoints: the whole state of a lattice written atomically, and read back only when it is
//! whole and belongs to the model, size and precision asked for.
//!
//! File format (version 1):
//!
//! ```text
//! LBM-CHECKPOINT 1\n          magic line
//! <n>\n                       length in bytes of the header that follows
//! <header, TOML>              model, Q, LX, LY, precision, step, parameters, payload size, CRC-32
//! <payload>                   populations f_i(x, y) after the last completed step, in the
//!                             layout-independent order x, then y, then i, as little-endian
//!                             values of the lattice's precision
//! ```
//!
//! The file is written to a temporary file in the same directory, flushed to disk (fsync),
//! renamed over the target and the directory synced, so a crash leaves either the old file or the
//! new one, never a mixture. The populations are read through [`Lattice::populations`], which is
//! independent of the layout and streaming scheme, so a checkpoint written with one layout or
//! scheme restarts with any other, and the continued run is bitwise identical to an
//! uninterrupted one.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::io::write_atomically;
use crate::{BoundarySpec, Lattice, Layout, LbmError, Model, Real, Scheme};

const MAGIC: &str = "LBM-CHECKPOINT 1";
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

/// The header of a checkpoint.
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
    /// `"f32"` or `"f64"`.
    pub precision: String,
    /// Steps completed when the checkpoint was written.
    pub step: u64,
    /// The model's parameters, in declaration order.
    pub params: Vec<ParamValue>,
    /// Order of the payload.
    pub order: String,
    /// Payload size in bytes.
    pub payload_bytes: u64,
    /// CRC-32 of the payload.
    pub crc32: u32,
}

/// A checkpoint read and verified, ready to become a lattice again.
pub struct Checkpoint<M: Model, T: Real> {
    /// Its header.
    pub header: CheckpointHeader,
    /// The parameters, rebuilt from the header.
    pub params: M::Params,
    populations: Vec<T>,
}

fn io_err(path: &Path) -> impl Fn(io::Error) -> CheckpointError + '_ {
    move |source| CheckpointError::Io {
        path: path.to_path_buf(),
        source,
    }
}

fn corrupt(path: &Path, reason: impl Into<String>) -> CheckpointError {
    CheckpointError::Corrupt {
        path: path.to_path_buf(),
        reason: reason.into(),
    }
}

fn mismatch(path: &Path, reason: impl Into<String>) -> CheckpointError {
    CheckpointError::Mismatch {
        path: path.to_path_buf(),
        reason: reason.into(),
    }
}

/// Writes a checkpoint of a `lx × ly` lattice of model `M` after `step` steps, from its
/// populations in the layout-independent order `[(x·LY + y)·Q + i]`, atomically.
pub(crate) fn write_state<M: Model, T: Real>(
    path: &Path,
    (lx, ly): (usize, usize),
    params: &M::Params,
    step: u64,
    payload: &[T],
) -> Result<(), CheckpointError> {
    if payload.len() != lx * ly * M::Q {
        return Err(LbmError::Shape(format!(
            "a checkpoint of {lx}×{ly} sites needs {} populations, got {}",
            lx * ly * M::Q,
            payload.len()
        ))
        .into());
    }
    let bytes: &[u8] = bytemuck::cast_slice(payload);
    let header = CheckpointHeader {
        model: M::NAME.into(),
        q: M::Q,
        lx,
        ly,
        precision: T::NAME.into(),
        step,
        params: M::param_values(params)
            .into_iter()
            .map(|(n, v)| ParamValue {
                name: n.into(),
                value: v,
            })
            .collect(),
        order: "x, y, i (little-endian)".into(),
        payload_bytes: bytes.len() as u64,
        crc32: crc32fast::hash(bytes),
    };
    let text = toml::to_string(&header).expect("the header is plain data");
    write_atomically(
        path,
        &[
            format!("{MAGIC}\n{}\n", text.len()).as_bytes(),
            text.as_bytes(),
            bytes,
        ],
    )
    .map_err(io_err(path))
}

/// Reads and verifies a checkpoint of model `M` in precision `T`.
pub fn read_checkpoint<M: Model, T: Real>(
    path: &Path,
) -> Result<Checkpoint<M, T>, CheckpointError> {
    let mut r = BufReader::new(File::open(path).map_err(io_err(path))?);
    let mut line = String::new();
    r.read_line(&mut line).map_err(io_err(path))?;
    if line.trim_end() != MAGIC {
        return Err(corrupt(path, format!("it does not start with `{MAGIC}` (not an lbm checkpoint, or another format version)")));
    }
    line.clear();
    r.read_line(&mut line).map_err(io_err(path))?;
    let len: usize = line
        .trim_end()
        .parse()
        .ok()
        .filter(|n| *n <= MAX_HEADER)
        .ok_or_else(|| corrupt(path, "the header length is unreadable"))?;
    let mut text = vec![0u8; len];
    r.read_exact(&mut text)
        .map_err(|_| corrupt(path, "the file ends inside the header (truncated)"))?;
    let text = String::from_utf8(text).map_err(|_| corrupt(path, "the header is not text"))?;
    let header: CheckpointHeader = toml::from_str(&text)
        .map_err(|e| corrupt(path, format!("the header is unreadable: {e}")))?;
    check_fits::<M, T>(&header, path)?;
    let params = M::params_from_values(&header.params.iter().map(|p| p.value).collect::<Vec<_>>())
        .ok_or_else(|| mismatch(path, "its parameters do not match the model's"))?;
    let expected = header.lx * header.ly * M::Q * T::BYTES;
    if header.payload_bytes != expected as u64 {
        return Err(corrupt(
            path,
            format!(
                "the header announces {} bytes of populations, the lattice needs {expected}",
                header.payload_bytes
            ),
        ));
    }
    let mut populations = vec![T::default(); header.lx * header.ly * M::Q];
    let bytes: &mut [u8] = bytemuck::cast_slice_mut(&mut populations);
    r.read_exact(bytes).map_err(|_| {
        corrupt(
            path,
            format!("the file ends inside the populations (truncated; {expected} bytes expected)"),
        )
    })?;
    if r.read(&mut [0u8; 1]).map_err(io_err(path))? != 0 {
        return Err(corrupt(path, "there are bytes after the populations"));
    }
    if crc32fast::hash(bytes) != header.crc32 {
        return Err(corrupt(
            path,
            "the populations do not match their CRC-32 checksum",
        ));
    }
    Ok(Checkpoint {
        header,
        params,
        populations,
    })
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
    /// The populations, in the order `[(x·LY + y)·Q + i]`.
    pub fn populations(&self) -> &[T] {
        &self.populations
    }

    /// The lattice the checkpoint was taken from, in layout `L` with `scheme` and the run's
    /// boundary conditions, ready to continue from step `header.step`.
    pub fn into_lattice<L: Layout>(
        self,
        scheme: Scheme,
        boundaries: &BoundarySpec,
    ) -> Result<Lattice<M, L, T>, CheckpointError> {
        let h = &self.header;
        let mut lat = Lattice::<M, L, T>::new(h.lx, h.ly, self.params, scheme, boundaries)?;
        for (s, f) in self.populations.chunks_exact(M::Q).enumerate() {
            lat.set_populations(s / h.ly, s % h.ly, f)?;
        }
        lat.set_steps_done(h.step);
        Ok(lat)
    }
}
