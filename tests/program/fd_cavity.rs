//! `lbm run fd-cavity`: the finite-difference cavity reaches its steady state, matches Ghia et
//! al. (1982) on a coarse grid, writes its centre lines, images and VTK, stops and resumes
//! through checkpoints, and refuses what it does not take.

use crate::cli_support::{fails, number_after, ok, s, step_in, stopped_by, tmp};

/// Re = 100 on 33² nodes (the CI's coarse run): within 0.02 of Ghia's points on both centre
/// lines (0.0102 and 0.0103 when written; 0.0061 on 65² nodes).
#[test]
fn the_coarse_cavity_matches_ghia() {
    let dir = tmp();
    let out = ok(&[
        "run",
        "fd-cavity",
        "--lx",
        "33",
        "--re",
        "100",
        "--images",
        "speed,p",
        "--out",
        s(dir.path()),
    ]);
    assert!(out.contains("steady after"), "{out}");
    let (u, v) = (
        number_after(&out, "max |u − u_ref| ="),
        number_after(&out, "max |v − v_ref| ="),
    );
    assert!(u < 0.02 && v < 0.02, "{out}");
    let csv = std::fs::read_to_string(dir.path().join("fd-cavity_centrelines.csv")).unwrap();
    assert_eq!(csv.lines().count(), 34, "a header and a row per node");
    let last: Vec<f64> = csv
        .lines()
        .last()
        .unwrap()
        .split(',')
        .map(|x| x.parse().unwrap())
        .collect();
    assert_eq!(last[..2], [1.0, 1.0], "the lid's node moves with the lid");
    for f in ["speed", "p"] {
        assert!(dir.path().join(format!("fd-cavity_{f}.png")).exists());
    }
    // The final state as VTK: a cell of side h per node, the CSV's centre lines in it.
    let vti = dir.path().join("fd-cavity_fields.vti");
    let head = String::from_utf8_lossy(&std::fs::read(&vti).unwrap()[..400]).into_owned();
    assert!(
        head.contains("Origin=\"-0.015625 -0.015625 0\" Spacing=\"0.03125 0.03125 0.03125\""),
        "{head}"
    );
    let vtk = lbm::output::vtk::read_joined(&vti).unwrap();
    assert_eq!((vtk.lx, vtk.ly, vtk.lz), (33, 33, 1));
    let names: Vec<(&str, usize)> = vtk.arrays.iter().map(|a| (a.0.as_str(), a.1)).collect();
    assert_eq!(names, [("p", 1), ("velocity", 3)]);
    let velocity = &vtk.arrays[1].2;
    for (j, row) in csv.lines().skip(1).enumerate() {
        let u: f64 = row.split(',').nth(1).unwrap().parse().unwrap();
        // u on the vertical centre line x = ½ (node 16 of 33), at height j.
        assert_eq!(velocity[3 * (j * 33 + 16)], u, "node (16, {j})");
    }
    // A second run into the same directory is refused, then allowed with --force.
    fails(
        &["run", "fd-cavity", "--lx", "17", "--out", s(dir.path())],
        &["--force"],
    );
    ok(&[
        "run",
        "fd-cavity",
        "--lx",
        "17",
        "--steps",
        "10",
        "--images",
        "",
        "--out",
        s(dir.path()),
        "--force",
    ]);
    assert!(
        !dir.path().join("fd-cavity_p.png").exists(),
        "--force removes the earlier outputs"
    );
    // --steps bounds the run.
    let short = ok(&[
        "run",
        "fd-cavity",
        "--lx",
        "17",
        "--steps",
        "10",
        "--images",
        "",
        "--out",
        s(dir.path()),
        "--force",
    ]);
    assert!(short.contains("not steady yet after 10 steps"), "{short}");
}

