//! The flow around a cylinder in a channel, Schäfer & Turek's (1996) benchmarks 2D-1 (Re = 20,
//! steady) and 2D-2 (Re = 100, periodic vortex shedding) on D2Q9 MRT, and 3D-1Z (Re = 20, a
//! cylinder spanning a square channel) on D3Q19 TRT.
//!
//! A channel 2.2 m long and `H` = 0.41 m high, a cylinder of diameter `D` = 0.1 m centred at
//! (0.2 m, 0.2 m) — just below the axis, so the flow has a small lift —, `ν` = 10⁻³ m²/s,
//! ρ = 1 kg/m³, a parabolic inflow `4 U y (H − y)/H²` of peak `U` = 0.3 m/s (2D-1; 1.5 m/s
//! for 2D-2: `Re = Ū D/ν` with the mean `Ū = 2U/3`). The coefficients are
//! `c_D = 2 F_x/(ρ Ū² D)`, `c_L = 2 F_y/(ρ Ū² D)` and the pressure difference
//! `Δp = p(0.15 m, 0.2 m) − p(0.25 m, 0.2 m)` between the cylinder's front and back.
//!
//! In 3-D (3D-1Z) the channel is 2.5 m long with a square section `H × H`, the cylinder's axis
//! along z through (0.5 m, 0.2 m), the inflow `16 U y z (H − y)(H − z)/H⁴` of peak
//! `U` = 0.45 m/s (`Ū = 4U/9`), the coefficients `2F/(ρ Ū² D H)` and the pressure difference
//! between (0.45 m, 0.2 m, 0.205 m) and (0.55 m, 0.2 m, 0.205 m).
//!
//! On the lattice, `D` spans `diameter` sites: the inflow is a Zou–He velocity column at
//! x = 0 (the parabola of [`crate::Wall::ParabolicInflow`] across the channel), the outflow a
//! Zou–He pressure column at x = 2.2 m, the channel's walls lie half-way beyond the first and
//! last rows (above the last, solid rows pad the lattice to a layout's cluster width), and the
//! cylinder's wall where its surface cuts each link (interpolated bounce-back, Bouzidi,
//! Firdaouss & Lallemand 2001). The loads are measured by momentum exchange
//! ([`crate::geometry::MomentumExchange`]); the pressure at the front and back points,
//! which lie on the surface, is extrapolated (quadratically) from the three sites before each
//! along the axis through the centre, each the mean of the two rows beside the axis.
//!
//! Schäfer, M. & Turek, S. (1996). Benchmark computations of laminar flow around a cylinder.
//! In *Flow Simulation with High-Performance Computers II*, Notes on Numerical Fluid
//! Mechanics 52, 547–566.

use super::{Case, Outflow};
use crate::geometry::{Body, V3, curved_obstacles_and};
use crate::models::{D2Q9Mrt, D2Q9MrtParams, D3Q19Trt, D3Q19TrtParams};
use crate::output::Fields;
use crate::{BoundarySpec, InflowProfile, Interpolation, Model, Wall};

/// The channel's height, m.
const HEIGHT: f64 = 0.41;
/// The cylinder's diameter, m.
const DIAMETER: f64 = 0.1;
/// The kinematic viscosity, m²/s.
const VISCOSITY: f64 = 1e-3;

