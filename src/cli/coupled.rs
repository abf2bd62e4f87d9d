//! `lbm run rayleigh-benard`: the case of two coupled lattices (a D2Q9 flow and a D2Q5
//! temperature, [`crate::Coupled`]) run to the end of the plan on the CPU, the GPU or both
//! (hetero), in one process or over MPI ranks (each rank holding its slab of both lattices),
//! with a diagnostics table (Nusselt and Reynolds numbers, the rolls' amplitude), images of the
//! temperature, checkpoints of both lattices and a summary against published data. Rank 0
//! prints and writes the table and the images; the sums of the diagnostics are added in the
//! same order on any number of ranks.
//!
//! Outputs, in the output directory: `rayleigh-benard_diagnostics.csv`,
//! `rayleigh-benard_T_<step>.png`, and with checkpoints on `rayleigh-benard_checkpoint.lbm`, one
//! set of both lattices' checkpoints (atomic as a whole; resume with
//! `--resume <out>/rayleigh-benard_checkpoint.lbm`).

use std::path::{Path, PathBuf};

use lbm::backend::{Backend, build};
use lbm::cases::{CLEVER_BUSSE_NUSSELT, CRITICAL_RAYLEIGH, RayleighBenard};
use lbm::driver::{Due, Run, Schedule};
use lbm::group::Group;
use lbm::memory::Need;
use lbm::models::{D2Q5AdvectionDiffusion, D2Q9Boussinesq};
use lbm::output::{Table, png};
use lbm::{Coupled, Layout, Real, Soa, Solver};

use super::lattice_run::together;
use super::out_dir::{missing_dirs, prepare_out_dir, remove_if_empty, write_stamp};
use super::plan::{Plan, backend, check_about};
use super::settings::BackendArg;
use super::{CliError, Generic, GenericReal, World, dispatch_real, dispatch_vl};

/// The case's name, in file names.
const NAME: &str = "rayleigh-benard";

/// Runs the Rayleigh–Bénard case as `plan` says: on one process or over MPI ranks, each
/// process's lattices (or slabs of them) on its host, its GPU or split between the two.
pub fn rayleigh_benard(world: &World, plan: &Plan, case: RayleighBenard) -> Result<(), CliError> {
    let backend = backend(world, plan)?;
    let about = match &plan.resume {
        Some(path) => {
            let about = lbm::read_set(path)?.about;
            check_about(path, &about, NAME, &format!("{case:?}"))?;
            Some(about)
        }
        None => None,
    };
    let flow = case.specs().0;
    let blocks = plan.decomposition(world.group().ranks(), flow.size(), 2);
    let counts = world.spread(&flow, blocks)?;
    // Before the output directory is touched: a run that does not fit changes nothing.
    let memory = dispatch_real(
        plan.precision,
        MemoryCheck {
            world,
            plan: (plan, &counts),
            size: case.size(),
            device_in_host_memory: backend.in_host_memory(),
        },
    )?;
    // A run refused before it writes anything leaves no directory behind.
    let created = missing_dirs(&plan.out);
    let result = (|| {
        let root = world.group().is_root();
        let run = prepare_out_dir(plan, NAME, about.as_ref(), root);
        let plan = &Plan {
            run: world.all_ok(run, "rank 0 refused the output directory")?,
            memory,
            ..plan.clone()
        };
        let job = Job {
            world,
            plan,
            case: &case,
            backend,
            counts: &counts,
        };
        match plan.backend {
            BackendArg::Gpu => dispatch_real(plan.precision, job),
            _ => dispatch_vl(plan.layout, plan.vl, plan.precision, job),
        }
    })();
    if result.is_err() {
        remove_if_empty(&created);
    }
    result
}

/// The memory check of the two lattices in the precision chosen at run time.
struct MemoryCheck<'a> {
    world: &'a World,
    /// The plan, and the blocks each process runs.
    plan: (&'a Plan, &'a [usize]),
    size: (usize, usize),
    device_in_host_memory: bool,
}

