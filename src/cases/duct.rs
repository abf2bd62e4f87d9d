//! Force-driven flow in a square duct (D3Q19 TRT): periodic along x, half-way bounce-back
//! walls at `y, z = −½` and `N − ½`, a body acceleration `g` along x. With the duct's centre at
//! the origin (`Y = y + ½ − N/2`, `Z = z + ½ − N/2`, side `a = N`) the steady velocity solves
//! `ν ∇²u = −g` with `u = 0` on the walls; its series solution (e.g. White, *Viscous Fluid
//! Flow*, 3rd ed., §3-3.3, eq. 3-48, for a square section) is
//!
//! ```text
//! u(Y, Z) = 4 g a² / (ν π³) Σ_{k odd} (−1)^((k−1)/2) / k³ · [1 − cosh(kπZ/a) / cosh(kπ/2)] · cos(kπY/a),
//! ```
//!
//! `ν = cs²(τ − ½)`. The report gives the relative L2 distance of the simulated cross-section
//! (averaged along x) from it. The TRT collision with Λ = 3/16 puts bounce-back walls exactly
//! half-way for any τ (Ginzburg et al. 2008), so the distance is the lattice's second-order
//! discretisation error alone.

use std::f64::consts::PI;

use super::{Case, relative_l2};
use crate::models::{D3Q19Trt, D3Q19TrtParams};
use crate::output::Fields;
use crate::{BoundarySpec, Model};

/// The duct case.
#[derive(Debug, Clone, PartialEq)]
pub struct Duct {
    /// Duct length in sites (periodic; the flow does not depend on x).
    pub lx: usize,
    /// Sites across the square section, `N`.
    pub n: usize,
    /// Relaxation time of the even moments (the viscosity).
    pub tau: f64,
    /// Body acceleration along x.
    pub acceleration: f64,
}

impl Duct {
    /// The magic parameter Λ of the TRT collision (walls exactly half-way).
    pub const MAGIC: f64 = 3.0 / 16.0;

    /// The viscosity `cs²(τ − ½)`.
    pub fn viscosity(&self) -> f64 {
        D3Q19Trt::CS2 * (self.tau - 0.5)
    }

    /// The steady velocity at site `(y, z)` of the section: the series, summed until its terms
    /// (bounded by `1/k³`) fall below 10⁻¹⁶ of the first.
    pub fn exact(&self, y: usize, z: usize) -> f64 {
        let a = self.n as f64;
        let [yy, zz] = [y, z].map(|p| (p as f64 + 0.5 - a / 2.0) / a);
        let mut sum = 0.0;
        for k in (1..).step_by(2).take_while(|&k| (k as f64).powi(3) < 1e16) {
            let kp = k as f64 * PI;
            // cosh(kπZ/a) / cosh(kπ/2), without overflow for large k.
            let ratio = (kp * (zz.abs() - 0.5)).exp() * (1.0 + (-2.0 * kp * zz.abs()).exp())
                / (1.0 + (-kp).exp());
            let sign = if k % 4 == 1 { 1.0 } else { -1.0 };
            sum += sign / (k as f64).powi(3) * (1.0 - ratio) * (kp * yy).cos();
        }
        4.0 * self.acceleration * a * a / (self.viscosity() * PI.powi(3)) * sum
    }
}

impl Case for Duct {
    type Model = D3Q19Trt;

    fn name(&self) -> &'static str {
        "duct"
    }

    fn size(&self) -> (usize, usize) {
        (self.lx, self.n)
    }

    fn depth(&self) -> usize {
        self.n
    }

    fn params(&self) -> D3Q19TrtParams {
        D3Q19TrtParams {
            tau: self.tau,
            magic: Self::MAGIC,
            ax: self.acceleration,
            ay: 0.0,
            az: 0.0,
        }
    }

    fn boundaries(&self) -> BoundarySpec {
        BoundarySpec::duct()
    }

    fn initial(&self) -> impl Fn(usize, usize) -> Vec<f64> + Sync + '_ {
        |_, _| vec![1.0, 0.0, 0.0, 0.0]
    }

    fn images(&self) -> &'static [&'static str] {
        &["ux"]
    }

    fn velocity_scale(&self) -> f64 {
        self.exact(self.n / 2, self.n / 2)
    }

    /// `Σ_x u_x(x, y, z)` for every site `z·N + y` of the section.
    fn sums(&self, f: &Fields) -> Vec<f64> {
        let mut section = vec![0.0; f.plane()];
        if let Some(ux) = f.moment("ux") {
            for (j, u) in ux.iter().enumerate() {
                section[j % f.plane()] += u;
            }
        }
        section
    }

    fn report(&self, step: u64, section: &[f64]) -> Vec<String> {
        let n = self.n;
        let mean = |s: usize| section[s] / self.lx as f64;
        let exact = |s: usize| self.exact(s % n, s / n);
        let err = relative_l2((0..n * n).map(mean), (0..n * n).map(exact));
        let centre = (n / 2) * n + n / 2;
        vec![format!(
            "duct flow after {step} steps, {n}×{n} section: centre u_x = {:.6e} (series \
             solution {:.6e}); relative L2 distance from the series {err:.2e}",
            mean(centre),
            exact(centre)
        )]
    }
}
