//! Host memory: what a run will hold, estimated before anything is allocated, and what the
//! machine grants it, so that a run that cannot fit is refused at once with the remedy instead
//! of failing (or swapping) after minutes of setup.
//!
//! The estimate for one process (one rank) adds, with `b = sizeof(real)` and `N_m` moments:
//!
//! ```text
//! program      what the process holds already (VmRSS when the estimate is made)
//! populations  c · (W + 2H) · LY · Q · b      c = 2 two-copy, 1 in place: the lattice's copies
//!                                             with their halo columns (on a GPU the copies are
//!                                             on the device: the host holds one while it
//!                                             uploads or reads them back)
//! boundaries   n_b · (s + Q · b) + W · LY     n_b = 2H (W + LY) sites next to walls, every
//!                                             site with obstacles (each a record of s bytes and
//!                                             its corrections), and the obstacle mask, for the
//!                                             W columns this process holds
//! outputs      (2 N_m + 2) · S · 8            the moments of its S sites as f64 and their VTK
//!                                             piece (scalars, the velocity as a 3-vector)
//!              + 2 · N_m · P · 8              on the root: the fields of the images, sampled
//!                                             to P ≤ 2048² pixels, gathered and drawn
//! checkpoint   S · Q · b                      its populations in logical order, for its shard
//!                                             (when checkpoints are on)
//! ```
//!
//! and compares the sum, times the ranks that share the node, with the smaller of
//! `MemAvailable` (`/proc/meminfo`) and what the cgroup still allows (`memory.max −
//! memory.current`, or cgroup v1's `limit_in_bytes − usage_in_bytes`).

use std::fmt;

use crate::boundary::Boundaries;
use crate::{Model, Real, Scheme};

/// Bytes in a GiB.
const GIB: f64 = (1u64 << 30) as f64;

/// What one process is estimated to hold, bytes (see the module documentation).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Need {
    /// What the process holds already (its code, libraries, MPI).
    pub program: u64,
    /// The copies of the populations held on the host.
    pub populations: u64,
    /// The compiled boundaries and the obstacle mask.
    pub boundaries: u64,
    /// The fields of the outputs and their encoding.
    pub outputs: u64,
    /// The populations of this process's checkpoint shard, in logical order (when checkpoints
    /// are on).
    pub checkpoint: u64,
}

impl Need {
    /// The sum.
    pub fn total(&self) -> u64 {
        self.program + self.populations + self.boundaries + self.outputs + self.checkpoint
    }
}

impl fmt::Display for Need {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:.1} GiB (program {:.1}, populations {:.1}, boundaries {:.1}, outputs {:.1}, \
             checkpoint {:.1})",
            in_gib(self.total()),
            in_gib(self.program),
            in_gib(self.populations),
            in_gib(self.boundaries),
            in_gib(self.outputs),
            in_gib(self.checkpoint)
        )
    }
}

/// Bytes as GiB, for messages.
pub fn in_gib(bytes: u64) -> f64 {
    bytes as f64 / GIB
}

/// The population copies a lattice `width` columns wide (plus its halos) and `ly` rows in
/// `scheme` holds on the host: one when the copies live `on_device` (the upload or read-back).
pub fn populations<M: Model, T: Real>(
    width: usize,
    ly: usize,
    scheme: Scheme,
    on_device: bool,
) -> u64 {
    let copies = match (scheme, on_device) {
        (_, true) | (Scheme::InPlace, false) => 1,
        (Scheme::TwoCopy, false) => 2,
    };
    copies * ((width + 2 * M::HALO) * ly * M::Q * T::BYTES) as u64
}

/// The compiled boundaries of `lx` columns of `ly` sites, with an obstacle mask when
/// `obstacles`.
pub fn boundaries<M: Model, T: Real>(lx: usize, ly: usize, obstacles: bool) -> u64 {
    let sites = if obstacles {
        lx * ly
    } else {
        (2 * M::HALO * (lx + ly)).min(lx * ly)
    };
    let record = Boundaries::<T>::SITE_BYTES + M::Q * std::mem::size_of::<T>();
    (sites * record + if obstacles { lx * ly } else { 0 }) as u64
}

/// The outputs of a process holding `sites` sites: their moments and VTK piece, and the
/// fields of `pixels` image pixels it gathers and draws (the root; 0 elsewhere).
pub fn outputs<M: Model>(sites: usize, pixels: usize) -> u64 {
    let nm = M::MOMENT_NAMES.len();
    ((2 * nm + 2) * sites * 8 + 2 * nm * pixels * 8) as u64
}

/// What the machine grants this process now, and where the figure comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Available {
    /// Bytes.
    pub bytes: u64,
    /// `MemAvailable` or the cgroup's limit.
    pub source: &'static str,
}

