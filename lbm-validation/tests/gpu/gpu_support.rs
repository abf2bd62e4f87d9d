//! Shared helpers of the GPU integration tests: one device per test process, and the rule for
//! machines without any adapter.
//!
//! On a machine with no Vulkan (or Metal/DX12) adapter at all the GPU tests print that they
//! were skipped and why, and pass; with `LBM_REQUIRE_GPU=1` (set in CI, where lavapipe is
//! installed by `scripts/setup`) a missing adapter fails them instead.

#![allow(dead_code)]

use std::f64::consts::PI;
use std::sync::{Arc, OnceLock};

use lbm::gpu::{GpuContext, GpuError, GpuOptions};
use lbm::{BoundarySpec, Model, Role, Wall};

/// The device of this test process, or `None` (after printing why) when there is no adapter.
pub fn context() -> Option<Arc<GpuContext>> {
    static CTX: OnceLock<Result<Arc<GpuContext>, GpuError>> = OnceLock::new();
    let ctx = CTX.get_or_init(|| GpuContext::new(&GpuOptions::default()).map(Arc::new));
    match ctx {
        Ok(c) => Some(c.clone()),
        Err(e) => skip(e),
    }
}

/// A device whose storage bindings are capped at `bytes` (to force the populations' split).
pub fn capped_context(bytes: u64) -> Option<Arc<GpuContext>> {
    context()?;
    let opts = GpuOptions {
        max_binding_bytes: Some(bytes),
        ..GpuOptions::default()
    };
    Some(Arc::new(
        GpuContext::new(&opts).expect("the default adapter opens twice"),
    ))
}

/// A device whose dispatches may hold at most `n` workgroups per dimension (to force the
/// 2-D dispatch grid on small lattices).
pub fn grid_capped_context(n: u32) -> Option<Arc<GpuContext>> {
    context()?;
    let opts = GpuOptions {
        max_workgroups_per_dim: Some(n),
        ..GpuOptions::default()
    };
    Some(Arc::new(
        GpuContext::new(&opts).expect("the default adapter opens twice"),
    ))
}

/// A device whose shaders keep their runtime bounds checks ([`GpuOptions::bounds_checks`]).
pub fn checked_context() -> Option<Arc<GpuContext>> {
    context()?;
    let opts = GpuOptions {
        bounds_checks: true,
        ..GpuOptions::default()
    };
    Some(Arc::new(
        GpuContext::new(&opts).expect("the default adapter opens twice"),
    ))
}

fn skip(e: &GpuError) -> Option<Arc<GpuContext>> {
    let required = std::env::var("LBM_REQUIRE_GPU").is_ok_and(|v| v == "1");
    if required || !matches!(e, GpuError::NoAdapter { .. }) {
        panic!("no usable GPU adapter: {e}");
    }
    eprintln!("GPU test skipped: {e}");
    None
}

/// Largest relative difference `|a − b| / |b|` over paired values, with `|b|` floored at
/// `floor` (so that values near zero are compared absolutely at that scale).
pub fn max_rel_diff(a: &[f64], b: &[f64], floor: f64) -> f64 {
    assert_eq!(a.len(), b.len(), "compared fields differ in length");
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs() / y.abs().max(floor))
        .fold(0.0, f64::max)
}

/// A smooth, non-uniform initial state of a lattice of `[LX, LY, LZ]` sites, at column `x`
/// and plane site `s = z·LY + y`: a density bump, shear waves and (thermal models) a
/// temperature wave.
pub fn initial<M: Model>([lx, ly, lz]: [usize; 3]) -> impl Fn(usize, usize) -> Vec<f64> + Sync {
    move |x, s| {
        let (sx, sy, sz) = (
            2.0 * PI * x as f64 / lx as f64,
            2.0 * PI * (s % ly) as f64 / ly as f64,
            2.0 * PI * (s / ly) as f64 / lz as f64,
        );
        M::MOMENT_ROLES
            .iter()
            .map(|r| match r {
                Role::Density | Role::Scalar => 1.0 + 0.05 * sx.sin() * sy.cos() * sz.cos(),
                Role::Velocity(0) => 0.04 * sy.sin() + 0.01 * sz.cos(),
                Role::Velocity(1) => 0.03 * sx.cos() - 0.01 * sz.sin(),
                Role::Velocity(_) => 0.02 * sx.sin() * sy.cos(),
                Role::Temperature => 1.0 + 0.02 * (sx + sy).sin(),
                Role::Vector(_) => 0.0,
            })
            .collect()
    }
}

/// A box open on two sides: an inflow on the left (Zou–He velocity), outflows on the right and
/// on the top (whose links read the neighbouring columns, across a cut), a wall at the bottom,
/// periodic along z.
pub fn open_box() -> BoundarySpec {
    BoundarySpec {
        left: Some(Wall::ZouHeVelocity {
            velocity: [0.03, 0.01, 0.0],
        }),
        right: Some(Wall::Outflow),
        bottom: Some(Wall::NO_SLIP),
        top: Some(Wall::Outflow),
        ..BoundarySpec::periodic()
    }
}
