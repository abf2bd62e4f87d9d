//! `lbm run fd-cavity`: the lid-driven cavity by finite differences ([`lbm::fd_cavity`]),
//! marched to its steady state on the CPU or a GPU (of one process, or of MPI's ranks, each a
//! block of a cut along x and y: `--cut AxB`) or on both (the first and last rows on the host, the others on the GPU), its centre lines written as CSV and compared with Ghia et al. (1982), the speed and
//! velocity drawn as PNG images, the final state written as VTK image data (`fd-cavity_fields.vti`:
//! the pressure and the velocity, each node a cell of side h centred on it). With
//! `--checkpoint-every N` the state is kept in `fd-cavity_checkpoint.lbm` every N steps, at the
//! end and when a signal stops the run (SIGINT, SIGTERM, SIGHUP); `--resume` continues from it on any processes or backend.

use std::path::{Path, PathBuf};

use lbm::backend::Backend;
use lbm::blocks::{Blocks, Cut};
use lbm::cavity::{GHIA_RE, compare_node_lines, ghia};
use lbm::driver::{Due, Ended, Run, Schedule};
use lbm::fd::{FdLayout, FdRun};
use lbm::fd_cavity::{FdCavity, Scheme};
use lbm::gpu::AdapterChoice;
use lbm::group::Group;
use lbm::hetero::SplitChoice;
use lbm::output::png::{range, write_field};
use lbm::output::{Fields, Table, vtk};
use lbm::{LayoutKind, Real};

use super::out_dir::{missing_dirs, remove_if_empty};
use super::plan::open_backend;
use super::settings::{BackendArg, Checks, Settings, bad};
use super::{CliError, LayoutArg, Precision, World};

/// The keys `fd-cavity` reads; every other key given is refused.
const KEYS: [&str; 17] = [
    "case",
    "lx",
    "ly",
    "re",
    "steps",
    "until-steady",
    "check-every",
    "out",
    "images",
    "precision",
    "backend",
    "adapter",
    "vtk-zlib",
    "checkpoint-every",
    "host-columns",
    "layout",
    "cut",
];

/// The largest cell Reynolds number `Re/(N − 1)` a run is allowed.
const MAX_CELL_RE: f64 = 16.0;

/// The fields the images may show.
const IMAGES: [&str; 4] = ["speed", "ux", "uy", "p"];

/// The checkpoint's name in the output directory.
const CHECKPOINT: &str = "fd-cavity_checkpoint.lbm";

