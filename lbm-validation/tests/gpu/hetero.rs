//! The host/device split (Calore et al. 2019 §5–6) matches the CPU-only run after 200 steps: D2Q9 with a
//! body force (periodic with an obstacle straddling the host/device cut, the lid-driven
//! cavity, a Zou–He channel), D2Q37 with thermal walls and gravity, and D3Q19 in a closed box
//! with a moving lid and a sphere straddling the cut, in f64 to 1e-12
//! relative, for the device alone (`M = 0`), a split, and the host alone (`2M = LX`), in two
//! layouts and both streaming schemes each; bad splits are clear errors.
//!
//! Run with `cargo test --release -p lbm-validation --test gpu hetero::`; the device is lavapipe
//! where there is no GPU (see `gpu_support`).

use crate::gpu_support;

use std::sync::Arc;

use lbm::backend::{Backend, Gpu, build};
use lbm::blocks::{Blocks, Cut};
use lbm::domain::GlobalSpec;
use lbm::gpu::GpuContext;
use lbm::group::OneProcess;
use lbm::hetero::{HeteroError, HostLayout, SplitChoice, SplitSlab, choose_columns, split_lattice};
use lbm::models::*;
use lbm::{
    Aos, Block, BoundarySpec, CAoSoa, Error, Lattice, Layout, LayoutKind, Model, Placement, Scheme,
    Soa, Solver, Wall,
};

const STEPS: u64 = 200;
const TOL: f64 = 1e-12;

/// Every population of `lat`, `[(x·LY·LZ + s)·Q + i]` (`s` the plane site).
fn populations<M: Model, L: Layout>(lat: &Lattice<M, L, f64>) -> Vec<f64> {
    let d = lat.dims();
    let mut out = Vec::with_capacity(d.sites() * M::Q);
    let mut f = vec![0.0; M::Q];
    for x in 0..d.lx {
        for y in 0..d.plane() {
            lat.populations(x, y, &mut f).unwrap();
            out.extend_from_slice(&f);
        }
    }
    out
}

/// Largest difference of population `i` relative to its own scale `max |f_i|` (the weights
/// span three decades in D2Q37), over all `i`.
fn population_diff(q: usize, a: &[f64], b: &[f64]) -> f64 {
    (0..q)
        .map(|i| {
            let (ai, bi): (Vec<f64>, Vec<f64>) = a.iter().zip(b).skip(i).step_by(q).unzip();
            let scale = bi.iter().fold(0.0f64, |m, v| m.max(v.abs()));
            gpu_support::max_rel_diff(&ai, &bi, scale)
        })
        .fold(0.0, f64::max)
}

/// Runs `spec` for [`STEPS`] steps on the CPU and split with each of `ms` in both schemes, and
/// compares every population, the density and the mass.
fn compare<M: Model, L: Layout>(spec: &GlobalSpec<M>, ms: &[usize]) {
    if let Some(ctx) = gpu_support::context() {
        compare_on::<M, L>(&ctx, spec, ms, &[Scheme::TwoCopy, Scheme::InPlace]);
    }
}