/// The published bounds of a benchmark: (quantity, lower, upper).
type Bounds = [(&'static str, f64, f64); 3];

/// Schäfer & Turek's bounds for 2D-1 (Re = 20): `c_D`, `c_L`, `Δp` (Pa).
pub const STEADY_BOUNDS: Bounds = [
    ("c_D", 5.57, 5.59),
    ("c_L", 0.0104, 0.0110),
    ("Δp", 0.1172, 0.1176),
];

/// Schäfer & Turek's bounds for 3D-1Z (Re = 20): `c_D`, `c_L`, `Δp` (Pa).
pub const STEADY_BOUNDS_3D: Bounds = [
    ("c_D", 6.05, 6.25),
    ("c_L", 0.008, 0.010),
    ("Δp", 0.165, 0.175),
];

/// Schäfer & Turek's bounds for 2D-2 (Re = 100): the largest `c_D` and `c_L` over a period,
/// and the Strouhal number `St = D f / Ū`.
pub const PERIODIC_BOUNDS: Bounds = [
    ("max c_D", 3.22, 3.24),
    ("max c_L", 0.99, 1.01),
    ("St", 0.295, 0.305),
];

/// A model the cylinder runs on: D2Q9 MRT in 2-D, D3Q19 TRT in 3-D.
pub trait CylinderModel: Model {
    /// The case's name.
    const CASE: &'static str;
    /// The channel's length, m.
    const LENGTH: f64;
    /// The cylinder's centre along x, m.
    const CENTRE_X: f64;
    /// The mean inflow over the section in units of its peak: `2/3` across a channel, `4/9`
    /// over a square duct's section with the product profile.
    const MEAN: f64;
    /// Schäfer & Turek's bounds at Re = 20.
    const BOUNDS: Bounds;
    /// The program's default sites across the diameter and inflow peak (lattice units): what
    /// meets the benchmark's bounds in minutes on a laptop.
    const DEFAULTS: (usize, f64);

    /// The parameters for relaxation time `tau`, with the free rates that put a half-way wall
    /// exactly half-way.
    fn with_tau(tau: f64) -> Self::Params;
}

impl CylinderModel for D2Q9Mrt {
    const CASE: &'static str = "cylinder";
    const LENGTH: f64 = 2.2;
    const CENTRE_X: f64 = 0.2;
    const MEAN: f64 = 2.0 / 3.0;
    const BOUNDS: Bounds = STEADY_BOUNDS;
    const DEFAULTS: (usize, f64) = (40, 0.05);

    /// As [`crate::cases::Cavity::mrt`].
    fn with_tau(tau: f64) -> D2Q9MrtParams {
        super::mrt_half_way(tau)
    }
}

impl CylinderModel for D3Q19Trt {
    const CASE: &'static str = "cylinder-3d";
    const LENGTH: f64 = 2.5;
    const CENTRE_X: f64 = 0.5;
    const MEAN: f64 = 4.0 / 9.0;
    const BOUNDS: Bounds = STEADY_BOUNDS_3D;
    const DEFAULTS: (usize, f64) = (10, 0.1);

    /// The magic parameter Λ = 3/16 (as [`crate::cases::Duct`]).
    fn with_tau(tau: f64) -> D3Q19TrtParams {
        D3Q19TrtParams {
            tau,
            magic: 3.0 / 16.0,
            ax: 0.0,
            ay: 0.0,
            az: 0.0,
        }
    }
}

/// The cylinder case in 2-D (`Cylinder`, D2Q9 MRT) or spanning a square channel
/// (`Cylinder<D3Q19Trt>`).
#[derive(Clone, PartialEq)]
pub struct Cylinder<M: CylinderModel = D2Q9Mrt> {
    /// Sites across the cylinder's diameter: a multiple of 10, so that the channel's height,
    /// `4.1 D`, is a whole number of sites.
    pub diameter: usize,
    /// Reynolds number `Ū D / ν`.
    pub re: f64,
    /// The inflow's peak velocity `U`, lattice units.
    pub peak: f64,
    /// The model's parameters.
    pub params: M::Params,
    /// How the cylinder's curved walls are bounced back.
    pub walls: Interpolation,
    /// The cylinder's turn: the speed of its surface over the mean inflow, `α = ωR/Ū`,
    /// counterclockwise (about +z) positive; 0 at rest.
    pub spin: f64,
    /// The outflow side.
    pub outflow: Outflow,
    /// The lattice's rows: the channel's `4.1 D`, or more where they are padded to a layout's
    /// cluster width ([`Cylinder::with_cluster_width`]); the rows above the channel are solid.
    pub rows: usize,
}

/// The model's name, the size, the flow's numbers and the parameters (what a checkpoint of the
/// case records of it), the walls' interpolation where it is not the linear one, the turn
/// where there is one and the outflow where it is not the pressure side.
impl<M: CylinderModel> std::fmt::Debug for Cylinder<M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut s = f.debug_struct("Cylinder");
        s.field("model", &M::NAME)
            .field("diameter", &self.diameter)
            .field("re", &self.re)
            .field("peak", &self.peak)
            .field("params", &self.params);
        if self.walls != Interpolation::Linear {
            s.field("walls", &self.walls);
        }
        if self.spin != 0.0 {
            s.field("spin", &self.spin);
        }
        if self.outflow != Outflow::Pressure {
            s.field("outflow", &self.outflow);
        }
        if self.rows != self.height() {
            s.field("rows", &self.rows);
        }
        s.finish()
    }
}

