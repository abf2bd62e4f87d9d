//! Device limits and adapter choice: populations split across several storage bindings, a
//! 2-D dispatch grid and every workgroup size the tuning tries give the same results as one
//! binding, one row and 64 threads; border columns and boxes of lines along y read and write
//! through the split; a lattice beyond the device's limits and an adapter that does not exist
//! are clear errors.

use crate::gpu_support;

use std::f64::consts::PI;
use std::sync::Arc;

use lbm::blocks::{Blocks, Cut};
use lbm::domain::{GlobalSpec, Slab};
use lbm::gpu::{AdapterChoice, GpuContext, GpuError, GpuLattice, GpuOptions, GpuSlab};
use lbm::models::{D2Q9Bgk, D2Q9BgkParams, D2Q37, D2Q37Params};
use lbm::{
    BoundarySpec, CAoSoa, CSoa, F16s, Layout, LayoutKind, Model, Real, Scheme, SlabBackend, Soa,
};

/// D2Q9 driven by a body force along x (a channel's flow).
const FORCED: D2Q9BgkParams = D2Q9BgkParams {
    tau: 0.8,
    ax: 1e-5,
    ay: 0.0,
};

/// A cap of 4 KiB per binding: a 16×16 D2Q9 f64 copy (18·16·9 values, 20 KiB) needs 6.
const CAP: u64 = 4096;

fn wave(lx: usize, ly: usize, nm: usize) -> impl Fn(usize, usize) -> Vec<f64> + Sync {
    move |x, y| {
        let (sx, sy) = (
            2.0 * PI * x as f64 / lx as f64,
            2.0 * PI * y as f64 / ly as f64,
        );
        let mut m = vec![1.0 + 0.05 * sx.sin(), 0.04 * sy.sin(), 0.03 * sx.cos(), 1.0];
        m.truncate(nm);
        m
    }
}

/// Runs 50 steps of `M × L × T` on `ctx` and returns the populations.
fn run<M: Model, L: Layout, T: Real>(
    ctx: &Arc<GpuContext>,
    size: (usize, usize),
    p: &M::Params,
    spec: &BoundarySpec,
) -> (usize, Vec<T>) {
    let mut lat = GpuLattice::<M, T>::new(
        ctx,
        L::KIND,
        size.0,
        size.1,
        p.clone(),
        Scheme::TwoCopy,
        spec,
    )
    .unwrap();
    lat.set_equilibrium(wave(size.0, size.1, M::MOMENT_NAMES.len()))
        .unwrap();
    lat.steps(50);
    (lat.bindings_per_copy(), lat.read_populations().unwrap())
}

#[test]
fn split_bindings_give_identical_results() {
    let (Some(one), Some(split)) = (gpu_support::context(), gpu_support::capped_context(CAP))
    else {
        return;
    };
    let p = FORCED;
    for spec in [BoundarySpec::periodic(), BoundarySpec::cavity(0.05)] {
        let (n1, a) = run::<D2Q9Bgk, CAoSoa<8>, f64>(&one, (16, 16), &p, &spec);
        let (n2, b) = run::<D2Q9Bgk, CAoSoa<8>, f64>(&split, (16, 16), &p, &spec);
        assert_eq!(n1, 1);
        assert!(
            n2 >= 5,
            "the 4 KiB cap should split a copy into ≥ 5 bindings, got {n2}"
        );
        assert_eq!(a, b, "{spec:?}: split bindings change the result");
    }
    let q = D2Q37Params { tau: 0.8, g: 1e-5 };
    let (_, a) = run::<D2Q37, Soa, f32>(&one, (6, 16), &q, &BoundarySpec::periodic());
    let (n2, b) = run::<D2Q37, Soa, f32>(&split, (6, 16), &q, &BoundarySpec::periodic());
    assert!(n2 > 1);
    assert_eq!(a, b, "D2Q37 f32: split bindings change the result");
}

