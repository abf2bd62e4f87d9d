//! Finite-difference schemes declared with `fd_scheme!` and run on [`FdGrid`]: the walls'
//! rules and the integrators against exact solutions, the observed order of the operators the
//! macro proved, composed operators, the refusals of bad grids, and the seed's
//! artificial-compressibility cavity against Ghia et al. (1982) and itself over three grids.

use std::f64::consts::PI;

use lbm::cavity::ghia;
use lbm::fd::{FdError, FdGrid, FdLayout, FdScheme, Rule, Side};
use lbm::fd_cavity::FdCavity;
use lbm::fd_scheme;
use lbm::models::ArtificialCompressibility2;

fd_scheme! {
    /// The heat equation with the second-order Laplacian, forward Euler.
    pub scheme Heat2 {
        dim = 2;
        fields { T }
        params { alpha: real }
        operators { lap = laplacian(order = 2, stencil = [1, -2, 1]); }
        rates { T = alpha * lap(T); }
    }
}

fd_scheme! {
    /// Advection along x by the second-order central difference, in the integrator given.
    pub scheme AdvectEuler {
        dim = 2;
        fields { c }
        params { a: real }
        operators { d = derivative(1, order = 2, stencil = [-1/2, 0, 1/2]); }
        rates { c = -a * d(c, x); }
        integrator = euler;
    }
}

fd_scheme! {
    /// As [`AdvectEuler`], by the low-storage third-order Runge–Kutta scheme.
    pub scheme AdvectRk3 {
        dim = 2;
        fields { c }
        params { a: real }
        operators { d = derivative(1, order = 2, stencil = [-1/2, 0, 1/2]); }
        rates { c = -a * d(c, x); }
        integrator = rk3;
    }
}

fd_scheme! {
    /// A composed operator: the rate of `q` is the mixed derivative ∂²f/∂x∂y, one-sided.
    pub scheme Mixed {
        dim = 2;
        fields { f, q }
        params { }
        operators {
            d = derivative(1, order = 2, stencil = [-1/2, 0, 1/2]);
            forward = derivative(1, order = 2, stencil = [-3/2, 2, -1/2], from = 0);
        }
        rates { f = 0; q = d(forward(f, y), x); }
    }
}

fd_scheme! {
    /// The heat equation in 3-D, second-order Laplacian.
    pub scheme Heat3 {
        dim = 3;
        fields { T }
        params { alpha: real }
        operators { lap = laplacian(order = 2, stencil = [1, -2, 1]); }
        rates { T = alpha * lap(T); }
    }
}

/// Max error of `T = e^{−π²αt} profile(πx)` on `n` nodes across [0, 1] (walls by `rule`),
/// periodic along y, at t = 0.05.
fn wall_error(n: usize, rule: Rule, profile: fn(f64) -> f64) -> f64 {
    let alpha = 1.0;
    let h = 1.0 / (n - 1) as f64;
    let wall = Side::Wall(vec![rule]);
    let sides = vec![wall.clone(), wall, Side::Periodic, Side::Periodic];
    let mut g: FdGrid<Heat2, f64> =
        FdGrid::new([n, 5, 1], h, Heat2Params { alpha }, sides).unwrap();
    g.set(0, |x| profile(PI * x[0]));
    let t_end = 0.05;
    let steps = (t_end / (0.2 * h * h)).ceil() as u64;
    g.advance(steps, t_end / steps as f64).unwrap();
    let decay = (-PI * PI * alpha * t_end).exp();
    (0..n)
        .map(|i| (g.value(0, [i, 2, 0]) - decay * profile(PI * i as f64 * h)).abs())
        .fold(0.0, f64::max)
}

#[test]
fn dirichlet_walls_decay_a_sine_at_second_order() {
    let (e1, e2) = (
        wall_error(17, Rule::Value(0.0), f64::sin),
        wall_error(33, Rule::Value(0.0), f64::sin),
    );
    let order = (e1 / e2).log2();
    assert!(e2 < 2e-3, "error {e2}");
    assert!(
        (order - 2.0).abs() < 0.2,
        "observed order {order} ({e1}, {e2})"
    );
}

#[test]
fn zero_gradient_walls_decay_a_cosine_at_second_order() {
    let (e1, e2) = (
        wall_error(17, Rule::ZeroGradient, f64::cos),
        wall_error(33, Rule::ZeroGradient, f64::cos),
    );
    let order = (e1 / e2).log2();
    assert!(e2 < 5e-3, "error {e2}");
    assert!(order > 1.8, "observed order {order} ({e1}, {e2})");
}

