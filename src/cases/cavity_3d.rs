//! The lid-driven cube (D3Q19 TRT): an `N³` box of half-way bounce-back walls whose top
//! (`y = N − ½`) moves along x at `U`, at Reynolds number `Re = U N / ν`,
//! `τ = U N / (Re cs²) + ½`. At steady state the case writes the centre-line profiles of the
//! mid-plane `z = N/2` — `u(y)/U` along the vertical line `x = N/2` and `v(x)/U` along the
//! horizontal line `y = N/2` — as CSV, to compare with published data: Ku, Hirsh & Taylor
//! (1987), J. Comput. Phys. 70, 439 (Re = 100, 400, 1000), and Albensoeder & Kuhlmann (2005),
//! J. Comput. Phys. 206, 536 (Re = 1000). The TRT collision with Λ = 3/16 puts the walls
//! exactly half-way (Ginzburg et al. 2008).

use super::Case;
use super::cavity::centre_lines;
use crate::models::{D3Q19Trt, D3Q19TrtParams};
use crate::output::{Fields, Table};
use crate::{BoundarySpec, Model};

/// The lid-driven cube.
#[derive(Debug, Clone, PartialEq)]
pub struct Cavity3d {
    /// Cube side, sites.
    pub n: usize,
    /// Reynolds number `U n / ν`.
    pub re: f64,
    /// Lid speed, lattice units.
    pub lid: f64,
}

impl Cavity3d {
    /// The relaxation time `U n / (Re cs²) + ½`.
    pub fn tau(&self) -> f64 {
        self.lid * self.n as f64 / self.re / D3Q19Trt::CS2 + 0.5
    }

    /// `(coordinate/N, u(y)/U, v(x)/U)` at each of the `N` sites of the centre lines, from
    /// [`Case::sums`].
    fn profiles<'a>(&'a self, lines: &'a [f64]) -> impl Iterator<Item = [f64; 3]> + 'a {
        let n = self.n;
        (0..n).map(move |i| {
            [
                (i as f64 + 0.5) / n as f64,
                lines[i] / self.lid,
                lines[n + i] / self.lid,
            ]
        })
    }
}

impl Case for Cavity3d {
    type Model = D3Q19Trt;

    fn name(&self) -> &'static str {
        "cavity-3d"
    }

    fn size(&self) -> (usize, usize) {
        (self.n, self.n)
    }

    fn depth(&self) -> usize {
        self.n
    }

    fn params(&self) -> D3Q19TrtParams {
        D3Q19TrtParams {
            tau: self.tau(),
            magic: 3.0 / 16.0,
            ax: 0.0,
            ay: 0.0,
            az: 0.0,
        }
    }

    fn boundaries(&self) -> BoundarySpec {
        BoundarySpec::cavity_3d(self.lid)
    }

    fn initial(&self) -> impl Fn(usize, usize) -> Vec<f64> + Sync + '_ {
        |_, _| vec![1.0, 0.0, 0.0, 0.0]
    }

    fn images(&self) -> &'static [&'static str] {
        &["speed", "vorticity"]
    }

    fn image_range(&self, field: &str) -> Option<(f64, f64)> {
        (field == "speed").then_some((0.0, self.lid))
    }

    fn velocity_scale(&self) -> f64 {
        self.lid
    }

    /// The centre lines of the mid-plane: `u[y]` along the vertical one, then `v[x]` along
    /// the horizontal one (midway between the two middle sites when the side is even).
    fn sums(&self, f: &Fields) -> Vec<f64> {
        centre_lines(self.n, f)
    }

    fn tables(&self, _step: u64, lines: &[f64]) -> Vec<Table> {
        vec![Table {
            name: "centrelines",
            columns: vec!["coordinate", "u(y)/U", "v(x)/U"],
            rows: self.profiles(lines).map(Vec::from).collect(),
        }]
    }

    fn report(&self, step: u64, lines: &[f64]) -> Vec<String> {
        let p: Vec<[f64; 3]> = self.profiles(lines).collect();
        let extreme = |col: usize, min: bool| {
            p.iter()
                .map(|r| (r[col], r[0]))
                .min_by(|a, b| {
                    let o = a.0.total_cmp(&b.0);
                    if min { o } else { o.reverse() }
                })
                .unwrap_or((f64::NAN, f64::NAN))
        };
        let (umin, yu) = extreme(1, true);
        let (vmin, xvmin) = extreme(2, true);
        let (vmax, xvmax) = extreme(2, false);
        vec![format!(
            "lid-driven cube, Re = {}, {}³, τ = {:.6}, after {step} steps, mid-plane z = N/2: \
             min u/U = {umin:.4} at y/N = {yu:.3}; v/U from {vmin:.4} (x/N = {xvmin:.3}) to \
             {vmax:.4} (x/N = {xvmax:.3}); the profiles are in the centrelines CSV (compare with \
             Ku, Hirsh & Taylor 1987)",
            self.re,
            self.n,
            self.tau()
        )]
    }
}