impl<M: CylinderModel> Cylinder<M> {
    /// The case at `re` with `diameter` sites across the cylinder and an inflow peak `peak`
    /// (lattice units): `ν = Ū D / Re`, `τ = ν/cs² + ½`, and the model's free rates
    /// ([`CylinderModel::with_tau`]).
    pub fn new(diameter: usize, re: f64, peak: f64) -> Self {
        let case = Self {
            diameter,
            re,
            peak,
            params: M::with_tau(Self::relaxation(diameter, re, peak)),
            walls: Interpolation::Linear,
            spin: 0.0,
            outflow: Outflow::Pressure,
            rows: 0,
        };
        Self {
            rows: case.height(),
            ..case
        }
    }

    /// This case on a lattice whose rows are the channel's rounded up to a multiple of
    /// `width`, the cluster width of a layout that needs it (CAoSoA<8> runs `LY` = 4.1 D only
    /// where D is a multiple of 80; the clustered layouts step several times faster than SoA).
    /// The rows above the channel are solid: the channel's top wall is their surface,
    /// half-way between the sites as at the lattice's edge, and the flow is the same.
    pub fn with_cluster_width(self, width: usize) -> Self {
        let width = width.max(1);
        Self {
            rows: self.height().div_ceil(width) * width,
            ..self
        }
    }

    /// This case with the outflow side `outflow`.
    pub fn with_outflow(self, outflow: Outflow) -> Self {
        Self { outflow, ..self }
    }

    /// This case with the cylinder turning about its axis, its surface at `spin` times the
    /// mean inflow (`α = ωR/Ū`, counterclockwise positive): the Magnus effect, a lift that
    /// grows with the turn (Kutta–Joukowski's `c_L = −2πα` in an unbounded ideal flow).
    pub fn with_spin(self, spin: f64) -> Self {
        Self { spin, ..self }
    }

    /// The cylinder's angular velocity `ω = αŪ/R`, lattice units.
    pub fn angular_velocity(&self) -> f64 {
        self.spin * self.mean() / (self.diameter as f64 / 2.0)
    }

    /// This case with its curved walls bounced back by the interpolation `walls`.
    pub fn with_walls(self, walls: Interpolation) -> Self {
        Self { walls, ..self }
    }

    /// The relaxation time of the viscosity, `τ = Ū D/(Re cs²) + ½`.
    pub fn tau(&self) -> f64 {
        Self::relaxation(self.diameter, self.re, self.peak)
    }

    /// `τ = Ū D/(Re cs²) + ½` with `Ū` the mean of an inflow of peak `peak`.
    fn relaxation(diameter: usize, re: f64, peak: f64) -> f64 {
        M::MEAN * peak * diameter as f64 / re / M::CS2 + 0.5
    }

    /// The mean inflow velocity `Ū` (`2U/3` in 2-D, `4U/9` in 3-D), lattice units.
    pub fn mean(&self) -> f64 {
        M::MEAN * self.peak
    }

