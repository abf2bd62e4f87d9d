//! The three-dimensional Taylor–Green vortex at Reynolds number `Re = U₀L/ν` in a periodic cube
//! of `n³` sites (`L = n/2π`), the benchmark of the high-order CFD workshops, with D3Q19 MRT:
//!
//! ```text
//! u =  U₀ sin(x/L) cos(y/L) cos(z/L),   v = −U₀ cos(x/L) sin(y/L) cos(z/L),   w = 0,
//! p = p₀ + ρ₀U₀²/16 (cos(2x/L) + cos(2y/L)) (cos(2z/L) + 2)
//! ```
//!
//! The vortex stretches, breaks down into small structures and decays. The case reports the
//! kinetic energy `E* = ⟨ρ|u|²⟩ / (2U₀²)` against the convective time `t* = tU₀/L`, its
//! dissipation rate `ε* = −dE*/dt*` (central differences of the diagnostics' history), and the
//! peak of `ε*` — the vertex of the parabola through the samples around it — against the DNS
//! of van Rees, Leonard, Pullin & Koumoutsakos (2011), "A comparison of vortex and
//! pseudo-spectral methods for the simulation of periodic vortical flows at high Reynolds
//! numbers", J. Comput. Phys. 230, 2794–2805: at Re = 1600, `ε*` peaks at 0.0127 near
//! `t* ≈ 9` ([`TaylorGreen3d::DNS_PEAK`]). It also reports the dissipation of the resolved strain,
//! `2ν⟨S:S⟩ L/U₀³` (`S` by second-order central differences): in a resolved DNS the two are
//! equal, and their difference shows how much of the decay happens below the lattice's scale.
//!
//! The collision is MRT (d'Humières et al. 2002) with their ghost rates by default: at
//! Re = 1600 on 128³, τ − ½ is 2·10⁻³ and BGK is unstable. The same vortex runs with
//! Smagorinsky's eddy viscosity on MRT ([`TaylorGreen3d::smagorinsky`], a large-eddy simulation
//! for lattices too coarse for the DNS's scales), with the central-moment MRT on D3Q27
//! ([`TaylorGreen3d::central_mrt`]), with the regularized BGK ([`TaylorGreen3d::regularized`])
//! and with BGK ([`TaylorGreen3d::bgk`]).

use std::f64::consts::PI;
use std::sync::Mutex;

use rayon::prelude::*;

use super::Case;
use crate::models::{
    D3Q19Bgk, D3Q19BgkParams, D3Q19Mrt, D3Q19MrtParams, D3Q19MrtSmagorinsky,
    D3Q19MrtSmagorinskyParams, D3Q19Regularized, D3Q19RegularizedParams, D3Q27CentralMrt,
    D3Q27CentralMrtParams,
};
use crate::output::Fields;
use crate::{BoundarySpec, Model};

/// The 3-D Taylor–Green case with model `M`.
pub struct TaylorGreen3d<M: Model = D3Q19Mrt> {
    /// Cube side, in sites.
    pub n: usize,
    /// Reynolds number `U₀L/ν`.
    pub re: f64,
    /// Velocity amplitude `U₀`, lattice units.
    pub u0: f64,
    /// The model's parameters (their relaxation time from `re`).
    pub params: M::Params,
    /// `(t*, E*, ε*)` of every diagnostics row so far.
    history: Mutex<Vec<(f64, f64, f64)>>,
}

/// The model's name, the size, the flow's numbers and the parameters (what a checkpoint of the
/// case records of it; not the history of the run so far).
impl<M: Model> std::fmt::Debug for TaylorGreen3d<M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaylorGreen3d")
            .field("model", &M::NAME)
            .field("n", &self.n)
            .field("re", &self.re)
            .field("u0", &self.u0)
            .field("params", &self.params)
            .finish()
    }
}

