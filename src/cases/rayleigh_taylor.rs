//! The Rayleigh–Taylor instability with D2Q37, the production case of Calore et al. (2019 §3; the
//! model's weights and equilibrium: Philippi et al. 2006, Shan 2010): a box periodic in x, thermal
//! walls at the bottom (hot, `T = 1 + A`) and the top (cold, `T = 1 − A`), gravity `g` along −y. A
//! cold, dense upper half lies on a hot, light lower half in hydrostatic balance, `dp/dy = −ρ g`
//! with `p = ρT`, so that at equal pressure the Atwood number is `(ρ_c − ρ_h)/(ρ_c + ρ_h) = A`. The
//! interface, a `tanh` of width `w`, is displaced by `η₀ cos(2π x / LX)`, one wavelength across the
//! box.
//!
//! In the linear regime the perturbation grows as `e^{σt}`, for a sharp interface between
//! fluids of equal kinematic viscosity ν (Chandrasekhar 1961)
//!
//! ```text
//! σ = √(A g k + ν²k⁴) − ν k²,     k = 2π / LX
//! ```
//! (`lbm-validation/tests/physics/d2q37_rayleigh_taylor.rs` checks the measured rate against it,
//! with the correction for a diffuse interface); later bubbles of light fluid rise and spikes of
//! heavy fluid fall, rolling up by the Kelvin–Helmholtz instability. Time is reported in units of
//! `t₀ = √(LX / (A g))`.
//!
//! Diagnostics: with `θ = (T̄(y) − T_c)/(T_h − T_c)` the horizontally averaged temperature
//! scaled to [0, 1], the *mixing width* is the height of the layer where `0.05 < θ < 0.95`;
//! the *interface amplitude* is the `cos(kx)` mode of the light fluid's column height
//! `h(x) = Σ_y θ(x, y)`.

use std::f64::consts::PI;

use super::Case;
use crate::models::{D2Q37, D2Q37Params};
use crate::output::Fields;
use crate::{BoundarySpec, Model, Wall};

/// The Rayleigh–Taylor case.
#[derive(Debug, Clone, PartialEq)]
pub struct RayleighTaylor {
    /// Box width (one wavelength of the perturbation).
    pub lx: usize,
    /// Box height.
    pub ly: usize,
    /// Atwood number A ∈ (0, 1): the walls hold `T = 1 ± A`.
    pub atwood: f64,
    /// Gravity along −y.
    pub gravity: f64,
    /// Relaxation time.
    pub tau: f64,
    /// Initial displacement η₀ of the interface, in sites.
    pub amplitude: f64,
    /// Width of the interface's tanh profile, in sites.
    pub width: f64,
}

impl RayleighTaylor {
    fn hot(&self) -> f64 {
        1.0 + self.atwood
    }

    fn cold(&self) -> f64 {
        1.0 - self.atwood
    }

    fn k(&self) -> f64 {
        2.0 * PI / self.lx as f64
    }

    /// The initial temperature at height `y` above a point where the interface sits at
    /// `ly/2 + eta`.
    fn temperature(&self, y: f64, eta: f64) -> f64 {
        let mid = 0.5 * (self.hot() + self.cold());
        let z = (y - self.ly as f64 / 2.0 - eta) / self.width;
        mid - 0.5 * (self.hot() - self.cold()) * z.tanh()
    }

    /// The hydrostatic pressure of the unperturbed profile: `dp/dy = −ρ g = −p g / T`,
    /// integrated with the trapezoidal rule from `p(0) = 1`.
    fn pressure(&self) -> Vec<f64> {
        let g = self.gravity;
        let mut p = vec![1.0; self.ly];
        for y in 1..self.ly {
            let t = 0.5 * (self.temperature(y as f64 - 1.0, 0.0) + self.temperature(y as f64, 0.0));
            p[y] = p[y - 1] * (1.0 - g / (2.0 * t)) / (1.0 + g / (2.0 * t));
        }
        p
    }

    /// The linear growth rate of a sharp interface with viscosity `cs²(τ − ½)`.
    pub fn linear_growth_rate(&self) -> f64 {
        let (k, nu) = (self.k(), D2Q37::CS2 * (self.tau - 0.5));
        (self.atwood * self.gravity * k + nu * nu * k.powi(4)).sqrt() - nu * k * k
    }

    /// `θ(x, y)` of the temperature field `t`.
    fn theta(&self, t: f64) -> f64 {
        ((t - self.cold()) / (self.hot() - self.cold())).clamp(0.0, 1.0)
    }

