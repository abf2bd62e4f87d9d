//! Hostile and careless input to `lbm run` and `lbm bench`: every one refused before any work
//! with a message that names the setting and what to do — no crash, no panic, no hang, nothing
//! written outside `--out`, no outputs of two runs mixed, no state that diverged written.

use std::path::Path;

use proptest::prelude::*;

use crate::cli_support::{DIVERGING_VORTEX, fails, lbm, ok, s, spawn, text, tmp};

/// The process ended by itself with a failure, not by a signal or a panic.
fn refused_cleanly(args: &[&str]) -> String {
    let o = lbm(args);
    let t = text(&o);
    assert!(
        o.status.code().is_some_and(|c| c != 0 && c != 101),
        "lbm {args:?} ended with {} instead of a refusal:\n{t}",
        o.status
    );
    assert!(!t.contains("panicked"), "lbm {args:?} panicked:\n{t}");
    t
}

/// Sizes, steps and periods of any magnitude: refused with the key named, or too large for
/// memory, never a crash (a lattice 2⁶¹ sites high once wrapped the memory estimate around
/// and wrote past a tiny allocation: a segmentation fault).
#[test]
fn numbers_of_any_magnitude_are_refused_by_key() {
    let d = tmp();
    let out = s(d.path());
    let t = refused_cleanly(&[
        "run",
        "poiseuille",
        "--lx",
        "8",
        "--ly",
        "2305843009213693952",
        "--out",
        out,
    ]);
    assert!(t.contains("smaller lattice"), "{t}");
    for (key, value, needle) in [
        ("--steps", "9223372036854775808", "too large"),
        ("--lx", "18446744073709551615", "too large"),
        ("--output-every", "99999999999999999999", "too large"),
        ("--lx", "-5", "negative"),
        ("--lx", "1.5", "not a whole number"),
        ("--checkpoint-every", "-1", "negative"),
    ] {
        let t = refused_cleanly(&["run", "taylor-green", key, value, "--out", out]);
        assert!(t.contains(key) && t.contains(needle), "{key} {value}:\n{t}");
    }
    let t = refused_cleanly(&["run", "cavity", "--re", "-5", "--out", out]);
    assert!(t.contains("setting `re`: -5 is not allowed"), "{t}");
    // Too large for memory, with what would make it fit.
    let t = refused_cleanly(&["run", "taylor-green", "--lx", "200000", "--out", out]);
    assert!(
        t.contains("GiB available") && t.contains("a smaller lattice"),
        "{t}"
    );
    assert!(
        !t.contains("--scheme in-place"),
        "the cpu backend runs in place already:\n{t}"
    );
    // The coupled lattices of Rayleigh–Bénard: each rank holds its slab of both, so more ranks
    // are a remedy where the program takes MPI.
    // (Ra = 10⁸ keeps both relaxation times below 100 in so deep a layer.)
    let t = refused_cleanly(&[
        "run",
        "rayleigh-benard",
        "--ly",
        "100000",
        "--rayleigh",
        "1e8",
        "--out",
        out,
    ]);
    assert!(
        t.contains("flow populations")
            && t.contains("a smaller lattice")
            && t.contains("mpiexec") == cfg!(feature = "mpi"),
        "{t}"
    );
    assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 0);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]
    /// Any combination of sizes, steps and output periods is refused cleanly or runs (the
    /// sizes and steps that can run are small, so that every run is short).
    #[test]
    fn any_sizes_steps_and_periods_are_refused_cleanly_or_run(
        lx in prop_oneof![0u64..40, Just(1u64 << 40), Just(1u64 << 62), Just(u64::MAX)],
        steps in prop_oneof![0u64..30, Just(1u64 << 63), Just(u64::MAX)],
        every in prop_oneof![0u64..30, Just(1u64 << 62), Just(u64::MAX)],
    ) {
        let d = tmp();
        let (lx, steps, every) = (lx.to_string(), steps.to_string(), every.to_string());
        let args = [
            "run", "taylor-green", "--lx", &lx, "--steps", &steps, "--output-every", &every,
            "--check-every", "1", "--vtk", "false", "--images", "", "--out", s(d.path()),
        ];
        let o = lbm(&args);
        let t = text(&o);
        prop_assert!(o.status.code().is_some_and(|c| c != 101), "{args:?}: {}\n{t}", o.status);
        prop_assert!(!t.contains("panicked"), "{args:?}: {t}");
    }
}

