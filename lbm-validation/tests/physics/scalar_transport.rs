//! A passive scalar declared in the DSL (D2Q5, only the scalar conserved, the advecting
//! velocity a parameter inside the equilibrium), validated on the `advection-diffusion` case: a
//! Gaussian pulse advected by a uniform flow and diffusing, against the exact solution.
//!
//! - second-order convergence under diffusive scaling (side ×2, speed ÷2, time ×4): the
//!   relative L2 error falls by 4 at each refinement;
//! - the diffusivity across the flow within 1 % of cs²(τ − ½), and along it within 1 % of the
//!   scheme's (τ − ½)(cs² − u²);
//! - the scalar conserved to round-off, on both streaming schemes, which agree bitwise.

use lbm::cases::{AdvectionDiffusion, Case, PulseMeasurement};
use lbm::models::D2Q5AdvectionDiffusion;
use lbm::output::Fields;
use lbm::{CAoSoa, Lattice, Scheme};

type M = D2Q5AdvectionDiffusion;

/// Runs the case for `steps` steps and measures it; also returns `Σ φ` before and after.
fn run(
    case: &AdvectionDiffusion,
    steps: u64,
    scheme: Scheme,
) -> (PulseMeasurement, [f64; 2], Vec<f64>) {
    let (lx, ly) = case.size();
    let mut lat =
        Lattice::<M, CAoSoa<8>, f64>::new(lx, ly, case.params(), scheme, &case.boundaries())
            .unwrap();
    lat.set_equilibrium(case.initial()).unwrap();
    let before: f64 = lat.moment_field("phi").unwrap().iter().sum();
    lat.run(steps, 0).unwrap();
    let phi = lat.moment_field("phi").unwrap();
    let after: f64 = phi.iter().sum();
    let fields = Fields::collect::<M, _>((lx, ly), steps, |n| lat.moment_field(n)).unwrap();
    let m = case.measure(steps, &case.sums(&fields)).unwrap();
    (m, [before, after], phi)
}

#[test]
fn a_gaussian_pulse_converges_at_second_order_with_the_predicted_diffusivity() {
    let mut errors = Vec::new();
    for (n, u, steps) in [(32, 0.2, 37), (64, 0.1, 149), (128, 0.05, 599)] {
        let case = AdvectionDiffusion {
            n,
            tau: 0.8,
            velocity: u,
            isotropic: false,
        };
        let (m, [before, after], _) = run(&case, steps, Scheme::InPlace);
        assert!(
            ((after - before) / before).abs() < 1e-13,
            "n = {n}: Σφ {before} → {after}"
        );
        if n >= 64 {
            let [dxx, dyy] = case.diffusivities();
            assert_eq!(dyy, case.diffusivity());
            for (a, (got, want)) in m.diffusivity.iter().zip([dxx, dyy]).enumerate() {
                assert!(
                    (got / want - 1.0).abs() < 0.01,
                    "n = {n}: D along axis {a} = {got}, the scheme's {want}"
                );
            }
            // The drift of the centre is far below a site.
            assert!(m.drift.iter().all(|d| d.abs() < 1e-3), "n = {n}: {m:?}");
        }
        errors.push(m.relative_l2);
    }
    for w in errors.windows(2) {
        let order = (w[0] / w[1]).log2();
        assert!(order > 1.9, "errors {errors:?}: order {order}");
    }
    assert!(errors[2] < 1e-3, "errors {errors:?}");
}

#[test]
fn both_schemes_carry_the_scalar_identically() {
    let case = AdvectionDiffusion {
        n: 32,
        tau: 0.7,
        velocity: 0.1,
        isotropic: false,
    };
    let (_, _, in_place) = run(&case, 51, Scheme::InPlace);
    let (_, _, two_copy) = run(&case, 51, Scheme::TwoCopy);
    assert_eq!(in_place, two_copy);
}
