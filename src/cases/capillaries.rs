//! Flow through a porous medium of parallel capillaries (D3Q19 TRT): a periodic box `lx × L ×
//! L`, solid but for straight capillaries of radius `R` along x whose axes stand on a square
//! grid of pitch `P` at `y, z = P/4 − ½ + kP` (so that, cut into blocks of `P/2`, each
//! capillary lies in one block of the four of its cell and a sparse domain holds a quarter of
//! the box), driven by a body acceleration `a` along x. Their walls are bounced back by
//! linear interpolation on the circle (Bouzidi et al. 2001).
//!
//! Each capillary carries Hagen–Poiseuille flow (Hagen 1839, Poiseuille 1840; e.g. White,
//! *Viscous Fluid Flow*, 3rd ed., §3-3.4), `u(r) = a (R² − r²) / 4ν` with `ν = cs²(τ − ½)`, of
//! mean `a R² / 8ν`. Over the whole box the superficial velocity `q = ⟨u_x⟩` (solid counted)
//! is then `φ a R² / 8ν`, with the porosity `φ = N π R² / L²` of `N` capillaries, and Darcy's
//! law `q = k a / ν` gives the permeability of the capillaric model of a porous medium
//! (Scheidegger, *The Physics of Flow through Porous Media*, 3rd ed., 1974, ch. 6),
//!
//! ```text
//! k = φ R² / 8,
//! ```
//!
//! against which the report sets the measured `k = ν ⟨u_x⟩ / a`.

use super::Case;
use crate::models::{D3Q19Trt, D3Q19TrtParams};
use crate::output::Fields;
use crate::{BoundarySpec, Model, Obstacles};

/// The capillaries case.
#[derive(Debug, Clone, PartialEq)]
pub struct Capillaries {
    /// The box's length along the capillaries, sites (periodic).
    pub lx: usize,
    /// The side `L` of the box's square section, sites: a multiple of the pitch.
    pub side: usize,
    /// The distance `P` between neighbouring capillaries' axes, sites.
    pub pitch: usize,
    /// The capillaries' diameter `2R`, sites: at most `P − 2`, a wall between neighbours.
    pub diameter: usize,
    /// Relaxation time of the even moments (the viscosity).
    pub tau: f64,
    /// Body acceleration along x.
    pub acceleration: f64,
}

impl Capillaries {
    /// The viscosity `cs²(τ − ½)`.
    pub fn viscosity(&self) -> f64 {
        D3Q19Trt::CS2 * (self.tau - 0.5)
    }

    /// The capillaries' radius `R`.
    pub fn radius(&self) -> f64 {
        self.diameter as f64 / 2.0
    }

    /// The capillaries in the box, `(L/P)²`.
    pub fn count(&self) -> usize {
        (self.side / self.pitch).pow(2)
    }

    /// The porosity `φ = N π R² / L²`.
    pub fn porosity(&self) -> f64 {
        self.count() as f64 * std::f64::consts::PI * self.radius().powi(2)
            / (self.side as f64).powi(2)
    }

    /// The capillaric model's permeability `φ R² / 8`.
    pub fn permeability(&self) -> f64 {
        self.porosity() * self.radius().powi(2) / 8.0
    }

    /// The obstacles: every site at least `R` from the axis of its cell's capillary, the wall
    /// where each link crosses the circle.
    pub fn obstacles(&self) -> Obstacles {
        let Self { pitch, .. } = *self;
        let (p, r) = (pitch as f64, self.radius());
        // A coordinate from the nearest axis, across the periodic wrap.
        let from_axis = move |v: usize| {
            let d = (v as f64 - (p / 4.0 - 0.5)).rem_euclid(p);
            if d > p / 2.0 { d - p } else { d }
        };
        Obstacles::voxels(move |_, y, z| from_axis(y).hypot(from_axis(z)) >= r).with_wall_distance(
            move |[_, y, z], c| {
                // From the fluid site `s` along `c`: where `|s + q c|` meets the circle.
                let (sy, sz) = (from_axis(y), from_axis(z));
                let (cy, cz) = (f64::from(c[1]), f64::from(c[2]));
                let (cc, b) = (cy * cy + cz * cz, sy * cy + sz * cz);
                let disc = b * b - cc * (sy * sy + sz * sz - r * r);
                (cc > 0.0 && disc >= 0.0)
                    .then(|| (-b + disc.sqrt()) / cc)
                    .filter(|&q| q > 0.0 && q <= 1.0)
            },
        )
    }
}

impl Case for Capillaries {
    type Model = D3Q19Trt;

    fn name(&self) -> &'static str {
        "capillaries"
    }

    fn size(&self) -> (usize, usize) {
        (self.lx, self.side)
    }

    fn depth(&self) -> usize {
        self.side
    }

    fn params(&self) -> D3Q19TrtParams {
        super::trt_half_way(self.tau, self.acceleration)
    }

    fn boundaries(&self) -> BoundarySpec {
        BoundarySpec {
            solid: Some(self.obstacles()),
            ..BoundarySpec::periodic()
        }
    }

    fn initial(&self) -> impl Fn(usize, usize) -> Vec<f64> + Sync + '_ {
        |_, _| vec![1.0, 0.0, 0.0, 0.0]
    }

    /// The speed (in a plane of constant x the images name the normal component `uz`).
    fn images(&self) -> &'static [&'static str] {
        &["speed"]
    }

    /// A section across the capillaries, `x = lx/2` (a plane of constant z through the
    /// middle would pass between their rows).
    fn slice(&self) -> (usize, Option<usize>) {
        (0, None)
    }

    /// The capillaries' peak velocity `a R² / 4ν`.
    fn velocity_scale(&self) -> f64 {
        self.acceleration * self.radius().powi(2) / (4.0 * self.viscosity())
    }

    /// `Σ u_x` over the sites.
    fn sums(&self, f: &Fields) -> Vec<f64> {
        vec![f.moment("ux").map_or(0.0, |ux| ux.iter().sum())]
    }

    fn report(&self, step: u64, sums: &[f64]) -> Vec<String> {
        let sites = self.lx * self.side * self.side;
        let q = sums.first().copied().unwrap_or(0.0) / sites as f64;
        let (k, model) = (
            self.viscosity() * q / self.acceleration,
            self.permeability(),
        );
        vec![format!(
            "capillaries after {step} steps: {} of radius {} in a {}×{}×{} box (porosity \
             φ = {:.4}): superficial velocity ⟨u_x⟩ = {q:.6e}; permeability k = ν⟨u_x⟩/a = \
             {k:.6e} (capillaric model φR²/8 = {model:.6e}): {:+.2} % from the model",
            self.count(),
            self.radius(),
            self.lx,
            self.side,
            self.side,
            self.porosity(),
            100.0 * (k / model - 1.0)
        )]
    }
}
