//! The user-declared models of `examples/` run end to end: each example is built in this
//! test's profile and run, and exits with success only when its figures meet their tolerances:
//! `advection_diffusion` (a Gaussian transverse velocity against the exact solution) and
//! `passive_scalar` (a scalar model of the user's with an isotropic diffusivity), each on the
//! GPU as well where an adapter exists, and `natural_convection` (two models of the user's
//! coupled both ways, against Clever & Busse's Nusselt number).

use std::path::PathBuf;
use std::process::Command;

/// Builds the example in this test's profile and returns its path.
fn example(name: &str) -> PathBuf {
    let mut build = Command::new(env!("CARGO"));
    // The examples are the `lbm` package's (beside the program), not this suite's.
    build.args(["build", "--quiet", "-p", "lbm", "--example", name]);
    if !cfg!(debug_assertions) {
        build.arg("--release");
    }
    // The features this test was built with, so that the library built for the tests serves
    // the example too instead of being built again without them.
    if cfg!(feature = "mpi") {
        build.args(["--features", "mpi"]);
    }
    let status = build
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .status()
        .expect("cargo runs");
    assert!(status.success(), "building examples/{name}.rs failed");
    let exe = std::env::current_exe().expect("test binary path");
    let profile_dir = exe
        .parent()
        .and_then(|d| d.parent())
        .expect("target/<profile>");
    profile_dir.join("examples").join(name)
}

/// Runs `examples/<name>.rs` and returns its standard output; fails the test when the example
/// fails.
fn run_example(name: &str) -> String {
    let out = Command::new(example(name))
        .output()
        .expect("the example runs");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "examples/{name}.rs failed ({}):\n{stdout}\n{stderr}",
        out.status
    );
    stdout
}

#[test]
fn advection_diffusion_example_matches_the_exact_solution() {
    let stdout = run_example("advection_diffusion");
    for line in [
        "relative L2 error of v",
        "relative error of the diffusivity",
        "drift error",
    ] {
        assert!(
            stdout.contains(line),
            "the example's report lacks `{line}`:\n{stdout}"
        );
    }
}

#[test]
fn passive_scalar_example_has_the_isotropic_diffusivity() {
    let stdout = run_example("passive_scalar");
    assert!(
        stdout.contains("CPU, f64: relative L2") && stdout.contains("D_x/D − 1"),
        "the example's report lacks its figures:\n{stdout}"
    );
}

#[test]
fn natural_convection_example_matches_clever_and_busse() {
    let stdout = run_example("natural_convection");
    assert!(
        stdout.contains("Nu = ") && stdout.contains("Clever & Busse 1974: 2.661"),
        "the example's report lacks its figures:\n{stdout}"
    );
}
