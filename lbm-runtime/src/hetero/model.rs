//! The workload model of the host/device split (Calore et al. 2019 §6.1, eq. 4–8) and its calibration
//! by short benchmarks at start-up.
//!
//! With `M` border columns on each side on the host and `LX − 2M` bulk columns on the device,
//! a step takes
//!
//! ```text
//! T_exe  = max{T_acc, T_host + T_mpi} + T_swap                     (eq. 4)
//! T_acc  = (LX − 2M)·LY·t_d                                         (eq. 5)
//! T_host = 2M·LY·t_h                                                (eq. 6)
//! T_mpi  = LY·t_c                                                   (eq. 7)
//! ```
//!
//! `T_swap = LY·t_swap` is the host↔device transfer of the `2H` border and halo columns at
//! the end of the step; it does not depend on `M`, so `T_exe` is least at the balance point
//! `M*` of eq. 8, `T_acc(M*) = T_host(M*) + T_mpi(M*)`:
//!
//! ```text
//! M* = (LX·t_d − t_c) / (2 (t_d + t_h))
//! ```
//!
//! The paper writes `T_mpi = t_c` per step; here `t_c` is per row (the halo messages are `LY`
//! high). It is 0 in one process; a rank of the MPI ring ([`super::SplitSlab`]) measures its
//! ring's exchange before it builds its slab (`distributed::exchange_seconds`) and tunes its own
//! `M*` with it.
//!
//! # A device that shares the host's cores
//! Eq. 4 assumes the two sides run on separate hardware. On a device that shares the host's
//! cores (lavapipe) each side runs slower beside the other (rates `t_d`, `t_h`) than alone
//! (`t_d_alone`, `t_h_alone`), and when one side finishes the other gets the whole machine.
//! The step is then two phases: both sides run until the first finishes, at
//! `min{D, H}` with `D = T_acc`, `H = T_host + T_mpi`; the other finishes what it has left
//! alone:
//!
//! ```text
//! T_exe = min{D, H} + |D − H|·r + T_swap,    r = t_alone / t of the side finishing last
//! ```
//!
//! With rates that do not depend on the other side (`r = 1`, a discrete GPU) this is eq. 4;
//! it covers the ends too (`M = 0`: the device alone, `2M = LX`: the host alone, no swap).
//! [`calibrate`] measures both kinds of rate, and [`SplitModel::optimal_m`] picks the
//! admissible `M` of least predicted `T_exe`: next to `M*` when the sides overlap well, an
//! end when they only share.

use std::sync::Arc;
use std::time::Instant;

use super::{admissible, ring_of_one, split_lattice, HostLayout, SplitChoice};
use crate::domain::GlobalSpec;
use crate::gpu::GpuContext;
use crate::metrics::median;
use crate::{Error, Model, Real, Scheme};

/// The coefficients of Calore et al. 2019, eq. 4–8, for one lattice, in seconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SplitModel {
    /// Lattice width `LX`.
    pub lx: usize,
    /// Sites per column: the lattice height `LY` (in 3-D a plane's `LY·LZ`).
    pub ly: usize,
    /// The model's halo width `H` (which splits are admissible, see [`admissible`]).
    pub halo: usize,
    /// Device time per site while the host runs its borders.
    pub t_d: f64,
    /// Host time per site while the device runs the bulk.
    pub t_h: f64,
    /// MPI halo exchange per row per step (0 in one process).
    pub t_c: f64,
    /// Host↔device column swap per row per step.
    pub t_swap: f64,
    /// Device time per site when it runs the whole lattice alone (`M = 0`).
    pub t_d_alone: f64,
    /// Host time per site when it runs the whole lattice alone (`2M = LX`).
    pub t_h_alone: f64,
}

impl SplitModel {
    /// A model whose sides run at the same rate alone as together (a discrete device), with
    /// no swap cost: the analytic form of eq. 4–8.
    pub fn concurrent(lx: usize, ly: usize, halo: usize, t_d: f64, t_h: f64, t_c: f64) -> Self {
        Self {
            lx,
            ly,
            halo,
            t_d,
            t_h,
            t_c,
            t_swap: 0.0,
            t_d_alone: t_d,
            t_h_alone: t_h,
        }
    }