/// Runs the case: `n` nodes per side, up to step `max_steps` (from the checkpoint `resume`,
/// if given).
pub fn run(
    world: &World,
    s: &Settings,
    (n, max_steps): (usize, u64),
    resume: Option<&Path>,
    force: bool,
) -> Result<(), CliError> {
    let mut c = Checks::default();
    for key in s.keys() {
        if !KEYS.contains(&key.as_str()) {
            c.keep(bad(
                &key,
                format!(
                    "does not apply to fd-cavity, a finite-difference run (its keys: {})",
                    KEYS[1..].join(", ")
                ),
            ));
        }
    }
    let backend = s.backend.unwrap_or(BackendArg::Cpu);
    let device = backend != BackendArg::Cpu;
    let split = backend == BackendArg::Hetero;
    if s.adapter.is_some() && !device {
        c.keep(bad(
            "adapter",
            "chooses the GPU of --backend gpu or hetero: drop it, or add --backend gpu",
        ));
    }
    let layout = match s.layout {
        None => FdLayout::Soa,
        Some(l) => fd_layout(l).unwrap_or_else(|| {
            c.keep(bad(
                "layout",
                "csoa: fd-cavity's soa is processed in clusters of 8 nodes along x already: give soa, aos or caosoa",
            ));
            FdLayout::Soa
        }),
    };
    let cut = match &s.cut {
        None if split => Cut::along(1, world.group().ranks()),
        None => Cut::balanced(world.group().ranks(), 2, [n, n, 1], 1),
        Some(text) => match text.parse::<Cut>() {
            Ok(cut) if cut.0[2] > 1 => {
                c.keep(bad(
                    "cut",
                    format!("{cut}: fd-cavity is two-dimensional: give AxB"),
                ));
                Cut::WHOLE
            }
            Ok(cut) if cut.blocks() != world.group().ranks() => {
                c.keep(bad(
                    "cut",
                    format!(
                        "{cut} makes {} blocks, but the run has {} ranks: give a cut of {} blocks (one a rank)",
                        cut.blocks(),
                        world.group().ranks(),
                        world.group().ranks()
                    ),
                ));
                Cut::WHOLE
            }
            Ok(cut) => cut,
            Err(e) => {
                c.keep(bad("cut", e));
                Cut::WHOLE
            }
        },
    };
    if s.host_columns.is_some() && backend != BackendArg::Hetero {
        c.keep(bad(
            "host-columns",
            "applies to backend hetero only (fd-cavity's rows on the host at each end)",
        ));
    }
    if n < 5 {
        c.keep(bad("lx", format!("{n} nodes per side are too few: give at least 5 (the pressure damping's stencil reaches 2 nodes)")));
    }
    let re = s.re.unwrap_or(100.0);
    if !(re.is_finite() && re > 0.0) {
        c.keep(bad(
            "re",
            format!("{re} is not a Reynolds number: give a positive one"),
        ));
    }
    // The cell Reynolds number U h / ν: central differences of the advection oscillate from
    // node to node when it is large (7.8 at Re = 1000 on 129² nodes still meets Ghia within
    // 0.025; far beyond it the run neither converges nor means anything).
    let cell_re = re / (n.max(2) - 1) as f64;
    if re.is_finite() && n >= 5 && cell_re > MAX_CELL_RE {
        c.keep(bad(
            "lx",
            format!(
                "{n} nodes per side are too few for Re = {re}: the cell Reynolds number Re/(N − 1) = {cell_re:.1} exceeds {MAX_CELL_RE}, where central differences oscillate; give --lx {} or more",
                (re / MAX_CELL_RE).ceil() as u64 + 1
            ),
        ));
    }
    let tol = s.until_steady.unwrap_or(1e-6);
    if !(tol.is_finite() && tol > 0.0) {
        c.keep(bad(
            "until-steady",
            format!("{tol}: give a positive tolerance on the velocity's rates"),
        ));
    }
    if max_steps == 0 {
        c.keep(bad(
            "steps",
            "0: give a positive number of steps (the run stops earlier when steady)",
        ));
    }
    let interval = s.check_every.unwrap_or(500);
    if interval == 0 {
        c.keep(bad("check-every", "0: give a positive number of steps"));
    }
    let images: Vec<String> = s
        .images
        .clone()
        .unwrap_or_else(|| vec!["speed".to_string()])
        .into_iter()
        .filter(|i| !i.is_empty())
        .collect();
    for i in &images {
        if !IMAGES.contains(&i.as_str()) {
            c.keep(bad(
                "images",
                format!(
                    "`{i}` is not a field of fd-cavity: choose from {}",
                    IMAGES.join(", ")
                ),
            ));
        }
    }
    let precision = s.precision.unwrap_or(Precision::F64);
    if precision == Precision::F16s {
        c.keep(bad(
            "precision",
            "f16s stores lattice Boltzmann populations; fd-cavity runs in f64 or f32",
        ));
    }
    let out = s.out.clone().unwrap_or_else(|| "out/fd-cavity".into());
    let table = out.join("fd-cavity_centrelines.csv");
    // The outputs of the run a checkpoint in `out` belongs to are that run's: its resume
    // replaces them.
    let own = resume.is_some_and(|r| r.parent() == Some(out.as_path()));
    if table.exists() && !force && !own {
        c.keep(bad(
            "out",
            format!(
                "{} holds the outputs of an earlier run: give another --out, or --force to replace them",
                out.display()
            ),
        ));
    }
    c.done()?;
    // A run refused before it writes anything leaves no directory behind.
    let created = missing_dirs(&out);
    let result = (|| {
        let root = world.group().is_root();
        let claimed = super::out_dir::claim(&out, "fd-cavity", root);
        world.all_ok(claimed, "rank 0 could not claim the output directory")?;
        if force && root {
            remove_outputs(&out)?;
        }
        let cavity = FdCavity::new(n, re);
        let goal = Goal {
            tol,
            interval,
            max_steps,
            checkpoint_every: s.checkpoint_every.unwrap_or(0),
            resume,
            images: &images,
            out: &out,
            zlib: s.vtk_zlib.unwrap_or(false),
        };
        let ranks = match world.group().ranks() {
            1 => String::new(),
            r => format!(", {r} ranks cut {}x{}", cut.0[0], cut.0[1]),
        };
        let blocks = Blocks::even([n, n, 1], cut);
        let adapter = s
            .adapter
            .as_deref()
            .map_or_else(AdapterChoice::from_env, AdapterChoice::parse);
        let split = s
            .host_columns
            .map_or(SplitChoice::Auto, SplitChoice::Columns);
        let backend = open_backend(world, backend, adapter, LayoutKind::Soa, split)?;
        let grid = Grid {
            world,
            cavity: &cavity,
            blocks,
            layout,
            backend: &backend,
        };
        match precision {
            Precision::F32 => grid.run::<f32>(&goal, &ranks),
            _ => grid.run::<f64>(&goal, &ranks),
        }
    })();
    if result.is_err() {
        remove_if_empty(&created);
    }
    result
}

