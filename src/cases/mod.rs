//! The shipped cases: a model, its parameters, boundaries and initial state, the fields worth
//! drawing, the diagnostics it adds, and its comparison with theory or published data — made
//! of sums over the sites ([`Case::sums`]), so that each rank of a distributed run adds its own
//! slab's and only the totals meet. The
//! `lbm run` program runs any [`Case`] on any backend; a library user can run one on a
//! [`crate::Lattice`] directly:
//!
//! ```
//! use lbm::cases::{Case, TaylorGreen};
//! use lbm::models::D2Q9Bgk;
//! use lbm::{Lattice, Scheme, Soa};
//!
//! let case = TaylorGreen { n: 32, tau: 0.8, u0: 0.02 };
//! let (lx, ly) = case.size();
//! let mut lat = Lattice::<D2Q9Bgk, Soa, f64>::new(lx, ly, case.params(), Scheme::TwoCopy, &case.boundaries())?;
//! lat.set_equilibrium(case.initial())?;
//! lat.run(200, 100)?;
//! let fields = lbm::output::Fields::collect::<D2Q9Bgk, _>((lx, ly), 200, |n| lat.moment_field(n))?;
//! for line in case.report_fields(&fields) {
//!     println!("{line}");   // measured viscosity against cs²(τ − ½)
//! }
//! # Ok::<(), lbm::LbmError>(())
//! ```

mod advection_diffusion;
mod capillaries;
mod cavity;
mod cavity_3d;
mod cylinder;
mod duct;
mod flow_past;
mod poiseuille;
mod rayleigh_benard;
mod rayleigh_taylor;
mod taylor_green;
mod taylor_green_3d;

pub use advection_diffusion::{AdvectionDiffusion, PulseMeasurement};
pub use capillaries::Capillaries;
pub use cavity::Cavity;
pub use cavity_3d::Cavity3d;
/// The outflow side of the cases with an open channel (cylinder, cylinder-3d, body).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Outflow {
    /// A Zou–He pressure side at the reference density ([`crate::Wall::ZouHePressure`]): it
    /// holds the pressure level, and reflects a pressure wave whole.
    #[default]
    Pressure,
    /// Zero-gradient extrapolation of the populations ([`crate::Wall::Outflow`]): the
    /// pressure level floats, and about a quarter of a long pressure wave is reflected.
    Extrapolated,
}

impl Outflow {
    /// The side's wall.
    pub fn wall(self) -> crate::Wall {
        match self {
            Outflow::Pressure => crate::Wall::ZouHePressure { density: 1.0 },
            Outflow::Extrapolated => crate::Wall::Outflow,
        }
    }
}

pub use cylinder::{Cylinder, CylinderModel, PERIODIC_BOUNDS, STEADY_BOUNDS, STEADY_BOUNDS_3D};
pub use duct::Duct;
pub use flow_past::{FlowPast, SPHERE_LEVELS, SPHERE_STL, Setup, SetupError};
pub use poiseuille::Poiseuille;
pub use rayleigh_benard::{
    CLEVER_BUSSE_NUSSELT, CRITICAL_RAYLEIGH, CRITICAL_WAVENUMBER, Convection, DELTA_T,
    RayleighBenard, RayleighBenardLattices, growth_rate, onset,
};
pub use rayleigh_taylor::RayleighTaylor;
pub use taylor_green::TaylorGreen;
pub use taylor_green_3d::TaylorGreen3d;

use crate::output::{Fields, Table};
use crate::{BoundarySpec, Model};

/// A case: what to run and how to judge it.
pub trait Case: std::fmt::Debug + Sync {
    /// The model it runs.
    type Model: Model;

    /// The case's name (file names, summaries).
    fn name(&self) -> &'static str;

    /// Lattice width and height.
    fn size(&self) -> (usize, usize);

    /// Lattice depth: sites in z, 1 for a 2-D case.
    fn depth(&self) -> usize {
        1
    }

    /// The model's parameters.
    fn params(&self) -> <Self::Model as Model>::Params;

    /// Walls and periodicity.
    fn boundaries(&self) -> BoundarySpec;

    /// The initial state: the moments at site `(x, y)` (in 3-D `y` is the plane site
    /// `z·LY + y`) in the order of `Model::MOMENT_NAMES`, with the bare velocity that
    /// [`crate::Lattice::set_equilibrium`] takes.
    fn initial(&self) -> impl Fn(usize, usize) -> Vec<f64> + Sync + '_;

