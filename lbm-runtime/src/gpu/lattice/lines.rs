//! Boxes of stored sites moved between the device and the host: a block's border and ghost
//! lines, a slab's border and halo columns. A plan ([`SiteBoxes`]) holds the storage index of
//! every value of its boxes on the device; one dispatch of the line kernels
//! ([`shader::lines`]) gathers them into one buffer read back in one copy, or scatters one
//! uploaded buffer into them. However scattered the values lie in the layout (a line along y
//! is a run of a few sites in every layout: a box of lines along y is thousands of runs), a
//! transfer is one dispatch, one copy and one wait.

use std::ops::Range;
use std::sync::{Mutex, OnceLock};

use super::super::shader::{self, LINE_GROUP};
use super::{check_len, GpuError, GpuLattice};
use crate::{storage, LbmError, Model, Real};

/// Where boxes of stored sites lie in a [`GpuLattice`]'s copies, as the line kernels move
/// them: the storage index of each value, box after box, each box's values in the order of
/// [`GpuLattice::site_boxes`].
#[derive(Debug)]
pub struct SiteBoxes {
    /// Values of each box.
    lens: Vec<usize>,
    /// The population of each value (a compact precision stores `f_i − w_i`).
    pops: Vec<u8>,
    /// Values moved through `vals`, on the device (empty plans move nothing).
    vals: Option<wgpu::Buffer>,
    /// Where `vals` is copied to be read on the host, made at the first read and kept: a
    /// block's borders are read back at every step.
    staging: OnceLock<wgpu::Buffer>,
    /// The stored form of the values last written (kept, as `staging`, for the next step's).
    upload: Mutex<Vec<u8>>,
    /// One bind group per copy that may hold the state (bound as copy A, as the lattice's).
    groups: Vec<wgpu::BindGroup>,
}

impl SiteBoxes {
    /// Number of values covered.
    fn len(&self) -> usize {
        self.pops.len()
    }
}

/// A plan's upload buffer after a thread panicked holding it.
const POISONED: &str = "a site box's upload buffer was poisoned by a panic";

/// The line kernels' bind group layout and pipelines, made with a lattice's first plan.
pub(super) struct LineKernels {
    layout: wgpu::BindGroupLayout,
    gather: wgpu::ComputePipeline,
    scatter: wgpu::ComputePipeline,
}

impl<M: Model, T: Real> GpuLattice<M, T> {
    /// Where the storage boxes `boxes` (`[cols, ys, zs]`, halo columns included; `ys` and
    /// `zs` stored lines) lie in the device's copies, computed once for the transfers a block
    /// repeats every step; each box's values `[(((col − c0)·nz + z − z0)·ny + y − y0)·Q + i]`
    /// (the order of a host lattice's `read_lines`).
    pub fn site_boxes(&self, boxes: &[[Range<usize>; 3]]) -> Result<SiteBoxes, GpuError> {
        let d = &self.d;
        let mut index: Vec<u32> = Vec::new();
        let mut lens = Vec::with_capacity(boxes.len());
        for b in boxes {
            self.check_box(b)?;
            let before = index.len();
            for col in b[0].clone() {
                for z in b[2].clone() {
                    for y in b[1].clone() {
                        let s = d.plane_site(y, z);
                        // In range: `capacity` bounds every storage index by `u32::MAX`.
                        index.extend((0..d.q).map(|i| self.lay.index(d, i, col, s) as u32));
                    }
                }
            }
            lens.push(index.len() - before);
        }
        let pops = (index.iter())
            .map(|&g| self.lay.population(u64::from(g), M::Q) as u8)
            .collect();
        let (vals, groups) = if index.is_empty() {
            (None, Vec::new())
        } else {
            let kernels = self.line_kernels()?;
            let dev = &self.ctx.device;
            let storage = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST;
            let idx = dev.create_buffer(&wgpu::BufferDescriptor {
                label: Some("line index"),
                size: (4 * index.len()) as u64,
                usage: storage,
                mapped_at_creation: false,
            });
            self.ctx
                .queue
                .write_buffer(&idx, 0, bytemuck::cast_slice(&index));
            let vals = dev.create_buffer(&wgpu::BufferDescriptor {
                label: Some("line values"),
                size: ((index.len() * size_of::<T>()) as u64).next_multiple_of(4),
                usage: storage | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: false,
            });
            // Group `p` binds the copy holding the state as A, as the lattice's groups do.
            let groups = (0..self.copies.len())
                .map(|p| {
                    let bufs = (self.copies[p..].iter().chain(&self.copies[..p]).flatten())
                        .chain([&idx, &vals]);
                    let entries: Vec<_> = (bufs.enumerate())
                        .map(|(b, buf)| wgpu::BindGroupEntry {
                            binding: b as u32,
                            resource: buf.as_entire_binding(),
                        })
                        .collect();
                    dev.create_bind_group(&wgpu::BindGroupDescriptor {
                        label: Some("lines"),
                        layout: &kernels.layout,
                        entries: &entries,
                    })
                })
                .collect();
            (Some(vals), groups)
        };
        Ok(SiteBoxes {
            lens,
            pops,
            vals,
            staging: OnceLock::new(),
            upload: Mutex::default(),
            groups,
        })
    }

