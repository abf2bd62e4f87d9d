//! `lbm run`: a case run end to end on the chosen backend, layout and precision, with a
//! progress bar, images, VTK files and diagnostics at the output interval, checkpoints, a
//! clean stop on a signal that keeps the state, and a performance summary.

use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};
use lbm::backend::build;
use lbm::blocks::{Cut, Decomposition};
use lbm::cases::{
    Case, Cavity, Cylinder, CylinderModel, FlowPast, RayleighBenard, TaylorGreen3d, global_spec,
};
use lbm::gpu::AdapterChoice;
use lbm::hetero::SplitChoice;
use lbm::memory::Need;
use lbm::models::{D2Q9Mrt, D3Q19Trt};
use lbm::{Checkpoint, Extent, Layout, Model, Real, Scheme, Soa, read_checkpoint};

use super::case_settings;
use super::lattice_run::start_and_drive;
use super::out_dir::{missing_dirs, prepare_out_dir, remove_if_empty};
use super::plan::{Plan, Resume, backend, check_about};
use super::settings::{BackendArg, CaseName, Checks, Collision, Settings, bad, both, require};
use super::{
    CliError, Generic, GenericReal, LayoutArg, Precision, VL_CHOICES, World, cpu_layout_built,
    cpu_width_built, dispatch_real, dispatch_vl,
};

