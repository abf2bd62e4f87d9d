//! The `lbm run` program end to end: outputs, checkpoints and resume (bitwise identical to an
//! uninterrupted run, on the CPU and on the GPU), damaged and foreign checkpoints refused,
//! configuration errors reported by key, output directories that cannot be written or hold
//! earlier outputs, divergence, and Ctrl-C.

use crate::cli_support;

use std::path::{Path, PathBuf};

use cli_support::{
    DIVERGING_VORTEX, diagnostics, fails, gpu_available, number_after, ok, s, spawn, step_in,
    stopped_by, text, tmp,
};
use lbm::Real;

/// The checkpoint of a taylor-green run in `dir`.
fn checkpoint(dir: &Path) -> PathBuf {
    dir.join("taylor-green_checkpoint.lbm")
}

/// The step and the populations of the checkpoint `cp` of a 32×32 taylor-green run in
/// precision `T`.
fn state<T: Real>(cp: &Path) -> (u64, Vec<u64>) {
    let c = lbm::read_checkpoint::<lbm::models::D2Q9Bgk, T>(cp).expect("a checkpoint");
    let f = c.columns(0..c.header.lx).expect("its populations");
    (
        c.header.step,
        f.iter().map(|v| v.to_f64().to_bits()).collect(),
    )
}

/// The shards of the checkpoint `cp`.
fn shards(cp: &Path) -> Vec<PathBuf> {
    let dir = cp.parent().expect("a directory");
    let name = format!("{}.", cp.file_name().unwrap().to_string_lossy());
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with(&name))
        .collect()
}

/// A copy of the checkpoint `cp` (manifest and shards) in the new directory `dir`, its first
/// shard edited by `edit`.
fn damaged_copy(cp: &Path, dir: &Path, edit: impl FnOnce(&mut Vec<u8>)) -> PathBuf {
    std::fs::create_dir(dir).unwrap();
    let copy = dir.join(cp.file_name().unwrap());
    std::fs::copy(cp, &copy).unwrap();
    let mut edit = Some(edit);
    for shard in shards(cp) {
        let mut bytes = std::fs::read(&shard).unwrap();
        if let Some(edit) = edit.take() {
            edit(&mut bytes);
        }
        std::fs::write(dir.join(shard.file_name().unwrap()), bytes).unwrap();
    }
    copy
}

/// The arrays of the VTK dataset of a step (its `.pvti` and pieces).
fn vtk_step(dir: &Path, case: &str, step: u64) -> lbm::output::vtk::Joined {
    lbm::output::vtk::read_joined(&dir.join(format!("{case}_{step:08}.pvti")))
        .expect("a VTK dataset")
}

const TG: &[&str] = &["run", "taylor-green", "--lx", "32", "--images", "vorticity"];

fn tg(extra: &[&str]) -> Vec<String> {
    TG.iter().chain(extra).map(|s| s.to_string()).collect()
}

fn run_ok(args: Vec<String>) -> String {
    ok(&args.iter().map(String::as_str).collect::<Vec<_>>())
}

/// A run resumed from a checkpoint ends bitwise identical to the uninterrupted run, with the
/// settings `common` (backend, scheme, precision `T`: f64 unless `common` says otherwise).
fn resume_is_bitwise<T: Real>(common: &[&str]) {
    let (a, b, c) = (tmp(), tmp(), tmp());
    let half = tg(&[
        common,
        &[
            "--steps",
            "100",
            "--checkpoint-every",
            "100",
            "--out",
            s(a.path()),
        ],
    ]
    .concat());
    run_ok(half);
    let resumed = tg(&[
        common,
        &[
            "--steps",
            "200",
            "--checkpoint-every",
            "200",
            "--out",
            s(b.path()),
        ],
        &["--resume", s(&checkpoint(a.path()))],
    ]
    .concat());
    assert!(run_ok(resumed).contains("resumed at step 100"));
    let whole = tg(&[
        common,
        &[
            "--steps",
            "200",
            "--checkpoint-every",
            "200",
            "--out",
            s(c.path()),
        ],
    ]
    .concat());
    run_ok(whole);
    assert_eq!(
        state::<T>(&checkpoint(b.path())),
        state::<T>(&checkpoint(c.path())),
        "{common:?}: checkpoints differ"
    );
    assert_eq!(
        vtk_step(b.path(), "taylor-green", 200),
        vtk_step(c.path(), "taylor-green", 200)
    );
}

#[test]
fn resumed_run_is_bitwise_identical_on_the_cpu() {
    resume_is_bitwise::<f64>(&["--backend", "cpu", "--scheme", "two-copy"]);
}

/// A checkpoint of binary16 storage keeps the populations' values exactly (as f32): the
/// resumed run rounds them back to the same binary16 elements.
#[test]
fn resumed_run_is_bitwise_identical_in_f16s() {
    resume_is_bitwise::<lbm::F16s>(&["--backend", "cpu", "--precision", "f16s"]);
}

#[test]
fn resumed_run_is_bitwise_identical_on_the_gpu() {
    if gpu_available() {
        resume_is_bitwise::<f64>(&["--backend", "gpu", "--scheme", "two-copy"]);
        resume_is_bitwise::<f64>(&["--backend", "gpu", "--scheme", "in-place"]);
        resume_is_bitwise::<lbm::F16s>(&["--backend", "gpu", "--precision", "f16s"]);
    }
}

