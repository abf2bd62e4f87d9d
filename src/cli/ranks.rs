//! `lbm bench --ranks [--backend cpu|gpu|hetero]` (feature `mpi`, under `mpiexec -n N`): the
//! step of the distributed ring, each rank's slab on its CPU, its GPU or both, with its halo
//! exchange overlapped with the bulk, the same step without the exchange, and the
//! exchange alone (Calore et al. 2016, Fig. 5); then the performance model of Calore et al. 2016 §5,
//! `T ≈ max{T_a, T_b}` with `T_a = α Lx Ly + β Lx` (bulk) and `T_b = γ Ly + δ Ly + λ`
//! (borders and communication), its coefficients measured by short runs here, and the strong-
//! and weak-scaling curves it predicts over EDR InfiniBand (1.5 µs, 12 GB/s — the network
//! assumed for cluster predictions) and over this machine's loopback, beside the measured step,
//! with the cost of outputs and checkpoints (each rank computing its moments and writing its
//! VTK piece and its shard) on a parallel file system (100 GB/s aggregate, 2 GB/s per process,
//! [`FileSystem::PARALLEL`]) and on this machine's disk, measured.

use lbm::backend::{Gpu, RingJob, on_ring};
use lbm::blocks::{Blocks, Cut, halo_nodes};
use lbm::cases::{Poiseuille, RayleighTaylor, global_spec};
use lbm::distributed::{DistLattice, RankTimes};
use lbm::domain::{Frame, GlobalSpec};
use lbm::gpu::GpuOptions;
use lbm::hetero::SplitChoice;
use lbm::scaling::{self, FileSystem, Network, Outputs, Prediction};
use lbm::{Error, Layout, Model, Real, Scheme, SlabBackend};

use super::bench_args::{
    Backend, BenchArgs, Which, d3q19_duct, lattices_fit, open_options, require_one_of,
};
use super::world::World;
use super::{CliError, Generic, Precision, dispatch};

/// Rank counts of the predicted curves when none are given: to 1024.
const DEFAULT_RANKS: [usize; 11] = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024];

/// Steps between outputs, and between checkpoints, in the predictions.
const OUTPUT_EVERY: u64 = 1000;
/// See [`OUTPUT_EVERY`].
const CHECKPOINT_EVERY: u64 = 10_000;

/// Bytes written to measure this machine's file system.
const DISK_PROBE_BYTES: usize = 64 << 20;

/// This machine's file system, measured: a file of [`DISK_PROBE_BYTES`] written and synced
/// in the system's temporary directory.
fn measure_disk() -> Result<FileSystem, CliError> {
    let path = std::env::temp_dir().join(format!("lbm-disk-probe-{}", std::process::id()));
    let data = vec![1u8; DISK_PROBE_BYTES];
    let t0 = std::time::Instant::now();
    let written = lbm::io::write_atomically(&path, &[&data]);
    let secs = t0.elapsed().as_secs_f64();
    let _ = std::fs::remove_file(&path);
    written.map_err(|source| lbm::output::OutputError::Io { path, source })?;
    Ok(FileSystem::measured(DISK_PROBE_BYTES, secs))
}

/// The models `lbm bench --ranks` runs.
const RANK_MODELS: [Which; 3] = [Which::D2q9, Which::D2q37, Which::D3q19];

