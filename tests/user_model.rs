//! The user-declared model of `examples/advection_diffusion.rs` runs end to end: the example is
//! built in this test's profile and run; it exits with success only when the advected, diffusing
//! Gaussian matches the exact solution, the measured diffusivity the lattice's, and (where a GPU
//! adapter exists) the GPU run the CPU one.

use std::path::PathBuf;
use std::process::Command;

/// Builds the example in this test's profile and returns its path.
fn example(name: &str) -> PathBuf {
    let mut build = Command::new(env!("CARGO"));
    build.args(["build", "--quiet", "--example", name]);
    if !cfg!(debug_assertions) {
        build.arg("--release");
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

#[test]
fn advection_diffusion_example_matches_the_exact_solution() {
    let out = Command::new(example("advection_diffusion"))
        .output()
        .expect("the example runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "examples/advection_diffusion.rs failed ({}):\n{stdout}\n{stderr}",
        out.status
    );
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