#[test]
fn resumed_run_is_bitwise_identical_with_host_and_device_together() {
    if gpu_available() {
        for scheme in ["two-copy", "in-place"] {
            resume_is_bitwise::<f64>(&[
                "--backend",
                "hetero",
                "--host-columns",
                "5",
                "--scheme",
                scheme,
            ]);
        }
    }
}

/// The GPU (both schemes) and the host/device split (tuned, and fixed at a few columns in both
/// schemes) give the CPU run's diagnostics to 1e-12 relative, D2Q37 included.
#[test]
fn gpu_and_hetero_runs_agree_with_the_cpu_run() {
    if !gpu_available() {
        return;
    }
    let args = [
        "run",
        "rayleigh-taylor",
        "--lx",
        "32",
        "--ly",
        "64",
        "--steps",
        "100",
        "--output-every",
        "50",
        "--images",
        "",
        "--vtk",
        "false",
    ];
    let cpu = tmp();
    ok(&[&args[..], &["--out", s(cpu.path())]].concat());
    let reference = diagnostics(cpu.path(), "rayleigh-taylor");
    for backend in [
        &["--backend", "gpu", "--scheme", "two-copy"][..],
        &["--backend", "gpu", "--scheme", "in-place"],
        &["--backend", "hetero"],
        &["--backend", "hetero", "--host-columns", "4"],
        &[
            "--backend",
            "hetero",
            "--host-columns",
            "4",
            "--scheme",
            "in-place",
        ],
    ] {
        let d = tmp();
        ok(&[&args[..], backend, &["--out", s(d.path())]].concat());
        let got = diagnostics(d.path(), "rayleigh-taylor");
        assert_eq!(got.len(), reference.len());
        for (gr, rr) in got.iter().zip(&reference) {
            // Sums that cancel (the momentum) are compared on the scale of the mass.
            let mass = rr[2];
            for (j, (g, r)) in gr.iter().zip(rr).enumerate() {
                let momentum = j == 3 || j == 4;
                let scale = if momentum { mass } else { r.abs() };
                assert!((g - r).abs() <= 1e-12 * scale, "{backend:?}: {g} vs {r}");
            }
        }
    }
}

#[test]
fn outputs_are_written_and_mass_is_conserved() {
    let d = tmp();
    let out = ok(&[
        "run",
        "rayleigh-taylor",
        "--lx",
        "32",
        "--ly",
        "128",
        "--steps",
        "200",
        "--output-every",
        "100",
        "--out",
        s(d.path()),
    ]);
    assert!(
        out.contains("200 steps in") && out.contains("MLUPS"),
        "{out}"
    );
    assert!(out.contains("GFLOP/s") && out.contains("GB/s"), "{out}");
    for step in ["00000000", "00000100", "00000200"] {
        for f in ["T", "vorticity"] {
            let png = d.path().join(format!("rayleigh-taylor_{f}_{step}.png"));
            assert!(
                lbm::output::png::Picture::read(&png).is_ok(),
                "{}",
                png.display()
            );
        }
        let pvti = d.path().join(format!("rayleigh-taylor_{step}.pvti"));
        let vtk = lbm::output::vtk::read_joined(&pvti).unwrap();
        assert_eq!((vtk.lx, vtk.ly), (32, 128));
        let names: Vec<_> = vtk.arrays.iter().map(|a| a.0.as_str()).collect();
        assert_eq!(names, ["rho", "T", "velocity"]);
        assert!(vtk.arrays[1].2.iter().all(|t| (0.7..1.3).contains(t)));
    }
    let series = std::fs::read_to_string(d.path().join("rayleigh-taylor.pvd")).unwrap();
    assert_eq!(series.matches("<DataSet ").count(), 3, "{series}");
    let csv = std::fs::read_to_string(d.path().join("rayleigh-taylor_diagnostics.csv")).unwrap();
    let mut lines = csv.lines();
    assert_eq!(
        lines.next(),
        Some(
            "step,time,mass,momentum_x,momentum_y,energy,max_mach,mixing_width,interface_amplitude"
        )
    );
    let mass: Vec<f64> = lines
        .map(|l| l.split(',').nth(2).unwrap().parse().unwrap())
        .collect();
    assert_eq!(mass.len(), 3);
    assert!(
        mass.iter().all(|m| (m / mass[0] - 1.0).abs() < 1e-12),
        "{mass:?}"
    );
}

#[test]
fn damaged_and_foreign_checkpoints_are_refused() {
    let d = tmp();
    run_ok(tg(&[
        "--steps",
        "20",
        "--checkpoint-every",
        "20",
        "--out",
        s(d.path()),
    ]));
    let cp = checkpoint(d.path());
    let cut = damaged_copy(&cp, &d.path().join("cut"), |b| b.truncate(b.len() - 100));
    let out = tmp();
    fails(
        &[
            TG,
            &["--steps", "40", "--out", s(out.path()), "--resume", s(&cut)],
        ]
        .concat(),
        &["damaged", "truncated"],
    );
    let bad = damaged_copy(&cp, &d.path().join("flipped"), |b| {
        let last = b.len() - 1;
        b[last] ^= 1;
    });
    fails(
        &[
            TG,
            &["--steps", "40", "--out", s(out.path()), "--resume", s(&bad)],
        ]
        .concat(),
        &["damaged", "CRC-32"],
    );
    fails(
        &[
            "run",
            "rayleigh-taylor",
            "--lx",
            "32",
            "--ly",
            "128",
            "--out",
            s(out.path()),
            "--resume",
            s(&cp),
        ],
        &["does not fit", "D2Q9Bgk"],
    );
    fails(
        &[
            "run",
            "taylor-green",
            "--lx",
            "64",
            "--out",
            s(out.path()),
            "--resume",
            s(&cp),
        ],
        &["cannot resume", "32×32"],
    );
    fails(
        &[
            TG,
            &["--tau", "0.9", "--out", s(out.path()), "--resume", s(&cp)],
        ]
        .concat(),
        &["cannot resume", "tau"],
    );
    let gone = damaged_copy(&cp, &d.path().join("gone"), |_| {});
    std::fs::remove_file(&shards(&gone)[0]).unwrap();
    fails(
        &[
            TG,
            &[
                "--steps",
                "40",
                "--out",
                s(out.path()),
                "--resume",
                s(&gone),
            ],
        ]
        .concat(),
        &["damaged", "incomplete"],
    );
    let written: Vec<_> = std::fs::read_dir(out.path()).unwrap().collect();
    assert!(written.is_empty(), "a refused resume wrote {written:?}");
}