impl TaylorGreen3d<D3Q19Mrt> {
    /// The vortex on an `n³` cube at Reynolds number `re` with amplitude `u0`, with
    /// d'Humières et al. (2002)'s rates for the non-hydrodynamic moments.
    pub fn new(n: usize, re: f64, u0: f64) -> Self {
        Self::with(n, re, u0, D3Q19MrtParams::with_tau)
    }
}

impl TaylorGreen3d<D3Q19MrtSmagorinsky> {
    /// The vortex with Smagorinsky's eddy viscosity of constant `c` on the MRT collision: the
    /// relaxation time of the stress from its local value (Hou et al. 1996).
    pub fn smagorinsky(n: usize, re: f64, u0: f64, c: f64) -> Self {
        Self::with(n, re, u0, |tau| D3Q19MrtSmagorinskyParams::with_tau(tau, c))
    }
}

impl TaylorGreen3d<D3Q27CentralMrt> {
    /// The vortex with the central-moment MRT on D3Q27, the higher moments taken to
    /// equilibrium in one step.
    pub fn central_mrt(n: usize, re: f64, u0: f64) -> Self {
        Self::with(n, re, u0, D3Q27CentralMrtParams::with_tau)
    }
}

impl TaylorGreen3d<D3Q19Regularized> {
    /// The vortex with the regularized BGK on D3Q19.
    pub fn regularized(n: usize, re: f64, u0: f64) -> Self {
        Self::with(n, re, u0, |tau| D3Q19RegularizedParams {
            tau,
            ax: 0.0,
            ay: 0.0,
            az: 0.0,
        })
    }
}

impl TaylorGreen3d<D3Q19Bgk> {
    /// The vortex with BGK on D3Q19 (unstable at Re = 1600 below about 256³).
    pub fn bgk(n: usize, re: f64, u0: f64) -> Self {
        Self::with(n, re, u0, |tau| D3Q19BgkParams {
            tau,
            ax: 0.0,
            ay: 0.0,
            az: 0.0,
        })
    }
}

impl<M: Model> TaylorGreen3d<M> {
    /// The peak dissipation rate `ε*` of the DNS and the time `t*` of the peak (van Rees et al.
    /// 2011, Re = 1600).
    pub const DNS_PEAK: (f64, f64) = (0.0127, 9.0);

    /// The vortex with the parameters `params(τ)` of the relaxation time of `re`.
    fn with(n: usize, re: f64, u0: f64, params: impl FnOnce(f64) -> M::Params) -> Self {
        let tau = 0.5 + u0 * n as f64 / (2.0 * PI) / re / M::CS2;
        Self {
            n,
            re,
            u0,
            params: params(tau),
            history: Mutex::new(Vec::new()),
        }
    }

    /// The length scale `L = n/2π`.
    pub fn length(&self) -> f64 {
        self.n as f64 / (2.0 * PI)
    }

    /// The viscosity `U₀L/Re`.
    pub fn viscosity(&self) -> f64 {
        self.u0 * self.length() / self.re
    }

    /// The relaxation time of the stress moments, `½ + ν/cs²`.
    pub fn tau(&self) -> f64 {
        0.5 + self.viscosity() / M::CS2
    }

    /// Steps per convective time unit `L/U₀`.
    pub fn steps_per_time(&self) -> f64 {
        self.length() / self.u0
    }

    /// `(x/L, y/L, z/L)` of plane site `s` of column `x`.
    fn angles(&self, x: usize, s: usize) -> [f64; 3] {
        let k = 2.0 * PI / self.n as f64;
        [x, s % self.n, s / self.n].map(|a| k * a as f64)
    }

    fn state(&self, x: usize, s: usize) -> Vec<f64> {
        let [a, b, c] = self.angles(x, s);
        let u0 = self.u0;
        let dp = u0 * u0 / 16.0 * ((2.0 * a).cos() + (2.0 * b).cos()) * ((2.0 * c).cos() + 2.0);
        vec![
            1.0 + dp / M::CS2,
            u0 * a.sin() * b.cos() * c.cos(),
            -u0 * a.cos() * b.sin() * c.cos(),
            0.0,
        ]
    }

