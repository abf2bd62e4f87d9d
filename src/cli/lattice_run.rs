//! A lattice case run to the end of its plan on any backend: the library's loop
//! ([`lbm::driver`]) steps it, and this module writes what the case asks for: diagnostics
//! rows, images, VTK pieces and their `.pvti` (`.vtm`)/`.pvd`, tables, the bodies' loads, checkpoints
//! and the summary.

use std::collections::BTreeMap;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use lbm::backend::BoxedSolver;
use lbm::cases::Case;
use lbm::driver::{Due, Run, Schedule, due};
use lbm::group::Group;
use lbm::metrics::measure_peak_flops;
use lbm::output::{Diagnostics, DiagnosticsLog, Fields, png, vtk};
use lbm::{Checkpoint, Model, Placement, Real, Solver};

use super::CliError;
use super::loads::Loads;
use super::plan::Plan;
use super::solver::{Driven, Probes};

/// `result` of an output written by the root, shared by every process: all go on, or all
/// stop with an error.
pub(super) fn together<S: Solver + ?Sized>(
    solver: &S,
    result: Result<(), CliError>,
) -> Result<(), CliError> {
    if solver.group().root_says(result.is_ok()) {
        result
    } else {
        result.and(Err(CliError::OtherRank(
            "rank 0 could not write the outputs".into(),
        )))
    }
}

/// `result` of what every process wrote (its piece of an output), shared: all go on, or all
/// stop with an error.
fn everywhere<S: Solver + ?Sized>(
    solver: &S,
    result: Result<(), CliError>,
) -> Result<(), CliError> {
    if solver.group().any(result.is_err()) {
        result.and(Err(CliError::OtherRank(
            "another rank could not write its piece of the outputs".into(),
        )))
    } else {
        result
    }
}

/// Sets `solver`'s initial state — the checkpoint's when resuming, else the case's — and runs
/// the case on it: the same for every backend. The solver comes boxed from the library's
/// builder ([`lbm::backend::build`]), so the loop, outputs and summary are compiled once per
/// case and precision, not once per backend and layout (they call the solver a few times per
/// chunk of steps).
pub(super) fn start_and_drive<C: Case, T: Real>(
    plan: &Plan,
    case: &C,
    mut solver: BoxedSolver<C::Model, T>,
    checkpoint: Option<(&Path, &Checkpoint<C::Model, T>)>,
) -> Result<(), CliError> {
    match checkpoint {
        Some((path, c)) => lbm::solver::restore(&mut *solver, c, path)?,
        None => solver.set_equilibrium_at(&case.initial())?,
    }
    drive::<C, T>(plan, case, solver)
}

/// Runs `case` on `solver` to the end of the plan.
pub fn drive<C: Case, T: Real>(
    plan: &Plan,
    case: &C,
    mut solver: BoxedSolver<C::Model, T>,
) -> Result<(), CliError> {
    // Caught from here on: the first line printed below says the run is under way.
    let signals = super::signals();
    let root = solver.group().is_root();
    let start = solver.steps_done();
    let mut out = Outputs::new(plan, case, start)?;
    let stamped = if root {
        super::out_dir::write_stamp(plan, case.name(), &format!("{case:?}"))
    } else {
        Ok(())
    };
    together(&*solver, stamped)?;
    let (lx, ly) = case.size();
    let lz = case.depth();
    let shape = lbm::Extent::of_size([lx, ly, lz]);
    let title = format!(
        "{} {shape}, {}; {}",
        C::Model::NAME,
        solver.storage(),
        solver.describe()
    );
    if root {
        say!("{}: {title}", case.name());
        if start > 0 {
            say!("resumed at step {start}");
        }
    }
    let mut loads = Loads::new(case, &*solver);
    if start == 0 {
        loads.measure(&mut *solver)?;
        out.write(&mut *solver, true, loads.values())?;
    }
    let mut run = CaseRun {
        solver: &mut *solver,
        out,
        loads,
        steady: Steady::new(plan.until_steady, case.velocity_scale()),
        nodes: lx * ly * lz,
    };
    let o = lbm::driver::drive(&mut run, &plan.schedule(), &signals, root)?;
    let CaseRun { out, .. } = run;
    // Read before the probes of the summary, which are not the run's, and which run once the
    // lattice is gone.
    let peaks = (solver.group()).each_process(lbm::memory::peak_resident().unwrap_or(0));
    let estimates = solver.group().each_process(plan.memory.total());
    // The sites the processes update: the box's, or a sparse domain's blocks'.
    let local: usize = solver.local_box().iter().map(|r| r.len()).product();
    let updated = solver.group().sum(vec![local as f64])[0] as usize;
    let probes = solver.probes();
    drop(solver);
    if root {
        if let Some(why) = o.reason() {
            say!("{why}");
        }
        if let Some((step, sums)) = &out.last {
            for line in case.report(*step, sums) {
                say!("{line}");
            }
        }
        for line in case.report_history(&out.history) {
            say!("{line}");
        }
        out.print_files();
        let summary = Summary {
            title: format!("{}, {title}", case.name()),
            sites: updated,
            steps: o.step - start,
            stepping: o.stepping,
            output: out.time,
            bytes_per_site: 2 * C::Model::Q * plan.precision.bytes(),
            flops_per_site: C::Model::collide_flops(&case.params()),
            memory: peaks.into_iter().zip(estimates).collect(),
        };
        summary.print::<T>(&probes)?;
    }
    CliError::unless_stopped(
        &o,
        (plan.checkpoint_every > 0).then(|| out.checkpoint_path()),
    )
}

