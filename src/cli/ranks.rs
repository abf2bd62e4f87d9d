//! `lbm bench --ranks [--backend cpu|gpu|hetero]` (feature `mpi`, under `mpiexec -n N`): the
//! step of the distributed ring, each rank's slab on its CPU, its GPU or both, with its halo
//! exchange overlapped with the bulk, the same step without the exchange, and the
//! exchange alone (seed 003 Fig. 5); then the performance model of seed 003 §5,
//! `T ≈ max{T_a, T_b}` with `T_a = α Lx Ly + β Lx` (bulk) and `T_b = γ Ly + δ Ly + λ`
//! (borders and communication), its coefficients measured by short runs here, and the strong-
//! and weak-scaling curves it predicts over EDR InfiniBand (1.5 µs, 12 GB/s — the network
//! assumed for cluster predictions) and over this machine's loopback, beside the measured step.

use std::sync::Arc;

use lbm::cases::{global_spec, Poiseuille, RayleighTaylor};
use lbm::domain::{GlobalSpec, Slab};
use lbm::gpu::{GpuContext, GpuOptions, GpuSlab};
use lbm::hetero::{SplitChoice, SplitSlab};
use lbm::mpi_ring::{self, bench_ranks};
use lbm::scaling::{self, Network, Prediction};
use lbm::{Layout, Model, Real, Scheme};

use super::bench::{open_options, Backend, BenchArgs, Which};
use super::dist::EXCHANGE_PROBES;
use super::world::World;
use super::{dispatch, CliError, Generic, LayoutArg, Precision};

/// Rank counts of the predicted curves when none are given.
const DEFAULT_RANKS: [usize; 7] = [1, 2, 4, 8, 16, 32, 64];

/// Runs the benchmark for the models of `a`, in its first layout and precision.
pub fn run(a: &BenchArgs, ranks: &[usize], world: &World) -> Result<(), CliError> {
    let ranks = if ranks.is_empty() {
        DEFAULT_RANKS.to_vec()
    } else {
        ranks.to_vec()
    };
    let layout = a.layout.first().copied().unwrap_or(LayoutArg::Caosoa);
    let precision = a.precision.first().copied().unwrap_or(Precision::F64);
    if a.model != Which::D2q37 {
        let (lx, ly) = a.d2q9_size;
        let case = Poiseuille {
            lx,
            ly,
            tau: 0.8,
            acceleration: 1e-6,
        };
        dispatch(
            layout,
            precision,
            Job {
                a,
                world,
                ranks: &ranks,
                spec: global_spec(&case),
            },
        )?;
    }
    if a.model != Which::D2q9 {
        let (lx, ly) = a.d2q37_size;
        let case = RayleighTaylor {
            lx,
            ly,
            atwood: 0.1,
            gravity: 1e-4,
            tau: 0.8,
            amplitude: 1.0,
            width: 2.0,
        };
        dispatch(
            layout,
            precision,
            Job {
                a,
                world,
                ranks: &ranks,
                spec: global_spec(&case),
            },
        )?;
    }
    Ok(())
}

struct Job<'a, M: Model> {
    a: &'a BenchArgs,
    world: &'a World,
    ranks: &'a [usize],
    spec: GlobalSpec<M>,
}