/// What is not a checkpoint is refused after a few bytes, saying what it is.
#[test]
fn files_that_are_not_checkpoints_are_refused() {
    let d = tmp();
    let out = d.path().join("out");
    let out = s(&out);
    if Path::new("/dev/zero").exists() {
        let t = refused_cleanly(&["run", "taylor-green", "--resume", "/dev/zero", "--out", out]);
        assert!(t.contains("not a regular file"), "{t}");
    }
    let binary = d.path().join("random.bin");
    let bytes: Vec<u8> = (0..65536u32)
        .map(|i| (i.wrapping_mul(2654435761) >> 11) as u8)
        .collect();
    std::fs::write(&binary, bytes).unwrap();
    let t = refused_cleanly(&["run", "taylor-green", "--resume", s(&binary), "--out", out]);
    assert!(t.contains("not an lbm checkpoint"), "{t}");
    assert!(!Path::new(out).exists(), "a refused run created {out}");
}

/// A cavity's checkpoint resumed by the Taylor–Green case with the same model, size and τ is
/// refused: the checkpoint says which case and settings wrote it.
#[test]
fn a_checkpoint_of_another_case_is_refused() {
    let (a, b) = (tmp(), tmp());
    ok(&[
        "run",
        "cavity",
        "--lx",
        "32",
        "--steps",
        "20",
        "--checkpoint-every",
        "20",
        "--out",
        s(a.path()),
    ]);
    let cp = a.path().join("cavity_checkpoint.lbm");
    let header = lbm::read_manifest(&cp).unwrap();
    assert_eq!(header.about["case"], "cavity");
    let tau = header
        .params
        .iter()
        .find(|p| p.name == "tau")
        .unwrap()
        .value;
    let tau = tau.to_string();
    let t = refused_cleanly(&[
        "run",
        "taylor-green",
        "--lx",
        "32",
        "--tau",
        &tau,
        "--steps",
        "40",
        "--out",
        s(b.path()),
        "--resume",
        s(&cp),
    ]);
    assert!(
        t.contains("cannot resume") && t.contains("written by a cavity run"),
        "{t}"
    );
    assert_eq!(std::fs::read_dir(b.path()).unwrap().count(), 0);
}

/// A state that diverges between two checks is not written: every output the run wrote
/// before it stopped is of a state within the model's range.
#[test]
fn a_diverged_state_is_never_written() {
    let d = tmp();
    let t = refused_cleanly(
        &[
            DIVERGING_VORTEX,
            &[
                "--check-every",
                "5000",
                "--output-every",
                "20",
                "--images",
                "",
                "--out",
                s(d.path()),
            ],
        ]
        .concat(),
    );
    assert!(t.contains("diverged at step"), "{t}");
    let csv = std::fs::read_to_string(d.path().join("taylor-green_diagnostics.csv")).unwrap();
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let mach = header.iter().position(|h| *h == "max_mach").unwrap();
    let rows: Vec<f64> = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').nth(mach).unwrap().parse().unwrap())
        .collect();
    assert!(rows.len() > 1, "{csv}");
    assert!(
        rows.iter().all(|m| m.is_finite() && *m < 0.5),
        "a diverged state was written:\n{csv}"
    );
}