/// A sine advected once around a periodic square of `n` nodes at Courant number 0.5.
fn advect<S: FdScheme<Params = P>, P>(n: usize, params: P) -> Result<f64, FdError> {
    let h = 1.0 / n as f64;
    let mut g: FdGrid<S, f64> = FdGrid::new([n, n, 1], h, params, vec![Side::Periodic; 4])?;
    g.set(0, |x| (2.0 * PI * x[0]).sin());
    let steps = 2 * n as u64;
    g.advance(steps, 1.0 / steps as f64)?;
    Ok((0..n)
        .map(|i| (g.value(0, [i, 0, 0]) - (2.0 * PI * i as f64 * h).sin()).abs())
        .fold(0.0, f64::max))
}

#[test]
fn central_advection_is_stable_with_rk3_and_diverges_with_forward_euler() {
    let e32 = advect::<AdvectRk3, _>(32, AdvectRk3Params { a: 1.0 }).unwrap();
    let e64 = advect::<AdvectRk3, _>(64, AdvectRk3Params { a: 1.0 }).unwrap();
    let order = (e32 / e64).log2();
    assert!(
        e64 < 0.02 && (order - 2.0).abs() < 0.3,
        "RK3: errors {e32}, {e64}"
    );
    // Forward Euler amplifies every mode of central advection: after enough periods the run
    // diverges, and says so with the step and the node.
    let h = 1.0 / 32.0;
    let mut g: FdGrid<AdvectEuler, f64> = FdGrid::new(
        [32, 32, 1],
        h,
        AdvectEulerParams { a: 1.0 },
        vec![Side::Periodic; 4],
    )
    .unwrap();
    g.set(0, |x| {
        (2.0 * PI * x[0]).sin() + 1e-3 * (2.0 * PI * 15.0 * x[0]).cos()
    });
    let err = g.advance(200_000, 0.5 * h).unwrap_err();
    let msg = err.to_string();
    assert!(
        matches!(err, FdError::Diverged { .. }) && msg.contains("reduce the time step"),
        "{msg}"
    );
}

#[test]
fn composed_operators_take_the_mixed_derivative_at_second_order() {
    let max_error = |n: usize| {
        let h = 1.0 / n as f64;
        let sides = vec![Side::Periodic; 4];
        let mut g: FdGrid<Mixed, f64> = FdGrid::new([n, n, 1], h, MixedParams {}, sides).unwrap();
        g.set(0, |x| (2.0 * PI * x[0]).sin() * (2.0 * PI * x[1]).sin());
        // max |R_q| against max |∂²f/∂x∂y| = 4π² (the nodes hit the extremum).
        (g.max_rates()[1] - 4.0 * PI * PI).abs()
    };
    let (e1, e2) = (max_error(32), max_error(64));
    assert!(e2 < 0.2 && (e1 / e2).log2() > 1.8, "errors {e1}, {e2}");
}

#[test]
fn single_and_double_precision_agree() {
    let c = FdCavity::new(17, 100.0);
    let (mut a, mut b) = (c.grid::<f64>().unwrap(), c.grid::<f32>().unwrap());
    a.advance(500, c.time_step()).unwrap();
    b.advance(500, c.time_step()).unwrap();
    for u in 0..3 {
        let (x, y) = (a.field(u), b.field(u));
        let worst = x
            .iter()
            .zip(&y)
            .map(|(p, q)| (p - q).abs())
            .fold(0.0, f64::max);
        assert!(worst < 1e-4, "unknown {u}: f32 and f64 differ by {worst}");
    }
}

