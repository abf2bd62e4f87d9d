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
    /// The viscosity `cs²(τ − ½)`.
    pub fn viscosity(&self) -> f64 {
        D3Q19Trt::CS2 * (self.tau - 0.5)
    }

    /// The steady velocity at site `(y, z)` of the section. The series' first part is the
    /// Fourier series of the plane channel's parabola,
    /// `Σ_{k odd} (−1)^((k−1)/2) cos(kπY/a) / k³ = (π³/8)(¼ − Y²/a²)` for `|Y| ≤ a/2`, so
    ///
    /// ```text
    /// u(Y, Z) = g/(2ν) (a²/4 − Y²)
    ///         − 4 g a² / (ν π³) Σ_{k odd} (−1)^((k−1)/2) / k³ · cosh(kπZ/a) / cosh(kπ/2) · cos(kπY/a),
    /// ```
    ///
    /// whose terms fall as `exp(−kπ (½ − |Z|/a))`: at a site's centre, at least half a site
    /// from the wall, a few `N` terms reach round-off (the sum of the first form falls as
    /// `1/k³` only and needs some 10⁵ terms a site).
    pub fn exact(&self, y: usize, z: usize) -> f64 {
        let a = self.n as f64;
        let [yy, zz] = [y, z].map(|p| (p as f64 + 0.5 - a / 2.0) / a);
        let mut sum = PI.powi(3) / 8.0 * (0.25 - yy * yy);
        for k in (1..).step_by(2) {
            let kp = k as f64 * PI;
            // cosh(kπZ/a) / cosh(kπ/2), without overflow for large k.
            let ratio = (kp * (zz.abs() - 0.5)).exp() * (1.0 + (-2.0 * kp * zz.abs()).exp())
                / (1.0 + (-kp).exp());
            let term = ratio / (k as f64).powi(3);
            if term < 1e-18 {
                break;
            }
            let sign = if k % 4 == 1 { 1.0 } else { -1.0 };
            sum -= sign * term * (kp * yy).cos();
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
        super::trt_half_way(self.tau, self.acceleration)
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The exponentially convergent form gives the series' first form, summed term by term
    /// to `k ≈ 2·10⁵` (where its terms fall below 10⁻¹⁶ of the first; what it leaves out,
    /// `Σ_{k>K} 1/k³ ≈ 1/(4K²)`, is about 10⁻¹¹ of the centre's value).
    #[test]
    fn the_series_in_both_forms_agree() {
        let duct = Duct {
            lx: 1,
            n: 16,
            tau: 0.8,
            acceleration: 1e-6,
        };
        let a = duct.n as f64;
        let first_form = |y: usize, z: usize| {
            let [yy, zz] = [y, z].map(|p| (p as f64 + 0.5 - a / 2.0) / a);
            let mut sum = 0.0;
            for k in (1..).step_by(2).take_while(|&k| (k as f64).powi(3) < 1e16) {
                let kp = k as f64 * PI;
                let ratio = (kp * (zz.abs() - 0.5)).exp() * (1.0 + (-2.0 * kp * zz.abs()).exp())
                    / (1.0 + (-kp).exp());
                let sign = if k % 4 == 1 { 1.0 } else { -1.0 };
                sum += sign / (k as f64).powi(3) * (1.0 - ratio) * (kp * yy).cos();
            }
            4.0 * duct.acceleration * a * a / (duct.viscosity() * PI.powi(3)) * sum
        };
        let centre = duct.exact(8, 8);
        for (y, z) in [(0, 0), (0, 8), (8, 0), (8, 8), (3, 12), (15, 15)] {
            let (fast, slow) = (duct.exact(y, z), first_form(y, z));
            assert!(
                (fast - slow).abs() < 1e-10 * centre,
                "({y}, {z}): {fast} vs {slow}"
            );
        }
        let (yz, zy) = (duct.exact(3, 12), duct.exact(12, 3));
        assert!(
            (yz - zy).abs() < 1e-13 * centre,
            "not symmetric: {yz} vs {zy}"
        );
    }
}
