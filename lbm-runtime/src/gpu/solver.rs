//! The [`Block`] and [`Solver`] interfaces of a [`GpuLattice`]: populations in logical order (either
//! scheme), moments computed on the device, and through them the one checkpoint format of
//! every backend.

use super::GpuLattice;
use crate::error::check_values;
use crate::group::OneProcess;
use crate::solver::{lattice_basics, Placement, ReadMoments};
use crate::{Block, Error, Model, Real, Solver};

impl<M: Model, T: Real> Block for GpuLattice<M, T> {
    lattice_basics!(block GpuLattice);

    fn local_populations(&self) -> Result<Vec<T>, Error> {
        Ok(self.read_populations()?)
    }

    fn set_local_populations(&mut self, values: &[T]) -> Result<(), Error> {
        let d = self.dims();
        check_values(values.len(), d.sites() * M::Q, "populations")?;
        Ok(self.write_populations(values)?)
    }

    fn placement(&self) -> Placement {
        Placement::Device(self.context().clone())
    }

    fn describe(&self) -> String {
        let ctx = self.context();
        let note = if ctx.is_cpu() {
            " — a CPU adapter (software Vulkan): not GPU figures"
        } else {
            ""
        };
        format!("gpu, {}{note}", ctx.describe())
    }
}

impl<M: Model, T: Real> Solver for GpuLattice<M, T> {
    lattice_basics!(solver);

    fn advance(&mut self, n: u64) -> Result<(), Error> {
        self.steps(n);
        Ok(self.finish()?)
    }

    /// Read back once.
    fn with_moments(&mut self, read: ReadMoments<'_>) -> Result<Vec<Vec<f64>>, Error> {
        let [_, ly, lz] = self.extent().size();
        let mut all = crate::planes::read_back(self.moment_fields()?, ly * lz);
        Ok(read(&OneProcess, &mut all))
    }

    /// With each site's own fields (the default builds the equilibria with the uniform ones).
    fn set_equilibrium_at(
        &mut self,
        moments: &(dyn Fn(usize, usize) -> Vec<f64> + Sync),
    ) -> Result<(), Error> {
        Ok(self.set_equilibrium(moments)?)
    }

    fn exchanged(&mut self, sites: &[[usize; 3]]) -> Result<Vec<T>, Error> {
        Ok(GpuLattice::exchanged(self, sites)?)
    }

    fn check(&self) -> Result<(), Error> {
        Ok(GpuLattice::check(self)?)
    }
}