/// A symbolic link planted among the outputs is never followed, `--force` included.
#[cfg(unix)]
#[test]
fn links_in_the_output_directory_are_refused() {
    let (d, elsewhere) = (tmp(), tmp());
    std::os::unix::fs::symlink(elsewhere.path(), d.path().join("taylor-green_pieces")).unwrap();
    for force in [false, true] {
        let mut args = vec!["run", "taylor-green", "--lx", "32", "--steps", "10"];
        args.extend(["--out", s(d.path())]);
        if force {
            args.push("--force");
        }
        let t = refused_cleanly(&args);
        assert!(t.contains("symbolic link"), "{t}");
    }
    assert_eq!(std::fs::read_dir(elsewhere.path()).unwrap().count(), 0);
}

/// `--force` replaces the earlier run's outputs (none of its later steps left beside the new
/// ones); `--resume` into a directory of another run is refused; `bench --csv` keeps an
/// existing file without `--force`.
#[test]
fn outputs_of_two_runs_are_never_mixed() {
    let (a, b, fresh) = (tmp(), tmp(), tmp());
    let run = |dir: &Path, steps: &str, extra: &[&str]| {
        let mut args = vec!["run", "taylor-green", "--lx", "32", "--steps", steps];
        args.extend(["--output-every", "10", "--images", "", "--out", s(dir)]);
        args.extend(extra);
        lbm(&args)
    };
    let done = |o: std::process::Output| {
        assert!(o.status.success(), "{}", text(&o));
        text(&o)
    };
    // Run A: a checkpoint at its end, step 30.
    done(run(a.path(), "30", &["--checkpoint-every", "30"]));
    assert!(a.path().join("taylor-green_00000030.pvti").exists());
    // --force: another run in A's directory replaces A's outputs, its checkpoint kept.
    done(run(a.path(), "10", &["--force"]));
    for step in [20, 30] {
        let old = a.path().join(format!("taylor-green_{step:08}.pvti"));
        assert!(
            !old.exists(),
            "{} of the earlier run is left",
            old.display()
        );
    }
    let pvd = std::fs::read_to_string(a.path().join("taylor-green.pvd")).unwrap();
    assert!(!pvd.contains("00000020"), "{pvd}");
    let cp = a.path().join("taylor-green_checkpoint.lbm");
    assert!(cp.exists());
    // A's checkpoint resumed into its directory (now the forced run's) or into run B's is
    // refused: its outputs would be appended to another run's.
    done(run(b.path(), "20", &[]));
    for dir in [a.path(), b.path()] {
        let o = run(dir, "40", &["--resume", s(&cp)]);
        let t = text(&o);
        assert!(
            o.status.code() == Some(1)
                && t.contains("another taylor-green run")
                && t.contains("not of the run that wrote the checkpoint"),
            "{t}"
        );
    }
    // Into a new directory it resumes.
    let t = done(run(fresh.path(), "40", &["--resume", s(&cp)]));
    assert!(t.contains("resumed at step 30"), "{t}");

    let csv = b.path().join("rows.csv");
    std::fs::write(&csv, "keep").unwrap();
    let t = refused_cleanly(&["bench", "--csv", s(&csv), "--model", "d2q9"]);
    assert!(t.contains("exists") && t.contains("--force"), "{t}");
    assert_eq!(std::fs::read_to_string(&csv).unwrap(), "keep");
}

