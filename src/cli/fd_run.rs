//! `lbm run fd-cavity`: the lid-driven cavity by finite differences ([`lbm::fd_cavity`]),
//! marched to its steady state on the CPU, its centre lines written as CSV and compared with
//! Ghia et al. (1982), the speed and velocity drawn as PNG images.

use std::time::Instant;

use lbm::Real;
use lbm::cavity::{GHIA_RE, ghia};
use lbm::fd::FdGrid;
use lbm::fd_cavity::{FdCavity, Scheme};
use lbm::output::Table;
use lbm::output::png::{range, write_field};

use super::settings::{BackendArg, Checks, Settings, bad};
use super::{CliError, Precision, World};

/// The keys `fd-cavity` reads; every other key given is refused.
const KEYS: [&str; 11] = [
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
];

/// The largest cell Reynolds number `Re/(N − 1)` a run is allowed.
const MAX_CELL_RE: f64 = 16.0;

/// The fields the images may show.
const IMAGES: [&str; 4] = ["speed", "ux", "uy", "p"];

/// Runs the case: `n` nodes per side, at most `max_steps` steps.
pub fn run(
    world: &World,
    s: &Settings,
    n: usize,
    max_steps: u64,
    force: bool,
) -> Result<(), CliError> {
    let mut c = Checks::default();
    for key in s.keys() {
        if !KEYS.contains(&key.as_str()) {
            c.keep(bad(
                &key,
                format!(
                    "does not apply to fd-cavity, a finite-difference run on one process's CPU (its keys: {})",
                    KEYS[1..].join(", ")
                ),
            ));
        }
    }
    if world.ranks() > 1 {
        c.keep(bad(
            "case",
            "fd-cavity runs on one process: start it without mpiexec",
        ));
    }
    if s.backend.is_some_and(|b| b != BackendArg::Cpu) {
        c.keep(bad(
            "backend",
            "fd-cavity runs on the CPU only (finite differences have no GPU or split backend yet): drop --backend",
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
    if table.exists() && !force {
        c.keep(bad(
            "out",
            format!(
                "{} holds the outputs of an earlier run: give another --out, or --force to replace them",
                out.display()
            ),
        ));
    }
    c.done()?;
    if force {
        remove_outputs(&out)?;
    }
    let cavity = FdCavity::new(n, re);
    match precision {
        Precision::F32 => drive::<f32>(&cavity, tol, interval, max_steps, &images, &out),
        _ => drive::<f64>(&cavity, tol, interval, max_steps, &images, &out),
    }
}

fn drive<T: Real>(
    cavity: &FdCavity,
    tol: f64,
    interval: u64,
    max_steps: u64,
    images: &[String],
    out: &std::path::Path,
) -> Result<(), CliError> {
    let mut g: FdGrid<Scheme, T> = cavity.grid().map_err(lbm::Error::from)?;
    let n = cavity.n;
    println!(
        "fd-cavity: {n} × {n} nodes, Re = {}, {} ({} flops and {} reads per node), Δt = {:.3e}, {}",
        cavity.re,
        <Scheme as lbm::fd::FdScheme>::NAME,
        <Scheme as lbm::fd::FdScheme>::FLOPS,
        <Scheme as lbm::fd::FdScheme>::LOADS.len(),
        cavity.time_step(),
        T::NAME
    );
    let start = Instant::now();
    let steps = cavity
        .run_to_steady(&mut g, tol, interval, max_steps)
        .map_err(lbm::Error::from)?;
    let seconds = start.elapsed().as_secs_f64();
    let rates = g.max_rates();
    let steady = rates[1..].iter().all(|&r| r < tol);
    println!(
        "{} after {steps} steps (t = {:.2}): max |∂u/∂t| = {:.2e}, max |∂v/∂t| = {:.2e}",
        if steady { "steady" } else { "not steady yet" },
        g.time(),
        rates[1],
        rates[2]
    );
    let nodes = (n * n) as f64 * steps as f64;
    println!(
        "{:.1} s, {:.1} M node updates/s, {:.2} GB/s of the registers' minimal traffic",
        seconds,
        nodes / seconds / 1e6,
        nodes * g.bytes_per_node() as f64 / seconds / 1e9
    );
    let (u, v) = cavity.centre_lines(&g);
    std::fs::create_dir_all(out).map_err(|source| CliError::Io {
        path: out.display().to_string(),
        source,
    })?;
    let h = cavity.h();
    Table {
        name: "centrelines",
        columns: vec!["s", "u_on_x_half", "v_on_y_half"],
        rows: (0..n).map(|i| vec![i as f64 * h, u[i], v[i]]).collect(),
    }
    .write(&out.join("fd-cavity_centrelines.csv"))?;
    for name in images {
        let field: Vec<f64> = match name.as_str() {
            "speed" => {
                let (ux, uy) = (g.field(1), g.field(2));
                ux.iter().zip(&uy).map(|(a, b)| a.hypot(*b)).collect()
            }
            "ux" => g.field(1),
            "uy" => g.field(2),
            _ => g.field(0),
        };
        write_field(
            &out.join(format!("fd-cavity_{name}.png")),
            &field,
            n,
            n,
            range(&field),
        )?;
    }
    let rounded = cavity.re.round();
    if (cavity.re - rounded).abs() < 1e-9 && GHIA_RE.contains(&(rounded as u32)) {
        let d = cavity.deviation(&g, &ghia(rounded as u32)?);
        println!(
            "Ghia et al. (1982), Re = {rounded}: max |u − u_ref| = {:.4} on x = ½, max |v − v_ref| = {:.4} on y = ½",
            d.u, d.v
        );
    }
    println!("outputs in {}", out.display());
    Ok(())
}

/// Removes the outputs of an earlier run (`fd-cavity_*` in `out`), as `--force` says.
fn remove_outputs(out: &std::path::Path) -> Result<(), CliError> {
    let Ok(entries) = std::fs::read_dir(out) else {
        return Ok(());
    };
    for e in entries.flatten() {
        if e.file_name().to_string_lossy().starts_with("fd-cavity_") {
            std::fs::remove_file(e.path()).map_err(|source| CliError::Io {
                path: e.path().display().to_string(),
                source,
            })?;
        }
    }
    Ok(())
}