    /// The mean inflow velocity in m/s: `Re ν / D`.
    pub fn mean_si(&self) -> f64 {
        self.re * VISCOSITY / DIAMETER
    }

    /// The lattice spacing, m.
    pub fn dx(&self) -> f64 {
        DIAMETER / self.diameter as f64
    }

    /// The time step, s: `Δx Ū_lattice / Ū`.
    pub fn dt(&self) -> f64 {
        self.dx() * self.mean() / self.mean_si()
    }

    /// Whether the benchmark's flow at this Reynolds number is steady (below the onset of
    /// shedding, near Re = 47).
    pub fn is_steady(&self) -> bool {
        self.re < 45.0
    }

    /// The sites across the channel's height (and depth in 3-D), `4.1 D`.
    fn height(&self) -> usize {
        (HEIGHT / self.dx()).round() as usize
    }

    /// The cylinder's centre on the lattice: x on the sites (the inflow column is at x = 0),
    /// y = 0.2 m between them (the bottom wall lies half a site below row 0); in 3-D z at
    /// the middle of the depth.
    pub fn centre(&self) -> V3 {
        let d = self.diameter as f64;
        let z = if M::D == 3 {
            0.5 * self.height() as f64 - 0.5
        } else {
            0.0
        };
        [M::CENTRE_X / self.dx(), 2.0 * d - 0.5, z]
    }

    /// The cylinder's sites and curved walls, turning about its axis at
    /// [`Cylinder::angular_velocity`] where it has a spin, and the rows above the channel
    /// (their walls half-way, at rest).
    fn obstacles(&self) -> crate::Obstacles {
        let top = self.height();
        let o = curved_obstacles_and(self.body(), move |[_, y, _]| y >= top)
            .with_interpolation(self.walls);
        if self.spin == 0.0 {
            return o;
        }
        let ([cx, cy, _], omega) = (self.centre(), self.angular_velocity());
        // The padding's walls lie at `top − ½`, above every wall of the cylinder.
        let wall = top as f64 - 1.0;
        o.with_wall_velocity(move |[x, y, _]| match y < wall {
            true => [-omega * (y - cy), omega * (x - cx), 0.0],
            false => [0.0; 3],
        })
    }

    /// The cylinder as a body: a disc in 2-D; in 3-D a cylinder along z through the whole
    /// depth and beyond it.
    pub fn body(&self) -> Body {
        let [x, y, z] = self.centre();
        let r = self.diameter as f64 / 2.0;
        let body = match M::D {
            3 => Body::cylinder([x, y, z], [0.0, 0.0, 1.0], r, 2.0 * self.height() as f64),
            _ => Body::circle([x, y], r),
        };
        body.expect("a positive diameter is checked with the settings")
    }

    /// The sites whose densities give the pressure at the front and back points, in six groups
    /// (front, then back; at distances 1, 2, 3 sites from the point along x, away from the
    /// cylinder): the sites beside the point in y (two rows) and in z (one plane or two).
    fn probes(&self) -> [Vec<(usize, usize)>; 6] {
        let [cx, cy, cz] = self.centre();
        let r = self.diameter as f64 / 2.0;
        let (front, back) = ((cx - r).round() as usize, (cx + r).round() as usize);
        let ly = self.size().1;
        // One plane in 2-D (z = 0) and where the axis lies on a plane in 3-D.
        let mut zs = vec![cz.floor() as usize, cz.ceil() as usize];
        zs.dedup();
        let rows = [cy.floor() as usize, cy.ceil() as usize];
        std::array::from_fn(|j| {
            let k = 1 + j % 3;
            let x = if j < 3 { front - k } else { back + k };
            let sites = zs.iter().flat_map(|&z| rows.map(|y| (x, z * ly + y)));
            sites.collect()
        })
    }

