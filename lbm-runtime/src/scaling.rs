//! The performance model of the ring decomposition (seed 003 §5), with coefficients measured
//! by short benchmarks on this machine.
//!
//! A step of a slab `Lx/n` columns wide updates the bulk while the halos travel, then the
//! borders (seed 003 Fig. 5), so its time is `max{T_bulk, T_MPI} + T_border = max{T_a, T_b}`
//! with `T_a = T_bulk + T_border` (every site of the slab) and `T_b = T_MPI + T_border`.
//! To first approximation bulk processing is proportional to `Lx·Ly`, the boundary rows to
//! `Lx`, border processing and communication to `Ly` (seed 003 §5):
//!
//! ```text
//! T(Lx, Ly, n) = max{ α (Lx/n) Ly + β (Lx/n),  γ Ly + δ Ly + λ }        (n ≥ 2)
//! T(Lx, Ly, 1) = α Lx Ly + β Lx                                          (one process)
//! S_r(n) = T(Lx, Ly, 1) / T(Lx, Ly, n)
//! ```
//!
//! `α` (s per site) and `β` (s per column) come from the step time of the whole lattice at two
//! heights, `γ` (s per row) from the time of the border update alone (`2H` columns). The
//! communication is `δ Ly + λ`: two messages of `H·Ly·Q` values each way per step, over one
//! network interface, so `δ = 2 H Q b / B` (`b` bytes per value, `B` the bandwidth) and
//! `λ = 2 ℓ` (`ℓ` the latency); the seed's form has no latency term, which matters only for
//! small `Ly`. Cluster predictions use [`Network::INFINIBAND_EDR`] (ℓ = 1.5 µs,
//! B = 12 GB/s per direction: 100 Gb/s EDR InfiniBand as measured by osu_bw on such systems);
//! [`Network::from_loopback`] fits the same two figures to an exchange measured on this
//! machine instead.

use std::time::Instant;

use crate::domain::{DomainError, GlobalSpec, SlabRing};
use crate::{Layout, Model, Real, Scheme};

/// The network the communication term assumes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Network {
    /// One-way latency of a message, seconds.
    pub latency_s: f64,
    /// Bandwidth per direction, bytes per second.
    pub bandwidth: f64,
}

impl Network {
    /// 100 Gb/s EDR InfiniBand: 1.5 µs, 12 GB/s (the figures assumed for cluster predictions).
    pub const INFINIBAND_EDR: Network = Network {
        latency_s: 1.5e-6,
        bandwidth: 12e9,
    };

    /// The network that explains an exchange of `bytes` per message (two messages each way)
    /// taking `seconds` with the given latency: `B = 2·bytes / (seconds − 2ℓ)`.
    pub fn from_loopback(bytes: usize, seconds: f64, latency_s: f64) -> Self {
        let transfer = (seconds - 2.0 * latency_s).max(f64::MIN_POSITIVE);
        Self {
            latency_s,
            bandwidth: 2.0 * bytes as f64 / transfer,
        }
    }
}

/// The coefficients of [`Coefficients::step_time`] (seconds; see the module documentation).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Coefficients {
    /// Per site of the slab.
    pub alpha: f64,
    /// Per column of the slab (the boundary rows).
    pub beta: f64,
    /// Per row, for the border update (`2H` columns).
    pub gamma: f64,
    /// Per row, for the halo exchange.
    pub delta: f64,
    /// Per step, for the halo exchange (latencies).
    pub lambda: f64,
}

/// The predicted time of one step on `ranks` ranks.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Prediction {
    /// Ranks.
    pub ranks: usize,
    /// Global lattice width.
    pub lx: usize,
    /// Lattice height.
    pub ly: usize,
    /// `T_a`: updating the slab, seconds.
    pub t_a: f64,
    /// `T_b`: borders plus communication, seconds (0 on one rank).
    pub t_b: f64,
    /// `max{T_a, T_b}`, seconds.
    pub t: f64,
    /// Speed-up over one rank (strong scaling) or parallel efficiency (weak scaling) relative
    /// to one rank, see [`strong_scaling`] and [`weak_scaling`].
    pub relative: f64,
    /// Million lattice updates per second of the whole lattice.
    pub mlups: f64,
}

