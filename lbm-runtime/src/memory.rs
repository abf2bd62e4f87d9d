//! Host memory: what a run will hold, estimated before anything is allocated, and what the
//! machine grants it, so that a run that cannot fit is refused at once with the remedy instead
//! of failing (or swapping) after minutes of setup.
//!
//! A [`Need`] is a sum of named parts. This module estimates the solver's, with
//! `b = sizeof(real)`:
//!
//! ```text
//! populations  c · (W + 2H) · LY · Q · b      c = 2 two-copy, 1 in place: the lattice's copies
//!                                             with their halo columns (on a GPU the copies are
//!                                             on the device: the host holds one while it
//!                                             uploads or reads them back)
//! boundaries   n_b · (s + Q · b) + W · LY     n_b = 2H (W + LY) sites next to walls, every
//!                                             site with obstacles (each a record of s bytes and
//!                                             its corrections), and the obstacle mask, for the
//!                                             W columns this process holds
//! ```
//!
//! the application adds its own (the `lbm` program: what the process holds already, its
//! outputs and its checkpoint shard), and [`check`] compares the sum, times the ranks that
//! share the node, with the smaller of `MemAvailable` (`/proc/meminfo`) and what the cgroup
//! still allows (`memory.max − memory.current`, or cgroup v1's `limit_in_bytes −
//! usage_in_bytes`). Every product saturates: a size of any magnitude gives an estimate that
//! is refused, never one that wraps around to a small number.

use std::fmt;

use crate::boundary::Boundaries;
use crate::{Model, Real, Scheme};

/// Largest block glibc's `malloc` takes from its heaps rather than mapping it afresh:
/// glibc's ceiling for `M_MMAP_THRESHOLD` on 64-bit systems.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const MMAP_THRESHOLD: i32 = 32 << 20;

/// Free memory glibc keeps at the top of a heap before it gives it back to the system.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const TRIM_THRESHOLD: i32 = 256 << 20;

/// Has `malloc` keep the pages of freed buffers up to 32 MiB for the next ones instead of
/// giving them back to the system (glibc's `M_MMAP_THRESHOLD` and `M_TRIM_THRESHOLD`;
/// elsewhere nothing). A step allocates and frees its halo messages and ghost lines: by
/// default glibc trims the heap's free top past twice the size of the last block it mapped,
/// so every step faulted in fresh zeroed pages for its messages again, several times the
/// exchange's own cost (measured in docs/performance.md). Call it once at start-up,
/// before any thread allocates; the `lbm` program does. Larger buffers are still mapped and
/// unmapped each time.
pub fn keep_freed_pages() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets allocator parameters; valid at any time.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD);
        libc::mallopt(libc::M_TRIM_THRESHOLD, TRIM_THRESHOLD);
    }
}

/// Bytes in a GiB.
const GIB: f64 = (1u64 << 30) as f64;

/// What one process is estimated to hold, bytes: named parts (the program adds its own to
/// those of the solver, [`populations`] and [`boundaries`]) and their sum.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Need {
    parts: Vec<(&'static str, u64)>,
}

impl Need {
    /// No part yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// With the part `name` of `bytes`.
    pub fn with(mut self, name: &'static str, bytes: u64) -> Self {
        self.parts.push((name, bytes));
        self
    }

    /// The parts, in the order given.
    pub fn parts(&self) -> &[(&'static str, u64)] {
        &self.parts
    }

    /// The sum (saturating: an estimate too large to count is larger than any machine).
    pub fn total(&self) -> u64 {
        self.parts
            .iter()
            .fold(0u64, |s, (_, b)| s.saturating_add(*b))
    }
}

impl fmt::Display for Need {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = self
            .parts
            .iter()
            .map(|(n, b)| format!("{n} {:.1}", in_gib(*b)))
            .collect();
        write!(f, "{:.1} GiB ({})", in_gib(self.total()), parts.join(", "))
    }
}

/// Bytes as GiB, for messages.
pub fn in_gib(bytes: u64) -> f64 {
    bytes as f64 / GIB
}

/// The product of `factors` in bytes, saturating at `u64::MAX` (sizes from the user's input
/// can be of any magnitude: an estimate must never wrap around to a small number).
pub fn product(factors: &[usize]) -> u64 {
    factors
        .iter()
        .fold(1u64, |p, &f| p.saturating_mul(f as u64))
}

/// The population copies a lattice `width` columns wide (plus its halos) and `ly` rows in
/// `scheme` holds on the host. When the copies live `on_device`, the host holds two while it
/// uploads or reads them back: its own and the driver's staging buffer (a device whose memory
/// is the host's, a CPU adapter such as lavapipe, holds the lattice's copies there too: count
/// them as well).
pub fn populations<M: Model, T: Real>(
    width: usize,
    ly: usize,
    scheme: Scheme,
    on_device: bool,
) -> u64 {
    let copies = match (scheme, on_device) {
        (Scheme::InPlace, false) => 1,
        (_, true) | (Scheme::TwoCopy, false) => 2,
    };
    product(&[
        copies,
        width.saturating_add(2 * M::HALO),
        ly,
        M::Q,
        T::BYTES,
    ])
}

/// The compiled boundaries of `lx` columns of `ly` sites, with an obstacle mask when
/// `obstacles`.
pub fn boundaries<M: Model, T: Real>(lx: usize, ly: usize, obstacles: bool) -> u64 {
    let sites = if obstacles {
        product(&[lx, ly])
    } else {
        product(&[2 * M::HALO, lx.saturating_add(ly)]).min(product(&[lx, ly]))
    };
    let record = (Boundaries::<T>::SITE_BYTES + M::Q * std::mem::size_of::<T>()) as u64;
    let mask = if obstacles { product(&[lx, ly]) } else { 0 };
    sites.saturating_mul(record).saturating_add(mask)
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
    /// What to do about it (from the caller, who knows which remedies apply), or empty.
    pub remedy: String,
}

impl MemoryError {
    /// With `remedy`, what the caller suggests.
    pub fn with_remedy(self, remedy: impl Into<String>) -> Self {
        Self {
            remedy: remedy.into(),
            ..self
        }
    }
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
            ", {:.1} GiB available ({})",
            in_gib(self.available),
            self.source
        )?;
        if !self.remedy.is_empty() {
            write!(f, ": {}", self.remedy)?;
        }
        Ok(())
    }
}

impl std::error::Error for MemoryError {}

/// Refuses `need` per rank for `ranks` ranks on this node when it exceeds `available`
/// (nothing is checked where `available` is `None`).
pub fn check(need: &Need, ranks: usize, available: Option<Available>) -> Result<(), MemoryError> {
    match available {
        Some(a) if need.total().saturating_mul(ranks.max(1) as u64) > a.bytes => Err(MemoryError {
            need: need.clone(),
            ranks: ranks.max(1),
            available: a.bytes,
            source: a.source,
            remedy: String::new(),
        }),
        _ => Ok(()),
    }
}

#[cfg(test)]
#[path = "memory_tests.rs"]
mod tests;
