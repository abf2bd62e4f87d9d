//! Every composed GPU shader — each shipped model × layout × precision × streaming scheme,
//! with and without boundary code, in one binding per copy and split across three — parses,
//! passes naga's validator (with the f64 capability for f64) and has the entry points of its
//! scheme, its site kernels at every workgroup size. Needs no device.

use lbm::gpu::BcShape;
use lbm::gpu::layout::AffineLayout;
use lbm::gpu::shader::{Entry, ShaderSpec, compose, entry_name, validate};
use lbm::gpu::workgroup::SIZES;
use lbm::layout::Dims;
use lbm::models::*;
use lbm::{Aos, CAoSoa, CSoa, F16s, Layout, Model, Real, Scheme, Soa};

/// Composes and validates `M × L × T` for every boundary shape, binding split and scheme
/// (and for f16s, with `f16` storage and packed in `u32` words).
fn check<M: Model, L: Layout, T: Real>(params: &M::Params, shapes: &[BcShape]) {
    let dims = Dims::of::<M>([6, 48, if M::D == 3 { 5 } else { 1 }]);
    let packings: &[bool] = if T::COMPACT { &[false, true] } else { &[false] };
    for (&bc, &packed_f16) in shapes
        .iter()
        .flat_map(|b| packings.iter().map(move |p| (b, p)))
    {
        for (chunks, scheme) in [1, 3]
            .into_iter()
            .flat_map(|c| [(c, Scheme::TwoCopy), (c, Scheme::InPlace)])
        {
            let spec = ShaderSpec {
                dims,
                params: M::param_values(params).len().max(1),
                chunk: (dims.len() as u64).div_ceil(chunks as u64),
                chunks,
                row: 256,
                bc,
                scheme,
                slab: chunks == 3,
                fields: (!M::FIELDS.is_empty()).then(|| M::param_values(params).len()),
                packed_f16,
                held_at: 64,
            };
            let what = format!(
                "{} × {} × {} {} ({chunks} bindings, {bc:?}, packed {packed_f16})",
                M::NAME,
                L::NAME,
                T::NAME,
                scheme.name()
            );
            let lay =
                AffineLayout::probe::<L>(&spec.dims).unwrap_or_else(|e| panic!("{what}: {e}"));
            let src = compose::<M, T>(&spec, &lay);
            let f64 = size_of::<T>() == 8;
            validate(&src, f64, &what).unwrap_or_else(|e| panic!("{e}"));
            let real = if f64 { "f64" } else { "f32" };
            assert!(src.contains(&format!("alias real = {real};")), "{what}");
            let native = T::COMPACT && !packed_f16;
            assert_eq!(src.contains("alias store = f16;"), native, "{what}");
            let packed = T::COMPACT && packed_f16;
            assert_eq!(src.contains("array<atomic<u32>>"), packed, "{what}");
            for (e, w) in spec.entry_points() {
                for size in SIZES {
                    let entry = format!("fn {}(@builtin", entry_name(e, w, size));
                    assert!(
                        src.contains(&entry),
                        "{what}: no entry point {e:?} {w:?} {size}"
                    );
                }
            }
        }
    }
}

/// All shipped layouts (cluster widths 4, 8 and 16) for model `M` in precision `T`.
fn all_layouts<M: Model, T: Real>(p: &M::Params, shapes: &[BcShape]) {
    check::<M, Aos, T>(p, shapes);
    check::<M, Soa, T>(p, shapes);
    check::<M, CSoa<4>, T>(p, shapes);
    check::<M, CSoa<8>, T>(p, shapes);
    check::<M, CSoa<16>, T>(p, shapes);
    check::<M, CAoSoa<4>, T>(p, shapes);
    check::<M, CAoSoa<8>, T>(p, shapes);
    check::<M, CAoSoa<16>, T>(p, shapes);
}

fn both_precisions<M: Model>(p: &M::Params, shapes: &[BcShape]) {
    all_layouts::<M, f32>(p, shapes);
    all_layouts::<M, f64>(p, shapes);
    all_layouts::<M, F16s>(p, shapes);
}