#[test]
fn bad_grids_are_refused_before_any_work() {
    let p = Heat2Params { alpha: 1.0 };
    let per = || vec![Side::Periodic; 4];
    let msg =
        |r: Result<FdGrid<Heat2, f64>, FdError>| r.err().map(|e| e.to_string()).unwrap_or_default();
    assert!(msg(FdGrid::new([2, 8, 1], 0.1, p, per())).contains("too few"));
    assert!(msg(FdGrid::new([8, 8, 2], 0.1, p, per())).contains("2-D scheme"));
    assert!(msg(FdGrid::new([8, 8, 1], 0.0, p, per())).contains("spacing"));
    assert!(
        msg(FdGrid::new(
            [8, 8, 1],
            0.1,
            Heat2Params { alpha: f64::NAN },
            per()
        ))
        .contains("alpha")
    );
    assert!(msg(FdGrid::new([8, 8, 1], 0.1, p, vec![Side::Periodic; 2])).contains("give 4 sides"));
    let mixed = vec![
        Side::Periodic,
        Side::Wall(vec![Rule::ZeroGradient]),
        Side::Periodic,
        Side::Periodic,
    ];
    assert!(msg(FdGrid::new([8, 8, 1], 0.1, p, mixed)).contains("both periodic"));
    let short = Side::Wall(vec![]);
    let walls = vec![short.clone(), short, Side::Periodic, Side::Periodic];
    assert!(msg(FdGrid::new([8, 8, 1], 0.1, p, walls)).contains("one rule each"));
    let inf = Side::Wall(vec![Rule::Value(f64::INFINITY)]);
    assert!(
        msg(FdGrid::new(
            [8, 8, 1],
            0.1,
            p,
            vec![inf.clone(), inf, Side::Periodic, Side::Periodic]
        ))
        .contains("not finite")
    );
    let huge = FdGrid::<Heat2, f64>::new([1 << 20, 1 << 20, 1], 0.1, p, per());
    assert!(
        msg(huge).contains("available"),
        "a grid larger than the memory is refused"
    );
    let mut g = FdGrid::<Heat2, f64>::new([8, 8, 1], 0.1, p, per()).unwrap();
    assert!(
        g.advance(1, -1.0)
            .unwrap_err()
            .to_string()
            .contains("time step")
    );
}

#[test]
fn the_seeds_scheme_reads_nineteen_values_per_node() {
    // The thesis's count: a 9-point cross for the pressure's fourth derivatives, 5 points for
    // each velocity component; two square roots and a handful of divisions.
    assert_eq!(ArtificialCompressibility2::LOADS.len(), 19);
    assert_eq!(ArtificialCompressibility2::REACH, 2);
    assert_eq!(ArtificialCompressibility2::UNKNOWNS, ["p", "ux", "uy"]);
    assert!(ArtificialCompressibility2::WGSL.contains("fn rates("));
}

/// The cavity at Re = 100 on 33² nodes, to steady state: within 0.03 of Ghia's points.
#[test]
fn the_cavity_at_re_100_matches_ghia() {
    let c = FdCavity::new(33, 100.0);
    let mut g = c.grid::<f64>().unwrap();
    c.run_to_steady(&mut g, 1e-7, 500, 100_000).unwrap();
    assert!(g.max_rates()[1..].iter().all(|&r| r < 1e-7), "not steady");
    let d = c.deviation(&mut g, &ghia(100).unwrap()).unwrap().unwrap();
    assert!(d.max() < 0.03, "{d:?}");
}

/// Second order: the centre line's differences between 17², 33² and 65² nodes (at the nodes
/// the grids share) fall by four per halving of h.
#[test]
fn the_cavity_converges_at_second_order() {
    let line = |n: usize| {
        let c = FdCavity::new(n, 100.0);
        let mut g = c.grid::<f64>().unwrap();
        c.run_to_steady(&mut g, 1e-8, 500, 400_000).unwrap();
        c.centre_lines(&mut g).unwrap().unwrap().0
    };
    let (u17, u33, u65) = (line(17), line(33), line(65));
    let diff = |a: &[f64], b: &[f64]| {
        (0..a.len())
            .map(|i| (a[i] - b[2 * i]).abs())
            .fold(0.0, f64::max)
    };
    let (e1, e2) = (diff(&u17, &u33), diff(&u33, &u65));
    let order = (e1 / e2).log2();
    assert!(
        (order - 2.0).abs() < 0.4,
        "observed order {order} ({e1}, {e2})"
    );
}

/// In 3-D: `T = e^{−3·(2π)²αt} sin 2πx sin 2πy sin 2πz`, periodic along x and y, Dirichlet
/// walls along z (the nodes of z = 0 and z = 1 on them, where the mode vanishes), at second
/// order over 16 and 32 nodes a side (lanes along x, rows within z planes, walls along z).
#[test]
fn a_3d_mode_decays_at_second_order() {
    let error = |n: usize| {
        let h = 1.0 / n as f64;
        let wall = Side::Wall(vec![Rule::Value(0.0)]);
        let sides = vec![
            Side::Periodic,
            Side::Periodic,
            Side::Periodic,
            Side::Periodic,
            wall.clone(),
            wall,
        ];
        let k = 2.0 * PI;
        let mode = |x: [f64; 3]| (k * x[0]).sin() * (k * x[1]).sin() * (k * x[2]).sin();
        let mut g: FdGrid<Heat3, f64> =
            FdGrid::new([n, n, n + 1], h, Heat3Params { alpha: 1.0 }, sides).unwrap();
        g.set(0, mode);
        let t_end = 0.01;
        let steps = (t_end / (0.1 * h * h)).ceil() as u64;
        g.advance(steps, t_end / steps as f64).unwrap();
        let decay = (-3.0 * k * k * t_end).exp();
        let mut worst: f64 = 0.0;
        for z in 0..=n {
            for y in 0..n {
                for x in 0..n {
                    let p = [x as f64 * h, y as f64 * h, z as f64 * h];
                    worst = worst.max((g.value(0, [x, y, z]) - decay * mode(p)).abs());
                }
            }
        }
        worst
    };
    let (e1, e2) = (error(16), error(32));
    let order = (e1 / e2).log2();
    assert!(
        e2 < 0.01 && (order - 2.0).abs() < 0.3,
        "errors {e1}, {e2}, order {order}"
    );
}