#[test]
fn bad_settings_are_reported_by_key() {
    let d = tmp();
    let o = s(d.path());
    fails(
        &["run", "rayleigh-taylor", "--re", "100", "--out", o],
        &["`re`", "cavity"],
    );
    fails(
        &["run", "rayleigh-taylor", "--atwood", "1.5", "--out", o],
        &["`atwood`", "(0, 1)"],
    );
    fails(
        &["run", "taylor-green", "--tau", "0.5", "--out", o],
        &["tau"],
    );
    fails(
        &["run", "taylor-green", "--lx", "30", "--out", o],
        &["LY = 30", "VL = 8"],
    );
    fails(
        &[
            "run",
            "taylor-green",
            "--layout",
            "soa",
            "--vl",
            "4",
            "--out",
            o,
        ],
        &["`vl`", "csoa"],
    );
    fails(
        &["run", "cavity", "--lx", "64", "--ly", "32", "--out", o],
        &["`ly`", "square"],
    );
    fails(
        &["run", "poiseuille", "--images", "T", "--out", o],
        &["`images`", "no field `T`"],
    );
    fails(&["run", "--out", o], &["`case`"]);
    fails(
        &["run", "taylor-green", "--host-columns", "3", "--out", o],
        &["`host-columns`", "hetero"],
    );
    fails(
        &[
            "run",
            "taylor-green",
            "--backend",
            "hetero",
            "--host-share",
            "1.5",
            "--out",
            o,
        ],
        &["`host-share`", "[0, 1]"],
    );
    fails(
        &["run", "cavity", "--smagorinsky", "0.1", "--out", o],
        &["`smagorinsky`", "--collision smagorinsky"],
    );
    fails(
        &[
            "run",
            "taylor-green-3d",
            "--collision",
            "smagorinsky",
            "--smagorinsky",
            "2",
            "--out",
            o,
        ],
        &["`smagorinsky`", "[0, 1]"],
    );
    fails(
        &[
            "run",
            "taylor-green-3d",
            "--collision",
            "central-mrt",
            "--out",
            o,
        ],
        &[
            "`collision`",
            "mrt or smagorinsky",
            "TaylorGreen3d::central_mrt",
        ],
    );
    fails(
        &["run", "poiseuille", "--collision", "mrt", "--out", o],
        &["`collision`", "cavity, taylor-green-3d"],
    );
    let file = d.path().join("case.toml");
    std::fs::write(&file, "case = \"cavity\"\nlx = 64\nviscosity = 0.1\n").unwrap();
    fails(
        &["run", "--config", s(&file)],
        &["case.toml", "viscosity", "line 3"],
    );
    std::fs::write(&file, "case = \"cavity\"\nlayout = \"zigzag\"\n").unwrap();
    fails(&["run", "--config", s(&file)], &["zigzag", "caosoa"]);
    // Widths other than one 64-byte vector on the CPU need the `widths` feature (not in the
    // suite's build), and the message says so; the GPU takes them as data.
    if !cfg!(feature = "widths") {
        fails(
            &[
                "run", "cavity", "--layout", "caosoa", "--vl", "4", "--out", o,
            ],
            &["`vl`", "--features widths", "--backend gpu"],
        );
    }
    // AoS and CSoA on the CPU need the `layouts` feature (not in the suite's build); the GPU
    // and the finite-difference grid take the layout as data.
    if !cfg!(feature = "layouts") {
        for layout in ["aos", "csoa"] {
            fails(
                &["run", "cavity", "--layout", layout, "--out", o],
                &["`layout`", layout, "--features layouts", "--backend gpu"],
            );
        }
        fails(
            &["run", "rayleigh-benard", "--layout", "aos", "--out", o],
            &["`layout`", "--features layouts"],
        );
    }
    std::fs::write(&file, "case = \"cavity\"\nsteps = -4\n").unwrap();
    fails(&["run", "--config", s(&file)], &["case.toml", "steps"]);
    std::fs::write(&file, "case = \"rayleigh-taylor\"\nre = 400\n").unwrap();
    fails(&["run", "--config", s(&file)], &["`re`", "cavity"]);
}

