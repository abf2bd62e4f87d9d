//! Global diagnostics of a run, one row per output step, written as CSV:
//!
//! ```text
//! mass      M = Σ ρ
//! momentum  P = Σ ρ u
//! energy    E = ½ Σ ρ (|u|² + D cs² T)      (T ≡ 1 for athermal models: ½ Σ ρ (|u|² + D cs²))
//! max Mach  max |u| / √(cs² T)
//! ```
//! over the lattice's sites (with `u` the physical velocity the model reports), plus the
//! columns a case adds (for Rayleigh–Taylor the mixing-layer width). `time` is the step times
//! the case's time unit. A 3-D lattice adds the column `momentum_z`.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use super::{Fields, OutputError, write_file};

/// The diagnostics of one step.
#[derive(Debug, Clone, PartialEq)]
pub struct Diagnostics {
    /// Steps done.
    pub step: u64,
    /// Time in the case's unit.
    pub time: f64,
    /// Σ ρ.
    pub mass: f64,
    /// Σ ρ u (`P_z = 0` in 2-D).
    pub momentum: [f64; 3],
    /// The lattice's dimension, 2 or 3.
    pub dim: usize,
    /// ½ Σ ρ (|u|² + D cs² T).
    pub energy: f64,
    /// max |u| / √(cs² T).
    pub max_mach: f64,
    /// Columns of the case, by name.
    pub extra: Vec<(&'static str, f64)>,
}

impl Diagnostics {
    /// The diagnostics of `f` (of the sites it holds: a piece's are summed, and their Mach
    /// numbers maximised, over the pieces), with time `step · time_unit` and the case's
    /// `extra` columns.
    pub fn of(f: &Fields, time_unit: f64, extra: Vec<(&'static str, f64)>) -> Self {
        let n = f.len();
        // A moment the model lacks reads as `or` (no array of the piece's size for it).
        let at = |name: &str, or: f64| {
            let field = f.moment(name);
            move |s: usize| field.map_or(or, |v| v[s])
        };
        let (rho, ux, uy, uz, t) = (
            at("rho", 0.0),
            at("ux", 0.0),
            at("uy", 0.0),
            at("uz", 0.0),
            at("T", 1.0),
        );
        let dim = if f.moment("uz").is_some() { 3 } else { 2 };
        let mut d = Self {
            step: f.step,
            time: f.step as f64 * time_unit,
            mass: 0.0,
            momentum: [0.0; 3],
            dim,
            energy: 0.0,
            max_mach: 0.0,
            extra,
        };
        for s in 0..n {
            let (rho, u, t) = (rho(s), [ux(s), uy(s), uz(s)], t(s));
            let u2 = u[0] * u[0] + u[1] * u[1] + u[2] * u[2];
            d.mass += rho;
            d.momentum[0] += rho * u[0];
            d.momentum[1] += rho * u[1];
            d.momentum[2] += rho * u[2];
            d.energy += 0.5 * rho * (u2 + dim as f64 * f.cs2 * t);
            if rho != 0.0 {
                d.max_mach = d.max_mach.max((u2 / (f.cs2 * t)).sqrt());
            }
        }
        d
    }

    /// The sums `[mass, momentum_x, momentum_y, momentum_z, energy]`, which add up over
    /// pieces.
    pub fn sums(&self) -> [f64; 5] {
        let [px, py, pz] = self.momentum;
        [self.mass, px, py, pz, self.energy]
    }

    /// Sets the sums from [`Diagnostics::sums`]' totals over the pieces.
    pub fn set_sums(&mut self, s: &[f64]) {
        if let [mass, px, py, pz, energy, ..] = *s {
            (self.mass, self.momentum, self.energy) = (mass, [px, py, pz], energy);
        }
    }

    fn header(&self) -> String {
        let z = if self.dim == 3 { ",momentum_z" } else { "" };
        let mut h = format!("step,time,mass,momentum_x,momentum_y{z},energy,max_mach");
        for (name, _) in &self.extra {
            let _ = write!(h, ",{name}");
        }
        h
    }

    fn row(&self) -> String {
        let z = if self.dim == 3 {
            format!(",{:.17e}", self.momentum[2])
        } else {
            String::new()
        };
        let mut r = format!(
            "{},{:.9e},{:.17e},{:.17e},{:.17e}{z},{:.17e},{:.9e}",
            self.step,
            self.time,
            self.mass,
            self.momentum[0],
            self.momentum[1],
            self.energy,
            self.max_mach
        );
        for (_, v) in &self.extra {
            let _ = write!(r, ",{v:.9e}");
        }
        r
    }
}

/// The CSV file of a run's diagnostics, rewritten whole (atomically) at every row so that it
/// is never truncated.
#[derive(Debug)]
pub struct DiagnosticsLog {
    path: PathBuf,
    header: Option<String>,
    rows: Vec<(u64, String)>,
}

impl DiagnosticsLog {
    /// A new log at `path` (nothing is written until the first row).
    pub fn new(path: &Path) -> Self {
        Self {
            path: path.to_path_buf(),
            header: None,
            rows: Vec::new(),
        }
    }