/// The finite-difference layout of `--layout` (`None` for csoa: the soa grid is processed in
/// clusters already).
pub(super) fn fd_layout(layout: LayoutArg) -> Option<FdLayout> {
    match layout {
        LayoutArg::Soa => Some(FdLayout::Soa),
        LayoutArg::Aos => Some(FdLayout::Aos),
        LayoutArg::Caosoa => Some(FdLayout::Clustered),
        LayoutArg::Csoa => None,
    }
}

/// What a run is asked to do beside its grid.
struct Goal<'a> {
    tol: f64,
    interval: u64,
    max_steps: u64,
    /// Steps between checkpoints (0: none).
    checkpoint_every: u64,
    /// The checkpoint to continue from.
    resume: Option<&'a Path>,
    images: &'a [String],
    out: &'a std::path::Path,
    /// Compress the VTK file with zlib.
    zlib: bool,
}

/// The cavity's grid as the run builds it: its blocks among the processes, their layout on the
/// host and the backend.
struct Grid<'a> {
    world: &'a World,
    cavity: &'a FdCavity,
    blocks: Blocks,
    layout: FdLayout,
    backend: &'a Backend,
}

impl Grid<'_> {
    /// Builds the grid in precision `T` and runs it to the `goal`: each block of the
    /// processes on its backend, and where the backend is the host/device split each of its
    /// three parts on a thread of its own ([`lbm::backend::fd_parts`]). `ranks` says how the
    /// processes cut it.
    fn run<T: Real>(&self, goal: &Goal, ranks: &str) -> Result<(), CliError> {
        let counts = vec![lbm::backend::fd_parts(self.backend); self.world.group().ranks()];
        let on = match self.backend {
            Backend::Split { gpu, choice } => format!(
                ", split: {} rows at each end of each block on the host, the others on {}",
                lbm::backend::fd_host_planes::<Scheme, T>(*choice, self.cavity.n),
                gpu.context()?.describe()
            ),
            _ => String::new(),
        };
        let precision = T::NAME;
        self.world.on_blocks(&counts, |[carrier]| {
            let g = (self.cavity).build::<T>(
                carrier,
                self.blocks.clone(),
                self.layout,
                self.backend,
            )?;
            let on = match on.is_empty() {
                true => format!(", {}{ranks}", g.describe()),
                false => format!("{on}{ranks}"),
            };
            drive(self.cavity, goal, g, &on, precision)
        })
    }
}