    /// The coefficients `c_D`, `c_L` and `Δp` (Pa) from the case's sums: the probe groups'
    /// mean densities, the mass flux through the inflow and the cylinder's load.
    ///
    /// The lattice's flow is weakly compressible: the pressure that drives it through the
    /// channel raises the density near the cylinder, `ρ_c`, above the outflow's 1 by about
    /// `(U/cs)²` (1.7 % at `U = 0.1`, D = 20), and the mean velocity there, `Ū_c = ṁ/(ρ_c H)`
    /// with the mass flux `ṁ`, below the inflow's. Scaled by what the cylinder meets,
    /// `ρ_c Ū_c²` with `ρ_c` the probes' mean, the coefficients are those of the incompressible
    /// flow the benchmark describes (scaled by `Ū²` they run that 1.7 % high).
    fn coefficients(&self, sums: &[f64]) -> [f64; 3] {
        let Some(&[flux, fx, fy, ..]) = sums.get(6..) else {
            return [f64::NAN; 3];
        };
        // Quadratic extrapolation from distances 1, 2, 3 to 0.
        let at = |side: usize| 3.0 * sums[3 * side] - 3.0 * sums[3 * side + 1] + sums[3 * side + 2];
        let rho = sums[..6].iter().sum::<f64>() / 6.0;
        // The section's area and the cylinder's length, in sites.
        let (area, length) = match M::D {
            3 => ((self.height() * self.height()) as f64, self.height() as f64),
            _ => (self.height() as f64, 1.0),
        };
        let u = flux / (rho * area);
        let scale = 0.5 * rho * u * u * self.diameter as f64 * length;
        let pascal = M::CS2 * (self.mean_si() / u).powi(2) / rho;
        [fx / scale, fy / scale, pascal * (at(0) - at(1))]
    }
}

/// The channel's parabola at site `p` of `h` across, walls half-way beyond the first and last:
/// `4 s (1 − s)`, `s = (p + ½)/h` (the arithmetic of [`Wall::ParabolicInflow`]).
fn parabola(p: usize, h: usize) -> f64 {
    let s = (p as f64 + 0.5) / h as f64;
    4.0 * s * (1.0 - s)
}

/// `value` against `(lo, hi)`: its deviation from the middle, and whether it lies within.
fn against((name, lo, hi): (&str, f64, f64), value: f64) -> String {
    let mid = 0.5 * (lo + hi);
    let within = if (lo..=hi).contains(&value) {
        "within"
    } else {
        "outside"
    };
    format!(
        "{name} = {value:.5} ({:+.2}% from {mid:.4}, {within} Schäfer & Turek's {lo}–{hi})",
        100.0 * (value / mid - 1.0)
    )
}

impl<M: CylinderModel> Case for Cylinder<M> {
    type Model = M;

