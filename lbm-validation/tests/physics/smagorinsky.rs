//! Smagorinsky's eddy viscosity declared as a state-dependent relaxation time
//! (`smagorinsky(tau = τ₀, c = C)` in the DSL, Hou et al. 1996), validated where it has an exact
//! answer: force-driven flow between walls, where the stress balance
//!
//! ```text
//! (ν₀ + C² |u'|) u'(Y) = −g Y      ⇒      u'(Y) = (ν₀ − √(ν₀² + 4C²gY)) / (2C²),  Y ≥ 0,
//! u(Y) = [((ν₀² + 4C²gh)^{3/2} − (ν₀² + 4C²gY)^{3/2}) / (6C²g) − ν₀ (h − Y)] / (2C²)
//! ```
//!
//! (half-width `h`, `Y` from the centre line, `ν_t = C²|S|` with `|S| = |u'|`), a profile
//! flatter than the parabola of the same `ν₀`. With `C = 0` each Smagorinsky model is its
//! parent (BGK, MRT) to round-off.

use lbm::models::{
    D2Q9Bgk, D2Q9BgkParams, D2Q9Smagorinsky, D2Q9SmagorinskyParams, D3Q19Mrt, D3Q19MrtParams,
    D3Q19MrtSmagorinsky, D3Q19MrtSmagorinskyParams,
};
use lbm::{BoundarySpec, Lattice, Model, Scheme, Soa};

/// The exact Smagorinsky channel profile at distance `y` from the centre line.
fn smagorinsky_profile(nu0: f64, c: f64, g: f64, h: f64, y: f64) -> f64 {
    let k = 4.0 * c * c * g;
    let a = nu0 * nu0;
    (((a + k * h).powf(1.5) - (a + k * y.abs()).powf(1.5)) / (6.0 * c * c * g)
        - nu0 * (h - y.abs()))
        / (2.0 * c * c)
}

#[test]
fn the_channel_flow_has_the_smagorinsky_profile() {
    let (lx, ly) = (4, 32);
    let (tau, c, g) = (0.6, 1.0, 2e-5);
    let params = D2Q9SmagorinskyParams {
        tau,
        c_smag: c,
        ax: g,
        ay: 0.0,
    };
    let mut lat = Lattice::<D2Q9Smagorinsky, Soa, f64>::new(
        lx,
        ly,
        params,
        Scheme::InPlace,
        &BoundarySpec::channel(),
    )
    .unwrap();
    lat.run(60_000, 10_000).unwrap();
    let ux = lat.moment_field("ux").unwrap();
    let nu0 = D2Q9Smagorinsky::CS2 * (tau - 0.5);
    let h = ly as f64 / 2.0;
    let (mut err, mut norm, mut newton) = (0.0, 0.0, 0.0);
    // Column x = 0: the first LY values.
    for (y, &u) in ux.iter().take(ly).enumerate() {
        let yc = y as f64 + 0.5 - h;
        let exact = smagorinsky_profile(nu0, c, g, h, yc);
        let parabola = g * (h * h - yc * yc) / (2.0 * nu0);
        err += (u - exact).powi(2);
        newton += (parabola - exact).powi(2);
        norm += exact * exact;
    }
    let (err, newton) = ((err / norm).sqrt(), (newton / norm).sqrt());
    eprintln!(
        "Smagorinsky channel: relative L2 {err:.2e} from the exact profile, {newton:.3} from the parabola"
    );
    assert!(
        newton > 0.1,
        "the eddy viscosity must matter here: {newton}"
    );
    assert!(
        err < 5e-3,
        "relative L2 from the Smagorinsky profile {err} (parabola {newton})"
    );
}

/// Runs two models from the same sheared state and returns their velocity fields.
fn velocity_after<M: Model>(params: M::Params, size: [usize; 3], steps: u64) -> Vec<Vec<f64>> {
    let mut lat =
        Lattice::<M, Soa, f64>::with_size(size, params, Scheme::TwoCopy, &BoundarySpec::periodic())
            .unwrap();
    let [lx, ly, _] = size;
    lat.set_equilibrium(|x, s| {
        let (kx, ky) = (
            2.0 * std::f64::consts::PI * x as f64 / lx as f64,
            2.0 * std::f64::consts::PI * (s % ly) as f64 / ly as f64,
        );
        let mut m = vec![
            1.0,
            0.05 * ky.sin(),
            0.03 * kx.cos(),
            0.02 * (kx + ky).sin(),
        ];
        m.truncate(M::MOMENT_NAMES.len());
        m
    })
    .unwrap();
    lat.run(steps, 0).unwrap();
    ["ux", "uy"]
        .iter()
        .map(|n| lat.moment_field(n).unwrap())
        .collect()
}

#[test]
fn with_a_zero_constant_the_models_are_their_parents() {
    let same = |a: Vec<Vec<f64>>, b: Vec<Vec<f64>>| {
        for (x, y) in a.iter().flatten().zip(b.iter().flatten()) {
            assert!((x - y).abs() < 1e-15, "{x} vs {y}");
        }
    };
    same(
        velocity_after::<D2Q9Smagorinsky>(
            D2Q9SmagorinskyParams {
                tau: 0.7,
                c_smag: 0.0,
                ax: 0.0,
                ay: 0.0,
            },
            [16, 16, 1],
            50,
        ),
        velocity_after::<D2Q9Bgk>(
            D2Q9BgkParams {
                tau: 0.7,
                ax: 0.0,
                ay: 0.0,
            },
            [16, 16, 1],
            50,
        ),
    );
    same(
        velocity_after::<D3Q19MrtSmagorinsky>(
            D3Q19MrtSmagorinskyParams::with_tau(0.7, 0.0),
            [8, 8, 8],
            30,
        ),
        velocity_after::<D3Q19Mrt>(D3Q19MrtParams::with_tau(0.7), [8, 8, 8], 30),
    );
    // A non-zero constant raises the viscosity: the shear decays faster.
    let energy = |fields: Vec<Vec<f64>>| fields.iter().flatten().map(|u| u * u).sum::<f64>();
    let les = energy(velocity_after::<D2Q9Smagorinsky>(
        D2Q9SmagorinskyParams {
            tau: 0.7,
            c_smag: 0.5,
            ax: 0.0,
            ay: 0.0,
        },
        [16, 16, 1],
        50,
    ));
    let bgk = energy(velocity_after::<D2Q9Bgk>(
        D2Q9BgkParams {
            tau: 0.7,
            ax: 0.0,
            ay: 0.0,
        },
        [16, 16, 1],
        50,
    ));
    assert!(
        les < bgk,
        "kinetic energy {les} with the model, {bgk} without"
    );
}