/// `--backend gpu` (lavapipe in CI) and `--backend hetero` (4 rows at each end on the host,
/// the others on the device) write the CPU's centre lines within 1e-12, in the same number of
/// steps.
#[test]
fn the_cavity_on_the_gpu_and_split_is_the_cpu_run() {
    let run = |backend: &[&str]| {
        let dir = tmp();
        let mut args = vec![
            "run",
            "fd-cavity",
            "--lx",
            "25",
            "--steps",
            "2000",
            "--images",
            "",
            "--out",
            s(dir.path()),
            "--backend",
        ];
        args.extend_from_slice(backend);
        let out = ok(&args);
        let csv = std::fs::read_to_string(dir.path().join("fd-cavity_centrelines.csv")).unwrap();
        let values: Vec<f64> = csv
            .lines()
            .skip(1)
            .flat_map(|l| {
                l.split(',')
                    .map(|x| x.parse::<f64>().unwrap())
                    .collect::<Vec<_>>()
            })
            .collect();
        (out, values)
    };
    let (cpu_out, cpu) = run(&["cpu"]);
    assert!(cpu_out.contains("after 2000 steps"), "{cpu_out}");
    for backend in [
        &["gpu"][..],
        &["gpu", "--layout", "aos"],
        &["hetero", "--host-columns", "4", "--layout", "caosoa"],
    ] {
        let (out, values) = run(backend);
        let on = match backend[0] {
            "gpu" => ", on ",
            _ => ", split: 4 rows at each end of each block on the host, the others on ",
        };
        assert!(
            out.contains(on) && out.contains("after 2000 steps"),
            "{out}"
        );
        assert_eq!(cpu.len(), values.len());
        for (a, b) in cpu.iter().zip(&values) {
            assert!((a - b).abs() <= 1e-12, "{backend:?}: {a} against {b}");
        }
    }
    fails(
        &[
            "run",
            "fd-cavity",
            "--lx",
            "25",
            "--backend",
            "hetero",
            "--host-columns",
            "12",
        ],
        &["give between 3 and 11 host planes"],
    );
}

/// A run checkpointed every 100 steps and stopped at step 300, then resumed to step 600 from
/// its checkpoint (its own outputs replaced without --force), writes the uninterrupted run's
/// centre lines and VTK bit for bit. A resume refuses the checkpoint of another Reynolds
/// number or precision, a step count it has passed, and a file that is not there; --force
/// keeps the checkpoint.
#[test]
fn a_resumed_cavity_is_the_uninterrupted_run() {
    let run = |dir: &std::path::Path, steps: &str, extra: &[&str]| {
        let mut args = vec![
            "run",
            "fd-cavity",
            "--lx",
            "21",
            "--steps",
            steps,
            "--images",
            "",
            "--out",
            s(dir),
        ];
        args.extend_from_slice(extra);
        args.iter().map(|a| a.to_string()).collect::<Vec<_>>()
    };
    fn args(v: &[String]) -> Vec<&str> {
        v.iter().map(String::as_str).collect()
    }
    let (whole, part) = (tmp(), tmp());
    ok(&args(&run(whole.path(), "600", &[])));
    ok(&args(&run(
        part.path(),
        "300",
        &["--checkpoint-every", "100"],
    )));
    let ckpt = part.path().join("fd-cavity_checkpoint.lbm");
    let out = ok(&args(&run(part.path(), "600", &["--resume", s(&ckpt)])));
    assert!(
        out.contains("resumed from") && out.contains("at step 300"),
        "{out}"
    );
    assert!(out.contains("not steady yet after 600 steps"), "{out}");
    for file in ["fd-cavity_centrelines.csv", "fd-cavity_fields.vti"] {
        let (a, b) = (whole.path().join(file), part.path().join(file));
        assert!(
            std::fs::read(a).unwrap() == std::fs::read(b).unwrap(),
            "{file}"
        );
    }
    let other = tmp();
    let elsewhere = |extra: &[&str]| {
        let mut v = run(other.path(), "600", &["--resume", s(&ckpt)]);
        v.extend(extra.iter().map(|a| a.to_string()));
        v
    };
    fails(
        &args(&elsewhere(&["--re", "200"])),
        &["does not fit this run", "parameter nu is 0.01"],
    );
    fails(
        &args(&elsewhere(&["--precision", "f32"])),
        &["computed in f64, this run computes in f32"],
    );
    fails(
        &args(&run(other.path(), "200", &["--resume", s(&ckpt)])),
        &["setting `steps`", "at step 300 already"],
    );
    let missing = other.path().join("missing.lbm");
    fails(
        &args(&run(other.path(), "600", &["--resume", s(&missing)])),
        &["missing.lbm"],
    );
    ok(&args(&run(part.path(), "10", &["--force"])));
    assert!(ckpt.exists(), "--force keeps the checkpoint");
}

