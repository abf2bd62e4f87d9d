//! The GPU benchmark entry point the `lbm bench` command calls: its figures are consistent
//! (GB/s follow from MLUPS and the bytes a fused step moves, MLUPS from the batch's steps and
//! time, every batch at least the steps asked for) and the summary names the
//! adapter and labels CPU adapters as not GPU figures; the workgroup size it reports is one it
//! tried. Timings are not asserted.

mod gpu_support;

use lbm::gpu::bench::{fused_mlups, BATCHES};
use lbm::models::{D2Q9Bgk, D2Q9BgkParams};
use lbm::{CAoSoa, Scheme};

#[test]
fn fused_bench_reports_consistent_labelled_figures() {
    let Some(ctx) = gpu_support::context() else {
        return;
    };
    let p = D2Q9BgkParams {
        tau: 0.8,
        ax: 0.0,
        ay: 0.0,
    };
    let r =
        fused_mlups::<D2Q9Bgk, CAoSoa<8>, f32>(&ctx, [64, 64, 1], p, Scheme::TwoCopy, 20).unwrap();
    assert!(
        r.mlups > 0.0 && r.copy.best > 0.0 && r.copy.reps == BATCHES,
        "{r:?}"
    );
    assert!(r.steps >= 20 && (0.0..1.0).contains(&r.spread), "{r:?}");
    let timed = r.steps as f64 * 64.0 * 64.0 / (r.mlups * 1e6);
    assert!((timed / r.seconds - 1.0).abs() < 1e-9, "{r:?}");
    let expected_gbps = r.mlups * (2 * 9 * 4) as f64 / 1e3;
    assert!((r.gbps / expected_gbps - 1.0).abs() < 1e-12, "{r:?}");
    assert!(r.workgroup_candidates.contains(&r.workgroup), "{r:?}");
    let line = r.to_string();
    assert!(
        line.contains(&ctx.info().name) && line.contains("MLUPS"),
        "{line}"
    );
    assert_eq!(line.contains("not a GPU figure"), ctx.is_cpu(), "{line}");
    println!("{line}");
}
