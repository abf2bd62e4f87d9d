//! A Gaussian pulse of a passive scalar advected by a uniform flow and diffusing, on a periodic
//! `n × n` lattice (D2Q5, [`crate::models::D2Q5AdvectionDiffusion`]). The scheme solves
//!
//! ```text
//! ∂t φ + u·∇φ = ∂α (D_αβ ∂β φ),        D_αβ = (τ − ½)(cs² δ_αβ − u_α u_β)
//! ```
//!
//! (the first-order equilibrium's anisotropic correction, see the model's documentation), and
//! a Gaussian `φ − φ₀ = A exp(−|x − x₀|²/(2σ₀²))` stays Gaussian: centre `x₀ + u t`, variances
//! `σ_α² = σ₀² + 2 D_αα t`, amplitude `A σ₀² / (σ_x σ_y)`. The flow is along x, so
//! `D_yy = cs²(τ − ½)` and `D_xx = (τ − ½)(cs² − u²)`. On the periodic box the exact solution is
//! the sum of the pulse's periodic images (the nine nearest: the pulse is narrow).
//!
//! The report gives the relative L2 distance of `φ − φ₀` from the exact solution, the drift of
//! the centre against `u t`, and the diffusivity along each axis from the growth of the
//! pulse's variance: `D_α = D_αα + (var_α − var_α^exact)/(2t)`, the variances of the simulated
//! and of the exact pulse taken over the same sites (so that the periodic wrap and the
//! sampling cancel), against `cs²(τ − ½)`.

use std::f64::consts::PI;

use super::Case;
use crate::models::{D2Q5AdvectionDiffusion, D2Q5AdvectionDiffusionParams};
use crate::output::Fields;
use crate::{BoundarySpec, Model};

/// The advection–diffusion case.
#[derive(Debug, Clone, PartialEq)]
pub struct AdvectionDiffusion {
    /// Lattice side.
    pub n: usize,
    /// Relaxation time: `D = cs²(τ − ½)`.
    pub tau: f64,
    /// Speed of the flow, along x.
    pub velocity: f64,
    /// Whether the scheme's diffusivity is isotropic, `cs²(τ − ½)` along the flow too: true
    /// for a second-order equilibrium (D2Q9's, say, in a user's model), false for the shipped
    /// D2Q5 model, whose first-order one gives `D_xx = (τ − ½)(cs² − u²)`.
    pub isotropic: bool,
}

/// The background level `φ₀` and the pulse's amplitude `A`.
const PHI0: f64 = 1.0;
const AMPLITUDE: f64 = 1.0;

impl AdvectionDiffusion {
    /// The pulse's initial width `σ₀ = n/16`.
    pub fn sigma0(&self) -> f64 {
        self.n as f64 / 16.0
    }

    /// The pulse's initial centre, a quarter of the way along x, half-way up.
    fn origin(&self) -> [f64; 2] {
        [self.n as f64 / 4.0, self.n as f64 / 2.0]
    }

    /// The isotropic diffusivity `cs²(τ − ½)`.
    pub fn diffusivity(&self) -> f64 {
        D2Q5AdvectionDiffusion::CS2 * (self.tau - 0.5)
    }

    /// The diffusivities `[D_xx, D_yy]` of the scheme.
    pub fn diffusivities(&self) -> [f64; 2] {
        let d = self.diffusivity();
        if self.isotropic {
            [d, d]
        } else {
            [d - (self.tau - 0.5) * self.velocity.powi(2), d]
        }
    }

    /// The exact centre at time `t`, in the box.
    fn centre(&self, t: f64) -> [f64; 2] {
        let [x0, y0] = self.origin();
        [(x0 + self.velocity * t).rem_euclid(self.n as f64), y0]
    }

    /// `x − centre` wrapped into `[−n/2, n/2)`.
    fn offset(&self, x: usize, centre: f64) -> f64 {
        let n = self.n as f64;
        (x as f64 - centre + n / 2.0).rem_euclid(n) - n / 2.0
    }

    /// The exact `φ − φ₀` at site `(x, y)` and time `t`: the pulse and its eight nearest
    /// periodic images.
    pub fn exact(&self, x: usize, y: usize, t: f64) -> f64 {
        let s2 = self
            .diffusivities()
            .map(|d| self.sigma0().powi(2) + 2.0 * d * t);
        let [cx, cy] = self.centre(t);
        let (dx, dy) = (self.offset(x, cx), self.offset(y, cy));
        let n = self.n as f64;
        let mut sum = 0.0;
        for i in -1..=1 {
            for j in -1..=1 {
                let (ex, ey) = (dx + i as f64 * n, dy + j as f64 * n);
                sum += (-ex * ex / (2.0 * s2[0]) - ey * ey / (2.0 * s2[1])).exp();
            }
        }
        AMPLITUDE * self.sigma0().powi(2) / (s2[0] * s2[1]).sqrt() * sum
    }

    /// The pulse's total `Σ (φ − φ₀)` on the infinite plane, `2π A σ₀²`.
    pub fn pulse_total(&self) -> f64 {
        2.0 * PI * AMPLITUDE * self.sigma0().powi(2)
    }
}

/// Mean and variance of a distribution from its sums `[Σw, Σw d, Σw d²]`.
fn mean_var(s0: f64, s1: f64, s2: f64) -> (f64, f64) {
    let mean = s1 / s0;
    (mean, s2 / s0 - mean * mean)
}

