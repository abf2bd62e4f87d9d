//! The [`Block`] interface of a [`GpuLattice`], what a GPU block of the engine
//! ([`crate::gpu::GpuSlab`]) stores its sites in: populations in logical order (either scheme),
//! the solid sites and the fields. A GPU lattice runs as a [`crate::Solver`] through
//! [`crate::backend::build`] (`Backend::Device`).

use super::GpuLattice;
use crate::error::check_values;
use crate::solver::{lattice_basics, Placement};
use crate::{Block, Error, Model, Real};

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
