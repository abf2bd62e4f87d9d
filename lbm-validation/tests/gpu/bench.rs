//! The GPU benchmark entry point the `lbm bench` command calls: its figures are consistent
//! (GB/s follow from MLUPS and the bytes a fused step moves, MLUPS from the batch's steps and
//! time, every batch at least the steps asked for) and the summary names the
//! adapter and labels CPU adapters as not GPU figures; the workgroup size it reports is one it
//! tried; its flop rate follows from the collision's flops per site. The FMA probe the flop
//! rate is set against runs every round of every chain. Timings are not asserted.

use crate::gpu_support;

use lbm::gpu::GpuContext;
use lbm::gpu::bench::fused_mlups;
use lbm::gpu::probe::BATCHES;
use lbm::gpu::probe::{FMA_CHAINS, FMA_ROUNDS, FMA_XY, fma_gflops, fma_start, fma_sums};
use lbm::models::{D2Q9Bgk, D2Q9BgkParams};
use lbm::{LayoutKind, Model, Real, Scheme};

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
    let r = fused_mlups::<D2Q9Bgk, f32>(
        &ctx,
        LayoutKind::CAoSoa(8),
        [64, 64, 1],
        p,
        Scheme::TwoCopy,
        20,
    )
    .unwrap();
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
    assert_eq!(r.flops_per_site, D2Q9Bgk::collide_flops(&p));
    let expected_gflops = r.mlups * r.flops_per_site as f64 / 1e3;
    assert!(
        r.flops_per_site > 0 && (r.gflops / expected_gflops - 1.0).abs() < 1e-12,
        "{r:?}"
    );
    let line = r.to_string();
    assert!(
        line.contains(&ctx.info().name) && line.contains("MLUPS"),
        "{line}"
    );
    assert_eq!(line.contains("not a GPU figure"), ctx.is_cpu(), "{line}");
    println!("{line}");
}

/// The sums of thread `t`'s chains after `rounds` rounds of `a ← a·x + y`, in `T`'s arithmetic
/// on the host.
fn chains<T: Real>(t: u64, rounds: u32) -> [f64; 4] {
    let (x, y) = (T::from_f64(FMA_XY.0), T::from_f64(FMA_XY.1));
    std::array::from_fn(|l| {
        (0..FMA_CHAINS)
            .map(|c| {
                let mut a = T::from_f64(fma_start(t, c, l));
                for _ in 0..rounds {
                    a = a.mul_add(x, y);
                }
                a.to_f64()
            })
            .sum()
    })
}

/// Every thread's chains ran every round: their sums are the host's after `FMA_ROUNDS` rounds,
/// not after one round fewer (a loop cut short, or chains merged, would differ by ten times the
/// tolerance or more); and the probe reports a positive rate of `BATCHES` batches.
fn fma_probe_runs_every_round<T: Real>(ctx: &GpuContext) {
    let got = fma_sums::<T>(ctx, 64).unwrap();
    let tol = if T::BYTES == 8 { 1e-12 } else { 1e-5 };
    for (t, sums) in got.iter().enumerate() {
        let want = chains::<T>(t as u64, FMA_ROUNDS);
        let short = chains::<T>(t as u64, FMA_ROUNDS - 1);
        for l in 0..4 {
            assert!(
                (sums[l] - want[l]).abs() < tol * want[l].abs(),
                "{} thread {t} lane {l}: {} against {}",
                T::NAME,
                sums[l],
                want[l]
            );
            assert!((want[l] - short[l]).abs() > 10.0 * tol * want[l].abs());
        }
    }
    let peak = fma_gflops::<T>(ctx).unwrap();
    assert!(peak.best > 0.0 && peak.reps == BATCHES, "{peak:?}");
    println!(
        "{}: FMA peak {:.1} GFLOP/s ({})",
        T::NAME,
        peak.best,
        peak.how()
    );
}

#[test]
fn fma_probe_runs_every_round_of_every_chain() {
    let Some(ctx) = gpu_support::context() else {
        return;
    };
    fma_probe_runs_every_round::<f32>(&ctx);
    if ctx.supports_f64() {
        fma_probe_runs_every_round::<f64>(&ctx);
    }
}
