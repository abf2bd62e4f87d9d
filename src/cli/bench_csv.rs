//! `lbm bench --csv`: every row of the benchmark's tables, with the limits measured beside it,
//! as CSV for plotting.

use std::cell::RefCell;
use std::path::Path;

use super::CliError;

/// Refuses, before any work, a CSV path whose directory does not exist, that names anything
/// but a regular file (a directory, a device, a pipe, a link: never replaced), or that names
/// an existing file (unless `force`).
pub fn check_csv_path(path: &Path, force: bool) -> Result<(), CliError> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let kind = std::fs::symlink_metadata(path).ok().map(|m| m.file_type());
    let problem = match kind {
        Some(t) if !t.is_file() => format!("it is {}", lbm::io::kind_of(t)),
        Some(_) if !force => "the file exists (pass --force to overwrite it)".into(),
        _ if !dir.is_dir() => "its directory does not exist".into(),
        _ => return Ok(()),
    };
    Err(CliError::Config {
        key: "csv".into(),
        message: format!("{}: {problem}; give another file path", path.display()),
    })
}

/// One row of the CSV: a kernel timed, and the limits measured beside it (empty where a
/// figure does not apply: no flops in propagate or bc).
#[derive(Debug, serde::Serialize)]
pub struct Row {
    /// `cpu` or `gpu`.
    pub backend: &'static str,
    /// The model's name.
    pub model: &'static str,
    /// `f64` or `f32`.
    pub precision: &'static str,
    /// The populations' layout.
    pub layout: &'static str,
    /// `propagate`, `bc`, `collide` or `fused`.
    pub kernel: String,
    /// `two-copy` or `in-place`.
    pub scheme: &'static str,
    /// Sites updated per iteration.
    pub sites: usize,
    /// Median milliseconds per iteration (GPU: mean per step).
    pub ms_per_iter: f64,
    /// Million lattice-site updates per second.
    pub mlups: f64,
    /// Memory traffic, GB/s (reads plus writes of the populations; none for `bc`).
    pub gb_per_s: Option<f64>,
    /// The bandwidth of the kernel's pattern measured beside it, GB/s.
    pub bandwidth_gb_per_s: Option<f64>,
    /// Which pattern: `read-modify-write`, `copy`, `non-temporal copy` or `device copy`.
    pub bandwidth_pattern: &'static str,
    /// The bandwidth probe's spread, `(best − worst)/best` over its repetitions.
    pub bandwidth_spread: Option<f64>,
    /// Flop rate, GFLOP/s (kernels that collide).
    pub gflop_per_s: Option<f64>,
    /// The FMA peak measured beside it in the table's arithmetic (f16s: f32), GFLOP/s.
    pub peak_gflop_per_s: Option<f64>,
    /// The FMA probe's spread.
    pub peak_spread: Option<f64>,
    /// The GPU site kernels' workgroup size, chosen by timing (none on the host).
    pub workgroup: Option<u32>,
    /// On the host, what the lattice's tuning kept for the kernel's passes, as the table
    /// prints it: the prefetch distance, with the kind of store where it is not plain
    /// (`16 KiB non-temporal`), the in-place step's two half-steps as `pull / local`; `-` where
    /// nothing is tuned (propagate, bc, and the GPU's rows, which give their workgroup).
    pub tuned: String,
}

/// The rows of every table so far.
#[derive(Default)]
pub struct Rows(RefCell<Vec<Row>>);

impl Rows {
    /// Keeps `row`.
    pub fn push(&self, row: Row) {
        self.0.borrow_mut().push(row);
    }

    /// Writes the rows to `path` as CSV (a header, then a line per row), whole or not at all.
    pub fn write(&self, path: &Path) -> Result<(), CliError> {
        let mut w = csv::Writer::from_writer(Vec::new());
        let failed = |e: &dyn std::fmt::Display| CliError::Config {
            key: "csv".into(),
            message: format!("{}: {e}", path.display()),
        };
        for row in self.0.borrow().iter() {
            w.serialize(row).map_err(|e| failed(&e))?;
        }
        let bytes = w.into_inner().map_err(|e| failed(&e))?;
        lbm::io::write_atomically(path, &[&bytes]).map_err(|e| failed(&e))
    }
}