/// Options that would do nothing, and the messages of the careless: each names the setting and
/// what to do.
#[test]
fn careless_options_get_a_message_that_says_what_to_do() {
    let d = tmp();
    let out = s(d.path());
    let file = d.path().join("a-file");
    std::fs::write(&file, "").unwrap();
    let binary = d.path().join("binary.toml");
    std::fs::write(&binary, [0xff, 0xfe, 0x00, 0x80]).unwrap();
    // A closed surface of no thickness: a square and its back (cut along the other
    // diagonal), face to face.
    let flat = d.path().join("flat.stl");
    let facet = |v: [[f64; 3]; 3]| {
        let v = v.map(|p| format!("vertex {} {} {}\n", p[0], p[1], p[2]));
        format!(
            "facet normal 0 0 0\nouter loop\n{}endloop\nendfacet\n",
            v.concat()
        )
    };
    let [a, b, c, e] = [
        [0.0, 0.0, 0.0],
        [1.0, 0.0, 0.0],
        [1.0, 1.0, 0.0],
        [0.0, 1.0, 0.0],
    ];
    let square = [[a, b, c], [a, c, e], [a, e, b], [b, e, c]]
        .map(facet)
        .concat();
    std::fs::write(&flat, format!("solid flat\n{square}endsolid flat\n")).unwrap();
    for (args, needles) in [
        (
            vec!["run", "body", "--stl", s(&flat), "--out", out],
            vec!["`stl`", "flat along z", "closed surface around a solid"],
        ),
        (
            vec!["bench", "--bw-mib", "9223372036854775807"],
            vec!["`bw-mib`", "smaller --bw-mib"],
        ),
        (
            vec![
                "bench",
                "--model",
                "fd-cavity",
                "--fd-size",
                "4000000x4000000",
            ],
            vec!["`fd-size`", "smaller --fd-size"],
        ),
        (
            vec!["run", "taylor-green", "--adapter", "best", "--out", out],
            vec!["`adapter`", "--backend gpu"],
        ),
        (
            vec!["run", "taylor-green", "--out", s(&file)],
            vec!["is a file, not a directory"],
        ),
        (
            vec!["run", "taylor-green", "--out", "/proc/lbm-out"],
            vec!["cannot be created", "--out"],
        ),
        (
            vec![
                "run",
                "rayleigh-taylor",
                "--lx",
                "2",
                "--ly",
                "2",
                "--out",
                out,
            ],
            vec!["`lx`", "halo"],
        ),
        (
            vec![
                "run",
                "rayleigh-taylor",
                "--atwood",
                "2",
                "--gravity",
                "1",
                "--out",
                out,
            ],
            vec!["`atwood`", "`gravity`"],
        ),
        (
            // The run's settings and the case's physics, every one in one message.
            vec![
                "run",
                "taylor-green",
                "--tau",
                "nan",
                "--steps",
                "0",
                "--check-every",
                "0",
                "--adapter",
                "0",
                "--host-share",
                "0.5",
                "--until-steady",
                "-1",
                "--out",
                out,
            ],
            vec![
                "`tau`",
                "`steps`",
                "`check-every`",
                "`adapter`",
                "`host-share`",
                "`until-steady`",
            ],
        ),
        (
            vec!["run", "cavity", "--lx", "0", "--ly", "0", "--out", out],
            vec!["`lx`", "`ly`"],
        ),
        (
            vec!["run", "taylor-green", "--velocity", "0.3", "--out", out],
            vec!["`velocity`", "Mach"],
        ),
        (
            vec!["bench", "--d2q9-size", "32x32x32", "--model", "d2q9"],
            vec!["--d2q9-size", "3 side(s) given, 2 expected"],
        ),
        (
            vec!["bench", "--d2q9-size", "0x0", "--model", "d2q9"],
            vec!["--d2q9-size", "at least 1"],
        ),
        (
            vec!["bench", "--bw-mib", "0"],
            vec!["--bw-mib", "at least 1"],
        ),
        (
            vec!["bench", "--model", "d2q9", "--d2q9-size", "100000x100000"],
            vec!["`d2q9-size`", "smaller --d2q9-size"],
        ),
        (
            vec![
                "bench",
                "--model",
                "d2q9",
                "--d2q9-size",
                "3x3",
                "--backend",
                "cpu",
            ],
            vec!["`d2q9-size`", "3×3"],
        ),
        (
            vec!["bench", "--backend", "cpu", "--adapter", "best"],
            vec!["`adapter`"],
        ),
        (
            vec![
                "bench",
                "--split",
                "--model",
                "d2q9",
                "--split-size",
                "100000x100000",
            ],
            vec!["`split-size`", "smaller --split-size"],
        ),
        (
            vec!["run", "--config", s(&binary)],
            vec!["not text", "TOML case file"],
        ),
        // Finite settings whose result is not: an error, not exit 0 (the outputs are written).
        (
            vec![
                "run",
                "poiseuille",
                "--acceleration",
                "1e-300",
                "--steps",
                "20",
                "--out",
                out,
            ],
            vec![
                "not a finite number",
                "distance from the parabola NaN",
                "nearer",
            ],
        ),
    ] {
        let t = refused_cleanly(&args);
        for n in &needles {
            assert!(t.contains(n), "lbm {args:?}: `{n}` missing from:\n{t}");
        }
    }
    fails(
        &["run", "taylor-green", "--lx", "-5", "--out", out],
        &["--lx", "negative"],
    );
}

