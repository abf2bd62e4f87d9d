//! The performance model of the ring decomposition (Calore et al. 2016 §5), with coefficients
//! measured by short benchmarks on this machine.
//!
//! A step of a slab `Lx/n` columns wide updates the bulk while the halos travel, then the borders
//! (Calore et al. 2016, Fig. 5), so its time is `max{T_bulk, T_MPI} + T_border = max{T_a, T_b}`
//! with `T_a = T_bulk + T_border` (every site of the slab) and `T_b = T_MPI + T_border`. To first
//! approximation bulk processing is proportional to `Lx·Ly`, the boundary rows to `Lx`, border
//! processing and communication to `Ly` (Calore et al. 2016 §5):
//!
//! ```text
//! T(Lx, Ly, n) = max{ α (Lx/n) Ly + β (Lx/n),  γ Ly + δ Ly + λ }        (n ≥ 2)
//! T(Lx, Ly, 1) = α Lx Ly + β Lx                                          (one process)
//! S_r(n) = T(Lx, Ly, 1) / T(Lx, Ly, n)
//! ```
//!
//! `α` (s per site) and `β` (s per column) come from the step time of the whole lattice at two
//! heights, `γ` (s per row) from the time of the border update alone (`2H` columns). In 3-D a
//! column is a plane of `Ly·Lz` sites and `Ly` stands for that count throughout (a halo plane
//! is what travels); the two lattices timed differ in `Lz`. The
//! communication is `δ Ly + λ`: two messages of `H·Ly·Q` values each way per step, over one
//! network interface, so `δ = 2 H Q b / B` (`b` bytes per value, `B` the bandwidth) and
//! `λ = 2 ℓ` (`ℓ` the latency); the paper's form has no latency term, which matters only for
//! small `Ly`. Cluster predictions use [`Network::INFINIBAND_EDR`] (ℓ = 1.5 µs,
//! B = 12 GB/s per direction: 100 Gb/s EDR InfiniBand as measured by osu_bw on such systems);
//! [`Network::from_loopback`] fits the same two figures to an exchange measured on this
//! machine instead.
//!
//! # Outputs and checkpoints
//! Every `N_o` steps each rank computes the moments of its slab (`μ` seconds per site) and
//! writes its VTK piece (`v` bytes per site); every `N_c` steps its checkpoint shard (`κ` per
//! site to read its populations out, `c = Q b` bytes per site). All ranks write at once, one
//! file each, to a file system of aggregate bandwidth `B_fs`, `B_r` per process, which creates
//! `R` files per second after a latency `ℓ_fs`:
//!
//! ```text
//! W(n, s) = ℓ_fs + n / R + n s / min(B_fs, n B_r)                 (n files of s bytes)
//! T_io(n) = [μ S + W(n, v S)] / N_o + [κ S + W(n, c S)] / N_c     (S = (Lx/n) Ly sites)
//! ```
//!
//! added to the step time. Under weak scaling `S` is fixed and `n s` grows with `n`: the
//! writes stop scaling where `n B_r` exceeds `B_fs`. Cluster predictions assume
//! [`FileSystem::PARALLEL`], stated where they are printed.

use std::time::Instant;

use crate::domain::{export_block, ring_blocks, DomainError, GlobalSpec, Slab};
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

/// The file system outputs and checkpoints are written to (see the module documentation).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FileSystem {
    /// Aggregate bandwidth of every process writing at once, bytes per second.
    pub bandwidth: f64,
    /// Bandwidth one process reaches, bytes per second.
    pub per_rank: f64,
    /// Files created per second (the metadata server).
    pub creates_per_s: f64,
    /// Latency of writing a file (open, sync, close), seconds.
    pub latency_s: f64,
}

impl FileSystem {
    /// A parallel file system of a mid-size cluster (Lustre or GPFS): 100 GB/s aggregate,
    /// 2 GB/s per process, 20 000 file creations per second, 10 ms per file — the figures
    /// assumed for cluster predictions.
    pub const PARALLEL: FileSystem = FileSystem {
        bandwidth: 100e9,
        per_rank: 2e9,
        creates_per_s: 2e4,
        latency_s: 1e-2,
    };