/// [`compare`] on the device `ctx`, in the schemes `schemes`.
fn compare_on<M: Model, L: Layout>(
    ctx: &Arc<GpuContext>,
    spec: &GlobalSpec<M>,
    ms: &[usize],
    schemes: &[Scheme],
) {
    let lx = spec.lx;
    let initial = || gpu_support::initial::<M>(spec.size());
    let mut cpu = spec.lattice::<L, f64>(Scheme::TwoCopy).unwrap();
    cpu.set_equilibrium(initial()).unwrap();
    cpu.run(STEPS, 0).unwrap();
    let want = populations(&cpu);
    for (&m, &scheme) in ms.iter().flat_map(|m| schemes.iter().map(move |s| (m, s))) {
        let what = format!(
            "{} × {} M = {m} {} ({:?})",
            M::NAME,
            L::NAME,
            scheme.name(),
            spec.boundaries
        );
        let mut het = split_lattice::<M, f64>(
            ctx,
            (spec.clone(), HostLayout::of::<L>()),
            scheme,
            SplitChoice::Columns(m),
        )
        .unwrap_or_else(|e| panic!("{what}: {e}"));
        // The device alone, the host alone, or the split between them.
        match (m, het.placement()) {
            (0, Placement::Device(_)) => {}
            (m, Placement::Host) if 2 * m == lx => {}
            (m, Placement::Split(_)) if m > 0 && 2 * m < lx => {}
            (_, p) => panic!("{what}: runs on {p:?}"),
        }
        het.set_equilibrium_at(&initial()).unwrap();
        for _ in 0..2 {
            het.advance(STEPS / 2)
                .and_then(|()| het.check())
                .unwrap_or_else(|e| panic!("{what}: {e}"));
        }
        assert_eq!(het.steps_done(), STEPS);
        let d = population_diff(M::Q, &het.local_populations().unwrap(), &want);
        assert!(d <= TOL, "{what}: populations differ by {d:e} (relative)");
        let rho = M::MOMENT_NAMES.iter().position(|&n| n == "rho").unwrap();
        let (g, c) = (
            het.local_moments().unwrap().swap_remove(rho),
            cpu.moment_field("rho").unwrap(),
        );
        let d = gpu_support::max_rel_diff(&g, &c, 1.0);
        assert!(d <= TOL, "{what}: rho differs by {d:e}");
        let (gm, cm) = (het.totals().unwrap().mass, cpu.mass());
        assert!(
            (gm - cm).abs() <= TOL * cm,
            "{what}: mass {gm} against {cm}"
        );
        // What momentum exchange reads at every boundary site, across the host/device cuts.
        let sites = cpu.boundaries().sites(&cpu.dims());
        let (ge, ce) = (
            het.exchanged(&sites).unwrap(),
            cpu.exchanged(&sites).unwrap(),
        );
        let scale = ce.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        let d = gpu_support::max_rel_diff(&ge, &ce, scale);
        assert!(d <= TOL, "{what}: exchanged populations differ by {d:e}");
    }
}

fn d2q9(lx: usize, ly: usize, boundaries: BoundarySpec) -> GlobalSpec<D2Q9Bgk> {
    GlobalSpec {
        lx,
        ly,
        lz: 1,
        params: D2Q9BgkParams {
            tau: 0.8,
            ax: 1e-5,
            ay: -3e-6,
        },
        boundaries,
    }
}

/// Periodic, with an obstacle across the host/device cut at `x = 4` and `x = 20` of a
/// 24-wide lattice split with `M = 4`.
fn obstacle(lx: usize, ly: usize) -> BoundarySpec {
    let solid = (0..lx * ly)
        .map(|s| {
            let (x, y) = (s / ly, s % ly);
            ((2..7).contains(&x) || (18..22).contains(&x)) && (5..9).contains(&y)
        })
        .collect();
    BoundarySpec {
        solid: Some(lbm::Obstacles::mask(ly, solid)),
        ..BoundarySpec::periodic()
    }
}

/// A channel with a Zou–He velocity inlet and pressure outlet (rules on the host's columns).
fn zou_he_channel() -> BoundarySpec {
    BoundarySpec {
        left: Some(Wall::ZouHeVelocity {
            velocity: [0.03, 0.0, 0.0],
        }),
        right: Some(Wall::ZouHePressure { density: 1.0 }),
        ..BoundarySpec::channel()
    }
}

#[test]
fn d2q9_split_matches_cpu() {
    for spec in [
        d2q9(24, 16, obstacle(24, 16)),
        d2q9(24, 16, BoundarySpec::cavity(0.05)),
        d2q9(24, 16, zou_he_channel()),
    ] {
        compare::<D2Q9Bgk, Aos>(&spec, &[0, 4, 12]);
        compare::<D2Q9Bgk, CAoSoa<8>>(&spec, &[0, 1, 7, 12]);
    }
}