/// Runs the benchmark for the models of `a`, in its first layout and precision.
pub fn run(a: &BenchArgs, ranks: &[usize], world: &World) -> Result<(), CliError> {
    require_one_of(a, &RANK_MODELS, "ranks")?;
    let ranks = if ranks.is_empty() {
        DEFAULT_RANKS.to_vec()
    } else {
        ranks.to_vec()
    };
    let layout = a.first_layout();
    let precision = a.precision.first().copied().unwrap_or(Precision::F64);
    // Each rank's slab, the widest, must fit in the memory available.
    let slab = |[lx, ly, lz]: [usize; 3]| [lx.div_ceil(world.group().ranks()), ly, lz];
    lattices_fit(a, &RANK_MODELS, (&[layout], &[precision]), slab)?;
    if a.model.includes(Which::D2q9) {
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
    if a.model.includes(Which::D2q37) {
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
    if a.model.includes(Which::D3q19) {
        let spec = d3q19_duct(a.d3q19_size);
        dispatch(
            layout,
            precision,
            Job {
                a,
                world,
                ranks: &ranks,
                spec,
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

/// The ring's step timed, `steps` steps a timing ([`DistLattice::bench`]).
struct Timed(usize);

impl<M: Model, T: Real> RingJob<M, T> for Timed {
    type Output = RankTimes;

    fn run<L: Layout, P: SlabBackend<Model = M, Real = T> + 'static>(
        self,
        mut ring: DistLattice<M, L, T, P>,
    ) -> Result<RankTimes, Error> {
        ring.bench(self.0)
    }
}

impl<M: Model> Generic for Job<'_, M> {
    type Output = Result<(), CliError>;

    fn run<L: Layout, T: Real>(self) -> Self::Output {
        let (spec, steps) = (self.spec, self.a.rank_steps);
        // A column is a plane of `ly` sites in 3-D: what the model and the halos count.
        let (lx, ly) = (spec.lx, spec.plane());
        let across = match spec.lz {
            1 => format!("{}", spec.ly),
            lz => format!("{}×{lz}", spec.ly),
        };
        let gpu = || {
            Gpu::open(GpuOptions {
                node_rank: self.world.node_rank(),
                ..open_options(self.a)
            })
        };
        let backend = match self.a.backend {
            Backend::Cpu | Backend::All => lbm::backend::Backend::Host,
            Backend::Gpu => lbm::backend::Backend::Device {
                gpu: gpu(),
                layout: L::KIND,
            },
            Backend::Hetero => lbm::backend::Backend::Split {
                gpu: gpu(),
                choice: SplitChoice::Auto,
            },
        };
        let group = self.world.carrier();
        let cut =
            (self.a.cut).unwrap_or_else(|| Cut::balanced(group.ranks(), M::D, spec.size(), 0));
        let timed = Timed(steps);
        let t = on_ring::<M, L, T, _>(
            group,
            spec.clone(),
            cut.into(),
            Scheme::TwoCopy,
            &backend,
            timed,
        )?;
        if !self.world.group().is_root() {
            return Ok(());
        }
        let mlups = |secs: f64| (lx * ly) as f64 / secs / 1e6;
        say!(
            "\n{} {} {} {lx}×{across} on {} rank(s), {steps} steps per timing (medians of rounds that \
             alternate the three timings); rank 0 on {}:",
            M::NAME,
            L::NAME,
            T::NAME,
            t.ranks,
            t.backend
        );
        say!(
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
            say!(
                "  (the scaling model below is calibrated on the CPU kernels, one process: it \
                 predicts CPU ranks)"
            );
        }
        // Rank 0's block, its lines along y as many as its layout stores: the engine's
        // formula for the cut the lattice ran.
        let first = Blocks::even(spec.size(), t.cut).block(0);
        let frame = Frame::of::<M>(spec.size(), &first, L::VL);
        let block = first.map(|r| r.len());
        let formula = frame.halo_nodes::<M>(t.cut) * M::Q * T::BYTES;
        let l_y = frame.stored[1] - 2 * frame.ghosts[1];
        say!(
            "  halo per step on rank 0 (cut {}, block {}×{}×{}{}): {} bytes sent; the formula \
             Σ_(a cut) 2·H·Π_(b≠a)(l_b + 2H·[ghosts along b])·Q·b gives {formula}",
            t.cut,
            block[0],
            block[1],
            block[2],
            if l_y > block[1] {
                format!(
                    ", {} lines stored along y for the layout's clusters: l_y = {l_y}",
                    frame.stored[1]
                )
            } else {
                String::new()
            },
            t.sent_bytes,
        );
        let cal = scaling::calibrate::<M, L, T>(&spec, steps)?;
        let c = cal.coefficients;
        say!(
            "  calibration (one process): α = {:.3e} s/site, β = {:.3e} s/column, γ = {:.3e} \
             s/row (border; a row is a site of a column), from {:.3} ms at {ly} and {:.3} ms at {} \
             sites per column",
            c.alpha,
            c.beta,
            c.gamma,
            cal.t_full * 1e3,
            cal.t_other * 1e3,
            cal.plane_other
        );
        let moments = M::MOMENT_NAMES.len();
        let outputs = Outputs {
            every: OUTPUT_EVERY,
            checkpoint_every: CHECKPOINT_EVERY,
            mu: cal.mu,
            kappa: cal.kappa,
            // The scalars and the velocity as a 3-vector, f64.
            vtk_bytes: 8 * (moments + usize::from(M::MOMENT_NAMES.contains(&"ux"))),
            checkpoint_bytes: M::Q * T::BYTES,
        };
        let disk = measure_disk()?;
        say!(
            "  outputs every {OUTPUT_EVERY} steps (moments: μ = {:.3e} s/site; VTK piece: {} \
             B/site), checkpoints every {CHECKPOINT_EVERY} (κ = {:.3e} s/site; shard: {} B/site)",
            outputs.mu,
            outputs.vtk_bytes,
            outputs.kappa,
            outputs.checkpoint_bytes
        );
        let loopback = Network::from_loopback(t.halo_bytes, t.exchange_only, 1e-6);
        for (name, net, fs_name, fs) in [
            (
                "EDR InfiniBand (1.5 µs, 12 GB/s)",
                Network::INFINIBAND_EDR,
                "a parallel file system (assumed: 100 GB/s aggregate, 2 GB/s per rank, 20 000 \
                 files/s, 10 ms per file)",
                FileSystem::PARALLEL,
            ),
            (
                "this machine's loopback (fitted, ℓ = 1 µs)",
                loopback,
                "this machine's disk (measured, shared by every rank)",
                disk,
            ),
        ] {
            let cn = c.with_network(&net, M::HALO, M::Q, T::BYTES);
            say!(
                "  network {name}: δ = {:.3e} s/row, λ = {:.3e} s; predicted step on {} rank(s) \
                 {:.3} ms, measured {:.3} ms; outputs to {fs_name}: {:.2} GB/s",
                cn.delta,
                cn.lambda,
                t.ranks,
                cn.step_time(lx, ly, t.ranks) * 1e3,
                t.with_exchange * 1e3,
                fs.bandwidth / 1e9
            );
            let io = Some((&outputs, &fs));
            table(
                &format!("strong scaling, {lx}×{across}"),
                &scaling::strong_scaling(&cn, (lx, ly), M::HALO, self.ranks, io),
            );
            let per_rank = lx / self.ranks.first().copied().unwrap_or(1).max(1);
            table(
                &format!("weak scaling, {per_rank}×{across} per rank"),
                &scaling::weak_scaling(&cn, (per_rank, ly), self.ranks, io),
            );
            if spec.lz > 1 {
                cuts::<M, T>(&cn);
            }
        }
        Ok(())
    }
}

/// The model's step on 1024³ sites and 512 ranks, cut into slabs along x and into cubes.
fn cuts<M: Model, T: Real>(c: &scaling::Coefficients) {
    let (n, ranks) = ([1024; 3], 512);
    say!("    1024³ on {ranks} ranks (the engine's cuts; outputs not counted)");
    say!(
        "    {:>9} {:>16} {:>14} {:>11} {:>11} {:>11} {:>10}",
        "cut",
        "block",
        "halo MB/step",
        "T_a ms",
        "T_b ms",
        "T ms",
        "MLUPS"
    );
    for cut in [Cut::along(0, ranks), Cut::balanced(ranks, 3, n, 0)] {
        let l = [0, 1, 2].map(|a| n[a] / cut.0[a]);
        let ghosts = [0, 1, 2].map(|a| cut.0[a] > 1);
        let halo = halo_nodes(l, cut, M::HALO, ghosts) * M::Q * T::BYTES;
        let (t_a, t_b) = c.cut_terms(n, cut, M::HALO);
        let t = t_a.max(t_b);
        say!(
            "    {:>9} {:>16} {:>14.2} {:>11.3} {:>11.3} {:>11.3} {:>10.1}",
            cut.to_string(),
            format!("{}×{}×{}", l[0], l[1], l[2]),
            halo as f64 / 1e6,
            t_a * 1e3,
            t_b * 1e3,
            t * 1e3,
            n.iter().product::<usize>() as f64 / t / 1e6
        );
    }
}

fn table(title: &str, rows: &[Prediction]) {
    say!("    {title}");
    say!(
        "    {:>6} {:>8} {:>11} {:>11} {:>11} {:>11} {:>9} {:>10}",
        "ranks",
        "LX",
        "T_a ms",
        "T_b ms",
        "T ms",
        "T_io ms",
        "rel.",
        "MLUPS"
    );
    for p in rows {
        say!(
            "    {:>6} {:>8} {:>11.4} {:>11.4} {:>11.4} {:>11.4} {:>9.3} {:>10.1}",
            p.ranks,
            p.lx,
            p.t_a * 1e3,
            p.t_b * 1e3,
            p.t * 1e3,
            p.t_io * 1e3,
            p.relative,
            p.mlups
        );
    }
}