impl GenericReal for MemoryCheck<'_> {
    type Output = Result<Need, CliError>;

    fn run<T: Real>(self) -> Self::Output {
        super::memory::check_coupled::<D2Q9Boussinesq, D2Q5AdvectionDiffusion, T>(
            self.world,
            self.plan,
            self.size,
            self.device_in_host_memory,
        )
    }
}

/// The run, with a layout (host backends) and a precision chosen at run time.
struct Job<'a> {
    world: &'a World,
    plan: &'a Plan,
    case: &'a RayleighBenard,
    backend: Backend,
    /// The blocks each process runs ([`World::spread`]).
    counts: &'a [usize],
}

impl Job<'_> {
    /// Builds both lattices on the backend and runs them.
    fn build_and_run<L: Layout, T: Real>(self) -> Result<(), CliError> {
        let (world, plan, case, backend) = (self.world, self.plan, self.case, &self.backend);
        let (flow, heat) = case.specs();
        let blocks = plan.decomposition(world.group().ranks(), flow.size(), 2);
        world.on_blocks(self.counts, |[on_flow, on_heat]| {
            let flow = build::<_, L, T>(on_flow, flow.clone(), blocks, plan.scheme, backend)?;
            let heat = build::<_, L, T>(on_heat, heat.clone(), blocks, plan.scheme, backend)?;
            drive(plan, case, case.couple(flow, heat)?)
        })
    }
}

impl Generic for Job<'_> {
    type Output = Result<(), CliError>;

    /// The host backends: the CPU alone (`cpu`), or split with a GPU (`hetero`).
    fn run<L: Layout, T: Real>(self) -> Self::Output {
        self.build_and_run::<L, T>()
    }
}

impl GenericReal for Job<'_> {
    type Output = Result<(), CliError>;

    /// The GPU backend (the layout is data there).
    fn run<T: Real>(self) -> Self::Output {
        self.build_and_run::<Soa, T>()
    }
}

/// Runs the coupled lattices to `plan.steps`, writing the outputs.
fn drive<A, B>(plan: &Plan, case: &RayleighBenard, mut c: Coupled<A, B>) -> Result<(), CliError>
where
    A: Solver<Model = D2Q9Boussinesq>,
    B: Solver<Model = D2Q5AdvectionDiffusion>,
{
    if let Some(path) = &plan.resume {
        c.restore(path)?;
    }
    let (lx, ly) = case.size();
    let root = c.first().group().is_root();
    let start = c.steps_done();
    // Caught from here on: the first line printed below says the run is under way.
    let signals = super::signals();
    if root {
        say!(
            "{NAME}: D2Q9Boussinesq + D2Q5AdvectionDiffusion {lx} × {ly}, Ra = {}, Pr = {}, \
             ν = {:.5}, κ = {:.5}, H²/κ = {:.0} steps; {}",
            case.rayleigh,
            case.prandtl,
            case.viscosity(),
            case.diffusivity(),
            case.diffusion_time(),
            c.first().describe()
        );
        if start > 0 {
            say!("resumed at step {start}");
        }
    }
    let csv = plan.out.join(format!("{NAME}_diagnostics.csv"));
    let table = Table {
        name: "diagnostics",
        columns: vec!["step", "time", "nusselt", "reynolds", "amplitude"],
        rows: earlier_rows(&csv, start),
    };
    let stamped = match root {
        true => write_stamp(plan, NAME, &format!("{case:?}")),
        false => Ok(()),
    };
    together(c.first(), stamped)?;
    let mut run = CoupledRun {
        plan,
        case,
        c,
        table,
    };
    run.write()?;
    // A row and an image at each output (0: the first and the last step only).
    let schedule = Schedule {
        diagnostics_every: 0,
        ..plan.schedule()
    };
    let o = lbm::driver::drive(&mut run, &schedule, &signals, root)?;
    let CoupledRun { c, table, .. } = run;
    if root && let Some(why) = o.reason() {
        say!("{why}");
    }
    summary(plan, case, &c, &table, o.stepping.as_secs_f64(), start)?;
    CliError::unless_stopped(
        &o,
        (plan.checkpoint_every > 0).then(|| checkpoint_path(plan)),
    )
}

