//! The options of `lbm bench`, shared by its tables (`bench`), the host/device split sweep
//! (`split`) and the MPI ring (`ranks`), and the lattices and adapters they open from them.

use std::sync::Arc;

use clap::{Args, ValueEnum};
use lbm::domain::GlobalSpec;
use lbm::gpu::{self, AdapterChoice, GpuContext, GpuOptions};
use lbm::memory::populations;
use lbm::models::{D2Q9Bgk, D2Q37, D3Q19Bgk, D3Q19BgkParams, D3Q27Bgk};
use lbm::{BoundarySpec, F16s, Model, Scheme};

use super::settings::{bad, positive};
use super::{CliError, LayoutArg, Precision, layout_kind};

/// Options of the benchmark.
#[derive(Debug, Clone, Args)]
#[command(allow_negative_numbers = true)]
pub struct BenchArgs {
    /// Which models.
    #[arg(long, value_enum, default_value_t = Which::All)]
    pub model: Which,
    /// D2Q9 lattice, `LXxLY` (well above the last-level cache).
    #[arg(long, default_value = "4096x4096", value_parser = parse_size)]
    pub d2q9_size: (usize, usize),
    /// D2Q37 lattice, `LXxLY`.
    #[arg(long, default_value = "1024x2048", value_parser = parse_size)]
    pub d2q37_size: (usize, usize),
    /// D3Q19 lattice, `LXxLYxLZ` (f64 two-copy needs 304 bytes per site).
    #[arg(long, default_value = "256x256x256", value_parser = parse_size3)]
    pub d3q19_size: [usize; 3],
    /// The fd-cavity grid, `NXxNY` nodes (f64 needs 48 bytes per node).
    #[arg(long, default_value = "4097x4097", value_parser = parse_size)]
    pub fd_size: (usize, usize),
    /// D3Q27 lattice, `LXxLYxLZ` (f64 two-copy needs 432 bytes per site).
    #[arg(long, default_value = "256x256x192", value_parser = parse_size3)]
    pub d3q27_size: [usize; 3],
    /// Timed iterations per kernel (the median is reported). An iteration of the fused step
    /// is two time steps, as a run takes them (the in-place scheme may sweep the two
    /// together), reported per step. The fused two-copy and in-place steps alternate, an
    /// iteration of each in turn, so that their ratio is of one state of a shared machine.
    #[arg(long, default_value_t = 5, value_parser = positive::<usize>)]
    pub iters: usize,
    /// Precisions to run.
    #[arg(long, value_enum, num_args = 1.., default_values_t = [Precision::F64, Precision::F32])]
    pub precision: Vec<Precision>,
    /// Layouts to run (default: all four in the tables; CAoSoA, as `lbm run`, for --ranks and
    /// --split, which run the first given).
    #[arg(long, value_enum, num_args = 1..)]
    pub layout: Vec<LayoutArg>,
    /// Also write every row of the tables (CPU kernels and GPU fused steps) to this CSV file,
    /// with the limits measured beside them, for plotting (written whole at the end; an
    /// existing file is kept unless --force).
    #[arg(long, value_name = "FILE")]
    pub csv: Option<std::path::PathBuf>,
    /// Overwrite the file of --csv if it exists.
    #[arg(long)]
    pub force: bool,
    /// Size of each array of the bandwidth probes, MiB (well above the last-level cache).
    #[arg(long, default_value_t = 1024, value_parser = positive::<usize>)]
    pub bw_mib: usize,
    /// Backends: the CPU kernels, the GPU's fused step, or both (`all` skips the GPU with a
    /// note when no adapter is found; `gpu` then fails). With `--ranks`: what each rank runs
    /// its slab on, `cpu` (also `all`), `gpu` or `hetero`.
    #[arg(long, value_enum, default_value_t = Backend::All)]
    pub backend: Backend,
    /// GPU adapter: `best`, a device type (`discrete`, `integrated`, `virtual`, `cpu`) or part
    /// of an adapter's name [default: $LBM_GPU_ADAPTER, else best].
    #[arg(long)]
    pub adapter: Option<String>,
    /// GPU steps per timed batch, at least (each row is the fastest of three batches, each
    /// also at least 0.1 s long, so that a submission's round trip does not count).
    #[arg(long, default_value_t = 10, value_parser = positive::<u64>)]
    pub gpu_steps: u64,
    /// Keep the GPU shaders' runtime bounds checks, which are otherwise dropped where every
    /// index is proven in range (to measure what they cost).
    #[arg(long)]
    pub gpu_bounds_checks: bool,
    /// The distributed ring instead (feature `mpi`, under `mpiexec -n N`): the step with and
    /// without the halo exchange, the performance model's coefficients, and the strong- and
    /// weak-scaling curves it predicts for these rank counts [default: 1 2 4 … 64]; first
    /// layout and precision given.
    #[arg(long, num_args = 0.., value_name = "RANKS", value_parser = positive::<usize>)]
    pub ranks: Option<Vec<usize>>,
    /// `--ranks`: the blocks per axis the lattice is cut into, one a rank, as AxB or AxBxC
    /// [default: the ranks balanced over the model's axes, as MPI_Dims_create does].
    #[arg(long, value_name = "AxBxC", value_parser = parse_cut)]
    pub cut: Option<lbm::blocks::Cut>,
    /// Steps per timing of `--ranks` (in rounds that alternate the timings).
    #[arg(long, default_value_t = 20, value_parser = positive::<usize>)]
    pub rank_steps: usize,
    /// Instead of the tables: sweep the host/device split M (Calore et al. 2019, Fig. 8) in the first
    /// chosen layout and precision, measured beside the calibrated model, marking M*.
    #[arg(long)]
    pub split: bool,
    /// Lattice of the split sweep of the 2-D models, `LXxLY` [default: 512x512 for D2Q9,
    /// 192x128 for D2Q37].
    #[arg(long, value_parser = parse_size)]
    pub split_size: Option<(usize, usize)>,
    /// Lattice of the split sweep of D3Q19, `LXxLYxLZ` (a duct along x, cut into slabs of
    /// planes).
    #[arg(long, default_value = "64x48x48", value_parser = parse_size3)]
    pub split_d3q19_size: [usize; 3],
    /// Points of the split sweep, evenly spaced in 2M/LX from 0 to 1 (plus the tuned M*).
    #[arg(long, default_value_t = 9, value_parser = positive::<usize>)]
    pub split_points: usize,
    /// Timed steps per point of the split sweep.
    #[arg(long, default_value_t = 40, value_parser = positive::<u64>)]
    pub split_steps: u64,
}

