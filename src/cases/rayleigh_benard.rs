//! Rayleigh–Bénard convection: a layer of fluid of height `H` between a hot bottom wall and a
//! cold top wall, periodic along x, in the Boussinesq approximation — two coupled lattices
//! ([`crate::Coupled`]): the flow [`crate::models::D2Q9Boussinesq`], whose buoyancy
//! `gβ(T − T_ref)` reads the temperature, and the temperature
//! [`crate::models::D2Q5AdvectionDiffusion`], advected by the flow's velocity.
//!
//! Both walls lie half-way across the y-wrap, below row 0 and above row `H − 1`: no-slip by
//! bounce-back for the flow (TRT with `magic = 3/16`, walls exactly half-way), fixed
//! temperatures `T_ref ± ΔT/2` by anti-bounce-back for the temperature
//! ([`crate::Wall::Dirichlet`]). The control parameters are
//!
//! ```text
//! Ra = gβ ΔT H³ / (ν κ),      Pr = ν / κ,
//! ```
//!
//! set through the free-fall velocity `U = √(gβ ΔT H)` (a Mach-number budget): `ν = U H √(Pr/Ra)`,
//! `κ = ν / Pr`. The period along x is the wavelength of the critical mode, `2π/k_c` with
//! `k_c = 3.117/H`, times `rolls / 2` (one wavelength holds two rolls).
//!
//! The conductive state `T = T_ref + ΔT (½ − y/H)`, `u = 0` is unstable above the critical
//! Rayleigh number of linear stability, `Ra_c = 1707.76` for rigid walls (Reid & Harris 1958;
//! Chandrasekhar 1961, ch. II); a small perturbation of the critical mode then grows as
//! `e^{σt}` with `σ ∝ Ra − Ra_c` near onset, and decays below it. Above onset the rolls carry
//! heat: the Nusselt number, the heat flux over the conductive one,
//!
//! ```text
//! Nu = 1 + ⟨u_y T⟩ H / (κ ΔT)
//! ```
//!
//! (the average over the layer), is 2.661 at Ra = 10⁴, Pr = 0.71, `k = k_c` for steady
//! two-dimensional rolls (Clever & Busse 1974, J. Fluid Mech. 65, 625).

use std::f64::consts::PI;

use crate::domain::GlobalSpec;
use crate::models::{
    D2Q5AdvectionDiffusion, D2Q5AdvectionDiffusionParams, D2Q9Boussinesq, D2Q9BoussinesqParams,
};
use crate::{
    BoundarySpec, Coupled, Error, Lattice, Layout, Model, Real, Role, Scheme, Solver, Wall,
    moment_index,
};

/// The critical wavenumber of rigid–rigid Rayleigh–Bénard convection, `k_c H`.
pub const CRITICAL_WAVENUMBER: f64 = 3.117;
/// The critical Rayleigh number of rigid–rigid Rayleigh–Bénard convection.
pub const CRITICAL_RAYLEIGH: f64 = 1707.76;
/// Clever & Busse's Nusselt numbers of steady two-dimensional rolls at `k = k_c`, Pr = 0.71,
/// `(Ra, Nu)` (Clever & Busse 1974, J. Fluid Mech. 65, 625).
pub const CLEVER_BUSSE_NUSSELT: [(f64, f64); 5] = [
    (2.0e3, 1.212),
    (5.0e3, 2.116),
    (1.0e4, 2.661),
    (2.0e4, 3.258),
    (5.0e4, 4.245),
];

/// The temperature difference between the walls, `ΔT` (the reference `T_ref` is 0: the bottom
/// wall at `+ΔT/2`, the top at `−ΔT/2`).
pub const DELTA_T: f64 = 1.0;

