//! The lattice distributed over MPI ranks (feature `mpi`): `examples/mpi_ring.rs` run under
//! `mpiexec -n 2` and `-n 3` must give, after 200 steps, the very bits of the single-process
//! run (populations and moment fields, compared on rank 0), for D2Q9 and D2Q37 in two layouts
//! each, on widths that the rank counts divide and widths they do not; a rank count the lattice
//! cannot hold must fail on every rank with a clear message, without hanging; a sparse domain's
//! blocks, one a rank, give the single-process run's fluid bit for bit.
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
    // The workspace's features, as scripts/test builds the examples: then the example and the
    // library under it are the ones built already, not built again with the package's alone.
    build.args([
        "build",
        "--quiet",
        "--workspace",
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
    mpiexec_program(ranks, &example(), args)
}

/// Runs `program` under `mpiexec -n ranks`, killing it after [`TIMEOUT`].
fn mpiexec_program(ranks: usize, program: &std::path::Path, args: &[&str]) -> Output {
    let mut argv = vec!["-n".to_string(), ranks.to_string()];
    argv.push(program.display().to_string());
    argv.extend(args.iter().map(|a| a.to_string()));
    mpiexec_argv(&argv)
}

/// Runs `lbm args…` on `ranks` ranks and expects success; returns what it printed.
fn lbm_ok(ranks: usize, args: &[&str]) -> String {
    let lbm = std::path::Path::new(env!("CARGO_BIN_EXE_lbm"));
    let out = mpiexec_program(ranks, lbm, args);
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        out.status.success(),
        "lbm {args:?} on {ranks} ranks: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// Runs `mpiexec argv…` (one program, or several separated by `:`), killing it after
/// [`TIMEOUT`].
fn mpiexec_argv(argv: &[String]) -> Output {
    let _one = MPI.lock().unwrap_or_else(|e| e.into_inner());
    let mut child = Command::new("mpiexec")
        .args(argv)
        .env("RAYON_NUM_THREADS", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("mpiexec runs (MPICH is installed by scripts/setup)");
    let start = Instant::now();
    while child.try_wait().expect("waiting for mpiexec").is_none() {
        if start.elapsed() > TIMEOUT {
            child.kill().expect("kill the hung run");
            panic!("mpiexec {argv:?} hung for more than {TIMEOUT:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.wait_with_output().expect("mpiexec output")
}

/// The distributed run of `model` in `layout` on `lx × ly`, in both schemes, is bitwise the
/// single-process one (in place after an odd number of steps too: the ring's odd AA state
/// keeps the populations that crossed a cut on the neighbour), on rings of 2 and 3 slabs and
/// on blocks cut along y too.
fn identical(model: &str, layout: &str, lx: usize, ly: usize) {
    for (ranks, scheme, steps, cut) in [
        (2, "two-copy", "200", "2x1"),
        (3, "two-copy", "200", "3x1"),
        (2, "in-place", "201", "2x1"),
        (3, "in-place", "200", "3x1"),
        (4, "two-copy", "200", "2x2"),
        (3, "in-place", "201", "1x3"),
    ] {
        let (lx, ly) = (lx.to_string(), ly.to_string());
        let out = mpiexec(
            ranks,
            &["check", model, layout, &lx, &ly, steps, "cpu", scheme, cut],
        );
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success() && stdout.contains("bitwise identical"),
            "{model} {layout} {lx}×{ly} {scheme} on {ranks} ranks: {}\n{stdout}\n{stderr}",
            out.status
        );
        assert!(stdout.contains(&format!("{ranks} ranks")), "{stdout}");
    }
}

/// A sparse domain over MPI ranks: the cross of two channels in blocks of 8 × 8, the 7 that
/// hold fluid one a rank, or several a rank on threads (4 + 3 on 2 ranks, 3 + 2 + 2 on 3: the
/// ghost layers between threads of a rank and between ranks), the others left out and their
/// exchanges skipped, in both schemes, bitwise the single process; on 8 ranks, refused on
/// every rank, saying it runs on at most 7.
#[test]
fn a_sparse_domain_on_ranks_is_bitwise_the_single_process_run() {
    for (ranks, scheme, threads) in [
        (7, "two-copy", "7 MPI ranks"),
        (2, "in-place", "7 threads on 2 MPI ranks"),
        (3, "two-copy", "7 threads on 3 MPI ranks"),
    ] {
        let out = mpiexec(ranks, &["sparse", "41", scheme]);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success()
                && stdout.contains(threads)
                && stdout.contains("bitwise identical"),
            "{ranks} ranks, {scheme}: {}\n{stdout}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let out = mpiexec(8, &["sparse", "41"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    for rank in 0..8 {
        assert!(
            stderr.contains(&format!("rank {rank} of 8: error:"))
                && stderr.contains("7 hold fluid: run it on at most 7 processes"),
            "{stderr}"
        );
    }
}

/// D2Q9 BGK: the forced channel around a block that straddles the cuts; MRT: the cavity.
#[test]
fn d2q9_on_2_3_and_4_ranks_is_bitwise_the_single_process_run() {
    identical("d2q9", "soa", 24, 32);
    identical("d2q9", "caosoa8", 25, 32);
    identical("d2q9mrt", "aos", 24, 32);
    identical("d2q9mrt", "csoa8", 25, 32);
}

/// D2Q9 TRT around a disc with curved walls (interpolated bounce-back) that straddles the
/// cuts: on CPU ranks, in both schemes, the populations and moments bit for bit, and the load
/// on the disc summed over the ranks' links within 1e-12 of the single process's (relative to
/// its largest component); on GPU and split ranks, in both schemes, every value within 1e-12.
#[test]
fn curved_walls_across_the_cuts_are_bitwise_the_single_process_run() {
    for (layout, lx) in [("soa", "24"), ("caosoa8", "25")] {
        for (ranks, scheme, steps) in [(2, "two-copy", "200"), (3, "in-place", "201")] {
            let args = [
                "check",
                "d2q9curved",
                layout,
                lx,
                "32",
                steps,
                "cpu",
                scheme,
            ];
            let out = mpiexec(ranks, &args);
            let stdout = String::from_utf8_lossy(&out.stdout);
            assert!(
                out.status.success()
                    && stdout.contains("bitwise identical")
                    && stdout.contains("the load on the body within")
                    && stdout.contains(&format!("{ranks} ranks")),
                "{layout} {scheme} on {ranks} ranks: {}\n{stdout}\n{}",
                out.status,
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
    within_tolerance_on_device_ranks("gpu", ("check", "d2q9curved", "soa"), 24, 32);
    within_tolerance_on_device_ranks("hetero:3", ("check", "d2q9curved", "caosoa8"), 30, 32);
}

/// GPU and split ranks cut along y as well as x (blocks with ghost lines, their border lines
/// read back and written through the host; in place, what crossed the cuts folded there): the
/// disc's curved walls across every cut, every population and moment and the load on the disc
/// within 1e-12 of the single CPU process.
#[test]
fn gpu_and_split_ranks_cut_along_y_are_the_single_process_run() {
    for (ranks, cut, layout, scheme, steps, backend) in [
        (2, "1x2", "caosoa8", "in-place", "201", "gpu"),
        (4, "2x2", "soa", "two-copy", "200", "gpu"),
        (4, "2x2", "aos", "in-place", "201", "gpu"),
        (4, "2x2", "caosoa8", "two-copy", "200", "hetero:3"),
        (2, "1x2", "soa", "in-place", "201", "hetero:3"),
    ] {
        let on = backend.split(':').next().unwrap_or(backend);
        let args = [
            "check",
            "d2q9curved",
            layout,
            "24",
            "32",
            steps,
            backend,
            scheme,
            cut,
        ];
        let out = mpiexec(ranks, &args);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success()
                && stdout.contains("within 1e-12")
                && stdout.contains(&format!("{ranks} ranks on {on}"))
                && stdout.contains("the load on the body within"),
            "{args:?} on {ranks} ranks: {}\n{stdout}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn d2q37_on_2_3_and_4_ranks_is_bitwise_the_single_process_run() {
    identical("d2q37", "soa", 26, 16);
    identical("d2q37", "caosoa4", 24, 16);
}

/// A run started on one process (rank 0) and resumed on 2 and 3 ranks, as from a checkpoint
/// (in place on 3).
#[test]
fn a_run_resumed_on_2_and_3_ranks_is_bitwise_the_single_process_run() {
    for (ranks, scheme) in [(2, "two-copy"), (3, "in-place")] {
        let out = mpiexec(
            ranks,
            &["resume", "d2q37", "aos", "25", "16", "201", "cpu", scheme],
        );
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && stdout.contains("bitwise identical"),
            "resume on {ranks} ranks: {}\n{stdout}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// The ring with GPU or host/device ranks (lavapipe in CI): each rank's slab on its device
/// (the halo columns through the host), or its borders on the host and its bulk on the device;
/// every population and moment within 1e-12 of the single-process CPU run, two-copy on 2 ranks
/// and in place (after an odd number of steps) on 3.
fn within_tolerance_on_device_ranks(
    backend: &str,
    (command, model, layout): (&str, &str, &str),
    lx: usize,
    ly: usize,
) {
    for (ranks, scheme, steps) in [(2, "two-copy", "200"), (3, "in-place", "201")] {
        let (lx, ly) = (lx.to_string(), ly.to_string());
        let out = mpiexec(
            ranks,
            &[command, model, layout, &lx, &ly, steps, backend, scheme],
        );
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && stdout.contains("within 1e-12"),
            "{command} {model} {layout} {lx}×{ly} {scheme} on {ranks} {backend} ranks: {}\n\
             {stdout}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        let on = backend.split(':').next().unwrap_or(backend);
        assert!(
            stdout.contains(&format!("{ranks} ranks on {on}")),
            "{stdout}"
        );
    }
}

#[test]
fn d2q9_on_2_and_3_gpu_ranks_matches_the_single_process_run() {
    within_tolerance_on_device_ranks("gpu", ("check", "d2q9", "soa"), 24, 32);
    within_tolerance_on_device_ranks("gpu", ("check", "d2q9", "caosoa8"), 25, 32);
    within_tolerance_on_device_ranks("gpu", ("check", "d2q9mrt", "aos"), 24, 32);
    within_tolerance_on_device_ranks("gpu", ("check", "d2q9mrt", "csoa8"), 25, 32);
}

#[test]
fn d2q37_on_2_and_3_gpu_ranks_matches_the_single_process_run() {
    within_tolerance_on_device_ranks("gpu", ("check", "d2q37", "caosoa4"), 24, 16);
    within_tolerance_on_device_ranks("gpu", ("resume", "d2q37", "aos"), 25, 16);
}

/// Hetero ranks: fixed splits (the channel's walls and D2Q37's thermal walls cross the
/// host/device cuts), and on the resumed run the split tuned per rank with the ring's exchange
/// in the balance (any admissible M, the ends included).
#[test]
fn d2q9_and_d2q37_on_2_and_3_hetero_ranks_match_the_single_process_run() {
    within_tolerance_on_device_ranks("hetero:2", ("check", "d2q9", "soa"), 24, 32);
    within_tolerance_on_device_ranks("hetero:3", ("check", "d2q9mrt", "caosoa8"), 30, 32);
    within_tolerance_on_device_ranks("hetero:3", ("check", "d2q37", "caosoa4"), 30, 16);
    within_tolerance_on_device_ranks("hetero", ("resume", "d2q37", "aos"), 30, 16);
}

/// `mpiexec -n 2 lbm run taylor-green --backend gpu|hetero --scheme in-place` gives the
/// diagnostics and the VTK dataset (each rank's piece, joined) of the single-process two-copy
/// CPU run, to 1e-12 (hetero: the split tuned per rank); so does the lid-driven cube, slabs of
/// planes on the device.
#[test]
fn lbm_run_on_gpu_and_hetero_ranks_gives_the_single_process_diagnostics() {
    let two = ("in-place", [2, 2]);
    device_ranks_match_one_cpu_process("taylor-green", &["--lx", "48", "--ly", "48"], two);
    let cube = ["--lx", "16", "--until-steady", "1e-30"];
    device_ranks_match_one_cpu_process("cavity-3d", &cube, two);
}

/// The body case's size options of the conformance tests: the shipped sphere, 10 sites across,
/// from x = 15 to 25 of a 48 × 32 × 32 channel, across the cuts of 2 and 3 ranks.
const BODY_ACROSS_THE_CUTS: &[&str] = &[
    "--diameter",
    "10",
    "--lx",
    "48",
    "--ly",
    "32",
    "--at",
    "20,16,16",
];

/// The body case (the shipped sphere from x = 15 to 25, curved walls, its load by momentum
/// exchange) on 2 GPU ranks (cut at x = 24) and 3 hetero ranks (cuts at x = 16 and 32) gives
/// the single CPU process's fields and drag and lift, to 1e-12.
#[test]
fn the_body_case_on_gpu_and_hetero_ranks_gives_the_single_process_loads() {
    let size = [BODY_ACROSS_THE_CUTS, &["--diagnostics-every", "100"]].concat();
    device_ranks_match_one_cpu_process("body", &size, ("two-copy", [2, 3]));
}

/// The Taylor–Green cube on 2 and 3 ranks has the single process's diagnostics, the resolved
/// strain column included: its x-derivatives reach across the slabs' edges into the
/// neighbours' planes ([`lbm::Solver::neighbour_columns`]), so the sums over the ranks are the
/// whole cube's (to round-off: only their order differs).
#[test]
fn the_taylor_green_cube_on_ranks_has_the_single_process_diagnostics() {
    let rows = |ranks: usize| -> Vec<Vec<f64>> {
        let dir = tempfile::tempdir().unwrap();
        let args = [
            "run",
            "taylor-green-3d",
            "--lx",
            "24",
            "--steps",
            "120",
            "--diagnostics-every",
            "40",
            "--vtk",
            "false",
            "--images",
            "",
            "--out",
            dir.path().to_str().unwrap(),
        ];
        lbm_ok(ranks, &args);
        let csv = dir.path().join("taylor-green-3d_diagnostics.csv");
        std::fs::read_to_string(csv)
            .unwrap()
            .lines()
            .skip(1)
            .map(|l| l.split(',').map(|v| v.parse().unwrap()).collect())
            .collect()
    };
    let one = rows(1);
    assert_eq!(one.len(), 4, "rows at steps 0, 40, 80, 120");
    let strain = one[3].last().copied().unwrap_or(0.0);
    assert!(
        strain > 1e-4,
        "the strain column is the dissipation: {strain}"
    );
    for ranks in [2, 3] {
        let got = rows(ranks);
        assert_eq!(one.len(), got.len());
        for (a, b) in one.iter().zip(&got) {
            for (x, y) in a.iter().zip(b) {
                assert!(
                    (x - y).abs() <= 1e-12 * x.abs().max(1.0),
                    "{ranks} ranks:\n{a:?}\n{b:?}"
                );
            }
        }
    }
}

/// The finite-difference cavity on 2, 3 and 4 ranks (blocks cut along y by default on 2 and
/// 3, 2 × 2 on 4, and 4 × 1 by `--cut`; their ghost layers from the neighbours, the corners
/// through the second exchange) writes the single process's centre lines bit for bit; the
/// centre lines cross every block, and after 1500 steps every node has felt the cuts; a run
/// checkpointed on 4 ranks cut 2 × 2 resumes on 3 cut 1 × 3 to the same bits, as the clustered
/// layout does on 2; GPU ranks agree within 1e-12 cut along either axis, and so do ranks each
/// split between its host and its device (three parts a rank, on threads: the borders of two
/// ranks meet on their hosts). Blocks thinner than the stencils need, and a cut of another
/// number of blocks than ranks, are refused on every rank.
#[test]
fn the_fd_cavity_on_2_3_and_4_ranks_is_bitwise_the_single_process_run() {
    // `lbm run fd-cavity` on 31² nodes into `dir` on `ranks` ranks: its output and centre lines.
    let cavity = |ranks: usize, dir: &std::path::Path, extra: &[&str]| -> (String, String) {
        let common = ["run", "fd-cavity", "--lx", "31", "--images", "", "--out"];
        let args = [&common[..], &[dir.to_str().unwrap()], extra].concat();
        let stdout = lbm_ok(ranks, &args);
        let csv = std::fs::read_to_string(dir.join("fd-cavity_centrelines.csv")).unwrap();
        (stdout, csv)
    };
    let fresh = || tempfile::tempdir().unwrap();
    let run = |ranks: usize, precision: &str, cut: Option<&str>| -> String {
        let dir = fresh();
        let mut args = vec!["--steps", "1500", "--precision", precision];
        args.extend(cut.iter().flat_map(|c| ["--cut", c]));
        let (stdout, csv) = cavity(ranks, dir.path(), &args);
        let default = match ranks {
            4 => "2x2".to_string(),
            r => format!("1x{r}"),
        };
        let said = format!("{ranks} ranks cut {}", cut.unwrap_or(&default));
        assert!(ranks == 1 || stdout.contains(&said), "{said}: {stdout}");
        csv
    };
    let mut one = String::new();
    for precision in ["f32", "f64"] {
        one = run(1, precision, None);
        assert_eq!(one.lines().count(), 32, "a header and 31 nodes");
        for ranks in [2, 3, 4] {
            assert!(
                run(ranks, precision, None) == one,
                "{precision} on {ranks} ranks"
            );
        }
        assert!(run(4, precision, Some("4x1")) == one, "{precision} cut 4x1");
    }
    // `one` is the f64 run now. Checkpointed on 4 ranks cut 2 × 2 at step 700 and resumed on
    // 3 (cut 1 × 3): the single process's bits.
    let dir = fresh();
    cavity(
        4,
        dir.path(),
        &["--steps", "700", "--checkpoint-every", "700"],
    );
    let ckpt = dir.path().join("fd-cavity_checkpoint.lbm");
    let resume = ["--steps", "1500", "--resume", ckpt.to_str().unwrap()];
    assert!(
        cavity(3, dir.path(), &resume).1 == one,
        "resumed on 3 ranks"
    );
    // Another layout on 2 ranks (the planes travel in node order whatever the layout).
    let clustered = cavity(
        2,
        fresh().path(),
        &["--steps", "1500", "--layout", "caosoa"],
    )
    .1;
    assert!(clustered == one, "caosoa on 2 ranks");
    // GPU ranks (their blocks' edge layers read back and traded after each stage), cut
    // along y (the default) and along x, in soa and another layout: the CPU's centre lines
    // within 1e-12.
    let values = |csv: &str| -> Vec<f64> {
        csv.lines()
            .skip(1)
            .flat_map(|l| {
                l.split(',')
                    .map(|x| x.parse::<f64>().unwrap())
                    .collect::<Vec<_>>()
            })
            .collect()
    };
    for (backend, said) in [
        (&["gpu"][..], "1x2"),
        (&["gpu", "--cut", "2x1"], "2x1"),
        (&["gpu", "--cut", "2x1", "--layout", "aos"], "2x1"),
        (&["hetero"], "1x2"),
        (&["hetero", "--layout", "caosoa"], "1x2"),
    ] {
        let args = [&["--steps", "1500", "--backend"][..], backend].concat();
        let (stdout, csv) = cavity(2, fresh().path(), &args);
        assert!(stdout.contains(&format!("2 ranks cut {said}")), "{stdout}");
        let (cpu, gpu) = (values(&one), values(&csv));
        assert_eq!(cpu.len(), gpu.len());
        for (a, b) in cpu.iter().zip(&gpu) {
            assert!(
                (a - b).abs() <= 1e-12,
                "{backend:?} ranks cut {said}: {a} against {b}"
            );
        }
    }
    let lbm = std::path::Path::new(env!("CARGO_BIN_EXE_lbm"));
    let out = mpiexec_program(3, lbm, &["run", "fd-cavity", "--lx", "8", "--steps", "1"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && stderr.contains("along y cannot be cut into 3 blocks"),
        "{stderr}"
    );
    let out = mpiexec_program(3, lbm, &["run", "fd-cavity", "--cut", "2x2"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && stderr.contains("makes 4 blocks, but the run has 3 ranks"),
        "{stderr}"
    );
}

/// `mpiexec -n 2|3 lbm run rayleigh-benard`: the flow and the temperature cut into the same
/// slabs, each rank exchanging its own sites' fields, give the single process's diagnostics and
/// images bit for bit in both schemes (the columns' sums added in the order of x on the root),
/// and a run checkpointed on 2 ranks resumes on 3 to the same bits; GPU and hetero ranks (the
/// bulk of each slab on the device, its borders on the host) agree with the CPU to 1e-9.
///
/// Three ranks share the two cores of the test machines, and a coupled step synchronises the
/// ranks a dozen times: they run the shortest leg.
#[test]
fn rayleigh_benard_on_ranks_is_the_single_process_run() {
    let dir = |d: &tempfile::TempDir| d.path().to_str().unwrap().to_string();
    let case = ["run", "rayleigh-benard", "--ly", "16", "--rayleigh", "5000"];
    let every = ["--output-every", "150"];
    let run = |ranks: usize, extra: &[&str]| -> (String, String, Vec<u8>) {
        let d = tempfile::tempdir().unwrap();
        let out = dir(&d);
        let args = [
            &case[..],
            &every[..],
            &["--steps", "300", "--out", &out],
            extra,
        ]
        .concat();
        let stdout = lbm_ok(ranks, &args);
        let csv = std::fs::read_to_string(d.path().join("rayleigh-benard_diagnostics.csv"));
        let png = std::fs::read(d.path().join("rayleigh-benard_T_300.png"));
        (stdout, csv.unwrap(), png.unwrap())
    };
    let rows = |t: &str| -> Vec<Vec<f64>> {
        t.lines()
            .skip(1)
            .map(|l| l.split(',').map(|v| v.parse().unwrap()).collect())
            .collect()
    };
    let mut reference = String::new();
    for scheme in ["two-copy", "in-place"] {
        let (_, csv, png) = run(1, &["--scheme", scheme]);
        assert_eq!(rows(&csv).len(), 3, "rows at steps 0, 150, 300");
        let (stdout, got, image) = run(2, &["--scheme", scheme]);
        assert!(stdout.contains("2 MPI ranks"), "{stdout}");
        assert!(got == csv, "{scheme} on 2 ranks:\n{got}\n{csv}");
        assert!(image == png, "{scheme} on 2 ranks: the image differs");
        if scheme == "two-copy" {
            reference = csv;
        }
    }
    // Checkpointed on 2 ranks at step 150, resumed on 3.
    let d = tempfile::tempdir().unwrap();
    let out = dir(&d);
    let cut = [
        &case[..],
        &every[..],
        &[
            "--checkpoint-every",
            "150",
            "--scheme",
            "two-copy",
            "--out",
            &out,
        ],
    ]
    .concat();
    lbm_ok(2, &[&cut[..], &["--steps", "150"]].concat());
    let flow = format!("{out}/rayleigh-benard_checkpoint.lbm");
    let resumed = lbm_ok(
        3,
        &[&cut[..], &["--steps", "300", "--resume", &flow]].concat(),
    );
    assert!(
        resumed.contains("resumed at step 150") && resumed.contains("3 MPI ranks"),
        "{resumed}"
    );
    let got = std::fs::read_to_string(d.path().join("rayleigh-benard_diagnostics.csv"));
    assert!(
        got.unwrap() == reference,
        "the run resumed on 3 ranks differs"
    );

    let cpu = rows(&reference);
    for backend in [
        ["gpu", "--scheme", "in-place"],
        ["hetero", "--host-columns", "4"],
    ] {
        let (stdout, got, _) = run(2, &[&["--backend"][..], &backend[..]].concat());
        assert!(stdout.contains("2 MPI ranks"), "{stdout}");
        for (a, b) in rows(&got).iter().zip(&cpu) {
            for (x, y) in a.iter().zip(b) {
                assert!(
                    (x - y).abs() <= 1e-9 * y.abs().max(1e-3),
                    "{} ranks: {a:?}\n{b:?}",
                    backend[0]
                );
            }
        }
    }
}

/// `lbm_run_on_gpu_and_hetero_ranks_gives_the_single_process_diagnostics` for one case of
/// `lbm run`, run for 200 steps with `size` (its size options): the GPU and the hetero ranks
/// in `scheme`, on `ranks[0]` and `ranks[1]` processes.
fn device_ranks_match_one_cpu_process(
    case: &str,
    size: &[&str],
    (scheme, ranks): (&str, [usize; 2]),
) {
    let dirs: Vec<tempfile::TempDir> = (0..3).map(|_| tempfile::tempdir().unwrap()).collect();
    let csv = |ranks: usize, backend: &str, scheme: &str, dir: &tempfile::TempDir| {
        let mut args = vec![
            "run",
            case,
            "--steps",
            "200",
            "--output-every",
            "100",
            "--scheme",
            scheme,
            "--images",
            "",
            "--backend",
            backend,
            "--out",
            dir.path().to_str().unwrap(),
        ];
        args.extend(size);
        let stdout = lbm_ok(ranks, &args);
        let text = std::fs::read_to_string(dir.path().join(format!("{case}_diagnostics.csv")));
        (stdout, text.unwrap())
    };
    let rows = |t: &str| -> Vec<Vec<f64>> {
        t.lines()
            .skip(1)
            .map(|l| l.split(',').map(|v| v.parse().unwrap()).collect())
            .collect()
    };
    let (_, cpu) = csv(1, "cpu", "two-copy", &dirs[0]);
    let cpu = rows(&cpu);
    assert_eq!(cpu.len(), 3, "{case}: rows at steps 0, 100, 200");
    let devices = [("gpu", &dirs[1], "gpu"), ("hetero", &dirs[2], "M = ")];
    for ((backend, dir, says), ranks) in devices.into_iter().zip(ranks) {
        let (stdout, got) = csv(ranks, backend, scheme, dir);
        assert!(
            stdout.contains(&format!("{ranks} MPI ranks")) && stdout.contains(says),
            "{stdout}"
        );
        let got = rows(&got);
        assert_eq!(cpu.len(), got.len());
        for (a, b) in cpu.iter().zip(&got) {
            for (x, y) in a.iter().zip(b) {
                assert!(
                    (x - y).abs() <= 1e-12 * x.abs().max(1.0),
                    "{case} on {backend}: {a:?}\n{b:?}"
                );
            }
        }
        // The ranks' VTK pieces, joined, hold the single process's fields.
        let vtk = |d: &tempfile::TempDir| {
            let pvti = d.path().join(format!("{case}_00000200.pvti"));
            lbm::output::vtk::read_joined(&pvti).expect("a VTK dataset")
        };
        let (want, got) = (vtk(&dirs[0]), vtk(dir));
        assert_eq!((want.lx, want.ly, want.lz), (got.lx, got.ly, got.lz));
        for (a, b) in want.arrays.iter().zip(&got.arrays) {
            assert_eq!((&a.0, a.1), (&b.0, b.1));
            let close = a.2.iter().zip(&b.2).all(|(x, y)| (x - y).abs() <= 1e-12);
            assert!(close, "{case} on {backend}: field {} differs", a.0);
        }
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

/// The step and the populations of the checkpoint `path` of model `M` in f64.
fn checkpoint_state<M: lbm::Model>(path: &str) -> (u64, Vec<u64>) {
    let (step, f) = checkpoint_values::<M>(path);
    (step, f.iter().map(|v| v.to_bits()).collect())
}

/// `lbm run` of `case` (model `M`) under `mpiexec`: run on `first` ranks and checkpointed (a
/// shard per rank and a manifest), resumed on `then` ranks and on one process (each with its
/// options, a cut), ends bitwise identical to the uninterrupted single-process run — the
/// checkpoint's populations and the VTK datasets (the `.pvti` joining the ranks' pieces) — and
/// a run continued in its directory continues its `.pvd` series.
fn resumes_on_any_rank_count<M: lbm::Model>(
    case: &str,
    size: [&str; 2],
    [first, then]: [(usize, &[&str]); 2],
) {
    let dirs: Vec<tempfile::TempDir> = (0..3).map(|_| tempfile::tempdir().unwrap()).collect();
    let d: Vec<&str> = dirs.iter().map(|d| d.path().to_str().unwrap()).collect();
    let common = [
        &["run", case][..],
        &size[..],
        &["--lx", "48", "--images", "", "--output-every", "100"][..],
    ]
    .concat();
    let run = |ranks: usize, extra: &[&str]| lbm_ok(ranks, &[&common[..], extra].concat());
    let single = [
        "--steps",
        "200",
        "--scheme",
        "two-copy",
        "--checkpoint-every",
        "200",
    ];
    run(1, &[&single[..], &["--out", d[0]]].concat());
    let said = run(
        first.0,
        &[
            first.1,
            &["--steps", "100", "--checkpoint-every", "100", "--out", d[1]],
        ]
        .concat(),
    );
    assert!(said.contains(&format!("{} MPI ranks", first.0)), "{said}");
    let checkpoint = format!("{}/{case}_checkpoint.lbm", d[1]);
    let resume = |(ranks, options): (usize, &[&str]), out: &str| {
        let how = [
            "--steps",
            "200",
            "--checkpoint-every",
            "200",
            "--out",
            out,
            "--resume",
            &checkpoint,
        ];
        run(ranks, &[options, &how[..]].concat())
    };
    let state = |dir: &str| checkpoint_state::<M>(&format!("{dir}/{case}_checkpoint.lbm"));
    let vtk = |dir: &str, step: u64| {
        let pvti = format!("{dir}/{case}_{step:08}.pvti");
        lbm::output::vtk::read_joined(std::path::Path::new(&pvti)).expect("a VTK dataset")
    };
    let want = (state(d[0]), vtk(d[0], 200));
    assert!(
        vtk(d[1], 100) == vtk(d[0], 100),
        "{case}: the 2-rank VTK dataset differs"
    );
    let resumed = resume(then, d[2]);
    assert!(
        resumed.contains("resumed at step 100")
            && resumed.contains(&format!("{} MPI ranks", then.0)),
        "{resumed}"
    );
    // One process continues the first run in its own directory: the series goes on.
    assert!(resume((1, &[]), d[1]).contains("resumed at step 100"));
    for dir in [d[2], d[1]] {
        assert!(
            state(dir) == want.0,
            "{case}: the checkpoint in {dir} differs"
        );
        assert!(
            vtk(dir, 200) == want.1,
            "{case}: the VTK dataset in {dir} differs"
        );
    }
    let series = std::fs::read_to_string(format!("{}/{case}.pvd", d[1])).unwrap();
    for step in [0, 100, 200] {
        assert!(series.contains(&format!("timestep=\"{step}\"")), "{series}");
    }
}

/// 2 ranks, then 3, each cut as the program chooses (rings of slabs along x, or y for the
/// taller D2Q37 lattice).
const TWO_THEN_THREE: [(usize, &[&str]); 2] = [(2, &[]), (3, &[])];

#[test]
fn lbm_run_on_ranks_resumes_on_another_rank_count_bitwise() {
    let size = ["--ly", "48"];
    resumes_on_any_rank_count::<lbm::models::D2Q9Bgk>("taylor-green", size, TWO_THEN_THREE);
    let size = ["--ly", "64"];
    resumes_on_any_rank_count::<lbm::models::D2Q37>("rayleigh-taylor", size, TWO_THEN_THREE);
}

/// The same for a 3-D case: walls on all six sides (the x walls at the ends of the first and
/// last slabs), 3-D checkpoint shards and VTK pieces; on 2 then 3 ranks, and on 8 ranks cut
/// 2 × 2 × 2 (a shard per block, the moments moved to each rank's planes for the VTK pieces)
/// resumed on 3 cut 1 × 1 × 3.
#[test]
fn a_3d_run_on_ranks_resumes_on_another_rank_count_bitwise() {
    let size = ["--ly", "48"];
    resumes_on_any_rank_count::<lbm::models::D3Q19Trt>("cavity-3d", size, TWO_THEN_THREE);
    let cubes = [(8, &["--cut", "2x2x2"][..]), (3, &["--cut", "1x1x3"][..])];
    resumes_on_any_rank_count::<lbm::models::D3Q19Trt>("cavity-3d", size, cubes);
}

/// Every 3-D case of the program on 2, 3, 4, 6 and 8 ranks, cut along one axis (x by default
/// on 2, z on 3), two (y and z on 4, x and y on 6) and three (2 × 2 × 2 on 8), ends with the
/// single process's populations, bit for bit (the checkpoint written at the last step), in
/// place or not, and with its diagnostics (sums over the blocks, taken in another order:
/// within round-off). The body case's sphere is centred on the corner of the 2 × 2 × 2 cut's
/// blocks (its loads summed over them); the capillaries' curved walls cross the cuts along y
/// and z.
#[test]
fn every_3d_case_on_up_to_8_ranks_cut_along_1_2_and_3_axes_is_the_single_process_run() {
    let cuts: [(usize, &[&str]); 6] = [
        (1, &["--scheme", "two-copy"]),
        (2, &[]),
        (3, &["--cut", "1x1x3", "--scheme", "two-copy"]),
        (4, &["--cut", "1x2x2"]),
        (6, &["--cut", "3x2x1", "--scheme", "two-copy"]),
        (8, &["--cut", "2x2x2"]),
    ];
    runs_of_3d_cases_agree(&CASES_3D, &cuts, |a, b| a.to_bits() == b.to_bits());
}

/// The 3-D cases of the program at the sizes the distributed tests run them: the capillaries'
/// curved walls cross cuts along y and z, the body case's sphere is centred on the corner of
/// the 2 × 2 × 2 cut's blocks.
const CASES_3D: [(&str, &[&str]); 6] = [
    ("taylor-green-3d", &["--lx", "16"]),
    ("duct", &["--lx", "16", "--ly", "16"]),
    (
        "capillaries",
        &[
            "--lx",
            "16",
            "--ly",
            "32",
            "--pitch",
            "16",
            "--diameter",
            "8",
        ],
    ),
    ("cavity-3d", &["--lx", "16"]),
    ("cylinder-3d", &["--diameter", "10"]),
    (
        "body",
        &[
            "--diameter",
            "4",
            "--lx",
            "24",
            "--ly",
            "16",
            "--at",
            "12,8,8",
        ],
    ),
];

/// Each of `cases` (a name and its size options) run by `lbm run` for 7 steps, checkpointed
/// at the last, on each of `runs` (ranks and options: a cut, a backend, a scheme): every run's
/// populations are the first's, value by value as `same` says, and its diagnostics are within
/// round-off of the first's (sums over the blocks, taken in another order). Its VTK dataset
/// of the last step holds a piece a block, joined into the first's fields (as `same` says).
fn runs_of_3d_cases_agree(
    cases: &[(&str, &[&str])],
    runs: &[(usize, &[&str])],
    same: impl Fn(f64, f64) -> bool,
) {
    for &(case, size) in cases {
        let mut want: Option<(Vec<f64>, String, lbm::output::vtk::Joined)> = None;
        for &(ranks, how) in runs {
            let dir = tempfile::tempdir().unwrap();
            let out = dir.path().to_str().unwrap();
            let common = ["--steps", "7", "--checkpoint-every", "7", "--images", ""];
            let run = [&["run", case][..], size, &common[..], how, &["--out", out]].concat();
            let said = lbm_ok(ranks, &run);
            let what = format!("{case} on {ranks} ranks {how:?}");
            if ranks > 1 {
                assert!(
                    said.contains(&format!("{ranks} MPI ranks")),
                    "{what}: {said}"
                );
            }
            let path = format!("{out}/{case}_checkpoint.lbm");
            let (step, state) = if case == "taylor-green-3d" {
                checkpoint_values::<lbm::models::D3Q19Mrt>(&path)
            } else {
                checkpoint_values::<lbm::models::D3Q19Trt>(&path)
            };
            assert_eq!(step, 7, "{what}");
            let table = std::fs::read_to_string(format!("{out}/{case}_diagnostics.csv"))
                .unwrap_or_else(|e| panic!("{what}: diagnostics: {e}"));
            let pvti = format!("{out}/{case}_00000007.pvti");
            let pieces = std::fs::read_to_string(&pvti).unwrap_or_else(|e| panic!("{what}: {e}"));
            assert_eq!(pieces.matches("<Piece ").count(), ranks, "{what}: {pieces}");
            let vtk = lbm::output::vtk::read_joined(std::path::Path::new(&pvti)).unwrap();
            let Some((state0, table0, vtk0)) = &want else {
                want = Some((state, table, vtk));
                continue;
            };
            assert_eq!(vtk.arrays.len(), vtk0.arrays.len(), "{what}");
            for (a, b) in vtk0.arrays.iter().zip(&vtk.arrays) {
                let alike = a.2.iter().zip(&b.2).all(|(x, y)| same(*x, *y));
                assert!(
                    (&a.0, a.1) == (&b.0, b.1) && alike,
                    "{what}: VTK field {} differs",
                    a.0
                );
            }
            assert_eq!(state.len(), state0.len(), "{what}");
            if let Some((a, b)) = state0.iter().zip(&state).find(|&(a, b)| !same(*a, *b)) {
                panic!("{what}: the populations differ, {a} against {b}");
            }
            same_within_round_off(&table, table0, &what);
        }
    }
}

/// The 3-D cases on GPU ranks (lavapipe in CI) cut along two axes on 4 ranks (in place) and
/// three on 8 (two-copy), and on split ranks cut along three (in place, a host column a side):
/// every block on its rank's device, or cut along x into host and device parts, its ghost
/// lines along y and z read back and written through the host before each step. After 7 steps
/// the checkpoint's populations are within 1e-12 of the single CPU process's (relative to their
/// size or 1) and the diagnostics within round-off: the body case's sphere on the corner of the 2 × 2 × 2
/// cut's blocks, its loads summed over them; the capillaries' curved walls across the cuts
/// along y and z.
#[test]
fn the_3d_cases_on_gpu_and_split_ranks_cut_along_2_and_3_axes_are_the_single_process_run() {
    let cases: Vec<_> = (CASES_3D.into_iter())
        .filter(|(case, _)| ["cavity-3d", "capillaries", "body"].contains(case))
        .collect();
    let runs: [(usize, &[&str]); 4] = [
        (1, &["--backend", "cpu", "--scheme", "two-copy"]),
        (
            4,
            &["--backend", "gpu", "--cut", "1x2x2", "--scheme", "in-place"],
        ),
        (
            8,
            &["--backend", "gpu", "--cut", "2x2x2", "--scheme", "two-copy"],
        ),
        (
            8,
            &[
                "--backend",
                "hetero",
                "--cut",
                "2x2x2",
                "--host-columns",
                "1",
                "--scheme",
                "in-place",
            ],
        ),
    ];
    runs_of_3d_cases_agree(&cases, &runs, |a, b| {
        (a - b).abs() <= 1e-12 * a.abs().max(1.0)
    });
}

/// The step and the populations of the checkpoint `path` of model `M` in f64.
fn checkpoint_values<M: lbm::Model>(path: &str) -> (u64, Vec<f64>) {
    let c = lbm::read_checkpoint::<M, f64>(std::path::Path::new(path)).expect("a checkpoint");
    (
        c.header.step,
        c.columns(0..c.header.lx).expect("its populations"),
    )
}

/// `lbm run capillaries --block 8` under `mpiexec`: a box of 16 blocks of which the 4 that
/// hold the capillaries run (a sparse domain), one a rank on 4 ranks (in place), two a rank on
/// threads on 2 (two-copy). After 7 steps the fluid's populations in its checkpoint are the
/// single process's whole box's bit for bit, its VTK dataset (the blocks left out read as solid
/// at rest) and its diagnostics the same; the checkpoint resumes on one process to the
/// uninterrupted run's bits. On GPU ranks the fluid's populations are within 1e-12 of the
/// single process's. On 5 ranks the run is refused, saying it runs on at most 4.
#[test]
fn the_capillaries_on_a_sparse_domain_of_ranks_are_the_single_process_run() {
    let case = lbm::cases::Capillaries {
        lx: 8,
        side: 32,
        pitch: 16,
        diameter: 6,
        tau: 0.8,
        acceleration: 1e-6,
    };
    let solid = case.obstacles();
    let size = [
        "--lx",
        "8",
        "--ly",
        "32",
        "--pitch",
        "16",
        "--diameter",
        "6",
        "--images",
        "",
    ];
    let lbm = std::path::Path::new(env!("CARGO_BIN_EXE_lbm"));
    // The fluid's populations of a checkpoint: site `(x·LZ + z)·LY + y`, Q a site.
    let fluid = |dir: &str| -> (u64, Vec<u64>) {
        let (step, all) =
            checkpoint_state::<lbm::models::D3Q19Trt>(&format!("{dir}/capillaries_checkpoint.lbm"));
        let q = <lbm::models::D3Q19Trt as lbm::Model>::Q;
        let fluid = (all.chunks_exact(q).enumerate())
            .filter(|&(s, _)| !solid.is_solid(s / (32 * 32), s % 32, s / 32 % 32))
            .flat_map(|(_, f)| f.to_vec())
            .collect::<Vec<_>>();
        let share = fluid.len() as f64 / all.len() as f64;
        assert!(
            (0.05..0.2).contains(&share),
            "{dir}: fluid {share} of the box"
        );
        (step, fluid)
    };
    // The sparse run's dataset is a `.vtm` of its 4 blocks, the single process's a `.pvti`;
    // the sites of the blocks left out, all solid, hold 0 in both.
    let vtk = |dir: &str, step: u64, ext: &str| {
        let path = format!("{dir}/capillaries_{step:08}.{ext}");
        if ext == "vtm" {
            let text = std::fs::read_to_string(&path).expect("a .vtm");
            assert_eq!(text.matches("<DataSet ").count(), 4, "{text}");
        }
        lbm::output::vtk::read_joined(std::path::Path::new(&path)).expect("a VTK dataset")
    };
    for (scheme, ranks, blocks) in [
        ("in-place", 4, "4 MPI ranks"),
        ("two-copy", 2, "4 threads on 2 MPI ranks"),
    ] {
        let dirs: Vec<tempfile::TempDir> = (0..3).map(|_| tempfile::tempdir().unwrap()).collect();
        let d: Vec<&str> = dirs.iter().map(|d| d.path().to_str().unwrap()).collect();
        let run = |ranks: usize, steps: &str, extra: &[&str]| {
            let how = ["run", "capillaries", "--scheme", scheme, "--steps", steps];
            let every = ["--checkpoint-every", "7", "--output-every", "7"];
            lbm_ok(ranks, &[&how[..], &size, &every, extra].concat())
        };
        run(1, "14", &["--out", d[0]]);
        let said = run(ranks, "7", &["--block", "8", "--out", d[1]]);
        assert!(
            said.contains(&format!(
                "{blocks} in blocks cut 1x4x4, the 4 that hold fluid"
            )),
            "{said}"
        );
        let whole =
            |dir: &str| std::fs::read_to_string(format!("{dir}/capillaries_diagnostics.csv"));
        let (one, four) = (whole(d[0]).unwrap(), whole(d[1]).unwrap());
        let first_rows = |t: &str| t.lines().take(3).collect::<Vec<_>>().join("\n");
        same_within_round_off(&first_rows(&four), &first_rows(&one), scheme);
        assert!(
            vtk(d[1], 7, "vtm") == vtk(d[0], 7, "pvti"),
            "{scheme}: the VTK datasets differ"
        );
        // The single process's step 7, from a run stopped there.
        run(1, "7", &["--out", d[2]]);
        assert!(
            fluid(d[1]) == fluid(d[2]),
            "{scheme}: the fluid's populations differ"
        );
        let checkpoint = format!("{}/capillaries_checkpoint.lbm", d[1]);
        let resumed = run(1, "14", &["--out", d[1], "--resume", &checkpoint]);
        assert!(resumed.contains("resumed at step 7"), "{resumed}");
        assert!(
            fluid(d[1]) == fluid(d[0]),
            "{scheme}: resumed, the populations differ"
        );
    }
    // The same sparse domain on GPU ranks (two blocks a rank, on threads, each on the rank's
    // device): the fluid's populations within 1e-12 of the single process's.
    let dirs: Vec<tempfile::TempDir> = (0..2).map(|_| tempfile::tempdir().unwrap()).collect();
    let d: Vec<&str> = dirs.iter().map(|d| d.path().to_str().unwrap()).collect();
    let common = [
        &[
            "run",
            "capillaries",
            "--steps",
            "7",
            "--checkpoint-every",
            "7",
        ][..],
        &size[..],
    ]
    .concat();
    lbm_ok(1, &[&common[..], &["--out", d[0]]].concat());
    let on_gpu = ["--block", "8", "--backend", "gpu", "--out", d[1]];
    let said = lbm_ok(2, &[&common[..], &on_gpu[..]].concat());
    assert!(
        said.contains("4 threads on 2 MPI ranks in blocks cut 1x4x4, the 4 that hold fluid")
            && said.contains("gpu"),
        "{said}"
    );
    let ((step0, want), (step, got)) = (fluid(d[0]), fluid(d[1]));
    assert_eq!((step0, want.len()), (step, got.len()));
    for (a, b) in want.iter().zip(&got) {
        let (a, b) = (f64::from_bits(*a), f64::from_bits(*b));
        assert!(
            (a - b).abs() <= 1e-12 * a.abs().max(1.0),
            "gpu: {a} against {b}"
        );
    }
    let out = mpiexec_program(
        5,
        lbm,
        &[&["run", "capillaries", "--block", "8"][..], &size].concat(),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && stderr.contains("4 hold fluid: run it on at most 4 processes"),
        "{stderr}"
    );
}

/// The 3-D finite-difference heat grid of `examples/mpi_ring.rs` (a mixed derivative whose
/// stencil reaches the corners of the cube around a node; periodic along x, walls of every
/// rule along y and z) on 2, 3, 4, 6 and 8 ranks cut along one, two and three axes ends with
/// the single process's values bit for bit, each rank trading the engine's count of halo nodes
/// for its cut; a checkpoint written on 8 ranks cut 2 × 2 × 2 resumes on 3 ranks cut 1 × 1 ×
/// 3, and on one process, to the same bits. On GPU ranks cut along one, two and three axes
/// and split ranks (host, device, host a block, on threads) in each layout, within 1e-12.
#[test]
fn the_3d_heat_grid_on_up_to_8_ranks_cut_along_1_2_and_3_axes_is_the_single_process_grid() {
    let run = |ranks: usize, cut: &str, extra: &[&str]| -> String {
        let args = [&["heat3", cut, "60"][..], extra].concat();
        let out = mpiexec(ranks, &args);
        let stdout = String::from_utf8_lossy(&out.stdout).to_string();
        assert!(
            out.status.success() && stdout.starts_with("heat3 [12, 9, 18] nodes, 60 steps: "),
            "heat3 {args:?} on {ranks} ranks: {stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        stdout
    };
    let one = run(1, "1x1x1", &[]);
    let cuts = [
        (2, "2x1x1"),
        (2, "1x1x2"),
        (3, "1x3x1"),
        (4, "2x2x1"),
        (4, "1x2x2"),
        (6, "2x1x3"),
        (6, "3x2x1"),
        (8, "2x2x2"),
    ];
    for (ranks, cut) in cuts {
        assert!(run(ranks, cut, &[]) == one, "{ranks} ranks cut {cut}");
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("heat3.lbm");
    let path = path.to_str().unwrap();
    let written = run(8, "2x2x2", &["checkpoint", path, "25"]);
    assert!(written == one, "8 ranks checkpointing at step 25");
    for (ranks, cut) in [(3, "1x1x3"), (1, "1x1x1")] {
        let resumed = run(ranks, cut, &["resume", path]);
        assert!(resumed == one, "resumed on {ranks} ranks cut {cut}");
    }
    let values = |out: &str| -> Vec<f64> {
        let bits = out.split_once(": ").unwrap().1.split_whitespace();
        bits.map(|b| f64::from_bits(u64::from_str_radix(b, 16).unwrap()))
            .collect()
    };
    let host = values(&one);
    let scale = host.iter().fold(1.0_f64, |m, v| m.max(v.abs()));
    for (ranks, cut, device) in [
        (2, "2x1x1", ["gpu", "soa"]),
        (4, "1x2x2", ["gpu", "aos"]),
        (8, "2x2x2", ["gpu", "caosoa"]),
        (2, "1x1x2", ["hetero", "aos"]),
        (1, "1x1x1", ["hetero", "caosoa"]),
    ] {
        let got = values(&run(ranks, cut, &device));
        assert_eq!(got.len(), host.len());
        let worst = (host.iter().zip(&got)).fold(0.0_f64, |m, (a, b)| m.max((a - b).abs()));
        assert!(
            worst <= 1e-12 * scale,
            "{device:?} on {ranks} ranks cut {cut}: {worst:e}"
        );
    }
}

/// Two CSV tables with the same header and the same numbers within `1e-9` (relative, or
/// absolute near zero): sums taken in another order, some columns printed to 10 digits.
fn same_within_round_off(a: &str, b: &str, what: &str) {
    let (la, lb): (Vec<&str>, Vec<&str>) = (a.lines().collect(), b.lines().collect());
    assert_eq!(la.len(), lb.len(), "{what}: rows\n{a}\n{b}");
    assert_eq!(la.first(), lb.first(), "{what}: header");
    for (ra, rb) in la.iter().zip(&lb).skip(1) {
        for (x, y) in ra.split(',').zip(rb.split(',')) {
            let (x, y): (f64, f64) = (x.trim().parse().unwrap(), y.trim().parse().unwrap());
            let close = (x - y).abs() <= 1e-9 * x.abs().max(y.abs()).max(1e-3);
            assert!(close, "{what}: {x} against {y}\n{ra}\n{rb}");
        }
    }
}

/// The pictures of a cube cut along each axis — a plane of constant x held by the last of 3
/// ranks, planes of constant y and z across all of them — are the single process's, byte for
/// byte.
#[test]
fn slices_of_a_cube_on_ranks_are_the_single_process_pictures() {
    for (slice, at) in [("--slice-x", "11"), ("--slice-y", "5"), ("--slice-z", "3")] {
        let run = |ranks: usize| {
            let dir = tempfile::tempdir().unwrap();
            let args = [
                "run",
                "cavity-3d",
                "--lx",
                "16",
                "--steps",
                "20",
                "--until-steady",
                "1e-30",
                "--vtk",
                "false",
                "--images",
                "speed,vorticity,uz",
                slice,
                at,
                "--out",
                dir.path().to_str().unwrap(),
            ];
            lbm_ok(ranks, &args);
            dir
        };
        let (one, three) = (run(1), run(3));
        let axis = &slice[slice.len() - 1..];
        for field in ["speed", "vorticity", "uz"] {
            let png = format!("cavity-3d_{field}_{axis}{at}_00000020.png");
            let read = |d: &tempfile::TempDir| {
                std::fs::read(d.path().join(&png)).unwrap_or_else(|e| panic!("{png}: {e}"))
            };
            assert!(read(&one) == read(&three), "{png} differs on 3 ranks");
        }
    }
}

/// The peaks of memory (VmHWM, GiB) of the ranks of a run, read from its summary.
fn peaks(summary: &str) -> Vec<f64> {
    let line = summary
        .lines()
        .find(|l| l.contains("peak memory (VmHWM):"))
        .unwrap_or_else(|| panic!("no peak memory in\n{summary}"));
    let parts: Vec<&str> = line.split(" GiB (estimated").collect();
    parts[..parts.len() - 1]
        .iter()
        .map(|p| p.rsplit(' ').next().unwrap().parse().unwrap())
        .collect()
}

/// At a lattice where the populations dominate (D2Q9 in f64, 4096 × 1024 sites, two-copy: 604
/// MB of populations), with every output (diagnostics, images, VTK) and a checkpoint, every
/// rank of 2 and of 3 peaks at no more than 0.6 of the single process (as each reports): no
/// rank builds, gathers or writes anything of the global lattice's size.
#[test]
fn no_rank_holds_the_global_lattice() {
    let run = |ranks: usize| {
        let dir = tempfile::tempdir().unwrap();
        let args = [
            "run",
            "poiseuille",
            "--lx",
            "4096",
            "--ly",
            "1024",
            "--scheme",
            "two-copy",
            "--layout",
            "soa",
            "--steps",
            "4",
            "--output-every",
            "0",
            "--checkpoint-every",
            "4",
            "--out",
            dir.path().to_str().unwrap(),
        ];
        peaks(&lbm_ok(ranks, &args))
    };
    let single = run(1);
    assert_eq!(single.len(), 1);
    for ranks in [2, 3] {
        let each = run(ranks);
        assert_eq!(each.len(), ranks);
        for (r, p) in each.iter().enumerate() {
            assert!(
                *p <= 0.6 * single[0],
                "rank {r} of {ranks} peaked at {p} GiB, the single process at {} GiB",
                single[0]
            );
        }
    }
}

/// An adapter that exists on rank 0 but not on rank 1 (each rank's `$LBM_GPU_ADAPTER`): both
/// ranks fail before any step, rank 1 with the adapters it has, rank 0 naming rank 1's
/// failure, and the run ends.
#[test]
fn an_adapter_missing_on_one_rank_fails_on_every_rank() {
    let lbm = env!("CARGO_BIN_EXE_lbm");
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("out");
    let rank = |adapter: &str| -> Vec<String> {
        [
            "-n",
            "1",
            "-env",
            "LBM_GPU_ADAPTER",
            adapter,
            lbm,
            "run",
            "taylor-green",
            "--lx",
            "32",
            "--ly",
            "32",
            "--steps",
            "10",
            "--backend",
            "gpu",
            "--out",
            out_dir.to_str().unwrap(),
        ]
        .map(String::from)
        .to_vec()
    };
    let mut argv = rank("cpu");
    argv.push(":".into());
    argv.extend(rank("no-such-gpu"));
    let out = mpiexec_argv(&argv);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains("rank 1 of 2: error: no adapter matches")
            && stderr.contains("rank 0 of 2: error: rank 1 failed: no adapter matches"),
        "{stderr}"
    );
    let written = std::fs::read_dir(&out_dir).map_or(0, |d| d.count());
    assert_eq!(written, 0, "no output of a run that failed to start");
}

/// A lattice too large for the node's memory is refused by every rank, counting the ranks
/// that share the node, and on a CPU adapter (lavapipe) the GPU ranks' device copies.
#[test]
fn lbm_run_too_large_for_the_node_fails_on_every_rank() {
    let lbm = std::path::Path::new(env!("CARGO_BIN_EXE_lbm"));
    let cpu_adapter = lbm::gpu::GpuContext::new(&Default::default()).is_ok_and(|ctx| ctx.is_cpu());
    for backend in ["cpu", "gpu"] {
        let dir = tempfile::tempdir().unwrap();
        let out_dir = dir.path().join("out");
        // Re = 10⁵ keeps τ = 3 U n / Re + ½ below the bound of 100 on so large a lattice.
        let args = [
            "run",
            "cavity",
            "--lx",
            "100000",
            "--re",
            "100000",
            "--backend",
            backend,
            "--out",
            out_dir.to_str().unwrap(),
        ];
        let out = mpiexec_program(2, lbm, &args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{stderr}");
        for rank in 0..2 {
            let line = stderr
                .lines()
                .find(|l| l.starts_with(&format!("rank {rank} of 2: error:")))
                .unwrap_or_else(|| panic!("rank {rank} reported no error:\n{stderr}"));
            assert!(line.contains("the run needs"), "{line}");
            let device = backend == "gpu" && cpu_adapter;
            assert_eq!(line.contains(", device "), device, "{backend}: {line}");
        }
        assert!(
            stderr.contains("GiB for the 2 ranks on this node"),
            "{stderr}"
        );
        assert!(!out_dir.exists(), "{backend}: nothing written");
    }
}

/// A lattice the ranks cannot share as asked fails on every rank of `lbm run`, without
/// hanging, saying why: slabs thinner than the halo, blocks too thin along y, a cut of
/// another block count, a cut along y of GPU slabs.
#[test]
fn lbm_run_with_too_many_ranks_fails_on_every_rank() {
    let lbm = std::path::Path::new(env!("CARGO_BIN_EXE_lbm"));
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().to_str().unwrap();
    let common = ["run", "rayleigh-taylor", "--lx", "6", "--out", out_dir];
    for (options, why) in [
        (
            &["--ly", "64", "--cut", "3x1"][..],
            "a lattice of width LX = 6 cannot be split over 3 ranks",
        ),
        (
            &[
                "--ly",
                "8",
                "--amplitude",
                "1",
                "--width",
                "1",
                "--cut",
                "1x3",
                "--layout",
                "soa",
            ][..],
            "its blocks along y would hold fewer than 3 sites (the halo)",
        ),
        (
            &["--ly", "64", "--cut", "2x2"][..],
            "it has 4 blocks: give one per process",
        ),
    ] {
        let out = mpiexec_program(3, lbm, &[&common[..], options].concat());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{options:?}");
        for rank in 0..3 {
            assert!(
                stderr.contains(&format!("rank {rank} of 3: error: "))
                    && stderr.matches(why).count() == 3,
                "{options:?}: {stderr}"
            );
        }
    }
}

/// `lbm bench --ranks` on 2 ranks: the step with and without the exchange, and the curves, for
/// each rank-local backend, with D2Q9 and with D3Q19 (slabs of planes: the curves count the
/// planes' sites as a column).
#[test]
fn lbm_bench_ranks_measures_and_predicts() {
    let lbm = std::path::Path::new(env!("CARGO_BIN_EXE_lbm"));
    for (backend, says, model) in [
        ("cpu", "rank 0 on cpu", ["d2q9", "--d2q9-size", "256x256"]),
        ("gpu", "rank 0 on gpu", ["d2q9", "--d2q9-size", "256x256"]),
        (
            "hetero",
            "rank 0 on hetero, M = ",
            ["d2q9", "--d2q9-size", "256x256"],
        ),
        (
            "cpu",
            "strong scaling, 32×16×16",
            ["d3q19", "--d3q19-size", "32x16x16"],
        ),
        (
            "gpu",
            "rank 0 on gpu",
            ["d3q19", "--d3q19-size", "32x16x16"],
        ),
    ] {
        let args = [
            "bench",
            "--ranks",
            "1",
            "2",
            "4",
            "--model",
            model[0],
            model[1],
            model[2],
            "--rank-steps",
            "5",
            "--backend",
            backend,
        ];
        let out = mpiexec_program(2, lbm, &args);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{backend}: {stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        for needle in [
            "on 2 rank(s)",
            says,
            "with the halo exchange",
            "without it",
            "strong scaling",
            "weak scaling",
            "EDR InfiniBand",
            "measured",
        ] {
            assert!(stdout.contains(needle), "`{needle}` missing:\n{stdout}");
        }
        let (sent, formula) = halo_bytes(&stdout);
        assert!(sent > 0 && sent == formula, "{stdout}");
    }
    // Blocks along y and z too, the lines along y padded to CAoSoA's clusters: the bytes sent
    // are the cut's formula's.
    for (ranks, cut) in [(4, "1x2x2"), (2, "1x2x1")] {
        let args = [
            "bench",
            "--ranks",
            "1",
            "--model",
            "d3q19",
            "--d3q19-size",
            "16x32x12",
            "--layout",
            "caosoa",
            "--rank-steps",
            "2",
            "--cut",
            cut,
        ];
        let out = mpiexec_program(ranks, lbm, &args);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{cut}: {stdout}");
        assert!(stdout.contains(&format!("(cut {cut}, block ")), "{stdout}");
        let (sent, formula) = halo_bytes(&stdout);
        assert!(sent > 0 && sent == formula, "{cut}: {stdout}");
    }
}

/// The bytes rank 0 sent per step and the cut's formula, from `lbm bench --ranks`' line.
fn halo_bytes(stdout: &str) -> (usize, usize) {
    let line = (stdout.lines())
        .find(|l| l.contains("halo per step on rank 0"))
        .expect("the halo line");
    let number = |after: &str, upto: &str| -> usize {
        let rest = &line[line.find(after).expect("its numbers") + after.len()..];
        rest[..rest.find(upto).unwrap_or(rest.len())]
            .trim()
            .parse()
            .expect("a count")
    };
    (number("): ", " bytes sent"), number(" gives ", "\n"))
}

/// `lbm run cylinder` on 2 and 3 CPU ranks gives the single process's diagnostics — the drag,
/// lift and pressure difference summed over the ranks' links and probes — to round-off (the
/// populations are the same bits; the sums over ranks add in another order).
#[test]
fn lbm_run_cylinder_on_ranks_gives_the_single_process_loads() {
    let run = |ranks: usize| {
        let dir = tempfile::tempdir().unwrap();
        let args = [
            "run",
            "cylinder",
            "--diameter",
            "10",
            "--steps",
            "400",
            "--diagnostics-every",
            "100",
            "--images",
            "",
            "--out",
            dir.path().to_str().unwrap(),
        ];
        lbm_ok(ranks, &args);
        let text = std::fs::read_to_string(dir.path().join("cylinder_diagnostics.csv")).unwrap();
        let rows: Vec<Vec<f64>> = (text.lines().skip(1))
            .map(|l| l.split(',').map(|v| v.parse().unwrap()).collect())
            .collect();
        rows
    };
    let one = run(1);
    assert_eq!(one.len(), 5, "rows at steps 0, 100, …, 400: {one:?}");
    for ranks in [2, 3] {
        let got = run(ranks);
        assert_eq!(one.len(), got.len());
        for (a, b) in one.iter().zip(&got) {
            for (x, y) in a.iter().zip(b) {
                assert!(
                    (x - y).abs() <= 1e-12 * x.abs().max(1e-3),
                    "{ranks} ranks:\n{a:?}\n{b:?}"
                );
            }
        }
    }
}

/// The body case (`lbm run body`: the shipped sphere, curved walls, Zou–He inlet and outlet,
/// its load by momentum exchange) is one lattice whatever its layout and however many ranks
/// share it: in every layout the build runs cases in and both schemes, and on 2 and 3 ranks whose cuts (x = 24; x = 16
/// and 32) run through the sphere (x from 15 to 25), the VTK fields are the single SoA two-copy
/// process's bit for bit, and the drag and lift to the ten digits the CSV prints, but for the
/// last (the ranks' loads are summed in another order).
#[test]
fn the_body_case_is_bitwise_one_lattice_in_every_layout_and_across_the_cuts() {
    let run = |ranks: usize, layout: &str, scheme: &str| {
        let dir = tempfile::tempdir().unwrap();
        let args = [
            &["run", "body"],
            BODY_ACROSS_THE_CUTS,
            &[
                "--steps",
                "60",
                "--output-every",
                "0",
                "--images",
                "",
                "--layout",
                layout,
                "--scheme",
                scheme,
                "--out",
                dir.path().to_str().unwrap(),
            ],
        ]
        .concat();
        let stdout = lbm_ok(ranks, &args);
        if ranks > 1 {
            assert!(stdout.contains(&format!("{ranks} MPI ranks")), "{stdout}");
        }
        let pvti = dir.path().join("body_00000060.pvti");
        let fields = lbm::output::vtk::read_joined(&pvti).expect("a VTK dataset");
        let csv = std::fs::read_to_string(dir.path().join("body_diagnostics.csv")).unwrap();
        let header: Vec<String> = csv
            .lines()
            .next()
            .unwrap()
            .split(',')
            .map(String::from)
            .collect();
        let last: Vec<f64> = csv
            .lines()
            .last()
            .unwrap()
            .split(',')
            .map(|v| v.parse().unwrap())
            .collect();
        let load: Vec<f64> = ["c_D", "c_Ly", "c_Lz"]
            .iter()
            .map(|c| last[header.iter().position(|h| h == c).expect(c)])
            .collect();
        (fields, load)
    };
    let (want, load) = run(1, "soa", "two-copy");
    assert!(load[0] > 1.0, "a drag coefficient: {load:?}");
    let solid = want
        .arrays
        .iter()
        .find(|a| a.0 == "solid")
        .expect("the solid field");
    assert!(
        solid.2.iter().any(|&s| s > 0.5),
        "the sphere is in the lattice"
    );
    // AoS and CSoA in a build that runs the cases in them (the `layouts` feature); the
    // library's own tests compare every layout bit for bit.
    let every_layout = [(1, "aos", "two-copy"), (1, "csoa", "two-copy")];
    let more = every_layout.iter().filter(|_| cfg!(feature = "layouts"));
    for &(ranks, layout, scheme) in more.chain(&[
        (1, "caosoa", "two-copy"),
        (2, "soa", "two-copy"),
        (3, "caosoa", "two-copy"),
        (1, "soa", "in-place"),
        (3, "caosoa", "in-place"),
    ]) {
        let (got, got_load) = run(ranks, layout, scheme);
        assert!(
            got == want,
            "{layout} {scheme} on {ranks} rank(s): the VTK fields differ"
        );
        for (a, b) in load.iter().zip(&got_load) {
            assert!(
                (a - b).abs() <= 1e-9 * a.abs().max(1.0),
                "{layout} {scheme} on {ranks} rank(s): {load:?} against {got_load:?}"
            );
        }
    }
}

/// `lbm bench --ranks` checks each rank's slab (its share of the lattice's width) against the
/// memory available before any probe or allocation, and refuses one that cannot fit with the
/// option to change.
#[test]
fn lbm_bench_ranks_refuses_a_slab_past_memory_before_any_work() {
    let lbm = std::path::Path::new(env!("CARGO_BIN_EXE_lbm"));
    let args = ["bench", "--ranks", "2", "--model", "d2q9"];
    let out = mpiexec_program(
        2,
        lbm,
        &[&args[..], &["--d2q9-size", "400000x400000"]].concat(),
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    for rank in ["rank 0 of 2", "rank 1 of 2"] {
        assert!(
            err.contains(&format!(
                "{rank}: error: setting `d2q9-size`: 200000×400000 in F64"
            )) && err.contains("per rank")
                && err.contains("give a smaller --d2q9-size"),
            "{rank}:\n{err}"
        );
    }
    assert!(
        out.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

/// SIGTERM to one rank alone (as a node's batch daemon may send it) stops every rank after the
/// same step with the checkpoint written, and every rank exits as the signal's (143), not only
/// the one that caught it.
#[test]
fn a_signal_to_one_rank_stops_every_rank_with_its_status() {
    let _one = MPI.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().expect("a temporary directory");
    let out = dir.path().join("one-rank-signalled");
    let out = out.to_str().expect("a UTF-8 path");
    let mut child = Command::new("mpiexec")
        .args([
            "-n",
            "2",
            env!("CARGO_BIN_EXE_lbm"),
            "run",
            "taylor-green",
            "--lx",
            "64",
        ])
        .args(["--steps", "100000000", "--checkpoint-every", "100000000"])
        .args(["--images", "", "--vtk", "false", "--out", out])
        .env("RAYON_NUM_THREADS", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("mpiexec runs");
    // The ranks: the processes named lbm whose command line names this output directory.
    let ranks = || -> Vec<u32> {
        let listed = Command::new("pgrep")
            .args(["-f", out])
            .output()
            .expect("pgrep");
        String::from_utf8_lossy(&listed.stdout)
            .split_whitespace()
            .filter_map(|p| p.parse().ok())
            .filter(|p| {
                std::fs::read_to_string(format!("/proc/{p}/comm")).is_ok_and(|c| c.trim() == "lbm")
            })
            .collect()
    };
    let start = Instant::now();
    while ranks().len() < 2 || !std::path::Path::new(out).join(".lbm-lock").exists() {
        assert!(start.elapsed() < TIMEOUT, "the ranks did not start");
        std::thread::sleep(Duration::from_millis(100));
    }
    // Stepping by now (the output directory is prepared before the first step).
    std::thread::sleep(Duration::from_secs(2));
    let status = Command::new("kill")
        .args(["-TERM", &ranks()[0].to_string()])
        .status()
        .expect("kill");
    assert!(status.success());
    let stopped = Instant::now();
    while child.try_wait().expect("waiting for mpiexec").is_none() {
        if stopped.elapsed() > TIMEOUT {
            child.kill().expect("kill the run");
            panic!("the ranks did not stop within {TIMEOUT:?} of the signal");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let o = child.wait_with_output().expect("mpiexec ends");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(143), "{err}");
    for rank in ["rank 0 of 2", "rank 1 of 2"] {
        assert!(
            err.contains(&format!("{rank}: error: stopped by SIGTERM at step")),
            "{rank} did not stop as the signal's:\n{err}"
        );
    }
    assert!(
        std::path::Path::new(out)
            .join("taylor-green_checkpoint.lbm")
            .exists()
    );
}