/// A case on its lattice, as the library's loop drives it.
struct CaseRun<'a, 's, C: Case, T: Real> {
    solver: &'s mut dyn Solver<Model = C::Model, Real = T>,
    out: Outputs<'a, C>,
    loads: Loads,
    steady: Steady,
    nodes: usize,
}

impl<C: Case, T: Real> Run for CaseRun<'_, '_, C, T> {
    type Error = CliError;

    fn nodes(&self) -> usize {
        self.nodes
    }

    fn steps_done(&self) -> u64 {
        self.solver.steps_done()
    }

    fn advance(&mut self, n: u64) -> Result<(), CliError> {
        Ok(self.solver.advance(n)?)
    }

    fn check(&mut self) -> Result<(), CliError> {
        Ok(self.solver.check()?)
    }

    fn group(&self) -> &dyn Group {
        self.solver.group()
    }

    fn steady(&mut self) -> Result<bool, CliError> {
        self.steady.reached(&mut *self.solver)
    }

    /// With bodies, the step before each row (their loads are the mean of two steps) and
    /// the last but one.
    fn pause_after(&self, now: u64, s: &Schedule) -> Option<u64> {
        let rows = [s.output_every, s.diagnostics_every, s.check_every];
        let before = rows
            .iter()
            .filter_map(|&every| self.loads.stop_before(now, every));
        let last_but_one = (self.loads.any() && now + 1 < s.steps).then(|| s.steps - 1);
        before.chain(last_but_one).min()
    }

    fn record(&mut self, at: Due) -> Result<(), CliError> {
        let plan = self.out.plan;
        let rows = [plan.output_every, plan.diagnostics_every, plan.check_every];
        let row = at.output || at.diagnostics;
        let next = at.step + 1;
        if row || rows.iter().any(|&every| due(next, every)) || next == plan.steps {
            self.loads.measure(&mut *self.solver)?;
        }
        if row {
            self.out
                .write(&mut *self.solver, at.output, self.loads.values())?;
        }
        Ok(())
    }

    fn checkpoint(&mut self) -> Result<(), CliError> {
        self.out.checkpoint(&*self.solver)
    }
}

/// The steady-state test: the velocity changes by less than `tol · scale` (max norm) between
/// two checks.
struct Steady {
    tol: Option<f64>,
    scale: f64,
    previous: Option<Vec<f64>>,
}

impl Steady {
    fn new(tol: Option<f64>, scale: f64) -> Self {
        Self {
            tol,
            scale,
            previous: None,
        }
    }

    /// Whether the velocity of every rank's piece changed by less than the tolerance since
    /// the last check (collective).
    fn reached<S: Solver + ?Sized>(&mut self, solver: &mut S) -> Result<bool, CliError> {
        let Some(tol) = self.tol else {
            return Ok(false);
        };
        let f = solver.fields()?;
        let u: Vec<f64> = ["ux", "uy", "uz"]
            .iter()
            .filter_map(|n| f.moment(n))
            .flatten()
            .copied()
            .collect();
        let change = self.previous.as_ref().map(|p| {
            p.iter()
                .zip(&u)
                .map(|(a, b)| (a - b).abs())
                .fold(0.0, f64::max)
        });
        self.previous = Some(u);
        let change = change.map(|c| solver.group().max(vec![c])[0]);
        Ok(change.is_some_and(|c| c < tol * self.scale))
    }
}