    /// The fields drawn as images by default.
    fn images(&self) -> &'static [&'static str];

    /// The plane of a 3-D lattice drawn as images unless the run names one: an axis (0, 1, 2
    /// for x, y, z) and a position (`None`: the middle of the axis); a plane of constant z
    /// through the middle by default.
    fn slice(&self) -> (usize, Option<usize>) {
        (2, None)
    }

    /// The colour range of an image of `field`, when the case knows it (constant across
    /// frames); otherwise each image spans its data.
    fn image_range(&self, _field: &str) -> Option<(f64, f64)> {
        None
    }

    /// The case's time unit in steps, for the `time` column of the diagnostics.
    fn time_unit(&self) -> f64 {
        1.0
    }

    /// The velocity scale of the flow (steady-state tolerances are relative to it).
    fn velocity_scale(&self) -> f64;

    /// Whether [`Case::sums`] reaches one column beyond each end of a piece (a stencil in x):
    /// then the driver gives the piece its neighbours' columns
    /// ([`Fields::with_neighbours`]).
    fn needs_neighbour_columns(&self) -> bool {
        false
    }

    /// The sums over the sites of `piece` (a whole lattice, or one rank's slab of it) that the
    /// case's diagnostics and report are made of: they add up element-wise over the pieces
    /// (an MPI reduction), so that no process needs the whole lattice's fields.
    fn sums(&self, _piece: &Fields) -> Vec<f64> {
        Vec::new()
    }

    /// The bodies whose loads the case reads, each with the point its torque is taken about:
    /// the driver measures them by momentum exchange ([`crate::geometry::MomentumExchange`])
    /// at every row of diagnostics, averaged over that step and the one before (the exchange
    /// alternates from one step to the next), and appends each body's force and torque (six
    /// values, lattice units) to the case's sums, after [`Case::sums`]'.
    fn bodies(&self) -> Vec<(crate::geometry::Body, crate::geometry::V3)> {
        Vec::new()
    }

    /// Lines the case adds to its report from the history of its diagnostics columns
    /// ([`Case::extra_diagnostics`] of every row, with its step) over the run: the extremes
    /// and period of an oscillating drag, say.
    fn report_history(&self, _rows: &[(u64, Vec<(&'static str, f64)>)]) -> Vec<String> {
        Vec::new()
    }

    /// Diagnostics columns the case adds to the global ones after `step` steps, from the
    /// [`Case::sums`] of the whole lattice.
    fn extra_diagnostics(&self, _step: u64, _sums: &[f64]) -> Vec<(&'static str, f64)> {
        Vec::new()
    }

    /// The comparison with theory or published data after `step` steps, from the
    /// [`Case::sums`] of the whole lattice, as lines to print.
    fn report(&self, step: u64, sums: &[f64]) -> Vec<String>;

    /// Tables the case writes as CSV with the fields of `step` (`<case>_<name>_<step>.csv`),
    /// from the [`Case::sums`] of the whole lattice: profiles to plot against published data.
    fn tables(&self, _step: u64, _sums: &[f64]) -> Vec<Table> {
        Vec::new()
    }

    /// [`Case::report`] of the fields of a whole lattice.
    fn report_fields(&self, f: &Fields) -> Vec<String> {
        self.report(f.step, &self.sums(f))
    }
}

/// The global lattice of `case`, to be cut into slabs (MPI ranks, host and device parts).
pub fn global_spec<C: Case>(case: &C) -> crate::domain::GlobalSpec<C::Model> {
    let (lx, ly) = case.size();
    crate::domain::GlobalSpec {
        lx,
        ly,
        lz: case.depth(),
        params: case.params(),
        boundaries: case.boundaries(),
    }
}

/// D2Q9 MRT at relaxation time `tau` with Lallemand & Luo's (2000) `s_e = 1.64`,
/// `s_ε = 1.54`, and `s_q = 8(2 − s_ν)/(8 − s_ν)`, which puts bounce-back walls exactly
/// half-way (Ginzburg et al. 2008); no body force.
pub(crate) fn mrt_half_way(tau: f64) -> crate::models::D2Q9MrtParams {
    let s_nu = 1.0 / tau;
    crate::models::D2Q9MrtParams {
        tau,
        s_e: 1.64,
        s_eps: 1.54,
        s_q: 8.0 * (2.0 - s_nu) / (8.0 - s_nu),
        ax: 0.0,
        ay: 0.0,
    }
}

/// D3Q19 TRT at relaxation time `tau` with the magic parameter Λ = 3/16, which puts
/// bounce-back walls exactly half-way for any τ (Ginzburg et al. 2008), driven by a body
/// acceleration `ax` along x.
pub(crate) fn trt_half_way(tau: f64, ax: f64) -> crate::models::D3Q19TrtParams {
    crate::models::D3Q19TrtParams {
        tau,
        magic: 3.0 / 16.0,
        ax,
        ay: 0.0,
        az: 0.0,
    }
}

/// Relative L2 distance `‖a − b‖ / ‖b‖`.
pub(crate) fn relative_l2(a: impl Iterator<Item = f64>, b: impl Iterator<Item = f64>) -> f64 {
    let (num, den) = a.zip(b).fold((0.0, 0.0), |(n, d), (x, y)| {
        (n + (x - y).powi(2), d + y * y)
    });
    (num / den).sqrt()
}