/// A run stopped at a checkpoint and resumed in a new grid computes the uninterrupted run's
/// very operations: the same bits, steps and time, for forward Euler (the cavity, walls
/// extrapolating the pressure) and the three-register Runge–Kutta scheme (periodic). A
/// checkpoint of another run, or a damaged one, is refused and changes nothing.
#[test]
fn a_resumed_run_is_bitwise_the_uninterrupted_one() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.lbm");
    let c = FdCavity::new(21, 400.0);
    let dt = c.time_step();
    let mut whole = c.grid::<f64>().unwrap();
    whole.advance(300, dt).unwrap();
    whole.checkpoint(&path).unwrap();
    let then = whole.time();
    whole.advance(200, dt).unwrap();
    let mut resumed = c.grid::<f64>().unwrap();
    resumed.resume(&path).unwrap();
    assert_eq!((resumed.steps(), resumed.time()), (300, then));
    resumed.advance(200, dt).unwrap();
    assert_eq!(
        (resumed.steps(), resumed.time()),
        (whole.steps(), whole.time())
    );
    for u in 0..3 {
        assert!(resumed.field(u) == whole.field(u), "unknown {u}");
    }

    let sides = vec![Side::Periodic; 4];
    let p = AdvectRk3Params { a: 1.0 };
    let rk = |path: Option<&std::path::Path>| {
        let mut g =
            FdGrid::<AdvectRk3, f64>::new([24, 8, 1], 1.0 / 24.0, p, sides.clone()).unwrap();
        match path {
            Some(path) => g.resume(path).unwrap(),
            None => g.set(0, |x| (2.0 * PI * x[0]).sin() + (2.0 * PI * x[1]).cos()),
        }
        g
    };
    let rk_path = dir.path().join("rk.lbm");
    let mut whole = rk(None);
    whole.advance(7, 0.01).unwrap();
    whole.checkpoint(&rk_path).unwrap();
    whole.advance(9, 0.01).unwrap();
    let mut resumed = rk(Some(&rk_path));
    resumed.advance(9, 0.01).unwrap();
    assert!(resumed.field(0) == whole.field(0));
    assert_eq!(resumed.time(), whole.time());

    // Refusals, each before anything changes.
    let refused = |e: FdError, what: &str| {
        let msg = e.to_string();
        assert!(msg.contains(what), "expected `{what}` in: {msg}");
    };
    let mut other = c.grid::<f32>().unwrap();
    refused(
        other.resume(&path).unwrap_err(),
        "computed in f64, this run computes in f32",
    );
    let mut other = FdCavity::new(21, 100.0).grid::<f64>().unwrap();
    refused(
        other.resume(&path).unwrap_err(),
        "its parameter nu is 0.0025",
    );
    let mut other = FdCavity::new(25, 400.0).grid::<f64>().unwrap();
    refused(other.resume(&path).unwrap_err(), "its grid is [21, 21, 1]");
    let mut other = rk(None);
    refused(
        other.resume(&path).unwrap_err(),
        "of the scheme ArtificialCompressibility2",
    );
    assert_eq!(other.steps(), 0);
    assert!(
        other.field(0) == rk(None).field(0),
        "a refused resume changes nothing"
    );
    let walls = Side::Wall(vec![Rule::Value(0.0)]);
    let mut other = FdGrid::<AdvectRk3, f64>::new(
        [24, 8, 1],
        1.0 / 24.0,
        p,
        vec![walls.clone(), walls, Side::Periodic, Side::Periodic],
    )
    .unwrap();
    refused(
        other.resume(&rk_path).unwrap_err(),
        "its sides are [Periodic",
    );

    // A checkpoint is its manifest and a shard per block: a damaged shard, a missing one and
    // a manifest that is not one are refused.
    let shard = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().contains("state.lbm."))
        .expect("the shard of the single block");
    let bytes = std::fs::read(&shard).unwrap();
    let mut g = c.grid::<f64>().unwrap();
    std::fs::write(&shard, &bytes[..bytes.len() - 8]).unwrap();
    refused(g.resume(&path).unwrap_err(), "truncated");
    let mut flipped = bytes.clone();
    *flipped.last_mut().unwrap() ^= 1;
    std::fs::write(&shard, &flipped).unwrap();
    refused(g.resume(&path).unwrap_err(), "CRC-32");
    std::fs::remove_file(&shard).unwrap();
    refused(g.resume(&path).unwrap_err(), "incomplete");
    let damaged = dir.path().join("damaged.lbm");
    std::fs::write(&damaged, "not a checkpoint\n").unwrap();
    refused(g.resume(&damaged).unwrap_err(), "LBM-CHECKPOINT");
    refused(g.resume(dir.path()).unwrap_err(), "not a regular file");
    refused(
        g.resume(&dir.path().join("missing")).unwrap_err(),
        "missing",
    );
    assert_eq!(g.steps(), 0);
    // A checkpoint cannot be written where no directory is.
    refused(
        g.checkpoint(&dir.path().join("no/such/dir/state.lbm"))
            .unwrap_err(),
        "no/such/dir",
    );
}

