//! The GPU backend on wgpu: the model's generated WGSL composed into complete compute shaders
//! per (model × layout × precision), run on any adapter wgpu reaches (Vulkan, Metal, DX12) —
//! including Mesa's lavapipe, a software Vulkan device with f64, on machines without a GPU.
//!
//! - [`GpuContext`] opens an adapter: the best available by default, or one chosen by name or
//!   type ([`AdapterChoice`]); [`GpuContext::describe`] names adapter, backend and driver for
//!   performance summaries.
//! - [`GpuLattice`] holds the populations on the device in the same layouts and index formula
//!   as the CPU [`crate::Lattice`] (Calore et al. 2019 §4, transcribed by [`layout::AffineLayout`]) and
//!   offers its API: initialise, step, read populations and moments back.
//! - [`shader::compose`] writes the shaders (halo, propagate, bc, collide, fused step,
//!   moments); [`shader::validate`] checks them with naga.
//! - f32 runs everywhere; f64 needs `SHADER_F64` (otherwise [`GpuError::NoF64`]); f16s
//!   (binary16 storage of `f − w`, f32 arithmetic) stores `f16` where the adapter has
//!   `SHADER_F16`, and otherwise packs two binary16 elements per `u32`
//!   ([`shader::ShaderSpec::packed_f16`]). A copy of
//!   the populations larger than `max_storage_buffer_binding_size` is split across several
//!   bindings; a lattice beyond the device's limits is refused with the size that fits.
//! - [`bounds`] proves, for each lattice, that its shader indexes every binding in range, so
//!   its module is created without runtime bounds checks.
//! - [`workgroup`] sizes the site kernels' workgroups per lattice, by timing its first steps.
//! - [`GpuFdGrid`] runs a finite-difference scheme ([`crate::fd`]) on the device.
//! - [`mod@bench`] measures the fused step (MLUPS, GB/s, GFLOP/s) for the `lbm bench` command;
//!   [`probe`] the device's limits it is compared with (copy bandwidth, FMA peak).

mod bc;
pub mod bench;
pub mod bounds;
mod fd;
mod lattice;
pub mod layout;
pub mod probe;
mod rules;
pub mod shader;
mod slab;
mod solver;
pub mod workgroup;

pub use crate::device::{AdapterChoice, GpuContext, GpuOptions};
pub use crate::runtime_error::GpuError;
pub use bc::BcShape;
pub use fd::GpuFdGrid;
pub use lattice::{GpuLattice, SiteBoxes};
pub(crate) use slab::poisoned;
pub use slab::GpuSlab;
pub use wgpu::DeviceType;