/// The library's builder on one process: the GPU in two layouts and the split, each against
/// the host's lattice it builds, both schemes, and what each says it is.
#[test]
fn every_backend_the_builder_makes_matches_the_host() {
    let Some(ctx) = gpu_support::context() else {
        return;
    };
    let spec = d2q9(24, 16, obstacle(24, 16));
    let gpu = Gpu::from(ctx);
    let run = |backend: &Backend, scheme| {
        let mut lat = build::<D2Q9Bgk, CAoSoa<8>, f64>(
            Box::new(OneProcess),
            spec.clone(),
            Cut::WHOLE.into(),
            scheme,
            backend,
        )
        .unwrap();
        lat.set_equilibrium_at(&gpu_support::initial::<D2Q9Bgk>(spec.size()))
            .unwrap();
        lat.advance(STEPS).unwrap();
        let what = format!("{}, {}", lat.describe(), scheme.name());
        (what, lat.placement(), lat.local_populations().unwrap())
    };
    for scheme in [Scheme::TwoCopy, Scheme::InPlace] {
        let (_, placement, host) = run(&Backend::Host, scheme);
        assert!(matches!(placement, Placement::Host));
        for backend in [
            Backend::Device {
                gpu: gpu.clone(),
                layout: LayoutKind::Soa,
            },
            Backend::Device {
                gpu: gpu.clone(),
                layout: LayoutKind::Aos,
            },
            Backend::Split {
                gpu: gpu.clone(),
                choice: SplitChoice::Columns(4),
            },
        ] {
            let (what, placement, got) = run(&backend, scheme);
            match (&backend, placement) {
                (Backend::Device { .. }, Placement::Device(_)) => {}
                (Backend::Split { .. }, Placement::Split(_)) => {}
                _ => panic!("{what}: not the backend asked for"),
            }
            let diff = population_diff(D2Q9Bgk::Q, &got, &host);
            assert!(diff < TOL, "{what}: {diff:e}");
        }
    }
}

/// Outflow sides (`Wall::Outflow`), in both schemes: the right one on the device's columns,
/// and a top one whose links read across the host/device cut (in place, held once the halos
/// came).
#[test]
fn outflows_split_match_cpu() {
    let Some(ctx) = gpu_support::context() else {
        return;
    };
    let spec = d2q9(24, 16, gpu_support::open_box());
    let schemes = [Scheme::TwoCopy, Scheme::InPlace];
    compare_on::<D2Q9Bgk, CAoSoa<8>>(&ctx, &spec, &[1, 7, 12], &schemes);
}

/// GPU slabs of a ring (three, each on a thread), in place, with a top outflow whose links
/// read across the cuts: each slab's bulk runs while the halos travel, and the populations in
/// its halos are held once they came, before its border: every slab's populations within
/// 1e-12 of the host's whole lattice, in both schemes.
#[cfg(feature = "mpi")]
#[test]
fn gpu_slabs_hold_what_their_outflow_reads_across_the_cuts() {
    let Some(ctx) = gpu_support::context() else {
        return;
    };
    let spec = d2q9(24, 16, gpu_support::open_box());
    let initial = gpu_support::initial::<D2Q9Bgk>(spec.size());
    let gpu = Backend::Device {
        gpu: Gpu::from(ctx),
        layout: LayoutKind::Soa,
    };
    for scheme in [Scheme::TwoCopy, Scheme::InPlace] {
        let mut host = build::<D2Q9Bgk, Soa, f64>(
            Box::new(OneProcess),
            spec.clone(),
            Cut::WHOLE.into(),
            scheme,
            &Backend::Host,
        )
        .unwrap();
        host.set_equilibrium_at(&initial).unwrap();
        host.advance(STEPS + 1).unwrap();
        let whole = host.local_populations().unwrap();
        let per_col = spec.plane() * D2Q9Bgk::Q;
        let slabs = lbm::group::Threads::run(3, |t| {
            let cut = Cut::along(0, 3).into();
            let mut lat =
                build::<D2Q9Bgk, Soa, f64>(Box::new(t), spec.clone(), cut, scheme, &gpu).unwrap();
            lat.set_equilibrium_at(&initial).unwrap();
            lat.advance(STEPS + 1).unwrap();
            (lat.local_box()[0].clone(), lat.local_populations().unwrap())
        });
        for (xs, got) in slabs {
            let want = &whole[xs.start * per_col..xs.end * per_col];
            let diff = population_diff(D2Q9Bgk::Q, &got, want);
            assert!(diff < TOL, "{} slab {xs:?}: {diff:e}", scheme.name());
        }
    }
}

#[test]
fn d2q37_split_matches_cpu() {
    let spec = GlobalSpec::<D2Q37> {
        lx: 24,
        ly: 32,
        lz: 1,
        params: D2Q37Params { tau: 0.8, g: 1e-5 },
        boundaries: BoundarySpec {
            bottom: Some(Wall::Thermal { temperature: 1.02 }),
            top: Some(Wall::Thermal { temperature: 0.98 }),
            ..BoundarySpec::default()
        },
    };
    compare::<D2Q37, Soa>(&spec, &[0, 3, 5, 12]);
    compare::<D2Q37, CAoSoa<8>>(&spec, &[0, 9, 12]);
}