    /// `(t*, E*, 2ν⟨S:S⟩*)` after `step` steps from [`Case::sums`] of the whole lattice (the
    /// moments after `step` steps are those of the populations streamed once more: `t = step + 1`).
    fn row(&self, step: u64, sums: &[f64]) -> Option<(f64, f64, f64)> {
        let [e2, ss] = sums[..] else {
            return None;
        };
        let sites = (self.n * self.n * self.n) as f64;
        let u0 = self.u0;
        let energy = e2 / (2.0 * sites * u0 * u0);
        let dissipation = 2.0 * self.viscosity() * ss / sites * self.length() / (u0 * u0 * u0);
        Some((
            (step + 1) as f64 / self.steps_per_time(),
            energy,
            dissipation,
        ))
    }
}

/// The peak of `samples` `(t, v)`: the vertex of the parabola through the largest sample
/// and its neighbours (the sample itself at an end).
fn vertex(samples: &[(f64, f64)]) -> Option<(f64, f64)> {
    let (j, _) = samples
        .iter()
        .enumerate()
        .max_by(|a, b| a.1.1.total_cmp(&b.1.1))?;
    if j == 0 || j + 1 == samples.len() {
        let (t, v) = samples[j];
        return Some((v, t));
    }
    let [(t0, v0), (t1, v1), (t2, v2)] = [samples[j - 1], samples[j], samples[j + 1]];
    // Lagrange parabola through the three points, its vertex.
    let d01 = (v1 - v0) / (t1 - t0);
    let d12 = (v2 - v1) / (t2 - t1);
    let a = (d12 - d01) / (t2 - t0);
    if a >= 0.0 {
        return Some((v1, t1));
    }
    let b = d01 - a * (t0 + t1);
    let tp = -b / (2.0 * a);
    let vp = v1 + d01 * (tp - t1) + a * (tp - t0) * (tp - t1);
    Some((vp, tp))
}

impl<M: Model> Case for TaylorGreen3d<M> {
    type Model = M;