    /// A file system measured writing (and syncing) `bytes` in `seconds` from one process:
    /// every process shares that bandwidth.
    pub fn measured(bytes: usize, seconds: f64) -> Self {
        let b = bytes as f64 / seconds.max(f64::MIN_POSITIVE);
        Self {
            bandwidth: b,
            per_rank: b,
            creates_per_s: f64::INFINITY,
            latency_s: 0.0,
        }
    }

    /// `W(n, s)`: seconds for `ranks` processes to write a file of `bytes` each, at once.
    pub fn write_seconds(&self, ranks: usize, bytes: f64) -> f64 {
        let n = ranks.max(1) as f64;
        self.latency_s + n / self.creates_per_s + n * bytes / self.bandwidth.min(n * self.per_rank)
    }
}

/// What a run writes, per site, and how often (see the module documentation).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Outputs {
    /// Steps between outputs (0: none).
    pub every: u64,
    /// Steps between checkpoints (0: none).
    pub checkpoint_every: u64,
    /// `μ`: seconds per site to compute the moments.
    pub mu: f64,
    /// `κ`: seconds per site to read the populations out for a shard.
    pub kappa: f64,
    /// `v`: bytes per site of a VTK piece.
    pub vtk_bytes: usize,
    /// `c`: bytes per site of a checkpoint shard.
    pub checkpoint_bytes: usize,
}

impl Outputs {
    /// `T_io(n)`: the outputs' and checkpoints' seconds per step of `ranks` ranks on an
    /// `lx × ly` lattice, written to `fs`.
    pub fn seconds_per_step(&self, fs: &FileSystem, lx: usize, ly: usize, ranks: usize) -> f64 {
        let sites = lx as f64 / ranks.max(1) as f64 * ly as f64;
        let per = |every: u64, cpu: f64, bytes: usize| {
            if every == 0 {
                0.0
            } else {
                (cpu * sites + fs.write_seconds(ranks, bytes as f64 * sites)) / every as f64
            }
        };
        per(self.every, self.mu, self.vtk_bytes)
            + per(self.checkpoint_every, self.kappa, self.checkpoint_bytes)
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
    /// `T_io`: outputs and checkpoints, seconds per step (0 without them).
    pub t_io: f64,
    /// Speed-up over one rank (strong scaling) or parallel efficiency (weak scaling) relative
    /// to one rank, of `T + T_io`, see [`strong_scaling`] and [`weak_scaling`].
    pub relative: f64,
    /// Million lattice updates per second of the whole lattice, outputs included.
    pub mlups: f64,
}

/// The outputs of a run and the file system they go to, in a prediction.
pub type Io<'a> = Option<(&'a Outputs, &'a FileSystem)>;

/// `T_io` of `io` for `ranks` ranks on an `lx × ly` lattice (0 without outputs).
fn io_time(io: Io<'_>, lx: usize, ly: usize, ranks: usize) -> f64 {
    io.map_or(0.0, |(o, fs)| o.seconds_per_step(fs, lx, ly, ranks))
}

impl Coefficients {
    /// `T(Lx, Ly, n)` and its two terms: `(T_a, T_b)` (Calore et al. 2016 §5).
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

