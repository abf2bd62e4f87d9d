//! Hostile and careless input to `lbm run` and `lbm bench`: every one refused before any work
//! with a message that names the setting and what to do — no crash, no panic, no hang, nothing
//! written outside `--out`, no outputs of two runs mixed, no state that diverged written.

use std::path::Path;

use proptest::prelude::*;

use crate::cli_support::{DIVERGING_VORTEX, fails, lbm, ok, s, text, tmp};

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
    let t = refused_cleanly(&["run", "rayleigh-benard", "--ly", "100000", "--out", out]);
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
    for (args, needles) in [
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
