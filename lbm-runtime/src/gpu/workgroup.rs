//! The workgroup size of the site kernels (`fused`, `aa_pull`, `aa_local`), chosen per lattice
//! by timing its first steps.
//!
//! A site kernel runs one thread per site and its threads share nothing, so every workgroup
//! size computes the same populations, bit for bit; what the size changes is speed. The best
//! size is a property of the device and of the kernel, not a constant: the width the device
//! schedules together (32 on NVIDIA, 32 or 64 on AMD, 8–16 on a CPU adapter), the registers a
//! thread holds (a D2Q37 thread keeps its 37 populations and the moments live, so fewer
//! threads fit a compute unit), and the layout, which decides what neighbouring threads read
//! (consecutive `y` of one population in SoA and the clustered layouts, whole sites `Q` values
//! apart in AoS). So the lattice tunes it, as the CPU tunes its prefetch distance (one
//! tuner serves both): its first rounds of [`ROUND_STEPS`] steps cycle through the candidate
//! [`SIZES`], each round timed from submission to completion on an idle queue, and the size of
//! the fastest round (best of each size's rounds) is kept. Calls of `steps` shorter than a
//! round run at the current size untimed, so a lattice stepped one step at a time keeps the
//! first candidate (64), and so does the device part of a split or distributed run, whose
//! steps are submitted as bulk and border windows around the halo exchange
//! ([`super::GpuLattice::steps`] is what tunes).
//!
//! Each size is an entry point of its own in the lattice's one module
//! ([`super::shader::entry_name`]); a pipeline is created at the size in use only: at 64 with
//! the lattice, at another size the first time its round comes. The dispatch grid's rows hold
//! `ROW` threads, a multiple of every candidate ([`Grid::plan`]), so the thread index
//! `t = gid.x + gid.y·ROW` and the guard `t < NSITES` that the bounds proof
//! ([`super::bounds`]) rests on hold for each size.

use crate::tuner::Tuner;

/// The candidate sizes; the first is the one used until the tuning has chosen.
pub const SIZES: [u32; 4] = [64, 32, 128, 256];

/// Steps per timed round (even, so that an in-place round times as many pull half-steps as
/// local ones).
pub const ROUND_STEPS: u64 = 16;

/// The most steps the tuning takes before it has chosen: every candidate's rounds. A
/// benchmark steps this many before it times a lattice on the device alone.
pub const TUNING_STEPS: u64 = (crate::tuner::ROUNDS * SIZES.len()) as u64 * ROUND_STEPS;

/// Threads per workgroup of the kernels that are not tuned (halo, fold, bc, moments, and the
/// split kernels): few, or run once per output.
pub const FIXED: u32 = SIZES[0];

/// The dispatch grid: rows of `row` threads, and the workgroup sizes that tile a row within
/// the device's limit of workgroups per dimension.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grid {
    /// Threads per row of the grid (`ROW`).
    pub row: u32,
    /// The candidate sizes that divide `row` into at most the limit's workgroups, in the
    /// order of [`SIZES`]; [`FIXED`] is always one.
    pub sizes: Vec<u32>,
}

impl Grid {
    /// The grid of `threads` threads (the most any kernel of the lattice runs) for a device
    /// that allows `limit` workgroups per dimension: rows a multiple of the largest size that
    /// the smallest still tiles within the limit, so that every size can be tried; where
    /// those rows do not fit (a device capped below `256 / 32` workgroups per dimension, as
    /// tests cap it, or a lattice near the `limit²` grid), rows of [`FIXED`]-thread
    /// workgroups and the sizes that happen to tile them. `None`: the threads do not fit
    /// `limit × limit` workgroups of [`FIXED`].
    pub fn plan(threads: u64, limit: u32) -> Option<Self> {
        let (small, big) = (minimum(), maximum());
        let limit = u64::from(limit.max(1));
        let per_row = limit * small / big;
        let fixed = u64::from(FIXED);
        let row = [
            (per_row >= 1).then(|| threads.div_ceil(big).clamp(1, per_row) * big),
            Some(threads.div_ceil(fixed).clamp(1, limit) * fixed),
        ]
        .into_iter()
        .flatten()
        .find(|&row| threads.div_ceil(row) <= limit)?;
        let sizes = SIZES
            .into_iter()
            .filter(|&s| row % u64::from(s) == 0 && row / u64::from(s) <= limit)
            .collect();
        Some(Self {
            row: u32::try_from(row).ok()?,
            sizes,
        })
    }

    /// Workgroups in x and in y that run `n` threads in workgroups of `size`.
    pub fn dispatch(&self, n: usize, size: u32) -> (u32, u32) {
        let groups = n.div_ceil(size as usize) as u32;
        let per_row = self.row / size;
        (groups.min(per_row), groups.div_ceil(per_row))
    }
}

fn minimum() -> u64 {
    SIZES.into_iter().min().map_or(1, u64::from)
}

fn maximum() -> u64 {
    SIZES.into_iter().max().map_or(1, u64::from)
}

/// The tuning of one lattice's site-kernel workgroup size.
#[derive(Debug, Clone)]
pub(crate) struct Workgroups {
    sizes: Vec<u32>,
    tuner: Tuner,
}

impl Workgroups {
    /// A tuning among the sizes of `grid`.
    pub(crate) fn new(grid: &Grid) -> Self {
        Self {
            sizes: grid.sizes.clone(),
            tuner: Tuner::new(grid.sizes.len()),
        }
    }

    /// The size the next steps use: the candidate whose round is next, or the chosen one.
    pub(crate) fn current(&self) -> u32 {
        self.sizes[self.tuner.next()]
    }

    /// Whether the next round of steps is timed for the tuning.
    pub(crate) fn tuning(&self) -> bool {
        self.tuner.chosen().is_none()
    }

    /// Records that a round at [`Workgroups::current`] took `seconds` for `steps` steps.
    pub(crate) fn record(&mut self, steps: u64, seconds: f64) {
        self.tuner.record(seconds / steps as f64);
    }

    /// Ends the tuning at the first candidate (a round could not be timed).
    pub(crate) fn give_up(&mut self) {
        self.tuner.settle(0);
    }

    /// The chosen size, once chosen.
    pub(crate) fn chosen(&self) -> Option<u32> {
        self.tuner.chosen().map(|c| self.sizes[c])
    }

    /// The candidate sizes.
    pub(crate) fn sizes(&self) -> &[u32] {
        &self.sizes
    }
}

#[cfg(test)]
#[path = "workgroup_tests.rs"]
mod tests;