/// The Rayleigh–Bénard case.
#[derive(Debug, Clone, PartialEq)]
pub struct RayleighBenard {
    /// Height `H` of the layer, in sites.
    pub height: usize,
    /// Number of rolls along x (the period is `rolls/2` critical wavelengths).
    pub rolls: usize,
    /// Rayleigh number.
    pub rayleigh: f64,
    /// Prandtl number.
    pub prandtl: f64,
    /// Free-fall velocity `√(gβ ΔT H)` in lattice units (0.1 keeps the Mach number low).
    pub velocity: f64,
    /// Amplitude of the initial temperature perturbation (the critical mode), in units of ΔT.
    pub perturbation: f64,
}

/// The coupled lattices of the case: flow first, temperature second.
pub type RayleighBenardLattices<L, T> =
    Coupled<Lattice<D2Q9Boussinesq, L, T>, Lattice<D2Q5AdvectionDiffusion, L, T>>;

impl RayleighBenard {
    /// The case at `rayleigh` and Pr = 0.71 (air), two rolls on a layer of `height` sites.
    pub fn new(height: usize, rayleigh: f64) -> Self {
        Self {
            height,
            rolls: 2,
            rayleigh,
            prandtl: 0.71,
            velocity: 0.1,
            perturbation: 1e-3,
        }
    }

    /// Lattice width and height: `rolls/2 · 2π H / k_c` (rounded) by `H`.
    pub fn size(&self) -> (usize, usize) {
        let h = self.height as f64;
        let period = self.rolls as f64 / 2.0 * 2.0 * PI * h / CRITICAL_WAVENUMBER;
        (period.round() as usize, self.height)
    }

    /// Kinematic viscosity `ν = U H √(Pr/Ra)`.
    pub fn viscosity(&self) -> f64 {
        self.velocity * self.height as f64 * (self.prandtl / self.rayleigh).sqrt()
    }

    /// Thermal diffusivity `κ = ν / Pr`.
    pub fn diffusivity(&self) -> f64 {
        self.viscosity() / self.prandtl
    }

    /// The thermal diffusion time `H²/κ`, in steps.
    pub fn diffusion_time(&self) -> f64 {
        (self.height as f64).powi(2) / self.diffusivity()
    }

    /// The flow's parameters: `τ = ν/cs² + ½`, `gβ = U²/(ΔT H)`; the field `T` starts at 0.
    pub fn flow_params(&self) -> D2Q9BoussinesqParams {
        D2Q9BoussinesqParams {
            tau: self.viscosity() / D2Q9Boussinesq::CS2 + 0.5,
            magic: 3.0 / 16.0,
            g_beta: self.velocity.powi(2) / (DELTA_T * self.height as f64),
            t_ref: 0.0,
            T: 0.0,
        }
    }

    /// The temperature's parameters: `τ = κ/cs² + ½`; the velocity field starts at rest.
    pub fn heat_params(&self) -> D2Q5AdvectionDiffusionParams {
        D2Q5AdvectionDiffusionParams {
            tau: self.diffusivity() / D2Q5AdvectionDiffusion::CS2 + 0.5,
            ux: 0.0,
            uy: 0.0,
        }
    }

    /// No-slip walls at the bottom and top, periodic in x.
    pub fn flow_boundaries(&self) -> BoundarySpec {
        BoundarySpec::channel()
    }

    /// The hot bottom (`+ΔT/2`) and cold top (`−ΔT/2`), periodic in x.
    pub fn heat_boundaries(&self) -> BoundarySpec {
        BoundarySpec {
            bottom: Some(Wall::Dirichlet {
                value: DELTA_T / 2.0,
            }),
            top: Some(Wall::Dirichlet {
                value: -DELTA_T / 2.0,
            }),
            ..BoundarySpec::default()
        }
    }

    /// The conductive temperature at row `y` (the walls half-way below row 0 and above row
    /// `H − 1`).
    pub fn conduction(&self, y: usize) -> f64 {
        DELTA_T * (0.5 - (y as f64 + 0.5) / self.height as f64)
    }