/// The checkpoint set of both lattices in the output directory.
fn checkpoint_path(plan: &Plan) -> PathBuf {
    plan.out.join(format!("{NAME}_checkpoint.lbm"))
}

/// The coupled lattices and their table, as the library's loop drives them.
struct CoupledRun<'a, A: Solver, B: Solver> {
    plan: &'a Plan,
    case: &'a RayleighBenard,
    c: Coupled<A, B>,
    table: Table,
}

impl<A, B> CoupledRun<'_, A, B>
where
    A: Solver<Model = D2Q9Boussinesq>,
    B: Solver<Model = D2Q5AdvectionDiffusion>,
{
    fn write(&mut self) -> Result<(), CliError> {
        write(self.plan, self.case, &mut self.c, &mut self.table)
    }
}

impl<A, B> Run for CoupledRun<'_, A, B>
where
    A: Solver<Model = D2Q9Boussinesq>,
    B: Solver<Model = D2Q5AdvectionDiffusion>,
{
    type Error = CliError;

    /// Site updates of both lattices.
    fn nodes(&self) -> usize {
        let (lx, ly) = self.case.size();
        2 * lx * ly
    }

    fn steps_done(&self) -> u64 {
        self.c.steps_done()
    }

    fn advance(&mut self, n: u64) -> Result<(), CliError> {
        Ok(self.c.advance(n)?)
    }

    fn check(&mut self) -> Result<(), CliError> {
        Ok(self.c.check()?)
    }

    fn group(&self) -> &dyn Group {
        self.c.first().group()
    }

    fn record(&mut self, at: Due) -> Result<(), CliError> {
        match at.output {
            true => self.write(),
            false => Ok(()),
        }
    }

    /// Both lattices' checkpoints as one set, saying which run and case they are of.
    fn checkpoint(&mut self) -> Result<(), CliError> {
        let about = super::lattice_run::about(self.plan, NAME, self.case);
        Ok(self
            .c
            .write_checkpoint_about(&checkpoint_path(self.plan), &about)?)
    }
}

/// The rows of an earlier run's diagnostics before step `start` (a resumed run keeps them),
/// none when there is no such file or the run starts afresh.
fn earlier_rows(csv: &Path, start: u64) -> Vec<Vec<f64>> {
    if start == 0 {
        return Vec::new();
    }
    let text = std::fs::read_to_string(csv).unwrap_or_default();
    text.lines()
        .skip(1)
        .filter_map(|line| {
            line.split(',')
                .map(|v| v.trim().parse::<f64>().ok())
                .collect::<Option<Vec<f64>>>()
        })
        .filter(|row| row.len() == 5 && row[0] < start as f64)
        .collect()
}

/// A diagnostics row (printed, and the table rewritten) and the temperature's image.
fn write<A, B>(
    plan: &Plan,
    case: &RayleighBenard,
    c: &mut Coupled<A, B>,
    table: &mut Table,
) -> Result<(), CliError>
where
    A: Solver<Model = D2Q9Boussinesq>,
    B: Solver<Model = D2Q5AdvectionDiffusion>,
{
    let [flow, mut heat] = c.output_moments()?;
    let m = case.convection(c, &[flow, heat.clone()])?;
    let step = c.steps_done();
    let time = step as f64 / case.diffusion_time();
    table
        .rows
        .push(vec![step as f64, time, m.nusselt, m.reynolds, m.mode]);
    let t = heat.swap_remove(0);
    let Some(t) = c.first().group().gather(t) else {
        return together(c.first(), Ok(()));
    };
    let written: Result<(), CliError> = (|| {
        say!(
            "step {step} (t = {time:.3} H²/κ): Nu = {:.4}, Re = {:.3}, amplitude {:.3e}",
            m.nusselt,
            m.reynolds,
            m.mode
        );
        table.write(&plan.out.join(format!("{NAME}_diagnostics.csv")))?;
        let (lx, ly) = case.size();
        // The field is stored x-major (`[x·LY + y]`), as the images take it.
        png::write_field(
            &plan.out.join(format!("{NAME}_T_{step}.png")),
            &t,
            lx,
            ly,
            (-0.5 * lbm::cases::DELTA_T, 0.5 * lbm::cases::DELTA_T),
        )?;
        Ok(())
    })();
    together(c.first(), written)
}

