//! The lid-driven cavity (D2Q9; Szőke et al. 2017 benchmark it): an `n × n` box with bounce-back
//! walls and a lid moving at `U`, `τ = U n / (Re cs²) + ½`. At steady state the centre-line
//! profiles are compared with Ghia, Ghia & Shin (1982) ([`crate::cavity`]).

use super::Case;
use crate::cavity::{centre_weight, compare_lines, ghia};
use crate::models::{
    D2Q9Bgk, D2Q9BgkParams, D2Q9CentralMrt, D2Q9CentralMrtParams, D2Q9Mrt, D2Q9Regularized,
    D2Q9RegularizedParams, D2Q9Smagorinsky, D2Q9SmagorinskyParams,
};
use crate::output::Fields;
use crate::{BoundarySpec, Model};

/// The cavity with model `M` (D2Q9 BGK, MRT, central-moment MRT, regularized BGK or BGK with
/// Smagorinsky's eddy viscosity).
#[derive(Clone, PartialEq)]
pub struct Cavity<M: Model> {
    /// Lattice side.
    pub n: usize,
    /// Reynolds number `U n / ν`.
    pub re: f64,
    /// Lid speed in lattice units.
    pub lid: f64,
    /// The model's parameters.
    pub params: M::Params,
}

/// The model's name, the size, the flow's numbers and the parameters (what a checkpoint of the
/// case records of it).
impl<M: Model> std::fmt::Debug for Cavity<M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cavity")
            .field("model", &M::NAME)
            .field("n", &self.n)
            .field("re", &self.re)
            .field("lid", &self.lid)
            .field("params", &self.params)
            .finish()
    }
}

/// Relaxation time for Reynolds number `re` on an `n`-site cavity with lid speed `lid`:
/// `ν = U n / Re`, `τ = ν / cs² + ½`.
pub fn tau_for(re: f64, n: usize, lid: f64) -> f64 {
    lid * n as f64 / re / D2Q9Bgk::CS2 + 0.5
}

impl Cavity<D2Q9Bgk> {
    /// The cavity with BGK collision.
    pub fn bgk(n: usize, re: f64, lid: f64) -> Self {
        let params = D2Q9BgkParams {
            tau: tau_for(re, n, lid),
            ax: 0.0,
            ay: 0.0,
        };
        Self { n, re, lid, params }
    }
}

impl Cavity<D2Q9Mrt> {
    /// The cavity with MRT collision: Lallemand & Luo's `s_e = 1.64`, `s_ε = 1.54`, and
    /// `s_q = 8(2 − s_ν)/(8 − s_ν)`, which puts bounce-back walls exactly half-way.
    pub fn mrt(n: usize, re: f64, lid: f64) -> Self {
        let params = super::mrt_half_way(tau_for(re, n, lid));
        Self { n, re, lid, params }
    }
}

impl Cavity<D2Q9CentralMrt> {
    /// The cavity with the central-moment MRT collision, every moment but the stress taken to
    /// equilibrium in one step.
    pub fn central_mrt(n: usize, re: f64, lid: f64) -> Self {
        let params = D2Q9CentralMrtParams::with_tau(tau_for(re, n, lid));
        Self { n, re, lid, params }
    }
}

impl Cavity<D2Q9Regularized> {
    /// The cavity with the regularized BGK collision.
    pub fn regularized(n: usize, re: f64, lid: f64) -> Self {
        let params = D2Q9RegularizedParams {
            tau: tau_for(re, n, lid),
            ax: 0.0,
            ay: 0.0,
        };
        Self { n, re, lid, params }
    }
}

impl Cavity<D2Q9Smagorinsky> {
    /// The cavity with Smagorinsky's eddy viscosity of constant `c` on BGK.
    pub fn smagorinsky(n: usize, re: f64, lid: f64, c: f64) -> Self {
        let params = D2Q9SmagorinskyParams {
            tau: tau_for(re, n, lid),
            c_smag: c,
            ax: 0.0,
            ay: 0.0,
        };
        Self { n, re, lid, params }
    }
}

impl<M: Model> Case for Cavity<M> {
    type Model = M;

    fn name(&self) -> &'static str {
        "cavity"
    }

    fn size(&self) -> (usize, usize) {
        (self.n, self.n)
    }

    fn params(&self) -> M::Params {
        self.params.clone()
    }

    fn boundaries(&self) -> BoundarySpec {
        BoundarySpec::cavity(self.lid)
    }

    fn initial(&self) -> impl Fn(usize, usize) -> Vec<f64> + Sync + '_ {
        |_, _| vec![1.0, 0.0, 0.0]
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

    /// The centre-lines: `u[y]` along the vertical one, then `v[x]` along the horizontal one
    /// (midway between the two middle sites when the side is even).
    fn sums(&self, f: &Fields) -> Vec<f64> {
        centre_lines(self.n, f)
    }

    fn report(&self, _step: u64, lines: &[f64]) -> Vec<String> {
        let re = self.re.round() as u32;
        let reference = match ghia(re) {
            Ok(r) if (self.re - re as f64).abs() < 1e-9 => r,
            _ => {
                return vec![format!(
                    "no reference data for Re = {} (Ghia et al. tabulate Re = 100, 400, 1000, 3200, 5000, 7500 and 10000)",
                    self.re
                )];
            }
        };
        let (u, v) = lines.split_at(self.n);
        let dev = compare_lines(u, v, self.lid, &reference);
        let mut lines = vec![format!(
            "deviation from Ghia et al. (1982), Re = {re}, in lid units: u(y) {:.4}, v(x) {:.4}, max {:.4}",
            dev.u,
            dev.v,
            dev.max()
        )];
        if let Some((p, val)) = dev.worst {
            lines.push(format!(
                "largest at {:?} coordinate {}: computed {val:.5}, reference {:.5}",
                p.profile, p.coord, p.value
            ));
        }
        lines
    }
}

/// The centre-lines of an `n × n` cavity (of the mid-plane `z = LZ/2` of a cube): `u[y]`
/// along the vertical one, then `v[x]` along the horizontal one, midway between the two middle
/// sites when a side is even ([`centre_weight`]); the sums of a piece of the lattice, added
/// over the pieces.
pub(super) fn centre_lines(n: usize, f: &Fields) -> Vec<f64> {
    let mut lines = vec![0.0; 2 * n];
    if let (Some(ux), Some(uy)) = (f.moment("ux"), f.moment("uy")) {
        for (j, (u, v)) in ux.iter().zip(uy).enumerate() {
            let (x, s) = f.site(j);
            let (y, z) = (s % n, s / n);
            let wz = centre_weight(f.lz, z);
            lines[y] += wz * centre_weight(n, x) * u;
            lines[n + x] += wz * centre_weight(n, y) * v;
        }
    }
    lines
}