/// `lbm bench`'s lattice sizes: `LXxLY` (or `LX×LY`) in 2-D, `LXxLYxLZ` in 3-D; a size of the
/// wrong shape or with a bad number is refused with the shape expected, before any work.
#[test]
fn bench_sizes_are_parsed_and_bad_ones_explained() {
    fails(&["bench", "--d2q9-size", "4096"], &["d2q9-size", "LXxLY"]);
    fails(&["bench", "--d2q9-size", "ax4"], &["d2q9-size", "`a`"]);
    fails(
        &["bench", "--d3q19-size", "256x128"],
        &["d3q19-size", "LXxLYxLZ"],
    );
    // Well-formed sizes pass the parser: the run is refused at the next check, the CSV path.
    fails(
        &[
            "bench",
            "--d2q9-size",
            "4096x2048",
            "--d2q37-size",
            "64×32",
            "--d3q19-size",
            "256x128x64",
            "--csv",
            "/nonexistent-directory/rows.csv",
        ],
        &["`csv`", "its directory does not exist"],
    );
}

#[test]
fn case_files_run_and_the_command_line_overrides_them() {
    let d = tmp();
    let file = d.path().join("tg.toml");
    std::fs::write(
        &file,
        format!(
            "case = \"taylor-green\"\nlx = 64\nsteps = 1000\ntau = 0.9\nvelocity = 0.02\nvtk = false\nimages = []\nlayout = \"soa\"\nout = \"{}\"\n",
            s(&d.path().join("out"))
        ),
    )
    .unwrap();
    let out = ok(&["run", "--config", s(&file), "--lx", "32", "--steps", "50"]);
    assert!(
        out.contains("D2Q9Bgk 32×32") && out.contains("SoA") && out.contains("50 steps in"),
        "{out}"
    );
    assert!(out.contains("viscosity from the decay"), "{out}");
}

#[test]
fn output_directories_are_checked_before_the_run() {
    let d = tmp();
    let file = d.path().join("a-file");
    std::fs::write(&file, "").unwrap();
    let under_file = file.join("out");
    fails(
        &[TG, &["--out", s(&under_file)]].concat(),
        &["output directory"],
    );
    run_ok(tg(&["--steps", "10", "--out", s(d.path())]));
    fails(
        &[TG, &["--steps", "10", "--out", s(d.path())]].concat(),
        &["--force", "earlier taylor-green run (taylor-green"],
    );
    run_ok(tg(&["--steps", "10", "--out", s(d.path()), "--force"]));
}

#[test]
fn divergence_stops_with_the_step_the_site_and_a_hint() {
    let d = tmp();
    fails(
        &[
            DIVERGING_VORTEX,
            &["--check-every", "50", "--out", s(d.path())],
        ]
        .concat(),
        &["diverged at step", "site (", "raise τ"],
    );
}

/// SIGTERM, what a batch scheduler sends before SIGKILL, stops the run after a step with a
/// checkpoint that resumes, and the exit status says which signal (128 + 15).
#[test]
fn a_signal_stops_with_a_checkpoint_that_resumes() {
    let d = tmp();
    let (t, code) = stopped_by(
        "TERM",
        &[
            "run",
            "taylor-green",
            "--lx",
            "256",
            "--steps",
            "100000000",
            "--images",
            "",
            "--vtk",
            "false",
            "--checkpoint-every",
            "100000000",
            "--out",
            s(d.path()),
        ],
    );
    assert!(t.starts_with("taylor-green:"), "{t}");
    assert_eq!(code, Some(143), "{t}");
    assert!(
        t.contains("stopped by SIGTERM at step") && t.contains("--resume"),
        "{t}"
    );
    let cp = checkpoint(d.path());
    let header = std::fs::read(&cp).expect("a checkpoint on SIGTERM");
    assert!(header.starts_with(b"LBM-CHECKPOINT 5\n"));
    let step = step_in(&t, "stopped by SIGTERM at step ");
    let out = tmp();
    let o = s(out.path());
    let c = s(&cp);
    let early = step.to_string();
    fails(
        &[
            "run",
            "taylor-green",
            "--lx",
            "256",
            "--steps",
            &early,
            "--out",
            o,
            "--resume",
            c,
        ],
        &["`steps`", "already"],
    );
    let more = (step + 10).to_string();
    let resumed = ok(&[
        "run",
        "taylor-green",
        "--lx",
        "256",
        "--steps",
        &more,
        "--out",
        o,
        "--resume",
        c,
    ]);
    assert!(
        resumed.contains(&format!("resumed at step {step}")),
        "{resumed}"
    );
    assert!(resumed.contains("10 steps in"), "{resumed}");
}

/// Without the `mpi` feature `lbm bench --ranks` says how to get it.
#[cfg(not(feature = "mpi"))]
#[test]
fn bench_ranks_without_mpi_says_how_to_build_it() {
    fails(
        &["bench", "--ranks"],
        &["without MPI", "--features mpi", "mpiexec"],
    );
}