    /// `(T_a, T_b)` of a step of a box of `nodes` cut into the blocks of `cut` with ghost
    /// layers `H` deep along the cut axes ([`crate::blocks`]), each block `l = nodes / cut`
    /// nodes per axis: `T_a = α V + β l_x` over its `V = l_x l_y l_z` sites; `T_b` its border
    /// sites (within `H` of a cut face: `V − Π (l_a − 2H [a cut])`) at `γ / 2H` each, plus per
    /// cut axis the exchange of its two faces, `δ F_a + λ`, where `F_a` is the face's area with
    /// the ghosts of the other cut axes (`2 H F_a` summed is [`crate::blocks::halo_nodes`]).
    /// A cut along x alone is [`Coefficients::terms`] (`F_x = L_y`, `2H L_y` border sites).
    pub fn cut_terms(&self, nodes: [usize; 3], cut: crate::blocks::Cut, halo: usize) -> (f64, f64) {
        let l = [0, 1, 2].map(|a| nodes[a] as f64 / cut.0[a].max(1) as f64);
        let h = halo.max(1) as f64;
        let volume = l[0] * l[1] * l[2];
        let t_a = self.alpha * volume + self.beta * l[0];
        if cut.blocks() <= 1 {
            return (t_a, 0.0);
        }
        let is_cut = |a: usize| cut.0[a] > 1;
        let inner: f64 = (0..3)
            .map(|a| {
                if is_cut(a) {
                    (l[a] - 2.0 * h).max(0.0)
                } else {
                    l[a]
                }
            })
            .product();
        let border = self.gamma / (2.0 * h) * (volume - inner);
        let exchange: f64 = cut
            .cut_axes()
            .map(|a| {
                let face: f64 = (0..3)
                    .filter(|&b| b != a)
                    .map(|b| l[b] + if is_cut(b) { 2.0 * h } else { 0.0 })
                    .product();
                self.delta * face + self.lambda
            })
            .sum();
        (t_a, border + exchange)
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

    fn predict(
        &self,
        (lx, ly, ranks): (usize, usize, usize),
        io: Io<'_>,
        reference: f64,
    ) -> Prediction {
        let (t_a, t_b) = self.terms(lx, ly, ranks);
        let t = t_a.max(t_b);
        let t_io = io_time(io, lx, ly, ranks);
        Prediction {
            ranks,
            lx,
            ly,
            t_a,
            t_b,
            t,
            t_io,
            relative: reference / (t + t_io),
            mlups: (lx * ly) as f64 / (t + t_io) / 1e6,
        }
    }
}

/// Strong scaling of an `lx × ly` lattice with the outputs `io`: `relative` is the speed-up
/// `S_r(n) = (T + T_io)(1) / (T + T_io)(n)`. Rank counts that would leave a slab narrower than
/// `halo` columns (which [`crate::domain::ring_blocks`] refuses) are left out.
pub fn strong_scaling(
    c: &Coefficients,
    (lx, ly): (usize, usize),
    halo: usize,
    ranks: &[usize],
    io: Io<'_>,
) -> Vec<Prediction> {
    let t1 = c.step_time(lx, ly, 1) + io_time(io, lx, ly, 1);
    ranks
        .iter()
        .filter(|&&n| n > 0 && lx / n >= halo.max(1))
        .map(|&n| c.predict((lx, ly, n), io, t1))
        .collect()
}

/// Weak scaling, `lx_per_rank` columns per rank, with the outputs `io`: `relative` is the
/// parallel efficiency `(T + T_io)(lx_per_rank, Ly, 1) / (T + T_io)(n·lx_per_rank, Ly, n)`.
pub fn weak_scaling(
    c: &Coefficients,
    (lx_per_rank, ly): (usize, usize),
    ranks: &[usize],
    io: Io<'_>,
) -> Vec<Prediction> {
    let t1 = c.step_time(lx_per_rank, ly, 1) + io_time(io, lx_per_rank, ly, 1);
    ranks
        .iter()
        .map(|&n| c.predict((n * lx_per_rank, ly, n), io, t1))
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
    /// Step of the whole lattice.
    pub t_full: f64,
    /// Step of the lattice with half (or twice) the sites per column: `ly/2` (or `2·ly`) in
    /// 2-D, `lz/2` (or `2·lz`) in 3-D.
    pub t_other: f64,
    /// The sites per column (`LY`, `LY·LZ` in 3-D) of that other lattice.
    pub plane_other: usize,
    /// Border update of one slab (`2H` columns).
    pub t_border: f64,
    /// The fitted coefficients, communication over [`Network::INFINIBAND_EDR`].
    pub coefficients: Coefficients,
    /// `μ`: seconds per site to compute every moment (an output).
    pub mu: f64,
    /// `κ`: seconds per site to read the populations out in logical order (a checkpoint).
    pub kappa: f64,
}

/// Measures `α`, `β` and `γ` on this machine with short runs of the lattice `spec` (two-copy
/// scheme, `steps` steps per timing round): `α Lx Ly + β Lx` from the step times at heights
/// `Ly` and `Ly/2` (or `2 Ly` when `Ly/2` does not suit the layout; in 3-D depths `Lz` and
/// `Lz/2` or `2 Lz`, `Ly` standing for the plane's `Ly·Lz` sites), `γ` from the border
/// update. The communication terms are those of [`Network::INFINIBAND_EDR`]; replace them
/// with [`Coefficients::with_network`].
pub fn calibrate<M: Model, L: Layout, T: Real>(
    spec: &GlobalSpec<M>,
    steps: usize,
) -> Result<Calibration, DomainError> {
    let (lx, plane) = (spec.lx, spec.plane());
    // The other lattice: z halved or doubled in 3-D (any depth suits the layouts), else y.
    let other = if spec.lz > 1 {
        let lz = if spec.lz.is_multiple_of(2) {
            spec.lz / 2
        } else {
            spec.lz * 2
        };
        GlobalSpec { lz, ..spec.clone() }
    } else {
        let half = spec.ly / 2;
        let suits = spec.ly.is_multiple_of(2)
            && half.is_multiple_of(L::VL)
            && half / L::VL >= M::HALO.max(1);
        let ly = if suits { half } else { spec.ly * 2 };
        GlobalSpec { ly, ..spec.clone() }
    };
    let plane_other = other.plane();
    let t_full = full_step_time::<M, L, T>(spec, steps)?;
    let t_other = full_step_time::<M, L, T>(&other, steps)?;
    let t_border = border_time::<M, L, T>(spec, steps)?;
    let (mu, kappa) = output_costs::<M, L, T>(spec)?;
    // t(h)/lx = α h + β at the two column sizes.
    let (h1, h2) = (plane as f64, plane_other as f64);
    let (y1, y2) = (t_full / lx as f64, t_other / lx as f64);
    let alpha = (y1 - y2) / (h1 - h2);
    let beta = (y1 - alpha * h1).max(0.0);
    let coefficients = Coefficients {
        alpha,
        beta,
        gamma: t_border / plane as f64,
        delta: 0.0,
        lambda: 0.0,
    }
    .with_network(
        &Network::INFINIBAND_EDR,
        M::HALO,
        M::Q,
        std::mem::size_of::<T>(),
    );
    Ok(Calibration {
        t_full,
        t_other,
        plane_other,
        t_border,
        coefficients,
        mu,
        kappa,
    })
}

/// `(μ, κ)`: seconds per site to compute every moment of the lattice `spec`, and to read its
/// populations out in logical order.
fn output_costs<M: Model, L: Layout, T: Real>(
    spec: &GlobalSpec<M>,
) -> Result<(f64, f64), DomainError> {
    let lattice = spec.lattice::<L, T>(Scheme::TwoCopy)?;
    let sites = (spec.lx * spec.plane()) as f64;
    let mu = seconds_per(1, || {
        std::hint::black_box(lattice.moment_fields());
    });
    let kappa = seconds_per(1, || {
        std::hint::black_box(export_block(&lattice, &lattice.dims().planes(0..spec.lx)).ok());
    });
    Ok((mu / sites, kappa / sites))
}

/// Seconds per step of the whole lattice `spec` in one process.
fn full_step_time<M: Model, L: Layout, T: Real>(
    spec: &GlobalSpec<M>,
    steps: usize,
) -> Result<f64, DomainError> {
    let mut lattice = spec.lattice::<L, T>(Scheme::TwoCopy)?;
    Ok(seconds_per(steps, || lattice.step()))
}

/// Seconds of the border update of a slab of the lattice `spec`.
fn border_time<M: Model, L: Layout, T: Real>(
    spec: &GlobalSpec<M>,
    steps: usize,
) -> Result<f64, DomainError> {
    let whole = ring_blocks::<M>(spec.size(), 1)?;
    let mut slab = Slab::<M, L, T>::new(spec, &whole, 0, Scheme::TwoCopy)?;
    Ok(seconds_per(steps, || slab.update_borders_and_finish()))
}

#[cfg(test)]
#[path = "scaling_tests.rs"]
mod tests;