    /// `T_acc(M) = (LX − 2M)·LY·t_d` (eq. 5).
    pub fn t_acc(&self, m: usize) -> f64 {
        self.lx.saturating_sub(2 * m) as f64 * self.ly as f64 * self.t_d
    }

    /// `T_host(M) = 2M·LY·t_h` (eq. 6).
    pub fn t_host(&self, m: usize) -> f64 {
        (2 * m) as f64 * self.ly as f64 * self.t_h
    }

    /// `T_mpi = LY·t_c` (eq. 7).
    pub fn t_mpi(&self) -> f64 {
        self.ly as f64 * self.t_c
    }

    /// The predicted time of one step with split `M`: eq. 4 with the two-phase correction of
    /// a device that shares the host's cores (see the module documentation).
    pub fn t_exe(&self, m: usize) -> f64 {
        let (d, h) = (self.t_acc(m), self.t_host(m) + self.t_mpi());
        let r = if d >= h {
            self.t_d_alone / self.t_d
        } else {
            self.t_h_alone / self.t_h
        };
        let interior = m > 0 && 2 * m < self.lx;
        let swap = if interior {
            self.ly as f64 * self.t_swap
        } else {
            0.0
        };
        d.min(h) + (d - h).abs() * r + swap
    }

    /// The predicted million lattice updates per second with split `M`.
    pub fn mlups(&self, m: usize) -> f64 {
        (self.lx * self.ly) as f64 / self.t_exe(m) / 1e6
    }

    /// The balance point `M*` of eq. 8, `T_acc(M*) = T_host(M*) + T_mpi(M*)`, as a real
    /// number clamped to `[0, LX/2]`.
    pub fn balance_point(&self) -> f64 {
        let m = (self.lx as f64 * self.t_d - self.t_c) / (2.0 * (self.t_d + self.t_h));
        m.clamp(0.0, self.lx as f64 / 2.0)
    }

    /// The admissible `M` (see [`admissible`]) of least predicted `T_exe`: next to
    /// [`SplitModel::balance_point`], or an end when one side alone is faster; ties go to the
    /// one nearest `M*`.
    pub fn optimal_m(&self) -> usize {
        let star = self.balance_point();
        (0..=self.lx / 2)
            .filter(|&m| admissible(self.lx, self.halo, m))
            .min_by(|&a, &b| {
                let key = |m: usize| (self.t_exe(m), (m as f64 - star).abs());
                let ((ta, da), (tb, db)) = (key(a), key(b));
                ta.total_cmp(&tb).then(da.total_cmp(&db))
            })
            .unwrap_or(0)
    }
}

/// Steps run before timing (shader warm-up, first-touch of host pages).
const WARMUP_STEPS: u64 = 2;

/// Probes of [`calibrate`] at most: the first at host share ½, then at the `M*` found.
const MAX_PROBES: usize = 3;

/// The admissible split with both parts non-empty nearest `want` (none when the lattice is
/// too narrow to split).
fn nearest_interior(lx: usize, halo: usize, want: f64) -> Option<usize> {
    (1..lx.div_ceil(2))
        .filter(|&m| 2 * m < lx && admissible(lx, halo, m))
        .min_by(|&a, &b| {
            let d = |m: usize| (m as f64 - want).abs();
            d(a).total_cmp(&d(b))
        })
}