/// D3Q19 TRT in a closed box, the top wall moving in x and z, with a sphere of voxels
/// straddling the host/device cut of `M = 3`: slabs of planes on either side; and a duct with
/// Zou–He faces, the inlet on the host and the outlet on the device.
#[test]
fn d3q19_split_matches_cpu() {
    let spec = GlobalSpec::<D3Q19Trt> {
        lx: 12,
        ly: 16,
        lz: 5,
        params: D3Q19TrtParams {
            tau: 0.7,
            magic: 3.0 / 16.0,
            ax: 1e-5,
            ay: 0.0,
            az: -2e-5,
        },
        boundaries: BoundarySpec {
            top: Some(Wall::BounceBack {
                velocity: [0.03, 0.0, 0.02],
            }),
            solid: Some(lbm::Obstacles::voxels(|x, y, z| {
                let r = [x as f64 - 3.0, y as f64 - 8.0, z as f64 - 2.0];
                r.iter().map(|r| r * r).sum::<f64>() < 4.0
            })),
            ..BoundarySpec::cavity_3d(0.0)
        },
    };
    compare::<D3Q19Trt, CAoSoa<8>>(&spec, &[0, 3, 6]);
    compare::<D3Q19Trt, Soa>(&spec, &[2]);
    // A duct with a Zou–He velocity inlet on the host's side and a pressure outlet on the
    // device's.
    let duct = GlobalSpec {
        boundaries: BoundarySpec {
            left: Some(Wall::ZouHeVelocity {
                velocity: [0.03, 0.01, -0.01],
            }),
            right: Some(Wall::ZouHePressure { density: 1.0 }),
            ..BoundarySpec::duct()
        },
        ..spec
    };
    compare::<D3Q19Trt, CAoSoa<8>>(&duct, &[0, 5]);
}

/// The device's copy split across several storage bindings (4 KiB each here): the swap's
/// reads and writes cross binding boundaries.
#[test]
fn split_matches_cpu_across_bindings() {
    let Some(ctx) = gpu_support::capped_context(4096) else {
        return;
    };
    let schemes = [Scheme::TwoCopy, Scheme::InPlace];
    compare_on::<D2Q9Bgk, Soa>(&ctx, &d2q9(24, 16, obstacle(24, 16)), &[0, 4], &schemes);
}

/// A CPU lattice's populations set on the split and read back are the same, whatever the
/// split, with the step count. (What the device alone does when it tunes its workgroup size:
/// `limits::workgroup_tuning_changes_no_result`.)
#[test]
fn populations_round_trip_through_every_split() {
    let Some(ctx) = gpu_support::context() else {
        return;
    };
    let spec = d2q9(24, 16, obstacle(24, 16));
    let mut cpu = spec.lattice::<Soa, f64>(Scheme::TwoCopy).unwrap();
    cpu.set_equilibrium(gpu_support::initial::<D2Q9Bgk>([24, 16, 1]))
        .unwrap();
    cpu.run(3, 0).unwrap();
    let want = populations(&cpu);
    for choice in [
        SplitChoice::Columns(0),
        SplitChoice::HostShare(0.5),
        SplitChoice::HostShare(1.0),
    ] {
        let mut het = split_lattice::<D2Q9Bgk, f64>(
            &ctx,
            (spec.clone(), HostLayout::of::<Soa>()),
            Scheme::TwoCopy,
            choice,
        )
        .unwrap();
        het.set_local_populations(&want).unwrap();
        het.set_steps_done(cpu.steps_done());
        assert_eq!(het.local_populations().unwrap(), want, "{choice:?}");
        assert_eq!(het.steps_done(), 3);
    }
}