    fn name(&self) -> &'static str {
        M::CASE
    }

    /// `L/Δx + 1` columns (x = 0 to the channel's length on the sites), `4.1 D` rows (and
    /// the padding's, [`Cylinder::with_cluster_width`]).
    fn size(&self) -> (usize, usize) {
        let lx = (M::LENGTH / self.dx()).round() as usize + 1;
        (lx, self.rows)
    }

    /// `4.1 D` planes in 3-D.
    fn depth(&self) -> usize {
        match M::D {
            3 => self.height(),
            _ => 1,
        }
    }

    fn params(&self) -> M::Params {
        self.params.clone()
    }

    /// The inflow is the parabola of [`Wall::ParabolicInflow`] across the channel, not the
    /// lattice: the padding's rows are solid.
    fn boundaries(&self) -> BoundarySpec {
        let (h, peak) = (self.height(), self.peak);
        let inflow = move |[_, y, z]: [usize; 3]| {
            let shape = |p: usize| parabola(p, h);
            let u = match M::D {
                3 => shape(y) * shape(z),
                _ => shape(y),
            };
            [peak * u, 0.0, 0.0]
        };
        BoundarySpec {
            left: Some(Wall::Inflow),
            inflow: Some(InflowProfile::new(inflow)),
            right: Some(self.outflow.wall()),
            solid: Some(self.obstacles()),
            ..match M::D {
                3 => BoundarySpec::duct(),
                _ => BoundarySpec::channel(),
            }
        }
    }

    /// The inflow's profile everywhere but in the cylinder and the padding, at unit density.
    fn initial(&self) -> impl Fn(usize, usize) -> Vec<f64> + Sync + '_ {
        let body = self.body();
        let (h, rows) = (self.height(), self.rows);
        move |x, s| {
            let (y, z) = (s % rows, s / rows);
            let shape = |p: usize| parabola(p, h);
            let across = if M::D == 3 { shape(z) } else { 1.0 };
            let inside = y >= h || body.contains([x as f64, y as f64, z as f64]);
            let u = if inside {
                0.0
            } else {
                self.peak * shape(y) * across
            };
            let mut m = vec![0.0; 1 + M::D];
            m[0] = 1.0;
            m[1] = u;
            m
        }
    }

    fn images(&self) -> &'static [&'static str] {
        &["vorticity"]
    }

    /// Seconds per step.
    fn time_unit(&self) -> f64 {
        self.dt()
    }

    fn velocity_scale(&self) -> f64 {
        self.peak
    }

    /// The mean densities of the probe groups (`Cylinder::probes`: each site's share of its
    /// group's mean, for the sites this piece holds), and the mass flux `Σ ρ u_x` through the
    /// inflow column or plane if it holds it.
    fn sums(&self, f: &Fields) -> Vec<f64> {
        let (Some(rho), Some(ux)) = (f.moment("rho"), f.moment("ux")) else {
            return vec![0.0; 7];
        };
        let (planes, plane) = (f.planes(), f.plane());
        let at = |x: usize, s: usize| (x - planes.start) * plane + s;
        let mut sums: Vec<f64> = self
            .probes()
            .iter()
            .map(|group| {
                let held = group.iter().filter(|(x, _)| planes.contains(x));
                held.map(|&(x, s)| rho[at(x, s)]).sum::<f64>() / group.len() as f64
            })
            .collect();
        sums.push(match planes.contains(&0) {
            true => (0..plane).map(|s| rho[at(0, s)] * ux[at(0, s)]).sum(),
            false => 0.0,
        });
        sums
    }

    fn bodies(&self) -> Vec<(Body, V3)> {
        vec![(self.body(), self.centre())]
    }

    fn extra_diagnostics(&self, _step: u64, sums: &[f64]) -> Vec<(&'static str, f64)> {
        let [cd, cl, dp] = self.coefficients(sums);
        vec![("c_D", cd), ("c_L", cl), ("dp", dp)]
    }

    fn report(&self, step: u64, sums: &[f64]) -> Vec<String> {
        let [cd, cl, dp] = self.coefficients(sums);
        let (lx, ly) = self.size();
        let depth = match M::D {
            3 => format!("×{}", self.depth()),
            _ => String::new(),
        };
        let mut lines = vec![format!(
            "{} at Re = {} after {step} steps ({:.3} s), D = {} sites ({lx}×{ly}{depth}), \
             inflow peak {} (lattice units)",
            M::CASE,
            self.re,
            step as f64 * self.dt(),
            self.diameter,
            self.peak
        )];
        if self.spin != 0.0 {
            lines.push(format!(
                "c_D = {cd:.5}, c_L = {cl:.5}, Δp = {dp:.5} Pa, the cylinder turning with its \
                 surface at {} times the mean inflow (Schäfer & Turek's cylinder rests)",
                self.spin
            ));
        } else if self.is_steady() && (self.re - 20.0).abs() < 1e-9 {
            for (bounds, value) in M::BOUNDS.into_iter().zip([cd, cl, dp]) {
                lines.push(against(bounds, value));
            }
        } else {
            lines.push(format!(
                "c_D = {cd:.5}, c_L = {cl:.5}, Δp = {dp:.5} Pa (Schäfer & Turek tabulate Re = 20, \
                 and 100 in 2-D)"
            ));
        }
        lines
    }

    /// At an unsteady Reynolds number, over the second half of the run: the extremes of
    /// `c_D` and `c_L`, and the Strouhal number from the period of the lift (the mean
    /// spacing of its upward crossings of its mean).
    fn report_history(&self, rows: &[(u64, Vec<(&'static str, f64)>)]) -> Vec<String> {
        if self.is_steady() {
            return Vec::new();
        }
        let column = |name: &str| -> Vec<(u64, f64)> {
            let half = rows.last().map_or(0, |(s, _)| s / 2);
            rows.iter()
                .filter(|(s, _)| *s >= half && *s > 0)
                .filter_map(|(s, cols)| Some((*s, cols.iter().find(|(n, _)| *n == name)?.1)))
                .collect()
        };
        let (cd, cl) = (column("c_D"), column("c_L"));
        let extreme = |v: &[(u64, f64)], f: fn(f64, f64) -> f64, start: f64| {
            v.iter().map(|p| p.1).fold(start, f)
        };
        let mean = cl.iter().map(|p| p.1).sum::<f64>() / cl.len().max(1) as f64;
        let ups: Vec<f64> = cl
            .windows(2)
            .filter(|w| w[0].1 < mean && w[1].1 >= mean)
            .map(|w| {
                let t = (mean - w[0].1) / (w[1].1 - w[0].1);
                w[0].0 as f64 + t * (w[1].0 - w[0].0) as f64
            })
            .collect();
        let mut lines = vec![format!(
            "over steps {}–{} ({} rows of diagnostics): c_D in [{:.4}, {:.4}], c_L in [{:.4}, \
             {:.4}]",
            cl.first().map_or(0, |p| p.0),
            cl.last().map_or(0, |p| p.0),
            cl.len(),
            extreme(&cd, f64::min, f64::INFINITY),
            extreme(&cd, f64::max, f64::NEG_INFINITY),
            extreme(&cl, f64::min, f64::INFINITY),
            extreme(&cl, f64::max, f64::NEG_INFINITY),
        )];
        if ups.len() < 3 {
            lines.push(
                "the lift has not shed two periods in the second half of the run: no Strouhal \
                 number (run longer)"
                    .into(),
            );
            return lines;
        }
        let period = (ups[ups.len() - 1] - ups[0]) / (ups.len() - 1) as f64;
        let st = self.diameter as f64 / (self.mean() * period);
        if (self.re - 100.0).abs() < 1e-9 && M::D == 2 {
            let values = [
                extreme(&cd, f64::max, f64::NEG_INFINITY),
                extreme(&cl, f64::max, f64::NEG_INFINITY),
                st,
            ];
            for (bounds, value) in PERIODIC_BOUNDS.into_iter().zip(values) {
                lines.push(against(bounds, value));
            }
        } else {
            lines.push(format!(
                "Strouhal number {st:.4} (period {period:.1} steps, {:.4} s)",
                period * self.dt()
            ));
        }
        lines
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lattice's geometry is the benchmark's: the channel's height, the cylinder's centre
    /// and the pressure probes on the axis through it, before and behind the cylinder.
    #[test]
    fn the_lattice_holds_the_benchmarks_channel() {
        let c = Cylinder::<D2Q9Mrt>::new(20, 20.0, 0.1);
        let (lx, ly) = c.size();
        assert_eq!((lx, ly), (441, 82));
        assert!((ly as f64 * c.dx() - HEIGHT).abs() < 1e-12);
        let [x, y, _] = c.centre();
        assert!((x * c.dx() - 0.2).abs() < 1e-12 && ((y + 0.5) * c.dx() - 0.2).abs() < 1e-12);
        let body = c.body();
        for (j, group) in c.probes().iter().enumerate() {
            assert_eq!(group.len(), 2);
            for &(x, y) in group {
                assert!(!body.contains([x as f64, y as f64, 0.0]), "({x}, {y})");
                assert!((y as f64 - (2.0 * 20.0 - 0.5)).abs() == 0.5);
                let from = if j < 3 { 30 - x } else { x - 50 };
                assert_eq!(from, 1 + j % 3);
            }
        }
        // ν = Ū D / Re in both unit systems, through Δx and Δt.
        let nu = D2Q9Mrt::CS2 * (c.tau() - 0.5);
        assert!((nu * c.dx() * c.dx() / c.dt() - VISCOSITY).abs() < 1e-15);
    }

    /// Padded with solid rows to a cluster width, the channel's flow is the unpadded one's to
    /// the bit, in both schemes, with either outflow and a turning cylinder: the solid rows'
    /// walls are the lattice edge's half-way walls (through the openings too), the inflow the
    /// same parabola across the channel.
    #[test]
    fn solid_rows_padding_the_channel_leave_its_flow_bitwise() {
        for outflow in [Outflow::Pressure, Outflow::Extrapolated] {
            let case = Cylinder::<D2Q9Mrt>::new(10, 100.0, 0.05)
                .with_spin(0.5)
                .with_outflow(outflow);
            padded_like_unpadded(&case);
        }
    }

    fn padded_like_unpadded(case: &Cylinder<D2Q9Mrt>) {
        use crate::{CAoSoa, Lattice, Layout, Scheme, Soa};
        let padded = case.clone().with_cluster_width(8);
        assert_eq!((case.size().1, padded.size().1), (41, 48));
        fn flow<L: Layout>(c: &Cylinder<D2Q9Mrt>, scheme: Scheme) -> Vec<Vec<u64>> {
            let (lx, ly) = c.size();
            let spec = c.boundaries();
            let mut lat =
                Lattice::<D2Q9Mrt, L, f64>::with_size([lx, ly, 1], c.params(), scheme, &spec)
                    .expect("the channel is valid");
            lat.set_equilibrium(c.initial()).expect("finite");
            lat.steps(60);
            let channel = |f: Vec<f64>| {
                let rows = f.chunks(ly).flat_map(|column| column[..41].to_vec());
                rows.map(f64::to_bits).collect()
            };
            ["rho", "ux", "uy"]
                .map(|m| channel(lat.moment_field(m).expect("a moment")))
                .into()
        }
        let plain = flow::<Soa>(case, Scheme::TwoCopy);
        assert_eq!(flow::<CAoSoa<8>>(&padded, Scheme::TwoCopy), plain);
        assert_eq!(flow::<CAoSoa<8>>(&padded, Scheme::InPlace), plain);
    }

    /// In 3-D the cylinder spans the square channel at x = 0.5 m, and the probes lie about
    /// (0.45 m, 0.2 m, 0.205 m) and (0.55 m, 0.2 m, 0.205 m).
    #[test]
    fn the_lattice_holds_the_3d_benchmarks_channel() {
        let c = Cylinder::<D3Q19Trt>::new(10, 20.0, 0.1);
        assert_eq!((c.size(), c.depth()), ((251, 41), 41));
        assert_eq!(c.centre(), [50.0, 19.5, 20.0]);
        let body = c.body();
        for z in [0.0, 40.0] {
            assert!(
                body.contains([50.0, 19.5, z]),
                "the cylinder reaches z = {z}"
            );
        }
        for (j, group) in c.probes().iter().enumerate() {
            assert_eq!(group.len(), 2, "one plane (z = 20), two rows");
            for &(x, s) in group {
                assert_eq!(s / 41, 20);
                let from = if j < 3 { 45 - x } else { x - 55 };
                assert_eq!(from, 1 + j % 3);
            }
        }
        let nu = D3Q19Trt::CS2 * (c.tau() - 0.5);
        assert!((nu * c.dx() * c.dx() / c.dt() - VISCOSITY).abs() < 1e-15);
    }
}
