//! Shared helpers of the tests that run the `lbm` program: run it, read what it printed, and
//! find the numbers of its reports.

#![allow(dead_code)]

use std::io::{BufRead, Read};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Runs `lbm` with `args`.
pub fn lbm(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lbm"))
        .args(args)
        .env("RAYON_NUM_THREADS", "2")
        .output()
        .expect("the lbm program runs")
}

/// Starts `lbm` with `args` on `threads` threads, its standard output and error as given.
pub fn spawn(args: &[&str], threads: usize, stdout: Stdio, stderr: Stdio) -> Child {
    Command::new(env!("CARGO_BIN_EXE_lbm"))
        .args(args)
        .env("RAYON_NUM_THREADS", threads.to_string())
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(stderr)
        .spawn()
        .expect("lbm starts")
}

pub fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Runs `lbm` and expects success.
pub fn ok(args: &[&str]) -> String {
    let o = lbm(args);
    assert!(o.status.success(), "lbm {args:?} failed:\n{}", text(&o));
    text(&o)
}

/// Runs `lbm` and expects a failure whose message contains every one of `needles`.
pub fn fails(args: &[&str], needles: &[&str]) -> String {
    let o = lbm(args);
    let t = text(&o);
    assert!(!o.status.success(), "lbm {args:?} should fail:\n{t}");
    for n in needles {
        assert!(t.contains(n), "lbm {args:?}: `{n}` missing from:\n{t}");
    }
    t
}