/// With at most 3 workgroups per dimension, a 16×16 lattice (4 workgroups of 64 sites, and
/// the halo and bc kernels) runs on a 3 × 2 grid and gives the same result.
#[test]
fn two_dimensional_dispatch_grid_gives_identical_results() {
    let (Some(one), Some(grid)) = (gpu_support::context(), gpu_support::grid_capped_context(3))
    else {
        return;
    };
    let p = FORCED;
    let spec = BoundarySpec::channel();
    let (_, a) = run::<D2Q9Bgk, CSoa<8>, f32>(&one, (16, 16), &p, &spec);
    let (_, b) = run::<D2Q9Bgk, CSoa<8>, f32>(&grid, (16, 16), &p, &spec);
    assert_eq!(a, b, "the 2-D dispatch grid changes the result");
    let lat = GpuLattice::<D2Q9Bgk, f32>::new(
        &grid,
        LayoutKind::CSoa(8),
        16,
        16,
        p,
        Scheme::TwoCopy,
        &spec,
    )
    .unwrap();
    assert_eq!(lat.site_grid(), (3, 2));
}

/// The site kernels' workgroup size is tuned over the first steps, every candidate in turn,
/// and changes no result: a lattice stepped through the tuning ends bitwise where one stepped
/// a step at a time (which never tunes and keeps 64 threads) ends, in both schemes.
#[test]
fn workgroup_tuning_changes_no_result() {
    let Some(ctx) = gpu_support::context() else {
        return;
    };
    let p = FORCED;
    let spec = BoundarySpec::channel();
    let (lx, ly) = (40, 32);
    for scheme in [Scheme::TwoCopy, Scheme::InPlace] {
        let new = || {
            let mut lat = GpuLattice::<D2Q9Bgk, f32>::new(
                &ctx,
                LayoutKind::CSoa(8),
                lx,
                ly,
                p,
                scheme,
                &spec,
            )
            .unwrap();
            lat.set_equilibrium(wave(lx, ly, 3)).unwrap();
            lat
        };
        let mut tuned = new();
        assert_eq!(tuned.workgroup_candidates(), &[64, 32, 128, 256]);
        let size = tuned.tune_workgroup();
        assert!(tuned.workgroup_tuned() && tuned.workgroup_candidates().contains(&size));
        let rounds = tuned.steps_done() / 16;
        assert!(
            rounds >= 4 && tuned.steps_done() % 16 == 0,
            "{rounds} rounds"
        );
        tuned.steps(7);
        let mut plain = new();
        for _ in 0..tuned.steps_done() {
            plain.step();
        }
        assert!(!plain.workgroup_tuned());
        assert_eq!(plain.workgroup_size(), 64);
        assert_eq!(
            tuned.read_populations().unwrap(),
            plain.read_populations().unwrap(),
            "{scheme:?}: the workgroup size changes the result"
        );
    }
}

#[test]
fn border_columns_round_trip_across_bindings() {
    let Some(ctx) = gpu_support::capped_context(CAP) else {
        return;
    };
    let p = D2Q9BgkParams {
        tau: 0.8,
        ax: 0.0,
        ay: 0.0,
    };
    let mut lat = GpuLattice::<D2Q9Bgk, f64>::new(
        &ctx,
        LayoutKind::Soa,
        16,
        16,
        p,
        Scheme::TwoCopy,
        &BoundarySpec::periodic(),
    )
    .unwrap();
    lat.set_equilibrium(wave(16, 16, 3)).unwrap();
    let all = lat.read_populations().unwrap();
    // Storage column 3 holds site column x = 2 (halo 1): values [y·Q + i].
    let col = lat.read_column(3).unwrap();
    assert_eq!(col, all[2 * 16 * 9..3 * 16 * 9].to_vec());
    let new: Vec<f64> = (0..16 * 9).map(|k| 0.01 * k as f64).collect();
    lat.write_column(3, &new).unwrap();
    assert_eq!(lat.read_column(3).unwrap(), new);
    let mut f = vec![0.0; 9];
    lat.populations(2, 5, &mut f).unwrap();
    assert_eq!(f, new[5 * 9..6 * 9].to_vec());
    assert!(
        lat.read_column(18).is_err(),
        "column beyond the halo is refused"
    );
}