/// `lbm bench --csv` writes every row of its tables with the limits measured beside them
/// (bandwidth of the kernel's pattern, FMA peak, their spreads), consistent with the rows'
/// own figures; a CSV path that cannot be written, or `--csv` with a bench that has no such
/// rows, is refused before any work.
#[test]
fn bench_writes_its_rows_as_csv() {
    let d = tmp();
    let path = d.path().join("bench.csv");
    // `lbm bench` of a 64² D2Q9 lattice with `args`: its output, and its CSV's header and rows.
    let bench = |args: &[&str], csv: &Path| {
        let common = ["bench", "--model", "d2q9", "--d2q9-size", "64x64"];
        let out = ok(&[&common[..], args, &["--csv", s(csv)]].concat());
        let mut r = csv::Reader::from_path(csv).unwrap();
        let header = r.headers().unwrap().clone();
        let rows: Vec<csv::StringRecord> = r.records().map(Result::unwrap).collect();
        (out, header, rows)
    };
    let (out, header, rows) = bench(
        &[
            "--precision",
            "f64",
            "f32",
            "--layout",
            "soa",
            "caosoa",
            "--backend",
            "cpu",
            "--iters",
            "1",
            "--bw-mib",
            "8",
        ],
        &path,
    );
    assert!(out.contains("FMA peak") && out.contains("spread"), "{out}");
    // 2 precisions × 2 layouts × (propagate, bc, collide, fused two-copy, fused in place).
    assert_eq!(rows.len(), 20, "{rows:?}");
    let at = |row: &csv::StringRecord, name: &str| -> String {
        let i = header
            .iter()
            .position(|h| h == name)
            .unwrap_or_else(|| panic!("{name}"));
        row[i].to_string()
    };
    let num = |row: &csv::StringRecord, name: &str| at(row, name).parse::<f64>().ok();
    for row in &rows {
        assert_eq!(
            (at(row, "backend"), at(row, "model")),
            ("cpu".into(), "D2Q9Bgk".into())
        );
        assert_eq!(num(row, "sites"), Some(4096.0));
        let mlups = num(row, "mlups").unwrap();
        let bytes = if at(row, "precision") == "f64" {
            144.0
        } else {
            72.0
        };
        match at(row, "kernel").as_str() {
            "bc" => assert!(num(row, "gb_per_s").is_none(), "{row:?}"),
            _ => {
                let gbs = num(row, "gb_per_s").unwrap();
                assert!((gbs / (mlups * bytes / 1e3) - 1.0).abs() < 1e-9, "{row:?}");
                assert!(num(row, "bandwidth_gb_per_s").unwrap() > 0.0, "{row:?}");
                assert!(num(row, "bandwidth_spread").unwrap() >= 0.0, "{row:?}");
            }
        }
        let computes = matches!(at(row, "kernel").as_str(), "collide" | "fused");
        assert_eq!(num(row, "gflop_per_s").is_some(), computes, "{row:?}");
        assert_eq!(num(row, "peak_gflop_per_s").is_some(), computes, "{row:?}");
        // What the tuning kept: a candidate distance per tuned pass (the in-place step's two
        // half-steps), none for propagate and bc; a 64² lattice fits in the caches, so its
        // two-copy step stores plainly or write-prefetched, never non-temporally.
        let passes = match (at(row, "kernel").as_str(), at(row, "scheme").as_str()) {
            ("propagate" | "bc", _) => 0,
            ("fused", "in-place") => 2,
            _ => 1,
        };
        let tuned = at(row, "tuned");
        // The fused step also says whether it swept two steps at once.
        let fused = at(row, "kernel") == "fused";
        let pairing = [", paired", ", separate"].map(|p| tuned.strip_suffix(p));
        assert_eq!(pairing.iter().any(Option::is_some), fused, "{row:?}");
        let tuned = pairing
            .into_iter()
            .flatten()
            .next()
            .unwrap_or(&tuned)
            .to_string();
        if passes == 0 {
            assert_eq!(tuned, "-", "{row:?}");
        } else {
            let parts: Vec<&str> = tuned.split(" / ").collect();
            assert_eq!(parts.len(), passes, "{row:?}");
            for part in parts {
                let kib = part.strip_suffix(" write-prefetched").unwrap_or(part);
                let kib: usize = kib.strip_suffix(" KiB").unwrap().parse().unwrap();
                assert!(lbm::PREFETCH_DISTANCES.contains(&(kib << 10)), "{row:?}");
                let two_copy =
                    (at(row, "kernel"), at(row, "scheme")) == ("fused".into(), "two-copy".into());
                assert!(
                    two_copy || part.ends_with(" KiB"),
                    "only the two-copy step chooses its stores: {row:?}"
                );
            }
        }
    }
    assert!(out.contains("tuned"), "{out}");
    let schemes: Vec<String> = rows
        .iter()
        .filter(|r| at(r, "kernel") == "fused")
        .map(|r| at(r, "scheme"))
        .collect();
    assert_eq!(schemes.iter().filter(|s| *s == "in-place").count(), 4);

    // The GPU's rows: the fused step in both schemes, its flop rate the collision's flops per
    // site times its updates, set against the device's FMA peak probed for the table.
    if gpu_available() {
        let gpu_args = ["--precision", "f32", "--layout", "soa", "--backend", "gpu"];
        let (out, _, rows) = bench(
            &[&gpu_args[..], &["--gpu-steps", "2"]].concat(),
            &d.path().join("gpu.csv"),
        );
        assert!(
            out.contains("f32: FMA peak") && out.contains("GFLOP/s (% peak)"),
            "{out}"
        );
        assert_eq!(rows.len(), 2, "{rows:?}");
        let flops: Vec<f64> = rows
            .iter()
            .map(|row| {
                assert_eq!(at(row, "backend"), "gpu");
                assert_eq!(at(row, "bandwidth_pattern"), "device copy");
                assert_eq!(
                    at(row, "tuned"),
                    "-",
                    "a GPU row gives its workgroup instead"
                );
                assert!(num(row, "peak_gflop_per_s").unwrap() > 0.0, "{row:?}");
                assert!(num(row, "peak_spread").unwrap() >= 0.0, "{row:?}");
                num(row, "gflop_per_s").unwrap() * 1e3 / num(row, "mlups").unwrap()
            })
            .collect();
        assert!(
            flops[0] >= 1.0
                && flops
                    .iter()
                    .all(|f| (f - f.round()).abs() < 1e-6 && f.round() == flops[0].round()),
            "flops per site {flops:?}"
        );
    }

    fails(
        &["bench", "--csv", "/nonexistent/dir/bench.csv"],
        &["csv", "its directory does not exist"],
    );
    fails(&["bench", "--csv", s(d.path())], &["it is a directory"]);
    fails(
        &["bench", "--split", "--csv", s(&path)],
        &["--csv", "--split"],
    );
}