impl Coefficients {
    /// `T(Lx, Ly, n)` and its two terms: `(T_a, T_b)` (seed 003 §5).
    pub fn terms(&self, lx: usize, ly: usize, ranks: usize) -> (f64, f64) {
        let (w, h) = (lx as f64 / ranks.max(1) as f64, ly as f64);
        let t_a = self.alpha * w * h + self.beta * w;
        let t_b = if ranks > 1 {
            (self.gamma + self.delta) * h + self.lambda
        } else {
            0.0
        };
        (t_a, t_b)
    }

    /// `T(Lx, Ly, n) = max{T_a, T_b}`, seconds per step.
    pub fn step_time(&self, lx: usize, ly: usize, ranks: usize) -> f64 {
        let (a, b) = self.terms(lx, ly, ranks);
        a.max(b)
    }

    /// The same computing coefficients with the communication of `net` for halos of `H`
    /// columns of `Q` values of `bytes` bytes: `δ = 2 H Q b / B`, `λ = 2 ℓ`.
    pub fn with_network(self, net: &Network, halo: usize, q: usize, bytes: usize) -> Self {
        Self {
            delta: 2.0 * (halo * q * bytes) as f64 / net.bandwidth,
            lambda: 2.0 * net.latency_s,
            ..self
        }
    }

    fn predict(&self, lx: usize, ly: usize, ranks: usize, reference: f64) -> Prediction {
        let (t_a, t_b) = self.terms(lx, ly, ranks);
        let t = t_a.max(t_b);
        Prediction {
            ranks,
            lx,
            ly,
            t_a,
            t_b,
            t,
            relative: reference / t,
            mlups: (lx * ly) as f64 / t / 1e6,
        }
    }
}

/// Strong scaling of an `lx × ly` lattice: `relative` is the speed-up `S_r(n) = T(1)/T(n)`.
/// Rank counts that would leave a slab narrower than `halo` columns (which
/// [`crate::domain::Decomposition`] refuses) are left out.
pub fn strong_scaling(
    c: &Coefficients,
    lx: usize,
    ly: usize,
    halo: usize,
    ranks: &[usize],
) -> Vec<Prediction> {
    let t1 = c.step_time(lx, ly, 1);
    ranks
        .iter()
        .filter(|&&n| n > 0 && lx / n >= halo.max(1))
        .map(|&n| c.predict(lx, ly, n, t1))
        .collect()
}

/// Weak scaling, `lx_per_rank` columns per rank: `relative` is the parallel efficiency
/// `T(lx_per_rank, Ly, 1) / T(n·lx_per_rank, Ly, n)`.
pub fn weak_scaling(
    c: &Coefficients,
    lx_per_rank: usize,
    ly: usize,
    ranks: &[usize],
) -> Vec<Prediction> {
    let t1 = c.step_time(lx_per_rank, ly, 1);
    ranks
        .iter()
        .map(|&n| c.predict(n * lx_per_rank, ly, n, t1))
        .collect()
}

/// Seconds per call of `f`, best of three rounds of `reps` calls after one warm-up call.
fn seconds_per<F: FnMut()>(reps: usize, mut f: F) -> f64 {
    f();
    (0..3)
        .map(|_| {
            let t0 = Instant::now();
            for _ in 0..reps.max(1) {
                f();
            }
            t0.elapsed().as_secs_f64() / reps.max(1) as f64
        })
        .fold(f64::INFINITY, f64::min)
}

/// What [`calibrate`] measured on this machine, one process, seconds per step.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Calibration {
    /// Step of the whole `lx × ly` lattice.
    pub t_full: f64,
    /// Step of the `lx × ly/2` (or `2·ly`) lattice.
    pub t_other: f64,
    /// The other height used.
    pub ly_other: usize,
    /// Border update of one slab (`2H` columns).
    pub t_border: f64,
    /// The fitted coefficients, communication over [`Network::INFINIBAND_EDR`].
    pub coefficients: Coefficients,
}