/// Measures the coefficients of [`SplitModel`] on the lattice `spec` with the device of
/// `ctx` (Calore et al. 2019 §6.1: "an initial auto-tuning phase, in which it runs a set of
/// mini-benchmarks"). A probe split runs `steps` steps, timing the device's bulk (from
/// submission to completion, on a waiting thread), the host's strip and the swap; then each
/// side runs `steps` steps alone. Medians are taken.
///
/// The rates depend on the split where the device has a launch latency or shares the host's
/// cores (one side finishing early gives the other the whole machine). So the first probe,
/// at host share ½, is followed by probes halfway to the balance point `M*` found (a damped
/// fixed-point iteration: undamped, the rates measured on either side of the balance make it
/// oscillate), until the probe would move by less than `LX/64` columns or three probes are
/// done: the final rates are those near the operating point. Where the rates do not depend
/// on the split (a discrete GPU), every probe gives the same `M*`. The rates alone are those
/// of the first probe, where both parts are large. A lattice too narrow to split gets a model
/// of the two sides alone, timed on the whole lattice.
pub fn calibrate<M: Model, T: Real>(
    ctx: &Arc<GpuContext>,
    (spec, host): (&GlobalSpec<M>, HostLayout<M, T>),
    steps: u64,
) -> Result<SplitModel, Error> {
    let (lx, ly, halo) = (spec.lx, spec.plane(), M::HALO);
    let Some(mut m) = nearest_interior(lx, halo, lx as f64 / 4.0) else {
        let t = calibrate_ends(ctx, (spec, host), steps)?;
        return Ok(SplitModel::concurrent(lx, ly, halo, t.0, t.1, 0.0));
    };
    let first = probe(ctx, (spec, host), m, steps)?;
    let mut model = first;
    for _ in 1..MAX_PROBES {
        let halfway = (m as f64 + model.balance_point()) / 2.0;
        match nearest_interior(lx, halo, halfway) {
            Some(next) if next.abs_diff(m) > (lx / 64).max(1) => m = next,
            _ => break,
        }
        model = probe(ctx, (spec, host), m, steps)?;
    }
    Ok(SplitModel {
        t_d_alone: first.t_d_alone,
        t_h_alone: first.t_h_alone,
        ..model
    })
}

/// The model measured at the split `m` (see [`calibrate`]).
fn probe<M: Model, T: Real>(
    ctx: &Arc<GpuContext>,
    (spec, host): (&GlobalSpec<M>, HostLayout<M, T>),
    m: usize,
    steps: u64,
) -> Result<SplitModel, Error> {
    let (lx, ly) = (spec.lx, spec.plane());
    let mut ring = ring_of_one(ctx, (spec.clone(), host), (m, None), Scheme::TwoCopy)?;
    (0..WARMUP_STEPS).try_for_each(|_| ring.step())?;
    let mut dev = Vec::new();
    let mut host = Vec::new();
    let mut swap = Vec::new();
    for _ in 0..steps.max(1) {
        // The outer halos from the slab's own borders, then a step with its phases timed.
        ring.exchange()?;
        let t = ring.slab_mut().probe_step()?;
        dev.push(t.device);
        host.push(t.host);
        swap.push(t.swap);
    }
    let (bulk, border) = (((lx - 2 * m) * ly) as f64, (2 * m * ly) as f64);
    ring.exchange()?;
    let (d_alone, h_alone) = ring.slab_mut().probe_alone(steps.max(1))?;
    Ok(SplitModel {
        lx,
        ly,
        halo: M::HALO,
        t_d: median(&mut dev) / bulk,
        t_h: median(&mut host) / border,
        t_c: 0.0,
        t_swap: median(&mut swap) / ly as f64,
        t_d_alone: d_alone / bulk,
        t_h_alone: h_alone / border,
    })
}

/// Per-site times of the device and the host alone on the whole lattice (no split fits).
fn calibrate_ends<M: Model, T: Real>(
    ctx: &Arc<GpuContext>,
    (spec, host): (&GlobalSpec<M>, HostLayout<M, T>),
    steps: u64,
) -> Result<(f64, f64), Error> {
    let sites = (spec.lx * spec.plane()) as f64;
    let mut per_site = [0.0; 2];
    for (k, m) in [0, spec.lx / 2].into_iter().enumerate() {
        let columns = SplitChoice::Columns(m);
        let mut lat = split_lattice(ctx, (spec.clone(), host), Scheme::TwoCopy, columns)?;
        lat.advance(WARMUP_STEPS)?;
        let t0 = Instant::now();
        lat.advance(steps.max(1))?;
        per_site[k] = t0.elapsed().as_secs_f64() / steps.max(1) as f64 / sites;
    }
    Ok((per_site[0], per_site[1]))
}

#[cfg(test)]
#[path = "model_tests.rs"]
mod tests;