/// Boxes of lines along y, what a block cut along y exchanges each step
/// ([`GpuLattice::site_boxes`]; a line along y is a short run in every layout): read back,
/// they are their sites' populations in box order; written, they change those sites and no
/// other, across the bindings of a capped device and in a 2-D dispatch grid, in every layout
/// kind.
#[test]
fn boxes_of_lines_round_trip_across_bindings() {
    let (Some(capped), Some(grid)) = (
        gpu_support::capped_context(CAP),
        gpu_support::grid_capped_context(3),
    ) else {
        return;
    };
    let (n, q) = (16, D2Q9Bgk::Q);
    // Storage columns `1..17` hold the site columns `x = 0..16` (halo 1).
    let boxes = [[3..7, 0..2, 0..1], [1..17, 13..16, 0..1]];
    // The index in `read_populations`' values of each value of the boxes, in box order.
    let slots = |b: &[std::ops::Range<usize>; 3]| -> Vec<usize> {
        let ys = b[1].clone();
        (b[0].clone())
            .flat_map(|col| ys.clone().map(move |y| ((col - 1) * n + y) * q))
            .flat_map(|at| at..at + q)
            .collect()
    };
    let layouts = [
        LayoutKind::Soa,
        LayoutKind::Aos,
        LayoutKind::CSoa(4),
        LayoutKind::CAoSoa(4),
    ];
    for (ctx, layout) in [capped, grid].iter().flat_map(|c| layouts.map(|l| (c, l))) {
        let mut lat = GpuLattice::<D2Q9Bgk, f64>::new(
            ctx,
            layout,
            n,
            n,
            FORCED,
            Scheme::TwoCopy,
            &BoundarySpec::periodic(),
        )
        .unwrap();
        lat.set_equilibrium(wave(n, n, 3)).unwrap();
        lat.step();
        let all = lat.read_populations().unwrap();
        let plan = lat.site_boxes(&boxes).unwrap();
        let got = lat.read_blocks(&plan).unwrap();
        let mut want = all.clone();
        let mut new = Vec::new();
        for (b, vals) in boxes.iter().zip(&got) {
            let at = slots(b);
            let expect: Vec<f64> = at.iter().map(|&k| all[k]).collect();
            assert_eq!(vals, &expect, "{layout}: box {b:?} read back");
            let changed: Vec<f64> = vals.iter().map(|v| v + 0.25).collect();
            for (&k, &v) in at.iter().zip(&changed) {
                want[k] = v;
            }
            new.push(changed);
        }
        lat.write_blocks(&plan, &[&new[0], &new[1]]).unwrap();
        assert_eq!(
            lat.read_populations().unwrap(),
            want,
            "{layout}: the boxes written, and nothing else"
        );
    }
}

/// A block's plan of boxes read into kept vectors: stale contents replaced, memory reused.
#[test]
fn boxes_read_into_kept_vectors_reuse_their_memory() {
    let Some(ctx) = gpu_support::context() else {
        return;
    };
    let (n, boundaries) = (16, BoundarySpec::periodic());
    let mut lat = GpuLattice::<D2Q9Bgk, f64>::new(
        &ctx,
        LayoutKind::Soa,
        n,
        n,
        FORCED,
        Scheme::TwoCopy,
        &boundaries,
    )
    .unwrap();
    lat.set_equilibrium(wave(n, n, 3)).unwrap();
    lat.step();
    let plan = lat
        .site_boxes(&[[1..3, 0..n, 0..1], [5..6, 2..9, 0..1]])
        .unwrap();
    let fresh = lat.read_blocks(&plan).unwrap();
    let mut kept = vec![vec![-1.0; 4096], vec![-2.0; 3]];
    let at = kept[0].as_ptr();
    lat.read_blocks_into(&plan, &mut kept).unwrap();
    assert_eq!(
        kept, fresh,
        "the boxes' values, nothing left of the stale ones"
    );
    assert_eq!(
        kept[0].as_ptr(),
        at,
        "a vector large enough keeps its memory"
    );
}