impl<M: Model> Generic for Job<'_, M> {
    type Output = Result<(), CliError>;

    fn run<L: Layout, T: Real>(self) -> Self::Output {
        let (spec, steps) = (self.spec, self.a.rank_steps);
        let (lx, ly) = (spec.lx, spec.ly);
        let comm = self.world.comm();
        let node = || GpuOptions {
            node_rank: mpi_ring::node_rank(comm),
            ..open_options(self.a)
        };
        let scheme = Scheme::TwoCopy;
        let t = match self.a.backend {
            Backend::Cpu | Backend::All => {
                bench_ranks::<M, L, T, _>(comm, spec.clone(), steps, |s, d, r| {
                    Ok(Slab::<M, L, T>::new(s, d, r, scheme)?)
                })?
            }
            Backend::Gpu => {
                let opts = node();
                bench_ranks::<M, L, T, _>(comm, spec.clone(), steps, |s, d, r| {
                    GpuSlab::<M, L, T>::new(&Arc::new(GpuContext::new(&opts)?), s, d, r, scheme)
                })?
            }
            Backend::Hetero => {
                let opts = node();
                let len = M::HALO * ly * M::Q;
                let t_c = mpi_ring::exchange_seconds::<T>(comm, len, EXCHANGE_PROBES)? / ly as f64;
                bench_ranks::<M, L, T, _>(comm, spec.clone(), steps, |s, d, r| {
                    let ctx = Arc::new(GpuContext::new(&opts)?);
                    SplitSlab::<M, L, T>::new(&ctx, s, d, r, scheme, (SplitChoice::Auto, t_c))
                })?
            }
        };
        if self.world.rank() != 0 {
            return Ok(());
        }
        let mlups = |secs: f64| (lx * ly) as f64 / secs / 1e6;
        println!(
            "\n{} {} {} {lx}×{ly} on {} rank(s), {steps} steps per timing; rank 0 on {}:",
            M::NAME,
            L::NAME,
            T::NAME,
            t.ranks,
            t.backend
        );
        println!(
            "  step with the halo exchange {:.3} ms ({:.1} MLUPS); without it {:.3} ms ({:.1} \
             MLUPS); the exchange alone {:.3} ms ({} bytes per message); hidden: {:.0}% of the \
             exchange",
            t.with_exchange * 1e3,
            mlups(t.with_exchange),
            t.without_exchange * 1e3,
            mlups(t.without_exchange),
            t.exchange_only * 1e3,
            t.halo_bytes,
            100.0
                * (1.0
                    - ((t.with_exchange - t.without_exchange) / t.exchange_only).clamp(0.0, 1.0))
        );
        if !matches!(self.a.backend, Backend::Cpu | Backend::All) {
            println!(
                "  (the scaling model below is calibrated on the CPU kernels, one process: it \
                 predicts CPU ranks)"
            );
        }
        let cal = scaling::calibrate::<M, L, T>(&spec, steps)?;
        let c = cal.coefficients;
        println!(
            "  calibration (one process): α = {:.3e} s/site, β = {:.3e} s/column, γ = {:.3e} \
             s/row (border), from {:.3} ms at LY = {ly} and {:.3} ms at LY = {}",
            c.alpha,
            c.beta,
            c.gamma,
            cal.t_full * 1e3,
            cal.t_other * 1e3,
            cal.ly_other
        );
        let loopback = Network::from_loopback(t.halo_bytes, t.exchange_only, 1e-6);
        for (name, net) in [
            ("EDR InfiniBand (1.5 µs, 12 GB/s)", Network::INFINIBAND_EDR),
            ("this machine's loopback (fitted, ℓ = 1 µs)", loopback),
        ] {
            let cn = c.with_network(&net, M::HALO, M::Q, T::BYTES);
            println!(
                "  network {name}: δ = {:.3e} s/row, λ = {:.3e} s; predicted step on {} rank(s) \
                 {:.3} ms, measured {:.3} ms",
                cn.delta,
                cn.lambda,
                t.ranks,
                cn.step_time(lx, ly, t.ranks) * 1e3,
                t.with_exchange * 1e3
            );
            table(
                &format!("strong scaling, {lx}×{ly}"),
                &scaling::strong_scaling(&cn, lx, ly, M::HALO, self.ranks),
            );
            let per_rank = lx / self.ranks.first().copied().unwrap_or(1).max(1);
            table(
                &format!("weak scaling, {per_rank}×{ly} per rank"),
                &scaling::weak_scaling(&cn, per_rank, ly, self.ranks),
            );
        }
        Ok(())
    }
}

fn table(title: &str, rows: &[Prediction]) {
    println!("    {title}");
    println!(
        "    {:>6} {:>8} {:>11} {:>11} {:>11} {:>9} {:>9}",
        "ranks", "LX", "T_a ms", "T_b ms", "T ms", "rel.", "MLUPS"
    );
    for p in rows {
        println!(
            "    {:>6} {:>8} {:>11.4} {:>11.4} {:>11.4} {:>9.3} {:>9.1}",
            p.ranks,
            p.lx,
            p.t_a * 1e3,
            p.t_b * 1e3,
            p.t * 1e3,
            p.relative,
            p.mlups
        );
    }
}