#[test]
fn d2q9_shaders_validate() {
    let shapes = [BcShape::default(), BcShape::all(true, false, false)];
    let bgk = D2Q9BgkParams {
        tau: 0.8,
        ax: 0.0,
        ay: 0.0,
    };
    both_precisions::<D2Q9Bgk>(&bgk, &shapes);
    let trt = D2Q9TrtParams {
        tau: 0.8,
        magic: 0.25,
        ax: 0.0,
        ay: 0.0,
    };
    both_precisions::<D2Q9Trt>(&trt, &shapes);
    let mrt = D2Q9MrtParams {
        tau: 0.8,
        s_e: 1.1,
        s_eps: 1.1,
        s_q: 1.1,
        ax: 0.0,
        ay: 0.0,
    };
    both_precisions::<D2Q9Mrt>(&mrt, &shapes);
}

#[test]
fn d2q37_shaders_validate() {
    let p = D2Q37Params { tau: 0.8, g: 0.0 };
    both_precisions::<D2Q37>(&p, &[BcShape::default(), BcShape::all(false, false, true)]);
}

#[test]
fn d3_shaders_validate() {
    let shapes = [BcShape::default(), BcShape::all(true, true, false)];
    let trt = D3Q19TrtParams {
        tau: 0.8,
        magic: 0.25,
        ax: 0.0,
        ay: 0.0,
        az: 0.0,
    };
    both_precisions::<D3Q19Trt>(&trt, &shapes);
    let bgk = D3Q27BgkParams {
        tau: 0.8,
        ax: 0.0,
        ay: 0.0,
        az: 0.0,
    };
    both_precisions::<D3Q27Bgk>(&bgk, &shapes);
    both_precisions::<D3Q27CentralMrt>(&D3Q27CentralMrtParams::with_tau(0.8), &shapes);
    let reg = D3Q19RegularizedParams {
        tau: 0.8,
        ax: 0.0,
        ay: 0.0,
        az: 0.0,
    };
    both_precisions::<D3Q19Regularized>(&reg, &shapes);
}

/// Models with per-site fields (read from `consts` in `site_params`) and the Dirichlet wall
/// of a transported scalar.
#[test]
fn field_and_scalar_wall_shaders_validate() {
    let walls = BcShape::all(false, false, false).with_dirichlet();
    let scalar = D2Q5AdvectionDiffusionParams {
        tau: 0.8,
        ux: 0.0,
        uy: 0.0,
    };
    both_precisions::<D2Q5AdvectionDiffusion>(&scalar, &[BcShape::default(), walls]);
    let flow = D2Q9BoussinesqParams {
        tau: 0.8,
        magic: 0.1875,
        g_beta: 1e-3,
        t_ref: 0.0,
        T: 0.0,
    };
    both_precisions::<D2Q9Boussinesq>(&flow, &[BcShape::all(false, false, false)]);
}

/// The f64 shader carries the weights at full double precision (no f32 rounding on the way).
#[test]
fn f64_constants_keep_full_precision() {
    let dims = Dims {
        lx: 4,
        ly: 8,
        lz: 1,
        halo: 1,
        q: 9,
        ring: None,
    };
    let spec = ShaderSpec {
        dims,
        params: 3,
        chunk: dims.len() as u64,
        chunks: 1,
        row: 64,
        bc: BcShape::all(false, false, false),
        scheme: Scheme::TwoCopy,
        slab: false,
        fields: None,
        packed_f16: false,
        held_at: 0,
    };
    let src = compose::<D2Q9Bgk, f64>(&spec, &AffineLayout::probe::<Soa>(&spec.dims).unwrap());
    assert!(
        src.contains(&format!("real({:?})", 1.0f64 / 36.0)),
        "weights at f64 precision"
    );
    let v: f64 = format!("{:?}", 1.0f64 / 36.0).parse().unwrap();
    assert_eq!(v, 1.0 / 36.0);
}

/// `Entry::of` slices `Entry::ALL`: its order is the declaration order.
#[test]
fn entry_points_are_listed_in_order() {
    for (k, e) in Entry::ALL.iter().enumerate() {
        assert_eq!(*e as usize, k, "{e:?}");
    }
}