    /// The log of a resumed run: the rows of the file at `path` up to step `step` are kept
    /// (a missing file starts empty; rows after `step` belong to the interrupted run and are
    /// dropped). Anything but a regular file of at most [`super::READ_LIMIT`] bytes is refused.
    pub fn resume(path: &Path, step: u64) -> Result<Self, OutputError> {
        let mut log = Self::new(path);
        let io = |source| OutputError::Io {
            path: path.to_path_buf(),
            source,
        };
        let text = match crate::io::read_bounded(path, super::READ_LIMIT) {
            Ok(bytes) => String::from_utf8(bytes)
                .map_err(|e| io(std::io::Error::new(std::io::ErrorKind::InvalidData, e)))?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(log),
            Err(source) => return Err(io(source)),
        };
        let mut lines = text.lines();
        log.header = lines.next().map(str::to_string);
        log.rows = lines
            .filter_map(|l| Some((l.split(',').next()?.parse().ok()?, l.to_string())))
            .filter(|(s, _)| *s <= step)
            .collect();
        Ok(log)
    }

    /// Appends `d` (replacing a row of the same step) and rewrites the file.
    pub fn push(&mut self, d: &Diagnostics) -> Result<(), OutputError> {
        self.header = Some(d.header());
        self.rows.retain(|(s, _)| *s != d.step);
        self.rows.push((d.step, d.row()));
        let mut text = self.header.clone().unwrap_or_default();
        text.push('\n');
        for (_, r) in &self.rows {
            text.push_str(r);
            text.push('\n');
        }
        write_file(&self.path, &[text.as_bytes()])
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(step: u64) -> Fields {
        Fields::new(
            (2, 1),
            step,
            1.0 / 3.0,
            vec![
                ("rho", vec![1.0, 2.0]),
                ("ux", vec![0.1, 0.0]),
                ("uy", vec![0.0, -0.2]),
            ],
        )
        .unwrap()
    }

    #[test]
    fn sums_and_mach() {
        let d = Diagnostics::of(&fields(3), 0.5, vec![("width", 7.0)]);
        assert_eq!(d.time, 1.5);
        assert!((d.mass - 3.0).abs() < 1e-15);
        assert!((d.momentum[0] - 0.1).abs() < 1e-15 && (d.momentum[1] + 0.4).abs() < 1e-15);
        let e = 0.5 * (0.01 + 2.0 / 3.0) + 0.5 * 2.0 * (0.04 + 2.0 / 3.0);
        assert!((d.energy - e).abs() < 1e-15);
        assert!((d.max_mach - 0.2 * 3f64.sqrt()).abs() < 1e-15);
    }

    #[test]
    fn log_is_rewritten_and_resumed() {
        let dir = std::env::temp_dir().join(format!("lbm-diag-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("d.csv");
        let mut log = DiagnosticsLog::new(&path);
        for step in [0, 10, 20] {
            log.push(&Diagnostics::of(&fields(step), 1.0, vec![]))
                .unwrap();
        }
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text.lines().count(), 4);
        assert!(text.starts_with("step,time,mass,momentum_x,momentum_y,energy,max_mach\n0,"));
        let mut resumed = DiagnosticsLog::resume(&path, 10).unwrap();
        resumed
            .push(&Diagnostics::of(&fields(15), 1.0, vec![]))
            .unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let steps: Vec<&str> = text
            .lines()
            .skip(1)
            .map(|l| l.split(',').next().unwrap())
            .collect();
        assert_eq!(steps, ["0", "10", "15"]);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