    /// [`GpuLattice::site_boxes`] of whole storage columns: `blocks` of columns, every line.
    pub fn column_blocks(&self, blocks: &[Range<usize>]) -> Result<SiteBoxes, GpuError> {
        let boxes: Vec<_> = (blocks.iter())
            .map(|cols| [cols.clone(), 0..self.d.ly, 0..self.d.lz])
            .collect();
        self.site_boxes(&boxes)
    }

    /// The stored values of each box of `plan`, in the order of [`GpuLattice::site_boxes`]
    /// (for whole columns `[(col − start)·LY·LZ·Q + s·Q + i]`): one dispatch, one copy, one
    /// wait.
    pub fn read_blocks(&self, plan: &SiteBoxes) -> Result<Vec<Vec<T>>, GpuError> {
        let mut values = vec![Vec::new(); plan.lens.len()];
        self.read_blocks_into(plan, &mut values)?;
        Ok(values)
    }

    /// [`GpuLattice::read_blocks`] into `into`, a vector a box: each is cleared and filled,
    /// its memory reused (what a block does at every step, into buffers it keeps).
    pub fn read_blocks_into(&self, plan: &SiteBoxes, into: &mut [Vec<T>]) -> Result<(), GpuError> {
        check_len(into.len(), plan.lens.len(), "site boxes")?;
        into.iter_mut().for_each(Vec::clear);
        let Some(vals) = &plan.vals else {
            return Ok(());
        };
        let bytes = ((plan.len() * size_of::<T>()) as u64).next_multiple_of(4);
        let staging = (plan.staging).get_or_init(|| self.ctx.staging(bytes));
        let mut enc = self.encoder();
        self.dispatch_lines(&mut enc, plan, false)?;
        enc.copy_buffer_to_buffer(vals, 0, staging, 0, bytes);
        self.ctx.queue.submit([enc.finish()]);
        self.ctx.map_read_with(staging, |raw: &[T]| {
            let mut values = (raw.iter().zip(&plan.pops))
                .map(|(v, &i)| storage::value(v.to_stored(), &self.rest, usize::from(i)));
            for (v, &n) in into.iter_mut().zip(&plan.lens) {
                v.extend(values.by_ref().take(n));
            }
        })
    }

    /// Writes each box of `plan` from `vals` (one slice per box, laid out as
    /// [`GpuLattice::read_blocks`]' values): one upload and one dispatch.
    pub fn write_blocks(&mut self, plan: &SiteBoxes, vals: &[&[T]]) -> Result<(), GpuError> {
        check_len(vals.len(), plan.lens.len(), "site boxes")?;
        for (v, &n) in vals.iter().zip(&plan.lens) {
            check_len(v.len(), n, "site box")?;
        }
        let Some(buf) = &plan.vals else {
            return Ok(());
        };
        let mut bytes = (plan.upload.lock()).map_err(|_| GpuError::Device(POISONED.into()))?;
        bytes.clear();
        for (&v, &i) in vals.iter().flat_map(|v| v.iter()).zip(&plan.pops) {
            let stored = T::from_stored(storage::stored(v, &self.rest, usize::from(i)));
            bytes.extend_from_slice(bytemuck::bytes_of(&stored));
        }
        let padded = bytes.len().next_multiple_of(4);
        bytes.resize(padded, 0);
        self.ctx.queue.write_buffer(buf, 0, &bytes);
        drop(bytes);
        let mut enc = self.encoder();
        self.dispatch_lines(&mut enc, plan, true)?;
        self.ctx.queue.submit([enc.finish()]);
        Ok(())
    }