/// Every block backend keeps its promise of `set_ghosts`: a side given no values is left as it
/// is (what a split's parts are given next to their sibling), along x and along an axis the
/// lattice is cut along, on the host and on the device in two layouts.
#[test]
fn a_ghost_side_given_no_values_is_left_as_it_is() {
    let Some(ctx) = gpu_support::context() else {
        return;
    };
    let spec = GlobalSpec::<D2Q9Bgk> {
        lx: 16,
        ly: 16,
        lz: 1,
        params: FORCED,
        boundaries: BoundarySpec::periodic(),
    };
    let blocks = Blocks::even([16, 16, 1], Cut([2, 2, 1]));
    let host = Slab::<D2Q9Bgk, Soa, f64>::new(&spec, &blocks, 0, Scheme::TwoCopy).unwrap();
    let device = |layout| GpuSlab::new(&ctx, layout, &spec, &blocks, 0, Scheme::TwoCopy).unwrap();
    let mut backends: Vec<Box<dyn SlabBackend<Model = D2Q9Bgk, Real = f64>>> = vec![
        Box::new(host),
        Box::new(device(LayoutKind::Soa)),
        Box::new(device(LayoutKind::CAoSoa(4))),
    ];
    for b in &mut backends {
        for axis in [0, 1] {
            let mut sides = [Vec::new(), Vec::new()];
            b.borders(axis, &mut sides).unwrap();
            let values = |k: f64| {
                sides
                    .clone()
                    .map(|v| (0..v.len()).map(|i| k + i as f64).collect::<Vec<f64>>())
            };
            let ([a, _], [_, c], [d, _]) = (values(1.0), values(2.0), values(3.0));
            let mut ghosts = [Vec::new(), Vec::new()];
            b.set_ghosts(axis, [&a, &c]).unwrap();
            b.set_ghosts(axis, [&[], &c]).unwrap();
            b.pushed(axis, &mut ghosts).unwrap();
            assert_eq!(
                ghosts,
                [a.clone(), c.clone()],
                "{}, axis {axis}: below kept",
                b.describe()
            );
            b.set_ghosts(axis, [&d, &[]]).unwrap();
            b.pushed(axis, &mut ghosts).unwrap();
            assert_eq!(ghosts, [d, c], "{}, axis {axis}: above kept", b.describe());
        }
    }
}

#[test]
fn too_large_lattice_is_a_clear_error() {
    let Some(ctx) = gpu_support::capped_context(CAP) else {
        return;
    };
    let p = D2Q9BgkParams {
        tau: 0.8,
        ax: 0.0,
        ay: 0.0,
    };
    let r = GpuLattice::<D2Q9Bgk, f64>::new(
        &ctx,
        LayoutKind::Soa,
        100_000,
        100_000,
        p,
        Scheme::TwoCopy,
        &BoundarySpec::periodic(),
    );
    match r {
        Err(GpuError::TooLarge { max_sites, .. }) => {
            let msg = r.err().unwrap().to_string();
            assert!(max_sites > 0 && msg.contains("at most about"), "{msg}");
        }
        other => panic!("expected TooLarge, got {:?}", other.err()),
    }
}

#[test]
fn unknown_adapter_is_a_clear_error() {
    if gpu_support::context().is_none() {
        return;
    }
    let opts = GpuOptions {
        adapter: AdapterChoice::Name("no-such-adapter-xyz".into()),
        ..GpuOptions::default()
    };
    let e = GpuContext::new(&opts).unwrap_err();
    assert!(matches!(e, GpuError::AdapterNotFound { .. }), "{e}");
    assert!(e.to_string().contains("available"), "{e}");
}