/// The cavity runs to steady state and lies within 0.03 (lid units) of Ghia's tables; the
/// Poiseuille profile is the parabola to 1e-3; both judged by the program's own report.
#[test]
fn steady_cases_report_their_agreement_with_references() {
    let d = tmp();
    let cavity = ok(&["run", "cavity", "--lx", "64", "--out", s(d.path())]);
    assert!(cavity.contains("steady at step"), "{cavity}");
    let ghia = cavity
        .lines()
        .find(|l| l.starts_with("deviation from Ghia"))
        .unwrap_or_else(|| panic!("no comparison with Ghia:\n{cavity}"));
    let dev = number_after(ghia, "max ");
    assert!(dev < 0.03, "deviation from Ghia {dev}:\n{cavity}");
    let poiseuille = ok(&["run", "poiseuille", "--out", s(d.path())]);
    let err = number_after(&poiseuille, "from the parabola ");
    assert!(err < 1e-3, "relative L2 {err}:\n{poiseuille}");
}

/// A lattice that cannot fit (a 100000² cavity, ≈ 2 TiB with its outputs) is refused before any
/// work — no boundary compiled, nothing written — with what it needs, what is available and
/// the remedies.
#[test]
fn a_run_that_cannot_fit_is_refused_before_any_work() {
    let d = tmp();
    let out = d.path().join("out");
    let started = std::time::Instant::now();
    let t = fails(
        &[
            "run",
            "cavity",
            "--lx",
            "100000",
            "--re",
            "100000",
            "--out",
            s(&out),
            "--steps",
            "10",
        ],
        &[
            "the run needs ",
            " GiB (program ",
            ", populations ",
            "GiB available (",
            "try a smaller lattice (--lx, --ly)",
            "--precision f32",
        ],
    );
    // More ranks only where the program takes MPI; the in-place scheme only where the run
    // is not in place already (the CPU's default).
    assert_eq!(t.contains("more ranks"), cfg!(feature = "mpi"), "{t}");
    assert!(!t.contains("--scheme in-place"), "{t}");
    assert!(
        started.elapsed() < std::time::Duration::from_secs(60),
        "refused only after {:?}:\n{t}",
        started.elapsed()
    );
    let written = std::fs::read_dir(&out).map_or(0, |d| d.count());
    assert_eq!(written, 0, "nothing written by a refused run:\n{t}");
}

/// The summary gives the run's peak memory (VmHWM, read before the bandwidth probe) beside
/// the estimate the memory check used: the estimate is of the right size (the lattice's two
/// copies and the fields of the outputs and images, here ≈ 0.26 GiB).
/// On a CPU adapter (lavapipe) the device's copies are in the host's memory: the gpu and
/// hetero runs count them before any work.
#[test]
fn a_cpu_adapters_copies_are_counted_as_the_hosts() {
    if !gpu_available() {
        return;
    }
    let cpu_adapter = lbm::gpu::GpuContext::new(&Default::default()).is_ok_and(|ctx| ctx.is_cpu());
    let d = tmp();
    for backend in ["gpu", "hetero"] {
        let out = d.path().join(backend);
        let t = fails(
            &[
                "run",
                "cavity",
                "--lx",
                "100000",
                "--re",
                "100000",
                "--backend",
                backend,
                "--out",
                s(&out),
            ],
            &["the run needs ", ", populations "],
        );
        assert_eq!(t.contains(", device "), cpu_adapter, "{backend}: {t}");
        assert!(!out.exists(), "{backend}: nothing written by a refused run");
    }
}

#[test]
fn the_summary_gives_the_peak_memory_beside_the_estimate() {
    let d = tmp();
    let t = ok(&[
        "run",
        "taylor-green",
        "--lx",
        "1024",
        "--steps",
        "20",
        "--output-every",
        "20",
        "--scheme",
        "two-copy",
        "--precision",
        "f64",
        "--out",
        s(d.path()),
    ]);
    let line = t
        .lines()
        .find_map(|l| l.trim().strip_prefix("peak memory (VmHWM): "))
        .unwrap_or_else(|| panic!("no peak memory in the summary:\n{t}"));
    let nums: Vec<f64> = line
        .split(|c: char| !(c.is_ascii_digit() || c == '.'))
        .filter_map(|w| w.parse().ok())
        .collect();
    let [peak, estimate] = nums[..] else {
        panic!("`{line}`")
    };
    assert!(
        (0.2..0.35).contains(&estimate) && peak > 0.4 * estimate && peak < 2.0 * estimate + 0.125,
        "peak {peak} GiB, estimate {estimate} GiB: `{line}`"
    );
}

