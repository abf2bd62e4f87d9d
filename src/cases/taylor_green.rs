//! The decaying Taylor–Green vortex on a periodic `n × n` lattice (D2Q9 BGK):
//!
//! ```text
//! u_x = −u₀ cos(kx) sin(ky) e^{−2νk²t},   u_y = u₀ sin(kx) cos(ky) e^{−2νk²t},   k = 2π/n
//! ```
//! with `ν = cs²(τ − ½)`. The report projects the simulated velocity on the mode to measure
//! its amplitude, and from its decay the viscosity, compared with `cs²(τ − ½)`.

use std::f64::consts::PI;

use super::{relative_l2, Case};
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

    fn report(&self, f: &Fields) -> Vec<String> {
        let (ux, uy) = match (f.moment("ux"), f.moment("uy")) {
            (Some(a), Some(b)) => (a, b),
            _ => return vec!["no velocity field".into()],
        };
        let modes: Vec<(f64, f64)> = (0..f.lx * f.ly)
            .map(|s| self.mode(s / f.ly, s % f.ly))
            .collect();
        let proj: f64 = modes
            .iter()
            .enumerate()
            .map(|(s, (mx, my))| ux[s] * mx + uy[s] * my)
            .sum();
        let norm: f64 = modes.iter().map(|(mx, my)| mx * mx + my * my).sum();
        let amplitude = proj / norm;
        // The moments after n steps are those of the populations streamed once more: t = n + 1.
        let t = f.step as f64 + 1.0;
        let k2 = 2.0 * self.k().powi(2);
        let nu = self.viscosity();
        let exact = self.u0 * (-nu * k2 * t).exp();
        let mut lines = vec![format!(
            "Taylor–Green amplitude after {} steps: {amplitude:.6e} (theory {exact:.6e})",
            f.step
        )];
        if f.step > 0 && amplitude > 0.0 {
            let measured = (self.u0 / amplitude).ln() / (k2 * t);
            let err = relative_l2(
                ux.iter().chain(uy).copied(),
                modes
                    .iter()
                    .map(|m| exact * m.0)
                    .chain(modes.iter().map(|m| exact * m.1)),
            );
            lines.push(format!(
                "viscosity from the decay: {measured:.6e}, cs²(τ − ½) = {nu:.6e} \
                 ({:+.3}%); velocity field vs theory: relative L2 {err:.2e}",
                100.0 * (measured / nu - 1.0)
            ));
        }
        lines
    }
}
