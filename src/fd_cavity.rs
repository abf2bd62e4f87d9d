//! The lid-driven cavity by finite differences: the artificial-compressibility scheme
//! ([`ArtificialCompressibility2`]) marched in pseudo-time to its steady state on a
//! node-centred grid, and compared with Ghia, Ghia & Shin (1982) like the lattice Boltzmann
//! cavity ([`crate::cavity`]).
//!
//! Geometry: `N × N` nodes of spacing `h = 1/(N − 1)` in the unit square, the first and last
//! of each row and column on the walls. The lid (top, `y = 1`) moves with `U = 1`, the other
//! walls rest; the walls extrapolate the pressure linearly. `Re = U L / ν` with `L = 1`.

use lbm_models::{ArtificialCompressibility2, ArtificialCompressibility2Params};
use lbm_runtime::Real;
use lbm_runtime::backend::{Backend, build_fd};
use lbm_runtime::blocks::Blocks;
use lbm_runtime::fd::{FdError, FdGrid, FdLayout, FdRun, FdSpec, Rule, Side};
use lbm_runtime::group::Transfers;

use crate::cavity::{Deviation, RefPoint, compare_node_lines};

/// The centre lines `(u(y) on x = ½, v(x) on y = ½)`, one value per node.
pub type CentreLines = (Vec<f64>, Vec<f64>);

/// The scheme of the cavity.
pub type Scheme = ArtificialCompressibility2;

/// A cavity's setup: grid, Reynolds number and the scheme's constants.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FdCavity {
    /// Nodes per side, walls included.
    pub n: usize,
    pub re: f64,
    /// `β² ≥ κ U²`.
    pub kappa: f64,
    /// The pressure damping's constant `C₄`.
    pub c4: f64,
    /// The time step's share of its stability bound.
    pub cfl: f64,
}

impl FdCavity {
    /// `n` nodes per side at Reynolds number `re`, with `κ = 1`, `C₄ = 1/32` and a time step
    /// at half its bound.
    pub fn new(n: usize, re: f64) -> Self {
        Self {
            n,
            re,
            kappa: 1.0,
            c4: 1.0 / 32.0,
            cfl: 0.5,
        }
    }

    /// The grid spacing.
    pub fn h(&self) -> f64 {
        1.0 / (self.n - 1) as f64
    }

    /// The scheme's parameters.
    pub fn params(&self) -> ArtificialCompressibility2Params {
        ArtificialCompressibility2Params {
            nu: 1.0 / self.re,
            kappa: self.kappa,
            u_ref: 1.0,
            c4: self.c4,
        }
    }

    /// The pseudo-time step: `cfl` times the smallest of the convective bound
    /// `h / (λ_x + λ_y)` (with `|u| ≤ U`, the largest eigenvalues), the diffusive bound
    /// `h² / (4ν)` and the bound `2ν / U²` of forward Euler on central advection.
    pub fn time_step(&self) -> f64 {
        let nu = 1.0 / self.re;
        let beta2 = self.kappa.max(1.0);
        let lambda = (1.0 + (1.0 + 4.0 * beta2).sqrt()) / 2.0;
        let h = self.h();
        self.cfl * (h / (2.0 * lambda)).min(h * h / (4.0 * nu)).min(2.0 * nu)
    }

    /// The grid at rest, its walls set: the lid at `U = 1`, the pressure extrapolated.
    pub fn grid<T: Real>(&self) -> Result<FdGrid<Scheme, T>, FdError> {
        let mut g = FdGrid::new(self.nodes(), self.h(), self.params(), self.sides()?)?;
        g.set(0, |_| 0.0);
        Ok(g)
    }

    /// The grid's nodes per axis.
    pub fn nodes(&self) -> [usize; 3] {
        [self.n, self.n, 1]
    }

    /// What defines the grid ([`FdCavity::grid`]'s).
    pub fn spec(&self) -> Result<FdSpec<Scheme>, FdError> {
        Ok(FdSpec {
            nodes: self.nodes(),
            h: self.h(),
            params: self.params(),
            sides: self.sides()?,
        })
    }