    fn name(&self) -> &'static str {
        "taylor-green-3d"
    }

    fn size(&self) -> (usize, usize) {
        (self.n, self.n)
    }

    fn depth(&self) -> usize {
        self.n
    }

    fn params(&self) -> M::Params {
        self.params.clone()
    }

    fn boundaries(&self) -> BoundarySpec {
        BoundarySpec::periodic()
    }

    fn initial(&self) -> impl Fn(usize, usize) -> Vec<f64> + Sync + '_ {
        move |x, s| self.state(x, s)
    }

    fn images(&self) -> &'static [&'static str] {
        &["speed"]
    }

    fn time_unit(&self) -> f64 {
        1.0 / self.steps_per_time()
    }

    fn velocity_scale(&self) -> f64 {
        self.u0
    }

    /// `[Σ ρ|u|², Σ S:S]` over the sites of the piece; the strain rate by second-order central
    /// differences, periodic on every axis: across the edges of a rank's slab with its
    /// neighbours' planes ([`Case::needs_neighbour_columns`]), so that the sums over the
    /// ranks are those of the whole cube.
    fn sums(&self, f: &Fields) -> Vec<f64> {
        let n = self.n;
        let nx = f.planes().len();
        if nx == 0 || f.len() != nx * n * n {
            return vec![0.0; 2];
        }
        // Column `x` (−1 and `nx` the neighbours'; a whole cube wraps around).
        let column = |name: &str, x: isize| match f.column(name, x) {
            None if nx == n => f.column(name, x.rem_euclid(n as isize)),
            col => col,
        };
        let velocity = |x: isize| Some([column("ux", x)?, column("uy", x)?, column("uz", x)?]);
        let at = |y: usize, z: usize| z * n + y;
        // One plane's `[Σ ρ|u|², Σ S:S]`; the planes in parallel.
        let plane = |x: isize| -> [f64; 2] {
            let (Some(rho), Some(u_prev), Some(u), Some(u_next)) = (
                column("rho", x),
                velocity(x - 1),
                velocity(x),
                velocity(x + 1),
            ) else {
                return [f64::NAN; 2];
            };
            let mut sums = [0.0; 2];
            for z in 0..n {
                for y in 0..n {
                    let j = at(y, z);
                    sums[0] += rho[j] * (u[0][j] * u[0][j] + u[1][j] * u[1][j] + u[2][j] * u[2][j]);
                    let next = [
                        (at((y + 1) % n, z), at((y + n - 1) % n, z)),
                        (at(y, (z + 1) % n), at(y, (z + n - 1) % n)),
                    ];
                    // g[a][b] = ∂_b u_a.
                    let g: [[f64; 3]; 3] = std::array::from_fn(|a| {
                        std::array::from_fn(|b| match b {
                            0 => 0.5 * (u_next[a][j] - u_prev[a][j]),
                            _ => {
                                let (p, m) = next[b - 1];
                                0.5 * (u[a][p] - u[a][m])
                            }
                        })
                    });
                    sums[1] += (0..9)
                        .map(|ab| (0.5 * (g[ab / 3][ab % 3] + g[ab % 3][ab / 3])).powi(2))
                        .sum::<f64>();
                }
            }
            sums
        };
        let planes: Vec<[f64; 2]> = (0..nx as isize).into_par_iter().map(plane).collect();
        // Added in plane order: the same sums whatever the threads.
        planes
            .iter()
            .fold(vec![0.0; 2], |acc, p| vec![acc[0] + p[0], acc[1] + p[1]])
    }

    fn needs_neighbour_columns(&self) -> bool {
        true
    }

    /// `E*` and the resolved strain's dissipation (and `t*` in the time column:
    /// [`Case::time_unit`]), remembered for the report.
    fn extra_diagnostics(&self, step: u64, sums: &[f64]) -> Vec<(&'static str, f64)> {
        let Some((t, energy, dissipation)) = self.row(step, sums) else {
            return Vec::new();
        };
        let mut h = self.history.lock().unwrap_or_else(|e| e.into_inner());
        h.retain(|&(ti, ..)| ti < t);
        h.push((t, energy, dissipation));
        vec![("E*", energy), ("strain_dissipation*", dissipation)]
    }

    /// The state after `step` steps, and the peaks over the diagnostics rows recorded by
    /// [`Case::extra_diagnostics`].
    fn report(&self, step: u64, sums: &[f64]) -> Vec<String> {
        let (t, energy, dissipation) =
            self.row(step, sums)
                .unwrap_or((f64::NAN, f64::NAN, f64::NAN));
        let mut lines = vec![format!(
            "Taylor–Green 3-D ({}), Re = {}, {}³, U₀ = {}, τ = {:.6}: at t* = {t:.3}, E* = {energy:.6}, 2ν⟨S:S⟩* = {dissipation:.6}",
            M::NAME,
            self.re,
            self.n,
            self.u0,
            self.tau(),
        )];
        let h = self.history.lock().unwrap_or_else(|e| e.into_inner());
        let strain: Vec<(f64, f64)> = h.iter().map(|&(t, _, e)| (t, e)).collect();
        // ε* = −dE*/dt* by central differences of the history.
        let decay: Vec<(f64, f64)> = h
            .windows(3)
            .map(|w| (w[1].0, -(w[2].1 - w[0].1) / (w[2].0 - w[0].0)))
            .collect();
        let (dns, dns_t) = Self::DNS_PEAK;
        // An unforced flow only loses kinetic energy (but for its small exchange with sound
        // waves): growth means the collision is unstable, and no peak is worth comparing.
        let first = h.first().map_or(f64::NAN, |r| r.1);
        if let Some(&(tg, eg, _)) = h.iter().find(|r| r.1 > 1.01 * first) {
            lines.push(format!(
                "UNSTABLE: the kinetic energy grew from E* = {first:.4} to {eg:.4} at t* = {tg:.2}; \
                 τ − ½ = {:.2e} is too close to ½ for this lattice: raise --lx or --velocity \
                 (Re and the cube's side set τ − ½ = 3U₀n/(2π Re))",
                self.tau() - 0.5
            ));
            return lines;
        }
        match vertex(&decay) {
            Some((peak, tp)) if decay.len() >= 3 && tp < decay[decay.len() - 1].0 => {
                lines.push(format!(
                    "peak dissipation −dE*/dt* = {peak:.5} at t* = {tp:.2}; DNS (van Rees et al. 2011) {dns} at t* ≈ {dns_t}: {:+.1}%",
                    100.0 * (peak / dns - 1.0)
                ));
                if let Some((d, td)) = vertex(&strain) {
                    lines.push(format!(
                        "peak dissipation of the resolved strain 2ν⟨S:S⟩* = {d:.5} at t* = {td:.2} ({:.0}% of −dE*/dt*'s: the rest is dissipated below the lattice's scale)",
                        100.0 * d / peak
                    ));
                }
            }
            _ => lines.push(format!(
                "no peak of −dE*/dt* yet (the DNS's is at t* ≈ {dns_t}): run to t* ≈ 12 or more, {} steps, with diagnostics every ~0.1 t* ({:.0} steps)",
                (12.0 * self.steps_per_time()).ceil(),
                (0.1 * self.steps_per_time()).ceil()
            )),
        }
        lines
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_peak_of_a_parabola_is_its_vertex() {
        let f = |t: f64| 3.0 - 0.5 * (t - 2.3).powi(2);
        let samples: Vec<(f64, f64)> = (0..10)
            .map(|k| (k as f64 * 0.5, f(k as f64 * 0.5)))
            .collect();
        let (v, t) = vertex(&samples).unwrap();
        assert!(
            (t - 2.3).abs() < 1e-12 && (v - 3.0).abs() < 1e-12,
            "{v} at {t}"
        );
    }

    #[test]
    fn the_initial_state_is_the_vortex() {
        let c = TaylorGreen3d::new(16, 1600.0, 0.05);
        // At x/L = y/L = π/4... the site (2, 0, 0): u = U₀ sin(π/4), v = 0.
        let m = c.state(2, 0);
        assert!((m[1] - 0.05 * (PI / 4.0).sin()).abs() < 1e-15);
        assert!(m[2].abs() < 1e-15 && m[3] == 0.0);
        assert!((c.tau() - (0.5 + 3.0 * 0.05 * 16.0 / (2.0 * PI) / 1600.0)).abs() < 1e-15);
    }

    /// The report compares a decaying history's peak with the DNS, and refuses to when the
    /// energy grew (an unstable run), saying what to change.
    #[test]
    fn the_report_compares_the_peak_or_flags_an_unstable_run() {
        let report = |energies: &[f64]| {
            let c = TaylorGreen3d::new(16, 1600.0, 0.05);
            let e2 = |e: f64| e * 2.0 * 16f64.powi(3) * 0.05 * 0.05;
            let every = (0.5 * c.steps_per_time()) as u64;
            for (k, &e) in energies.iter().enumerate() {
                c.extra_diagnostics(k as u64 * every, &[e2(e), 0.0]);
            }
            let last = (energies.len() as u64 - 1) * every;
            c.report(last, &[e2(energies[energies.len() - 1]), 0.0])
                .join("\n")
        };
        // E* falling fastest in the middle: a peak of −dE*/dt*.
        let decaying: Vec<f64> = (0..30)
            .map(|k| 0.125 - 0.05 * (1.0 + ((k as f64 - 15.0) / 4.0).tanh()))
            .collect();
        let ok = report(&decaying);
        assert!(
            ok.contains("peak dissipation −dE*/dt*") && !ok.contains("UNSTABLE"),
            "{ok}"
        );
        let mut growing = decaying.clone();
        growing[20] = 0.2;
        let bad = report(&growing);
        assert!(
            bad.contains("UNSTABLE") && bad.contains("raise --lx") && !bad.contains("DNS"),
            "{bad}"
        );
    }
}