/// A run refused after its output directory would have been created leaves none behind.
#[test]
fn a_refused_run_leaves_no_directory() {
    let d = tmp();
    let out = d.path().join("new").join("dir");
    let t = refused_cleanly(&[
        "run",
        "taylor-green",
        "--backend",
        "gpu",
        "--adapter",
        "no-such-adapter-anywhere",
        "--out",
        s(&out),
    ]);
    assert!(t.contains("adapter"), "{t}");
    assert!(
        !d.path().join("new").exists(),
        "a refused run left {}",
        out.display()
    );
}

/// `lbm` with `args` started with piped output, and its status within `secs` seconds (a hang
/// fails the test, after killing the process).
fn ends_within(secs: u64, args: &[&str]) -> (String, Option<i32>) {
    use std::process::Stdio;
    use std::time::{Duration, Instant};
    let mut child = spawn(args, 2, Stdio::piped(), Stdio::piped());
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(secs) {
            let _ = child.kill();
            panic!("lbm {args:?} hung for {secs} s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let o = child.wait_with_output().unwrap();
    let t = text(&o);
    assert!(!t.contains("panicked"), "lbm {args:?} panicked:\n{t}");
    (t, o.status.code())
}

/// A named pipe and a device, wherever the program takes a path to read, are refused at once
/// with what they are: no hang waiting for a writer, no reading /dev/zero until memory runs
/// out. So is a checkpoint whose shard was replaced by a pipe.
#[test]
fn pipes_and_devices_are_refused_wherever_a_path_is_read() {
    let d = tmp();
    let fifo = d.path().join("fifo");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    assert!(made.is_ok_and(|s| s.success()), "mkfifo");
    let out = d.path().join("out");
    let (fifo, out) = (s(&fifo), s(&out));
    for (path, what) in [(fifo, "a named pipe"), ("/dev/zero", "a character device")] {
        for args in [
            vec!["run", "--config", path],
            vec!["run", "taylor-green", "--resume", path],
            vec!["run", "rayleigh-benard", "--resume", path],
            vec!["run", "fd-cavity", "--resume", path],
            vec!["run", "body", "--stl", path],
        ] {
            let mut args = args;
            args.extend(["--out", out]);
            let (t, code) = ends_within(60, &args);
            assert!(code.is_some_and(|c| c != 0), "{args:?}:\n{t}");
            assert!(
                t.contains(what) && t.contains("not a regular file"),
                "{args:?} should say it is {what}:\n{t}"
            );
        }
    }
    // A checkpoint whose shard is a pipe.
    let run = d.path().join("run");
    ok(&[
        "run",
        "taylor-green",
        "--lx",
        "16",
        "--steps",
        "4",
        "--checkpoint-every",
        "4",
        "--images",
        "",
        "--vtk",
        "false",
        "--out",
        s(&run),
    ]);
    let shard = std::fs::read_dir(&run)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().contains("_checkpoint.lbm."))
        .expect("a shard");
    std::fs::remove_file(&shard).unwrap();
    std::process::Command::new("mkfifo")
        .arg(&shard)
        .status()
        .unwrap();
    let manifest = run.join("taylor-green_checkpoint.lbm");
    let (t, code) = ends_within(
        60,
        &[
            "run",
            "taylor-green",
            "--lx",
            "16",
            "--steps",
            "8",
            "--resume",
            s(&manifest),
            "--out",
            s(&run),
        ],
    );
    assert!(
        code.is_some_and(|c| c != 0) && t.contains("a named pipe"),
        "{t}"
    );
    // Outputs a resume reads back (its diagnostics, its stamp) planted as pipes: never
    // waited on.
    for planted in ["taylor-green_diagnostics.csv", "taylor-green_run.toml"] {
        let again = d.path().join(planted);
        let args = |steps: &'static str| {
            let mut v = vec!["run", "taylor-green", "--lx", "16", "--steps", steps];
            v.extend(["--checkpoint-every", "4", "--images", "", "--vtk", "false"]);
            v.extend(["--out", s(&again)]);
            v
        };
        ok(&args("4"));
        let file = again.join(planted);
        std::fs::remove_file(&file).unwrap();
        std::process::Command::new("mkfifo")
            .arg(&file)
            .status()
            .unwrap();
        let manifest = again.join("taylor-green_checkpoint.lbm");
        let (t, code) = ends_within(60, &[&args("8")[..], &["--resume", s(&manifest)]].concat());
        assert!(code.is_some_and(|c| c != 0), "{planted}: {t}");
        assert!(!t.contains("panicked"), "{planted}: {t}");
    }
}