impl BenchArgs {
    /// The layouts of the tables: those given, else all four.
    pub fn layouts(&self) -> Vec<LayoutArg> {
        match self.layout.is_empty() {
            true => vec![
                LayoutArg::Aos,
                LayoutArg::Soa,
                LayoutArg::Csoa,
                LayoutArg::Caosoa,
            ],
            false => self.layout.clone(),
        }
    }

    /// The layout of a run of one layout (--ranks, --split): the first given, else CAoSoA,
    /// which `lbm run` takes.
    pub fn first_layout(&self) -> LayoutArg {
        self.layout.first().copied().unwrap_or(LayoutArg::Caosoa)
    }
}

/// Backends to benchmark.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Backend {
    /// The CPU kernels (Calore et al. 2019, Table 2).
    Cpu,
    /// The GPU's fused step.
    Gpu,
    /// Both.
    All,
    /// With `--ranks`: each rank's slab split between the host and the GPU, tuned per rank.
    Hetero,
}

/// Models to benchmark.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Which {
    /// D2Q9 BGK (memory-bound).
    D2q9,
    /// D2Q37 thermal BGK with gravity (compute-bound).
    D2q37,
    /// D3Q19 BGK (memory-bound).
    D3q19,
    /// D3Q27 BGK.
    D3q27,
    /// The two 2-D models.
    All,
    /// Every model, 2-D and 3-D.
    Every,
    /// The finite-difference artificial-compressibility step of `lbm run fd-cavity` (forward
    /// Euler, SoA), on its own: not part of `all` or `every`.
    #[value(name = "fd-cavity")]
    FdCavity,
}

impl Which {
    /// Whether the selection includes `model`.
    pub fn includes(self, model: Which) -> bool {
        self == model
            || self == Which::Every
            || (self == Which::All && matches!(model, Which::D2q9 | Which::D2q37))
    }
}

/// Refuses a selection with none of `models` for `what` (the split sweep, the ranks
/// benchmark), naming those it takes.
pub fn require_one_of(a: &BenchArgs, models: &[Which], what: &str) -> Result<(), CliError> {
    if models.iter().any(|&m| a.model.includes(m)) {
        return Ok(());
    }
    let names: Vec<String> = models
        .iter()
        .map(|m| format!("{m:?}").to_lowercase())
        .collect();
    Err(CliError::Config {
        key: "model".into(),
        message: format!(
            "--{what} takes the models {} so far; the others have the per-layout tables: \
             drop --{what} or choose one of those with --model",
            names.join(", ")
        ),
    })
}

/// The D3Q19 lattice of the split sweep and the ranks benchmark: a duct along x (walls in y
/// and z) driven by a body force, cut into slabs of planes.
pub fn d3q19_duct([lx, ly, lz]: [usize; 3]) -> GlobalSpec<D3Q19Bgk> {
    GlobalSpec {
        lx,
        ly,
        lz,
        params: D3Q19BgkParams {
            tau: 0.8,
            ax: 1e-6,
            ay: 0.0,
            az: 0.0,
        },
        boundaries: BoundarySpec::duct(),
    }
}

