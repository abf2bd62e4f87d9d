//! The 3-D cases of `lbm run` besides Taylor–Green: the force-driven square duct against its
//! series solution (relative L2 below 10⁻³ at 32 × 32 sites, second-order convergence), the
//! lid-driven cube (steady state, the centre-line profiles written as CSV), and the porous
//! medium of capillaries against the capillaric model's permeability.

use crate::cli_support;

use cli_support::{fails, number_after, ok, s, tmp};

/// The relative L2 distance from the series solution of the duct with `n × n` sites.
fn duct_error(n: usize) -> f64 {
    let d = tmp();
    let n = n.to_string();
    let out = ok(&[
        "run",
        "duct",
        "--lx",
        "1",
        "--ly",
        &n,
        "--vtk",
        "false",
        "--images",
        "",
        "--out",
        s(d.path()),
    ]);
    assert!(out.contains("steady at step"), "{out}");
    number_after(&out, "relative L2 distance from the series")
}

#[test]
fn duct_flow_matches_the_series_solution_to_second_order() {
    let e: Vec<f64> = [16, 32, 64].into_iter().map(duct_error).collect();
    println!("duct: relative L2 at 16², 32², 64²: {e:?}");
    assert!(e[1] < 1e-3, "32 × 32: {:e}", e[1]);
    for w in e.windows(2) {
        let order = (w[0] / w[1]).log2();
        assert!((1.8..2.3).contains(&order), "order {order} from {e:?}");
    }
}

#[test]
fn the_lid_driven_cube_writes_its_centre_lines() {
    let d = tmp();
    let out = ok(&[
        "run",
        "cavity-3d",
        "--lx",
        "16",
        "--until-steady",
        "1e-5",
        "--vtk",
        "false",
        "--out",
        s(d.path()),
    ]);
    assert!(out.contains("steady at step"), "{out}");
    assert!(out.contains("D3Q19Trt 16×16×16"), "{out}");
    assert!(out.contains("min u/U = "), "{out}");
    let step = number_after(&out, "steady at step") as u64;
    let csv = d
        .path()
        .join(format!("cavity-3d_centrelines_{step:08}.csv"));
    let text = std::fs::read_to_string(&csv).expect("the centre lines");
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("coordinate,u(y)/U,v(x)/U"));
    let rows: Vec<Vec<f64>> = lines
        .map(|l| l.split(',').map(|v| v.parse().unwrap()).collect())
        .collect();
    assert_eq!(rows.len(), 16);
    // The primary vortex: the flow follows the lid near the top and returns below; it sinks
    // where the lid drags it to (x > ½) and rises on the other side.
    let (top, middle) = (rows[15][1], rows[5][1]);
    assert!(top > 0.2 && middle < -0.05, "u(y)/U: {rows:?}");
    assert!(rows[3][2] > 0.05 && rows[12][2] < -0.05, "v(x)/U: {rows:?}");
    let min_u = number_after(&out, "min u/U =");
    assert!((-0.35..-0.1).contains(&min_u), "{out}");
    assert!(
        d.path()
            .join(format!("cavity-3d_speed_z8_{step:08}.png"))
            .exists()
    );
}

/// The permeability `k = ν⟨u_x⟩/a` of `capillaries` of `diameter` sites at `pitch`, as its
/// distance from the capillaric model `φR²/8`.
fn capillaries_error(pitch: usize, diameter: usize) -> f64 {
    let d = tmp();
    let (pitch, diameter) = (pitch.to_string(), diameter.to_string());
    let args = [
        "--lx",
        "8",
        "--ly",
        "32",
        "--pitch",
        &pitch,
        "--diameter",
        &diameter,
    ];
    let common = ["--vtk", "false", "--out", s(d.path())];
    let out = ok(&[&["run", "capillaries"][..], &args, &common].concat());
    assert!(out.contains("steady at step"), "{out}");
    // The case's picture: a section across the capillaries, x = lx/2.
    let step = number_after(&out, "steady at step") as u64;
    let section = format!("capillaries_speed_x4_{step:08}.png");
    assert!(
        d.path().join(&section).exists(),
        "{section} missing:\n{out}"
    );
    let k = number_after(&out, "permeability k = ν⟨u_x⟩/a =");
    let model = number_after(&out, "capillaric model φR²/8 =");
    k / model - 1.0
}

/// Hagen–Poiseuille flow in each capillary of a bundle gives Darcy's law the permeability
/// `k = φR²/8`: within 2 % with 4 sites a radius, 1 % with 6 (walls bounced back on the circle).
#[test]
fn capillaries_have_the_permeability_of_the_capillaric_model() {
    let (four, six) = (capillaries_error(16, 8), capillaries_error(32, 12));
    println!("capillaries: k/(φR²/8) − 1 at R = 4 and 6: {four:+.4}, {six:+.4}");
    assert!(four.abs() < 0.02, "R = 4: {four:+.4}");
    assert!(six.abs() < 0.01, "R = 6: {six:+.4}");
}

/// The capillaries' geometry and a sparse domain's blocks are checked before any work.
#[test]
fn bad_capillaries_and_blocks_are_refused() {
    fails(
        &["run", "capillaries", "--pitch", "24"],
        &["pitch", "a divisor of the box's side ly = 64"],
    );
    fails(
        &["run", "capillaries", "--diameter", "31"],
        &["diameter", "at most the pitch less 2, 30"],
    );
    fails(
        &["run", "capillaries", "--block", "16", "--cut", "2x1x1"],
        &["--block and --cut", "give one"],
    );
    fails(
        &["run", "capillaries", "--block", "16x16"],
        &["`16x16` is not a block size", "N", "AxBxC"],
    );
    if !cfg!(feature = "mpi") {
        fails(
            &["run", "capillaries", "--block", "16"],
            &["needs the runtime's `mpi` feature"],
        );
    }
    fails(
        &["run", "fd-cavity", "--block", "8"],
        &["block", "does not apply to fd-cavity"],
    );
    fails(&["run", "duct", "--pitch", "8"], &["pitch", "capillaries"]);
}

#[test]
fn bad_3d_case_settings_are_refused() {
    fails(
        &["run", "cavity-3d", "--lx", "16", "--ly", "24"],
        &["differs from lx = 16", "square"],
    );
    fails(&["run", "duct", "--lid", "0.1"], &["lid"]);
    fails(&["run", "cavity-3d", "--lid", "0.5"], &["lid", "(0, 0.3]"]);
}