/// Two runs into one output directory: the second is refused while the first holds it, with
/// the first's process named; started together, one runs and the other is refused.
#[test]
fn one_run_at_a_time_owns_an_output_directory() {
    use std::process::Stdio;
    let d = tmp();
    let out = s(d.path());
    let long = [
        "run",
        "taylor-green",
        "--lx",
        "48",
        "--steps",
        "100000000",
        "--images",
        "",
        "--vtk",
        "false",
        "--out",
        out,
    ];
    let mut first = spawn(&long, 1, Stdio::null(), Stdio::null());
    let lock = d.path().join(".lbm-lock");
    let start = std::time::Instant::now();
    while std::fs::read_to_string(&lock).map_or(true, |t| t.is_empty()) {
        assert!(start.elapsed().as_secs() < 60, "the first run took no lock");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let t = fails(
        &long,
        &["another run writes there", "--out another directory"],
    );
    assert!(t.contains(&format!("process {}", first.id())), "{t}");
    let t = fails(
        &["run", "fd-cavity", "--lx", "17", "--out", out],
        &["another run writes there"],
    );
    assert!(
        !t.contains("steady"),
        "fd-cavity ran before it was refused:\n{t}"
    );
    first.kill().unwrap();
    first.wait().unwrap();
    // Started together: one runs, the other is refused (by the lock, or by the outputs the
    // first left when it has ended already).
    let e = tmp();
    let short = [
        "run",
        "taylor-green",
        "--lx",
        "32",
        "--steps",
        "200",
        "--images",
        "",
        "--vtk",
        "false",
        "--out",
        s(e.path()),
    ];
    let runs: Vec<_> = (0..2)
        .map(|_| spawn(&short, 1, Stdio::piped(), Stdio::piped()))
        .collect();
    let outcomes: Vec<_> = runs
        .into_iter()
        .map(|r| r.wait_with_output().unwrap())
        .collect();
    let succeeded = outcomes.iter().filter(|o| o.status.success()).count();
    let texts: Vec<String> = outcomes.iter().map(text).collect();
    assert_eq!(succeeded, 1, "{texts:?}");
    let refused = &texts[outcomes.iter().position(|o| !o.status.success()).unwrap()];
    assert!(
        refused.contains("another run writes there") || refused.contains("outputs of an earlier"),
        "{refused}"
    );
}

/// A closed pipe on standard output ends a command quietly (status 141, as SIGPIPE would),
/// and a run after its step with its checkpoint; a full disk is an error message. Never the
/// panic of a failed `println!`.
#[test]
fn a_closed_pipe_or_a_full_disk_on_stdout_never_panics() {
    use std::io::BufRead;
    use std::process::{Command, Stdio};
    if let Ok(full) = std::fs::File::create("/dev/full") {
        let o = Command::new(env!("CARGO_BIN_EXE_lbm"))
            .arg("models")
            .stdout(full)
            .output()
            .unwrap();
        let t = text(&o);
        assert_eq!(o.status.code(), Some(1), "{t}");
        assert!(t.contains("standard output could not be written"), "{t}");
        assert!(!t.contains("panicked"), "{t}");
    }
    let mut models = spawn(&["models"], 2, Stdio::piped(), Stdio::piped());
    drop(models.stdout.take());
    let o = models.wait_with_output().unwrap();
    assert!(!text(&o).contains("panicked"), "{}", text(&o));
    assert!(matches!(o.status.code(), Some(0 | 141)), "{}", o.status);
    // A run whose reader goes after its first lines.
    let d = tmp();
    let mut run = spawn(
        &[
            "run",
            "taylor-green",
            "--lx",
            "32",
            "--steps",
            "100000000",
            "--output-every",
            "20",
            "--checkpoint-every",
            "100000",
            "--images",
            "",
            "--vtk",
            "false",
            "--out",
            s(d.path()),
        ],
        2,
        Stdio::piped(),
        Stdio::piped(),
    );
    let mut lines = std::io::BufReader::new(run.stdout.take().unwrap()).lines();
    for _ in 0..3 {
        lines.next().unwrap().unwrap();
    }
    drop(lines);
    let o = run.wait_with_output().unwrap();
    let t = text(&o);
    assert_eq!(o.status.code(), Some(141), "{t}");
    assert!(
        t.contains("stopped by SIGPIPE at step") && !t.contains("panicked"),
        "{t}"
    );
    assert!(d.path().join("taylor-green_checkpoint.lbm").exists());
}

/// An output given as a device, a pipe or a link is never replaced (as root, `--csv /dev/null
/// --force` once replaced /dev/null with a regular file).
#[test]
fn a_device_or_a_link_as_an_output_is_never_replaced() {
    let d = tmp();
    let target = d.path().join("kept.txt");
    std::fs::write(&target, "kept").unwrap();
    let link = d.path().join("link.csv");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    for (path, what) in [
        ("/dev/null", "a character device"),
        (s(&link), "a symbolic link"),
    ] {
        fails(
            &["bench", "--csv", path, "--force", "--model", "d2q9"],
            &[what],
        );
    }
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "kept");
}

/// A binary STL whose header claims 5·10⁷ triangles in an 84-byte file is refused at once
/// (it once allocated 6.7 GB and aborted); so are an empty and a truncated file.
#[test]
fn an_stl_file_that_lies_about_its_size_is_refused() {
    let d = tmp();
    let out = d.path().join("out");
    let lying = d.path().join("lying.stl");
    let mut bytes = vec![0u8; 84];
    bytes[80..].copy_from_slice(&50_000_000u32.to_le_bytes());
    std::fs::write(&lying, &bytes).unwrap();
    let empty = d.path().join("empty.stl");
    std::fs::write(&empty, b"").unwrap();
    for (file, needle) in [
        (&lying, "counts 50000000 triangles"),
        (&empty, "the file is empty"),
    ] {
        let (t, code) = ends_within(60, &["run", "body", "--stl", s(file), "--out", s(&out)]);
        assert!(code == Some(1) && t.contains(needle), "{t}");
    }
}