/// `lbm run advection-diffusion` (the D2Q5 scalar model): the report's L2 error and
/// diffusivity, the scalar's total constant to round-off in the diagnostics, and the GPU and
/// the host/device split giving the CPU's diagnostics to 1e-12.
#[test]
fn the_advection_diffusion_case_conserves_its_scalar_on_every_backend() {
    let args = [
        "run",
        "advection-diffusion",
        "--lx",
        "64",
        "--velocity",
        "0.1",
        "--steps",
        "149",
        "--diagnostics-every",
        "50",
        "--output-every",
        "0",
    ];
    let cpu = tmp();
    let out = ok(&[&args[..], &["--out", s(cpu.path())]].concat());
    let l2 = number_after(&out, "relative L2 ");
    assert!(l2 < 3e-3, "relative L2 {l2}:\n{out}");
    let across = out
        .lines()
        .find(|l| l.starts_with("diffusivity across the flow"))
        .unwrap_or_else(|| panic!("no diffusivity:\n{out}"));
    let pct: f64 = across
        .rsplit('(')
        .next()
        .and_then(|p| p.trim_end_matches(&[')', '%'][..]).parse().ok())
        .unwrap_or_else(|| panic!("no percentage in {across}"));
    assert!(pct.abs() < 1.0, "D_y off by {pct}%:\n{out}");
    let reference = diagnostics(cpu.path(), "advection-diffusion");
    let total = reference[0][7];
    for row in &reference {
        assert!(
            (row[7] - total).abs() <= 1e-12 * total,
            "Σ(φ − φ₀): {row:?}"
        );
    }
    if !gpu_available() {
        return;
    }
    for backend in [
        &["--backend", "gpu"][..],
        &["--backend", "hetero", "--host-columns", "8"],
    ] {
        let d = tmp();
        ok(&[&args[..], backend, &["--out", s(d.path())]].concat());
        let got = diagnostics(d.path(), "advection-diffusion");
        assert_eq!(got.len(), reference.len());
        for (gr, rr) in got.iter().zip(&reference) {
            for (g, r) in gr.iter().zip(rr) {
                assert!(
                    (g - r).abs() <= 1e-12 * r.abs().max(1.0),
                    "{backend:?}: {g} vs {r}"
                );
            }
        }
    }
}

/// `lbm run rayleigh-benard` stops on Ctrl-C as every case does: after a step, with its
/// diagnostics row and both lattices' checkpoints of that step, which resume.
#[test]
fn the_coupled_case_stops_on_ctrl_c_with_both_checkpoints() {
    let d = tmp();
    let common = ["run", "rayleigh-benard", "--ly", "16", "--out", s(d.path())];
    let (t, code) = stopped_by(
        "INT",
        &[
            &common[..],
            &["--steps", "100000000", "--checkpoint-every", "100000000"],
        ]
        .concat(),
    );
    assert_eq!(code, Some(130), "{t}");
    let step = step_in(&t, "stopped by SIGINT at step ");
    assert!(
        t.contains(&format!("step {step} (t = ")),
        "the last row: {t}"
    );
    let flow = d.path().join("rayleigh-benard_checkpoint.lbm");
    assert!(t.contains(&format!("--resume {}", flow.display())), "{t}");
    let more = (step + 10).to_string();
    let out = ok(&[&common[..], &["--steps", &more, "--resume", s(&flow)]].concat());
    assert!(out.contains(&format!("resumed at step {step}")), "{out}");
}

/// `lbm run rayleigh-benard`: two coupled lattices; the run resumed from both checkpoints gives
/// the uninterrupted run's diagnostics bitwise and keeps its earlier rows; the GPU's and the
/// host/device split's agree with the CPU's; the settings the case cannot honour are refused by
/// key.
#[test]
fn the_rayleigh_benard_case_resumes_from_both_checkpoints_and_runs_on_the_gpu_and_split() {
    // A layer of 16 sites at Ra = 5000: the rolls grow within the first diffusion time.
    let args = ["run", "rayleigh-benard", "--ly", "16", "--rayleigh", "5000"];
    let whole = tmp();
    let out = ok(&[
        &args[..],
        &[
            "--steps",
            "3000",
            "--output-every",
            "1000",
            "--out",
            s(whole.path()),
        ],
    ]
    .concat());
    assert!(
        out.contains("D2Q9Boussinesq + D2Q5AdvectionDiffusion 32 × 16"),
        "{out}"
    );
    // A third of a diffusion time: the rolls still grow, and the summary says so.
    assert!(out.contains("not steady yet at t = 0.315"), "{out}");
    assert!(
        out.contains("peak memory (VmHWM): ") && out.contains(" GiB (estimated "),
        "{out}"
    );
    let reference = diagnostics(whole.path(), "rayleigh-benard");
    assert_eq!(reference.len(), 4, "rows at steps 0, 1000, 2000, 3000");

    let cut = tmp();
    let first = [
        &args[..],
        &[
            "--output-every",
            "1000",
            "--checkpoint-every",
            "2000",
            "--out",
            s(cut.path()),
        ],
    ]
    .concat();
    ok(&[&first[..], &["--steps", "2000"]].concat());
    let flow = cut.path().join("rayleigh-benard_checkpoint.lbm");
    let resumed = ok(&[&first[..], &["--steps", "3000", "--resume", s(&flow)]].concat());
    assert!(resumed.contains("resumed at step 2000"), "{resumed}");
    assert_eq!(diagnostics(cut.path(), "rayleigh-benard"), reference);

    fails(
        &[&args[..], &["--lx", "40"]].concat(),
        &["`lx`", "follows from its height"],
    );
    fails(
        &[&args[..], &["--tau", "0.8"]].concat(),
        &["`tau`", "does not apply to case rayleigh-benard"],
    );
    fails(
        &[
            "run",
            "rayleigh-benard",
            "--rayleigh",
            "1e7",
            "--out",
            s(cut.path()),
        ],
        &["`rayleigh`", "relaxation time", "raise --velocity"],
    );
    // A part of the set alone is one lattice's checkpoint, refused by name; a set whose
    // part is damaged is refused, and so is one whose part is missing.
    let part = std::fs::read_dir(cut.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with(".second"))
        .expect("the temperature's part of the set");
    fails(
        &[&args[..], &["--resume", s(&part), "--out", s(cut.path())]].concat(),
        &["checkpoint of one lattice (the model D2Q5AdvectionDiffusion)"],
    );
    // The newest set and the previous one kept beside it (whose fallback `fallback.rs`
    // tests) both damaged: nothing whole is left to resume.
    let parts: Vec<_> = std::fs::read_dir(cut.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".second"))
        .collect();
    assert_eq!(parts.len(), 2, "{parts:?}");
    for part in &parts {
        let mut bytes = std::fs::read(part).unwrap();
        let last = bytes.len() - 2;
        bytes[last] ^= 1;
        std::fs::write(part, &bytes).unwrap();
    }
    let again = [&first[..], &["--steps", "3000", "--resume", s(&flow)]].concat();
    fails(&again, &["is damaged", ".second does not match its CRC-32"]);
    for part in &parts {
        std::fs::remove_file(part).unwrap();
    }
    fails(&again, &[".second"]);

    if !gpu_available() {
        return;
    }
    // The GPU in place, and the split (the borders' columns on the host, the bulk on the
    // device, each with its own sites' fields).
    for backend in [
        ["gpu", "--scheme", "in-place"],
        ["hetero", "--host-columns", "8"],
    ] {
        let dir = tmp();
        let out = ok(&[
            &args[..],
            &["--steps", "3000", "--output-every", "1000", "--backend"],
            &backend[..],
            &["--out", s(dir.path())],
        ]
        .concat());
        assert!(backend[0] != "hetero" || out.contains("M = 8"), "{out}");
        let got = diagnostics(dir.path(), "rayleigh-benard");
        assert_eq!(got.len(), reference.len());
        for (g, r) in got.iter().zip(&reference) {
            for (a, b) in g.iter().zip(r) {
                assert!(
                    (a - b).abs() <= 1e-9 * b.abs().max(1e-3),
                    "{} {g:?} vs cpu {r:?}",
                    backend[0]
                );
            }
        }
    }
}