/// Every key of a case file, as printed after `lbm run --help`.
const FILE_HELP: &str = "\
Case files: every option above is also a key of a TOML file given with --config, spelled the
same (`--output-every 500` is `output-every = 500`); options on the command line override the
file's keys, and `case` names the case:

    case = \"rayleigh-taylor\"
    lx = 256
    ly = 512
    steps = 10000
    atwood = 0.2
    gravity = 2e-4
    tau = 0.55
    output-every = 1000
    images = [\"T\", \"vorticity\"]
    checkpoint-every = 5000

Outputs in the output directory, all named after the case: <case>_<field>_<step>.png (drawn at
most 2048 pixels a side), <case>.pvd (the VTK series for ParaView: a <case>_<step>.pvti per output
step joining the pieces each rank (each block) wrote in <case>_pieces/, a .vtm for a sparse
domain), <case>_diagnostics.csv (step, time,
mass, momentum_x, momentum_y, energy, max_mach and the case's columns), <case>_checkpoint.lbm (a
manifest; its shards, one per rank (per block), beside it; the one before it kept as .previous, which a resume
takes when the newest is not whole), <case>_run.toml (which run the outputs are of).
Existing outputs of the case are not overwritten without --force, which removes them first
(checkpoints kept); a resume appends only to the outputs of the run that wrote its checkpoint.
Ctrl-C, SIGTERM (a batch scheduler's stop) and SIGHUP stop after the current step, write the
outputs and a checkpoint when checkpoints are on, and exit with 128 + the signal's number; continue
with --resume <out>/<case>_checkpoint.lbm. A second signal ends the run at once.";

/// Options of `lbm run`.
#[derive(Debug, Clone, Args)]
#[command(after_long_help = FILE_HELP, allow_negative_numbers = true)]
pub struct RunArgs {
    /// A TOML case file (keys as the options); command-line options override it.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Continue from this checkpoint (the case and lattice must be those of the run that
    /// wrote it); outputs of later steps are overwritten.
    #[arg(long, value_name = "CHECKPOINT")]
    pub resume: Option<PathBuf>,
    /// Replace the outputs of an earlier run of the case in the output directory (they are
    /// removed first; checkpoints are kept).
    #[arg(long)]
    pub force: bool,
    /// The settings.
    #[command(flatten)]
    pub settings: Settings,
}

/// Defaults of a case: lattice, steps and output interval.
struct Defaults {
    size: (usize, usize),
    steps: u64,
    output_every: u64,
    diagnostics_every: u64,
    until_steady: Option<f64>,
    /// The layout and scheme unless the settings choose.
    layout: LayoutArg,
    scheme: Option<Scheme>,
}

impl Defaults {
    /// `steps` steps of an `size` lattice, the fields every `output_every` steps and the
    /// diagnostics every `diagnostics_every` (0: with the fields), in CAoSoA.
    const fn timed(
        size: (usize, usize),
        steps: u64,
        output_every: u64,
        diagnostics_every: u64,
    ) -> Self {
        Self {
            size,
            steps,
            output_every,
            diagnostics_every,
            until_steady: None,
            layout: LayoutArg::Caosoa,
            scheme: None,
        }
    }

    /// To a steady state within `tol` (at most `steps` steps) of an `size` lattice, in CAoSoA.
    const fn steady(size: (usize, usize), steps: u64, tol: f64) -> Self {
        Self {
            until_steady: Some(tol),
            ..Self::timed(size, steps, 0, 0)
        }
    }
}

fn defaults(case: CaseName) -> Defaults {
    use CaseName as C;
    match case {
        C::RayleighTaylor => Defaults::timed((256, 512), 10_000, 1_000, 0),
        C::FdCavity => Defaults {
            layout: LayoutArg::Soa,
            ..Defaults::steady((65, 65), 1_000_000, 1e-6)
        },
        C::Cavity => Defaults::steady((128, 128), 400_000, 1e-6),
        C::Poiseuille => Defaults::steady((8, 64), 40_000, 1e-8),
        C::TaylorGreen => Defaults::timed((128, 128), 5_000, 1_000, 0),
        C::Duct => Defaults::steady((4, 32), 100_000, 1e-8),
        C::Capillaries => Defaults::steady((32, 64), 100_000, 1e-8),
        C::Cavity3d => Defaults::steady((64, 64), 200_000, 1e-6),
        C::AdvectionDiffusion => Defaults::timed((128, 128), 600, 200, 50),
        // Steps and intervals follow from the layer's diffusion time: see `run`.
        C::RayleighBenard => Defaults::timed((65, 32), 0, 0, 0),
        // Steps and intervals follow from the diameter and the Reynolds number (the channel's
        // length and the inflow for the body): see `run`.
        // The cylinder's channel is padded to the cluster width with solid rows
        // (`Cylinder::with_cluster_width`): the in-place sweep gathers the clusters with solid
        // lanes lane by lane (it must not read what a neighbour's bounce-back writes), and
        // steps it at half the speed of two copies.
        C::Cylinder | C::Cylinder3d => Defaults {
            scheme: Some(Scheme::TwoCopy),
            ..Defaults::timed((0, 0), 0, 0, 0)
        },
        C::Body => Defaults::timed((0, 0), 0, 0, 0),
        // Steps and intervals follow from the cube and the amplitude: see `run`.
        C::TaylorGreen3d => Defaults::timed((128, 128), 0, 0, 0),
    }
}

/// The 3-D Taylor–Green vortex's defaults in its convective time `L/U₀`: to `t* = 12`, past
/// the DNS's peak of dissipation at 9, a diagnostics row every 0.1 and the fields every 4.
fn taylor_green_3d_defaults(d: &mut Defaults, case: &TaylorGreen3d) {
    let per = case.steps_per_time();
    d.steps = (12.0 * per).ceil() as u64;
    d.diagnostics_every = (0.1 * per).round().max(1.0) as u64;
    d.output_every = (4.0 * per).round() as u64;
}

/// Runs `lbm run`.
pub fn run(a: &RunArgs, world: &World) -> Result<(), CliError> {
    let a = &RunArgs {
        resume: (a.resume.as_deref()).map(|path| super::plan::resume_path(world, path)),
        ..a.clone()
    };
    let file = match &a.config {
        Some(path) => Settings::from_file(path)?,
        None => Settings::default(),
    };
    let s = a.settings.clone().over(file);
    let case = s.case.ok_or_else(|| {
        bad(
            "case",
            "no case given: name one (rayleigh-taylor, cavity, poiseuille, taylor-green, \
             taylor-green-3d, duct, cavity-3d, fd-cavity, advection-diffusion, rayleigh-benard, cylinder, \
             cylinder-3d, body, capillaries) \
             or set \
             `case` in the --config file",
        )
    })?;
    s.check_keys(case)?;
    let mut d = defaults(case);
    let size = match case {
        CaseName::Cylinder | CaseName::Cylinder3d | CaseName::Body => d.size,
        _ => size(&s, case, d.size)?,
    };
    let tg3d = match case {
        CaseName::TaylorGreen3d => {
            let c = case_settings::taylor_green_3d(&s, size)?;
            taylor_green_3d_defaults(&mut d, &c);
            Some(c)
        }
        _ => None,
    };
    let rb = match case {
        CaseName::RayleighBenard => Some(rayleigh_benard(&s, &mut d)?),
        _ => None,
    };
    let cylinder_2d = match case {
        CaseName::Cylinder => Some(cylinder::<D2Q9Mrt>(&s, &mut d)?),
        _ => None,
    };
    let cylinder_3d = match case {
        CaseName::Cylinder3d => Some(cylinder::<D3Q19Trt>(&s, &mut d)?),
        _ => None,
    };
    let body = match case {
        CaseName::Body => Some(flow_past(&s, &mut d)?),
        _ => None,
    };
    // Every shared setting and the case's physics are checked before any is reported.
    let plan = plan(&s, case, &d, a);
    match case {
        CaseName::RayleighTaylor => start(world, plan, case_settings::rayleigh_taylor(&s, size)),
        CaseName::Cavity => {
            let collision = s.collision.unwrap_or(Collision::Bgk);
            let n = size.0;
            let cavity = both(
                case_settings::cavity(&s, n),
                case_settings::smagorinsky(&s, collision),
            );
            match collision {
                Collision::Bgk => start(
                    world,
                    plan,
                    cavity.map(|((re, u), _)| Cavity::bgk(n, re, u)),
                ),
                Collision::Mrt => start(
                    world,
                    plan,
                    cavity.map(|((re, u), _)| Cavity::mrt(n, re, u)),
                ),
                Collision::CentralMrt => start(
                    world,
                    plan,
                    cavity.map(|((re, u), _)| Cavity::central_mrt(n, re, u)),
                ),
                Collision::Smagorinsky => start(
                    world,
                    plan,
                    cavity.map(|((re, u), c)| Cavity::smagorinsky(n, re, u, c)),
                ),
                Collision::Regularized => refuse(
                    not_offered(
                        "cavity",
                        collision,
                        "bgk, mrt, central-mrt or smagorinsky",
                        "lbm::cases::Cavity::regularized",
                    ),
                    both(cavity, plan),
                ),
            }
        }
        CaseName::Poiseuille => start(world, plan, case_settings::poiseuille(&s, size)),
        CaseName::TaylorGreen => start(world, plan, case_settings::taylor_green(&s, size)),
        CaseName::Duct => start(world, plan, case_settings::duct(&s, size)),
        CaseName::Capillaries => start(world, plan, case_settings::capillaries(&s, size)),
        CaseName::Cavity3d => start(world, plan, case_settings::cavity_3d(&s, size)),
        CaseName::AdvectionDiffusion => {
            start(world, plan, case_settings::advection_diffusion(&s, size))
        }
        CaseName::TaylorGreen3d => {
            let Some(tg) = tg3d else {
                unreachable!("built above for this case")
            };
            let collision = s.collision.unwrap_or(Collision::Mrt);
            let c = case_settings::smagorinsky(&s, collision);
            let (n, re, u0) = (tg.n, tg.re, tg.u0);
            match collision {
                Collision::Mrt => start(world, plan, c.map(|_| tg)),
                Collision::Smagorinsky => start(
                    world,
                    plan,
                    c.map(|c| TaylorGreen3d::smagorinsky(n, re, u0, c)),
                ),
                other => refuse(
                    not_offered(
                        "taylor-green-3d",
                        other,
                        "mrt or smagorinsky",
                        "lbm::cases::TaylorGreen3d::central_mrt, regularized or bgk",
                    ),
                    both(c, plan),
                ),
            }
        }
        CaseName::Cylinder => match cylinder_2d {
            Some(c) => start(world, plan, Ok(c)),
            None => unreachable!("built above for this case"),
        },
        CaseName::Cylinder3d => match cylinder_3d {
            Some(c) => start(world, plan, Ok(c)),
            None => unreachable!("built above for this case"),
        },
        CaseName::Body => match body {
            Some(c) => start(world, plan, Ok(c)),
            None => unreachable!("built above for this case"),
        },
        CaseName::RayleighBenard => match rb {
            Some(c) => super::coupled::rayleigh_benard(world, &plan?, c),
            None => unreachable!("built above for this case"),
        },
        CaseName::FdCavity => {
            let steps = s.steps.unwrap_or(d.steps);
            super::fd_run::run(world, &s, (size.0, steps), a.resume.as_deref(), a.force)
        }
    }
}

/// Runs `case` as `plan` says, or reports the problems of both together (the case's first:
/// they name the lattice's own).
fn start<C: Case>(
    world: &World,
    plan: Result<Plan, CliError>,
    case: Result<C, CliError>,
) -> Result<(), CliError> {
    let (case, plan) = both(case, plan)?;
    launch(world, &plan, case)
}

/// Refuses a run for `first`, reporting the other settings' problems with it.
fn refuse<T>(first: CliError, others: Result<T, CliError>) -> Result<(), CliError> {
    both(Err::<(), _>(first), others).map(|_| ())
}

/// The refusal of a collision the program does not offer for `case`. Each model a case runs is
/// the whole driver compiled once more for every layout, precision and backend, so the program
/// offers a few per case and the library (`library`) every one.
fn not_offered(case: &str, collision: Collision, offered: &str, library: &str) -> CliError {
    bad(
        "collision",
        format!(
            "{case} runs {offered} from the program, not {collision:?}; that one runs from the \
             library ({library})"
        ),
    )
}

/// The Rayleigh–Bénard case of `s`: a layer of `ly` sites, two critical rolls wide; its
/// defaults: 1.25 diffusion times `H²/κ` (the rolls settle within one), a row of diagnostics
/// and an image every quarter.
fn rayleigh_benard(s: &Settings, d: &mut Defaults) -> Result<RayleighBenard, CliError> {
    if s.lx.is_some() {
        return Err(bad(
            "lx",
            "the width of rayleigh-benard follows from its height (two rolls of the critical \
             wavelength 2π/k_c, k_c = 3.117/H): give ly only",
        ));
    }
    let case = case_settings::rayleigh_benard(s, s.ly.unwrap_or(d.size.1))?;
    let t = case.diffusion_time();
    d.size = case.size();
    d.steps = (1.25 * t).ceil() as u64;
    d.output_every = (t / 4.0).round().max(1.0) as u64;
    Ok(case)
}

/// The cylinder case of `s` and its defaults: at a steady Reynolds number up to 30 s of
/// flow (about three passes through the channel: the start's pressure waves take most of it
/// to die out) or until steady, a row of diagnostics every 0.2 s; at an
/// unsteady one 8 s, a row of diagnostics every 5 ms (some 65 a period of the shedding at
/// Re = 100) and images every 0.5 s.
fn cylinder<M: CylinderModel>(s: &Settings, d: &mut Defaults) -> Result<Cylinder<M>, CliError> {
    let case = case_settings::cylinder::<M>(s)?.with_cluster_width(cluster_width(s, d));
    let per_second = 1.0 / case.dt();
    d.size = case.size();
    let every = |seconds: f64| (seconds * per_second).round().max(1.0) as u64;
    if case.is_steady() {
        d.steps = every(30.0);
        d.until_steady = Some(1e-7);
        d.diagnostics_every = every(0.2);
    } else {
        d.steps = every(8.0);
        d.diagnostics_every = every(0.005);
        d.output_every = every(0.5);
    }
    Ok(case)
}

/// The cluster width whose multiple the run's layout needs `LY` to be: 1 for AoS and SoA, and
/// where the plan refuses the width (it says why).
fn cluster_width(s: &Settings, d: &Defaults) -> usize {
    let layout = s.layout.unwrap_or(d.layout);
    let precision = s.precision.unwrap_or(Precision::F64);
    let backend = s.backend.unwrap_or(BackendArg::Cpu);
    match layout {
        LayoutArg::Csoa | LayoutArg::Caosoa => vl(s, precision, layout, backend).unwrap_or(1),
        LayoutArg::Aos | LayoutArg::Soa => 1,
    }
}

/// The flow past a body of `s` and its defaults: three passes of the inflow through the
/// channel or until steady, a row of diagnostics every twentieth of a pass, the fields after
/// each pass.
fn flow_past(s: &Settings, d: &mut Defaults) -> Result<FlowPast, CliError> {
    let case = case_settings::flow_past(s)?;
    d.size = case.size();
    let pass = (case.size().0 as f64 / case.setup.speed).ceil() as u64;
    d.steps = 3 * pass;
    d.until_steady = Some(1e-6);
    d.diagnostics_every = (pass / 20).max(1);
    d.output_every = pass;
    Ok(case)
}

/// The lattice size: square for the cavities and Taylor–Green.
fn size(s: &Settings, case: CaseName, default: (usize, usize)) -> Result<(usize, usize), CliError> {
    let square = matches!(
        case,
        CaseName::Cavity
            | CaseName::FdCavity
            | CaseName::TaylorGreen
            | CaseName::TaylorGreen3d
            | CaseName::Cavity3d
            | CaseName::AdvectionDiffusion
    );
    let (lx, ly) = match (s.lx, s.ly) {
        (Some(x), None) if square => (x, x),
        (None, Some(y)) if square => (y, y),
        (x, y) => (x.unwrap_or(default.0), y.unwrap_or(default.1)),
    };
    if square && lx != ly {
        return Err(bad(
            "ly",
            format!(
                "{ly} differs from lx = {lx}: the {} case is square; give one of them",
                case.as_str()
            ),
        ));
    }
    let mut c = Checks::default();
    c.option(require("lx", lx, |v| v > 0, "a positive width"));
    c.option(require("ly", ly, |v| v > 0, "a positive height"));
    c.done()?;
    Ok((lx, ly))
}

/// Resolves the settings shared by every case, reporting every bad one together.
fn plan(s: &Settings, case: CaseName, d: &Defaults, a: &RunArgs) -> Result<Plan, CliError> {
    let mut c = Checks::default();
    let precision = s.precision.unwrap_or(Precision::F64);
    let layout = s.layout.unwrap_or(d.layout);
    let backend = s.backend.unwrap_or(BackendArg::Cpu);
    let vl = c.take(vl(s, precision, layout, backend));
    // The finite-difference grid takes its layout as data, as the GPU does.
    if backend != BackendArg::Gpu && case != CaseName::FdCavity && !cpu_layout_built(layout) {
        c.keep(bad(
            "layout",
            format!(
                "{}: this build runs the cases on the CPU in soa and caosoa (the fastest); aos \
                 and csoa need the program built with `--features layouts` (cargo run \
                 --release --features layouts -- …), or take --backend gpu, which runs every \
                 layout",
                layout
                    .to_possible_value()
                    .map_or_else(String::new, |v| v.get_name().to_string())
            ),
        ));
    }
    let split = c.option(split(s, backend)).unwrap_or(SplitChoice::Auto);
    if s.adapter.is_some() && backend == BackendArg::Cpu {
        c.keep(bad(
            "adapter",
            "chooses the GPU of the gpu and hetero backends; the cpu backend runs none: add \
             --backend gpu (or hetero), or drop --adapter",
        ));
    }
    let scheme = match (s.scheme, d.scheme, backend) {
        (Some(sch), _, _) => sch.into(),
        (None, Some(sch), _) => sch,
        (None, None, BackendArg::Cpu) => Scheme::InPlace,
        (None, None, _) => Scheme::TwoCopy,
    };
    let until_steady = s.until_steady.or(d.until_steady).and_then(|t| {
        c.option(require(
            "until-steady",
            t,
            |t| t > 0.0 && t.is_finite(),
            "a positive tolerance",
        ))
    });
    let steps = c.take(require(
        "steps",
        s.steps.unwrap_or(d.steps),
        |v| v > 0,
        "at least 1",
    ));
    let check_every = c.take(require(
        "check-every",
        s.check_every.unwrap_or(500),
        |v| v > 0,
        "at least 1",
    ));
    let slice = c.take(slice(s));
    let blocks = c.option(decomposition(s)).flatten();
    c.done()?;
    Ok(Plan {
        blocks,
        steps,
        precision,
        layout,
        vl,
        scheme,
        backend,
        split,
        adapter: s
            .adapter
            .as_deref()
            .map_or_else(AdapterChoice::from_env, AdapterChoice::parse),
        check_every,
        until_steady,
        out: s
            .out
            .clone()
            .unwrap_or_else(|| Path::new("out").join(case.as_str())),
        output_every: s.output_every.unwrap_or(d.output_every),
        diagnostics_every: s.diagnostics_every.unwrap_or(d.diagnostics_every),
        slice,
        images: s.images.clone(),
        vtk: s.vtk.unwrap_or(true),
        vtk_zlib: s.vtk_zlib.unwrap_or(false),
        checkpoint_every: s.checkpoint_every.unwrap_or(0),
        resume: a.resume.clone(),
        force: a.force,
        memory: Need::default(),
        run: String::new(),
    })
}

/// The cluster width: one 64-byte vector of the arithmetic by default; others on the GPU, or
/// on the CPU in a build with `--features widths`.
fn vl(
    s: &Settings,
    precision: Precision,
    layout: LayoutArg,
    backend: BackendArg,
) -> Result<usize, CliError> {
    let vl = match (s.vl, layout) {
        (None, _) => precision.default_vl(),
        (Some(v), LayoutArg::Csoa | LayoutArg::Caosoa) => {
            require("vl", v, |v| VL_CHOICES.contains(&v), "4, 8 or 16")?
        }
        (Some(_), _) => {
            return Err(bad(
                "vl",
                "applies to the clustered layouts csoa and caosoa only",
            ));
        }
    };
    if backend != BackendArg::Gpu && !cpu_width_built(precision, vl) {
        return Err(bad(
            "vl",
            format!(
                "{vl} lanes: this build runs the CPU kernels of the clustered layouts {} lanes \
                 wide in {} (one 64-byte vector); other widths need the program built with \
                 `--features widths` (cargo run --release --features widths -- …), or take \
                 --backend gpu, which runs 4, 8 or 16",
                precision.default_vl(),
                precision
                    .to_possible_value()
                    .map_or_else(String::new, |v| v.get_name().to_string())
            ),
        ));
    }
    Ok(vl)
}

/// The host/device split: tuned, or fixed by `host-columns` or `host-share` (backend hetero
/// only).
fn split(s: &Settings, backend: BackendArg) -> Result<SplitChoice, CliError> {
    match (s.host_columns, s.host_share) {
        (Some(_), Some(_)) => Err(bad(
            "host-share",
            "give host-columns or host-share, not both",
        )),
        (Some(_), _) | (_, Some(_)) if backend != BackendArg::Hetero => Err(bad(
            if s.host_columns.is_some() {
                "host-columns"
            } else {
                "host-share"
            },
            "applies to backend hetero only",
        )),
        (Some(m), None) => Ok(SplitChoice::Columns(m)),
        (None, Some(share)) => Ok(SplitChoice::HostShare(require(
            "host-share",
            share,
            |v| (0.0..=1.0).contains(&v),
            "a share of the columns in [0, 1]",
        )?)),
        (None, None) => Ok(SplitChoice::Auto),
    }
}

/// The plane of a 3-D lattice drawn as images: `--slice-x`, `--slice-y` or `--slice-z`, at
/// most one (none: the case's plane).
fn slice(s: &Settings) -> Result<Option<(usize, usize)>, CliError> {
    let given: Vec<(usize, usize)> = [s.slice_x, s.slice_y, s.slice_z]
        .into_iter()
        .enumerate()
        .filter_map(|(axis, at)| Some((axis, at?)))
        .collect();
    match given[..] {
        [] => Ok(None),
        [plane] => Ok(Some(plane)),
        _ => Err(bad(
            "slice-z",
            "one plane is drawn: give one of --slice-x, --slice-y, --slice-z",
        )),
    }
}

/// How the box is cut under mpiexec, if asked: `--cut AxBxC`, or `--block N|AxBxC`, the
/// blocks of a sparse domain (at most one of them).
fn decomposition(s: &Settings) -> Result<Option<Decomposition>, CliError> {
    let cut = |t: &str| t.parse::<Cut>().map_err(|e| bad("cut", e));
    match (s.cut.as_deref(), s.block.as_deref()) {
        (None, None) => Ok(None),
        (Some(t), None) => Ok(Some(cut(t)?.into())),
        (None, Some(t)) => block(t).map(|b| Some(Decomposition::Sparse(b))),
        (Some(_), Some(_)) => Err(bad(
            "block",
            "--block and --cut both say how the box is cut: give one (--block for a sparse \
             domain, --cut for every block of a grid)",
        )),
    }
}

/// A sparse domain's block size: `N` (N sites along every axis) or `AxBxC`, each at least 1,
/// read as a cut is ([`Cut`]'s form).
fn block(t: &str) -> Result<[usize; 3], CliError> {
    match (t.split(['x', 'X', '×']).count(), t.parse::<Cut>()) {
        (1, Ok(Cut([n, ..]))) => Ok([n; 3]),
        (3, Ok(Cut(sides))) => Ok(sides),
        _ => Err(bad(
            "block",
            format!(
                "`{t}` is not a block size: give N (sites along every axis) or AxBxC, whole \
                 numbers ≥ 1, e.g. 16 or 32x16x16"
            ),
        )),
    }
}

/// Refuses a slice of a 2-D case, or one outside the lattice.
fn check_slice<C: Case>(plan: &Plan, case: &C) -> Result<(), CliError> {
    let Some((axis, at)) = plan.slice else {
        return Ok(());
    };
    let key = ["slice-x", "slice-y", "slice-z"][axis];
    if case.depth() == 1 {
        let message = format!("the {} case is two-dimensional: drop --{key}", case.name());
        return Err(bad(key, message));
    }
    let (lx, ly) = case.size();
    let side = [lx, ly, case.depth()][axis];
    if at >= side {
        let message = format!("{at} is outside the lattice's 0..{side} planes");
        return Err(bad(key, message));
    }
    Ok(())
}

/// Checks the images asked for, prepares the output directory and runs `case`.
fn launch<C: Case>(world: &World, plan: &Plan, case: C) -> Result<(), CliError> {
    let mut plan = plan.clone();
    let mut images = plan
        .images
        .take()
        .unwrap_or_else(|| case.images().iter().map(|s| s.to_string()).collect());
    images.retain(|s| !s.is_empty());
    let names = <C::Model as Model>::MOMENT_NAMES;
    let known = |n: &str| names.contains(&n) || lbm::output::DERIVED.contains(&n);
    if let Some(name) = images.iter().find(|n| !known(n)) {
        let all: Vec<&str> = names.iter().chain(&lbm::output::DERIVED).copied().collect();
        return Err(bad(
            "images",
            format!(
                "model {} has no field `{name}`; it has {}",
                <C::Model as Model>::NAME,
                all.join(", ")
            ),
        ));
    }
    plan.images = Some(images);
    check_slice(&plan, &case)?;
    // A run refused before it writes anything leaves no directory behind.
    let created = missing_dirs(&plan.out);
    let job = Job {
        world,
        plan: &plan,
        case: &case,
    };
    let result = match plan.backend {
        BackendArg::Gpu => dispatch_real(plan.precision, job),
        BackendArg::Cpu | BackendArg::Hetero => {
            dispatch_vl(plan.layout, plan.vl, plan.precision, job)
        }
    };
    if result.is_err() {
        remove_if_empty(&created);
    }
    result
}

/// The run of a case with a layout and precision chosen at run time: generic over both on
/// the host backends (cpu, hetero), whose kernels are compiled per layout, and over the
/// precision alone on the GPU, which takes the layout as data.
struct Job<'a, C: Case> {
    world: &'a World,
    plan: &'a Plan,
    case: &'a C,
}

impl<'a, C: Case> Job<'a, C> {
    /// The plan with the memory this process will hold (refused before any work when it does
    /// not fit), the checkpoint to resume from, checked against the case, and the output
    /// directory prepared for this run (every rank has checked it before the root writes).
    fn prepare<T: Real>(
        &self,
        device_in_host_memory: bool,
        counts: &[usize],
    ) -> Result<(Plan, Resume<'a, C::Model, T>), CliError> {
        let memory = super::memory::check::<C, T>(
            self.world,
            (self.plan, counts),
            self.case,
            device_in_host_memory,
        )?;
        let mut plan = Plan {
            memory,
            ..self.plan.clone()
        };
        let checkpoint = match &self.plan.resume {
            Some(path) => Some((path, resume_from::<C, T>(path, self.case, plan.steps)?)),
            None => None,
        };
        let about = checkpoint.as_ref().map(|(_, c)| &c.header.about);
        let run = prepare_out_dir(&plan, self.case.name(), about, self.world.group().is_root());
        plan.run = (self.world).all_ok(run, "rank 0 refused the output directory")?;
        Ok((plan, checkpoint))
    }

    /// Builds the lattice on the backend the plan asks for and runs the case on it.
    fn build_and_run<L: Layout, T: Real>(self) -> Result<(), CliError> {
        let backend = backend(self.world, self.plan)?;
        let spec = global_spec(self.case);
        let blocks =
            (self.plan).decomposition(self.world.group().ranks(), spec.size(), C::Model::D);
        let counts = self.world.spread(&spec, blocks)?;
        // The split is tuned after the lattice is built: the device's copies are counted as
        // if it held the whole lattice.
        let (plan, checkpoint) = self.prepare::<T>(backend.in_host_memory(), &counts)?;
        let checkpoint = checkpoint.as_ref().map(|(path, c)| (path.as_path(), c));
        self.world.on_blocks(&counts, |[carrier]| {
            let lat =
                build::<C::Model, L, T>(carrier, spec.clone(), blocks, plan.scheme, &backend)?;
            start_and_drive(&plan, self.case, lat, checkpoint)
        })
    }
}

impl<C: Case> Generic for Job<'_, C> {
    type Output = Result<(), CliError>;

    /// The host backends (cpu, hetero), whose kernels are compiled per layout.
    fn run<L: Layout, T: Real>(self) -> Self::Output {
        self.build_and_run::<L, T>()
    }
}

