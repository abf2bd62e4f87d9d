//! Force-driven Poiseuille flow between half-way bounce-back walls (D2Q9).
//!
//! Walls at `y = −½` and `y = H − ½`, body force `a` along x, kinematic viscosity
//! `ν = cs² (τ − ½)`: the steady profile is `u(y) = a/(2ν) (y + ½)(H − y − ½)`.

use lbm::models::{D2Q9Bgk, D2Q9BgkParams, D2Q9Trt, D2Q9TrtParams};
use lbm::{BoundarySpec, CAoSoa, Lattice, Model, Scheme};

/// Relative L2 error of the steady `ux` profile against the parabola after `steps` steps.
fn profile_error<M: Model>(
    params: M::Params,
    h: usize,
    a: f64,
    tau: f64,
    steps: u64,
    scheme: Scheme,
) -> f64 {
    let mut lat =
        Lattice::<M, CAoSoa<8>, f64>::new(2, h, params, scheme, &BoundarySpec::channel()).unwrap();
    lat.run(steps, 1000).unwrap();
    let nu = (tau - 0.5) / 3.0;
    let ux = lat.moment_field("ux").unwrap();
    let (mut num, mut den) = (0.0, 0.0);
    for (y, u) in ux.iter().take(h).enumerate() {
        let s = y as f64 + 0.5;
        let exact = a / (2.0 * nu) * s * (h as f64 - s);
        num += (u - exact).powi(2);
        den += exact * exact;
    }
    (num / den).sqrt()
}

#[test]
fn bgk_profile_within_1e_3() {
    let (h, a, tau) = (32, 1e-6, 0.8);
    for scheme in [Scheme::TwoCopy, Scheme::InPlace] {
        let err = profile_error::<D2Q9Bgk>(
            D2Q9BgkParams {
                tau,
                ax: a,
                ay: 0.0,
            },
            h,
            a,
            tau,
            20_000,
            scheme,
        );
        assert!(err < 1e-3, "{scheme:?}: relative L2 error {err:e}");
    }
}

/// TRT with the magic parameter Λ = 3/16 puts the bounce-back wall exactly half-way: the
/// parabola is reproduced to round-off.
#[test]
fn trt_magic_parameter_is_exact() {
    let (h, a, tau) = (16, 1e-6, 0.8);
    let p = D2Q9TrtParams {
        tau,
        magic: 3.0 / 16.0,
        ax: a,
        ay: 0.0,
    };
    let err = profile_error::<D2Q9Trt>(p, h, a, tau, 12_000, Scheme::InPlace);
    assert!(err < 1e-10, "relative L2 error {err:e}");
}