#[test]
fn bad_splits_are_clear_errors() {
    let Some(ctx) = gpu_support::context() else {
        return;
    };
    let spec = GlobalSpec::<D2Q37> {
        lx: 24,
        ly: 32,
        lz: 1,
        params: D2Q37Params { tau: 0.8, g: 1e-5 },
        boundaries: BoundarySpec::periodic(),
    };
    let new = |choice, scheme| {
        split_lattice::<D2Q37, f64>(
            &ctx,
            (spec.clone(), HostLayout::of::<Aos>()),
            scheme,
            choice,
        )
        .err()
    };
    // M = 1 < H = 3: a host border cannot fill the bulk's halo.
    let e = new(SplitChoice::Columns(1), Scheme::TwoCopy).expect("M = 1 is refused");
    assert!(
        matches!(e, Error::Hetero(HeteroError::BadColumns { m: 1, .. })),
        "{e}"
    );
    assert!(e.to_string().contains("admissible M: 0, 3..=10, 12"), "{e}");
    // 2M > LX.
    let e = new(SplitChoice::Columns(13), Scheme::TwoCopy).expect("M = 13 is refused");
    assert!(e.to_string().contains("LX = 24"), "{e}");
    let e = new(SplitChoice::HostShare(1.5), Scheme::TwoCopy).expect("share 1.5 is refused");
    assert!(
        matches!(e, Error::Hetero(HeteroError::BadShare(s)) if s == 1.5),
        "{e}"
    );
    // A share rounds to the nearest admissible M: 0.05·24/2 = 0.6 → 0 (1 is inadmissible),
    // the device alone.
    let share = SplitChoice::HostShare(0.05);
    let het = split_lattice::<D2Q37, f64>(
        &ctx,
        (spec.clone(), HostLayout::of::<Aos>()),
        Scheme::TwoCopy,
        share,
    )
    .unwrap();
    assert!(matches!(het.placement(), Placement::Device(_)));
}

/// The start-up calibration picks an admissible split and the run it gives matches the CPU.
#[test]
fn auto_split_is_admissible_and_correct() {
    let Some(ctx) = gpu_support::context() else {
        return;
    };
    let spec = d2q9(32, 16, BoundarySpec::channel());
    let (m, model) = choose_columns::<D2Q9Bgk, f64>(
        &ctx,
        (&spec, HostLayout::of::<Aos>()),
        SplitChoice::Auto,
        0.0,
    )
    .unwrap();
    let model = model.expect("Auto keeps its model");
    assert!(model.t_d > 0.0 && model.t_h > 0.0, "{model:?}");
    assert_eq!(m, model.optimal_m());
    let mut cpu = spec.lattice::<Aos, f64>(Scheme::TwoCopy).unwrap();
    cpu.set_equilibrium(gpu_support::initial::<D2Q9Bgk>([32, 16, 1]))
        .unwrap();
    cpu.run(20, 0).unwrap();
    // The builder's split, tuned at start-up (its own calibration), runs as the CPU.
    let mut het = split_lattice::<D2Q9Bgk, f64>(
        &ctx,
        (spec.clone(), HostLayout::of::<Aos>()),
        Scheme::TwoCopy,
        SplitChoice::Auto,
    )
    .unwrap();
    het.set_equilibrium_at(&gpu_support::initial::<D2Q9Bgk>([32, 16, 1]))
        .unwrap();
    het.advance(20).and_then(|()| het.check()).unwrap();
    let d = population_diff(9, &het.local_populations().unwrap(), &populations(&cpu));
    assert!(d <= TOL, "{}: {d:e}", het.describe());
}

/// A block of a cut along y whose height is no multiple of the host layout's clusters (12 in
/// CAoSoA<8>: the block stores 16 lines) tunes its split on the lines it stores, as the CPU
/// and GPU blocks of such a cut run.
#[test]
fn auto_split_of_a_block_cut_along_y_tunes_on_its_stored_lines() {
    let Some(ctx) = gpu_support::context() else {
        return;
    };
    let spec = d2q9(32, 24, BoundarySpec::periodic());
    let blocks = Blocks::even([32, 24, 1], Cut([1, 2, 1]));
    let host = HostLayout::of::<CAoSoa<8>>();
    let choice = (SplitChoice::Auto, 0.0);
    let slab =
        SplitSlab::<D2Q9Bgk, f64>::new(&ctx, (&spec, host), (&blocks, 1), Scheme::TwoCopy, choice);
    let m = slab.unwrap().border_columns();
    assert!(m == 0 || (1..=16).contains(&m), "M = {m}");
}