    /// The box's wavenumber `k = (rolls/2)·2π/LX`, near the critical `k_c`.
    pub fn wavenumber(&self) -> f64 {
        self.rolls as f64 / 2.0 * 2.0 * PI / self.size().0 as f64
    }

    /// The initial temperature: conduction plus the critical mode
    /// `ε ΔT cos(k x) sin(π (y + ½)/H)`, `k` the box's wavenumber.
    pub fn initial_temperature(&self, x: usize, y: usize) -> f64 {
        let k = self.wavenumber();
        let h = self.height as f64;
        self.conduction(y)
            + self.perturbation * DELTA_T * (k * x as f64).cos() * (PI * (y as f64 + 0.5) / h).sin()
    }

    /// The flow's and the temperature's global lattices, to be cut into slabs (MPI ranks, host
    /// and device parts).
    pub fn specs(
        &self,
    ) -> (
        GlobalSpec<D2Q9Boussinesq>,
        GlobalSpec<D2Q5AdvectionDiffusion>,
    ) {
        let (lx, ly) = self.size();
        let flow = GlobalSpec {
            lx,
            ly,
            lz: 1,
            params: self.flow_params(),
            boundaries: self.flow_boundaries(),
        };
        let heat = GlobalSpec {
            lx,
            ly,
            lz: 1,
            params: self.heat_params(),
            boundaries: self.heat_boundaries(),
        };
        (flow, heat)
    }

    /// Both lattices on the host, coupled and initialised ([`RayleighBenard::couple`]), in
    /// layout `L`, precision `T` and `scheme`.
    pub fn lattices<L: Layout, T: Real>(
        &self,
        scheme: Scheme,
    ) -> Result<RayleighBenardLattices<L, T>, Error> {
        let (lx, ly) = self.size();
        let flow = Lattice::new(lx, ly, self.flow_params(), scheme, &self.flow_boundaries())?;
        let heat = Lattice::new(lx, ly, self.heat_params(), scheme, &self.heat_boundaries())?;
        self.couple(flow, heat)
    }

    /// Couples a flow and a temperature lattice built for this case (its sizes, parameters and
    /// boundaries; on any backend, one process or a process's planes of MPI ranks) and sets
    /// their initial state: the temperature [`RayleighBenard::initial_temperature`], the flow
    /// at rest with `ρ = 1`.
    pub fn couple<A, B>(&self, mut flow: A, mut heat: B) -> Result<Coupled<A, B>, Error>
    where
        A: Solver<Model = D2Q9Boussinesq>,
        B: Solver<Model = D2Q5AdvectionDiffusion>,
    {
        heat.set_equilibrium_at(&|x, y| vec![self.initial_temperature(x, y)])?;
        let [xs, ys, _] = flow.local_box();
        let temperature: Vec<f64> = xs
            .flat_map(|x| ys.clone().map(move |y| (x, y)))
            .map(|(x, y)| self.initial_temperature(x, y))
            .collect();
        flow.set_local_field("T", &temperature)?;
        // At rest: the bare velocity is −a/2, a = gβ(T − T_ref) ŷ.
        let g_beta = self.flow_params().g_beta;
        let t = |x: usize, y: usize| self.initial_temperature(x, y);
        flow.set_equilibrium_at(&|x, y| vec![1.0, 0.0, -0.5 * g_beta * t(x, y)])?;
        let mut c = Coupled::new(flow, heat)?
            .first_reads("T", "phi")?
            .second_reads("ux", "ux")?
            .second_reads("uy", "uy")?;
        c.exchange()?;
        Ok(c)
    }

    /// What the case measures of the lattices' current state (collective on MPI ranks).
    ///
    /// Each column's sums are taken where it lies, and the columns' sums added on the root in
    /// the order of x, then shared: the same bits on any number of ranks.
    pub fn measure<A, B>(&self, c: &mut Coupled<A, B>) -> Result<Convection, Error>
    where
        A: Solver<Model = D2Q9Boussinesq>,
        B: Solver<Model = D2Q5AdvectionDiffusion>,
    {
        let moments = c.output_moments()?;
        self.convection(c, &moments)
    }