    /// `Σ_x θ(x, y)` for every row `y`, then `Σ_{x,y} θ(x, y) cos(k x)`: what the mixing width
    /// and the interface amplitude are made of ([`RayleighTaylor::mixing`]).
    fn theta_sums(&self, f: &Fields) -> Vec<f64> {
        let t = f.temperature();
        let mut sums = vec![0.0; f.ly + 1];
        for (s, t) in t.iter().enumerate() {
            let (x, y) = f.site(s);
            let theta = self.theta(*t);
            sums[y] += theta;
            sums[f.ly] += theta * (self.k() * x as f64).cos();
        }
        sums
    }

    /// The mixing width and the interface amplitude, from the sums of
    /// `RayleighTaylor::theta_sums` over the whole lattice.
    pub fn mixing(&self, sums: &[f64]) -> (f64, f64) {
        let (lx, ly) = (self.lx, self.ly);
        let Some((&wave, rows)) = sums.split_last().filter(|(_, r)| r.len() == ly) else {
            return (0.0, 0.0);
        };
        let mean: Vec<f64> = rows.iter().map(|r| r / lx as f64).collect();
        // The lowest height where θ falls below 0.95, the highest where it rises above 0.05.
        let crossing = |level: f64, from_top: bool| -> f64 {
            let ys: Vec<usize> = if from_top {
                (1..ly).rev().collect()
            } else {
                (1..ly).collect()
            };
            for y in ys {
                let (a, b) = (mean[y - 1], mean[y]);
                if (a - level) * (b - level) <= 0.0 && a != b {
                    return y as f64 - 1.0 + (a - level) / (a - b);
                }
            }
            ly as f64 / 2.0
        };
        let width = (crossing(0.05, true) - crossing(0.95, false)).max(0.0);
        (width, 2.0 / lx as f64 * wave)
    }
}

impl Case for RayleighTaylor {
    type Model = D2Q37;

    fn name(&self) -> &'static str {
        "rayleigh-taylor"
    }

    fn size(&self) -> (usize, usize) {
        (self.lx, self.ly)
    }

    fn params(&self) -> D2Q37Params {
        D2Q37Params {
            tau: self.tau,
            g: self.gravity,
        }
    }

    fn boundaries(&self) -> BoundarySpec {
        BoundarySpec {
            bottom: Some(Wall::Thermal {
                temperature: self.hot(),
            }),
            top: Some(Wall::Thermal {
                temperature: self.cold(),
            }),
            ..BoundarySpec::periodic()
        }
    }

    fn initial(&self) -> impl Fn(usize, usize) -> Vec<f64> + Sync + '_ {
        let p = self.pressure();
        move |x, y| {
            let eta = self.amplitude * (self.k() * x as f64).cos();
            let t = self.temperature(y as f64, eta);
            // The equilibrium takes the bare velocity: −a/2 = (0, g/2) is the fluid at rest.
            vec![p[y] / t, 0.0, self.gravity / 2.0, t]
        }
    }

    fn images(&self) -> &'static [&'static str] {
        &["T", "vorticity"]
    }

    fn image_range(&self, field: &str) -> Option<(f64, f64)> {
        (field == "T").then_some((self.cold(), self.hot()))
    }

    fn time_unit(&self) -> f64 {
        (self.atwood * self.gravity / self.lx as f64).sqrt()
    }

    fn velocity_scale(&self) -> f64 {
        (self.atwood * self.gravity * self.lx as f64).sqrt()
    }

    fn sums(&self, f: &Fields) -> Vec<f64> {
        self.theta_sums(f)
    }

    fn extra_diagnostics(&self, _step: u64, sums: &[f64]) -> Vec<(&'static str, f64)> {
        let (width, amplitude) = self.mixing(sums);
        vec![("mixing_width", width), ("interface_amplitude", amplitude)]
    }

    fn report(&self, step: u64, sums: &[f64]) -> Vec<String> {
        let (width, amplitude) = self.mixing(sums);
        let sigma = self.linear_growth_rate();
        vec![
            format!(
                "Rayleigh–Taylor at t = {:.2} t₀ ({} steps): mixing width {width:.1} sites \
                 ({:.2} λ), interface amplitude {amplitude:.2} sites (initially {:.2})",
                step as f64 * self.time_unit(),
                step,
                width / self.lx as f64,
                self.amplitude
            ),
            format!(
                "linear theory (sharp interface, A = {}, g = {:e}, k = 2π/{}): σ = {sigma:.4e} per \
                 step, e-folding time {:.0} steps",
                self.atwood,
                self.gravity,
                self.lx,
                1.0 / sigma
            ),
        ]
    }
}
