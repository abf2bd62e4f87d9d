//! The lattice distributed over MPI ranks (feature `mpi`): `examples/mpi_ring.rs` run under
//! `mpiexec -n 2` and `-n 3` must give, after 200 steps, the very bits of the single-process
//! run (populations and moment fields, compared on rank 0), for D2Q9 and D2Q37 in two layouts
//! each, on widths that the rank counts divide and widths they do not; a rank count the lattice
//! cannot hold must fail on every rank with a clear message, without hanging.
#![cfg(feature = "mpi")]

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// One `mpiexec` at a time (they share the machine's cores).
static MPI: Mutex<()> = Mutex::new(());

/// Longest a run may take before it counts as a hang.
const TIMEOUT: Duration = Duration::from_secs(180);

/// Builds the example in this test's profile and returns its path.
fn example() -> PathBuf {
    let mut build = Command::new(env!("CARGO"));
    build.args([
        "build",
        "--quiet",
        "--features",
        "mpi",
        "--example",
        "mpi_ring",
    ]);
    if !cfg!(debug_assertions) {
        build.arg("--release");
    }
    let status = build
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .status()
        .expect("cargo runs");
    assert!(status.success(), "building examples/mpi_ring.rs failed");
    let exe = std::env::current_exe().expect("test binary path");
    let profile_dir = exe
        .parent()
        .and_then(|d| d.parent())
        .expect("target/<profile>");
    profile_dir.join("examples").join("mpi_ring")
}

/// Runs the example under `mpiexec -n ranks`, killing it after [`TIMEOUT`].
fn mpiexec(ranks: usize, args: &[&str]) -> Output {
    let _one = MPI.lock().unwrap_or_else(|e| e.into_inner());
    let mut child = Command::new("mpiexec")
        .args(["-n", &ranks.to_string()])
        .arg(example())
        .args(args)
        .env("RAYON_NUM_THREADS", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("mpiexec runs (MPICH is installed by scripts/setup)");
    let start = Instant::now();
    while child.try_wait().expect("waiting for mpiexec").is_none() {
        if start.elapsed() > TIMEOUT {
            child.kill().expect("kill the hung run");
            panic!("mpiexec -n {ranks} {args:?} hung for more than {TIMEOUT:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.wait_with_output().expect("mpiexec output")
}

/// The distributed run of `model` in `layout` on `lx × ly` is bitwise the single-process one.
fn identical(model: &str, layout: &str, lx: usize, ly: usize) {
    for ranks in [2, 3] {
        let (lx, ly) = (lx.to_string(), ly.to_string());
        let out = mpiexec(ranks, &["check", model, layout, &lx, &ly, "200"]);
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success() && stdout.contains("bitwise identical"),
            "{model} {layout} {lx}×{ly} on {ranks} ranks: {}\n{stdout}\n{stderr}",
            out.status
        );
        assert!(stdout.contains(&format!("{ranks} ranks")), "{stdout}");
    }
}

#[test]
fn d2q9_on_2_and_3_ranks_is_bitwise_the_single_process_run() {
    identical("d2q9", "soa", 24, 32);
    identical("d2q9", "caosoa8", 25, 32);
}

#[test]
fn d2q37_on_2_and_3_ranks_is_bitwise_the_single_process_run() {
    identical("d2q37", "soa", 26, 16);
    identical("d2q37", "caosoa4", 24, 16);
}

/// A run started on one process (rank 0) and resumed on 2 and 3 ranks, as from a checkpoint.
#[test]
fn a_run_resumed_on_2_and_3_ranks_is_bitwise_the_single_process_run() {
    for ranks in [2, 3] {
        let out = mpiexec(ranks, &["resume", "d2q37", "aos", "25", "16", "200"]);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && stdout.contains("bitwise identical"),
            "resume on {ranks} ranks: {}\n{stdout}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// 24 columns hold at most 8 slabs of D2Q37's 3 halo columns: 9 ranks fail, every one of them
/// with the reason and the remedy, and the run ends.
#[test]
fn too_many_ranks_fail_on_every_rank_without_hanging() {
    let out = mpiexec(9, &["check", "d2q37", "soa", "24", "16", "200"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "9 ranks on 24 columns must fail");
    for rank in 0..9 {
        let line = stderr
            .lines()
            .find(|l| l.starts_with(&format!("rank {rank} of 9: error:")))
            .unwrap_or_else(|| panic!("rank {rank} reported no error:\n{stderr}"));
        assert!(
            line.contains("cannot be split over 9 ranks") && line.contains("at most 8 ranks"),
            "{line}"
        );
    }
}