/// SIGHUP stops the march after a step: the checkpoint and the final state's outputs are
/// written, the exit status is 128 + 1, and the checkpoint resumes.
#[test]
fn a_signal_stops_the_march_with_its_outputs_and_checkpoint() {
    let d = tmp();
    let common = [
        "run",
        "fd-cavity",
        "--lx",
        "65",
        "--images",
        "",
        "--out",
        s(d.path()),
    ];
    let (t, code) = stopped_by(
        "HUP",
        &[
            &common[..],
            &["--steps", "100000000", "--checkpoint-every", "100000000"],
        ]
        .concat(),
    );
    assert_eq!(code, Some(129), "{t}");
    assert!(t.contains("stopped by SIGHUP at step"), "{t}");
    let step = step_in(&t, "stopped by SIGHUP at step ");
    assert!(t.contains(&format!("after {step} steps")), "{t}");
    for file in [
        "fd-cavity_checkpoint.lbm",
        "fd-cavity_centrelines.csv",
        "fd-cavity_fields.vti",
    ] {
        assert!(d.path().join(file).exists(), "{file}: {t}");
    }
    let ckpt = d.path().join("fd-cavity_checkpoint.lbm");
    let more = (step + 5).to_string();
    let out = ok(&[&common[..], &["--steps", &more, "--resume", s(&ckpt)]].concat());
    assert!(out.contains(&format!("at step {step}")), "{out}");
}

/// `--layout aos` and `--layout caosoa` store the unknowns otherwise and write the soa run's
/// centre lines bit for bit.
#[test]
fn every_layout_writes_the_same_centre_lines() {
    let run = |layout: &str| {
        let dir = tmp();
        let out = ok(&[
            "run",
            "fd-cavity",
            "--lx",
            "21",
            "--steps",
            "300",
            "--images",
            "",
            "--layout",
            layout,
            "--out",
            s(dir.path()),
        ]);
        assert!(out.contains(&format!("f64, cpu, {layout}")), "{out}");
        std::fs::read(dir.path().join("fd-cavity_centrelines.csv")).unwrap()
    };
    let soa = run("soa");
    for layout in ["aos", "caosoa"] {
        assert!(run(layout) == soa, "{layout}");
    }
}

#[test]
fn a_grid_too_coarse_for_the_reynolds_number_is_refused() {
    fails(
        &["run", "fd-cavity", "--lx", "33", "--re", "1000"],
        &["cell Reynolds number", "--lx 64 or more"],
    );
}

#[test]
fn what_fd_cavity_does_not_take_is_refused_by_key() {
    fails(
        &[
            "run",
            "fd-cavity",
            "--output-every",
            "10",
            "--layout",
            "csoa",
            "--host-columns",
            "3",
            "--adapter",
            "best",
            "--precision",
            "f16s",
            "--lx",
            "4",
            "--re",
            "0",
            "--steps",
            "0",
            "--images",
            "T",
        ],
        &[
            "setting `output-every`: does not apply to fd-cavity",
            "setting `layout`: csoa: fd-cavity's soa is processed in clusters",
            "setting `host-columns`: applies to backend hetero only",
            "setting `adapter`: chooses the GPU of --backend gpu or hetero",
            "setting `precision`",
            "setting `lx`: 4 nodes per side are too few",
            "setting `steps`: 0",
            "setting `re`",
            "setting `images`: `T` is not a field of fd-cavity",
        ],
    );
}