#[test]
fn f64_without_shader_f64_is_a_clear_error() {
    if gpu_support::context().is_none() {
        return;
    }
    let opts = GpuOptions {
        without_f64: true,
        ..GpuOptions::default()
    };
    let ctx = Arc::new(GpuContext::new(&opts).unwrap());
    assert!(!ctx.supports_f64());
    let p = D2Q9BgkParams {
        tau: 0.8,
        ax: 0.0,
        ay: 0.0,
    };
    let spec = BoundarySpec::periodic();
    let e = GpuLattice::<D2Q9Bgk, f64>::new(&ctx, LayoutKind::Soa, 8, 8, p, Scheme::TwoCopy, &spec)
        .unwrap_err();
    assert!(matches!(e, GpuError::NoF64 { .. }), "{e}");
    assert!(e.to_string().contains("use f32"), "{e}");
    let mut f32_lat =
        GpuLattice::<D2Q9Bgk, f32>::new(&ctx, LayoutKind::Soa, 8, 8, p, Scheme::TwoCopy, &spec)
            .unwrap();
    f32_lat.steps(3);
    assert!((f32_lat.mass().unwrap() - 64.0).abs() < 1e-4);
}

/// Without `SHADER_F16`, f16s packs two binary16 elements per `u32` word, written with
/// atomic operations on one half: every layout and scheme, with walls, a moving lid and an
/// obstacle, gives the same bits as with `f16` storage.
#[test]
fn f16s_packed_in_words_equals_f16_storage() {
    let Some(native) = gpu_support::context() else {
        return;
    };
    assert!(
        native.supports_f16(),
        "lavapipe and the GPUs we target have SHADER_F16"
    );
    let opts = GpuOptions {
        without_f16: true,
        ..GpuOptions::default()
    };
    let packed = Arc::new(GpuContext::new(&opts).unwrap());
    assert!(!packed.supports_f16());
    packed_vs_native::<Soa>(&native, &packed);
    packed_vs_native::<CSoa<8>>(&native, &packed);
    packed_vs_native::<CAoSoa<16>>(&native, &packed);
}

fn packed_vs_native<L: Layout>(native: &Arc<GpuContext>, packed: &Arc<GpuContext>) {
    let p = D2Q9BgkParams {
        tau: 0.7,
        ax: 1e-5,
        ay: 0.0,
    };
    let solid = (0..16 * 16)
        .map(|s| (5..8).contains(&(s / 16)) && (6..10).contains(&(s % 16)))
        .collect();
    let obstacle = BoundarySpec {
        solid: Some(lbm::Obstacles::mask(16, solid)),
        ..BoundarySpec::periodic()
    };
    for spec in [BoundarySpec::cavity(0.05), obstacle] {
        for scheme in [Scheme::TwoCopy, Scheme::InPlace] {
            let run = |ctx: &Arc<GpuContext>| {
                let mut g =
                    GpuLattice::<D2Q9Bgk, F16s>::new(ctx, L::KIND, 16, 16, p, scheme, &spec)
                        .unwrap();
                g.set_equilibrium(|x, y| {
                    let (sx, sy) = (2.0 * PI * x as f64 / 16.0, 2.0 * PI * y as f64 / 16.0);
                    vec![1.0 + 0.01 * sx.sin(), 0.03 * sy.sin(), 0.02 * sx.cos()]
                })
                .unwrap();
                g.steps(41);
                let f = g.read_populations().unwrap();
                f.iter().map(|v| v.0.to_bits()).collect::<Vec<u32>>()
            };
            assert!(
                run(native) == run(packed),
                "{} {} {spec:?}: packed words differ from f16 storage",
                L::NAME,
                scheme.name()
            );
        }
    }
}

#[test]
fn adapter_is_described() {
    let Some(ctx) = gpu_support::context() else {
        return;
    };
    let d = ctx.describe();
    assert!(d.contains(&ctx.info().name) && d.contains("driver"), "{d}");
    eprintln!("GPU tests ran on: {d}");
}
