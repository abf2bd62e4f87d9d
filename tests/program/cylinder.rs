//! The flow around a cylinder (Schäfer & Turek 1996) end to end on coarse lattices: the
//! steady drag, lift and pressure difference at Re = 20, the shedding at Re = 100, and the
//! settings it refuses before any work. The resolutions that meet the benchmark's own bounds
//! take minutes; their figures are in docs/performance.md.

use crate::cli_support::{
    devices_give_the_cpu_run, fails, gpu_available, number_after, ok, s, tmp,
};

/// The value after `label` in the line of the report that starts with it.
fn reported(out: &str, label: &str) -> f64 {
    let line = out
        .lines()
        .find(|l| l.starts_with(label))
        .unwrap_or_else(|| panic!("no `{label}` in the report:\n{out}"));
    number_after(line, label)
}

/// Each quantity of the coarse 2D-1's report within a few per cent of the middle of Schäfer &
/// Turek's bounds (5.58, 0.0107, 0.1174 Pa): 2 % for the drag, 20 % for the lift, 6 % for the
/// pressure difference.
fn near_the_benchmark(out: &str) {
    for (label, reference, tolerance) in [
        ("c_D = ", 5.58, 0.02),
        ("c_L = ", 0.0107, 0.2),
        ("Δp = ", 0.1174, 0.06),
    ] {
        let value = reported(out, label);
        assert!(
            (value / reference - 1.0).abs() < tolerance,
            "{label}{value} against {reference}:\n{out}"
        );
    }
}

/// 2D-1 with 10 sites across the cylinder (221 × 41): each quantity within a few per cent of
/// the middle of Schäfer & Turek's bounds (5.58, 0.0107, 0.1174 Pa; the coarse grid's own
/// errors: +0.8 %, +12 %, −2.7 % when written), and the coefficients in the diagnostics.
#[test]
fn the_cylinder_at_re_20_reports_its_drag_lift_and_pressure_difference() {
    let d = tmp();
    let out = ok(&["run", "cylinder", "--diameter", "10", "--out", s(d.path())]);
    near_the_benchmark(&out);
    let csv = std::fs::read_to_string(d.path().join("cylinder_diagnostics.csv")).unwrap();
    let header = csv.lines().next().unwrap_or_default();
    assert!(header.ends_with(",c_D,c_L,dp"), "{header}");
}

/// 2D-2: at Re = 100 the cylinder sheds vortices; over the second half of 8 s the report gives
/// the extremes of the coefficients and the Strouhal number. With 20 sites across the cylinder
/// (τ = 0.54) and the extrapolated outflow, St is within 5 % of the benchmark's 0.3, the
/// largest lift within 10 % of its 1.0 and the largest drag within 2 % of its 3.23 (measured
/// +1.0 %; with the Zou–He pressure outflow, whose echoes of the shedding's pressure waves
/// reach the cylinder, +8.3 %).
#[test]
fn the_cylinder_at_re_100_sheds_vortices_at_the_strouhal_number() {
    let d = tmp();
    let out = ok(&[
        "run",
        "cylinder",
        "--re",
        "100",
        "--diameter",
        "20",
        "--velocity",
        "0.1",
        "--outflow",
        "extrapolated",
        "--images",
        "",
        "--out",
        s(d.path()),
    ]);
    let st = reported(&out, "St = ");
    assert!((st / 0.3 - 1.0).abs() < 0.05, "St = {st}:\n{out}");
    let max_cl = reported(&out, "max c_L = ");
    assert!((max_cl - 1.0).abs() < 0.1, "max c_L = {max_cl}:\n{out}");
    let max_cd = reported(&out, "max c_D = ");
    assert!(
        (max_cd / 3.23 - 1.0).abs() < 0.02,
        "max c_D = {max_cd}:\n{out}"
    );
}

/// 3D-1Z, a few hundred steps of the coarsest lattice (D = 10, 251 × 41 × 41): the report and
/// the diagnostics carry the coefficients. (Run to its end, 30 s of flow, the default lattice
/// gives c_D, c_L and Δp within Schäfer & Turek's bounds in about five minutes: the figures are
/// in docs/performance.md.)
#[test]
fn the_cylinder_in_3d_reports_its_coefficients() {
    let d = tmp();
    let out = ok(&[
        "run",
        "cylinder-3d",
        "--steps",
        "200",
        "--images",
        "",
        "--out",
        s(d.path()),
    ]);
    for label in ["c_D = ", "c_L = ", "Δp = "] {
        assert!(reported(&out, label).is_finite(), "{label}:\n{out}");
    }
    assert!(
        out.contains("cylinder-3d at Re = 20 after 200 steps"),
        "{out}"
    );
    let csv = std::fs::read_to_string(d.path().join("cylinder-3d_diagnostics.csv")).unwrap();
    assert!(
        csv.lines()
            .next()
            .unwrap_or_default()
            .ends_with(",c_D,c_L,dp")
    );
}

