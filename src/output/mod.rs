//! What a run writes: the macroscopic [`Fields`] of a lattice at one step, their global
//! [`diagnostics`] (one CSV row per output step), images ([`png`], a colour bar with its
//! range), VTK files ([`vtk`], for ParaView) and the tables a case adds ([`Table`], CSV).
//! Every file is written whole or not at all
//! ([`crate::io::write_atomically`]).

pub mod diagnostics;
mod fields;
pub mod png;
mod table;
pub mod vtk;

pub use diagnostics::{Diagnostics, DiagnosticsLog};
pub use fields::{DERIVED, Fields};
pub use table::Table;

/// The largest output a resumed run reads back to continue it (its diagnostics, its VTK
/// series): 4 GiB, tens of millions of rows.
pub const READ_LIMIT: u64 = 1 << 32;

/// Why an output could not be written.
#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    /// The file system refused.
    #[error("cannot write {path}: {source}")]
    Io {
        /// The file.
        path: std::path::PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// Encoding an image failed.
    #[error("cannot encode image {path}: {source}")]
    Image {
        /// The file.
        path: std::path::PathBuf,
        /// Why.
        source: ::png::EncodingError,
    },
    /// A field that the model does not have.
    #[error("no field `{name}`: this model has {available}")]
    NoField {
        /// The name asked for.
        name: String,
        /// The fields there are.
        available: String,
    },
}

/// Writes `bytes` to `path` atomically, mapping the error to [`OutputError::Io`].
pub(crate) fn write_file(path: &std::path::Path, bytes: &[&[u8]]) -> Result<(), OutputError> {
    crate::io::write_atomically(path, bytes).map_err(|source| OutputError::Io {
        path: path.to_path_buf(),
        source,
    })
}