/// Starts `lbm` with `args`, sends it `signal` (`INT`, `TERM`, `HUP`) half a second after
/// its first line (printed once signals are caught), and returns everything it printed and
/// its exit code. Fails when the run does not end within 30 s of the signal.
pub fn stopped_by(signal: &str, args: &[&str]) -> (String, Option<i32>) {
    let mut child = spawn(args, 2, Stdio::piped(), Stdio::piped());
    let mut stdout = std::io::BufReader::new(child.stdout.take().expect("stdout"));
    let mut printed = String::new();
    stdout
        .read_line(&mut printed)
        .expect("the run's first line");
    std::thread::sleep(Duration::from_millis(500));
    let status = Command::new("kill")
        .args([format!("-{signal}"), child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(status.success());
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "SIG{signal} did not stop lbm {args:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    stdout
        .read_to_string(&mut printed)
        .expect("the run's output");
    let o = child.wait_with_output().unwrap();
    printed.push_str(&String::from_utf8_lossy(&o.stderr));
    (printed, o.status.code())
}

/// The step in "… at step N" of `text`.
pub fn step_in(text: &str, before: &str) -> u64 {
    text.split(before)
        .nth(1)
        .and_then(|r| r.split(|c: char| !c.is_ascii_digit()).next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no step after `{before}` in:\n{text}"))
}

pub fn tmp() -> tempfile::TempDir {
    tempfile::tempdir().expect("a temporary directory")
}

pub fn s(p: &Path) -> &str {
    p.to_str().expect("a UTF-8 path")
}

/// The number after `label` in `text`.
pub fn number_after(text: &str, label: &str) -> f64 {
    text.split(label)
        .nth(1)
        .and_then(|r| {
            r.split(|c: char| c.is_whitespace() || c == ',' || c == ';' || c == ')')
                .find(|w| !w.is_empty())
        })
        .and_then(|w| w.parse().ok())
        .unwrap_or_else(|| panic!("no number after `{label}` in:\n{text}"))
}

/// Whether the GPU tests run: an adapter exists, or `LBM_REQUIRE_GPU=1` demands one.
pub fn gpu_available() -> bool {
    let ok = lbm::gpu::GpuContext::new(&Default::default()).is_ok()
        || std::env::var("LBM_REQUIRE_GPU").as_deref() == Ok("1");
    if !ok {
        eprintln!("no GPU adapter: skipped");
    }
    ok
}

/// The diagnostics of a run of `case` written in `dir`, by step (without the header).
pub fn diagnostics(dir: &Path, case: &str) -> Vec<Vec<f64>> {
    std::fs::read_to_string(dir.join(format!("{case}_diagnostics.csv")))
        .expect("a diagnostics file")
        .lines()
        .skip(1)
        .map(|l| l.split(',').map(|v| v.parse().expect("a number")).collect())
        .collect()
}

/// `lbm run` with `args` (a case with bodies, without `--backend` and `--out`) on the GPU and
/// split between host and device (18 columns a side on the host: the cut at x = 18 runs
/// through a body at x = 20 of 10 sites across), two-copy, gives the CPU's diagnostics — the
/// loads on the bodies among them — to `1e-12` relative and the same last VTK fields (`vtk`:
/// the file's name) to `1e-12`. A sum that cancels is compared on the scale of what it is part
/// of: the momentum on the mass's, a force or a coefficient (a lift that vanishes by symmetry
/// is round-off) on the largest of the row's forces or coefficients.
pub fn devices_give_the_cpu_run(args: &[&str], case: &str, vtk: &str) {
    if !gpu_available() {
        return;
    }
    let d = tmp();
    let run = |backend: &[&str]| {
        let out = d.path().join(backend.join("-"));
        let said = ok(&[args, &["--backend"], backend, &["--out", s(&out)]].concat());
        let fields = lbm::output::vtk::read_joined(&out.join(vtk)).expect("a VTK dataset");
        (said, diagnostics(&out, case), fields)
    };
    let (_, want, want_fields) = run(&["cpu"]);
    assert!(want.len() >= 2, "{case}: {want:?}");
    let csv = d.path().join("cpu").join(format!("{case}_diagnostics.csv"));
    let header = std::fs::read_to_string(csv).expect("a diagnostics file");
    let names: Vec<&str> = header
        .lines()
        .next()
        .unwrap_or_default()
        .split(',')
        .collect();
    let part_of = |name: &str, other: &str| match name {
        _ if name.starts_with("momentum") => other == "mass",
        _ if name.starts_with("c_") => other.starts_with("c_"),
        _ if name.starts_with('F') => other.starts_with('F'),
        _ => other == name,
    };
    for backend in [&["gpu"][..], &["hetero", "--host-columns", "18"]] {
        let (said, got, fields) = run(backend);
        assert!(said.contains(backend[0]), "{said}");
        assert_eq!(got.len(), want.len());
        for (g, w) in got.iter().zip(&want) {
            for ((a, b), name) in g.iter().zip(w).zip(&names) {
                let scale = (w.iter().zip(&names))
                    .filter(|(_, other)| part_of(name, other))
                    .fold(0.0f64, |m, (v, _)| m.max(v.abs()));
                assert!(
                    (a - b).abs() <= 1e-12 * scale,
                    "{case} on {backend:?}, {name}: {g:?}\nagainst {w:?}"
                );
            }
        }
        let size = |f: &lbm::output::vtk::Joined| (f.lx, f.ly, f.lz);
        assert_eq!(size(&fields), size(&want_fields));
        for (a, b) in fields.arrays.iter().zip(&want_fields.arrays) {
            assert_eq!((&a.0, a.1), (&b.0, b.1));
            let far = (a.2.iter().zip(&b.2)).fold(0.0f64, |m, (x, y)| m.max((x - y).abs()));
            assert!(
                far <= 1e-12,
                "{case} on {backend:?}: {} differs by {far:e}",
                a.0
            );
        }
    }
}

/// `lbm run` of a Taylor–Green vortex that diverges within its 5,000 steps (U₀ = 0.25 with
/// τ − ½ = 10⁻⁴ on 32²); add the checks' period and the outputs.
pub const DIVERGING_VORTEX: &[&str] = &[
    "run",
    "taylor-green",
    "--lx",
    "32",
    "--velocity",
    "0.25",
    "--tau",
    "0.5001",
    "--steps",
    "5000",
];