/// What the case cannot run is refused before any work, by key, with what to do, and leaves
/// no output directory behind.
#[test]
fn the_cylinders_bad_settings_are_refused_before_any_work() {
    for (args, needles) in [
        (&["--lx", "300"][..], &["lx", "give --diameter instead"][..]),
        (&["--diameter", "15"], &["diameter", "a multiple of 10"]),
        (&["--re", "2000"], &["re", "unstable", "raise --diameter"]),
        (&["--velocity", "0.5"], &["velocity", "(0, 0.2]"]),
        (&["--spin", "10"], &["spin", "at most 0.2", "lower --spin"]),
    ] {
        let d = tmp();
        let out = d.path().join("out");
        let mut all = vec!["run", "cylinder", "--out", s(&out)];
        all.extend(args);
        fails(&all, needles);
        assert!(!out.exists(), "{args:?}: an output directory was left");
    }
}

/// `--spin α` turns the cylinder, its surface at α times the mean inflow (the Magnus effect):
/// on the coarse 2D-1 a counterclockwise turn (α = 1) pushes it down with a lift hundreds of
/// times the resting one (c_L = −4.64; Kutta–Joukowski's −2π in an unbounded ideal flow), and
/// the opposite turn is its mirror image: the lifts sum to twice the resting lift, the drags
/// agree to the small asymmetry of the cylinder's place.
#[test]
fn a_turning_cylinder_feels_the_magnus_lift() {
    let coefficients = |spin: &str| {
        let d = tmp();
        let spin = format!("--spin={spin}");
        let out = ok(&[
            "run",
            "cylinder",
            "--diameter",
            "10",
            &spin,
            "--out",
            s(d.path()),
        ]);
        (number_after(&out, "c_D = "), number_after(&out, "c_L = "))
    };
    let (rest, up, down) = (coefficients("0"), coefficients("-1"), coefficients("1"));
    assert!(down.1 < -3.0 && up.1 > 3.0, "lifts {down:?} {up:?}");
    assert!(
        (down.1 + up.1 - 2.0 * rest.1).abs() < 1e-2 * up.1,
        "the lifts of opposite turns: {down:?} {up:?}, at rest {rest:?}"
    );
    assert!((down.0 / up.0 - 1.0).abs() < 0.02, "drags {down:?} {up:?}");
}

/// `--walls quadratic` bounces the cylinder's links back by quadratic interpolation: the
/// coarse 2D-1's drag, lift and pressure difference stay within the tolerances of the linear
/// walls' test above; split between host and device it is refused before any work, with what
/// to do.
#[test]
fn the_cylinder_takes_quadratic_walls_on_one_device_and_the_split_refuses_them() {
    let d = tmp();
    let args = [
        "run",
        "cylinder",
        "--diameter",
        "10",
        "--walls",
        "quadratic",
    ];
    let out = ok(&[&args[..], &["--out", s(d.path())]].concat());
    near_the_benchmark(&out);
    if gpu_available() {
        let out = d.path().join("split");
        let split = [
            "--backend",
            "hetero",
            "--host-columns",
            "18",
            "--out",
            s(&out),
        ];
        fails(
            &[&args[..], &split[..]].concat(),
            &["Interpolation::Quadratic", "--walls linear"],
        );
        assert!(!out.exists(), "an output directory was left");
    }
}

/// The cylinder's curved walls, linear and quadratic, and its extrapolated outflow run in
/// place on the CPU: the diagnostics (drag, lift, pressure difference, all read by momentum
/// exchange) are those of the two-copy scheme, to the bit.
#[test]
fn the_cylinder_runs_in_place_as_with_two_copies() {
    let d = tmp();
    let run = |scheme: &str, extra: &[&str]| {
        let out = d.path().join(format!("{scheme}{}", extra.len()));
        let args = [
            "run",
            "cylinder",
            "--diameter",
            "10",
            "--steps",
            "600",
            "--diagnostics-every",
            "100",
            "--images",
            "",
            "--scheme",
            scheme,
            "--out",
            s(&out),
        ];
        ok(&[&args[..], extra].concat());
        std::fs::read_to_string(out.join("cylinder_diagnostics.csv")).unwrap()
    };
    for extra in [
        &[][..],
        &["--walls", "quadratic", "--outflow", "extrapolated"],
    ] {
        let two = run("two-copy", extra);
        assert_eq!(two.lines().count(), 8, "{two}");
        assert_eq!(run("in-place", extra), two, "{extra:?}");
    }
}

/// The cylinder on the GPU and split between host and device (the cut through the cylinder)
/// gives the CPU's drag, lift and pressure difference and fields.
#[test]
fn the_cylinder_runs_on_the_gpu_and_the_split_as_on_the_cpu() {
    let args = [
        "run",
        "cylinder",
        "--diameter",
        "10",
        "--steps",
        "200",
        "--diagnostics-every",
        "100",
        "--output-every",
        "200",
        "--images",
        "",
    ];
    devices_give_the_cpu_run(&args, "cylinder", "cylinder_00000200.pvti");
}