/// `lbm bench --split` sweeps a small lattice, 2-D and 3-D, prints the model beside the
/// measurements and marks the tuned and the best split.
#[test]
fn bench_split_sweeps_and_marks_the_tuned_split() {
    if !gpu_available() {
        return;
    }
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_lbm"))
        .args([
            "bench",
            "--split",
            "--model",
            "d2q9",
            "--split-size",
            "32x16",
        ])
        .args(["--split-points", "3", "--split-steps", "2"])
        .output()
        .expect("the lbm program runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for want in [
        "model MLUPS",
        "<- M* (tuned)",
        "<- best measured",
        "device only",
        "host only",
    ] {
        assert!(text.contains(want), "no `{want}` in\n{text}");
    }
    // The 3-D sweep: a duct cut into slabs of planes; a 3-D model it does not take is refused
    // naming those it takes.
    let bench = |model: &str| {
        std::process::Command::new(env!("CARGO_BIN_EXE_lbm"))
            .args(["bench", "--split", "--model", model])
            .args(["--split-d3q19-size", "12x8x8", "--split-points", "3"])
            .args(["--split-steps", "2"])
            .output()
            .expect("the lbm program runs")
    };
    let out = bench("d3q19");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && text.contains("D3Q19Bgk") && text.contains("12×8×8"),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("<- M* (tuned)"), "{text}");
    let out = bench("d3q27");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("d2q9, d2q37, d3q19"),
        "{err}"
    );
}

/// The coupled case checkpointing at every step, killed with SIGKILL (no chance to tidy up) at
/// 20 moments drawn at random: every time the run that follows resumes from the checkpoint set
/// the last one left (or starts afresh when it was killed before its first), and the last set
/// resumes to a finished run.
#[test]
fn the_coupled_checkpoint_survives_twenty_kills_at_random_moments() {
    use std::process::Stdio;
    let d = tmp();
    let cp = d.path().join("rayleigh-benard_checkpoint.lbm");
    let common = [
        "run",
        "rayleigh-benard",
        "--ly",
        "16",
        "--checkpoint-every",
        "1",
        "--images",
        "",
        "--vtk",
        "false",
        "--out",
        s(d.path()),
    ];
    // xorshift64: the moments are random but the same at every run of the test.
    let mut seed = 0x9E37_79B9_7F4A_7C15_u64;
    let mut resumed = 0;
    for _ in 0..20 {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let mut args = common.to_vec();
        args.extend(["--steps", "100000000"]);
        if cp.exists() {
            args.extend(["--resume", s(&cp)]);
            resumed += 1;
        } else {
            args.push("--force");
        }
        let mut child = spawn(&args, 1, Stdio::null(), Stdio::piped());
        std::thread::sleep(std::time::Duration::from_millis(100 + seed % 1400));
        if let Some(status) = child.try_wait().unwrap() {
            let o = child.wait_with_output().unwrap();
            panic!("lbm {args:?} ended by itself ({status}):\n{}", text(&o));
        }
        child.kill().unwrap();
        child.wait().unwrap();
    }
    assert!(
        resumed >= 15,
        "only {resumed} of 20 runs found a checkpoint to resume"
    );
    let step = lbm::read_set(&cp).unwrap().step;
    let more = (step + 3).to_string();
    let out = ok(&[&common[..], &["--steps", &more, "--resume", s(&cp)]].concat());
    assert!(out.contains(&format!("resumed at step {step}")), "{out}");
}