/// The comparison with linear stability or Clever & Busse, and the speed.
fn summary<A: Solver, B: Solver>(
    plan: &Plan,
    case: &RayleighBenard,
    c: &Coupled<A, B>,
    table: &Table,
    seconds: f64,
    start: u64,
) -> Result<(), CliError> {
    // Every rank's peak memory, on every rank (collective), before the root reports.
    let peaks = (c.first().group()).each_process(lbm::memory::peak_resident().unwrap_or(0));
    if !c.first().group().is_root() {
        return Ok(());
    }
    let speed = || speed(plan, case, c, seconds, start, &peaks);
    let [.., before, last] = &table.rows[..] else {
        return speed();
    };
    let (nusselt, time) = (last[2], last[1]);
    // Nu moving by more than 0.1 % between the last two outputs: the rolls are still growing
    // (they settle within about one diffusion time).
    if (nusselt - before[2]).abs() > 1e-3 * nusselt {
        say!(
            "not steady yet at t = {time:.3} H²/κ (Nu moved from {:.4} to {nusselt:.4} since the \
             previous output): no comparison; run at least one diffusion time",
            before[2]
        );
        return speed();
    }
    if case.rayleigh < CRITICAL_RAYLEIGH {
        say!(
            "below onset (Ra_c = {CRITICAL_RAYLEIGH}): Nu = {nusselt:.6}, conduction (Nu = 1) expected"
        );
    } else if let Some((_, nu)) = CLEVER_BUSSE_NUSSELT
        .iter()
        .find(|(ra, _)| *ra == case.rayleigh && case.prandtl == 0.71)
    {
        say!(
            "Nu = {nusselt:.4}; Clever & Busse (1974), steady rolls at Ra = {}, Pr = 0.71: {nu} ({:+.2} %)",
            case.rayleigh,
            (nusselt / nu - 1.0) * 100.0
        );
    } else {
        say!(
            "Nu = {nusselt:.4} (Clever & Busse tabulate Pr = 0.71 at Ra = {})",
            CLEVER_BUSSE_NUSSELT
                .iter()
                .map(|(ra, _)| format!("{ra}"))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    speed()
}

/// The speed of the coupled steps, and the peak memory beside its estimate.
fn speed<A: Solver, B: Solver>(
    plan: &Plan,
    case: &RayleighBenard,
    c: &Coupled<A, B>,
    seconds: f64,
    start: u64,
    peaks: &[u64],
) -> Result<(), CliError> {
    let (lx, ly) = case.size();
    let updates = (c.steps_done() - start) as f64 * (lx * ly) as f64 * 2.0;
    if seconds > 0.0 {
        say!(
            "{} steps of both lattices in {seconds:.2} s: {:.1} MLUPS (site updates of the two \
             lattices, the exchange of fields included)",
            c.steps_done() - start,
            updates / seconds / 1e6
        );
    }
    let gib = lbm::memory::in_gib;
    let ranks: Vec<String> = peaks
        .iter()
        .enumerate()
        .map(|(r, &peak)| match peaks.len() {
            1 => format!("{:.3} GiB", gib(peak)),
            _ => format!("rank {r} {:.3} GiB", gib(peak)),
        })
        .collect();
    say!(
        "peak memory (VmHWM): {} (estimated {:.3} GiB a process)",
        ranks.join(", "),
        gib(plan.memory.total())
    );
    Ok(())
}