/// Measures `α`, `β` and `γ` on this machine with short runs of the lattice `spec` (two-copy
/// scheme, `steps` steps per timing round): `α Lx Ly + β Lx` from the step times at heights
/// `Ly` and `Ly/2` (or `2 Ly` when `Ly/2` does not suit the layout), `γ` from the border
/// update. The communication terms are those of [`Network::INFINIBAND_EDR`]; replace them
/// with [`Coefficients::with_network`].
pub fn calibrate<M: Model, L: Layout, T: Real>(
    spec: &GlobalSpec<M>,
    steps: usize,
) -> Result<Calibration, DomainError> {
    let (lx, ly) = (spec.lx, spec.ly);
    let half = ly / 2;
    let ly_other = if ly % 2 == 0 && half % L::VL == 0 && half / L::VL >= M::HALO.max(1) {
        half
    } else {
        ly * 2
    };
    let t_full = full_step_time::<M, L, T>(spec, steps)?;
    let other = GlobalSpec {
        ly: ly_other,
        ..spec.clone()
    };
    let t_other = full_step_time::<M, L, T>(&other, steps)?;
    let t_border = border_time::<M, L, T>(spec, steps)?;
    // t(h)/lx = α h + β at the two heights.
    let (h1, h2) = (ly as f64, ly_other as f64);
    let (y1, y2) = (t_full / lx as f64, t_other / lx as f64);
    let alpha = (y1 - y2) / (h1 - h2);
    let beta = (y1 - alpha * h1).max(0.0);
    let coefficients = Coefficients {
        alpha,
        beta,
        gamma: t_border / ly as f64,
        delta: 0.0,
        lambda: 0.0,
    }
    .with_network(&Network::INFINIBAND_EDR, M::HALO, M::Q, T::BYTES);
    Ok(Calibration {
        t_full,
        t_other,
        ly_other,
        t_border,
        coefficients,
    })
}

/// Seconds per step of the whole lattice `spec` in one process.
fn full_step_time<M: Model, L: Layout, T: Real>(
    spec: &GlobalSpec<M>,
    steps: usize,
) -> Result<f64, DomainError> {
    let mut lattice = spec.lattice::<L, T>()?;
    Ok(seconds_per(steps, || lattice.step()))
}

/// Seconds of the border update of a slab of the lattice `spec`.
fn border_time<M: Model, L: Layout, T: Real>(
    spec: &GlobalSpec<M>,
    steps: usize,
) -> Result<f64, DomainError> {
    let mut ring = SlabRing::<M, L, T>::new(spec.clone(), 1, Scheme::TwoCopy)?;
    Ok(seconds_per(steps, || ring.update_borders()))
}

#[cfg(test)]
mod tests {
    use super::*;

    const C: Coefficients = Coefficients {
        alpha: 1e-8,
        beta: 1e-7,
        gamma: 6e-8,
        delta: 4e-8,
        lambda: 3e-6,
    };

    /// While the bulk hides the communication, strong scaling is linear; beyond the crossing
    /// `α (Lx/n) Ly + β Lx/n = (γ + δ) Ly + λ` the step time stops falling.
    #[test]
    fn strong_scaling_is_linear_until_communication_dominates() {
        let p = strong_scaling(&C, 1000, 1000, 3, &[1, 2, 10, 100, 250, 500]);
        assert_eq!(p.len(), 5, "500 ranks leave 2 columns per slab: {p:?}");
        assert_eq!(p[0].relative, 1.0);
        assert!((p[1].relative - 2.0).abs() < 1e-12, "{:?}", p[1]);
        assert!((p[2].relative - 10.0).abs() < 1e-12, "{:?}", p[2]);
        // n = 100: T_a = 1e-8·10·1000 + 1e-7·10 = 1.01e-4, T_b = 1e-4 + 3e-6: T_b dominates.
        assert!(p[3].t_b > p[3].t_a && p[3].t == p[3].t_b, "{:?}", p[3]);
        assert_eq!(p[4].t, p[3].t);
    }

    /// Weak scaling keeps the slab fixed: the efficiency is 1 while `T_a ≥ T_b`.
    #[test]
    fn weak_scaling_efficiency() {
        let p = weak_scaling(&C, 512, 1000, &[1, 4, 64]);
        assert!(p.iter().all(|q| (q.relative - 1.0).abs() < 1e-12), "{p:?}");
        let thin = weak_scaling(&C, 4, 1000, &[1, 8]);
        let expect = C.step_time(4, 1000, 1) / ((C.gamma + C.delta) * 1000.0 + C.lambda);
        assert!((thin[1].relative - expect).abs() < 1e-12, "{thin:?}");
    }

    /// The network terms: two messages of `H·Q` values per row each way.
    #[test]
    fn network_terms() {
        let c = C.with_network(&Network::INFINIBAND_EDR, 3, 37, 8);
        assert!((c.delta - 2.0 * 3.0 * 37.0 * 8.0 / 12e9).abs() < 1e-20);
        assert_eq!(c.lambda, 3e-6);
        let n = Network::from_loopback(1000, 2e-6 + 2e-7, 1e-6);
        assert!((n.bandwidth - 2000.0 / 2e-7).abs() / n.bandwidth < 1e-9);
    }
}