/// The smaller of `MemAvailable` and the cgroup's remaining allowance; `None` where neither
/// can be read (not Linux).
pub fn available() -> Option<Available> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok().and_then(|s| {
        s.lines()
            .find_map(|l| l.strip_prefix("MemAvailable:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            .map(|kib| Available {
                bytes: kib * 1024,
                source: "MemAvailable",
            })
    });
    let read = |p: &str| -> Option<u64> { std::fs::read_to_string(p).ok()?.trim().parse().ok() };
    let cgroup = [
        ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"),
        (
            "/sys/fs/cgroup/memory/memory.limit_in_bytes",
            "/sys/fs/cgroup/memory/memory.usage_in_bytes",
        ),
    ]
    .into_iter()
    .find_map(|(limit, usage)| {
        let (limit, usage) = (read(limit)?, read(usage)?);
        Some(Available {
            bytes: limit.saturating_sub(usage),
            source: "the cgroup's memory limit",
        })
    });
    match (meminfo, cgroup) {
        (Some(m), Some(c)) => Some(if c.bytes < m.bytes { c } else { m }),
        (m, c) => m.or(c),
    }
}

/// This process's peak resident memory so far (`VmHWM` of `/proc/self/status`), bytes;
/// `None` where it cannot be read (not Linux).
pub fn peak_resident() -> Option<u64> {
    status("VmHWM:")
}

/// This process's resident memory now (`VmRSS`), bytes; `None` where it cannot be read.
pub fn resident() -> Option<u64> {
    status("VmRSS:")
}

/// A `kB` field of `/proc/self/status`, in bytes.
fn status(field: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let kib: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix(field))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some(kib * 1024)
}

/// A run that does not fit in the memory the machine grants.
#[derive(Debug, Clone, PartialEq)]
pub struct MemoryError {
    /// What one rank needs.
    pub need: Need,
    /// The ranks sharing the node's memory.
    pub ranks: usize,
    /// Bytes available.
    pub available: u64,
    /// Where `available` comes from.
    pub source: &'static str,
}

impl fmt::Display for MemoryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the run needs {} per rank", self.need)?;
        if self.ranks > 1 {
            let node = in_gib(self.need.total().saturating_mul(self.ranks as u64));
            write!(
                f,
                ", {node:.1} GiB for the {} ranks on this node",
                self.ranks
            )?;
        }
        write!(
            f,
            ", {:.1} GiB available ({}): use more ranks (on more nodes), f32, or the in-place \
             scheme",
            in_gib(self.available),
            self.source
        )
    }
}

impl std::error::Error for MemoryError {}

/// Refuses `need` per rank for `ranks` ranks on this node when it exceeds `available`
/// (nothing is checked where `available` is `None`).
pub fn check(need: Need, ranks: usize, available: Option<Available>) -> Result<(), MemoryError> {
    match available {
        Some(a) if need.total().saturating_mul(ranks.max(1) as u64) > a.bytes => Err(MemoryError {
            need,
            ranks: ranks.max(1),
            available: a.bytes,
            source: a.source,
        }),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::TestD2Q9 as D2Q9;

    #[test]
    fn populations_count_copies_and_halos() {
        let two = populations::<D2Q9, f64>(10, 8, Scheme::TwoCopy, false);
        assert_eq!(two, 2 * (10 + 2) * 8 * 9 * 8);
        assert_eq!(
            populations::<D2Q9, f64>(10, 8, Scheme::InPlace, false),
            two / 2
        );
        assert_eq!(
            populations::<D2Q9, f32>(10, 8, Scheme::TwoCopy, true),
            two / 4
        );
    }

    #[test]
    fn a_run_too_large_is_refused_with_the_remedy() {
        let need = Need {
            program: 0,
            populations: 3 << 30,
            boundaries: 1 << 20,
            outputs: 1 << 29,
            checkpoint: 1 << 29,
        };
        let avail = Some(Available {
            bytes: 6 << 30,
            source: "MemAvailable",
        });
        assert!(check(need, 1, avail).is_ok());
        let e = check(need, 2, avail).unwrap_err().to_string();
        assert!(
            e.starts_with("the run needs 4.0 GiB (program 0.0, populations 3.0, boundaries 0.0, outputs 0.5, \
                 checkpoint 0.5)")
                && e.contains("8.0 GiB for the 2 ranks on this node, 6.0 GiB available")
                && e.ends_with("use more ranks (on more nodes), f32, or the in-place scheme"),
            "{e}"
        );
        assert!(check(need, 64, None).is_ok(), "nothing to compare with");
    }

    #[test]
    fn this_machine_reports_what_it_has() {
        if cfg!(target_os = "linux") {
            let a = available().expect("/proc/meminfo is readable on Linux");
            assert!(a.bytes > 0, "{a:?}");
            let before = peak_resident().expect("/proc/self/status is readable on Linux");
            let block = std::hint::black_box(vec![1u8; 64 << 20]);
            let after = peak_resident().unwrap();
            std::hint::black_box(&block);
            assert!(
                after >= before && after >= block.len() as u64,
                "{before} → {after}"
            );
        }
    }
}
