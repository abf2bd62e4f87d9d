//! Checkpoints of finite-difference runs: the unknowns at every node of the whole grid, the
//! steps and the time reached, and what the run is (scheme, grid, spacing, precision,
//! parameters, sides), written atomically in one file and read back only when whole and
//! belonging to the run that resumes it, on any number of processes and any backend.
//!
//! # Format (version 1)
//! ```text
//! LBM-FD-CHECKPOINT 1\n <n>\n <TOML, n bytes>: scheme, nodes, h, precision, parameters,
//!     sides, unknowns, steps, time, payload size and CRC-32
//! <payload>: per unknown in declaration order, its value at every node of the whole grid,
//!     x fastest, then y, then z, little-endian f64 (exact in either precision)
//! ```
//!
//! The walls' nodes and the ghost layers are not stored: the sides set them from the nodes
//! inside, so a resumed run computes the very operations of an uninterrupted one (the
//! results are bitwise the same). The state is gathered on the first process, which writes
//! the file through a temporary one, synced and renamed: a crash leaves the previous
//! checkpoint or the new one. Every process of the run that resumes reads the file and takes
//! its planes.

use std::io::{BufReader, Read};
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::checkpoint::{
    corrupt, framed, io_err, open_regular, read_framed, CheckpointError, ParamValue,
};
use crate::io::write_atomically;

const MAGIC: &str = "LBM-FD-CHECKPOINT 1";

/// What a checkpoint says of the run that wrote it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FdHeader {
    /// The scheme's name ([`super::FdScheme::NAME`]).
    pub scheme: String,
    /// The whole grid's nodes per axis (`[n_x, n_y, 1]` in 2-D).
    pub nodes: [usize; 3],
    /// The grid spacing.
    pub h: f64,
    /// `"f32"` or `"f64"`: the precision the run computed in.
    pub precision: String,
    /// The scheme's parameters, in declaration order.
    pub params: Vec<ParamValue>,
    /// The sides x−, x+, y−, y+ (, z−, z+), as the grid describes them.
    pub sides: Vec<String>,
    /// The unknowns, in the order of the payload.
    pub unknowns: Vec<String>,
    /// Steps taken.
    pub steps: u64,
    /// The time reached, `Σ Δt`.
    pub time: f64,
    /// Payload size in bytes.
    pub payload_bytes: u64,
    /// CRC-32 of the payload.
    pub crc32: u32,
}

impl FdHeader {
    /// The nodes of the whole grid (`None` when a damaged header's sizes overflow).
    fn node_count(&self) -> Option<usize> {
        self.nodes[0]
            .checked_mul(self.nodes[1])?
            .checked_mul(self.nodes[2])
    }

    /// Why this checkpoint cannot resume the run `here` describes (its payload fields
    /// aside), or `None` when it can.
    pub(crate) fn differs_from(&self, here: &FdHeader) -> Option<String> {
        if self.scheme != here.scheme {
            return Some(format!(
                "it is of the scheme {}, this run's is {}",
                self.scheme, here.scheme
            ));
        }
        if self.nodes != here.nodes || self.h != here.h {
            return Some(format!(
                "its grid is {:?} nodes of spacing {}, this run's {:?} of spacing {}",
                self.nodes, self.h, here.nodes, here.h
            ));
        }
        if self.precision != here.precision {
            return Some(format!(
                "it was computed in {}, this run computes in {}: resume in {}",
                self.precision, here.precision, self.precision
            ));
        }
        for (there, now) in self.params.iter().zip(&here.params) {
            if there != now {
                return Some(format!(
                    "its parameter {} is {}, this run's {} is {}",
                    there.name, there.value, now.name, now.value
                ));
            }
        }
        if self.params.len() != here.params.len() || self.unknowns != here.unknowns {
            return Some("its parameters or unknowns are not the scheme's".into());
        }
        if self.sides != here.sides {
            return Some(format!(
                "its sides are [{}], this run's [{}]",
                self.sides.join(", "),
                here.sides.join(", ")
            ));
        }
        None
    }
}

/// Writes the checkpoint `path`: `header` (its payload size and CRC-32 set here) and each
/// unknown's `values` at every node of the whole grid, atomically.
pub(crate) fn write(
    path: &Path,
    mut header: FdHeader,
    values: &[Vec<f64>],
) -> Result<(), CheckpointError> {
    let parts: Vec<&[u8]> = values.iter().map(|v| bytemuck::cast_slice(v)).collect();
    let mut crc = crc32fast::Hasher::new();
    parts.iter().for_each(|p| crc.update(p));
    header.payload_bytes = parts.iter().map(|p| p.len() as u64).sum();
    header.crc32 = crc.finalize();
    let text = toml::to_string(&header).expect("the header is plain data");
    let framed = framed(MAGIC, &text);
    let all: Vec<&[u8]> = std::iter::once(framed.as_bytes()).chain(parts).collect();
    write_atomically(path, &all).map_err(io_err(path))
}

/// Reads the checkpoint `path`, refusing a file that is not one, is truncated or longer, or
/// whose payload does not match its CRC-32, before allocating for it. Returns the header and
/// each unknown's values at every node.
pub(crate) fn read(path: &Path) -> Result<(FdHeader, Vec<Vec<f64>>), CheckpointError> {
    let file = open_regular(path)?;
    let len = file.metadata().map_err(io_err(path))?.len();
    let mut r = BufReader::new(file);
    let (header, at): (FdHeader, u64) = read_framed(&mut r, [MAGIC, MAGIC], path)?;
    let expected = header
        .node_count()
        .and_then(|n| n.checked_mul(header.unknowns.len()))
        .and_then(|n| n.checked_mul(8))
        .map(|n| n as u64);
    if expected != Some(header.payload_bytes) {
        return Err(corrupt(
            path,
            "its payload size does not match its grid and unknowns",
        ));
    }
    if len - at != header.payload_bytes {
        return Err(corrupt(
            path,
            format!(
                "it holds {} bytes of values where its header says {} (truncated or appended to)",
                len - at,
                header.payload_bytes
            ),
        ));
    }
    let mut bytes = vec![0u8; header.payload_bytes as usize];
    r.read_exact(&mut bytes).map_err(io_err(path))?;
    if crc32fast::hash(&bytes) != header.crc32 {
        return Err(corrupt(path, "its values do not match their CRC-32"));
    }
    let nodes = header.node_count().unwrap_or(0);
    let values = if nodes == 0 {
        vec![Vec::new(); header.unknowns.len()]
    } else {
        bytes
            .chunks_exact(nodes * 8)
            .map(|c| {
                c.chunks_exact(8)
                    .map(|b| f64::from_le_bytes(b.try_into().expect("8 bytes")))
                    .collect()
            })
            .collect()
    };
    Ok((header, values))
}