    /// [`RayleighBenard::measure`] from the lattices' output moments
    /// ([`Coupled::output_moments`]), taken already (collective on MPI ranks).
    pub fn convection<A, B>(
        &self,
        c: &Coupled<A, B>,
        [flow, heat]: &[Vec<Vec<f64>>; 2],
    ) -> Result<Convection, Error>
    where
        A: Solver<Model = D2Q9Boussinesq>,
        B: Solver<Model = D2Q5AdvectionDiffusion>,
    {
        let at = |r: Role| moment_index::<D2Q9Boussinesq>(r).expect("a velocity moment");
        let (ux, uy) = (&flow[at(Role::Velocity(0))], &flow[at(Role::Velocity(1))]);
        let t = &heat[0];
        let (lx, ly) = self.size();
        let k = self.wavenumber();
        // Per column: Σ u_y T, Σ |u|², Σ u_y cos kx, Σ u_y sin kx.
        let x0 = c.first().output_planes().start;
        let columns: Vec<f64> = (0..t.len() / ly)
            .flat_map(|c| {
                let s = c * ly..(c + 1) * ly;
                let (ux, uy, t) = (&ux[s.clone()], &uy[s.clone()], &t[s]);
                let phase = k * (x0 + c) as f64;
                let uy_sum = uy.iter().sum::<f64>();
                [
                    uy.iter().zip(t).map(|(v, t)| v * t).sum::<f64>(),
                    ux.iter().zip(uy).map(|(a, b)| a * a + b * b).sum::<f64>(),
                    uy_sum * phase.cos(),
                    uy_sum * phase.sin(),
                ]
            })
            .collect();
        let mut sums = vec![0.0; 4];
        if let Some(all) = c.first().group().gather(columns) {
            for column in all.chunks_exact(4) {
                sums.iter_mut().zip(column).for_each(|(s, v)| *s += v);
            }
        }
        // The root's sums, shared (the others add zeros).
        let [flux, energy, re, im] = c.first().group().sum(sums)[..] else {
            unreachable!("four sums")
        };
        let n = (lx * ly) as f64;
        let (flux, energy) = (flux / n, energy / n);
        Ok(Convection {
            nusselt: 1.0 + flux * self.height as f64 / (self.diffusivity() * DELTA_T),
            mode: 2.0 * (re * re + im * im).sqrt() / n,
            reynolds: energy.sqrt() * self.height as f64 / self.viscosity(),
        })
    }
}

/// The state of the convection.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Convection {
    /// `Nu = 1 + ⟨u_y T⟩ H / (κ ΔT)`.
    pub nusselt: f64,
    /// The amplitude of the rolls: `|⟨u_y e^{ikx}⟩|·2`, the vertical velocity's Fourier
    /// component at the box's wavenumber `k` (blind to the x-independent motions of the
    /// conductive state, its hydrostatic and acoustic adjustment).
    pub mode: f64,
    /// The Reynolds number of the flow, `u_rms H / ν`, `u_rms = √⟨|u|²⟩`.
    pub reynolds: f64,
}

/// The growth rate `σ H²/κ` of the rolls' amplitude between two measurements `dt` steps apart.
pub fn growth_rate(case: &RayleighBenard, before: &Convection, after: &Convection, dt: f64) -> f64 {
    (after.mode / before.mode).ln() / dt * case.diffusion_time()
}

/// The onset `Ra_c` where the growth rate crosses zero, by linear interpolation between
/// `(Ra₁, σ₁)` below and `(Ra₂, σ₂)` above.
pub fn onset((ra1, s1): (f64, f64), (ra2, s2): (f64, f64)) -> f64 {
    ra1 - s1 * (ra2 - ra1) / (s2 - s1)
}