impl<C: Case> GenericReal for Job<'_, C> {
    type Output = Result<(), CliError>;

    /// The GPU backend, which takes the layout as data (the host's side of a lattice over
    /// processes in SoA).
    fn run<T: Real>(self) -> Self::Output {
        self.build_and_run::<Soa, T>()
    }
}

/// Reads the checkpoint at `path` and checks that it belongs to this case: model, precision
/// (by [`read_checkpoint`]), lattice size and parameters, and that steps remain to be run.
fn resume_from<C: Case, T: Real>(
    path: &Path,
    case: &C,
    steps: u64,
) -> Result<Checkpoint<C::Model, T>, CliError> {
    let c = read_checkpoint::<C::Model, T>(path)?;
    let mismatch = |what: String| CliError::Resume {
        path: path.display().to_string(),
        what,
    };
    if c.header.step >= steps {
        return Err(bad(
            "steps",
            format!(
                "{steps}: the checkpoint {} is at step {} already; give more steps to continue",
                path.display(),
                c.header.step
            ),
        ));
    }
    let (lx, ly) = case.size();
    let ours = [lx, ly, case.depth()];
    if c.header.size() != ours {
        return Err(mismatch(format!(
            "it holds a {} lattice, this run is {}",
            Extent::of_size(c.header.size()),
            Extent::of_size(ours)
        )));
    }
    let ours = <C::Model as Model>::param_values(&case.params());
    let theirs = <C::Model as Model>::param_values(&c.params);
    if let Some(((n, a), (_, b))) = theirs.iter().zip(&ours).find(|(a, b)| a.1 != b.1) {
        return Err(mismatch(format!(
            "its parameter {n} = {a}, this run has {n} = {b}"
        )));
    }
    // Another case of the same model, size and parameters (a cavity's checkpoint resumed as
    // a Taylor–Green vortex): told by what the program wrote of the run.
    check_about(path, &c.header.about, case.name(), &format!("{case:?}"))?;
    Ok(c)
}