    /// Records `plan`'s gather (or scatter) over the copy holding the state.
    fn dispatch_lines(
        &self,
        enc: &mut wgpu::CommandEncoder,
        plan: &SiteBoxes,
        scatter: bool,
    ) -> Result<(), GpuError> {
        let kernels = self.line_kernels()?;
        let groups = (plan.len() as u32).div_ceil(LINE_GROUP);
        let x = groups.min(self.ctx.workgroup_limit());
        let mut pass = enc.begin_compute_pass(&Default::default());
        pass.set_pipeline(if scatter {
            &kernels.scatter
        } else {
            &kernels.gather
        });
        pass.set_bind_group(0, &plan.groups[self.cur], &[]);
        pass.dispatch_workgroups(x, groups.div_ceil(x), 1);
        Ok(())
    }

    /// The line kernels, made on first use.
    fn line_kernels(&self) -> Result<&LineKernels, GpuError> {
        if let Some(k) = self.lines.get() {
            return Ok(k);
        }
        let source = shader::lines::<T>(&self.spec);
        let what = format!("the line kernels of {}", super::what::<M, T>(self.lay.kind));
        shader::validate(&source, size_of::<T>() == 8, &what)?;
        let dev = &self.ctx.device;
        let storage = |read_only| wgpu::BindingType::Buffer {
            ty: wgpu::BufferBindingType::Storage { read_only },
            has_dynamic_offset: false,
            min_binding_size: None,
        };
        let pops = self.spec.binding_consts();
        let entries: Vec<_> = (0..pops + 2)
            .map(|b| wgpu::BindGroupLayoutEntry {
                binding: b,
                visibility: wgpu::ShaderStages::COMPUTE,
                ty: storage(b == pops),
                count: None,
            })
            .collect();
        let layout = dev.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("lines"),
            entries: &entries,
        });
        let pipeline_layout = dev.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("lines"),
            bind_group_layouts: &[Some(&layout)],
            immediate_size: 0,
        });
        let module = dev.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("lines"),
            source: wgpu::ShaderSource::Wgsl(source.into()),
        });
        let pipeline = |entry: &str| {
            dev.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some(entry),
                layout: Some(&pipeline_layout),
                module: &module,
                entry_point: Some(entry),
                compilation_options: Default::default(),
                cache: None,
            })
        };
        let kernels = LineKernels {
            gather: pipeline("gather"),
            scatter: pipeline("scatter"),
            layout,
        };
        Ok(self.lines.get_or_init(|| kernels))
    }

    fn check_box(&self, b: &[Range<usize>; 3]) -> Result<(), GpuError> {
        let d = &self.d;
        let ends = [d.ncols(), d.ly, d.lz];
        if let Some(a) = (0..3).find(|&a| b[a].start > b[a].end || b[a].end > ends[a]) {
            return Err(LbmError::Shape(format!(
                "storage box {b:?} outside 0..{} along {} (halo columns included)",
                ends[a],
                ["x", "y", "z"][a]
            ))
            .into());
        }
        Ok(())
    }

    /// The stored values of storage column `col` (`col = x + HALO`; halo columns included),
    /// indexed `[y·Q + i]`: what a host part of the slab needs from the device each step.
    pub fn read_column(&self, col: usize) -> Result<Vec<T>, GpuError> {
        self.read_columns(col..col + 1)
    }

    /// The stored values of the storage columns `cols`, indexed
    /// `[(col − cols.start)·LY·Q + y·Q + i]`, in one read of the device.
    pub fn read_columns(&self, cols: Range<usize>) -> Result<Vec<T>, GpuError> {
        let plan = self.column_blocks(std::slice::from_ref(&cols))?;
        Ok(self.read_blocks(&plan)?.pop().unwrap_or_default())
    }

    /// Writes storage column `col` from values indexed `[y·Q + i]` (a border column computed
    /// by the host, or a halo received from a neighbour).
    pub fn write_column(&mut self, col: usize, vals: &[T]) -> Result<(), GpuError> {
        check_len(vals.len(), self.d.plane() * self.d.q, "column")?;
        self.write_columns(col, vals)
    }

    /// Writes the storage columns from `first` on from values indexed as
    /// [`GpuLattice::read_columns`]' (as many columns as `vals` holds).
    pub fn write_columns(&mut self, first: usize, vals: &[T]) -> Result<(), GpuError> {
        let per_col = self.d.plane() * self.d.q;
        if vals.is_empty() || !vals.len().is_multiple_of(per_col) {
            return Err(LbmError::Shape(format!(
                "columns: got {} values, expected a positive multiple of LY·LZ·Q = {per_col}",
                vals.len()
            ))
            .into());
        }
        let cols = first..first + vals.len() / per_col;
        let plan = self.column_blocks(std::slice::from_ref(&cols))?;
        self.write_blocks(&plan, &[vals])
    }
}
