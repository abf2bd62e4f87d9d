//! Force-driven Poiseuille flow in a channel (D2Q9 BGK): periodic in x, half-way bounce-back
//! walls at `y = −½` and `y = H − ½`, body acceleration `a` along x. The steady profile is
//!
//! ```text
//! u_x(y) = a / (2ν) · (y + ½)(H − y − ½),    ν = cs²(τ − ½)
//! ```
//! and the report gives the relative L2 distance of the simulated profile from it.

use super::{Case, relative_l2};
use crate::models::{D2Q9Bgk, D2Q9BgkParams};
use crate::output::Fields;
use crate::{BoundarySpec, Model};

/// The Poiseuille case.
#[derive(Debug, Clone, PartialEq)]
pub struct Poiseuille {
    /// Channel length (periodic).
    pub lx: usize,
    /// Channel height H.
    pub ly: usize,
    /// Relaxation time.
    pub tau: f64,
    /// Body acceleration along x.
    pub acceleration: f64,
}

impl Poiseuille {
    /// The steady profile at height `y`.
    pub fn exact(&self, y: usize) -> f64 {
        let nu = D2Q9Bgk::CS2 * (self.tau - 0.5);
        let s = y as f64 + 0.5;
        self.acceleration / (2.0 * nu) * s * (self.ly as f64 - s)
    }
}

impl Case for Poiseuille {
    type Model = D2Q9Bgk;

    fn name(&self) -> &'static str {
        "poiseuille"
    }

    fn size(&self) -> (usize, usize) {
        (self.lx, self.ly)
    }

    fn params(&self) -> D2Q9BgkParams {
        D2Q9BgkParams {
            tau: self.tau,
            ax: self.acceleration,
            ay: 0.0,
        }
    }

    fn boundaries(&self) -> BoundarySpec {
        BoundarySpec::channel()
    }

    fn initial(&self) -> impl Fn(usize, usize) -> Vec<f64> + Sync + '_ {
        |_, _| vec![1.0, 0.0, 0.0]
    }

    fn images(&self) -> &'static [&'static str] {
        &["ux"]
    }

    fn velocity_scale(&self) -> f64 {
        self.exact(self.ly / 2)
    }

    /// `Σ_x u_x(x, y)` for every row `y`.
    fn sums(&self, f: &Fields) -> Vec<f64> {
        let mut rows = vec![0.0; f.ly];
        if let Some(ux) = f.moment("ux") {
            for (s, u) in ux.iter().enumerate() {
                rows[s % f.ly] += u;
            }
        }
        rows
    }

    fn report(&self, step: u64, rows: &[f64]) -> Vec<String> {
        let mean = |y: usize| rows[y] / self.lx as f64;
        let err = relative_l2((0..self.ly).map(mean), (0..self.ly).map(|y| self.exact(y)));
        vec![format!(
            "Poiseuille profile after {step} steps: centre u_x = {:.6e} (steady theory {:.6e}); \
             relative L2 distance from the parabola {err:.2e}",
            mean(self.ly / 2),
            self.exact(self.ly / 2)
        )]
    }
}