/// What the case measures at one time, from its [`Case::sums`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PulseMeasurement {
    /// Time `t` of the fields (steps + 1).
    pub time: f64,
    /// Relative L2 distance of `φ − φ₀` from the exact solution.
    pub relative_l2: f64,
    /// `Σ (φ − φ₀)` over the lattice.
    pub total: f64,
    /// The centre's offset from `x₀ + u t`, in sites.
    pub drift: [f64; 2],
    /// The diffusivities `[D_x, D_y]` from the variances.
    pub diffusivity: [f64; 2],
}

impl AdvectionDiffusion {
    /// The measurements after `step` steps from the sums of the whole lattice.
    pub fn measure(&self, step: u64, sums: &[f64]) -> Option<PulseMeasurement> {
        let [m0, mx, my, mxx, myy, e0, ex, ey, exx, eyy, err, norm] = sums[..] else {
            return None;
        };
        let time = step as f64 + 1.0;
        let (mean_x, var_x) = mean_var(m0, mx, mxx);
        let (mean_y, var_y) = mean_var(m0, my, myy);
        let (exact_x, evar_x) = mean_var(e0, ex, exx);
        let (exact_y, evar_y) = mean_var(e0, ey, eyy);
        let [dxx, dyy] = self.diffusivities();
        Some(PulseMeasurement {
            time,
            relative_l2: (err / norm).sqrt(),
            total: m0,
            drift: [mean_x - exact_x, mean_y - exact_y],
            diffusivity: [
                dxx + (var_x - evar_x) / (2.0 * time),
                dyy + (var_y - evar_y) / (2.0 * time),
            ],
        })
    }
}

impl Case for AdvectionDiffusion {
    type Model = D2Q5AdvectionDiffusion;

    fn name(&self) -> &'static str {
        "advection-diffusion"
    }

    fn size(&self) -> (usize, usize) {
        (self.n, self.n)
    }

    fn params(&self) -> D2Q5AdvectionDiffusionParams {
        D2Q5AdvectionDiffusionParams {
            tau: self.tau,
            ux: self.velocity,
            uy: 0.0,
        }
    }

    fn boundaries(&self) -> BoundarySpec {
        BoundarySpec::periodic()
    }

    fn initial(&self) -> impl Fn(usize, usize) -> Vec<f64> + Sync + '_ {
        move |x, y| vec![PHI0 + self.exact(x, y, 0.0)]
    }

    fn images(&self) -> &'static [&'static str] {
        &["phi"]
    }

    fn image_range(&self, _field: &str) -> Option<(f64, f64)> {
        Some((PHI0, PHI0 + AMPLITUDE))
    }

    fn velocity_scale(&self) -> f64 {
        self.velocity
    }

    /// With `ψ = φ − φ₀`, `e` the exact `ψ` and `d` the offsets from the exact centre:
    /// `[Σψ, Σψ d_x, Σψ d_y, Σψ d_x², Σψ d_y²]`, the same five of `e`, then `Σ(ψ − e)²`, `Σe²`.
    fn sums(&self, f: &Fields) -> Vec<f64> {
        let Some(phi) = f.moment("phi") else {
            return Vec::new();
        };
        // The moments after n steps are those of the populations streamed once more.
        let t = f.step as f64 + 1.0;
        let [cx, cy] = self.centre(t);
        let mut s = vec![0.0; 12];
        for (k, p) in phi.iter().enumerate() {
            let (x, y) = f.site(k);
            let (dx, dy) = (self.offset(x, cx), self.offset(y, cy));
            let e = self.exact(x, y, t);
            for (base, w) in [(0, p - PHI0), (5, e)] {
                s[base] += w;
                s[base + 1] += w * dx;
                s[base + 2] += w * dy;
                s[base + 3] += w * dx * dx;
                s[base + 4] += w * dy * dy;
            }
            s[10] += (p - PHI0 - e).powi(2);
            s[11] += e * e;
        }
        s
    }

    fn extra_diagnostics(&self, _step: u64, sums: &[f64]) -> Vec<(&'static str, f64)> {
        match sums {
            [total, .., err, norm] => vec![
                ("scalar_total", *total),
                ("relative_l2", (err / norm).sqrt()),
            ],
            _ => Vec::new(),
        }
    }

    fn report(&self, step: u64, sums: &[f64]) -> Vec<String> {
        let Some(m) = self.measure(step, sums) else {
            return vec!["no scalar field `phi`".into()];
        };
        let [dxx, _] = self.diffusivities();
        let d = self.diffusivity();
        let pct = |a: f64, b: f64| 100.0 * (a / b - 1.0);
        vec![
            format!(
                "advection–diffusion after {step} steps (t = {}): φ − φ₀ vs the exact pulse: \
                 relative L2 {:.3e}; Σ(φ − φ₀) = {:.12e} (exact pulse {:.12e})",
                m.time, m.relative_l2, m.total, sums[5]
            ),
            format!(
                "centre drift: ({:+.3e}, {:+.3e}) sites from x₀ + u t (u t = {:.3})",
                m.drift[0],
                m.drift[1],
                self.velocity * m.time
            ),
            format!(
                "diffusivity across the flow D_y = {:.6e}, cs²(τ − ½) = {d:.6e} ({:+.3}%)",
                m.diffusivity[1],
                pct(m.diffusivity[1], d)
            ),
            format!(
                "diffusivity along the flow D_x = {:.6e}, (τ − ½)(cs² − u²) = {dxx:.6e} ({:+.3}%; \
                 {:+.3}% from cs²(τ − ½))",
                m.diffusivity[0],
                pct(m.diffusivity[0], dxx),
                pct(m.diffusivity[0], d)
            ),
        ]
    }
}
