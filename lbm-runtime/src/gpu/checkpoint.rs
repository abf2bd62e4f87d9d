//! Checkpoints of a [`GpuLattice`]: the same file format as the CPU lattice's
//! ([`crate::Lattice::write_checkpoint`]), so a run checkpointed on one backend resumes on the
//! other, bitwise identical to the state the device held.

use std::path::Path;
use std::sync::Arc;

use super::{GpuContext, GpuError, GpuLattice};
use crate::checkpoint::write_state;
use crate::{BoundarySpec, Checkpoint, Layout, Model, Real};

impl<M: Model, L: Layout, T: Real> GpuLattice<M, L, T> {
    /// Writes the whole state to `path`, atomically (temporary file, fsync, rename), in the
    /// checkpoint format of the CPU lattice.
    pub fn write_checkpoint(&self, path: &Path) -> Result<(), GpuError> {
        let d = self.dims();
        let f = self.read_populations()?;
        write_state::<M, T>(path, (d.lx, d.ly), self.params(), self.steps_done(), &f)
            .map_err(|e| GpuError::Checkpoint(e.to_string()))
    }
}

impl<M: Model, T: Real> Checkpoint<M, T> {
    /// The lattice the checkpoint was taken from, on the device of `ctx` in layout `L`, with
    /// the run's boundary conditions, ready to continue from step `header.step`.
    pub fn into_gpu_lattice<L: Layout>(
        self,
        ctx: &Arc<GpuContext>,
        boundaries: &BoundarySpec,
    ) -> Result<GpuLattice<M, L, T>, GpuError> {
        let h = &self.header;
        let mut lat = GpuLattice::new(ctx, h.lx, h.ly, self.params.clone(), boundaries)?;
        lat.write_populations(self.populations())?;
        lat.set_steps_done(h.step);
        Ok(lat)
    }
}