/// The files of a run.
struct Outputs<'a, C: Case> {
    plan: &'a Plan,
    case: &'a C,
    log: DiagnosticsLog,
    series: vtk::Series,
    written: usize,
    /// The step of the last output and the case's sums then (for its report).
    last: Option<(u64, Vec<f64>)>,
    /// The case's diagnostics columns of every row, with its step.
    history: Vec<(u64, Vec<(&'static str, f64)>)>,
    /// The solid sites of the case's bodies on this process's planes (1, else 0), a field
    /// of the VTK files: made at the first that is written.
    solid: Option<Vec<f64>>,
    /// Time spent writing.
    time: Duration,
}

impl<'a, C: Case> Outputs<'a, C> {
    fn new(plan: &'a Plan, case: &'a C, start: u64) -> Result<Self, CliError> {
        let path = plan.out.join(format!("{}_diagnostics.csv", case.name()));
        let series = plan.out.join(format!("{}.pvd", case.name()));
        let (log, series) = if start > 0 {
            (
                DiagnosticsLog::resume(&path, start)?,
                vtk::Series::resume(&series, start),
            )
        } else {
            (DiagnosticsLog::new(&path), vtk::Series::new(&series))
        };
        Ok(Self {
            plan,
            case,
            log,
            series,
            written: 0,
            last: None,
            history: Vec::new(),
            solid: None,
            time: Duration::ZERO,
        })
    }

    fn file(&self, name: String) -> PathBuf {
        self.plan.out.join(name)
    }

    fn checkpoint_path(&self) -> PathBuf {
        self.file(format!("{}_checkpoint.lbm", self.case.name()))
    }

    /// The diagnostics row, and with `files` the images and the VTK dataset, of the current
    /// step (collective): diagnostics are reductions of every rank's sums, images are drawn on
    /// the root from fields sampled to at most [`png::IMAGE_SIDE`] pixels a side, and every
    /// rank writes its own VTK piece. All ranks go on, or all stop with the error. `loads`
    /// (this process's share of the bodies' loads) follow the case's sums.
    fn write<S: Solver + ?Sized>(
        &mut self,
        solver: &mut S,
        files: bool,
        loads: &[f64],
    ) -> Result<(), CliError> {
        let vtk = files && self.plan.vtk;
        let t = Instant::now();
        // A VTK piece a block (a block that holds no whole columns, cut along y or z or of a
        // sparse domain, writes its own sites, and the planes the other outputs read are
        // moved from them).
        let own = solver.local_box();
        let whole = lbm::planes::whole_planes(&own, solver.extent().size());
        let (mut piece, mut block) = match vtk && !whole {
            true => {
                let block = solver.block_fields()?;
                (solver.fields_from_blocks(&block)?, Some(block))
            }
            false => (solver.fields()?, None),
        };
        if vtk && !self.case.bodies().is_empty() {
            let (lx, ly) = self.case.size();
            let size = [lx, ly, self.case.depth()];
            let cells = block.as_ref().unwrap_or(&piece).cells().clone();
            let solid = (self
                .solid
                .get_or_insert_with(|| solid_sites(self.case, size, &cells)))
            .clone();
            match block {
                Some(b) => block = Some(b.with_field("solid", solid)?),
                None => piece = piece.with_field("solid", solid)?,
            }
        }
        if self.case.needs_neighbour_columns() {
            let beside = solver.neighbour_columns(piece.end_columns());
            piece = piece.with_neighbours(beside)?;
        }
        let step = piece.step;
        let mut d = Diagnostics::of(&piece, self.case.time_unit(), Vec::new());
        let mut sums = d.sums().to_vec();
        sums.extend(self.case.sums(&piece));
        sums.extend(loads);
        let sums = solver.group().sum(sums);
        d.set_sums(&sums);
        d.max_mach = solver.group().max(vec![d.max_mach])[0];
        let case_sums = sums[d.sums().len()..].to_vec();
        d.extra = self.case.extra_diagnostics(step, &case_sums);
        if self.history.last().is_none_or(|(s, _)| *s < step) {
            self.history.push((step, d.extra.clone()));
        }
        // Collective; an error (the root's) is reported with the root's other outputs below.
        let images = if files {
            self.images(solver, &piece)
        } else {
            Ok(None)
        };
        let name = self.case.name();
        let pieces = format!("{name}_pieces");
        let source = |rank: usize| format!("{pieces}/{name}_{step:08}_{rank}.vti");
        if vtk {
            let mine = (|| {
                std::fs::create_dir_all(self.file(pieces.clone())).map_err(|source| {
                    lbm::output::OutputError::Io {
                        path: self.file(pieces.clone()),
                        source,
                    }
                })?;
                vtk::write_piece(
                    &self.file(source(solver.group().rank())),
                    block.as_ref().unwrap_or(&piece),
                    self.plan.vtk_zlib,
                )
            })();
            everywhere(solver, mine.map_err(CliError::from))?;
        }
        let sources: Vec<_> = match vtk {
            true => (solver.boxes_of_ranks().into_iter().enumerate())
                .map(|(r, b)| (b, source(r)))
                .collect(),
            false => Vec::new(),
        };
        let root = (|| {
            if !solver.group().is_root() {
                return Ok(());
            }
            self.log.push(&d)?;
            let images = images?;
            let drawn = self.plan.images.iter().flatten();
            let slice = match piece.lz {
                1 => String::new(),
                _ => {
                    let (axis, at) = self.slice(&piece);
                    format!("_{}{at}", ["x", "y", "z"][axis])
                }
            };
            for (field, f) in drawn.filter_map(|n| Some((n, images.as_ref()?))) {
                let values = f.get(field)?;
                let range = self
                    .case
                    .image_range(field)
                    .unwrap_or_else(|| png::range(&values));
                let path = self.file(format!("{name}_{field}{slice}_{step:08}.png"));
                png::write_field(&path, &values, f.lx, f.ly, range)?;
                self.written += 1;
            }
            for table in files
                .then(|| self.case.tables(step, &case_sums))
                .into_iter()
                .flatten()
            {
                let path = self.file(format!("{name}_{}_{step:08}.csv", table.name));
                table.write(&path)?;
                self.written += 1;
            }
            if vtk {
                let written = block.as_ref().unwrap_or(&piece);
                let stem = self.file(format!("{name}_{step:08}"));
                self.series.add(step, &stem, (written, &sources))?;
                self.written += 1;
            }
            if !files {
                return Ok(());
            }
            let extra: String = d
                .extra
                .iter()
                .map(|(k, v)| format!(", {k} {v:.4}"))
                .collect();
            say!(
                "step {step:>8}: mass {:.12e}, energy {:.9e}, max Mach {:.4}{extra}",
                d.mass,
                d.energy,
                d.max_mach
            );
            Ok(())
        })();
        together(solver, root)?;
        self.last = Some((step, case_sums));
        self.time += t.elapsed();
        Ok(())
    }

    /// The plane of the 3-D lattice of `piece` drawn as images: its axis and position, as
    /// asked or the case's.
    fn slice(&self, piece: &Fields) -> (usize, usize) {
        self.plan.slice.unwrap_or_else(|| {
            let (axis, at) = self.case.slice();
            (axis, at.unwrap_or([piece.lx, piece.ly, piece.lz][axis] / 2))
        })
    }

    /// The moment fields — of the plane [`Plan::slice`] in 3-D — sampled to at most
    /// [`png::IMAGE_SIDE`] pixels a side and gathered on the root, when images are asked for
    /// (collective; `None` elsewhere).
    fn images<S: Solver + ?Sized>(
        &self,
        solver: &S,
        piece: &Fields,
    ) -> Result<Option<Fields>, CliError> {
        if self.plan.images.as_ref().is_none_or(Vec::is_empty) {
            return Ok(None);
        }
        let slice;
        let plane = if piece.lz > 1 {
            let (axis, at) = self.slice(piece);
            slice = piece.slice(axis, at);
            &slice
        } else {
            piece
        };
        let k = png::sampling(plane.lx, plane.ly);
        let sampled = plane.sampled(k);
        let mut gathered = Vec::new();
        for d in sampled.data() {
            gathered.push(solver.group().gather(d.clone()));
        }
        let Some(data) = gathered.into_iter().collect::<Option<Vec<_>>>() else {
            return Ok(None);
        };
        Ok(Some(Fields::assembled(&sampled, data)?))
    }

    fn checkpoint<T: Real>(
        &mut self,
        solver: &dyn Solver<Model = C::Model, Real = T>,
    ) -> Result<(), CliError> {
        let t = Instant::now();
        let path = self.checkpoint_path();
        let about = about(self.plan, self.case.name(), self.case);
        lbm::solver::write_checkpoint_about(solver, &path, &about)?;
        self.time += t.elapsed();
        Ok(())
    }

    fn print_files(&self) {
        let series = if self.plan.vtk {
            format!(", the VTK series in {}", self.series.path().display())
        } else {
            String::new()
        };
        say!(
            "outputs in {}: {} image/VTK/table files, diagnostics in {}{series}",
            self.plan.out.display(),
            self.written,
            self.log.path().display()
        );
    }
}

/// The performance of a run.
struct Summary {
    title: String,
    /// The sites updated each step (a sparse domain's: those of its blocks).
    sites: usize,
    steps: u64,
    stepping: Duration,
    output: Duration,
    bytes_per_site: usize,
    flops_per_site: u64,
    /// Each rank's peak resident memory (VmHWM) and the estimate it was checked with, bytes.
    memory: Vec<(u64, u64)>,
}

impl Summary {
    fn print<T: Real>(&self, probes: &Probes) -> Result<(), CliError> {
        let secs = self.stepping.as_secs_f64();
        say!("summary: {}", self.title);
        say!(
            "  {} steps in {:.2} s ({:.2} s stepping, {:.2} s writing outputs)",
            self.steps,
            secs + self.output.as_secs_f64(),
            secs,
            self.output.as_secs_f64()
        );
        let gib = lbm::memory::in_gib;
        let many = self.memory.len() > 1;
        let ranks: Vec<String> = self
            .memory
            .iter()
            .enumerate()
            .map(|(r, &(peak, est))| {
                let rank = if many {
                    format!("rank {r} ")
                } else {
                    String::new()
                };
                format!("{rank}{:.3} GiB (estimated {:.3})", gib(peak), gib(est))
            })
            .collect();
        say!("  peak memory (VmHWM): {}", ranks.join(", "));
        if self.steps == 0 || secs == 0.0 {
            return Ok(());
        }
        let mlups = self.sites as f64 * self.steps as f64 / secs / 1e6;
        let gbps = mlups * self.bytes_per_site as f64 / 1e3;
        let gflops = mlups * self.flops_per_site as f64 / 1e3;
        // The probes run in this process: over several ranks, each rank's share is compared.
        let ranks = probes.ranks as f64;
        let per_rank = if ranks > 1.0 { " per rank" } else { "" };
        let (bw, what) = probes.bandwidth()?;
        let peak = match &probes.placement {
            Placement::Host => {
                let p = measure_peak_flops::<T>(5);
                format!(
                    " = {:.0}% of the {:.1} GFLOP/s {} FMA peak measured now ({})",
                    100.0 * gflops / ranks / p.best,
                    p.best,
                    T::NAME,
                    p.how()
                )
            }
            Placement::Device(ctx) => {
                let p = lbm::gpu::probe::fma_gflops::<T>(ctx)?;
                format!(
                    " = {:.0}% of the device's {:.1} GFLOP/s FMA peak measured now ({} \
                     arithmetic, {})",
                    100.0 * gflops / ranks / p.best,
                    p.best,
                    lbm::gpu::shader::arithmetic::<T>(),
                    p.how()
                )
            }
            Placement::Split(_) => {
                " (split between host and device: no one peak to compare with)".to_string()
            }
        };
        say!(
            "  {mlups:.1} MLUPS, {:.1} GB/s{per_rank} = {:.0}% of the {bw:.1} GB/s {what} \
             measured now, {:.1} GFLOP/s{per_rank} ({} flops/site in collide){peak}",
            gbps / ranks,
            100.0 * gbps / ranks / bw,
            gflops / ranks,
            self.flops_per_site,
        );
        Ok(())
    }
}

/// What a checkpoint of the run says of it: the run's token (the stamp of its output
/// directory), the case's name and its settings, which a resume compares with its own.
pub(super) fn about(
    plan: &Plan,
    name: &str,
    case: &dyn std::fmt::Debug,
) -> BTreeMap<String, String> {
    BTreeMap::from([
        ("run".to_string(), plan.run.clone()),
        ("case".to_string(), name.to_string()),
        ("settings".to_string(), format!("{case:?}")),
    ])
}

/// The solid sites of `case`'s bodies in the box `[xs, ys, zs]` of its lattice of `size`
/// sites, 1 or 0, in the order of a piece's values (`[(x − x0)·P + (z − z0)·ny + y − y0]`).
fn solid_sites<C: Case>(case: &C, size: [usize; 3], [xs, ys, zs]: &[Range<usize>; 3]) -> Vec<f64> {
    let [_, ly, lz] = size;
    let masks: Vec<Vec<bool>> = (case.bodies().iter())
        .map(|(body, _)| body.voxelize(size, xs.clone()))
        .collect();
    let site = |x: usize, y: usize, z: usize| ((x - xs.start) * lz + z) * ly + y;
    (xs.clone())
        .flat_map(|x| {
            zs.clone()
                .flat_map(move |z| ys.clone().map(move |y| site(x, y, z)))
        })
        .map(|s| f64::from(u8::from(masks.iter().any(|m| m[s]))))
        .collect()
}
