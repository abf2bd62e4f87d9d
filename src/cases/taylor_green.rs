//! The decaying Taylor–Green vortex on a periodic `n × n` lattice (D2Q9 BGK):
//!
//! ```text
//! u_x = −u₀ cos(kx) sin(ky) e^{−2νk²t},   u_y = u₀ sin(kx) cos(ky) e^{−2νk²t},   k = 2π/n
//! ```
//! with `ν = cs²(τ − ½)`. The report projects the simulated velocity on the mode to measure
//! its amplitude, and from its decay the viscosity, compared with `cs²(τ − ½)`.

use std::f64::consts::PI;

use super::Case;
use crate::models::{D2Q9Bgk, D2Q9BgkParams};
use crate::output::Fields;
use crate::{BoundarySpec, Model};

/// The Taylor–Green case.
#[derive(Debug, Clone, PartialEq)]
pub struct TaylorGreen {
    /// Lattice side.
    pub n: usize,
    /// Relaxation time.
    pub tau: f64,
    /// Initial velocity amplitude.
    pub u0: f64,
}

impl TaylorGreen {
    fn k(&self) -> f64 {
        2.0 * PI / self.n as f64
    }

    /// The unit velocity mode `(−cos kx sin ky, sin kx cos ky)` at site `(x, y)`.
    fn mode(&self, x: usize, y: usize) -> (f64, f64) {
        let (kx, ky) = (self.k() * x as f64, self.k() * y as f64);
        (-kx.cos() * ky.sin(), kx.sin() * ky.cos())
    }

    /// The initial moments: the mode with amplitude `u₀` and the pressure
    /// `p = p₀ − ρu₀²/4 (cos 2kx + cos 2ky)`, `p = cs² ρ`.
    fn state(&self, x: usize, y: usize) -> Vec<f64> {
        let (mx, my) = self.mode(x, y);

        let (kx, ky) = (self.k() * x as f64, self.k() * y as f64);
        let rho =
            1.0 - self.u0 * self.u0 / (4.0 * D2Q9Bgk::CS2) * ((2.0 * kx).cos() + (2.0 * ky).cos());
        vec![rho, self.u0 * mx, self.u0 * my]
    }

    /// The viscosity of the model, `cs²(τ − ½)`.
    pub fn viscosity(&self) -> f64 {
        D2Q9Bgk::CS2 * (self.tau - 0.5)
    }
}

impl Case for TaylorGreen {
    type Model = D2Q9Bgk;

    fn name(&self) -> &'static str {
        "taylor-green"
    }

    fn size(&self) -> (usize, usize) {
        (self.n, self.n)
    }

    fn params(&self) -> D2Q9BgkParams {
        D2Q9BgkParams {
            tau: self.tau,
            ax: 0.0,
            ay: 0.0,
        }
    }

    fn boundaries(&self) -> BoundarySpec {
        BoundarySpec::periodic()
    }

    fn initial(&self) -> impl Fn(usize, usize) -> Vec<f64> + Sync + '_ {
        move |x, y| self.state(x, y)
    }

    fn images(&self) -> &'static [&'static str] {
        &["vorticity", "speed"]
    }

    fn velocity_scale(&self) -> f64 {
        self.u0
    }

    /// `[Σ u·m, Σ |m|², Σ |u|²]` with `m(x, y)` the vortex's mode: the projection of the
    /// velocity on it, and what the distance from it is made of.
    fn sums(&self, f: &Fields) -> Vec<f64> {
        let (Some(ux), Some(uy)) = (f.moment("ux"), f.moment("uy")) else {
            return vec![0.0; 3];
        };
        let mut sums = vec![0.0; 3];
        for (s, (u, v)) in ux.iter().zip(uy).enumerate() {
            let (x, y) = f.site(s);
            let (mx, my) = self.mode(x, y);
            sums[0] += u * mx + v * my;
            sums[1] += mx * mx + my * my;
            sums[2] += u * u + v * v;
        }
        sums
    }

    fn report(&self, step: u64, sums: &[f64]) -> Vec<String> {
        let [proj, norm, u2] = sums[..] else {
            return vec!["no velocity field".into()];
        };
        let amplitude = proj / norm;
        // The moments after n steps are those of the populations streamed once more: t = n + 1.
        let t = step as f64 + 1.0;
        let k2 = 2.0 * self.k().powi(2);
        let nu = self.viscosity();
        let exact = self.u0 * (-nu * k2 * t).exp();
        let mut lines = vec![format!(
            "Taylor–Green amplitude after {step} steps: {amplitude:.6e} (theory {exact:.6e})"
        )];
        if step > 0 && amplitude > 0.0 {
            let measured = (self.u0 / amplitude).ln() / (k2 * t);
            // ‖u − e m‖² = Σ|u|² − 2e Σ u·m + e² Σ|m|², against ‖e m‖².
            let err = ((u2 - 2.0 * exact * proj + exact * exact * norm).max(0.0)
                / (exact * exact * norm))
                .sqrt();
            lines.push(format!(
                "viscosity from the decay: {measured:.6e}, cs²(τ − ½) = {nu:.6e} \
                 ({:+.3}%); velocity field vs theory: relative L2 {err:.2e}",
                100.0 * (measured / nu - 1.0)
            ));
        }
        lines
    }
}