/// The three layouts of the unknowns (SoA, AoS, clusters of 8 nodes along x) compute the same
/// bits: the cavity (forward Euler, walls of every kind), the Runge–Kutta advection (its
/// register in the layout too, periodic), and the 3-D heat grid, against SoA; and a checkpoint
/// moves between layouts.
#[test]
fn every_layout_gives_the_same_bits() {
    let layouts = [FdLayout::Aos, FdLayout::Clustered];
    let c = FdCavity::new(23, 100.0);
    let mut soa = c.grid::<f64>().unwrap();
    soa.advance(300, c.time_step()).unwrap();
    for layout in layouts {
        let mut g = c.grid::<f64>().unwrap().with_layout(layout);
        assert_eq!(g.layout(), layout);
        g.advance(300, c.time_step()).unwrap();
        for u in 0..3 {
            assert!(g.field(u) == soa.field(u), "{layout:?}: unknown {u}");
        }
        assert!(g.max_rates() == soa.max_rates(), "{layout:?}");
    }

    let p = AdvectRk3Params { a: 1.0 };
    let rk = |layout: FdLayout| {
        let mut g =
            FdGrid::<AdvectRk3, f32>::new([21, 9, 1], 1.0 / 21.0, p, vec![Side::Periodic; 4])
                .unwrap()
                .with_layout(layout);
        g.set(0, |x| (2.0 * PI * x[0]).sin() * (2.0 * PI * x[1]).cos());
        g.advance(40, 0.01).unwrap();
        g.field(0)
    };
    let soa = rk(FdLayout::Soa);
    for layout in layouts {
        assert!(rk(layout) == soa, "rk3 {layout:?}");
    }

    let heat = |layout: FdLayout| {
        let walls = Side::Wall(vec![Rule::ZeroGradient]);
        let sides = vec![
            Side::Periodic,
            Side::Periodic,
            walls.clone(),
            Side::Wall(vec![Rule::Value(1.0)]),
            walls.clone(),
            walls,
        ];
        let mut g = FdGrid::<Heat3, f64>::new([10, 7, 6], 0.1, Heat3Params { alpha: 1.0 }, sides)
            .unwrap()
            .with_layout(layout);
        g.set(0, |x| x[0] * x[1] + x[2]);
        g.advance(50, 1e-3).unwrap();
        g.field(0)
    };
    let soa = heat(FdLayout::Soa);
    for layout in layouts {
        assert!(heat(layout) == soa, "3-D heat {layout:?}");
    }

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("aos.lbm");
    let mut aos = c.grid::<f64>().unwrap().with_layout(FdLayout::Aos);
    aos.advance(100, c.time_step()).unwrap();
    aos.checkpoint(&path).unwrap();
    let mut clustered = c.grid::<f64>().unwrap().with_layout(FdLayout::Clustered);
    clustered.resume(&path).unwrap();
    aos.advance(100, c.time_step()).unwrap();
    clustered.advance(100, c.time_step()).unwrap();
    assert!(
        aos.field(0) == clustered.field(0),
        "resumed in another layout"
    );
}