    /// [`FdCavity::grid`] cut into `blocks` among the processes of `group`: this process's
    /// block on `backend`, stored in `layout` on the host (collective; [`build_fd`]).
    pub fn build<T: Real>(
        &self,
        group: Box<dyn Transfers<T>>,
        blocks: Blocks,
        layout: FdLayout,
        backend: &Backend,
    ) -> Result<Box<dyn FdRun>, lbm_runtime::Error> {
        let mut g = build_fd::<Scheme, T>(group, self.spec()?, blocks, layout, backend)?;
        g.set_unknown(0, &|_| 0.0)?;
        Ok(g)
    }

    /// The sides: walls at rest but the lid (`y = 1`), moving at `U = 1`, the pressure
    /// extrapolated at each.
    fn sides(&self) -> Result<Vec<Side>, FdError> {
        if !(self.re.is_finite() && self.re > 0.0) {
            return Err(FdError::Setup(format!(
                "the Reynolds number must be positive and finite (got {})",
                self.re
            )));
        }
        let wall = |u: f64| Side::Wall(vec![Rule::Extrapolated, Rule::Value(u), Rule::Value(0.0)]);
        Ok(vec![wall(0.0), wall(0.0), wall(0.0), wall(1.0)])
    }

    /// Steps until the velocity's rates are below `tol` (max norm, checked every `interval`
    /// steps) or `max_steps` are done; returns the steps taken. (The pressure's rate does not
    /// vanish: the pressure is defined up to a constant, and its level drifts at a rate the
    /// walls' extrapolation leaves, without changing the velocity.)
    pub fn run_to_steady(
        &self,
        g: &mut dyn FdRun,
        tol: f64,
        interval: u64,
        max_steps: u64,
    ) -> Result<u64, lbm_runtime::Error> {
        let start = g.steps();
        self.march(g, tol, interval, start.saturating_add(max_steps))?;
        Ok(g.steps() - start)
    }

    /// Steps up to step `until` at most, testing at every multiple of `interval` (counted
    /// from step 0, so a run resumed from a checkpoint tests where an uninterrupted one does)
    /// whether the velocity's rates are below `tol`; returns whether it stopped there, steady.
    fn march(
        &self,
        g: &mut dyn FdRun,
        tol: f64,
        interval: u64,
        until: u64,
    ) -> Result<bool, lbm_runtime::Error> {
        let dt = self.time_step();
        let interval = interval.max(1);
        while g.steps() < until {
            let next = (g.steps() / interval + 1)
                .saturating_mul(interval)
                .min(until);
            g.advance(next - g.steps(), dt)?;
            if g.steps().is_multiple_of(interval) && g.max_rates()?[1..].iter().all(|&r| r < tol) {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// The centre lines: `u(y)` along the vertical one and `v(x)` along the horizontal one
    /// (the mean of the two middle lines for even `N`), on the first process (collective).
    pub fn centre_lines(
        &self,
        g: &mut dyn FdRun,
    ) -> Result<Option<CentreLines>, lbm_runtime::Error> {
        let (ux, uy) = (g.gather(1)?, g.gather(2)?);
        Ok(ux.zip(uy).map(|(ux, uy)| self.centre_lines_of(&ux, &uy)))
    }

    /// The centre lines of the whole fields `ux` and `uy` (x fastest).
    pub fn centre_lines_of(&self, ux: &[f64], uy: &[f64]) -> CentreLines {
        let n = self.n;
        let mid = |f: &dyn Fn(usize) -> f64| {
            if n % 2 == 1 {
                f(n / 2)
            } else {
                0.5 * (f(n / 2 - 1) + f(n / 2))
            }
        };
        let u = (0..n).map(|j| mid(&|i| ux[i + n * j])).collect();
        let v = (0..n).map(|i| mid(&|j| uy[i + n * j])).collect();
        (u, v)
    }

    /// Deviation of the centre lines from Ghia's points, on the first process (collective).
    pub fn deviation(
        &self,
        g: &mut dyn FdRun,
        reference: &[RefPoint],
    ) -> Result<Option<Deviation>, lbm_runtime::Error> {
        let lines = self.centre_lines(g)?;
        Ok(lines.map(|(u, v)| compare_node_lines(&u, &v, 1.0, reference)))
    }
}