/// Runs the cavity on `g` (`on` says where, `precision` in what).
fn drive(
    cavity: &FdCavity,
    goal: &Goal,
    mut g: Box<dyn FdRun>,
    on: &str,
    precision: &str,
) -> Result<(), CliError> {
    let Goal {
        tol,
        interval,
        max_steps,
        checkpoint_every,
        resume,
        images,
        out,
        zlib,
    } = *goal;
    let n = cavity.n;
    let root = g.group().is_root();
    if let Some(path) = resume {
        g.resume(path)?;
        if g.steps() >= max_steps {
            return Err(bad(
                "steps",
                format!(
                    "{max_steps}: the checkpoint {} is at step {} already; give more steps to continue",
                    path.display(),
                    g.steps()
                ),
            ));
        }
    }
    // Caught from here on: the first line printed below says the run is under way.
    let signals = super::signals();
    if root {
        say!(
            "fd-cavity: {n} × {n} nodes, Re = {}, {} ({} flops and {} reads per node), Δt = {:.3e}, {}{on}",
            cavity.re,
            <Scheme as lbm::fd::FdScheme>::NAME,
            <Scheme as lbm::fd::FdScheme>::FLOPS,
            <Scheme as lbm::fd::FdScheme>::LOADS.len(),
            cavity.time_step(),
            precision
        );
        if let Some(path) = resume {
            say!(
                "resumed from {} at step {} (t = {:.2})",
                path.display(),
                g.steps(),
                g.time()
            );
        }
    }
    let checkpoint = out.join(CHECKPOINT);
    let first = g.steps();
    let schedule = Schedule {
        steps: max_steps,
        check_every: interval,
        checkpoint_every,
        ..Schedule::default()
    };
    let mut run = Marching {
        g,
        dt: cavity.time_step(),
        tol,
        nodes: n * n,
        checkpoint: checkpoint.clone(),
    };
    let o = lbm::driver::drive(&mut run, &schedule, &signals, root)?;
    let mut g = run.g;
    let (seconds, writing) = (o.stepping.as_secs_f64(), o.writing.as_secs_f64());
    let steps = g.steps();
    let rates = g.max_rates()?;
    // Every field the outputs need, gathered on rank 0 (collective).
    let (p, ux, uy) = (g.gather(0)?, g.gather(1)?, g.gather(2)?);
    let ended = CliError::unless_stopped(&o, (checkpoint_every > 0).then(|| checkpoint.clone()));
    let (Some(p), Some(ux), Some(uy)) = (p, ux, uy) else {
        return ended;
    };
    let state = match o.ended {
        Ended::Finished => "not steady yet".to_string(),
        Ended::Steady => "steady".to_string(),
        _ => o.reason().unwrap_or_default(),
    };
    say!(
        "{state} after {steps} steps (t = {:.2}): max |∂u/∂t| = {:.2e}, max |∂v/∂t| = {:.2e}",
        g.time(),
        rates[1],
        rates[2]
    );
    let nodes = (n * n) as f64 * (steps - first) as f64;
    let checkpoints = if writing > 0.0 {
        format!(" (and {writing:.2} s writing checkpoints)")
    } else {
        String::new()
    };
    say!(
        "{:.2} s{checkpoints}, {:.1} M node updates/s, {:.2} GB/s of the registers' minimal traffic",
        seconds,
        nodes / seconds / 1e6,
        nodes * g.bytes_per_node() as f64 / seconds / 1e9
    );
    let (u, v) = cavity.centre_lines_of(&ux, &uy);
    let h = cavity.h();
    Table {
        name: "centrelines",
        columns: vec!["s", "u_on_x_half", "v_on_y_half"],
        rows: (0..n).map(|i| vec![i as f64 * h, u[i], v[i]]).collect(),
    }
    .write(&out.join("fd-cavity_centrelines.csv"))?;
    for name in images {
        let field: Vec<f64> = match name.as_str() {
            "speed" => ux.iter().zip(&uy).map(|(a, b)| a.hypot(*b)).collect(),
            "ux" => ux.clone(),
            "uy" => uy.clone(),
            _ => p.clone(),
        };
        write_field(
            &out.join(format!("fd-cavity_{name}.png")),
            &field,
            n,
            n,
            range(&field),
        )?;
    }
    // The final state for ParaView: each node a cell of side h centred on it. The gathered
    // fields run x fastest; `Fields` takes them `[x·N + y]`.
    let by_column =
        |v: &[f64]| -> Vec<f64> { (0..n * n).map(|s| v[(s % n) * n + s / n]).collect() };
    let arrays = vec![
        ("p", by_column(&p)),
        ("ux", by_column(&ux)),
        ("uy", by_column(&uy)),
    ];
    // No sound speed: the lattices' diagnostics, which read it, are not taken of these.
    let fields = Fields::new((n, n), steps, 0.0, arrays).map_err(lbm::Error::from)?;
    vtk::write_piece(
        &out.join("fd-cavity_fields.vti"),
        &fields.with_spacing(h),
        zlib,
    )?;
    let rounded = cavity.re.round();
    if (cavity.re - rounded).abs() < 1e-9 && GHIA_RE.contains(&(rounded as u32)) {
        let d = compare_node_lines(&u, &v, 1.0, &ghia(rounded as u32)?);
        say!(
            "Ghia et al. (1982), Re = {rounded}: max |u − u_ref| = {:.4} on x = ½, max |v − v_ref| = {:.4} on y = ½",
            d.u,
            d.v
        );
    }
    if let Some(peak) = lbm::memory::peak_resident() {
        say!("peak memory (VmHWM): {:.3} GiB", lbm::memory::in_gib(peak));
    }
    say!("outputs in {}", out.display());
    ended
}