/// A lattice too narrow to split (D2Q37, LX = 6: no M leaves both parts 3 wide) is calibrated
/// on the two ends and runs on one of them.
#[test]
fn auto_split_of_a_narrow_lattice_is_an_end() {
    let Some(ctx) = gpu_support::context() else {
        return;
    };
    let spec = GlobalSpec::<D2Q37> {
        lx: 6,
        ly: 24,
        lz: 1,
        params: D2Q37Params { tau: 0.8, g: 1e-5 },
        boundaries: BoundarySpec::periodic(),
    };
    let (m, _) = choose_columns::<D2Q37, f64>(
        &ctx,
        (&spec, HostLayout::of::<Aos>()),
        SplitChoice::Auto,
        0.0,
    )
    .unwrap();
    assert!([0, 3].contains(&m), "M = {m}");
    let het = split_lattice::<D2Q37, f64>(
        &ctx,
        (spec, HostLayout::of::<Aos>()),
        Scheme::TwoCopy,
        SplitChoice::Auto,
    )
    .unwrap();
    assert!(!matches!(het.placement(), Placement::Split(_)));
}

/// A GPU lattice's per-site fields go into its checkpoint and come back with its populations
/// on the CPU and on the split (the host's borders and the device's bulk each taking their
/// own columns' fields); the two then run alike, each site advected by its own velocity. A
/// field the split cannot take (not finite) is refused before any part changes.
#[test]
fn fields_in_a_checkpoint_move_to_the_cpu_and_to_the_split() {
    use lbm::read_checkpoint;
    let Some(ctx) = gpu_support::context() else {
        return;
    };
    let params = D2Q5AdvectionDiffusionParams {
        tau: 0.8,
        ux: 0.0,
        uy: 0.0,
    };
    let (lx, ly) = (24, 8);
    let periodic = BoundarySpec::periodic();
    let spec = GlobalSpec {
        lx,
        ly,
        lz: 1,
        params,
        boundaries: periodic.clone(),
    };
    let on_gpu = Backend::Device {
        gpu: Gpu::from(ctx.clone()),
        layout: LayoutKind::Soa,
    };
    let whole = Cut::WHOLE.into();
    let mut gpu = build::<_, Soa, f64>(
        Box::new(OneProcess),
        spec.clone(),
        whole,
        Scheme::TwoCopy,
        &on_gpu,
    )
    .unwrap();
    let ux: Vec<f64> = (0..lx * ly).map(|s| 0.01 * (s % 7) as f64).collect();
    gpu.set_local_field("ux", &ux).unwrap();
    gpu.set_equilibrium_at(&|x, y| vec![1.0 + 0.1 * ((x + 2 * y) % 5) as f64])
        .unwrap();
    gpu.advance(5).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("gpu.lbm");
    gpu.write_checkpoint(&path).unwrap();

    let c = read_checkpoint::<D2Q5AdvectionDiffusion, f64>(&path).unwrap();
    let mut cpu = c.into_lattice::<Aos>(Scheme::InPlace, &periodic).unwrap();
    assert!(cpu.field("ux").unwrap() == ux);
    assert!(cpu.field("uy").unwrap() == vec![0.0; lx * ly]);
    assert!(cpu.local_populations().unwrap() == gpu.local_populations().unwrap());

    let mut split = split_lattice::<D2Q5AdvectionDiffusion, f64>(
        &ctx,
        (spec, HostLayout::of::<Soa>()),
        Scheme::TwoCopy,
        SplitChoice::Columns(4),
    )
    .unwrap();
    let c = read_checkpoint::<D2Q5AdvectionDiffusion, f64>(&path).unwrap();
    split.restore(&c, &path).unwrap();
    assert_eq!(split.steps_done(), 5);
    let fields = split.local_fields().unwrap().expect("fields per site");
    assert!(fields[0] == ux && fields[1] == vec![0.0; lx * ly]);
    assert!(split.local_populations().unwrap() == gpu.local_populations().unwrap());

    let before = split.local_populations().unwrap();
    let mut bad = ux.clone();
    bad[lx * ly - 1] = f64::NAN;
    let e = split.set_local_field("ux", &bad).unwrap_err().to_string();
    assert!(e.contains("field `ux`") && e.contains("not finite"), "{e}");
    assert!(split.local_fields().unwrap().unwrap()[0] == ux);

    cpu.advance(40).unwrap();
    split.advance(40).unwrap();
    let (want, got) = (
        cpu.local_populations().unwrap(),
        split.local_populations().unwrap(),
    );
    assert!(before != got, "the split ran");
    let diff = gpu_support::max_rel_diff(&got, &want, 1.0);
    assert!(diff <= TOL, "split vs cpu after 40 steps: {diff:e}");
    let (mc, ms) = (cpu.local_moments().unwrap(), split.local_moments().unwrap());
    assert!(gpu_support::max_rel_diff(&ms[0], &mc[0], 1.0) <= TOL);
}