/// Refuses, for each of `models` that `a` selects, a lattice of its `--<model>-size` (as
/// `sized` maps it: the whole lattice, or one rank's slab of it) that a layout of `layouts`
/// cannot run or whose two-copy populations in a precision of `precisions` do not fit in the
/// memory available ([`lattice_fits`]).
pub fn lattices_fit(
    a: &BenchArgs,
    models: &[Which],
    (layouts, precisions): (&[LayoutArg], &[Precision]),
    sized: impl Fn([usize; 3]) -> [usize; 3],
) -> Result<(), CliError> {
    let plane = |(lx, ly): (usize, usize)| [lx, ly, 1];
    for &m in models.iter().filter(|&&m| a.model.includes(m)) {
        let one = |key, size| (key, sized(size), layouts, precisions);
        match m {
            Which::D2q9 => lattice_fits::<D2Q9Bgk>(one("d2q9-size", plane(a.d2q9_size)))?,
            Which::D2q37 => lattice_fits::<D2Q37>(one("d2q37-size", plane(a.d2q37_size)))?,
            Which::D3q19 => lattice_fits::<D3Q19Bgk>(one("d3q19-size", a.d3q19_size))?,
            Which::D3q27 => lattice_fits::<D3Q27Bgk>(one("d3q27-size", a.d3q27_size))?,
            _ => {}
        }
    }
    Ok(())
}

/// Refuses (as the setting `key`) a lattice of `size` sites of model `M` that one of `layouts`
/// cannot run or whose two copies of the populations in one of `precisions` do not fit in the
/// memory available.
pub fn lattice_fits<M: Model>(
    (key, size, layouts, precisions): (&str, [usize; 3], &[LayoutArg], &[Precision]),
) -> Result<(), CliError> {
    let shape = lbm::Extent::of_size(size);
    for &p in precisions {
        for &l in layouts {
            lbm::check_size::<M>(size, layout_kind(l, p.default_vl()))
                .map_err(|e| bad(key, format!("{shape}: {e}")))?;
        }
        let [lx, ly, lz] = size;
        let plane = ly.saturating_mul(lz);
        let populations = match p {
            Precision::F64 => populations::<M, f64>(lx, plane, Scheme::TwoCopy, false),
            Precision::F32 => populations::<M, f32>(lx, plane, Scheme::TwoCopy, false),
            Precision::F16s => populations::<M, F16s>(lx, plane, Scheme::TwoCopy, false),
        };
        let need = lbm::memory::Need::new().with("populations", populations);
        lbm::memory::check(&need, 1, lbm::memory::available()).map_err(|e| {
            let e = e.with_remedy(format!("give a smaller --{key}"));
            bad(key, format!("{shape} in {p:?}: {e}"))
        })?;
    }
    Ok(())
}

/// `LXxLY`: two sides of at least one site.
fn parse_size(s: &str) -> Result<(usize, usize), String> {
    let [a, b] = sides::<2>(s, "LXxLY, e.g. 4096x4096")?;
    Ok((a, b))
}

/// `LXxLYxLZ`: three sides of at least one site.
fn parse_size3(s: &str) -> Result<[usize; 3], String> {
    sides::<3>(s, "LXxLYxLZ, e.g. 256x256x256")
}

/// `N` sides of a lattice separated by `x` (or `×`), each a whole number of at least 1.
fn sides<const N: usize>(s: &str, expected: &str) -> Result<[usize; N], String> {
    let parts: Vec<&str> = s.split(['x', '×']).collect();
    if parts.len() != N {
        return Err(format!(
            "{} side(s) given, {N} expected: {expected}",
            parts.len()
        ));
    }
    let mut out = [0; N];
    for (o, p) in out.iter_mut().zip(&parts) {
        *o = positive::<usize>(p).map_err(|e| format!("side `{}`: {e}", p.trim()))?;
    }
    Ok(out)
}

/// The adapter chosen by `--adapter` (or `$LBM_GPU_ADAPTER`, else the best).
pub fn open_context(a: &BenchArgs) -> Result<Arc<GpuContext>, gpu::GpuError> {
    GpuContext::new(&open_options(a)).map(Arc::new)
}

/// The options of the adapter chosen by `--adapter` (or `$LBM_GPU_ADAPTER`, else the best).
pub fn open_options(a: &BenchArgs) -> GpuOptions {
    let choice = a
        .adapter
        .as_deref()
        .map_or_else(AdapterChoice::from_env, AdapterChoice::parse);
    GpuOptions {
        adapter: choice,
        bounds_checks: a.gpu_bounds_checks,
        ..GpuOptions::default()
    }
}

/// A cut, `AxB` or `AxBxC` ([`lbm::blocks::Cut`]'s form).
fn parse_cut(s: &str) -> Result<lbm::blocks::Cut, String> {
    s.parse()
}