/// The grid marching to its steady state, as the library's loop drives it: tested at every
/// check (counted from step 0, so that a resumed run tests where an uninterrupted one does)
/// for rates of the velocity below `tol`. The grid refuses a diverged state as it steps.
struct Marching {
    g: Box<dyn FdRun>,
    dt: f64,
    tol: f64,
    nodes: usize,
    checkpoint: PathBuf,
}

impl Run for Marching {
    type Error = CliError;

    fn nodes(&self) -> usize {
        self.nodes
    }

    fn steps_done(&self) -> u64 {
        self.g.steps()
    }

    fn advance(&mut self, n: u64) -> Result<(), CliError> {
        Ok(self.g.advance(n, self.dt)?)
    }

    fn check(&mut self) -> Result<(), CliError> {
        Ok(())
    }

    fn group(&self) -> &dyn Group {
        self.g.group()
    }

    fn steady(&mut self) -> Result<bool, CliError> {
        Ok(self.g.max_rates()?[1..].iter().all(|&r| r < self.tol))
    }

    /// The outputs are of the final state only, written after the loop.
    fn record(&mut self, _: Due) -> Result<(), CliError> {
        Ok(())
    }

    fn checkpoint(&mut self) -> Result<(), CliError> {
        Ok(self.g.checkpoint(&self.checkpoint)?)
    }
}

/// Removes the outputs of an earlier run (`fd-cavity_*` in `out`), as `--force` says; the
/// checkpoint is kept.
fn remove_outputs(out: &std::path::Path) -> Result<(), CliError> {
    let Ok(entries) = std::fs::read_dir(out) else {
        return Ok(());
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with("fd-cavity_") && !name.starts_with(CHECKPOINT) {
            std::fs::remove_file(e.path()).map_err(|source| CliError::Io {
                path: e.path().display().to_string(),
                source,
            })?;
        }
    }
    Ok(())
}
